/* idempotency_pending.h: the running Idempotency-Key entries a host's
 * requests could not abandon (they answered 5xx with the database out of
 * reach, idempotency_abandon_within failing too). Left as they were, each
 * would answer its retries 409 idempotency_key_in_use for
 * IDEMPOTENCY_STALE_SECONDS; kept here (a small table in memory shared by
 * svc-api's processes, made before they are forked) they are deleted as
 * soon as the database answers again: by the keeper every tick, by a
 * responder after each request and before each Idempotency-Key is
 * begun (so a retry on the same host never finds its dead entry). */
#ifndef SVC_IDEMPOTENCY_PENDING_H
#define SVC_IDEMPOTENCY_PENDING_H
#include "core/idempotency.h"
#include <stddef.h>

#define IDEMPOTENCY_PENDING_MAX 64

struct idempotency_pending;

/* The table in anonymous shared memory (MAP_SHARED: the processes forked
 * after share it); NULL when it cannot be made. */
struct idempotency_pending *idempotency_pending_create(void);
void	 idempotency_pending_free(struct idempotency_pending *);
/* Keeps an entry to delete. sure: the request holds the row (its begin
 * succeeded); else it may (claim->unsure). When the table is full an
 * unsure entry, the oldest, gives way to a sure one; -1 when none can. */
int	 idempotency_pending_add(struct idempotency_pending *,
	    const char *account, const char *key,
	    const struct idempotency_claim *, int sure);
/* Entries kept (without a lock: a hint whether to flush). */
size_t	 idempotency_pending_count(const struct idempotency_pending *);
/* Runs each entry's idempotency_abandon and forgets those that went
 * through; stops at the first that cannot reach the database. Returns
 * how many were deleted, or -1 when the database could not be reached. */
long	 idempotency_pending_flush(struct idempotency_pending *, struct db *);
#endif
