/* websession.c: account passwords and dashboard sessions (websession.h).
 * Passwords are libsodium Argon2id strings (crypto_pwhash_str, the
 * interactive limits); a session id is 43 base62 characters (about 256
 * bits) of which only the SHA-256 is stored, so a copy of the table signs
 * nobody in. Expiry is judged by the database's clock. */
#include "core/websession.h"
#include "core/auth.h"
#include "util/strparse.h"
#include <sodium.h>
#include <string.h>

#define WEBSESSION_OPS crypto_pwhash_OPSLIMIT_INTERACTIVE
#define WEBSESSION_MEM crypto_pwhash_MEMLIMIT_INTERACTIVE

static int
websession_password_hash(const char *pw, char out[crypto_pwhash_STRBYTES])
{
	if (sodium_init() < 0)
		return -1;
	return crypto_pwhash_str(out, pw, strlen(pw), WEBSESSION_OPS,
	    WEBSESSION_MEM);
}

enum websession_result
websession_set_password(struct db *db, const char *account_id,
    const char *password)
{
	char h[crypto_pwhash_STRBYTES];
	unsigned long long n = 0;
	size_t len = strlen(password);

	if (len < WEBSESSION_PASSWORD_MIN || len > WEBSESSION_PASSWORD_MAX)
		return WEBSESSION_INVALID;
	if (websession_password_hash(password, h) != 0)
		return WEBSESSION_ERROR;
	if (db_exec(db, "UPDATE accounts SET password_hash = ? WHERE id = ?",
	    DB_ARGS(DBP_STR(h), DBP_STR(account_id)), &n) != DB_OK)
		return WEBSESSION_ERROR;
	if (n == 0)
		return WEBSESSION_REFUSED;
	/* a new password ends the sessions of the old one */
	if (db_exec(db, "DELETE FROM web_sessions WHERE account_id = ?",
	    DB_ARGS(DBP_STR(account_id)), NULL) != DB_OK)
		return WEBSESSION_ERROR;
	return WEBSESSION_OK;
}

/* The hash verified when the e-mail is unknown or has no password, so
 * that such an attempt costs what a wrong password costs. */
static const char *
websession_dummy_hash(void)
{
	static char h[crypto_pwhash_STRBYTES];

	if (h[0] == '\0' && websession_password_hash(
	    "no password is this one", h) != 0)
		return NULL;
	return h;
}

static enum websession_result
websession_start(struct db *db, const char *account_id,
    char id[WEBSESSION_ID_MAX], struct websession *s)
{
	uint8_t hash[32];

	if (ids_random_text("", WEBSESSION_ID_LEN, id, WEBSESSION_ID_MAX) ==
	    -1 || ids_random_text("", WEBSESSION_ID_LEN, s->csrf,
	    sizeof(s->csrf)) == -1)
		return WEBSESSION_ERROR;
	auth_key_hash(id, hash);
	if (db_exec(db, "INSERT INTO web_sessions (id_hash, account_id, "
	    "csrf_token, created_at, last_seen_at) VALUES (?, ?, ?, "
	    "UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))", DB_ARGS(DBP_BLOB(hash, 32),
	    DBP_STR(account_id), DBP_STR(s->csrf)), NULL) != DB_OK)
		return WEBSESSION_ERROR;
	strparse_copy(s->account_id, sizeof(s->account_id), account_id);
	return WEBSESSION_OK;
}

enum websession_result
websession_signin(struct db *db, const char *email, const char *password,
    char id[WEBSESSION_ID_MAX], struct websession *s)
{
	char account[IDS_MAX], stored[crypto_pwhash_STRBYTES],
	    fresh[crypto_pwhash_STRBYTES];
	const char *h;
	struct db_res *r;
	size_t len = strlen(password);
	int row, known = 0, ok;

	memset(s, 0, sizeof(*s));
	account[0] = stored[0] = '\0';
	if (sodium_init() < 0)
		return WEBSESSION_ERROR;
	if (db_query(db, "SELECT id, password_hash FROM accounts WHERE "
	    "email = ?", DB_ARGS(DBP_STR(email)), &r) != DB_OK)
		return WEBSESSION_ERROR;
	if ((row = db_res_next(r)) == 1 && !db_res_isnull(r, 1)) {
		strparse_copy(account, sizeof(account), db_res_str(r, 0));
		strparse_copy(stored, sizeof(stored), db_res_str(r, 1));
		known = 1;
	}
	db_res_free(r);
	if (row == -1)
		return WEBSESSION_ERROR;
	if ((h = known ? stored : websession_dummy_hash()) == NULL)
		return WEBSESSION_ERROR;
	if (len > WEBSESSION_PASSWORD_MAX)
		len = WEBSESSION_PASSWORD_MAX;	/* still one verification */
	ok = crypto_pwhash_str_verify(h, password, len) == 0 && known;
	if (!ok)
		return WEBSESSION_REFUSED;
	strparse_copy(s->email, sizeof(s->email), email);
	if (crypto_pwhash_str_needs_rehash(stored, WEBSESSION_OPS,
	    WEBSESSION_MEM) != 0 && websession_password_hash(password,
	    fresh) == 0)
		(void)db_exec(db, "UPDATE accounts SET password_hash = ? "
		    "WHERE id = ?", DB_ARGS(DBP_STR(fresh), DBP_STR(account)),
		    NULL);
	return websession_start(db, account, id, s);
}

