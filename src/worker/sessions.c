/* sessions.c: svc-worker's SMTP sessions (sched.h). Addresses leave their
 * domain's queue in transactions of up to worker_rcpts_per_session
 * recipients (fewer for a host that closed sessions early), led by the
 * catch-all probe while the domain's answer is not known (the engine's
 * batch face). A session is opened for a domain's transaction and, as
 * Postfix's connection cache does, goes on with the next transaction of
 * any domain whose MX is the host it is connected to (domains.c says
 * which may follow), up to worker_transactions_per_session transactions
 * and worker_session_rcpt_limit recipients; whether a transaction is its
 * session's last (QUIT goes with it) is decided when it is given, from
 * the work waiting for that host. At most worker_concurrency sessions run
 * at once from one poll loop, and a domain starts one only while its
 * hosts allow (domains.c). A finished transaction teaches its hosts
 * (back-off, recipient limit), gives the probe's answer when it carried
 * the probe, and concludes its addresses; one that ends while its
 * domain's probe is still out is parked until the answer comes. What a
 * deferring host left unanswered goes back in the queue (an address loses
 * at most SESSIONS_DEFER_TRIES sessions so, then it is concluded from the
 * session's outcome); what a later transaction left unanswered when it
 * failed goes back too, and its hosts get one transaction per session
 * from then on. */
#include "engine/egress_down.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "util/wake.h"
#include "worker/resolver.h"
#include "worker/sched.h"
#include "worker/connstats.h"
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#define SESSIONS_DEFER_TRIES	4

/* ---------------------------------------------------------------- taking */

static void sessions_unpark(struct process *, struct process_domain *);
static size_t sessions_room(const struct process *,
    const struct process_session *);
static size_t sessions_room_at(const struct process *,
    const struct process_session *, int ntx, size_t rcpts);

/* Takes up to limit addresses of the domain's queue into tx, for a
 * session on egress route route; how many. When none is left (their jobs
 * ended), transactions parked for a probe that no session carries any
 * more are concluded. */
static size_t
sessions_take(struct process *p, struct process_tx *tx,
    struct process_domain *d, size_t limit, size_t route, int64_t now)
{
	struct process_addr *pa;
	size_t sl = domains_session_limit(d);
	int probe_alone = 0;

	memset(tx, 0, sizeof(*tx));
	if (limit > SMTP_RCPT_MAX - 1)
		limit = SMTP_RCPT_MAX - 1;	/* room for the probe */
	if (limit > d->queued)
		limit = d->queued;
	/* A host that takes few RCPTs a session (452 4.5.3, Outlook.com one):
	 * the catch-all probe, last of the transaction while it is still to
	 * be sent, counts in them; where only the probe fits, the
	 * transaction carries the probe alone and the addresses follow once
	 * its answer is known. */
	if (limit > 0 && sl > 0 && d->b.probe == VERIFY_PROBE_UNKNOWN &&
	    limit + 1 > sl) {
		limit = sl - 1;
		probe_alone = limit == 0;
	}
	/* the route's paced pair's budget (nothing asked of one not paced);
	 * the catch-all probe, while it is still to be sent, is an RCPT the
	 * host counts too, so it takes one of the budget (make
	 * bench-providers: a persona that takes exactly the rate got one more
	 * and said 421 4.7.28); where only the probe's is granted, the
	 * transaction carries the probe alone */
	if ((limit > 0 || probe_alone) && d->host[PROCESS_BY_NAME] != NULL) {
		size_t probe = d->b.probe == VERIFY_PROBE_UNKNOWN ? 1 : 0;
		size_t granted = pacer_allow(p, d->host[PROCESS_BY_NAME], route,
		    limit + probe, now);

		if (granted == 0)
			return 0;
		if (granted <= probe) {
			limit = 0;
			probe_alone = 1;
		} else
			limit = granted - probe;
	}
	if ((tx->addrs = calloc(limit + 1, sizeof(*tx->addrs))) == NULL)
		return 0;
	while (tx->n < limit && (pa = domains_dequeue(d)) != NULL) {
		if (pa->chunk->gone) {
			chunks_abandon(pa);
			continue;
		}
		tx->addrs[tx->n++] = pa;
	}
	if (tx->n == 0 && !probe_alone) {
		free(tx->addrs);
		tx->addrs = NULL;
		if (d->parked != NULL && d->b.probe != VERIFY_PROBE_RUNNING)
			sessions_unpark(p, d);
		return 0;
	}
	/* (a transaction is held while tx->d is set, addresses or not) */
	tx->d = d;
	tx->taken = now;
	d->active++;
	return tx->n + (size_t)probe_alone;
}

