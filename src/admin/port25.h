/* port25.h: whether outbound port 25 looks blocked, from how svc-worker's
 * direct SMTP sessions fared lately (egress_health, written by svc-worker:
 * sql/019_egress_health.sql). Shared by "svcadm status" and "svcadm
 * doctor". */
#ifndef SVC_ADMIN_PORT25_H
#define SVC_ADMIN_PORT25_H
#include "core/db.h"
#include <stddef.h>

/* Direct sessions counted at least before a verdict is given. */
#define PORT25_MIN_SESSIONS	20
/* The share (in percent) of them that failed to connect the same way. */
#define PORT25_BLOCKED_PCT	80

struct port25_figures {
	long long	 sessions, connected, refused, timed_out;
};

/* The direct route's figures over this UTC hour and the last one. */
enum db_err port25_read(struct db *, struct port25_figures *);
/* 1 when port 25 looks blocked (msg says how it was told and what to
 * do), 0 when not or when too few sessions tell (msg says which). */
int	 port25_blocked(const struct port25_figures *, char *msg,
	    size_t size);
#endif
