/* jobqueue.c: chunk leases, result writes, chunk completion and job
 * completion or failure in MariaDB (see jobqueue.h). Every transaction that
 * changes a job's rows or counters locks the job row first (SELECT ... FOR
 * UPDATE), like cancellation does, so "processed" and the refunds stay exact;
 * results are written only over rows that are not done yet, so a chunk taken
 * over after a crash never counts twice. A deadlock retries the whole
 * transaction a few times. */
#include "jobs/jobqueue.h"
#include "core/dbsql.h"
#include "jobs/jobs.h"
#include "core/ledger.h"
#include "util/buf.h"
#include "util/grow.h"
#include "util/ids.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/strparse.h"
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define JOBQUEUE_TRIES 5
#define JOBQUEUE_PURGE_BATCH 10000

const char *const jobqueue_err_names[JOBQUEUE_ERR__MAX] = {
	"ok", "gone", "lost", "db"
};

/* A transaction step's outcome: done (with rc), or retry the transaction. */
enum jobqueue_tx {
	JOBQUEUE_TX_DONE,
	JOBQUEUE_TX_RETRY,
	JOBQUEUE_TX__MAX
};

/* DB_ERR_RETRY asks for the transaction again; anything else fails it. */
static enum jobqueue_tx
jobqueue_dberr(struct db *db, enum db_err e, enum jobqueue_err *rc)
{
	db_rollback(db);
	if (e == DB_ERR_RETRY)
		return JOBQUEUE_TX_RETRY;
	log_error("event=jobqueue_db_error error=\"%s\"", db_error(db));
	*rc = JOBQUEUE_DB;
	return JOBQUEUE_TX_DONE;
}

static int
jobqueue_active(const char *status)
{
	return status != NULL && (strcmp(status, "pending") == 0 ||
	    strcmp(status, "processing") == 0);
}

/* Locks the job row; *active: pending or processing; *found: it exists. */
static enum db_err
jobqueue_lock_job(struct db *db, const char *job_id, int *active, int *found)
{
	struct db_res *res = NULL;
	enum db_err e;

	*active = *found = 0;
	e = db_query(db, "SELECT status FROM jobs WHERE id = ? FOR UPDATE",
	    DB_ARGS(DBP_STR(job_id)), &res);
	if (e != DB_OK)
		return e;
	if (db_res_next(res) == 1) {
		*found = 1;
		*active = jobqueue_active(db_res_str(res, 0));
	}
	db_res_free(res);
	return DB_OK;
}

static enum db_err
jobqueue_chunk_done(struct db *db, const struct jobqueue_chunk *c)
{
	return db_exec(db, "UPDATE job_chunks SET state = 'done', "
	    "lease_owner = NULL, lease_expires = NULL, not_before = NULL "
	    "WHERE job_id = ? AND chunk = ? AND state <> 'done'",
	    DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk)), NULL);
}

/* ---------------------------------------------------------------- leases */

static enum jobqueue_tx
jobqueue_claim_tx(struct db *db, const char *owner, long lease,
    struct jobqueue_chunk *out, size_t max, size_t *n, enum jobqueue_err *rc)
{
	struct db_res *res = NULL;
	enum db_err e;
	size_t i;

	*n = 0;
	if ((e = db_begin(db)) != DB_OK)
		return jobqueue_dberr(db, e, rc);
	/* The subquery is a plain (non-locking) read: claiming never waits
	 * for a job row that a result write holds. */
	e = db_query(db, "SELECT job_id, chunk, attempts FROM job_chunks "
	    "WHERE ((state = 'pending' AND (not_before IS NULL OR "
	    "not_before <= UTC_TIMESTAMP(3))) OR (state = 'leased' AND "
	    "lease_expires < UTC_TIMESTAMP(3))) AND job_id IN (SELECT id "
	    "FROM jobs WHERE status IN ('pending', 'processing')) "
	    "ORDER BY job_id, chunk LIMIT ? FOR UPDATE SKIP LOCKED",
	    DB_ARGS(DBP_INT((long long)max)), &res);
	if (e != DB_OK)
		return jobqueue_dberr(db, e, rc);
	while (*n < max && db_res_next(res) == 1) {
		strparse_copy(out[*n].job_id, sizeof(out[*n].job_id),
		    db_res_str(res, 0));
		out[*n].chunk = (int)db_res_int(res, 1);
		out[*n].attempts = (int)db_res_int(res, 2) + 1;
		(*n)++;
	}
	db_res_free(res);
	for (i = 0; i < *n; i++) {
		e = db_exec(db, "UPDATE job_chunks SET state = 'leased', "
		    "lease_owner = ?, lease_expires = UTC_TIMESTAMP(3) + "
		    "INTERVAL ? SECOND, attempts = attempts + 1 "
		    "WHERE job_id = ? AND chunk = ?", DB_ARGS(DBP_STR(owner),
		    DBP_INT(lease), DBP_STR(out[i].job_id),
		    DBP_INT(out[i].chunk)), NULL);
		if (e != DB_OK)
			return jobqueue_dberr(db, e, rc);
	}
	if ((e = db_commit(db)) != DB_OK)
		return jobqueue_dberr(db, e, rc);
	return JOBQUEUE_TX_DONE;
}

