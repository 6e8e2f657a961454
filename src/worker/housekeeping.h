/* housekeeping.h: periodic clean-up passes of svc-worker. */
#ifndef SVC_HOUSEKEEPING_H
#define SVC_HOUSEKEEPING_H
#include "core/db.h"

/* Expires idempotency keys past 24 h, rate-limit hits past the window and
 * verification cache rows past their expiry.
 * Returns 0, or -1 when the database failed (logged). */
int	 housekeeping_run(struct db *);
#endif
