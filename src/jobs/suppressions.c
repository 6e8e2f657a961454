/* suppressions.c: an account's suppression list (suppressions.h): entries
 * in their normal form in table suppressions, added in one transaction,
 * listed newest first, removed one at a time, imported by svcadm, and held
 * in memory (a strset) by whoever checks many addresses. */
#include "jobs/suppressions.h"
#include "core/dbsql.h"
#include "jobs/caps.h"
#include "util/buf.h"
#include "util/strparse.h"
#include "util/strset.h"
#include <stdlib.h>
#include <string.h>

#define SUPPRESSIONS_INSERT_ROWS 256

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
	long long	 max, total;
	int		 over;
	/* a run that got to its end, and what it added: run again after a
	 * lost connection (db_tx_retry) and adding nothing, that run's
	 * COMMIT was applied and its count is the answer */
	int		 finished;
	size_t		 finished_added;
	suppressions_then_fn then;
	void		*then_arg;
};

/* Under the account's lock: inserts, then counts; over the cap, undoes
 * it all (DB_ABORT) and says what the list holds without it; else the
 * caller's then, with the counts. */
static enum db_err
suppressions_add_work(struct db *db, void *arg)
{
	struct suppressions_adding *a = arg;
	enum db_err e;

	a->added = 0;
	a->over = 0;
	if ((e = caps_lock(db, a->account)) != DB_OK ||
	    (e = suppressions_insert(db, a->account, a->entries, a->n,
	    &a->added)) != DB_OK ||
	    (e = caps_suppressions(db, a->account, &a->total)) != DB_OK)
		return e;
	if (a->total > a->max) {
		a->total -= (long long)a->added;
		a->over = 1;
		return DB_ABORT;
	}
	if (a->finished && a->added == 0)
		a->added = a->finished_added;
	if (a->then != NULL && (e = a->then(db, a->added, a->n - a->added,
	    a->then_arg)) != DB_OK)
		return e;
	a->finished = 1;
	a->finished_added = a->added;
	return DB_OK;
}

enum suppressions_err
suppressions_add(struct db *db, const char *account,
    char (*entries)[SUPPRESSIONS_ENTRY_MAX + 1], size_t n, long long max,
    size_t *added, size_t *existing, long long *total,
    suppressions_then_fn then, void *then_arg)
{
	struct suppressions_adding a = { account, entries, n, 0, max, 0, 0, 0,
	    0, then, then_arg };
	enum db_err e;

	*added = *existing = 0;
	*total = 0;
	e = db_tx_retry(db, suppressions_add_work, &a);
	*total = a.total;
	if (e == DB_ABORT && a.over)
		return SUPPRESSIONS_LIMIT;
	if (e != DB_OK)
		return SUPPRESSIONS_DB;
	*added = a.added;
	*existing = n - a.added;
	return SUPPRESSIONS_OK;
}

/* The LIKE pattern of entries holding q: "%q%", q ASCII-lower-cased (as
 * entries are stored) and its '!', '%' and '_' escaped by '!'. */
static int
suppressions_pattern(const char *q, char *out, size_t size)
{
	size_t n = 0;

	out[n++] = '%';
	for (; *q; q++) {
		if (n + 4 > size)
			return -1;
		if (*q == '!' || *q == '%' || *q == '_')
			out[n++] = '!';
		out[n++] = *q >= 'A' && *q <= 'Z' ? (char)(*q - 'A' + 'a') :
		    *q;
	}
	out[n++] = '%';
	out[n] = '\0';
	return 0;
}

/* The SQL of a list: its WHERE without a search, or with one (the pattern
 * a second parameter). */
#define SUPPRESSIONS_WHERE "WHERE account_id = ? "
#define SUPPRESSIONS_WHERE_Q "WHERE account_id = ? AND entry LIKE ? ESCAPE '!' "
#define SUPPRESSIONS_COUNT "SELECT COUNT(*) FROM suppressions "
#define SUPPRESSIONS_PAGE "SELECT entry, DATE_FORMAT(created_at, " \
	"'%Y-%m-%dT%H:%i:%sZ') FROM suppressions "
#define SUPPRESSIONS_ORDER "ORDER BY created_at DESC, entry LIMIT ? OFFSET ?"

