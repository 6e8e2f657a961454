/* writer.c: svc-worker's database writer threads (see writer.h). Results
 * and chunk ends run one at a time in the order they were handed over, on
 * the results lane's own connection, so a chunk's results are always
 * written before its end; verdict cache entries run beside them on a lane
 * and connection of their own (or with the results when that connection
 * cannot be opened), so that MariaDB writes both at once, and a chunk's
 * end waits for the cache entries handed over before it.
 * After a database failure of the results the writer runs nothing more:
 * every later task comes back as a DB outcome (cache tasks are dropped),
 * and the loop stops (leases then expire and the rows not written are
 * verified again by whoever claims them); a failed cache write is logged
 * and forgotten. The mutex guards the queues, the counts and the
 * outcomes only. */
#include "worker/writer.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/strparse.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct writer_task {
	enum writer_kind	 kind;
	struct jobqueue_chunk	 c;
	struct jobqueue_result	*res;
	size_t			 nres;
	struct vcache_entry	*cache;
	size_t			 ncache;
	size_t			 after_cache;	/* FINISH: the cache tasks
						 * handed over before it */
	struct writer_task	*next;
};

/* A thread, its connection and its queue. */
struct writer_lane {
	struct writer		*w;
	struct db		*db;
	pthread_t		 thread;
	pthread_cond_t		 work;		/* a task, or stopping */
	struct writer_task	*head, *tail;
	int			 failed;	/* thread only */
};

enum {
	WRITER_LANE_RESULTS,	/* results and chunk ends, in order */
	WRITER_LANE_CACHE,	/* verdict cache entries */
	WRITER_LANES
};

struct writer {
	char			 owner[JOBQUEUE_OWNER_MAX + 1];
	long			 retry_seconds;

	pthread_mutex_t		 mu;
	pthread_cond_t		 idle;		/* the backlog is 0 */
	struct writer_lane	 lane[WRITER_LANES];
	size_t			 nlanes;	/* 1: the cache goes with the
						 * results */
	size_t			 backlog;	/* queued or running */
	/* cache tasks handed over and done: a chunk's end waits for the
	 * cache entries handed over before it, so that a job is completed
	 * only once its verdicts are in the cache */
	size_t			 cache_pushed, cache_done;
	pthread_cond_t		 cache_cv;
	struct writer_outcome	*out;
	size_t			 nout, capout;
	int			 stopping;
	int			 failed;	/* the results lane failed */
};

static void
writer_task_free(struct writer_task *t)
{
	vcache_entries_clear(t->cache, t->ncache);
	free(t->cache);
	free(t->res);
	free(t);
}

/* The cache is only a cache: a failed write is logged, never fatal. */
static void
writer_run_cache(struct writer_lane *l, const struct writer_task *t)
{
	if (t->ncache && vcache_put_many(l->db, VCACHE_VERDICT, t->cache,
	    t->ncache) != DB_OK)
		log_warn("event=verdict_cache_write_failed job=%s chunk=%d "
		    "rows=%zu error=\"%s\"", t->c.job_id, t->c.chunk,
		    t->ncache, db_error(l->db));
}

static enum jobqueue_err
writer_run(struct writer_lane *l, struct writer_task *t)
{
	struct writer *w = l->w;
	enum jobqueue_err rc;
	size_t done = 0;
	int completed = 0;

	if (t->kind == WRITER_CACHE) {
		writer_run_cache(l, t);
		return JOBQUEUE_OK;
	}
	if (l->failed)
		return JOBQUEUE_DB;
	if (t->kind == WRITER_FINISH) {
		rc = jobqueue_finish(l->db, &t->c, w->owner, &completed);
		if (rc == JOBQUEUE_LOST)
			log_warn("event=lease_lost job=%s chunk=%d at=finish",
			    t->c.job_id, t->c.chunk);
	} else {
		writer_run_cache(l, t);	/* one lane: the cache goes here */
		rc = jobqueue_write(l->db, &t->c, t->res, t->nres,
		    w->retry_seconds, &done);
		if (rc == JOBQUEUE_OK && t->nres)
			log_debug("event=results_written job=%s chunk=%d "
			    "rows=%zu done=%zu", t->c.job_id, t->c.chunk,
			    t->nres, done);
	}
	if (rc == JOBQUEUE_DB) {
		log_error("event=%s_failed job=%s chunk=%d rows=%zu "
		    "error=\"%s\"", t->kind == WRITER_FINISH ? "chunk_finish" :
		    "results_write", t->c.job_id, t->c.chunk, t->nres,
		    db_error(l->db));
		l->failed = 1;
	}
	return rc;
}

