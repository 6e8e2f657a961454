/* main.c: svc-worker, the cron-style daemon that does the service's
 * background work against MariaDB: it verifies the addresses of bulk and
 * batch jobs (process.c), sends the deliveries of events (deliveries.c:
 * in a thread of their own in the daemon) and runs housekeeping every
 * housekeeping_interval seconds. Without --once it runs until SIGTERM
 * (leases of unfinished chunks and deliveries are given back), polling
 * every worker_poll_interval seconds when there is nothing to claim, and
 * at once when svc-api wakes it (a socket in worker_wake_dir, wake.h);
 * with --once it works until nothing is left to claim (uploads and
 * verification taking turns, once.c), sends what is due
 * and exits (for hosts where only cron is allowed), within
 * worker_once_seconds and never beside another --once run of the host
 * (once.h). A lost database is retried. */
#include "core/db.h"
#include "engine/egress.h"
#include "jobs/fetch.h"
#include "jobs/jobqueue.h"
#include "util/conf.h"
#include "util/log.h"
#include "util/startup.h"
#include "util/wake.h"
#include "worker/deliveries.h"
#include "worker/heartbeat.h"
#include "worker/housekeeping.h"
#include "worker/ingester.h"
#include "worker/once.h"
#include "worker/process.h"
#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORKER_ENGINE_RETRY 60	/* seconds between engine start attempts */

static volatile sig_atomic_t stopping, reloading;
static time_t engine_tried;

static void
main_on_term(int sig)
{
	(void)sig;
	stopping = 1;
	reloading = 0;	/* a stop while a reload stops: no start again */
}

/* SIGHUP (a daemon): stop as on SIGTERM, then start again in the same
 * process (main_reload), which reads svc.conf, lists_dir's tables and the
 * rule tables anew. */
static void
main_on_hup(int sig)
{
	(void)sig;
	reloading = 1;
	stopping = 1;
}

/* Blocks (SIG_BLOCK) or unblocks the signals that stop or reload. */
static void
main_stop_signals(int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(how, &set, NULL);
}

/* The same program again, same pid (so the same lease owner) and
 * arguments: argv[0] when it is a path (an upgraded binary is taken), else
 * the running one. Returns only when exec failed. */
static void
main_reload(char **argv)
{
	/* they wait until the new image has its handlers (exec puts caught
	 * signals back to their default: a second reload or a stop meanwhile
	 * would kill it); main unblocks them */
	main_stop_signals(SIG_BLOCK);
	log_info("event=reloading");
	execv(strchr(argv[0], '/') != NULL ? argv[0] : "/proc/self/exe",
	    argv);
	log_error("event=reload_failed error=\"%s\"", strerror(errno));
}

static void
main_usage(void)
{
	fprintf(stderr, "usage: svc-worker [-c svc.conf] [--once]\n");
	exit(2);
}

/* One pass: housekeeping when due, then job chunks until nothing is left
 * to claim; returns 0 or -1 when the database failed. */
static int
main_pass(const struct conf *conf, struct db *db, struct process **proc,
    time_t *last_housekeeping, int once, struct wake *wake)
{
	time_t now = time(NULL);
	struct buf err;

	if (heartbeat_beat(db) == -1)
		return -1;
	if (now - *last_housekeeping >= conf_int(conf,
	    CONF_HOUSEKEEPING_INTERVAL)) {
		if (housekeeping_run(conf, db) == -1)
			return -1;
		*last_housekeeping = now;
	}
	if (*proc == NULL) {
		/* An engine that cannot start is tried again a minute later. */
		if (now - engine_tried < WORKER_ENGINE_RETRY)
			return 0;
		engine_tried = now;
		buf_init(&err, 4096);
		if ((*proc = process_new(conf, &err)) == NULL)
			log_error("event=engine_unavailable error=\"%s\"",
			    buf_str(&err));
		buf_free(&err);
		if (*proc == NULL)
			return 0;	/* housekeeping still runs */
		if (once)
			process_set_deadline(*proc, once_dns_deadline());
		process_set_wake(*proc, wake);
	}
	/* A daemon's upload jobs are its ingester thread's; --once takes
	 * turns between uploads and verification (once.c). */
	if (once)
		return once_work(conf, db, *proc, &stopping, last_housekeeping);
	return process_run(*proc, db, &stopping, last_housekeeping);
}

/* Idle: until worker_poll_interval has passed, svc-api wakes this
 * process (w, when there is a wake-up socket) or SIGTERM comes. */
static void
main_idle(const struct conf *conf, struct wake *w)
{
	long left = conf_int(conf, CONF_WORKER_POLL_INTERVAL) * 1000, slice;

	/* in slices of a second at most, so that SIGTERM is seen soon */
	for (; !stopping && left > 0; left -= slice) {
		slice = left > 1000 ? 1000 : left;
		if (w == NULL)
			sleep((unsigned)(slice / 1000));
		else if (wake_wait(w, (int)slice)) {
			log_debug("event=woken what=jobs");
			return;
		}
	}
}

/* A daemon's first connection: chunks leased under this process's owner
 * name are given back. They are this very process's when it started again
 * on SIGHUP after losing the database with chunks in hand (process.c's
 * "orphaned" does not outlive the exec), or a dead process's of the same
 * host and pid; a new process has none. 0, or -1 (tried again on the
 * next connection). */
static int
main_release_own(struct db *db, const char *owner)
{
	unsigned long long n = 0;

	if (jobqueue_release_owner(db, owner, &n) != JOBQUEUE_OK)
		return -1;
	if (n > 0)
		log_info("event=chunks_released reason=owner_restarted "
		    "chunks=%llu", n);
	return 0;
}