/* A transaction that cannot even be tried (no memory): its addresses are
 * concluded as unreachable. */
static void
sessions_unreachable(struct process *p, struct process_tx *tx)
{
	size_t i;

	for (i = 0; i < tx->n; i++) {
		verify_batch_item_conclude(p->engine, p->db, &tx->d->b,
		    &tx->addrs[i]->it, NULL, 0);
		chunks_result(p, tx->addrs[i], 0);
		free(tx->addrs[i]);
	}
	tx->d->active--;
	free(tx->addrs);
	memset(tx, 0, sizeof(*tx));
}

/* Starts one session for the domain's queue; 1 if one started. Its first
 * transaction is taken now and given when the session is READY. Its
 * egress route: from the round robin's, the first that is not down
 * (egress_down.h, while another is up) and whose pair for the domain's
 * host may send, has room for one more session (pacing_pair_sessions) and
 * grants RCPTs (pacer.c). */
static int
sessions_start(struct process *p, struct process_domain *d, int64_t now)
{
	struct process_session *ss = &p->sessions[p->nsessions];
	size_t i, n = pacer_routes(p), start = pacer_route_start(p), r = 0;
	size_t limit = domains_rcpt_limit(p, d);
	/* the routes of the domain's provider's pin, or all */
	const struct smtp_opts *o = verify_batch_opts(p->engine, &d->b);

	memset(ss, 0, sizeof(*ss));
	for (i = 0; i < n; i++) {
		r = (start + i) % n;
		if (!egress_in(o->routes, r) || egress_avoid_in(o->egress, r,
		    now, o->routes) || !pacer_may_send(d->host[PROCESS_BY_NAME],
		    r, now) || !pacer_session_room(p, d->host[PROCESS_BY_NAME],
		    r))
			continue;
		if (sessions_take(p, &ss->tx, d, limit, r, now) > 0)
			break;
		if (d->queued == 0)
			return 0;
	}
	if (i == n)
		return 0;
	if ((ss->s = verify_batch_open(p->engine, &d->b, r)) == NULL) {
		sessions_unreachable(p, &ss->tx);
		return 0;
	}
	ss->route = r;
	domains_hold(ss->host, d);
	pacer_session_count(ss->host[PROCESS_BY_NAME], r, 1);
	p->nsessions++;
	log_debug("event=smtp_session_start domain=%s host=%s route=%zu "
	    "rcpts=%zu", d->b.domain, d->host[PROCESS_BY_NAME] ?
	    d->host[PROCESS_BY_NAME]->name : "-", r, ss->tx.n);
	return 1;
}

/* The domain's pair is paused for longer than its addresses may wait:
 * they end as the block that paused it says (unknown / smtp_blocked). */
static void
sessions_give_up(struct process *p, struct process_domain *d)
{
	const char *why = pacer_reason(d->host[PROCESS_BY_NAME]);
	struct process_addr *pa;
	size_t n = 0;

	snprintf(d->b.paced_why, sizeof(d->b.paced_why), "%s", why);
	while ((pa = domains_dequeue(d)) != NULL) {
		if (pa->chunk->gone) {
			chunks_abandon(pa);
			continue;
		}
		if (verify_batch_item_conclude_paused(p->engine, p->db, &d->b,
		    &pa->it) != VERIFY_OK) {
			chunks_abandon(pa);
			continue;
		}
		chunks_result(p, pa, 0);
		free(pa);
		n++;
	}
	log_info("event=pacing_gave_up domain=%s host=%s addresses=%zu "
	    "reason=\"%s\"", d->b.domain, d->host[PROCESS_BY_NAME]->name, n,
	    why);
}

