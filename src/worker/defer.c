/* defer.c: svc-worker hands back chunks whose addresses wait far ahead for
 * a paced pair, and calls them back when the pair is ready for them
 * (sched.h: defer_tick). A chunk held takes one of the worker's places
 * until every address of it is concluded, and a paced provider takes
 * addresses at its budget's rate (a few hundred a minute from one source
 * address): a list with thousands of its addresses (a job's chunks follow
 * its domains' order) would otherwise fill every place for hours while the
 * rest of the list waits behind them. As Postfix's queue manager keeps a
 * destination's backlog out of memory:
 *  - once the places are full, a chunk whose queued addresses all wait for
 *    one pair, and whose turn (the pair's penalty or pause, then the
 *    addresses ahead of it at the pair's rate now) is more than
 *    DEFER_HORIZON_MS away, is handed back: its addresses stay pending, and
 *    its row is claimable again by itself DEFER_HORIZON_MS / 2 before that
 *    turn, the turns of the chunks handed back for one pair following one
 *    another (pacer_defer_slot); while there is room, nothing is handed
 *    back;
 *  - the rate now is only where a pair starts (it grows until the host
 *    first says "slow down"), so that time is a worst case: as soon as what
 *    the pair has at hand would last less than DEFER_HORIZON_MS / 2, the
 *    chunk handed back first for it is called back (claimable at once), one
 *    a DEFER_PULL_MS at most. The worker that handed a chunk back keeps
 *    its record (another worker host, or the next run, claims it at its
 *    time). */
#include "util/grow.h"
#include "util/log.h"
#include "util/strparse.h"
#include "worker/sched.h"
#include <stdlib.h>
#include <string.h>

#define DEFER_EVERY_MS		1000
#define DEFER_HORIZON_MS	60000
#define DEFER_PULL_MS		3000	/* a pair's call backs at most */
#define DEFER_RECORDS_MAX	65536	/* more: they come back at their time */

/* A chunk this worker handed back, for its pair (held). */
struct defer_record {
	char			 job_id[JOBQUEUE_ID_MAX + 1];
	int			 chunk;
	struct pacer_pair	*pp;
	int64_t			 slot;		/* its turn, as reckoned */
};

/* A paced pair the queued addresses of this pass wait for. */
struct defer_group {
	struct pacer_pair	*pp;
	const char		*host;		/* one of its hosts, for the log */
	int64_t			 wait_ms;
	long			 per_min;
	size_t			 queued;	/* all its queued addresses */
	size_t			 ahead;		/* ... before the chunk looked at */
};

struct defer_pass {
	struct defer_group	*g;
	size_t			 n, cap;
};

static struct defer_group *
defer_find(struct defer_pass *ps, const struct pacer_pair *pp)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (ps->g[i].pp == pp)
			return &ps->g[i];
	return NULL;
}

/* The group of the domain's queued addresses, or NULL: not all of its
 * routes are paced (or its MX is not known yet, or memory ran out). */
static struct defer_group *
defer_group(struct process *p, struct defer_pass *ps,
    const struct process_domain *d, int64_t now)
{
	const struct process_host *h = d->host[PROCESS_BY_NAME];
	struct defer_group *g;
	struct pacer_pair *pp;
	int64_t wait;
	long per_min;

	if (!d->b.resolved || (pp = pacer_outlook(p, h, now, &wait,
	    &per_min)) == NULL)
		return NULL;
	if ((g = defer_find(ps, pp)) != NULL)
		return g;
	if (grow(&ps->g, ps->n, &ps->cap, sizeof(*ps->g), 8) == -1)
		return NULL;
	g = &ps->g[ps->n++];
	g->pp = pp;
	g->host = h->name;
	g->wait_ms = wait;
	g->per_min = per_min;
	g->queued = g->ahead = 0;
	return g;
}

