/* once.c: the lock, the time budget and the order of work of
 * "svc-worker --once" (once.h). The order is fair between uploads and
 * verification: ingesting every upload first (as before) let one tenant's
 * uploads spend a whole run while every job waiting for verification
 * waited; verifying first would do the same to uploads. So they take
 * turns: one upload (the ingester's round robin across accounts picks
 * which), then verification until nothing is left to claim (the job just
 * ingested included), and again. */
#include "worker/once.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "worker/ingester.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

const char *const once_lock_names[ONCE_LOCK__MAX] = {
	"taken", "busy", "none", "error"
};

static volatile sig_atomic_t *once_stop;
static volatile sig_atomic_t once_spent;
static int64_t once_end;

enum once_lock
once_lock_take(const char *run_dir, int *fd, char *path, size_t pathsz,
    struct buf *err)
{
	int e;

	*fd = -1;
	if (pathsz > 0)
		path[0] = '\0';
	if (run_dir == NULL || *run_dir == '\0')
		return ONCE_LOCK_NONE;
	if ((size_t)snprintf(path, pathsz, "%s/svc-worker.lock", run_dir) >=
	    pathsz) {
		buf_puts(err, "run_dir: path too long");
		return ONCE_LOCK_ERROR;
	}
	if ((*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) == -1) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return ONCE_LOCK_ERROR;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) == 0)
		return ONCE_LOCK_TAKEN;
	e = errno;
	close(*fd);
	*fd = -1;
	if (e == EWOULDBLOCK)
		return ONCE_LOCK_BUSY;
	buf_printf(err, "%s: flock: %s", path, strerror(e));
	return ONCE_LOCK_ERROR;
}

static void
once_on_alarm(int sig)
{
	(void)sig;
	once_spent = 1;
	*once_stop = 1;
}

void
once_budget_start(unsigned seconds, volatile sig_atomic_t *stop)
{
	struct sigaction sa;

	once_stop = stop;
	once_end = timeutil_mono_ms() + (int64_t)seconds * 1000;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = once_on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
}

int
once_budget_spent(void)
{
	return once_spent;
}

int64_t
once_dns_deadline(void)
{
	return once_end != 0 ? once_end + ONCE_DNS_GRACE_MS : 0;
}

int
once_work(const struct conf *conf, struct db *db, struct process *proc,
    volatile sig_atomic_t *stop, time_t *last_housekeeping)
{
	char owner[128];
	int n, turn = 0;

	snprintf(owner, sizeof(owner), "%s:ingest", process_owner(proc));
	do {
		turn++;
		if ((n = ingester_run_pending(conf, db, process_engine(proc),
		    owner, 1, stop)) == -1)
			return -1;
		log_debug("event=once_turn turn=%d uploads=%d", turn, n);
		if (process_run(proc, db, stop, last_housekeeping) == -1)
			return -1;
	} while (n > 0 && !*stop);
	return 0;
}
