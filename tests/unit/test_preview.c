/* test_preview.c: the preview's arithmetic: the sample size (2% rounded
 * up, at most 200), the estimate (resolved rows as they are, SMTP-bound
 * rows split by the sample's shares with largest remainders so the counts
 * add up, all unknown without a sample), the status groups, shares,
 * credits needed (not the rows that are no address: they are free) and
 * after refunds (catch-all is not refunded), and confidence. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "jobs/preview.h"

static void
test_preview_sample_size(void **state)
{
	(void)state;
	assert_int_equal(preview_sample_size(0, 1), 0);
	assert_int_equal(preview_sample_size(1, 1), 1);
	assert_int_equal(preview_sample_size(50, 1), 1);
	assert_int_equal(preview_sample_size(51, 1), 2);
	assert_int_equal(preview_sample_size(9999, 1), 200);
	assert_int_equal(preview_sample_size(10000, 1), 200);
	assert_int_equal(preview_sample_size(1000000, 1), 200);
	/* below preview_smtp_min_rows: no sample at all */
	assert_int_equal(preview_sample_size(1, 100), 0);
	assert_int_equal(preview_sample_size(99, 100), 0);
	assert_int_equal(preview_sample_size(100, 100), 2);
	assert_int_equal(preview_sample_size(5000, 100), 100);
}

static void
test_preview_estimate_adds_up(void **state)
{
	struct preview_tally t;
	long long est[PREVIEW_CLASS__MAX], sum = 0;
	int c;

	(void)state;
	memset(&t, 0, sizeof(t));
	t.total = 1000;
	t.resolved[PREVIEW_INVALID] = 90;
	t.resolved[PREVIEW_DISPOSABLE] = 10;
	t.resolved_without_smtp = 100;
	t.needs_smtp = 900;
	t.sample_size = 7;		/* 900 * k / 7 never divides evenly */
	t.sample[PREVIEW_VALID] = 4;	/* 514.28 */
	t.sample[PREVIEW_INVALID] = 1;	/* 128.57 */
	t.sample[PREVIEW_CATCH_ALL] = 2;	/* 257.14 */
	preview_estimate(&t, est);
	for (c = 0; c < PREVIEW_CLASS__MAX; c++)
		sum += est[c];
	assert_int_equal(sum, 1000);
	assert_int_equal(est[PREVIEW_VALID], 514);
	assert_int_equal(est[PREVIEW_INVALID], 90 + 129);	/* .57 is largest */
	assert_int_equal(est[PREVIEW_CATCH_ALL], 257);
	assert_int_equal(est[PREVIEW_DISPOSABLE], 10);
	/* no sample: the SMTP-bound rows are not known */
	t.sample_size = 0;
	memset(t.sample, 0, sizeof(t.sample));
	preview_estimate(&t, est);
	assert_int_equal(est[PREVIEW_UNKNOWN], 900);
	assert_int_equal(est[PREVIEW_INVALID], 90);
}

static long long
json_int(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);

	if (b != NULL)
		v = json_object_get(v, b);
	assert_non_null(v);
	return json_integer_value(v);
}

/* The interval named k of p is [lo, hi] (to 1e-4), and holds its
 * estimate. */
static void
assert_interval(json_t *p, const char *k, double lo, double hi)
{
	json_t *a = json_object_get(p, k);

	assert_true(json_is_array(a) && json_array_size(a) == 2);
	assert_float_equal(json_real_value(json_array_get(a, 0)), lo, 1e-4);
	assert_float_equal(json_real_value(json_array_get(a, 1)), hi, 1e-4);
}

/* Wilson's score interval against values computed by hand (z = 1.96):
 * 5/10 [0.2366, 0.7634], 0/10 [0, 0.2775], 10/100 [0.0552, 0.1744],
 * 5/5 [0.5655, 1], 10/50 [0.1124, 0.3304]; no trials: [0, 1]. */
static void
test_preview_wilson_known_values(void **state)
{
	static const struct {
		double p, n, lo, hi;
	} v[] = {
		{ 0.5, 10, 0.236593, 0.763407 },
		{ 0, 10, 0, 0.277533 },
		{ 0.1, 100, 0.055229, 0.174366 },
		{ 1, 5, 0.565518, 1 },
		{ 0.2, 50, 0.112438, 0.330371 },
		{ 0.3, 0, 0, 1 },
	};
	double lo, hi;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		preview_wilson(v[i].p, v[i].n, PREVIEW_Z95, &lo, &hi);
		assert_float_equal(lo, v[i].lo, 1e-6);
		assert_float_equal(hi, v[i].hi, 1e-6);
	}
}

