/* process.c: the job verification loop of svc-worker. Claimed chunks are
 * read and every address goes through the engine's steps: verify_begin
 * (syntax, sandbox), the verdict cache and the complainer list (looked up
 * for the whole chunk in a few statements), one MX lookup per domain (the
 * shared MariaDB DNS cache, else resolver threads: resolver.c, so a slow
 * DNS answer holds up only its own domain), verify_with_mx (no MX, DNS error,
 * disposable), then SMTP: addresses wait in their domain's queue and leave
 * it in sessions of up to worker_rcpts_per_session recipients; a domain's
 * first session also carries a random address (the catch-all probe, stored
 * in domain_facts so no other chunk or worker probes again); the domain's
 * other sessions run meanwhile, and end parked until the probe's answer
 * concludes their addresses (a catch-all domain's accepted addresses are
 * catch_all, not valid). Every session runs from one
 * poll loop, at most worker_concurrency at once and
 * worker_domain_concurrency per MX host; a host that defers (4xx greeting
 * or MAIL, 421) is left alone for an exponential back-off from 1 s and the
 * unanswered addresses go back in the queue. Greylisted addresses are
 * written as "retry" and verified again in a later claim of their chunk.
 * Results (and their verdict cache entries) are written per chunk in
 * multi-row statements as they come (at least every second), leases are
 * renewed, and the last chunk of a job completes it (jobqueue.c). The
 * loop's database round trips are per chunk or per domain, not per
 * address: they run between SMTP steps, so each one delays every session. */
#include "worker/process.h"
#include "engine/addr.h"
#include "engine/complainers.h"
#include "engine/dns.h"
#include "jobs/jobend.h"
#include "jobs/jobqueue.h"
#include "engine/smtp.h"
#include "engine/vcache.h"
#include "engine/verify.h"
#include "util/grow.h"
#include "util/khash.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "worker/housekeeping.h"
#include "worker/resolver.h"
#include "worker/writer.h"
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROCESS_CHUNK_SIZE	200	/* addresses per chunk (jobs.c) */
#define PROCESS_CHUNKS_MAX	64	/* chunks held at once */
#define PROCESS_FLUSH_MS	1000	/* results written at least this often */
#define PROCESS_FLUSH_ROWS	500
#define PROCESS_RESOLVERS	8	/* MX lookups at once */
#define PROCESS_BACKLOG_MAX	64	/* writer tasks waiting: claim no more */
#define PROCESS_CLAIM_MS	1000	/* after a short claim, claim again at
					 * most this often */
#define PROCESS_DNS_SLICE_MS	200	/* DNS lookups per loop turn at most */
#define PROCESS_POLL_MS		200
#define PROCESS_BACKOFF_MIN_MS	1000
#define PROCESS_BACKOFF_MAX_MS	60000
#define PROCESS_THROTTLE_TRIES	4	/* sessions an address may lose to a
					 * deferring host before it is concluded
					 * from the session outcome */
#define PROCESS_HASH		1024
#define PROCESS_FACTS_SECONDS	86400

enum process_probe {
	PROCESS_PROBE_UNKNOWN,		/* the next session carries a probe */
	PROCESS_PROBE_RUNNING,		/* a session with the probe is out */
	PROCESS_PROBE_KNOWN,
	PROCESS_PROBE__MAX
};

struct process_chunk {
	struct jobqueue_chunk	 c;
	struct jobqueue_result	*res;		/* waiting to be written */
	size_t			 nres, capres;
	struct vcache_entry	*cache;		/* verdicts to cache */
	size_t			 ncache, capcache;
	size_t			 outstanding;	/* addresses not concluded */
	size_t			 rows;
	int			 gone;		/* the job ended: drop all */
	int64_t			 last_flush, last_renew;
	struct process_chunk	*next;
};

/* What sessions are limited by: an MX host by name, and the address it
 * resolves to first ("[192.0.2.1]"), so that domains whose differently named
 * MX hosts point at one server share that server's limit. */
enum process_throttle {
	PROCESS_BY_NAME,
	PROCESS_BY_ADDRESS,
	PROCESS_THROTTLE__MAX
};

struct process_host {
	char			 name[DNS_NAME_MAX + 3];	/* or "[address]" */
	int			 refs;		/* domains using it */
	int			 active;	/* sessions now */
	int64_t			 backoff_until;
	int			 backoff_ms;
	int			 rcpt_limit;	/* learned from early 421s */
	struct process_host	*next;
};

struct process_addr {
	struct process_chunk	*chunk;
	int			 seq;
	int			 attempts;	/* greylisted attempts (job) */
	int			 tries;		/* sessions lost to deferrals */
	struct verify_result	 r;
	struct addr		 a;
	struct process_addr	*next;
};

struct process_parked;

struct process_domain {
	char			 name[ADDR_ASCII_DOMAIN_MAX + 1];
	struct dns_mx_result	 mx;
	int			 resolved;
	int			 in_dns;	/* queued for, or in, a lookup */
	int			 web_presence;	/* -1 not known yet */
	struct process_host	*host[PROCESS_THROTTLE__MAX];	/* or NULL */
	enum process_probe	 probe;
	int			 accept_all;
	int			 active;	/* sessions now */
	struct process_addr	*head, *tail;	/* waiting (for DNS or SMTP) */
	size_t			 queued;
	struct process_parked	*parked;	/* ended, waiting for the probe */
	struct process_domain	*hnext;		/* hash chain */
	struct process_domain	*dnext;		/* DNS queue */
};

