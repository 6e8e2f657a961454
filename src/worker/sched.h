/* sched.h: the state of svc-worker's verification loop, shared by the files
 * that run it (for them only): chunks.c (claims, leases, results handed to
 * the writer), domains.c (domains, their MX answers and the hosts that
 * limit sessions, back-off), sessions.c (SMTP sessions: starting,
 * stepping, their transactions one domain after another, parking,
 * concluding) and process.c (set-up, the loop, stop).
 * The engine's batch face (engine/verify_batch.h) does every verification
 * step; these files decide what runs when. */
#ifndef SVC_WORKER_SCHED_H
#define SVC_WORKER_SCHED_H
#include "engine/mxprofile.h"
#include "engine/pacing.h"
#include "engine/verify_batch.h"
#include "jobs/jobqueue.h"
#include "util/conf.h"
#include "worker/process.h"
#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#define SCHED_CHUNK_SIZE	200	/* addresses per chunk (jobs.c) */
#define SCHED_CHUNKS_MAX	64	/* chunks held at once */
#define SCHED_HASH		1024	/* domain table buckets */

struct pacer_pair;
struct defer_record;

/* A claimed chunk and what waits to be written of it. */
struct process_chunk {
	struct jobqueue_chunk	 c;
	struct jobqueue_result	*res;		/* waiting to be written */
	size_t			 nres, capres;
	struct vcache_entry	*cache;		/* verdicts to cache */
	size_t			 ncache, capcache;
	size_t			 outstanding;	/* addresses not concluded */
	size_t			 rows;
	int			 gone;		/* the job ended: drop all */
	int64_t			 last_flush, last_renew;
	/* defer.c's pass: the paced pair all its queued addresses wait for,
	 * how many are queued, whether some wait for something else */
	struct pacer_pair	*defer_pair;
	size_t			 defer_queued;
	int			 defer_mixed, defer_now;
	struct process_chunk	*next;
};

/* What sessions are limited by: an MX host by name, and the address it
 * resolves to first ("[192.0.2.1]"), so that domains whose differently named
 * MX hosts point at one server share that server's limit. */
enum process_throttle {
	PROCESS_BY_NAME,
	PROCESS_BY_ADDRESS,
	PROCESS_THROTTLE__MAX
};

struct process_host {
	char			 name[DNS_NAME_MAX + 3];	/* or "[address]" */
	int			 refs;		/* domains using it */
	int			 active;	/* sessions now */
	/* sessions it may have at once: from domain_initial, one more a
	 * transaction answered in full while all were in use (and the loop
	 * had slots free), up to domain_concurrency; domain_initial again on
	 * a busy server's sign (a deferral, a refused or timed-out
	 * connection, a disconnection), and from then on it grows no further
	 * than one less than it was then (as Postfix's destination
	 * concurrency window; domains_window); a cap from a refusal at the
	 * greeting is kept in the host's profile (sessions_max) for every
	 * worker that meets it */
	int			 window;
	int			 window_cap;
	int64_t			 backoff_until;
	int			 backoff_ms;
	int			 rcpt_limit;	/* learned from early 421s */
	int			 session_limit;	/* RCPTs a session takes (452
						 * 4.5.3, the profile), 0: any */
	struct mxprofile	 prof;		/* by name: what is known */
	/* by name: its pacing pair per egress route (npairs: the routes of
	 * smtp_egress; 0 for a host by address) */
	struct pacer_pair	*pair[EGRESS_ROUTES_MAX];
	size_t			 npairs;
	int			 no_reuse;	/* a later transaction of a
						 * session failed: one each */
	/* by name: the options of its sessions (its provider's pin, or the
	 * engine's: verify_engine_smtp_host); its routes are the ones its
	 * pairs may be used on. NULL for a host by address. */
	const struct smtp_opts	*opts;
	struct process_host	*next;
};

/* An address of a chunk on its way. */
struct process_addr {
	struct process_chunk	*chunk;
	int			 seq;
	int			 attempts;	/* greylisted attempts (job) */
	int			 tries;		/* sessions lost to deferrals */
	long			 retry_after_s;	/* greylisted: 0 or the host's */
	struct verify_item	 it;
	struct process_addr	*next;
};

struct process_parked;

/* A domain of the chunks held: the engine's batch, and its queue. */
struct process_domain {
	struct verify_batch	 b;
	int			 in_dns;	/* queued for, or in, a lookup */
	struct process_host	*host[PROCESS_THROTTLE__MAX];	/* or NULL */
	int			 active;	/* transactions taken or running */
	/* RCPTs the sessions now carrying its transactions will take as
	 * their next ones (unpaced hosts only; sessions_schedule) */
	size_t			 carry;
	struct process_addr	*head, *tail;	/* waiting (for DNS or SMTP) */
	size_t			 queued;
	struct process_parked	*parked;	/* ended, waiting for the probe */
	/* local clock of the first of the blocks in a row that sent its
	 * addresses back (0: none since the host last answered): their
	 * patience counts from then (pacer_past_patience) */
	int64_t			 blocked_since;
	struct process_domain	*hnext;		/* hash chain */
	struct process_domain	*dnext;		/* DNS queue */
};

