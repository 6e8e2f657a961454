/* domains.c: the domains of the chunks svc-worker holds (sched.h): a table
 * of them (keyed hash) with the engine's batch of each, its addresses
 * waiting (for the MX answer, then for SMTP), the MX lookups (the shared
 * DNS cache at once, else the resolver threads: resolver.h, so that a slow
 * DNS answer holds up only its own domain), and the hosts that limit
 * sessions: an MX host by name and by its first address, each with its
 * sessions running, its back-off after a deferral (doubling from 1 s to
 * 60 s), the recipients per transaction it takes and whether a session
 * may carry several transactions to it; which domain a session may go on
 * with. A host by name also has its learned profile and its pacing pair
 * (pacer.c): a pair in a penalty or paused starts and continues no
 * session. */
#include "util/khash.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "worker/resolver.h"
#include "worker/sched.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DOMAINS_DNS_SLICE_MS	200	/* cache lookups per loop turn at most */
#define DOMAINS_DNS_GROUP	64	/* domains per DNS cache read */
#define DOMAINS_DNS_ANSWERS	64	/* resolver answers taken at once */
#define DOMAINS_BACKOFF_MIN_MS	1000
#define DOMAINS_BACKOFF_MAX_MS	60000

/* ---------------------------------------------------------------- tables */

static unsigned
domains_hash(const char *s)
{
	return (unsigned)(khash(s, strlen(s)) % SCHED_HASH);
}

static struct process_domain *
domains_find(struct process *p, const char *name)
{
	struct process_domain *d;

	for (d = p->hash[domains_hash(name)]; d != NULL; d = d->hnext)
		if (strcmp(d->b.domain, name) == 0)
			return d;
	return NULL;
}

struct process_domain *
domains_get(struct process *p, const char *name)
{
	unsigned h = domains_hash(name);
	struct process_domain *d;

	if ((d = domains_find(p, name)) != NULL)
		return d;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	verify_batch_init(&d->b, name);
	d->hnext = p->hash[h];
	p->hash[h] = d;
	buckets_mark(p, h);
	return d;
}

static struct process_host *
domains_host(struct process *p, const char *name)
{
	struct process_host *h;

	for (h = p->hosts; h != NULL; h = h->next)
		if (strcmp(h->name, name) == 0)
			return h;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->rcpt_limit = SMTP_RCPT_MAX;
	h->window = p->domain_initial;
	h->window_cap = p->domain_concurrency;
	mxprofile_init(&h->prof, name);
	if (name[0] != '[') {
		/* by name: its profile and its pacing pair (by the provider
		 * the table names, so that all of Google's hosts share one) */
		char provider[PROVIDERS_NAME_MAX];

		verify_engine_host_provider(process_engine(p), name, provider);
		h->opts = verify_engine_smtp_host(process_engine(p), name);
		profiles_want(p, h);
		pacer_host_pairs(p, h, provider);
	}
	h->next = p->hosts;
	p->hosts = h;
	return h;
}

/* Drops domains with nothing queued and nothing running, and hosts no
 * domain uses whose back-off is over. */
void
domains_sweep(struct process *p, int64_t now)
{
	struct process_domain **dp, *d;
	struct process_host **hp, *h;
	struct buckets_scan sc;
	int i, t;

	for (i = buckets_first(p, &sc, 0); i >= 0; i = buckets_next(p, &sc)) {
		for (dp = &p->hash[i]; (d = *dp) != NULL; ) {
			if (d->queued || d->active || d->in_dns ||
			    d->parked) {
				dp = &d->hnext;
				continue;
			}
			*dp = d->hnext;
			for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
				if (d->host[t])
					d->host[t]->refs--;
			verify_batch_free(&d->b);
			free(d);
		}
		buckets_mark(p, (unsigned)i);
	}
	for (hp = &p->hosts; (h = *hp) != NULL; ) {
		if (h->refs || h->active || now < h->backoff_until) {
			hp = &h->next;
			continue;
		}
		*hp = h->next;
		pacer_host_unref(h);
		free(h);
	}
}

/* ---------------------------------------------------------------- queues */

