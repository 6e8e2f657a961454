/* migrate.h: applying sql/NNN_*.sql migrations in order. */
#ifndef SVC_MIGRATE_H
#define SVC_MIGRATE_H
#include "core/db.h"

/* Applies every migration in dir newer than the database's version.
 * Reports progress on stdout; returns 0 or -1 with err filled. */
int	 migrate_apply(struct db *, const char *dir, struct buf *err);
/* Current schema version (0 for an empty database). */
int	 migrate_version(struct db *, long long *version);
#endif
