/* heartbeat.c: svc-worker's row in worker_heartbeats, written from the
 * main thread's loops (main.c between passes, process.c while it works) so
 * that a worker stuck in its loop stops being seen. */
#include "worker/heartbeat.h"
#include "util/log.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *const heartbeat_mode_names[HEARTBEAT_MODE__MAX] = {
	[HEARTBEAT_DAEMON] = "daemon",
	[HEARTBEAT_ONCE] = "once",
};

static char heartbeat_owner[100];
static char heartbeat_host[64];
static enum heartbeat_mode heartbeat_mode;
/* timeutil_mono_coarse_ms() of the last write (the coarse clock: this is
 * asked on every turn of the worker's loop, for a write every few seconds) */
static int64_t heartbeat_last;
static int heartbeat_written;

void
heartbeat_init(const char *owner, enum heartbeat_mode mode)
{
	size_t n;

	snprintf(heartbeat_owner, sizeof(heartbeat_owner), "%s", owner);
	/* The owner is "host:pid": the host is what comes before the last
	 * colon. */
	snprintf(heartbeat_host, sizeof(heartbeat_host), "%s", owner);
	n = strlen(heartbeat_host);
	while (n > 0 && heartbeat_host[n - 1] != ':')
		n--;
	if (n > 0)
		heartbeat_host[n - 1] = '\0';
	heartbeat_mode = mode;
	heartbeat_written = 0;
}

int
heartbeat_beat(struct db *db)
{
	int64_t now = timeutil_mono_coarse_ms();

	if (heartbeat_owner[0] == '\0' || (heartbeat_written &&
	    now - heartbeat_last < HEARTBEAT_SECONDS * 1000))
		return 0;
	if (db_exec(db, "INSERT INTO worker_heartbeats (owner, host, pid, "
	    "mode, version, started_at, seen_at) VALUES (?, ?, ?, ?, ?, "
	    "UTC_TIMESTAMP(3), UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE "
	    "seen_at = UTC_TIMESTAMP(3)", DB_ARGS(DBP_STR(heartbeat_owner),
	    DBP_STR(heartbeat_host), DBP_INT((long long)getpid()),
	    DBP_STR(heartbeat_mode_names[heartbeat_mode]),
	    DBP_STR(PACKAGE_VERSION)), NULL) != DB_OK) {
		log_error("event=heartbeat_failed error=\"%s\"", db_error(db));
		return -1;
	}
	heartbeat_last = now;
	heartbeat_written = 1;
	return 0;
}

long long
heartbeat_purge(struct db *db)
{
	unsigned long long n = 0;

	if (db_exec(db, "DELETE FROM worker_heartbeats WHERE seen_at < "
	    "UTC_TIMESTAMP(3) - INTERVAL ? SECOND",
	    DB_ARGS(DBP_INT(HEARTBEAT_KEEP_SECONDS)), &n) != DB_OK)
		return -1;
	return (long long)n;
}
