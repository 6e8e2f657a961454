/* retention.c: erasing a job's data (expiry, the API, the operator) and
 * the receipts in erase_audit (retention.h). Rows go in batches so that no
 * statement holds many locks; an erasure cut short leaves data_erased_at
 * NULL, and the next pass (or request) finishes it. */
#include "jobs/retention.h"
#include "jobs/jobs.h"
#include "util/ids.h"
#include "util/log.h"
#include "util/strparse.h"
#include <stdlib.h>
#include <string.h>

/* Rows deleted by one statement at most. */
#define RETENTION_BATCH 5000
/* Jobs an account erasure reads at a time. */
#define RETENTION_PAGE 100

const char *const retention_actor_names[RETENTION_BY__MAX] = {
	"housekeeping", "api_key", "operator"
};
const char *const retention_reason_names[RETENTION_REASON__MAX] = {
	"expired", "requested", "account_erase"
};
const char *const retention_kind_names[RETENTION_KIND__MAX] = {
	"results", "chunks", "upload_pieces", "events", "job_fields",
	"suppressions", "stored_answers"
};

/* Runs "DELETE ... WHERE <column> = ? LIMIT ?" until it deletes fewer than
 * a batch; adds the rows to *count. 0 or -1. */
static int
retention_delete(struct db *db, const char *sql, const char *id,
    long long *count)
{
	unsigned long long changed;

	do {
		changed = 0;
		if (db_exec(db, sql, DB_ARGS(DBP_STR(id),
		    DBP_INT(RETENTION_BATCH)), &changed) != DB_OK)
			return -1;
		*count += (long long)changed;
	} while (changed == RETENTION_BATCH);
	return 0;
}

/* One statement without LIMIT (a delete through a subquery); adds the
 * rows to *count. */
static int
retention_delete_once(struct db *db, const char *sql, const char *id,
    long long *count)
{
	unsigned long long changed = 0;

	if (db_exec(db, sql, DB_ARGS(DBP_STR(id)), &changed) != DB_OK)
		return -1;
	*count += (long long)changed;
	return 0;
}

static int
retention_receipt(struct db *db, const char *account, const char *job,
    const struct retention_who *who, const struct retention_counts *c)
{
	return db_exec(db, "INSERT INTO erase_audit (account_id, job_id, "
	    "actor, actor_id, reason, results, chunks, upload_pieces, events, "
	    "job_fields, suppressions, stored_answers, created_at) VALUES "
	    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(account), DBP_STR(job),
	    DBP_STR(retention_actor_names[who->actor]), DBP_STR(who->actor_id),
	    DBP_STR(retention_reason_names[who->reason]),
	    DBP_INT(c->n[RETENTION_RESULTS]), DBP_INT(c->n[RETENTION_CHUNKS]),
	    DBP_INT(c->n[RETENTION_UPLOAD_PIECES]),
	    DBP_INT(c->n[RETENTION_EVENTS]),
	    DBP_INT(c->n[RETENTION_JOB_FIELDS]),
	    DBP_INT(c->n[RETENTION_SUPPRESSIONS]),
	    DBP_INT(c->n[RETENTION_STORED_ANSWERS])), NULL) == DB_OK ? 0 : -1;
}

static void
retention_add(struct retention_counts *total, const struct retention_counts *c)
{
	int k;

	for (k = 0; total != NULL && k < RETENTION_KIND__MAX; k++)
		total->n[k] += c->n[k];
}

