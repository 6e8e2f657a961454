/* calibration_update.h: the periodic step that writes the calibration
 * counts (028's table calibration, 030's calibration_hosts) from results
 * and delivery outcomes: the accuracy report's matching
 * (feedback_report.h) over every account, for the results verified in the
 * last calibration_window_days, counted per provider and classification
 * and per mail host and classification (delivered; hard-bounced). Only counts
 * leave this step: no address, hash or account is written. Run by
 * svcadm calibration update and by svc-worker's housekeeping. */
#ifndef SVC_CALIBRATION_UPDATE_H
#define SVC_CALIBRATION_UPDATE_H
#include "core/db.h"
#include "util/addrhash.h"
#include <stddef.h>
#include <time.h>

struct calibration_update_stats {
	long long	 results;	/* results of the window */
	long long	 delivered;	/* ... later delivered */
	long long	 bounced;	/* ... later hard-bounced */
	size_t		 rows;		/* (provider, classification) written */
	size_t		 host_rows;	/* (mail host, classification) written */
};

/* Replaces the table's rows, in one transaction, with the counts of the
 * results verified in [now - window_days, now]. DB_OK or the error. */
enum db_err calibration_update_run(struct db *, const struct addrhash_key *,
	    long window_days, time_t now, struct calibration_update_stats *);
/* When the counts were last written (0: never, or the table is empty):
 * DB_OK or the error. */
enum db_err calibration_update_last(struct db *, time_t *);
#endif
