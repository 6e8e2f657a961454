/* jobend.c: a job's end (jobend.h). Completion runs inside the transaction
 * that finishes the job's last chunk (jobqueue.c), failure in one of its
 * own; both read the job's row under its lock, refund at most what was
 * charged and not yet refunded (ledger ref job:<id>:refund, so at most
 * once), and write one event of their kind to the outbox (a second is
 * refused by its unique key and is not an error). */
#include "jobs/jobend.h"
#include "core/ledger.h"
#include "jobs/jobs.h"
#include "jobs/upload_store.h"
#include "util/ids.h"
#include "util/log.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inserts the event once per job and kind (a duplicate is not an error). */
static enum db_err
jobend_event(struct db *db, const char *account, const char *job_id,
    const char *event, json_t *data)
{
	char id[IDS_MAX], ts[TIMEUTIL_ISO_LEN];
	json_t *env;
	char *text;
	enum db_err e;

	if (ids_new("evt", id) == -1) {
		json_decref(data);
		return DB_ERR_QUERY;
	}
	timeutil_iso8601(time(NULL), ts);
	env = json_pack("{s:s, s:s, s:s, s:o}", "event_id", id, "event", event,
	    "timestamp", ts, "data", data);
	if (env == NULL || (text = json_dumps(env, JSON_COMPACT)) == NULL) {
		json_decref(env);
		return DB_ERR_QUERY;
	}
	json_decref(env);
	e = db_exec(db, "INSERT INTO event_outbox (id, account_id, job_id, "
	    "event, payload, created_at) VALUES (?, ?, ?, ?, ?, "
	    "UTC_TIMESTAMP(3))", DB_ARGS(DBP_STR(id), DBP_STR(account),
	    DBP_STR(job_id), DBP_STR(event), DBP_STR(text)), NULL);
	free(text);
	if (e == DB_ERR_DUPLICATE) {
		log_info("event=job_event_exists job=%s kind=%s", job_id, event);
		return DB_OK;
	}
	if (e == DB_OK)
		log_info("event=job_event job=%s kind=%s id=%s", job_id, event,
		    id);
	return e;
}

/* The job row's facts that completion and failure need. */
struct jobend_job {
	char		 account[JOBQUEUE_ID_MAX + 1];
	char		 pool[JOBQUEUE_ID_MAX + 1];
	enum jobs_type	 type;
	enum jobs_status status;
	char		*name;
	char		*callback_data;
	char		 created_at[TIMEUTIL_ISO_LEN];
	long long	 total, processed, counts[VERDICT_CLASS__MAX];
	long long	 charged, refunded, charged_done, charged_unknown;
};

static void
jobend_job_free(struct jobend_job *j)
{
	free(j->name);
	free(j->callback_data);
	j->name = j->callback_data = NULL;
}

/* Reads the job's row and locks it (FOR UPDATE); DB_ABORT when there is
 * no such job. */
static enum db_err
jobend_job_read(struct db *db, const char *job_id, struct jobend_job *j)
{
	struct db_res *res = NULL;
	enum db_err e;
	int k, row;

	memset(j, 0, sizeof(*j));
	e = db_query(db, "SELECT account_id, pool_id, type, name, "
	    "total_emails, processed_emails, count_valid, count_invalid, "
	    "count_risky, count_catch_all, count_disposable, count_unknown, "
	    "credits_charged, credits_refunded, callback_data, "
	    "DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%sZ'), charged_done, "
	    "charged_unknown, status FROM jobs WHERE id = ? FOR UPDATE",
	    DB_ARGS(DBP_STR(job_id)), &res);
	if (e != DB_OK)
		return e;
	if ((row = db_res_next(res)) != 1) {
		db_res_free(res);
		return row == 0 ? DB_ABORT : DB_ERR_QUERY;
	}
	strparse_copy(j->account, sizeof(j->account), db_res_str(res, 0));
	strparse_copy(j->pool, sizeof(j->pool), db_res_str(res, 1));
	j->type = jobs_type_of(db_res_str(res, 2));
	j->name = strdup(db_res_str(res, 3) ? db_res_str(res, 3) : "");
	j->total = db_res_int(res, 4);
	j->processed = db_res_int(res, 5);
	for (k = 0; k < VERDICT_CLASS__MAX; k++)
		j->counts[k] = db_res_int(res, 6 + (unsigned)k);
	j->charged = db_res_int(res, 12);
	j->refunded = db_res_int(res, 13);
	if (!db_res_isnull(res, 14))
		j->callback_data = strdup(db_res_str(res, 14));
	strparse_copy(j->created_at, sizeof(j->created_at),
	    db_res_str(res, 15));
	j->charged_done = db_res_int(res, 16);
	j->charged_unknown = db_res_int(res, 17);
	j->status = jobs_status_of(db_res_str(res, 18));
	db_res_free(res);
	if (j->name == NULL) {
		jobend_job_free(j);
		return DB_ERR_QUERY;
	}
	return DB_OK;
}

