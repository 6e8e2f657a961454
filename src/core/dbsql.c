/* dbsql.c: statement text for multi-row statements (see dbsql.h). */
#include "core/dbsql.h"
#include <string.h>

void
dbsql_repeat(struct buf *b, const char *head, const char *item,
    const char *sep, size_t n, const char *tail)
{
	size_t i;

	buf_reset(b);
	buf_puts(b, head);
	for (i = 0; i < n; i++) {
		if (i)
			buf_puts(b, sep);
		buf_puts(b, item);
	}
	buf_puts(b, tail);
}

size_t
dbsql_group(size_t left, size_t max)
{
	size_t g = 1;

	while (g * 2 <= left && g * 2 <= max)
		g *= 2;
	return left ? g : 0;
}

size_t
dbsql_group_steps(size_t left, size_t max, size_t step)
{
	if (left >= step)
		return (left < max ? left : max) / step * step;
	return dbsql_group(left, step);
}

/* p holds the nlead leading parameters; the keys are bound after them,
 * keys[base + n - 1] again up to the list's length (a power of two). */
static enum db_err
dbsql_select_group(struct db *db, struct buf *sql, const char *head,
    struct db_param *p, size_t nlead, const char *const *keys, size_t base,
    size_t n, dbsql_row_fn fn, void *arg)
{
	struct db_res *r;
	const char *k;
	enum db_err e;
	size_t i, slots = 1;
	int row;

	while (slots < n)
		slots *= 2;
	dbsql_repeat(sql, head, "?", ",", slots, ")");
	for (i = 0; i < slots; i++)
		p[nlead + i] = DBP_STR(keys[base + (i < n ? i : n - 1)]);
	if ((e = db_query(db, buf_str(sql), p, nlead + slots, &r)) != DB_OK)
		return e;
	while ((row = db_res_next(r)) == 1)
		for (i = 0, k = db_res_str(r, 0); k != NULL && i < n; i++)
			if (strcmp(keys[base + i], k) == 0)
				fn(arg, r, base + i);
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
}

enum db_err
dbsql_select_in(struct db *db, const char *head, const char *const *keys,
    size_t n, dbsql_row_fn fn, void *arg)
{
	return dbsql_select_in_args(db, head, NULL, 0, keys, n, fn, arg);
}

enum db_err
dbsql_select_in_args(struct db *db, const char *head,
    const struct db_param *lead, size_t nlead, const char *const *keys,
    size_t n, dbsql_row_fn fn, void *arg)
{
	struct db_param p[DBSQL_LEAD_MAX + DBSQL_SELECT_IN_MAX];
	struct buf sql;
	enum db_err e = DB_OK;
	size_t i, g;

	if (nlead > DBSQL_LEAD_MAX)
		return DB_ERR_QUERY;
	for (i = 0; i < nlead; i++)
		p[i] = lead[i];
	buf_init(&sql, BUF_NOMAX);
	for (i = 0; e == DB_OK && i < n; i += g) {
		g = n - i < DBSQL_SELECT_IN_MAX ? n - i : DBSQL_SELECT_IN_MAX;
		e = dbsql_select_group(db, &sql, head, p, nlead, keys, i, g,
		    fn, arg);
	}
	buf_free(&sql);
	return e;
}
