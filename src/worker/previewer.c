/* previewer.c: an upload job's preview (previewer.h). The addresses are
 * taken domain by domain (sorted), so one domain's batch is alive at a
 * time however many addresses the job has: a domain whose MX answer is in
 * the DNS cache is checked at once, the others are handed to resolver
 * threads and checked as their answers come back. Each address goes
 * through the engine's batch face as a job's would (syntax and sandbox,
 * the lists, the MX answer); the ones that still need SMTP form the pool
 * the random sample is drawn from, stratified by who runs their mail (the
 * provider or mail host verify names), so that one big provider cannot
 * hide a bad one (jobs/preview.h weighs the strata back). */
#include "worker/previewer.h"
#include "engine/verify_batch.h"
#include "engine/verify_many.h"
#include "jobs/preview.h"
#include "jobs/suppressions.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/strset.h"
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
	const char			*account;	/* the job's */
	unsigned char			*suppressed;	/* per address */
	size_t				*order;		/* by domain */
	struct previewer_group		*g;
	size_t				 ng;
	size_t				*pool;		/* need SMTP */
	uint32_t			*pool_stratum;	/* pool[i]'s */
	size_t				 npool;
	/* the strata: who runs the mail of the pool's rows */
	struct strset			*strata;
	char				**sname;
	long long			*srows;
	size_t				 ns, capns;
	struct preview_stratum		*st;		/* as sampled */
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

static int
previewer_same(void *arg, uint32_t id, const char *s, size_t n)
{
	char **names = arg;

	return strlen(names[id]) == n && memcmp(names[id], s, n) == 0;
}

/* The stratum of a provider or mail host: its id, or the last one (all
 * the rest together) when memory runs out. */
static uint32_t
previewer_stratum(struct previewer *p, const char *who)
{
	size_t n = strlen(who);
	uint32_t h = strset_hash(who, n), id;
	char *copy;

	if (p->strata == NULL)
		p->strata = strset_new(64);
	if (p->strata != NULL && strset_find(p->strata, h, who, n,
	    previewer_same, p->sname, &id)) {
		p->srows[id]++;
		return id;
	}
	if (p->strata == NULL || (p->ns == p->capns && (grow(&p->sname, p->ns,
	    &p->capns, sizeof(*p->sname), 64) == -1 || (p->srows = realloc(
	    p->srows, p->capns * sizeof(*p->srows))) == NULL)) ||
	    (copy = strdup(who)) == NULL)
		goto full;
	if (strset_insert(p->strata, h, (uint32_t)p->ns) == -1) {
		free(copy);
		goto full;
	}
	p->sname[p->ns] = copy;
	p->srows[p->ns] = 1;
	return (uint32_t)p->ns++;
full:
	if (p->ns == 0)
		return UINT32_MAX;
	p->srows[p->ns - 1]++;
	return (uint32_t)(p->ns - 1);
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
	suppressed = p->suppressed[i];
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
		p->pool_stratum[p->npool] = previewer_stratum(p,
		    it->r.provider[0] ? it->r.provider : it->a.ascii_domain);
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
	    (p->pool = calloc(l->n ? l->n : 1, sizeof(*p->pool))) == NULL ||
	    (p->pool_stratum = calloc(l->n ? l->n : 1,
	    sizeof(*p->pool_stratum))) == NULL)
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

static int
previewer_by_rows(const void *x, const void *y, void *arg)
{
	const long long *rows = arg;
	const uint32_t *a = x, *b = y;

	if (rows[*a] != rows[*b])
		return rows[*a] < rows[*b] ? 1 : -1;
	return (*a > *b) - (*a < *b);
}

/* The kept stratum of pool row i. */
static size_t
previewer_of(const struct previewer *p, const uint32_t *map, size_t m,
    size_t i)
{
	return p->pool_stratum[i] < p->ns ? map[p->pool_stratum[i]] : m - 1;
}

static size_t
previewer_random(size_t n)
{
	uint64_t rnd;

	if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		rnd = (uint64_t)random();
	return (size_t)(rnd % n);
}

/* Draws the sample from the pool, stratum by stratum (a partial
 * Fisher-Yates shuffle of each stratum's rows, as many as
 * preview_allocate gives it; with more strata than the sample has rows,
 * the k - 1 largest and the rest together), verifies it and tallies each
 * stratum's classes. */
