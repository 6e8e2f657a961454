/* status.h: "svcadm status": the figures a monitor wants from the shared
 * database (schema version, the job queue, the workers seen lately on every
 * host, the event outbox), judged against limits, printed as text or JSON. */
#ifndef SVC_ADMIN_STATUS_H
#define SVC_ADMIN_STATUS_H
#include "core/db.h"
#include "util/conf.h"
#include <stdio.h>

/* The checks that can make the service unhealthy. */
enum status_check {
	STATUS_SCHEMA,		/* the schema is older than this build, or
				 * lacks a stored routine */
	STATUS_WORKERS,		/* fewer workers seen than status_min_workers */
	STATUS_JOB_AGE,		/* a queued job older than status_max_job_age */
	STATUS_QUEUE,		/* more chunks waiting than status_max_queue */
	STATUS_OUTBOX,		/* an event or delivery due for longer than
				 * status_max_outbox_age */
	STATUS_PORT25,		/* most direct SMTP sessions lately could
				 * not connect: port 25 looks blocked */
	STATUS_CHECK__MAX
};
extern const char *const status_check_names[STATUS_CHECK__MAX];

/* Reads the figures and judges them with the status_* settings of conf;
 * prints them on out (JSON when json is set). Returns 0 when healthy, 1
 * when a check failed, -1 when the database failed (err says why, and
 * nothing was printed). */
int	 status_run(struct db *, const struct conf *, int json, FILE *out,
	    struct buf *err);
/* What status_run's caller prints when it returned -1 (or the database
 * could not be opened): unhealthy, with the reason in JSON. */
void	 status_print_failure(const char *why, int json, FILE *out);
#endif
