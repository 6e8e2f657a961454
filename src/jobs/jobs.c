/* jobs.c: job creation, reading, listing and cancellation for the API.
 *
 * Creation writes, in one transaction: the charge (ledger ref
 * job:<id>:charge), the job row, one job_emails row per unique address in
 * input order and the job_chunks rows; the caller adds the Idempotency-Key
 * record before it commits, so that a crash leaves either all of it or
 * none. Addresses are grouped by domain
 * into chunks of at most JOBS_CHUNK_SIZE, so a worker verifies a domain's
 * addresses together (one MX lookup, several RCPTs per session). */
#include "jobs/jobs.h"
#include "core/dbsql.h"
#include "core/ledger.h"
#include "jobs/caps.h"
#include "jobs/suppressions.h"
#include "jobs/upload_store.h"
#include "util/buf.h"
#include "util/strparse.h"
#include <stdlib.h>
#include <string.h>

#define JOBS_INSERT_ROWS 1000

const char *const jobs_type_names[JOBS_TYPE__MAX] = {
	"bulk", "upload", "batch"
};
const char *const jobs_status_names[JOBS_STATUS__MAX] = {
	"ingesting", "awaiting_confirmation", "pending", "processing",
	"completed", "failed", "cancelled"
};
const char *const jobs_count_names[6] = {
	"valid", "invalid", "risky", "catch_all", "disposable", "unknown"
};

/* ---------------------------------------------------------------- create */

struct jobs_order {
	const char	*domain;
	size_t		 seq;
};

