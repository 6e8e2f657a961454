/* idempotency.c: the Idempotency-Key store. The first request inserts a
 * "running" row (the primary key makes this race-free across processes);
 * a later request with the same key finds it and is told to wait, is
 * refused for a different body, or gets the stored response replayed. A
 * row past its window, or left running by a request that died, is taken
 * over with a compare-and-set, so two retries never both proceed. */
#include "core/idempotency.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <gnutls/crypto.h>
#include <string.h>

const char *const idempotency_outcome_names[IDEMPOTENCY_OUTCOME__MAX] = {
	"proceed", "replay", "in_use", "mismatch", "db_error"
};

int
idempotency_hash_begin(struct idempotency_hash *h, const char *method,
    const char *path)
{
	if (gnutls_hash_init(&h->h, GNUTLS_DIG_SHA256) != 0) {
		h->h = NULL;
		return -1;
	}
	gnutls_hash(h->h, method, strlen(method));
	gnutls_hash(h->h, "\n", 1);
	gnutls_hash(h->h, path, strlen(path));
	gnutls_hash(h->h, "\n", 1);
	return 0;
}

void
idempotency_hash_update(struct idempotency_hash *h, const void *body,
    size_t len)
{
	if (h->h != NULL && len > 0)
		gnutls_hash(h->h, body, len);
}

void
idempotency_hash_end(struct idempotency_hash *h, uint8_t out[32])
{
	if (h->h == NULL) {
		memset(out, 0, 32);
		return;
	}
	gnutls_hash_deinit(h->h, out);
	h->h = NULL;
}

void
idempotency_request_hash(const char *method, const char *path,
    const void *body, size_t len, uint8_t out[32])
{
	struct idempotency_hash h;

	idempotency_hash_begin(&h, method, path);
	idempotency_hash_update(&h, body, len);
	idempotency_hash_end(&h, out);
}

int
idempotency_key_valid(const char *k)
{
	size_t i, n = strlen(k);

	if (n == 0 || n > IDEMPOTENCY_KEY_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)k[i] < 0x21 || (unsigned char)k[i] > 0x7e)
			return 0;
	return 1;
}

/* A running row's body holds a token of the request that wrote it
 * (IDEMPOTENCY_TOKEN random bytes; the answer replaces it at finish).
 * When the answer to that INSERT or take-over was lost (its node died
 * after the commit, and db_run sent it again through another node, which
 * found the row), the request knows the row for its own and goes on,
 * instead of answering itself, and every retry for
 * IDEMPOTENCY_STALE_SECONDS, 409 idempotency_key_in_use. The token also
 * makes idempotency_abandon delete this request's row only. */

static enum db_err
idempotency_insert(struct db *db, const char *account, const char *key,
    const uint8_t hash[32], const uint8_t token[IDEMPOTENCY_TOKEN])
{
	return db_exec(db, "INSERT INTO idempotency_keys (account_id, "
	    "idem_key, request_hash, state, body, created_at) VALUES "
	    "(?, ?, ?, 'running', ?, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(account), DBP_STR(key), DBP_BLOB(hash, 32),
	    DBP_BLOB(token, IDEMPOTENCY_TOKEN)), NULL);
}

/* Takes over a row past the replay window, or left "running" by a request
 * that died, for this request: a compare-and-set on the row as it was read
 * (its state and creation time), so of two retries that found the same
 * stale row exactly one proceeds; the other reads the row again. */
static enum db_err
idempotency_take_over(struct db *db, const char *account, const char *key,
    const uint8_t hash[32], const uint8_t token[IDEMPOTENCY_TOKEN],
    const char *state, const char *created, int *taken)
{
	unsigned long long changed = 0;
	enum db_err e;

	e = db_exec(db, "UPDATE idempotency_keys SET request_hash = ?, "
	    "state = 'running', status = NULL, body = ?, "
	    "created_at = UTC_TIMESTAMP(3) WHERE account_id = ? AND "
	    "idem_key = ? AND state = ? AND created_at = ?",
	    DB_ARGS(DBP_BLOB(hash, 32), DBP_BLOB(token, IDEMPOTENCY_TOKEN),
	    DBP_STR(account), DBP_STR(key), DBP_STR(state), DBP_STR(created)),
	    &changed);
	*taken = e == DB_OK && changed == 1;
	return e;
}

