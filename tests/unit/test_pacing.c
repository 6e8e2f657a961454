/* test_pacing.c: the pacing defaults file's parser and lookup (shipped
 * file included), and the AIMD state of a pair (engine/pacing.h): a pair
 * not paced has no limit, a default grows quickly until the first "slow
 * down", which halves the rate, keeps the rate it came at and lets it
 * creep back only to three quarters of it; strikes in a row make a block;
 * addresses wait out a block's pause that ends within their patience,
 * counted from the first of blocks in a row, and no longer;
 * a "slow down" heard outside the worker (no tally) penalises an unpaced
 * pair without inventing a rate; the window a budget is counted over
 * holds every RCPT the host still counts (whole seconds, late arrival);
 * the answers of transactions taken before a "slow down" are its echo;
 * the tally it learns from holds the last window's burst and not the
 * one before, which the host has let go;
 * which replies say "slow down" and which block us. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pacing.h"
#include "engine/pacing_defaults.h"
#include "engine/smtp_classify.h"
#include "engine/smtp_rules.h"
#include <unistd.h>

static void
parse(struct pacing_defaults *d, const char *text, struct buf *msg)
{
	assert_int_equal(pacing_defaults_parse(d, "t", text, strlen(text),
	    msg), 0);
}

static void
test_defaults_parse(void **state)
{
	struct pacing_defaults d;
	struct buf msg;
	const struct pacing_default *e;

	(void)state;
	memset(&d, 0, sizeof(d));
	buf_init(&msg, 4096);
	parse(&d, "# comment\n\ngoogle 60 300\n*.Google.com 60 300 # gmail\n"
	    "mx.example.com 10 5\n"
	    "bad..name 1 1\n*.x 0 5\n*.y 5 999999\nonly-two 5\n"
	    "a b c d\n!nope!\nwith space 1\n", &msg);
	assert_int_equal(d.n, 3);
	/* six skipped lines, each with its line number */
	assert_non_null(strstr(buf_str(&msg), "t:6: bad pattern"));
	assert_non_null(strstr(buf_str(&msg), "t:7: rate or penalty"));
	assert_non_null(strstr(buf_str(&msg), "t:8: rate or penalty"));
	assert_non_null(strstr(buf_str(&msg), "t:9: want PATTERN"));
	assert_non_null(strstr(buf_str(&msg), "t:10: want PATTERN"));
	assert_non_null(strstr(buf_str(&msg), "t:11: a removal"));
	/* provider first, then the host's own name, then the longest suffix */
	e = pacing_defaults_match(&d, "google", "mx.other.net");
	assert_non_null(e);
	assert_string_equal(e->pattern, "google");
	e = pacing_defaults_match(&d, NULL, "ALT1.gmail-smtp-in.l.google.com");
	assert_non_null(e);
	assert_string_equal(e->pattern, "*.google.com");
	assert_int_equal(e->start_rate, 60);
	assert_int_equal(e->penalty_s, 300);
	assert_null(pacing_defaults_match(&d, NULL, "google.com"));
	assert_null(pacing_defaults_match(&d, NULL, "notgoogle.com"));
	e = pacing_defaults_match(&d, "", "mx.example.com");
	assert_non_null(e);
	assert_int_equal(e->start_rate, 10);
	assert_null(pacing_defaults_match(&d, "unknown-provider", "mx.f.test"));
	/* a later line replaces, "!" removes, a longer suffix wins */
	parse(&d, "google 120 60\n!mx.example.com\n*.l.google.com 7 7\n", NULL);
	assert_int_equal(d.n, 3);
	assert_int_equal(pacing_defaults_match(&d, "google", NULL)->start_rate,
	    120);
	assert_null(pacing_defaults_match(&d, NULL, "mx.example.com"));
	assert_int_equal(pacing_defaults_match(&d, NULL,
	    "aspmx.l.google.com")->start_rate, 7);
	pacing_defaults_free(&d);
	buf_free(&msg);
}