struct process_session {
	struct smtp_session	*s;
	struct process_domain	*d;
	struct process_addr	**addrs;
	size_t			 n;
	int			 probe;		/* rcpt 0 is the probe */
	char			 probe_addr[ADDR_ASCII_DOMAIN_MAX + 40];
};

/* A finished session whose addresses wait for the domain's probe answer. */
struct process_parked {
	struct process_session	 ss;
	struct process_parked	*next;
};

struct process {
	const struct conf	*conf;
	struct verify_engine	*engine;
	struct smtp_tls		*tls;
	struct smtp_opts	 opts;
	char			 owner[JOBQUEUE_OWNER_MAX + 1];
	long			 lease;
	int			 concurrency, domain_concurrency, rcpts;
	int			 grey_retries;
	long			 grey_delay;
	size_t			 max_chunks;

	struct db		*db;
	struct writer		*writer;	/* results, chunk ends */
	struct resolver		*resolver;	/* MX lookups */
	size_t			 dns_pending;	/* lookups handed over */
	struct process_chunk	*chunks;
	size_t			 nchunks;
	struct process_domain	*hash[PROCESS_HASH];
	struct process_domain	*dns_head, *dns_tail;
	struct process_host	*hosts;
	struct process_session	*sessions;
	size_t			 nsessions;
	struct pollfd		*pfd;
	int64_t			 last_claim;
	int			 claim_empty;	/* the last claim found nothing */
	int			 claim_short;	/* it found fewer than asked */
	unsigned		 rr;		/* first hash bucket scheduled */
	int			 db_failed;
};

/* ---------------------------------------------------------------- set-up */

struct process *
process_new(const struct conf *c, struct buf *err)
{
	struct process *p;
	char host[64];
	long conc;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	p->conf = c;
	if ((p->engine = verify_engine_new(c, err)) == NULL ||
	    (p->tls = smtp_tls_new(conf_str(c, CONF_CA_FILE), err)) == NULL) {
		process_free(p);
		return NULL;
	}
	smtp_opts_from_conf(&p->opts, c);
	p->opts.tls = p->tls;
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(p->owner, sizeof(p->owner), "%s:%ld", host, (long)getpid());
	p->lease = conf_int(c, CONF_WORKER_LEASE_SECONDS);
	p->concurrency = (int)conf_int(c, CONF_WORKER_CONCURRENCY);
	p->domain_concurrency = (int)conf_int(c, CONF_WORKER_DOMAIN_CONCURRENCY);
	p->rcpts = (int)conf_int(c, CONF_WORKER_RCPTS_PER_SESSION);
	p->grey_retries = (int)conf_int(c, CONF_WORKER_GREYLIST_RETRIES);
	p->grey_delay = conf_int(c, CONF_WORKER_GREYLIST_DELAY);
	/* Enough chunks to keep every session slot busy twice over (a
	 * domain's later sessions wait for its catch-all probe, so half the
	 * addresses held are waiting), and one more. */
	conc = (long)p->concurrency * p->rcpts * 2;
	p->max_chunks = (size_t)((conc + PROCESS_CHUNK_SIZE - 1) /
	    PROCESS_CHUNK_SIZE) + 1;
	if (p->max_chunks > PROCESS_CHUNKS_MAX)
		p->max_chunks = PROCESS_CHUNKS_MAX;
	if ((p->sessions = calloc((size_t)p->concurrency,
	    sizeof(*p->sessions))) == NULL || (p->pfd = calloc((size_t)
	    p->concurrency + 1, sizeof(*p->pfd))) == NULL) {
		buf_puts(err, "out of memory");
		process_free(p);
		return NULL;
	}
	log_info("event=worker_ready owner=%s concurrency=%d "
	    "domain_concurrency=%d rcpts_per_session=%d chunks=%zu",
	    p->owner, p->concurrency, p->domain_concurrency, p->rcpts,
	    p->max_chunks);
	return p;
}

void
process_free(struct process *p)
{
	struct process_host *h;

	if (p == NULL)
		return;
	/* Hosts still in back-off outlive every sweep: free them here. */
	while ((h = p->hosts) != NULL) {
		p->hosts = h->next;
		free(h);
	}
	verify_engine_free(p->engine);
	smtp_tls_free(p->tls);
	free(p->sessions);
	free(p->pfd);
	free(p);
}

/* ---------------------------------------------------------------- tables */

static unsigned
process_hash(const char *s)
{
	return (unsigned)(khash(s, strlen(s)) % PROCESS_HASH);
}

static struct process_domain *
process_domain_find(struct process *p, const char *name)
{
	struct process_domain *d;

	for (d = p->hash[process_hash(name)]; d != NULL; d = d->hnext)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

static struct process_domain *
process_domain_get(struct process *p, const char *name)
{
	unsigned h = process_hash(name);
	struct process_domain *d;

	if ((d = process_domain_find(p, name)) != NULL)
		return d;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return NULL;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->web_presence = -1;
	d->hnext = p->hash[h];
	p->hash[h] = d;
	return d;
}

static struct process_host *
process_host_get(struct process *p, const char *name)
{
	struct process_host *h;

	for (h = p->hosts; h != NULL; h = h->next)
		if (strcmp(h->name, name) == 0)
			return h;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return NULL;
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->rcpt_limit = SMTP_RCPT_MAX;
	h->next = p->hosts;
	p->hosts = h;
	return h;
}

/* Drops domains with nothing queued and nothing running, and hosts no
 * domain uses whose back-off is over. */
static void
process_sweep(struct process *p, int64_t now)
{
	struct process_domain **dp, *d;
	struct process_host **hp, *h;
	unsigned i;
	int t;

	for (i = 0; i < PROCESS_HASH; i++) {
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
			if (d->resolved)
				dns_mx_result_free(&d->mx);
			free(d);
		}
	}
	for (hp = &p->hosts; (h = *hp) != NULL; ) {
		if (h->refs || h->active || now < h->backoff_until) {
			hp = &h->next;
			continue;
		}
		*hp = h->next;
		free(h);
	}
}

