/* ingest_reader.c: the face of the readers of uploaded files
 * (ingest_read.h): one reader of a format, its caps, its outcome, and
 * errors that stick. */
#include "jobs/ingest_read.h"
#include "jobs/ingest_csv.h"
#include "jobs/ingest_row.h"
#include "jobs/ingest_xlsx.h"
#include <stdlib.h>

const char *const ingest_read_err_names[INGEST_READ_ERR__MAX] = {
	"ok", "invalid", "stopped", "nomem"
};

struct ingest_reader {
	enum ingest_format format;
	enum ingest_read_err rc;	/* sticky */
	int		 ended;
	struct ingest_limits limits;
	struct ingest_row row;
	struct ingest_csv *csv;
	struct ingest_xlsx *xlsx;
};

struct ingest_reader *
ingest_reader_new(enum ingest_format format, ingest_row_fn fn, void *arg)
{
	static const struct ingest_limits defaults = {
		.file_max = 50 << 20,
		.unzip_max = 512 << 20,
		.part_max = 4 << 20,
		.ratio_max = 100,
		.strings_max = 128 << 20,
		.xml_depth_max = 64,
		.xml_token_max = 16 << 20,
	};
	struct ingest_reader *r;

	if ((unsigned)format >= INGEST_FORMAT__MAX ||
	    (r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->format = format;
	r->limits = defaults;
	ingest_row_init(&r->row, fn, arg, format != INGEST_XLSX);
	if (format == INGEST_XLSX)
		r->xlsx = ingest_xlsx_new(&r->row, &r->limits);
	else
		r->csv = ingest_csv_new(format, &r->row);
	if (r->csv == NULL && r->xlsx == NULL) {
		ingest_reader_free(r);
		return NULL;
	}
	return r;
}

struct ingest_limits *
ingest_reader_limits(struct ingest_reader *r)
{
	return &r->limits;
}

enum ingest_read_err
ingest_reader_feed(struct ingest_reader *r, const void *data, size_t len)
{
	if (r->rc != INGEST_READ_OK || r->ended || len == 0)
		return r->rc;
	r->rc = r->csv ? ingest_csv_feed(r->csv, data, len) :
	    ingest_xlsx_feed(r->xlsx, data, len);
	return r->rc;
}

enum ingest_read_err
ingest_reader_end(struct ingest_reader *r)
{
	if (r->rc != INGEST_READ_OK || r->ended)
		return r->rc;
	r->ended = 1;
	r->rc = r->csv ? ingest_csv_end(r->csv) : ingest_xlsx_end(r->xlsx);
	return r->rc;
}

const char *
ingest_reader_error(const struct ingest_reader *r)
{
	return r->rc == INGEST_READ_INVALID ? buf_str(&r->row.error) : "";
}

unsigned long long
ingest_reader_rows(const struct ingest_reader *r)
{
	return r->row.rows;
}

void
ingest_reader_free(struct ingest_reader *r)
{
	if (r == NULL)
		return;
	ingest_csv_free(r->csv);
	ingest_xlsx_free(r->xlsx);
	ingest_row_free(&r->row);
	free(r);
}
