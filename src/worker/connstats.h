/* connstats.h: how svc-worker's SMTP sessions fared per egress route
 * (connected, every connect refused, every connect timed out), counted in
 * memory and added to the hour's row of egress_health
 * (sql/019_egress_health.sql) every HEARTBEAT_SECONDS and when a pass
 * ends. "svcadm status" and "svcadm doctor" judge port 25 from it. The
 * connections that used TLS and those whose TLS handshake resumed a
 * session (smtp_tls_resume) are counted too, for the log only
 * (event=connstats, debug level; each session's event=smtp_session line
 * says tls= and resumed=). */
#ifndef SVC_WORKER_CONNSTATS_H
#define SVC_WORKER_CONNSTATS_H
#include "core/db.h"
#include "engine/smtp.h"

enum connstats_kind {
	CONNSTATS_CONNECTED,	/* a connection to an MX was made */
	CONNSTATS_REFUSED,	/* every connect refused (or failed at once) */
	CONNSTATS_TIMED_OUT,	/* every connect timed out */
	CONNSTATS_OTHER,	/* no MX address, a route failure, ... */
	CONNSTATS__MAX
};
extern const char *const connstats_kind_names[CONNSTATS__MAX];

/* What a session's end says about its route's connections. */
enum connstats_kind connstats_kind_of(const struct smtp_session_info *);
/* Counts one session (the first transaction's end) of si->route. */
void	 connstats_note(const struct smtp_session_info *);
/* Adds what was counted to egress_health when force or
 * HEARTBEAT_SECONDS have passed since the last write; the counts are kept
 * for the next try when the database fails. 0, or -1. */
int	 connstats_flush(struct db *, int force);
/* Deletes the hours older than CONNSTATS_KEEP_DAYS: how many, or -1. */
#define CONNSTATS_KEEP_DAYS 7
long long connstats_purge(struct db *);
#endif
