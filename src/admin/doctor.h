/* doctor.h: "svcadm doctor": what receiving mail servers will think of a
 * verifier host, checked from the host itself: a PTR for the outbound
 * address that names smtp_helo_name, that name resolving back to the
 * address, port 25 reachable outbound, and the address on no DNS
 * blocklist; and, from the database, whether svc-worker's direct SMTP
 * sessions lately could connect (port25_seen: port25.h). Every check can be skipped and pointed elsewhere by settings
 * (dns_resolver, doctor_address, doctor_port25_target, doctor_dnsbl_zones,
 * doctor_skip), which is how it is tested on loopback. */
#ifndef SVC_ADMIN_DOCTOR_H
#define SVC_ADMIN_DOCTOR_H
#include "core/db.h"
#include "util/buf.h"
#include "util/conf.h"
#include <stdio.h>

enum doctor_check {
	DOCTOR_PTR,		/* the address's PTR names smtp_helo_name */
	DOCTOR_FCRDNS,		/* smtp_helo_name resolves to the address */
	DOCTOR_PORT25,		/* an SMTP greeting from doctor_port25_target */
	DOCTOR_DNSBL,		/* listed on none of doctor_dnsbl_zones */
	DOCTOR_PORT25_SEEN,	/* svc-worker's direct SMTP sessions of the
				 * last hour connected (port25.h) */
	DOCTOR_DB_CLUSTER,	/* a Galera cluster of 3 nodes or more, every
				 * endpoint Synced (dbcluster.h) */
	DOCTOR_CHECK__MAX
};
extern const char *const doctor_check_names[DOCTOR_CHECK__MAX];

enum doctor_result {
	DOCTOR_OK,
	DOCTOR_FAIL,		/* the check found a problem */
	DOCTOR_ERROR,		/* it could not tell (DNS failed, no address) */
	DOCTOR_SKIPPED,
	DOCTOR_RESULT__MAX
};
extern const char *const doctor_result_names[DOCTOR_RESULT__MAX];

/* Runs the checks that neither doctor_skip nor skip (names separated by
 * commas or spaces; may be NULL) leaves out, on address (NULL: the
 * doctor_address setting, else the local address of the route to
 * doctor_port25_target), and prints one line per check (JSON when json is
 * set). db (NULL: no database, why in db_why, and port25_seen is
 * skipped) is read by port25_seen.
 * Returns 0 when every check passed or was skipped, 1 when one failed or
 * could not tell, -1 on a bad setting or option (err). */
int	 doctor_run(const struct conf *, struct db *db, const char *db_why,
	    const char *skip, const char *address, int json, FILE *out,
	    struct buf *err);
#endif
