/* sessions.c: svc-worker's SMTP sessions (sched.h). Addresses leave their
 * domain's queue in sessions of up to worker_rcpts_per_session recipients
 * (fewer for a host that closed sessions early), made by the engine's
 * batch face, which puts the catch-all probe first while the domain's
 * answer is not known; at most worker_concurrency sessions run at once
 * from one poll loop, and a domain starts one only while its hosts allow
 * (domains.c). A finished session teaches its hosts (back-off, recipient
 * limit), gives the probe's answer when it carried the probe, and
 * concludes its addresses; one that ends while its domain's probe is still
 * out is parked until the answer comes. What a deferring host left
 * unanswered goes back in the queue (an address loses at most
 * SESSIONS_DEFER_TRIES sessions so, then it is concluded from the
 * session's outcome). */
#include "util/log.h"
#include "util/timeutil.h"
#include "worker/resolver.h"
#include "worker/sched.h"
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#define SESSIONS_DEFER_TRIES	4

/* Starts one session for the domain's queue; 1 if one started. */
static int
sessions_start(struct process *p, struct process_domain *d)
{
	struct process_session *ss = &p->sessions[p->nsessions];
	struct verify_item **items;
	struct process_addr *pa;
	size_t limit, i;

	limit = domains_rcpt_limit(p, d);
	memset(ss, 0, sizeof(*ss));
	if ((ss->addrs = calloc(limit + 1, sizeof(*ss->addrs))) == NULL ||
	    (items = calloc(limit + 1, sizeof(*items))) == NULL) {
		free(ss->addrs);
		ss->addrs = NULL;
		return 0;
	}
	/* one recipient fewer when the probe leads the session */
	while (ss->n < limit && ss->n + (d->b.probe ==
	    VERIFY_PROBE_UNKNOWN) < SMTP_RCPT_MAX &&
	    (pa = domains_dequeue(d)) != NULL) {
		if (pa->chunk->gone) {
			chunks_abandon(pa);
			continue;
		}
		items[ss->n] = &pa->it;
		ss->addrs[ss->n++] = pa;
	}
	if (ss->n == 0) {
		free(items);
		free(ss->addrs);
		ss->addrs = NULL;
		return 0;
	}
	ss->d = d;
	ss->s = verify_batch_session(p->engine, &d->b, items, ss->n, 0,
	    &ss->probe);
	free(items);
	if (ss->s == NULL) {
		/* Cannot even start (memory): conclude as unreachable. */
		for (i = 0; i < ss->n; i++) {
			verify_batch_item_conclude(p->engine, p->db, &d->b,
			    &ss->addrs[i]->it, NULL, 0);
			chunks_result(p, ss->addrs[i], 0);
			free(ss->addrs[i]);
		}
		free(ss->addrs);
		ss->addrs = NULL;
		return 0;
	}
	domains_active(d, 1);
	p->nsessions++;
	log_debug("event=smtp_session_start domain=%s host=%s rcpts=%zu "
	    "probe=%d", d->b.domain, d->host[PROCESS_BY_NAME] ?
	    d->host[PROCESS_BY_NAME]->name : "-", ss->n, ss->probe);
	return 1;
}

/* Starts sessions while there are free slots and addresses that may go;
 * the scan starts one bucket further each time, so that no domain waits
 * behind the others for ever. */
void
sessions_schedule(struct process *p, int64_t now)
{
	struct process_domain *d;
	unsigned i, b;
	int started;

	p->rr = (p->rr + 1) % SCHED_HASH;
	do {
		started = 0;
		for (i = 0; i < SCHED_HASH; i++) {
			b = (p->rr + i) % SCHED_HASH;
			for (d = p->hash[b]; d != NULL; d = d->hnext) {
				if ((int)p->nsessions >= p->concurrency)
					return;
				if (!d->b.resolved || d->queued == 0 ||
				    !domains_may_start(p, d, now))
					continue;
				if (sessions_start(p, d))
					started = 1;
			}
		}
	} while (started);
}

/* Concludes a finished session's addresses with what the domain's batch
 * knows now, puts back in the queue what a deferring host left
 * unanswered, and frees the session. */
static void
sessions_conclude(struct process *p, struct process_session *ss)
{
	const struct smtp_session_info *si = smtp_session_info(ss->s);
	const struct smtp_rcpt_result *rr;
	struct process_domain *d = ss->d;
	size_t i, base = (size_t)ss->probe;
	int deferred = domains_deferred(si);
	struct process_addr *pa;

	for (i = ss->n; i-- > 0; ) {
		pa = ss->addrs[i];
		rr = smtp_session_rcpt(ss->s, base + i);
		if (pa->chunk->gone) {
			chunks_abandon(pa);
			continue;
		}
		if ((rr == NULL || rr->code == 0) && deferred &&
		    ++pa->tries < SESSIONS_DEFER_TRIES) {
			domains_enqueue(d, pa, 1);	/* keeps the order */
			continue;
		}
		if (verify_batch_item_conclude(p->engine, p->db, &d->b, &pa->it,
		    ss->s, base + i) != VERIFY_OK) {
			chunks_abandon(pa);
			continue;
		}
		chunks_result(p, pa, 1);
		free(pa);
	}
	smtp_session_free(ss->s);
	free(ss->addrs);
	ss->s = NULL;
	ss->addrs = NULL;
}

