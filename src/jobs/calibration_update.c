/* calibration_update.c: writes the calibration counts
 * (calibration_update.h) from feedback_report_build's tallies per
 * provider (and mail host) and classification, skipping results without a
 * provider and pairs with no delivered or hard-bounced outcome. */
#include "jobs/calibration_update.h"
#include "core/dbsql.h"
#include "engine/verdict.h"
#include "jobs/feedback_report.h"
#include "util/buf.h"
#include <stdlib.h>
#include <string.h>

/* Rows per INSERT at most (a power of two, see dbsql.h). */
#define CALIBRATION_UPDATE_GROUP 64
#define CALIBRATION_UPDATE_COLS 7

struct calibration_update_row {
	const char	*provider;
	const char	*host;		/* NULL: a provider's row */
	int		 cls;
	long long	 delivered, bounced;
};

struct calibration_update_tx {
	const struct calibration_update_row *rows, *hosts;
	size_t		 n, nhosts;
	long		 window_days;
	time_t		 now;
};

/* Inserts rows into calibration (host NULL) or calibration_hosts. */
static enum db_err
calibration_update_insert(struct db *db, const struct calibration_update_tx *t,
    const struct calibration_update_row *rows, size_t n, int hosts)
{
	struct db_param p[CALIBRATION_UPDATE_GROUP * CALIBRATION_UPDATE_COLS];
	const int cols = CALIBRATION_UPDATE_COLS - (hosts ? 0 : 1);
	struct db_param *q;
	struct buf sql;
	enum db_err e = DB_OK;
	size_t i = 0, g, j;

	buf_init(&sql, BUF_NOMAX);
	while (i < n) {
		g = dbsql_group(n - i, CALIBRATION_UPDATE_GROUP);
		buf_reset(&sql);
		dbsql_repeat(&sql, hosts ? "INSERT INTO calibration_hosts "
		    "(provider, mx_host, classification, delivered, bounced, "
		    "window_days, updated_at) VALUES " : "INSERT INTO "
		    "calibration (provider, classification, delivered, "
		    "bounced, window_days, updated_at) VALUES ", hosts ?
		    "(?, ?, ?, ?, ?, ?, FROM_UNIXTIME(?))" :
		    "(?, ?, ?, ?, ?, FROM_UNIXTIME(?))", ", ", g, "");
		for (j = 0; j < g; j++) {
			q = p + j * cols;
			*q++ = DBP_STR(rows[i + j].provider);
			if (hosts)
				*q++ = DBP_STR(rows[i + j].host);
			*q++ = DBP_STR(verdict_class_names[rows[i + j].cls]);
			*q++ = DBP_INT(rows[i + j].delivered);
			*q++ = DBP_INT(rows[i + j].bounced);
			*q++ = DBP_INT(t->window_days);
			*q = DBP_INT((long long)t->now);
		}
		if ((e = db_exec(db, buf_str(&sql), p, g * (size_t)cols,
		    NULL)) != DB_OK)
			break;
		i += g;
	}
	buf_free(&sql);
	return e;
}

static enum db_err
calibration_update_work(struct db *db, void *arg)
{
	const struct calibration_update_tx *t = arg;
	enum db_err e;

	if ((e = db_exec(db, "DELETE FROM calibration", NULL, 0, NULL)) !=
	    DB_OK || (e = db_exec(db, "DELETE FROM calibration_hosts", NULL,
	    0, NULL)) != DB_OK ||
	    (e = calibration_update_insert(db, t, t->rows, t->n, 0)) !=
	    DB_OK)
		return e;
	return calibration_update_insert(db, t, t->hosts, t->nhosts, 1);
}

/* A row of tally t when it has a delivered or hard-bounced outcome:
 * 1, else 0. */
static int
calibration_update_row_set(struct calibration_update_row *row,
    const char *provider, const char *host, int cls,
    const struct feedback_tally *t)
{
	if (t->outcome[FEEDBACK_DELIVERED] + t->outcome[FEEDBACK_HARD_BOUNCE] ==
	    0)
		return 0;
	row->provider = provider;
	row->host = host;
	row->cls = cls;
	row->delivered = t->outcome[FEEDBACK_DELIVERED];
	row->bounced = t->outcome[FEEDBACK_HARD_BOUNCE];
	return 1;
}

enum db_err
calibration_update_run(struct db *db, const struct addrhash_key *key,
    long window_days, time_t now, struct calibration_update_stats *st)
{
	struct calibration_update_row *rows = NULL, *hosts = NULL;
	struct calibration_update_tx tx;
	struct feedback_report rep;
	size_t i, n = 0, nh = 0;
	enum db_err e;
	int k;

	memset(st, 0, sizeof(*st));
	/* (until: the report's bound is exclusive) */
	if ((e = feedback_report_build(db, key, NULL, now - window_days * 86400L,
	    now + 1, &rep)) != DB_OK)
		return e;
	st->results = rep.all.verified;
	if ((rep.nprov > 0 && (rows = calloc(rep.nprov * VERDICT_CLASS__MAX,
	    sizeof(*rows))) == NULL) || (rep.nhosts > 0 && (hosts =
	    calloc(rep.nhosts * VERDICT_CLASS__MAX, sizeof(*hosts))) ==
	    NULL)) {
		free(rows);
		feedback_report_free(&rep);
		return DB_ERR_QUERY;
	}
	for (i = 0; i < rep.nprov; i++) {
		/* "none": results without a provider (no MX) */
		if (strcmp(rep.prov[i].provider, "none") == 0)
			continue;
		for (k = 0; k < VERDICT_CLASS__MAX; k++) {
			if (!calibration_update_row_set(&rows[n],
			    rep.prov[i].provider, NULL, k,
			    &rep.prov[i].by_class[k]))
				continue;
			st->delivered += rows[n].delivered;
			st->bounced += rows[n].bounced;
			n++;
		}
	}
	for (i = 0; i < rep.nhosts; i++)
		for (k = 0; k < VERDICT_CLASS__MAX; k++)
			nh += (size_t)calibration_update_row_set(&hosts[nh],
			    rep.hosts[i].provider, rep.hosts[i].host, k,
			    &rep.hosts[i].by_class[k]);
	tx.rows = rows;
	tx.n = n;
	tx.hosts = hosts;
	tx.nhosts = nh;
	tx.window_days = window_days;
	tx.now = now;
	e = db_tx_retry(db, calibration_update_work, &tx);
	if (e == DB_OK) {
		st->rows = n;
		st->host_rows = nh;
	}
	free(rows);
	free(hosts);
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
