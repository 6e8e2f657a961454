/* process.c: svc-worker's verification loop, set up, run and stopped
 * (process.h). Each turn of the loop claims chunks while there is room
 * (chunks.c), looks up the MX answers their domains wait for (domains.c),
 * starts SMTP sessions and steps them from one poll (sessions.c), hands
 * results to the writer thread and ends chunks (chunks.c), and runs
 * housekeeping when it is due. Every verification step is the engine's
 * batch face (engine/verify_batch.h); the loop's database round trips are
 * per chunk or per domain, not per address, because they run between SMTP
 * steps and each one delays every session. */
#include "util/log.h"
#include "util/timeutil.h"
#include "util/wake.h"
#include "worker/heartbeat.h"
#include "worker/housekeeping.h"
#include "worker/resolver.h"
#include "worker/sched.h"
#include "worker/writer.h"
#include "worker/connstats.h"
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROCESS_RESOLVERS	8	/* MX lookups at once */
#define PROCESS_BACKLOG_MAX	64	/* writer tasks waiting: claim no more */
#define PROCESS_CLAIM_MS	1000	/* after a short claim, claim again at
					 * most this often (no wake-ups) */
#define PROCESS_POLL_MS		200

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
	/* proxies' names looked up off the SMTP loop (egress_refresh.h) */
	if ((p->engine = verify_engine_new(c, err)) == NULL ||
	    verify_engine_refresh_routes(p->engine, err) == -1) {
		process_free(p);
		return NULL;
	}
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(p->owner, sizeof(p->owner), "%s:%ld", host, (long)getpid());
	p->lease = conf_int(c, CONF_WORKER_LEASE_SECONDS);
	p->claim_every = PROCESS_CLAIM_MS;
	p->concurrency = (int)conf_int(c, CONF_WORKER_CONCURRENCY);
	p->domain_concurrency = (int)conf_int(c, CONF_WORKER_DOMAIN_CONCURRENCY);
	p->domain_initial = (int)conf_int(c,
	    CONF_WORKER_DOMAIN_CONCURRENCY_INITIAL);
	if (p->domain_initial > p->domain_concurrency)
		p->domain_initial = p->domain_concurrency;
	p->rcpts = (int)conf_int(c, CONF_WORKER_RCPTS_PER_SESSION);
	p->transactions = (int)conf_int(c,
	    CONF_WORKER_TRANSACTIONS_PER_SESSION);
	p->session_rcpts = (size_t)conf_int(c, CONF_WORKER_SESSION_RCPT_LIMIT);
	p->grey_retries = (int)conf_int(c, CONF_WORKER_GREYLIST_RETRIES);
	p->grey_delay = conf_int(c, CONF_WORKER_GREYLIST_DELAY);
	/* Enough chunks to keep every session slot busy twice over (a
	 * domain's later sessions wait for its catch-all probe, so half the
	 * addresses held are waiting), and one more. */
	conc = (long)p->concurrency * p->rcpts * 2;
	p->max_chunks = (size_t)((conc + SCHED_CHUNK_SIZE - 1) /
	    SCHED_CHUNK_SIZE) + 1;
	if (p->max_chunks > SCHED_CHUNKS_MAX)
		p->max_chunks = SCHED_CHUNKS_MAX;
	if ((p->sessions = calloc((size_t)p->concurrency,
	    sizeof(*p->sessions))) == NULL || (p->pfd = calloc((size_t)
	    p->concurrency + 2, sizeof(*p->pfd))) == NULL) {
		buf_puts(err, "out of memory");
		process_free(p);
		return NULL;
	}
	pacer_init(p);
	log_info("event=worker_ready owner=%s concurrency=%d "
	    "domain_concurrency=%d domain_concurrency_initial=%d "
	    "rcpts_per_session=%d "
	    "transactions_per_session=%d session_rcpt_limit=%zu chunks=%zu",
	    p->owner, p->concurrency, p->domain_concurrency,
	    p->domain_initial, p->rcpts,
	    p->transactions, p->session_rcpts, p->max_chunks);
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
		pacer_host_unref(h);
		free(h);
	}
	defer_free(p);
	pacer_free(p);
	profiles_free(p);
	verify_engine_free(p->engine);
	free(p->sessions);
	free(p->pfd);
	free(p);
}

void
process_set_deadline(struct process *p, int64_t deadline)
{
	p->dns_deadline = deadline;
}

struct verify_engine *
process_engine(struct process *p)
{
	return p->engine;
}

const char *
process_owner(const struct process *p)
{
	return p->owner;
}

/* Drops everything held: sessions, queues, chunks (their leases given
 * back when release is set, after writing what is concluded). */
static void
process_drop_all(struct process *p, int release)
{
	struct process_chunk *ch;

	sessions_drop_all(p);
	/* What is concluded goes to the writer; leases are given back once
	 * it is written. */
	for (ch = p->chunks; release && !p->db_failed && ch != NULL;
	    ch = ch->next)
		chunks_flush(p, ch, timeutil_mono_ms());
	writer_drain(p->writer);
	chunks_outcomes(p);
	while ((ch = p->chunks) != NULL) {
		p->chunks = ch->next;
		if (release && !ch->gone && !p->db_failed &&
		    jobqueue_release(p->db, &ch->c, p->owner) == JOBQUEUE_OK)
			log_info("event=chunk_released job=%s chunk=%d",
			    ch->c.job_id, ch->c.chunk);
		chunks_free(ch);
	}
	p->nchunks = 0;
	domains_sweep(p, INT64_MAX);
}