static void
test_defaults_shipped(void **state)
{
	struct pacing_defaults d;
	struct buf msg;
	const struct pacing_default *e;

	(void)state;
	memset(&d, 0, sizeof(d));
	buf_init(&msg, 4096);
	assert_int_equal(pacing_defaults_load(&d, PACING_LISTS_DIR, &msg), 0);
	/* every line of the shipped file is an entry */
	assert_string_equal(buf_str(&msg), "");
	assert_true(d.n >= 15);
	e = pacing_defaults_match(&d, NULL,
	    "example-com.mail.protection.outlook.com");
	assert_non_null(e);
	assert_string_equal(e->pattern, "*.mail.protection.outlook.com");
	e = pacing_defaults_match(&d, NULL, "mx1.hotmail.com");
	assert_non_null(e);
	e = pacing_defaults_match(&d, NULL, "mta5.am0.yahoodns.net");
	assert_non_null(e);
	assert_non_null(pacing_defaults_match(&d, "outlook", NULL));
	assert_null(pacing_defaults_match(&d, NULL, "mx.svc.test"));
	pacing_defaults_free(&d);
	buf_free(&msg);
}

/* (three quarters of a learned rate, not the shipped 90 %: the numbers
 * below were worked out so; test_learned_percent has the default) */
static const struct pacing_conf conf = {
	.window_ms = 60000, .penalty_ms = 1000, .pause_ms = 3600000,
	.patience_ms = 900000, .max_rate = 0, .block_strikes = 3,
	.learned_percent = 75,
};
#define GROW	62000	/* a doubling: the window and its slack */

static void
test_not_paced(void **state)
{
	struct pacing_pair p;

	(void)state;
	pacing_pair_init(&p, &conf, "mx.friendly.test", "direct", NULL, 0);
	assert_int_equal(pacing_rate(&p, &conf, 1000000), 0);
	assert_int_equal(pacing_window_limit(&p, &conf, 1000000), 0);
	assert_true(pacing_may_send(&p, 1000000));
}

static void
test_grows_then_halves(void **state)
{
	struct pacing_default d = { "google", 60, 300 };
	struct pacing_pair p;
	int64_t t;

	(void)state;
	pacing_pair_init(&p, &conf, "google", "direct", &d, 0);
	assert_int_equal(p.penalty_ms, 300000);
	assert_int_equal(pacing_rate(&p, &conf, 0), 60);
	/* a start, not a ceiling: it doubles every window and its slack
	 * (not at the window's end: a burst then is a window to the ms after
	 * the last, at the edge of the host's window) */
	assert_int_equal(pacing_rate(&p, &conf, 60000), 60);
	assert_int_equal(pacing_rate(&p, &conf, GROW - 1), 60);
	assert_int_equal(pacing_rate(&p, &conf, GROW), 120);
	assert_int_equal(pacing_rate(&p, &conf, 3 * GROW + 5), 480);
	/* the host answered 600 RCPTs in the last minute, then 421 */
	t = 10 * 60000;
	pacing_tally_add(&p, 400, t - 30000);
	pacing_tally_add(&p, 200, t - 1000);
	assert_int_equal(pacing_tally_rate(&p, &conf, t), 600);
	assert_int_equal(pacing_slow_down(&p, &conf, "421 4.7.28 rate", t), 0);
	assert_int_equal(p.learned_rate, 600);
	assert_false(pacing_may_send(&p, t + 299999));
	assert_true(pacing_may_send(&p, t + 300000));
	assert_int_equal(pacing_rate(&p, &conf, t), 300);
	/* creeps back, never above three quarters of 600 */
	assert_int_equal(pacing_rate(&p, &conf, t + 60000), 376);
	assert_int_equal(pacing_rate(&p, &conf, t + 10 * 60000), 450);
	/* an operator's ceiling caps it */
	{
		struct pacing_conf c = conf;

		c.max_rate = 100;
		assert_int_equal(pacing_rate(&p, &c, t + 10 * 60000), 100);
	}
}

