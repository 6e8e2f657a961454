/* ingest_xlsx_xml.c: the parts of an XLSX package read as XML while they
 * are inflated (ingest_xlsx_xml.h). Every cap is enforced on the bytes
 * actually inflated, never on the sizes the archive declares: the part's
 * own cap, the total of every part (limits.unzip_max) and the ratio of
 * inflated to compressed bytes once past 1 MiB (a zip bomb). expat reads
 * without DTDs: a DOCTYPE is refused as it starts (so no entity is ever
 * declared, and no external one loaded); elements nest at most
 * limits.xml_depth_max deep, and expat is never left to buffer more than
 * limits.xml_token_max bytes without reporting anything (one huge tag or
 * attribute). */
#include "jobs/ingest_xlsx_xml.h"
#include <expat.h>
#include <string.h>

#define INGEST_XLSX_XML_RATIO_FROM (1 << 20)
#define INGEST_XLSX_XML_NS ' '		/* between URI and local name */

struct ingest_xlsx_xml_run {
	struct ingest_xlsx_xml *x;
	const struct ingest_xlsx_xml_handlers *h;
	XML_Parser	 parser;
	const char	*part;
	unsigned	 depth;
	unsigned long long fed, event_at;	/* bytes given to expat */
	enum ingest_read_err rc;
};

int
ingest_xlsx_xml_has(struct ingest_xlsx_xml *x, const char *part)
{
	return zip_name_locate(x->zip, part, ZIP_FL_NOCASE) >= 0;
}

const char *
ingest_xlsx_xml_name(const char *part, char *out, size_t size)
{
	size_t i;

	for (i = 0; part[i] != '\0' && i + 1 < size; i++)
		out[i] = part[i] > ' ' && part[i] < 0x7F ? part[i] : '?';
	out[i] = '\0';
	return out;
}

const char *
ingest_xlsx_xml_attr(const char **attrs, const char *local, int namespaced)
{
	const char *sep;
	size_t i;

	for (i = 0; attrs[i] != NULL; i += 2) {
		sep = strrchr(attrs[i], INGEST_XLSX_XML_NS);
		if (namespaced ? sep != NULL && strcmp(sep + 1, local) == 0 :
		    sep == NULL && strcmp(attrs[i], local) == 0)
			return attrs[i + 1];
	}
	return NULL;
}

/* The outcome of a handler: on anything but OK, expat stops. */
static void
ingest_xlsx_xml_outcome(struct ingest_xlsx_xml_run *run,
    enum ingest_read_err rc)
{
	run->event_at = run->fed;
	if (rc == INGEST_READ_OK || run->rc != INGEST_READ_OK)
		return;
	run->rc = rc;
	XML_StopParser(run->parser, XML_FALSE);
}

static const char *
ingest_xlsx_xml_local(const char *name)
{
	const char *sep = strrchr(name, INGEST_XLSX_XML_NS);

	return sep ? sep + 1 : name;
}

static void XMLCALL
ingest_xlsx_xml_start(void *arg, const XML_Char *name, const XML_Char **attrs)
{
	struct ingest_xlsx_xml_run *run = arg;
	char part[128];

	if (run->rc != INGEST_READ_OK)
		return;
	if (++run->depth > run->x->limits->xml_depth_max) {
		ingest_xlsx_xml_outcome(run, ingest_row_invalid(run->x->row,
		    "%s: XML nested deeper than %u elements",
		    ingest_xlsx_xml_name(run->part, part, sizeof(part)),
		    run->x->limits->xml_depth_max));
		return;
	}
	ingest_xlsx_xml_outcome(run, run->h->start ? run->h->start(run->h->ctx,
	    ingest_xlsx_xml_local(name), attrs) : INGEST_READ_OK);
}

static void XMLCALL
ingest_xlsx_xml_end(void *arg, const XML_Char *name)
{
	struct ingest_xlsx_xml_run *run = arg;

	if (run->rc != INGEST_READ_OK)
		return;
	run->depth--;
	ingest_xlsx_xml_outcome(run, run->h->end ? run->h->end(run->h->ctx,
	    ingest_xlsx_xml_local(name)) : INGEST_READ_OK);
}

static void XMLCALL
ingest_xlsx_xml_text(void *arg, const XML_Char *s, int len)
{
	struct ingest_xlsx_xml_run *run = arg;

	if (run->rc != INGEST_READ_OK)
		return;
	ingest_xlsx_xml_outcome(run, run->h->text && len > 0 ?
	    run->h->text(run->h->ctx, s, (size_t)len) : INGEST_READ_OK);
}

static void XMLCALL
ingest_xlsx_xml_doctype(void *arg, const XML_Char *name, const XML_Char *sys,
    const XML_Char *pub, int internal)
{
	struct ingest_xlsx_xml_run *run = arg;
	char part[128];

	ingest_xlsx_xml_outcome(run, ingest_row_invalid(run->x->row, "%s: a "
	    "DOCTYPE (DTDs and entities are not allowed)",
	    ingest_xlsx_xml_name(run->part, part, sizeof(part))));
}

static void XMLCALL
ingest_xlsx_xml_entity(void *arg, const XML_Char *name, int param,
    const XML_Char *value, int value_len, const XML_Char *base,
    const XML_Char *sys, const XML_Char *pub, const XML_Char *notation)
{
	ingest_xlsx_xml_doctype(arg, name, sys, pub, 1);
}

