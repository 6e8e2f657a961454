/* egress_down.c: the memory of dead proxies (egress_down.h), in MariaDB
 * (sql/021_egress_down.sql) so that every worker host passes over a route
 * one of them saw fail. */
#include "engine/egress_down.h"
#include "util/log.h"
#include <string.h>

enum db_err
egress_down_mark(struct db *db, const char *route, const char *why)
{
	/* the back-off doubles with each failure in a row: base << (n - 1),
	 * at most EGRESS_DOWN_MAX_MS (the shift is capped before) */
	return db_exec(db, "INSERT INTO egress_down (route, down_until, "
	    "failures, reason, updated_at) VALUES (?, UTC_TIMESTAMP(3) + "
	    "INTERVAL ? * 1000 MICROSECOND, 1, ?, UTC_TIMESTAMP(3)) "
	    "ON DUPLICATE KEY UPDATE failures = failures + 1, "
	    "down_until = UTC_TIMESTAMP(3) + INTERVAL LEAST(?, ? * "
	    "POW(2, LEAST(failures - 1, 20))) * 1000 MICROSECOND, "
	    "reason = VALUES(reason), updated_at = VALUES(updated_at)",
	    DB_ARGS(DBP_STR(route), DBP_INT(EGRESS_DOWN_BASE_MS),
	    DBP_STR(why != NULL ? why : ""), DBP_INT(EGRESS_DOWN_MAX_MS),
	    DBP_INT(EGRESS_DOWN_BASE_MS)), NULL);
}

enum db_err
egress_down_clear(struct db *db, const char *route)
{
	return db_exec(db, "DELETE FROM egress_down WHERE route = ?",
	    DB_ARGS(DBP_STR(route)), NULL);
}

enum db_err
egress_down_read(struct db *db, struct egress *e, int64_t now)
{
	int64_t until[EGRESS_ROUTES_MAX];
	struct db_res *r = NULL;
	const char *name;
	enum db_err err;
	size_t i;

	if (e == NULL)
		return DB_OK;
	err = db_query(db, "SELECT route, GREATEST(0, TIMESTAMPDIFF("
	    "MICROSECOND, UTC_TIMESTAMP(3), down_until)) DIV 1000 FROM "
	    "egress_down", DB_NOARGS, &r);
	if (err != DB_OK)
		return err;
	memset(until, 0, sizeof(until));
	while (db_res_next(r) == 1) {
		if ((name = db_res_str(r, 0)) == NULL)
			continue;
		for (i = 0; i < e->n; i++)
			if (strcmp(e->r[i].name, name) == 0)
				/* 1: passed, the next session is the check */
				until[i] = db_res_int(r, 1) > 0 ? now +
				    db_res_int(r, 1) : 1;
	}
	db_res_free(r);
	for (i = 0; i < e->n; i++)
		egress_set_down(e, i, until[i]);
	return DB_OK;
}

void
egress_down_note(struct db *db, struct egress *e,
    const struct smtp_session_info *si, int64_t now)
{
	size_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->n && i < 32; i++) {
		if (!(si->proxy_failed & (UINT32_C(1) << i)))
			continue;
		/* sessions started together fail together: one failure */
		if (__atomic_load_n(&e->down_until[i], __ATOMIC_RELAXED) > now)
			continue;
		/* at once for this process; the others read it */
		egress_set_down(e, i, now + EGRESS_DOWN_BASE_MS);
		if (egress_down_mark(db, e->r[i].name, si->proxy_why) != DB_OK)
			log_error("event=egress_down_mark route=%s error=\"%s\"",
			    e->r[i].name, db_error(db));
		else
			log_warn("event=egress_down route=%s why=\"%s\"",
			    e->r[i].name, si->proxy_why);
	}
	/* the health check: a session got a reply from the mail server by a
	 * route marked down */
	i = si->route_index;
	if (i < e->n && si->code > 0 && e->r[i].kind == EGRESS_SOCKS5 &&
	    !(si->proxy_failed & (UINT32_C(1) << (i % 32))) &&
	    __atomic_load_n(&e->down_until[i], __ATOMIC_RELAXED) != 0) {
		egress_set_down(e, i, 0);
		if (egress_down_clear(db, e->r[i].name) != DB_OK)
			log_error("event=egress_down_clear route=%s "
			    "error=\"%s\"", e->r[i].name, db_error(db));
		else
			log_info("event=egress_up route=%s", e->r[i].name);
	}
}
