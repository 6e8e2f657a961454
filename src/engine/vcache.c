/* vcache.c: caches of the verification engine, kept in MariaDB so every
 * responder and worker shares them. Values are JSON text; a row past its
 * expires_at is a miss and is removed by housekeeping. The verdict cache
 * is keyed by the keyed hash of the address (cachekey.h), never the
 * address. */
#include "engine/vcache.h"
#include "core/dbsql.h"
#include <stdlib.h>
#include <string.h>

/* Entries per REPLACE at most, and the step of its sizes (dbsql_group_steps:
 * the worker's 50 entries take 48 + 2). */
#define VCACHE_GROUP_MAX 128
#define VCACHE_GROUP_STEP 16

static const char *const vcache_get_many_sql[VCACHE_TABLE__MAX] = {
	"SELECT address_hash, result FROM verdict_cache WHERE expires_at > "
	    "UTC_TIMESTAMP(3) AND address_hash IN (",
	"SELECT domain, result FROM dns_cache WHERE expires_at > "
	    "UTC_TIMESTAMP(3) AND domain IN (",
};
static const char *const vcache_put_many_sql[VCACHE_TABLE__MAX] = {
	"REPLACE INTO verdict_cache (address_hash, result, expires_at) VALUES ",
	"REPLACE INTO dns_cache (domain, result, expires_at) VALUES ",
};

static const char *const vcache_get_sql[VCACHE_TABLE__MAX] = {
	"SELECT result FROM verdict_cache WHERE address_hash = ? AND "
	    "expires_at > UTC_TIMESTAMP(3)",
	"SELECT result FROM dns_cache WHERE domain = ? AND "
	    "expires_at > UTC_TIMESTAMP(3)",
};
static const char *const vcache_put_sql[VCACHE_TABLE__MAX] = {
	"REPLACE INTO verdict_cache (address_hash, result, expires_at) VALUES "
	    "(?, ?, UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
	"REPLACE INTO dns_cache (domain, result, expires_at) VALUES "
	    "(?, ?, UTC_TIMESTAMP(3) + INTERVAL ? SECOND)",
};

enum db_err
vcache_get(struct db *db, enum vcache_table t, const char *key, json_t **out)
{
	struct db_res *r;
	enum db_err e;
	int row;

	*out = NULL;
	if ((e = db_query(db, vcache_get_sql[t], DB_ARGS(DBP_STR(key)), &r)) !=
	    DB_OK)
		return e;
	if ((row = db_res_next(r)) == 1)
		*out = json_loadb(db_res_str(r, 0), db_res_len(r, 0), 0, NULL);
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
}

enum db_err
vcache_put(struct db *db, enum vcache_table t, const char *key,
    const json_t *value, long seconds)
{
	char *text;
	enum db_err e;

	if (seconds <= 0)
		return DB_OK;
	if ((text = json_dumps(value, JSON_COMPACT)) == NULL)
		return DB_ERR_QUERY;
	e = db_exec(db, vcache_put_sql[t], DB_ARGS(DBP_STR(key), DBP_STR(text),
	    DBP_INT(seconds)), NULL);
	free(text);
	return e;
}

static void
vcache_hit(void *arg, struct db_res *r, size_t i)
{
	json_t **out = arg;

	if (out[i] == NULL)
		out[i] = json_loadb(db_res_str(r, 1), db_res_len(r, 1), 0,
		    NULL);
}

enum db_err
vcache_get_many(struct db *db, enum vcache_table t, const char *const *keys,
    size_t n, json_t **out)
{
	enum db_err e;
	size_t i;

	memset(out, 0, n * sizeof(*out));
	e = dbsql_select_in(db, vcache_get_many_sql[t], keys, n, vcache_hit,
	    out);
	if (e != DB_OK)
		for (i = 0; i < n; i++) {
			json_decref(out[i]);
			out[i] = NULL;
		}
	return e;
}

