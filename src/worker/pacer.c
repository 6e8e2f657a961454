/* pacer.c: svc-worker's side of reputation-aware pacing and of the mail
 * host profiles (sched.h; the design is in engine/pacing.h and
 * engine/mxprofile.h). Each MX host (by name) of the domains held has a
 * pair per egress route of smtp_egress: (the shipped default's pattern,
 * the provider mx_providers.txt names, or the host's name) x the route's
 * name ("direct", "bind:192.0.2.1", "socks5://user@192.0.2.9:1080"). A
 * session starts on a route whose pair may send (the round robin's first
 * that may), takes its RCPTs from that route's budget, and what the host
 * answers (a "slow down", a block) is learned on the route the session
 * actually left by: a pair paused on one route leaves the others in use,
 * and the addresses wait only when every route's pair is paused.
 * A pair that is not paced costs nothing: no statement, no wait.
 * A paced one takes its RCPTs from the budget in MariaDB before each
 * transaction; every second the pairs are read again, so that what one
 * worker host learned (a penalty, a pause, a learned rate) holds for all.
 * After a session: the RCPTs answered are tallied, a "slow down" or a
 * block changes the pair (stored at once), and what the host showed of
 * itself (RCPTs per session, STARTTLS, catch-all, greylisting) is noted
 * in its profile when it differs from what was known (profiles.c reads
 * and writes the profiles in batches). */
#include "engine/egress_down.h"
#include "engine/mxprofile.h"
#include "engine/pacing.h"
#include "engine/pacing_signal.h"
#include "engine/smtp_classify.h"
#include "engine/verify.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "worker/sched.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#define PACER_SYNC_MS		1000	/* pairs read again */
#define PACER_RETRY_MS		200	/* a full window asked again */

struct pacer_pair {
	struct pacing_pair	 s;
	int64_t			 next_take;
	int			 refs;
	int			 sessions;	/* open on it now */
	int64_t			 deferred_until; /* pacer_defer_slot */
	int64_t			 pulled_at;	/* pacer_pull_due */
	struct pacer_pair	*next;
};