/* Gives amount credits back to the job's pool, once per job. */
static enum db_err
jobend_refund(struct db *db, const char *job_id, const struct jobend_job *j,
    long long amount)
{
	char ref[JOBQUEUE_ID_MAX + 16];

	if (amount <= 0)
		return DB_OK;
	snprintf(ref, sizeof(ref), "job:%s:refund", job_id);
	switch (ledger_refund(db, j->pool, j->account, amount, ref)) {
	case LEDGER_OK:
		log_info("event=job_refund job=%s pool=%s credits=%lld",
		    job_id, j->pool, amount);
		return DB_OK;
	case LEDGER_ALREADY:
		log_info("event=job_refund_exists job=%s ref=%s", job_id, ref);
		return DB_OK;
	case LEDGER_RETRY:
		return DB_ERR_RETRY;
	default:
		log_error("event=job_refund_failed job=%s error=\"%s\"", job_id,
		    db_error(db));
		return DB_ERR_QUERY;
	}
}

static json_t *
jobend_counts_json(const struct jobend_job *j)
{
	json_t *o = json_object();
	int k;

	for (k = 0; k < VERDICT_CLASS__MAX; k++)
		json_object_set_new(o, verdict_class_names[k],
		    json_integer(j->counts[k]));
	return o;
}

/* The data of a job.completed event (API.md: batch jobs add their own
 * fields and callback_data). */
static json_t *
jobend_completed_data(const char *job_id, const struct jobend_job *j,
    long long refund)
{
	char path[JOBQUEUE_ID_MAX + 32], now[TIMEUTIL_ISO_LEN];
	json_t *data, *cb;

	snprintf(path, sizeof(path), "/v1/jobs/%s/download", job_id);
	data = json_pack("{s:s, s:s, s:s, s:s, s:I, s:o, s:I, s:I, s:s}",
	    "job_id", job_id, "type", jobs_type_names[j->type],
	    "name", j->name, "status", jobs_status_names[JOBS_COMPLETED],
	    "total_emails", (json_int_t)j->total,
	    "counts", jobend_counts_json(j),
	    "credits_charged", (json_int_t)j->charged,
	    "credits_refunded", (json_int_t)(j->refunded + refund),
	    "download_url", path);
	if (data == NULL || j->type != JOBS_TYPE_BATCH)
		return data;
	cb = j->callback_data ? json_loads(j->callback_data, 0, NULL) : NULL;
	timeutil_iso8601(time(NULL), now);
	json_object_set_new(data, "callback_data", cb ? cb : json_null());
	json_object_set_new(data, "id", json_string(job_id));
	json_object_set_new(data, "processed_emails",
	    json_integer(j->processed));
	json_object_set_new(data, "valid_count",
	    json_integer(j->counts[VERDICT_C_VALID]));
	json_object_set_new(data, "invalid_count",
	    json_integer(j->counts[VERDICT_C_INVALID]));
	json_object_set_new(data, "risky_count",
	    json_integer(j->counts[VERDICT_C_RISKY]));
	json_object_set_new(data, "created_at", json_string(j->created_at));
	json_object_set_new(data, "completed_at", json_string(now));
	return data;
}

/* A failed batch's job.failed carries its callback_data and id too, so
 * that its webhook_url can tell which batch it was. */
static void
jobend_batch_failed(json_t *data, const char *job_id,
    const struct jobend_job *j)
{
	json_t *cb;

	cb = j->callback_data ? json_loads(j->callback_data, 0, NULL) : NULL;
	json_object_set_new(data, "callback_data", cb ? cb : json_null());
	json_object_set_new(data, "id", json_string(job_id));
	json_object_set_new(data, "status",
	    json_string(jobs_status_names[JOBS_FAILED]));
}

