/* test_authcache.c: src/core/authcache.c, the responder's cache of key rows
 * and account windows: what is trusted and for how long (ttl, expiry,
 * clocks), when a cached window must be read again (another process counted
 * a request of the account, the window's oldest second left it, no shared
 * generations), when cached credits must be read again (a request that
 * may have charged the account's or its organization's pool, ttl, a
 * member who changed organization), slots of a set shared and taken over
 * by other keys,
 * generations shared with forked processes (at the same index in each, even
 * when forked before anything hashed), and the wait after a change. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/authcache.h"
#include "util/timeutil.h"

#define TTL 1000
#define NOW 1800000000000LL	/* Unix ms */

static void
make_hash(uint8_t h[32], uint8_t a, uint8_t b, uint8_t tail)
{
	memset(h, tail, 32);
	h[0] = a;
	h[1] = b;
}

static void
make_key(struct auth_key *k, const char *key_id, const char *account)
{
	memset(k, 0, sizeof(*k));
	strcpy(k->key_id, key_id);
	strcpy(k->account_id, account);
	k->tier = AUTH_TIER_PRO;
	k->scopes = 1u << AUTH_SCOPE_ALL;
	k->subscription_active = 1;
	k->key_rate_limit = -1;
	k->org_rate_limit = -1;
	strcpy(k->ip_allowlist, "127.0.0.0/8");
}

/* What authcache_key says for a key put at read_ms = 100 with expiry
 * `expires`, asked at mono and now. */
static const struct {
	const char	*what;
	int64_t		 mono, now, expires;
	int		 hit;
	enum auth_result rc;
} key_cases[] = {
	{ "just read", 100, NOW, 0, 1, AUTH_OK },
	{ "one ms before the ttl ends", 100 + TTL - 1, NOW, 0, 1, AUTH_OK },
	{ "the ttl has ended", 100 + TTL, NOW, 0, 0, AUTH_OK },
	{ "long after", 100 + 50 * TTL, NOW, 0, 0, AUTH_OK },
	{ "monotonic clock before the read", 99, NOW, 0, 0, AUTH_OK },
	{ "expiry ahead", 150, NOW, NOW + 1, 1, AUTH_OK },
	{ "expiry reached", 150, NOW, NOW, 1, AUTH_EXPIRED },
	{ "expiry passed", 150, NOW + 5, NOW, 1, AUTH_EXPIRED },
};

static void
test_authcache_key_trusted_for_ttl_and_until_expiry(void **state)
{
	struct authcache c;
	struct auth_key k, got;
	enum auth_result rc;
	char known[IDS_MAX];
	uint8_t h[32];
	size_t i;

	(void)state;
	make_hash(h, 1, 2, 3);
	make_key(&k, "key_a", "acc_a");
	for (i = 0; i < sizeof(key_cases) / sizeof(key_cases[0]); i++) {
		print_message("case %zu: %s\n", i, key_cases[i].what);
		authcache_init(&c, TTL, NULL);
		authcache_put(&c, h, &k, key_cases[i].expires, 100);
		memset(&got, 0, sizeof(got));
		rc = AUTH_DB_ERROR;
		assert_int_equal(authcache_key(&c, h, key_cases[i].mono,
		    key_cases[i].now, &got, &rc, known), key_cases[i].hit);
		if (key_cases[i].hit) {
			assert_int_equal(rc, key_cases[i].rc);
			assert_string_equal(got.key_id, "key_a");
			assert_string_equal(got.ip_allowlist, "127.0.0.0/8");
			assert_int_equal(got.scopes, 1u << AUTH_SCOPE_ALL);
			assert_string_equal(known, "");
		} else {
			/* a stale entry still names the account */
			assert_string_equal(known, "acc_a");
		}
		authcache_free(&c);
	}
}