void
pacer_init(struct process *p)
{
	const struct conf *c = p->conf;
	struct buf msg;
	const char *m;
	size_t lines = 0;

	pacing_conf_read(&p->pconf, c);
	/* each worker starts its round of routes at one of its own */
	if (getrandom(&p->route_next, sizeof(p->route_next), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(p->route_next))
		p->route_next = 0;
	buf_init(&msg, 64 * 1024);
	if (pacing_defaults_load(&p->pdefaults, conf_str(c, CONF_LISTS_DIR),
	    &msg) == -1)
		log_error("event=pacing_defaults error=\"%s\"", buf_str(&msg));
	else {
		for (m = buf_str(&msg); *m != '\0'; m++)
			lines += *m == '\n';
		log_info("event=pacing_defaults entries=%zu warnings=%zu%s",
		    p->pdefaults.n, lines, lines ? " (svcadm lists check)" : "");
	}
	buf_free(&msg);
}

/* ----------------------------------------- the rows the last read found */

static void
pacer_rows_clear(struct process *p)
{
	size_t i;

	for (i = 0; i < p->npacer_rows; i++)
		free(p->pacer_rows[i]);
	p->npacer_rows = 0;
}

static int
pacer_rows_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "key\037egress" into buf */
static void
pacer_rows_name(char *buf, size_t len, const char *key, const char *egress)
{
	snprintf(buf, len, "%s\037%s", key, egress);
}

static void
pacer_rows_add(struct process *p, const char *key, const char *egress)
{
	char name[PACING_KEY_MAX + PACING_EGRESS_MAX + 2], *s;

	pacer_rows_name(name, sizeof(name), key, egress);
	if (grow(&p->pacer_rows, p->npacer_rows, &p->cappacer_rows,
	    sizeof(*p->pacer_rows), 64) == -1 || (s = strdup(name)) == NULL) {
		/* without it, the pair waits for the next sync, as before */
		return;
	}
	p->pacer_rows[p->npacer_rows++] = s;
}

static int
pacer_rows_has(const struct process *p, const char *key, const char *egress)
{
	char name[PACING_KEY_MAX + PACING_EGRESS_MAX + 2], *n = name;

	if (p->npacer_rows == 0)
		return 0;
	pacer_rows_name(name, sizeof(name), key, egress);
	return bsearch(&n, p->pacer_rows, p->npacer_rows,
	    sizeof(*p->pacer_rows), pacer_rows_cmp) != NULL;
}

void
pacer_free(struct process *p)
{
	struct pacer_pair *pp;

	while ((pp = p->pairs) != NULL) {
		p->pairs = pp->next;
		free(pp);
	}
	pacer_rows_clear(p);
	free(p->pacer_rows);
	p->pacer_rows = NULL;
	p->cappacer_rows = 0;
	pacing_defaults_free(&p->pdefaults);
}

static struct pacer_pair *
pacer_find(struct process *p, const char *key, const char *egress)
{
	struct pacer_pair *pp;

	for (pp = p->pairs; pp != NULL; pp = pp->next)
		if (strcasecmp(pp->s.key, key) == 0 &&
		    strcmp(pp->s.egress, egress) == 0)
			return pp;
	return NULL;
}

/* The pair (key, route egress), made when this host has none. */
static struct pacer_pair *
pacer_pair(struct process *p, const char *key, const char *egress,
    const struct pacing_default *d)
{
	struct pacer_pair *pp;
	int64_t now;

	if ((pp = pacer_find(p, key, egress)) == NULL) {
		if ((pp = calloc(1, sizeof(*pp))) == NULL)
			return NULL;
		now = timeutil_mono_ms();
		pacing_pair_init(&pp->s, &p->pconf, key, egress, d, now);
		pp->next = p->pairs;
		p->pairs = pp;
		/* read before its first session when it has a stored row, or
		 * when what the last read found is too old to tell */
		if (p->pacer_synced == 0 || now - p->pacer_synced >
		    2 * PACER_SYNC_MS || pacer_rows_has(p, key, egress))
			p->pacer_new = 1;
	}
	pp->refs++;
	return pp;
}

static const struct egress *
pacer_egress(const struct process *p)
{
	return verify_engine_smtp(p->engine)->egress;
}

size_t
pacer_routes(const struct process *p)
{
	const struct egress *e = pacer_egress(p);

	return e != NULL && e->n > 0 ? e->n : 1;
}

/* The worker's own round robin (egress_pick's is advanced by every
 * session the engine opens, this one's choice included). */
size_t
pacer_route_start(struct process *p)
{
	return p->route_next++ % pacer_routes(p);
}

/* The pairs of an MX host: its key (the shipped default's pattern, the
 * provider, or the host's name) with each egress route's name. */
void
pacer_host_pairs(struct process *p, struct process_host *h,
    const char *provider)
{
	const struct pacing_default *d;
	const struct egress *e = pacer_egress(p);
	const char *key;
	size_t r, n = pacer_routes(p);

	d = pacing_defaults_match(&p->pdefaults, provider, h->name);
	key = d ? d->pattern : provider && provider[0] ? provider : h->name;
	for (r = 0; r < n && r < EGRESS_ROUTES_MAX; r++)
		if ((h->pair[h->npairs] = pacer_pair(p, key, e != NULL &&
		    e->n > 0 ? e->r[r].name : PACING_EGRESS_DIRECT, d)) != NULL)
			h->npairs++;
		else
			break;
	if (h->npairs < n) {
		/* no memory: the host is sent nothing rather than unpaced */
		log_error("event=pacing_pairs host=%s error=\"out of memory\"",
		    h->name);
	}
}

void
pacer_host_unref(struct process_host *h)
{
	size_t r;

	for (r = 0; r < h->npairs; r++)
		h->pair[r]->refs--;
	h->npairs = 0;
}

/* A row read from MariaDB: the shared state replaces this host's (the
 * tally and the penalty from the defaults stay). */
static void
pacer_merge(void *arg, const struct pacing_pair *row)
{
	struct process *p = arg;
	struct pacer_pair *pp = pacer_find(p, row->key, row->egress);
	struct pacing_pair keep;

	pacer_rows_add(p, row->key, row->egress);
	if (pp == NULL)
		return;		/* not used here */
	keep = pp->s;
	pp->s = *row;
	pp->s.penalty_ms = keep.penalty_ms;
	memcpy(pp->s.tally, keep.tally, sizeof(keep.tally));
	memcpy(pp->s.tally_slot, keep.tally_slot, sizeof(keep.tally_slot));
	pp->s.asked = keep.asked;
	pp->s.asked_at = keep.asked_at;
	pp->s.grow_from = keep.grow_from;
}

/* The routes marked down by any worker (egress_down.h; only with several
 * routes), read every PACER_SYNC_MS: before sessions are started. */
void
pacer_routes_sync(struct process *p, int64_t now)
{
	if (pacer_routes(p) <= 1 || (p->egress_synced != 0 &&
	    now - p->egress_synced < PACER_SYNC_MS))
		return;
	p->egress_synced = now;
	if (egress_down_read(p->db, verify_engine_smtp(p->engine)->egress,
	    now) != DB_OK)
		log_error("event=egress_down_read error=\"%s\"",
		    db_error(p->db));
}

/* Every stored pair: merged into this process's, and the rows noted. */
static void
pacer_read(struct process *p, int64_t now)
{
	p->pacer_synced = now;
	pacer_rows_clear(p);
	if (pacing_db_read(p->db, NULL, now, pacer_merge, p) != DB_OK)
		log_error("event=pacing_read error=\"%s\"", db_error(p->db));
	if (p->npacer_rows > 1)
		qsort(p->pacer_rows, p->npacer_rows, sizeof(*p->pacer_rows),
		    pacer_rows_cmp);
}

/* Every PACER_SYNC_MS while pairs are in use: the shared state; unused
 * pairs are forgotten. */
void
pacer_sync(struct process *p, int64_t now)
{
	struct pacer_pair **pq, *pp;
	int any = 0;

	for (pq = &p->pairs; (pp = *pq) != NULL; ) {
		if (pp->refs <= 0 && now >= pp->s.penalty_until &&
		    now >= pp->s.paused_until) {
			*pq = pp->next;
			free(pp);
			continue;
		}
		any = 1;
		pq = &pp->next;
	}
	if (!any || now - p->pacer_synced < PACER_SYNC_MS)
		return;
	pacer_read(p, now);
}

void
pacer_read_new(struct process *p, int64_t now)
{
	if (!p->pacer_new)
		return;
	p->pacer_new = 0;
	pacer_read(p, now);
}

/* The host's pair for route; NULL when the host has none (a host by
 * address) or, when pairs are missing, a sign that nothing may go. */
static struct pacer_pair *
pacer_route_pair(const struct process_host *h, size_t route, int *missing)
{
	*missing = 0;
	if (h == NULL || h->npairs == 0) {
		*missing = h != NULL && h->name[0] != '[';
		return NULL;
	}
	return h->pair[route % h->npairs];
}

/* Whether the host's sessions may take route r (its provider's pin). */
static int
pacer_route_usable(const struct process_host *h, size_t r)
{
	return h->opts == NULL || egress_in(h->opts->routes, r);
}

int
pacer_may_send(const struct process_host *h, size_t route, int64_t now)
{
	struct pacer_pair *pp;
	int missing;

	pp = pacer_route_pair(h, route, &missing);
	return !missing && (pp == NULL || pacing_may_send(&pp->s, now));
}

int
pacer_session_room(const struct process *p, const struct process_host *h,
    size_t route)
{
	struct pacer_pair *pp;
	int missing;

	pp = pacer_route_pair(h, route, &missing);
	return pp == NULL || !pp->s.paced || p->pconf.pair_sessions == 0 ||
	    pp->sessions < p->pconf.pair_sessions;
}

void
pacer_session_count(struct process_host *h, size_t route, int delta)
{
	struct pacer_pair *pp;
	int missing;

	if ((pp = pacer_route_pair(h, route, &missing)) != NULL)
		pp->sessions += delta;
}

int
pacer_host_paced(const struct process_host *h)
{
	size_t r;

	for (r = 0; h != NULL && r < h->npairs; r++)
		if (h->pair[r]->s.paced)
			return 1;
	return 0;
}

int
pacer_any_may_send(const struct process_host *h, int64_t now)
{
	size_t r;

	if (h == NULL || h->npairs == 0)
		return pacer_may_send(h, 0, now);
	for (r = 0; r < h->npairs; r++)
		if (pacer_route_usable(h, r) &&
		    pacing_may_send(&h->pair[r]->s, now))
			return 1;
	return 0;
}

int
pacer_past_patience(const struct process *p, const struct process_host *h,
    int64_t waiting_since, int64_t now)
{
	size_t r;

	if (h == NULL || h->npairs == 0)
		return 0;
	for (r = 0; r < h->npairs; r++)
		if (pacer_route_usable(h, r) &&
		    !pacing_past_patience(&h->pair[r]->s, &p->pconf,
		    waiting_since, now))
			return 0;
	return 1;
}

struct pacer_pair *
pacer_outlook(const struct process *p, const struct process_host *h,
    int64_t now, int64_t *wait_ms, long *per_min)
{
	struct pacer_pair *first = NULL, *pp;
	int64_t until, wait = INT64_MAX;
	size_t r;

	*wait_ms = 0;
	*per_min = 0;
	if (h == NULL || h->npairs == 0)
		return NULL;
	for (r = 0; r < h->npairs; r++) {
		if (!pacer_route_usable(h, r))
			continue;
		pp = h->pair[r];
		if (!pp->s.paced)
			return NULL;
		if (first == NULL)
			first = pp;
		if ((until = pacer_pair_wait(pp, now)) < wait)
			wait = until;
		*per_min += pacing_rate(&pp->s, &p->pconf, now);
	}
	if (first == NULL || *per_min <= 0)
		return NULL;
	*wait_ms = wait;
	return first;
}

int64_t
pacer_defer_slot(struct pacer_pair *pp, int64_t earliest, size_t count,
    long per_min)
{
	int64_t start = earliest > pp->deferred_until ? earliest :
	    pp->deferred_until;

	pp->deferred_until = start + (int64_t)count * 60000 / per_min;
	return start;
}

void
pacer_pair_hold(struct pacer_pair *pp, int delta)
{
	pp->refs += delta;
}

int64_t
pacer_pair_wait(const struct pacer_pair *pp, int64_t now)
{
	int64_t until = pp->s.penalty_until > pp->s.paused_until ?
	    pp->s.penalty_until : pp->s.paused_until;

	return until > now ? until - now : 0;
}

int
pacer_pull_due(struct pacer_pair *pp, int64_t now, int64_t every_ms)
{
	if (pp->pulled_at != 0 && now - pp->pulled_at < every_ms)
		return 0;
	pp->pulled_at = now;
	return 1;
}

const char *
pacer_reason(const struct process_host *h)
{
	size_t r;

	for (r = 0; h != NULL && r < h->npairs; r++)
		if (pacer_route_usable(h, r) && h->pair[r]->s.reason[0])
			return h->pair[r]->s.reason;
	return "paused by pacing";
}

/* How many of want RCPTs may go to the host by route now: want when its
 * pair is not paced; else what its budget in MariaDB grants (0: wait). */
size_t
pacer_allow(struct process *p, struct process_host *h, size_t route,
    size_t want, int64_t now)
{
	struct pacer_pair *pp;
	long limit, granted = 0;
	long long shared_ago = -1;
	int missing;

	pp = pacer_route_pair(h, route, &missing);
	if (missing)
		return 0;
	if (pp == NULL || want == 0)
		return want;
	if (!pacing_may_send(&pp->s, now))
		return 0;
	/* a paced pair the database does not hold yet (a new route, a row
	 * purged) for a host whose profile kept the rate it said "slow down"
	 * at: it runs just under that rate from the start instead of growing
	 * into a 421 again. (An unpaced pair, a host no default names, stays
	 * unpaced: such a host's 421 on one route says nothing of another's,
	 * as a host limiting one source address shows.) */
	if (pp->s.paced && !pp->s.stored && pp->s.learned_rate <= 0 &&
	    h->prof.rate_421 > 0)
		pacing_learn_from_profile(&pp->s, &p->pconf, h->prof.rate_421,
		    now);
	if (!pp->s.paced)
		return want;
	if (now < pp->next_take)
		return 0;
	if (!pp->s.stored) {
		if (pacing_db_store(p->db, &pp->s, 1, now) == DB_OK)
			pp->s.stored = 1;
	}
	/* a pair idle here may be in use by another worker (or an earlier
	 * run): only an idle budget starts its growth again */
	if (!pacing_asked_lately(&pp->s, &p->pconf, now) &&
	    pacing_db_last_take(p->db, &pp->s, &shared_ago) != DB_OK)
		shared_ago = -1;
	pacing_note_asked(&pp->s, &p->pconf, now, shared_ago);
	limit = pacing_window_limit(&pp->s, &p->pconf, now);
	if (pacing_db_take(p->db, &pp->s, limit, (long)want,
	    p->pconf.window_ms, &granted) != DB_OK) {
		log_error("event=pacing_take pair=%s error=\"%s\"", pp->s.key,
		    db_error(p->db));
		granted = 0;
	}
	if (granted <= 0) {
		pp->next_take = now + PACER_RETRY_MS;
		return 0;
	}
	log_debug("event=pacing_take pair=%s egress=%s limit=%ld granted=%ld",
	    pp->s.key, pp->s.egress, limit, granted);
	return (size_t)granted < want ? (size_t)granted : want;
}

/* ---------------------------------------------------------------- learning */

/* A transaction of the domain ended (s: its answers; total RCPTs, the
 * probe's included; answered of them; before: RCPTs its session sent
 * before it; failed: a later transaction that failed, which teaches
 * nothing of the rate; taken: when its RCPTs were taken). 1 when the
 * answers paused the pair. */
int
pacer_learn(struct process *p, struct process_domain *d,
    const struct smtp_session *s, size_t total, size_t answered,
    size_t before, int failed, int64_t taken, int64_t now)
{
	const struct smtp_session_info *si = smtp_session_info(s);
	struct process_host *h = d->host[PROCESS_BY_NAME];
	struct pacer_pair *pp = h != NULL && h->npairs > 0 ?
	    h->pair[si->route_index % h->npairs] : NULL;	/* the route used */
	const struct smtp_rcpt_result *rr;
	struct mxprofile n;
	char why[PACING_REASON_MAX];
	size_t i;
	int block = 0, heard = 0, t, dirty = 0;

	if (h == NULL)
		return 0;
	mxprofile_init(&n, h->name);
	/* RCPTs a session takes: 452 4.5.3 "too many recipients" */
	for (i = 0; i < total; i++) {
		rr = smtp_session_rcpt(s, i);
		if (rr != NULL && domains_too_many(rr)) {
			n.rcpts_per_session = (int)(before + i) > 0 ?
			    (int)(before + i) : 1;
			for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
				if (d->host[t] != NULL &&
				    (d->host[t]->session_limit == 0 ||
				    d->host[t]->session_limit >
				    n.rcpts_per_session))
					d->host[t]->session_limit =
					    n.rcpts_per_session;
			if (h->prof.rcpts_per_session != n.rcpts_per_session) {
				h->prof.rcpts_per_session = n.rcpts_per_session;
				dirty = 1;
				log_info("event=mx_rcpt_limit host=%s "
				    "rcpts_per_session=%d", h->name,
				    n.rcpts_per_session);
			}
			break;
		}
	}
	if (si->outcome == SMTP_OUTCOME_OK && si->stage != SMTP_STATE_INIT &&
	    h->prof.starttls != (si->starttls_offered ? 1 : 0)) {
		n.starttls = h->prof.starttls = si->starttls_offered ? 1 : 0;
		dirty = 1;
	}
	if (d->b.probe == VERIFY_PROBE_KNOWN &&
	    h->prof.accept_all != (d->b.accept_all ? 1 : 0)) {
		n.accept_all = h->prof.accept_all = d->b.accept_all ? 1 : 0;
		dirty = 1;
	}
	if (pp != NULL) {
		pacing_tally_add(&pp->s, (long)answered, now);
		heard = !failed && pacing_signal(verify_engine_smtp(p->engine)->
		    rules, s, total, &block, why, sizeof(why)) != NULL;
		if (heard && !block && pacing_echo(&pp->s, taken, now)) {
			/* the penalty is already for this one */
			log_info("event=pacing_echo pair=%s egress=%s host=%s "
			    "reply=\"%s\"", pp->s.key, pp->s.egress, h->name,
			    why);
			heard = 0;
		}
		if (heard) {
			if (block)
				pacing_block(&pp->s, &p->pconf, why, now);
			else if (pacing_slow_down(&pp->s, &p->pconf, why, now))
				block = 1;
			if (pacing_db_store(p->db, &pp->s, 0, now) == DB_OK)
				pp->s.stored = 1;
			else
				log_error("event=pacing_store pair=%s "
				    "error=\"%s\"", pp->s.key, db_error(p->db));
			log_info("event=%s pair=%s egress=%s host=%s rate=%ld "
			    "learned=%ld strikes=%d penalty_ms=%ld reply=\"%s\"",
			    block ? "pacing_pause" : "pacing_slow_down",
			    pp->s.key, pp->s.egress, h->name,
			    pacing_rate(&pp->s, &p->pconf, now),
			    pp->s.learned_rate, pp->s.strikes,
			    block ? p->pconf.pause_ms : pp->s.penalty_ms, why);
			if (block) {
				snprintf(n.last_block, sizeof(n.last_block),
				    "%s", why);
				dirty = 1;
			} else if (h->prof.rate_421 != (int)pp->s.learned_rate) {
				n.rate_421 = h->prof.rate_421 =
				    (int)pp->s.learned_rate;
				dirty = 1;
			}
		}
	}
	if (dirty)
		profiles_note(p, &n);
	return heard && block;
}

/* An address that got through greylisting after attempts tries: the
 * delay that worked. */
void
pacer_greylist_passed(struct process *p, struct process_domain *d,
    int attempts)
{
	struct process_host *h = d->host[PROCESS_BY_NAME];
	struct mxprofile n;
	int delay = (int)(attempts * p->grey_delay);

	if (h == NULL || attempts <= 0 || h->prof.greylist_delay_s == delay)
		return;
	mxprofile_init(&n, h->name);
	n.greylist_delay_s = h->prof.greylist_delay_s = delay;
	profiles_note(p, &n);
}

long
pacer_greylist_wait(const struct process *p, const struct process_domain *d,
    const struct process_addr *pa)
{
	const struct process_host *h = d->host[PROCESS_BY_NAME];

	if (pa->attempts > 0 || h == NULL ||
	    h->prof.greylist_delay_s <= p->grey_delay)
		return 0;
	return h->prof.greylist_delay_s;
}