enum jobqueue_err
jobqueue_claim(struct db *db, const char *owner, long lease_seconds,
    struct jobqueue_chunk *out, size_t max, size_t *n)
{
	enum jobqueue_err rc = JOBQUEUE_OK;
	unsigned long long changed;
	size_t i, j;
	int tries;

	*n = 0;
	if (max == 0)
		return JOBQUEUE_OK;
	for (tries = 0; tries < JOBQUEUE_TRIES; tries++)
		if (jobqueue_claim_tx(db, owner, lease_seconds, out, max, n,
		    &rc) == JOBQUEUE_TX_DONE)
			break;
	if (tries == JOBQUEUE_TRIES)
		rc = JOBQUEUE_DB;
	if (rc != JOBQUEUE_OK) {
		*n = 0;
		return rc;
	}
	/* First claim of a job: pending -> processing, in its own statement
	 * (not under the chunk locks: no lock-order inversion with writes). */
	for (i = 0; i < *n; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(out[j].job_id, out[i].job_id) == 0)
				break;
		if (j < i)
			continue;
		changed = 0;
		if (db_exec(db, "UPDATE jobs SET status = 'processing', "
		    "started_at = UTC_TIMESTAMP(3) WHERE id = ? AND "
		    "status = 'pending'", DB_ARGS(DBP_STR(out[i].job_id)),
		    &changed) != DB_OK)
			log_warn("event=job_start_failed job=%s error=\"%s\"",
			    out[i].job_id, db_error(db));
		else if (changed)
			log_info("event=job_started job=%s", out[i].job_id);
	}
	return JOBQUEUE_OK;
}

enum jobqueue_err
jobqueue_renew(struct db *db, const struct jobqueue_chunk *c,
    const char *owner, long lease_seconds)
{
	unsigned long long changed = 0;

	if (db_exec(db, "UPDATE job_chunks SET lease_expires = "
	    "UTC_TIMESTAMP(3) + INTERVAL ? SECOND WHERE job_id = ? AND "
	    "chunk = ? AND state = 'leased' AND lease_owner = ?",
	    DB_ARGS(DBP_INT(lease_seconds), DBP_STR(c->job_id),
	    DBP_INT(c->chunk), DBP_STR(owner)), &changed) != DB_OK)
		return JOBQUEUE_DB;
	return changed ? JOBQUEUE_OK : JOBQUEUE_LOST;
}

enum jobqueue_err
jobqueue_release(struct db *db, const struct jobqueue_chunk *c,
    const char *owner)
{
	unsigned long long changed = 0;

	if (db_exec(db, "UPDATE job_chunks SET state = 'pending', "
	    "lease_owner = NULL, lease_expires = NULL WHERE job_id = ? AND "
	    "chunk = ? AND state = 'leased' AND lease_owner = ?",
	    DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk), DBP_STR(owner)),
	    &changed) != DB_OK)
		return JOBQUEUE_DB;
	return changed ? JOBQUEUE_OK : JOBQUEUE_LOST;
}

/* ---------------------------------------------------------------- rows */

void
jobqueue_rows_free(struct jobqueue_row *rows, size_t n)
{
	size_t i;

	if (rows == NULL)
		return;
	for (i = 0; i < n; i++) {
		free(rows[i].email);
		free(rows[i].domain);
	}
	free(rows);
}

static int
jobqueue_row_cmp(const void *a, const void *b)
{
	const struct jobqueue_row *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

enum jobqueue_err
jobqueue_rows(struct db *db, const struct jobqueue_chunk *c,
    struct jobqueue_row **rows, size_t *n, size_t *total)
{
	struct db_res *res = NULL;
	struct jobqueue_row *v = NULL;
	size_t cap = 0;
	long long count = 0;
	int found = 0;

	*rows = NULL;
	*n = 0;
	*total = 0;
	if (db_query_int(db, "SELECT COUNT(*) FROM job_emails WHERE "
	    "job_id = ? AND chunk = ?", DB_ARGS(DBP_STR(c->job_id),
	    DBP_INT(c->chunk)), &count, &found) != DB_OK)
		return JOBQUEUE_DB;
	*total = (size_t)count;
	/* No ORDER BY: with one, MariaDB walks the job's primary key (job_id,
	 * seq) through every row of the job instead of the chunk index (5 ms
	 * a chunk of a 20,000-address job, measured); sorted below. */
	if (db_query(db, "SELECT seq, attempts, email, domain FROM job_emails "
	    "WHERE job_id = ? AND chunk = ? AND (state = 'pending' OR "
	    "(state = 'retry' AND retry_at <= UTC_TIMESTAMP(3)))",
	    DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk)), &res) != DB_OK)
		return JOBQUEUE_DB;
	while (db_res_next(res) == 1) {
		if (grow(&v, *n, &cap, sizeof(*v), 64) == -1)
			goto nomem;
		v[*n].seq = (int)db_res_int(res, 0);
		v[*n].attempts = (int)db_res_int(res, 1);
		v[*n].email = strdup(db_res_str(res, 2) ? db_res_str(res, 2) :
		    "");
		v[*n].domain = strdup(db_res_str(res, 3) ? db_res_str(res, 3) :
		    "");
		(*n)++;
		if (v[*n - 1].email == NULL || v[*n - 1].domain == NULL)
			goto nomem;
	}
	db_res_free(res);
	if (*n > 1)
		qsort(v, *n, sizeof(*v), jobqueue_row_cmp);
	*rows = v;
	return JOBQUEUE_OK;