void
vcache_entries_clear(struct vcache_entry *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].key);
		free(v[i].value);
		v[i].key = v[i].value = NULL;
	}
}

enum db_err
vcache_put_many(struct db *db, enum vcache_table t,
    const struct vcache_entry *v, size_t n)
{
	struct db_param p[VCACHE_GROUP_MAX * 3];
	const struct vcache_entry *w[VCACHE_GROUP_MAX];
	struct buf sql;
	enum db_err e = DB_OK;
	size_t i = 0, g, k, j;

	buf_init(&sql, BUF_NOMAX);
	while (e == DB_OK && i < n) {
		/* The next group of entries worth writing. */
		for (g = 0; i < n && g < VCACHE_GROUP_MAX; i++)
			if (v[i].seconds > 0 && v[i].key && v[i].value)
				w[g++] = &v[i];
		while (e == DB_OK && g > 0) {
			k = dbsql_group_steps(g, VCACHE_GROUP_MAX,
			    VCACHE_GROUP_STEP);
			g -= k;
			dbsql_repeat(&sql, vcache_put_many_sql[t], "(?, ?, "
			    "UTC_TIMESTAMP(3) + INTERVAL ? SECOND)", ",", k, "");
			for (j = 0; j < k; j++) {
				p[3 * j] = DBP_STR(w[g + j]->key);
				p[3 * j + 1] = DBP_STR(w[g + j]->value);
				p[3 * j + 2] = DBP_INT(w[g + j]->seconds);
			}
			e = db_exec(db, buf_str(&sql), p, 3 * k, NULL);
		}
	}
	buf_free(&sql);
	return e;
}

static void
vcache_facts_row(void *arg, struct db_res *r, size_t i)
{
	struct vcache_facts *f = arg;

	f[i].accept_all = db_res_isnull(r, 1) ? -1 : (int)db_res_int(r, 1);
	f[i].web_presence = db_res_isnull(r, 2) ? -1 : (int)db_res_int(r, 2);
}

enum db_err
vcache_facts_get_many(struct db *db, const char *const *domains, size_t n,
    struct vcache_facts *f)
{
	enum db_err e;
	size_t i;

	for (i = 0; i < n; i++)
		f[i].accept_all = f[i].web_presence = -1;
	e = dbsql_select_in(db, "SELECT domain, accept_all, web_presence FROM "
	    "domain_facts WHERE expires_at > UTC_TIMESTAMP(3) AND domain IN (",
	    domains, n, vcache_facts_row, f);
	if (e != DB_OK)
		for (i = 0; i < n; i++)
			f[i].accept_all = f[i].web_presence = -1;
	return e;
}

enum db_err
vcache_facts_put(struct db *db, const char *domain,
    const struct vcache_facts *f, long seconds)
{
	return db_exec(db, "REPLACE INTO domain_facts (domain, accept_all, "
	    "web_presence, expires_at) VALUES (?, ?, ?, UTC_TIMESTAMP(3) + "
	    "INTERVAL ? SECOND)", DB_ARGS(DBP_STR(domain),
	    f->accept_all < 0 ? DBP_NULL : DBP_INT(f->accept_all),
	    f->web_presence < 0 ? DBP_NULL : DBP_INT(f->web_presence),
	    DBP_INT(seconds)), NULL);
}

long long
vcache_expire(struct db *db)
{
	static const char *const sql[] = {
		"DELETE FROM verdict_cache WHERE expires_at <= UTC_TIMESTAMP(3)",
		"DELETE FROM dns_cache WHERE expires_at <= UTC_TIMESTAMP(3)",
		"DELETE FROM domain_facts WHERE expires_at <= UTC_TIMESTAMP(3)",
	};
	unsigned long long n, total = 0;
	size_t i;

	for (i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		if (db_exec(db, sql[i], DB_NOARGS, &n) != DB_OK)
			return -1;
		total += n;
	}
	return (long long)total;
}
