/* test_strparse.c: range-checked integer parsing (ranges, overflow, junk,
 * white space), boolean words, lists of durations, in-place trimming, case-folded comparison and
 * the constant-time comparison used for secrets. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util/strparse.h"

struct longcase {
	const char	*in;
	long		 min, max;
	int		 want;		/* 0 parsed, -1 refused */
	long		 value;
};

static const struct longcase long_cases[] = {
	{ "0", 0, 10, 0, 0 },
	{ "10", 0, 10, 0, 10 },		/* max is inclusive */
	{ "11", 0, 10, -1, 0 },
	{ "-1", 0, 10, -1, 0 },		/* below min */
	{ "-1", -1, 10, 0, -1 },
	{ "-10", -10, -5, 0, -10 },
	{ "-4", -10, -5, -1, 0 },
	{ "65535", 1, 65535, 0, 65535 },
	{ "65536", 1, 65535, -1, 0 },
	{ "007", 0, 10, 0, 7 },		/* decimal, not octal */
	{ "+5", 0, 10, 0, 5 },
	{ "9223372036854775807", LONG_MIN, LONG_MAX, 0, LONG_MAX },
	{ "-9223372036854775808", LONG_MIN, LONG_MAX, 0, LONG_MIN },
	{ "9223372036854775808", LONG_MIN, LONG_MAX, -1, 0 },	/* overflow */
	{ "-9223372036854775809", LONG_MIN, LONG_MAX, -1, 0 },
	{ "99999999999999999999999", LONG_MIN, LONG_MAX, -1, 0 },
	{ "", 0, 10, -1, 0 },
	{ " 5", 0, 10, -1, 0 },		/* leading space */
	{ "\t5", 0, 10, -1, 0 },
	{ "\n5", 0, 10, -1, 0 },
	{ "5 ", 0, 10, -1, 0 },		/* trailing junk */
	{ "5\n", 0, 10, -1, 0 },
	{ "5x", 0, 10, -1, 0 },
	{ "x5", 0, 10, -1, 0 },
	{ "0x10", 0, 100, -1, 0 },
	{ "1e2", 0, 1000, -1, 0 },
	{ "1.5", 0, 10, -1, 0 },
	{ "-", 0, 10, -1, 0 },
	{ "+", 0, 10, -1, 0 },
	{ "--1", -10, 10, -1, 0 },
	{ "1,000", 0, 10000, -1, 0 },
};

static void
test_strparse_long_accepts_only_whole_decimals_in_range(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(long_cases) / sizeof(long_cases[0]); i++) {
		const struct longcase *c = &long_cases[i];
		long v = 12345;

		print_message("case %zu: \"%s\" in %ld..%ld\n", i, c->in,
		    c->min, c->max);
		assert_int_equal(strparse_long(c->in, c->min, c->max, &v),
		    c->want);
		if (c->want == 0)
			assert_int_equal(v, c->value);
		else
			assert_int_equal(v, 12345);	/* untouched */
	}
}

static void
test_strparse_long_refuses_null(void **state)
{
	long v = 7;

	(void)state;
	assert_int_equal(strparse_long(NULL, 0, 10, &v), -1);
	assert_int_equal(v, 7);
}

struct boolcase {
	const char	*in;
	int		 want;
	int		 value;
};

static const struct boolcase bool_cases[] = {
	{ "yes", 0, 1 }, { "YES", 0, 1 }, { "Yes", 0, 1 }, { "true", 0, 1 },
	{ "TRUE", 0, 1 }, { "1", 0, 1 }, { "on", 0, 1 }, { "ON", 0, 1 },
	{ "no", 0, 0 }, { "NO", 0, 0 }, { "false", 0, 0 }, { "False", 0, 0 },
	{ "0", 0, 0 }, { "off", 0, 0 }, { "OFF", 0, 0 },
	{ "", -1, 0 }, { "2", -1, 0 }, { "y", -1, 0 }, { "n", -1, 0 },
	{ " yes", -1, 0 }, { "yes ", -1, 0 }, { "enable", -1, 0 },
	{ "01", -1, 0 }, { "yess", -1, 0 }, { "nope", -1, 0 },
};

