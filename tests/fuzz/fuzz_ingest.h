/* fuzz_ingest.h: what fuzz_csv.c and fuzz_xlsx.c share: the rows a reader
 * of uploaded files hands over, written down (cells length-prefixed) with
 * every cell checked (valid UTF-8, NUL-terminated, at most INGEST_CELL_MAX
 * bytes, at most INGEST_COLUMNS_MAX a row), the outcome checked (OK, or
 * INVALID with a message), and the comparison of two readings. Header
 * only. */
#ifndef SVC_TESTS_FUZZ_INGEST_H
#define SVC_TESTS_FUZZ_INGEST_H
#include "jobs/ingest_read.h"
#include "jobs/ingest_decode.h"
#include "util/buf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s: %s failed (line " \
	"%d)\n", __FILE__, #c, __LINE__); abort(); } } while (0)

struct fuzz_ingest {
	struct buf	 rows;
	enum ingest_read_err rc;
	struct buf	 error;
	unsigned long long n;		/* rows the callback got */
};

static int
fuzz_ingest_row(void *arg, const struct ingest_cell *cells, size_t n)
{
	struct fuzz_ingest *r = arg;
	size_t i;

	CHECK(n <= INGEST_COLUMNS_MAX);
	for (i = 0; i < n; i++) {
		CHECK(cells[i].len <= INGEST_CELL_MAX);
		CHECK(cells[i].s[cells[i].len] == '\0');
		CHECK(ingest_decode_utf8_valid(cells[i].s, cells[i].len) ==
		    cells[i].len);
		CHECK(buf_printf(&r->rows, "%zu:", cells[i].len) == 0);
		CHECK(buf_append(&r->rows, cells[i].s, cells[i].len) == 0);
	}
	CHECK(buf_putc(&r->rows, '\n') == 0);
	r->n++;
	return 0;
}

/* A reader for r, whose callback is fuzz_ingest_row. */
static struct ingest_reader *
fuzz_ingest_new(enum ingest_format f, struct fuzz_ingest *r)
{
	struct ingest_reader *rd;

	buf_init(&r->rows, BUF_NOMAX);
	buf_init(&r->error, BUF_NOMAX);
	r->n = 0;
	r->rc = INGEST_READ_OK;
	CHECK((rd = ingest_reader_new(f, fuzz_ingest_row, r)) != NULL);
	return rd;
}

/* The reading has ended (r->rc set): its outcome, and the reader freed. */
static void
fuzz_ingest_done(struct fuzz_ingest *r, struct ingest_reader *rd)
{
	CHECK(r->rc == INGEST_READ_OK || r->rc == INGEST_READ_INVALID);
	CHECK((r->rc == INGEST_READ_INVALID) ==
	    (ingest_reader_error(rd)[0] != '\0'));
	CHECK(buf_puts(&r->error, ingest_reader_error(rd)) == 0);
	CHECK(ingest_reader_rows(rd) == r->n);
	ingest_reader_free(rd);
}

static void
fuzz_ingest_same(const struct fuzz_ingest *a, const struct fuzz_ingest *b)
{
	CHECK(a->rc == b->rc && a->n == b->n);
	CHECK(a->rows.len == b->rows.len);
	CHECK(memcmp(buf_str(&a->rows), buf_str(&b->rows), a->rows.len) == 0);
	CHECK(strcmp(buf_str(&a->error), buf_str(&b->error)) == 0);
}

static void
fuzz_ingest_free(struct fuzz_ingest *r)
{
	buf_free(&r->rows);
	buf_free(&r->error);
}
#endif
