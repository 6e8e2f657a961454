/* verify_many.c: many addresses at once through the batch face
 * (verify_many.h). The addresses are grouped by domain; each domain runs
 * one session at a time (its first carries the catch-all probe, so the
 * answer is known before the next), and the sessions of all domains are
 * stepped from one poll, within the number allowed at once and to one
 * host. */
#include "engine/verify_many.h"
#include "engine/verify_batch.h"
#include "util/log.h"
#include "util/timeutil.h"
#include <poll.h>
#include <stdlib.h>
#include <string.h>

struct verify_many_domain {
	struct verify_batch	 b;
	size_t			*idx;		/* its items, waiting for SMTP */
	size_t			 n, next;	/* next: the first not started */
	struct smtp_session	*s;		/* the running session */
	size_t			 first, count;	/* its items: idx[first..] */
	int			 probe;		/* it carries the probe */
};

struct verify_many_run {
	struct verify_engine		*e;
	struct db			*db;
	const struct verify_many_opts	*o;
	struct verify_item		*items;
	struct verify_many_domain	*d;
	size_t				 nd;
	int				 running;
	enum verify_err			 rc;
};

static int
verify_many_cmp(const void *x, const void *y, void *arg)
{
	const struct verify_item *it = arg;
	const size_t *a = x, *b = y;

	return strcmp(it[*a].a.ascii_domain, it[*b].a.ascii_domain);
}

/* The MX host a session would go to first (by name), "" for none. */
static const char *
verify_many_host(const struct verify_many_domain *d)
{
	return d->b.resolved && d->b.mx.nhosts > 0 ? d->b.mx.hosts[0].name :
	    "";
}

static int
verify_many_host_busy(const struct verify_many_run *m,
    const struct verify_many_domain *d)
{
	const char *h = verify_many_host(d);
	size_t i;
	int k = 0;

	for (i = 0; i < m->nd; i++)
		if (m->d[i].s != NULL && strcmp(verify_many_host(&m->d[i]), h)
		    == 0)
			k++;
	return k >= m->o->per_host;
}

/* Into the verdict cache every tenant shares, only a final answer: an
 * unknown here (greylisted, unreachable, past the deadline) was never
 * retried as a job's would be, and would be served to the next
 * verification of the address for the cache's time. */
static void
verify_many_store(struct verify_many_run *m, const struct verify_result *r)
{
	if (r->v.status != VERDICT_UNKNOWN)
		verify_store(m->db, r);
}

static void
verify_many_conclude(struct verify_many_run *m, struct verify_many_domain *d,
    size_t i, const struct smtp_session *s, size_t rcpt)
{
	struct verify_item *it = &m->items[i];

	if (verify_batch_item_conclude(m->e, m->db, &d->b, it, s, rcpt) !=
	    VERIFY_OK)
		m->rc = VERIFY_ERR_DB;
	verify_many_store(m, &it->r);
}

/* Starts the next session of a domain: its next items, led by the probe
 * while the catch-all answer is not known. */
static void
verify_many_start(struct verify_many_run *m, struct verify_many_domain *d,
    int64_t now)
{
	struct verify_item *v[256];
	size_t k, i;

	k = d->n - d->next;
	if (k > (size_t)m->o->rcpts)
		k = (size_t)m->o->rcpts;
	if (k > sizeof(v) / sizeof(v[0]))
		k = sizeof(v) / sizeof(v[0]);
	for (i = 0; i < k; i++)
		v[i] = &m->items[d->idx[d->next + i]];
	d->first = d->next;
	d->count = k;
	d->next += k;
	d->s = verify_batch_session(m->e, m->db, &d->b, v, k,
	    m->o->deadline - now, &d->probe);
	if (d->s != NULL) {
		m->running++;
		return;
	}
	for (i = 0; i < k; i++)		/* no session: unreachable, or paced */
		if (d->b.paced_out) {
			if (verify_batch_item_conclude_paused(m->e, m->db,
			    &d->b, &m->items[d->idx[d->first + i]]) !=
			    VERIFY_OK)
				verify_many_conclude(m, d,
				    d->idx[d->first + i], NULL, 0);
		} else
			verify_many_conclude(m, d, d->idx[d->first + i], NULL,
			    0);
}

static void
verify_many_finish(struct verify_many_run *m, struct verify_many_domain *d)
{
	size_t i;

	verify_engine_learn(m->e, m->db, &d->b, d->s);
	if (d->probe)
		verify_batch_probe_done(m->db, &d->b, d->s);
	for (i = 0; i < d->count; i++)
		verify_many_conclude(m, d, d->idx[d->first + i], d->s, i);
	smtp_session_free(d->s);
	d->s = NULL;
	m->running--;
}