static void
writer_outcome_add(struct writer *w, const struct writer_task *t,
    enum jobqueue_err rc)
{
	if (grow(&w->out, w->nout, &w->capout, sizeof(*w->out), 16) == -1) {
		log_error("event=writer_outcome_lost job=%s chunk=%d rc=%s",
		    t->c.job_id, t->c.chunk, jobqueue_err_names[rc]);
		return;
	}
	w->out[w->nout].kind = t->kind;
	w->out[w->nout].c = t->c;
	w->out[w->nout].rc = rc;
	w->nout++;
}

static void *
writer_main(void *arg)
{
	struct writer_lane *l = arg;
	struct writer *w = l->w;
	struct writer_task *t;
	enum jobqueue_err rc;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (l->head == NULL && !w->stopping)
			pthread_cond_wait(&l->work, &w->mu);
		if ((t = l->head) == NULL)
			break;		/* stopping, and nothing left */
		if ((l->head = t->next) == NULL)
			l->tail = NULL;
		if (t->kind == WRITER_FINISH && w->cache_done < t->after_cache)
			log_debug("event=chunk_finish_waits_cache job=%s "
			    "chunk=%d tasks=%zu", t->c.job_id, t->c.chunk,
			    t->after_cache - w->cache_done);
		while (t->kind == WRITER_FINISH && w->cache_done <
		    t->after_cache)
			pthread_cond_wait(&w->cache_cv, &w->mu);
		if (t->kind == WRITER_CACHE && w->failed)
			rc = JOBQUEUE_OK;	/* dropped: the loop stops */
		else {
			pthread_mutex_unlock(&w->mu);
			rc = writer_run(l, t);
			pthread_mutex_lock(&w->mu);
		}
		if (rc == JOBQUEUE_DB)
			w->failed = 1;
		if (rc != JOBQUEUE_OK)
			writer_outcome_add(w, t, rc);
		if (t->kind == WRITER_CACHE) {
			w->cache_done++;
			pthread_cond_broadcast(&w->cache_cv);
		}
		writer_task_free(t);
		if (--w->backlog == 0)
			pthread_cond_broadcast(&w->idle);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Stops the lanes started (the first n), closes their connections. */
static void
writer_lanes_stop(struct writer *w, size_t n)
{
	size_t i;

	pthread_mutex_lock(&w->mu);
	w->stopping = 1;
	for (i = 0; i < n; i++)
		pthread_cond_signal(&w->lane[i].work);
	pthread_mutex_unlock(&w->mu);
	for (i = 0; i < n; i++) {
		pthread_join(w->lane[i].thread, NULL);
		pthread_cond_destroy(&w->lane[i].work);
		db_close(w->lane[i].db);
	}
}

/* Connects the lane and starts its thread; -1 (nothing left open) when
 * it cannot. */
static int
writer_lane_start(struct writer *w, struct writer_lane *l,
    const struct conf *c, struct buf *err)
{
	l->w = w;
	if (db_open(c, 0, &l->db, err) != DB_OK)
		return -1;
	pthread_cond_init(&l->work, NULL);
	if (pthread_create(&l->thread, NULL, writer_main, l) != 0) {
		buf_puts(err, "cannot start a writer thread");
		pthread_cond_destroy(&l->work);
		db_close(l->db);
		l->db = NULL;
		return -1;
	}
	return 0;
}

struct writer *
writer_start(const struct conf *c, const char *owner, long retry_seconds,
    struct buf *err)
{
	struct writer *w;
	struct buf cerr;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	strparse_copy(w->owner, sizeof(w->owner), owner);
	w->retry_seconds = retry_seconds;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->idle, NULL);
	pthread_cond_init(&w->cache_cv, NULL);
	if (writer_lane_start(w, &w->lane[WRITER_LANE_RESULTS], c, err) ==
	    -1) {
		pthread_cond_destroy(&w->cache_cv);
		pthread_cond_destroy(&w->idle);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return NULL;
	}
	w->nlanes = 1;
	/* The cache's own connection is a gain, not a need: without it the
	 * cache entries go with the results. */
	buf_init(&cerr, 256);
	if (writer_lane_start(w, &w->lane[WRITER_LANE_CACHE], c, &cerr) == 0)
		w->nlanes = WRITER_LANES;
	else
		log_warn("event=cache_writer_unavailable error=\"%s\" "
		    "(the verdict cache is written with the results)",
		    buf_str(&cerr));
	buf_free(&cerr);
	return w;
}

