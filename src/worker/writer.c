/* writer.c: svc-worker's database writer thread (see writer.h). Tasks run
 * one at a time in the order they were handed over, on the writer's own
 * connection, so a chunk's results are always written before its end.
 * After a database failure the writer runs nothing more: every later task
 * comes back as a DB outcome, and the loop stops (leases then expire and
 * the rows not written are verified again by whoever claims them). The
 * mutex guards the queue, the backlog and the outcomes only. */
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
	struct writer_task	*next;
};

struct writer {
	struct db		*db;
	char			 owner[JOBQUEUE_OWNER_MAX + 1];
	long			 retry_seconds;
	int			 failed;	/* thread only */

	pthread_t		 thread;
	pthread_mutex_t		 mu;
	pthread_cond_t		 work;		/* a task, or stopping */
	pthread_cond_t		 idle;		/* the backlog is 0 */
	struct writer_task	*head, *tail;
	size_t			 backlog;	/* queued or running */
	struct writer_outcome	*out;
	size_t			 nout, capout;
	int			 stopping;
};

static void
writer_task_free(struct writer_task *t)
{
	vcache_entries_clear(t->cache, t->ncache);
	free(t->cache);
	free(t->res);
	free(t);
}

static enum jobqueue_err
writer_run(struct writer *w, struct writer_task *t)
{
	enum jobqueue_err rc;
	size_t done = 0;
	int completed = 0;

	if (w->failed)
		return JOBQUEUE_DB;
	if (t->kind == WRITER_FINISH) {
		rc = jobqueue_finish(w->db, &t->c, w->owner, &completed);
		if (rc == JOBQUEUE_LOST)
			log_warn("event=lease_lost job=%s chunk=%d at=finish",
			    t->c.job_id, t->c.chunk);
	} else {
		/* The cache is only a cache: a failed write is not fatal. */
		if (t->ncache && vcache_put_many(w->db, VCACHE_VERDICT,
		    t->cache, t->ncache) != DB_OK)
			log_warn("event=verdict_cache_write_failed job=%s "
			    "chunk=%d rows=%zu error=\"%s\"", t->c.job_id,
			    t->c.chunk, t->ncache, db_error(w->db));
		rc = jobqueue_write(w->db, &t->c, t->res, t->nres,
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
		    db_error(w->db));
		w->failed = 1;
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
	struct writer *w = arg;
	struct writer_task *t;
	enum jobqueue_err rc;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->head == NULL && !w->stopping)
			pthread_cond_wait(&w->work, &w->mu);
		if ((t = w->head) == NULL)
			break;		/* stopping, and nothing left */
		if ((w->head = t->next) == NULL)
			w->tail = NULL;
		pthread_mutex_unlock(&w->mu);
		rc = writer_run(w, t);
		pthread_mutex_lock(&w->mu);
		if (rc != JOBQUEUE_OK)
			writer_outcome_add(w, t, rc);
		writer_task_free(t);
		if (--w->backlog == 0)
			pthread_cond_broadcast(&w->idle);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct writer *
writer_start(const struct conf *c, const char *owner, long retry_seconds,
    struct buf *err)
{
	struct writer *w;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	strparse_copy(w->owner, sizeof(w->owner), owner);
	w->retry_seconds = retry_seconds;
	if (db_open(c, 0, &w->db, err) != DB_OK) {
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->idle, NULL);
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
		buf_puts(err, "cannot start the writer thread");
		pthread_cond_destroy(&w->idle);
		pthread_cond_destroy(&w->work);
		pthread_mutex_destroy(&w->mu);
		db_close(w->db);
		free(w);
		return NULL;
	}
	return w;
}

static int
writer_push(struct writer *w, struct writer_task *t)
{
	pthread_mutex_lock(&w->mu);
	if (w->tail)
		w->tail->next = t;
	else
		w->head = t;
	w->tail = t;
	w->backlog++;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

int
writer_results(struct writer *w, const struct jobqueue_chunk *c,
    struct jobqueue_result *res, size_t nres, struct vcache_entry *cache,
    size_t ncache)
{
	struct writer_task *t;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		vcache_entries_clear(cache, ncache);
		free(cache);
		free(res);
		return -1;
	}
	t->kind = WRITER_RESULTS;
	t->c = *c;
	t->res = res;
	t->nres = nres;
	t->cache = cache;
	t->ncache = ncache;
	return writer_push(w, t);
}

int
writer_finish(struct writer *w, const struct jobqueue_chunk *c)
{
	struct writer_task *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return -1;
	t->kind = WRITER_FINISH;
	t->c = *c;
	return writer_push(w, t);
}

size_t
writer_backlog(struct writer *w)
{
	size_t n;

	pthread_mutex_lock(&w->mu);
	n = w->backlog;
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
	pthread_mutex_lock(&w->mu);
	w->stopping = 1;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->idle);
	pthread_cond_destroy(&w->work);
	pthread_mutex_destroy(&w->mu);
	db_close(w->db);
	free(w->out);
	free(w);
}
