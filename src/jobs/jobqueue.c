/* jobqueue.c: chunk leases, result writes and chunk ends in MariaDB (see
 * jobqueue.h); a job's own end is jobend.c. Every transaction that changes
 * a job's rows or counters locks the job row first (jobs_lock), like
 * cancellation does, so "processed" and the refunds stay exact; results
 * are written only over rows that are not done yet, so a chunk taken over
 * after a crash never counts twice. Transactions run through db_tx_retry
 * (a deadlock runs the whole of one again). */
#include "jobs/jobqueue.h"
#include "core/dbsql.h"
#include "jobs/jobend.h"
#include "jobs/jobs.h"
#include "util/buf.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/strparse.h"
#include <stdlib.h>
#include <string.h>

const char *const jobqueue_err_names[JOBQUEUE_ERR__MAX] = {
	"ok", "gone", "lost", "db"
};

/* A transaction's end as the worker sees it. */
static enum jobqueue_err
jobqueue_of(struct db *db, enum db_err e, enum jobqueue_err rc)
{
	switch (e) {
	case DB_OK:
	case DB_ABORT:
		return rc;
	default:
		log_error("event=jobqueue_db_error error=\"%s\"", db_error(db));
		return JOBQUEUE_DB;
	}
}

static enum db_err
jobqueue_chunk_done(struct db *db, const struct jobqueue_chunk *c)
{
	return db_exec(db, "UPDATE job_chunks SET state = 'done', "
	    "lease_owner = NULL, lease_expires = NULL, not_before = NULL "
	    "WHERE job_id = ? AND chunk = ? AND state <> 'done'",
	    DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk)), NULL);
}

/* The first step of a transaction on a chunk: its job's row locked. 1 to
 * go on; 0 when the job is no longer pending or processing (its chunk is
 * marked done, *rc = JOBQUEUE_GONE, and the transaction is to commit: *e
 * DB_OK), or on a database error (*e). */
static int
jobqueue_lock_chunk(struct db *db, const struct jobqueue_chunk *c,
    enum jobqueue_err *rc, enum db_err *e)
{
	enum jobs_status status;

	*rc = JOBQUEUE_OK;
	switch (jobs_lock(db, NULL, c->job_id, &status)) {
	case JOBS_OK:
		if (jobs_status_active(status))
			return 1;
		*e = jobqueue_chunk_done(db, c);
		break;
	case JOBS_NOT_FOUND:
		*e = DB_OK;
		break;
	default:
		*e = DB_ERR_QUERY;
		return 0;
	}
	*rc = JOBQUEUE_GONE;
	return 0;
}

/* ---------------------------------------------------------------- leases */

struct jobqueue_claiming {
	const char		*owner;
	long			 lease;
	struct jobqueue_chunk	*out;
	size_t			 max, n;
	/* out[i]'s job was pending when claimed (its start is written) */
	unsigned char		 job_pending[JOBQUEUE_CLAIM_MAX];
};

/* Leases the claim's chunks [i, i + n) of one job (n at most
 * JOBQUEUE_CLAIM_MAX, a power of two: few statement texts). */
static enum db_err
jobqueue_lease_run(struct db *db, const struct jobqueue_claiming *cl,
    size_t i, size_t n)
{
	struct db_param p[JOBQUEUE_CLAIM_MAX + 3];
	struct buf sql;
	enum db_err e;
	size_t k;

	buf_init(&sql, BUF_NOMAX);
	dbsql_repeat(&sql, "UPDATE job_chunks SET state = 'leased', "
	    "lease_owner = ?, lease_expires = UTC_TIMESTAMP(3) + INTERVAL ? "
	    "SECOND, attempts = attempts + 1 WHERE job_id = ? AND chunk IN (",
	    "?", ",", n, ")");
	p[0] = DBP_STR(cl->owner);
	p[1] = DBP_INT(cl->lease);
	p[2] = DBP_STR(cl->out[i].job_id);
	for (k = 0; k < n; k++)
		p[3 + k] = DBP_INT(cl->out[i + k].chunk);
	e = db_exec(db, buf_str(&sql), p, n + 3, NULL);
	buf_free(&sql);
	return e;
}