static void
test_idle_pair_grows_again_from_base(void **state)
{
	struct pacing_default d = { "google", 60, 300 };
	struct pacing_pair p;
	int64_t t;

	(void)state;
	pacing_pair_init(&p, &conf, "google", "direct", &d, 0);
	/* asked all along: doubles every window */
	for (t = 0; t <= 3 * GROW; t += 20000)
		pacing_note_asked(&p, &conf, t, -1);
	assert_int_equal(pacing_rate(&p, &conf, 3 * GROW), 480);
	/* an hour without asking: the first ask starts at the base again,
	 * not at 60 x 2^20 */
	t = 63 * 60000;
	assert_int_equal(pacing_rate(&p, &conf, t), 60L << 20);
	pacing_note_asked(&p, &conf, t, -1);
	assert_int_equal(pacing_rate(&p, &conf, t), 60);
	assert_int_equal(pacing_window_limit(&p, &conf, t), 60);
	/* and grows again while asked */
	pacing_note_asked(&p, &conf, t + 30000, -1);
	pacing_note_asked(&p, &conf, t + GROW, -1);
	assert_int_equal(pacing_rate(&p, &conf, t + GROW), 120);
	/* a gap of a window exactly is no idle time */
	pacing_note_asked(&p, &conf, t + GROW + 60000, -1);
	assert_int_equal(pacing_rate(&p, &conf, t + 2 * GROW), 240);
	/* a learned rate is not restarted: it creeps under three quarters */
	pacing_tally_add(&p, 200, t + 2 * GROW + 500);
	pacing_slow_down(&p, &conf, "421 4.7.28", t + 2 * GROW + 1000);
	pacing_note_asked(&p, &conf, t + 10 * 60000, -1);
	assert_int_equal(pacing_rate(&p, &conf, t + 10 * 60000), 150);
	/* another pair, idle in this process (never asked) but in use by
	 * another worker 5 s ago: its growth since the row's start goes on */
	pacing_pair_init(&p, &conf, "google", "bind:192.0.2.1", &d, 0);
	pacing_note_asked(&p, &conf, 5 * GROW, 5000);
	assert_int_equal(pacing_rate(&p, &conf, 5 * GROW), 60 << 5);
	/* idle everywhere (the shared budget's last take 2 windows ago) */
	pacing_note_asked(&p, &conf, 8 * 60000, 120000);
	assert_int_equal(pacing_rate(&p, &conf, 8 * 60000), 60);
}

static void
test_learned_from_profile(void **state)
{
	struct pacing_pair p;

	(void)state;
	/* a host no default names, whose profile kept 200 a minute */
	pacing_pair_init(&p, &conf, "mx.rl.test", "bind:192.0.2.2", NULL, 0);
	assert_int_equal(pacing_rate(&p, &conf, 0), 0);
	pacing_learn_from_profile(&p, &conf, 200, 1000);
	assert_true(p.paced);
	assert_int_equal(p.learned_rate, 200);
	/* just under it at once, and never above */
	assert_int_equal(pacing_rate(&p, &conf, 1000), 150);
	assert_int_equal(pacing_rate(&p, &conf, 1000 + 30 * 60000), 150);
	/* a 421 at a lower rate lowers it */
	pacing_tally_add(&p, 100, 61000);
	pacing_slow_down(&p, &conf, "421 4.7.28", 61500);
	assert_int_equal(p.learned_rate, 100);
	assert_int_equal(pacing_rate(&p, &conf, 61500 + 30 * 60000), 75);
}

static void
test_learned_percent(void **state)
{
	struct pacing_conf c = conf;
	struct pacing_default d = { .start_rate = 60, .penalty_s = 300 };
	struct pacing_pair p;

	(void)state;
	strcpy(d.pattern, "google");
	c.learned_percent = 90;		/* the shipped default */
	pacing_pair_init(&p, &c, "google", "bind:192.0.2.1", &d, 0);
	pacing_tally_add(&p, 240, 200000);
	pacing_slow_down(&p, &c, "421 4.7.28", 200100);
	assert_int_equal(p.learned_rate, 240);
	/* halved, then back to 90 % of it (a list of 1.5 x the limit takes
	 * two windows: three at three quarters, with nothing to spare) */
	assert_int_equal(pacing_rate(&p, &c, 200100), 120);
	assert_int_equal(pacing_rate(&p, &c, 200100 + 10 * 60000), 216);
	/* a host's profile: the same top at once */
	pacing_pair_init(&p, &c, "google", "bind:192.0.2.2", &d, 0);
	pacing_learn_from_profile(&p, &c, 240, 1000);
	assert_int_equal(pacing_rate(&p, &c, 1000), 216);
	c.learned_percent = 100;
	assert_int_equal(pacing_rate(&p, &c, 1000), 216);	/* base kept */
	assert_int_equal(pacing_rate(&p, &c, 1000 + 60000), 240);
}

