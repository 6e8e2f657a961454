/* test_ingest_columns.c: the spec's column selection rules on sampled rows:
 * an explicit email_column (name, case-insensitive and trimmed, or 0-based
 * index) or column_mapping.email wins; otherwise a header naming an email
 * column (known names beat names containing "mail", then the column with
 * more addresses), then the column with most addresses; the header row is
 * detected (none for a list of addresses); what is not found is
 * email_column_not_found, or invalid_column_mapping for a mapping. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "jobs/ingest_columns.h"

#define ROWS 6
#define COLS 4

struct ccase {
	const char		*rows[ROWS][COLS];	/* NULL ends a row */
	enum ingest_rule	 rule;
	const char		*name;
	enum ingest_choice	 want;
	int			 header;
	size_t			 column;
};

#define F INGEST_CHOICE_FOUND
#define NF INGEST_CHOICE_NOT_FOUND
#define BM INGEST_CHOICE_BAD_MAPPING
#define AUTO INGEST_RULE_AUTO
#define COL INGEST_RULE_EMAIL_COLUMN
#define MAP INGEST_RULE_MAPPING

static const struct ccase cases[] = {
	/* a list of addresses: no header, column 0 */
	{ { { "a@x.example" }, { "b@x.example" } }, AUTO, NULL, F, 0, 0 },
	/* a header naming the column */
	{ { { "Name", "E-mail Address" }, { "Ann", "a@x.example" } },
	    AUTO, NULL, F, 1, 1 },
	/* a known name beats one that only contains "mail" */
	{ { { "Mailing list", "Email", "x" }, { "yes", "a@x.example", "b@x.example" } },
	    AUTO, NULL, F, 1, 1 },
	/* two names containing "mail": the one with addresses */
	{ { { "mail sent", "work mail" }, { "no", "a@x.example" } },
	    AUTO, NULL, F, 1, 1 },
	/* no header name: the column with most addresses */
	{ { { "id", "who", "contact" }, { "1", "a@x.example", "c@x.example" },
	    { "2", "nobody", "d@x.example" } }, AUTO, NULL, F, 1, 2 },
	/* one-column txt with a header line */
	{ { { "addresses" }, { "a@x.example" }, { "b@x.example" } },
	    AUTO, NULL, F, 1, 0 },
	/* nothing like an address anywhere: not found */
	{ { { "name", "phone" }, { "Ann", "123" } }, AUTO, NULL, NF, 0, 0 },
	/* a header that names an email column but no addresses below: found */
	{ { { "name", "email" }, { "Ann", "" } }, AUTO, NULL, F, 1, 1 },
	/* explicit name, case-insensitive and trimmed, even against content */
	{ { { "Email", "Backup" }, { "a@x.example", "b@x.example" } },
	    COL, " backup ", F, 1, 1 },
	/* explicit index with a header */
	{ { { "Name", "Contact" }, { "Ann", "a@x.example" } }, COL, "1", F, 1, 1 },
	/* explicit index without a header */
	{ { { "a@x.example", "b@x.example" } }, COL, "1", F, 0, 1 },
	/* an index past the widest row, a name the file lacks */
	{ { { "a@x.example", "b@x.example" } }, COL, "2", NF, 0, 0 },
	{ { { "Name", "Email" }, { "Ann", "a@x.example" } }, COL, "mail", NF, 0, 0 },
	/* a mapping naming a column: found; lacking: invalid_column_mapping */
	{ { { "Name", "Addr" }, { "Ann", "a@x.example" } }, MAP, "ADDR", F, 1, 1 },
	{ { { "Name", "Addr" }, { "Ann", "a@x.example" } }, MAP, "email", BM, 0, 0 },
	/* a header named "0" is a name before it is an index */
	{ { { "x", "0" }, { "a@x.example", "b@x.example" } }, COL, "0", F, 1, 1 },
	/* no rows */
	{ { { NULL } }, AUTO, NULL, NF, 0, 0 },
	{ { { NULL } }, MAP, "email", BM, 0, 0 },
};

static void
test_ingest_columns_follow_the_rules(void **state)
{
	struct ingest_columns_row rows[ROWS];
	struct ingest_columns got;
	size_t i, r, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ccase *c = &cases[i];

		for (r = 0; r < ROWS && c->rows[r][0] != NULL; r++) {
			for (n = 0; n < COLS && c->rows[r][n] != NULL; n++)
				;
			rows[r].cells = c->rows[r];
			rows[r].n = n;
		}
		print_message("case %zu\n", i);
		assert_int_equal(ingest_columns_choose(rows, r, c->rule,
		    c->name, &got), c->want);
		if (c->want != F)
			continue;
		assert_int_equal(got.header, c->header);
		assert_int_equal(got.column, c->column);
	}
}

static void
test_ingest_columns_is_address(void **state)
{
	(void)state;
	assert_true(ingest_columns_is_address("a@x.example"));
	assert_true(ingest_columns_is_address(" a@x.example "));
	assert_false(ingest_columns_is_address("Email"));
	assert_false(ingest_columns_is_address("a@"));
	assert_false(ingest_columns_is_address("@x.example"));
	assert_false(ingest_columns_is_address(""));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ingest_columns_follow_the_rules),
		cmocka_unit_test(test_ingest_columns_is_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