enum suppressions_err
suppressions_list(struct db *db, const char *account, const char *q,
    long page, long limit, long long *total, suppressions_each_fn fn,
    void *arg)
{
	char pat[2 * SUPPRESSIONS_SEARCH_MAX + 3];
	struct db_param p[4];
	struct db_res *r;
	size_t n = 0;
	int found, row, search = q != NULL && *q != '\0';

	p[n++] = DBP_STR(account);
	if (search) {
		if (suppressions_pattern(q, pat, sizeof(pat)) == -1)
			return SUPPRESSIONS_INVALID;
		p[n++] = DBP_STR(pat);
	}
	if (db_query_int(db, search ? SUPPRESSIONS_COUNT SUPPRESSIONS_WHERE_Q :
	    SUPPRESSIONS_COUNT SUPPRESSIONS_WHERE, p, n, total, &found) !=
	    DB_OK)
		return SUPPRESSIONS_DB;
	p[n++] = DBP_INT(limit);
	p[n++] = DBP_INT((page - 1) * limit);
	if (db_query(db, search ? SUPPRESSIONS_PAGE SUPPRESSIONS_WHERE_Q
	    SUPPRESSIONS_ORDER : SUPPRESSIONS_PAGE SUPPRESSIONS_WHERE
	    SUPPRESSIONS_ORDER, p, n, &r) != DB_OK)
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
suppressions_any(struct db *db, const char *account, int *any)
{
	long long n = 0;
	int found;

	*any = 0;
	if (db_query_int(db, "SELECT COUNT(*) FROM (SELECT 1 FROM suppressions "
	    "WHERE account_id = ? LIMIT 1) t", DB_ARGS(DBP_STR(account)), &n,
	    &found) != DB_OK)
		return SUPPRESSIONS_DB;
	*any = n > 0;
	return SUPPRESSIONS_OK;
}

/* The entries among keys[0..n) that are on the account's list, into
 * found: one SELECT by the primary key per DBSQL_IN_MAX keys. */
static enum suppressions_err
suppressions_lookup_keys(struct db *db, const char *account,
    const char *const *keys, size_t n, struct strset *found)
{
	struct db_param p[DBSQL_IN_MAX + 1];
	enum suppressions_err rc = SUPPRESSIONS_OK;
	struct db_res *r;
	struct buf sql;
	size_t i, k, rows;
	int row;

	buf_init(&sql, BUF_NOMAX);
	for (i = 0; rc == SUPPRESSIONS_OK && i < n; i += rows) {
		rows = dbsql_group(n - i, DBSQL_IN_MAX);
		p[0] = DBP_STR(account);
		for (k = 0; k < rows; k++)
			p[k + 1] = DBP_STR(keys[i + k]);
		dbsql_repeat(&sql, "SELECT entry FROM suppressions WHERE "
		    "account_id = ? AND entry IN (", "?", ",", rows, ")");
		if (db_query(db, buf_str(&sql), p, rows + 1, &r) != DB_OK) {
			rc = SUPPRESSIONS_DB;
			break;
		}
		while ((row = db_res_next(r)) == 1)
			if (strset_add(found, db_res_str(r, 0),
			    db_res_len(r, 0)) == -1) {
				row = -2;
				break;
			}
		db_res_free(r);
		if (row < 0)
			rc = row == -2 ? SUPPRESSIONS_NOMEM : SUPPRESSIONS_DB;
	}
	buf_free(&sql);
	return rc;
}

enum suppressions_err
suppressions_lookup(struct db *db, const char *account, char *const *emails,
    size_t n, unsigned char *hit)
{
	char (*key)[SUPPRESSIONS_ENTRY_MAX + 1] = NULL;
	const char **keys = NULL;
	struct strset *found = NULL;
	enum suppressions_err rc = SUPPRESSIONS_NOMEM;
	struct addr a;
	size_t i, nkeys = 0;

	memset(hit, 0, n);
	if (n == 0)
		return SUPPRESSIONS_OK;
	if (n > SUPPRESSIONS_LOOKUP_MAX)
		return SUPPRESSIONS_INVALID;
	/* key[2i]: the address's normal form, key[2i + 1]: "@" its domain;
	 * both "" for an entry that is no address */
	if ((key = calloc(2 * n, sizeof(*key))) == NULL ||
	    (keys = calloc(2 * n, sizeof(*keys))) == NULL ||
	    (found = strset_new(2 * n)) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (addr_parse(emails[i], &a) != ADDR_OK)
			continue;
		strparse_copy(key[2 * i], sizeof(key[0]), a.normalised);
		key[2 * i + 1][0] = '@';
		strparse_copy(key[2 * i + 1] + 1, sizeof(key[0]) - 1,
		    a.ascii_domain);
		keys[nkeys++] = key[2 * i];
		keys[nkeys++] = key[2 * i + 1];
	}
	if ((rc = suppressions_lookup_keys(db, account, keys, nkeys, found)) !=
	    SUPPRESSIONS_OK || strset_count(found) == 0)
		goto out;
	for (i = 0; i < 2 * n; i++)
		if (key[i][0] != '\0' &&
		    strset_has(found, key[i], strlen(key[i])))
			hit[i / 2] = 1;
out:
	strset_free(found);
	free(keys);
	free(key);
	return rc;
}