nomem:
	db_res_free(res);
	jobqueue_rows_free(v, *n);
	*n = 0;
	log_error("event=jobqueue_rows_failed job=%s chunk=%d "
	    "error=\"out of memory\"", c->job_id, c->chunk);
	return JOBQUEUE_DB;
}

/* ---------------------------------------------------------------- results */

void
jobqueue_result_set(struct jobqueue_result *o, int seq,
    const struct verify_result *r)
{
	memset(o, 0, sizeof(*o));
	o->seq = seq;
	o->classification = r->v.classification;
	o->status = r->v.status;
	o->reason = r->v.reason;
	o->sub = r->v.sub;
	o->catch_all = r->catch_all;
	o->score = r->score < 0 ? 0 : r->score > 100 ? 100 : r->score;
	o->free_provider = r->free_provider != 0;
	o->role = r->role != 0;
	o->disposable = r->disposable != 0;
	o->accept_all = r->accept_all != 0;
	o->verified_at = r->verified_at ? r->verified_at : time(NULL);
}

/* Results per multi-row UPDATE at most (a power of two, see dbsql.h). */
#define JOBQUEUE_WRITE_GROUP 64
#define JOBQUEUE_WRITE_COLS 12

static int
jobqueue_int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

static int
jobqueue_result_cmp(const void *a, const void *b)
{
	const struct jobqueue_result *x = *(const struct jobqueue_result *
	    const *)a, *y = *(const struct jobqueue_result *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The chunk's rows that matter to a write, as sorted seqs: those done
 * already (left alone) and those that were not charged (free sandbox rows,
 * never refunded). */
struct jobqueue_seqs {
	int	*done, *free;
	size_t	 ndone, nfree;
};

static void
jobqueue_seqs_free(struct jobqueue_seqs *q)
{
	free(q->done);
	free(q->free);
	memset(q, 0, sizeof(*q));
}

static enum db_err
jobqueue_seqs_read(struct db *db, const struct jobqueue_chunk *c,
    struct jobqueue_seqs *q)
{
	struct db_res *res = NULL;
	enum db_err e;
	size_t cap;
	int row = 0;

	memset(q, 0, sizeof(*q));
	e = db_query(db, "SELECT seq, state = 'done', charged FROM job_emails "
	    "WHERE job_id = ? AND chunk = ? AND (state = 'done' OR "
	    "charged = 0)", DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk)),
	    &res);
	if (e != DB_OK)
		return e;
	cap = (size_t)db_res_rows(res);
	if ((q->done = calloc(cap + 1, sizeof(*q->done))) == NULL ||
	    (q->free = calloc(cap + 1, sizeof(*q->free))) == NULL) {
		db_res_free(res);
		jobqueue_seqs_free(q);
		return DB_ERR_QUERY;
	}
	while (q->ndone + q->nfree < cap && (row = db_res_next(res)) == 1) {
		if (db_res_int(res, 1))
			q->done[q->ndone++] = (int)db_res_int(res, 0);
		if (!db_res_int(res, 2))
			q->free[q->nfree++] = (int)db_res_int(res, 0);
	}
	db_res_free(res);
	if (row == -1) {
		jobqueue_seqs_free(q);
		return DB_ERR_QUERY;
	}
	qsort(q->done, q->ndone, sizeof(*q->done), jobqueue_int_cmp);
	qsort(q->free, q->nfree, sizeof(*q->free), jobqueue_int_cmp);
	return DB_OK;
}

/* Is seq in the sorted v[0..n)? *at walks forward: calls come with
 * increasing seqs. */
static int
jobqueue_seq_in(const int *v, size_t n, size_t *at, int seq)
{
	while (*at < n && v[*at] < seq)
		(*at)++;
	return *at < n && v[*at] == seq;
}

/* One UPDATE over a derived table of results: rows not done yet become
 * done with their result. */
static enum db_err
jobqueue_write_group(struct db *db, struct buf *sql, struct db_param *p,
    const char *job_id, const struct jobqueue_result *const *v, size_t n,
    unsigned long long *changed)
{
	const struct jobqueue_result *r;
	struct db_param *q;
	size_t i;

	dbsql_repeat(sql, "UPDATE job_emails e JOIN (",
	    "SELECT ? AS seq, ? AS classification, ? AS status, ? AS reason, "
	    "? AS sub_status, ? AS score, ? AS free, ? AS role, "
	    "? AS disposable, ? AS accept_all, ? AS catch_all_verdict, "
	    "? AS verified_at", " UNION ALL ", n, ") v ON e.seq = v.seq "
	    "SET e.state = 'done', e.retry_at = NULL, e.classification = "
	    "v.classification, e.status = v.status, e.reason = v.reason, "
	    "e.sub_status = v.sub_status, e.score = v.score, e.free = v.free, "
	    "e.role = v.role, e.disposable = v.disposable, e.accept_all = "
	    "v.accept_all, e.catch_all_verdict = v.catch_all_verdict, "
	    "e.verified_at = FROM_UNIXTIME(v.verified_at) "
	    "WHERE e.job_id = ? AND e.state <> 'done'");
	for (i = 0; i < n; i++) {
		r = v[i];
		q = p + i * JOBQUEUE_WRITE_COLS;
		q[0] = DBP_INT(r->seq);
		q[1] = DBP_STR(verdict_class_names[r->classification]);
		q[2] = DBP_STR(verdict_status_names[r->status]);
		q[3] = DBP_STR(verdict_reason_names[r->reason]);
		q[4] = DBP_STR(verdict_sub_names[r->sub]);
		q[5] = DBP_INT(r->score);
		q[6] = DBP_INT(r->free_provider);
		q[7] = DBP_INT(r->role);
		q[8] = DBP_INT(r->disposable);
		q[9] = DBP_INT(r->accept_all);
		q[10] = DBP_STR(verdict_catch_all_names[r->catch_all]);
		q[11] = DBP_INT((long long)r->verified_at);
	}
	p[n * JOBQUEUE_WRITE_COLS] = DBP_STR(job_id);
	return db_exec(db, buf_str(sql), p, n * JOBQUEUE_WRITE_COLS + 1,
	    changed);
}

