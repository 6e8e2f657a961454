/* jobend.h: how a job ends: completed (its charged unknown results of a
 * bulk or upload job refunded, a job.completed event in the outbox),
 * failed (its charged addresses not verified refunded, a job.failed
 * event). Past its retention its data is erased: retention.h. */
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
#endif