static int
previewer_sample(struct previewer *p, int64_t deadline)
{
	struct verify_many_opts o;
	struct verify_result *res = NULL;
	const char **emails = NULL;
	uint32_t *order = NULL, *map = NULL, *of = NULL;
	size_t *start = NULL, *bys = NULL, *fill = NULL;
	long long *rows = NULL, *alloc = NULL;
	size_t k = (size_t)preview_sample_size((long long)p->npool,
	    conf_int(p->conf, CONF_PREVIEW_SMTP_MIN_ROWS)), i, j, t, h, m, n;
	int rc = -1;

	if (k == 0 || p->ns == 0)
		return 0;
	/* the strata kept: all, or the k - 1 largest and one for the rest */
	if ((order = calloc(p->ns, sizeof(*order))) == NULL ||
	    (map = calloc(p->ns, sizeof(*map))) == NULL)
		goto out;
	for (h = 0; h < p->ns; h++)
		order[h] = (uint32_t)h;
	m = p->ns;
	if (m > k) {
		qsort_r(order, p->ns, sizeof(*order), previewer_by_rows,
		    p->srows);
		m = k;
	}
	for (h = 0; h < p->ns; h++)
		map[order[h]] = (uint32_t)(h < m ? h : m - 1);
	if ((rows = calloc(m, sizeof(*rows))) == NULL ||
	    (alloc = calloc(m, sizeof(*alloc))) == NULL ||
	    (start = calloc(m + 1, sizeof(*start))) == NULL ||
	    (fill = calloc(m, sizeof(*fill))) == NULL ||
	    (bys = calloc(p->npool, sizeof(*bys))) == NULL ||
	    (of = calloc(k, sizeof(*of))) == NULL ||
	    (p->st = calloc(m, sizeof(*p->st))) == NULL ||
	    (emails = calloc(k, sizeof(*emails))) == NULL ||
	    (res = calloc(k, sizeof(*res))) == NULL)
		goto out;
	for (i = 0; i < p->npool; i++)
		rows[previewer_of(p, map, m, i)]++;
	for (h = 0; h < m; h++)
		start[h + 1] = start[h] + (size_t)rows[h];
	for (i = 0; i < p->npool; i++) {
		h = previewer_of(p, map, m, i);
		bys[start[h] + fill[h]++] = p->pool[i];
	}
	preview_allocate(rows, m, (long long)k, alloc);
	for (h = n = 0; h < m; h++) {
		p->st[h].rows = rows[h];
		for (i = 0; i < (size_t)alloc[h]; i++, n++) {
			j = i + previewer_random((size_t)rows[h] - i);
			t = bys[start[h] + i];
			bys[start[h] + i] = bys[start[h] + j];
			bys[start[h] + j] = t;
			emails[n] = p->l->emails[bys[start[h] + i]];
			of[n] = (uint32_t)h;
		}
	}
	o.sessions = (int)conf_int(p->conf, CONF_WORKER_CONCURRENCY);
	/* a preview's few addresses a host: the window a host starts with */
	o.per_host = (int)conf_int(p->conf,
	    CONF_WORKER_DOMAIN_CONCURRENCY_INITIAL);
	if (o.per_host > conf_int(p->conf, CONF_WORKER_DOMAIN_CONCURRENCY))
		o.per_host = (int)conf_int(p->conf,
		    CONF_WORKER_DOMAIN_CONCURRENCY);
	o.rcpts = (int)conf_int(p->conf, CONF_WORKER_RCPTS_PER_SESSION);
	o.deadline = deadline;
	if (verify_many(p->e, p->db, p->account, emails, n, &o, res) !=
	    VERIFY_OK)
		goto out;
	for (i = 0; i < n; i++) {
		p->st[of[i]].sample++;
		p->st[of[i]].counts[res[i].v.classification]++;
	}
	p->t.strata = p->st;
	p->t.nstrata = m;
	preview_weigh(&p->t);
	preview_coarsen(&p->t);
	rc = 0;
out:
	free(order);
	free(map);
	free(rows);
	free(alloc);
	free(start);
	free(fill);
	free(bys);
	free(of);
	free(emails);
	free(res);
	return rc;
}

/* Which of the list's addresses the account has suppressed (the address
 * or its domain), looked up by the table's key SUPPRESSIONS_LOOKUP_MAX at a
 * time: an account may hold a million entries, never loaded whole. An
 * account without a list (most) is asked once, not once per thousand
 * addresses (500 lookups for a 500,000-address upload). */
static int
previewer_suppressed(struct previewer *p, const char *account)
{
	size_t i, n;
	int any;

	if ((p->suppressed = calloc(p->l->n ? p->l->n : 1, 1)) == NULL)
		return -1;
	if (suppressions_any(p->db, account, &any) != SUPPRESSIONS_OK)
		return -1;
	for (i = 0; any && i < p->l->n; i += n) {
		n = p->l->n - i < SUPPRESSIONS_LOOKUP_MAX ? p->l->n - i :
		    SUPPRESSIONS_LOOKUP_MAX;
		if (suppressions_lookup(p->db, account, p->l->emails + i, n,
		    p->suppressed + i) != SUPPRESSIONS_OK)
			return -1;
	}
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
	p.account = account;
	p.t.total = (long long)l->n;
	/* charged at confirmation: the entries that are addresses (the
	 * others have the domain "", as jobs_write_rows marks them free) */
	for (i = 0; i < l->n; i++)
		p.t.credits += l->domains[i][0] != '\0';
	p.t.duplicates = l->duplicates;
	deadline = start + 1000 * conf_int(c, CONF_PREVIEW_BUDGET_SECONDS);
	if (previewer_suppressed(&p, account) == -1 ||
	    previewer_groups(&p) == -1 ||
	    previewer_free_checks(&p, deadline) == -1 ||
	    previewer_sample(&p, deadline) == -1)
		goto out;
	if ((o = preview_json(&p.t, time(NULL))) != NULL) {
		text = json_dumps(o, JSON_COMPACT);
		json_decref(o);
	}
	log_info("event=preview_computed account=%s addresses=%zu domains=%zu "
	    "needs_smtp=%lld sample=%lld strata=%zu ms=%lld", account, l->n,
	    p.ng, p.t.needs_smtp, p.t.sample_size, p.t.nstrata,
	    (long long)(timeutil_mono_ms() - start));
out:
	free(p.suppressed);
	free(p.order);
	free(p.g);
	free(p.pool);
	free(p.pool_stratum);
	for (i = 0; i < p.ns; i++)
		free(p.sname[i]);
	free(p.sname);
	free(p.srows);
	free(p.st);
	strset_free(p.strata);
	return text;
}
