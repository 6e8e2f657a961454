/* pacer.c: svc-worker's side of reputation-aware pacing and of the mail
 * host profiles (sched.h; the design is in engine/pacing.h and
 * engine/mxprofile.h). Each MX host (by name) of the domains held has a
 * pair: (the shipped default's pattern, or the host's name; the provider
 * of item 1 when it comes) x the egress route ("direct" until item 5's
 * routes). A pair that is not paced costs nothing: no statement, no wait.
 * A paced one takes its RCPTs from the budget in MariaDB before each
 * transaction; every second the pairs are read again, so that what one
 * worker host learned (a penalty, a pause, a learned rate) holds for all.
 * After a session: the RCPTs answered are tallied, a "slow down" or a
 * block changes the pair (stored at once), and what the host showed of
 * itself (RCPTs per session, STARTTLS, catch-all, greylisting) is noted
 * in its profile when it differs from what was known. */
#include "engine/mxprofile.h"
#include "engine/pacing.h"
#include "engine/smtp_classify.h"
#include "engine/verify.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "worker/sched.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PACER_SYNC_MS		1000	/* pairs read again */
#define PACER_RETRY_MS		200	/* a full window asked again */

struct pacer_pair {
	struct pacing_pair	 s;
	int64_t			 next_take;
	int			 refs;
	struct pacer_pair	*next;
};

