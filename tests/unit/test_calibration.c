/* test_calibration.c: the calibrated score's numbers (calibration.h's
 * maths, worked out with exact fractions): the prior alone gives the
 * rules' score back; a few outcomes move it, shrunk towards the
 * classification's rate over all providers; many outcomes give the
 * observed rate; all delivered or all bounced reach 100 and 0; halves
 * round up; the threshold decides the basis; huge counts do not overflow;
 * a calibrated catch-all send verdict follows the score (never better
 * than the rules' avoid); and the table merges, sums and finds its rows. */
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
		int got = calibration_score(cases[i].rules, &p, &a);

		if (got != cases[i].want)
			fail_msg("%s: %d, want %d", cases[i].what, got,
			    cases[i].want);
	}
}

static void
test_threshold_decides_the_basis(void **st)
{
	struct calibration_counts p = { 6, 3 }, a = { 6, 3 };
	enum calibration_basis b;

	(void)st;
	/* 9 outcomes: below 10, the rules' score stands */
	assert_int_equal(calibration_apply(57, &p, &a, 10, &b), 57);
	assert_int_equal(b, CALIBRATION_RULES);
	p.delivered = a.delivered = 7;	/* 10 */
	assert_int_equal(calibration_apply(57, &p, &a, 10, &b), 70);
	assert_int_equal(b, CALIBRATION_CALIBRATED);
	assert_string_equal(calibration_basis_names[b], "calibrated");
	/* no row at all: rules, even with a threshold of 0 (taken as 1) */
	assert_int_equal(calibration_apply(57, NULL, &a, 0, &b), 57);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scores_are_exact),
		cmocka_unit_test(test_threshold_decides_the_basis),
		cmocka_unit_test(test_catch_all_verdict_follows_the_calibrated_score),
		cmocka_unit_test(test_table_merges_sums_and_finds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
