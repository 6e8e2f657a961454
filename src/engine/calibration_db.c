/* calibration_db.c: the calibration counts from MariaDB
 * (calibration_db.h). */
#include "engine/calibration_db.h"
#include <string.h>

enum db_err
calibration_db_load(struct db *db, struct calibration_table *t)
{
	struct calibration_table n;
	struct db_res *r;
	const char *cls;
	enum db_err e;
	int row, k;

	memset(&n, 0, sizeof(n));
	if ((e = db_query(db, "SELECT provider, classification, delivered, "
	    "bounced FROM calibration", NULL, 0, &r)) != DB_OK)
		return e;
	while ((row = db_res_next(r)) == 1) {
		cls = db_res_str(r, 1);
		for (k = 0; cls != NULL && k < VERDICT_CLASS__MAX; k++)
			if (strcmp(cls, verdict_class_names[k]) == 0)
				break;
		if (cls == NULL || k == VERDICT_CLASS__MAX ||
		    db_res_str(r, 0) == NULL)
			continue;
		if (calibration_table_add(&n, db_res_str(r, 0),
		    (enum verdict_class)k, db_res_int(r, 2),
		    db_res_int(r, 3)) == -1) {
			row = -1;
			break;
		}
	}
	db_res_free(r);
	if (row == -1) {
		calibration_table_free(&n);
		return DB_ERR_QUERY;
	}
	calibration_table_done(&n);
	calibration_table_free(t);
	*t = n;
	return DB_OK;
}
