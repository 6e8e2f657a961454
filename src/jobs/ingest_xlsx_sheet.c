/* ingest_xlsx_sheet.c: the shared strings and the rows of an XLSX
 * worksheet (ingest_xlsx_sheet.h), as expat handlers for
 * ingest_xlsx_xml_parse.
 *
 * Shared strings: each <si> is the text of its <t> elements, directly or
 * in rich text runs <r>, leaving out phonetic runs <rPh>.
 * Rows: <row r="N"> places a row (a row missing before it is handed over
 * empty), <c r="B5" t="..."> a cell in it (the cells between are empty;
 * without r, a row or a cell follows the one before). A cell's text is its
 * <v> (t="s": an index into the shared strings; t="b": 1 or 0, given as
 * TRUE or FALSE; any other type: the text as written: numbers, cached
 * formula values, errors, dates) or, t="inlineStr", the <t> text of its
 * <is> as in a shared string; <f> formulas are left out. A cell without
 * text is not handed over unless a later cell of its row is (as an empty
 * cell), so a row ends at its last cell with text. A <row> inside a row
 * and a <c> inside a cell (not valid, but well-formed) are ignored with
 * what they hold. */
#include "jobs/ingest_xlsx_sheet.h"
#include "jobs/ingest_decode.h"
#include "util/grow.h"
#include "util/strparse.h"
#include <stdlib.h>
#include <string.h>

#define INGEST_XLSX_SHEET_NONE ((size_t)-1)
#define INGEST_XLSX_SHEET_COLS_MAX 16384	/* XFD */
#define INGEST_XLSX_SHEET_SMALL 32		/* an index, a boolean */

/* The <c t="..."> types read apart from the others. */
enum ingest_xlsx_sheet_type {
	INGEST_XLSX_SHEET_TEXT,		/* n, str, e, d, or none */
	INGEST_XLSX_SHEET_SHARED,	/* s */
	INGEST_XLSX_SHEET_BOOL,		/* b */
	INGEST_XLSX_SHEET_INLINE	/* inlineStr */
};

struct ingest_xlsx_sheet_sst {
	struct ingest_xlsx_xml *x;
	struct ingest_xlsx_strings *t;
	int		 in_si;
	unsigned	 in_t, in_rph;
	size_t		 start;		/* of the string being read */
};

struct ingest_xlsx_sheet {
	struct ingest_xlsx_xml *x;
	struct ingest_row *row;
	const struct ingest_xlsx_strings *t;
	unsigned long	 last_row;	/* handed over; 0: none yet */
	unsigned long	 rowno;		/* of the row being read */
	int		 in_row;
	unsigned	 nested;	/* <row> in a row, <c> in a cell: ignored */
	size_t		 ncells;	/* given to row in this one */
	size_t		 last_col;	/* of the cell before, or NONE */
	/* the cell being read */
	int		 in_cell;
	size_t		 col;		/* NONE: beyond INGEST_COLUMNS_MAX */
	enum ingest_xlsx_sheet_type type;
	unsigned	 in_v, in_is, in_t, in_rph;
	int		 begun;		/* its text has started in row */
	char		 small[INGEST_XLSX_SHEET_SMALL];
	size_t		 nsmall;
};

/* Shared strings. */

static enum ingest_read_err
ingest_xlsx_sheet_sst_start(void *ctx, const char *name, const char **attrs)
{
	struct ingest_xlsx_sheet_sst *s = ctx;

	if (strcmp(name, "si") == 0) {
		s->in_si = 1;
		s->in_t = s->in_rph = 0;
		s->start = s->t->text.len;
	} else if (s->in_si && strcmp(name, "t") == 0)
		s->in_t++;
	else if (s->in_si && strcmp(name, "rPh") == 0)
		s->in_rph++;
	return INGEST_READ_OK;
}


static enum ingest_read_err
ingest_xlsx_sheet_sst_text(void *ctx, const char *p, size_t len)
{
	struct ingest_xlsx_sheet_sst *s = ctx;
	size_t have, keep = INGEST_CELL_MAX + 3;

	if (!s->in_si || s->in_t == 0 || s->in_rph > 0)
		return INGEST_READ_OK;
	have = s->t->text.len - s->start;
	if (have >= keep)
		return INGEST_READ_OK;
	if (len > keep - have)
		len = keep - have;
	if (buf_append(&s->t->text, p, len) == -1)
		return INGEST_READ_NOMEM;
	return INGEST_READ_OK;
}