enum idempotency_outcome
idempotency_begin(struct db *db, const char *account, const char *key,
    const uint8_t hash[32], int64_t wait_ms, struct idempotency_claim *claim,
    int *status, struct buf *body)
{
	static const char sql[] =
	    "SELECT request_hash, state, status, body, "
	    "created_at < UTC_TIMESTAMP(3) - INTERVAL ? SECOND, "
	    "created_at < UTC_TIMESTAMP(3) - INTERVAL ? SECOND, "
	    "DATE_FORMAT(created_at, '%Y-%m-%d %H:%i:%s.%f') "
	    "FROM idempotency_keys WHERE account_id = ? AND idem_key = ?";
	enum idempotency_outcome out = IDEMPOTENCY_DB_ERROR;
	char state[16], created[40];
	const uint8_t *token = claim->token;
	struct db_res *r;
	enum db_err e;
	int row, attempt, taken;
	int64_t wait_end = timeutil_mono_ms() + wait_ms;

	claim->unsure = 0;
	if (gnutls_rnd(GNUTLS_RND_NONCE, claim->token, IDEMPOTENCY_TOKEN) != 0)
		return IDEMPOTENCY_DB_ERROR;
	for (attempt = 0; attempt < 3; attempt++) {
		e = idempotency_insert(db, account, key, hash, token);
		if (e == DB_OK)
			return IDEMPOTENCY_PROCEED;
		if (e != DB_ERR_DUPLICATE) {
			claim->unsure = db_sent(db);
			return IDEMPOTENCY_DB_ERROR;
		}
		/* the row was written through another node, perhaps: read
		 * it as the cluster has it (Galera) */
		(void)db_sync_wait(db, 1);
		e = db_query(db, sql, DB_ARGS(DBP_INT(IDEMPOTENCY_TTL_SECONDS),
		    DBP_INT(IDEMPOTENCY_STALE_SECONDS), DBP_STR(account),
		    DBP_STR(key)), &r);
		(void)db_sync_wait(db, 0);
		if (e != DB_OK)
			return IDEMPOTENCY_DB_ERROR;
		row = db_res_next(r);
		if (row == 0) {		/* deleted meanwhile: try again */
			db_res_free(r);
			continue;
		}
		if (row == -1) {
			db_res_free(r);
			return IDEMPOTENCY_DB_ERROR;
		}
		if (strcmp(db_res_str(r, 1), "running") == 0 &&
		    db_res_len(r, 3) == IDEMPOTENCY_TOKEN &&
		    memcmp(db_res_str(r, 3), token, IDEMPOTENCY_TOKEN) == 0) {
			/* this request's own row (the answer to its write
			 * was lost) */
			db_res_free(r);
			return IDEMPOTENCY_PROCEED;
		}
		if (db_res_int(r, 4) || (strcmp(db_res_str(r, 1), "running") == 0
		    && db_res_int(r, 5))) {
			/* Past the replay window, or abandoned by a dead
			 * request: this request may start afresh, if no other
			 * took the row over first. */
			strparse_copy(state, sizeof(state), db_res_str(r, 1));
			strparse_copy(created, sizeof(created),
			    db_res_str(r, 6));
			db_res_free(r);
			if (idempotency_take_over(db, account, key, hash, token,
			    state, created, &taken) != DB_OK) {
				claim->unsure = db_sent(db);
				return IDEMPOTENCY_DB_ERROR;
			}
			if (taken)
				return IDEMPOTENCY_PROCEED;
			continue;
		}
		if (db_res_len(r, 0) != 32 ||
		    memcmp(db_res_str(r, 0), hash, 32) != 0)
			out = IDEMPOTENCY_MISMATCH;
		else if (strcmp(db_res_str(r, 1), "running") == 0) {
			/* Another request runs it, or died with it: its
			 * answer, or its row abandoned (perhaps late, by its
			 * host once the database is back), may come soon.
			 * Not an attempt of the three: the row was read. */
			if (timeutil_mono_ms() + IDEMPOTENCY_IN_USE_POLL_MS <=
			    wait_end) {
				db_res_free(r);
				timeutil_nap_ms(IDEMPOTENCY_IN_USE_POLL_MS);
				attempt--;
				continue;
			}
			out = IDEMPOTENCY_IN_USE;
		} else {
			*status = (int)db_res_int(r, 2);
			buf_reset(body);
			if (buf_append(body, db_res_str(r, 3) ? db_res_str(r, 3)
			    : "", db_res_len(r, 3)) == -1)
				out = IDEMPOTENCY_DB_ERROR;
			else
				out = IDEMPOTENCY_REPLAY;
		}
		db_res_free(r);
		return out;
	}
	return IDEMPOTENCY_DB_ERROR;
}

enum db_err
idempotency_finish(struct db *db, const char *account, const char *key,
    int status, const char *body, size_t len)
{
	return db_exec(db, "UPDATE idempotency_keys SET state = 'done', "
	    "status = ?, body = ? WHERE account_id = ? AND idem_key = ?",
	    DB_ARGS(DBP_INT(status), DBP_BLOB(body, len), DBP_STR(account),
	    DBP_STR(key)), NULL);
}

enum db_err
idempotency_abandon(struct db *db, const char *account, const char *key,
    const struct idempotency_claim *claim)
{
	return db_exec(db, "DELETE FROM idempotency_keys WHERE account_id = ? "
	    "AND idem_key = ? AND state = 'running' AND body = ?",
	    DB_ARGS(DBP_STR(account), DBP_STR(key),
	    DBP_BLOB(claim->token, IDEMPOTENCY_TOKEN)), NULL);
}

/* Between two tries of idempotency_abandon_within (each also waits for
 * db_connect's own rounds over the endpoints). */
#define IDEMPOTENCY_ABANDON_NAP_MS 200

enum db_err
idempotency_abandon_within(struct db *db, const char *account,
    const char *key, const struct idempotency_claim *claim, int64_t ms)
{
	int64_t end = timeutil_mono_ms() + ms;
	enum db_err e;

	for (;;) {
		e = idempotency_abandon(db, account, key, claim);
		if ((e != DB_ERR_CONNECT && e != DB_ERR_RETRY) ||
		    timeutil_mono_ms() + IDEMPOTENCY_ABANDON_NAP_MS > end)
			return e;
		timeutil_nap_ms(IDEMPOTENCY_ABANDON_NAP_MS);
	}
}

long long
idempotency_expire(struct db *db)
{
	unsigned long long n = 0;

	if (db_exec(db, "DELETE FROM idempotency_keys WHERE created_at < "
	    "UTC_TIMESTAMP(3) - INTERVAL ? SECOND",
	    DB_ARGS(DBP_INT(IDEMPOTENCY_TTL_SECONDS)), &n) != DB_OK)
		return -1;
	return (long long)n;
}
