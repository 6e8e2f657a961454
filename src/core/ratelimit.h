/* ratelimit.h: the sliding 60-second request window, shared through MariaDB
 * by every responder process on every host. */
#ifndef SVC_RATELIMIT_H
#define SVC_RATELIMIT_H
#include "core/db.h"
#include <stdint.h>

#define RATELIMIT_WINDOW_MS 60000

struct ratelimit_status {
	long	 limit;
	long	 used;		/* requests in the window, this one included */
	long	 remaining;
	int64_t	 reset_at;	/* Unix seconds when the oldest counted request leaves */
	int	 exceeded;	/* this request was refused (not counted) */
};

/* count = 1: counts this request unless the window is full (then
 * exceeded = 1); count = 0: only reports. Returns a db_err. */
enum db_err ratelimit_check(struct db *, const char *bucket, long limit,
	    int count, int64_t now_ms, struct ratelimit_status *);
/* Deletes counters older than the window; returns rows removed or -1. */
long long ratelimit_purge(struct db *, int64_t now_ms);
#endif
