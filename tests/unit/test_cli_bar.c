/* test_cli_bar.c: the lines of svc's --wait: the bar fitted to the
 * terminal's width (never narrower than 10), its fill by percent, the
 * plain line, ETAs, and an upload being read. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cli/bar.h"

static void
test_eta(void **state)
{
	static const struct { long s; const char *want; } m[] = {
		{ -1, "--" }, { 0, "0:00" }, { 25, "0:25" }, { 725, "12:05" },
		{ 3723, "1:02:03" }, { 360000, "100:00:00" },
	};
	char out[24];
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		bar_eta(out, m[i].s);
		assert_string_equal(out, m[i].want);
	}
}

static void
test_line(void **state)
{
	struct bar_state st = { "job_1", "processing", 1000, 450, 45, 1200,
	    25, 0, 0 };
	struct buf b;

	buf_init(&b, 4096);
	assert_int_equal(bar_line(&b, &st, 80), 0);
	/* 80 - 5 - 10 - 28 - 14 = 23 columns of bar, 45% of them filled:
	 * the line is 80 wide */
	assert_string_equal(buf_str(&b), "job_1  processing  "
	    "[##########-------------]   45%  450/1000  1200/min  ETA 0:25");
	assert_int_equal(strlen(buf_str(&b)), 80);
	buf_reset(&b);
	assert_int_equal(bar_line(&b, &st, 20), 0);	/* narrow: 10 at least */
	assert_non_null(strstr(buf_str(&b), "[####------]"));
	buf_reset(&b);
	st.percent = 100;
	st.eta = -1;
	assert_int_equal(bar_line(&b, &st, 500), 0);	/* wide: 50 at most */
	assert_non_null(strstr(buf_str(&b), "[##################################################]  100%"));
	assert_non_null(strstr(buf_str(&b), "ETA --"));
	buf_reset(&b);
	st.percent = 250;				/* clamped */
	assert_int_equal(bar_line(&b, &st, 80), 0);
	assert_non_null(strstr(buf_str(&b), "]  100%"));
	buf_free(&b);
}

static void
test_plain(void **state)
{
	struct bar_state st = { "job_1", "pending", 3, 0, 0, 0, -1, 0, 0 };
	struct buf b;

	buf_init(&b, 4096);
	assert_int_equal(bar_plain(&b, &st), 0);
	assert_string_equal(buf_str(&b), "job_1: pending 0% (0/3, 0/min, ETA --)");
	buf_free(&b);
}

/* An upload being read: the share of its bytes and the rows read, not
 * the addresses it does not know yet. */
static void
test_ingesting(void **state)
{
	struct bar_state st = { "job_1", "ingesting", 0, 0, 40, 0, -1, 1,
	    1234 };
	struct buf b;

	buf_init(&b, 4096);
	assert_int_equal(bar_plain(&b, &st), 0);
	assert_string_equal(buf_str(&b), "job_1: ingesting 40% (1234 rows read)");
	buf_reset(&b);
	assert_int_equal(bar_line(&b, &st, 60), 0);
	/* 60 - 5 - 9 - 14 - 14 = 18 columns, 40% of them filled */
	assert_string_equal(buf_str(&b), "job_1  ingesting  "
	    "[#######-----------]   40%  1234 rows read");
	assert_int_equal(strlen(buf_str(&b)), 60);
	buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eta),
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_ingesting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
