/* mxprofile.h: what svc-worker learned about a mail host (issue 24 item
 * 3), kept in MariaDB (mx_profiles, sql/020) and shared by every worker
 * host: the RCPTs one session may carry (452 4.5.3: Outlook.com takes
 * one), whether it accepted the catch-all probe, the greylisting delay
 * that got through, STARTTLS, the rate at which it first said "slow down"
 * (421 / 4.7.x), the last block it gave and the sessions at once it
 * takes. A worker reads a host's profile when it first meets the host and
 * writes only what changed. */
#ifndef SVC_MXPROFILE_H
#define SVC_MXPROFILE_H
#include "core/db.h"
#include "engine/dns.h"

#define MXPROFILE_TEXT_MAX	256
#define MXPROFILE_TIME_MAX	32	/* "2026-11-28 09:42:11.123" */
#define MXPROFILE_PROVIDER_MAX	64
/* How long a learned sessions_max holds: after a day without a busy sign
 * that renews it, a host gets the whole window again (a server's limit
 * may have been raised, or the sign was a passing one). */
#define MXPROFILE_SESSIONS_MAX_TTL_S	86400

/* Numbers -1 (or "" strings) are not known; in a note, not changed. */
struct mxprofile {
	char	 host[DNS_NAME_MAX + 1];	/* lower case */
	char	 provider[MXPROFILE_PROVIDER_MAX];
	int	 rcpts_per_session;
	int	 accept_all;
	int	 greylist_delay_s;
	int	 starttls;
	int	 rate_421;		/* RCPTs a minute from one egress */
	char	 rate_421_at[MXPROFILE_TIME_MAX];
	char	 last_block_at[MXPROFILE_TIME_MAX];
	char	 last_block[MXPROFILE_TEXT_MAX];	/* the reply, cleaned */
	int	 sessions_max;		/* sessions at once (from one worker)
					 * it took before a busy sign */
	char	 sessions_max_at[MXPROFILE_TIME_MAX];
	long	 sessions_max_age_s;	/* read only: seconds since
					 * sessions_max_at */
	char	 updated_at[MXPROFILE_TIME_MAX];
};

/* Nothing known of host (lower-cased, truncated to DNS_NAME_MAX). */
void	 mxprofile_init(struct mxprofile *, const char *host);
/* A later note of the same host into an earlier one: what n knows
 * replaces what into says (the two written as n after into would be). */
void	 mxprofile_merge(struct mxprofile *into, const struct mxprofile *n);
/* The stored profile of host (*found 0: none, p as mxprofile_init). */
enum db_err mxprofile_get(struct db *, const char *host, struct mxprofile *,
	    int *found);
/* The stored profiles of p[0..n-1]'s hosts, in one statement per
 * DBSQL_IN_MAX (p made by mxprofile_init; found[i] 0: none, p[i] kept). */
enum db_err mxprofile_get_many(struct db *, struct mxprofile *p, int *found,
	    size_t n);
/* Stores what note knows (the rest of the row is kept; rate_421,
 * last_block and sessions_max get their time from the database's
 * clock). */
enum db_err mxprofile_note(struct db *, const struct mxprofile *note);
/* The same for n notes in as few statements as dbsql_group allows, in
 * order (a later note of a host wins where both know a field); callers
 * that write from several processes at once give each host once, in the
 * order of the hosts' names, so that two statements never wait for each
 * other's rows. */
enum db_err mxprofile_note_many(struct db *, const struct mxprofile *notes,
	    size_t n);
/* The sessions at once p allows (its sessions_max while younger than
 * MXPROFILE_SESSIONS_MAX_TTL_S), or -1: no limit known. */
int	 mxprofile_sessions_max(const struct mxprofile *p);
/* "host=... rcpts_per_session=1 ..." lines for svcadm mx show, into out. */
void	 mxprofile_print(const struct mxprofile *, struct buf *out);
#endif
