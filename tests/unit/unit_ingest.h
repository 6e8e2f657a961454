/* unit_ingest.h: feeding a reader of uploaded files (jobs/ingest_read.h)
 * in pieces and writing down what it hands over, for test_ingest_csv.c
 * and test_ingest_xlsx.c. Rows are written as "[cell][cell]\n" (a row of
 * no cell is "\n"). unit_ingest_same reads one file whole, byte by byte,
 * in pieces of fixed and random sizes and (short files) split in two at
 * every place, and fails unless every way gives the same rows, outcome
 * and message. Every cell handed over is checked: NUL-terminated, valid
 * UTF-8, at most INGEST_CELL_MAX bytes, at most INGEST_COLUMNS_MAX cells.
 * Header only; include it after cmocka.h. */
#ifndef SVC_TESTS_UNIT_INGEST_H
#define SVC_TESTS_UNIT_INGEST_H
#include "jobs/ingest_read.h"
#include "jobs/ingest_decode.h"
#include "util/buf.h"
#include <stdio.h>
#include <string.h>

struct unit_ingest {
	struct buf	 rows;
	enum ingest_read_err rc;
	char		 error[512];
	unsigned long long nrows;	/* ingest_reader_rows */
	unsigned long long seen;	/* rows the callback got */
	unsigned long long stop_at;	/* the callback returns -1 at this row */
	struct ingest_limits limits;	/* caps other than 0 replace the defaults */
};

/* The caps of u that are set, into r's. */
static void
unit_ingest_limits(const struct unit_ingest *u, struct ingest_reader *r)
{
	struct ingest_limits *l = ingest_reader_limits(r);
	const struct ingest_limits *w = &u->limits;

	if (w->file_max)
		l->file_max = w->file_max;
	if (w->unzip_max)
		l->unzip_max = w->unzip_max;
	if (w->part_max)
		l->part_max = w->part_max;
	if (w->ratio_max)
		l->ratio_max = w->ratio_max;
	if (w->strings_max)
		l->strings_max = w->strings_max;
	if (w->xml_depth_max)
		l->xml_depth_max = w->xml_depth_max;
	if (w->xml_token_max)
		l->xml_token_max = w->xml_token_max;
}

static int
unit_ingest_row(void *arg, const struct ingest_cell *cells, size_t n)
{
	struct unit_ingest *u = arg;
	size_t i;

	assert_true(n <= INGEST_COLUMNS_MAX);
	for (i = 0; i < n; i++) {
		assert_true(cells[i].len <= INGEST_CELL_MAX);
		assert_int_equal(cells[i].s[cells[i].len], '\0');
		assert_int_equal(ingest_decode_utf8_valid(cells[i].s,
		    cells[i].len), cells[i].len);
		assert_int_equal(buf_putc(&u->rows, '['), 0);
		assert_int_equal(buf_append(&u->rows, cells[i].s,
		    cells[i].len), 0);
		assert_int_equal(buf_putc(&u->rows, ']'), 0);
	}
	assert_int_equal(buf_putc(&u->rows, '\n'), 0);
	return ++u->seen == u->stop_at ? -1 : 0;
}

/* The next piece's size: whole (0), fixed (step), or random up to step
 * (seed != 0). */
static size_t
unit_ingest_piece(size_t left, size_t step, unsigned *seed)
{
	size_t n = step;

	if (step == 0)
		return left;
	if (*seed != 0) {
		*seed = *seed * 1103515245u + 12345u;
		n = 1 + (*seed >> 8) % step;
	}
	return n < left ? n : left;
}

/* Reads data (len bytes) fed in pieces; first: the size of the first
 * piece (0: by step). */
static void
unit_ingest_read(struct unit_ingest *u, enum ingest_format f,
    const char *data, size_t len, size_t first, size_t step, unsigned seed)
{
	struct ingest_reader *r;
	size_t at = 0, n;

	buf_init(&u->rows, BUF_NOMAX);
	u->seen = 0;
	u->rc = INGEST_READ_OK;
	assert_non_null(r = ingest_reader_new(f, unit_ingest_row, u));
	unit_ingest_limits(u, r);
	while (at < len && u->rc == INGEST_READ_OK) {
		n = first ? first : unit_ingest_piece(len - at, step, &seed);
		first = 0;
		u->rc = ingest_reader_feed(r, data + at, n);
		at += n;
	}
	if (u->rc == INGEST_READ_OK)
		u->rc = ingest_reader_end(r);
	/* errors stick */
	assert_int_equal(ingest_reader_feed(r, "x", 1), u->rc);
	assert_int_equal(ingest_reader_end(r), u->rc);
	assert_true(u->rc < INGEST_READ_ERR__MAX);
	snprintf(u->error, sizeof(u->error), "%s", ingest_reader_error(r));
	assert_true((u->rc == INGEST_READ_INVALID) == (u->error[0] != '\0'));
	u->nrows = ingest_reader_rows(r);
	assert_true(u->nrows == u->seen);
	ingest_reader_free(r);
}

static void
unit_ingest_check_same(const struct unit_ingest *a,
    const struct unit_ingest *b, const char *how, size_t param)
{
	if (a->rc == b->rc && a->rows.len == b->rows.len &&
	    memcmp(buf_str(&a->rows), buf_str(&b->rows), a->rows.len) == 0 &&
	    strcmp(a->error, b->error) == 0)
		return;
	fail_msg("read %s (%zu) differs from whole: rc %d/%d, error "
	    "\"%s\"/\"%s\", rows:\n%.2000s\n---\n%.2000s", how, param, b->rc,
	    a->rc, b->error, a->error, buf_str(&b->rows), buf_str(&a->rows));
}

/* Reads data every way into u (the whole reading), failing if two ways
 * differ. u's stop_at and caps are kept. */
static void
unit_ingest_same(struct unit_ingest *u, enum ingest_format f,
    const char *data, size_t len)
{
	static const size_t steps[] = { 1, 2, 3, 7, 64, 4096, 65537 };
	struct unit_ingest v = *u;
	size_t i;
	unsigned seed;

	unit_ingest_read(u, f, data, len, 0, 0, 0);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i] == 1 && len > 1000000)
			continue;
		unit_ingest_read(&v, f, data, len, 0, steps[i], 0);
		unit_ingest_check_same(u, &v, "in pieces of", steps[i]);
		buf_free(&v.rows);
	}
	for (seed = 1; seed <= 4; seed++) {
		unit_ingest_read(&v, f, data, len, 0, seed * 37, seed);
		unit_ingest_check_same(u, &v, "in random pieces, seed", seed);
		buf_free(&v.rows);
	}
	for (i = 1; len <= 400 && i < len; i++) {
		unit_ingest_read(&v, f, data, len, i, 0, 0);
		unit_ingest_check_same(u, &v, "split in two at", i);
		buf_free(&v.rows);
	}
}
#endif
