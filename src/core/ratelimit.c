/* ratelimit.c: sliding-window rate limiting. Every counted request is a row
 * in rate_hits; a request is allowed when fewer than `limit` rows of its
 * bucket are younger than 60 s. Counting happens under the bucket row's lock
 * (INSERT ... ON DUPLICATE KEY UPDATE takes it), so concurrent responders
 * never let the limit+1st request through. Refused requests are not counted,
 * so a client that keeps retrying gets in again as soon as the window moves. */
#include "core/ratelimit.h"
#include <string.h>

static enum db_err
ratelimit_window(struct db *db, const char *bucket, int64_t since,
    long *used, int64_t *oldest)
{
	struct db_res *r;
	enum db_err e;
	int row;

	e = db_query(db, "SELECT COUNT(*), MIN(at_ms) FROM rate_hits "
	    "WHERE bucket = ? AND at_ms > ?",
	    DB_ARGS(DBP_STR(bucket), DBP_INT(since)), &r);
	if (e != DB_OK)
		return e;
	*used = 0;
	*oldest = 0;
	if ((row = db_res_next(r)) == 1) {
		*used = (long)db_res_int(r, 0);
		*oldest = db_res_int(r, 1);
	}
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
}

static void
ratelimit_fill(struct ratelimit_status *st, long limit, long used,
    int64_t oldest, int64_t now_ms)
{
	int64_t reset_ms = used > 0 ? oldest + RATELIMIT_WINDOW_MS :
	    now_ms + RATELIMIT_WINDOW_MS;

	st->limit = limit;
	st->used = used;
	st->remaining = limit > used ? limit - used : 0;
	st->reset_at = (reset_ms + 999) / 1000;
}

static enum db_err
ratelimit_count_once(struct db *db, const char *bucket, long limit,
    int64_t now_ms, struct ratelimit_status *st)
{
	int64_t oldest;
	long used;
	enum db_err e;

	if ((e = db_begin(db)) != DB_OK)
		return e;
	e = db_exec(db, "INSERT INTO rate_buckets (bucket) VALUES (?) "
	    "ON DUPLICATE KEY UPDATE bucket = bucket",
	    DB_ARGS(DBP_STR(bucket)), NULL);
	if (e == DB_OK)
		e = ratelimit_window(db, bucket, now_ms - RATELIMIT_WINDOW_MS,
		    &used, &oldest);
	if (e == DB_OK && used < limit) {
		e = db_exec(db, "INSERT INTO rate_hits (bucket, at_ms) "
		    "VALUES (?, ?)", DB_ARGS(DBP_STR(bucket), DBP_INT(now_ms)),
		    NULL);
		if (used == 0)
			oldest = now_ms;
		used++;
	} else if (e == DB_OK)
		st->exceeded = 1;
	if (e == DB_OK)
		e = db_commit(db);
	else
		db_rollback(db);
	if (e == DB_OK)
		ratelimit_fill(st, limit, used, oldest, now_ms);
	return e;
}

enum db_err
ratelimit_check(struct db *db, const char *bucket, long limit, int count,
    int64_t now_ms, struct ratelimit_status *st)
{
	int64_t oldest;
	long used;
	enum db_err e;
	int tries;

	memset(st, 0, sizeof(*st));
	if (!count) {
		e = ratelimit_window(db, bucket, now_ms - RATELIMIT_WINDOW_MS,
		    &used, &oldest);
		if (e == DB_OK)
			ratelimit_fill(st, limit, used, oldest, now_ms);
		return e;
	}
	for (tries = 0; tries < 3; tries++) {
		st->exceeded = 0;
		e = ratelimit_count_once(db, bucket, limit, now_ms, st);
		if (e != DB_ERR_RETRY)
			break;
	}
	return e;
}

long long
ratelimit_purge(struct db *db, int64_t now_ms)
{
	unsigned long long n = 0;

	if (db_exec(db, "DELETE FROM rate_hits WHERE at_ms <= ?",
	    DB_ARGS(DBP_INT(now_ms - RATELIMIT_WINDOW_MS)), &n) != DB_OK)
		return -1;
	return (long long)n;
}
