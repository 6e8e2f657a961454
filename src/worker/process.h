/* process.h: svc-worker's verification of job chunks: claims chunks, checks
 * their addresses by domain (one MX lookup and one catch-all probe per
 * domain, many recipients per SMTP session, many sessions at once from one
 * poll loop), writes results as it goes and completes jobs. */
#ifndef SVC_WORKER_PROCESS_H
#define SVC_WORKER_PROCESS_H
#include "core/db.h"
#include "util/buf.h"
#include "util/conf.h"
#include <signal.h>
#include <stdint.h>
#include <time.h>

struct process;

/* NULL with a message in err when the engine (DNS, lists, TLS) cannot
 * start. conf must outlive the processor. */
struct process *process_new(const struct conf *, struct buf *err);
void	 process_free(struct process *);
/* svc-worker --once: the MX lookups of later runs end by deadline (a
 * timeutil_mono_ms() time; 0: none), so that stopping, which waits for the
 * lookups under way, never waits longer. */
void	 process_set_deadline(struct process *, int64_t deadline);
/* The processor's engine and lease owner ("host:pid"), for the upload
 * jobs a --once pass runs between verification turns (once.c). */
struct verify_engine *process_engine(struct process *);
const char *process_owner(const struct process *);

/* Wake-ups (w, wake.h) that come while the processor works make it look
 * for new jobs at once; otherwise a processor that found the queue short
 * looks again after worker_poll_interval, as an idle one does (the poll is
 * the fallback for jobs that no wake-up announces). Without w (NULL) it
 * looks every second. */
struct wake;
void	 process_set_wake(struct process *, struct wake *w);

/* Works on job chunks until nothing is left to claim (0), *stop is set (the
 * leases of unfinished chunks are given back; 0), or the database fails
 * (-1, leases left to expire). Runs housekeeping every
 * housekeeping_interval seconds meanwhile (*last_hk: the last run). */
int	 process_run(struct process *, struct db *,
	    volatile sig_atomic_t *stop, time_t *last_hk);
#endif
