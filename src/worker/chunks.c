/* chunks.c: the chunks svc-worker holds (sched.h): claiming them under a
 * lease and renewing it, reading their addresses and starting them through
 * the engine's batch face (syntax and sandbox, then the verdict cache and
 * the complainer lists, the operator's and the job's account's, for the
 * whole chunk in a few statements), keeping
 * their results and verdict cache entries, and handing them to the writer
 * thread (writer.h) as they come, at least every second; a chunk with
 * nothing left is ended, and an ended job's chunks are dropped. */
#include "jobs/jobend.h"
#include "util/grow.h"
#include "util/log.h"
#include "worker/sched.h"
#include "worker/writer.h"
#include <stdlib.h>
#include <string.h>

#define CHUNKS_FLUSH_MS		1000	/* results written at least this often */
#define CHUNKS_FLUSH_ROWS	500
#define CHUNKS_CLAIM_STEP	4	/* chunks claimed (and read) per loop turn:
					 * sessions start while the rest come */

/* ---------------------------------------------------------------- results */

/* Keeps a verdict to write to the cache with the chunk's next results. */
static void
chunks_cache(struct process_chunk *ch, const struct verify_result *r)
{
	if (grow(&ch->cache, ch->ncache, &ch->capcache, sizeof(*ch->cache),
	    64) == -1)
		return;		/* only a cache entry lost */
	if (verify_cache_entry(r, &ch->cache[ch->ncache]) == 0)
		ch->ncache++;
}

static void
chunks_add(struct process_chunk *ch, const struct jobqueue_result *r)
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

void
chunks_result(struct process *p, struct process_addr *pa, int store)
{
	struct process_chunk *ch = pa->chunk;
	const struct verify_result *r = &pa->it.r;
	struct jobqueue_result jr;

	if (ch->outstanding > 0)
		ch->outstanding--;
	if (ch->gone)
		return;
	jobqueue_result_set(&jr, pa->seq, r);
	if (r->v.kind == VERDICT_K_GREYLISTED && pa->attempts <
	    p->grey_retries && !r->cached && !r->sandbox) {
		jr.retry = 1;
		jr.retry_after_s = pa->retry_after_s;
		store = 0;
		if (jr.retry_after_s > 0)
			log_info("event=greylist_retry job=%s seq=%d "
			    "retry_in_s=%ld basis=mx_profile", ch->c.job_id,
			    pa->seq, jr.retry_after_s);
	}
	if (store)
		chunks_cache(ch, r);
	chunks_add(ch, &jr);
}

void
chunks_abandon(struct process_addr *pa)
{
	if (pa->chunk->outstanding > 0)
		pa->chunk->outstanding--;
	free(pa);
}

/* Hands the chunk's results and cache entries to the writer. With none,
 * the writer still looks at the job under its lock: a cancelled job comes
 * back as GONE within a second. */
void
chunks_flush(struct process *p, struct process_chunk *ch, int64_t now)
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
chunks_mark_gone(struct process *p, const char *job_id)
{
	struct process_chunk *ch;

	for (ch = p->chunks; ch != NULL; ch = ch->next)
		if (strcmp(ch->c.job_id, job_id) == 0 && !ch->gone) {
			chunks_flush(p, ch, ch->last_flush);
			ch->gone = 1;
			log_info("event=chunk_dropped job=%s chunk=%d "
			    "reason=job_ended", ch->c.job_id, ch->c.chunk);
		}
}

void
chunks_outcomes(struct process *p)
{
	struct writer_outcome o[16];
	size_t n, i;

	while ((n = writer_outcomes(p->writer, o, 16)) > 0)
		for (i = 0; i < n; i++) {
			if (o[i].rc == JOBQUEUE_GONE)
				chunks_mark_gone(p, o[i].c.job_id);
			else if (o[i].rc == JOBQUEUE_DB)
				p->db_failed = 1;
		}
}

void
chunks_free(struct process_chunk *ch)
{
	vcache_entries_clear(ch->cache, ch->ncache);
	free(ch->cache);
	free(ch->res);
	free(ch);
}

