/* pacing.h: reputation-aware pacing (issue 24 item 4): a budget of RCPTs
 * per (provider or mail host, egress route), shared by every worker host
 * through MariaDB, and AIMD on it. Modelled on OpenSMTPD's per-route
 * limits (mta.c) and Postfix qmgr's dead-destination back-off:
 *
 *  - A pair is paced once it has a row in pacing_pairs: a shipped default
 *    matched its host (pacing_defaults.h), or the host said "slow down".
 *    A pair that is not paced has no budget at all and costs no statement
 *    (a friendly host that never says 421 is never slowed down).
 *  - Its rate (RCPTs a minute) is a function of the row and the clock, so
 *    every worker computes the same one and nothing is written while it
 *    grows: before the first "slow down" it doubles every window and its
 *    slack (pacing_take_window_ms: a burst a window after the last one
 *    would meet the host's window edge, where nobody can tell whether it
 *    still counts the last one) from its start rate (a default is a
 *    start, not a ceiling), counted from when
 *    the pair was last taken up after a window unused (pacing_note_asked,
 *    in the worker's memory: nothing is written); after one it is
 *    halved (base) and creeps back up by a quarter of base a window, to
 *    pacing_learned_percent (90) of the rate the host first said "slow
 *    down" at (learned: run just under it). pacing_max_rate caps every
 *    pair.
 *  - The RCPTs are counted in rate_counts with ratelimit_lease (the rate
 *    permits of sql/010): a window of pacing_window_ms never holds more
 *    than rate * window / 1 minute of them, on all worker hosts together.
 *  - "Slow down" (pacing_is_slow_down: a rate_limited reply) starts a
 *    penalty: no RCPT and no connection from that route to the pair until
 *    it ends (the pair's penalty, and at least a window: what was sent
 *    before it was not counted in the budget). Several in a row
 *    (pacing_block_strikes, each within a penalty of the last one's
 *    end), or a block (5.7.x naming our client
 *    or a DNSBL, at connect, HELO or MAIL, or to every RCPT) pause the
 *    pair for pacing_pause_ms; addresses waiting for a pair whose pause
 *    ends more than pacing_patience_ms after the first of the blocks in a
 *    row that sent them back end unknown / smtp_blocked.
 * The worker's side (which pair a domain uses, when it may send) is
 * src/worker/pacer.c; this file is the state and its statements. */
#ifndef SVC_PACING_H
#define SVC_PACING_H
#include "core/db.h"
#include "engine/pacing_defaults.h"
#include "engine/smtp.h"
#include <stdint.h>

#define PACING_KEY_MAX		256
#define PACING_EGRESS_MAX	128
#define PACING_REASON_MAX	200
#define PACING_EGRESS_DIRECT	"direct"	/* the egress without routes */
/* RCPTs the host answered are counted in slots of PACING_TALLY_SLOT_MS,
 * PACING_TALLY of them: 64 s, more than the longest window (60 s). */
#define PACING_TALLY_SLOT_MS	100
#define PACING_TALLY		640

/* The settings pacing reads (conf.h: pacing_*). */
struct pacing_conf {
	long	 window_ms;		/* budget window */
	long	 penalty_ms;		/* after "slow down", no default's */
	long	 pause_ms;		/* after a block */
	long	 patience_ms;		/* waiting addresses give up after */
	long	 max_rate;		/* RCPTs a minute, 0: no ceiling */
	long	 learned_percent;	/* of the learned rate, run at */
	int	 block_strikes;		/* "slow down"s in a row = a block */
	int	 pair_sessions;		/* sessions at once on a paced pair,
					 * 0: no cap (svc-worker) */
};

