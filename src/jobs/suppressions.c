/* suppressions.c: an account's suppression list (suppressions.h): entries
 * in their normal form in table suppressions, added in one transaction,
 * listed newest first, removed one at a time, imported by svcadm, and held
 * in memory (a strset) by whoever checks many addresses. */
#include "jobs/suppressions.h"
#include "core/dbsql.h"
#include "util/buf.h"
#include "util/strparse.h"
#include "util/strset.h"
#include <stdlib.h>
#include <string.h>

#define SUPPRESSIONS_INSERT_ROWS 256

struct suppressions_set {
	struct strset	*set;
};

enum suppressions_err
suppressions_norm(const char *entry, char out[SUPPRESSIONS_ENTRY_MAX + 1])
{
	struct addr_domain d;
	struct addr a;
	const char *p = entry;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '@') {
		if (addr_domain_parse(p + 1, &d) != ADDR_OK)
			return SUPPRESSIONS_INVALID;
		out[0] = '@';
		strparse_copy(out + 1, SUPPRESSIONS_ENTRY_MAX, d.ascii);
		return SUPPRESSIONS_OK;
	}
	if (addr_parse(p, &a) != ADDR_OK)
		return SUPPRESSIONS_INVALID;
	strparse_copy(out, SUPPRESSIONS_ENTRY_MAX + 1, a.normalised);
	return SUPPRESSIONS_OK;
}

static enum db_err
suppressions_insert(struct db *db, const char *account,
    char (*entries)[SUPPRESSIONS_ENTRY_MAX + 1], size_t n, size_t *added)
{
	struct db_param p[2 * SUPPRESSIONS_INSERT_ROWS];
	unsigned long long affected;
	struct buf sql;
	size_t i, k, rows;
	enum db_err e = DB_OK;

	buf_init(&sql, BUF_NOMAX);
	for (i = 0; e == DB_OK && i < n; i += rows) {
		rows = dbsql_group(n - i, SUPPRESSIONS_INSERT_ROWS);
		for (k = 0; k < rows; k++) {
			p[2 * k] = DBP_STR(account);
			p[2 * k + 1] = DBP_STR(entries[i + k]);
		}
		dbsql_repeat(&sql, "INSERT IGNORE INTO suppressions (account_id, "
		    "entry, created_at) VALUES ", "(?, ?, UTC_TIMESTAMP(3))",
		    ",", rows, "");
		affected = 0;
		e = db_exec(db, buf_str(&sql), p, 2 * rows, &affected);
		*added += (size_t)affected;
	}
	buf_free(&sql);
	return e;
}

struct suppressions_adding {
	const char	*account;
	char		(*entries)[SUPPRESSIONS_ENTRY_MAX + 1];
	size_t		 n, added;
};

static enum db_err
suppressions_add_work(struct db *db, void *arg)
{
	struct suppressions_adding *a = arg;

	a->added = 0;
	return suppressions_insert(db, a->account, a->entries, a->n,
	    &a->added);
}

enum suppressions_err
suppressions_add(struct db *db, const char *account,
    char (*entries)[SUPPRESSIONS_ENTRY_MAX + 1], size_t n, size_t *added,
    size_t *existing)
{
	struct suppressions_adding a = { account, entries, n, 0 };

	*added = *existing = 0;
	if (db_tx_retry(db, suppressions_add_work, &a) != DB_OK)
		return SUPPRESSIONS_DB;
	*added = a.added;
	*existing = n - a.added;
	return SUPPRESSIONS_OK;
}

enum suppressions_err
suppressions_list(struct db *db, const char *account, long page, long limit,
    long long *total, suppressions_each_fn fn, void *arg)
{
	struct db_res *r;
	int found, row;

	if (db_query_int(db, "SELECT COUNT(*) FROM suppressions WHERE "
	    "account_id = ?", DB_ARGS(DBP_STR(account)), total, &found) !=
	    DB_OK)
		return SUPPRESSIONS_DB;
	if (db_query(db, "SELECT entry, DATE_FORMAT(created_at, "
	    "'%Y-%m-%dT%H:%i:%sZ') FROM suppressions WHERE account_id = ? "
	    "ORDER BY created_at DESC, entry LIMIT ? OFFSET ?",
	    DB_ARGS(DBP_STR(account), DBP_INT(limit),
	    DBP_INT((page - 1) * limit)), &r) != DB_OK)
		return SUPPRESSIONS_DB;
	while ((row = db_res_next(r)) == 1)
		if (fn(arg, db_res_str(r, 0), db_res_str(r, 1)) == -1)
			break;
	db_res_free(r);
	return row == -1 ? SUPPRESSIONS_DB : SUPPRESSIONS_OK;
}