int
retention_erase_job(struct db *db, const char *job_id,
    const struct retention_who *who, struct retention_counts *out)
{
	struct retention_counts c;
	struct db_res *r = NULL;
	char account[IDS_MAX];
	enum jobs_status st;
	unsigned long long changed = 0;
	int found;

	memset(&c, 0, sizeof(c));
	/* The job row's own data: everything but ids, counts and times. */
	if (db_query(db, "SELECT account_id, status, (name <> '') + "
	    "(webhook_url IS NOT NULL) + (webhook_secret IS NOT NULL) + "
	    "(callback_data IS NOT NULL) + (callback_url IS NOT NULL) + "
	    "(callback_secret IS NOT NULL) + (error_message IS NOT NULL) + "
	    "(source_url IS NOT NULL) + (file_name IS NOT NULL) + "
	    "(email_column IS NOT NULL) + (preview IS NOT NULL) + "
	    "(original_header IS NOT NULL) FROM jobs WHERE id = ? AND "
	    "data_erased_at IS NULL", DB_ARGS(DBP_STR(job_id)), &r) != DB_OK)
		return -1;
	found = db_res_next(r) == 1;
	if (found) {
		strparse_copy(account, sizeof(account), db_res_str(r, 0));
		st = jobs_status_of(db_res_str(r, 1));
		c.n[RETENTION_JOB_FIELDS] = db_res_int(r, 2);
	}
	db_res_free(r);
	if (!found)
		return 0;
	if (st == JOBS_INGESTING || st == JOBS_PENDING ||
	    st == JOBS_PROCESSING) {
		log_error("event=erase_refused job=%s status=%s", job_id,
		    jobs_status_names[st]);
		return -1;
	}
	if (retention_delete(db, "DELETE FROM job_emails WHERE job_id = ? "
	    "LIMIT ?", job_id, &c.n[RETENTION_RESULTS]) == -1 ||
	    retention_delete(db, "DELETE FROM job_chunks WHERE job_id = ? "
	    "LIMIT ?", job_id, &c.n[RETENTION_CHUNKS]) == -1 ||
	    retention_delete(db, "DELETE FROM upload_chunks WHERE job_id = ? "
	    "LIMIT ?", job_id, &c.n[RETENTION_UPLOAD_PIECES]) == -1 ||
	    retention_delete_once(db, "DELETE FROM event_attempts WHERE "
	    "delivery_id IN (SELECT id FROM event_deliveries WHERE "
	    "job_id = ?)", job_id, &c.n[RETENTION_EVENTS]) == -1 ||
	    retention_delete(db, "DELETE FROM event_deliveries WHERE "
	    "job_id = ? LIMIT ?", job_id, &c.n[RETENTION_EVENTS]) == -1 ||
	    retention_delete(db, "DELETE FROM event_outbox WHERE job_id = ? "
	    "LIMIT ?", job_id, &c.n[RETENTION_EVENTS]) == -1)
		return -1;
	/* Last, with the receipt: an erasure cut short is done again. */
	if (db_begin(db) != DB_OK)
		return -1;
	if (db_exec(db, "UPDATE jobs SET name = '', webhook_url = NULL, "
	    "webhook_secret = NULL, callback_data = NULL, callback_url = NULL, "
	    "callback_secret = NULL, error_message = NULL, source_url = NULL, "
	    "file_name = NULL, email_column = NULL, preview = NULL, "
	    "original_header = NULL, data_erased_at = UTC_TIMESTAMP(3) "
	    "WHERE id = ? AND data_erased_at IS NULL",
	    DB_ARGS(DBP_STR(job_id)), &changed) != DB_OK ||
	    (changed == 1 && retention_receipt(db, account, job_id, who,
	    &c) == -1) || db_commit(db) != DB_OK) {
		db_rollback(db);
		return -1;
	}
	if (changed == 1) {
		log_info("event=job_data_erased job=%s account=%s actor=%s "
		    "reason=%s results=%lld chunks=%lld upload_pieces=%lld "
		    "events=%lld job_fields=%lld", job_id, account,
		    retention_actor_names[who->actor],
		    retention_reason_names[who->reason],
		    c.n[RETENTION_RESULTS], c.n[RETENTION_CHUNKS],
		    c.n[RETENTION_UPLOAD_PIECES], c.n[RETENTION_EVENTS],
		    c.n[RETENTION_JOB_FIELDS]);
		retention_add(out, &c);
	}
	return 0;
}

