/* single_results.h: what is kept of a single verification (POST
 * /v1/verify) so that the accuracy report and the calibration count its
 * later delivery outcome as they count a job's result: the account, the
 * address only as the feedback key's keyed hash (addrhash.h, the hash
 * feedback_outcomes keeps), the classification, provider and first MX
 * host, and when it was verified. Kept as long as a job's results: the
 * account's retention_days, else job_retention_days (at most
 * retention_days_max); deleted after that by svc-worker's housekeeping,
 * and with the account (svcadm account erase). */
#ifndef SVC_SINGLE_RESULTS_H
#define SVC_SINGLE_RESULTS_H
#include "core/db.h"
#include "engine/verify.h"
#include "jobs/retention.h"
#include "util/addrhash.h"

/* Keeps r for account (nothing for an address that is not one, or a
 * sandbox address): DB_OK or the error. ask: the retention a new job of
 * the account would get (its days 0). */
enum db_err single_results_add(struct db *, const struct addrhash_key *,
	    const char *account, const struct verify_result *r,
	    const struct retention_ask *ask);
/* Deletes the rows past their retention, at most limit: how many, or -1. */
long long single_results_expire(struct db *, long limit);
/* Deletes the account's rows: how many, or -1. */
long long single_results_erase_account(struct db *, const char *account);
#endif
