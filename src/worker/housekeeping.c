/* housekeeping.c: the worker's periodic clean-up: idempotency keys older
 * than the 24-hour replay window, rate-limit hits that have left the
 * 60-second window, expired rows of the verification caches, and batch
 * jobs past their retention (jobs.expires_at: addresses, chunks, then the
 * job). Each pass logs what it removed. */
#include "worker/housekeeping.h"
#include "core/idempotency.h"
#include "core/jobqueue.h"
#include "core/ratelimit.h"
#include "core/vcache.h"
#include "util/log.h"
#include "util/timeutil.h"

/* Expired batch jobs deleted per pass at most (the rest next pass). */
#define HOUSEKEEPING_JOBS_MAX 100

int
housekeeping_run(struct db *db)
{
	long long idem, hits, cached, jobs;

	idem = idempotency_expire(db);
	hits = ratelimit_purge(db, timeutil_now_ms());
	cached = vcache_expire(db);
	jobs = jobqueue_purge_expired(db, HOUSEKEEPING_JOBS_MAX);
	if (idem < 0 || hits < 0 || cached < 0 || jobs < 0) {
		log_error("event=housekeeping_failed error=\"%s\"", db_error(db));
		return -1;
	}
	log_info("event=housekeeping idempotency_expired=%lld "
	    "rate_hits_purged=%lld cache_expired=%lld batch_jobs_purged=%lld",
	    idem, hits, cached, jobs);
	return 0;
}
