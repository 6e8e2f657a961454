/* test_calibration.c: the calibrated score's numbers (calibration.h's
 * maths, worked out with exact fractions): the prior alone gives the
 * rules' score back; a few outcomes move it, shrunk towards the
 * classification's rate over all providers; many outcomes give the
 * observed rate; all delivered or all bounced reach 100 and 0; halves
 * round up; the threshold decides the basis; huge counts do not overflow;
 * a calibrated catch-all send verdict follows the score (never better
 * than the rules' avoid); a mail host's outcomes move its score from its
 * provider's, shrunk towards it; and the table merges, sums and finds its
 * rows, the mail hosts' apart. */
#include "engine/calibration.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

static const struct {
	const char	*what;
	int		 rules;
	long long	 dp, bp, dc, bc;	/* provider's, all providers' */
	int		 want;
} cases[] = {
	/* no outcome anywhere: m = s, r = m */
	{ "prior only", 57, 0, 0, 0, 0, 57 },
	{ "prior only, rules 0", 0, 0, 0, 0, 0, 0 },
	{ "prior only, rules 100", 100, 0, 0, 0, 0, 100 },
	/* m = 3.9/5 = 0.78, r = 4.56/5 = 0.912 */
	{ "three delivered", 45, 3, 0, 3, 0, 91 },
	/* one bounce: m = 0.9/3, r = 0.6/3 = 0.2 */
	{ "one bounce", 45, 0, 1, 0, 1, 20 },
	/* 7 of 10 delivered: r = 2507/36 % = 69.64 */
	{ "seven of ten delivered", 57, 7, 3, 7, 3, 70 },
	/* a provider's single delivery is pulled towards its class's 10%:
	 * m = 10.9/102, r = (1 + 2m)/3 = 40.46% */
	{ "few outcomes, shrunk to the class", 45, 1, 0, 10, 90, 40 },
	/* many: the observed 90% whatever the prior */
	{ "many outcomes", 45, 900, 100, 9000, 1000, 90 },
	{ "many outcomes, rules 0", 0, 900, 100, 9000, 1000, 90 },
	/* extreme shares */
	{ "all delivered", 45, 1000, 0, 1000, 0, 100 },
	{ "all bounced", 95, 0, 1000, 0, 1000, 0 },
	/* exactly 37.5: half up */
	{ "a half rounds up", 0, 1, 1, 1, 1, 38 },
	/* counts too large to multiply are halved together */
	{ "huge counts", 45, 1000000000000LL, 1000000000000LL,
	    4000000000000LL, 4000000000000LL, 50 },
	/* bad input is taken as nothing */
	{ "negative counts", 57, -5, -5, -1, 0, 57 },
	{ "rules out of range", 140, 0, 0, 0, 0, 100 },
};

static void
test_scores_are_exact(void **st)
{
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct calibration_counts p = { cases[i].dp, cases[i].bp };
		struct calibration_counts a = { cases[i].dc, cases[i].bc };
		int got = calibration_score(cases[i].rules, NULL, &p, &a);

		if (got != cases[i].want)
			fail_msg("%s: %d, want %d", cases[i].what, got,
			    cases[i].want);
	}
}

/* The mail host's level (calibration.h: q = (D_h + K r) / (N_h + K)),
 * worked out with exact fractions: a host with no outcome scores as its
 * provider; two hosts of one provider move apart by their own outcomes,
 * each shrunk towards the provider's rate. */
static const struct {
	const char	*what;
	int		 rules;
	long long	 dh, bh, dp, bp, dc, bc;	/* host's, provider's, all */
	int		 want;
} host_cases[] = {
	/* r = 2507/36 %: no outcome at the host, q = r */
	{ "host without outcome", 57, 0, 0, 7, 3, 7, 3, 70 },
	/* q = (6 + 2r)/8 = 92.41% */
	{ "the host that delivered", 57, 6, 0, 7, 3, 7, 3, 92 },
	/* q = (1 + 2r)/6 = 39.88% */
	{ "the host that bounced", 57, 1, 3, 7, 3, 7, 3, 40 },
	/* a host's hundred bounces against its provider's 90%: 1.76% */
	{ "a bad host of a good provider", 45, 0, 100, 900, 100, 9000, 1000,
	    2 },
	{ "a good host of a good provider", 45, 900, 100, 900, 100, 9000,
	    1000, 90 },
	/* m = r = q's prior: 87.5 exactly, half up */
	{ "a half rounds up", 0, 2, 0, 2, 0, 2, 0, 88 },
	/* products past 64 bits (counts halved to 10^8): 50 */
	{ "huge counts", 45, 1000000000000LL, 1000000000000LL,
	    1000000000000LL, 1000000000000LL, 4000000000000LL,
	    4000000000000LL, 50 },
	{ "negative host counts", 57, -4, -4, 7, 3, 7, 3, 70 },
};