static void
test_authcache_ttl_zero_caches_nothing(void **state)
{
	struct authcache c;
	struct auth_key k, got;
	struct authcache_gens *g = authcache_gens_shared();
	struct ratelimit_window w = { 3, NOW - 1000 }, out;
	enum auth_result rc;
	char known[IDS_MAX];
	uint8_t h[32];

	(void)state;
	assert_non_null(g);
	make_hash(h, 9, 9, 9);
	make_key(&k, "key_z", "acc_z");
	authcache_init(&c, 0, g);
	authcache_put(&c, h, &k, 0, 100);
	authcache_put_window(&c, h, &w, 100, 0);
	assert_int_equal(authcache_key(&c, h, 100, NOW, &got, &rc, known), 0);
	assert_string_equal(known, "");
	assert_int_equal(authcache_window(&c, h, 100, NOW, &out), 0);
	authcache_free(&c);
	munmap(g, sizeof(*g));
}

static void
test_authcache_unknown_hash_misses(void **state)
{
	struct authcache c;
	struct auth_key k, got;
	enum auth_result rc;
	char known[IDS_MAX];
	uint8_t h[32], other[32];

	(void)state;
	make_hash(h, 4, 5, 6);
	make_hash(other, 4, 5, 7);	/* same set, different key */
	make_key(&k, "key_b", "acc_b");
	authcache_init(&c, TTL, NULL);
	authcache_put(&c, h, &k, 0, 100);
	assert_int_equal(authcache_key(&c, other, 100, NOW, &got, &rc,
	    known), 0);
	assert_string_equal(known, "");
	/* the other key takes another slot of the set: both are kept */
	authcache_put(&c, other, &k, 0, 100);
	assert_int_equal(authcache_key(&c, h, 100, NOW, &got, &rc, known), 1);
	assert_int_equal(authcache_key(&c, other, 100, NOW, &got, &rc,
	    known), 1);
	authcache_free(&c);
}

/* AUTHCACHE_WAYS keys of one set are all kept (32 keys taken in turn no
 * longer evict each other); one more takes the slot read longest ago, and
 * a key put again keeps its slot. */
static void
test_authcache_set_keeps_ways(void **state)
{
	struct authcache c;
	struct auth_key k, got;
	enum auth_result rc;
	char known[IDS_MAX];
	uint8_t h[AUTHCACHE_WAYS + 1][32];
	int i;

	(void)state;
	make_key(&k, "key_s", "acc_s");
	authcache_init(&c, TTL, NULL);
	for (i = 0; i <= AUTHCACHE_WAYS; i++)
		make_hash(h[i], 8, 1, (uint8_t)(10 + i));
	/* read at 100, 101, ...: h[0] is the oldest */
	for (i = 0; i < AUTHCACHE_WAYS; i++)
		authcache_put(&c, h[i], &k, 0, 100 + i);
	for (i = 0; i < AUTHCACHE_WAYS; i++)
		assert_int_equal(authcache_key(&c, h[i], 110, NOW, &got, &rc,
		    known), 1);
	/* h[0] read again: h[1] is now the oldest, and no slot is added */
	authcache_put(&c, h[0], &k, 0, 105);
	authcache_put(&c, h[AUTHCACHE_WAYS], &k, 0, 106);
	assert_int_equal(authcache_key(&c, h[1], 110, NOW, &got, &rc, known),
	    0);
	for (i = 0; i <= AUTHCACHE_WAYS; i++)
		if (i != 1)
			assert_int_equal(authcache_key(&c, h[i], 110, NOW, &got,
			    &rc, known), 1);
	/* a key of another set is not affected */
	make_hash(h[0], 9, 1, 10);
	authcache_put(&c, h[0], &k, 0, 100);
	assert_int_equal(authcache_key(&c, h[0], 110, NOW, &got, &rc, known),
	    1);
	authcache_free(&c);
}

/* Two accounts whose generations are kept in different places. */
static void
two_accounts(char a[IDS_MAX], char b[IDS_MAX])
{
	struct authcache c;
	struct authcache_gens *g = authcache_gens_shared();
	int i;

	assert_non_null(g);
	authcache_init(&c, TTL, g);
	strcpy(a, "acc_first");
	for (i = 0; i < 1000; i++) {
		snprintf(b, IDS_MAX, "acc_other%d", i);
		authcache_counted(&c, a);
		if (authcache_gen(&c, b) == 0)
			break;
		memset(g, 0, sizeof(*g));
	}
	assert_true(i < 1000);
	munmap(g, sizeof(*g));
}