static int
websession_id_well_formed(const char *id)
{
	size_t n = strlen(id);

	return n == WEBSESSION_ID_LEN && strspn(id, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == n;
}

enum websession_result
websession_lookup(struct db *db, const char *id, long idle_s, long max_s,
    struct websession *s)
{
	static const char sql[] = "SELECT w.account_id, w.csrf_token, "
	    "a.email, FLOOR(UNIX_TIMESTAMP(w.created_at) * 1000), "
	    "FLOOR(UNIX_TIMESTAMP(LEAST(w.created_at + INTERVAL ? SECOND, "
	    "UTC_TIMESTAMP(3) + INTERVAL ? SECOND)) * 1000) "
	    "FROM web_sessions w JOIN accounts a ON a.id = w.account_id "
	    "WHERE w.id_hash = ? "
	    "AND w.last_seen_at > UTC_TIMESTAMP(3) - INTERVAL ? SECOND "
	    "AND w.created_at > UTC_TIMESTAMP(3) - INTERVAL ? SECOND";
	uint8_t hash[32];
	struct db_res *r;
	int row;

	memset(s, 0, sizeof(*s));
	if (!websession_id_well_formed(id))
		return WEBSESSION_REFUSED;
	auth_key_hash(id, hash);
	if (db_query(db, sql, DB_ARGS(DBP_INT(max_s), DBP_INT(idle_s),
	    DBP_BLOB(hash, 32), DBP_INT(idle_s), DBP_INT(max_s)), &r) !=
	    DB_OK)
		return WEBSESSION_ERROR;
	if ((row = db_res_next(r)) == 1) {
		strparse_copy(s->account_id, sizeof(s->account_id),
		    db_res_str(r, 0));
		strparse_copy(s->csrf, sizeof(s->csrf), db_res_str(r, 1));
		strparse_copy(s->email, sizeof(s->email), db_res_str(r, 2));
		s->created_ms = db_res_int(r, 3);
		s->expires_ms = db_res_int(r, 4);
	}
	db_res_free(r);
	if (row == -1)
		return WEBSESSION_ERROR;
	if (row == 0)
		return WEBSESSION_REFUSED;
	if (db_exec(db, "UPDATE web_sessions SET last_seen_at = "
	    "UTC_TIMESTAMP(3) WHERE id_hash = ?", DB_ARGS(DBP_BLOB(hash, 32)),
	    NULL) != DB_OK)
		return WEBSESSION_ERROR;
	return WEBSESSION_OK;
}

enum websession_result
websession_end(struct db *db, const char *id)
{
	uint8_t hash[32];

	if (!websession_id_well_formed(id))
		return WEBSESSION_OK;
	auth_key_hash(id, hash);
	return db_exec(db, "DELETE FROM web_sessions WHERE id_hash = ?",
	    DB_ARGS(DBP_BLOB(hash, 32)), NULL) == DB_OK ? WEBSESSION_OK :
	    WEBSESSION_ERROR;
}

int
websession_csrf_ok(const struct websession *s, const char *presented)
{
	size_t n = strlen(s->csrf);

	if (presented == NULL || n == 0 || strlen(presented) != n)
		return 0;
	return sodium_memcmp(s->csrf, presented, n) == 0;
}

enum websession_result
websession_key(struct db *db, const char *account_id, struct auth_key *k)
{
	struct db_res *r;
	int row;

	memset(k, 0, sizeof(*k));
	if (db_query(db, "SELECT tier, subscription_type, subscription_active "
	    "FROM accounts WHERE id = ?", DB_ARGS(DBP_STR(account_id)), &r) !=
	    DB_OK)
		return WEBSESSION_ERROR;
	if ((row = db_res_next(r)) == 1) {
		strparse_copy(k->account_id, sizeof(k->account_id), account_id);
		if (auth_tier_parse(db_res_str(r, 0), &k->tier) == -1)
			k->tier = AUTH_TIER_FREE;
		strparse_copy(k->subscription_type,
		    sizeof(k->subscription_type), db_res_str(r, 1));
		k->subscription_active = (int)db_res_int(r, 2);
		k->scopes = 1u << AUTH_SCOPE_ALL;
		k->key_rate_limit = -1;
		k->org_rate_limit = -1;
	}
	db_res_free(r);
	return row == 1 ? WEBSESSION_OK : row == 0 ? WEBSESSION_REFUSED :
	    WEBSESSION_ERROR;
}

enum websession_result
websession_invite(struct db *db, const char *account_id, long ttl_s,
    char token[WEBSESSION_ID_MAX])
{
	uint8_t hash[32];
	long long v;
	int found = 0;

	if (db_query_int(db, "SELECT 1 FROM accounts WHERE id = ?",
	    DB_ARGS(DBP_STR(account_id)), &v, &found) != DB_OK)
		return WEBSESSION_ERROR;
	if (!found)
		return WEBSESSION_REFUSED;
	if (ids_random_text("", WEBSESSION_ID_LEN, token, WEBSESSION_ID_MAX) ==
	    -1)
		return WEBSESSION_ERROR;
	auth_key_hash(token, hash);
	return db_exec(db, "INSERT INTO web_invites (token_hash, account_id, "
	    "created_at, expires_at) VALUES (?, ?, UTC_TIMESTAMP(3), "
	    "UTC_TIMESTAMP(3) + INTERVAL ? SECOND)", DB_ARGS(DBP_BLOB(hash, 32),
	    DBP_STR(account_id), DBP_INT(ttl_s)), NULL) == DB_OK ?
	    WEBSESSION_OK : WEBSESSION_ERROR;
}

enum websession_result
websession_accept(struct db *db, const char *token, const char *password)
{
	char h[crypto_pwhash_STRBYTES], account[IDS_MAX];
	uint8_t hash[32];
	unsigned long long n = 0;
	struct db_res *r;
	size_t len = strlen(password);
	int row;

	if (!websession_id_well_formed(token))
		return WEBSESSION_REFUSED;
	if (len < WEBSESSION_PASSWORD_MIN || len > WEBSESSION_PASSWORD_MAX)
		return WEBSESSION_INVALID;
	if (websession_password_hash(password, h) != 0)
		return WEBSESSION_ERROR;
	auth_key_hash(token, hash);
	if (db_begin(db) != DB_OK)
		return WEBSESSION_ERROR;
	/* the row locked: a second use waits, then finds used_at set */
	if (db_query(db, "SELECT account_id FROM web_invites WHERE "
	    "token_hash = ? AND used_at IS NULL AND expires_at > "
	    "UTC_TIMESTAMP(3) FOR UPDATE", DB_ARGS(DBP_BLOB(hash, 32)), &r) !=
	    DB_OK)
		goto fail;
	account[0] = '\0';
	if ((row = db_res_next(r)) == 1)
		strparse_copy(account, sizeof(account), db_res_str(r, 0));
	db_res_free(r);
	if (row == -1)
		goto fail;
	if (row == 0) {
		db_rollback(db);
		return WEBSESSION_REFUSED;
	}
	if (db_exec(db, "UPDATE web_invites SET used_at = UTC_TIMESTAMP(3) "
	    "WHERE token_hash = ?", DB_ARGS(DBP_BLOB(hash, 32)), &n) != DB_OK ||
	    db_exec(db, "UPDATE accounts SET password_hash = ? WHERE id = ?",
	    DB_ARGS(DBP_STR(h), DBP_STR(account)), NULL) != DB_OK ||
	    db_exec(db, "DELETE FROM web_sessions WHERE account_id = ?",
	    DB_ARGS(DBP_STR(account)), NULL) != DB_OK ||
	    db_commit(db) != DB_OK)
		goto fail;
	return WEBSESSION_OK;
fail:
	db_rollback(db);
	return WEBSESSION_ERROR;
}

long long
websession_purge(struct db *db, long idle_s, long max_s, long limit)
{
	unsigned long long sessions = 0, invites = 0;

	if (db_exec(db, "DELETE FROM web_sessions WHERE last_seen_at <= "
	    "UTC_TIMESTAMP(3) - INTERVAL ? SECOND OR created_at <= "
	    "UTC_TIMESTAMP(3) - INTERVAL ? SECOND LIMIT ?",
	    DB_ARGS(DBP_INT(idle_s), DBP_INT(max_s), DBP_INT(limit)),
	    &sessions) != DB_OK)
		return -1;
	if (db_exec(db, "DELETE FROM web_invites WHERE used_at IS NOT NULL "
	    "OR expires_at <= UTC_TIMESTAMP(3) LIMIT ?",
	    DB_ARGS(DBP_INT(limit)), &invites) != DB_OK)
		return -1;
	return (long long)(sessions + invites);
}
