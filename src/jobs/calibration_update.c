/* calibration_update.c: writes the calibration counts
 * (calibration_update.h) from feedback_report_build's tallies per
 * provider and classification, skipping results without a provider and
 * pairs with no delivered or hard-bounced outcome. */
#include "jobs/calibration_update.h"
#include "core/dbsql.h"
#include "engine/verdict.h"
#include "jobs/feedback_report.h"
#include "util/buf.h"
#include <stdlib.h>
#include <string.h>

/* Rows per INSERT at most (a power of two, see dbsql.h). */
#define CALIBRATION_UPDATE_GROUP 64
#define CALIBRATION_UPDATE_COLS 6

struct calibration_update_row {
	const char	*provider;
	int		 cls;
	long long	 delivered, bounced;
};

struct calibration_update_tx {
	const struct calibration_update_row *rows;
	size_t		 n;
	long		 window_days;
	time_t		 now;
};

static enum db_err
calibration_update_work(struct db *db, void *arg)
{
	const struct calibration_update_tx *t = arg;
	struct db_param p[CALIBRATION_UPDATE_GROUP * CALIBRATION_UPDATE_COLS];
	struct db_param *q;
	struct buf sql;
	enum db_err e;
	size_t i = 0, g, j;

	if ((e = db_exec(db, "DELETE FROM calibration", NULL, 0, NULL)) !=
	    DB_OK)
		return e;
	buf_init(&sql, BUF_NOMAX);
	while (i < t->n) {
		g = dbsql_group(t->n - i, CALIBRATION_UPDATE_GROUP);
		buf_reset(&sql);
		dbsql_repeat(&sql, "INSERT INTO calibration (provider, "
		    "classification, delivered, bounced, window_days, "
		    "updated_at) VALUES ", "(?, ?, ?, ?, ?, FROM_UNIXTIME(?))",
		    ", ", g, "");
		for (j = 0; j < g; j++) {
			q = p + j * CALIBRATION_UPDATE_COLS;
			q[0] = DBP_STR(t->rows[i + j].provider);
			q[1] = DBP_STR(verdict_class_names[t->rows[i + j].cls]);
			q[2] = DBP_INT(t->rows[i + j].delivered);
			q[3] = DBP_INT(t->rows[i + j].bounced);
			q[4] = DBP_INT(t->window_days);
			q[5] = DBP_INT((long long)t->now);
		}
		if ((e = db_exec(db, buf_str(&sql), p,
		    g * CALIBRATION_UPDATE_COLS, NULL)) != DB_OK)
			break;
		i += g;
	}
	buf_free(&sql);
	return e;
}

enum db_err
calibration_update_run(struct db *db, const struct addrhash_key *key,
    long window_days, time_t now, struct calibration_update_stats *st)
{
	struct calibration_update_row *rows = NULL;
	struct calibration_update_tx tx;
	struct feedback_report rep;
	const struct feedback_tally *t;
	size_t i, n = 0;
	enum db_err e;
	int k;

	memset(st, 0, sizeof(*st));
	/* (until: the report's bound is exclusive) */
	if ((e = feedback_report_build(db, key, NULL, now - window_days * 86400L,
	    now + 1, &rep)) != DB_OK)
		return e;
	st->results = rep.all.verified;
	if (rep.nprov > 0 && (rows = calloc(rep.nprov * VERDICT_CLASS__MAX,
	    sizeof(*rows))) == NULL) {
		feedback_report_free(&rep);
		return DB_ERR_QUERY;
	}
	for (i = 0; i < rep.nprov; i++) {
		/* "none": results without a provider (no MX) */
		if (strcmp(rep.prov[i].provider, "none") == 0)
			continue;
		for (k = 0; k < VERDICT_CLASS__MAX; k++) {
			t = &rep.prov[i].by_class[k];
			if (t->outcome[FEEDBACK_DELIVERED] +
			    t->outcome[FEEDBACK_HARD_BOUNCE] == 0)
				continue;
			rows[n].provider = rep.prov[i].provider;
			rows[n].cls = k;
			rows[n].delivered = t->outcome[FEEDBACK_DELIVERED];
			rows[n].bounced = t->outcome[FEEDBACK_HARD_BOUNCE];
			st->delivered += rows[n].delivered;
			st->bounced += rows[n].bounced;
			n++;
		}
	}
	tx.rows = rows;
	tx.n = n;
	tx.window_days = window_days;
	tx.now = now;
	e = db_tx_retry(db, calibration_update_work, &tx);
	if (e == DB_OK)
		st->rows = n;
	free(rows);
	feedback_report_free(&rep);
	return e;
}

enum db_err
calibration_update_last(struct db *db, time_t *at)
{
	long long v = 0;
	int found = 0;
	enum db_err e;

	*at = 0;
	if ((e = db_query_int(db, "SELECT COALESCE(UNIX_TIMESTAMP("
	    "MAX(updated_at)), 0) FROM calibration", NULL, 0, &v, &found)) !=
	    DB_OK)
		return e;
	*at = found ? (time_t)v : 0;
	return DB_OK;
}