/* A transaction: addresses of one domain in one MAIL FROM, and its
 * answers (the session that ran it, or its answers detached from a
 * session that went on). */
struct process_tx {
	struct smtp_session	*s;
	struct process_domain	*d;
	struct process_addr	**addrs;
	size_t			 n;
	int			 probe;		/* rcpt 0 is the probe */
	int			 failed;	/* a later transaction of its
						 * session, ended before every
						 * RCPT was answered */
	int			 unsent;	/* the session ended before it */
	int			 blocked;	/* its answers paused its pair */
	int64_t			 taken;		/* when its RCPTs were taken */
};

/* An SMTP session: a connection that carries transactions of domains
 * whose MX is the same host, one after another. */
struct process_session {
	struct smtp_session	*s;
	struct process_tx	 tx;		/* taken from the queue, or under
						 * way (n 0: none) */
	int			 loaded;	/* tx was given to s */
	int			 last;		/* QUIT went with tx */
	struct process_host	*host[PROCESS_THROTTLE__MAX];	/* counted in */
	int			 ntx;		/* transactions given */
	size_t			 route;		/* egress route it started on */
	size_t			 rcpts;		/* RCPTs given in all */
};

/* A finished transaction whose addresses wait for the domain's probe
 * answer. */
struct process_parked {
	struct process_tx	 tx;
	struct process_parked	*next;
};

struct process {
	const struct conf	*conf;
	struct verify_engine	*engine;
	char			 owner[JOBQUEUE_OWNER_MAX + 1];
	long			 lease;
	int			 concurrency, domain_concurrency, rcpts;
	int			 domain_initial;	/* a host's first window */
	int			 transactions;	/* per session */
	size_t			 session_rcpts;	/* per session */
	int			 grey_retries;
	long			 grey_delay;
	size_t			 max_chunks;
	/* Every domain with addresses waiting waits for pacing (a penalty,
	 * its budget, its one session), and session slots are free
	 * (sessions_schedule): chunks are claimed beyond max_chunks, up to
	 * SCHED_CHUNKS_MAX, so that chunks of paced providers' addresses,
	 * held for minutes, do not keep the next ones (other providers,
	 * friendly domains) waiting behind them. */
	int			 paced_only;
	int64_t			 defer_checked;	/* defer.c's last pass */
	struct defer_record	*deferred;	/* chunks handed back (defer.c) */
	size_t			 ndeferred, capdeferred;

	struct db		*db;
	struct writer		*writer;	/* results, chunk ends */
	struct resolver		*resolver;	/* MX lookups */
	size_t			 dns_pending;	/* lookups handed over */
	struct process_chunk	*chunks;
	size_t			 nchunks;
	struct process_domain	*hash[SCHED_HASH];
	uint64_t		 hash_used[SCHED_HASH / 64]; /* buckets.c */
	struct process_domain	*dns_head, *dns_tail;
	struct process_host	*hosts;
	struct process_session	*sessions;
	size_t			 nsessions;
	struct pollfd		*pfd;
	int64_t			 last_claim;
	int			 claim_empty;	/* the last claim found nothing */
	int			 claim_short;	/* it found fewer than asked */
	int64_t			 claim_every;	/* ms between short claims */
	struct wake		*wake;		/* svc-api's wake-ups, or NULL */
	int			 woken;		/* one came: claim at once */
	unsigned		 rr;		/* first hash bucket scheduled */
	int			 db_failed;
	int			 orphaned;	/* the last run lost the database
						 * with chunks leased */
	int64_t			 dns_deadline;	/* process_set_deadline */
	struct pacing_conf	 pconf;		/* pacer.c */
	struct pacing_defaults	 pdefaults;
	struct pacer_pair	*pairs;
	int64_t			 pacer_synced;
	int			 pacer_new;	/* pairs made since the last read */
	/* "key\037egress" of every row the last read found, sorted: a pair
	 * new to this process with a stored row is read before it is used */
	char			**pacer_rows;
	size_t			 npacer_rows, cappacer_rows;
	size_t			 route_next;	/* round robin of new sessions */
	int64_t			 egress_synced;	/* egress_down read */
	/* profiles.c: hosts whose profile is to be read, notes to write */
	struct process_host	**prof_want;
	size_t			 nprof_want, capprof_want;
	struct mxprofile	*prof_notes;
	size_t			 nprof_notes, capprof_notes;
	int64_t			 prof_written;
};