/* ---------------------------------------------------------------- results */

/* Keeps a verdict to write to the cache with the chunk's next results. */
static void
process_chunk_cache(struct process_chunk *ch, const struct verify_result *r)
{
	if (grow(&ch->cache, ch->ncache, &ch->capcache, sizeof(*ch->cache),
	    64) == -1)
		return;		/* only a cache entry lost */
	if (verify_cache_entry(r, &ch->cache[ch->ncache]) == 0)
		ch->ncache++;
}

static void
process_chunk_add(struct process_chunk *ch, const struct jobqueue_result *r)
{
	if (grow(&ch->res, ch->nres, &ch->capres, sizeof(*ch->res), 64) ==
	    -1) {
		/* Not written: the row stays pending for a later claim of
		 * the chunk. */
		log_error("event=result_dropped job=%s chunk=%d "
		    "error=\"out of memory\"", ch->c.job_id, ch->c.chunk);
		return;
	}
	ch->res[ch->nres++] = *r;
}

/* One address is concluded: a result, or "greylisted, retry later". */
static void
process_result(struct process *p, struct process_addr *pa, int store)
{
	struct process_chunk *ch = pa->chunk;
	struct jobqueue_result jr;

	if (ch->outstanding > 0)
		ch->outstanding--;
	if (ch->gone)
		return;
	jobqueue_result_set(&jr, pa->seq, &pa->r);
	if (pa->r.v.kind == VERDICT_K_GREYLISTED &&
	    pa->attempts < p->grey_retries && !pa->r.cached &&
	    !pa->r.sandbox) {
		jr.retry = 1;
		store = 0;
	}
	if (store)
		process_chunk_cache(ch, &pa->r);
	process_chunk_add(ch, &jr);
}

/* An address given up for this pass without a result (the row stays
 * pending and its chunk is claimed again). */
static void
process_abandon(struct process_addr *pa)
{
	if (pa->chunk->outstanding > 0)
		pa->chunk->outstanding--;
	free(pa);
}

/* Hands the chunk's results and cache entries to the writer. With none,
 * the writer still looks at the job under its lock: a cancelled job comes
 * back as GONE within a second. */
static void
process_flush(struct process *p, struct process_chunk *ch, int64_t now)
{
	ch->last_flush = now;
	if (ch->gone) {
		ch->nres = 0;
		vcache_entries_clear(ch->cache, ch->ncache);
		ch->ncache = 0;
		return;
	}
	if (writer_results(p->writer, &ch->c, ch->res, ch->nres, ch->cache,
	    ch->ncache) == -1) {
		log_error("event=results_dropped job=%s chunk=%d rows=%zu "
		    "error=\"out of memory\"", ch->c.job_id, ch->c.chunk,
		    ch->nres);
		p->db_failed = 1;	/* stop: the rows would stay pending */
	}
	ch->res = NULL;
	ch->cache = NULL;
	ch->nres = ch->capres = ch->ncache = ch->capcache = 0;
}

/* The job ended (cancelled): every chunk of it held here is dropped and
 * marked done (a write of nothing does that for an ended job). */
static void
process_mark_gone(struct process *p, const char *job_id)
{
	struct process_chunk *ch;

	for (ch = p->chunks; ch != NULL; ch = ch->next)
		if (strcmp(ch->c.job_id, job_id) == 0 && !ch->gone) {
			process_flush(p, ch, ch->last_flush);
			ch->gone = 1;
			log_info("event=chunk_dropped job=%s chunk=%d "
			    "reason=job_ended", ch->c.job_id, ch->c.chunk);
		}
}

/* What came back from the writer: an ended job's chunks are dropped, a
 * database failure stops the loop. */
static void
process_outcomes(struct process *p)
{
	struct writer_outcome o[16];
	size_t n, i;

	while ((n = writer_outcomes(p->writer, o, 16)) > 0)
		for (i = 0; i < n; i++) {
			if (o[i].rc == JOBQUEUE_GONE)
				process_mark_gone(p, o[i].c.job_id);
			else if (o[i].rc == JOBQUEUE_DB)
				p->db_failed = 1;
		}
}

static void
process_chunk_free(struct process_chunk *ch)
{
	vcache_entries_clear(ch->cache, ch->ncache);
	free(ch->cache);
	free(ch->res);
	free(ch);
}

