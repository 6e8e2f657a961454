/* test_auth.c: the pure parts of src/core/auth.c: scope lists (parsing,
 * formatting, "*"), tier names and their per-minute limits from the spec,
 * the syntactic check of a presented key, generated keys (shape and
 * uniqueness), the key hash, the credit pool and the rate-limit precedence
 * per-key override > organization > tier. auth_lookup needs MariaDB and is
 * covered by the integration tests. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth.h"

#define BIT(s) (1u << (s))

static const struct {
	const char	*in;
	int		 want;
	unsigned	 mask;
} scope_cases[] = {
	{ "verify:single", 0, BIT(AUTH_SCOPE_VERIFY_SINGLE) },
	{ "verify:bulk", 0, BIT(AUTH_SCOPE_VERIFY_BULK) },
	{ "jobs:read", 0, BIT(AUTH_SCOPE_JOBS_READ) },
	{ "jobs:write", 0, BIT(AUTH_SCOPE_JOBS_WRITE) },
	{ "webhooks:manage", 0, BIT(AUTH_SCOPE_WEBHOOKS_MANAGE) },
	{ "credits:read", 0, BIT(AUTH_SCOPE_CREDITS_READ) },
	{ "*", 0, BIT(AUTH_SCOPE_ALL) },
	{ "verify:single,jobs:read", 0,
	  BIT(AUTH_SCOPE_VERIFY_SINGLE) | BIT(AUTH_SCOPE_JOBS_READ) },
	{ " verify:single , jobs:read\tcredits:read ", 0,
	  BIT(AUTH_SCOPE_VERIFY_SINGLE) | BIT(AUTH_SCOPE_JOBS_READ) |
	  BIT(AUTH_SCOPE_CREDITS_READ) },
	{ "jobs:read,,jobs:read", 0, BIT(AUTH_SCOPE_JOBS_READ) },
	{ "*,verify:bulk", 0, BIT(AUTH_SCOPE_ALL) | BIT(AUTH_SCOPE_VERIFY_BULK) },
	{ "", -1, 0 },				/* no scope at all */
	{ " , ,\t", -1, 0 },
	{ "bogus", -1, 0 },
	{ "verify:single,bogus", -1, 0 },
	{ "VERIFY:SINGLE", -1, 0 },		/* names are exact */
	{ "verify", -1, 0 },
	{ "verify:", -1, 0 },
	{ "verify:single;jobs:read", -1, 0 },
	{ "**", -1, 0 },
	{ "verify:single\njobs:read", -1, 0 },
	{ "verify:single-and-a-very-long-tail-that-overflows", -1, 0 },
};

static void
test_auth_scope_parse_list_accepts_known_names_only(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(scope_cases) / sizeof(scope_cases[0]); i++) {
		unsigned mask = 0xdead;

		print_message("case %zu: \"%s\"\n", i, scope_cases[i].in);
		assert_int_equal(auth_scope_parse_list(scope_cases[i].in,
		    &mask), scope_cases[i].want);
		if (scope_cases[i].want == 0)
			assert_int_equal(mask, scope_cases[i].mask);
	}
}

static void
test_auth_scope_format_round_trips_every_mask(void **state)
{
	unsigned mask, back;

	(void)state;
	for (mask = 1; mask < (1u << AUTH_SCOPE__MAX); mask++) {
		struct buf b;

		buf_init(&b, 1024);
		auth_scope_format(mask, &b);
		assert_null(strchr(buf_str(&b), ' '));
		assert_int_equal(auth_scope_parse_list(buf_str(&b), &back), 0);
		assert_int_equal(back, mask);
		buf_free(&b);
	}
}

static void
test_auth_scope_format_lists_names_in_enum_order(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 1024);
	auth_scope_format(0, &b);
	assert_string_equal(buf_str(&b), "");
	auth_scope_format(BIT(AUTH_SCOPE_CREDITS_READ) |
	    BIT(AUTH_SCOPE_VERIFY_SINGLE) | BIT(AUTH_SCOPE_ALL), &b);
	assert_string_equal(buf_str(&b), "verify:single,credits:read,*");
	buf_free(&b);
}

static void
test_auth_has_scope_grants_everything_to_star_only(void **state)
{
	int s;

	(void)state;
	for (s = 0; s < AUTH_SCOPE__MAX; s++) {
		unsigned only = BIT(s);
		int t;

		assert_true(auth_has_scope(BIT(AUTH_SCOPE_ALL),
		    (enum auth_scope)s));
		assert_false(auth_has_scope(0, (enum auth_scope)s));
		for (t = 0; t < AUTH_SCOPE__MAX; t++)
			assert_int_equal(auth_has_scope(only,
			    (enum auth_scope)t) != 0,
			    s == AUTH_SCOPE_ALL || s == t);
	}
	/* Every scope but "*" does not grant "*" (the key management API). */
	assert_false(auth_has_scope((1u << AUTH_SCOPE__MAX) - 1 -
	    BIT(AUTH_SCOPE_ALL), AUTH_SCOPE_ALL));
}

