/* uploads.h: jobs made from a file or a source_url (the spec's upload
 * state table): created "ingesting" with nothing charged; ingested by
 * svc-worker (ingest.h) into "awaiting_confirmation" with a free preview,
 * or "pending" charged once, or "failed"; confirmed (charged exactly once)
 * or cancelled while awaiting. */
#ifndef SVC_UPLOADS_H
#define SVC_UPLOADS_H
#include "core/db.h"
#include "jobs/ingest_columns.h"
#include "jobs/jobs.h"
#include "util/ids.h"

#define UPLOADS_UNIQUE_MAX 500000	/* too_many_emails beyond */
#define UPLOADS_NAME_MAX JOBS_NAME_MAX
#define UPLOADS_COLUMN_MAX 255		/* an email_column name's bytes */

/* The format of a stored file (ingest_read.h's names), or "" for a
 * source_url not fetched yet. */
struct uploads_new {
	const char	*id;		/* made by the caller (ids_new "job") */
	const char	*account_id;
	const char	*pool_id;
	const char	*name;
	const char	*file_name;	/* NULL for a source_url */
	const char	*format;	/* "csv", "tsv", "txt", "xlsx" or NULL */
	long long	 size;
	const char	*source_url;	/* NULL for a file */
	enum ingest_rule rule;
	const char	*email_column;	/* the name or index, NULL for AUTO */
	int		 preview;
	const char	*callback_url;	/* NULL: none */
	const char	*callback_secret;
	struct retention_ask retention;
	/* The account's caps (caps.h), checked under its lock before the
	 * row is written: jobs not yet ended, and bytes of stored files
	 * not yet ingested with this one's size (a source_url, whose size
	 * is not known yet, only when the account is at the cap already). */
	long long	 jobs_in_flight_max;
	long long	 storage_max;
};

enum uploads_err {
	UPLOADS_OK,
	UPLOADS_NOT_FOUND,
	UPLOADS_WRONG_STATUS,	/* 409: the job is not in the status asked */
	UPLOADS_NO_PREVIEW,	/* 409 preview_unavailable */
	UPLOADS_INSUFFICIENT,	/* 402 */
	UPLOADS_REFRESH_LIMIT,	/* 409 rate_limit_exceeded */
	UPLOADS_TOO_MANY_JOBS,	/* 409 too_many_jobs */
	UPLOADS_STORAGE_FULL,	/* 409 upload_storage_exceeded */
	UPLOADS_DB,
	UPLOADS_ERR__MAX
};

/* Writes the job row ("ingesting") in one transaction with then, when
 * not NULL (then(db, then_arg), after the row): what must be written with
 * the job or not at all (svc-api: its Idempotency-Key answer; an error
 * from it rolls the job back, UPLOADS_DB). UPLOADS_TOO_MANY_JOBS or
 * UPLOADS_STORAGE_FULL (nothing written; *used: the jobs in flight or the
 * bytes stored) at a cap. */
enum uploads_err uploads_create(struct db *, const struct uploads_new *,
	    long long *used, enum db_err (*then)(struct db *, void *),
	    void *then_arg);

/* POST .../confirm: charges the job's total once (ledger ref
 * job:<id>:charge) and queues it. *status is the job's status when it is
 * not awaiting confirmation (UPLOADS_WRONG_STATUS); on
 * UPLOADS_INSUFFICIENT *required and *available say why. then, when not
 * NULL, runs in the confirmation's transaction once the job is charged and
 * queued (then(db, what the caller is given, then_arg)): what must be
 * written with it or not at all (svc-api: its Idempotency-Key answer). An
 * error from it rolls the confirmation back (UPLOADS_DB). */
struct uploads_confirmed {
	enum jobs_status status;
	long long	 charged, balance, required;
};
typedef enum db_err (*uploads_confirm_then_fn)(struct db *,
	    const struct uploads_confirmed *, void *);
enum uploads_err uploads_confirm(struct db *, const char *account,
	    const char *id, struct uploads_confirmed *,
	    uploads_confirm_then_fn then, void *then_arg);

/* POST .../preview: the job's status and its preview (JSON text, NULL
 * while none is computed; free it). With refresh, an awaiting job's
 * preview is computed again by a worker. refreshing is set (with the time
 * of the last request, ISO 8601) from the request until the worker stored
 * a preview computed after it, whoever asks meanwhile. */
struct uploads_preview {
	enum jobs_status status;
	char		*preview;
	int		 refreshing;
	char		 refresh_requested_at[24];
};
enum uploads_err uploads_preview_get(struct db *, const char *account,
	    const char *id, int refresh, struct uploads_preview *);

/* Before a ?refresh=true: counts one more recomputation of the job's
 * preview if it awaits confirmation and had fewer than limit (column
 * preview_refreshes). UPLOADS_REFRESH_LIMIT when it had limit already
 * (*used says how many); UPLOADS_OK otherwise, also for a job that is not
 * there or not awaiting confirmation (uploads_preview_get answers it). */
enum uploads_err uploads_preview_refresh_count(struct db *,
	    const char *account, const char *id, long limit,
	    long long *used);
#endif