/* Notes, for every chunk, the pair its queued addresses wait for. */
static void
defer_survey(struct process *p, struct defer_pass *ps, int64_t now)
{
	struct process_domain *d;
	struct process_addr *pa;
	struct process_chunk *ch;
	struct defer_group *g;
	struct buckets_scan sc;
	int b;

	for (ch = p->chunks; ch != NULL; ch = ch->next) {
		ch->defer_pair = NULL;
		ch->defer_queued = 0;
		ch->defer_mixed = ch->defer_now = 0;
	}
	for (b = buckets_first(p, &sc, 0); b >= 0; b = buckets_next(p, &sc))
		for (d = p->hash[b]; d != NULL; d = d->hnext) {
			if (d->queued == 0)
				continue;
			if ((g = defer_group(p, ps, d, now)) != NULL)
				g->queued += d->queued;
			for (pa = d->head; pa != NULL; pa = pa->next) {
				ch = pa->chunk;
				if (g == NULL || (ch->defer_pair != NULL &&
				    ch->defer_pair != g->pp))
					ch->defer_mixed = 1;
				else
					ch->defer_pair = g->pp;
				ch->defer_queued++;
			}
		}
}

/* A chunk that may be handed back: every address not concluded is queued
 * for one pair (none in a lookup, a session or waiting for a probe). */
static int
defer_candidate(const struct process_chunk *ch)
{
	return !ch->gone && !ch->defer_mixed && ch->defer_pair != NULL &&
	    ch->outstanding > 0 && ch->defer_queued == ch->outstanding;
}

/* ---------------------------------------------------------------- records */

static void
defer_record_drop(struct process *p, size_t i)
{
	pacer_pair_hold(p->deferred[i].pp, -1);
	p->deferred[i] = p->deferred[--p->ndeferred];
}

/* Keeps the record of a chunk handed back (one a chunk: a chunk that came
 * back by itself and is handed back again replaces its record). */
static void
defer_record_add(struct process *p, const struct process_chunk *ch,
    struct pacer_pair *pp, int64_t slot)
{
	struct defer_record *r;
	size_t i;

	for (i = 0; i < p->ndeferred; i++)
		if (p->deferred[i].chunk == ch->c.chunk &&
		    strcmp(p->deferred[i].job_id, ch->c.job_id) == 0) {
			defer_record_drop(p, i);
			break;
		}
	if (p->ndeferred >= DEFER_RECORDS_MAX || grow(&p->deferred,
	    p->ndeferred, &p->capdeferred, sizeof(*p->deferred), 64) == -1)
		return;
	r = &p->deferred[p->ndeferred++];
	strparse_copy(r->job_id, sizeof(r->job_id), ch->c.job_id);
	r->chunk = ch->c.chunk;
	r->pp = pp;
	r->slot = slot;
	pacer_pair_hold(pp, 1);
}

void
defer_free(struct process *p)
{
	while (p->ndeferred > 0)
		defer_record_drop(p, p->ndeferred - 1);
	free(p->deferred);
	p->deferred = NULL;
	p->capdeferred = 0;
}

/* How long what the pair has at hand lasts (its wait included). */
static int64_t
defer_at_hand_ms(struct defer_pass *ps, struct pacer_pair *pp, int64_t now)
{
	struct defer_group *g = defer_find(ps, pp);

	if (g == NULL)
		return pacer_pair_wait(pp, now);
	return g->wait_ms + (int64_t)g->queued * 60000 / g->per_min;
}

/* Calls back, for every pair whose addresses at hand would last less than
 * DEFER_HORIZON_MS / 2, the chunk handed back first for it. */
static void
defer_pull(struct process *p, struct defer_pass *ps, int64_t now)
{
	struct defer_record *r;
	size_t *first = NULL, nfirst = 0, capfirst = 0, i, k;
	int changed;

	/* each pair's record with the earliest turn */
	for (i = 0; i < p->ndeferred; i++) {
		for (k = 0; k < nfirst; k++)
			if (p->deferred[first[k]].pp == p->deferred[i].pp)
				break;
		if (k < nfirst) {
			if (p->deferred[i].slot < p->deferred[first[k]].slot)
				first[k] = i;
			continue;
		}
		if (grow(&first, nfirst, &capfirst, sizeof(*first), 8) == -1)
			break;
		first[nfirst++] = i;
	}
	for (k = 0; k < nfirst; k++) {
		r = &p->deferred[first[k]];
		if (defer_at_hand_ms(ps, r->pp, now) >= DEFER_HORIZON_MS / 2 ||
		    !pacer_pull_due(r->pp, now, DEFER_PULL_MS))
			continue;
		if (jobqueue_hasten(p->db, r->job_id, r->chunk, &changed) !=
		    JOBQUEUE_OK) {
			p->db_failed = 1;
			break;
		}
		log_info("event=chunk_called_back job=%s chunk=%d waiting=%s",
		    r->job_id, r->chunk, changed ? "yes" : "no");
		if (changed)
			p->claim_short = p->claim_empty = 0;	/* claim now */
		r->chunk = -1;		/* dropped below */
	}
	free(first);
	for (i = p->ndeferred; i-- > 0; )
		if (p->deferred[i].chunk == -1)
			defer_record_drop(p, i);
}