struct pacing_pair {
	char	 key[PACING_KEY_MAX];		/* provider, pattern or host */
	char	 egress[PACING_EGRESS_MAX];
	int	 paced;			/* it has a row (or should have) */
	int	 stored;		/* the row is known to exist */
	long	 start_rate, base_rate, learned_rate;	/* 0: none */
	long	 penalty_ms;		/* its own (default's) or the conf's */
	int64_t	 since;			/* local clock (ms) of the last change */
	int64_t	 penalty_until, paused_until;	/* local clock, 0: none */
	int	 strikes;
	char	 reason[PACING_REASON_MAX];
	/* RCPTs the host answered, by slot of the local clock */
	int64_t	 tally_slot[PACING_TALLY];
	long	 tally[PACING_TALLY];
	/* This process's own (never stored): when it last asked the budget,
	 * and since when the start rate grows (pacing_note_asked). */
	int	 asked;
	int64_t	 asked_at, grow_from;
};

/* A pair for key and egress; paced (with start rate and penalty) when d
 * is a default's entry, else not paced. */
void	 pacing_pair_init(struct pacing_pair *, const struct pacing_conf *,
	    const char *key, const char *egress,
	    const struct pacing_default *d, int64_t now);
/* Before the budget is asked: a pair that nobody asked for a window or
 * more (this process, by its own memory; the others, by shared_ago: the
 * ms since the shared budget's last take, pacing_db_last_take, -1 when
 * none or not looked up) starts growing again from its base rate now. A
 * rate that doubled while nothing was sent was never shown to be
 * tolerated: after an idle hour a start rate would otherwise have doubled
 * 60 times, and the next job's first burst would meet the host's limit at
 * full speed. */
void	 pacing_note_asked(struct pacing_pair *, const struct pacing_conf *,
	    int64_t now, long long shared_ago);
/* Whether this process asked the pair's budget within the last window
 * (then shared_ago need not be looked up). */
int	 pacing_asked_lately(const struct pacing_pair *,
	    const struct pacing_conf *, int64_t now);
/* A pair new to the database for a host whose profile (mxprofile.h) kept
 * the rate it first said "slow down" at, from one egress: paced, that rate
 * taken as learned, and run at once just under it (learned_percent). */
void	 pacing_learn_from_profile(struct pacing_pair *,
	    const struct pacing_conf *, long rate_421, int64_t now);
/* RCPTs a minute the pair may have now; 0: not paced (no limit). */
long	 pacing_rate(const struct pacing_pair *, const struct pacing_conf *,
	    int64_t now);
/* RCPTs of the window the pair may have now (rate scaled, at least 1);
 * 0: not paced. */
long	 pacing_window_limit(const struct pacing_pair *,
	    const struct pacing_conf *, int64_t now);
/* Neither in a penalty nor paused. */
int	 pacing_may_send(const struct pacing_pair *, int64_t now);
/* The pair is paused past the patience of the addresses waiting for it:
 * its pause ends more than patience_ms after they began waiting
 * (waiting_since, the local clock of the first of the blocks in a row
 * that sent them back; 0: now). Counted from then, not from now, so that
 * blocks in a row, each paused for less than the patience, still end
 * them once they have waited past it. */
int	 pacing_past_patience(const struct pacing_pair *,
	    const struct pacing_conf *, int64_t waiting_since, int64_t now);
/* n RCPTs answered by the host. */
void	 pacing_tally_add(struct pacing_pair *, long n, int64_t now);
/* RCPTs answered in the last window (what the host still counts when it
 * says "slow down"), as a rate a minute. */
long	 pacing_tally_rate(const struct pacing_pair *,
	    const struct pacing_conf *, int64_t now);

/* The host said "slow down": penalty, rate halved, learned rate kept
 * (the lower of the one known and the tally's); a strike, and a block
 * when there were pacing_block_strikes in a row. Returns 1 when the pair
 * is now paused. */
int	 pacing_slow_down(struct pacing_pair *, const struct pacing_conf *,
	    const char *reason, int64_t now);
/* The same, seen by a session outside svc-worker (which keeps no tally of
 * the rate it was sending at): a paced pair's rate is halved as above; an
 * unpaced one gets the penalty and the strike but no rate (one session's
 * "slow down" says nothing of the rate the host takes). */
