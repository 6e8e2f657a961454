/* test_verdict.c: every row of API.md's classification table, the score
 * formula, the catch-all send verdict and the trap local-part patterns; and,
 * from the contract's side (spec/interface.md), what must hold whatever the
 * table says: every score is 0-100 and follows the status, and a catch-all
 * address gets exactly one of send_safe, send_with_caution, avoid. */
#include "engine/verdict.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

static const struct {
	enum verdict_kind kind;
	const char *status, *reason, *sub, *classification;
} rows[] = {
	{ VERDICT_K_ACCEPTED, "deliverable", "accepted_email", NULL, "valid" },
	{ VERDICT_K_ROLE, "risky", "role_based", "role_based", "risky" },
	{ VERDICT_K_INVALID_SYNTAX, "undeliverable", "invalid_syntax", NULL, "invalid" },
	{ VERDICT_K_INVALID_DOMAIN, "undeliverable", "invalid_domain", NULL, "invalid" },
	{ VERDICT_K_NO_MX, "undeliverable", "no_mx_record", NULL, "invalid" },
	{ VERDICT_K_REJECTED, "undeliverable", "rejected_email", "mailbox_not_found", "invalid" },
	{ VERDICT_K_DISABLED, "undeliverable", "account_disabled", "account_disabled", "invalid" },
	{ VERDICT_K_FULL, "risky", "mailbox_full", "mailbox_full", "risky" },
	{ VERDICT_K_CATCH_ALL, "unknown", "catch_all", "catch_all", "catch_all" },
	{ VERDICT_K_DISPOSABLE, "undeliverable", "disposable_email", "disposable", "disposable" },
	{ VERDICT_K_SPAM_TRAP, "risky", "spam_trap", "spam_trap", "risky" },
	{ VERDICT_K_COMPLAINER, "risky", "known_complainer", "known_complainer", "risky" },
	{ VERDICT_K_GREYLISTED, "unknown", "unknown", "greylisted", "unknown" },
	{ VERDICT_K_BLOCKED, "unknown", "unknown", "smtp_blocked", "unknown" },
	{ VERDICT_K_UNREACHABLE, "unknown", "unknown", "smtp_unreachable", "unknown" },
	{ VERDICT_K_DNS_ERROR, "unknown", "unknown", "dns_error", "unknown" },
	{ VERDICT_K_UNDETERMINED, "unknown", "unknown", NULL, "unknown" },
};

static void
assert_opt_string(const char *want, const char *got)
{
	if (want == NULL)
		assert_null(got);
	else
		assert_string_equal(want, got);
}

static void
test_every_table_row_maps_to_the_api_vocabulary(void **st)
{
	size_t i;

	(void)st;
	assert_int_equal(sizeof(rows) / sizeof(rows[0]), VERDICT_KIND__MAX);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct verdict v = verdict_of(rows[i].kind, 0);
		enum verdict_kind back;
		assert_string_equal(verdict_status_names[v.status], rows[i].status);
		assert_string_equal(verdict_reason_names[v.reason], rows[i].reason);
		assert_opt_string(rows[i].sub, verdict_sub_names[v.sub]);
		assert_string_equal(verdict_class_names[v.classification],
		    rows[i].classification);
		assert_int_equal(verdict_parse_kind(verdict_kind_names[i], &back), 0);
		assert_int_equal(back, rows[i].kind);
	}
}

static void
test_typo_sets_possible_typo_only_for_syntax_and_domain(void **st)
{
	(void)st;
	assert_string_equal(verdict_sub_names[verdict_of(VERDICT_K_INVALID_SYNTAX, 1).sub],
	    "possible_typo");
	assert_string_equal(verdict_sub_names[verdict_of(VERDICT_K_INVALID_DOMAIN, 1).sub],
	    "possible_typo");
	assert_null(verdict_sub_names[verdict_of(VERDICT_K_NO_MX, 1).sub]);
	assert_string_equal(verdict_sub_names[verdict_of(VERDICT_K_REJECTED, 1).sub],
	    "mailbox_not_found");
}

static void
test_bulk_classification_maps_to_status_as_the_spec_says(void **st)
{
	int k;

	(void)st;
	for (k = 0; k < VERDICT_KIND__MAX; k++) {
		struct verdict v = verdict_of((enum verdict_kind)k, 0);
		switch (v.classification) {
		case VERDICT_C_VALID:
			assert_int_equal(v.status, VERDICT_DELIVERABLE);
			break;
		case VERDICT_C_INVALID:
		case VERDICT_C_DISPOSABLE:
			assert_int_equal(v.status, VERDICT_UNDELIVERABLE);
			break;
		case VERDICT_C_CATCH_ALL:
		case VERDICT_C_UNKNOWN:
			assert_int_equal(v.status, VERDICT_UNKNOWN);
			break;
		default:
			assert_int_equal(v.status, VERDICT_RISKY);
		}
	}
}

