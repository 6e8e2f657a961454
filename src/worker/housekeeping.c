/* housekeeping.c: the worker's periodic clean-up: idempotency keys older
 * than the 24-hour replay window and rate-limit hits that have left the
 * 60-second window, and expired rows of the verification caches. Each pass
 * logs what it removed. */
#include "worker/housekeeping.h"
#include "core/idempotency.h"
#include "core/ratelimit.h"
#include "core/vcache.h"
#include "util/log.h"
#include "util/timeutil.h"

int
housekeeping_run(struct db *db)
{
	long long idem, hits, cached;

	idem = idempotency_expire(db);
	hits = ratelimit_purge(db, timeutil_now_ms());
	cached = vcache_expire(db);
	if (idem < 0 || hits < 0 || cached < 0) {
		log_error("event=housekeeping_failed error=\"%s\"", db_error(db));
		return -1;
	}
	log_info("event=housekeeping idempotency_expired=%lld "
	    "rate_hits_purged=%lld cache_expired=%lld", idem, hits, cached);
	return 0;
}