/* chunks.c */
/* The chunks held at most now: max_chunks, or SCHED_CHUNKS_MAX while
 * paced_only. */
size_t	 chunks_cap(const struct process *);
void	 chunks_claim(struct process *, int64_t now);
void	 chunks_tick(struct process *, int64_t now);
void	 chunks_flush(struct process *, struct process_chunk *, int64_t now);
void	 chunks_outcomes(struct process *);
void	 chunks_free(struct process_chunk *);
/* An address is concluded (a result, or "greylisted, try later"); store:
 * its verdict goes to the cache too. The caller frees pa. */
void	 chunks_result(struct process *, struct process_addr *, int store);
/* An address given up for this pass (its row stays pending); frees pa. */
void	 chunks_abandon(struct process_addr *);

/* defer.c, once a second: while the chunks held fill the cap, a chunk
 * whose addresses all wait for one paced pair, and would not go within a
 * minute, is handed back (claimable again by itself about when its turn
 * comes) to make room; a pair whose addresses at hand would last less than
 * half a minute gets the first chunk handed back for it called back.
 * defer_free forgets the chunks handed back (they come back at their
 * time). */
void	 defer_tick(struct process *, int64_t now);
void	 defer_free(struct process *);

/* buckets.c: a walk over the domain table's buckets that hold a domain,
 * in the order start, start + 1, ..., SCHED_HASH - 1, 0, ..., start - 1:
 *   for (b = buckets_first(p, &s, start); b >= 0; b = buckets_next(p, &s))
 * buckets_mark notes whether bucket b holds a domain now (after every
 * change of p->hash[b]). */
struct buckets_scan {
	unsigned	 start, at;
	int		 wrapped;
};
void	 buckets_mark(struct process *, unsigned b);
int	 buckets_first(const struct process *, struct buckets_scan *,
	    unsigned start);
int	 buckets_next(const struct process *, struct buckets_scan *);

/* domains.c */
struct process_domain *domains_get(struct process *, const char *name);
void	 domains_route(struct process *, struct process_addr *);
void	 domains_enqueue(struct process_domain *, struct process_addr *,
	    int front);
struct process_addr *domains_dequeue(struct process_domain *);
void	 domains_dns(struct process *);
void	 domains_dns_answers(struct process *);
/* May the domain start a session now (its hosts' windows, back-off and
 * pacing)? */
int	 domains_may_start(const struct process_domain *, int64_t now);
/* It may not, and only for pacing: a host it goes to is paused or in a
 * penalty on every route. */
int	 domains_paced_wait(const struct process_domain *, int64_t now);
/* A session counts in the domain's hosts (held: the session's), and
 * stops counting. */
void	 domains_hold(struct process_host **held,
	    const struct process_domain *);
void	 domains_release(struct process_host **held);
/* May a session counted in held, connected as si says, go on with the
 * domain's next transaction? Then domains_follow counts it in the
 * domain's hosts instead. */
int	 domains_may_follow(const struct process *,
	    struct process_host *const *held, const struct smtp_session_info *,
	    const struct process_domain *, int64_t now);
void	 domains_follow(struct process_host **held,
	    const struct process_domain *);
/* The fewest RCPTs one of the domain's hosts takes a session (learned from
 * 452 4.5.3), 0 when none said. */
size_t	 domains_session_limit(const struct process_domain *);
size_t	 domains_rcpt_limit(const struct process *,
	    const struct process_domain *);
/* The back-off and recipient limit its hosts learn from how a session
 * ended (answered: the RCPTs that got a reply). */
void	 domains_learn(struct process_domain *,
	    const struct smtp_session_info *, size_t answered, int64_t now);
/* The window (process_host.window) of the hosts a session is counted in,
 * from how its transaction ended. */
void	 domains_window(struct process *, struct process_host *const *,
	    const struct smtp_session_info *);
/* A later transaction of a session failed: the hosts it counts in get
 * one transaction per session from now on. */
void	 domains_no_reuse(struct process_host *const *held,
	    const struct smtp_session_info *);
/* Did the host defer the whole session (4xx greeting, HELO or MAIL, 421)? */
int	 domains_deferred(const struct smtp_session_info *);
void	 domains_sweep(struct process *, int64_t now);
/* A 452 4.5.3 "too many recipients" (a per-session limit, not the
 * mailbox's answer). */
int	 domains_too_many(const struct smtp_rcpt_result *);

/* profiles.c */
/* The new host's profile is read with the others met in the same pass
 * (profiles_read, at the end of every pass that makes hosts). */
void	 profiles_want(struct process *, struct process_host *);
void	 profiles_read(struct process *);
/* What a session taught of a host, written by profiles_write: when a
 * second has passed since the last write, or many wait, or all. */