void
domains_enqueue(struct process_domain *d, struct process_addr *pa, int front)
{
	if (front) {
		pa->next = d->head;
		d->head = pa;
		if (d->tail == NULL)
			d->tail = pa;
	} else {
		pa->next = NULL;
		if (d->tail)
			d->tail->next = pa;
		else
			d->head = pa;
		d->tail = pa;
	}
	d->queued++;
}

struct process_addr *
domains_dequeue(struct process_domain *d)
{
	struct process_addr *pa = d->head;

	if (pa == NULL)
		return NULL;
	d->head = pa->next;
	if (d->head == NULL)
		d->tail = NULL;
	d->queued--;
	pa->next = NULL;
	return pa;
}

/* The MX answer is known: addresses it concludes are done, the rest wait
 * for SMTP, in their order. */
static void
domains_after_mx(struct process *p, struct process_domain *d)
{
	struct process_addr *pa, *keep = NULL, *tail = NULL;

	while ((pa = domains_dequeue(d)) != NULL) {
		if (pa->chunk->gone) {
			chunks_abandon(pa);
			continue;
		}
		if (verify_batch_item_with_mx(p->engine, &d->b, &pa->it) ==
		    VERIFY_STEP_DONE) {
			chunks_result(p, pa, 1);
			free(pa);
			continue;
		}
		pa->next = NULL;
		if (tail)
			tail->next = pa;
		else
			keep = pa;
		tail = pa;
	}
	for (pa = keep; pa != NULL; pa = keep) {
		keep = pa->next;
		domains_enqueue(d, pa, 0);
	}
}

/* An address not concluded by syntax, sandbox or cache: to its domain's
 * queue (the domain's MX lookup queued if it is new). */
void
domains_route(struct process *p, struct process_addr *pa)
{
	struct process_domain *d;

	if ((d = domains_get(p, pa->it.a.ascii_domain)) == NULL) {
		chunks_abandon(pa);
		return;
	}
	if (d->b.resolved) {
		if (verify_batch_item_with_mx(p->engine, &d->b, &pa->it) ==
		    VERIFY_STEP_DONE) {
			chunks_result(p, pa, 1);
			free(pa);
		} else
			domains_enqueue(d, pa, 0);
		return;
	}
	domains_enqueue(d, pa, 0);
	if (!d->in_dns) {
		d->in_dns = 1;
		if (p->dns_tail)
			p->dns_tail->dnext = d;
		else
			p->dns_head = d;
		p->dns_tail = d;
	}
}

/* ---------------------------------------------------------------- hosts */

/* The hosts of a resolved domain: its first MX host by name and by that
 * host's first address (the server its sessions reach first). */
static void
domains_hosts(struct process *p, struct process_domain *d)
{
	char key[DNS_NAME_MAX + 3];
	struct process_host *h;
	const struct dns_mx_host *mh = d->b.mx.nhosts ? &d->b.mx.hosts[0] :
	    NULL;
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++) {
		if (t == PROCESS_BY_NAME)
			snprintf(key, sizeof(key), "%s", mh ? mh->name :
			    d->b.domain);
		else if (mh != NULL && mh->addrs.n > 0)
			snprintf(key, sizeof(key), "[%s]",
			    mh->addrs.addr[0].text);
		else
			continue;
		if ((h = domains_host(p, key)) != NULL) {
			h->refs++;
			d->host[t] = h;
		}
	}
}

/* Not while a host it goes to has its share of sessions running, is in
 * back-off, or is paused (pacing) on every egress route. */
int
domains_may_start(const struct process_domain *d, int64_t now)
{
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if (d->host[t] && (d->host[t]->active >= d->host[t]->window ||
		    now < d->host[t]->backoff_until ||
		    !pacer_any_may_send(d->host[t], now)))
			return 0;
	return 1;
}

int
domains_paced_wait(const struct process_domain *d, int64_t now)
{
	int t, paced = 0;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if (d->host[t] && !pacer_any_may_send(d->host[t], now))
			paced = 1;
	return paced;
}