static const struct {
	const char	*in;
	int		 want;
	enum auth_tier	 tier;
} tier_cases[] = {
	{ "free", 0, AUTH_TIER_FREE },
	{ "trial", 0, AUTH_TIER_TRIAL },
	{ "pro", 0, AUTH_TIER_PRO },
	{ "admin", 0, AUTH_TIER_ADMIN },
	{ "PRO", 0, AUTH_TIER_PRO },
	{ "Admin", 0, AUTH_TIER_ADMIN },
	{ "anonymous", -1, 0 },		/* not a tier an account can have */
	{ "", -1, 0 },
	{ "enterprise", -1, 0 },
	{ " pro", -1, 0 },
	{ "pro ", -1, 0 },
	{ "professional", -1, 0 },
};

static void
test_auth_tier_parse_knows_account_tiers_case_insensitively(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tier_cases) / sizeof(tier_cases[0]); i++) {
		enum auth_tier t = AUTH_TIER__MAX;

		print_message("case %zu: \"%s\"\n", i, tier_cases[i].in);
		assert_int_equal(auth_tier_parse(tier_cases[i].in, &t),
		    tier_cases[i].want);
		assert_int_equal(t, tier_cases[i].want == 0 ?
		    tier_cases[i].tier : AUTH_TIER__MAX);
	}
}

static void
test_auth_tier_limits_are_the_spec_table(void **state)
{
	(void)state;
	assert_int_equal(auth_tier_limits[AUTH_TIER_ANONYMOUS], 5);
	assert_int_equal(auth_tier_limits[AUTH_TIER_FREE], 10);
	assert_int_equal(auth_tier_limits[AUTH_TIER_TRIAL], 30);
	assert_int_equal(auth_tier_limits[AUTH_TIER_PRO], 100);
	assert_int_equal(auth_tier_limits[AUTH_TIER_ADMIN], 1000);
}

#define R40 "0123456789abcdefghijABCDEFGHIJ0123456789"

static const struct {
	const char	*key;
	int		 ok;
	int		 sandbox;
} key_cases[] = {
	{ "svc_live_" R40, 1, 0 },
	{ "svc_test_" R40, 1, 1 },
	{ "svc_live_" R40 "0", 0, 0 },		/* 41 characters */
	{ "svc_live_0123456789abcdefghijABCDEFGHIJ012345678", 0, 0 },
	{ "svc_live_", 0, 0 },
	{ "", 0, 0 },
	{ "svc_prod_" R40, 0, 0 },
	{ "SVC_LIVE_" R40, 0, 0 },
	{ "svc_live" R40, 0, 0 },
	{ " svc_live_" R40, 0, 0 },
	{ "svc_live_" R40 " ", 0, 0 },
	{ "svc_live_" R40 "\n", 0, 0 },
	{ "svc_live_0123456789abcdefghij-BCDEFGHIJ0123456789", 0, 0 },
	{ "svc_live_0123456789abcdefghij_BCDEFGHIJ0123456789", 0, 0 },
	{ "svc_live_0123456789abcdefghij BCDEFGHIJ0123456789", 0, 0 },
	{ "svc_live_0123456789abcdefghij\xc3\xa9" "CDEFGHIJ0123456789", 0, 0 },
	{ "Bearer svc_live_" R40, 0, 0 },
};

static void
test_auth_key_well_formed_wants_prefix_and_40_alphanumerics(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(key_cases) / sizeof(key_cases[0]); i++) {
		int sandbox = -1;

		print_message("case %zu: \"%s\"\n", i, key_cases[i].key);
		assert_int_equal(auth_key_well_formed(key_cases[i].key,
		    &sandbox) != 0, key_cases[i].ok);
		if (key_cases[i].ok)
			assert_int_equal(sandbox, key_cases[i].sandbox);
	}
}

static void
test_auth_key_generate_makes_distinct_well_formed_keys(void **state)
{
	enum { N = 200 };
	char (*keys)[AUTH_KEY_MAX];
	int i, j, sandbox;

	(void)state;
	keys = calloc(N, sizeof(*keys));
	assert_non_null(keys);
	for (i = 0; i < N; i++) {
		int want = i % 2;

		assert_int_equal(auth_key_generate(want, keys[i]), 0);
		assert_int_equal(strlen(keys[i]), 9 + AUTH_KEY_RANDOM_LEN);
		assert_true(strncmp(keys[i], want ? AUTH_TEST_PREFIX :
		    AUTH_LIVE_PREFIX, 9) == 0);
		sandbox = -1;
		assert_true(auth_key_well_formed(keys[i], &sandbox));
		assert_int_equal(sandbox, want);
		for (j = 0; j < i; j++)
			assert_string_not_equal(keys[i] + 9, keys[j] + 9);
	}
	free(keys);
}