static void
test_score_formula(void **st)
{
	static const struct {
		enum verdict_kind k;
		enum verdict_catch_all ca;
		int free_provider, tls, want;
	} cases[] = {
		{ VERDICT_K_ACCEPTED, VERDICT_CA_NONE, 0, 1, 95 },
		{ VERDICT_K_ACCEPTED, VERDICT_CA_NONE, 1, 1, 90 },
		{ VERDICT_K_ACCEPTED, VERDICT_CA_NONE, 0, 0, 92 },
		{ VERDICT_K_ACCEPTED, VERDICT_CA_NONE, 1, 0, 87 },
		{ VERDICT_K_ROLE, VERDICT_CA_NONE, 1, 1, 78 },
		{ VERDICT_K_ROLE, VERDICT_CA_NONE, 0, 0, 75 },
		{ VERDICT_K_CATCH_ALL, VERDICT_CA_SEND_SAFE, 0, 1, 60 },
		{ VERDICT_K_CATCH_ALL, VERDICT_CA_SEND_WITH_CAUTION, 0, 1, 45 },
		{ VERDICT_K_CATCH_ALL, VERDICT_CA_AVOID, 1, 0, 22 },
		{ VERDICT_K_REJECTED, VERDICT_CA_NONE, 0, 0, 0 },
		{ VERDICT_K_DISABLED, VERDICT_CA_NONE, 0, 0, 5 },
		{ VERDICT_K_DISPOSABLE, VERDICT_CA_NONE, 0, 0, 10 },
		{ VERDICT_K_FULL, VERDICT_CA_NONE, 0, 1, 72 },
		{ VERDICT_K_COMPLAINER, VERDICT_CA_NONE, 0, 1, 66 },
		{ VERDICT_K_GREYLISTED, VERDICT_CA_NONE, 0, 0, 40 },
		{ VERDICT_K_DNS_ERROR, VERDICT_CA_NONE, 0, 0, 30 },
		{ VERDICT_K_UNREACHABLE, VERDICT_CA_NONE, 0, 0, 25 },
		{ VERDICT_K_SPAM_TRAP, VERDICT_CA_NONE, 0, 0, 62 },
	};
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct verdict v = verdict_of(cases[i].k, 0);
		struct verdict_facts f = { .free_provider = cases[i].free_provider,
		    .tls = cases[i].tls };
		int s = verdict_score(&v, cases[i].ca, &f);
		assert_in_range(s, 0, 100);
		assert_int_equal(s, cases[i].want);
	}
}

static void
test_catch_all_verdict_heuristic(void **st)
{
	static const struct {
		const char *local;
		int web, role;
		enum verdict_catch_all want;
	} cases[] = {
		{ "jane.doe", 1, 0, VERDICT_CA_SEND_SAFE },
		{ "jdoe", 1, 0, VERDICT_CA_SEND_SAFE },
		{ "mary_ann", 1, 0, VERDICT_CA_SEND_SAFE },
		{ "jane.doe", 0, 0, VERDICT_CA_AVOID },
		{ "info", 1, 1, VERDICT_CA_AVOID },
		{ "user84920", 1, 0, VERDICT_CA_AVOID },
		{ "a3f9c2e81b7d4e0f", 1, 0, VERDICT_CA_AVOID },
		{ "xkcdqrst", 1, 0, VERDICT_CA_AVOID },
		{ "jane.doe.2021", 1, 0, VERDICT_CA_SEND_WITH_CAUTION },
		{ "j.d.smith", 1, 0, VERDICT_CA_SEND_WITH_CAUTION },
		{ "x", 1, 0, VERDICT_CA_SEND_WITH_CAUTION },
	};
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct verdict_facts f = { .web_presence = cases[i].web,
		    .role = cases[i].role, .local = cases[i].local };
		assert_int_equal(verdict_catch_all_of(&f), cases[i].want);
	}
}

static void
test_trap_local_patterns(void **st)
{
	(void)st;
	assert_true(verdict_trap_local("spamtrap"));
	assert_true(verdict_trap_local("my.SpamTrap.2"));
	assert_true(verdict_trap_local("honeypot"));
	assert_true(verdict_trap_local("blackhole"));
	assert_false(verdict_trap_local("alice"));
	assert_false(verdict_trap_local("trapper.john"));
	assert_false(verdict_trap_local(""));
}

