/* addrs.c: which strings svc sends as addresses, and the address lists of
 * bulk create. A value not shaped like an email is invalid_input: it is
 * left out locally, never sent and never charged (spec, credit rule 2).
 * Files are read as a stream: of a CSV only the first rows are kept, to
 * choose the email column, and then only that column's values. */
#include "cli/addrs.h"
#include "util/strparse.h"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ADDRS_ROW_MAX	(64 * 1024)	/* octets of one CSV row */
#define ADDRS_COLS_MAX	256		/* columns read of a CSV row */
#define ADDRS_SAMPLE	100		/* rows that choose the column */

/* Valid UTF-8 without overlong forms, surrogates or values past U+10FFFF. */
static int
addrs_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0, k, len;
	unsigned long c;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0) {
			len = 2;
			c = s[i] & 0x1f;
		} else if ((s[i] & 0xf0) == 0xe0) {
			len = 3;
			c = s[i] & 0x0f;
		} else if ((s[i] & 0xf8) == 0xf0) {
			len = 4;
			c = s[i] & 0x07;
		} else
			return 0;
		if (n - i < len)
			return 0;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			c = (c << 6) | (s[i + k] & 0x3f);
		}
		if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) ||
		    (len == 4 && c < 0x10000) || c > 0x10ffff ||
		    (c >= 0xd800 && c <= 0xdfff))
			return 0;
		i += len;
	}
	return 1;
}

/* A domain: [literal], or dot-separated labels of 1-63 octets made of
 * letters, digits, hyphens and UTF-8. */
static int
addrs_domain(const char *d, size_t n)
{
	size_t i, label = 0;

	if (n == 0 || n > 253)
		return 0;
	if (d[0] == '[')
		return n > 2 && d[n - 1] == ']' &&
		    memchr(d + 1, '[', n - 2) == NULL &&
		    memchr(d + 1, ']', n - 2) == NULL;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)d[i];

		if (c == '.') {
			if (label == 0)
				return 0;
			label = 0;
			continue;
		}
		if (!(isalnum(c) || c == '-' || c >= 0x80))
			return 0;
		if (++label > 63)
			return 0;
	}
	return label > 0;
}

int
addrs_shaped(const char *s, size_t n)
{
	const char *at = NULL;
	size_t i, local;

	if (n < 3 || n > 254 || !addrs_utf8((const unsigned char *)s, n))
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f)
			return 0;
	if (s[0] == '"') {
		/* a quoted local part may hold an @ */
		for (i = 1; i < n && s[i] != '"'; i++)
			if (s[i] == '\\')
				i++;
		if (i >= n - 1 || s[i + 1] != '@')
			return 0;
		at = s + i + 1;
		if (memchr(at + 1, '@', n - (size_t)(at + 1 - s)) != NULL)
			return 0;
	} else {
		if ((at = memchr(s, '@', n)) == NULL ||
		    memchr(at + 1, '@', n - (size_t)(at + 1 - s)) != NULL)
			return 0;
		for (i = 0; s + i < at; i++)
			if (strchr("()<>[]\\,;:\"", s[i]) != NULL)
				return 0;
	}
	local = (size_t)(at - s);
	if (local == 0 || local > 64)
		return 0;
	return addrs_domain(at + 1, n - local - 1);
}

void
addrs_init(struct addrs *a)
{
	memset(a, 0, sizeof(*a));
	a->emails = json_array();
}

void
addrs_free(struct addrs *a)
{
	size_t i;

	json_decref(a->emails);
	for (i = 0; i < ADDRS_SAMPLES; i++)
		free(a->sample[i]);
	memset(a, 0, sizeof(*a));
}

int
addrs_add(struct addrs *a, const char *s, size_t n)
{
	json_t *v;

	while (n > 0 && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0)
		return 0;
	if (!addrs_shaped(s, n)) {
		if (a->invalid < ADDRS_SAMPLES &&
		    (a->sample[a->invalid] = strndup(s, n > 80 ? 80 : n)) ==
		    NULL)
			return -1;
		a->invalid++;
		return 0;
	}
	if (a->emails == NULL || (v = json_stringn(s, n)) == NULL ||
	    json_array_append_new(a->emails, v) == -1)
		return -1;
	return 0;
}

