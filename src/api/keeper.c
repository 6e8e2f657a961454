/* keeper.c: the keeper process of svc-api's prefork master (keeper.h). It
 * wakes at least every KEEPER_TICK_MS, gives back the leases that ended
 * (permits_sweep) with its own MariaDB connection, and bumps the key
 * cache's generation of each account whose window it changed, as a
 * responder does; it deletes the Idempotency-Key entries the responders
 * could not abandon (idempotency_pending.h) once the database answers.
 * On SIGTERM (the master stops it after the responders) it gives back
 * every lease the host still holds. */
#include "api/keeper.h"
#include "util/log.h"
#include "util/timeutil.h"
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define KEEPER_TICK_MS 100	/* new leases are seen this late at most */

static volatile sig_atomic_t keeper_stop;

static void
keeper_on_term(int sig)
{
	(void)sig;
	keeper_stop = 1;
}

/* A window in MariaDB changed: the responders' cached windows of its
 * account are stale. */
static void
keeper_changed(const char *bucket, void *arg)
{
	size_t n = strlen(RATELIMIT_ACCOUNT_PREFIX);

	if (strncmp(bucket, RATELIMIT_ACCOUNT_PREFIX, n) == 0)
		authcache_counted(arg, bucket + n);
}

static struct db *
keeper_db(const struct conf *c, int *logged)
{
	struct db *db = NULL;
	struct buf err;

	buf_init(&err, 1024);
	if (db_open(c, 1, &db, &err) != DB_OK) {
		if (!*logged)
			log_error("event=keeper_db_unavailable error=\"%s\"",
			    buf_str(&err));
		*logged = 1;
	} else
		*logged = 0;
	buf_free(&err);
	return db;
}

int
keeper_loop(const struct conf *c, const struct api_shared *sh)
{
	struct authcache cache;
	struct sigaction sa;
	struct db *db = NULL;
	long next;
	int logged = 0, failing = 0;

	prctl(PR_SET_NAME, "svc-api-keeper");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = keeper_on_term;	/* no SA_RESTART: sleeps end */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ratelimit_set_window(conf_int(c, CONF_RATE_WINDOW_SECONDS));
	authcache_init(&cache, 0, sh->gens);
	while (!keeper_stop) {
		if (db == NULL && (db = keeper_db(c, &logged)) == NULL) {
			timeutil_nap_ms(1000);
			continue;
		}
		/* the host's Idempotency-Key entries left to abandon, as
		 * soon as the database answers again; a connection lost
		 * meanwhile is opened again by keeper_db, which says so once
		 * (db_run would log a reconnect on every tick) */
		if (idempotency_pending_flush(sh->pending, db) < 0 ||
		    (next = permits_sweep(sh->permits, db, 0, keeper_changed,
		    &cache)) < 0) {
			/* once until a sweep succeeds again (a server that
			 * takes connections and fails them fails every second) */
			if (!failing)
				log_error("event=keeper_db_error error=\"%s\"",
				    db_error(db));
			failing = 1;
			db_close(db);
			db = NULL;
			/* a second before the next try (a server that takes
			 * connections and fails them, a Galera node out of the
			 * primary component, is not asked ten times a second) */
			timeutil_nap_ms(1000);
			continue;
		}
		failing = 0;
		timeutil_nap_ms(next < KEEPER_TICK_MS ? (next > 0 ? next : 1) :
		    KEEPER_TICK_MS);
	}
	/* The host stops: what it has not used goes back now rather than
	 * when its seconds leave the window. */
	if (db == NULL)
		db = keeper_db(c, &logged);
	if (db != NULL && permits_sweep(sh->permits, db, 1, keeper_changed,
	    &cache) < 0)
		log_error("event=keeper_db_error error=\"%s\"", db_error(db));
	db_close(db);
	authcache_free(&cache);
	return 0;
}
