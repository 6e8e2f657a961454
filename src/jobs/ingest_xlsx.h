/* ingest_xlsx.h: the XLSX reader behind ingest_read.h (the rules are
 * there): the file is collected, then read as a package when it ends. */
#ifndef SVC_INGEST_XLSX_H
#define SVC_INGEST_XLSX_H
#include "jobs/ingest_read.h"
#include "jobs/ingest_row.h"

struct ingest_xlsx;
/* Rows go to row; limits are read when the file ends. NULL when memory
 * runs out. */
struct ingest_xlsx *ingest_xlsx_new(struct ingest_row *,
	    const struct ingest_limits *);
enum ingest_read_err ingest_xlsx_feed(struct ingest_xlsx *, const char *, size_t);
enum ingest_read_err ingest_xlsx_end(struct ingest_xlsx *);
void	 ingest_xlsx_free(struct ingest_xlsx *);
#endif