/* What a write adds to the job's counters. */
struct jobqueue_tally {
	long long	 counts[VERDICT_CLASS__MAX];
	long long	 charged_done;		/* charged rows that became done */
	long long	 charged_unknown;	/* ... with an unknown result */
};

/* Writes the results (retry ones one by one, as they are rare; the rest
 * in groups) and tallies what became done. The caller holds the job row
 * lock, which every writer of the job's rows takes first: the rows found
 * done before the update are exactly the ones it leaves alone, so the
 * counts are exact. */
static enum db_err
jobqueue_write_rows(struct db *db, const struct jobqueue_chunk *c,
    const struct jobqueue_result *v, size_t n, long retry_seconds,
    struct jobqueue_tally *t, size_t *done)
{
	const struct jobqueue_result **todo = NULL;
	struct jobqueue_seqs q;
	struct db_param *p = NULL;
	unsigned long long changed, total = 0;
	struct buf sql;
	enum db_err e = DB_OK;
	size_t ntodo = 0, i, j = 0, f = 0, g;

	buf_init(&sql, BUF_NOMAX);
	if ((e = jobqueue_seqs_read(db, c, &q)) != DB_OK)
		goto out;
	if ((todo = calloc(n + 1, sizeof(*todo))) == NULL ||
	    (p = calloc(JOBQUEUE_WRITE_GROUP * JOBQUEUE_WRITE_COLS + 1,
	    sizeof(*p))) == NULL) {
		e = DB_ERR_QUERY;
		goto out;
	}
	for (i = 0; e == DB_OK && i < n; i++) {
		if (!v[i].retry) {
			todo[ntodo++] = &v[i];
			continue;
		}
		e = db_exec(db, "UPDATE job_emails SET state = 'retry', "
		    "retry_at = UTC_TIMESTAMP(3) + INTERVAL ? SECOND, "
		    "attempts = LEAST(attempts + 1, 127) "
		    "WHERE job_id = ? AND seq = ? AND state <> 'done'",
		    DB_ARGS(DBP_INT(retry_seconds), DBP_STR(c->job_id),
		    DBP_INT(v[i].seq)), NULL);
	}
	/* Sorted by seq: a seq given twice is written once, and the rows
	 * done already are skipped in one merge with their seqs. */
	qsort(todo, ntodo, sizeof(*todo), jobqueue_result_cmp);
	for (i = 0, g = 0; i < ntodo; i++) {
		if (g > 0 && todo[g - 1]->seq == todo[i]->seq)
			continue;
		if (jobqueue_seq_in(q.done, q.ndone, &j, todo[i]->seq))
			continue;
		todo[g++] = todo[i];
		t->counts[todo[i]->classification]++;
		if (jobqueue_seq_in(q.free, q.nfree, &f, todo[i]->seq))
			continue;
		t->charged_done++;
		if (todo[i]->classification == VERDICT_C_UNKNOWN)
			t->charged_unknown++;
	}
	ntodo = g;
	for (i = 0; e == DB_OK && i < ntodo; i += g) {
		g = dbsql_group(ntodo - i, JOBQUEUE_WRITE_GROUP);
		changed = 0;
		e = jobqueue_write_group(db, &sql, p, c->job_id, todo + i, g,
		    &changed);
		total += changed;
	}
	if (e == DB_OK && total != ntodo) {
		/* Cannot happen under the job lock; do not count wrongly. */
		log_error("event=results_count_mismatch job=%s chunk=%d "
		    "expected=%zu changed=%llu", c->job_id, c->chunk, ntodo,
		    total);
		e = DB_ERR_RETRY;
	}
	*done = ntodo;
out:
	buf_free(&sql);
	jobqueue_seqs_free(&q);
	free(todo);
	free(p);
	return e;
}

/* Starts a transaction on a chunk with its job row locked: 1 to go on.
 * 0 when there is nothing more to do in it, with *t what the transaction
 * function returns: the job is no longer pending or processing (its chunk
 * is marked done, *rc = JOBQUEUE_GONE), or a database error. */
static int
jobqueue_begin_chunk(struct db *db, const struct jobqueue_chunk *c,
    enum jobqueue_tx *t, enum jobqueue_err *rc)
{
	enum db_err e;
	int active, found;