/* Hands over due results, renews leases, ends chunks with nothing left. */
static void
process_chunks_tick(struct process *p, int64_t now)
{
	struct process_chunk **cp, *ch;

	process_outcomes(p);
	for (cp = &p->chunks; (ch = *cp) != NULL; ) {
		if ((ch->nres && (ch->outstanding == 0 ||
		    ch->nres >= PROCESS_FLUSH_ROWS)) ||
		    now - ch->last_flush >= PROCESS_FLUSH_MS)
			process_flush(p, ch, now);
		if (ch->outstanding > 0) {
			if (!ch->gone && now - ch->last_renew >=
			    p->lease * 1000 / 3) {
				ch->last_renew = now;
				if (jobqueue_renew(p->db, &ch->c, p->owner,
				    p->lease) == JOBQUEUE_LOST)
					log_warn("event=lease_lost job=%s "
					    "chunk=%d", ch->c.job_id,
					    ch->c.chunk);
			}
			cp = &ch->next;
			continue;
		}
		if (!ch->gone && writer_finish(p->writer, &ch->c) == -1)
			p->db_failed = 1;
		*cp = ch->next;
		p->nchunks--;
		process_chunk_free(ch);
	}
}

/* ---------------------------------------------------------------- DNS */

static void
process_enqueue(struct process_domain *d, struct process_addr *pa, int front)
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

static struct process_addr *
process_dequeue(struct process_domain *d)
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
 * for SMTP. */
static void
process_after_mx(struct process *p, struct process_domain *d)
{
	struct process_addr *pa, *keep = NULL, *tail = NULL;

	while ((pa = process_dequeue(d)) != NULL) {
		if (pa->chunk->gone) {
			process_abandon(pa);
			continue;
		}
		if (verify_with_mx(p->engine, &pa->r, &pa->a, &d->mx) ==
		    VERIFY_STEP_DONE) {
			process_result(p, pa, 1);
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
		process_enqueue(d, pa, 0);
	}
}

/* The throttles of a resolved domain: its first MX host's name and that
 * host's first address (the server its sessions reach first). */
static void
process_domain_throttles(struct process *p, struct process_domain *d)
{
	char key[DNS_NAME_MAX + 3];
	struct process_host *h;
	const struct dns_mx_host *mh = d->mx.nhosts ? &d->mx.hosts[0] : NULL;
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++) {
		if (t == PROCESS_BY_NAME)
			snprintf(key, sizeof(key), "%s", mh ? mh->name :
			    d->name);
		else if (mh != NULL && mh->addrs.n > 0)
			snprintf(key, sizeof(key), "[%s]",
			    mh->addrs.addr[0].text);
		else
			continue;
		if ((h = process_host_get(p, key)) != NULL) {
			h->refs++;
			d->host[t] = h;
		}
	}
}

/* May the domain start a session now? Not while a throttle it is under
 * has its share of sessions running, or is in back-off. */
static int
process_throttled_now(const struct process *p, const struct process_domain *d,
    int64_t now)
{
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if (d->host[t] && (d->host[t]->active >= p->domain_concurrency ||
		    now < d->host[t]->backoff_until))
			return 1;
	return 0;
}

static void
process_throttles_active(struct process_domain *d, int delta)
{
	int t;

	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if (d->host[t])
			d->host[t]->active += delta;
}

/* The domain's MX answer is in d->mx: its throttles, what domain_facts
 * know of it, then its addresses go on. */
static void
process_resolved(struct process *p, struct process_domain *d)
{
	struct vcache_facts f;
	int found = 0;

	d->in_dns = 0;
	d->resolved = 1;
	if (d->mx.status == DNS_OK) {
		process_domain_throttles(p, d);
		if (vcache_facts_get(p->db, d->name, &f, &found) == DB_OK &&
		    found) {
			d->web_presence = f.web_presence;
			if (f.accept_all >= 0) {
				d->probe = PROCESS_PROBE_KNOWN;
				d->accept_all = f.accept_all;
			}
		}
	}
	log_debug("event=domain_resolved domain=%s dns=%s hosts=%zu "
	    "accept_all=%s", d->name, dns_status_names[d->mx.status],
	    d->mx.nhosts, d->probe == PROCESS_PROBE_KNOWN ? (d->accept_all ?
	    "yes" : "no") : "unknown");
	process_after_mx(p, d);
}

/* Domains waiting for their MX answer: from the shared DNS cache at once,
 * else handed to the resolver threads (for at most a slice of time, as
 * each cache lookup is a round trip). */
static void
process_dns(struct process *p)
{
	int64_t start = timeutil_mono_ms();
	struct process_domain *d;

	while ((d = p->dns_head) != NULL) {
		p->dns_head = d->dnext;
		if (p->dns_head == NULL)
			p->dns_tail = NULL;
		d->dnext = NULL;
		if (verify_mx_cached(p->db, d->name, &d->mx))
			process_resolved(p, d);
		else if (resolver_submit(p->resolver, d->name) == 0)
			p->dns_pending++;
		else {
			/* Out of memory: look it up here. */
			verify_lookup_mx(p->engine, p->db, d->name, &d->mx);
			process_resolved(p, d);
		}
		if (timeutil_mono_ms() - start >= PROCESS_DNS_SLICE_MS)
			break;
	}
}

/* Answers of the resolver threads: stored in the DNS cache, then their
 * domains go on (an answer for a domain no longer waiting is dropped). */
static void
process_dns_answers(struct process *p)
{
	struct resolver_answer a[16];
	struct process_domain *d;
	size_t n, i;

	while ((n = resolver_answers(p->resolver, a, 16)) > 0)
		for (i = 0; i < n; i++) {
			if (p->dns_pending > 0)
				p->dns_pending--;
			d = process_domain_find(p, a[i].domain);
			if (d == NULL || !d->in_dns || d->resolved) {
				dns_mx_result_free(&a[i].mx);
				continue;
			}
			d->mx = a[i].mx;
			verify_mx_store(p->db, d->name, &d->mx);
			process_resolved(p, d);
		}
}

