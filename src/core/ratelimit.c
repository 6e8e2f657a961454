/* ratelimit.c: sliding-window rate limiting. Counted requests are kept as
 * per-second counters (rate_counts); a request is allowed when the counters
 * of its bucket for the last 60 seconds add up to less than `limit`, so the
 * window slides by the second and counting reads at most 60 rows whatever
 * the limit. Counting happens under the bucket row's lock, by the
 * database's clock, in the ratelimit_lease procedure (one round trip):
 * either one request on its own (ratelimit_check) or a batch of permits a
 * host hands out from shared memory (permits.c, which has the argument for
 * exactness). Refused requests are not counted, so a client that keeps
 * retrying gets in again as soon as the window moves. */
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

enum db_err
ratelimit_lease(struct db *db, const struct ratelimit_lease_req *q,
    struct ratelimit_lease_res *res)
{
	struct db_res *r;
	enum db_err e;
	int row;

	memset(res, 0, sizeof(*res));
	e = db_query(db, "CALL ratelimit_lease(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	    DB_ARGS(DBP_STR(q->bucket), DBP_STR(q->holder ? q->holder : ""),
	    DBP_INT((long long)q->ret_seq), DBP_INT(q->ret_unused),
	    DBP_INT((long long)q->void_seq), DBP_INT((long long)q->new_seq),
	    DBP_INT(q->limit), DBP_INT(q->rate), DBP_INT(q->max),
	    DBP_INT(ratelimit_window)), &r);
	if (e != DB_OK)
		return e;
	if ((row = db_res_next(r)) == 1) {
		res->granted = (long)db_res_int(r, 0);
		res->used = (long)db_res_int(r, 1);
		res->oldest_ms = db_res_int(r, 2);
		res->db_now_ms = db_res_int(r, 3);
		res->others = (long)db_res_int(r, 4);
		res->others_sec = db_res_int(r, 5);
	}
	db_res_free(r);
	return row == 1 ? DB_OK : DB_ERR_QUERY;
}

void
ratelimit_status_lease(long limit, long used, int64_t oldest_ms,
    int64_t sec_ms, long nth, struct ratelimit_status *st)
{
	memset(st, 0, sizeof(*st));
	ratelimit_fill(st, limit, used + nth, used > 0 ? oldest_ms : sec_ms,
	    sec_ms);
}

void
ratelimit_status_of(long limit, const struct ratelimit_lease_res *res,
    int64_t now_ms, struct ratelimit_status *st)
{
	if (res->granted > 0) {
		ratelimit_status_lease(limit, res->used, res->oldest_ms,
		    res->db_now_ms / 1000 * 1000, 1, st);
		return;
	}
	memset(st, 0, sizeof(*st));
	ratelimit_fill(st, limit, res->used, res->oldest_ms, now_ms);
	st->exceeded = 1;
}

enum db_err
ratelimit_check(struct db *db, const char *bucket, long limit, int count,
    int64_t now_ms, struct ratelimit_status *st)
{
	struct ratelimit_lease_req q = { bucket, "", 0, 0, 0, 0, limit, 0, 1 };
	struct ratelimit_lease_res res;
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
	for (tries = 0; tries < DB_TX_TRIES; tries++)
		if ((e = ratelimit_lease(db, &q, &res)) != DB_ERR_RETRY)
			break;
	if (e == DB_OK)
		ratelimit_status_of(limit, &res, now_ms, st);
	return e;
}

/* The first second still in the window, by the database's clock. */
#define RATELIMIT_DB_SINCE \
	"(FLOOR(UNIX_TIMESTAMP(SYSDATE(3)) * 1000) - ?) DIV 1000"

long long
ratelimit_purge(struct db *db)
{
	unsigned long long n = 0, m = 0;

	if (db_exec(db, "DELETE FROM rate_counts WHERE sec <= "
	    RATELIMIT_DB_SINCE, DB_ARGS(DBP_INT(ratelimit_window)), &n) !=
	    DB_OK || db_exec(db, "DELETE FROM rate_leases WHERE sec <= "
	    RATELIMIT_DB_SINCE, DB_ARGS(DBP_INT(ratelimit_window)), &m) !=
	    DB_OK)
		return -1;
	return (long long)(n + m);
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
