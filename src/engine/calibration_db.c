/* calibration_db.c: the calibration counts from MariaDB
 * (calibration_db.h): the classifications' sums, then the rows that may
 * calibrate a verdict, the providers' and their mail hosts'. */
#include "engine/calibration_db.h"
#include <string.h>

/* The classification named s, or -1. */
static int
calibration_db_class(const char *s)
{
	int k;

	for (k = 0; s != NULL && k < VERDICT_CLASS__MAX; k++)
		if (strcmp(s, verdict_class_names[k]) == 0)
			return k;
	return -1;
}

/* Each classification's sums over every provider. */
static enum db_err
calibration_db_sums(struct db *db, struct calibration_counts *all)
{
	struct db_res *r;
	enum db_err e;
	int row, k;

	if ((e = db_query(db, "SELECT classification, SUM(delivered), "
	    "SUM(bounced) FROM calibration GROUP BY classification", NULL, 0,
	    &r)) != DB_OK)
		return e;
	while ((row = db_res_next(r)) == 1)
		if ((k = calibration_db_class(db_res_str(r, 0))) >= 0) {
			all[k].delivered = db_res_int(r, 1);
			all[k].bounced = db_res_int(r, 2);
		}
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
}

/* The providers' rows with min_outcomes. */
static const char calibration_db_providers_sql[] = "SELECT provider, "
    "classification, delivered, bounced FROM calibration "
    "WHERE delivered + bounced >= ?";

/* The rows of the mail hosts whose provider's row has min_outcomes. */
static const char calibration_db_hosts_sql[] = "SELECT h.mx_host, "
    "h.classification, h.delivered, h.bounced FROM calibration_hosts h "
    "JOIN calibration c ON c.provider = h.provider AND c.classification = "
    "h.classification WHERE c.delivered + c.bounced >= ?";

/* Adds one row to a table: calibration_table_add for a provider's,
 * calibration_table_add_host for a mail host's. */
typedef int (*calibration_db_add_fn)(struct calibration_table *,
    const char *, enum verdict_class, long long delivered, long long bounced);

/* The rows of query sql (its one argument min_outcomes; its columns the
 * name, classification, delivered and bounced), each added to t by add;
 * rows of an unknown classification or no name are skipped. */
static enum db_err
calibration_db_rows(struct db *db, const char *sql, long long min_outcomes,
    calibration_db_add_fn add, struct calibration_table *t)
{
	struct db_res *r;
	enum db_err e;
	int row, k;

	if ((e = db_query(db, sql, DB_ARGS(DBP_INT(min_outcomes)), &r)) !=
	    DB_OK)
		return e;
	while ((row = db_res_next(r)) == 1) {
		if ((k = calibration_db_class(db_res_str(r, 1))) < 0 ||
		    db_res_str(r, 0) == NULL)
			continue;
		if (add(t, db_res_str(r, 0), (enum verdict_class)k,
		    db_res_int(r, 2), db_res_int(r, 3)) == -1) {
			row = -1;
			break;
		}
	}
	db_res_free(r);
	return row == -1 ? DB_ERR_QUERY : DB_OK;
}

enum db_err
calibration_db_load(struct db *db, long long min_outcomes,
    struct calibration_table *t)
{
	struct calibration_counts all[VERDICT_CLASS__MAX];
	struct calibration_table n;
	enum db_err e;

	memset(&n, 0, sizeof(n));
	memset(all, 0, sizeof(all));
	if ((e = calibration_db_sums(db, all)) != DB_OK)
		return e;
	if ((e = calibration_db_rows(db, calibration_db_providers_sql,
	    min_outcomes, calibration_table_add, &n)) != DB_OK ||
	    (e = calibration_db_rows(db, calibration_db_hosts_sql,
	    min_outcomes, calibration_table_add_host, &n)) != DB_OK) {
		calibration_table_free(&n);
		return e;
	}
	calibration_table_done(&n);
	memcpy(n.all, all, sizeof(n.all));
	calibration_table_free(t);
	*t = n;
	return DB_OK;
}
