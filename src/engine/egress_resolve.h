/* egress_resolve.h: the addresses of SOCKS5 proxies named by host name in
 * smtp_egress, looked up through the engine's DNS (dns_resolver, like MX
 * hosts) when the route is used: before a session is opened, a name whose
 * look-up is due (never done, or older than EGRESS_RESOLVE_MS) is looked
 * up again. A name that does not resolve leaves its route without an
 * address: a session on it fails that route (logged egress_route_failed,
 * why "the proxy's host name does not resolve"), tries the next one, and
 * ends unknown / smtp_unreachable when none is left, never invalid. The
 * look-up is tried again after EGRESS_RESOLVE_RETRY_MS. Threads of one
 * process may share an egress: the addresses are read and written under
 * a lock. */
#ifndef SVC_EGRESS_RESOLVE_H
#define SVC_EGRESS_RESOLVE_H
#include "engine/dns.h"
#include "engine/egress.h"
#include <stdint.h>
#include <sys/socket.h>

#define EGRESS_RESOLVE_MS	60000	/* a name's address is kept */
#define EGRESS_RESOLVE_RETRY_MS	5000	/* a name that did not resolve */

/* Whether some route of e names its proxy by host name. */
int	 egress_resolve_needed(const struct egress *);
/* Looks up the names whose look-up is due at now (r: the resolver). */
void	 egress_resolve(struct egress *, struct dns_resolver *, int64_t now);
/* Route i's proxy address (by address, or its name's as last looked up)
 * into *ss and *len: 0, or -1 when its name has no address. */
int	 egress_resolve_addr(const struct egress *, size_t i,
	    struct sockaddr_storage *ss, socklen_t *len);
#endif
