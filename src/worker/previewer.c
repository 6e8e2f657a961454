/* previewer.c: an upload job's preview (previewer.h). The addresses are
 * taken domain by domain (sorted), so one domain's batch is alive at a
 * time however many addresses the job has: a domain whose MX answer is in
 * the DNS cache is checked at once, the others are handed to resolver
 * threads and checked as their answers come back. Each address goes
 * through the engine's batch face as a job's would (syntax and sandbox,
 * the lists, the MX answer); the ones that still need SMTP form the pool
 * the random sample is drawn from. */
#include "worker/previewer.h"
#include "engine/verify_batch.h"
#include "engine/verify_many.h"
#include "jobs/preview.h"
#include "jobs/suppressions.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "worker/resolver.h"
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define PREVIEWER_RESOLVERS	8	/* MX lookups at once */
#define PREVIEWER_SUBMITTED	256	/* lookups handed over, not answered */

/* The addresses of one domain: order[first..first+n). */
struct previewer_group {
	const char	*domain;
	size_t		 first, n;
	int		 done;
};

struct previewer {
	const struct conf		*conf;
	struct verify_engine		*e;
	struct db			*db;
	const struct previewer_list	*l;
	struct suppressions_set		*sup;
	size_t				*order;		/* by domain */
	struct previewer_group		*g;
	size_t				 ng;
	size_t				*pool;		/* need SMTP */
	size_t				 npool;
	struct preview_tally		 t;
	struct verify_item		 it;		/* scratch */
};

static int
previewer_cmp(const void *x, const void *y, void *arg)
{
	char *const *d = arg;
	const size_t *a = x, *b = y;
	int c = strcmp(d[*a], d[*b]);

	return c ? c : (*a > *b) - (*a < *b);
}

/* One address with its domain's batch (NULL for the entries that are not
 * addresses: syntax settles them). */
static void
previewer_check(struct previewer *p, struct verify_batch *b, size_t i)
{
	struct verify_item *it = &p->it;
	struct preview_tally *t = &p->t;
	enum verify_step st;
	int suppressed;

	memset(it, 0, sizeof(*it));
	if (verify_batch_item_begin(p->e, p->l->emails[i], it) ==
	    VERIFY_STEP_DONE) {
		if (it->r.v.kind == VERDICT_K_INVALID_SYNTAX)
			t->syntax_invalid++;
		t->resolved_without_smtp++;
		t->resolved[it->r.v.classification]++;
		return;
	}
	suppressed = suppressions_has(p->sup, &it->a);
	t->suppressed += suppressed;
	t->role_based += it->r.role != 0;
	t->free_provider += it->r.free_provider != 0;
	t->disposable += it->r.disposable != 0;
	st = b != NULL ? verify_batch_item_with_mx(p->e, b, it) :
	    VERIFY_STEP_NEXT;
	if (st == VERIFY_STEP_DONE && (it->r.v.kind ==
	    VERDICT_K_INVALID_DOMAIN || it->r.v.kind == VERDICT_K_NO_MX))
		t->no_mx++;
	if (suppressed) {
		t->resolved_without_smtp++;
		t->resolved[PREVIEW_INVALID]++;
	} else if (st == VERIFY_STEP_DONE) {
		t->resolved_without_smtp++;
		t->resolved[it->r.v.classification]++;
	} else {
		t->needs_smtp++;
		p->pool[p->npool++] = i;
	}
}

static void
previewer_group_check(struct previewer *p, struct previewer_group *g,
    struct verify_batch *b)
{
	size_t k;

	for (k = 0; k < g->n; k++)
		previewer_check(p, b, p->order[g->first + k]);
	g->done = 1;
}

/* The groups, addresses of one domain each ("" first: not addresses). */
static int
previewer_groups(struct previewer *p)
{
	const struct previewer_list *l = p->l;
	size_t i;

	if ((p->order = calloc(l->n ? l->n : 1, sizeof(*p->order))) == NULL ||
	    (p->g = calloc(l->n ? l->n : 1, sizeof(*p->g))) == NULL ||
	    (p->pool = calloc(l->n ? l->n : 1, sizeof(*p->pool))) == NULL)
		return -1;
	for (i = 0; i < l->n; i++)
		p->order[i] = i;
	qsort_r(p->order, l->n, sizeof(*p->order), previewer_cmp, l->domains);
	for (i = 0; i < l->n; i++) {
		const char *d = l->domains[p->order[i]];

		if (p->ng == 0 || strcmp(p->g[p->ng - 1].domain, d) != 0) {
			p->g[p->ng].domain = d;
			p->g[p->ng].first = i;
			p->ng++;
		}
		p->g[p->ng - 1].n++;
	}
	return 0;
}