static void
test_authcache_window_read_again_when_counted_on_this_host(void **state)
{
	struct authcache c;
	struct authcache_gens *g = authcache_gens_shared();
	struct ratelimit_window w = { 3, NOW - 10000 }, out;
	struct auth_key k, got;
	enum auth_result rc;
	char a[IDS_MAX], b[IDS_MAX], known[IDS_MAX];
	uint8_t h[32];
	uint32_t gen;

	(void)state;
	assert_non_null(g);
	two_accounts(a, b);
	make_hash(h, 20, 1, 1);
	make_key(&k, "key_w", a);
	authcache_init(&c, TTL, g);
	authcache_put(&c, h, &k, 0, 100);
	gen = authcache_gen(&c, a);
	authcache_put_window(&c, h, &w, 110, gen);
	memset(&out, 0, sizeof(out));
	assert_int_equal(authcache_window(&c, h, 120, NOW, &out), 1);
	assert_int_equal(out.used, 3);
	assert_int_equal(out.oldest_ms, NOW - 10000);
	/* another account's request changes nothing for this one */
	authcache_counted(&c, b);
	assert_int_equal(authcache_window(&c, h, 120, NOW, &out), 1);
	/* a request of this account counted by any process of the host */
	authcache_counted(&c, a);
	assert_int_equal(authcache_window(&c, h, 120, NOW, &out), 0);
	/* the key itself stays cached */
	assert_int_equal(authcache_key(&c, h, 120, NOW, &got, &rc, known), 1);
	/* read again under the new generation: cached again */
	authcache_put_window(&c, h, &w, 130, authcache_gen(&c, a));
	assert_int_equal(authcache_window(&c, h, 140, NOW, &out), 1);
	authcache_free(&c);
	munmap(g, sizeof(*g));
}

/* A window { used, oldest } read at win_read (key read at 100), asked at
 * mono and now. */
static const struct {
	const char	*what;
	long		 used;
	int64_t		 oldest, win_read, mono, now;
	int		 hit;
} window_cases[] = {
	{ "fresh", 2, NOW - 30000, 100, 200, NOW, 1 },
	{ "window read ttl ago", 2, NOW - 30000, 100, 100 + TTL, NOW, 0 },
	{ "key row stale though the window is not", 2, NOW - 30000, 900,
	  100 + TTL, NOW, 0 },
	{ "oldest second still in the window", 2, NOW - 59000, 100, 200,
	  NOW, 1 },
	{ "oldest second has left the window", 2, NOW - 60000, 100, 200,
	  NOW, 0 },
	{ "oldest second left while cached", 2, NOW - 30000, 100, 200,
	  NOW + 31000, 0 },
	{ "an empty window does not age", 0, 0, 100, 200, NOW + 120000, 1 },
};

static void
test_authcache_window_fresh_only_within_ttl_and_window(void **state)
{
	struct authcache c;
	struct authcache_gens *g = authcache_gens_shared();
	struct ratelimit_window w, out;
	struct auth_key k;
	uint8_t h[32];
	size_t i;

	(void)state;
	assert_non_null(g);
	make_hash(h, 30, 1, 1);
	make_key(&k, "key_x", "acc_x");
	for (i = 0; i < sizeof(window_cases) / sizeof(window_cases[0]); i++) {
		print_message("case %zu: %s\n", i, window_cases[i].what);
		authcache_init(&c, TTL, g);
		authcache_put(&c, h, &k, 0, 100);
		w.used = window_cases[i].used;
		w.oldest_ms = window_cases[i].oldest;
		authcache_put_window(&c, h, &w, window_cases[i].win_read,
		    authcache_gen(&c, "acc_x"));
		assert_int_equal(authcache_window(&c, h, window_cases[i].mono,
		    window_cases[i].now, &out), window_cases[i].hit);
		authcache_free(&c);
	}
	munmap(g, sizeof(*g));
}