static enum ingest_read_err
ingest_xlsx_sheet_sst_end(void *ctx, const char *name)
{
	struct ingest_xlsx_sheet_sst *s = ctx;
	struct ingest_xlsx_strings *t = s->t;

	if (!s->in_si)
		return INGEST_READ_OK;
	if (strcmp(name, "t") == 0 && s->in_t > 0)
		s->in_t--;
	else if (strcmp(name, "rPh") == 0 && s->in_rph > 0)
		s->in_rph--;
	else if (strcmp(name, "si") == 0) {
		s->in_si = 0;
		t->text.len = s->start + strparse_utf8_cut(buf_str(&t->text) +
		    s->start, t->text.len - s->start, INGEST_CELL_MAX);
		/* the text and the offsets with this string's */
		if (t->text.len + (t->n + 2) * sizeof(*t->off) >
		    s->x->limits->strings_max)
			return ingest_row_invalid(s->x->row, "shared strings: "
			    "more than %zu bytes", s->x->limits->strings_max);
		if (t->n + 2 > t->cap && grow(&t->off, t->n + 1, &t->cap,
		    sizeof(*t->off), 1024) == -1)
			return INGEST_READ_NOMEM;
		t->off[++t->n] = t->text.len;
	}
	return INGEST_READ_OK;
}

enum ingest_read_err
ingest_xlsx_sheet_strings(struct ingest_xlsx_xml *x, const char *part,
    struct ingest_xlsx_strings *t)
{
	struct ingest_xlsx_sheet_sst s;
	struct ingest_xlsx_xml_handlers h = {
		&s, ingest_xlsx_sheet_sst_start, ingest_xlsx_sheet_sst_end,
		ingest_xlsx_sheet_sst_text
	};

	memset(t, 0, sizeof(*t));
	buf_init(&t->text, BUF_NOMAX);
	if (grow(&t->off, 0, &t->cap, sizeof(*t->off), 1024) == -1)
		return INGEST_READ_NOMEM;
	t->off[0] = 0;
	memset(&s, 0, sizeof(s));
	s.x = x;
	s.t = t;
	return ingest_xlsx_xml_parse(x, part, x->limits->unzip_max, &h);
}

void
ingest_xlsx_sheet_strings_free(struct ingest_xlsx_strings *t)
{
	buf_free(&t->text);
	free(t->off);
	t->off = NULL;
	t->n = t->cap = 0;
}

/* Rows. */

/* The letters of a column (0-based) for messages. */
static const char *
ingest_xlsx_sheet_letters(size_t col, char out[4])
{
	char rev[3];
	size_t n = 0, i;

	for (col++; col > 0 && n < sizeof(rev); col = (col - 1) / 26)
		rev[n++] = (char)('A' + (col - 1) % 26);
	for (i = 0; i < n; i++)
		out[i] = rev[n - 1 - i];
	out[n] = '\0';
	return out;
}

/* The column of a reference such as "AB12" (0-based), NONE when it has
 * no letters, INGEST_XLSX_SHEET_COLS_MAX when past XFD. */
static size_t
ingest_xlsx_sheet_col(const char *ref)
{
	size_t col = 0, i;

	for (i = 0; ref[i] >= 'A' && ref[i] <= 'Z'; i++) {
		if (i == 3)
			return INGEST_XLSX_SHEET_COLS_MAX;
		col = col * 26 + (size_t)(ref[i] - 'A' + 1);
	}
	if (i == 0)
		return INGEST_XLSX_SHEET_NONE;
	return col > INGEST_XLSX_SHEET_COLS_MAX ? INGEST_XLSX_SHEET_COLS_MAX :
	    col - 1;
}

/* A decimal number of at most max, white space around it allowed, into
 * v; -1 when it is none. */
static int
ingest_xlsx_sheet_number(const char *s, size_t n, unsigned long max,
    unsigned long *v)
{
	unsigned long d;
	size_t i;

	while (n > 0 && (*s == ' ' || *s == '\t' || *s == '\r' ||
	    *s == '\n')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
	    s[n - 1] == '\r' || s[n - 1] == '\n'))
		n--;
	if (n == 0)
		return -1;
	for (*v = 0, i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = (unsigned long)(s[i] - '0');
		if (d > max || *v > (max - d) / 10)
			return -1;
		*v = *v * 10 + d;
	}
	return 0;
}

/* Hand over the empty rows before row number n. */
static enum ingest_read_err
ingest_xlsx_sheet_gap(struct ingest_xlsx_sheet *sh, unsigned long n)
{
	enum ingest_read_err rc;

	while (sh->last_row + 1 < n) {
		if ((rc = ingest_row_end(sh->row)) != INGEST_READ_OK)
			return rc;
		sh->last_row++;
	}
	return INGEST_READ_OK;
}

