/* auth.c: API key format, hashing and lookup; scope and tier vocabularies.
 * Keys are stored as SHA-256 hashes only: a presented key is hashed and
 * looked up by its hash, so no secret is ever compared byte by byte. */
#include "core/auth.h"
#include "util/strparse.h"
#include <gnutls/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const auth_scope_names[AUTH_SCOPE__MAX] = {
	"verify:single", "verify:bulk", "jobs:read", "jobs:write",
	"webhooks:manage", "credits:read", "feedback:write", "*"
};
const char *const auth_tier_names[AUTH_TIER__MAX] = {
	"anonymous", "free", "trial", "pro", "admin"
};
const long auth_tier_limits[AUTH_TIER__MAX] = { 5, 10, 30, 100, 1000 };
const char *const auth_result_names[AUTH_RESULT__MAX] = {
	"ok", "missing", "malformed", "unknown", "expired", "revoked",
	"org_changed", "db_error"
};

int
auth_scope_parse_list(const char *s, unsigned *mask)
{
	char tok[32];
	size_t n;
	int i, found;

	*mask = 0;
	for (;;) {
		s += strspn(s, ", \t");
		if (*s == '\0')
			break;
		n = strcspn(s, ", \t");
		if (n >= sizeof(tok))
			return -1;
		memcpy(tok, s, n);
		tok[n] = '\0';
		s += n;
		for (found = 0, i = 0; i < AUTH_SCOPE__MAX; i++)
			if (strcmp(tok, auth_scope_names[i]) == 0) {
				*mask |= 1u << i;
				found = 1;
			}
		if (!found)
			return -1;
	}
	return *mask ? 0 : -1;
}

void
auth_scope_format(unsigned mask, struct buf *b)
{
	int i, first = 1;

	for (i = 0; i < AUTH_SCOPE__MAX; i++)
		if (mask & (1u << i)) {
			if (!first)
				buf_putc(b, ',');
			buf_puts(b, auth_scope_names[i]);
			first = 0;
		}
}

int
auth_has_scope(unsigned mask, enum auth_scope s)
{
	return (mask & (1u << AUTH_SCOPE_ALL)) || (mask & (1u << s));
}

int
auth_tier_parse(const char *s, enum auth_tier *out)
{
	int i;

	/* anonymous is not a tier an account can have */
	for (i = AUTH_TIER_FREE; i < AUTH_TIER__MAX; i++)
		if (strcasecmp(s, auth_tier_names[i]) == 0) {
			*out = (enum auth_tier)i;
			return 0;
		}
	return -1;
}

void
auth_key_hash(const char *key, uint8_t out[32])
{
	gnutls_hash_fast(GNUTLS_DIG_SHA256, key, strlen(key), out);
}