int
addrs_read_txt(struct addrs *a, FILE *f, struct buf *err)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	while ((len = getline(&line, &cap, f)) != -1) {
		if (addrs_add(a, line, (size_t)len) == -1) {
			buf_puts(err, "out of memory");
			rc = -1;
			break;
		}
	}
	if (rc == 0 && ferror(f)) {
		buf_puts(err, "read error");
		rc = -1;
	}
	free(line);
	return rc;
}

/* One CSV row: its text and where each field starts. */
struct addrs_row {
	char	*text;
	size_t	 len;
	size_t	 off[ADDRS_COLS_MAX];
	size_t	 flen[ADDRS_COLS_MAX];
	size_t	 n;
};

struct addrs_csv {
	FILE		*f;
	struct buf	 text;
	unsigned long	 line;
};

/* Reads one row into r (its text owned by the caller afterwards): 1, 0 at
 * the end, -1 with err set. */
static int
addrs_csv_row(struct addrs_csv *c, struct addrs_row *r, struct buf *err)
{
	int ch, quoted = 0, infield = 0, any = 0;
	size_t start = 0;

	buf_reset(&c->text);
	r->n = 0;
	c->line++;
	for (;;) {
		ch = getc(c->f);
		if (ch == EOF)
			break;
		any = 1;
		if (quoted) {
			if (ch == '"') {
				ch = getc(c->f);
				if (ch != '"') {
					quoted = 0;
					if (ch == EOF)
						break;
					ungetc(ch, c->f);
					continue;
				}
			}
			if (ch == '\n')
				c->line++;
			if (buf_putc(&c->text, (char)ch) == -1)
				goto toolong;
			continue;
		}
		if (ch == '"' && !infield) {
			quoted = infield = 1;
			continue;
		}
		if (ch == ',' || ch == '\n') {
			if (r->n < ADDRS_COLS_MAX) {
				r->off[r->n] = start;
				r->flen[r->n] = c->text.len - start;
				r->n++;
			}
			start = c->text.len;
			infield = 0;
			if (ch == '\n')
				goto row;
			continue;
		}
		if (ch == '\r') {
			int next = getc(c->f);

			if (next == '\n') {
				ungetc(next, c->f);
				continue;
			}
			if (next != EOF)
				ungetc(next, c->f);
		}
		infield = 1;
		if (buf_putc(&c->text, (char)ch) == -1)
			goto toolong;
	}
	if (ferror(c->f)) {
		buf_puts(err, "read error");
		return -1;
	}
	if (!any)
		return 0;
	if (r->n < ADDRS_COLS_MAX) {
		r->off[r->n] = start;
		r->flen[r->n] = c->text.len - start;
		r->n++;
	}
row:
	r->len = c->text.len;
	r->text = c->text.len ? buf_steal(&c->text) : NULL;
	return 1;
toolong:
	buf_printf(err, "line %lu: a row longer than %d octets",
	    c->line, ADDRS_ROW_MAX);
	return -1;
}

/* Is this header cell the name of an email column? */
static int
addrs_header_name(const char *s, size_t n)
{
	static const char *const names[] = { "email", "emails",
	    "emailaddress", "emailaddr", "mail", "mailaddress", NULL };
	char low[32];
	size_t i, k = 0;

	for (i = 0; i < n && k < sizeof(low) - 1; i++)
		if (isalnum((unsigned char)s[i]))
			low[k++] = (char)tolower((unsigned char)s[i]);
	low[k] = '\0';
	for (i = 0; names[i]; i++)
		if (strcmp(low, names[i]) == 0)
			return 1;
	return 0;
}

static const char *
addrs_field(const struct addrs_row *r, size_t col, size_t *n)
{
	if (col >= r->n || r->text == NULL) {
		*n = 0;
		return "";
	}
	*n = r->flen[col];
	return r->text + r->off[col];
}