	if ((e = db_begin(db)) != DB_OK ||
	    (e = jobqueue_lock_job(db, c->job_id, &active, &found)) != DB_OK) {
		*t = jobqueue_dberr(db, e, rc);
		return 0;
	}
	if (active)
		return 1;
	if ((found && (e = jobqueue_chunk_done(db, c)) != DB_OK) ||
	    (e = db_commit(db)) != DB_OK) {
		*t = jobqueue_dberr(db, e, rc);
		return 0;
	}
	*rc = JOBQUEUE_GONE;
	*t = JOBQUEUE_TX_DONE;
	return 0;
}

static enum jobqueue_tx
jobqueue_write_tx(struct db *db, const struct jobqueue_chunk *c,
    const struct jobqueue_result *v, size_t n, long retry_seconds,
    size_t *done, enum jobqueue_err *rc)
{
	struct jobqueue_tally tally;
	enum jobqueue_tx t;
	enum db_err e;

	*done = 0;
	memset(&tally, 0, sizeof(tally));
	if (!jobqueue_begin_chunk(db, c, &t, rc))
		return t;
	if (n > 0 && (e = jobqueue_write_rows(db, c, v, n, retry_seconds,
	    &tally, done)) != DB_OK) {
		*done = 0;
		return jobqueue_dberr(db, e, rc);
	}
	if (*done > 0 && (e = db_exec(db, "UPDATE jobs SET processed_emails = "
	    "processed_emails + ?, count_valid = count_valid + ?, "
	    "count_invalid = count_invalid + ?, count_risky = count_risky + ?, "
	    "count_catch_all = count_catch_all + ?, count_disposable = "
	    "count_disposable + ?, count_unknown = count_unknown + ?, "
	    "charged_done = charged_done + ?, charged_unknown = "
	    "charged_unknown + ? WHERE id = ?",
	    DB_ARGS(DBP_INT((long long)*done),
	    DBP_INT(tally.counts[VERDICT_C_VALID]),
	    DBP_INT(tally.counts[VERDICT_C_INVALID]),
	    DBP_INT(tally.counts[VERDICT_C_RISKY]),
	    DBP_INT(tally.counts[VERDICT_C_CATCH_ALL]),
	    DBP_INT(tally.counts[VERDICT_C_DISPOSABLE]),
	    DBP_INT(tally.counts[VERDICT_C_UNKNOWN]),
	    DBP_INT(tally.charged_done), DBP_INT(tally.charged_unknown),
	    DBP_STR(c->job_id)), NULL)) != DB_OK)
		return jobqueue_dberr(db, e, rc);
	if ((e = db_commit(db)) != DB_OK)
		return jobqueue_dberr(db, e, rc);
	return JOBQUEUE_TX_DONE;
}

enum jobqueue_err
jobqueue_write(struct db *db, const struct jobqueue_chunk *c,
    const struct jobqueue_result *v, size_t n, long retry_seconds,
    size_t *done)
{
	enum jobqueue_err rc = JOBQUEUE_OK;
	int tries;

	for (tries = 0; tries < JOBQUEUE_TRIES; tries++)
		if (jobqueue_write_tx(db, c, v, n, retry_seconds, done, &rc) ==
		    JOBQUEUE_TX_DONE)
			return rc;
	*done = 0;
	return JOBQUEUE_DB;
}

/* ---------------------------------------------------------------- events */

static void
jobqueue_iso(char out[TIMEUTIL_ISO_LEN])
{
	timeutil_iso8601(time(NULL), out);
}

