/* keys.c: API key management. The key text is generated here, returned to
 * the caller once, and only its SHA-256 hash and a short hint are stored. */
#include "core/keys.h"
#include "core/accounts.h"
#include "util/ipnet.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const keys_err_names[KEYS_ERR__MAX] = {
	"ok", "invalid", "not_found", "db"
};

enum keys_err
keys_default_limit(struct db *db, const char *account, const char *org,
    long *limit)
{
	struct db_res *r;
	enum auth_tier tier;
	int row;

	if (db_query(db, "SELECT a.tier, o.api_rate_limit FROM accounts a "
	    "LEFT JOIN organizations o ON o.id = ? WHERE a.id = ?",
	    DB_ARGS(DBP_STR(org && *org ? org : NULL), DBP_STR(account)), &r)
	    != DB_OK)
		return KEYS_DB;
	if ((row = db_res_next(r)) == 1) {
		if (!db_res_isnull(r, 1))
			*limit = (long)db_res_int(r, 1);
		else if (auth_tier_parse(db_res_str(r, 0), &tier) == 0)
			*limit = auth_tier_limits[tier];
		else
			row = -1;
	}
	db_res_free(r);
	return row == 1 ? KEYS_OK : row == 0 ? KEYS_NOT_FOUND : KEYS_DB;
}

static enum keys_err
keys_validate(struct db *db, struct keys_spec *s, char *expires,
    size_t expsz, struct buf *why)
{
	struct ipnet *nets;
	size_t n;
	time_t t;
	char org[IDS_MAX];
	long ceiling;
	enum keys_err rc;

	if (s->name && strlen(s->name) > KEYS_NAME_MAX) {
		buf_printf(why, "name: at most %d characters", KEYS_NAME_MAX);
		return KEYS_INVALID;
	}
	if (s->scopes == 0) {
		buf_puts(why, "scopes: at least one scope is needed");
		return KEYS_INVALID;
	}
	if (s->rate_limit != -1 && (s->rate_limit < 1 ||
	    s->rate_limit > KEYS_RATE_LIMIT_MAX)) {
		buf_printf(why, "rate_limit: 1 to %d requests per minute",
		    KEYS_RATE_LIMIT_MAX);
		return KEYS_INVALID;
	}
	if (s->capped) {
		if ((rc = keys_default_limit(db, s->account_id, s->org_id,
		    &ceiling)) != KEYS_OK)
			return rc;
		if (s->rate_limit == -1)
			s->rate_limit = ceiling < KEYS_RATE_LIMIT_DEFAULT ?
			    ceiling : KEYS_RATE_LIMIT_DEFAULT;
		else if (s->rate_limit > ceiling) {
			buf_printf(why, "rate_limit: at most %ld requests per "
			    "minute, the limit this key has without one; only "
			    "the operator sets a higher one", ceiling);
			return KEYS_INVALID;
		}
	}
	if (s->ip_allowlist && *s->ip_allowlist) {
		if (strlen(s->ip_allowlist) > 4000 ||
		    ipnet_parse_list(s->ip_allowlist, &nets, &n) == -1) {
			buf_puts(why, "ip_allowlist: IPv4 or IPv6 addresses or "
			    "CIDR networks with host bits clear");
			return KEYS_INVALID;
		}
		free(nets);
	}
	expires[0] = '\0';
	if (s->expires_at && *s->expires_at) {
		if (timeutil_parse_iso8601(s->expires_at, &t) == -1 ||
		    t <= time(NULL)) {
			buf_puts(why, "expires_at: an ISO 8601 UTC time in the "
			    "future");
			return KEYS_INVALID;
		}
		{
			struct tm tm;
			gmtime_r(&t, &tm);
			strftime(expires, expsz, "%Y-%m-%d %H:%M:%S", &tm);
		}
	}
	if (s->org_id && *s->org_id) {
		if (accounts_org_of(db, s->account_id, org) != ACCOUNTS_OK)
			return KEYS_DB;
		if (strcmp(org, s->org_id) != 0) {
			buf_puts(why, "org: the account is not a member of "
			    "this organization");
			return KEYS_INVALID;
		}
	}
	return KEYS_OK;
}

/* The key's row, and s->then, in one transaction run by db_tx_retry: a
 * run after one whose COMMIT's answer was lost finds the row written
 * (the id is the same) instead of failing on its primary key. */
struct keys_insert {
	const struct keys_spec *s;
	const char	*id, *hint, *scopes, *expires;
	const uint8_t	*hash;
	int		 runs;
};

static enum db_err
keys_insert_work(struct db *db, void *arg)
{
	struct keys_insert *k = arg;
	const struct keys_spec *s = k->s;
	long long n = 0;
	int found = 0;
	enum db_err e;

	if (k->runs++ > 0 && (e = db_query_int(db, "SELECT COUNT(*) FROM "
	    "api_keys WHERE id = ?", DB_ARGS(DBP_STR(k->id)), &n, &found)) !=
	    DB_OK)
		return e;
	/* a limit the operator set (not capped) is not clamped at use */
	if (n == 0 && (e = db_exec(db, "INSERT INTO api_keys (id, account_id, "
	    "org_id, name, key_hash, key_hint, scopes, sandbox, rate_limit, "
	    "rate_limit_operator, ip_allowlist, expires_at, created_at) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(k->id), DBP_STR(s->account_id),
	    DBP_STR(s->org_id && *s->org_id ? s->org_id : NULL),
	    DBP_STR(s->name ? s->name : ""), DBP_BLOB(k->hash, 32),
	    DBP_STR(k->hint), DBP_STR(k->scopes), DBP_INT(s->sandbox),
	    s->rate_limit == -1 ? DBP_NULL : DBP_INT(s->rate_limit),
	    DBP_INT(!s->capped && s->rate_limit != -1),
	    DBP_STR(s->ip_allowlist ? s->ip_allowlist : ""),
	    DBP_STR(k->expires)), NULL)) != DB_OK)
		return e;
	return s->then != NULL ? s->then(db, k->id, s->then_arg) : DB_OK;
}

