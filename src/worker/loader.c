/* loader.c: svc-worker's chunk loader thread (see loader.h). The mutex
 * guards the request, the answer, the notify pipe's state and the stop
 * flag; the thread alone uses the connection while it runs. */
#include "worker/loader.h"
#include "util/log.h"
#include "util/notify.h"
#include "util/strparse.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct loader {
	struct db		*db;
	char			 owner[JOBQUEUE_OWNER_MAX + 1];
	long			 lease;

	pthread_t		 thread;
	pthread_mutex_t		 mu;
	pthread_cond_t		 work;		/* a request, or stopping */
	pthread_cond_t		 answered;	/* the answer is there */
	struct notify		 notify;
	size_t			 want;		/* asked, not yet started */
	int			 busy;		/* asked, answer not taken */
	int			 has_answer;
	struct loader_answer	 answer;
	int			 stopping;
};

static void
loader_answer_free(struct loader_answer *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		jobqueue_rows_free(a->ch[i].rows, a->ch[i].n);
	a->n = 0;
}

/* The claim and the rows of what it claimed, on the loader's connection. */
static void
loader_run(struct loader *l, size_t want, struct loader_answer *a)
{
	struct jobqueue_chunk got[LOADER_CLAIM_MAX];
	size_t n = 0, i;

	memset(a, 0, sizeof(*a));
	a->want = want;
	a->rc = jobqueue_claim(l->db, l->owner, l->lease, got, want, &n);
	if (a->rc != JOBQUEUE_OK) {
		log_error("event=chunk_claim_failed error=\"%s\"",
		    db_error(l->db));
		a->rc = JOBQUEUE_DB;
		return;
	}
	for (i = 0; i < n; i++) {
		a->ch[i].c = got[i];
		a->n++;
		if (jobqueue_rows(l->db, &got[i], &a->ch[i].rows, &a->ch[i].n,
		    &a->ch[i].total) != JOBQUEUE_OK) {
			log_error("event=chunk_rows_failed job=%s chunk=%d "
			    "error=\"%s\"", got[i].job_id, got[i].chunk,
			    db_error(l->db));
			a->ch[i].rows = NULL;
			a->ch[i].n = 0;
			a->rc = JOBQUEUE_DB;
			/* the rest are listed too: leased, not read */
			for (i++; i < n; i++)
				a->ch[a->n++].c = got[i];
			return;
		}
	}
}

static void *
loader_main(void *arg)
{
	struct loader *l = arg;
	struct loader_answer a;
	size_t want;

	pthread_mutex_lock(&l->mu);
	for (;;) {
		while (l->want == 0 && !l->stopping)
			pthread_cond_wait(&l->work, &l->mu);
		if (l->want == 0)
			break;		/* stopping, nothing asked */
		want = l->want;
		l->want = 0;
		pthread_mutex_unlock(&l->mu);
		loader_run(l, want, &a);
		pthread_mutex_lock(&l->mu);
		l->answer = a;
		l->has_answer = 1;
		notify_raise(&l->notify);
		pthread_cond_broadcast(&l->answered);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

struct loader *
loader_start(const struct conf *c, const char *owner, long lease_seconds,
    struct buf *err)
{
	struct loader *l;

	if ((l = calloc(1, sizeof(*l))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	strparse_copy(l->owner, sizeof(l->owner), owner);
	l->lease = lease_seconds;
	if (notify_open(&l->notify, err) == -1) {
		free(l);
		return NULL;
	}
	if (db_open(c, 0, &l->db, err) != DB_OK) {
		notify_close(&l->notify);
		free(l);
		return NULL;
	}
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->work, NULL);
	pthread_cond_init(&l->answered, NULL);
	if (pthread_create(&l->thread, NULL, loader_main, l) != 0) {
		buf_puts(err, "cannot start the loader thread");
		pthread_cond_destroy(&l->answered);
		pthread_cond_destroy(&l->work);
		pthread_mutex_destroy(&l->mu);
		db_close(l->db);
		notify_close(&l->notify);
		free(l);
		return NULL;
	}
	return l;
}

int
loader_ask(struct loader *l, size_t want)
{
	int rc = -1;

	if (want == 0 || want > LOADER_CLAIM_MAX)
		return -1;
	pthread_mutex_lock(&l->mu);
	if (!l->busy) {
		l->busy = 1;
		l->want = want;
		pthread_cond_signal(&l->work);
		rc = 0;
	}
	pthread_mutex_unlock(&l->mu);
	return rc;
}

int
loader_busy(struct loader *l)
{
	int busy;

	pthread_mutex_lock(&l->mu);
	busy = l->busy;
	pthread_mutex_unlock(&l->mu);
	return busy;
}

int
loader_take(struct loader *l, struct loader_answer *a, int wait)
{
	int got = 0;

	pthread_mutex_lock(&l->mu);
	while (wait && l->busy && !l->has_answer)
		pthread_cond_wait(&l->answered, &l->mu);
	if (l->has_answer) {
		*a = l->answer;
		l->answer.n = 0;
		l->has_answer = 0;
		l->busy = 0;
		notify_clear(&l->notify);
		got = 1;
	}
	pthread_mutex_unlock(&l->mu);
	return got;
}

int
loader_fd(const struct loader *l)
{
	return notify_fd(&l->notify);
}

void
loader_stop(struct loader *l)
{
	struct loader_answer a;
	size_t i;

	if (l == NULL)
		return;
	/* a claim asked for is answered before the thread stops */
	if (loader_take(l, &a, 1)) {
		for (i = 0; i < a.n; i++)
			if (jobqueue_release(l->db, &a.ch[i].c, l->owner) ==
			    JOBQUEUE_OK)
				log_info("event=chunk_released job=%s chunk=%d",
				    a.ch[i].c.job_id, a.ch[i].c.chunk);
		loader_answer_free(&a);
	}
	pthread_mutex_lock(&l->mu);
	l->stopping = 1;
	pthread_cond_signal(&l->work);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	pthread_cond_destroy(&l->answered);
	pthread_cond_destroy(&l->work);
	pthread_mutex_destroy(&l->mu);
	db_close(l->db);
	notify_close(&l->notify);
	free(l);
}
