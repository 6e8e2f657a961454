/* egress_refresh.h: the look-ups of SOCKS5 proxies' host names
 * (egress_resolve.h) made by a thread of their own instead of by the
 * session opener. A program whose loop runs many sessions (svc-worker)
 * starts one: the first look-up is made before it returns (so the first
 * sessions find the addresses), then each name is looked up again when
 * due (its TTL, between EGRESS_RESOLVE_MIN_MS and EGRESS_RESOLVE_MS; a
 * name that did not resolve after EGRESS_RESOLVE_RETRY_MS) with the
 * thread's own resolver, so that a slow or silent DNS server holds up no
 * session: they use the address last found meanwhile. */
#ifndef SVC_EGRESS_REFRESH_H
#define SVC_EGRESS_REFRESH_H
#include "engine/egress.h"
#include "util/buf.h"
#include "util/conf.h"

struct egress_refresh;

/* Starts the look-ups of e's proxy names (a resolver from c); NULL with a
 * message in err (no memory, no resolver, no thread). Call it only when
 * egress_resolve_needed(e). */
struct egress_refresh *egress_refresh_start(struct egress *e,
	    const struct conf *c, struct buf *err);
/* Stops the thread (a look-up under way ends first: at most the DNS
 * timeouts) and frees it; NULL is fine. */
void	 egress_refresh_stop(struct egress_refresh *);
#endif
