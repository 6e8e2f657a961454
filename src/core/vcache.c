/* vcache.c: caches of the verification engine, kept in MariaDB so every
 * responder and worker shares them. Values are JSON text; a row past its
 * expires_at is a miss and is removed by housekeeping. */
#include "core/vcache.h"
#include <stdlib.h>
#include <string.h>

static const char *const vcache_get_sql[VCACHE_TABLE__MAX] = {
	"SELECT result FROM verdict_cache WHERE address = ? AND "
	    "expires_at > UTC_TIMESTAMP(3)",
	"SELECT result FROM dns_cache WHERE domain = ? AND "
	    "expires_at > UTC_TIMESTAMP(3)",
};
static const char *const vcache_put_sql[VCACHE_TABLE__MAX] = {
	"REPLACE INTO verdict_cache (address, result, expires_at) VALUES "
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

enum db_err
vcache_facts_get(struct db *db, const char *domain, struct vcache_facts *f,
    int *found)
{
	struct db_res *r;
	enum db_err e;
	int row;

	f->accept_all = f->web_presence = -1;
	*found = 0;
	e = db_query(db, "SELECT accept_all, web_presence FROM domain_facts "
	    "WHERE domain = ? AND expires_at > UTC_TIMESTAMP(3)",
	    DB_ARGS(DBP_STR(domain)), &r);
	if (e != DB_OK)
		return e;
	if ((row = db_res_next(r)) == 1) {
		*found = 1;
		f->accept_all = db_res_isnull(r, 0) ? -1 : (int)db_res_int(r, 0);
		f->web_presence = db_res_isnull(r, 1) ? -1 :
		    (int)db_res_int(r, 1);
	}
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
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
