/* calibrationadm.c: svcadm's calibration commands (calibrationadm.h). */
#include "admin/calibrationadm.h"
#include "jobs/calibration_update.h"
#include "util/addrhash.h"
#include <time.h>

int
calibrationadm_update(struct db *db, const struct conf *c, FILE *out,
    struct buf *err)
{
	struct calibration_update_stats st;
	struct addrhash_key key;
	long days = conf_int(c, CONF_CALIBRATION_WINDOW_DAYS);

	if (addrhash_key_from_conf(c, CONF_FEEDBACK_HASH_KEY, &key) == -1) {
		buf_puts(err, "feedback_hash_key is not set (svcadm db migrate "
		    "writes feedback_hash_key_file)");
		return -1;
	}
	if (calibration_update_run(db, &key, days, time(NULL), &st) !=
	    DB_OK) {
		buf_puts(err, db_error(db));
		return -1;
	}
	fprintf(out, "window_days %ld results %lld delivered %lld bounced %lld "
	    "rows %zu host_rows %zu\n", days, st.results, st.delivered,
	    st.bounced, st.rows, st.host_rows);
	return 0;
}

int
calibrationadm_show(struct db *db, FILE *out, struct buf *err)
{
	struct db_res *r;
	int row;

	if (db_query(db, "SELECT provider, classification, delivered, "
	    "bounced, window_days, DATE_FORMAT(updated_at, "
	    "'%Y-%m-%dT%H:%i:%sZ') FROM calibration ORDER BY provider, "
	    "classification", NULL, 0, &r) != DB_OK) {
		buf_puts(err, db_error(db));
		return -1;
	}
	fprintf(out, "%-30s %-11s %10s %10s %6s %s\n", "provider",
	    "class", "delivered", "bounced", "days", "updated_at");
	while ((row = db_res_next(r)) == 1)
		fprintf(out, "%-30s %-11s %10lld %10lld %6lld %s\n",
		    db_res_str(r, 0), db_res_str(r, 1), db_res_int(r, 2),
		    db_res_int(r, 3), db_res_int(r, 4), db_res_str(r, 5));
	db_res_free(r);
	if (row == -1) {
		buf_puts(err, db_error(db));
		return -1;
	}
	if (db_query(db, "SELECT mx_host, provider, classification, "
	    "delivered, bounced FROM calibration_hosts ORDER BY provider, "
	    "mx_host, classification", NULL, 0, &r) != DB_OK) {
		buf_puts(err, db_error(db));
		return -1;
	}
	fprintf(out, "\n%-30s %-20s %-11s %10s %10s\n", "mx_host", "provider",
	    "class", "delivered", "bounced");
	while ((row = db_res_next(r)) == 1)
		fprintf(out, "%-30s %-20s %-11s %10lld %10lld\n",
		    db_res_str(r, 0), db_res_str(r, 1), db_res_str(r, 2),
		    db_res_int(r, 3), db_res_int(r, 4));
	db_res_free(r);
	if (row == -1) {
		buf_puts(err, db_error(db));
		return -1;
	}
	return 0;
}