/* Hands over due results, renews leases, ends chunks with nothing left. */
void
chunks_tick(struct process *p, int64_t now)
{
	struct process_chunk **cp, *ch;

	chunks_outcomes(p);
	for (cp = &p->chunks; (ch = *cp) != NULL; ) {
		if ((ch->nres && (ch->outstanding == 0 ||
		    ch->nres >= CHUNKS_FLUSH_ROWS)) ||
		    now - ch->last_flush >= CHUNKS_FLUSH_MS)
			chunks_flush(p, ch, now);
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
		chunks_free(ch);
	}
}

/* ---------------------------------------------------------------- claims */

/* Syntax and sandbox: a new address in flight, or NULL when that already
 * concluded it (or memory ran out). */
static struct process_addr *
chunks_begin(struct process *p, struct process_chunk *ch,
    const struct jobqueue_row *row)
{
	struct process_addr *pa;

	/* Not calloc: the item (8 KB) is cleared by verify_batch_item_begin and
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
	pa->retry_after_s = 0;
	pa->next = NULL;
	ch->outstanding++;
	if (verify_batch_item_begin(p->engine, row->email, &pa->it) ==
	    VERIFY_STEP_DONE) {
		chunks_result(p, pa, 1);
		free(pa);
		return NULL;
	}
	return pa;
}

/* Reads a claimed chunk's rows and starts them on their way: a cached
 * verdict concludes an address at once, the rest go to their domain. */
static void
chunks_load(struct process *p, const struct jobqueue_chunk *c, int64_t now)
{
	struct jobqueue_row *rows = NULL;
	struct process_addr **todo;
	struct verify_item **items;
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
	log_info("event=chunk_claimed job=%s chunk=%d rows=%zu attempt=%d",
	    c->job_id, c->chunk, n, c->attempts);
	todo = calloc(n + 1, sizeof(*todo));
	items = calloc(n + 1, sizeof(*items));
	if (todo == NULL || items == NULL) {
		/* Nothing started: the rows stay pending for a later claim. */
		free(todo);
		free(items);
		jobqueue_rows_free(rows, n);
		return;
	}
	for (i = 0; i < n; i++)
		if ((todo[m] = chunks_begin(p, ch, &rows[i])) != NULL) {
			items[m] = &todo[m]->it;
			m++;
		}
	jobqueue_rows_free(rows, n);
	/* (the job's account when it has a complainer list: its list is
	 * looked up; ch->c outlives the chunk's addresses) */
	verify_batch_lookup(p->engine, p->db, ch->c.account_complainers &&
	    ch->c.account[0] ? ch->c.account : NULL, items, m);
	for (i = 0; i < m; i++) {
		if (todo[i]->it.r.cached) {
			chunks_result(p, todo[i], 0);
			free(todo[i]);
		} else
			domains_route(p, todo[i]);
	}
	free(items);
	free(todo);
}

size_t
chunks_cap(const struct process *p)
{
	return p->paced_only && p->max_chunks < SCHED_CHUNKS_MAX ?
	    SCHED_CHUNKS_MAX : p->max_chunks;
}

void
chunks_claim(struct process *p, int64_t now)
{
	struct jobqueue_chunk got[SCHED_CHUNKS_MAX];
	size_t n = 0, i, want, cap = chunks_cap(p);

	if (p->nchunks >= cap)
		return;
	p->last_claim = now;
	want = cap - p->nchunks;
	if (want > CHUNKS_CLAIM_STEP)
		want = CHUNKS_CLAIM_STEP;
	if (jobqueue_claim(p->db, p->owner, p->lease, got, want, &n) !=
	    JOBQUEUE_OK) {
		p->db_failed = 1;
		return;
	}
	p->claim_empty = n == 0;
	p->claim_short = n < want;
	if (n > 0 && p->nchunks + n > p->max_chunks)
		log_info("event=chunks_beyond_cap held=%zu claimed=%zu cap=%zu "
		    "reason=paced_only", p->nchunks, n, p->max_chunks);
	for (i = 0; i < n; i++)
		chunks_load(p, &got[i], now);
}