void
domains_hold(struct process_host **held, const struct process_domain *d)
{
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if ((held[t] = d->host[t]) != NULL)
			held[t]->active++;
}

void
domains_release(struct process_host **held)
{
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++) {
		if (held[t] != NULL)
			held[t]->active--;
		held[t] = NULL;
	}
}

/* The session must be connected to the domain's first MX host (by its
 * name, or one of its addresses: what a session of its own would reach
 * first) and counted in the server address that limits the domain's
 * sessions; none of the domain's hosts may be in back-off or have
 * refused a later transaction, and one the session is not counted in yet
 * must have room for it. */
int
domains_may_follow(const struct process *p, struct process_host *const *held,
    const struct smtp_session_info *si, const struct process_domain *d,
    int64_t now)
{
	const struct dns_mx_host *mh;
	struct process_host *h;
	size_t i;
	int t, same;

	if (!d->b.resolved || d->queued == 0 || d->b.mx.status != DNS_OK ||
	    d->b.mx.nhosts == 0 || held[PROCESS_BY_ADDRESS] == NULL ||
	    d->host[PROCESS_BY_ADDRESS] != held[PROCESS_BY_ADDRESS])
		return 0;
	mh = &d->b.mx.hosts[0];
	same = si->host != NULL && strcasecmp(mh->name, si->host) == 0;
	for (i = 0; !same && i < mh->addrs.n; i++)
		same = strcmp(mh->addrs.addr[i].text, si->addr) == 0;
	if (!same)
		return 0;
	/* a session of another provider's pin (routes, HELO, MAIL FROM) */
	if (held[PROCESS_BY_NAME] != NULL && d->host[PROCESS_BY_NAME] != NULL &&
	    held[PROCESS_BY_NAME]->opts != d->host[PROCESS_BY_NAME]->opts)
		return 0;
	for (t = 0; t < PROCESS_THROTTLE__MAX; t++) {
		if ((h = d->host[t]) == NULL)
			continue;
		if (h->no_reuse || now < h->backoff_until ||
		    !pacer_may_send(h, si->route_index, now) || (h != held[t] &&
		    h->active >= h->window))
			return 0;
	}
	return 1;
}

void
domains_follow(struct process_host **held, const struct process_domain *d)
{
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++) {
		if (d->host[t] == held[t])
			continue;
		if (held[t] != NULL)
			held[t]->active--;
		if ((held[t] = d->host[t]) != NULL)
			held[t]->active++;
	}
}

void
domains_no_reuse(struct process_host *const *held,
    const struct smtp_session_info *si)
{
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if (held[t] != NULL && !held[t]->no_reuse) {
			held[t]->no_reuse = 1;
			log_info("event=smtp_reuse_refused host=%s outcome=%s "
			    "code=%d", held[t]->name,
			    smtp_outcome_names[si->outcome], si->code);
		}
}

/* Recipients in the domain's next transaction: worker_rcpts_per_session,
 * or fewer when one of its hosts closed sessions early. */
size_t
domains_rcpt_limit(const struct process *p, const struct process_domain *d)
{
	size_t limit = (size_t)p->rcpts, sl = domains_session_limit(d);
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if (d->host[t] && (size_t)d->host[t]->rcpt_limit < limit)
			limit = (size_t)d->host[t]->rcpt_limit;
	return sl > 0 && sl < limit ? sl : limit;
}

size_t
domains_session_limit(const struct process_domain *d)
{
	size_t limit = 0;
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if (d->host[t] && d->host[t]->session_limit > 0 &&
		    (limit == 0 || (size_t)d->host[t]->session_limit < limit))
			limit = (size_t)d->host[t]->session_limit;
	return limit;
}

int
domains_too_many(const struct smtp_rcpt_result *rr)
{
	return rr->code == 452 && (strcmp(rr->enhanced, "4.5.3") == 0 ||
	    (rr->text != NULL && strcasestr(rr->text, "too many recipients")
	    != NULL));
}

int
domains_deferred(const struct smtp_session_info *si)
{
	return si->outcome == SMTP_OUTCOME_TEMPFAIL ||
	    (si->outcome == SMTP_OUTCOME_REFUSED_AT_BANNER &&
	    si->code / 100 == 4);
}

