/* pacing.c: the AIMD state of a (provider or mail host, egress) pair and
 * its statements (pacing.h has the design). The rate is computed, not
 * stored: from the row's start rate (doubling every window and its slack
 * until the first "slow down"), or from its base (creeping up by a quarter
 * a window) under pacing_learned_percent of the learned rate. Times in the
 * struct are the local monotonic clock; in MariaDB, the database's clock,
 * turned into offsets from "now" when read so that hosts' clocks never
 * meet. */
#include "engine/pacing.h"
#include "util/strparse.h"
#include <stdio.h>
#include <string.h>

#define PACING_GROWTH_WINDOWS	20	/* doublings before growth stops */

void
pacing_pair_init(struct pacing_pair *pp, const struct pacing_conf *c,
    const char *key, const char *egress, const struct pacing_default *d,
    int64_t now)
{
	memset(pp, 0, sizeof(*pp));
	strparse_copy(pp->key, sizeof(pp->key), key);
	strparse_copy(pp->egress, sizeof(pp->egress), egress);
	pp->penalty_ms = c->penalty_ms;
	pp->since = now;
	if (d != NULL) {
		pp->paced = 1;
		pp->start_rate = pp->base_rate = d->start_rate;
		pp->penalty_ms = d->penalty_s * 1000;
	}
}

int
pacing_asked_lately(const struct pacing_pair *pp, const struct pacing_conf *c,
    int64_t now)
{
	long w = c->window_ms > 0 ? c->window_ms : 60000;

	return pp->asked && now - pp->asked_at <= w;
}

void
pacing_note_asked(struct pacing_pair *pp, const struct pacing_conf *c,
    int64_t now, long long shared_ago)
{
	long w = c->window_ms > 0 ? c->window_ms : 60000;

	if (!pacing_asked_lately(pp, c, now) &&
	    (shared_ago < 0 || shared_ago > w))
		pp->grow_from = now;
	pp->asked = 1;
	pp->asked_at = now;
}

/* The top a learned rate runs at: learned_percent of it, at least 1. */
static long
pacing_learned_top(const struct pacing_conf *c, long learned)
{
	long pct = c->learned_percent > 0 ? c->learned_percent : 90;
	long top = (long)((int64_t)learned * pct / 100);

	return top > 0 ? top : 1;
}

long
pacing_rate(const struct pacing_pair *pp, const struct pacing_conf *c,
    int64_t now)
{
	long rate, top, w = c->window_ms > 0 ? c->window_ms : 60000;
	long grow = pacing_take_window_ms(w);
	int64_t n = now > pp->since ? (now - pp->since) / w : 0;

	if (!pp->paced)
		return 0;
	if (pp->learned_rate <= 0) {
		/* grow quickly until the first "slow down", counting only the
		 * windows since this process began asking (pacing_note_asked);
		 * a doubling waits for the window's slack too, so that the
		 * burst it lets go is never a window to the ms after the last
		 * one (pacing.h) */
		int64_t from = pp->grow_from > pp->since ? pp->grow_from :
		    pp->since;

		n = now > from ? (now - from) / grow : 0;
		rate = pp->base_rate > 0 ? pp->base_rate : 1;
		if (n > PACING_GROWTH_WINDOWS)
			n = PACING_GROWTH_WINDOWS;
		while (n-- > 0 && rate < PACING_RATE_MAX * 100)
			rate *= 2;
	} else {
		/* just under the rate it said "slow down" at */
		top = pacing_learned_top(c, pp->learned_rate);
		rate = pp->base_rate + (long)(n * (pp->base_rate / 4 + 1));
		if (rate > top)
			rate = top;
	}
	if (c->max_rate > 0 && rate > c->max_rate)
		rate = c->max_rate;
	return rate > 0 ? rate : 1;
}

long
pacing_window_limit(const struct pacing_pair *pp, const struct pacing_conf *c,
    int64_t now)
{
	long rate = pacing_rate(pp, c, now), limit;

	if (rate == 0)
		return 0;
	limit = (long)((int64_t)rate * c->window_ms / 60000);
	return limit > 0 ? limit : 1;
}

int
pacing_may_send(const struct pacing_pair *pp, int64_t now)
{
	return now >= pp->penalty_until && now >= pp->paused_until;
}

void
pacing_learn_from_profile(struct pacing_pair *pp, const struct pacing_conf *c,
    long rate_421, int64_t now)
{
	pp->paced = 1;
	pp->learned_rate = rate_421;
	pp->base_rate = pacing_learned_top(c, rate_421);
	if (pp->start_rate <= 0)
		pp->start_rate = pp->base_rate;
	pp->since = now;
}

