/* calibration_db.h: reads the tables of calibration counts (028's
 * calibration, 030's calibration_hosts) into a calibration_table, for the
 * engine's verdicts. */
#ifndef SVC_CALIBRATION_DB_H
#define SVC_CALIBRATION_DB_H
#include "core/db.h"
#include "engine/calibration.h"

/* Replaces t's rows with the table's that have at least min_outcomes
 * outcomes (the others never calibrate a verdict: a process keeps only
 * what it can use), the mail hosts' rows of those providers and
 * classifications, and t->all with each classification's sums over every
 * provider's row. Rows of an unknown classification are skipped. DB_OK, or the
 * error with t left as it was. */
enum db_err calibration_db_load(struct db *, long long min_outcomes,
	    struct calibration_table *t);
#endif
