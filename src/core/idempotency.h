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
enum idempotency_outcome idempotency_begin(struct db *, const char *account,
	    const char *key, const uint8_t hash[32], int *status,
	    struct buf *body);
/* Stores the final response (may run inside the caller's transaction). */
enum db_err idempotency_finish(struct db *, const char *account,
	    const char *key, int status, const char *body, size_t len);
/* Forgets a running entry so that a retry may run again (after a 5xx). */
void	 idempotency_abandon(struct db *, const char *account, const char *key);
/* Deletes entries past the replay window; returns rows removed or -1. */
long long idempotency_expire(struct db *);
#endif