/* The writer and the resolver threads of a run. */
static int
process_threads_start(struct process *p)
{
	struct buf err;

	buf_init(&err, 1024);
	p->writer = writer_start(p->conf, p->owner, p->grey_delay, &err);
	if (p->writer != NULL && (p->resolver = resolver_start(p->conf,
	    PROCESS_RESOLVERS, p->dns_deadline, &err)) == NULL) {
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

void
process_set_wake(struct process *p, struct wake *w)
{
	p->wake = w;
	p->claim_every = w ? conf_int(p->conf, CONF_WORKER_POLL_INTERVAL) *
	    1000 : PROCESS_CLAIM_MS;
}

/* Waiting for a host's back-off: a wake-up ends the wait. */
static void
process_pause(struct process *p, int ms)
{
	struct pollfd w = { p->wake ? wake_fd(p->wake) : -1, POLLIN, 0 };

	if (poll(&w, 1, ms) == 1 && (w.revents & POLLIN))
		p->woken = 1;
}

int
process_run(struct process *p, struct db *db, volatile sig_atomic_t *stop,
    time_t *last_hk)
{
	int64_t now;
	time_t t;
	int timeout;
	unsigned long long n;

	if (process_threads_start(p) == -1)
		return -1;
	p->db = db;
	p->db_failed = 0;
	/* The last run lost the database holding chunks: they are this
	 * process's still (its owner name), given back now rather than when
	 * their leases run out (worker_lease_seconds) */
	if (p->orphaned) {
		if (jobqueue_release_owner(db, p->owner, &n) != JOBQUEUE_OK) {
			process_threads_stop(p);
			return -1;
		}
		p->orphaned = 0;
		log_info("event=chunks_released reason=db_failure chunks=%llu",
		    n);
	}
	p->claim_empty = 0;
	p->claim_short = 0;
	p->last_claim = 0;
	for (;;) {
		now = timeutil_mono_ms();
		if (*stop) {
			process_drop_all(p, 1);
			process_threads_stop(p);
			profiles_write(p, now, 1);
			return 0;
		}
		/* A chunk that finishes makes room for the next at once while
		 * the queue has work (and the writer keeps up); once a claim
		 * comes back short, the next waits claim_every, or until
		 * svc-api announces a job. */
		if (p->woken) {
			p->woken = 0;
			if (wake_wait(p->wake, 0)) {
				log_debug("event=woken what=jobs busy=yes");
				p->claim_short = 0; /* woken: claim now */
			}
		}
		if (p->nchunks < chunks_cap(p) && (p->nchunks == 0 ||
		    !p->claim_short || now - p->last_claim >= p->claim_every) &&
		    writer_backlog(p->writer) < PROCESS_BACKLOG_MAX)
			chunks_claim(p, now);
		if (p->db_failed)
			break;
		if (p->nchunks == 0 && p->claim_empty) {
			/* Sessions that have concluded every address may be
			 * saying QUIT still: they end first. */
			if (p->nsessions > 0) {
				sessions_poll(p, PROCESS_POLL_MS);
				continue;
			}
			/* chunks handed back may be called back now (their
			 * pairs read again first) */
			if (p->ndeferred > 0) {
				pacer_sync(p, now);
				defer_tick(p, now);
				if (p->db_failed)
					break;
				if (!p->claim_empty)
					continue;
			}
			if (writer_backlog(p->writer) == 0) {
				process_threads_stop(p);
				(void)connstats_flush(db, 1);
				profiles_write(p, now, 1);
				return 0;
			}
			/* Chunks ended but not yet written may be pending
			 * again: look once more when they are. */
			writer_drain(p->writer);
			chunks_outcomes(p);
			if (p->db_failed)
				break;
			continue;
		}
		domains_dns(p);
		domains_dns_answers(p);
		sessions_schedule(p, timeutil_mono_ms());
		timeout = p->dns_head ? 0 : PROCESS_POLL_MS;
		if (p->nsessions > 0 || p->dns_pending > 0)
			sessions_poll(p, timeout);
		else if (timeout > 0 && p->nchunks > 0)
			/* waiting for a host's back-off */
			process_pause(p, 50);
		now = timeutil_mono_ms();
		defer_tick(p, now);
		chunks_tick(p, now);
		if (p->db_failed)
			break;
		domains_sweep(p, now);
		pacer_sync(p, now);
		profiles_write(p, now, 0);
		if (heartbeat_beat(db) == -1 || connstats_flush(db, 0) == -1) {
			p->db_failed = 1;
			break;
		}
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
	p->orphaned = p->nchunks > 0;
	process_drop_all(p, 0);
	process_threads_stop(p);
	return -1;
}