/* Every combination of the facts the score looks at (bit i of n: free,
 * tls, role, web presence, typo). */
#define FACT_COMBINATIONS 32

static struct verdict_facts
facts_of(unsigned n)
{
	struct verdict_facts f = { .free_provider = (n & 1) != 0,
	    .tls = (n & 2) != 0, .role = (n & 4) != 0,
	    .web_presence = (n & 8) != 0, .possible_typo = (n & 16) != 0,
	    .local = "jane.doe" };

	return f;
}

/* The lowest and highest score of each status over every kind, send
 * verdict (a catch-all's, or a trap's or role's on a catch-all domain) and
 * combination of facts; fails on a score outside 0-100. */
static void
score_bands(int lo[VERDICT_STATUS__MAX], int hi[VERDICT_STATUS__MAX])
{
	int k, ca, st;
	unsigned n;

	for (st = 0; st < VERDICT_STATUS__MAX; st++) {
		lo[st] = 101;
		hi[st] = -1;
	}
	for (k = 0; k < VERDICT_KIND__MAX; k++)
		for (ca = 0; ca < VERDICT_CA__MAX; ca++)
			for (n = 0; n < FACT_COMBINATIONS; n++) {
				struct verdict v = verdict_of(
				    (enum verdict_kind)k, (int)(n & 16));
				struct verdict_facts f = facts_of(n);
				int s = verdict_score(&v,
				    (enum verdict_catch_all)ca, &f);
				if (s < 0 || s > 100)
					fail_msg("%s (catch-all %d, facts %u): "
					    "score %d", verdict_kind_names[k],
					    ca, n, s);
				if (s < lo[v.status])
					lo[v.status] = s;
				if (s > hi[v.status])
					hi[v.status] = s;
			}
}

/* The sandbox domain: a local part naming a reason or sub_status (any
 * case) gets that verdict, any other is accepted. */
static void
test_sandbox_local_part_names_the_verdict(void **st)
{
	(void)st;
	assert_int_equal(verdict_sandbox_kind("known_complainer"),
	    VERDICT_K_COMPLAINER);
	assert_int_equal(verdict_sandbox_kind("Mailbox_Full"), VERDICT_K_FULL);
	assert_int_equal(verdict_sandbox_kind("mailbox_not_found"),
	    VERDICT_K_REJECTED);
	assert_int_equal(verdict_sandbox_kind("smtp_blocked"),
	    VERDICT_K_BLOCKED);
	assert_int_equal(verdict_sandbox_kind("dns_error"),
	    VERDICT_K_DNS_ERROR);
	assert_int_equal(verdict_sandbox_kind("jane"), VERDICT_K_ACCEPTED);
	assert_int_equal(verdict_sandbox_kind("known_complainers"),
	    VERDICT_K_ACCEPTED);
}

static void
test_every_score_is_an_integer_from_0_to_100(void **st)
{
	int lo[VERDICT_STATUS__MAX], hi[VERDICT_STATUS__MAX];

	(void)st;
	score_bands(lo, hi);
}

static void
test_scores_follow_the_status(void **st)
{
	int lo[VERDICT_STATUS__MAX], hi[VERDICT_STATUS__MAX], s, other = -1;

	(void)st;
	score_bands(lo, hi);
	for (s = 0; s < VERDICT_STATUS__MAX; s++) {
		print_message("%s: %d-%d\n", verdict_status_names[s], lo[s],
		    hi[s]);
		/* every status is reached by some kind */
		assert_in_range(lo[s], 0, 100);
		assert_in_range(hi[s], 0, 100);
		if (s != VERDICT_DELIVERABLE && hi[s] > other)
			other = hi[s];
	}
	/* Deliverable scores above risky above unknown above undeliverable,
	 * whatever the kind, send verdict and facts (the contract). */
	if (lo[VERDICT_DELIVERABLE] <= other)
		fail_msg("a deliverable address scores %d, another one %d",
		    lo[VERDICT_DELIVERABLE], other);
	if (lo[VERDICT_RISKY] <= hi[VERDICT_UNKNOWN])
		fail_msg("a risky address scores %d, an unknown one %d",
		    lo[VERDICT_RISKY], hi[VERDICT_UNKNOWN]);
	if (lo[VERDICT_UNKNOWN] <= hi[VERDICT_UNDELIVERABLE])
		fail_msg("an unknown address scores %d, an undeliverable one "
		    "%d", lo[VERDICT_UNKNOWN], hi[VERDICT_UNDELIVERABLE]);
}