enum suppressions_err
suppressions_delete(struct db *db, const char *account, const char *entry)
{
	char norm[SUPPRESSIONS_ENTRY_MAX + 1];
	unsigned long long affected = 0;

	if (suppressions_norm(entry, norm) != SUPPRESSIONS_OK)
		return SUPPRESSIONS_NOT_FOUND;
	if (db_exec(db, "DELETE FROM suppressions WHERE account_id = ? AND "
	    "entry = ?", DB_ARGS(DBP_STR(account), DBP_STR(norm)), &affected) !=
	    DB_OK)
		return SUPPRESSIONS_DB;
	return affected ? SUPPRESSIONS_OK : SUPPRESSIONS_NOT_FOUND;
}

enum suppressions_err
suppressions_import(struct db *db, const char *account, FILE *in,
    struct suppressions_counts *c)
{
	char line[1024], *p, (*batch)[SUPPRESSIONS_ENTRY_MAX + 1];
	size_t n = 0, added = 0;
	enum db_err e = DB_OK;

	memset(c, 0, sizeof(*c));
	if ((batch = calloc(SUPPRESSIONS_INSERT_ROWS, sizeof(*batch))) == NULL)
		return SUPPRESSIONS_NOMEM;
	while (e == DB_OK && fgets(line, sizeof(line), in) != NULL) {
		p = strparse_trim(line);
		if (*p == '\0' || *p == '#')
			continue;
		if (suppressions_norm(p, batch[n]) != SUPPRESSIONS_OK) {
			c->invalid++;
			continue;
		}
		if (++n < SUPPRESSIONS_INSERT_ROWS)
			continue;
		added = 0;
		e = suppressions_insert(db, account, batch, n, &added);
		c->added += added;
		c->existing += n - added;
		n = 0;
	}
	if (e == DB_OK && n > 0) {
		added = 0;
		e = suppressions_insert(db, account, batch, n, &added);
		c->added += added;
		c->existing += n - added;
	}
	free(batch);
	return e == DB_OK ? SUPPRESSIONS_OK : SUPPRESSIONS_DB;
}

enum suppressions_err
suppressions_load(struct db *db, const char *account,
    struct suppressions_set **out)
{
	struct suppressions_set *s;
	struct db_res *r;
	long long n = 0;
	int found, row;

	*out = NULL;
	if (db_query_int(db, "SELECT COUNT(*) FROM suppressions WHERE "
	    "account_id = ?", DB_ARGS(DBP_STR(account)), &n, &found) != DB_OK)
		return SUPPRESSIONS_DB;
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->set = strset_new((size_t)n)) == NULL) {
		free(s);
		return SUPPRESSIONS_NOMEM;
	}
	if (n > 0 && db_query(db, "SELECT entry FROM suppressions WHERE "
	    "account_id = ?", DB_ARGS(DBP_STR(account)), &r) == DB_OK) {
		while ((row = db_res_next(r)) == 1)
			if (strset_add(s->set, db_res_str(r, 0),
			    db_res_len(r, 0)) == -1) {
				row = -2;
				break;
			}
		db_res_free(r);
		if (row < 0) {
			suppressions_free(s);
			return row == -2 ? SUPPRESSIONS_NOMEM : SUPPRESSIONS_DB;
		}
	} else if (n > 0) {
		suppressions_free(s);
		return SUPPRESSIONS_DB;
	}
	*out = s;
	return SUPPRESSIONS_OK;
}

static int
suppressions_member(struct suppressions_set *s, const char *e)
{
	return strset_has(s->set, e, strlen(e));
}

int
suppressions_has(struct suppressions_set *s, const struct addr *a)
{
	char dom[ADDR_ASCII_DOMAIN_MAX + 2];

	if (s == NULL || strset_count(s->set) == 0)
		return 0;
	if (suppressions_member(s, a->normalised))
		return 1;
	dom[0] = '@';
	strparse_copy(dom + 1, sizeof(dom) - 1, a->ascii_domain);
	return suppressions_member(s, dom);
}

int
suppressions_has_text(struct suppressions_set *s, const char *email)
{
	struct addr a;

	if (s == NULL || strset_count(s->set) == 0 ||
	    addr_parse(email, &a) != ADDR_OK)
		return 0;
	return suppressions_has(s, &a);
}

size_t
suppressions_count(const struct suppressions_set *s)
{
	return s ? strset_count(s->set) : 0;
}

void
suppressions_free(struct suppressions_set *s)
{
	if (s == NULL)
		return;
	strset_free(s->set);
	free(s);
}