static enum db_err
jobqueue_claim_work(struct db *db, void *arg)
{
	struct jobqueue_claiming *cl = arg;
	struct db_res *res = NULL;
	enum db_err e;
	size_t i, j, k, g;

	cl->n = 0;
	/* The subqueries are plain (non-locking) reads: claiming never
	 * waits for a job row that a result write holds. The job's account,
	 * and whether it has a complainer list at all, come with each chunk
	 * in this statement (no other per chunk; most accounts have none,
	 * and their chunks then look no list up). */
	e = db_query(db, "SELECT job_id, chunk, attempts, (SELECT account_id "
	    "FROM jobs WHERE jobs.id = job_chunks.job_id), EXISTS (SELECT 1 "
	    "FROM jobs j JOIN account_complainers c ON c.account_id = "
	    "j.account_id WHERE j.id = job_chunks.job_id), (SELECT status = ? "
	    "FROM jobs WHERE jobs.id = job_chunks.job_id) FROM job_chunks "
	    "WHERE ((state = 'pending' AND (not_before IS NULL OR "
	    "not_before <= UTC_TIMESTAMP(3))) OR (state = 'leased' AND "
	    "lease_expires < UTC_TIMESTAMP(3))) AND job_id IN (SELECT id "
	    "FROM jobs WHERE status IN (?, ?)) "
	    "ORDER BY job_id, chunk LIMIT ? FOR UPDATE SKIP LOCKED",
	    DB_ARGS(DBP_STR(jobs_status_names[JOBS_PENDING]),
	    DBP_STR(jobs_status_names[JOBS_PENDING]),
	    DBP_STR(jobs_status_names[JOBS_PROCESSING]),
	    DBP_INT((long long)cl->max)), &res);
	if (e != DB_OK)
		return e;
	while (cl->n < cl->max && db_res_next(res) == 1) {
		memset(&cl->out[cl->n], 0, sizeof(cl->out[cl->n]));
		strparse_copy(cl->out[cl->n].job_id,
		    sizeof(cl->out[cl->n].job_id), db_res_str(res, 0));
		cl->out[cl->n].chunk = (int)db_res_int(res, 1);
		cl->out[cl->n].attempts = (int)db_res_int(res, 2) + 1;
		strparse_copy(cl->out[cl->n].account,
		    sizeof(cl->out[cl->n].account), db_res_str(res, 3));
		cl->out[cl->n].account_complainers = db_res_int(res, 4) != 0;
		cl->job_pending[cl->n] = db_res_int(res, 5) != 0;
		cl->n++;
	}
	db_res_free(res);
	/* one UPDATE for each job's run of chunks (the rows come sorted by
	 * job): a round trip a claim, mostly, instead of one a chunk */
	for (i = 0; e == DB_OK && i < cl->n; i = j) {
		for (j = i + 1; j < cl->n && strcmp(cl->out[j].job_id,
		    cl->out[i].job_id) == 0; j++)
			;
		for (k = i; e == DB_OK && k < j; k += g) {
			g = dbsql_group(j - k, JOBQUEUE_CLAIM_MAX);
			e = jobqueue_lease_run(db, cl, k, g);
		}
	}
	return e;
}

enum jobqueue_err
jobqueue_claim(struct db *db, const char *owner, long lease_seconds,
    struct jobqueue_chunk *out, size_t max, size_t *n)
{
	struct jobqueue_claiming cl = { owner, lease_seconds, out, max, 0,
	    { 0 } };
	unsigned long long changed;
	size_t i, j;