static void
test_auth_key_hash_is_sha256_of_the_key_text(void **state)
{
	static const uint8_t abc[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41,
		0x40, 0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3,
		0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00,
		0x15, 0xad,
	};
	uint8_t h1[32], h2[32];

	(void)state;
	auth_key_hash("abc", h1);
	assert_memory_equal(h1, abc, 32);
	auth_key_hash("svc_live_" R40, h1);
	auth_key_hash("svc_test_" R40, h2);
	assert_memory_not_equal(h1, h2, 32);
}

static void
key_init(struct auth_key *k, enum auth_tier tier, long key_limit,
    long org_limit)
{
	memset(k, 0, sizeof(*k));
	k->tier = tier;
	k->key_rate_limit = key_limit;
	k->org_rate_limit = org_limit;
}

static const struct {
	enum auth_tier	 tier;
	long		 key_limit, org_limit;
	int		 op;		/* the key's limit set by the operator */
	long		 want;
} limit_cases[] = {
	{ AUTH_TIER_FREE, -1, -1, 0, 10 },	/* tier */
	{ AUTH_TIER_TRIAL, -1, -1, 0, 30 },
	{ AUTH_TIER_PRO, -1, -1, 0, 100 },
	{ AUTH_TIER_ADMIN, -1, -1, 0, 1000 },
	{ AUTH_TIER_FREE, -1, 500, 0, 500 },	/* org beats tier */
	{ AUTH_TIER_ADMIN, -1, 20, 0, 20 },	/* ...even downwards */
	{ AUTH_TIER_FREE, 7, -1, 0, 7 },	/* key beats tier */
	{ AUTH_TIER_FREE, 7, 500, 0, 7 },	/* key beats org */
	{ AUTH_TIER_PRO, 2000, 50, 1, 2000 },	/* the operator's: kept */
	{ AUTH_TIER_PRO, 2000, 50, 0, 50 },	/* the customer's: clamped */
	{ AUTH_TIER_FREE, 100, -1, 0, 10 },	/* made on pro, now free */
	{ AUTH_TIER_FREE, 100, -1, 1, 100 },
	{ AUTH_TIER_FREE, 10, -1, 0, 10 },
	{ AUTH_TIER_PRO, 0, 50, 0, 0 },		/* 0 is a set value */
	{ AUTH_TIER_PRO, -1, 0, 0, 0 },
};

static void
test_auth_key_rate_limit_prefers_key_then_org_then_tier_clamping_the_customers(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(limit_cases) / sizeof(limit_cases[0]); i++) {
		struct auth_key k;

		print_message("case %zu\n", i);
		key_init(&k, limit_cases[i].tier, limit_cases[i].key_limit,
		    limit_cases[i].org_limit);
		k.key_rate_limit_operator = limit_cases[i].op;
		assert_int_equal(auth_key_rate_limit(&k), limit_cases[i].want);
	}
}

static void
test_auth_key_pool_is_org_when_org_managed(void **state)
{
	struct auth_key k;

	(void)state;
	key_init(&k, AUTH_TIER_PRO, -1, -1);
	memcpy(k.account_id, "acct_1", 7);
	assert_string_equal(auth_key_pool(&k), "acct_1");
	memcpy(k.org_id, "org_9", 6);
	assert_string_equal(auth_key_pool(&k), "org_9");
}

static void
test_auth_name_tables_are_complete(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < AUTH_SCOPE__MAX; i++)
		assert_non_null(auth_scope_names[i]);
	for (i = 0; i < AUTH_TIER__MAX; i++)
		assert_non_null(auth_tier_names[i]);
	for (i = 0; i < AUTH_RESULT__MAX; i++)
		assert_non_null(auth_result_names[i]);
	assert_string_equal(auth_scope_names[AUTH_SCOPE_ALL], "*");
	assert_true(AUTH_SCOPE__MAX <= 32);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_scope_parse_list_accepts_known_names_only),
		cmocka_unit_test(test_auth_scope_format_round_trips_every_mask),
		cmocka_unit_test(test_auth_scope_format_lists_names_in_enum_order),
		cmocka_unit_test(test_auth_has_scope_grants_everything_to_star_only),
		cmocka_unit_test(test_auth_tier_parse_knows_account_tiers_case_insensitively),
		cmocka_unit_test(test_auth_tier_limits_are_the_spec_table),
		cmocka_unit_test(test_auth_key_well_formed_wants_prefix_and_40_alphanumerics),
		cmocka_unit_test(test_auth_key_generate_makes_distinct_well_formed_keys),
		cmocka_unit_test(test_auth_key_hash_is_sha256_of_the_key_text),
		cmocka_unit_test(test_auth_key_rate_limit_prefers_key_then_org_then_tier_clamping_the_customers),
		cmocka_unit_test(test_auth_key_pool_is_org_when_org_managed),
		cmocka_unit_test(test_auth_name_tables_are_complete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