void
pacer_init(struct process *p)
{
	const struct conf *c = p->conf;
	struct buf msg;
	const char *m;
	size_t lines = 0;

	p->pconf.window_ms = conf_int(c, CONF_PACING_WINDOW_MS);
	p->pconf.penalty_ms = conf_int(c, CONF_PACING_PENALTY_MS);
	p->pconf.pause_ms = conf_int(c, CONF_PACING_PAUSE_MS);
	p->pconf.patience_ms = conf_int(c, CONF_PACING_PATIENCE_MS);
	p->pconf.max_rate = conf_int(c, CONF_PACING_MAX_RATE);
	p->pconf.block_strikes = (int)conf_int(c, CONF_PACING_BLOCK_STRIKES);
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

void
pacer_free(struct process *p)
{
	struct pacer_pair *pp;

	while ((pp = p->pairs) != NULL) {
		p->pairs = pp->next;
		free(pp);
	}
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

/* The pair of an MX host (provider: the id mx_providers.txt gives it, or
 * NULL or "" when none). */
struct pacer_pair *
pacer_pair(struct process *p, const char *mx_host, const char *provider)
{
	const struct pacing_default *d;
	struct pacer_pair *pp;
	const char *key;

	d = pacing_defaults_match(&p->pdefaults, provider, mx_host);
	key = d ? d->pattern : provider && provider[0] ? provider : mx_host;
	if ((pp = pacer_find(p, key, PACING_EGRESS_DIRECT)) == NULL) {
		if ((pp = calloc(1, sizeof(*pp))) == NULL)
			return NULL;
		pacing_pair_init(&pp->s, &p->pconf, key, PACING_EGRESS_DIRECT,
		    d, timeutil_mono_ms());
		pp->next = p->pairs;
		p->pairs = pp;
	}
	pp->refs++;
	return pp;
}

void
pacer_unref(struct pacer_pair *pp)
{
	if (pp != NULL)
		pp->refs--;
}

/* A row read from MariaDB: the shared state replaces this host's (the
 * tally and the penalty from the defaults stay). */
static void
pacer_merge(void *arg, const struct pacing_pair *row)
{
	struct process *p = arg;
	struct pacer_pair *pp = pacer_find(p, row->key, row->egress);
	struct pacing_pair keep;

	if (pp == NULL)
		return;		/* not used here */
	keep = pp->s;
	pp->s = *row;
	pp->s.penalty_ms = keep.penalty_ms;
	memcpy(pp->s.tally, keep.tally, sizeof(keep.tally));
	memcpy(pp->s.tally_sec, keep.tally_sec, sizeof(keep.tally_sec));
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
	p->pacer_synced = now;
	if (pacing_db_read(p->db, now, pacer_merge, p) != DB_OK)
		log_error("event=pacing_read error=\"%s\"", db_error(p->db));
}

int
pacer_may_send(const struct pacer_pair *pp, int64_t now)
{
	return pp == NULL || pacing_may_send(&pp->s, now);
}

int
pacer_past_patience(const struct process *p, const struct pacer_pair *pp,
    int64_t now)
{
	return pp != NULL && pacing_past_patience(&pp->s, &p->pconf, now);
}

const char *
pacer_reason(const struct pacer_pair *pp)
{
	return pp != NULL && pp->s.reason[0] ? pp->s.reason :
	    "paused by pacing";
}

/* How many of want RCPTs may go to the pair now: want when it is not
 * paced; else what its budget in MariaDB grants (0: wait). */
size_t
pacer_allow(struct process *p, struct pacer_pair *pp, size_t want, int64_t now)
{
	long limit, granted = 0;

	if (pp == NULL || want == 0)
		return want;
	if (!pacing_may_send(&pp->s, now))
		return 0;
	if (!pp->s.paced)
		return want;
	if (now < pp->next_take)
		return 0;
	if (!pp->s.stored) {
		if (pacing_db_store(p->db, &pp->s, 1, now) == DB_OK)
			pp->s.stored = 1;
	}
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

static void
pacer_note(struct process *p, const struct mxprofile *n)
{
	if (mxprofile_note(p->db, n) != DB_OK)
		log_error("event=mx_profile_note host=%s error=\"%s\"", n->host,
		    db_error(p->db));
}

/* The reply of the session that says "slow down" or blocks us, or NULL. */
static const char *
pacer_signal(const struct smtp_rules *rules, const struct smtp_session *s,
    const struct smtp_session_info *si,
    size_t total, int *block, char *why, size_t whysz)
{
	const struct smtp_rcpt_result *rr;
	size_t i, blocked = 0, answered = 0;

	*block = 0;
	for (i = 0; i < total; i++) {
		if ((rr = smtp_session_rcpt(s, i)) == NULL || rr->code == 0)
			continue;
		answered++;
		if (pacing_is_block(rr->code, rr->enhanced, rr->verdict))
			blocked++;
		if (pacing_is_slow_down(rr->code, rr->enhanced, rr->text,
		    rr->verdict)) {
			snprintf(why, whysz, "%d %s %s", rr->code, rr->enhanced,
			    rr->text ? rr->text : "");
			return why;
		}
	}
	if (pacing_is_slow_down(si->code, si->enhanced, si->text,
	    smtp_classify_rcpt(rules, NULL, si->code, si->enhanced,
	    si->text)) && (si->outcome == SMTP_OUTCOME_TEMPFAIL ||
	    si->outcome == SMTP_OUTCOME_REFUSED_AT_BANNER ||
	    si->outcome == SMTP_OUTCOME_DISCONNECTED)) {
		snprintf(why, whysz, "%d %s %s", si->code, si->enhanced,
		    si->text ? si->text : "");
		return why;
	}
	/* a block: the session refused with 5.7.x, or every RCPT blocked */
	if ((si->outcome == SMTP_OUTCOME_BLOCKED ||
	    si->outcome == SMTP_OUTCOME_REFUSED_AT_BANNER) &&
	    si->code / 100 == 5 && strncmp(si->enhanced, "5.7.", 4) == 0) {
		*block = 1;
		snprintf(why, whysz, "%d %s %s", si->code, si->enhanced,
		    si->text ? si->text : "");
		return why;
	}
	if (answered >= 2 && blocked == answered &&
	    (rr = smtp_session_rcpt(s, 0)) != NULL) {
		*block = 1;
		snprintf(why, whysz, "%d %s %s", rr->code, rr->enhanced,
		    rr->text ? rr->text : "");
		return why;
	}
	return NULL;
}

/* A transaction of the domain ended (s: its answers; total RCPTs, the
 * probe's included; answered of them; before: RCPTs its session sent
 * before it; failed: a later transaction that failed, which teaches
 * nothing of the rate). */
void
pacer_learn(struct process *p, struct process_domain *d,
    const struct smtp_session *s, size_t total, size_t answered,
    size_t before, int failed, int64_t now)
{
	const struct smtp_session_info *si = smtp_session_info(s);
	struct process_host *h = d->host[PROCESS_BY_NAME];
	struct pacer_pair *pp = h ? h->pair : NULL;
	const struct smtp_rcpt_result *rr;
	struct mxprofile n;
	char why[PACING_REASON_MAX];
	size_t i;
	int block, t, dirty = 0;

	if (h == NULL)
		return;
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
		if (!failed && pacer_signal(verify_engine_smtp(p->engine)->rules,
		    s, si, total, &block, why, sizeof(why)) != NULL) {
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
		pacer_note(p, &n);
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
	pacer_note(p, &n);
}

/* A new MX host: its profile (what other workers learned of it). */
void
pacer_host_new(struct process *p, struct process_host *h)
{
	int found = 0;

	if (mxprofile_get(p->db, h->name, &h->prof, &found) != DB_OK) {
		log_error("event=mx_profile_read host=%s error=\"%s\"", h->name,
		    db_error(p->db));
		return;
	}
	if (found && h->prof.rcpts_per_session > 0)
		h->session_limit = h->prof.rcpts_per_session;
}
