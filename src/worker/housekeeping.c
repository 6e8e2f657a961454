/* housekeeping.c: the worker's periodic clean-up: idempotency keys older
 * than the 24-hour replay window, rate-limit counters and permit leases
 * that have left the 60-second window and the buckets of idle clients,
 * expired rows of the verification caches, the data of jobs past their
 * retention (retention.h: batch jobs at jobs.expires_at, every job its
 * retention_days after it ended; the job row stays with its counts, and
 * a receipt is written),
 * the pieces of uploaded files whose job never came (a responder that died
 * in the middle of an upload), event deliveries that ended (and outbox
 * events handed to deliveries) more than job_retention_days ago, and the
 * heartbeat rows of workers not seen for a day, delivery outcomes
 * older than feedback_retention_days, single verifications' hashes past
 * their retention (single_results.h), pacing pairs unused for
 * PACING_KEEP_DAYS (pacing.h), and the dashboard's ended sessions and
 * used or expired invitations. Each pass logs what it removed. And the
 * calibration counts (calibration_update.h) are rewritten when the
 * table's are older than calibration_update_seconds (whichever worker
 * comes first; each tries at most that often). */
#include "worker/housekeeping.h"
#include "worker/heartbeat.h"
#include "core/idempotency.h"
#include "jobs/calibration_update.h"
#include "jobs/events.h"
#include "jobs/feedback.h"
#include "jobs/jobend.h"
#include "jobs/retention.h"
#include "jobs/single_results.h"
#include "jobs/upload_store.h"
#include "core/ratelimit.h"
#include "core/websession.h"
#include "engine/pacing.h"
#include "engine/vcache.h"
#include "util/log.h"
#include "worker/connstats.h"

/* Expired jobs deleted per pass at most (the rest next pass). */
#define HOUSEKEEPING_JOBS_MAX 100
/* An upload longer than this in coming is not one in progress. */
#define HOUSEKEEPING_ORPHAN_SECONDS 3600
/* Ended deliveries (and delivered outbox events) deleted per pass at most. */
#define HOUSEKEEPING_EVENTS_MAX 1000
/* Old delivery outcomes deleted per pass at most. */
#define HOUSEKEEPING_OUTCOMES_MAX 10000
/* Ended sessions, and used or expired invitations, deleted per pass at most. */
#define HOUSEKEEPING_SESSIONS_MAX 10000

/* When this process last tried to rewrite the calibration counts. */
static time_t housekeeping_calibrated;

/* The calibration counts, when due: 1 written, 0 not due (or no key), -1
 * the database failed. */
static int
housekeeping_calibrate(const struct conf *c, struct db *db)
{
	struct calibration_update_stats st;
	struct addrhash_key key;
	long every = conf_int(c, CONF_CALIBRATION_UPDATE_SECONDS);
	time_t now = time(NULL), last;
	long long any = 1;
	int found;

	if (every == 0 || (housekeeping_calibrated != 0 &&
	    now - housekeeping_calibrated < every && now >=
	    housekeeping_calibrated))
		return 0;
	housekeeping_calibrated = now;
	if (addrhash_key_from_conf(c, CONF_FEEDBACK_HASH_KEY, &key) == -1)
		return 0;
	if (calibration_update_last(db, &last) != DB_OK)
		return -1;
	if (last != 0 && now - last < every && now >= last)
		return 0;	/* another worker did */
	if (last == 0 && (db_query_int(db, "SELECT EXISTS (SELECT 1 FROM "
	    "feedback_outcomes)", NULL, 0, &any, &found) != DB_OK))
		return -1;
	if (last == 0 && !any)
		return 0;	/* nothing to count */
	if (calibration_update_run(db, &key, conf_int(c,
	    CONF_CALIBRATION_WINDOW_DAYS), now, &st) != DB_OK)
		return -1;
	log_info("event=calibration_updated results=%lld delivered=%lld "
	    "bounced=%lld rows=%zu host_rows=%zu", st.results, st.delivered,
	    st.bounced, st.rows, st.host_rows);
	return 1;
}

int
housekeeping_run(const struct conf *c, struct db *db)
{
	long long idem, hits, buckets, cached, jobs, orphans, events, workers;
	long long egress, outcomes, singles, pairs, web;
	int calibrated;

	ratelimit_set_window(conf_int(c, CONF_RATE_WINDOW_SECONDS));
	idem = idempotency_expire(db);
	hits = ratelimit_purge(db);
	buckets = ratelimit_purge_buckets(db);
	cached = vcache_expire(db);
	jobs = retention_expire(db, conf_int(c, CONF_JOB_RETENTION_DAYS),
	    conf_int(c, CONF_TEST_CLOCK_OFFSET_SECONDS),
	    HOUSEKEEPING_JOBS_MAX);
	orphans = upload_store_purge_orphans(db, HOUSEKEEPING_ORPHAN_SECONDS);
	events = events_purge(db, conf_int(c, CONF_JOB_RETENTION_DAYS),
	    HOUSEKEEPING_EVENTS_MAX);
	workers = heartbeat_purge(db);
	egress = connstats_purge(db);
	outcomes = feedback_expire(db, conf_int(c, CONF_FEEDBACK_RETENTION_DAYS),
	    HOUSEKEEPING_OUTCOMES_MAX);
	singles = single_results_expire(db, HOUSEKEEPING_OUTCOMES_MAX);
	pairs = pacing_db_purge(db);
	web = websession_purge(db, conf_int(c, CONF_SESSION_IDLE_SECONDS),
	    conf_int(c, CONF_SESSION_MAX_SECONDS), HOUSEKEEPING_SESSIONS_MAX);
	calibrated = housekeeping_calibrate(c, db);
	if (idem < 0 || hits < 0 || buckets < 0 || cached < 0 || jobs < 0 ||
	    orphans < 0 || events < 0 || workers < 0 || egress < 0 ||
	    outcomes < 0 || singles < 0 || pairs < 0 || web < 0 ||
	    calibrated < 0) {
		log_error("event=housekeeping_failed error=\"%s\"", db_error(db));
		return -1;
	}
	log_info("event=housekeeping idempotency_expired=%lld "
	    "rate_hits_purged=%lld rate_buckets_purged=%lld cache_expired=%lld "
	    "jobs_erased=%lld upload_pieces_purged=%lld events_purged=%lld "
	    "workers_purged=%lld egress_health_purged=%lld "
	    "outcomes_purged=%lld pacing_pairs_purged=%lld "
	    "web_sessions_purged=%lld single_results_purged=%lld", idem, hits,
	    buckets, cached, jobs, orphans, events, workers, egress, outcomes,
	    pairs, web, singles);
	return 0;
}
