/* ratelimit.h: the sliding 60-second request window, shared through MariaDB
 * by every responder process on every host. */
#ifndef SVC_RATELIMIT_H
#define SVC_RATELIMIT_H
#include "core/db.h"
#include <stddef.h>
#include <stdint.h>

/* The spec's window; rate_window_seconds may set another for the process
 * (tests) through ratelimit_set_window, once at start. */
#define RATELIMIT_WINDOW_MS 60000
/* Bucket names: "acct:<account id>" for authenticated requests, "ip:<address>"
 * for the others. auth_lookup_window builds the account's in SQL. */
#define RATELIMIT_ACCOUNT_PREFIX "acct:"
#define RATELIMIT_IP_PREFIX "ip:"

/* Counted requests in a bucket's window, as read from rate_counts. */
struct ratelimit_window {
	long	 used;
	int64_t	 oldest_ms;	/* start of the oldest second counted; 0 if none */
	uint64_t mark;		/* the host's leases when read (permits_mark) */
};

struct ratelimit_status {
	long	 limit;
	long	 used;		/* requests in the window, this one included */
	long	 remaining;
	int64_t	 reset_at;	/* Unix seconds when the oldest counted request leaves */
	int	 exceeded;	/* this request was refused (not counted) */
};

/* One call of the ratelimit_lease procedure (sql/010_rate_permits.sql):
 * under the bucket's lock, the holder's lease ret_seq gives back
 * ret_unused permits, the lease void_seq gives back all of its own, and a
 * new lease of permits is granted while the window (by the database's
 * clock) holds fewer than limit: as many as rate (a second) asks for until
 * the second ends, at most max and half of what is left, at least one.
 * A seq of 0 is none; holder "" and new_seq 0 count one request on its
 * own (max 1); limit 0 only gives back. */
struct ratelimit_lease_req {
	const char	*bucket;
	const char	*holder;
	uint64_t	 ret_seq, void_seq, new_seq;
	long		 ret_unused;
	long		 limit, rate, max;
};

struct ratelimit_lease_res {
	long	 granted;	/* 0: refused (or nothing asked for) */
	long	 used;		/* the window's sum before the grant */
	int64_t	 oldest_ms;	/* its oldest second's start; 0 if none */
	int64_t	 db_now_ms;	/* the database's clock at the grant */
	long	 others;	/* refused: permits other holders may give back */
	int64_t	 others_sec;	/* the latest second of their leases */
};

enum db_err ratelimit_lease(struct db *, const struct ratelimit_lease_req *,
	    struct ratelimit_lease_res *);
/* The status of a request that used permit number nth (from 1) of a
 * lease granted with the window's sum at used and its oldest second at
 * oldest_ms (0: none; the lease's second sec_ms then). */
void	 ratelimit_status_lease(long limit, long used, int64_t oldest_ms,
	    int64_t sec_ms, long nth, struct ratelimit_status *);

/* The status of the request a lease was asked for: its first permit, or
 * refused (exceeded) when nothing was granted. */
void	 ratelimit_status_of(long limit, const struct ratelimit_lease_res *,
	    int64_t now_ms, struct ratelimit_status *);

/* count = 1: counts this request unless the window is full (then
 * exceeded = 1), as a lease of one permit that nobody holds (permits.h
 * leases more); count = 0: only reports. Returns a db_err. */
enum db_err ratelimit_check(struct db *, const char *bucket, long limit,
	    int count, int64_t now_ms, struct ratelimit_status *);
/* The counted requests of a bucket's window at now_ms. */
enum db_err ratelimit_window_read(struct db *, const char *bucket,
	    int64_t now_ms, struct ratelimit_window *);
/* The window's status from a window read elsewhere (auth_lookup_window,
 * ratelimit_window_read, a cache):
 * the same as ratelimit_check with count = 0 would give. */
void	 ratelimit_status_from(long limit, const struct ratelimit_window *,
	    int64_t now_ms, struct ratelimit_status *);
/* Counters of seconds after this one are in the window at now_ms. */
int64_t	 ratelimit_window_start(int64_t now_ms);
/* The window's length in ms (RATELIMIT_WINDOW_MS unless set), and setting
 * it for the whole process, before any request: every process counting in
 * one database must use the same value. */
int64_t	 ratelimit_window_ms(void);
void	 ratelimit_set_window(long seconds);
/* Deletes counters and leases older than the window, by the database's
 * clock (the one counting uses); returns rows removed or -1. */
long long ratelimit_purge(struct db *);
/* Deletes the bucket rows that have no counter left (idle clients: an
 * anonymous address seen once would otherwise stay for ever); returns rows
 * removed or -1. A bucket row only anchors the lock that counting takes,
 * so one deleted under a running count is simply made again. */
long long ratelimit_purge_buckets(struct db *);
/* The anonymous bucket of a client address into out: "ip:<IPv4>" per
 * address, "ip:<IPv6 /64 prefix>/64" per /64 (one host usually has a whole
 * /64, so per address would be no limit at all). */
void	 ratelimit_ip_bucket(const char *ip, char *out, size_t n);
#endif