/* The inflated bytes of a piece against the caps. */
static enum ingest_read_err
ingest_xlsx_xml_caps(struct ingest_xlsx_xml_run *run, unsigned long long got,
    size_t max, unsigned long long compressed)
{
	const struct ingest_limits *l = run->x->limits;
	char part[128];

	ingest_xlsx_xml_name(run->part, part, sizeof(part));
	if (got > max)
		return ingest_row_invalid(run->x->row, "%s: more than %zu bytes "
		    "uncompressed", part, max);
	if (run->x->unzipped > l->unzip_max)
		return ingest_row_invalid(run->x->row, "more than %zu bytes "
		    "uncompressed in all", l->unzip_max);
	if (got > INGEST_XLSX_XML_RATIO_FROM &&
	    got / (l->ratio_max ? l->ratio_max : 1) > compressed)
		return ingest_row_invalid(run->x->row, "%s: compressed more "
		    "than %u to 1 (a zip bomb?)", part, l->ratio_max);
	return INGEST_READ_OK;
}

/* The part's data through expat. */
static enum ingest_read_err
ingest_xlsx_xml_stream(struct ingest_xlsx_xml_run *run, zip_file_t *f,
    size_t max, unsigned long long compressed)
{
	struct ingest_xlsx_xml *x = run->x;
	unsigned long long got = 0;
	enum ingest_read_err rc;
	zip_int64_t n;
	char part[128];
	int final;

	do {
		if ((n = zip_fread(f, x->piece, sizeof(x->piece))) < 0)
			return ingest_row_invalid(x->row, "%s: damaged (%s)",
			    ingest_xlsx_xml_name(run->part, part, sizeof(part)),
			    zip_error_strerror(zip_file_get_error(f)));
		got += (unsigned long long)n;
		x->unzipped += (unsigned long long)n;
		if ((rc = ingest_xlsx_xml_caps(run, got, max, compressed)) !=
		    INGEST_READ_OK)
			return rc;
		final = n == 0;
		run->fed += (unsigned long long)n;
		if (XML_Parse(run->parser, x->piece, (int)n, final) !=
		    XML_STATUS_OK) {
			if (run->rc != INGEST_READ_OK)
				return run->rc;
			if (XML_GetErrorCode(run->parser) == XML_ERROR_NO_MEMORY)
				return INGEST_READ_NOMEM;
			return ingest_row_invalid(x->row, "%s: not well-formed "
			    "XML, line %lu: %s", ingest_xlsx_xml_name(run->part,
			    part, sizeof(part)), (unsigned long)
			    XML_GetCurrentLineNumber(run->parser),
			    XML_ErrorString(XML_GetErrorCode(run->parser)));
		}
		if (run->rc != INGEST_READ_OK)
			return run->rc;
		if (run->fed - run->event_at > x->limits->xml_token_max)
			return ingest_row_invalid(x->row, "%s: an XML tag "
			    "longer than %zu bytes", ingest_xlsx_xml_name(
			    run->part, part, sizeof(part)),
			    x->limits->xml_token_max);
	} while (!final);
	return INGEST_READ_OK;
}

enum ingest_read_err
ingest_xlsx_xml_parse(struct ingest_xlsx_xml *x, const char *partname,
    size_t max, const struct ingest_xlsx_xml_handlers *h)
{
	struct ingest_xlsx_xml_run run;
	enum ingest_read_err rc;
	zip_file_t *f = NULL;
	zip_stat_t st;
	zip_int64_t i;
	char part[128];
	int ze;

	memset(&run, 0, sizeof(run));
	run.x = x;
	run.h = h;
	run.part = partname;
	ingest_xlsx_xml_name(partname, part, sizeof(part));
	if ((i = zip_name_locate(x->zip, partname, ZIP_FL_NOCASE)) < 0)
		return ingest_row_invalid(x->row, "%s is missing", part);
	zip_stat_init(&st);
	if (zip_stat_index(x->zip, (zip_uint64_t)i, 0, &st) != 0)
		return ingest_row_invalid(x->row, "%s: damaged", part);
	if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
	    st.encryption_method != ZIP_EM_NONE)
		return ingest_row_invalid(x->row, "%s is encrypted", part);
	if ((f = zip_fopen_index(x->zip, (zip_uint64_t)i, 0)) == NULL) {
		ze = zip_error_code_zip(zip_get_error(x->zip));
		if (ze == ZIP_ER_MEMORY)
			return INGEST_READ_NOMEM;
		return ingest_row_invalid(x->row, "%s: %s", part,
		    ze == ZIP_ER_NOPASSWD || ze == ZIP_ER_WRONGPASSWD ||
		    ze == ZIP_ER_ENCRNOTSUPP ? "encrypted" :
		    zip_error_strerror(zip_get_error(x->zip)));
	}
	if ((run.parser = XML_ParserCreateNS(NULL, INGEST_XLSX_XML_NS)) ==
	    NULL) {
		zip_fclose(f);
		return INGEST_READ_NOMEM;
	}
	XML_SetUserData(run.parser, &run);
	XML_SetElementHandler(run.parser, ingest_xlsx_xml_start,
	    ingest_xlsx_xml_end);
	XML_SetCharacterDataHandler(run.parser, ingest_xlsx_xml_text);
	XML_SetStartDoctypeDeclHandler(run.parser, ingest_xlsx_xml_doctype);
	XML_SetEntityDeclHandler(run.parser, ingest_xlsx_xml_entity);
	rc = ingest_xlsx_xml_stream(&run, f, max,
	    (st.valid & ZIP_STAT_COMP_SIZE) ? st.comp_size : 0);
	XML_ParserFree(run.parser);
	zip_fclose(f);
	return rc == INGEST_XLSX_XML_DONE ? INGEST_READ_OK : rc;
}