static void
test_strparse_bool_knows_yes_no_words_and_nothing_else(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bool_cases) / sizeof(bool_cases[0]); i++) {
		int v = 42;

		print_message("case %zu: \"%s\"\n", i, bool_cases[i].in);
		assert_int_equal(strparse_bool(bool_cases[i].in, &v),
		    bool_cases[i].want);
		assert_int_equal(v, bool_cases[i].want == 0 ?
		    bool_cases[i].value : 42);
	}
}

static const struct {
	const char	*in;
	const char	*out;
} trim_cases[] = {
	{ "", "" },
	{ "   ", "" },
	{ "abc", "abc" },
	{ " abc", "abc" },
	{ "abc ", "abc" },
	{ "  a b  ", "a b" },
	{ "\t\r\na\tb\r\n", "a\tb" },
	{ "\v\fx\v\f", "x" },
	{ "x", "x" },
};

static void
test_strparse_trim_removes_outer_white_space_only(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(trim_cases) / sizeof(trim_cases[0]); i++) {
		char tmp[64], *r;

		snprintf(tmp, sizeof(tmp), "%s", trim_cases[i].in);
		r = strparse_trim(tmp);
		assert_string_equal(r, trim_cases[i].out);
		/* the result points into the caller's buffer */
		assert_true(r >= tmp && r <= tmp + strlen(trim_cases[i].in));
	}
}

static void
test_strparse_ieq_folds_ascii_case_only(void **state)
{
	(void)state;
	assert_true(strparse_ieq("Bearer", "bEARER"));
	assert_true(strparse_ieq("", ""));
	assert_false(strparse_ieq("abc", "abd"));
	assert_false(strparse_ieq("a", "ab"));
	assert_false(strparse_ieq("ab", "a"));
}

static void
test_strparse_consttime_eq_compares_exactly_n_bytes(void **state)
{
	static const char a[] = "secret-value-0123456789";
	char b[sizeof(a)];
	size_t i;

	(void)state;
	memcpy(b, a, sizeof(a));
	assert_true(strparse_consttime_eq(a, b, sizeof(a)));
	assert_true(strparse_consttime_eq(a, b, 0));
	/* A difference at any position is seen... */
	for (i = 0; i < sizeof(a); i++) {
		memcpy(b, a, sizeof(a));
		b[i] ^= 0x01;
		assert_false(strparse_consttime_eq(a, b, sizeof(a)));
		b[i] ^= 0x81;		/* high bit too */
		assert_false(strparse_consttime_eq(a, b, sizeof(a)));
		/* ...but bytes past n are not compared. */
		assert_true(strparse_consttime_eq(a, b, i));
	}
	/* Embedded NULs are compared like any byte. */
	assert_false(strparse_consttime_eq("a\0b", "a\0c", 3));
	assert_true(strparse_consttime_eq("a\0b", "a\0b", 3));
}

static void
test_strparse_copy_cuts_to_fit_and_always_terminates(void **state)
{
	char d[5];

	(void)state;
	strparse_copy(d, sizeof(d), "abc");
	assert_string_equal(d, "abc");
	strparse_copy(d, sizeof(d), "abcdefgh");
	assert_string_equal(d, "abcd");
	strparse_copy(d, sizeof(d), NULL);
	assert_string_equal(d, "");
	strparse_copy(d, 1, "xyz");
	assert_string_equal(d, "");
	/* never inside a UTF-8 character: "ab" + "\xe2\x82\xac" (the
	 * euro sign) does not fit 4 bytes whole */
	strparse_copy(d, sizeof(d), "ab\xe2\x82\xac");
	assert_string_equal(d, "ab");
	strparse_copy(d, sizeof(d), "abc\xc3\xa9");
	assert_string_equal(d, "abc");
	strparse_copy(d, sizeof(d), "a\xc3\xa9z");
	assert_string_equal(d, "a\xc3\xa9z");
	assert_int_equal(strparse_utf8_cut("ab\xe2\x82\xac", 5, 4), 2);
	assert_int_equal(strparse_utf8_cut("ab\xe2\x82\xac", 5, 5), 5);
	assert_int_equal(strparse_utf8_cut("abcdef", 6, 3), 3);
}