/* ---------------------------------------------------------------- chunks */

/* Syntax and sandbox: a new address in flight, or NULL when that already
 * concluded it (or memory ran out). */
static struct process_addr *
process_begin(struct process *p, struct process_chunk *ch,
    const struct jobqueue_row *row)
{
	struct process_addr *pa;

	/* Not calloc: r and a (8 KB) are cleared by verify_begin and
	 * addr_parse anyway, and 20,000 addresses a run made the double
	 * clearing show in profiles. */
	if ((pa = malloc(sizeof(*pa))) == NULL) {
		log_error("event=address_skipped job=%s seq=%d "
		    "error=\"out of memory\"", ch->c.job_id, row->seq);
		return NULL;
	}
	pa->chunk = ch;
	pa->seq = row->seq;
	pa->attempts = row->attempts;
	pa->tries = 0;
	pa->next = NULL;
	ch->outstanding++;
	if (verify_begin(p->engine, NULL, row->email, 0, &pa->r, &pa->a) ==
	    VERIFY_STEP_DONE) {
		process_result(p, pa, 1);
		free(pa);
		return NULL;
	}
	return pa;
}

/* The verdict cache and the complainer list for a chunk's addresses, in a
 * few statements rather than one or two per address. A failing lookup is
 * no verdict: the cache misses, and verify_conclude looks complainers up
 * one by one (failing there if the database is down). */
static void
process_lookup(struct process *p, struct process_addr **v, size_t n)
{
	const char **keys;
	unsigned char *found;
	json_t **hits;
	size_t i, k;

	keys = calloc(n + 1, sizeof(*keys));
	hits = calloc(n + 1, sizeof(*hits));
	found = calloc(n + 1, 1);
	if (keys == NULL || hits == NULL || found == NULL)
		goto out;
	for (i = 0; i < n; i++)
		keys[i] = v[i]->a.normalised;
	if (vcache_get_many(p->db, VCACHE_VERDICT, keys, n, hits) == DB_OK)
		for (i = 0; i < n; i++)
			if (hits[i] != NULL)
				(void)verify_from_cache(&v[i]->r, &v[i]->a,
				    hits[i]);
	for (i = k = 0; i < n; i++)
		if (!v[i]->r.cached)
			keys[k++] = v[i]->a.normalised;
	if (k > 0 && complainers_contains_many(p->db, keys, k, found) ==
	    DB_OK)
		for (i = k = 0; i < n; i++)
			if (!v[i]->r.cached)
				v[i]->r.complainer = found[k++];
out:
	for (i = 0; hits != NULL && i < n; i++)
		json_decref(hits[i]);
	free(keys);
	free(hits);
	free(found);
}

/* A cached verdict concludes the address; the rest wait for their domain's
 * MX answer (looked up once per domain) or go on with it. */
static void
process_route(struct process *p, struct process_addr *pa)
{
	struct process_domain *d;

	if (pa->r.cached) {
		process_result(p, pa, 0);
		free(pa);
		return;
	}
	if ((d = process_domain_get(p, pa->a.ascii_domain)) == NULL) {
		process_abandon(pa);
		return;
	}
	if (d->resolved) {
		if (verify_with_mx(p->engine, &pa->r, &pa->a, &d->mx) ==
		    VERIFY_STEP_DONE) {
			process_result(p, pa, 1);
			free(pa);
		} else
			process_enqueue(d, pa, 0);
		return;
	}
	process_enqueue(d, pa, 0);
	if (!d->in_dns) {
		d->in_dns = 1;
		if (p->dns_tail)
			p->dns_tail->dnext = d;
		else
			p->dns_head = d;
		p->dns_tail = d;
	}
}

/* Reads a claimed chunk's rows and starts them on their way. */
static void
process_load(struct process *p, const struct jobqueue_chunk *c, int64_t now)
{
	struct jobqueue_row *rows = NULL;
	struct process_addr **todo;
	struct process_chunk *ch;
	size_t n = 0, total = 0, i, m = 0;

	if (jobqueue_rows(p->db, c, &rows, &n, &total) != JOBQUEUE_OK) {
		p->db_failed = 1;
		return;
	}
	if (total == 0) {
		/* A chunk without addresses: the job cannot be processed. */
		log_error("event=chunk_empty job=%s chunk=%d", c->job_id,
		    c->chunk);
		if (jobend_fail(p->db, c->job_id, "job_rows_missing",
		    "the job's addresses are missing") == JOBQUEUE_DB)
			p->db_failed = 1;
		jobqueue_rows_free(rows, n);
		return;
	}
	if ((ch = calloc(1, sizeof(*ch))) == NULL) {
		jobqueue_rows_free(rows, n);
		jobqueue_release(p->db, c, p->owner);
		return;
	}
	ch->c = *c;
	ch->rows = n;
	ch->last_flush = ch->last_renew = now;
	ch->next = p->chunks;
	p->chunks = ch;
	p->nchunks++;
	log_info("event=chunk_claimed job=%s chunk=%d rows=%zu total=%zu "
	    "attempt=%d", c->job_id, c->chunk, n, total, c->attempts);
	if ((todo = calloc(n + 1, sizeof(*todo))) == NULL) {
		/* Nothing started: the rows stay pending for a later claim. */
		jobqueue_rows_free(rows, n);
		return;
	}
	for (i = 0; i < n; i++)
		if ((todo[m] = process_begin(p, ch, &rows[i])) != NULL)
			m++;
	jobqueue_rows_free(rows, n);
	process_lookup(p, todo, m);
	for (i = 0; i < m; i++)
		process_route(p, todo[i]);
	free(todo);
}