void	 profiles_note(struct process *, const struct mxprofile *);
void	 profiles_write(struct process *, int64_t now, int all);
void	 profiles_free(struct process *);

/* pacer.c */
void	 pacer_init(struct process *);
void	 pacer_free(struct process *);
/* The host's pairs, one per egress route (provider: the id
 * mx_providers.txt gives it, or "" when none); and their end. */
void	 pacer_host_pairs(struct process *, struct process_host *,
	    const char *provider);
void	 pacer_host_unref(struct process_host *);
void	 pacer_sync(struct process *, int64_t now);
/* Pairs made since the last read that have a stored row (the last read
 * found one, or there has been no read for two PACER_SYNC_MS) are read
 * from MariaDB at once (one statement for all), before any session may use
 * them: a pair new to this process (a host first seen, a worker just
 * started) may be in a penalty or paused by another worker host or an
 * earlier run. A row another worker made within the last second is read
 * with the next sync. */
void	 pacer_read_new(struct process *, int64_t now);
void	 pacer_routes_sync(struct process *, int64_t now);
/* The routes there are (smtp_egress), and the one a new session of the
 * round robin would start with. */
size_t	 pacer_routes(const struct process *);
size_t	 pacer_route_start(struct process *);
/* May the host (NULL, or one without pairs: yes) get RCPTs by route now
 * (neither in a penalty nor paused there)? By any route? */
int	 pacer_may_send(const struct process_host *, size_t route,
	    int64_t now);
int	 pacer_any_may_send(const struct process_host *, int64_t now);
/* Whether one more session may open on the host's pair of route: always
 * for a pair not paced, else while fewer than pacing_pair_sessions are
 * open on it. pacer_session_count counts one opening (+1) or ending
 * (-1). */
int	 pacer_session_room(const struct process *,
	    const struct process_host *, size_t route);
void	 pacer_session_count(struct process_host *, size_t route, int delta);
/* Whether any route's pair of the host is paced (a budget to share). */
int	 pacer_host_paced(const struct process_host *);
/* Every route's pair of the host is paused past the patience of addresses
 * waiting since waiting_since (pacing_past_patience). */
int	 pacer_past_patience(const struct process *, const struct process_host *,
	    int64_t waiting_since, int64_t now);
/* When every route the host's sessions may take is paced: the pair that
 * stands for them (the first usable route's: the hosts of one provider
 * share it), how long until one of them may send (*wait_ms, 0: now) and
 * how many RCPTs a minute they take together now (*per_min). NULL when
 * one is not paced (nothing holds its addresses back but session slots). */
struct pacer_pair *pacer_outlook(const struct process *,
	    const struct process_host *, int64_t now, int64_t *wait_ms,
	    long *per_min);
/* When count addresses handed back for the pair (defer.c) may go: after
 * those handed back before them at per_min, not before earliest (this
 * process's own reckoning, in its clock). */
int64_t	 pacer_defer_slot(struct pacer_pair *, int64_t earliest, size_t count,
	    long per_min);
/* A hold on the pair (delta +1) keeps it, and its shared state read
 * every second, while no host uses it; -1 lets it go. */
void	 pacer_pair_hold(struct pacer_pair *, int delta);
/* How long until the pair's penalty or pause ends (0: it may send). */
int64_t	 pacer_pair_wait(const struct pacer_pair *, int64_t now);
/* Whether a chunk handed back for the pair may be called back now: not
 * within every_ms of the last call (which this call becomes). */
int	 pacer_pull_due(struct pacer_pair *, int64_t now, int64_t every_ms);
/* Why the host's pairs are paused (the first paused route's reply). */
const char *pacer_reason(const struct process_host *);
/* How many of want RCPTs may go to the host by route now. */
size_t	 pacer_allow(struct process *, struct process_host *, size_t route,
	    size_t want, int64_t now);
/* Learns from a transaction's answers; 1 when they were a block (or the
 * last "slow down" before one) that paused the route's pair. */
int	 pacer_learn(struct process *, struct process_domain *,
	    const struct smtp_session *, size_t total, size_t answered,
	    size_t before, int failed, int64_t taken, int64_t now);
/* The wait before an address's first retry when its host greylists it:
 * the delay that got through last time (the host's profile) when it is
 * longer than worker_greylist_delay, else 0 (the setting's); later
 * retries keep the setting's. */
long	 pacer_greylist_wait(const struct process *,
	    const struct process_domain *, const struct process_addr *);
void	 pacer_greylist_passed(struct process *, struct process_domain *,
	    int attempts);

/* sessions.c */
void	 sessions_schedule(struct process *, int64_t now);
void	 sessions_poll(struct process *, int timeout_ms);
void	 sessions_drop_all(struct process *);
#endif