/* ---------------------------------------------------------------- hand back */

/* Picks the chunks to hand back, oldest first (their addresses are ahead
 * in their domains' queues); 1 when there is one. */
static int
defer_pick(struct process *p, struct defer_pass *ps, int64_t now)
{
	struct process_chunk *ch, **v;
	struct defer_group *g;
	int64_t turn, slot;
	size_t n = 0, i;
	int any = 0;

	if ((v = calloc(p->nchunks + 1, sizeof(*v))) == NULL)
		return 0;
	for (ch = p->chunks; ch != NULL && n < p->nchunks; ch = ch->next)
		v[n++] = ch;		/* newest first */
	/* what the other chunks hold is ahead of every candidate */
	for (i = 0; i < ps->n; i++)
		ps->g[i].ahead = ps->g[i].queued;
	for (i = 0; i < n; i++)
		if (defer_candidate(v[i]) && (g = defer_find(ps,
		    v[i]->defer_pair)) != NULL)
			g->ahead -= v[i]->defer_queued;
	for (i = n; i-- > 0; ) {
		ch = v[i];
		if (!defer_candidate(ch) || (g = defer_find(ps,
		    ch->defer_pair)) == NULL)
			continue;
		turn = g->wait_ms + (int64_t)g->ahead * 60000 / g->per_min;
		if (turn <= DEFER_HORIZON_MS) {
			g->ahead += ch->defer_queued;
			continue;
		}
		slot = pacer_defer_slot(g->pp, now + turn, ch->defer_queued,
		    g->per_min);
		ch->c.defer_s = (long)((slot - now - DEFER_HORIZON_MS / 2) /
		    1000);
		if (ch->c.defer_s < 1)
			ch->c.defer_s = 1;
		ch->defer_now = 1;
		defer_record_add(p, ch, g->pp, slot);
		any = 1;
		log_info("event=chunk_deferred job=%s chunk=%d addresses=%zu "
		    "host=%s wait_ms=%lld rate=%ld ahead=%zu back_in_s=%ld "
		    "reason=paced", ch->c.job_id, ch->c.chunk,
		    ch->defer_queued, g->host, (long long)g->wait_ms,
		    g->per_min, g->ahead, ch->c.defer_s);
	}
	free(v);
	return any;
}

/* Takes the addresses of the chunks handed back out of their domains'
 * queues (the rest keep their order); their rows stay pending, and the
 * chunks, with nothing outstanding, are ended by chunks_tick. */
static void
defer_unqueue(struct process *p)
{
	struct process_domain *d;
	struct process_addr *pa, *keep, *tail;
	struct buckets_scan sc;
	int b;

	for (b = buckets_first(p, &sc, 0); b >= 0; b = buckets_next(p, &sc))
		for (d = p->hash[b]; d != NULL; d = d->hnext) {
			keep = tail = NULL;
			while ((pa = domains_dequeue(d)) != NULL) {
				if (pa->chunk->defer_now) {
					chunks_abandon(pa);
					continue;
				}
				if (tail != NULL)
					tail->next = pa;
				else
					keep = pa;
				tail = pa;
			}
			while ((pa = keep) != NULL) {
				keep = pa->next;
				domains_enqueue(d, pa, 0);
			}
		}
}

void
defer_tick(struct process *p, int64_t now)
{
	struct defer_pass ps = { NULL, 0, 0 };
	int full = p->nchunks >= chunks_cap(p);

	if (now - p->defer_checked < DEFER_EVERY_MS ||
	    (!full && p->ndeferred == 0))
		return;
	p->defer_checked = now;
	defer_survey(p, &ps, now);
	if (full && ps.n > 0 && defer_pick(p, &ps, now))
		defer_unqueue(p);
	if (p->ndeferred > 0)
		defer_pull(p, &ps, now);
	free(ps.g);
}