long long
retention_expire(struct db *db, long default_days, long offset_seconds,
    long limit)
{
	static const struct retention_who who = { RETENTION_BY_HOUSEKEEPING,
	    NULL, RETENTION_EXPIRED };
	struct db_res *res = NULL;
	struct {
		char	 id[IDS_MAX], account[IDS_MAX];
		int	 ended;
	} *jobs;
	size_t n = 0, i;
	long long erased = 0, refunded;
	enum jobs_err rc;

	if (limit <= 0)
		return 0;
	if ((jobs = calloc((size_t)limit, sizeof(*jobs))) == NULL)
		return -1;
	/* Batch jobs at their expires_at (30 days from creation, the spec);
	 * every job retention_days after it ended (an upload left waiting
	 * for confirmation: after it was made). */
	if (db_query(db, "SELECT id, account_id, status IN (?, ?, ?) FROM "
	    "jobs WHERE "
	    "data_erased_at IS NULL AND ((type = ? AND expires_at IS NOT NULL "
	    "AND expires_at < UTC_TIMESTAMP(3) + INTERVAL ? SECOND) OR "
	    "(status IN (?, ?, ?, ?) AND COALESCE(completed_at, created_at) + "
	    "INTERVAL COALESCE(retention_days, ?) DAY < UTC_TIMESTAMP(3) + "
	    "INTERVAL ? SECOND)) LIMIT ?",
	    DB_ARGS(DBP_STR(jobs_status_names[JOBS_COMPLETED]),
	    DBP_STR(jobs_status_names[JOBS_FAILED]),
	    DBP_STR(jobs_status_names[JOBS_CANCELLED]),
	    DBP_STR(jobs_type_names[JOBS_TYPE_BATCH]), DBP_INT(offset_seconds),
	    DBP_STR(jobs_status_names[JOBS_COMPLETED]),
	    DBP_STR(jobs_status_names[JOBS_FAILED]),
	    DBP_STR(jobs_status_names[JOBS_CANCELLED]),
	    DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION]),
	    DBP_INT(default_days), DBP_INT(offset_seconds), DBP_INT(limit)),
	    &res) != DB_OK) {
		free(jobs);
		return -1;
	}
	while (n < (size_t)limit && db_res_next(res) == 1) {
		strparse_copy(jobs[n].id, IDS_MAX, db_res_str(res, 0));
		strparse_copy(jobs[n].account, IDS_MAX, db_res_str(res, 1));
		jobs[n++].ended = db_res_int(res, 2) != 0;
	}
	db_res_free(res);
	for (i = 0; i < n; i++) {
		/* An upload never confirmed (nothing was charged), so that it
		 * cannot be confirmed once its file is gone, or a batch past
		 * its 30 days still running (refunded as any cancel): ended
		 * first. */
		rc = JOBS_OK;
		if (!jobs[i].ended)
			rc = jobs_cancel(db, jobs[i].account, jobs[i].id,
			    &refunded);
		if (rc != JOBS_OK && rc != JOBS_NOT_CANCELLABLE)
			break;
		if (retention_erase_job(db, jobs[i].id, &who, NULL) == -1)
			break;
		erased++;
	}
	free(jobs);
	return i < n ? -1 : erased;
}

/* Every job of the account still running or waiting: cancelled, with the
 * refund cancelling gives. */
static int
retention_cancel_all(struct db *db, const char *account, long long *refunded)
{
	struct db_res *res = NULL;
	char (*ids)[IDS_MAX];
	size_t n = 0, i;
	long long r;
	enum jobs_err rc;

	if ((ids = calloc(RETENTION_PAGE, sizeof(*ids))) == NULL)
		return -1;
	do {
		if (db_query(db, "SELECT id FROM jobs WHERE account_id = ? AND "
		    "status IN (?, ?, ?, ?) LIMIT ?", DB_ARGS(DBP_STR(account),
		    DBP_STR(jobs_status_names[JOBS_INGESTING]),
		    DBP_STR(jobs_status_names[JOBS_AWAITING_CONFIRMATION]),
		    DBP_STR(jobs_status_names[JOBS_PENDING]),
		    DBP_STR(jobs_status_names[JOBS_PROCESSING]),
		    DBP_INT(RETENTION_PAGE)), &res) != DB_OK)
			goto fail;
		for (n = 0; n < RETENTION_PAGE && db_res_next(res) == 1; n++)
			strparse_copy(ids[n], IDS_MAX, db_res_str(res, 0));
		db_res_free(res);
		for (i = 0; i < n; i++) {
			r = 0;
			rc = jobs_cancel(db, account, ids[i], &r);
			if (rc != JOBS_OK && rc != JOBS_NOT_CANCELLABLE)
				goto fail;
			*refunded += r;
		}
	} while (n == RETENTION_PAGE);
	free(ids);
	return 0;
fail:
	free(ids);
	return -1;
}