/* RCPTs the session will take from its domain's queue as its next
 * transaction: none once QUIT went with the one it has, for a paced host
 * (whose pairs' budgets decide its sessions), or when the domain may not
 * follow in it (another MX host reached, a back-off). Its room is counted
 * as sessions_give counts it, with the transaction it has. */
static size_t
sessions_carries(const struct process *p, const struct process_session *ss,
    int64_t now)
{
	struct process_domain *d = ss->tx.d;
	size_t room, limit;

	if (d == NULL || (ss->loaded && ss->last) ||
	    pacer_host_paced(d->host[PROCESS_BY_NAME]))
		return 0;
	if (ss->loaded && !domains_may_follow(p, ss->host,
	    smtp_session_info(ss->s), d, now))
		return 0;
	room = ss->loaded ? sessions_room(p, ss) : sessions_room_at(p, ss,
	    ss->ntx + 1, ss->rcpts + ss->tx.n + 1);
	limit = domains_rcpt_limit(p, d);
	return room < limit ? room : limit;
}

/* What every domain's running sessions will carry next (d->carry). */
static void
sessions_carry(struct process *p, int64_t now)
{
	size_t i;

	for (i = 0; i < p->nsessions; i++)
		if (p->sessions[i].tx.d != NULL)
			p->sessions[i].tx.d->carry = 0;
	for (i = 0; i < p->nsessions; i++)
		if (p->sessions[i].tx.d != NULL)
			p->sessions[i].tx.d->carry += sessions_carries(p,
			    &p->sessions[i], now);
}

/* Starts sessions while there are free slots and addresses that may go;
 * the scan starts one bucket further each time, so that no domain waits
 * behind the others for ever. Notes whether, with slots free, every
 * domain left waiting waits for pacing (p->paced_only: chunks_cap). */
void
sessions_schedule(struct process *p, int64_t now)
{
	struct process_domain *d;
	struct buckets_scan sc;
	int b, started, paced, other;

	pacer_routes_sync(p, now);
	pacer_read_new(p, now);
	sessions_carry(p, now);
	p->rr = (p->rr + 1) % SCHED_HASH;
	do {
		started = paced = other = 0;
		for (b = buckets_first(p, &sc, p->rr); b >= 0;
		    b = buckets_next(p, &sc)) {
			for (d = p->hash[b]; d != NULL; d = d->hnext) {
				if ((int)p->nsessions >= p->concurrency) {
					p->paced_only = 0;
					return;
				}
				if (d->queued == 0)
					continue;
				if (!d->b.resolved) {
					other++;
					continue;
				}
				if (d->host[PROCESS_BY_NAME] != NULL &&
				    pacer_past_patience(p,
				    d->host[PROCESS_BY_NAME], d->blocked_since,
				    now)) {
					sessions_give_up(p, d);
					continue;
				}
				/* what waits goes as the next transaction of
				 * the sessions it has: a session more would
				 * cost a connection and a TLS handshake, and
				 * its first RCPTs would go out no sooner (a
				 * new session's fourth flight) */
				if (d->active > 0 && d->carry >= d->queued) {
					other++;
					continue;
				}
				if (!domains_may_start(d, now)) {
					if (domains_paced_wait(d, now))
						paced++;
					else
						other++;
					continue;
				}
				if (sessions_start(p, d, now)) {
					started = 1;
					/* (its first session: what it
					 * carried before is stale) */
					d->carry = (d->active > 1 ? d->carry :
					    0) + sessions_carries(p,
					    &p->sessions[p->nsessions - 1], now);
				} else if (d->queued > 0)
					paced++;	/* no route's pair took it */
			}
		}
	} while (started);
	p->paced_only = paced > 0 && other == 0;
}