int
auth_key_well_formed(const char *key, int *sandbox)
{
	size_t i, plen = strlen(AUTH_LIVE_PREFIX);

	if (strncmp(key, AUTH_LIVE_PREFIX, plen) == 0)
		*sandbox = 0;
	else if (strncmp(key, AUTH_TEST_PREFIX, plen) == 0)
		*sandbox = 1;
	else
		return 0;
	for (i = 0; i < AUTH_KEY_RANDOM_LEN; i++) {
		char c = key[plen + i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z')))
			return 0;
	}
	return key[plen + AUTH_KEY_RANDOM_LEN] == '\0';
}

int
auth_key_generate(int sandbox, char out[AUTH_KEY_MAX])
{
	return ids_random_text(sandbox ? AUTH_TEST_PREFIX : AUTH_LIVE_PREFIX,
	    AUTH_KEY_RANDOM_LEN, out, AUTH_KEY_MAX);
}

/* The key's columns, the same in both lookups (auth_key_from_row reads
 * them by position). */
#define AUTH_KEY_COLUMNS \
	"k.id, k.account_id, k.org_id, k.scopes, k.sandbox, " \
	"k.rate_limit, k.ip_allowlist, " \
	"k.expires_at IS NOT NULL AND k.expires_at <= UTC_TIMESTAMP(3), " \
	"k.revoked_at IS NOT NULL, a.tier, a.subscription_type, " \
	"a.subscription_active, o.api_rate_limit, " \
	"FLOOR(UNIX_TIMESTAMP(k.expires_at) * 1000), " \
	"k.rate_limit_operator, " \
	"k.org_id IS NOT NULL AND NOT (k.org_id <=> a.org_id)"
#define AUTH_KEY_TABLES \
	"FROM api_keys k JOIN accounts a ON a.id = k.account_id " \
	"LEFT JOIN organizations o ON o.id = k.org_id "

static enum auth_result
auth_key_from_row(struct db_res *r, struct auth_key *k, int64_t *expires_ms)
{
	*expires_ms = db_res_isnull(r, 13) ? 0 : db_res_int(r, 13);
	if (db_res_int(r, 8))
		return AUTH_REVOKED;
	if (db_res_int(r, 7))
		return AUTH_EXPIRED;
	if (db_res_int(r, 15))
		return AUTH_ORG_CHANGED;
	strparse_copy(k->key_id, sizeof(k->key_id), db_res_str(r, 0));
	strparse_copy(k->account_id, sizeof(k->account_id), db_res_str(r, 1));
	strparse_copy(k->org_id, sizeof(k->org_id), db_res_str(r, 2));
	if (auth_scope_parse_list(db_res_str(r, 3), &k->scopes) == -1)
		k->scopes = 0;
	k->sandbox = (int)db_res_int(r, 4);
	k->key_rate_limit = db_res_isnull(r, 5) ? -1 : (long)db_res_int(r, 5);
	k->key_rate_limit_operator = (int)db_res_int(r, 14);
	strparse_copy(k->ip_allowlist, sizeof(k->ip_allowlist),
	    db_res_str(r, 6));
	if (auth_tier_parse(db_res_str(r, 9), &k->tier) == -1)
		k->tier = AUTH_TIER_FREE;
	strparse_copy(k->subscription_type, sizeof(k->subscription_type),
	    db_res_str(r, 10));
	k->subscription_active = (int)db_res_int(r, 11);
	k->org_rate_limit = (k->org_id[0] && !db_res_isnull(r, 12)) ?
	    (long)db_res_int(r, 12) : -1;
	return AUTH_OK;
}

enum auth_result
auth_presented_hash(const char *authz, uint8_t hash[32])
{
	const char *key;
	int sandbox;

	if (authz == NULL || *authz == '\0')
		return AUTH_MISSING;
	if (strncasecmp(authz, "Bearer ", 7) != 0)
		return AUTH_MALFORMED;
	key = authz + 7;
	while (*key == ' ')
		key++;
	if (!auth_key_well_formed(key, &sandbox))
		return AUTH_MALFORMED;
	auth_key_hash(key, hash);
	return AUTH_OK;
}

enum auth_result
auth_lookup(struct db *db, const uint8_t hash[32], struct auth_key *k,
    int64_t *expires_ms)
{
	static const char sql[] = "SELECT " AUTH_KEY_COLUMNS " "
	    AUTH_KEY_TABLES "WHERE k.key_hash = ?";
	struct db_res *r;
	enum auth_result rc;
	enum db_err e;
	int row;

	memset(k, 0, sizeof(*k));
	/* a revocation made through another node is seen (Galera) */
	(void)db_sync_wait(db, 1);
	e = db_query(db, sql, DB_ARGS(DBP_BLOB(hash, 32)), &r);
	(void)db_sync_wait(db, 0);
	if (e != DB_OK)
		return AUTH_DB_ERROR;
	row = db_res_next(r);
	if (row == -1)
		rc = AUTH_DB_ERROR;
	else if (row == 0)
		rc = AUTH_UNKNOWN;
	else
		rc = auth_key_from_row(r, k, expires_ms);
	db_res_free(r);
	return rc;
}

/* The same lookup with the account bucket's window (ratelimit.c's
 * ratelimit_window_read) as two more columns, in one statement and so in
 * one round trip. The bucket name is built in SQL the way router.c's
 * router_account_bucket builds it in C, converted to rate_counts'
 * character set so that the primary key (bucket, sec) is used. */
enum auth_result
auth_lookup_window(struct db *db, const uint8_t hash[32], int64_t now_ms,
    struct auth_key *k, int64_t *expires_ms, struct ratelimit_window *w)
{
	static const char sql[] = "SELECT " AUTH_KEY_COLUMNS ", "
	    "COALESCE(SUM(c.n), 0), MIN(c.sec) * 1000 " AUTH_KEY_TABLES
	    "LEFT JOIN rate_counts c ON c.bucket = CONVERT(CONCAT('"
	    RATELIMIT_ACCOUNT_PREFIX "', k.account_id) USING ascii) "
	    "AND c.sec > ? WHERE k.key_hash = ? GROUP BY k.id";
	struct db_res *r;
	enum auth_result rc;
	int row;

	memset(k, 0, sizeof(*k));
	memset(w, 0, sizeof(*w));
	if (db_query(db, sql, DB_ARGS(DBP_INT(ratelimit_window_start(now_ms)),
	    DBP_BLOB(hash, 32)), &r) != DB_OK)
		return AUTH_DB_ERROR;
	row = db_res_next(r);
	if (row == -1)
		rc = AUTH_DB_ERROR;
	else if (row == 0)
		rc = AUTH_UNKNOWN;
	else if ((rc = auth_key_from_row(r, k, expires_ms)) == AUTH_OK) {
		w->used = (long)db_res_int(r, 16);
		w->oldest_ms = db_res_int(r, 17);
	}
	db_res_free(r);
	return rc;
}

const char *
auth_key_pool(const struct auth_key *k)
{
	return k->org_id[0] ? k->org_id : k->account_id;
}

long
auth_key_rate_limit(const struct auth_key *k)
{
	long base = k->org_rate_limit >= 0 ? k->org_rate_limit :
	    auth_tier_limits[k->tier];

	if (k->key_rate_limit >= 0 && (k->key_rate_limit_operator ||
	    k->key_rate_limit < base))
		return k->key_rate_limit;
	return base;
}
