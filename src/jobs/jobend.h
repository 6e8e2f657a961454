/* jobend.h: how a job ends: completed (its charged unknown results of a
 * bulk or upload job refunded, a job.completed event in the outbox),
 * failed (its charged addresses not verified refunded, a job.failed
 * event), and, past its retention, purged. */
#ifndef SVC_JOBEND_H
#define SVC_JOBEND_H
#include "core/db.h"
#include "jobs/jobqueue.h"

/* Completes a job whose row the caller holds locked, inside the caller's
 * transaction (the one that finished its last chunk): status completed,
 * the refund (once: ledger ref job:<id>:refund), the event. */
enum db_err jobend_complete(struct db *, const char *job_id);
/* Fails an ingesting, pending or processing job, in a transaction of its
 * own: error code and message, its chunks done, its charged addresses not
 * yet verified refunded, the job.failed event. JOBQUEUE_GONE when the job
 * had ended already. */
enum jobqueue_err jobend_fail(struct db *, const char *job_id,
	    const char *code, const char *message);
/* Housekeeping: deletes batch jobs past expires_at and bulk and upload
 * jobs that ended (or waited for confirmation) more than retention_days
 * ago (addresses, chunks, the stored file, then the job), at most limit
 * jobs; returns how many or -1. */
long long jobend_purge(struct db *, long retention_days, long limit);
#endif