enum keys_err
keys_create(struct db *db, struct keys_spec *s, char id[IDS_MAX],
    char key[AUTH_KEY_MAX], struct buf *why)
{
	struct keys_insert ins;
	struct buf scopes;
	uint8_t hash[32];
	char hint[32], expires[32];
	int found = 0;
	enum keys_err rc;
	enum db_err e;

	if (accounts_exists(db, s->account_id, &found) != ACCOUNTS_OK)
		return KEYS_DB;
	if (!found) {
		buf_printf(why, "account %s does not exist", s->account_id);
		return KEYS_NOT_FOUND;
	}
	if ((rc = keys_validate(db, s, expires, sizeof(expires), why)) !=
	    KEYS_OK)
		return rc;
	if (ids_new("key", id) == -1 || auth_key_generate(s->sandbox, key) == -1)
		return KEYS_DB;
	memset(&ins, 0, sizeof(ins));
	auth_key_hash(key, hash);
	/* "svc_live_AbCd…wxyz": enough to recognise a key in a list. */
	snprintf(hint, sizeof(hint), "%.13s...%s", key,
	    key + strlen(key) - 4);
	buf_init(&scopes, 256);
	auth_scope_format(s->scopes, &scopes);
	ins.s = s;
	ins.id = id;
	ins.hash = hash;
	ins.hint = hint;
	ins.scopes = buf_str(&scopes);
	ins.expires = expires[0] ? expires : NULL;
	e = db_tx_retry(db, keys_insert_work, &ins);
	buf_free(&scopes);
	if (e != DB_OK) {
		memset(key, 0, AUTH_KEY_MAX);
		return KEYS_DB;
	}
	return KEYS_OK;
}

enum keys_err
keys_revoke(struct db *db, const char *account, const char *id)
{
	unsigned long long changed = 0;

	if (db_exec(db, "UPDATE api_keys SET revoked_at = UTC_TIMESTAMP(3) "
	    "WHERE id = ? AND (? IS NULL OR account_id = ?) AND "
	    "revoked_at IS NULL", DB_ARGS(DBP_STR(id), DBP_STR(account),
	    DBP_STR(account)), &changed) != DB_OK)
		return KEYS_DB;
	return changed ? KEYS_OK : KEYS_NOT_FOUND;
}

enum keys_err
keys_find_active(struct db *db, const char *account, const char *id)
{
	long long v;
	int found = 0;

	if (db_query_int(db, "SELECT 1 FROM api_keys WHERE id = ? AND "
	    "(? IS NULL OR account_id = ?) AND revoked_at IS NULL",
	    DB_ARGS(DBP_STR(id), DBP_STR(account), DBP_STR(account)), &v,
	    &found) != DB_OK)
		return KEYS_DB;
	return found ? KEYS_OK : KEYS_NOT_FOUND;
}

enum keys_err
keys_set_rate_limit(struct db *db, const char *id, long limit)
{
	long long v;
	int found = 0;

	if (limit != -1 && (limit < 1 || limit > KEYS_RATE_LIMIT_MAX))
		return KEYS_INVALID;
	if (db_query_int(db, "SELECT 1 FROM api_keys WHERE id = ?",
	    DB_ARGS(DBP_STR(id)), &v, &found) != DB_OK)
		return KEYS_DB;
	if (!found)
		return KEYS_NOT_FOUND;
	return db_exec(db, "UPDATE api_keys SET rate_limit = ?, "
	    "rate_limit_operator = ? WHERE id = ?",
	    DB_ARGS(limit == -1 ? DBP_NULL : DBP_INT(limit),
	    DBP_INT(limit != -1), DBP_STR(id)),
	    NULL) == DB_OK ? KEYS_OK : KEYS_DB;
}

enum keys_err
keys_list(struct db *db, const char *account, keys_each_fn fn, void *arg)
{
	static const char sql[] =
	    "SELECT id, name, key_hint, scopes, org_id, ip_allowlist, "
	    "DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%sZ'), "
	    "DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%sZ'), "
	    "DATE_FORMAT(revoked_at, '%Y-%m-%dT%H:%i:%sZ'), sandbox, rate_limit "
	    "FROM api_keys WHERE account_id = ? ORDER BY created_at DESC, id";
	struct keys_info k;
	struct db_res *r;
	int row;

	if (db_query(db, sql, DB_ARGS(DBP_STR(account)), &r) != DB_OK)
		return KEYS_DB;
	while ((row = db_res_next(r)) == 1) {
		k.id = db_res_str(r, 0);
		k.name = db_res_str(r, 1);
		k.hint = db_res_str(r, 2);
		k.scopes = db_res_str(r, 3);
		k.org_id = db_res_str(r, 4);
		k.ip_allowlist = db_res_str(r, 5);
		k.created_at = db_res_str(r, 6);
		k.expires_at = db_res_str(r, 7);
		k.revoked_at = db_res_str(r, 8);
		k.sandbox = (int)db_res_int(r, 9);
		k.rate_limit = db_res_isnull(r, 10) ? -1 :
		    (long)db_res_int(r, 10);
		if (fn(arg, &k) != 0)
			break;
	}
	db_res_free(r);
	return row == -1 ? KEYS_DB : KEYS_OK;
}