int
pacing_past_patience(const struct pacing_pair *pp, const struct pacing_conf *c,
    int64_t waiting_since, int64_t now)
{
	int64_t from = waiting_since > 0 && waiting_since < now ?
	    waiting_since : now;

	return pp->paused_until > now &&
	    pp->paused_until - from > c->patience_ms;
}

void
pacing_tally_add(struct pacing_pair *pp, long n, int64_t now)
{
	int64_t slot = now / PACING_TALLY_SLOT_MS;
	size_t i = (size_t)(slot % PACING_TALLY);

	if (pp->tally_slot[i] != slot) {
		pp->tally_slot[i] = slot;
		pp->tally[i] = 0;
	}
	pp->tally[i] += n;
}

long
pacing_tally_rate(const struct pacing_pair *pp, const struct pacing_conf *c,
    int64_t now)
{
	/* What the host still counts in its window when it says "slow
	 * down": the RCPTs answered in the last window, to a slot (the slot
	 * the window begins in counted whole: a burst sent a window after
	 * the last one, when the rate has just doubled, is still the
	 * host's; make bench-providers' learning case learnt 75 for zoho's
	 * 120 when that slot was left out). Whole seconds were too coarse:
	 * exactly the window's seconds left out such a burst (microsoft365
	 * learnt 1 RCPT a minute, the one answered before its 421), and the
	 * budget's window with its slack (pacing_take_window_ms) counted the
	 * burst of the window before, which the host had let go 2 s earlier
	 * (zoho learnt 60 for 30). */
	long w = c->window_ms > 0 ? c->window_ms : 60000, sum = 0;
	int64_t last = now / PACING_TALLY_SLOT_MS;
	int64_t first = (now - w) / PACING_TALLY_SLOT_MS;
	size_t i;

	if (last - first >= PACING_TALLY)
		first = last - PACING_TALLY + 1;
	for (i = 0; i < PACING_TALLY; i++)
		if (pp->tally_slot[i] >= first && pp->tally_slot[i] <= last)
			sum += pp->tally[i];
	return (long)((int64_t)sum * 60000 / w);
}

/* A "slow down" in a row: within a penalty of the last one's end. */
static void
pacing_strike(struct pacing_pair *pp, int64_t now)
{
	if (pp->penalty_until > 0 && now < pp->penalty_until + pp->penalty_ms)
		pp->strikes++;
	else
		pp->strikes = 1;
}

/* The penalty of a "slow down" and its reason; 1 when the strikes make it
 * a block (the pair paused). */
static int
pacing_penalise(struct pacing_pair *pp, const struct pacing_conf *c,
    const char *reason, int64_t now)
{
	/* at least a window: what went before the "slow down" was not counted
	 * in the budget (the pair may not have been paced), so the budget's
	 * window starts once all of it has left the host's */
	pp->penalty_until = now + (pp->penalty_ms > c->window_ms ?
	    pp->penalty_ms : c->window_ms);
	snprintf(pp->reason, sizeof(pp->reason), "%s", reason);
	if (c->block_strikes > 0 && pp->strikes >= c->block_strikes) {
		pacing_block(pp, c, reason, now);
		return 1;
	}
	return 0;
}

int
pacing_slow_down(struct pacing_pair *pp, const struct pacing_conf *c,
    const char *reason, int64_t now)
{
	long at = pacing_tally_rate(pp, c, now), cur = pacing_rate(pp, c, now);

	pacing_strike(pp, now);
	if (cur == 0 || (at > 0 && at < cur))
		cur = at;		/* what it said "slow down" at */
	if (cur < 1)
		cur = 1;
	if (pp->learned_rate <= 0 || cur < pp->learned_rate)
		pp->learned_rate = cur;
	pp->base_rate = cur / 2 > 0 ? cur / 2 : 1;
	if (pp->start_rate <= 0)
		pp->start_rate = pp->base_rate;
	pp->paced = 1;
	pp->since = now;
	return pacing_penalise(pp, c, reason, now);
}

int
pacing_slow_down_unmeasured(struct pacing_pair *pp,
    const struct pacing_conf *c, const char *reason, int64_t now)
{
	if (pp->paced)
		return pacing_slow_down(pp, c, reason, now);
	pacing_strike(pp, now);
	return pacing_penalise(pp, c, reason, now);
}

int
pacing_echo(const struct pacing_pair *pp, int64_t taken, int64_t now)
{
	/* pacing_slow_down set since when the penalty began */
	return pp->paced && now < pp->penalty_until && taken < pp->since;
}

void
pacing_block(struct pacing_pair *pp, const struct pacing_conf *c,
    const char *reason, int64_t now)
{
	pp->paused_until = now + c->pause_ms;
	if (pp->penalty_until < pp->paused_until)
		pp->penalty_until = now + pp->penalty_ms;
	if (!pp->paced) {
		pp->paced = 1;
		pp->start_rate = pp->base_rate = 1;
		pp->since = now;
	}
	snprintf(pp->reason, sizeof(pp->reason), "%s", reason);
}