static void
test_authcache_window_needs_shared_generations(void **state)
{
	struct authcache c;
	struct ratelimit_window w = { 1, NOW - 1000 }, out;
	struct auth_key k;
	uint8_t h[32];

	(void)state;
	make_hash(h, 40, 1, 1);
	make_key(&k, "key_y", "acc_y");
	authcache_init(&c, TTL, NULL);
	authcache_put(&c, h, &k, 0, 100);
	authcache_put_window(&c, h, &w, 100, 0);
	assert_int_equal(authcache_window(&c, h, 100, NOW, &out), 0);
	assert_int_equal(authcache_gen(&c, "acc_y"), 0);
	authcache_free(&c);
}

static void
test_authcache_put_keeps_window_of_same_key_only(void **state)
{
	struct authcache c;
	struct authcache_gens *g = authcache_gens_shared();
	struct ratelimit_window w = { 5, NOW - 1000 }, out;
	struct auth_key k, moved;
	uint8_t h[32];

	(void)state;
	assert_non_null(g);
	make_hash(h, 50, 1, 1);
	make_key(&k, "key_v", "acc_v");
	authcache_init(&c, TTL, g);
	authcache_put(&c, h, &k, 0, 100);
	authcache_put_window(&c, h, &w, 100, authcache_gen(&c, "acc_v"));
	/* the key row read again: its window stays */
	authcache_put(&c, h, &k, 0, 150);
	assert_int_equal(authcache_window(&c, h, 160, NOW, &out), 1);
	/* a row naming another account: the window was not that account's */
	make_key(&moved, "key_v", "acc_other");
	authcache_put(&c, h, &moved, 0, 170);
	assert_int_equal(authcache_window(&c, h, 180, NOW, &out), 0);
	authcache_free(&c);
	munmap(g, sizeof(*g));
}

/* Three pool owners whose credit generations are kept in different
 * places. */
static void
three_owners(char ids[3][IDS_MAX])
{
	struct authcache c;
	struct authcache_gens *g = authcache_gens_shared();
	int i, n;

	assert_non_null(g);
	authcache_init(&c, TTL, g);
	strcpy(ids[0], "acc_member");
	for (n = 1, i = 0; n < 3 && i < 1000; i++) {
		snprintf(ids[n], IDS_MAX, "owner%d", i);
		memset(g, 0, sizeof(*g));
		authcache_ledger_changed(&c, ids[n]);
		if (authcache_ledger_gen(&c, ids[0]) == 0 &&
		    (n == 1 || authcache_ledger_gen(&c, ids[1]) == 0))
			n++;
	}
	assert_int_equal(n, 3);
	munmap(g, sizeof(*g));
}

static void
make_credits(struct authcache_credits *cr, long long balance,
    const char *org, long long org_balance)
{
	memset(cr, 0, sizeof(*cr));
	cr->mine.balance = balance;
	cr->mine.used = 7;
	cr->mine.refunded = 2;
	snprintf(cr->org, sizeof(cr->org), "%s", org);
	cr->pool.balance = org_balance;
}

/* Stores cr as the handler does after a read of key k started at mono
 * (the generations are taken at the call, as before a read). */
static void
put_credits(struct authcache *c, const uint8_t h[32],
    const struct auth_key *k, int64_t mono,
    const struct authcache_credits *cr)
{
	struct authcache_credits_read rd;

	authcache_credits_begin(c, h, k, mono, &rd);
	authcache_credits_end(c, h, &rd, cr);
}

/* A member of an organization: its credits stay cached until a request
 * that may have changed its own pool or its organization's is handled by
 * any process of the host; counted requests and other owners' changes
 * leave them. */
