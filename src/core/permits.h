/* permits.h: rate-limit permits that a host leases from MariaDB in batches
 * and hands out from memory shared by the responders of one prefork
 * master, so that a counted request usually needs no statement to be
 * counted, while the limit stays exact across processes and hosts (the
 * argument is at the top of permits.c). The master maps the table before
 * it forks; its keeper process gives back the unused permits of leases
 * that ended (permits_sweep). A process without the table counts each
 * request on its own (ratelimit_check). */
#ifndef SVC_PERMITS_H
#define SVC_PERMITS_H
#include "core/db.h"
#include "core/ratelimit.h"
#include <stdint.h>

#define PERMITS_SLOTS 1024	/* buckets a host holds leases of at once */
#define PERMITS_HOLDER_MAX 64	/* rate_leases.holder */
/* The longest a refused request waits for other hosts to give back the
 * permits they leased of its window. */
#define PERMITS_WAIT_MAX_MS 2500
/* The keeper gives back a lease this long after it ended (a busy bucket's
 * next request usually gives it back first, with its next lease). */
#define PERMITS_GRACE_MS 50

struct permits;

/* A table shared with the processes forked after this call, leasing at
 * most max permits at once per bucket (1: every counted request is a
 * round trip, as without the table); NULL when it cannot be made. */
struct permits *permits_shared(long max);
/* rate_permits_max read again (the master's SIGHUP). */
void	 permits_set_max(struct permits *, long max);

/* Counts a request of bucket under limit: from this host's lease when it
 * can (no statement), else in one round trip that gives back what is left
 * of the bucket's lease and takes a new one. A request is refused
 * (st->exceeded) when the window holds limit permits; when other hosts
 * hold leases of it that they may still give back, it first waits for
 * them, PERMITS_WAIT_MAX_MS at most. *changed is set when the window in
 * MariaDB changed (windows of the bucket read before are stale). Returns a
 * db_err (the request is then neither counted nor refused). */
enum db_err permits_take(struct permits *, struct db *, const char *bucket,
	    long limit, struct ratelimit_status *st, int *changed);

/* A window of bucket read from MariaDB counts the permits of this host's
 * lease, used or not: to report the requests made, the permits left are
 * taken off, and the read and the lease must be of one moment. So a mark
 * is taken before the read (permits_mark: it waits for a round trip of the
 * bucket under way, which may or may not have given back or leased
 * permits when the read is made), and given with the read to
 * permits_unused, which answers the permits left of the lease the read
 * counts, or -1 when a round trip of the bucket began since the mark (or
 * the mark is PERMITS_MARK_STALE): read again, under a new mark. A round
 * trip that failed and is not finished yet (the database is failing)
 * leaves the read as it is: 0. */
#define PERMITS_MARK_STALE UINT64_MAX
uint64_t permits_mark(struct permits *, const char *bucket);
long	 permits_unused(struct permits *, const char *bucket, int64_t now_ms,
	    uint64_t mark);

/* The keeper's pass: gives back the unused permits of leases that ended
 * PERMITS_GRACE_MS ago or more (all: of every lease, the host stops), and
 * finishes round trips that a dead process or a failed statement left.
 * changed(bucket, arg) is called for each bucket whose window changed.
 * Returns the ms until the next lease ends (at most 1000), or -1 when the
 * database failed. */
long	 permits_sweep(struct permits *, struct db *, int all,
	    void (*changed)(const char *bucket, void *), void *arg);
#endif