int
pacing_is_slow_down(int code, enum smtp_verdict v)
{
	return code / 100 == 4 && v == SMTP_VERDICT_RATE_LIMITED;
}

int
pacing_is_block(int code, enum smtp_verdict v)
{
	return code / 100 == 5 && smtp_classify_is_block(v);
}

/* ---------------------------------------------------------------- MariaDB */

static long long
pacing_ms_left(int64_t until, int64_t now)
{
	return until > now ? (long long)(until - now) : 0;
}

enum db_err
pacing_db_store(struct db *db, const struct pacing_pair *pp, int only_new,
    int64_t now)
{
	long long pen = pacing_ms_left(pp->penalty_until, now);
	long long pause = pacing_ms_left(pp->paused_until, now);
	long long ago = now > pp->since ? (long long)(now - pp->since) : 0;

	return db_exec(db, only_new ? "INSERT IGNORE INTO pacing_pairs (pair, "
	    "egress, start_rate, base_rate, learned_rate, since, penalty_until, "
	    "paused_until, strikes, reason, updated_at) VALUES (?, ?, ?, ?, "
	    "?, UTC_TIMESTAMP(3) - INTERVAL ? * 1000 MICROSECOND, "
	    "IF(? > 0, UTC_TIMESTAMP(3) + INTERVAL ? * 1000 MICROSECOND, NULL), "
	    "IF(? > 0, UTC_TIMESTAMP(3) + INTERVAL ? * 1000 MICROSECOND, NULL), "
	    "?, ?, UTC_TIMESTAMP(3))" : "INSERT INTO pacing_pairs (pair, egress, "
	    "start_rate, base_rate, learned_rate, since, penalty_until, "
	    "paused_until, strikes, reason, updated_at) VALUES (?, ?, ?, ?, "
	    "?, UTC_TIMESTAMP(3) - INTERVAL ? * 1000 MICROSECOND, "
	    "IF(? > 0, UTC_TIMESTAMP(3) + INTERVAL ? * 1000 MICROSECOND, NULL), "
	    "IF(? > 0, UTC_TIMESTAMP(3) + INTERVAL ? * 1000 MICROSECOND, NULL), "
	    "?, ?, UTC_TIMESTAMP(3)) ON DUPLICATE KEY UPDATE "
	    "start_rate = VALUES(start_rate), base_rate = VALUES(base_rate), "
	    "learned_rate = VALUES(learned_rate), since = VALUES(since), "
	    "penalty_until = VALUES(penalty_until), "
	    "paused_until = VALUES(paused_until), strikes = VALUES(strikes), "
	    "reason = VALUES(reason), updated_at = VALUES(updated_at)",
	    DB_ARGS(DBP_STR(pp->key), DBP_STR(pp->egress),
	    DBP_INT(pp->start_rate), DBP_INT(pp->base_rate),
	    pp->learned_rate > 0 ? DBP_INT(pp->learned_rate) : DBP_NULL,
	    DBP_INT(ago), DBP_INT(pen), DBP_INT(pen), DBP_INT(pause),
	    DBP_INT(pause), DBP_INT(pp->strikes),
	    DBP_STR(pp->reason[0] ? pp->reason : NULL)), NULL);
}

void
pacing_conf_read(struct pacing_conf *pc, const struct conf *c)
{
	pc->window_ms = conf_int(c, CONF_PACING_WINDOW_MS);
	pc->penalty_ms = conf_int(c, CONF_PACING_PENALTY_MS);
	pc->pause_ms = conf_int(c, CONF_PACING_PAUSE_MS);
	pc->patience_ms = conf_int(c, CONF_PACING_PATIENCE_MS);
	pc->max_rate = conf_int(c, CONF_PACING_MAX_RATE);
	pc->learned_percent = conf_int(c, CONF_PACING_LEARNED_PERCENT);
	pc->block_strikes = (int)conf_int(c, CONF_PACING_BLOCK_STRIKES);
	pc->pair_sessions = (int)conf_int(c, CONF_PACING_PAIR_SESSIONS);
}

long long
pacing_db_purge(struct db *db)
{
	unsigned long long n = 0;

	if (db_exec(db, "DELETE FROM pacing_pairs WHERE updated_at < "
	    "UTC_TIMESTAMP(3) - INTERVAL ? DAY AND (penalty_until IS NULL OR "
	    "penalty_until < UTC_TIMESTAMP(3)) AND (paused_until IS NULL OR "
	    "paused_until < UTC_TIMESTAMP(3))",
	    DB_ARGS(DBP_INT(PACING_KEEP_DAYS)), &n) != DB_OK)
		return -1;
	return (long long)n;
}