/* Sessions that ended while their domain's probe was out are concluded
 * with its answer, or, when it got none, as the probe's own session's
 * addresses are (not catch-all). */
static void
sessions_unpark(struct process *p, struct process_domain *d)
{
	struct process_parked *pk;

	while ((pk = d->parked) != NULL) {
		d->parked = pk->next;
		sessions_conclude(p, &pk->ss);
		free(pk);
	}
}

/* A session ended: its hosts learn, the probe's answer is read, then the
 * addresses are concluded, or wait (parked) for the domain's probe when a
 * session carrying it is still out. */
static void
sessions_end(struct process *p, struct process_session *ss, int64_t now)
{
	const struct smtp_session_info *si = smtp_session_info(ss->s);
	const struct smtp_rcpt_result *rr;
	struct process_domain *d = ss->d;
	struct process_parked *pk;
	size_t i, answered = 0;

	domains_active(d, -1);
	for (i = 0; i < ss->n + (size_t)ss->probe; i++)
		if ((rr = smtp_session_rcpt(ss->s, i)) != NULL && rr->code)
			answered++;
	log_info("event=smtp_session domain=%s host=%s addr=%s rcpts=%zu "
	    "answered=%zu outcome=%s code=%d tls=%d", d->b.domain,
	    si->host ? si->host : "-", si->addr[0] ? si->addr : "-",
	    ss->n + (size_t)ss->probe, answered,
	    smtp_outcome_names[si->outcome], si->code, si->tls);
	domains_learn(d, si, answered, now);
	if (ss->probe) {
		verify_batch_probe_done(p->db, &d->b, ss->s);
		sessions_conclude(p, ss);
		sessions_unpark(p, d);
		return;
	}
	if (d->b.probe == VERIFY_PROBE_RUNNING &&
	    (pk = malloc(sizeof(*pk))) != NULL) {
		pk->ss = *ss;
		pk->next = d->parked;
		d->parked = pk;
		log_debug("event=smtp_session_parked domain=%s rcpts=%zu",
		    d->b.domain, ss->n);
		ss->s = NULL;
		ss->addrs = NULL;
		return;
	}
	sessions_conclude(p, ss);
}

/* One poll over every running session (and the resolver threads' answers,
 * the last entry), then their steps. */
void
sessions_poll(struct process *p, int timeout_ms)
{
	int64_t now = timeutil_mono_ms(), deadline, next = now + timeout_ms;
	int64_t *dl;
	size_t i, j;
	short events;
	int fd, wait;

	if ((dl = calloc(p->nsessions + 1, sizeof(*dl))) == NULL)
		return;
	for (i = 0; i < p->nsessions; i++) {
		p->pfd[i].fd = -1;
		p->pfd[i].events = 0;
		p->pfd[i].revents = 0;
		dl[i] = now;
		if (smtp_session_poll(p->sessions[i].s, &fd, &events,
		    &deadline)) {
			p->pfd[i].fd = fd;
			p->pfd[i].events = events;
			dl[i] = deadline;
			if (deadline < next)
				next = deadline;
		}
	}
	p->pfd[p->nsessions].fd = p->dns_pending ? resolver_fd(p->resolver) :
	    -1;
	p->pfd[p->nsessions].events = POLLIN;
	p->pfd[p->nsessions].revents = 0;
	wait = next > now ? (int)(next - now) : 0;
	if (poll(p->pfd, (nfds_t)p->nsessions + 1, wait) == -1)
		for (i = 0; i < p->nsessions; i++)
			p->pfd[i].revents = 0;
	now = timeutil_mono_ms();
	for (i = 0; i < p->nsessions; i++) {
		if (!smtp_session_done(p->sessions[i].s) &&
		    (p->pfd[i].revents || now >= dl[i]))
			smtp_session_step(p->sessions[i].s, p->pfd[i].revents,
			    now);
	}
	free(dl);
	/* Finished sessions leave the array (the last one moves in). */
	for (i = 0; i < p->nsessions; ) {
		if (!smtp_session_done(p->sessions[i].s)) {
			i++;
			continue;
		}
		sessions_end(p, &p->sessions[i], now);
		j = --p->nsessions;
		if (i != j)
			p->sessions[i] = p->sessions[j];
	}
}

/* A session's addresses given up (their rows stay pending). */
static void
sessions_drop(struct process_session *ss)
{
	size_t k;

	smtp_session_free(ss->s);
	for (k = 0; k < ss->n; k++)
		chunks_abandon(ss->addrs[k]);
	free(ss->addrs);
	ss->s = NULL;
	ss->addrs = NULL;
}

/* Every session, queued address and parked session given up. */
void
sessions_drop_all(struct process *p)
{
	struct process_domain *d;
	struct process_parked *pk;
	struct process_addr *pa;
	size_t i;
	unsigned h;

	for (i = 0; i < p->nsessions; i++) {
		sessions_drop(&p->sessions[i]);
		domains_active(p->sessions[i].d, -1);
	}
	p->nsessions = 0;
	for (h = 0; h < SCHED_HASH; h++)
		for (d = p->hash[h]; d != NULL; d = d->hnext) {
			while ((pa = domains_dequeue(d)) != NULL)
				chunks_abandon(pa);
			while ((pk = d->parked) != NULL) {
				d->parked = pk->next;
				sessions_drop(&pk->ss);
				free(pk);
			}
			d->in_dns = 0;
		}
	p->dns_head = p->dns_tail = NULL;
}
