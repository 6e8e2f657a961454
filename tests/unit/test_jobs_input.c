/* test_jobs_input.c: the unique entries of a job: trimmed, cut to 320
 * octets, de-duplicated on the normal form (case, Unicode forms of the
 * domain, U-label and A-label of one domain, needless quotes) with the
 * first spelling kept, non-addresses on their lower-cased text, plus tags
 * and non-ASCII case kept apart; the A-label domain of each, the sandbox
 * count, the entries that are no address and the cost (they are free, and
 * so are sandbox addresses for a sandbox key), the maximum, a large list keeping input order, and the memory
 * the input may hold. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/jobs.h"

#define SANDBOX "sandbox.svc.test"

struct icase {
	const char	*entries[8];
	const char	*kept;		/* emails joined with "|" */
	const char	*domains;	/* domains joined with "|" */
	size_t		 duplicates, sandbox;
	size_t		 invalid;	/* entries not shaped like an address */
};

static const struct icase cases[] = {
	{ { "a@x.example", "A@X.EXAMPLE", " a@x.example\t" },
	    "a@x.example", "x.example", 2, 0, 0 },
	{ { "User@\xef\xbd\x85\xef\xbd\x98\xef\xbd\x81\xef\xbd\x8d"
	    "\xef\xbd\x90\xef\xbd\x8c\xef\xbd\x85.com", "user@example.com",
	    "USER@EXAMPLE.COM" },
	    "User@\xef\xbd\x85\xef\xbd\x98\xef\xbd\x81\xef\xbd\x8d"
	    "\xef\xbd\x90\xef\xbd\x8c\xef\xbd\x85.com", "example.com", 2, 0, 0 },
	{ { "a@b\xc3\xbc" "cher.example", "A@xn--bcher-kva.example",
	    "a@B\xc3\x9c" "CHER.example" },
	    "a@b\xc3\xbc" "cher.example", "xn--bcher-kva.example", 2, 0, 0 },
	{ { "a@xn--bcher-kva.example", "a@b\xc3\xbc" "cher.example" },
	    "a@xn--bcher-kva.example", "xn--bcher-kva.example", 1, 0, 0 },
	{ { "\"a\"@x.example", "a@x.example" },
	    "\"a\"@x.example", "x.example", 1, 0, 0 },
	{ { "\xc3\x84@x.example", "\xc3\xa4@x.example" },
	    "\xc3\x84@x.example|\xc3\xa4@x.example", "x.example|x.example",
	    0, 0, 0 },
	{ { "a+b@x.example", "a@x.example", "a.b@x.example", "ab@x.example" },
	    "a+b@x.example|a@x.example|a.b@x.example|ab@x.example",
	    "x.example|x.example|x.example|x.example", 0, 0, 0 },
	{ { "not an address", "NOT AN ADDRESS", "not  an address",
	    "a@-x.example" },
	    "not an address|not  an address|a@-x.example", "||", 1, 0, 3 },
	{ { "x@sandbox.svc.test", "X@SANDBOX.SVC.TEST", "y@sandbox.svc.test",
	    "z@other.example" },
	    "x@sandbox.svc.test|y@sandbox.svc.test|z@other.example",
	    "sandbox.svc.test|sandbox.svc.test|other.example", 1, 2, 0 },
	{ { "a@x.example", "jane@gmail,com", "@x.example", "x@sandbox.svc.test",
	    "b@x.example", "JANE@GMAIL,COM" },
	    "a@x.example|jane@gmail,com|@x.example|x@sandbox.svc.test|"
	    "b@x.example", "x.example|||sandbox.svc.test|x.example", 1, 1, 2 },
	{ { "User@Example.COM", "", "  " }, "User@Example.COM",
	    "example.com", 0, 0, 0 },
};

static void
join(char *out, size_t n, char *const *v, size_t count)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; i < count; i++) {
		if (i)
			strncat(out, "|", n - strlen(out) - 1);
		strncat(out, v[i], n - strlen(out) - 1);
	}
}

static void
test_jobs_input_keeps_one_spelling_per_normal_form(void **state)
{
	struct jobs_input in;
	char got[1024];
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(jobs_input_init(&in, 100, SANDBOX), 0);
		for (j = 0; j < 8 && cases[i].entries[j]; j++)
			assert_int_equal(jobs_input_add(&in,
			    cases[i].entries[j], strlen(cases[i].entries[j])),
			    JOBS_OK);
		assert_int_equal(jobs_input_end(&in), JOBS_OK);
		join(got, sizeof(got), in.emails, in.n);
		assert_string_equal(got, cases[i].kept);
		join(got, sizeof(got), in.domains, in.n);
		assert_string_equal(got, cases[i].domains);
		assert_int_equal(in.duplicates, cases[i].duplicates);
		assert_int_equal(in.sandbox, cases[i].sandbox);
		assert_int_equal(in.invalid, cases[i].invalid);
		/* charged: the addresses; a sandbox key's sandbox ones not */
		assert_int_equal(jobs_input_cost(&in, 0),
		    (long long)(in.n - cases[i].invalid));
		assert_int_equal(jobs_input_cost(&in, 1),
		    (long long)(in.n - cases[i].invalid - cases[i].sandbox));
		jobs_input_free(&in);
	}
}