static void
test_friendly_learns_on_first_421(void **state)
{
	struct pacing_pair p;

	(void)state;
	pacing_pair_init(&p, &conf, "mx.rl.test", "direct", NULL, 0);
	pacing_tally_add(&p, 21, 59500);
	pacing_slow_down(&p, &conf, "421 4.7.28", 60000);
	assert_true(p.paced);
	assert_int_equal(p.learned_rate, 21);
	assert_int_equal(pacing_rate(&p, &conf, 60000), 10);
	/* in any window, at most what the rate allows */
	assert_int_equal(pacing_window_limit(&p, &conf, 60000), 10);
}

static void
test_strikes_block(void **state)
{
	struct pacing_conf conf1 = conf;
	struct pacing_pair p;
	int64_t t = 100000;

	(void)state;
	/* a window shorter than the penalty: the penalty is the pair's */
	conf1.window_ms = 500;
#define conf conf1
	pacing_pair_init(&p, &conf, "mx.b.test", "direct", NULL, 0);
	assert_int_equal(pacing_slow_down(&p, &conf, "421 4.7.0", t), 0);
	/* again within a penalty of the last one's end: strikes */
	assert_int_equal(pacing_slow_down(&p, &conf, "421 4.7.0", t + 1500), 0);
	assert_int_equal(p.strikes, 2);
	assert_int_equal(pacing_slow_down(&p, &conf, "421 4.7.0", t + 3000), 1);
	assert_false(pacing_may_send(&p, t + 3000 + 3599999));
	assert_true(pacing_past_patience(&p, &conf, 0, t + 3000));
	assert_string_equal(p.reason, "421 4.7.0");
	/* long after: a new first strike */
	pacing_pair_init(&p, &conf, "mx.c.test", "direct", NULL, 0);
	pacing_slow_down(&p, &conf, "421", t);
	pacing_slow_down(&p, &conf, "421", t + 10000);
	assert_int_equal(p.strikes, 1);
#undef conf
}

/* A block's pause against the patience of the addresses waiting for it:
 * a pause that ends within the patience is waited out, one that ends past
 * it is not; counted from when the addresses began waiting, so that
 * blocks in a row, each paused for less than the patience, still end
 * them once they have waited past it. */
static void
test_patience(void **state)
{
	struct pacing_conf c = conf;
	struct pacing_pair p;
	int64_t t = 100000;

	(void)state;
	c.pause_ms = 5000;
	c.patience_ms = 60000;
	pacing_pair_init(&p, &c, "mx.p.test", "direct", NULL, 0);
	/* not paused: nothing to wait for */
	assert_false(pacing_past_patience(&p, &c, 0, t));
	pacing_block(&p, &c, "554 5.7.1 blocked", t);
	assert_false(pacing_may_send(&p, t + 4999));
	assert_true(pacing_may_send(&p, t + 5000));
	/* a pause of 5 s, a patience of a minute: wait */
	assert_false(pacing_past_patience(&p, &c, 0, t));
	assert_false(pacing_past_patience(&p, &c, t, t));
	assert_false(pacing_past_patience(&p, &c, t, t + 4999));
	/* a patience of exactly the pause: still within it */
	c.patience_ms = 5000;
	assert_false(pacing_past_patience(&p, &c, t, t));
	c.patience_ms = 4999;
	assert_true(pacing_past_patience(&p, &c, t, t));
	assert_true(pacing_past_patience(&p, &c, 0, t));
	/* the pause over: nothing to wait for */
	assert_false(pacing_past_patience(&p, &c, t, t + 5000));
	/* blocks in a row, 5 s each, for addresses waiting since t: waited
	 * out while the pause ends within the minute, not after */
	c.patience_ms = 60000;
	pacing_block(&p, &c, "554 5.7.1 blocked", t + 50000);
	assert_false(pacing_past_patience(&p, &c, t, t + 50000));
	assert_false(pacing_past_patience(&p, &c, 0, t + 50000));
	pacing_block(&p, &c, "554 5.7.1 blocked", t + 55001);
	assert_true(pacing_past_patience(&p, &c, t, t + 55001));
	/* the same pause, for addresses that began waiting now: within */
	assert_false(pacing_past_patience(&p, &c, t + 55001, t + 55001));
	assert_false(pacing_past_patience(&p, &c, 0, t + 55001));
	/* the default settings: an hour's pause, 15 minutes' patience */
	pacing_pair_init(&p, &conf, "mx.q.test", "direct", NULL, 0);
	pacing_block(&p, &conf, "554 5.7.1 blocked", t);
	assert_true(pacing_past_patience(&p, &conf, 0, t));
	assert_true(pacing_past_patience(&p, &conf, t, t + 1));
}