/* Allocation: proportional, at least one a stratum, never more than its
 * rows, adding up to the sample. */
static void
test_preview_allocate(void **state)
{
	long long rows[4] = { 9000, 900, 90, 10 }, alloc[4];
	long long small[2] = { 3, 1000 }, a2[2];

	(void)state;
	preview_allocate(rows, 4, 200, alloc);
	/* ideal 180, 18, 1.8, 0.2: one each first, then the deficits */
	assert_int_equal(alloc[0], 180);
	assert_int_equal(alloc[1], 18);
	assert_int_equal(alloc[2], 1);
	assert_int_equal(alloc[3], 1);
	/* fewer rows than strata (the previewer merges the smallest first):
	 * proportional only */
	preview_allocate(rows, 4, 3, alloc);
	assert_int_equal(alloc[0] + alloc[1] + alloc[2] + alloc[3], 3);
	assert_int_equal(alloc[0], 3);
	preview_allocate(small, 2, 1003, a2);
	assert_int_equal(a2[0], 3);
	assert_int_equal(a2[1], 1000);
	preview_allocate(small, 2, 10, a2);
	assert_int_equal(a2[0], 1);
	assert_int_equal(a2[1], 9);
}

/* A big good provider and a small bad one: the strata's shares weighted
 * back by their rows, as counts of the sample that add up, and the
 * interval of the stratified design holds the true share. */
static void
test_preview_weigh_strata(void **state)
{
	struct preview_stratum st[2];
	struct preview_tally t;
	double lo, hi;

	(void)state;
	memset(&t, 0, sizeof(t));
	memset(st, 0, sizeof(st));
	/* 9000 rows, 180 sampled, all valid; 1000 rows, 20 sampled, half
	 * invalid: 5% invalid in all */
	st[0].rows = 9000;
	st[0].sample = 180;
	st[0].counts[PREVIEW_VALID] = 180;
	st[1].rows = 1000;
	st[1].sample = 20;
	st[1].counts[PREVIEW_VALID] = 10;
	st[1].counts[PREVIEW_INVALID] = 10;
	t.total = t.needs_smtp = 10000;
	t.strata = st;
	t.nstrata = 2;
	preview_weigh(&t);
	assert_int_equal(t.sample_size, 200);
	assert_int_equal(t.sample[PREVIEW_INVALID], 10);
	assert_int_equal(t.sample[PREVIEW_VALID], 190);
	preview_interval(&t, 1u << PREVIEW_INVALID, &lo, &hi);
	assert_true(lo < 0.05 && 0.05 < hi && lo > 0 && hi < 0.15);
	/* a stratum sampled whole is exact */
	st[1].sample = st[1].rows = 20;
	t.total = t.needs_smtp = 9020;
	st[0].rows = 9000;
	preview_weigh(&t);
	preview_interval(&t, 1u << PREVIEW_INVALID, &lo, &hi);
	assert_true(lo <= 10.0 / 9020 && 10.0 / 9020 <= hi);
}

