/* egress_refresh.c: a thread that looks up SOCKS5 proxies' host names when
 * they are due (egress_refresh.h). */
#include "engine/egress_refresh.h"
#include "engine/dns.h"
#include "engine/egress_resolve.h"
#include "util/timeutil.h"
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct egress_refresh {
	struct egress		*e;
	struct dns_resolver	*dns;
	pthread_t		 thread;
	pthread_mutex_t		 lock;
	pthread_cond_t		 cond;	/* on CLOCK_MONOTONIC */
	int			 stop;
};

static void *
egress_refresh_main(void *arg)
{
	struct egress_refresh *f = arg;
	struct timespec until;
	int64_t next;

	pthread_mutex_lock(&f->lock);
	while (!f->stop) {
		pthread_mutex_unlock(&f->lock);
		egress_resolve(f->e, f->dns, timeutil_mono_ms());
		next = egress_resolve_next(f->e);
		pthread_mutex_lock(&f->lock);
		if (f->stop)
			break;
		/* timeutil_mono_ms is CLOCK_MONOTONIC in ms, as the cond's */
		until.tv_sec = (time_t)(next / 1000);
		until.tv_nsec = (long)(next % 1000) * 1000000L;
		pthread_cond_timedwait(&f->cond, &f->lock, &until);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

struct egress_refresh *
egress_refresh_start(struct egress *e, const struct conf *c, struct buf *err)
{
	struct egress_refresh *f;
	pthread_condattr_t ca;

	if ((f = calloc(1, sizeof(*f))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	f->e = e;
	if ((f->dns = dns_resolver_new(c, err)) == NULL) {
		free(f);
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* the first look-ups before any session needs them */
	egress_resolve(e, f->dns, timeutil_mono_ms());
	if (pthread_create(&f->thread, NULL, egress_refresh_main, f) != 0) {
		buf_puts(err, "cannot start the proxy name look-up thread");
		pthread_cond_destroy(&f->cond);
		pthread_mutex_destroy(&f->lock);
		dns_resolver_free(f->dns);
		free(f);
		return NULL;
	}
	return f;
}

void
egress_refresh_stop(struct egress_refresh *f)
{
	if (f == NULL)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = 1;
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->thread, NULL);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	dns_resolver_free(f->dns);
	free(f);
}