static void
test_penalty_covers_window(void **state)
{
	struct pacing_pair p;

	(void)state;
	/* what went before the first "slow down" was not in the budget: no
	 * sending until a whole window has passed */
	pacing_pair_init(&p, &conf, "mx.w.test", "direct", NULL, 0);
	pacing_slow_down(&p, &conf, "421 4.7.28", 1000);
	assert_false(pacing_may_send(&p, 1000 + 59999));
	assert_true(pacing_may_send(&p, 1000 + 60000));
}

static void
test_tally_holds_last_window_burst(void **state)
{
	struct pacing_default d = { .start_rate = 60, .penalty_s = 300 };
	struct pacing_pair p;

	(void)state;
	strcpy(d.pattern, "microsoft365");
	pacing_pair_init(&p, &conf, "microsoft365", "bind:192.0.2.2", &d, 0);
	/* the second window's burst answered at 60.3 s, the third one's
	 * first RCPT at 120.1 s, then 421: the host said "slow down" at the
	 * 61 it had in its window, not at 1 */
	pacing_tally_add(&p, 60, 60300);
	pacing_tally_add(&p, 1, 120100);
	pacing_slow_down(&p, &conf, "421 4.7.28", 120237);
	assert_int_equal(p.learned_rate, 61);
}

static void
test_tally_leaves_out_window_before(void **state)
{
	struct pacing_default d = { .start_rate = 30, .penalty_s = 300 };
	struct pacing_pair p;

	(void)state;
	strcpy(d.pattern, "zoho");
	pacing_pair_init(&p, &conf, "zoho", "bind:192.0.2.3", &d, 0);
	/* the first burst taken at 0 is answered at 1.4 s (DNS, connect,
	 * STARTTLS: the first session's flights), the next one taken a
	 * budget's window (60 + 2 s) later is answered at once: the host,
	 * counting 60 s, has let the first go, and takes 30 of the next
	 * before its 421: its limit is 30, not 61 */
	pacing_tally_add(&p, 30, 1400);
	pacing_tally_add(&p, 31, 62300);
	pacing_slow_down(&p, &conf, "421 4.7.28", 62350);
	assert_int_equal(p.learned_rate, 31);
	/* a burst answered a window before the 421, to a few ms (the rate
	 * doubled at the window's end and let the next go at once): the
	 * host received both within its window and took 120 in all */
	pacing_pair_init(&p, &conf, "zoho", "bind:192.0.2.3", &d, 0);
	pacing_tally_add(&p, 45, 73417);
	pacing_tally_add(&p, 15, 73520);
	pacing_tally_add(&p, 60, 133400);
	pacing_slow_down(&p, &conf, "421 4.7.28", 133413);
	assert_int_equal(p.learned_rate, 120);
	/* a burst 59.9 s before the 421 is still the host's */
	pacing_pair_init(&p, &conf, "zoho", "bind:192.0.2.3", &d, 0);
	pacing_tally_add(&p, 120, 126400);
	pacing_tally_add(&p, 1, 186280);
	pacing_slow_down(&p, &conf, "421 4.7.28", 186300);
	assert_int_equal(p.learned_rate, 121);
}

