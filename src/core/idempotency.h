/* idempotency.h: the Idempotency-Key store (API.md): per account, 24 hours,
 * replay of the stored status and body for the same request. */
#ifndef SVC_IDEMPOTENCY_H
#define SVC_IDEMPOTENCY_H
#include "core/db.h"
#include <gnutls/crypto.h>
#include <stdint.h>

#define IDEMPOTENCY_KEY_MAX 255
#define IDEMPOTENCY_TTL_SECONDS (24 * 3600)
/* A "running" entry older than this belongs to a request that died. */
#define IDEMPOTENCY_STALE_SECONDS 300
/* How long a request that answers 5xx tries to delete its running entry
 * (the database out of reach) before it leaves that to
 * idempotency_pending (idempotency_pending.h). */
#define IDEMPOTENCY_ABANDON_TRY_MS 3000
#define IDEMPOTENCY_TOKEN 16
/* How long svc-api's request waits for another's running entry of the
 * same request to end (answered: a replay; abandoned: it runs) before it
 * answers 409 idempotency_key_in_use; an entry a request on another host
 * could not abandon is deleted about that soon after the database is
 * back (idempotency_pending.h), and the poll between two looks. */
#define IDEMPOTENCY_IN_USE_WAIT_MS 3000
#define IDEMPOTENCY_IN_USE_POLL_MS 100

enum idempotency_outcome {
	IDEMPOTENCY_PROCEED,	/* first time: run the request, then finish */
	IDEMPOTENCY_REPLAY,	/* stored status and body returned */
	IDEMPOTENCY_IN_USE,	/* the first request is still running: 409 */
	IDEMPOTENCY_MISMATCH,	/* same key, different request: 422 */
	IDEMPOTENCY_DB_ERROR,
	IDEMPOTENCY_OUTCOME__MAX
};
extern const char *const idempotency_outcome_names[IDEMPOTENCY_OUTCOME__MAX];

/* SHA-256 over method, path and body: what "the same request" means. */
void	 idempotency_request_hash(const char *method, const char *path,
	    const void *body, size_t len, uint8_t out[32]);
/* The same hash over a body read in pieces (a streamed upload). A hash
 * that could not begin ends as all zeros, like idempotency_request_hash. */
struct idempotency_hash {
	gnutls_hash_hd_t h;
};
int	 idempotency_hash_begin(struct idempotency_hash *, const char *method,
	    const char *path);
void	 idempotency_hash_update(struct idempotency_hash *, const void *,
	    size_t);
void	 idempotency_hash_end(struct idempotency_hash *, uint8_t out[32]);
int	 idempotency_key_valid(const char *);
/* What identifies a request's own running entry: a random token its row
 * holds until the answer replaces it. unsure: idempotency_begin failed
 * after its write was sent (the answer lost with the connection), so the
 * row may be there all the same. */
struct idempotency_claim {
	uint8_t	token[IDEMPOTENCY_TOKEN];
	int	unsure;
};
/* wait_ms: how long to wait for a running entry of another request with
 * the same hash to end before IDEMPOTENCY_IN_USE (0: not at all). */
enum idempotency_outcome idempotency_begin(struct db *, const char *account,
	    const char *key, const uint8_t hash[32], int64_t wait_ms,
	    struct idempotency_claim *, int *status, struct buf *body);
/* Stores the final response (may run inside the caller's transaction). */
enum db_err idempotency_finish(struct db *, const char *account,
	    const char *key, int status, const char *body, size_t len);
/* Forgets this request's running entry so that a retry may run again
 * (after a 5xx): deletes the row only while it is still running with the
 * claim's token (not a row a later request took over or completed). */
enum db_err idempotency_abandon(struct db *, const char *account,
	    const char *key, const struct idempotency_claim *);
/* The same, tried again while the database is out of reach (a lost
 * connection, a node without its Primary component, a deadlock) for up
 * to ms milliseconds; returns the last error. */
enum db_err idempotency_abandon_within(struct db *, const char *account,
	    const char *key, const struct idempotency_claim *, int64_t ms);
/* Deletes entries past the replay window; returns rows removed or -1. */
long long idempotency_expire(struct db *);
#endif
