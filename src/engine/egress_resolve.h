/* egress_resolve.h: the addresses of SOCKS5 proxies named by host name in
 * smtp_egress, looked up through the engine's DNS (dns_resolver, like MX
 * hosts): by the thread of egress_refresh.h in svc-worker, else when the
 * route is used (a session opener: a name whose look-up is due is looked
 * up first). A name is looked up again after its TTL, at least
 * EGRESS_RESOLVE_MIN_MS and at most EGRESS_RESOLVE_MS. A name that does
 * not resolve leaves its route without an address: a session on it fails
 * that route (logged egress_route_failed, why "the proxy's host name does
 * not resolve"), tries the next one, and ends unknown / smtp_unreachable
 * when none is left, never invalid. The look-up is tried again after
 * EGRESS_RESOLVE_RETRY_MS. Threads of one process may share an egress:
 * the addresses are read and written under a lock, never held during a
 * look-up. */
#ifndef SVC_EGRESS_RESOLVE_H
#define SVC_EGRESS_RESOLVE_H
#include "engine/dns.h"
#include "engine/egress.h"
#include <stdint.h>
#include <sys/socket.h>

#define EGRESS_RESOLVE_MS	60000	/* a name's address is kept at most */
#define EGRESS_RESOLVE_MIN_MS	1000	/* and at least */
#define EGRESS_RESOLVE_RETRY_MS	5000	/* a name that did not resolve */

/* Whether some route of e names its proxy by host name. */
int	 egress_resolve_needed(const struct egress *);
/* Looks up the names whose look-up is due at now (r: the resolver). */
void	 egress_resolve(struct egress *, struct dns_resolver *, int64_t now);
/* The earliest time (timeutil_mono_ms) a name of e is due; 0: none. */
int64_t	 egress_resolve_next(const struct egress *);
/* Route i's proxy address (by address, or its name's as last looked up)
 * into *ss and *len: 0, or -1 when its name has no address. */
int	 egress_resolve_addr(const struct egress *, size_t i,
	    struct sockaddr_storage *ss, socklen_t *len);
#endif
