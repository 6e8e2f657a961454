/* retention.h: erasing a job's data when its retention ends, when its
 * account asks (DELETE /v1/jobs/{id}/data) or when the operator erases an
 * account (svcadm account erase), and the receipt each erasure leaves in
 * erase_audit. An erased job keeps its row with its counts (and the
 * ledger its charge and refund); its results, original rows, chunks,
 * stored file, preview, columns, name, URLs, callback data and events
 * are gone. */
#ifndef SVC_RETENTION_H
#define SVC_RETENTION_H
#include "core/db.h"

/* The retention a new job asks for: days (0: none asked), else the
 * account's (accounts.retention_days), else default_days, never more than
 * max_days (job_retention_days and retention_days_max). The caller has
 * refused days above max_days. */
struct retention_ask {
	long		 days, default_days, max_days;
};
/* The SQL value of a new job's retention_days for INSERT ... VALUES (with
 * RETENTION_ASK_ARGS(ask, account_id) among its parameters). */
#define RETENTION_ASK_SQL "COALESCE(NULLIF(?, 0), (SELECT " \
	"LEAST(a.retention_days, ?) FROM accounts a WHERE a.id = ?), " \
	"LEAST(?, ?))"
#define RETENTION_ASK_ARGS(r, account) DBP_INT((r)->days), \
	DBP_INT((r)->max_days), DBP_STR(account), \
	DBP_INT((r)->default_days), DBP_INT((r)->max_days)

/* Who erased. */
enum retention_actor {
	RETENTION_BY_HOUSEKEEPING,
	RETENTION_BY_API_KEY,
	RETENTION_BY_OPERATOR,
	RETENTION_BY__MAX
};
extern const char *const retention_actor_names[RETENTION_BY__MAX];

/* Why. */
enum retention_reason {
	RETENTION_EXPIRED,		/* the job's retention ended */
	RETENTION_REQUESTED,		/* DELETE /v1/jobs/{id}/data */
	RETENTION_ACCOUNT_ERASE,	/* svcadm account erase */
	RETENTION_REASON__MAX
};
extern const char *const retention_reason_names[RETENTION_REASON__MAX];

/* Rows erased, by kind (the columns of erase_audit). */
enum retention_kind {
	RETENTION_RESULTS,		/* job_emails: addresses, results, originals */
	RETENTION_CHUNKS,		/* job_chunks */
	RETENTION_UPLOAD_PIECES,	/* upload_chunks: the stored file */
	RETENTION_EVENTS,		/* event_outbox, deliveries, attempts */
	RETENTION_JOB_FIELDS,		/* non-empty columns of the job row */
	RETENTION_SUPPRESSIONS,		/* the account's suppression list */
	RETENTION_STORED_ANSWERS,	/* the account's Idempotency-Key answers */
	RETENTION_KIND__MAX
};
extern const char *const retention_kind_names[RETENTION_KIND__MAX];

struct retention_counts {
	long long	 n[RETENTION_KIND__MAX];
};

/* Who and why, for the receipt. actor_id: the API key's id, the
 * operator's name (svcadm: the Unix user), or NULL. */
struct retention_who {
	enum retention_actor actor;
	const char	*actor_id;
	enum retention_reason reason;
};

/* Erases one job's data (not its row, counts or ledger rows) and writes
 * the receipt; counts the rows erased into *out (may be NULL). A job
 * erased already: 0 and nothing written. The job must have ended (the
 * caller cancels a running one first). 0, or -1 (db_error). */
int	 retention_erase_job(struct db *, const char *job_id,
	    const struct retention_who *, struct retention_counts *out);

/* Housekeeping: erases the data of at most limit jobs whose retention
 * ended: batch jobs past their expires_at, and jobs that ended (or wait
 * for confirmation) more than their retention_days ago (default_days for
 * a job made before retention_days was stored), as if the clock were
 * offset_seconds ahead (test_clock_offset_seconds). A job not ended
 * (an upload never confirmed, a batch still running at its expires_at) is
 * cancelled first, with the usual refund. Returns how many jobs, or -1. */
long long retention_expire(struct db *, long default_days,
	    long offset_seconds, long limit);

/* svcadm account erase: cancels the account's running jobs (with the
 * usual refund, *refunded), erases every job's data (one receipt each),
 * then the account's suppression list, stored Idempotency-Key answers
 * and remaining events (one more receipt). *total sums what was erased,
 * *jobs the jobs erased. The account row, its keys, webhooks and its
 * ledger stay. 0, 1 when there is no such account, -1 on error. */
int	 retention_erase_account(struct db *, const char *account,
	    const char *operator_name, struct retention_counts *total,
	    long long *jobs, long long *refunded);

/* One receipt as read back. */
struct retention_audit_row {
	long long	 id;
	const char	*account_id, *job_id, *actor, *actor_id, *reason;
	const char	*created_at;	/* ISO 8601 UTC */
	struct retention_counts counts;
};
typedef int (*retention_audit_fn)(void *, const struct retention_audit_row *);
/* The receipts of an account (NULL: every account), newest first, at most
 * limit after skipping offset; *total (may be NULL) counts them all.
 * 0, or -1. */
int	 retention_audit_list(struct db *, const char *account, long offset,
	    long limit, long long *total, retention_audit_fn, void *);
#endif