static void
process_claim(struct process *p, int64_t now)
{
	struct jobqueue_chunk got[PROCESS_CHUNKS_MAX];
	size_t n = 0, i, want;

	if (p->nchunks >= p->max_chunks)
		return;
	p->last_claim = now;
	want = p->max_chunks - p->nchunks;
	if (jobqueue_claim(p->db, p->owner, p->lease, got, want, &n) !=
	    JOBQUEUE_OK) {
		p->db_failed = 1;
		return;
	}
	p->claim_empty = n == 0;
	p->claim_short = n < want;
	for (i = 0; i < n; i++)
		process_load(p, &got[i], now);
}

/* ---------------------------------------------------------------- SMTP */

/* Starts one session for the domain's queue; 1 if one started. */
static int
process_session_start(struct process *p, struct process_domain *d)
{
	struct process_session *ss = &p->sessions[p->nsessions];
	const char **rcpts;
	char local[32];
	struct process_addr *pa;
	size_t limit, n = 0, i;

	limit = (size_t)p->rcpts;
	for (i = 0; i < PROCESS_THROTTLE__MAX; i++)
		if (d->host[i] && (size_t)d->host[i]->rcpt_limit < limit)
			limit = (size_t)d->host[i]->rcpt_limit;
	memset(ss, 0, sizeof(*ss));
	if ((rcpts = calloc(limit + 1, sizeof(*rcpts))) == NULL ||
	    (ss->addrs = calloc(limit + 1, sizeof(*ss->addrs))) == NULL) {
		free(rcpts);
		return 0;
	}
	if (d->probe == PROCESS_PROBE_UNKNOWN &&
	    smtp_random_local(local, sizeof(local)) == 0) {
		snprintf(ss->probe_addr, sizeof(ss->probe_addr), "%s@%s", local,
		    d->name);
		rcpts[n++] = ss->probe_addr;
		ss->probe = 1;
	}
	while (n < limit + (size_t)ss->probe && n < SMTP_RCPT_MAX &&
	    (pa = process_dequeue(d)) != NULL) {
		if (pa->chunk->gone) {
			process_abandon(pa);
			continue;
		}
		ss->addrs[ss->n++] = pa;
		rcpts[n++] = pa->a.smtp_path;	/* A-label domain */
	}
	if (ss->n == 0) {
		free(rcpts);
		free(ss->addrs);
		ss->addrs = NULL;
		return 0;
	}
	ss->d = d;
	ss->s = smtp_session_new_mx(&p->opts, &d->mx, rcpts, n);
	free(rcpts);
	if (ss->s == NULL) {
		/* Cannot even start (memory): conclude as unreachable. */
		for (i = 0; i < ss->n; i++) {
			verify_conclude(p->engine, p->db, &ss->addrs[i]->r,
			    &ss->addrs[i]->a, NULL, NULL, 0);
			process_result(p, ss->addrs[i], 0);
			free(ss->addrs[i]);
		}
		free(ss->addrs);
		ss->addrs = NULL;
		return 0;
	}
	if (ss->probe)
		d->probe = PROCESS_PROBE_RUNNING;
	d->active++;
	process_throttles_active(d, 1);
	p->nsessions++;
	log_debug("event=smtp_session_start domain=%s host=%s rcpts=%zu "
	    "probe=%d", d->name, d->host[PROCESS_BY_NAME] ?
	    d->host[PROCESS_BY_NAME]->name : "-", ss->n,
	    ss->probe);
	return 1;
}

/* Starts sessions while there are free slots and addresses that may go;
 * the scan starts one bucket further each time, so that no domain waits
 * behind the others for ever. */
static void
process_schedule(struct process *p, int64_t now)
{
	struct process_domain *d;
	unsigned i, b;
	int started;

	p->rr = (p->rr + 1) % PROCESS_HASH;
	do {
		started = 0;
		for (i = 0; i < PROCESS_HASH; i++) {
			b = (p->rr + i) % PROCESS_HASH;
			for (d = p->hash[b]; d != NULL; d = d->hnext) {
				if ((int)p->nsessions >= p->concurrency)
					return;
				if (!d->resolved || d->queued == 0)
					continue;
				if (process_throttled_now(p, d, now))
					continue;
				if (process_session_start(p, d))
					started = 1;
			}
		}
	} while (started);
}

static int
process_throttled(const struct smtp_session_info *si)
{
	return si->outcome == SMTP_OUTCOME_TEMPFAIL ||
	    (si->outcome == SMTP_OUTCOME_REFUSED_AT_BANNER &&
	    si->code / 100 == 4);
}

/* Concludes a finished session's addresses (accept_all: the domain took a
 * random address), puts back in the queue what a deferring host left
 * unanswered, and frees the session. */
