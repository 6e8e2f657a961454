/* housekeeping.h: periodic clean-up passes of svc-worker. */
#ifndef SVC_HOUSEKEEPING_H
#define SVC_HOUSEKEEPING_H
#include "core/db.h"
#include "util/conf.h"

/* Expires idempotency keys past 24 h, rate-limit counters past the window
 * and buckets without any, verification cache rows past their expiry,
 * the data of jobs past their retention (retention_expire), and event
 * deliveries ended job_retention_days ago. Returns 0,
 * or -1 when the database failed (logged). */
int	 housekeeping_run(const struct conf *, struct db *);
#endif
