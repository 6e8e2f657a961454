/* verify_many.h: a few hundred addresses verified at once, each to its
 * conclusion, within one deadline, through the batch face
 * (verify_batch.h): the verdict cache first, the domains' MX answers from
 * the DNS cache or looked up, then one session at a time per domain
 * (carrying the catch-all probe while it is not known), many domains at
 * once, few to one mail host. Nothing is retried: a greylisted or
 * unreachable answer is what it is. For the upload preview's SMTP sample,
 * where a worker's scheduler (leases, back-off, greylisting retries) would
 * be too slow to wait for. */
#ifndef SVC_VERIFY_MANY_H
#define SVC_VERIFY_MANY_H
#include "engine/verify.h"
#include <stdint.h>

struct verify_many_opts {
	int		 sessions;	/* at once, at most */
	int		 per_host;	/* to one MX host (by name), at most */
	int		 rcpts;		/* addresses in one session, at most */
	int64_t		 deadline;	/* timeutil_mono_ms() time */
};

/* Verifies emails[0..n) into out[0..n) for account (its own complainer
 * list counts; NULL: none): every one gets a result, unknown where the
 * deadline came first. Final results made afresh go to the verdict cache;
 * unknown ones (not retried here) never do, nor do those of addresses on
 * the account's list. VERIFY_ERR_DB when the database failed (complainer
 * lists), VERIFY_ERR_INTERNAL when out of memory. */
enum verify_err verify_many(struct verify_engine *, struct db *,
	    const char *account, const char *const *emails, size_t n,
	    const struct verify_many_opts *, struct verify_result *out);
#endif