static void
test_echo_is_no_new_strike(void **state)
{
	struct pacing_default d = { .start_rate = 60, .penalty_s = 300 };
	struct pacing_pair p;
	int64_t t = 200000;

	(void)state;
	strcpy(d.pattern, "google");
	pacing_pair_init(&p, &conf, "google", "bind:192.0.2.1", &d, 0);
	/* nothing is an echo before the first "slow down" */
	assert_false(pacing_echo(&p, t - 10, t));
	pacing_slow_down(&p, &conf, "421 4.7.28", t);
	assert_int_equal(p.strikes, 1);
	/* the answers of transactions taken before it, heard during its
	 * penalty, are its echo; one taken after it is not */
	assert_true(pacing_echo(&p, t - 1, t + 3));
	assert_true(pacing_echo(&p, t - 5000, t + 299999));
	assert_false(pacing_echo(&p, t, t + 3));
	assert_false(pacing_echo(&p, t + 1, t + 400000));
	/* once the penalty is over, a "slow down" is a new one */
	assert_false(pacing_echo(&p, t - 1, t + 300000));
	/* an unpaced pair (a session outside the worker penalised it, no
	 * rate of its own) has no echo */
	pacing_pair_init(&p, &conf, "mx.e.test", "direct", NULL, 0);
	pacing_slow_down_unmeasured(&p, &conf, "421", t);
	assert_false(pacing_echo(&p, t - 1, t + 3));
}

/* ratelimit_lease's rule (sql/010): a second sec is summed when
 * sec > (now_ms - window) DIV 1000. */
static int
counted(int64_t sent_ms, int64_t now_ms, long window)
{
	return sent_ms / 1000 > (now_ms - window) / 1000;
}

static void
test_take_window_covers_host(void **state)
{
	int64_t now, t, lag;
	long w = 60000;
	int missed_plain = 0;

	(void)state;
	/* an RCPT taken at t reaches the host up to lag ms later; the host
	 * counts it while it arrived less than w ago. Every one the host
	 * still counts is in the budget's sum, at any ms of the second, for
	 * lags up to a second; the plain window (no slack) misses some. */
	for (now = 120000; now < 122000; now += 7)
		for (t = now - w - 1000; t <= now; t += 13)
			for (lag = 0; lag <= 1000; lag += 100) {
				if (t + lag > now || t + lag <= now - w)
					continue;	/* not in the host's window */
				assert_true(counted(t, now,
				    pacing_take_window_ms(w)));
				missed_plain += !counted(t, now, w);
			}
	assert_true(missed_plain > 0);
}

static void
test_unmeasured(void **state)
{
	struct pacing_pair p;
	long before;

	(void)state;
	/* not paced, no tally: the penalty and a strike, no rate */
	pacing_pair_init(&p, &conf, "mx.sv.test", "direct", NULL, 0);
	assert_int_equal(pacing_slow_down_unmeasured(&p, &conf, "421 4.7.28",
	    1000), 0);
	assert_false(p.paced);
	assert_int_equal(p.learned_rate, 0);
	assert_int_equal(p.strikes, 1);
	assert_false(pacing_may_send(&p, 1000 + 59999));
	assert_true(pacing_may_send(&p, 1000 + 60000));
	assert_string_equal(p.reason, "421 4.7.28");
	/* a paced pair: halved as by the worker */
	pacing_pair_init(&p, &conf, "mx.sv2.test", "direct", NULL, 0);
	pacing_tally_add(&p, 21, 59500);
	pacing_slow_down(&p, &conf, "421 4.7.28", 60000);
	before = pacing_rate(&p, &conf, 200000);
	assert_true(before > 10);	/* crept up since */
	pacing_slow_down_unmeasured(&p, &conf, "421 4.7.28", 200000);
	assert_int_equal(pacing_rate(&p, &conf, 200000), before / 2);
	assert_int_equal(p.strikes, 1);
}

/* Whether the reading rules in dir, the provider's first, call a reply
 * "slow down". */