static enum ingest_read_err
ingest_xlsx_sheet_row_start(struct ingest_xlsx_sheet *sh, const char **attrs)
{
	const char *r = ingest_xlsx_xml_attr(attrs, "r", 0);
	unsigned long n = 0;
	enum ingest_read_err rc;

	if (r != NULL && (ingest_xlsx_sheet_number(r, strlen(r),
	    INGEST_XLSX_SHEET_ROWS_MAX, &n) == -1 || n == 0))
		return ingest_row_invalid(sh->row, "after row %lu: a row "
		    "number that is not one of 1 to %d", sh->last_row,
		    INGEST_XLSX_SHEET_ROWS_MAX);
	if (n <= sh->last_row)	/* none, or out of order: the next one */
		n = sh->last_row + 1;
	if (n > INGEST_XLSX_SHEET_ROWS_MAX)
		return ingest_row_invalid(sh->row, "more than %d rows",
		    INGEST_XLSX_SHEET_ROWS_MAX);
	if ((rc = ingest_xlsx_sheet_gap(sh, n)) != INGEST_READ_OK)
		return rc;
	sh->rowno = n;
	sh->in_row = 1;
	sh->ncells = 0;
	sh->last_col = INGEST_XLSX_SHEET_NONE;
	return INGEST_READ_OK;
}

static void
ingest_xlsx_sheet_cell_start(struct ingest_xlsx_sheet *sh, const char **attrs)
{
	const char *r = ingest_xlsx_xml_attr(attrs, "r", 0);
	const char *t = ingest_xlsx_xml_attr(attrs, "t", 0);
	size_t col = r ? ingest_xlsx_sheet_col(r) : INGEST_XLSX_SHEET_NONE;
	size_t next = sh->last_col == INGEST_XLSX_SHEET_NONE ? 0 :
	    sh->last_col + 1;

	/* none, or out of order: the next one */
	if (col == INGEST_XLSX_SHEET_NONE || (sh->last_col !=
	    INGEST_XLSX_SHEET_NONE && col <= sh->last_col))
		col = next < INGEST_XLSX_SHEET_COLS_MAX ? next :
		    INGEST_XLSX_SHEET_COLS_MAX;
	sh->last_col = col;
	sh->in_cell = 1;
	sh->col = col < INGEST_COLUMNS_MAX ? col : INGEST_XLSX_SHEET_NONE;
	sh->type = INGEST_XLSX_SHEET_TEXT;
	if (t != NULL && strcmp(t, "s") == 0)
		sh->type = INGEST_XLSX_SHEET_SHARED;
	else if (t != NULL && strcmp(t, "b") == 0)
		sh->type = INGEST_XLSX_SHEET_BOOL;
	else if (t != NULL && strcmp(t, "inlineStr") == 0)
		sh->type = INGEST_XLSX_SHEET_INLINE;
	sh->in_v = sh->in_is = sh->in_t = sh->in_rph = 0;
	sh->begun = 0;
	sh->nsmall = 0;
}

static enum ingest_read_err
ingest_xlsx_sheet_start(void *ctx, const char *name, const char **attrs)
{
	struct ingest_xlsx_sheet *sh = ctx;

	if ((strcmp(name, "row") == 0 && sh->in_row) ||
	    (strcmp(name, "c") == 0 && sh->in_cell))
		sh->nested++;
	else if (strcmp(name, "row") == 0)
		return ingest_xlsx_sheet_row_start(sh, attrs);
	if (!sh->in_row || sh->nested > 0)
		return INGEST_READ_OK;
	if (strcmp(name, "c") == 0)
		ingest_xlsx_sheet_cell_start(sh, attrs);
	else if (!sh->in_cell)
		return INGEST_READ_OK;
	else if (strcmp(name, "v") == 0)
		sh->in_v++;
	else if (strcmp(name, "is") == 0)
		sh->in_is++;
	else if (strcmp(name, "t") == 0)
		sh->in_t++;
	else if (strcmp(name, "rPh") == 0)
		sh->in_rph++;
	return INGEST_READ_OK;
}

/* The cell's text begins: the empty cells before it first. */
static enum ingest_read_err
ingest_xlsx_sheet_begin(struct ingest_xlsx_sheet *sh)
{
	enum ingest_read_err rc;

	for (; sh->ncells < sh->col; sh->ncells++)
		if ((rc = ingest_row_cell_end(sh->row)) != INGEST_READ_OK)
			return rc;
	sh->begun = 1;
	return INGEST_READ_OK;
}

static enum ingest_read_err
ingest_xlsx_sheet_text(void *ctx, const char *p, size_t len)
{
	struct ingest_xlsx_sheet *sh = ctx;
	enum ingest_read_err rc;

	if (!sh->in_cell || sh->nested > 0 ||
	    sh->col == INGEST_XLSX_SHEET_NONE)
		return INGEST_READ_OK;
	if (sh->type == INGEST_XLSX_SHEET_INLINE ? !sh->in_is || !sh->in_t ||
	    sh->in_rph : !sh->in_v)
		return INGEST_READ_OK;
	if (sh->type == INGEST_XLSX_SHEET_SHARED ||
	    sh->type == INGEST_XLSX_SHEET_BOOL) {
		if (len > sizeof(sh->small) - sh->nsmall)
			len = sizeof(sh->small) - sh->nsmall;
		memcpy(sh->small + sh->nsmall, p, len);
		sh->nsmall += len;
		return INGEST_READ_OK;
	}
	if (!sh->begun && (rc = ingest_xlsx_sheet_begin(sh)) != INGEST_READ_OK)
		return rc;
	return ingest_row_put(sh->row, p, len);
}