/* A busy server's signs: a deferral, a refused or timed-out connection,
 * a disconnection (not a block, a TLS or protocol fault, our own error). */
static int
domains_busy_sign(const struct smtp_session_info *si)
{
	switch (si->outcome) {
	case SMTP_OUTCOME_TEMPFAIL:
	case SMTP_OUTCOME_REFUSED_AT_BANNER:
	case SMTP_OUTCOME_TIMEOUT:
	case SMTP_OUTCOME_DISCONNECTED:
	case SMTP_OUTCOME_UNREACHABLE:
		return 1;
	default:
		return 0;
	}
}

/* The host's cap on its window, for its profile (a host by name). */
static void
domains_note_sessions_max(struct process *p, const struct process_host *h)
{
	struct mxprofile n;

	if (h->name[0] == '[')
		return;
	mxprofile_init(&n, h->name);
	n.sessions_max = h->window_cap;
	profiles_note(p, &n);
}

/* The host's window: one session more for a transaction answered in full
 * while every session it may have was in use (exactly: after a reset the
 * sessions over it end first) and the loop had slots free (so it doubles
 * in a round of them, as a slow start does; with every slot busy a wider
 * window would only take slots from other hosts, and make more, shorter
 * sessions), back to where it started on a busy server's sign, and capped
 * one below the window that saw it, so that a server that takes N
 * connections at once is not offered N + 1 again and again. A cap from a
 * refusal at the greeting goes into the host's profile (sessions_max),
 * where this worker, when it meets the host again, and the others find it
 * (profiles.c). */
static void
domains_host_window(struct process *p, struct process_host *h,
    const struct smtp_session_info *si)
{
	if (si->outcome == SMTP_OUTCOME_OK) {
		if (h->active == h->window && h->window < h->window_cap &&
		    (int)p->nsessions < p->concurrency) {
			h->window++;
			log_debug("event=smtp_window host=%s window=%d",
			    h->name, h->window);
		}
	} else if (domains_busy_sign(si) && h->window > p->domain_initial) {
		if (h->window - 1 < h->window_cap) {
			h->window_cap = h->window - 1;
			/* for every worker only what says "too many
			 * connections": a refusal at the greeting (a deferral
			 * or a timeout may be a rate, the network, our route) */
			if (si->outcome == SMTP_OUTCOME_REFUSED_AT_BANNER)
				domains_note_sessions_max(p, h);
		}
		log_info("event=smtp_window_reset host=%s window=%d from=%d "
		    "cap=%d outcome=%s code=%d", h->name, p->domain_initial,
		    h->window, h->window_cap, smtp_outcome_names[si->outcome],
		    si->code);
		h->window = p->domain_initial;
	}
}

void
domains_window(struct process *p, struct process_host *const *held,
    const struct smtp_session_info *si)
{
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if (held[t] != NULL)
			domains_host_window(p, held[t], si);
}

static void
domains_host_learn(struct process_host *h, const struct smtp_session_info *si,
    size_t answered, int64_t now)
{
	if (!domains_deferred(si))
		h->backoff_ms = 0;
	else if (answered > 0) {
		/* Closed after some replies (a per-session limit): fewer
		 * recipients per session from now on. */
		h->rcpt_limit = answered > 1 ? (int)answered - 1 : 1;
		log_info("event=smtp_rcpt_limit host=%s limit=%d", h->name,
		    h->rcpt_limit);
	} else {
		h->backoff_ms = h->backoff_ms ? h->backoff_ms * 2 :
		    DOMAINS_BACKOFF_MIN_MS;
		if (h->backoff_ms > DOMAINS_BACKOFF_MAX_MS)
			h->backoff_ms = DOMAINS_BACKOFF_MAX_MS;
		h->backoff_until = now + h->backoff_ms;
		log_info("event=smtp_backoff host=%s ms=%d code=%d", h->name,
		    h->backoff_ms, si->code);
	}
}

