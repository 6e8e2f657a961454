/* connstats.c: per egress route counts of svc-worker's SMTP sessions
 * (connstats.h), kept by the process thread that drives the sessions and
 * written by it, so no lock. */
#include "worker/connstats.h"
#include "worker/heartbeat.h"
#include "util/log.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <string.h>

const char *const connstats_kind_names[CONNSTATS__MAX] = {
	[CONNSTATS_CONNECTED] = "connected",
	[CONNSTATS_REFUSED] = "refused",
	[CONNSTATS_TIMED_OUT] = "timed_out",
	[CONNSTATS_OTHER] = "other",
};

#define CONNSTATS_ROUTES EGRESS_ROUTES_MAX

struct connstats_route {
	char		 name[EGRESS_NAME_MAX + 1];
	long long	 sessions;
	long long	 n[CONNSTATS__MAX];
	long long	 tls, tls_resumed;	/* connections; logged only */
};

static struct connstats_route connstats[CONNSTATS_ROUTES];
static size_t connstats_n;
static int64_t connstats_last;

enum connstats_kind
connstats_kind_of(const struct smtp_session_info *si)
{
	if (si->attempts == 0 || si->outcome == SMTP_OUTCOME_PRIVATE_ADDRESS)
		return CONNSTATS_OTHER;
	if (si->outcome != SMTP_OUTCOME_UNREACHABLE)
		return CONNSTATS_CONNECTED;
	if (si->stage != SMTP_STATE_CONNECT && si->stage != SMTP_STATE_INIT)
		return CONNSTATS_OTHER;	/* a proxy's failure, ... */
	if (si->route_failures > 0)
		return CONNSTATS_OTHER;
	return strstr(si->error, "timeout") != NULL ? CONNSTATS_TIMED_OUT :
	    CONNSTATS_REFUSED;
}

void
connstats_note(const struct smtp_session_info *si)
{
	const char *name = si->route != NULL ? si->route : "direct";
	struct connstats_route *r = NULL;
	size_t i;

	/* a session that tried no address (none, or all private) says
	 * nothing about its route */
	if (si->attempts == 0)
		return;
	for (i = 0; i < connstats_n; i++)
		if (strcmp(connstats[i].name, name) == 0) {
			r = &connstats[i];
			break;
		}
	if (r == NULL) {
		if (connstats_n >= CONNSTATS_ROUTES)
			return;
		r = &connstats[connstats_n++];
		memset(r, 0, sizeof(*r));
		snprintf(r->name, sizeof(r->name), "%s", name);
	}
	r->sessions++;
	r->n[connstats_kind_of(si)]++;
	r->tls += si->tls != 0;
	r->tls_resumed += si->tls_resumed != 0;
}

int
connstats_flush(struct db *db, int force)
{
	/* (asked on every turn of the loop: the coarse clock) */
	int64_t now = timeutil_mono_coarse_ms();
	struct connstats_route *r;
	size_t i;

	if (!force && now - connstats_last < HEARTBEAT_SECONDS * 1000)
		return 0;
	connstats_last = now;
	for (i = 0; i < connstats_n; i++) {
		r = &connstats[i];
		if (r->sessions == 0)
			continue;
		if (db_exec(db, "INSERT INTO egress_health (route, hour, "
		    "sessions, connected, refused, timed_out, updated_at) "
		    "VALUES (?, DATE_FORMAT(UTC_TIMESTAMP(), "
		    "'%Y-%m-%d %H:00:00'), ?, ?, ?, ?, UTC_TIMESTAMP(3)) ON "
		    "DUPLICATE KEY UPDATE sessions = sessions + "
		    "VALUES(sessions), connected = connected + "
		    "VALUES(connected), refused = refused + VALUES(refused), "
		    "timed_out = timed_out + VALUES(timed_out), updated_at = "
		    "VALUES(updated_at)", DB_ARGS(DBP_STR(r->name),
		    DBP_INT(r->sessions), DBP_INT(r->n[CONNSTATS_CONNECTED]),
		    DBP_INT(r->n[CONNSTATS_REFUSED]),
		    DBP_INT(r->n[CONNSTATS_TIMED_OUT])), NULL) != DB_OK) {
			log_error("event=connstats_failed error=\"%s\"",
			    db_error(db));
			return -1;
		}
		log_debug("event=connstats route=%s sessions=%lld "
		    "connected=%lld refused=%lld timed_out=%lld tls=%lld "
		    "tls_resumed=%lld", r->name, r->sessions,
		    r->n[CONNSTATS_CONNECTED], r->n[CONNSTATS_REFUSED],
		    r->n[CONNSTATS_TIMED_OUT], r->tls, r->tls_resumed);
		memset(r->n, 0, sizeof(r->n));
		r->sessions = 0;
		r->tls = r->tls_resumed = 0;
	}
	return 0;
}

long long
connstats_purge(struct db *db)
{
	unsigned long long n = 0;

	if (db_exec(db, "DELETE FROM egress_health WHERE hour < "
	    "UTC_TIMESTAMP() - INTERVAL ? DAY",
	    DB_ARGS(DBP_INT(CONNSTATS_KEEP_DAYS)), &n) != DB_OK)
		return -1;
	return (long long)n;
}