/* Local parts of every shape a catch-all address can have. */
static const char *const catch_all_locals[] = {
	"jane.doe", "jdoe", "mary_ann", "o-neil", "j.d.smith", "jane.doe.2021",
	"x", "", "info", "postmaster", "user84920", "a3f9c2e81b7d4e0f",
	"xkcdqrst", "j\xc3\xbcrgen", "first+tag", "\"quoted local\"", ".dot",
	"dot.", "12345", "UPPER.Case",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
};

static void
test_catch_all_verdict_takes_exactly_three_values(void **st)
{
	int seen[VERDICT_CA__MAX] = { 0 }, web, role;
	size_t i;

	(void)st;
	/* the spec's three values, and null for a result that is not a
	 * catch-all */
	assert_int_equal(VERDICT_CA__MAX, 4);
	assert_null(verdict_catch_all_names[VERDICT_CA_NONE]);
	assert_string_equal(verdict_catch_all_names[VERDICT_CA_SEND_SAFE],
	    "send_safe");
	assert_string_equal(
	    verdict_catch_all_names[VERDICT_CA_SEND_WITH_CAUTION],
	    "send_with_caution");
	assert_string_equal(verdict_catch_all_names[VERDICT_CA_AVOID],
	    "avoid");
	for (i = 0; i <= sizeof(catch_all_locals) / sizeof(catch_all_locals[0]);
	    i++)
		for (web = 0; web <= 1; web++)
			for (role = 0; role <= 1; role++) {
				/* the last round: no local part at all */
				struct verdict_facts f = { .web_presence = web,
				    .role = role, .local = i <
				    sizeof(catch_all_locals) /
				    sizeof(catch_all_locals[0]) ?
				    catch_all_locals[i] : NULL };
				enum verdict_catch_all ca =
				    verdict_catch_all_of(&f);
				if (ca != VERDICT_CA_SEND_SAFE &&
				    ca != VERDICT_CA_SEND_WITH_CAUTION &&
				    ca != VERDICT_CA_AVOID)
					fail_msg("\"%s\" (web %d, role %d): "
					    "catch-all verdict %d",
					    f.local ? f.local : "(null)", web,
					    role, (int)ca);
				seen[ca]++;
			}
	/* each of the three is given, to some address */
	assert_true(seen[VERDICT_CA_SEND_SAFE] > 0);
	assert_true(seen[VERDICT_CA_SEND_WITH_CAUTION] > 0);
	assert_true(seen[VERDICT_CA_AVOID] > 0);
}

static void
test_catch_all_score_follows_the_send_verdict(void **st)
{
	unsigned n;

	(void)st;
	for (n = 0; n < FACT_COMBINATIONS; n++) {
		struct verdict v = verdict_of(VERDICT_K_CATCH_ALL, 0);
		struct verdict_facts f = facts_of(n);
		int safe = verdict_score(&v, VERDICT_CA_SEND_SAFE, &f);
		int caution = verdict_score(&v, VERDICT_CA_SEND_WITH_CAUTION,
		    &f);
		int avoid = verdict_score(&v, VERDICT_CA_AVOID, &f);
		if (!(safe > caution && caution > avoid))
			fail_msg("facts %u: send_safe %d, send_with_caution "
			    "%d, avoid %d", n, safe, caution, avoid);
	}
}

static void
test_unknown_results_are_cached_15_minutes_at_most(void **st)
{
	int k;

	(void)st;
	for (k = 0; k < VERDICT_KIND__MAX; k++) {
		struct verdict v = verdict_of((enum verdict_kind)k, 0);
		long s = verdict_cache_seconds(&v);
		if (v.status == VERDICT_UNKNOWN)
			assert_in_range(s, 1, 900);
		else
			assert_true(s > 900);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_table_row_maps_to_the_api_vocabulary),
		cmocka_unit_test(test_typo_sets_possible_typo_only_for_syntax_and_domain),
		cmocka_unit_test(test_bulk_classification_maps_to_status_as_the_spec_says),
		cmocka_unit_test(test_score_formula),
		cmocka_unit_test(test_catch_all_verdict_heuristic),
		cmocka_unit_test(test_trap_local_patterns),
		cmocka_unit_test(test_sandbox_local_part_names_the_verdict),
		cmocka_unit_test(test_unknown_results_are_cached_15_minutes_at_most),
		cmocka_unit_test(test_every_score_is_an_integer_from_0_to_100),
		cmocka_unit_test(test_scores_follow_the_status),
		cmocka_unit_test(test_catch_all_verdict_takes_exactly_three_values),
		cmocka_unit_test(test_catch_all_score_follows_the_send_verdict),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