static void
writer_push(struct writer *w, size_t lane, struct writer_task *t)
{
	struct writer_lane *l = &w->lane[lane];

	pthread_mutex_lock(&w->mu);
	if (t->kind == WRITER_CACHE)
		w->cache_pushed++;
	else if (t->kind == WRITER_FINISH)
		t->after_cache = w->cache_pushed;
	if (l->tail)
		l->tail->next = t;
	else
		l->head = t;
	l->tail = t;
	w->backlog++;
	pthread_cond_signal(&l->work);
	pthread_mutex_unlock(&w->mu);
}

/* A task of the kind for the chunk, owning the arrays given (NULL, the
 * arrays freed, when out of memory). */
static struct writer_task *
writer_task(enum writer_kind kind, const struct jobqueue_chunk *c,
    struct jobqueue_result *res, size_t nres, struct vcache_entry *cache,
    size_t ncache)
{
	struct writer_task *t;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		vcache_entries_clear(cache, ncache);
		free(cache);
		free(res);
		return NULL;
	}
	t->kind = kind;
	t->c = *c;
	t->res = res;
	t->nres = nres;
	t->cache = cache;
	t->ncache = ncache;
	return t;
}

int
writer_results(struct writer *w, const struct jobqueue_chunk *c,
    struct jobqueue_result *res, size_t nres, struct vcache_entry *cache,
    size_t ncache)
{
	struct writer_task *t, *ct = NULL;

	if (w->nlanes == WRITER_LANES && ncache > 0) {
		if ((ct = writer_task(WRITER_CACHE, c, NULL, 0, cache,
		    ncache)) == NULL) {
			free(res);
			return -1;
		}
		cache = NULL;
		ncache = 0;
	}
	if ((t = writer_task(WRITER_RESULTS, c, res, nres, cache, ncache)) ==
	    NULL) {
		if (ct != NULL)
			writer_task_free(ct);
		return -1;
	}
	if (ct != NULL)
		writer_push(w, WRITER_LANE_CACHE, ct);
	writer_push(w, WRITER_LANE_RESULTS, t);
	return 0;
}

int
writer_finish(struct writer *w, const struct jobqueue_chunk *c)
{
	struct writer_task *t;

	if ((t = writer_task(WRITER_FINISH, c, NULL, 0, NULL, 0)) == NULL)
		return -1;
	writer_push(w, WRITER_LANE_RESULTS, t);
	return 0;
}

size_t
writer_backlog(struct writer *w)
{
	size_t n;

	pthread_mutex_lock(&w->mu);
	n = w->backlog - (w->cache_pushed - w->cache_done);
	pthread_mutex_unlock(&w->mu);
	return n;
}

size_t
writer_outcomes(struct writer *w, struct writer_outcome *out, size_t max)
{
	size_t n;

	pthread_mutex_lock(&w->mu);
	n = w->nout < max ? w->nout : max;
	if (n > 0) {	/* w->out may be NULL: no memcpy of nothing */
		memcpy(out, w->out, n * sizeof(*out));
		memmove(w->out, w->out + n, (w->nout - n) * sizeof(*out));
		w->nout -= n;
	}
	pthread_mutex_unlock(&w->mu);
	return n;
}

void
writer_drain(struct writer *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->backlog > 0)
		pthread_cond_wait(&w->idle, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

void
writer_stop(struct writer *w)
{
	if (w == NULL)
		return;
	writer_lanes_stop(w, w->nlanes);
	pthread_cond_destroy(&w->cache_cv);
	pthread_cond_destroy(&w->idle);
	pthread_mutex_destroy(&w->mu);
	free(w->out);
	free(w);
}