/* The text of a shared-string or boolean cell, from its <v>. */
static enum ingest_read_err
ingest_xlsx_sheet_value(struct ingest_xlsx_sheet *sh, const char **s,
    size_t *len)
{
	const struct ingest_xlsx_strings *t = sh->t;
	unsigned long i;
	char col[4];

	*s = sh->small;
	*len = sh->nsmall;
	if (sh->type == INGEST_XLSX_SHEET_BOOL) {
		if (ingest_xlsx_sheet_number(sh->small, sh->nsmall, 1, &i) == 0)
			*len = strlen(*s = i ? "TRUE" : "FALSE");
		return INGEST_READ_OK;
	}
	if (sh->nsmall == 0)	/* no <v>: empty */
		return INGEST_READ_OK;
	if (ingest_xlsx_sheet_number(sh->small, sh->nsmall, (unsigned long)-1,
	    &i) == -1)
		return ingest_row_invalid(sh->row, "cell %s%lu: a shared "
		    "string index that is not a number",
		    ingest_xlsx_sheet_letters(sh->col, col), sh->rowno);
	if (i >= t->n)
		return ingest_row_invalid(sh->row, "cell %s%lu: shared string "
		    "%lu of a table of %zu", ingest_xlsx_sheet_letters(sh->col,
		    col), sh->rowno, i, t->n);
	*s = buf_str(&t->text) + t->off[i];
	*len = t->off[i + 1] - t->off[i];
	return INGEST_READ_OK;
}

static enum ingest_read_err
ingest_xlsx_sheet_cell_end(struct ingest_xlsx_sheet *sh)
{
	enum ingest_read_err rc;
	const char *s;
	size_t len;

	sh->in_cell = 0;
	if (sh->col == INGEST_XLSX_SHEET_NONE)
		return INGEST_READ_OK;
	if (sh->type == INGEST_XLSX_SHEET_SHARED ||
	    sh->type == INGEST_XLSX_SHEET_BOOL) {
		if ((rc = ingest_xlsx_sheet_value(sh, &s, &len)) !=
		    INGEST_READ_OK)
			return rc;
		if (len == 0)
			return INGEST_READ_OK;
		if ((rc = ingest_xlsx_sheet_begin(sh)) != INGEST_READ_OK ||
		    (rc = ingest_row_put(sh->row, s, len)) != INGEST_READ_OK)
			return rc;
	}
	if (!sh->begun)
		return INGEST_READ_OK;
	sh->ncells++;
	return ingest_row_cell_end(sh->row);
}

static enum ingest_read_err
ingest_xlsx_sheet_end(void *ctx, const char *name)
{
	struct ingest_xlsx_sheet *sh = ctx;

	if (!sh->in_row)
		return INGEST_READ_OK;
	if (sh->nested > 0) {
		if (strcmp(name, "row") == 0 || strcmp(name, "c") == 0)
			sh->nested--;
		return INGEST_READ_OK;
	}
	if (strcmp(name, "row") == 0) {
		sh->in_row = sh->in_cell = 0;
		sh->last_row = sh->rowno;
		return ingest_row_end(sh->row);
	}
	if (!sh->in_cell)
		return INGEST_READ_OK;
	if (strcmp(name, "c") == 0)
		return ingest_xlsx_sheet_cell_end(sh);
	if (strcmp(name, "v") == 0 && sh->in_v > 0)
		sh->in_v--;
	else if (strcmp(name, "is") == 0 && sh->in_is > 0)
		sh->in_is--;
	else if (strcmp(name, "t") == 0 && sh->in_t > 0)
		sh->in_t--;
	else if (strcmp(name, "rPh") == 0 && sh->in_rph > 0)
		sh->in_rph--;
	return INGEST_READ_OK;
}

enum ingest_read_err
ingest_xlsx_sheet_rows(struct ingest_xlsx_xml *x, const char *part,
    const struct ingest_xlsx_strings *t)
{
	struct ingest_xlsx_sheet sh;
	struct ingest_xlsx_xml_handlers h = {
		&sh, ingest_xlsx_sheet_start, ingest_xlsx_sheet_end,
		ingest_xlsx_sheet_text
	};

	memset(&sh, 0, sizeof(sh));
	sh.x = x;
	sh.row = x->row;
	sh.t = t;
	return ingest_xlsx_xml_parse(x, part, x->limits->unzip_max, &h);
}