enum db_err
jobend_complete(struct db *db, const char *job_id)
{
	struct jobend_job j;
	long long refund = 0;
	json_t *data;
	enum db_err e;

	if ((e = jobend_job_read(db, job_id, &j)) != DB_OK)
		return e == DB_ABORT ? DB_ERR_QUERY : e;
	/* Bulk and upload jobs give back their charged "unknown" results
	 * (a catch-all verdict is an answer; free rows were never charged);
	 * batch jobs nothing (API.md). */
	if (j.type != JOBS_TYPE_BATCH) {
		refund = j.charged_unknown;
		if (refund > j.charged - j.refunded)
			refund = j.charged - j.refunded;
		if (refund < 0)
			refund = 0;
	}
	if ((e = jobend_refund(db, job_id, &j, refund)) != DB_OK ||
	    (e = db_exec(db, "UPDATE jobs SET status = ?, completed_at = "
	    "UTC_TIMESTAMP(3), credits_refunded = credits_refunded + ? "
	    "WHERE id = ?", DB_ARGS(DBP_STR(jobs_status_names[JOBS_COMPLETED]),
	    DBP_INT(refund), DBP_STR(job_id)), NULL)) != DB_OK)
		goto out;
	data = jobend_completed_data(job_id, &j, refund);
	e = data ? jobend_event(db, j.account, job_id, "job.completed", data) :
	    DB_ERR_QUERY;
	if (e == DB_OK)
		log_info("event=job_completed job=%s type=%s total=%lld "
		    "processed=%lld valid=%lld invalid=%lld risky=%lld "
		    "catch_all=%lld disposable=%lld unknown=%lld refunded=%lld",
		    job_id, jobs_type_names[j.type], j.total, j.processed,
		    j.counts[VERDICT_C_VALID], j.counts[VERDICT_C_INVALID],
		    j.counts[VERDICT_C_RISKY], j.counts[VERDICT_C_CATCH_ALL],
		    j.counts[VERDICT_C_DISPOSABLE], j.counts[VERDICT_C_UNKNOWN],
		    refund);
out:
	jobend_job_free(&j);
	return e;
}

/* ---------------------------------------------------------------- failure */

struct jobend_failing {
	const char		*job_id, *code, *message;
	enum jobqueue_err	 rc;
	long long		 refund;
};

static enum db_err
jobend_fail_work(struct db *db, void *arg)
{
	struct jobend_failing *f = arg;
	struct jobend_job j;
	json_t *data;
	enum db_err e;

	f->rc = JOBQUEUE_OK;
	if ((e = jobend_job_read(db, f->job_id, &j)) != DB_OK ||
	    (!jobs_status_active(j.status) && j.status != JOBS_INGESTING)) {
		if (e == DB_OK)
			jobend_job_free(&j);
		if (e == DB_OK || e == DB_ABORT) {
			f->rc = JOBQUEUE_GONE;
			return DB_ABORT;
		}
		return e;
	}
	/* Like a cancellation: what was charged and not processed. */
	f->refund = jobs_unprocessed_refund(j.charged, j.charged_done,
	    j.refunded);
	if ((e = jobend_refund(db, f->job_id, &j, f->refund)) == DB_OK)
		e = db_exec(db, "UPDATE jobs SET status = ?, error_code = ?, "
		    "error_message = ?, credits_refunded = credits_refunded + "
		    "? WHERE id = ?",
		    DB_ARGS(DBP_STR(jobs_status_names[JOBS_FAILED]),
		    DBP_STR(f->code), DBP_STR(f->message), DBP_INT(f->refund),
		    DBP_STR(f->job_id)), NULL);
	if (e == DB_OK)
		e = jobs_chunks_done(db, f->job_id);
	/* a failed upload's stored file is of no more use */
	if (e == DB_OK)
		e = upload_store_delete(db, f->job_id);
	if (e == DB_OK) {
		data = json_pack("{s:s, s:s, s:s, s:{s:s, s:s}}", "job_id",
		    f->job_id, "type", jobs_type_names[j.type], "name", j.name,
		    "error", "code", f->code, "message", f->message);
		if (data != NULL && j.type == JOBS_TYPE_BATCH)
			jobend_batch_failed(data, f->job_id, &j);
		e = data ? jobend_event(db, j.account, f->job_id, "job.failed",
		    data) : DB_ERR_QUERY;
	}
	jobend_job_free(&j);
	return e;
}

enum jobqueue_err
jobend_fail(struct db *db, const char *job_id, const char *code,
    const char *message)
{
	struct jobend_failing f = { job_id, code, message, JOBQUEUE_OK, 0 };

	switch (db_tx_retry(db, jobend_fail_work, &f)) {
	case DB_OK:
		log_warn("event=job_failed job=%s code=%s refunded=%lld",
		    job_id, code, f.refund);
		return JOBQUEUE_OK;
	case DB_ABORT:
		return f.rc;
	default:
		log_error("event=jobqueue_db_error error=\"%s\"", db_error(db));
		return JOBQUEUE_DB;
	}
}