/* ---------------------------------------------------------------- ends */

/* Whether one of the transaction's RCPTs got an answer that is not a
 * block. */
static int
sessions_answered_unblocked(const struct smtp_session *s, size_t total)
{
	const struct smtp_rcpt_result *rr;
	size_t i;

	for (i = 0; i < total; i++)
		if ((rr = smtp_session_rcpt(s, i)) != NULL && rr->code != 0 &&
		    !pacing_is_block(rr->code, rr->verdict))
			return 1;
	return 0;
}

/* Concludes a finished transaction's addresses with what the domain's
 * batch knows now, puts back in the queue what a deferring host or a
 * failed later transaction left unanswered, and frees the answers. */
static void
sessions_conclude(struct process *p, struct process_tx *tx)
{
	const struct smtp_session_info *si = smtp_session_info(tx->s);
	const struct smtp_rcpt_result *rr;
	struct process_domain *d = tx->d;
	size_t i;
	int deferred = domains_deferred(si) || tx->unsent;
	struct process_addr *pa;

	for (i = tx->n; i-- > 0; ) {
		pa = tx->addrs[i];
		rr = smtp_session_rcpt(tx->s, i);	/* the probe is last */
		if (pa->chunk->gone) {
			chunks_abandon(pa);
			continue;
		}
		if ((rr == NULL || rr->code == 0) && (tx->failed ||
		    (deferred && ++pa->tries < SESSIONS_DEFER_TRIES))) {
			domains_enqueue(d, pa, 1);	/* keeps the order */
			continue;
		}
		/* the host blocked us, not the address: the pair is paused, so
		 * the address waits for another route or the pause's end, and
		 * ends smtp_blocked only past the patience (sessions_give_up) */
		if (tx->blocked && (rr == NULL || rr->code == 0 ||
		    pacing_is_block(rr->code, rr->verdict))) {
			domains_enqueue(d, pa, 1);
			continue;
		}
		/* more RCPTs than the host takes in a session: again, in a
		 * session of its own size */
		if (rr != NULL && domains_too_many(rr) &&
		    ++pa->tries < SESSIONS_DEFER_TRIES) {
			domains_enqueue(d, pa, 1);
			continue;
		}
		if (rr != NULL && pa->attempts > 0 && rr->code / 100 == 2)
			pacer_greylist_passed(p, d, pa->attempts);
		pa->retry_after_s = pacer_greylist_wait(p, d, pa);
		if (verify_batch_item_conclude(p->engine, p->db, &d->b, &pa->it,
		    tx->s, i) != VERIFY_OK) {
			chunks_abandon(pa);
			continue;
		}
		chunks_result(p, pa, 1);
		free(pa);
	}
	smtp_session_free(tx->s);
	free(tx->addrs);
	tx->s = NULL;
	tx->addrs = NULL;
}

/* Transactions that ended while their domain's probe was out are
 * concluded with its answer, or, when it got none, as the probe's own
 * transaction's addresses are (not catch-all, unless the provider's hosts
 * take any address: verify_batch_accept_all). */
static void
sessions_unpark(struct process *p, struct process_domain *d)
{
	struct process_parked *pk;

	while ((pk = d->parked) != NULL) {
		d->parked = pk->next;
		sessions_conclude(p, &pk->tx);
		free(pk);
	}
}

/* A transaction ended (tx->s: its answers, now tx's): its hosts learn,
 * the probe's answer is read, then the addresses are concluded, or wait
 * (parked) for the domain's probe when a transaction carrying it is still
 * out. A later transaction that failed (RCPTs left unanswered: RSET or
 * MAIL refused, 421, the connection lost) teaches nothing but that its
 * hosts take one transaction per session; its unanswered addresses go
 * back in the queue, and a probe it did not get an answer for is sent
 * again with them (the parked transactions wait for that one). */
