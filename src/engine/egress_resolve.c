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

/* The time to look a name up again: its TTL, between the bounds. */
static int64_t
egress_resolve_keep_ms(uint32_t ttl)
{
	int64_t ms = (int64_t)ttl * 1000;

	return ms < EGRESS_RESOLVE_MIN_MS ? EGRESS_RESOLVE_MIN_MS :
	    ms > EGRESS_RESOLVE_MS ? EGRESS_RESOLVE_MS : ms;
}

/* One route's name: its first address, or none. The look-up is made
 * without the lock (a slow DNS answer holds up no reader of the
 * addresses); the route was claimed under it (resolve_at moved on). */
static void
egress_resolve_one(struct egress_route *rt, struct dns_resolver *r,
    int64_t now)
{
	struct sockaddr_storage sa;
	struct sockaddr_in *sin = (struct sockaddr_in *)&sa;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&sa;
	struct dns_addrs a;
	socklen_t salen;
	int family, had;

	memset(&a, 0, sizeof(a));
	memset(&sa, 0, sizeof(sa));
	if (dns_lookup_addrs(r, rt->host, &a) != DNS_OK || a.n == 0) {
		pthread_mutex_lock(&egress_resolve_lock);
		rt->family = 0;
		rt->salen = 0;
		__atomic_store_n(&rt->resolve_at, now + EGRESS_RESOLVE_RETRY_MS,
		    __ATOMIC_RELAXED);
		pthread_mutex_unlock(&egress_resolve_lock);
		log_warn("event=egress_proxy_unresolved route=%s host=%s "
		    "status=%s", rt->name, rt->host,
		    dns_status_names[a.status]);
		return;
	}
	if (a.addr[0].ip.family == 6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)rt->port);
		memcpy(&sin6->sin6_addr, a.addr[0].ip.addr, 16);
		salen = sizeof(*sin6);
		family = AF_INET6;
	} else {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)rt->port);
		memcpy(&sin->sin_addr, a.addr[0].ip.addr, 4);
		salen = sizeof(*sin);
		family = AF_INET;
	}
	pthread_mutex_lock(&egress_resolve_lock);
	had = rt->family != 0 && rt->salen == salen &&
	    memcmp(&rt->sa, &sa, salen) == 0;
	rt->sa = sa;
	rt->salen = salen;
	rt->family = family;
	__atomic_store_n(&rt->resolve_at, now + egress_resolve_keep_ms(a.ttl),
	    __ATOMIC_RELAXED);
	pthread_mutex_unlock(&egress_resolve_lock);
	if (!had)
		log_info("event=egress_proxy_resolved route=%s host=%s "
		    "addr=%s", rt->name, rt->host, a.addr[0].text);
}

void
egress_resolve(struct egress *e, struct dns_resolver *r, int64_t now)
{
	size_t i;
	int due;

	if (e == NULL || r == NULL)
		return;
	for (i = 0; i < e->n; i++) {
		struct egress_route *rt = &e->r[i];

		if (rt->kind != EGRESS_SOCKS5 || rt->host[0] == '\0' ||
		    __atomic_load_n(&rt->resolve_at, __ATOMIC_RELAXED) > now)
			continue;
		/* claimed: another thread finds it not due meanwhile */
		pthread_mutex_lock(&egress_resolve_lock);
		if ((due = rt->resolve_at <= now))
			__atomic_store_n(&rt->resolve_at, now + EGRESS_RESOLVE_RETRY_MS,
		    __ATOMIC_RELAXED);
		pthread_mutex_unlock(&egress_resolve_lock);
		if (due)
			egress_resolve_one(rt, r, now);
	}
}

int64_t
egress_resolve_next(const struct egress *e)
{
	int64_t next = 0, at;
	size_t i;

	for (i = 0; e != NULL && i < e->n; i++) {
		if (e->r[i].kind != EGRESS_SOCKS5 || e->r[i].host[0] == '\0')
			continue;
		at = __atomic_load_n(&e->r[i].resolve_at, __ATOMIC_RELAXED);
		if (next == 0 || at < next)
			next = at;
	}
	return next;
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