void
domains_learn(struct process_domain *d, const struct smtp_session_info *si,
    size_t answered, int64_t now)
{
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if (d->host[t])
			domains_host_learn(d->host[t], si, answered, now);
}

/* ---------------------------------------------------------------- DNS */

/* The domain's MX answer is in its batch (facts read with it): its hosts,
 * then its addresses go on. */
static void
domains_resolved(struct process *p, struct process_domain *d)
{
	d->in_dns = 0;
	if (d->b.mx.status == DNS_OK)
		domains_hosts(p, d);
	log_debug("event=domain_resolved domain=%s dns=%s hosts=%zu "
	    "accept_all=%s", d->b.domain, dns_status_names[d->b.mx.status],
	    d->b.mx.nhosts, d->b.probe == VERIFY_PROBE_KNOWN ?
	    (d->b.accept_all ? "yes" : "no") : "unknown");
	domains_after_mx(p, d);
}

/* Domains waiting for their MX answer: from the shared DNS cache at once
 * (a group of them a statement), else handed to the resolver threads (for
 * at most a slice of time, as each cache read is a round trip). */
void
domains_dns(struct process *p)
{
	/* (the clock read only when there is work: the loop comes here on
	 * every turn) */
	int64_t start = p->dns_head != NULL ? timeutil_mono_ms() : 0;
	struct verify_batch *b[DOMAINS_DNS_GROUP];
	struct process_domain *d, *g[DOMAINS_DNS_GROUP];
	struct dns_mx_result mx;
	size_t n, i;

	while (p->dns_head != NULL) {
		for (n = 0; n < DOMAINS_DNS_GROUP &&
		    (d = p->dns_head) != NULL; n++) {
			p->dns_head = d->dnext;
			if (p->dns_head == NULL)
				p->dns_tail = NULL;
			d->dnext = NULL;
			g[n] = d;
			b[n] = &d->b;
		}
		verify_batch_mx_cached_many(p->db, b, n);
		for (i = 0; i < n; i++) {
			d = g[i];
			if (d->b.resolved)
				domains_resolved(p, d);
			else if (resolver_submit(p->resolver, d->b.domain) == 0)
				p->dns_pending++;
			else {
				/* Out of memory: look it up here. */
				verify_engine_lookup_mx(p->engine, d->b.domain,
				    &mx);
				verify_batch_mx_answer(p->db, &d->b, &mx);
				domains_resolved(p, d);
			}
		}
		if (timeutil_mono_ms() - start >= DOMAINS_DNS_SLICE_MS)
			break;
	}
	profiles_read(p);
}

/* Whether d is among the k domains of g. */
static int
domains_taken(struct process_domain *const *g, size_t k,
    const struct process_domain *d)
{
	while (k-- > 0)
		if (g[k] == d)
			return 1;
	return 0;
}

/* Answers of the resolver threads: stored in the DNS cache (a group a
 * statement), then their domains go on (an answer for a domain no longer
 * waiting is dropped). */
void
domains_dns_answers(struct process *p)
{
	struct resolver_answer a[DOMAINS_DNS_ANSWERS];
	struct dns_mx_result mx[DOMAINS_DNS_ANSWERS];
	struct verify_batch *b[DOMAINS_DNS_ANSWERS];
	struct process_domain *d, *g[DOMAINS_DNS_ANSWERS];
	size_t n, i, k;

	while ((n = resolver_answers(p->resolver, a,
	    DOMAINS_DNS_ANSWERS)) > 0) {
		for (i = k = 0; i < n; i++) {
			if (p->dns_pending > 0)
				p->dns_pending--;
			d = domains_find(p, a[i].domain);
			if (d == NULL || !d->in_dns || d->b.resolved ||
			    domains_taken(g, k, d)) {
				dns_mx_result_free(&a[i].mx);
				continue;
			}
			g[k] = d;
			b[k] = &d->b;
			mx[k++] = a[i].mx;
		}
		verify_batch_mx_answer_many(p->db, b, mx, k);
		for (i = 0; i < k; i++)
			domains_resolved(p, g[i]);
	}
	profiles_read(p);
}
