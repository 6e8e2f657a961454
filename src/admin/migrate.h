/* migrate.h: applying sql/NNN_*.sql migrations in order. */
#ifndef SVC_MIGRATE_H
#define SVC_MIGRATE_H
#include "core/db.h"

/* Applies every migration in dir newer than the database's version, under
 * the cluster-wide lock (waiting up to wait_s seconds while another host
 * holds it: then there is usually nothing left to do). Reports progress on
 * stdout; returns 0 or -1 with err filled. */
int	 migrate_apply(struct db *, const char *dir, long wait_s,
	    struct buf *err);
/* Current schema version (0 for an empty database). */
int	 migrate_version(struct db *, long long *version);
#endif