/* Chooses the email column from the sample rows; *header: row 0 is one. */
static int
addrs_csv_column(struct addrs_row *rows, size_t nrows, size_t *col,
    int *header)
{
	size_t count[ADDRS_COLS_MAX] = { 0 }, i, c, n, best = 0;
	const char *s;

	for (c = 0; nrows > 0 && c < rows[0].n; c++) {
		s = addrs_field(&rows[0], c, &n);
		if (addrs_header_name(s, n)) {
			*col = c;
			*header = 1;
			return 0;
		}
	}
	for (i = 0; i < nrows; i++)
		for (c = 0; c < rows[i].n; c++) {
			s = addrs_field(&rows[i], c, &n);
			while (n > 0 && isspace((unsigned char)*s)) {
				s++;
				n--;
			}
			while (n > 0 && isspace((unsigned char)s[n - 1]))
				n--;
			if (addrs_shaped(s, n))
				count[c]++;
		}
	for (c = 1; c < ADDRS_COLS_MAX; c++)
		if (count[c] > count[best])
			best = c;
	if (count[best] == 0)
		return -1;
	*col = best;
	s = addrs_field(&rows[0], best, &n);
	while (n > 0 && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	*header = !addrs_shaped(s, n);
	return 0;
}

int
addrs_read_csv(struct addrs *a, FILE *f, struct buf *err)
{
	struct addrs_csv c;
	struct addrs_row *rows, r;
	size_t nrows = 0, i, col = 0, n;
	int rc = -1, got, header = 0, ch;
	const char *s;

	if ((rows = calloc(ADDRS_SAMPLE, sizeof(*rows))) == NULL) {
		buf_puts(err, "out of memory");
		return -1;
	}
	c.f = f;
	c.line = 0;
	buf_init(&c.text, ADDRS_ROW_MAX);
	/* a UTF-8 byte order mark is not part of the first cell */
	if ((ch = getc(f)) == 0xef) {
		if (getc(f) != 0xbb || getc(f) != 0xbf) {
			buf_puts(err, "line 1: not UTF-8 text");
			goto out;
		}
	} else if (ch != EOF)
		ungetc(ch, f);
	while (nrows < ADDRS_SAMPLE &&
	    (got = addrs_csv_row(&c, &rows[nrows], err)) == 1)
		nrows++;
	if (err->len > 0)
		goto out;
	if (nrows == 0) {
		buf_puts(err, "the file is empty");
		goto out;
	}
	if (addrs_csv_column(rows, nrows, &col, &header) == -1) {
		buf_puts(err, "no column holds email addresses");
		goto out;
	}
	for (i = header ? 1 : 0; i < nrows; i++) {
		s = addrs_field(&rows[i], col, &n);
		if (addrs_add(a, s, n) == -1)
			goto nomem;
	}
	if (nrows == ADDRS_SAMPLE) {
		while ((got = addrs_csv_row(&c, &r, err)) == 1) {
			s = addrs_field(&r, col, &n);
			got = addrs_add(a, s, n);
			free(r.text);
			if (got == -1)
				goto nomem;
		}
		if (got == -1)
			goto out;
	}
	rc = 0;
	goto out;
nomem:
	buf_puts(err, "out of memory");
out:
	for (i = 0; i < nrows; i++)
		free(rows[i].text);
	free(rows);
	buf_free(&c.text);
	return rc;
}

int
addrs_read_file(struct addrs *a, const char *path, struct buf *err)
{
	const char *dot = strrchr(path, '.');
	FILE *f;
	int csv, rc;

	if (dot != NULL && strcasecmp(dot, ".csv") == 0)
		csv = 1;
	else if (dot != NULL && strcasecmp(dot, ".txt") == 0)
		csv = 0;
	else {
		buf_printf(err, "%s: --file takes a .csv or .txt file", path);
		return -1;
	}
	if ((f = fopen(path, "r")) == NULL) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = csv ? addrs_read_csv(a, f, err) : addrs_read_txt(a, f, err);
	fclose(f);
	if (rc == -1 && err->len > 0) {
		/* name the file in front of the reader's message */
		char *msg = buf_steal(err);

		buf_printf(err, "%s: %s", path, msg ? msg : "");
		free(msg);
	}
	return rc;
}
