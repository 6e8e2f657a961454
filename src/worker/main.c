/* main.c: svc-worker, the cron-style daemon that does the service's
 * background work against MariaDB: it verifies the addresses of bulk and
 * batch jobs (process.c), sends the deliveries of events (deliveries.c:
 * in a thread of their own in the daemon) and runs housekeeping every
 * housekeeping_interval seconds. Without --once it runs until SIGTERM
 * (leases of unfinished chunks and deliveries are given back), polling
 * every worker_poll_interval seconds when there is nothing to claim, and
 * at once when svc-api wakes it (a socket in worker_wake_dir, wake.h);
 * with --once it works until nothing is left to claim, sends what is due
 * and exits (for hosts where only cron is allowed). A lost database is
 * retried. */
#include "core/db.h"
#include "util/conf.h"
#include "util/log.h"
#include "util/startup.h"
#include "util/wake.h"
#include "worker/deliveries.h"
#include "worker/housekeeping.h"
#include "worker/ingester.h"
#include "worker/process.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORKER_ENGINE_RETRY 60	/* seconds between engine start attempts */

static volatile sig_atomic_t stopping;
static time_t engine_tried;

static void
main_on_term(int sig)
{
	(void)sig;
	stopping = 1;
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
    time_t *last_housekeeping, int once)
{
	char owner[128];

	time_t now = time(NULL);
	struct buf err;

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
	}
	/* A daemon's upload jobs are its ingester thread's. */
	snprintf(owner, sizeof(owner), "%s:ingest", process_owner(*proc));
	if (once && ingester_run_pending(conf, db, process_engine(*proc), owner,
	    &stopping) == -1)
		return -1;
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

/* The upload thread of a daemon, its leases owned by "host:pid:ingest". */
static struct ingester *
main_ingester(const struct conf *conf)
{
	char host[64], owner[100];

	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(owner, sizeof(owner), "%s:%ld", host, (long)getpid());
	return ingester_start(conf, owner);
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
	time_t last = 0;
	int i, once = 0, rc = 0;

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
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = main_on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	log_info("event=started mode=%s", once ? "once" : "daemon");
	if (!once && *conf_str(&conf, CONF_WORKER_WAKE_DIR) != '\0' &&
	    (wake = wake_listen(conf_str(&conf, CONF_WORKER_WAKE_DIR),
	    WAKE_JOBS, &err)) == NULL)
		log_warn("event=wake_unavailable what=jobs error=\"%s\"",
		    buf_str(&err));
	if (!once && (ingester = main_ingester(&conf)) == NULL) {
		fprintf(stderr, "svc-worker: cannot start the upload thread\n");
		buf_free(&err);
		conf_free(&conf);
		return 1;
	}
	if (!once && (sender = deliveries_start(&conf, &err)) == NULL) {
		fprintf(stderr, "svc-worker: %s\n", buf_str(&err));
		buf_free(&err);
		ingester_stop(ingester);
		conf_free(&conf);
		return 1;
	}
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
			}
		}
		if (db != NULL && (main_pass(&conf, db, &proc, &last, once) ==
		    -1 || (once && deliveries_once(&conf, db) == -1))) {
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
	process_free(proc);
	db_close(db);
	buf_free(&err);
	conf_free(&conf);
	log_info("event=stopped");
	return rc;
}
