/* db_jobqueue.c: svc-worker's result writes (jobqueue_write) against a
 * real MariaDB (SVC_CONF names it; tests/integration/test_jobqueue.sh
 * starts one): every column of a result lands on its row, rows done
 * already keep their first result, a seq given twice is written and
 * counted once, the job's counters (processed, per classification,
 * charged done and unknown) add exactly what became done, greylisted rows
 * go to retry and are done later, and a seq the job does not have makes
 * the whole write fail with nothing written (no row added either). With
 * SVC_STMT_LIMIT (test_jobqueue.sh sets the server's
 * max_prepared_stmt_count to it), only: a connection that meets the
 * server's limit gives its cached statements back and goes on. */
#include "core/db.h"
#include "jobs/jobqueue.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "../unit/unit_skip.h"
#include "db_test.h"

#define ROWS 150		/* chunk 0: seqs 0..149; chunk 1: 150..159 */
#define WHEN 1781870400		/* 2026-06-19 12:00:00 UTC */


/* A processing job with ROWS + 10 rows; every seventh row free. */
static void
new_job(struct db *db, struct jobqueue_chunk *c)
{
	int seq;
	char email[64];

	memset(c, 0, sizeof(*c));
	snprintf(c->job_id, sizeof(c->job_id), "jq%ld_%d", (long)getpid(),
	    rand());
	assert_int_equal(db_exec(db, "INSERT INTO jobs (id, account_id, "
	    "pool_id, type, status, total_emails, created_at) VALUES (?, "
	    "'acc', 'pool', 'bulk', 'processing', ?, UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_STR(c->job_id), DBP_INT(ROWS + 10)), NULL), DB_OK);
	for (seq = 0; seq < ROWS + 10; seq++) {
		snprintf(email, sizeof(email), "user%d@d%d.example", seq,
		    seq % 3);
		assert_int_equal(db_exec(db, "INSERT INTO job_emails (job_id, "
		    "seq, chunk, email, domain, charged) VALUES (?, ?, ?, ?, "
		    "?, ?)", DB_ARGS(DBP_STR(c->job_id), DBP_INT(seq),
		    DBP_INT(seq < ROWS ? 0 : 1), DBP_STR(email),
		    DBP_STR(strchr(email, '@') + 1), DBP_INT(seq % 7 != 0)),
		    NULL), DB_OK);
	}
	c->chunk = 0;
}

/* The result of seq in a round: every column varies with both. */
static void
result_of(struct jobqueue_result *r, int seq, int round)
{
	int k = seq + 5 * round;

	memset(r, 0, sizeof(*r));
	r->seq = seq;
	r->classification = (enum verdict_class)(k % VERDICT_CLASS__MAX);
	r->status = (enum verdict_status)(k % VERDICT_STATUS__MAX);
	r->reason = (enum verdict_reason)(k % VERDICT_REASON__MAX);
	r->sub = (enum verdict_sub)(k % VERDICT_SUB__MAX);
	r->catch_all = (enum verdict_catch_all)(k % VERDICT_CA__MAX);
	r->score = k % 101;
	r->score_basis = (enum calibration_basis)(k % CALIBRATION_BASIS__MAX);
	r->free_provider = k % 2;
	r->role = (k / 2) % 2;
	r->disposable = (k / 4) % 2;
	r->accept_all = (k / 8) % 2;
	if (k % 3)
		snprintf(r->provider, sizeof(r->provider), "p%d.example", k);
	if (k % 4)
		snprintf(r->mx_host, sizeof(r->mx_host), "mx%d.example", k);
	r->verified_at = WHEN + k;
}

static long long
job_int(struct db *db, const char *id, const char *col)
{
	char sql[128];
	long long v = -1;
	int found = 0;

	snprintf(sql, sizeof(sql), "SELECT %s FROM jobs WHERE id = ?", col);
	assert_int_equal(db_query_int(db, sql, DB_ARGS(DBP_STR(id)), &v,
	    &found), DB_OK);
	assert_true(found);
	return v;
}

static const char *
str_or_null(const char *s)
{
	return s != NULL ? s : "(null)";
}

/* Row seq holds exactly the result of round (or is still pending with no
 * result when round < 0); its address columns are untouched. */
static void
expect_row(struct db *db, const char *id, int seq, int round)
{
	struct jobqueue_result r;
	struct db_res *res;
	char email[64];

	assert_int_equal(db_query(db, "SELECT state, classification, status, "
	    "reason, sub_status, score, free, role, disposable, accept_all, "
	    "catch_all_verdict, UNIX_TIMESTAMP(verified_at), provider, "
	    "score_basis, mx_host, retry_at IS NULL, chunk, email FROM "
	    "job_emails WHERE job_id = ? AND seq = ?", DB_ARGS(DBP_STR(id),
	    DBP_INT(seq)), &res), DB_OK);
	assert_int_equal(db_res_next(res), 1);
	snprintf(email, sizeof(email), "user%d@d%d.example", seq, seq % 3);
	assert_string_equal(db_res_str(res, 17), email);
	assert_int_equal(db_res_int(res, 16), seq < ROWS ? 0 : 1);
	if (round < 0) {
		assert_string_equal(db_res_str(res, 0), "pending");
		assert_true(db_res_isnull(res, 1));
		assert_true(db_res_isnull(res, 11));
		db_res_free(res);
		return;
	}
	result_of(&r, seq, round);
	assert_string_equal(db_res_str(res, 0), "done");
	assert_string_equal(db_res_str(res, 1),
	    verdict_class_names[r.classification]);
	assert_string_equal(db_res_str(res, 2), verdict_status_names[r.status]);
	assert_string_equal(db_res_str(res, 3), verdict_reason_names[r.reason]);
	assert_string_equal(str_or_null(db_res_str(res, 4)),
	    str_or_null(verdict_sub_names[r.sub]));
	assert_int_equal(db_res_int(res, 5), r.score);
	assert_int_equal(db_res_int(res, 6), r.free_provider);
	assert_int_equal(db_res_int(res, 7), r.role);
	assert_int_equal(db_res_int(res, 8), r.disposable);
	assert_int_equal(db_res_int(res, 9), r.accept_all);
	assert_string_equal(str_or_null(db_res_str(res, 10)),
	    str_or_null(verdict_catch_all_names[r.catch_all]));
	assert_int_equal(db_res_int(res, 11), (long long)r.verified_at);
	assert_string_equal(str_or_null(db_res_str(res, 12)),
	    r.provider[0] ? r.provider : "(null)");
	assert_string_equal(db_res_str(res, 13),
	    calibration_basis_names[r.score_basis]);
	assert_string_equal(str_or_null(db_res_str(res, 14)),
	    r.mx_host[0] ? r.mx_host : "(null)");
	assert_int_equal(db_res_int(res, 15), 1);
	db_res_free(res);
}

/* What the job's counters must say after rows [0, n) of round 0 (and the
 * rest of round 1, when all) are done. */
struct expect {
	long long processed, counts[VERDICT_CLASS__MAX], charged_done,
	    charged_unknown;
};

static void
expect_add(struct expect *x, int seq, int round)
{
	struct jobqueue_result r;

	result_of(&r, seq, round);
	x->processed++;
	x->counts[r.classification]++;
	if (seq % 7 == 0)
		return;
	x->charged_done++;
	if (r.classification == VERDICT_C_UNKNOWN)
		x->charged_unknown++;
}

static void
expect_counters(struct db *db, const char *id, const struct expect *x)
{
	static const char *const col[VERDICT_CLASS__MAX] = {
		"count_valid", "count_invalid", "count_risky", "count_catch_all",
		"count_disposable", "count_unknown"
	};
	long long rows = -1;
	int found, i;

	assert_int_equal(job_int(db, id, "processed_emails"), x->processed);
	for (i = 0; i < VERDICT_CLASS__MAX; i++)
		assert_int_equal(job_int(db, id, col[i]), x->counts[i]);
	assert_int_equal(job_int(db, id, "charged_done"), x->charged_done);
	assert_int_equal(job_int(db, id, "charged_unknown"),
	    x->charged_unknown);
	assert_int_equal(db_query_int(db, "SELECT COUNT(*) FROM job_emails "
	    "WHERE job_id = ?", DB_ARGS(DBP_STR(id)), &rows, &found), DB_OK);
	assert_int_equal(rows, ROWS + 10);
}

static void
test_results_written_once_and_counted_exactly(void **state)
{
	struct jobqueue_result v[ROWS + 1];
	struct jobqueue_chunk c;
	struct expect x;
	struct db *db = open_db();
	size_t done = 0, n = 0;
	int seq;

	(void)state;
	new_job(db, &c);
	memset(&x, 0, sizeof(x));
	/* round 0: seqs 0..99, seq 40 given twice (the same result) */
	for (seq = 0; seq < 100; seq++) {
		result_of(&v[n++], seq, 0);
		expect_add(&x, seq, 0);
	}
	result_of(&v[n++], 40, 0);
	assert_int_equal(jobqueue_write(db, &c, v, n, 60, &done),
	    JOBQUEUE_OK);
	assert_int_equal(done, 100);
	expect_counters(db, c.job_id, &x);
	for (seq = 0; seq < ROWS; seq++)
		expect_row(db, c.job_id, seq, seq < 100 ? 0 : -1);
	/* round 1: every row of the chunk again, other results: the done
	 * ones keep their first result and count once */
	n = 0;
	for (seq = ROWS - 1; seq >= 0; seq--) {
		result_of(&v[n++], seq, 1);
		if (seq >= 100)
			expect_add(&x, seq, 1);
	}
	assert_int_equal(jobqueue_write(db, &c, v, n, 60, &done),
	    JOBQUEUE_OK);
	assert_int_equal(done, ROWS - 100);
	expect_counters(db, c.job_id, &x);
	for (seq = 0; seq < ROWS; seq++)
		expect_row(db, c.job_id, seq, seq < 100 ? 0 : 1);
	/* chunk 1 untouched */
	for (seq = ROWS; seq < ROWS + 10; seq++)
		expect_row(db, c.job_id, seq, -1);
	/* and once more: nothing left to do, nothing counted */
	assert_int_equal(jobqueue_write(db, &c, v, n, 60, &done),
	    JOBQUEUE_OK);
	assert_int_equal(done, 0);
	expect_counters(db, c.job_id, &x);
	db_close(db);
}

static void
test_retry_then_done(void **state)
{
	struct jobqueue_result v[2];
	struct jobqueue_chunk c;
	struct expect x;
	struct db *db = open_db();
	size_t done = 0;
	long long n = -1;
	int found;

	(void)state;
	new_job(db, &c);
	memset(&x, 0, sizeof(x));
	result_of(&v[0], 3, 0);
	v[0].retry = 1;
	result_of(&v[1], 4, 0);
	expect_add(&x, 4, 0);
	assert_int_equal(jobqueue_write(db, &c, v, 2, 600, &done),
	    JOBQUEUE_OK);
	assert_int_equal(done, 1);
	expect_counters(db, c.job_id, &x);
	assert_int_equal(db_query_int(db, "SELECT COUNT(*) FROM job_emails "
	    "WHERE job_id = ? AND seq = 3 AND state = 'retry' AND attempts = 1 "
	    "AND retry_at > UTC_TIMESTAMP(3) + INTERVAL 500 SECOND AND "
	    "classification IS NULL", DB_ARGS(DBP_STR(c.job_id)), &n, &found),
	    DB_OK);
	assert_int_equal(n, 1);
	expect_row(db, c.job_id, 4, 0);
	/* its result later: done, retry_at cleared */
	v[0].retry = 0;
	expect_add(&x, 3, 0);
	assert_int_equal(jobqueue_write(db, &c, v, 1, 600, &done),
	    JOBQUEUE_OK);
	assert_int_equal(done, 1);
	expect_counters(db, c.job_id, &x);
	expect_row(db, c.job_id, 3, 0);
	db_close(db);
}

static void
test_unknown_seq_writes_nothing(void **state)
{
	struct jobqueue_result v[3];
	struct jobqueue_chunk c;
	struct expect x;
	struct db *db = open_db();
	size_t done = 7;

	(void)state;
	new_job(db, &c);
	memset(&x, 0, sizeof(x));
	result_of(&v[0], 1, 0);
	result_of(&v[1], 9999, 0);	/* not a row of the job */
	result_of(&v[2], 2, 0);
	assert_int_equal(jobqueue_write(db, &c, v, 3, 60, &done),
	    JOBQUEUE_DB);
	assert_int_equal(done, 0);
	expect_counters(db, c.job_id, &x);	/* and no row added */
	expect_row(db, c.job_id, 1, -1);
	expect_row(db, c.job_id, 2, -1);
	db_close(db);
}

/* More distinct statements than the server lets exist at once: each is
 * prepared (and cached) in turn, the one that meets the limit after the
 * connection's cache gave its places back. */
static void
test_statement_limit_frees_the_cache(void **st)
{
	struct db *db = open_db();
	long long limit = atoll(getenv("SVC_STMT_LIMIT")), i, n;
	char sql[64];
	int found;

	(void)st;
	for (i = 0; i < 3 * limit; i++) {
		snprintf(sql, sizeof(sql), "SELECT %lld + 0", i);
		assert_int_equal(db_query_int(db, sql, NULL, 0, &n, &found),
		    DB_OK);
		assert_int_equal(n, i);
	}
	db_close(db);
}

int
main(void)
{
	const struct CMUnitTest limit_tests[] = {
		cmocka_unit_test(test_statement_limit_frees_the_cache),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_results_written_once_and_counted_exactly),
		cmocka_unit_test(test_retry_then_done),
		cmocka_unit_test(test_unknown_seq_writes_nothing),
	};
	int status;

	if (db_test_setup("db_jobqueue", "tests/integration/test_jobqueue.sh",
	    &status) == -1)
		return status;
	if (getenv("SVC_STMT_LIMIT") != NULL)
		return cmocka_run_group_tests(limit_tests, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