int	 pacing_slow_down_unmeasured(struct pacing_pair *,
	    const struct pacing_conf *, const char *reason, int64_t now);
/* A "slow down" heard by a transaction whose RCPTs were taken before the
 * pair's current penalty began (pacing_slow_down), while it lasts: the
 * echo of the one the penalty is for (flights of other sessions already
 * on their way), not a new one. The worker neither strikes nor halves
 * again for it: make bench-providers saw one 421 answered to three
 * sessions in 7 ms become three strikes, the learned rate halved three
 * times (179 to 44 RCPTs a minute) and the pair paused for an hour. */
int	 pacing_echo(const struct pacing_pair *, int64_t taken, int64_t now);
/* A block: the pair is paused for pause_ms. */
void	 pacing_block(struct pacing_pair *, const struct pacing_conf *,
	    const char *reason, int64_t now);

/* The one test of a "slow down" reply: a 4xx (421 included) that the
 * reading rules (smtp_reply_rules.txt, the host's provider's first) call
 * rate_limited (421 4.7.28, 451 4.7.650, Yahoo's "[TSS04]"...). Any other
 * 4xx, x.7.x or not (greylisting, Postfix's "421 4.7.0 Error: too many
 * errors", 4.3.2 "shutting down"), is the back-off's, not this. */
int	 pacing_is_slow_down(int code, enum smtp_verdict);
/* A reply that blocks our client (5.7.x naming us, a DNSBL, a policy). */
int	 pacing_is_block(int code, enum smtp_verdict);

/* ---- MariaDB (pacing_pairs, rate_counts) ---- */

/* Writes the pair's state (the database's clock for its times); only_new:
 * only when it has no row yet (a default's pair first used). */
enum db_err pacing_db_store(struct db *, const struct pacing_pair *,
	    int only_new, int64_t now);
/* The settings pacing_* of a configuration. */
void	 pacing_conf_read(struct pacing_conf *, const struct conf *);
/* Reads every stored pair (key NULL), or the pairs of key (one per egress
 * route); fn is called with each (its times turned into the local clock
 * at now). */
enum db_err pacing_db_read(struct db *, const char *key, int64_t now,
	    void (*fn)(void *, const struct pacing_pair *), void *arg);
/* Deletes the pairs not written for PACING_KEEP_DAYS and neither paused
 * nor in a penalty now (a provider or host no longer sent to, a route no
 * longer in smtp_egress): the rows deleted, or -1. A pair used again
 * starts from its default (the mail host's profile keeps what was
 * learned of it). */
#define PACING_KEEP_DAYS	30
long long pacing_db_purge(struct db *);
/* The window a budget of window_ms is counted over: longer by
 * PACING_TAKE_SLACK_MS. rate_counts holds whole seconds and
 * ratelimit_lease sums those after (now - window) DIV 1000, which leaves
 * out up to a second of RCPTs that the host, with its own exact clock,
 * still counts in its window; and an RCPT reaches the host a while after
 * it was taken (connect, STARTTLS, EHLO: flights). Without the slack a
 * host that takes exactly the pair's rate got more than that in its
 * window when a window's sends were taken early in a second
 * (make bench-providers: 421 4.7.28, then strikes and a block). (A
 * housekeeping pass may purge the oldest of those seconds first, when
 * rate_window_seconds is no longer than the pacing window: rarely, and a
 * second at most.) */
#define PACING_TAKE_SLACK_MS	2000
long	 pacing_take_window_ms(long window_ms);
/* Takes up to want RCPTs of the pair's budget (limit RCPTs in any
 * window_ms, every worker host counted, pacing_take_window_ms): *granted
 * gets how many (0: the window is full). */
/* The ms since RCPTs were last taken from the pair's budget by anyone
 * (whole seconds of rate_counts); -1 when none are kept. */
enum db_err pacing_db_last_take(struct db *, const struct pacing_pair *,
	    long long *ago);
enum db_err pacing_db_take(struct db *, const struct pacing_pair *,
	    long limit, long want, long window_ms, long *granted);
#endif
