/* once.h: the guards of "svc-worker --once", which cron starts every
 * minute on hosts where nothing else may run (shared hosting): a lock,
 * run_dir/svc-worker.lock, so that two runs never work at once (a run that
 * finds it held exits at once), and a time budget, worker_once_seconds,
 * after which the run stops as on SIGTERM (what it concluded is written,
 * what it holds is given back) so that it ends before cron starts the
 * next. And the order of a run's work (once_work): uploads and
 * verification take turns, one upload job (ingestion, preview or preview
 * refresh) and then verification until nothing is left to claim, again
 * and again, so that a run spent on a tenant's many or large uploads
 * still verifies every job waiting, and the other way round an upload
 * is ingested at every turn. */
#ifndef SVC_WORKER_ONCE_H
#define SVC_WORKER_ONCE_H
#include "core/db.h"
#include "util/buf.h"
#include "util/conf.h"
#include "worker/process.h"
#include <signal.h>
#include <stdint.h>
#include <time.h>

enum once_lock {
	ONCE_LOCK_TAKEN,	/* held until the process exits */
	ONCE_LOCK_BUSY,		/* another run holds it */
	ONCE_LOCK_NONE,		/* run_dir is empty: no lock */
	ONCE_LOCK_ERROR,	/* cannot open or lock the file (err) */
	ONCE_LOCK__MAX
};

extern const char *const once_lock_names[ONCE_LOCK__MAX];

/* Takes run_dir/svc-worker.lock (flock(2), exclusive, without waiting:
 * "flock run_dir/svc-worker.lock" in a script keeps runs out too). On
 * ONCE_LOCK_TAKEN *fd holds the lock open (close on exec) until exit;
 * path gets the file's name whenever run_dir is set. */
enum once_lock once_lock_take(const char *run_dir, int *fd, char *path,
	    size_t pathsz, struct buf *err);

/* Sets *stop (and once_budget_spent) when seconds have passed, from
 * SIGALRM: the same flag SIGTERM sets, so every loop that stops on SIGTERM
 * stops on the budget too. */
void	 once_budget_start(unsigned seconds, volatile sig_atomic_t *stop);
int	 once_budget_spent(void);
/* The timeutil_mono_ms() time by which the run's DNS lookups end
 * (process_set_deadline): ONCE_DNS_GRACE_MS after the budget, when the
 * run has stopped reading answers, so that a lookup the deadline cuts
 * short is never taken for the domain's answer; 0 before
 * once_budget_start. */
#define ONCE_DNS_GRACE_MS 2000
int64_t	 once_dns_deadline(void);

/* The run's work, in turns: one upload job of the ingester (owner
 * "host:pid:ingest"), then process_run until nothing is left to claim,
 * until no upload waits or *stop. 0, or -1 when the database failed. */
int	 once_work(const struct conf *, struct db *, struct process *,
	    volatile sig_atomic_t *stop, time_t *last_housekeeping);
#endif