/* Inserts the event once per job and kind (a duplicate is not an error). */
static enum db_err
jobqueue_event(struct db *db, const char *account, const char *job_id,
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
	jobqueue_iso(ts);
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
struct jobqueue_job {
	char		 account[JOBQUEUE_ID_MAX + 1];
	char		 pool[JOBQUEUE_ID_MAX + 1];
	char		 type[16];
	char		*name;
	char		*callback_data;
	char		 created_at[TIMEUTIL_ISO_LEN];
	long long	 total, processed, counts[VERDICT_CLASS__MAX];
	long long	 charged, refunded, charged_done, charged_unknown;
};

static void
jobqueue_job_free(struct jobqueue_job *j)
{
	free(j->name);
	free(j->callback_data);
	j->name = j->callback_data = NULL;
}

static enum db_err
jobqueue_job_read(struct db *db, const char *job_id, struct jobqueue_job *j)
{
	struct db_res *res = NULL;
	enum db_err e;
	int k;

	memset(j, 0, sizeof(*j));
	e = db_query(db, "SELECT account_id, pool_id, type, name, "
	    "total_emails, processed_emails, count_valid, count_invalid, "
	    "count_risky, count_catch_all, count_disposable, count_unknown, "
	    "credits_charged, credits_refunded, callback_data, "
	    "DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%sZ'), charged_done, "
	    "charged_unknown FROM jobs WHERE id = ?",
	    DB_ARGS(DBP_STR(job_id)), &res);
	if (e != DB_OK)
		return e;
	if (db_res_next(res) != 1) {
		db_res_free(res);
		return DB_ERR_QUERY;
	}
	strparse_copy(j->account, sizeof(j->account), db_res_str(res, 0));
	strparse_copy(j->pool, sizeof(j->pool), db_res_str(res, 1));
	strparse_copy(j->type, sizeof(j->type), db_res_str(res, 2));
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
	db_res_free(res);
	if (j->name == NULL) {
		jobqueue_job_free(j);
		return DB_ERR_QUERY;
	}
	return DB_OK;
}

static enum jobqueue_tx
jobqueue_refund(struct db *db, const char *job_id, const struct jobqueue_job *j,
    long long amount, enum jobqueue_err *rc)
{
	char ref[JOBQUEUE_ID_MAX + 16];
	enum ledger_err le;

	if (amount <= 0)
		return JOBQUEUE_TX_DONE;
	snprintf(ref, sizeof(ref), "job:%s:refund", job_id);
	le = ledger_refund(db, j->pool, j->account, amount, ref);
	switch (le) {
	case LEDGER_OK:
		log_info("event=job_refund job=%s pool=%s credits=%lld",
		    job_id, j->pool, amount);
		return JOBQUEUE_TX_DONE;
	case LEDGER_ALREADY:
		log_info("event=job_refund_exists job=%s ref=%s", job_id, ref);
		return JOBQUEUE_TX_DONE;
	case LEDGER_RETRY:
		db_rollback(db);
		return JOBQUEUE_TX_RETRY;
	default:
		log_error("event=job_refund_failed job=%s error=\"%s\"", job_id,
		    db_error(db));
		db_rollback(db);
		*rc = JOBQUEUE_DB;
		return JOBQUEUE_TX_RETRY;	/* the caller sees rc */
	}
}

static json_t *
jobqueue_counts_json(const struct jobqueue_job *j)
{
	json_t *o = json_object();
	int k;

	for (k = 0; k < VERDICT_CLASS__MAX; k++)
		json_object_set_new(o, verdict_class_names[k],
		    json_integer(j->counts[k]));
	return o;
}

/* Completes the job whose row the caller holds locked (inside its tx). */
static enum jobqueue_tx
jobqueue_complete(struct db *db, const char *job_id, enum jobqueue_err *rc)
{
	struct jobqueue_job j;
	char path[JOBQUEUE_ID_MAX + 32], now[TIMEUTIL_ISO_LEN];
	long long refund = 0;
	json_t *data, *cb;
	enum db_err e;
	enum jobqueue_tx t;

	if ((e = jobqueue_job_read(db, job_id, &j)) != DB_OK)
		return jobqueue_dberr(db, e, rc);
	/* Bulk and upload jobs give back their charged "unknown" results
	 * (a catch-all verdict is an answer; free rows were never charged);
	 * batch jobs nothing (API.md). */
	if (strcmp(j.type, "batch") != 0) {
		refund = j.charged_unknown;
		if (refund > j.charged - j.refunded)
			refund = j.charged - j.refunded;
	}
	if (refund > 0 && ((t = jobqueue_refund(db, job_id, &j, refund, rc)) !=
	    JOBQUEUE_TX_DONE || *rc != JOBQUEUE_OK)) {
		jobqueue_job_free(&j);
		return t;
	}
	if (refund < 0)
		refund = 0;
	if ((e = db_exec(db, "UPDATE jobs SET status = 'completed', "
	    "completed_at = UTC_TIMESTAMP(3), credits_refunded = "
	    "credits_refunded + ? WHERE id = ?", DB_ARGS(DBP_INT(refund),
	    DBP_STR(job_id)), NULL)) != DB_OK) {
		jobqueue_job_free(&j);
		return jobqueue_dberr(db, e, rc);
	}
	snprintf(path, sizeof(path), "/v1/jobs/%s/download", job_id);
	data = json_pack("{s:s, s:s, s:s, s:s, s:I, s:o, s:I, s:I, s:s}",
	    "job_id", job_id, "type", j.type, "name", j.name,
	    "status", "completed", "total_emails", (json_int_t)j.total,
	    "counts", jobqueue_counts_json(&j),
	    "credits_charged", (json_int_t)j.charged,
	    "credits_refunded", (json_int_t)(j.refunded + refund),
	    "download_url", path);
	if (data != NULL && strcmp(j.type, "batch") == 0) {
		cb = j.callback_data ? json_loads(j.callback_data, 0, NULL) :
		    NULL;
		jobqueue_iso(now);
		json_object_set_new(data, "callback_data", cb ? cb :
		    json_null());
		json_object_set_new(data, "id", json_string(job_id));
		json_object_set_new(data, "processed_emails",
		    json_integer(j.processed));
		json_object_set_new(data, "valid_count",
		    json_integer(j.counts[VERDICT_C_VALID]));
		json_object_set_new(data, "invalid_count",
		    json_integer(j.counts[VERDICT_C_INVALID]));
		json_object_set_new(data, "risky_count",
		    json_integer(j.counts[VERDICT_C_RISKY]));
		json_object_set_new(data, "created_at",
		    json_string(j.created_at));
		json_object_set_new(data, "completed_at", json_string(now));
	}
	e = data ? jobqueue_event(db, j.account, job_id, "job.completed",
	    data) : DB_ERR_QUERY;
	if (e != DB_OK) {
		jobqueue_job_free(&j);
		return jobqueue_dberr(db, e, rc);
	}
	log_info("event=job_completed job=%s type=%s total=%lld "
	    "processed=%lld valid=%lld invalid=%lld risky=%lld catch_all=%lld "
	    "disposable=%lld unknown=%lld refunded=%lld", job_id, j.type,
	    j.total, j.processed, j.counts[VERDICT_C_VALID],
	    j.counts[VERDICT_C_INVALID], j.counts[VERDICT_C_RISKY],
	    j.counts[VERDICT_C_CATCH_ALL], j.counts[VERDICT_C_DISPOSABLE],
	    j.counts[VERDICT_C_UNKNOWN], refund);
	jobqueue_job_free(&j);
	return JOBQUEUE_TX_DONE;
}

/* ---------------------------------------------------------------- finish */

static enum jobqueue_tx
jobqueue_finish_tx(struct db *db, const struct jobqueue_chunk *c,
    const char *owner, int *completed, enum jobqueue_err *rc)
{
	long long pending = 0, retry = 0, open = 0;
	unsigned long long changed = 0;
	enum db_err e;
	enum jobqueue_tx t;
	int found;

	*completed = 0;
	if (!jobqueue_begin_chunk(db, c, &t, rc))
		return t;
	if ((e = db_query_int(db, "SELECT COUNT(*) FROM job_emails WHERE "
	    "job_id = ? AND chunk = ? AND state = 'pending'",
	    DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk)), &pending, &found))
	    != DB_OK || (e = db_query_int(db, "SELECT COUNT(*) FROM job_emails "
	    "WHERE job_id = ? AND chunk = ? AND state = 'retry'",
	    DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk)), &retry, &found))
	    != DB_OK)
		return jobqueue_dberr(db, e, rc);
	if (pending == 0 && retry == 0)
		e = db_exec(db, "UPDATE job_chunks SET state = 'done', "
		    "lease_owner = NULL, lease_expires = NULL, not_before = NULL "
		    "WHERE job_id = ? AND chunk = ? AND state = 'leased' AND "
		    "lease_owner = ?", DB_ARGS(DBP_STR(c->job_id),
		    DBP_INT(c->chunk), DBP_STR(owner)), &changed);
	else if (pending > 0)
		e = db_exec(db, "UPDATE job_chunks SET state = 'pending', "
		    "lease_owner = NULL, lease_expires = NULL, not_before = NULL "
		    "WHERE job_id = ? AND chunk = ? AND state = 'leased' AND "
		    "lease_owner = ?", DB_ARGS(DBP_STR(c->job_id),
		    DBP_INT(c->chunk), DBP_STR(owner)), &changed);
	else
		e = db_exec(db, "UPDATE job_chunks SET state = 'pending', "
		    "lease_owner = NULL, lease_expires = NULL, not_before = "
		    "(SELECT MIN(retry_at) FROM job_emails WHERE job_id = ? AND "
		    "chunk = ? AND state = 'retry') WHERE job_id = ? AND "
		    "chunk = ? AND state = 'leased' AND lease_owner = ?",
		    DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk),
		    DBP_STR(c->job_id), DBP_INT(c->chunk), DBP_STR(owner)),
		    &changed);
	if (e != DB_OK)
		return jobqueue_dberr(db, e, rc);
	if (changed == 0) {
		db_rollback(db);
		*rc = JOBQUEUE_LOST;
		return JOBQUEUE_TX_DONE;
	}
	if (pending == 0 && retry == 0) {
		if ((e = db_query_int(db, "SELECT COUNT(*) FROM job_chunks "
		    "WHERE job_id = ? AND state <> 'done'",
		    DB_ARGS(DBP_STR(c->job_id)), &open, &found)) != DB_OK)
			return jobqueue_dberr(db, e, rc);
		if (open == 0) {
			t = jobqueue_complete(db, c->job_id, rc);
			if (t != JOBQUEUE_TX_DONE || *rc != JOBQUEUE_OK)
				return *rc != JOBQUEUE_OK ? JOBQUEUE_TX_DONE : t;
			*completed = 1;
		}
	}
	if ((e = db_commit(db)) != DB_OK) {
		*completed = 0;
		return jobqueue_dberr(db, e, rc);
	}
	log_info("event=chunk_finished job=%s chunk=%d state=%s retry=%lld",
	    c->job_id, c->chunk, pending || retry ? "pending" : "done", retry);
	return JOBQUEUE_TX_DONE;
}

