/* test_dbsql.c: statement text of multi-row statements (items and
 * separators, an empty list) and the group sizes that keep the number of
 * distinct statement texts small while writing every item exactly once. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/dbsql.h"

static void
test_repeat(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, BUF_NOMAX);
	dbsql_repeat(&b, "INSERT INTO t VALUES ", "(?,?)", ",", 3, "");
	assert_string_equal(buf_str(&b), "INSERT INTO t VALUES (?,?),(?,?),(?,?)");
	dbsql_repeat(&b, "SELECT a FROM t WHERE a IN (", "?", ",", 1, ")");
	assert_string_equal(buf_str(&b), "SELECT a FROM t WHERE a IN (?)");
	dbsql_repeat(&b, "(", "SELECT ?", " UNION ALL ", 2, ") v");
	assert_string_equal(buf_str(&b), "(SELECT ? UNION ALL SELECT ?) v");
	/* The buffer is reset, not appended to. */
	dbsql_repeat(&b, "x", "y", ",", 0, "z");
	assert_string_equal(buf_str(&b), "xz");
	buf_free(&b);
}

static void
test_group(void **state)
{
	static const struct { size_t left, max, want; } cases[] = {
		{ 0, 128, 0 }, { 1, 128, 1 }, { 2, 128, 2 }, { 3, 128, 2 },
		{ 127, 128, 64 }, { 128, 128, 128 }, { 200, 128, 128 },
		{ 1000000, 128, 128 }, { 5, 1, 1 }, { 7, 4, 4 },
	};
	size_t i, n, left, g, statements;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(dbsql_group(cases[i].left, cases[i].max),
		    cases[i].want);
	/* Every count is covered exactly, with at most log2(max) + 1
	 * statements past the full groups. */
	for (n = 1; n <= 600; n++) {
		statements = 0;
		for (left = n; left > 0; left -= g) {
			g = dbsql_group(left, 128);
			assert_true(g >= 1 && g <= left && (g & (g - 1)) == 0);
			if (g < 128)
				statements++;
		}
		assert_true(statements <= 8);
	}
}

static void
test_group_steps(void **state)
{
	static const struct { size_t left, max, step, want; } cases[] = {
		{ 0, 64, 16, 0 }, { 1, 64, 16, 1 }, { 15, 64, 16, 8 },
		{ 16, 64, 16, 16 }, { 50, 64, 16, 48 }, { 64, 64, 16, 64 },
		{ 130, 64, 16, 64 }, { 130, 128, 16, 128 }, { 2, 64, 16, 2 },
	};
	size_t i, n, left, g, statements, sizes[129] = { 0 }, texts = 0;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(dbsql_group_steps(cases[i].left, cases[i].max,
		    cases[i].step), cases[i].want);
	/* Every count is covered exactly: up to max in one statement and at
	 * most log2(step) more, with max / step + log2(step) + 1 texts. */
	for (n = 1; n <= 600; n++) {
		statements = 0;
		for (left = n; left > 0; left -= g) {
			g = dbsql_group_steps(left, 128, 16);
			assert_true(g >= 1 && g <= left && g <= 128);
			assert_true(g % 16 == 0 || (g < 16 && (g & (g - 1)) == 0));
			texts += sizes[g]++ == 0;
			if (g < 128)
				statements++;
		}
		assert_true(statements <= 5);
	}
	assert_true(texts <= 128 / 16 + 4 + 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeat),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_group_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