static void
sessions_tx_end(struct process *p, struct process_session *ss,
    struct process_tx *tx, int64_t now)
{
	const struct smtp_session_info *si = smtp_session_info(tx->s);
	const struct smtp_rcpt_result *rr;
	struct process_domain *d = tx->d;
	struct process_parked *pk;
	size_t i, answered = 0, total = tx->n + (size_t)tx->probe;

	d->active--;
	for (i = 0; i < total; i++)
		if ((rr = smtp_session_rcpt(tx->s, i)) != NULL && rr->code)
			answered++;
	tx->failed = ss->ntx > 1 && !tx->unsent && answered < total;
	log_info("event=smtp_session domain=%s host=%s addr=%s route=%s "
	    "tx=%d rcpts=%zu answered=%zu outcome=%s code=%d tls=%d "
	    "resumed=%d",
	    d->b.domain, si->host ? si->host : "-",
	    si->addr[0] ? si->addr : "-", si->route ? si->route : "-", ss->ntx,
	    total, answered, smtp_outcome_names[si->outcome], si->code,
	    si->tls, si->tls_resumed);
	/* a connection's first transaction tells how connecting went */
	if (ss->ntx <= 1) {
		connstats_note(si);
		/* proxies that failed are down; one that worked is up */
		egress_down_note(p->db, verify_engine_smtp(p->engine)->egress,
		    si, now);
	}
	domains_window(p, ss->host, si);
	if (tx->failed)
		domains_no_reuse(ss->host, si);
	else
		domains_learn(d, si, answered, now);
	if (tx->probe)
		verify_batch_probe_done(p->db, &d->b, tx->s);
	tx->blocked = pacer_learn(p, d, tx->s, total, answered,
	    ss->rcpts >= total ? ss->rcpts - total : 0, tx->failed, tx->taken,
	    now);
	/* the patience of addresses sent back by blocks in a row counts from
	 * the first; a host that answers anything but a block ends the row */
	if (tx->blocked) {
		if (d->blocked_since == 0)
			d->blocked_since = now;
	} else if (sessions_answered_unblocked(tx->s, total))
		d->blocked_since = 0;
	if (tx->probe) {
		sessions_conclude(p, tx);
		if (!tx->failed || d->b.probe != VERIFY_PROBE_UNKNOWN ||
		    d->queued == 0)
			sessions_unpark(p, d);
		return;
	}
	if (d->b.probe == VERIFY_PROBE_RUNNING &&
	    (pk = malloc(sizeof(*pk))) != NULL) {
		pk->tx = *tx;
		pk->next = d->parked;
		d->parked = pk;
		log_debug("event=smtp_session_parked domain=%s rcpts=%zu",
		    d->b.domain, tx->n);
		return;
	}
	sessions_conclude(p, tx);
}

/* ---------------------------------------------------------------- going on */

/* The domain a session goes on with: the one it served last while that
 * has addresses waiting, else one whose probe is not out (its answer
 * would keep the transaction parked), else any that may follow. */
static struct process_domain *
sessions_follow(const struct process *p, const struct process_session *ss,
    const struct process_domain *prev, int64_t now)
{
	const struct smtp_session_info *si = smtp_session_info(ss->s);
	struct process_domain *d, *best = NULL;
	struct buckets_scan sc;
	int b;

	if (prev != NULL && domains_may_follow(p, ss->host, si, prev, now))
		return (struct process_domain *)prev;
	for (b = buckets_first(p, &sc, p->rr); b >= 0; b = buckets_next(p, &sc))
		for (d = p->hash[b]; d != NULL; d = d->hnext) {
			if (d == prev || !domains_may_follow(p, ss->host, si, d,
			    now))
				continue;
			if (d->b.probe != VERIFY_PROBE_RUNNING)
				return d;
			if (best == NULL)
				best = d;
		}
	return best;
}