static struct previewer_group *
previewer_find(struct previewer *p, const char *domain)
{
	size_t lo = 0, hi = p->ng, mid;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if ((c = strcmp(p->g[mid].domain, domain)) == 0)
			return &p->g[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Answers that came back: their groups checked. */
static size_t
previewer_answers(struct previewer *p, struct resolver *r)
{
	struct resolver_answer a[16];
	struct previewer_group *g;
	struct verify_batch b;
	size_t n, i, got = 0;

	while ((n = resolver_answers(r, a, 16)) > 0) {
		for (i = 0; i < n; i++) {
			verify_batch_init(&b, a[i].domain);
			verify_batch_mx_answer(p->db, &b, &a[i].mx);
			if ((g = previewer_find(p, a[i].domain)) != NULL &&
			    !g->done)
				previewer_group_check(p, g, &b);
			verify_batch_free(&b);
		}
		got += n;
	}
	return got;
}

/* The free checks: every group, its MX answer from the cache or through
 * the resolver threads, within the deadline (a domain not answered by then
 * is a DNS error: unknown). */
static int
previewer_free_checks(struct previewer *p, int64_t deadline)
{
	struct verify_batch b;
	struct resolver *r;
	struct pollfd pfd;
	struct buf err;
	size_t i, out = 0;
	int64_t now;

	buf_init(&err, 256);
	r = resolver_start(p->conf, PREVIEWER_RESOLVERS, 0, &err);
	if (r == NULL) {
		log_error("event=preview_failed error=\"%s\"", buf_str(&err));
		buf_free(&err);
		return -1;
	}
	buf_free(&err);
	for (i = 0; i < p->ng; i++) {
		if (p->g[i].domain[0] == '\0') {
			previewer_group_check(p, &p->g[i], NULL);
			continue;
		}
		verify_batch_init(&b, p->g[i].domain);
		if (verify_batch_mx_cached(p->db, &b))
			previewer_group_check(p, &p->g[i], &b);
		verify_batch_free(&b);
		if (p->g[i].done)
			continue;
		while (out >= PREVIEWER_SUBMITTED &&
		    timeutil_mono_ms() < deadline) {
			pfd.fd = resolver_fd(r);
			pfd.events = POLLIN;
			(void)poll(&pfd, 1, 100);
			out -= previewer_answers(p, r);
		}
		if (resolver_submit(r, p->g[i].domain) == 0)
			out++;
	}
	while (out > 0 && (now = timeutil_mono_ms()) < deadline) {
		pfd.fd = resolver_fd(r);
		pfd.events = POLLIN;
		(void)poll(&pfd, 1, (int)(deadline - now < 100 ?
		    deadline - now : 100));
		out -= previewer_answers(p, r);
	}
	resolver_stop(r);
	/* Past the deadline: the domains not answered have a DNS error. */
	for (i = 0; i < p->ng; i++) {
		struct dns_mx_result none = { .status = DNS_ERROR };

		if (p->g[i].done)
			continue;
		verify_batch_init(&b, p->g[i].domain);
		verify_batch_mx_answer(p->db, &b, &none);
		previewer_group_check(p, &p->g[i], &b);
		verify_batch_free(&b);
	}
	return 0;
}

/* Draws the sample from the pool (a partial Fisher-Yates shuffle) and
 * verifies it. */
static int
previewer_sample(struct previewer *p, int64_t deadline)
{
	struct verify_many_opts o;
	struct verify_result *res;
	const char **emails;
	size_t k = (size_t)preview_sample_size((long long)p->npool,
	    conf_int(p->conf, CONF_PREVIEW_SMTP_MIN_ROWS)), i, j, t;
	uint64_t rnd;

	if (k == 0)
		return 0;
	if ((emails = calloc(k, sizeof(*emails))) == NULL ||
	    (res = calloc(k, sizeof(*res))) == NULL) {
		free(emails);
		return -1;
	}
	for (i = 0; i < k; i++) {
		if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			rnd = (uint64_t)random();
		j = i + (size_t)(rnd % (p->npool - i));
		t = p->pool[i];
		p->pool[i] = p->pool[j];
		p->pool[j] = t;
		emails[i] = p->l->emails[p->pool[i]];
	}
	o.sessions = (int)conf_int(p->conf, CONF_WORKER_CONCURRENCY);
	o.per_host = (int)conf_int(p->conf, CONF_WORKER_DOMAIN_CONCURRENCY);
	o.rcpts = (int)conf_int(p->conf, CONF_WORKER_RCPTS_PER_SESSION);
	o.deadline = deadline;
	if (verify_many(p->e, p->db, emails, k, &o, res) != VERIFY_OK) {
		free(emails);
		free(res);
		return -1;
	}
	p->t.sample_size = (long long)k;
	for (i = 0; i < k; i++)
		p->t.sample[res[i].v.classification]++;
	preview_coarsen(&p->t);
	free(emails);
	free(res);
	return 0;
}

char *
previewer_run(const struct conf *c, struct verify_engine *e, struct db *db,
    const char *account, const struct previewer_list *l)
{
	struct previewer p;
	int64_t start = timeutil_mono_ms(), deadline;
	char *text = NULL;
	json_t *o;
	size_t i;

	memset(&p, 0, sizeof(p));
	p.conf = c;
	p.e = e;
	p.db = db;
	p.l = l;
	p.t.total = (long long)l->n;
	/* charged at confirmation: the entries that are addresses (the
	 * others have the domain "", as jobs_write_rows marks them free) */
	for (i = 0; i < l->n; i++)
		p.t.credits += l->domains[i][0] != '\0';
	p.t.duplicates = l->duplicates;
	deadline = start + 1000 * conf_int(c, CONF_PREVIEW_BUDGET_SECONDS);
	if (suppressions_load(db, account, &p.sup) != SUPPRESSIONS_OK ||
	    previewer_groups(&p) == -1 ||
	    previewer_free_checks(&p, deadline) == -1 ||
	    previewer_sample(&p, deadline) == -1)
		goto out;
	if ((o = preview_json(&p.t, time(NULL))) != NULL) {
		text = json_dumps(o, JSON_COMPACT);
		json_decref(o);
	}
	log_info("event=preview_computed account=%s addresses=%zu domains=%zu "
	    "needs_smtp=%lld sample=%lld ms=%lld", account, l->n, p.ng,
	    p.t.needs_smtp, p.t.sample_size,
	    (long long)(timeutil_mono_ms() - start));
out:
	suppressions_free(p.sup);
	free(p.order);
	free(p.g);
	free(p.pool);
	return text;
}