static void
test_host_scores_are_exact(void **st)
{
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(host_cases) / sizeof(host_cases[0]); i++) {
		struct calibration_counts h = { host_cases[i].dh,
		    host_cases[i].bh };
		struct calibration_counts p = { host_cases[i].dp,
		    host_cases[i].bp };
		struct calibration_counts a = { host_cases[i].dc,
		    host_cases[i].bc };
		int got = calibration_score(host_cases[i].rules, &h, &p, &a);

		if (got != host_cases[i].want)
			fail_msg("%s: %d, want %d", host_cases[i].what, got,
			    host_cases[i].want);
	}
}

static void
test_threshold_decides_the_basis(void **st)
{
	struct calibration_counts p = { 6, 3 }, a = { 6, 3 };
	enum calibration_basis b;

	(void)st;
	struct calibration_counts h = { 6, 0 };

	/* 9 outcomes: below 10, the rules' score stands */
	assert_int_equal(calibration_apply(57, NULL, &p, &a, 10, &b), 57);
	assert_int_equal(b, CALIBRATION_RULES);
	/* the provider's count decides, not the host's */
	assert_int_equal(calibration_apply(57, &h, &p, &a, 10, &b), 57);
	assert_int_equal(b, CALIBRATION_RULES);
	p.delivered = a.delivered = 7;	/* 10 */
	assert_int_equal(calibration_apply(57, NULL, &p, &a, 10, &b), 70);
	assert_int_equal(b, CALIBRATION_CALIBRATED);
	assert_string_equal(calibration_basis_names[b], "calibrated");
	/* and then the host's outcomes move it */
	assert_int_equal(calibration_apply(57, &h, &p, &a, 10, &b), 92);
	assert_int_equal(b, CALIBRATION_CALIBRATED);
	/* no row at all: rules, even with a threshold of 0 (taken as 1) */
	assert_int_equal(calibration_apply(57, &h, NULL, &a, 0, &b), 57);
	assert_int_equal(b, CALIBRATION_RULES);
	assert_int_equal(calibration_basis_parse("calibrated", &b), 0);
	assert_int_equal(b, CALIBRATION_CALIBRATED);
	assert_int_equal(calibration_basis_parse(NULL, &b), -1);
	assert_int_equal(b, CALIBRATION_RULES);
}

static void
test_catch_all_verdict_follows_the_calibrated_score(void **st)
{
	static const struct {
		enum verdict_catch_all rules;
		int score;
		enum verdict_catch_all want;
	} c[] = {
		{ VERDICT_CA_SEND_SAFE, 70, VERDICT_CA_AVOID },
		{ VERDICT_CA_SEND_SAFE, 79, VERDICT_CA_AVOID },
		{ VERDICT_CA_SEND_SAFE, 80, VERDICT_CA_SEND_WITH_CAUTION },
		{ VERDICT_CA_SEND_SAFE, 94, VERDICT_CA_SEND_WITH_CAUTION },
		{ VERDICT_CA_SEND_WITH_CAUTION, 95, VERDICT_CA_SEND_SAFE },
		{ VERDICT_CA_SEND_WITH_CAUTION, 100, VERDICT_CA_SEND_SAFE },
		{ VERDICT_CA_SEND_WITH_CAUTION, 0, VERDICT_CA_AVOID },
		/* the rules' avoid stays, however well the host delivers */
		{ VERDICT_CA_AVOID, 100, VERDICT_CA_AVOID },
		/* not a catch-all verdict: none */
		{ VERDICT_CA_NONE, 100, VERDICT_CA_NONE },
	};
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (calibration_catch_all(c[i].rules, c[i].score, 95, 80) !=
		    c[i].want)
			fail_msg("case %zu: %s", i, verdict_catch_all_names[
			    calibration_catch_all(c[i].rules, c[i].score, 95,
			    80)]);
}