/* This process's lease owner name, "host:pid" (as process.c's). */
static void
main_owner(char *owner, size_t size)
{
	char host[64];

	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(owner, size, "%s:%ld", host, (long)getpid());
}

int
main(int argc, char **argv)
{
	const char *path = NULL;
	struct conf conf;
	struct buf err;
	struct sigaction sa;
	struct db *db = NULL;
	struct process *proc = NULL;
	struct ingester *ingester = NULL;
	struct deliveries *sender = NULL;
	struct wake *wake = NULL;
	char lock[1024] = "";
	time_t last = 0;
	int i, once = 0, lock_fd = -1, rc = 0, released = 0;
	char owner[100];

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--once") == 0)
			once = 1;
		else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
			path = argv[++i];
		else
			main_usage();
	}
	buf_init(&err, 1024);
	if (startup(&conf, path, "svc-worker", &err) == -1) {
		fprintf(stderr, "svc-worker: %s\n", buf_str(&err));
		buf_free(&err);
		return 1;
	}
	if (egress_check(&conf, &err) == -1) {
		fprintf(stderr, "svc-worker: %s\n", buf_str(&err));
		buf_free(&err);
		conf_free(&conf);
		return 1;
	}
	if (!fetch_networks_valid(&conf)) {
		fprintf(stderr, "svc-worker: allow_private_url_networks is not "
		    "a list of addresses or CIDR networks\n");
		buf_free(&err);
		conf_free(&conf);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = main_on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (!once) {
		sa.sa_handler = main_on_hup;
		sigaction(SIGHUP, &sa, NULL);
	}
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	/* (blocked by main_reload across the exec: one that came meanwhile
	 * is delivered now) */
	main_stop_signals(SIG_UNBLOCK);
	if (once) {
		switch (once_lock_take(conf_str(&conf, CONF_RUN_DIR), &lock_fd,
		    lock, sizeof(lock), &err)) {
		case ONCE_LOCK_BUSY:
			/* the run cron started a minute ago is still at it */
			log_info("event=once_skipped reason=locked lock=%s",
			    lock);
			buf_free(&err);
			conf_free(&conf);
			return 0;
		case ONCE_LOCK_ERROR:
			fprintf(stderr, "svc-worker: lock: %s\n", buf_str(&err));
			buf_free(&err);
			conf_free(&conf);
			return 1;
		default:
			break;
		}
		once_budget_start((unsigned)conf_int(&conf,
		    CONF_WORKER_ONCE_SECONDS), &stopping);
	}
	log_info("event=started mode=%s%s%s", once ? "once" : "daemon",
	    lock_fd != -1 ? " lock=" : "", lock_fd != -1 ? lock : "");
	/* libcurl (deliveries, source_url downloads) set up before any
	 * thread uses it */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "svc-worker: libcurl cannot start\n");
		buf_free(&err);
		conf_free(&conf);
		return 1;
	}
	/* The upload thread of a daemon owns its leases as "host:pid:ingest". */
	main_owner(owner, sizeof(owner));
	heartbeat_init(owner, once ? HEARTBEAT_ONCE : HEARTBEAT_DAEMON);
	if (!once && (ingester = ingester_start(&conf, owner)) == NULL) {
		fprintf(stderr, "svc-worker: cannot start the upload thread\n");
		curl_global_cleanup();
		buf_free(&err);
		conf_free(&conf);
		return 1;
	}
	if (!once && (sender = deliveries_start(&conf, &err)) == NULL) {
		fprintf(stderr, "svc-worker: %s\n", buf_str(&err));
		buf_free(&err);
		ingester_stop(ingester);
		curl_global_cleanup();
		conf_free(&conf);
		return 1;
	}
	if (!once && *conf_str(&conf, CONF_WORKER_WAKE_DIR) != '\0' &&
	    (wake = wake_listen(conf_str(&conf, CONF_WORKER_WAKE_DIR),
	    WAKE_JOBS, &err)) == NULL)
		log_warn("event=wake_unavailable what=jobs error=\"%s\"",
		    buf_str(&err));
	while (!stopping) {
		if (db == NULL) {
			buf_reset(&err);
			if (db_open(&conf, 1, &db, &err) != DB_OK) {
				log_error("event=db_unavailable error=\"%s\"",
				    buf_str(&err));
				if (once) {
					rc = 1;
					break;
				}
			} else if (!once && !released)
				released = main_release_own(db, owner) == 0;
		}
		if (db != NULL && (main_pass(&conf, db, &proc, &last, once, wake) ==
		    -1 || (once && deliveries_once(&conf, db, &stopping) ==
		    -1))) {
			db_close(db);
			db = NULL;
			if (once) {
				rc = 1;
				break;
			}
		}
		if (once)
			break;
		main_idle(&conf, wake);
	}
	wake_close(wake);
	ingester_stop(ingester);
	deliveries_stop(sender);
	curl_global_cleanup();
	process_free(proc);
	db_close(db);
	buf_free(&err);
	if (once && once_budget_spent())
		log_info("event=once_budget_spent seconds=%ld",
		    conf_int(&conf, CONF_WORKER_ONCE_SECONDS));
	conf_free(&conf);
	log_info("event=stopped");
	if (lock_fd != -1)
		close(lock_fd);
	if (reloading && !once && rc == 0) {
		main_reload(argv);
		rc = 1;
	}
	return rc;
}