static void
test_preview_json_fields_and_confidence(void **state)
{
	struct preview_tally t;
	json_t *p;

	(void)state;
	memset(&t, 0, sizeof(t));
	t.total = 400;
	t.credits = 390;	/* 10 of the 20 syntax_invalid are no address */
	t.duplicates = 12;
	t.syntax_invalid = 20;
	t.suppressed = 5;
	t.resolved[PREVIEW_INVALID] = 25;
	t.resolved_without_smtp = 25;
	t.needs_smtp = 375;
	t.sample_size = 8;
	t.sample[PREVIEW_VALID] = 4;
	t.sample[PREVIEW_UNKNOWN] = 2;
	t.sample[PREVIEW_CATCH_ALL] = 2;
	/* 375 rows by 4/2/2 of 8: 187.5, 93.75, 93.75; the two left over go
	 * to the largest remainders (catch-all and unknown) */
	p = preview_json(&t, 86400);
	assert_string_equal(json_string_value(json_object_get(p,
	    "computed_at")), "1970-01-02T00:00:00Z");
	assert_int_equal(json_int(p, "total_emails", NULL), 400);
	assert_int_equal(json_int(p, "duplicates_removed", NULL), 12);
	assert_int_equal(json_int(p, "free_checks", "suppressed"), 5);
	assert_int_equal(json_int(p, "free_checks", "needs_smtp"), 375);
	assert_int_equal(json_int(p, "smtp_sample", "size"), 8);
	assert_non_null(json_string_value(json_object_get(json_object_get(p,
	    "smtp_sample"), "method")));
	assert_int_equal(json_int(p, "estimated_counts", "valid"), 187);
	assert_int_equal(json_int(p, "estimated_counts", "unknown"), 94);
	assert_int_equal(json_int(p, "estimated_counts", "catch_all"), 94);
	assert_int_equal(json_int(p, "estimated_by_status", "deliverable"),
	    187);
	assert_int_equal(json_int(p, "estimated_by_status", "undeliverable"),
	    25);
	assert_int_equal(json_int(p, "estimated_by_status", "unknown"), 188);
	assert_int_equal(json_int(p, "total_emails", NULL), 400);
	assert_int_equal(json_int(p, "credits_needed", NULL), 390);
	/* unknown results are refunded, catch-all ones are not */
	assert_int_equal(json_int(p, "estimated_credits_after_refunds", NULL),
	    390 - 94);
	assert_float_equal(json_real_value(json_object_get(p,
	    "estimated_bounce_rate")), 25.0 / 400, 1e-9);
	assert_float_equal(json_real_value(json_object_get(p,
	    "unknown_share")), 188.0 / 400, 1e-9);
	assert_float_equal(json_real_value(json_object_get(p,
	    "catch_all_share")), 94.0 / 400, 1e-9);
	/* unknown: 4 of 8 (n_eff 8 / (1 - 8/375)) on 375 rows of 400; the
	 * 4 coarsened classes outside may have given unknown up to 16 rows:
	 * Wilson's from 0/8 (low end 0) to 4/8 (high end 0.7827) */
	assert_interval(p, "unknown_share_interval", 0, 375 * 0.782710 / 400);
	/* bounce: the 25 resolved rows, and 0 of 8 in the sample, up to 4
	 * of 8 before coarsening: Wilson's 0 to 0.7827 */
	assert_interval(p, "estimated_bounce_rate_interval", 25.0 / 400,
	    (25 + 375 * 0.782710) / 400);
	assert_string_equal(json_string_value(json_object_get(p,
	    "confidence")), "low");
	json_decref(p);
	t.sample_size = 100;
	p = preview_json(&t, 0);
	assert_string_equal(json_string_value(json_object_get(p,
	    "confidence")), "high");
	json_decref(p);
	t.sample_size = 0;
	p = preview_json(&t, 0);
	assert_string_equal(json_string_value(json_object_get(p,
	    "confidence")), "low");
	json_decref(p);
	t.needs_smtp = 0;
	p = preview_json(&t, 0);
	assert_string_equal(json_string_value(json_object_get(p,
	    "confidence")), "high");
	json_decref(p);
}

/* No published count of the sample is one row's verdict: every
 * classification but unknown in steps of PREVIEW_SAMPLE_CELL, the rest
 * unknown, the size kept. */
static void
test_preview_coarsen(void **state)
{
	struct preview_tally t;
	long long sum = 0;
	int c;

	(void)state;
	memset(&t, 0, sizeof(t));
	t.sample_size = 20;
	t.sample[PREVIEW_VALID] = 13;
	t.sample[PREVIEW_INVALID] = 1;
	t.sample[PREVIEW_RISKY] = 5;
	t.sample[PREVIEW_UNKNOWN] = 1;
	preview_coarsen(&t);
	assert_int_equal(t.sample[PREVIEW_VALID], 10);
	assert_int_equal(t.sample[PREVIEW_INVALID], 0);
	assert_int_equal(t.sample[PREVIEW_RISKY], 5);
	assert_int_equal(t.sample[PREVIEW_CATCH_ALL], 0);
	assert_int_equal(t.sample[PREVIEW_UNKNOWN], 5);
	for (c = 0; c < PREVIEW_CLASS__MAX; c++)
		sum += t.sample[c];
	assert_int_equal(sum, 20);
	assert_int_equal(t.sample_size, 20);
	/* a sample of one: its verdict becomes unknown */
	memset(&t, 0, sizeof(t));
	t.sample_size = 1;
	t.sample[PREVIEW_INVALID] = 1;
	preview_coarsen(&t);
	assert_int_equal(t.sample[PREVIEW_INVALID], 0);
	assert_int_equal(t.sample[PREVIEW_UNKNOWN], 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preview_sample_size),
		cmocka_unit_test(test_preview_wilson_known_values),
		cmocka_unit_test(test_preview_allocate),
		cmocka_unit_test(test_preview_weigh_strata),
		cmocka_unit_test(test_preview_estimate_adds_up),
		cmocka_unit_test(test_preview_coarsen),
		cmocka_unit_test(test_preview_json_fields_and_confidence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