	*n = 0;
	if (max == 0)
		return JOBQUEUE_OK;
	if (cl.max > JOBQUEUE_CLAIM_MAX)
		cl.max = JOBQUEUE_CLAIM_MAX;
	if (jobqueue_of(db, db_tx_retry(db, jobqueue_claim_work, &cl),
	    JOBQUEUE_OK) != JOBQUEUE_OK)
		return JOBQUEUE_DB;
	*n = cl.n;
	/* First claim of a job: pending -> processing, in its own statement
	 * (not under the chunk locks: no lock-order inversion with writes);
	 * none for a job that was processing already. */
	for (i = 0; i < *n; i++) {
		if (!cl.job_pending[i])
			continue;
		for (j = 0; j < i; j++)
			if (strcmp(out[j].job_id, out[i].job_id) == 0)
				break;
		if (j < i)
			continue;
		changed = 0;
		if (db_exec(db, "UPDATE jobs SET status = ?, "
		    "started_at = UTC_TIMESTAMP(3) WHERE id = ? AND "
		    "status = ?", DB_ARGS(
		    DBP_STR(jobs_status_names[JOBS_PROCESSING]),
		    DBP_STR(out[i].job_id),
		    DBP_STR(jobs_status_names[JOBS_PENDING])), &changed) != DB_OK)
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

enum jobqueue_err
jobqueue_release_owner(struct db *db, const char *owner,
    unsigned long long *n)
{
	*n = 0;
	return db_exec(db, "UPDATE job_chunks SET state = 'pending', "
	    "lease_owner = NULL, lease_expires = NULL WHERE state = 'leased' "
	    "AND lease_owner = ?", DB_ARGS(DBP_STR(owner)), n) == DB_OK ?
	    JOBQUEUE_OK : JOBQUEUE_DB;
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
	*total = *n;
	/* the rows in any state only when none needs work (a chunk without
	 * rows is a broken job): no second round trip for the others */
	if (*n == 0) {
		if (db_query_int(db, "SELECT COUNT(*) FROM job_emails WHERE "
		    "job_id = ? AND chunk = ?", DB_ARGS(DBP_STR(c->job_id),
		    DBP_INT(c->chunk)), &count, &found) != DB_OK)
			return JOBQUEUE_DB;
		*total = (size_t)count;
	}
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
	o->score_basis = r->score_basis;
	o->free_provider = r->free_provider != 0;
	o->role = r->role != 0;
	o->disposable = r->disposable != 0;
	o->accept_all = r->accept_all != 0;
	memcpy(o->provider, r->provider, sizeof(o->provider));
	if (r->nmx > 0)
		memcpy(o->mx_host, r->mx[0].host, sizeof(o->mx_host));
	o->verified_at = r->verified_at ? r->verified_at : time(NULL);
}

/* Results per multi-row statement at most, and the step of its sizes
 * (dbsql_group_steps: a write of 50 results takes 48 + 2, a quarter less of
 * the server's time than 32 + 16 + 2, tests/bench/README). */
#define JOBQUEUE_WRITE_GROUP 64
#define JOBQUEUE_WRITE_STEP 16
#define JOBQUEUE_WRITE_COLS 16

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
	size_t cap, got = 0;
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
	/* (a row both done and free is in both lists: count rows read) */
	while (got++ < cap && (row = db_res_next(res)) == 1) {
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

/* A result row is an existing row of the job, so INSERT ... ON DUPLICATE
 * KEY UPDATE only ever updates (about a fifth less of the server's time
 * than the UPDATE ... JOIN (SELECT ... UNION ALL ...) it replaces:
 * tests/bench/README, bench-farm). Each assignment keeps a row done
 * already as it is; state is assigned last, so the ones before it read
 * the row's old state. Affected rows, without CLIENT_FOUND_ROWS (db.c):
 * 2 for a row that became done, 0 for one left alone, 1 for a row that
 * did not exist and was inserted (chunk -1, no address): the caller
 * expects 2 for every result and rolls anything else back. */
#define JOBQUEUE_KEEP(col) col " = IF(state = 'done', " col ", VALUES(" col \
	")), "
static const char jobqueue_write_head[] =
    "INSERT INTO job_emails (job_id, seq, chunk, email, domain, "
    "classification, status, reason, sub_status, score, free, role, "
    "disposable, accept_all, catch_all_verdict, verified_at, provider, "
    "score_basis, mx_host) VALUES ";
static const char jobqueue_write_item[] =
    "(?, ?, -1, '', '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, FROM_UNIXTIME(?), "
    "?, ?, ?)";
static const char jobqueue_write_tail[] =
    " ON DUPLICATE KEY UPDATE "
    "retry_at = IF(state = 'done', retry_at, NULL), "
    JOBQUEUE_KEEP("classification") JOBQUEUE_KEEP("status")
    JOBQUEUE_KEEP("reason") JOBQUEUE_KEEP("sub_status")
    JOBQUEUE_KEEP("score") JOBQUEUE_KEEP("free") JOBQUEUE_KEEP("role")
    JOBQUEUE_KEEP("disposable") JOBQUEUE_KEEP("accept_all")
    JOBQUEUE_KEEP("catch_all_verdict") JOBQUEUE_KEEP("verified_at")
    JOBQUEUE_KEEP("provider") JOBQUEUE_KEEP("score_basis")
    JOBQUEUE_KEEP("mx_host")
    "state = 'done'";

/* One multi-row statement of results: rows not done yet become done with
 * their result; *changed gets the affected rows (2 each). */
static enum db_err
jobqueue_write_group(struct db *db, struct buf *sql, struct db_param *p,
    const char *job_id, const struct jobqueue_result *const *v, size_t n,
    unsigned long long *changed)
{
	const struct jobqueue_result *r;
	struct db_param *q;
	size_t i;

	dbsql_repeat(sql, jobqueue_write_head, jobqueue_write_item, ",", n,
	    jobqueue_write_tail);
	for (i = 0; i < n; i++) {
		r = v[i];
		q = p + i * JOBQUEUE_WRITE_COLS;
		q[0] = DBP_STR(job_id);
		q[1] = DBP_INT(r->seq);
		q[2] = DBP_STR(verdict_class_names[r->classification]);
		q[3] = DBP_STR(verdict_status_names[r->status]);
		q[4] = DBP_STR(verdict_reason_names[r->reason]);
		q[5] = DBP_STR(verdict_sub_names[r->sub]);
		q[6] = DBP_INT(r->score);
		q[7] = DBP_INT(r->free_provider);
		q[8] = DBP_INT(r->role);
		q[9] = DBP_INT(r->disposable);
		q[10] = DBP_INT(r->accept_all);
		q[11] = DBP_STR(verdict_catch_all_names[r->catch_all]);
		q[12] = DBP_INT((long long)r->verified_at);
		q[13] = DBP_STR(r->provider[0] ? r->provider : NULL);
		q[14] = DBP_STR(calibration_basis_names[r->score_basis]);
		q[15] = DBP_STR(r->mx_host[0] ? r->mx_host : NULL);
	}
	return db_exec(db, buf_str(sql), p, n * JOBQUEUE_WRITE_COLS, changed);
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
	    (p = calloc(JOBQUEUE_WRITE_GROUP * JOBQUEUE_WRITE_COLS,
	    sizeof(*p))) == NULL) {
		e = DB_ERR_QUERY;
		goto out;
	}
	for (i = 0; e == DB_OK && i < n; i++) {
		if (!v[i].retry) {
			todo[ntodo++] = &v[i];
			continue;
		}
		/* a row waiting for a retry that is not due was written so
		 * by this very result: a run again after a COMMIT that was
		 * applied (db_tx_retry) must not count the attempt twice */
		e = db_exec(db, "UPDATE job_emails SET state = 'retry', "
		    "retry_at = UTC_TIMESTAMP(3) + INTERVAL ? SECOND, "
		    "attempts = LEAST(attempts + 1, 127) "
		    "WHERE job_id = ? AND seq = ? AND state <> 'done' AND "
		    "NOT (state = 'retry' AND retry_at > UTC_TIMESTAMP(3))",
		    DB_ARGS(DBP_INT(v[i].retry_after_s > 0 ?
		    v[i].retry_after_s : retry_seconds), DBP_STR(c->job_id),
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
		g = dbsql_group_steps(ntodo - i, JOBQUEUE_WRITE_GROUP,
		    JOBQUEUE_WRITE_STEP);
		changed = 0;
		e = jobqueue_write_group(db, &sql, p, c->job_id, todo + i, g,
		    &changed);
		total += changed;
	}
	if (e == DB_OK && total != 2 * (unsigned long long)ntodo) {
		/* Cannot happen under the job lock (a row done meanwhile, or
		 * a seq the job does not have); do not count wrongly. */
		log_error("event=results_count_mismatch job=%s chunk=%d "
		    "expected=%zu changed=%llu", c->job_id, c->chunk,
		    2 * ntodo, total);
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

struct jobqueue_writing {
	const struct jobqueue_chunk	*c;
	const struct jobqueue_result	*v;
	size_t				 n, done;
	long				 retry_seconds;
	enum jobqueue_err		 rc;
};

static enum db_err
jobqueue_write_work(struct db *db, void *arg)
{
	struct jobqueue_writing *w = arg;
	struct jobqueue_tally tally;
	enum db_err e = DB_OK;

	w->done = 0;
	memset(&tally, 0, sizeof(tally));
	if (!jobqueue_lock_chunk(db, w->c, &w->rc, &e))
		return e;
	if (w->n > 0 && (e = jobqueue_write_rows(db, w->c, w->v, w->n,
	    w->retry_seconds, &tally, &w->done)) != DB_OK)
		return e;
	if (w->done == 0)
		return DB_OK;
	return db_exec(db, "UPDATE jobs SET processed_emails = "
	    "processed_emails + ?, count_valid = count_valid + ?, "
	    "count_invalid = count_invalid + ?, count_risky = count_risky + ?, "
	    "count_catch_all = count_catch_all + ?, count_disposable = "
	    "count_disposable + ?, count_unknown = count_unknown + ?, "
	    "charged_done = charged_done + ?, charged_unknown = "
	    "charged_unknown + ? WHERE id = ?",
	    DB_ARGS(DBP_INT((long long)w->done),
	    DBP_INT(tally.counts[VERDICT_C_VALID]),
	    DBP_INT(tally.counts[VERDICT_C_INVALID]),
	    DBP_INT(tally.counts[VERDICT_C_RISKY]),
	    DBP_INT(tally.counts[VERDICT_C_CATCH_ALL]),
	    DBP_INT(tally.counts[VERDICT_C_DISPOSABLE]),
	    DBP_INT(tally.counts[VERDICT_C_UNKNOWN]),
	    DBP_INT(tally.charged_done), DBP_INT(tally.charged_unknown),
	    DBP_STR(w->c->job_id)), NULL);
}

enum jobqueue_err
jobqueue_write(struct db *db, const struct jobqueue_chunk *c,
    const struct jobqueue_result *v, size_t n, long retry_seconds,
    size_t *done)
{
	struct jobqueue_writing w = { c, v, n, 0, retry_seconds, JOBQUEUE_OK };
	enum jobqueue_err rc;

	rc = jobqueue_of(db, db_tx_retry(db, jobqueue_write_work, &w), w.rc);
	*done = rc == JOBQUEUE_OK ? w.done : 0;
	return rc;
}

/* ---------------------------------------------------------------- finish */

struct jobqueue_finishing {
	const struct jobqueue_chunk	*c;
	const char			*owner;
	long long			 pending, retry;
	int				 completed;
	enum jobqueue_err		 rc;
};

/* The chunk goes back to pending (rows left, or greylisted ones due
 * later: not before the first of them), or is done; the last chunk done
 * completes the job. */
static enum db_err
jobqueue_finish_work(struct db *db, void *arg)
{
	struct jobqueue_finishing *f = arg;
	const struct jobqueue_chunk *c = f->c;
	unsigned long long changed = 0;
	long long open = 0;
	enum db_err e = DB_OK;
	int found;

	f->completed = 0;
	if (!jobqueue_lock_chunk(db, c, &f->rc, &e))
		return e;
	if ((e = db_query_int(db, "SELECT COUNT(*) FROM job_emails WHERE "
	    "job_id = ? AND chunk = ? AND state = 'pending'",
	    DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk)), &f->pending,
	    &found)) != DB_OK || (e = db_query_int(db, "SELECT COUNT(*) FROM "
	    "job_emails WHERE job_id = ? AND chunk = ? AND state = 'retry'",
	    DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk)), &f->retry,
	    &found)) != DB_OK)
		return e;
	if (f->pending == 0 && f->retry == 0)
		e = db_exec(db, "UPDATE job_chunks SET state = 'done', "
		    "done_by = ?, lease_owner = NULL, lease_expires = NULL, "
		    "not_before = NULL WHERE job_id = ? AND chunk = ? AND "
		    "state = 'leased' AND lease_owner = ?",
		    DB_ARGS(DBP_STR(f->owner), DBP_STR(c->job_id),
		    DBP_INT(c->chunk), DBP_STR(f->owner)), &changed);
	else if (f->pending > 0)
		e = db_exec(db, "UPDATE job_chunks SET state = 'pending', "
		    "lease_owner = NULL, lease_expires = NULL, not_before = "
		    "IF(? > 0, UTC_TIMESTAMP(3) + INTERVAL ? SECOND, NULL) "
		    "WHERE job_id = ? AND chunk = ? AND state = 'leased' AND "
		    "lease_owner = ?", DB_ARGS(DBP_INT(c->defer_s),
		    DBP_INT(c->defer_s), DBP_STR(c->job_id),
		    DBP_INT(c->chunk), DBP_STR(f->owner)), &changed);
	else
		e = db_exec(db, "UPDATE job_chunks SET state = 'pending', "
		    "lease_owner = NULL, lease_expires = NULL, not_before = "
		    "(SELECT MIN(retry_at) FROM job_emails WHERE job_id = ? AND "
		    "chunk = ? AND state = 'retry') WHERE job_id = ? AND "
		    "chunk = ? AND state = 'leased' AND lease_owner = ?",
		    DB_ARGS(DBP_STR(c->job_id), DBP_INT(c->chunk),
		    DBP_STR(c->job_id), DBP_INT(c->chunk), DBP_STR(f->owner)),
		    &changed);
	if (e != DB_OK)
		return e;
	if (changed == 0) {
		f->rc = JOBQUEUE_LOST;
		return DB_ABORT;
	}
	if (f->pending || f->retry)
		return DB_OK;
	if ((e = db_query_int(db, "SELECT COUNT(*) FROM job_chunks WHERE "
	    "job_id = ? AND state <> 'done'", DB_ARGS(DBP_STR(c->job_id)),
	    &open, &found)) != DB_OK || open > 0)
		return e;
	if ((e = jobend_complete(db, c->job_id)) == DB_OK)
		f->completed = 1;
	return e;
}

enum jobqueue_err
jobqueue_finish(struct db *db, const struct jobqueue_chunk *c,
    const char *owner, int *completed)
{
	struct jobqueue_finishing f;
	enum db_err e;

	memset(&f, 0, sizeof(f));
	f.c = c;
	f.owner = owner;
	e = db_tx_retry(db, jobqueue_finish_work, &f);
	*completed = e == DB_OK && f.completed;
	if (e == DB_OK && f.rc == JOBQUEUE_OK)
		log_info("event=chunk_finished job=%s chunk=%d state=%s "
		    "retry=%lld deferred_s=%ld", c->job_id, c->chunk,
		    f.pending || f.retry ? "pending" : "done", f.retry,
		    f.pending ? c->defer_s : 0L);
	return jobqueue_of(db, e, f.rc);
}

enum jobqueue_err
jobqueue_hasten(struct db *db, const char *job_id, int chunk, int *changed)
{
	unsigned long long n = 0;

	*changed = 0;
	if (db_exec(db, "UPDATE job_chunks SET not_before = NULL WHERE "
	    "job_id = ? AND chunk = ? AND state = 'pending' AND not_before "
	    "IS NOT NULL", DB_ARGS(DBP_STR(job_id), DBP_INT(chunk)), &n) !=
	    DB_OK)
		return JOBQUEUE_DB;
	*changed = n > 0;
	return JOBQUEUE_OK;
}
