/* deliveries.h: svc-worker's sending of event deliveries (jobs/events.h):
 * account webhooks, per-job callbacks and batch webhooks, signed
 * (jobs/sign.h), POSTed through the SSRF guard (jobs/fetch.h), many at
 * once from one libcurl multi handle with at most
 * webhook_host_concurrency to one host, each attempt recorded and retried
 * on webhook_retry_schedule. */
#ifndef SVC_WORKER_DELIVERIES_H
#define SVC_WORKER_DELIVERIES_H
#include "core/db.h"
#include "util/buf.h"
#include "util/conf.h"
#include <signal.h>

struct deliveries;

/* The daemon's sender: a thread of its own with its own database
 * connection (opened again after a failure), claiming every
 * worker_poll_interval seconds and whenever a full claim ends, until
 * deliveries_stop. NULL with a message in err when it cannot start. conf
 * must outlive it. */
struct deliveries *deliveries_start(const struct conf *, struct buf *err);
/* Stops the thread: deliveries in flight are given back, due at once. */
void	 deliveries_stop(struct deliveries *);
/* svc-worker --once: sends what is due now on db, until nothing due is
 * left (an attempt that fails waits for its retry time, for a later run)
 * or *stop is set (deliveries in flight are given back, due at once).
 * 0, or -1 when the database failed. */
int	 deliveries_once(const struct conf *, struct db *,
	    volatile sig_atomic_t *stop);
#endif