enum db_err
pacing_db_read(struct db *db, const char *key, int64_t now,
    void (*fn)(void *, const struct pacing_pair *), void *arg)
{
	struct pacing_pair pp;
	struct db_res *r = NULL;
	const char *s;
	enum db_err e;

	e = db_query(db, "SELECT pair, egress, start_rate, base_rate, "
	    "learned_rate, TIMESTAMPDIFF(MICROSECOND, since, "
	    "UTC_TIMESTAMP(3)) DIV 1000, "
	    "GREATEST(0, COALESCE(TIMESTAMPDIFF(MICROSECOND, "
	    "UTC_TIMESTAMP(3), penalty_until), 0)) DIV 1000, "
	    "GREATEST(0, COALESCE(TIMESTAMPDIFF(MICROSECOND, "
	    "UTC_TIMESTAMP(3), paused_until), 0)) DIV 1000, "
	    "strikes, reason FROM pacing_pairs WHERE ? IS NULL OR pair = ?",
	    DB_ARGS(key != NULL ? DBP_STR(key) : DBP_NULL,
	    key != NULL ? DBP_STR(key) : DBP_NULL), &r);
	if (e != DB_OK)
		return e;
	while (db_res_next(r) == 1) {
		memset(&pp, 0, sizeof(pp));
		strparse_copy(pp.key, sizeof(pp.key), db_res_str(r, 0) ?
		    db_res_str(r, 0) : "");
		strparse_copy(pp.egress, sizeof(pp.egress), db_res_str(r, 1) ?
		    db_res_str(r, 1) : "");
		pp.paced = pp.stored = 1;
		pp.start_rate = (long)db_res_int(r, 2);
		pp.base_rate = (long)db_res_int(r, 3);
		pp.learned_rate = (long)db_res_int(r, 4);
		pp.since = now - db_res_int(r, 5);
		pp.penalty_until = db_res_int(r, 6) > 0 ? now +
		    db_res_int(r, 6) : 0;
		pp.paused_until = db_res_int(r, 7) > 0 ? now +
		    db_res_int(r, 7) : 0;
		pp.strikes = (int)db_res_int(r, 8);
		s = db_res_str(r, 9);
		strparse_copy(pp.reason, sizeof(pp.reason), s ? s : "");
		fn(arg, &pp);
	}
	db_res_free(r);
	return DB_OK;
}

/* FNV-1a: the same on every host (khash is keyed per process). */
static uint64_t
pacing_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

long
pacing_take_window_ms(long window_ms)
{
	return window_ms + PACING_TAKE_SLACK_MS;
}

/* The bucket of rate_counts: the pair's hash (keys may be long). */
static void
pacing_bucket(const struct pacing_pair *pp, char *bucket, size_t size)
{
	char key[PACING_KEY_MAX + PACING_EGRESS_MAX + 2];

	snprintf(key, sizeof(key), "%s|%s", pp->key, pp->egress);
	snprintf(bucket, size, "pace:%016llx",
	    (unsigned long long)pacing_hash(key));
}

enum db_err
pacing_db_last_take(struct db *db, const struct pacing_pair *pp,
    long long *ago)
{
	char bucket[80];
	struct db_res *r = NULL;
	enum db_err e;

	*ago = -1;
	pacing_bucket(pp, bucket, sizeof(bucket));
	e = db_query(db, "SELECT FLOOR(UNIX_TIMESTAMP(SYSDATE(3)) * 1000) - "
	    "MAX(sec) * 1000 FROM rate_counts WHERE bucket = ? AND n > 0",
	    DB_ARGS(DBP_STR(bucket)), &r);
	if (e != DB_OK)
		return e;
	if (db_res_next(r) == 1 && !db_res_isnull(r, 0))
		*ago = db_res_int(r, 0) > 0 ? db_res_int(r, 0) : 0;
	db_res_free(r);
	return DB_OK;
}

enum db_err
pacing_db_take(struct db *db, const struct pacing_pair *pp, long limit,
    long want, long window_ms, long *granted)
{
	char bucket[80];
	struct db_res *r = NULL;
	enum db_err e;

	*granted = 0;
	pacing_bucket(pp, bucket, sizeof(bucket));
	/* holder "" and no seq: the permits are used at once, so no lease
	 * is remembered and none is given back */
	e = db_query(db, "CALL ratelimit_lease(?, '', 0, 0, 0, 0, ?, ?, ?, ?)",
	    DB_ARGS(DBP_STR(bucket), DBP_INT(limit), DBP_INT(want * 1000),
	    DBP_INT(want), DBP_INT(pacing_take_window_ms(window_ms))), &r);
	if (e != DB_OK)
		return e;
	if (db_res_next(r) == 1)
		*granted = (long)db_res_int(r, 0);
	db_res_free(r);
	return DB_OK;
}
