/* heartbeat.h: svc-worker's row in worker_heartbeats (sql/009_workers.sql):
 * who it is (its lease owner "host:pid", daemon or --once, its version) and
 * when it was last seen working, idle or busy. "svcadm status" counts the
 * workers seen lately from these rows. */
#ifndef SVC_WORKER_HEARTBEAT_H
#define SVC_WORKER_HEARTBEAT_H
#include "core/db.h"

/* A row is refreshed at most this often (seconds). */
#define HEARTBEAT_SECONDS 10
/* Rows not refreshed for this long are deleted by housekeeping. */
#define HEARTBEAT_KEEP_SECONDS 86400

enum heartbeat_mode {
	HEARTBEAT_DAEMON,
	HEARTBEAT_ONCE,
	HEARTBEAT_MODE__MAX
};
extern const char *const heartbeat_mode_names[HEARTBEAT_MODE__MAX];

/* Once, before the first beat: the process's owner name and its mode. */
void	 heartbeat_init(const char *owner, enum heartbeat_mode);
/* Writes the row if HEARTBEAT_SECONDS have passed since it was last
 * written (the first call always writes). 0, or -1 when the database
 * failed. */
int	 heartbeat_beat(struct db *);
/* Deletes the rows of workers not seen for HEARTBEAT_KEEP_SECONDS: how
 * many, or -1. */
long long heartbeat_purge(struct db *);
#endif
