/* caps.c: the counts behind the per-account caps (caps.h), each one
 * indexed query on the account's rows. */
#include "jobs/caps.h"
#include "jobs/jobs.h"

enum db_err
caps_lock(struct db *db, const char *account)
{
	long long n = 0;
	int found;

	return db_query_int(db, "SELECT COUNT(*) FROM accounts WHERE id = ? "
	    "FOR UPDATE", DB_ARGS(DBP_STR(account)), &n, &found);
}

enum db_err
caps_jobs_in_flight(struct db *db, const char *account, long long *n)
{
	int found;

	*n = 0;
	return db_query_int(db, "SELECT COUNT(*) FROM jobs WHERE account_id = "
	    "? AND status NOT IN (?, ?, ?)", DB_ARGS(DBP_STR(account),
	    DBP_STR(jobs_status_names[JOBS_COMPLETED]),
	    DBP_STR(jobs_status_names[JOBS_FAILED]),
	    DBP_STR(jobs_status_names[JOBS_CANCELLED])), n, &found);
}

enum db_err
caps_upload_bytes(struct db *db, const char *account, const char *except_job,
    long long *n)
{
	int found;

	*n = 0;
	return db_query_int(db, "SELECT COALESCE(SUM(j.file_size), 0) FROM "
	    "jobs j WHERE j.account_id = ? AND j.type = ? AND j.id <> ? AND "
	    "EXISTS (SELECT 1 FROM upload_chunks c WHERE c.job_id = j.id)",
	    DB_ARGS(DBP_STR(account),
	    DBP_STR(jobs_type_names[JOBS_TYPE_UPLOAD]),
	    DBP_STR(except_job != NULL ? except_job : "")), n, &found);
}

enum db_err
caps_free_rows_today(struct db *db, const char *account, long long *n)
{
	int found;

	*n = 0;
	return db_query_int(db, "SELECT COALESCE(SUM(GREATEST(total_emails - "
	    "credits_charged, 0)), 0) FROM jobs WHERE account_id = ? AND "
	    "created_at >= UTC_DATE() AND type <> ?",
	    DB_ARGS(DBP_STR(account),
	    DBP_STR(jobs_type_names[JOBS_TYPE_UPLOAD])), n, &found);
}

enum db_err
caps_suppressions(struct db *db, const char *account, long long *n)
{
	int found;

	*n = 0;
	return db_query_int(db, "SELECT COUNT(*) FROM suppressions WHERE "
	    "account_id = ?", DB_ARGS(DBP_STR(account)), n, &found);
}