/* Starts what may start, then steps every session from one poll. */
static void
verify_many_turn(struct verify_many_run *m, struct pollfd *pfd)
{
	int64_t now = timeutil_mono_ms(), deadline, next;
	size_t i, np = 0, *owner;
	short events;
	int fd, wait;

	for (i = 0; i < m->nd && m->running < m->o->sessions; i++)
		if (m->d[i].s == NULL && m->d[i].next < m->d[i].n &&
		    !verify_many_host_busy(m, &m->d[i]))
			verify_many_start(m, &m->d[i], now);
	owner = (size_t *)(pfd + m->nd);
	next = m->o->deadline;
	for (i = 0; i < m->nd; i++) {
		if (m->d[i].s == NULL)
			continue;
		if (!smtp_session_poll(m->d[i].s, &fd, &events, &deadline)) {
			verify_many_finish(m, &m->d[i]);
			continue;
		}
		if (deadline < next)
			next = deadline;
		pfd[np].fd = fd;
		pfd[np].events = events;
		pfd[np].revents = 0;
		owner[np++] = i;
	}
	if (np == 0)
		return;
	wait = next > now ? (int)(next - now) : 0;
	(void)poll(pfd, np, wait > 1000 ? 1000 : wait);
	now = timeutil_mono_ms();
	for (i = 0; i < np; i++)
		if (!smtp_session_step(m->d[owner[i]].s, pfd[i].revents, now))
			verify_many_finish(m, &m->d[owner[i]]);
}

/* Groups the items waiting for SMTP by domain, with their MX answers;
 * the ones the answer settles are concluded here. */
static int
verify_many_domains(struct verify_many_run *m, size_t *wait, size_t nw)
{
	struct verify_many_domain *d;
	struct dns_mx_result mx;
	size_t i, j, k;

	qsort_r(wait, nw, sizeof(*wait), verify_many_cmp, m->items);
	if ((m->d = calloc(nw ? nw : 1, sizeof(*m->d))) == NULL)
		return -1;
	for (i = 0; i < nw; i = j) {
		for (j = i; j < nw && strcmp(m->items[wait[j]].a.ascii_domain,
		    m->items[wait[i]].a.ascii_domain) == 0; j++)
			;
		d = &m->d[m->nd++];
		verify_batch_init(&d->b, m->items[wait[i]].a.ascii_domain);
		if (!verify_batch_mx_cached(m->db, &d->b)) {
			verify_engine_lookup_mx(m->e, d->b.domain, &mx);
			verify_batch_mx_answer(m->db, &d->b, &mx);
		}
		d->idx = wait + i;
		for (k = i; k < j; k++) {
			if (verify_batch_item_with_mx(m->e, &d->b,
			    &m->items[wait[k]]) == VERIFY_STEP_DONE)
				verify_many_store(m, &m->items[wait[k]].r);
			else
				d->idx[d->n++] = wait[k];
		}
	}
	return 0;
}

enum verify_err
verify_many(struct verify_engine *e, struct db *db, const char *account,
    const char *const *emails, size_t n, const struct verify_many_opts *o,
    struct verify_result *out)
{
	struct verify_many_run m;
	struct verify_item **look = NULL;
	struct pollfd *pfd = NULL;
	size_t *wait = NULL, nw = 0, nl = 0, i, k;

	memset(&m, 0, sizeof(m));
	m.e = e;
	m.db = db;
	m.o = o;
	m.rc = VERIFY_OK;
	if ((m.items = calloc(n ? n : 1, sizeof(*m.items))) == NULL ||
	    (look = calloc(n ? n : 1, sizeof(*look))) == NULL ||
	    (wait = calloc(n ? n : 1, sizeof(*wait))) == NULL) {
		m.rc = VERIFY_ERR_INTERNAL;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (verify_batch_item_begin(e, emails[i], &m.items[i]) ==
		    VERIFY_STEP_NEXT)
			look[nl++] = &m.items[i];
	verify_batch_lookup(e, db, account, look, nl);
	for (k = 0; k < nl; k++)
		if (!look[k]->r.cached)
			wait[nw++] = (size_t)(look[k] - m.items);
	verify_engine_deadline(e, o->deadline);
	if (verify_many_domains(&m, wait, nw) == -1 ||
	    (pfd = calloc(m.nd ? m.nd : 1, sizeof(*pfd) + sizeof(size_t))) ==
	    NULL) {
		m.rc = VERIFY_ERR_INTERNAL;
		goto out;
	}
	for (;;) {
		for (i = 0, k = 0; i < m.nd; i++)
			if (m.d[i].s != NULL || m.d[i].next < m.d[i].n)
				k++;
		if (k == 0 || timeutil_mono_ms() >= o->deadline)
			break;
		verify_many_turn(&m, pfd);
	}
	/* Past the deadline: what is left is unknown (unreachable). */
	for (i = 0; i < m.nd; i++) {
		if (m.d[i].s != NULL) {
			smtp_session_free(m.d[i].s);
			m.d[i].s = NULL;
			m.d[i].next = m.d[i].first;
		}
		for (k = m.d[i].next; k < m.d[i].n; k++)
			verify_many_conclude(&m, &m.d[i], m.d[i].idx[k], NULL,
			    0);
	}
	for (i = 0; i < n; i++)
		out[i] = m.items[i].r;
out:
	verify_engine_deadline(e, 0);
	for (i = 0; i < m.nd; i++)
		verify_batch_free(&m.d[i].b);
	free(m.d);
	free(pfd);
	free(wait);
	free(look);
	free(m.items);
	return m.rc;
}