static void
test_authcache_credits_read_again_when_a_pool_changed_on_this_host(
    void **state)
{
	struct authcache c;
	struct authcache_gens *g;
	struct authcache_credits cr, out;
	struct auth_key k;
	char ids[3][IDS_MAX];	/* account, its organization, someone else */
	uint8_t h[32];

	(void)state;
	three_owners(ids);
	assert_non_null(g = authcache_gens_shared());
	make_hash(h, 60, 1, 1);
	make_key(&k, "key_c", ids[0]);
	strcpy(k.org_id, ids[1]);
	authcache_init(&c, TTL, g);
	authcache_put(&c, h, &k, 0, 100);
	make_credits(&cr, 40, ids[1], 900);
	put_credits(&c, h, &k, 110, &cr);
	memset(&out, 0, sizeof(out));
	assert_int_equal(authcache_credits(&c, h, 120, &out), 1);
	assert_int_equal(out.mine.balance, 40);
	assert_int_equal(out.mine.used, 7);
	assert_int_equal(out.mine.refunded, 2);
	assert_string_equal(out.org, ids[1]);
	assert_int_equal(out.pool.balance, 900);
	/* requests counted, another owner charged: still current */
	authcache_counted(&c, ids[0]);
	authcache_ledger_changed(&c, ids[2]);
	assert_int_equal(authcache_credits(&c, h, 120, &out), 1);
	/* another member charged the organization's pool */
	authcache_ledger_changed(&c, ids[1]);
	assert_int_equal(authcache_credits(&c, h, 120, &out), 0);
	put_credits(&c, h, &k, 130, &cr);
	assert_int_equal(authcache_credits(&c, h, 140, &out), 1);
	/* the member's own request */
	authcache_ledger_changed(&c, ids[0]);
	assert_int_equal(authcache_credits(&c, h, 140, &out), 0);
	authcache_free(&c);
	munmap(g, sizeof(*g));
}

/* Credits read at 100 (key row at 100 too), asked at mono. */
static const struct {
	const char	*what;
	int64_t		 key_read, cr_read, mono;
	int		 hit;
} credits_cases[] = {
	{ "fresh", 100, 100, 200, 1 },
	{ "one ms before the ttl ends", 100, 100, 100 + TTL - 1, 1 },
	{ "read ttl ago", 100, 100, 100 + TTL, 0 },
	{ "key row stale though the credits are not", 100, 900, 100 + TTL,
	  0 },
	{ "monotonic clock before the read", 100, 100, 99, 0 },
};

static void
test_authcache_credits_fresh_only_within_ttl(void **state)
{
	struct authcache c;
	struct authcache_gens *g = authcache_gens_shared();
	struct authcache_credits cr, out;
	struct auth_key k;
	uint8_t h[32];
	size_t i;

	(void)state;
	assert_non_null(g);
	make_hash(h, 61, 1, 1);
	make_key(&k, "key_t", "acc_t");
	make_credits(&cr, 5, "", 0);
	for (i = 0; i < sizeof(credits_cases) / sizeof(credits_cases[0]);
	    i++) {
		print_message("case %zu: %s\n", i, credits_cases[i].what);
		authcache_init(&c, TTL, g);
		authcache_put(&c, h, &k, 0, credits_cases[i].key_read);
		put_credits(&c, h, &k, credits_cases[i].cr_read, &cr);
		assert_int_equal(authcache_credits(&c, h,
		    credits_cases[i].mono, &out), credits_cases[i].hit);
		authcache_free(&c);
	}
	munmap(g, sizeof(*g));
}

/* Nothing is used when it could not be made stale in time: without a
 * shared table, for a key not cached, when the read found an organization
 * whose generation was not taken (the key names none: the account joined
 * one), and once the key's slot holds a row of another account. An
 * organization found once is known to the next read, whose credits are
 * then used, and a charge of its pool makes them stale. */
static void
test_authcache_credits_used_only_when_they_can_be_made_stale(void **state)
{
	struct authcache c;
	struct authcache_gens *g = authcache_gens_shared();
	struct authcache_credits cr, out;
	struct auth_key k, moved;
	uint8_t h[32], other[32];

	(void)state;
	assert_non_null(g);
	make_hash(h, 62, 1, 1);
	make_hash(other, 63, 1, 1);
	make_key(&k, "key_n", "acc_n");
	make_credits(&cr, 5, "", 0);
	authcache_init(&c, TTL, NULL);
	authcache_put(&c, h, &k, 0, 100);
	put_credits(&c, h, &k, 100, &cr);
	assert_int_equal(authcache_credits(&c, h, 110, &out), 0);
	authcache_free(&c);

	authcache_init(&c, TTL, g);
	put_credits(&c, other, &k, 100, &cr);
	assert_int_equal(authcache_credits(&c, other, 110, &out), 0);
	/* the key names no organization, the read found one */
	authcache_put(&c, h, &k, 0, 100);
	make_credits(&cr, 5, "org_new", 50);
	put_credits(&c, h, &k, 100, &cr);
	assert_int_equal(authcache_credits(&c, h, 110, &out), 0);
	/* the next read takes its generation: used, until a charge of it */
	put_credits(&c, h, &k, 120, &cr);
	assert_int_equal(authcache_credits(&c, h, 130, &out), 1);
	assert_string_equal(out.org, "org_new");
	assert_int_equal(out.pool.balance, 50);
	authcache_ledger_changed(&c, "org_new");
	assert_int_equal(authcache_credits(&c, h, 130, &out), 0);
	/* used, then the slot's row names another account */
	put_credits(&c, h, &k, 140, &cr);
	assert_int_equal(authcache_credits(&c, h, 150, &out), 1);
	make_key(&moved, "key_n", "acc_elsewhere");
	authcache_put(&c, h, &moved, 0, 160);
	assert_int_equal(authcache_credits(&c, h, 170, &out), 0);
	authcache_free(&c);
	munmap(g, sizeof(*g));
}

