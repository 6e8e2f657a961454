/* ratelimit.c: sliding-window rate limiting. Counted requests are kept as
 * per-second counters (rate_counts); a request is allowed when the counters
 * of its bucket for the last 60 seconds add up to less than `limit`, so the
 * window slides by the second and counting reads at most 60 rows whatever
 * the limit. Counting happens under the bucket row's lock
 * (INSERT ... ON DUPLICATE KEY UPDATE takes it), so concurrent responders
 * never let the limit+1st request through; the transaction runs in the
 * server as the ratelimit_count procedure, one round trip. Refused requests are not counted,
 * so a client that keeps retrying gets in again as soon as the window moves. */
#include "core/ratelimit.h"
#include "util/ipnet.h"
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* Set once at start (rate_window_seconds), read by every request after. */
static int64_t ratelimit_window = RATELIMIT_WINDOW_MS;

void
ratelimit_set_window(long seconds)
{
	ratelimit_window = (int64_t)seconds * 1000;
}

int64_t
ratelimit_window_ms(void)
{
	return ratelimit_window;
}

int64_t
ratelimit_window_start(int64_t now_ms)
{
	return (now_ms - ratelimit_window) / 1000;
}

enum db_err
ratelimit_window_read(struct db *db, const char *bucket, int64_t now_ms,
    struct ratelimit_window *w)
{
	struct db_res *r;
	enum db_err e;
	int row;

	memset(w, 0, sizeof(*w));
	e = db_query(db, "SELECT COALESCE(SUM(n), 0), MIN(sec) * 1000 FROM "
	    "rate_counts WHERE bucket = ? AND sec > ?",
	    DB_ARGS(DBP_STR(bucket), DBP_INT(ratelimit_window_start(now_ms))),
	    &r);
	if (e != DB_OK)
		return e;
	if ((row = db_res_next(r)) == 1) {
		w->used = (long)db_res_int(r, 0);
		w->oldest_ms = db_res_int(r, 1);
	}
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
}

static void
ratelimit_fill(struct ratelimit_status *st, long limit, long used,
    int64_t oldest, int64_t now_ms)
{
	int64_t reset_ms = used > 0 ? oldest + ratelimit_window :
	    now_ms + ratelimit_window;

	st->limit = limit;
	st->used = used;
	st->remaining = limit > used ? limit - used : 0;
	st->reset_at = (reset_ms + 999) / 1000;
}

void
ratelimit_status_from(long limit, const struct ratelimit_window *w,
    int64_t now_ms, struct ratelimit_status *st)
{
	memset(st, 0, sizeof(*st));
	ratelimit_fill(st, limit, w->used, w->oldest_ms, now_ms);
}

/* One CALL of the ratelimit_count procedure (sql/005_ratelimit_count.sql),
 * which runs the whole transaction in the server: lock the bucket row,
 * sum the window, count this request if the sum is below the limit,
 * commit. */
static enum db_err
ratelimit_count_once(struct db *db, const char *bucket, long limit,
    int64_t now_ms, struct ratelimit_status *st)
{
	struct db_res *r;
	int64_t oldest = 0;
	long used = 0;
	enum db_err e;
	int row, counted = 0;

	e = db_query(db, "CALL ratelimit_count(?, ?, ?, ?)",
	    DB_ARGS(DBP_STR(bucket), DBP_INT(limit), DBP_INT(now_ms / 1000),
	    DBP_INT(ratelimit_window_start(now_ms))), &r);
	if (e != DB_OK)
		return e;
	if ((row = db_res_next(r)) == 1) {
		used = (long)db_res_int(r, 0);
		oldest = db_res_int(r, 1);
		counted = (int)db_res_int(r, 2);
	}
	db_res_free(r);
	if (row != 1)
		return DB_ERR_QUERY;
	if (counted) {
		if (used == 0)
			oldest = now_ms / 1000 * 1000;
		used++;
	} else
		st->exceeded = 1;
	ratelimit_fill(st, limit, used, oldest, now_ms);
	return DB_OK;
}

enum db_err
ratelimit_check(struct db *db, const char *bucket, long limit, int count,
    int64_t now_ms, struct ratelimit_status *st)
{
	struct ratelimit_window w;
	enum db_err e;
	int tries;

	memset(st, 0, sizeof(*st));
	if (!count) {
		e = ratelimit_window_read(db, bucket, now_ms, &w);
		if (e == DB_OK)
			ratelimit_status_from(limit, &w, now_ms, st);
		return e;
	}
	/* Not db_tx_retry: the procedure is a transaction of its own, one
	 * round trip; around it, START TRANSACTION and COMMIT would be two
	 * more on every counted request. Its deadlocks are retried alike. */
	for (tries = 0; tries < DB_TX_TRIES; tries++) {
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

	if (db_exec(db, "DELETE FROM rate_counts WHERE sec <= ?",
	    DB_ARGS(DBP_INT(ratelimit_window_start(now_ms))), &n) !=
	    DB_OK)
		return -1;
	return (long long)n;
}

/* Deleted per statement at most, so that no pass holds many locks. */
#define RATELIMIT_PURGE_BATCH 10000

long long
ratelimit_purge_buckets(struct db *db)
{
	unsigned long long n, total = 0;

	do {
		n = 0;
		if (db_exec(db, "DELETE FROM rate_buckets WHERE bucket NOT IN "
		    "(SELECT bucket FROM rate_counts) LIMIT ?",
		    DB_ARGS(DBP_INT(RATELIMIT_PURGE_BATCH)), &n) != DB_OK)
			return -1;
		total += n;
	} while (n == RATELIMIT_PURGE_BATCH);
	return (long long)total;
}

void
ratelimit_ip_bucket(const char *ip, char *out, size_t n)
{
	char text[INET6_ADDRSTRLEN];
	struct ipnet a;

	if (ipnet_parse_addr(ip, &a) == 0 && a.family == 6) {
		memset(a.addr + 8, 0, 8);
		if (inet_ntop(AF_INET6, a.addr, text, sizeof(text)) != NULL) {
			snprintf(out, n, RATELIMIT_IP_PREFIX "%s/64", text);
			return;
		}
	}
	snprintf(out, n, RATELIMIT_IP_PREFIX "%s", ip);
}
