/* pacing_route.h: the egress route for a session opened outside
 * svc-worker's loop (single verification, domain check, preview sample),
 * chosen under the worker's pacing pairs (pacing.h), among the routes of
 * a set (a pinned provider's: egress_in). */
#ifndef SVC_PACING_ROUTE_H
#define SVC_PACING_ROUTE_H
#include "core/db.h"
#include "engine/egress.h"
#include "engine/pacing.h"
#include "engine/pacing_defaults.h"
#include "engine/smtp.h"
#include "engine/smtp_classify.h"
#include <stddef.h>
#include <stdint.h>

/* From route start (the round robin's) on, the first route of e whose pair
 * for the MX host (key: the default matching provider/host, the provider,
 * or the host) is neither paused nor in a penalty and, when paced, grants
 * want RCPTs of its budget (taken: they count in the pair's window).
 * 1 with *route set; 0 when no route may be used now (why: the reply that
 * paused a pair, or the spent budget); -1 when MariaDB failed (*route is
 * start: the caller goes on unpaced). db NULL: 1 with start. */
int	 pacing_route_pick(struct db *, const struct pacing_conf *,
	    const struct pacing_defaults *, const char *provider,
	    const char *host, const struct egress *, uint32_t routes,
	    size_t start, long want,
	    int64_t now, size_t *route, char *why, size_t whysz);
/* What a finished session of such a route says (pacing_signal.h), written
 * to its pair as svc-worker's pacer would: a block pauses the pair, a
 * "slow down" gives it a penalty (pacing_slow_down_unmeasured), and the
 * MX host's profile keeps the block or the learned rate. 1 when the pair
 * changed, 0 when the session said nothing to pacing, -1 when MariaDB
 * failed. */
int	 pacing_route_learn(struct db *, const struct pacing_conf *,
	    const struct pacing_defaults *, const char *provider,
	    const char *host, const struct egress *, size_t route,
	    const struct smtp_rules *, const struct smtp_session *,
	    int64_t now);
#endif
