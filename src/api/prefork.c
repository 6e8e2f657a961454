/* prefork.c: the svc-api master. It only forks, reaps and signals: every
 * request is served by a child, which opens its own DB connection after
 * the fork, and one more child, the keeper (keeper.h), gives back the
 * host's unused rate-limit permits. A child that dies is replaced (after a
 * pause when it died young, so a broken configuration does not spin);
 * SIGHUP re-reads the configuration and replaces the children one by one
 * as they finish. */
#include "api/prefork.h"
#include "api/api.h"
#include "api/keeper.h"
#include "api/serve.h"
#include "core/authcache.h"
#include "util/log.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got_chld, got_hup, got_term;

static void
prefork_on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_chld = 1;
	else if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term = 1;
}

/* Made before the first fork and inherited by every child, replacements
 * included: the responders' shared key cache generations (authcache.h),
 * rate-limit permits (permits.h), Idempotency-Key entries left to
 * abandon (idempotency_pending.h) and slot file (slots.h). */
static struct api_shared prefork_shared;

/* A responder, or with keeper set the keeper. */
static pid_t
prefork_spawn(struct conf *c, int fd, const sigset_t *orig, int keeper)
{
	struct sigaction sa;
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	/* A master killed outright must not leave orphans serving with a
	 * configuration nobody can reload. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		_exit(0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigprocmask(SIG_SETMASK, orig, NULL);
	if (keeper) {
		close(fd);
		_exit(keeper_loop(c, &prefork_shared));
	}
	_exit(serve_loop(c, fd, 0, &prefork_shared));
}

static void
prefork_signal_all(const pid_t *pids, int n, int sig)
{
	int i;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], sig);
}

/* Stops the children pids[from..n): SIGTERM, SIGKILL 10 s later. */
static void
prefork_stop(pid_t *pids, int from, int n)
{
	time_t deadline = time(NULL) + 10;
	int left, i, status;
	pid_t pid;

	prefork_signal_all(pids + from, n - from, SIGTERM);
	for (;;) {
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
			for (i = 0; i < n; i++)
				if (pids[i] == pid)
					pids[i] = 0;
		for (left = 0, i = from; i < n; i++)
			left += pids[i] > 0;
		if (left == 0)
			return;
		if (time(NULL) >= deadline) {
			log_warn("event=stop_timeout children=%d", left);
			prefork_signal_all(pids + from, n - from, SIGKILL);
			deadline = time(NULL) + 5;
		}
		usleep(50000);
	}
}

static void
prefork_reload(struct conf *c, const char *path, pid_t *pids, int n)
{
	struct conf fresh;
	struct buf err;

	buf_init(&err, 1024);
	if (path == NULL || conf_load(&fresh, path, 1, &err) == -1) {
		log_error("event=reload_failed error=\"%s\"",
		    path ? buf_str(&err) : "no configuration file");
		buf_free(&err);
		return;
	}
	buf_free(&err);
	conf_free(c);
	*c = fresh;
	if (prefork_shared.permits != NULL)
		permits_set_max(prefork_shared.permits,
		    conf_int(c, CONF_RATE_PERMITS_MAX));
	log_info("event=reload conf=%s children=%d", path, n);
	/* Each child finishes its request and exits; the reaper forks its
	 * successor with the new configuration. */
	prefork_signal_all(pids, n, SIGTERM);
}

int
prefork_run(struct conf *c, const char *path, int fd, int n, int slots_fd)
{
	struct sigaction sa;
	sigset_t block, orig, none;
	pid_t *pids, pid;
	time_t *born;
	int i, status, total;

	/* pids[0..n) are the responders, pids[n] the keeper if any */
	if ((pids = calloc((size_t)n + 1, sizeof(*pids))) == NULL ||
	    (born = calloc((size_t)n + 1, sizeof(*born))) == NULL) {
		log_error("event=start_failed error=\"out of memory\"");
		return 1;
	}
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &orig);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = prefork_on_signal;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&none);
	if ((prefork_shared.gens = authcache_gens_shared()) == NULL)
		log_warn("event=no_shared_memory what=auth_cache_windows");
	/* Without the table (or its keeper) each counted request is
	 * counted in MariaDB on its own. */
	if ((prefork_shared.permits = permits_shared(conf_int(c,
	    CONF_RATE_PERMITS_MAX))) == NULL)
		log_warn("event=no_shared_memory what=rate_permits");
	if ((prefork_shared.pending = idempotency_pending_create()) == NULL)
		log_warn("event=no_shared_memory what=idempotency_pending");
	total = n + (prefork_shared.permits != NULL);
	prefork_shared.slots_fd = slots_fd;
	prefork_shared.responders = n;
	for (i = 0; i < total; i++) {
		pids[i] = prefork_spawn(c, fd, &orig, i == n);
		born[i] = time(NULL);
	}
	log_info("event=started workers=%d", n);
	while (!got_term) {
		sigsuspend(&none);
		if (got_hup) {
			got_hup = 0;
			prefork_reload(c, path, pids, total);
		}
		if (!got_chld)
			continue;
		got_chld = 0;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < total && pids[i] != pid; i++)
				;
			if (i == total)
				continue;
			if (!got_term && !(WIFEXITED(status) &&
			    WEXITSTATUS(status) == 0))
				log_warn("event=child_died pid=%ld status=%d",
				    (long)pid, status);
			pids[i] = 0;
			if (got_term)
				continue;
			if (time(NULL) - born[i] < 1)
				sleep(1);
			pids[i] = prefork_spawn(c, fd, &orig, i == n);
			born[i] = time(NULL);
		}
	}
	/* the keeper last: it gives back what the responders leased */
	prefork_stop(pids, 0, n);
	prefork_stop(pids, n, total);
	log_info("event=stopped");
	free(pids);
	free(born);
	return 0;
}
