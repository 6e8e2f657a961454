/* ingest_csv.h: the streaming reader of text files (CSV, TSV, TXT) behind
 * ingest_read.h; the rules are there. */
#ifndef SVC_INGEST_CSV_H
#define SVC_INGEST_CSV_H
#include "jobs/ingest_read.h"
#include "jobs/ingest_row.h"

struct ingest_csv;
/* format: INGEST_CSV, INGEST_TSV or INGEST_TXT; rows go to row. NULL when
 * memory runs out. */
struct ingest_csv *ingest_csv_new(enum ingest_format, struct ingest_row *);
enum ingest_read_err ingest_csv_feed(struct ingest_csv *, const char *, size_t);
enum ingest_read_err ingest_csv_end(struct ingest_csv *);
void	 ingest_csv_free(struct ingest_csv *);
#endif
