/* resolver.c: svc-worker's MX lookup threads (see resolver.h). A notify
 * pipe (util/notify.h) tells the loop that answers are waiting. The mutex
 * guards the queue of domains, the answers, the notify pipe's state, and
 * the stop flag. */
#include "worker/resolver.h"
#include "util/grow.h"
#include "util/log.h"
#include "util/notify.h"
#include "util/strparse.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define RESOLVER_THREADS_MAX 64

struct resolver_request {
	char			 domain[DNS_NAME_MAX + 1];
	struct resolver_request	*next;
};

struct resolver_thread {
	struct resolver		*owner;
	struct dns_resolver	*dns;
	pthread_t		 thread;
	int			 started;
};

struct resolver {
	struct resolver_thread	 t[RESOLVER_THREADS_MAX];
	int			 nthreads;
	struct notify		 notify;

	pthread_mutex_t		 mu;
	pthread_cond_t		 work;
	struct resolver_request	*head, *tail;
	struct resolver_answer	*ans;
	size_t			 nans, capans;
	int			 stopping;
};

/* Called with the mutex held. */
static void
resolver_answer_add(struct resolver *r, const char *domain,
    struct dns_mx_result *mx)
{
	if (grow(&r->ans, r->nans, &r->capans, sizeof(*r->ans), 16) == -1) {
		/* The domain's addresses stay queued: its chunk's lease
		 * expires and another pass looks it up again. */
		log_error("event=dns_answer_lost domain=%s error=\"out of "
		    "memory\"", domain);
		dns_mx_result_free(mx);
		return;
	}
	strparse_copy(r->ans[r->nans].domain, sizeof(r->ans[0].domain),
	    domain);
	r->ans[r->nans].mx = *mx;
	r->nans++;
	notify_raise(&r->notify);
}

static void *
resolver_main(void *arg)
{
	struct resolver_thread *t = arg;
	struct resolver *r = t->owner;
	struct resolver_request *q;
	struct dns_mx_result mx;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (r->head == NULL && !r->stopping)
			pthread_cond_wait(&r->work, &r->mu);
		if (r->stopping)
			break;
		q = r->head;
		if ((r->head = q->next) == NULL)
			r->tail = NULL;
		pthread_mutex_unlock(&r->mu);
		dns_lookup_mx(t->dns, q->domain, &mx);
		pthread_mutex_lock(&r->mu);
		resolver_answer_add(r, q->domain, &mx);
		free(q);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

struct resolver *
resolver_start(const struct conf *c, int threads, int64_t deadline,
    struct buf *err)
{
	struct resolver *r;
	int i;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	if (threads < 1)
		threads = 1;
	if (threads > RESOLVER_THREADS_MAX)
		threads = RESOLVER_THREADS_MAX;
	r->notify.fd[0] = r->notify.fd[1] = -1;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->work, NULL);
	if (notify_open(&r->notify, err) == -1) {
		resolver_stop(r);
		return NULL;
	}
	for (i = 0; i < threads; i++) {
		r->t[i].owner = r;
		if ((r->t[i].dns = dns_resolver_new(c, err)) == NULL) {
			resolver_stop(r);
			return NULL;
		}
		dns_resolver_set_deadline(r->t[i].dns, deadline);
		r->nthreads++;
		if (pthread_create(&r->t[i].thread, NULL, resolver_main,
		    &r->t[i]) != 0) {
			buf_puts(err, "cannot start a resolver thread");
			resolver_stop(r);
			return NULL;
		}
		r->t[i].started = 1;
	}
	return r;
}

int
resolver_submit(struct resolver *r, const char *domain)
{
	struct resolver_request *q;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		return -1;
	strparse_copy(q->domain, sizeof(q->domain), domain);
	pthread_mutex_lock(&r->mu);
	if (r->tail)
		r->tail->next = q;
	else
		r->head = q;
	r->tail = q;
	pthread_cond_signal(&r->work);
	pthread_mutex_unlock(&r->mu);
	return 0;
}

size_t
resolver_answers(struct resolver *r, struct resolver_answer *out,
    size_t max)
{
	size_t n;

	pthread_mutex_lock(&r->mu);
	n = r->nans < max ? r->nans : max;
	if (n > 0) {
		memcpy(out, r->ans, n * sizeof(*out));
		memmove(r->ans, r->ans + n, (r->nans - n) * sizeof(*out));
		r->nans -= n;
	}
	if (r->nans == 0)
		notify_clear(&r->notify);
	pthread_mutex_unlock(&r->mu);
	return n;
}

int
resolver_fd(const struct resolver *r)
{
	return notify_fd(&r->notify);
}

void
resolver_stop(struct resolver *r)
{
	struct resolver_request *q;
	size_t i;
	int k;

	if (r == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	r->stopping = 1;
	pthread_cond_broadcast(&r->work);
	pthread_mutex_unlock(&r->mu);
	for (k = 0; k < r->nthreads; k++) {
		if (r->t[k].started)
			pthread_join(r->t[k].thread, NULL);
		dns_resolver_free(r->t[k].dns);
	}
	while ((q = r->head) != NULL) {
		r->head = q->next;
		free(q);
	}
	for (i = 0; i < r->nans; i++)
		dns_mx_result_free(&r->ans[i].mx);
	free(r->ans);
	notify_close(&r->notify);
	pthread_cond_destroy(&r->work);
	pthread_mutex_destroy(&r->mu);
	free(r);
}
