/* ingester.h: svc-worker's side of upload jobs: claims the ones waiting
 * (ingesting, or awaiting confirmation with a preview refresh asked for),
 * reads their files (jobs/ingest.h), computes previews (previewer.h) and
 * moves them on. As a daemon it is a thread of its own, with its own
 * database connection and engine, so that a 50 MB file never holds up the
 * SMTP loop; with --once it runs in the pass before the chunks. */
#ifndef SVC_WORKER_INGESTER_H
#define SVC_WORKER_INGESTER_H
#include "core/db.h"
#include "engine/verify.h"
#include "util/conf.h"
#include <signal.h>

struct ingester;

/* Starts the thread (it connects and makes its engine itself, and tries
 * again while it cannot); NULL when the thread cannot start. */
struct ingester *ingester_start(const struct conf *, const char *owner);
/* Stops the thread: a download or a file being read stops within a
 * second and its job's lease is given back; a preview under way is left
 * to its lease. */
void	 ingester_stop(struct ingester *);
/* Runs the upload jobs waiting, one after the other, on this thread, max
 * of them at most (0: every one): the number run, or -1 when the database
 * failed. */
int	 ingester_run_pending(const struct conf *, struct db *,
	    struct verify_engine *, const char *owner, int max,
	    volatile sig_atomic_t *stop);
#endif