enum jobqueue_err
jobqueue_finish(struct db *db, const struct jobqueue_chunk *c,
    const char *owner, int *completed)
{
	enum jobqueue_err rc = JOBQUEUE_OK;
	int tries;

	for (tries = 0; tries < JOBQUEUE_TRIES; tries++) {
		rc = JOBQUEUE_OK;
		if (jobqueue_finish_tx(db, c, owner, completed, &rc) ==
		    JOBQUEUE_TX_DONE)
			return rc;
	}
	*completed = 0;
	return JOBQUEUE_DB;
}

/* ---------------------------------------------------------------- failure */

static enum jobqueue_tx
jobqueue_fail_tx(struct db *db, const char *job_id, const char *code,
    const char *message, enum jobqueue_err *rc)
{
	struct jobqueue_job j;
	long long refund;
	enum db_err e;
	enum jobqueue_tx t;
	int active, found;
	json_t *data;

	if ((e = db_begin(db)) != DB_OK)
		return jobqueue_dberr(db, e, rc);
	if ((e = jobqueue_lock_job(db, job_id, &active, &found)) != DB_OK)
		return jobqueue_dberr(db, e, rc);
	if (!active) {
		db_rollback(db);
		*rc = JOBQUEUE_GONE;
		return JOBQUEUE_TX_DONE;
	}
	if ((e = jobqueue_job_read(db, job_id, &j)) != DB_OK)
		return jobqueue_dberr(db, e, rc);
	/* Like a cancellation: what was charged and not processed. */
	refund = jobs_unprocessed_refund(j.charged, j.charged_done,
	    j.refunded);
	if (refund > 0 && ((t = jobqueue_refund(db, job_id, &j, refund, rc)) !=
	    JOBQUEUE_TX_DONE || *rc != JOBQUEUE_OK)) {
		jobqueue_job_free(&j);
		return *rc != JOBQUEUE_OK ? JOBQUEUE_TX_DONE : t;
	}
	e = db_exec(db, "UPDATE jobs SET status = 'failed', error_code = ?, "
	    "error_message = ?, credits_refunded = credits_refunded + ? "
	    "WHERE id = ?", DB_ARGS(DBP_STR(code), DBP_STR(message),
	    DBP_INT(refund), DBP_STR(job_id)), NULL);
	if (e == DB_OK)
		e = db_exec(db, "UPDATE job_chunks SET state = 'done', "
		    "lease_owner = NULL, lease_expires = NULL WHERE job_id = ? "
		    "AND state <> 'done'", DB_ARGS(DBP_STR(job_id)), NULL);
	if (e == DB_OK) {
		data = json_pack("{s:s, s:s, s:s, s:{s:s, s:s}}", "job_id",
		    job_id, "type", j.type, "name", j.name, "error", "code",
		    code, "message", message);
		e = data ? jobqueue_event(db, j.account, job_id, "job.failed",
		    data) : DB_ERR_QUERY;
	}
	jobqueue_job_free(&j);
	if (e != DB_OK || (e = db_commit(db)) != DB_OK)
		return jobqueue_dberr(db, e, rc);
	log_warn("event=job_failed job=%s code=%s refunded=%lld", job_id, code,
	    refund);
	return JOBQUEUE_TX_DONE;
}

