/* port25.c: the port 25 judgement of "svcadm status" and "svcadm doctor"
 * (port25.h): most direct sessions in the last hour or two failed to
 * connect the same way (all refused, or all timed out: what a closed
 * port 25 looks like from a cloud host), with enough of them to tell. */
#include "admin/port25.h"
#include <stdio.h>
#include <string.h>

enum db_err
port25_read(struct db *db, struct port25_figures *f)
{
	struct db_res *r = NULL;
	enum db_err e;

	memset(f, 0, sizeof(*f));
	e = db_query(db, "SELECT COALESCE(SUM(sessions), 0), "
	    "COALESCE(SUM(connected), 0), COALESCE(SUM(refused), 0), "
	    "COALESCE(SUM(timed_out), 0) FROM egress_health WHERE route = "
	    "'direct' AND hour >= DATE_FORMAT(UTC_TIMESTAMP() - INTERVAL 1 "
	    "HOUR, '%Y-%m-%d %H:00:00')", DB_NOARGS, &r);
	if (e != DB_OK)
		return e;
	if (db_res_next(r) == 1) {
		f->sessions = db_res_int(r, 0);
		f->connected = db_res_int(r, 1);
		f->refused = db_res_int(r, 2);
		f->timed_out = db_res_int(r, 3);
	}
	db_res_free(r);
	return DB_OK;
}

int
port25_blocked(const struct port25_figures *f, char *msg, size_t size)
{
	long long failed = f->refused > f->timed_out ? f->refused :
	    f->timed_out;
	const char *how = f->refused > f->timed_out ? "refused" :
	    "timed out";

	if (f->sessions < PORT25_MIN_SESSIONS) {
		snprintf(msg, size, "%lld direct SMTP sessions in the last "
		    "hour, too few to tell (%d needed)", f->sessions,
		    PORT25_MIN_SESSIONS);
		return 0;
	}
	if (failed * 100 < f->sessions * PORT25_BLOCKED_PCT) {
		snprintf(msg, size, "%lld of %lld direct SMTP sessions in the "
		    "last hour connected", f->connected, f->sessions);
		return 0;
	}
	snprintf(msg, size, "outbound port 25 looks blocked: %lld of %lld "
	    "direct SMTP sessions in the last hour could not connect "
	    "(%s); their addresses end unknown/smtp_unreachable: a route is "
	    "needed (smtp_egress = bind:ADDRESS or "
	    "socks5://[USER:PASS@]HOST:PORT, svc.conf(5))", failed,
	    f->sessions, how);
	return 1;
}
