/* resolver.h: svc-worker's MX lookups off the SMTP loop: a few threads,
 * each with a DNS resolver of its own, look up the domains handed over
 * (dns_lookup_mx: MX, then the hosts' addresses), so that a slow DNS
 * answer delays only its own domain. Answers come back through
 * resolver_answers; resolver_fd becomes readable when one is waiting, for
 * the loop's poll. */
#ifndef SVC_WORKER_RESOLVER_H
#define SVC_WORKER_RESOLVER_H
#include "engine/dns.h"
#include "util/buf.h"
#include "util/conf.h"
#include <stddef.h>
#include <stdint.h>

struct resolver;

struct resolver_answer {
	char			 domain[DNS_NAME_MAX + 1];
	struct dns_mx_result	 mx;	/* the caller frees it */
};

/* Starts threads lookups at once at most, each ending by deadline (a
 * timeutil_mono_ms() time, dns_resolver_set_deadline; 0: none); NULL with
 * a message in err. */
struct resolver *resolver_start(const struct conf *, int threads,
	    int64_t deadline, struct buf *err);
/* Hands over a lookup; -1 when out of memory. */
int	 resolver_submit(struct resolver *, const char *domain);
/* Copies out up to max answers that came back; returns how many. */
size_t	 resolver_answers(struct resolver *, struct resolver_answer *,
	    size_t max);
/* Readable while answers wait to be taken. */
int	 resolver_fd(const struct resolver *);
/* Stops the threads (lookups under way finish first) and frees every
 * answer not taken. */
void	 resolver_stop(struct resolver *);
#endif