static void
test_table_merges_sums_and_finds(void **st)
{
	struct calibration_table t;
	struct calibration_counts p, a;

	(void)st;
	memset(&t, 0, sizeof(t));
	assert_int_equal(calibration_table_add(&t, "yahoo", VERDICT_C_VALID,
	    5, 1), 0);
	assert_int_equal(calibration_table_add(&t, "google",
	    VERDICT_C_CATCH_ALL, 7, 3), 0);
	assert_int_equal(calibration_table_add(&t, "example.com",
	    VERDICT_C_CATCH_ALL, 2, 8), 0);
	assert_int_equal(calibration_table_add(&t, "google",
	    VERDICT_C_CATCH_ALL, 1, 0), 0);
	calibration_table_done(&t);
	assert_int_equal(t.n, 3);
	calibration_table_find(&t, "google", VERDICT_C_CATCH_ALL, &p, &a);
	assert_int_equal(p.delivered, 8);
	assert_int_equal(p.bounced, 3);
	assert_int_equal(a.delivered, 10);
	assert_int_equal(a.bounced, 11);
	calibration_table_find(&t, "google", VERDICT_C_VALID, &p, &a);
	assert_int_equal(p.delivered + p.bounced, 0);
	assert_int_equal(a.delivered, 5);
	calibration_table_find(&t, "nobody.test", VERDICT_C_CATCH_ALL, &p, &a);
	assert_int_equal(p.delivered + p.bounced, 0);
	assert_int_equal(a.bounced, 11);
	calibration_table_free(&t);
	calibration_table_find(&t, "google", VERDICT_C_CATCH_ALL, &p, &a);
	assert_int_equal(p.delivered + a.delivered, 0);
}

static void
test_table_finds_mail_hosts_apart_from_providers(void **st)
{
	struct calibration_table t;
	struct calibration_counts h, p, a;

	(void)st;
	memset(&t, 0, sizeof(t));
	assert_int_equal(calibration_table_add(&t, "example.com",
	    VERDICT_C_CATCH_ALL, 7, 3), 0);
	assert_int_equal(calibration_table_add_host(&t, "mx2.example.com",
	    VERDICT_C_CATCH_ALL, 1, 3), 0);
	assert_int_equal(calibration_table_add_host(&t, "mx1.example.com",
	    VERDICT_C_CATCH_ALL, 4, 0), 0);
	assert_int_equal(calibration_table_add_host(&t, "mx1.example.com",
	    VERDICT_C_CATCH_ALL, 2, 0), 0);
	calibration_table_done(&t);
	assert_int_equal(t.nhosts, 2);
	calibration_table_find_host(&t, "mx1.example.com", VERDICT_C_CATCH_ALL,
	    &h);
	assert_int_equal(h.delivered, 6);
	assert_int_equal(h.bounced, 0);
	calibration_table_find_host(&t, "mx2.example.com", VERDICT_C_CATCH_ALL,
	    &h);
	assert_int_equal(h.delivered, 1);
	assert_int_equal(h.bounced, 3);
	calibration_table_find_host(&t, "mx2.example.com", VERDICT_C_VALID, &h);
	assert_int_equal(h.delivered + h.bounced, 0);
	calibration_table_find_host(&t, NULL, VERDICT_C_CATCH_ALL, &h);
	assert_int_equal(h.delivered + h.bounced, 0);
	/* hosts are not providers: the class's sums are the providers' */
	calibration_table_find(&t, "mx1.example.com", VERDICT_C_CATCH_ALL, &p,
	    &a);
	assert_int_equal(p.delivered + p.bounced, 0);
	assert_int_equal(a.delivered, 7);
	assert_int_equal(a.bounced, 3);
	calibration_table_free(&t);
	assert_int_equal(t.nhosts, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scores_are_exact),
		cmocka_unit_test(test_host_scores_are_exact),
		cmocka_unit_test(test_table_finds_mail_hosts_apart_from_providers),
		cmocka_unit_test(test_threshold_decides_the_basis),
		cmocka_unit_test(test_catch_all_verdict_follows_the_calibrated_score),
		cmocka_unit_test(test_table_merges_sums_and_finds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
