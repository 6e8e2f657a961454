/* ingest_xlsx_xml.h: the parts of an XLSX package (a zip archive) read as
 * XML while they are inflated, within the caps of ingest_limits, for
 * ingest_xlsx.c (the package) and ingest_xlsx_sheet.c (strings, rows). */
#ifndef SVC_INGEST_XLSX_XML_H
#define SVC_INGEST_XLSX_XML_H
#include "jobs/ingest_read.h"
#include "jobs/ingest_row.h"
#include <zip.h>

#define INGEST_XLSX_XML_PIECE (64 << 10)	/* inflated at a time */
/* A handler's "stop here, all is well" (the part was read far enough). */
#define INGEST_XLSX_XML_DONE ((enum ingest_read_err)INGEST_READ_ERR__MAX)

struct ingest_xlsx_xml {
	zip_t		*zip;
	const struct ingest_limits *limits;
	struct ingest_row *row;		/* its error is the reader's */
	unsigned long long unzipped;	/* inflated so far, every part */
	char		 piece[INGEST_XLSX_XML_PIECE];
};

/* What a part's reader does with its elements: name is the local name
 * (no namespace), attrs expat's name/value pairs (names of namespaced
 * attributes are "URI local"). A handler returns INGEST_READ_OK to go on,
 * INGEST_XLSX_XML_DONE to stop without error, or an error (with
 * ingest_row_invalid for INGEST_READ_INVALID). */
struct ingest_xlsx_xml_handlers {
	void		*ctx;
	enum ingest_read_err (*start)(void *ctx, const char *name,
			    const char **attrs);
	enum ingest_read_err (*end)(void *ctx, const char *name);
	enum ingest_read_err (*text)(void *ctx, const char *s, size_t len);
};

/* Whether the archive has the part (names compared without case). */
int	 ingest_xlsx_xml_has(struct ingest_xlsx_xml *, const char *part);
/* The part through the handlers, inflating at most max bytes of it. */
enum ingest_read_err ingest_xlsx_xml_parse(struct ingest_xlsx_xml *,
	    const char *part, size_t max, const struct ingest_xlsx_xml_handlers *);
/* The value of the attribute named local, namespaced or not; NULL when
 * absent. */
const char *ingest_xlsx_xml_attr(const char **attrs, const char *local,
	    int namespaced);
/* A part's name made fit for a message (printable ASCII, cut). */
const char *ingest_xlsx_xml_name(const char *part, char *out, size_t size);
#endif