/* Recipients the session may give its next transaction (the probe's room
 * kept), 0 when it may carry no more; _at: as if it had given ntx
 * transactions and rcpts RCPTs (a transaction counted before it goes). */
static size_t
sessions_room_at(const struct process *p, const struct process_session *ss,
    int ntx, size_t rcpts)
{
	size_t room, lim;
	int t;

	if (ntx >= p->transactions || rcpts + 2 > p->session_rcpts)
		return 0;
	room = p->session_rcpts - rcpts - 1;
	for (t = 0; t < PROCESS_THROTTLE__MAX; t++) {
		if (ss->host[t] == NULL)
			continue;
		if (ss->host[t]->no_reuse)
			return 0;
		/* a host that takes so many RCPTs a session (452 4.5.3) */
		lim = (size_t)ss->host[t]->session_limit;
		if (lim > 0 && rcpts >= lim)
			return 0;
		if (lim > 0 && lim - rcpts < room)
			room = lim - rcpts;
	}
	return room;
}

static size_t
sessions_room(const struct process *p, const struct process_session *ss)
{
	return sessions_room_at(p, ss, ss->ntx, ss->rcpts);
}

/* Gives the session the transaction it took (ss->tx); QUIT goes with it
 * when the session can carry no more or nothing waits for its host. */
static void
sessions_give(struct process *p, struct process_session *ss, int64_t now)
{
	struct process_tx *tx = &ss->tx;
	struct verify_item **items;
	size_t i;
	int last;

	if ((items = calloc(tx->n + 1, sizeof(*items))) == NULL) {
		sessions_unreachable(p, tx);
		smtp_session_quit(ss->s, now);
		return;
	}
	for (i = 0; i < tx->n; i++)
		items[i] = &tx->addrs[i]->it;
	ss->ntx++;
	last = sessions_room_at(p, ss, ss->ntx, ss->rcpts + tx->n + 1) == 0 ||
	    sessions_follow(p, ss, NULL, now) == NULL;
	if (verify_batch_next(p->engine, &tx->d->b, ss->s, items, tx->n, last,
	    now, &tx->probe) == -1) {
		ss->ntx--;
		free(items);
		sessions_unreachable(p, tx);
		smtp_session_quit(ss->s, now);
		return;
	}
	free(items);
	ss->rcpts += tx->n + (size_t)tx->probe;
	ss->loaded = 1;
	ss->last = last;
	log_debug("event=smtp_transaction domain=%s tx=%d rcpts=%zu probe=%d "
	    "last=%d", tx->d->b.domain, ss->ntx, tx->n, tx->probe, last);
}

/* The session is READY: the transaction it finished ends, then it is
 * given the one it took when it started, or the next one of a domain
 * that may follow, or QUIT. */
static void
sessions_ready(struct process *p, struct process_session *ss, int64_t now)
{
	struct process_domain *prev = NULL, *d;
	struct process_tx tx;
	size_t room;

	if (ss->loaded) {
		tx = ss->tx;
		if ((tx.s = smtp_session_detach(ss->s)) == NULL) {
			/* No memory: the answers stay in the session, read
			 * when it is done. */
			smtp_session_quit(ss->s, now);
			return;
		}
		memset(&ss->tx, 0, sizeof(ss->tx));
		ss->loaded = 0;
		prev = tx.d;
		sessions_tx_end(p, ss, &tx, now);
	}
	if (ss->tx.d != NULL) {
		sessions_give(p, ss, now);
		return;
	}
	if ((room = sessions_room(p, ss)) == 0 ||
	    (d = sessions_follow(p, ss, prev, now)) == NULL) {
		smtp_session_quit(ss->s, now);
		return;
	}
	domains_follow(ss->host, d);
	if (room > domains_rcpt_limit(p, d))
		room = domains_rcpt_limit(p, d);
	if (sessions_take(p, &ss->tx, d, room,
	    smtp_session_info(ss->s)->route_index, now) == 0) {
		smtp_session_quit(ss->s, now);
		return;
	}
	sessions_give(p, ss, now);
}

