/* ingest_row.c: the row being built by a reader of uploaded files
 * (ingest_row.h). A cell keeps its first INGEST_CELL_MAX + 3 bytes, so
 * that a cut at INGEST_CELL_MAX finds the end of a character, and is made
 * UTF-8 (or Windows-1252 read as such) and cut when it ends. */
#include "jobs/ingest_row.h"
#include "jobs/ingest_decode.h"
#include "util/strparse.h"
#include <stdarg.h>
#include <string.h>

#define INGEST_ROW_KEEP (INGEST_CELL_MAX + 3)
/* Every kept cell with its NUL. */
#define INGEST_ROW_ARENA_MAX ((size_t)INGEST_COLUMNS_MAX * (INGEST_ROW_KEEP + 1))

void
ingest_row_init(struct ingest_row *r, ingest_row_fn fn, void *arg,
    int cp1252)
{
	memset(r, 0, sizeof(*r));
	r->fn = fn;
	r->arg = arg;
	r->cp1252 = cp1252;
	buf_init(&r->error, 1024);
	buf_init(&r->arena, INGEST_ROW_ARENA_MAX);
}

enum ingest_read_err
ingest_row_put(struct ingest_row *r, const char *p, size_t n)
{
	size_t have, take;

	if (r->ncells >= INGEST_COLUMNS_MAX)
		return INGEST_READ_OK;
	have = r->arena.len - r->start;
	take = INGEST_ROW_KEEP - have < n ? INGEST_ROW_KEEP - have : n;
	if (take > 0 && buf_append(&r->arena, p, take) == -1)
		return INGEST_READ_NOMEM;
	return INGEST_READ_OK;
}

/* The cell at start (n bytes) made valid UTF-8 of at most INGEST_CELL_MAX
 * bytes: its new length, or -1 when memory runs out. Text whose first
 * INGEST_CELL_MAX bytes are valid is UTF-8 (what follows is cut off, and
 * may be a character whose end was dropped); other text is
 * Windows-1252. */
static size_t
ingest_row_fix(struct ingest_row *r, const char *s, size_t n)
{
	char conv[INGEST_CELL_MAX];
	size_t valid, len;

	valid = ingest_decode_utf8_valid(s, n);
	if (valid == n || valid >= INGEST_CELL_MAX || !r->cp1252)
		return strparse_utf8_cut(s, valid, INGEST_CELL_MAX);
	len = ingest_decode_cp1252(conv, sizeof(conv), s, n);
	r->arena.len = r->start;
	if (buf_append(&r->arena, conv, len) == -1)
		return (size_t)-1;
	return len;
}

enum ingest_read_err
ingest_row_cell_end(struct ingest_row *r)
{
	size_t n, len;

	if (r->ncells >= INGEST_COLUMNS_MAX) {
		r->ncells++;
		return INGEST_READ_OK;
	}
	n = r->arena.len - r->start;
	len = n == 0 ? 0 : ingest_row_fix(r, r->arena.data + r->start, n);
	if (len == (size_t)-1)
		return INGEST_READ_NOMEM;
	r->arena.len = r->start + len;
	if (buf_putc(&r->arena, '\0') == -1)
		return INGEST_READ_NOMEM;
	r->off[r->ncells++] = r->start;
	r->start = r->arena.len;
	return INGEST_READ_OK;
}

enum ingest_read_err
ingest_row_end(struct ingest_row *r)
{
	size_t i, n = r->ncells < INGEST_COLUMNS_MAX ? r->ncells :
	    INGEST_COLUMNS_MAX;
	int rc;

	r->arena.len = r->start;	/* a cell not ended is dropped */
	for (i = 0; i < n; i++) {
		r->cells[i].s = r->arena.data + r->off[i];
		r->cells[i].len = (i + 1 < n ? r->off[i + 1] : r->start) -
		    r->off[i] - 1;
	}
	rc = r->fn(r->arg, r->cells, n);
	r->rows++;
	buf_reset(&r->arena);
	r->start = r->ncells = 0;
	return rc == 0 ? INGEST_READ_OK : INGEST_READ_STOPPED;
}

enum ingest_read_err
ingest_row_invalid(struct ingest_row *r, const char *fmt, ...)
{
	va_list ap;

	if (r->error.len == 0) {
		va_start(ap, fmt);
		if (buf_vprintf(&r->error, fmt, ap) == -1)
			buf_puts(&r->error, "invalid file");
		va_end(ap);
	}
	return INGEST_READ_INVALID;
}

void
ingest_row_free(struct ingest_row *r)
{
	buf_free(&r->error);
	buf_free(&r->arena);
}