static void
process_session_conclude(struct process *p, struct process_session *ss,
    int accept_all)
{
	const struct smtp_session_info *si = smtp_session_info(ss->s);
	const struct smtp_rcpt_result *rr;
	struct process_domain *d = ss->d;
	size_t i, base = (size_t)ss->probe;
	int throttled = process_throttled(si);
	struct process_addr *pa;

	for (i = ss->n; i-- > 0; ) {
		pa = ss->addrs[i];
		rr = smtp_session_rcpt(ss->s, base + i);
		if (pa->chunk->gone) {
			process_abandon(pa);
			continue;
		}
		if ((rr == NULL || rr->code == 0) && throttled &&
		    ++pa->tries < PROCESS_THROTTLE_TRIES) {
			process_enqueue(d, pa, 1);	/* keeps the order */
			continue;
		}
		/* One web presence lookup per domain (catch-all verdicts). */
		pa->r.web_presence = d->web_presence;
		if (verify_conclude(p->engine, p->db, &pa->r, &pa->a, si,
		    rr, accept_all) != VERIFY_OK) {
			process_abandon(pa);
			continue;
		}
		d->web_presence = pa->r.web_presence;
		process_result(p, pa, 1);
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
process_unpark(struct process *p, struct process_domain *d, int accept_all)
{
	struct process_parked *pk;

	while ((pk = d->parked) != NULL) {
		d->parked = pk->next;
		process_session_conclude(p, &pk->ss, accept_all);
		free(pk);
	}
}

/* The catch-all probe's answer, kept for the domain and in domain_facts;
 * returns accept_all (0 when the probe got no usable answer). */
static int
process_probe_learn(struct process *p, struct process_session *ss)
{
	const struct smtp_rcpt_result *rr = smtp_session_rcpt(ss->s, 0);
	struct process_domain *d = ss->d;
	struct vcache_facts f;
	int accept_all, found = 0;

	if (rr == NULL || (rr->code / 100 != 2 && rr->code / 100 != 5)) {
		d->probe = PROCESS_PROBE_UNKNOWN;	/* the next session */
		return 0;
	}
	accept_all = rr->code / 100 == 2;
	d->probe = PROCESS_PROBE_KNOWN;
	d->accept_all = accept_all;
	if (vcache_facts_get(p->db, d->name, &f, &found) != DB_OK || !found)
		f.web_presence = -1;
	f.accept_all = accept_all;
	vcache_facts_put(p->db, d->name, &f, PROCESS_FACTS_SECONDS);
	return accept_all;
}

/* The host's back-off or recipient limit from how a session ended. */
static void
process_host_learn(struct process_host *h, const struct smtp_session_info *si,
    size_t answered, int64_t now)
{
	if (!process_throttled(si))
		h->backoff_ms = 0;
	else if (answered > 0) {
		/* Closed after some replies (a per-session limit): fewer
		 * recipients per session from now on. */
		h->rcpt_limit = answered > 1 ? (int)answered - 1 : 1;
		log_info("event=smtp_rcpt_limit host=%s limit=%d", h->name,
		    h->rcpt_limit);
	} else {
		h->backoff_ms = h->backoff_ms ? h->backoff_ms * 2 :
		    PROCESS_BACKOFF_MIN_MS;
		if (h->backoff_ms > PROCESS_BACKOFF_MAX_MS)
			h->backoff_ms = PROCESS_BACKOFF_MAX_MS;
		h->backoff_until = now + h->backoff_ms;
		log_info("event=smtp_backoff host=%s ms=%d code=%d", h->name,
		    h->backoff_ms, si->code);
	}
}

/* A session ended: the host's back-off, the probe's answer, then the
 * addresses are concluded, or wait (parked) for the domain's probe when a
 * session carrying it is still out. */
static void
process_session_end(struct process *p, struct process_session *ss,
    int64_t now)
{
	const struct smtp_session_info *si = smtp_session_info(ss->s);
	const struct smtp_rcpt_result *rr;
	struct process_domain *d = ss->d;
	struct process_parked *pk;
	size_t i, answered = 0;
	int accept_all, t;

	d->active--;
	process_throttles_active(d, -1);
	for (i = 0; i < ss->n + (size_t)ss->probe; i++)
		if ((rr = smtp_session_rcpt(ss->s, i)) != NULL && rr->code)
			answered++;
	log_info("event=smtp_session domain=%s host=%s addr=%s rcpts=%zu "
	    "answered=%zu outcome=%s code=%d tls=%d", d->name,
	    si->host ? si->host : "-", si->addr[0] ? si->addr : "-",
	    ss->n + (size_t)ss->probe, answered,
	    smtp_outcome_names[si->outcome], si->code, si->tls);
	for (t = 0; t < PROCESS_THROTTLE__MAX; t++)
		if (d->host[t])
			process_host_learn(d->host[t], si, answered, now);
	if (ss->probe) {
		accept_all = process_probe_learn(p, ss);
		process_session_conclude(p, ss, accept_all);
		process_unpark(p, d, accept_all);
		return;
	}
	if (d->probe == PROCESS_PROBE_RUNNING &&
	    (pk = malloc(sizeof(*pk))) != NULL) {
		pk->ss = *ss;
		pk->next = d->parked;
		d->parked = pk;
		log_debug("event=smtp_session_parked domain=%s rcpts=%zu",
		    d->name, ss->n);
		ss->s = NULL;
		ss->addrs = NULL;
		return;
	}
	process_session_conclude(p, ss, d->probe == PROCESS_PROBE_KNOWN ?
	    d->accept_all : 0);
}

/* One poll over every running session (and the resolver threads' answers,
 * the last entry), then their steps. */
static void
process_poll(struct process *p, int timeout_ms)
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
		process_session_end(p, &p->sessions[i], now);
		j = --p->nsessions;
		if (i != j)
			p->sessions[i] = p->sessions[j];
	}
}

/* ---------------------------------------------------------------- stop */