int
retention_erase_account(struct db *db, const char *account,
    const char *operator_name, struct retention_counts *total,
    long long *jobs, long long *refunded)
{
	const struct retention_who who = { RETENTION_BY_OPERATOR,
	    operator_name, RETENTION_ACCOUNT_ERASE };
	struct retention_counts c;
	struct db_res *res = NULL;
	char (*ids)[IDS_MAX] = NULL;
	size_t n, i;
	long long one;
	int found;

	memset(total, 0, sizeof(*total));
	*jobs = *refunded = 0;
	if (db_query_int(db, "SELECT 1 FROM accounts WHERE id = ?",
	    DB_ARGS(DBP_STR(account)), &one, &found) != DB_OK)
		return -1;
	if (!found)
		return 1;
	if (retention_cancel_all(db, account, refunded) == -1 ||
	    (ids = calloc(RETENTION_PAGE, sizeof(*ids))) == NULL)
		goto fail;
	do {
		if (db_query(db, "SELECT id FROM jobs WHERE account_id = ? AND "
		    "data_erased_at IS NULL LIMIT ?", DB_ARGS(DBP_STR(account),
		    DBP_INT(RETENTION_PAGE)), &res) != DB_OK)
			goto fail;
		for (n = 0; n < RETENTION_PAGE && db_res_next(res) == 1; n++)
			strparse_copy(ids[n], IDS_MAX, db_res_str(res, 0));
		db_res_free(res);
		for (i = 0; i < n; i++) {
			if (retention_erase_job(db, ids[i], &who, total) == -1)
				goto fail;
			(*jobs)++;
		}
	} while (n == RETENTION_PAGE);
	/* What the account holds outside its jobs. */
	memset(&c, 0, sizeof(c));
	if (retention_delete(db, "DELETE FROM suppressions WHERE "
	    "account_id = ? LIMIT ?", account,
	    &c.n[RETENTION_SUPPRESSIONS]) == -1 ||
	    retention_delete(db, "DELETE FROM idempotency_keys WHERE "
	    "account_id = ? LIMIT ?", account,
	    &c.n[RETENTION_STORED_ANSWERS]) == -1 ||
	    retention_delete_once(db, "DELETE FROM event_attempts WHERE "
	    "delivery_id IN (SELECT id FROM event_deliveries WHERE "
	    "account_id = ?)", account, &c.n[RETENTION_EVENTS]) == -1 ||
	    retention_delete(db, "DELETE FROM event_deliveries WHERE "
	    "account_id = ? LIMIT ?", account, &c.n[RETENTION_EVENTS]) == -1 ||
	    retention_delete(db, "DELETE FROM event_outbox WHERE "
	    "account_id = ? LIMIT ?", account, &c.n[RETENTION_EVENTS]) == -1 ||
	    retention_delete(db, "DELETE FROM single_results WHERE "
	    "account_id = ? LIMIT ?", account, &c.n[RETENTION_RESULTS]) == -1 ||
	    /* delivery outcomes and complainers: keyed hashes of addresses
	     * (counted with the results and the suppression list) */
	    retention_delete(db, "DELETE FROM feedback_outcomes WHERE "
	    "account_id = ? LIMIT ?", account, &c.n[RETENTION_RESULTS]) == -1 ||
	    retention_delete(db, "DELETE FROM account_complainers WHERE "
	    "account_id = ? LIMIT ?", account,
	    &c.n[RETENTION_SUPPRESSIONS]) == -1 ||
	    retention_receipt(db, account, NULL, &who, &c) == -1)
		goto fail;
	retention_add(total, &c);
	log_info("event=account_erased account=%s jobs=%lld refunded=%lld "
	    "suppressions=%lld stored_answers=%lld", account, *jobs,
	    *refunded, c.n[RETENTION_SUPPRESSIONS],
	    c.n[RETENTION_STORED_ANSWERS]);
	free(ids);
	return 0;
fail:
	free(ids);
	return -1;
}

int
retention_audit_list(struct db *db, const char *account, long offset,
    long limit, long long *total, retention_audit_fn fn, void *arg)
{
	struct retention_audit_row row;
	struct db_res *res = NULL;
	int k, found, rc = 0;

	if (total != NULL && db_query_int(db, "SELECT COUNT(*) FROM "
	    "erase_audit WHERE ? IS NULL OR account_id = ?",
	    DB_ARGS(DBP_STR(account), DBP_STR(account)), total, &found) !=
	    DB_OK)
		return -1;
	if (db_query(db, "SELECT id, account_id, job_id, actor, actor_id, "
	    "reason, DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%sZ'), results, "
	    "chunks, upload_pieces, events, job_fields, suppressions, "
	    "stored_answers FROM erase_audit WHERE ? IS NULL OR "
	    "account_id = ? ORDER BY id DESC LIMIT ? OFFSET ?",
	    DB_ARGS(DBP_STR(account), DBP_STR(account), DBP_INT(limit),
	    DBP_INT(offset)), &res) != DB_OK)
		return -1;
	while (rc == 0 && db_res_next(res) == 1) {
		row.id = db_res_int(res, 0);
		row.account_id = db_res_str(res, 1);
		row.job_id = db_res_str(res, 2);
		row.actor = db_res_str(res, 3);
		row.actor_id = db_res_str(res, 4);
		row.reason = db_res_str(res, 5);
		row.created_at = db_res_str(res, 6);
		for (k = 0; k < RETENTION_KIND__MAX; k++)
			row.counts.n[k] = db_res_int(res, 7 + (unsigned)k);
		rc = fn(arg, &row);
	}
	db_res_free(res);
	return rc;
}