static void
test_strparse_utf8_chars_counts_code_points_and_refuses_bad_utf8(void **state)
{
	(void)state;
	assert_int_equal(strparse_utf8_chars(""), 0);
	assert_int_equal(strparse_utf8_chars("abc"), 3);
	assert_int_equal(strparse_utf8_chars("B\xc3\xbc" "cher"), 6);
	assert_int_equal(strparse_utf8_chars("\xe2\x82\xac"), 1);	/* euro */
	assert_int_equal(strparse_utf8_chars("\xf0\x9f\x98\x80!"), 2);
	assert_int_equal(strparse_utf8_chars("\xc0\xaf"), -1);	/* overlong */
	assert_int_equal(strparse_utf8_chars("\xe0\x80\xaf"), -1);
	assert_int_equal(strparse_utf8_chars("\xed\xa0\x80"), -1);	/* surrogate */
	assert_int_equal(strparse_utf8_chars("\xf4\x90\x80\x80"), -1);
	assert_int_equal(strparse_utf8_chars("a\xc3"), -1);	/* cut short */
	assert_int_equal(strparse_utf8_chars("\xff"), -1);
	assert_int_equal(strparse_utf8_chars("caf\xe9"), -1);	/* Latin-1 */
}

struct durcase {
	const char	*in;
	int		 want;		/* 0 parsed, -1 refused */
	size_t		 n;
	long		 v[4];
};

static const struct durcase dur_cases[] = {
	{ "60", 0, 1, { 60 } },
	{ "1m 5m 30m 2h", 0, 4, { 60, 300, 1800, 7200 } },
	{ " 1s,2, 3h\t1d ", 0, 4, { 1, 2, 10800, 86400 } },
	{ "30d", 0, 1, { 2592000 } },		/* the largest */
	{ "2592000", 0, 1, { 2592000 } },
	{ "1,,2", 0, 2, { 1, 2 } },
	{ "31d", -1, 0, { 0 } },
	{ "2592001", -1, 0, { 0 } },
	{ "0", -1, 0, { 0 } },			/* at least a second */
	{ "0m", -1, 0, { 0 } },
	{ "", -1, 0, { 0 } },
	{ " , ", -1, 0, { 0 } },
	{ "5x", -1, 0, { 0 } },
	{ "m", -1, 0, { 0 } },
	{ "5mm", -1, 0, { 0 } },
	{ "-5", -1, 0, { 0 } },
	{ "+5", -1, 0, { 0 } },
	{ "1.5h", -1, 0, { 0 } },
	{ "99999999999999999999", -1, 0, { 0 } },
	{ "1 2 3 4 5", -1, 0, { 0 } },		/* more than max (4) */
};

static void
test_strparse_durations_reads_units_and_refuses_the_rest(void **state)
{
	long v[4];
	size_t i, j, n;

	(void)state;
	for (i = 0; i < sizeof(dur_cases) / sizeof(dur_cases[0]); i++) {
		const struct durcase *c = &dur_cases[i];

		print_message("\"%s\"\n", c->in);
		assert_int_equal(strparse_durations(c->in, v, 4, &n), c->want);
		assert_int_equal(n, c->n);
		for (j = 0; j < n; j++)
			assert_int_equal(v[j], c->v[j]);
	}
	assert_int_equal(strparse_durations(NULL, v, 4, &n), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strparse_long_accepts_only_whole_decimals_in_range),
		cmocka_unit_test(test_strparse_long_refuses_null),
		cmocka_unit_test(test_strparse_bool_knows_yes_no_words_and_nothing_else),
		cmocka_unit_test(test_strparse_trim_removes_outer_white_space_only),
		cmocka_unit_test(test_strparse_ieq_folds_ascii_case_only),
		cmocka_unit_test(test_strparse_consttime_eq_compares_exactly_n_bytes),
		cmocka_unit_test(test_strparse_copy_cuts_to_fit_and_always_terminates),
		cmocka_unit_test(test_strparse_utf8_chars_counts_code_points_and_refuses_bad_utf8),
		cmocka_unit_test(test_strparse_durations_reads_units_and_refuses_the_rest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