/* A session's addresses given up (their rows stay pending). */
static void
process_session_drop(struct process_session *ss)
{
	size_t k;

	smtp_session_free(ss->s);
	for (k = 0; k < ss->n; k++)
		process_abandon(ss->addrs[k]);
	free(ss->addrs);
	ss->s = NULL;
	ss->addrs = NULL;
}

/* Drops everything held: sessions, queues, chunks (their leases given
 * back when release is set, after writing what is concluded). */
static void
process_drop_all(struct process *p, int release)
{
	struct process_domain *d;
	struct process_parked *pk;
	struct process_addr *pa;
	struct process_chunk *ch;
	size_t i;
	unsigned h;

	for (i = 0; i < p->nsessions; i++) {
		process_session_drop(&p->sessions[i]);
		p->sessions[i].d->active--;
		process_throttles_active(p->sessions[i].d, -1);
	}
	p->nsessions = 0;
	for (h = 0; h < PROCESS_HASH; h++)
		for (d = p->hash[h]; d != NULL; d = d->hnext) {
			while ((pa = process_dequeue(d)) != NULL)
				process_abandon(pa);
			while ((pk = d->parked) != NULL) {
				d->parked = pk->next;
				process_session_drop(&pk->ss);
				free(pk);
			}
			d->in_dns = 0;
		}
	p->dns_head = p->dns_tail = NULL;
	/* What is concluded goes to the writer; leases are given back once
	 * it is written. */
	for (ch = p->chunks; release && !p->db_failed && ch != NULL;
	    ch = ch->next)
		process_flush(p, ch, timeutil_mono_ms());
	writer_drain(p->writer);
	process_outcomes(p);
	while ((ch = p->chunks) != NULL) {
		p->chunks = ch->next;
		if (release && !ch->gone && !p->db_failed &&
		    jobqueue_release(p->db, &ch->c, p->owner) == JOBQUEUE_OK)
			log_info("event=chunk_released job=%s chunk=%d",
			    ch->c.job_id, ch->c.chunk);
		process_chunk_free(ch);
	}
	p->nchunks = 0;
	process_sweep(p, INT64_MAX);
}

/* ---------------------------------------------------------------- run */

/* The writer and the resolver threads of a run. */
static int
process_threads_start(struct process *p)
{
	struct buf err;

	buf_init(&err, 1024);
	p->writer = writer_start(p->conf, p->owner, p->grey_delay, &err);
	if (p->writer != NULL && (p->resolver = resolver_start(p->conf,
	    PROCESS_RESOLVERS, &err)) == NULL) {
		writer_stop(p->writer);
		p->writer = NULL;
	}
	if (p->writer == NULL)
		log_error("event=process_stopped reason=threads error=\"%s\"",
		    buf_str(&err));
	buf_free(&err);
	p->dns_pending = 0;
	return p->writer != NULL ? 0 : -1;
}

static void
process_threads_stop(struct process *p)
{
	resolver_stop(p->resolver);
	p->resolver = NULL;
	p->dns_pending = 0;
	writer_stop(p->writer);
	p->writer = NULL;
}

int
process_run(struct process *p, struct db *db, volatile sig_atomic_t *stop,
    time_t *last_hk)
{
	int64_t now;
	time_t t;
	int timeout;

	if (process_threads_start(p) == -1)
		return -1;
	p->db = db;
	p->db_failed = 0;
	p->claim_empty = 0;
	p->claim_short = 0;
	p->last_claim = 0;
	for (;;) {
		now = timeutil_mono_ms();
		if (*stop) {
			process_drop_all(p, 1);
			process_threads_stop(p);
			return 0;
		}
		/* A chunk that finishes makes room for the next at once while
		 * the queue has work (and the writer keeps up); once a claim
		 * comes back short, the next waits PROCESS_CLAIM_MS. */
		if (p->nchunks < p->max_chunks && (p->nchunks == 0 ||
		    !p->claim_short || now - p->last_claim >= PROCESS_CLAIM_MS) &&
		    writer_backlog(p->writer) < PROCESS_BACKLOG_MAX)
			process_claim(p, now);
		if (p->db_failed)
			break;
		if (p->nchunks == 0 && p->claim_empty) {
			if (writer_backlog(p->writer) == 0) {
				process_threads_stop(p);
				return 0;
			}
			/* Chunks ended but not yet written may be pending
			 * again: look once more when they are. */
			writer_drain(p->writer);
			process_outcomes(p);
			if (p->db_failed)
				break;
			continue;
		}
		process_dns(p);
		process_dns_answers(p);
		process_schedule(p, timeutil_mono_ms());
		timeout = p->dns_head ? 0 : PROCESS_POLL_MS;
		if (p->nsessions > 0 || p->dns_pending > 0)
			process_poll(p, timeout);
		else if (timeout > 0 && p->nchunks > 0)
			/* waiting for a host's back-off */
			poll(NULL, 0, 50);
		now = timeutil_mono_ms();
		process_chunks_tick(p, now);
		if (p->db_failed)
			break;
		process_sweep(p, now);
		t = time(NULL);
		if (t - *last_hk >= conf_int(p->conf,
		    CONF_HOUSEKEEPING_INTERVAL)) {
			*last_hk = t;
			if (housekeeping_run(p->conf, db) == -1) {
				p->db_failed = 1;
				break;
			}
		}
	}
	log_error("event=process_stopped reason=db_failed error=\"%s\"",
	    db_error(db));
	process_drop_all(p, 0);
	process_threads_stop(p);
	return -1;
}