enum jobqueue_err
jobqueue_fail(struct db *db, const char *job_id, const char *code,
    const char *message)
{
	enum jobqueue_err rc = JOBQUEUE_OK;
	int tries;

	for (tries = 0; tries < JOBQUEUE_TRIES; tries++) {
		rc = JOBQUEUE_OK;
		if (jobqueue_fail_tx(db, job_id, code, message, &rc) ==
		    JOBQUEUE_TX_DONE)
			return rc;
	}
	return JOBQUEUE_DB;
}

/* ---------------------------------------------------------------- purge */

static int
jobqueue_delete_all(struct db *db, const char *sql, const char *job_id)
{
	unsigned long long changed;

	do {
		changed = 0;
		if (db_exec(db, sql, DB_ARGS(DBP_STR(job_id),
		    DBP_INT(JOBQUEUE_PURGE_BATCH)), &changed) != DB_OK)
			return -1;
	} while (changed == JOBQUEUE_PURGE_BATCH);
	return 0;
}

long long
jobqueue_purge_expired(struct db *db, long retention_days, long limit)
{
	struct db_res *res = NULL;
	char (*ids)[JOBQUEUE_ID_MAX + 1] = NULL;
	size_t n = 0, i;
	long long purged = 0;

	if (limit <= 0)
		return 0;
	if ((ids = calloc((size_t)limit, sizeof(*ids))) == NULL)
		return -1;
	/* Batch jobs at their expires_at (30 days from creation, the spec);
	 * bulk and upload jobs retention_days after they ended. */
	if (db_query(db, "(SELECT id FROM jobs WHERE type = 'batch' AND "
	    "expires_at IS NOT NULL AND expires_at < UTC_TIMESTAMP(3) "
	    "LIMIT ?) UNION ALL (SELECT id FROM jobs WHERE type <> 'batch' "
	    "AND status IN ('completed', 'failed', 'cancelled') AND "
	    "COALESCE(completed_at, created_at) < UTC_TIMESTAMP(3) - "
	    "INTERVAL ? DAY LIMIT ?)", DB_ARGS(DBP_INT(limit),
	    DBP_INT(retention_days), DBP_INT(limit)), &res) != DB_OK) {
		free(ids);
		return -1;
	}
	while (n < (size_t)limit && db_res_next(res) == 1)
		strparse_copy(ids[n++], sizeof(ids[0]), db_res_str(res, 0));
	db_res_free(res);
	/* Addresses, then chunks, then the job: an interrupted purge leaves
	 * the job row, so the next pass finishes it. */
	for (i = 0; i < n; i++) {
		if (jobqueue_delete_all(db, "DELETE FROM job_emails WHERE "
		    "job_id = ? LIMIT ?", ids[i]) == -1 ||
		    jobqueue_delete_all(db, "DELETE FROM job_chunks WHERE "
		    "job_id = ? LIMIT ?", ids[i]) == -1 ||
		    db_exec(db, "DELETE FROM jobs WHERE id = ?",
		    DB_ARGS(DBP_STR(ids[i])), NULL) != DB_OK) {
			free(ids);
			return -1;
		}
		log_info("event=job_purged job=%s", ids[i]);
		purged++;
	}
	free(ids);
	return purged;
}
