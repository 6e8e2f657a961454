/* egress_resolve.c: the look-up of SOCKS5 proxies' host names
 * (egress_resolve.h). */
#include "engine/egress_resolve.h"
#include "util/log.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>

static pthread_mutex_t egress_resolve_lock = PTHREAD_MUTEX_INITIALIZER;

int
egress_resolve_needed(const struct egress *e)
{
	size_t i;

	for (i = 0; e != NULL && i < e->n; i++)
		if (e->r[i].kind == EGRESS_SOCKS5 && e->r[i].host[0] != '\0')
			return 1;
	return 0;
}

/* One route's name: its first address, or none. Under the lock. */
static void
egress_resolve_one(struct egress_route *rt, struct dns_resolver *r,
    int64_t now)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&rt->sa;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&rt->sa;
	struct dns_addrs a;
	int had = rt->family != 0;

	memset(&a, 0, sizeof(a));
	if (dns_lookup_addrs(r, rt->host, &a) != DNS_OK || a.n == 0) {
		rt->family = 0;
		rt->salen = 0;
		rt->resolve_at = now + EGRESS_RESOLVE_RETRY_MS;
		log_warn("event=egress_proxy_unresolved route=%s host=%s "
		    "status=%s", rt->name, rt->host,
		    dns_status_names[a.status]);
		return;
	}
	memset(&rt->sa, 0, sizeof(rt->sa));
	if (a.addr[0].ip.family == 6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)rt->port);
		memcpy(&sin6->sin6_addr, a.addr[0].ip.addr, 16);
		rt->salen = sizeof(*sin6);
		rt->family = AF_INET6;
	} else {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)rt->port);
		memcpy(&sin->sin_addr, a.addr[0].ip.addr, 4);
		rt->salen = sizeof(*sin);
		rt->family = AF_INET;
	}
	rt->resolve_at = now + EGRESS_RESOLVE_MS;
	if (!had)
		log_info("event=egress_proxy_resolved route=%s host=%s "
		    "addr=%s", rt->name, rt->host, a.addr[0].text);
}

void
egress_resolve(struct egress *e, struct dns_resolver *r, int64_t now)
{
	size_t i;

	if (e == NULL || r == NULL)
		return;
	for (i = 0; i < e->n; i++) {
		struct egress_route *rt = &e->r[i];

		if (rt->kind != EGRESS_SOCKS5 || rt->host[0] == '\0' ||
		    __atomic_load_n(&rt->resolve_at, __ATOMIC_RELAXED) > now)
			continue;
		pthread_mutex_lock(&egress_resolve_lock);
		if (rt->resolve_at <= now)	/* not done by another thread */
			egress_resolve_one(rt, r, now);
		pthread_mutex_unlock(&egress_resolve_lock);
	}
}

int
egress_resolve_addr(const struct egress *e, size_t i,
    struct sockaddr_storage *ss, socklen_t *len)
{
	const struct egress_route *rt;
	int rc = -1;

	if (e == NULL || i >= e->n)
		return -1;
	rt = &e->r[i];
	if (rt->host[0] == '\0') {
		memcpy(ss, &rt->sa, sizeof(*ss));
		*len = rt->salen;
		return 0;
	}
	pthread_mutex_lock(&egress_resolve_lock);
	if (rt->family != 0) {
		memcpy(ss, &rt->sa, sizeof(*ss));
		*len = rt->salen;
		rc = 0;
	}
	pthread_mutex_unlock(&egress_resolve_lock);
	return rc;
}
