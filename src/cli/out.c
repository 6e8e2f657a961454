/* out.c: what svc prints for a person: "label  value" lines with the
 * values aligned, and tables whose columns are as wide as their widest
 * cell. Everything shown comes from the network, so strings pass through
 * out_text, which replaces control characters (no terminal escapes). */
#include "cli/out.h"
#include "util/grow.h"
#include "util/strparse.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define OUT_LABEL_WIDTH 18

json_t *
out_get(json_t *o, const char *path)
{
	char key[128];
	const char *dot;
	size_t n;

	while (o != NULL && (dot = strchr(path, '.')) != NULL) {
		n = (size_t)(dot - path);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		o = json_object_get(o, key);
		path = dot + 1;
	}
	return o ? json_object_get(o, path) : NULL;
}

const char *
out_text(char buf[OUT_VAL_MAX], json_t *v)
{
	size_t i;

	if (json_is_string(v)) {
		strparse_copy(buf, OUT_VAL_MAX, json_string_value(v));
		for (i = 0; buf[i]; i++)
			if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
				buf[i] = '?';
	} else if (json_is_integer(v))
		snprintf(buf, OUT_VAL_MAX, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, OUT_VAL_MAX, "%g", json_real_value(v));
	else if (json_is_boolean(v))
		strparse_copy(buf, OUT_VAL_MAX, json_is_true(v) ? "yes" : "no");
	else
		strparse_copy(buf, OUT_VAL_MAX, "-");
	return buf;
}

const char *
out_field(char buf[OUT_VAL_MAX], json_t *o, const char *path)
{
	return out_text(buf, out_get(o, path));
}

long long
out_int(json_t *o, const char *path)
{
	json_t *v = out_get(o, path);

	if (json_is_integer(v))
		return (long long)json_integer_value(v);
	if (json_is_real(v))
		return (long long)json_real_value(v);
	return 0;
}

void
out_kv(const char *label, const char *fmt, ...)
{
	va_list ap;

	printf("%-*s  ", OUT_LABEL_WIDTH, label);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

void
out_kv_field(const char *label, json_t *o, const char *path, int force)
{
	char b[OUT_VAL_MAX];
	json_t *v = out_get(o, path);

	if (!force && (v == NULL || json_is_null(v)))
		return;
	out_kv(label, "%s", out_text(b, v));
}

struct out_table {
	size_t	 ncol;
	size_t	 nrow;		/* the header row included */
	size_t	 cap;
	char	**cells;	/* nrow * ncol */
};

/* A row of ncol cells, copied (NULL shown as "-", control characters as
 * '?'). */
static int
out_table_add(struct out_table *t, const char *const *row)
{
	size_t i, k;

	for (i = 0; i < t->ncol; i++) {
		if (grow(&t->cells, t->nrow * t->ncol + i, &t->cap,
		    sizeof(*t->cells), 64) == -1)
			goto fail;
		if ((t->cells[t->nrow * t->ncol + i] = strdup(row[i] ? row[i] :
		    "-")) == NULL)
			goto fail;
		for (k = 0; t->cells[t->nrow * t->ncol + i][k]; k++)
			if ((unsigned char)t->cells[t->nrow * t->ncol + i][k] <
			    0x20)
				t->cells[t->nrow * t->ncol + i][k] = '?';
	}
	t->nrow++;
	return 0;
fail:
	while (i-- > 0)
		free(t->cells[t->nrow * t->ncol + i]);
	return -1;
}

/* A table of ncol columns with its head row. */
static int
out_table_init(struct out_table *t, size_t ncol, const char *const *head)
{
	memset(t, 0, sizeof(*t));
	t->ncol = ncol;
	return out_table_add(t, head);
}

/* Columns a cell takes: its UTF-8 characters. */
static size_t
out_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* Columns aligned, two spaces apart, the last one not padded. */
static void
out_table_print(const struct out_table *t, FILE *f)
{
	size_t *w, r, c;
	const char *s;

	if ((w = calloc(t->ncol ? t->ncol : 1, sizeof(*w))) == NULL)
		return;
	for (r = 0; r < t->nrow; r++)
		for (c = 0; c < t->ncol; c++)
			if (out_width(t->cells[r * t->ncol + c]) > w[c])
				w[c] = out_width(t->cells[r * t->ncol + c]);
	for (r = 0; r < t->nrow; r++) {
		for (c = 0; c < t->ncol; c++) {
			s = t->cells[r * t->ncol + c];
			if (c + 1 == t->ncol)
				fprintf(f, "%s\n", s);
			else
				fprintf(f, "%s%*s  ", s,
				    (int)(w[c] - out_width(s)), "");
		}
	}
	free(w);
}

static void
out_table_free(struct out_table *t)
{
	size_t i;

	for (i = 0; i < t->nrow * t->ncol; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

int
out_table_json(FILE *f, size_t ncol, const char *const *head, json_t *array,
    const char *const *fields)
{
	char (*cell)[OUT_VAL_MAX];
	const char **row;
	struct out_table t = { 0 };
	json_t *v;
	size_t i, k;
	int rc = -1;

	cell = calloc(ncol, sizeof(*cell));
	row = calloc(ncol, sizeof(*row));
	if (cell == NULL || row == NULL || out_table_init(&t, ncol, head) == -1)
		goto out;
	json_array_foreach(array, i, v) {
		for (k = 0; k < ncol; k++)
			row[k] = out_field(cell[k], v, fields[k]);
		if (out_table_add(&t, row) == -1)
			goto out;
	}
	out_table_print(&t, f);
	rc = 0;
out:
	out_table_free(&t);
	free(cell);
	free(row);
	return rc;
}