static void
test_jobs_input_cuts_long_entries_and_ignores_blanks(void **state)
{
	struct jobs_input in;
	char longest[400];

	(void)state;
	memset(longest, 'x', sizeof(longest));
	assert_int_equal(jobs_input_init(&in, 100, SANDBOX), 0);
	assert_int_equal(jobs_input_add(&in, " \t\r\n", 4), JOBS_OK);
	assert_int_equal(jobs_input_end(&in), JOBS_EMPTY);
	assert_null(in.emails);
	jobs_input_free(&in);
	assert_int_equal(jobs_input_init(&in, 100, SANDBOX), 0);
	assert_int_equal(jobs_input_add(&in, longest, sizeof(longest)),
	    JOBS_OK);
	/* the same first 320 octets: the same entry */
	assert_int_equal(jobs_input_add(&in, longest, 330), JOBS_OK);
	assert_int_equal(jobs_input_end(&in), JOBS_OK);
	assert_int_equal(in.n, 1);
	assert_int_equal(strlen(in.emails[0]), 320);
	assert_string_equal(in.domains[0], "");
	assert_int_equal(in.duplicates, 1);
	jobs_input_free(&in);
}

static void
test_jobs_input_refuses_one_unique_entry_more_than_max(void **state)
{
	static const char *const v[] = {
		"a@x.example", "b@x.example", "A@x.example", "B@X.EXAMPLE",
		"c@x.example"
	};
	struct jobs_input in;
	size_t i;

	(void)state;
	assert_int_equal(jobs_input_init(&in, 2, SANDBOX), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(jobs_input_add(&in, v[i], strlen(v[i])),
		    JOBS_OK);
	assert_int_equal(jobs_input_add(&in, v[4], strlen(v[4])),
	    JOBS_TOO_MANY);
	jobs_input_free(&in);
}

/* 200,000 addresses, each twice (the second time in upper case): input
 * order, one row each, the domain of each. */
static void
test_jobs_input_large_list_in_input_order(void **state)
{
	struct jobs_input in;
	char s[64], want[64];
	size_t i, n = 200000;

	(void)state;
	assert_int_equal(jobs_input_init(&in, n, SANDBOX), 0);
	for (i = 0; i < n; i++) {
		snprintf(s, sizeof(s), "user%zu@d%zu.example", i, i % 977);
		assert_int_equal(jobs_input_add(&in, s, strlen(s)), JOBS_OK);
		snprintf(s, sizeof(s), "USER%zu@D%zu.EXAMPLE", i, i % 977);
		assert_int_equal(jobs_input_add(&in, s, strlen(s)), JOBS_OK);
	}
	assert_int_equal(jobs_input_end(&in), JOBS_OK);
	assert_int_equal(in.n, n);
	assert_int_equal(in.duplicates, n);
	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), "user%zu@d%zu.example", i,
		    i % 977);
		assert_string_equal(in.emails[i], want);
		snprintf(want, sizeof(want), "d%zu.example", i % 977);
		assert_string_equal(in.domains[i], want);
	}
	jobs_input_free(&in);
}

/* memory_max: entries are kept while the input, and what it is about to
 * allocate, stays within it; the one that would pass it is JOBS_TOO_BIG,
 * and a repeat still costs nothing. */
static void
test_jobs_input_stays_within_memory_max(void **state)
{
	struct jobs_input in;
	char s[64];
	size_t i, limit = 256 * 1024;
	enum jobs_err rc = JOBS_OK;

	(void)state;
	assert_int_equal(jobs_input_init(&in, 1000000, SANDBOX), 0);
	jobs_input_set_memory_max(&in, limit);
	for (i = 0; rc == JOBS_OK && i < 100000; i++) {
		snprintf(s, sizeof(s), "user%zu@d%zu.example", i, i % 97);
		rc = jobs_input_add(&in, s, strlen(s));
		assert_true(jobs_input_bytes(&in) <= limit);
	}
	assert_int_equal(rc, JOBS_TOO_BIG);
	assert_true(i > 1000);
	assert_true(jobs_input_bytes(&in) > limit / 2);
	assert_int_equal(jobs_input_add(&in, "USER0@D0.EXAMPLE", 16), JOBS_OK);
	assert_int_equal(in.duplicates, 1);
	jobs_input_free(&in);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_jobs_input_keeps_one_spelling_per_normal_form),
		cmocka_unit_test(
		    test_jobs_input_cuts_long_entries_and_ignores_blanks),
		cmocka_unit_test(
		    test_jobs_input_refuses_one_unique_entry_more_than_max),
		cmocka_unit_test(test_jobs_input_large_list_in_input_order),
		cmocka_unit_test(test_jobs_input_stays_within_memory_max),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