static int
jobs_order_cmp(const void *x, const void *y)
{
	const struct jobs_order *a = x, *b = y;
	int c = strcmp(a->domain, b->domain);

	if (c)
		return c;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* chunk[i] for every address: domains in order, chunks filled up to
 * JOBS_CHUNK_SIZE; a domain starts a new chunk when it would not fit
 * whole into the current one. Returns the number of chunks. */
static long
jobs_assign_chunks(const struct jobs_input *in, int *chunk)
{
	struct jobs_order *o;
	size_t i, j, run, fill = 0;
	long c = -1;

	if ((o = calloc(in->n, sizeof(*o))) == NULL)
		return -1;
	for (i = 0; i < in->n; i++) {
		o[i].domain = in->domains[i];
		o[i].seq = i;
	}
	qsort(o, in->n, sizeof(*o), jobs_order_cmp);
	for (i = 0; i < in->n; i = j) {
		for (j = i; j < in->n && strcmp(o[j].domain, o[i].domain) == 0;
		    j++)
			;
		run = j - i;
		if (c < 0 || fill + run > JOBS_CHUNK_SIZE) {
			if (c < 0 || fill > 0) {
				c++;
				fill = 0;
			}
		}
		for (; i < j; i++) {
			if (fill == JOBS_CHUNK_SIZE) {
				c++;
				fill = 0;
			}
			chunk[o[i].seq] = (int)c;
			fill++;
		}
	}
	free(o);
	return c + 1;
}

static enum jobs_err
jobs_from_db(enum db_err e)
{
	return e == DB_OK ? JOBS_OK : JOBS_DB;
}

/* Is row i charged? Not when it is no address (its domain is "": credit
 * rule 2, what jobs_input_cost leaves out) nor at the job's free domain. */
static int
jobs_row_charged(const char *free_domain, const struct jobs_input *in,
    size_t i)
{
	return in->domains[i][0] != '\0' && (free_domain == NULL ||
	    strcmp(in->domains[i], free_domain) != 0);
}

#define JOBS_ROW_PARAMS 8

/* The suppression marks of rows [i, i + rows): looked up by the table's
 * key when the account has a list (never the whole list in memory). */
static enum jobs_err
jobs_suppressed(struct db *db, const char *account, int any,
    const struct jobs_input *in, size_t i, size_t rows, unsigned char *hit)
{
	memset(hit, 0, rows);
	if (!any)
		return JOBS_OK;
	switch (suppressions_lookup(db, account, in->emails + i, rows, hit)) {
	case SUPPRESSIONS_OK:
		return JOBS_OK;
	case SUPPRESSIONS_NOMEM:
		return JOBS_NOMEM;
	default:
		return JOBS_DB;
	}
}

static enum jobs_err
jobs_insert_rows(struct db *db, const char *id, const char *account_id,
    const char *free_domain, const struct jobs_input *in,
    const char *const *originals, const int *chunk, long nchunks)
{
	unsigned char hit[JOBS_INSERT_ROWS];
	struct db_param *p;
	struct buf sql;
	size_t i, k, rows;
	enum jobs_err rc = JOBS_OK;
	enum db_err e = DB_OK;
	int any;

	if (suppressions_any(db, account_id, &any) != SUPPRESSIONS_OK)
		return JOBS_DB;
	if ((p = calloc(JOBS_INSERT_ROWS * JOBS_ROW_PARAMS, sizeof(*p))) ==
	    NULL)
		return JOBS_NOMEM;
	buf_init(&sql, BUF_NOMAX);
	for (i = 0; e == DB_OK && rc == JOBS_OK && i < in->n; i += rows) {
		rows = in->n - i < JOBS_INSERT_ROWS ? in->n - i :
		    JOBS_INSERT_ROWS;
		if ((rc = jobs_suppressed(db, account_id, any, in, i, rows,
		    hit)) != JOBS_OK)
			break;
		for (k = 0; k < rows; k++) {
			struct db_param *q = p + JOBS_ROW_PARAMS * k;

			q[0] = DBP_STR(id);
			q[1] = DBP_INT((long long)(i + k));
			q[2] = DBP_INT(chunk[i + k]);
			q[3] = DBP_STR(in->emails[i + k]);
			q[4] = DBP_STR(in->domains[i + k]);
			q[5] = DBP_INT(jobs_row_charged(free_domain, in, i + k));
			q[6] = DBP_INT(hit[k]);
			q[7] = DBP_STR(originals ? originals[i + k] : NULL);
		}
		dbsql_repeat(&sql, "INSERT INTO job_emails (job_id, seq, "
		    "chunk, email, domain, charged, suppressed, original) "
		    "VALUES ", "(?,?,?,?,?,?,?,?)", ",", rows, "");
		e = db_exec(db, buf_str(&sql), p, rows * JOBS_ROW_PARAMS,
		    NULL);
	}
	for (i = 0; rc == JOBS_OK && e == DB_OK && i < (size_t)nchunks;
	    i += rows) {
		rows = (size_t)nchunks - i < JOBS_INSERT_ROWS ?
		    (size_t)nchunks - i : JOBS_INSERT_ROWS;
		for (k = 0; k < rows; k++) {
			p[2 * k] = DBP_STR(id);
			p[2 * k + 1] = DBP_INT((long long)(i + k));
		}
		dbsql_repeat(&sql, "INSERT INTO job_chunks (job_id, chunk) "
		    "VALUES ", "(?,?)", ",", rows, "");
		e = db_exec(db, buf_str(&sql), p, rows * 2, NULL);
	}
	buf_free(&sql);
	free(p);
	return rc != JOBS_OK ? rc : jobs_from_db(e);
}

enum jobs_err
jobs_write_rows(struct db *db, const char *id, const char *account_id,
    const char *free_domain, const struct jobs_input *in,
    const char *const *originals)
{
	enum jobs_err rc;
	long nchunks = 0;
	int *chunk;

	if ((chunk = calloc(in->n, sizeof(*chunk))) == NULL ||
	    (nchunks = jobs_assign_chunks(in, chunk)) < 0)
		rc = JOBS_NOMEM;
	else
		rc = jobs_insert_rows(db, id, account_id, free_domain, in,
		    originals, chunk, nchunks);
	free(chunk);
	return rc;
}

/* Inside the transaction, before anything is written: the account's caps
 * on jobs in flight and on today's rows that cost nothing (only a job
 * that has such rows is held to the second). */
static enum jobs_err
jobs_caps_check(struct db *db, const struct jobs_new *spec,
    const struct jobs_input *in, long long *used)
{
	long long free_rows = (long long)in->n - spec->cost;

	if (caps_lock(db, spec->account_id) != DB_OK ||
	    caps_jobs_in_flight(db, spec->account_id, used) != DB_OK)
		return JOBS_DB;
	if (*used >= spec->jobs_in_flight_max)
		return JOBS_TOO_MANY_JOBS;
	if (free_rows <= 0)
		return JOBS_OK;
	if (caps_free_rows_today(db, spec->account_id, used) != DB_OK)
		return JOBS_DB;
	if (*used + free_rows > spec->free_rows_per_day)
		return JOBS_FREE_ROWS_LIMIT;
	return JOBS_OK;
}

enum jobs_err
jobs_create(struct db *db, const struct jobs_new *spec,
    const struct jobs_input *in, struct jobs_created *out)
{
	char ref[IDS_MAX + 16];
	enum ledger_err lr;
	enum jobs_err rc;

	memset(out, 0, sizeof(*out));
	if (ids_new("job", out->id) == -1)
		return JOBS_DB;
	if (db_begin(db) != DB_OK)
		return JOBS_DB;
	if ((rc = jobs_caps_check(db, spec, in, &out->used)) != JOBS_OK)
		goto fail;
	snprintf(ref, sizeof(ref), "job:%s:charge", out->id);
	lr = ledger_charge(db, spec->pool_id, spec->account_id, spec->cost,
	    spec->cost ? ref : NULL, &out->balance);
	if (lr == LEDGER_INSUFFICIENT) {
		rc = JOBS_INSUFFICIENT;
		goto fail;
	}
	if (lr != LEDGER_OK) {
		rc = JOBS_DB;
		goto fail;
	}
	rc = jobs_from_db(db_exec(db, "INSERT INTO jobs (id, account_id, "
	    "pool_id, type, name, status, sandbox, total_emails, "
	    "duplicates_removed, credits_charged, credits_needed, webhook_url, "
	    "webhook_secret, callback_data, created_at, expires_at, "
	    "retention_days) VALUES (?, "
	    "?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3), "
	    "IF(? = 'batch', UTC_TIMESTAMP(3) + INTERVAL 30 DAY, NULL), "
	    RETENTION_ASK_SQL ")",
	    DB_ARGS(DBP_STR(out->id), DBP_STR(spec->account_id),
	    DBP_STR(spec->pool_id), DBP_STR(jobs_type_names[spec->type]),
	    DBP_STR(spec->name ? spec->name : ""), DBP_INT(spec->sandbox),
	    DBP_INT((long long)in->n), DBP_INT((long long)in->duplicates),
	    DBP_INT(spec->cost), DBP_INT(spec->cost), DBP_STR(spec->webhook_url),
	    DBP_STR(spec->webhook_secret), DBP_STR(spec->callback_data),
	    DBP_STR(jobs_type_names[spec->type]),
	    RETENTION_ASK_ARGS(&spec->retention, spec->account_id)), NULL));
	if (rc == JOBS_OK)
		rc = jobs_write_rows(db, out->id, spec->account_id,
		    spec->free_domain, in, NULL);
	if (rc == JOBS_OK)
		return JOBS_OK;		/* the caller commits */
fail:
	db_rollback(db);
	return rc;
}

/* ---------------------------------------------------------------- read */

#define JOBS_COLUMNS \
	"id, account_id, pool_id, type, name, status, total_emails, " \
	"duplicates_removed, processed_emails, count_valid, count_invalid, " \
	"count_risky, count_catch_all, count_disposable, count_unknown, " \
	"credits_charged, credits_refunded, " \
	"DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%sZ'), " \
	"DATE_FORMAT(started_at, '%Y-%m-%dT%H:%i:%sZ'), " \
	"DATE_FORMAT(completed_at, '%Y-%m-%dT%H:%i:%sZ'), " \
	"error_code, error_message, webhook_url, callback_data, " \
	"TIMESTAMPDIFF(MICROSECOND, started_at, " \
	"COALESCE(completed_at, UTC_TIMESTAMP(3))) / 1e6, preview, " \
	"ingest_rows, ingest_bytes, file_size, original_header, " \
	"source_url IS NOT NULL AND file_format IS NULL, retention_days, " \
	"DATE_FORMAT(IF(data_erased_at IS NULL, LEAST(COALESCE(expires_at, " \
	"completed_at + INTERVAL retention_days DAY), COALESCE(completed_at " \
	"+ INTERVAL retention_days DAY, expires_at)), NULL), " \
	"'%Y-%m-%dT%H:%i:%sZ'), " \
	"DATE_FORMAT(data_erased_at, '%Y-%m-%dT%H:%i:%sZ')"

static int
jobs_lookup(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; s && i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return 0;
}

static void
jobs_fill(const struct db_res *r, struct jobs_row *j)
{
	int i;

	memset(j, 0, sizeof(*j));
	strparse_copy(j->id, sizeof(j->id), db_res_str(r, 0));
	strparse_copy(j->account_id, sizeof(j->account_id), db_res_str(r, 1));
	strparse_copy(j->pool_id, sizeof(j->pool_id), db_res_str(r, 2));
	j->type = jobs_type_of(db_res_str(r, 3));
	strparse_copy(j->name, sizeof(j->name), db_res_str(r, 4));
	j->status = jobs_status_of(db_res_str(r, 5));
	j->total = db_res_int(r, 6);
	j->duplicates = db_res_int(r, 7);
	j->processed = db_res_int(r, 8);
	for (i = 0; i < 6; i++)
		j->counts[i] = db_res_int(r, 9 + (unsigned)i);
	j->charged = db_res_int(r, 15);
	j->refunded = db_res_int(r, 16);
	strparse_copy(j->created_at, sizeof(j->created_at), db_res_str(r, 17));
	strparse_copy(j->started_at, sizeof(j->started_at), db_res_str(r, 18));
	strparse_copy(j->completed_at, sizeof(j->completed_at), db_res_str(r, 19));
	strparse_copy(j->error_code, sizeof(j->error_code), db_res_str(r, 20));
	strparse_copy(j->error_message, sizeof(j->error_message),
	    db_res_str(r, 21));
	j->webhook_url = db_res_str(r, 22) ? strdup(db_res_str(r, 22)) : NULL;
	j->callback_data = db_res_str(r, 23) ? strdup(db_res_str(r, 23)) :
	    NULL;
	j->seconds_running = db_res_str(r, 24) ? strtod(db_res_str(r, 24),
	    NULL) : 0;
	j->preview = db_res_str(r, 25) ? strdup(db_res_str(r, 25)) : NULL;
	j->ingest_rows = db_res_int(r, 26);
	j->ingest_bytes = db_res_int(r, 27);
	j->file_size = db_res_int(r, 28);
	j->original_header = db_res_str(r, 29) ? strdup(db_res_str(r, 29)) :
	    NULL;
	j->downloading = db_res_int(r, 30) != 0;
	j->retention_days = db_res_int(r, 31);
	strparse_copy(j->data_expires_at, sizeof(j->data_expires_at),
	    db_res_str(r, 32));
	strparse_copy(j->data_erased_at, sizeof(j->data_erased_at),
	    db_res_str(r, 33));
}

void
jobs_row_free(struct jobs_row *j)
{
	free(j->webhook_url);
	free(j->callback_data);
	free(j->preview);
	free(j->original_header);
	j->webhook_url = j->callback_data = j->preview = NULL;
	j->original_header = NULL;
}

enum jobs_err
jobs_get(struct db *db, const char *account, const char *id,
    struct jobs_row *j)
{
	struct db_res *r;
	int row;

	if (db_query(db, "SELECT " JOBS_COLUMNS " FROM jobs WHERE id = ? AND "
	    "(? IS NULL OR account_id = ?)", DB_ARGS(DBP_STR(id),
	    DBP_STR(account), DBP_STR(account)), &r) != DB_OK)
		return JOBS_DB;
	if ((row = db_res_next(r)) == 1)
		jobs_fill(r, j);
	db_res_free(r);
	return row == 1 ? JOBS_OK : row == 0 ? JOBS_NOT_FOUND : JOBS_DB;
}

enum jobs_err
jobs_list(struct db *db, const char *account, const char *status,
    const char *type, long page, long limit, long long *total,
    jobs_each_fn fn, void *arg)
{
	struct jobs_row j;
	struct db_res *r;
	int row, found;

	if (db_query_int(db, "SELECT COUNT(*) FROM jobs WHERE account_id = ? "
	    "AND (? IS NULL OR status = ?) AND (? IS NULL OR type = ?)",
	    DB_ARGS(DBP_STR(account), DBP_STR(status), DBP_STR(status),
	    DBP_STR(type), DBP_STR(type)), total, &found) != DB_OK)
		return JOBS_DB;
	if (db_query(db, "SELECT " JOBS_COLUMNS " FROM jobs WHERE account_id "
	    "= ? AND (? IS NULL OR status = ?) AND (? IS NULL OR type = ?) "
	    "ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
	    DB_ARGS(DBP_STR(account), DBP_STR(status), DBP_STR(status),
	    DBP_STR(type), DBP_STR(type), DBP_INT(limit),
	    DBP_INT((page - 1) * limit)), &r) != DB_OK)
		return JOBS_DB;
	while ((row = db_res_next(r)) == 1) {
		jobs_fill(r, &j);
		found = fn(arg, &j);
		jobs_row_free(&j);
		if (found)
			break;
	}
	db_res_free(r);
	return row == -1 ? JOBS_DB : JOBS_OK;
}

/* ---------------------------------------------------------------- cancel */

long long
jobs_unprocessed_refund(long long charged, long long charged_done,
    long long refunded)
{
	long long n = charged - charged_done;

	if (n > charged - refunded)
		n = charged - refunded;
	return n > 0 ? n : 0;
}

struct jobs_cancelling {
	const char	*account, *id;
	long long	 refunded;
	enum jobs_err	 rc;
	/* runs of the work: db_tx_retry runs it again after a lost
	 * connection, when its COMMIT may have been applied */
	int		 runs;
};

static enum db_err
jobs_cancel_work(struct db *db, void *arg)
{
	struct jobs_cancelling *k = arg;
	char ref[IDS_MAX + 16], pool[IDS_MAX];
	long long charged, charged_done, before;
	enum jobs_status status;
	struct db_res *r;
	enum ledger_err lr;
	enum db_err e;
	int row;

	k->rc = JOBS_OK;
	if ((e = db_query(db, "SELECT status, credits_charged, charged_done, "
	    "credits_refunded, pool_id FROM jobs WHERE id = ? AND "
	    "account_id = ? FOR UPDATE", DB_ARGS(DBP_STR(k->id),
	    DBP_STR(k->account)), &r)) != DB_OK)
		return e;
	if ((row = db_res_next(r)) != 1) {
		db_res_free(r);
		k->rc = JOBS_NOT_FOUND;
		return row == 0 ? DB_ABORT : DB_ERR_QUERY;
	}
	status = jobs_status_of(db_res_str(r, 0));
	charged = db_res_int(r, 1);
	charged_done = db_res_int(r, 2);
	before = db_res_int(r, 3);
	strparse_copy(pool, sizeof(pool), db_res_str(r, 4));
	db_res_free(r);
	/* run again and cancelled: the last run's COMMIT was applied (its
	 * refund, k->refunded, stands) */
	if (status == JOBS_CANCELLED && k->runs > 0)
		return DB_OK;
	k->runs++;
	if (!jobs_status_active(status) &&
	    status != JOBS_AWAITING_CONFIRMATION && status != JOBS_INGESTING) {
		k->rc = JOBS_NOT_CANCELLABLE;
		return DB_ABORT;
	}
	/* The charged addresses not verified yet come back (free sandbox
	 * rows were never charged); an upload still ingesting or awaiting
	 * confirmation was never charged (spec rule 4). */
	k->refunded = jobs_unprocessed_refund(charged, charged_done, before);
	snprintf(ref, sizeof(ref), "job:%s:refund", k->id);
	lr = ledger_refund(db, pool, k->account, k->refunded, ref);
	if (lr == LEDGER_RETRY)
		return DB_ERR_RETRY;
	if (lr != LEDGER_OK && lr != LEDGER_ALREADY)
		return DB_ERR_QUERY;
	if ((e = db_exec(db, "UPDATE jobs SET status = ?, "
	    "credits_refunded = credits_refunded + ?, "
	    "completed_at = UTC_TIMESTAMP(3) WHERE id = ?",
	    DB_ARGS(DBP_STR(jobs_status_names[JOBS_CANCELLED]),
	    DBP_INT(k->refunded), DBP_STR(k->id)), NULL)) != DB_OK)
		return e;
	/* an upload's stored file is of no more use (nothing for a job of
	 * another type) */
	if ((e = upload_store_delete(db, k->id)) != DB_OK)
		return e;
	return jobs_chunks_done(db, k->id);
}

enum jobs_err
jobs_cancel(struct db *db, const char *account, const char *id,
    long long *refunded)
{
	struct jobs_cancelling k = { account, id, 0, JOBS_OK, 0 };

	switch (db_tx_retry(db, jobs_cancel_work, &k)) {
	case DB_OK:
		*refunded = k.refunded;
		return JOBS_OK;
	case DB_ABORT:
		return k.rc;
	default:
		return JOBS_DB;
	}
}

/* ---------------------------------------------------------------- shared */

enum jobs_type
jobs_type_of(const char *s)
{
	return (enum jobs_type)jobs_lookup(jobs_type_names, JOBS_TYPE__MAX, s);
}

enum jobs_status
jobs_status_of(const char *s)
{
	return (enum jobs_status)jobs_lookup(jobs_status_names,
	    JOBS_STATUS__MAX, s);
}

int
jobs_status_active(enum jobs_status s)
{
	return s == JOBS_PENDING || s == JOBS_PROCESSING;
}

enum jobs_err
jobs_lock(struct db *db, const char *account, const char *id,
    enum jobs_status *status)
{
	struct db_res *r;
	int row;

	if (db_query(db, "SELECT status FROM jobs WHERE id = ? AND "
	    "(? IS NULL OR account_id = ?) FOR UPDATE", DB_ARGS(DBP_STR(id),
	    DBP_STR(account), DBP_STR(account)), &r) != DB_OK)
		return JOBS_DB;
	if ((row = db_res_next(r)) == 1)
		*status = jobs_status_of(db_res_str(r, 0));
	db_res_free(r);
	return row == 1 ? JOBS_OK : row == 0 ? JOBS_NOT_FOUND : JOBS_DB;
}

enum db_err
jobs_chunks_done(struct db *db, const char *id)
{
	return db_exec(db, "UPDATE job_chunks SET state = 'done', lease_owner = "
	    "NULL, lease_expires = NULL WHERE job_id = ? AND state <> 'done'",
	    DB_ARGS(DBP_STR(id)), NULL);
}