static int
slow_down(const char *dir, const char *provider, int code,
    const char *enhanced, const char *text)
{
	struct smtp_rules *rules = NULL;
	struct buf msg;
	int slow;

	buf_init(&msg, 1024);
	assert_int_equal(smtp_rules_load(dir, &rules, &msg), SMTP_RULES_OK);
	slow = pacing_is_slow_down(code, smtp_classify_rcpt(rules, provider,
	    code, enhanced, text));
	smtp_rules_free(rules);
	buf_free(&msg);
	return slow;
}

static void
test_replies(void **state)
{
	const char *d = PACING_LISTS_DIR;

	(void)state;
	/* the shipped reading rules: providers' "slow down" replies */
	assert_true(slow_down(d, "google", 421, "4.7.28", "rate limited"));
	assert_true(slow_down(d, NULL, 421, "4.7.28", "rate limited"));
	assert_true(slow_down(d, "outlook", 451, "4.7.650", "The mail server "
	    "[x] has been temporarily rate limited due to IP reputation."));
	assert_true(slow_down(d, "yahoo", 421, "4.7.0", "[TSS04] Messages "
	    "from x temporarily deferred due to unexpected volume or user "
	    "complaints - 4.16.55.1"));
	assert_true(slow_down(d, "yahoo", 421, "", "Server busy. (S77714) "
	    "[TSS04]"));
	/* Yahoo's words, read by Yahoo's rules: elsewhere a temporary block
	 * (the back-off's) */
	assert_false(slow_down(d, NULL, 421, "4.7.0", "[TSS04] Messages "
	    "from x temporarily deferred due to unexpected volume or user "
	    "complaints - 4.16.55.1"));
	/* greylisting, a shutdown, a mailbox's own rate: not ours */
	assert_false(slow_down(d, NULL, 450, "4.7.1", "Greylisted, try "
	    "again later"));
	assert_false(slow_down(d, NULL, 421, "4.3.2", "shutting down"));
	/* Postfix's smtpd_hard_error_limit after many unknown users */
	assert_false(slow_down(d, NULL, 421, "4.7.0", "mta.example Error: "
	    "too many errors"));
	assert_false(slow_down(d, "google", 450, "4.2.1", "The user you are "
	    "trying to contact is receiving mail at a rate that prevents "
	    "additional messages from being delivered."));
	assert_false(slow_down(d, NULL, 550, "5.7.1", "blocked"));
	assert_true(pacing_is_block(554, SMTP_VERDICT_BLOCKED));
	assert_false(pacing_is_block(550, SMTP_VERDICT_MAILBOX_NOT_FOUND));
}

/* An operator's rule for one provider paces that provider's hosts only
 * (the reading of a reply, hence pacing, goes by the host's provider). */
static void
test_provider_rule_paces(void **state)
{
	char dir[] = "/tmp/test_pacing.XXXXXX";
	char path[sizeof(dir) + 32];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/smtp_reply_rules.txt", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("reply acme 4xx 4.7.99 rate_limited\n"
	    "reply * 4xx 4.7.* blocked\n", f);
	fclose(f);
	assert_true(slow_down(dir, "acme", 421, "4.7.99", "slow down"));
	assert_false(slow_down(dir, "other", 421, "4.7.99", "slow down"));
	assert_false(slow_down(dir, NULL, 421, "4.7.99", "slow down"));
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_parse),
		cmocka_unit_test(test_defaults_shipped),
		cmocka_unit_test(test_not_paced),
		cmocka_unit_test(test_grows_then_halves),
		cmocka_unit_test(test_idle_pair_grows_again_from_base),
		cmocka_unit_test(test_learned_from_profile),
		cmocka_unit_test(test_friendly_learns_on_first_421),
		cmocka_unit_test(test_strikes_block),
		cmocka_unit_test(test_patience),
		cmocka_unit_test(test_penalty_covers_window),
		cmocka_unit_test(test_take_window_covers_host),
		cmocka_unit_test(test_echo_is_no_new_strike),
		cmocka_unit_test(test_tally_holds_last_window_burst),
		cmocka_unit_test(test_tally_leaves_out_window_before),
		cmocka_unit_test(test_learned_percent),
		cmocka_unit_test(test_unmeasured),
		cmocka_unit_test(test_replies),
		cmocka_unit_test(test_provider_rule_paces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