/* The session is done: the transaction it ran or took ends with it. */
static void
sessions_done(struct process *p, struct process_session *ss, int64_t now)
{
	struct process_tx tx;

	if (ss->tx.d != NULL) {
		tx = ss->tx;
		tx.s = ss->s;
		tx.unsent = !ss->loaded;
		ss->s = NULL;
		sessions_tx_end(p, ss, &tx, now);
	}
	smtp_session_free(ss->s);
	ss->s = NULL;
	memset(&ss->tx, 0, sizeof(ss->tx));
	pacer_session_count(ss->host[PROCESS_BY_NAME], ss->route, -1);
	domains_release(ss->host);
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
	/* and svc-api's wake-ups (process_set_wake) */
	p->pfd[p->nsessions + 1].fd = p->wake ? wake_fd(p->wake) : -1;
	p->pfd[p->nsessions + 1].events = POLLIN;
	p->pfd[p->nsessions + 1].revents = 0;
	wait = next > now ? (int)(next - now) : 0;
	if (poll(p->pfd, (nfds_t)p->nsessions + 2, wait) == -1)
		for (i = 0; i < p->nsessions + 2; i++)
			p->pfd[i].revents = 0;
	if (p->pfd[p->nsessions + 1].revents & POLLIN)
		p->woken = 1;
	now = timeutil_mono_ms();
	for (i = 0; i < p->nsessions; i++) {
		if (!smtp_session_done(p->sessions[i].s) &&
		    (p->pfd[i].revents || now >= dl[i]))
			smtp_session_step(p->sessions[i].s, p->pfd[i].revents,
			    now);
	}
	free(dl);
	/* READY sessions go on; finished ones leave the array (the last one
	 * moves in). */
	for (i = 0; i < p->nsessions; ) {
		if (smtp_session_ready(p->sessions[i].s))
			sessions_ready(p, &p->sessions[i], now);
		if (!smtp_session_done(p->sessions[i].s)) {
			i++;
			continue;
		}
		sessions_done(p, &p->sessions[i], now);
		j = --p->nsessions;
		if (i != j)
			p->sessions[i] = p->sessions[j];
	}
}

/* A transaction's addresses given up (their rows stay pending). */
static void
sessions_drop(struct process_tx *tx)
{
	size_t k;

	smtp_session_free(tx->s);
	for (k = 0; k < tx->n; k++)
		chunks_abandon(tx->addrs[k]);
	free(tx->addrs);
	memset(tx, 0, sizeof(*tx));
}

/* Every session, queued address and parked transaction given up. */
void
sessions_drop_all(struct process *p)
{
	struct process_session *ss;
	struct process_domain *d;
	struct process_parked *pk;
	struct process_addr *pa;
	size_t i;
	unsigned h;

	for (i = 0; i < p->nsessions; i++) {
		ss = &p->sessions[i];
		if (ss->tx.d != NULL)
			ss->tx.d->active--;
		ss->tx.s = NULL;
		sessions_drop(&ss->tx);
		smtp_session_free(ss->s);
		ss->s = NULL;
		pacer_session_count(ss->host[PROCESS_BY_NAME], ss->route, -1);
		domains_release(ss->host);
	}
	p->nsessions = 0;
	for (h = 0; h < SCHED_HASH; h++)
		for (d = p->hash[h]; d != NULL; d = d->hnext) {
			while ((pa = domains_dequeue(d)) != NULL)
				chunks_abandon(pa);
			while ((pk = d->parked) != NULL) {
				d->parked = pk->next;
				sessions_drop(&pk->tx);
				free(pk);
			}
			d->in_dns = 0;
		}
	p->dns_head = p->dns_tail = NULL;
}