static void
test_authcache_generations_are_shared_with_forked_processes(void **state)
{
	struct authcache c;
	struct authcache_gens *g = authcache_gens_shared();
	int status;
	pid_t pid;

	(void)state;
	assert_non_null(g);
	authcache_init(&c, TTL, g);
	assert_int_equal(authcache_gen(&c, "acc_f"), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		authcache_counted(&c, "acc_f");
		authcache_counted(&c, "acc_f");
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(authcache_gen(&c, "acc_f"), 2);
	authcache_free(&c);
	munmap(g, sizeof(*g));
}

/* Runs first, before anything in this process has hashed: the master maps
 * the table and forks at once, and the children must place accounts where
 * it and their siblings do, so the hash key must come from before the fork
 * (a child setting up its own would count in other places). */
static void
test_authcache_children_forked_after_mapping_share_indexes(void **state)
{
	struct authcache c;
	struct authcache_gens *g = authcache_gens_shared();
	char acc[IDS_MAX];
	int i, n, status;
	pid_t pid;

	(void)state;
	assert_non_null(g);
	authcache_init(&c, TTL, g);
	for (n = 0; n < 2; n++) {
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			for (i = 0; i < 16; i++) {
				snprintf(acc, sizeof(acc), "acc_child%d", i);
				authcache_counted(&c, acc);
			}
			_exit(0);
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	for (i = 0; i < 16; i++) {
		snprintf(acc, sizeof(acc), "acc_child%d", i);
		assert_true(authcache_gen(&c, acc) >= 2);
	}
	authcache_free(&c);
	munmap(g, sizeof(*g));
}

static void
test_authcache_settle_waits_the_ttl(void **state)
{
	int64_t t0;

	(void)state;
	t0 = timeutil_mono_ms();
	authcache_settle(0);
	assert_true(timeutil_mono_ms() - t0 < 50);
	t0 = timeutil_mono_ms();
	authcache_settle(120);
	assert_true(timeutil_mono_ms() - t0 >= 120);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_authcache_children_forked_after_mapping_share_indexes),
		cmocka_unit_test(
		    test_authcache_key_trusted_for_ttl_and_until_expiry),
		cmocka_unit_test(test_authcache_ttl_zero_caches_nothing),
		cmocka_unit_test(test_authcache_unknown_hash_misses),
		cmocka_unit_test(test_authcache_set_keeps_ways),
		cmocka_unit_test(
		    test_authcache_window_read_again_when_counted_on_this_host),
		cmocka_unit_test(
		    test_authcache_window_fresh_only_within_ttl_and_window),
		cmocka_unit_test(
		    test_authcache_window_needs_shared_generations),
		cmocka_unit_test(
		    test_authcache_put_keeps_window_of_same_key_only),
		cmocka_unit_test(
		    test_authcache_credits_read_again_when_a_pool_changed_on_this_host),
		cmocka_unit_test(test_authcache_credits_fresh_only_within_ttl),
		cmocka_unit_test(
		    test_authcache_credits_used_only_when_they_can_be_made_stale),
		cmocka_unit_test(
		    test_authcache_generations_are_shared_with_forked_processes),
		cmocka_unit_test(test_authcache_settle_waits_the_ttl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
