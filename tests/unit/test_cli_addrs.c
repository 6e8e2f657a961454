/* test_cli_addrs.c: which values svc sends as addresses (shaped like an
 * email, else invalid_input and never sent) and the address lists of bulk
 * create read from .txt and .csv files: the email column found by its
 * header or by its contents, quoted fields, CRLF, a byte order mark, rows
 * of different widths, and values left out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "cli/addrs.h"

static const struct { const char *s; int shaped; } shape_cases[] = {
	{ "alice@example.com", 1 },
	{ "a@b", 1 },				/* a dotless domain: DNS decides */
	{ "first.last+tag@sub.example.co.uk", 1 },
	{ "Bob@Bücher.example", 1 },		/* UTF-8 domain */
	{ "\"john doe\"@example.com", 0 },	/* no space at all */
	{ "\"a@b\"@example.com", 1 },		/* quoted local part with @ */
	{ "user@[192.0.2.1]", 1 },
	{ "x@xn--bcher-kva.example", 1 },
	{ "not an email", 0 },
	{ "", 0 },
	{ "@example.com", 0 },
	{ "alice@", 0 },
	{ "alice", 0 },
	{ "a@@b.example", 0 },
	{ "a@b@c.example", 0 },
	{ "a@.example", 0 },
	{ "a@example.", 0 },
	{ "a@exa..mple", 0 },
	{ "a@exa mple.com", 0 },
	{ "a\tb@example.com", 0 },
	{ "a,b@example.com", 0 },
	{ "<a@example.com>", 0 },
	{ "a@exa_mple.com", 0 },
	{ "a@[192.0.2.1", 0 },
	{ "a@\xff\xfe.example", 0 },		/* not UTF-8 */
	{ "a@\xc0\xaf.example", 0 },		/* overlong */
	{ "\"unterminated@example.com", 0 },
	{ "1234567890123456789012345678901234567890123456789012345678901234"
	  "@example.com", 1 },			/* 64 octets of local part */
	{ "12345678901234567890123456789012345678901234567890123456789012345"
	  "@example.com", 0 },			/* 65 */
	{ "a@abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij1234"
	  ".example", 0 },			/* a 64-octet label */
};

static void
test_shaped(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(shape_cases) / sizeof(shape_cases[0]); i++) {
		if (addrs_shaped(shape_cases[i].s, strlen(shape_cases[i].s)) !=
		    shape_cases[i].shaped)
			fail_msg("addrs_shaped(\"%s\") != %d", shape_cases[i].s,
			    shape_cases[i].shaped);
	}
}

/* Reads text as csv or txt; the addresses joined with spaces. */
static int
read_text(const char *text, int csv, char *out, size_t sz, size_t *invalid,
    char *err, size_t errsz)
{
	struct addrs a;
	struct buf e;
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	size_t i;
	int rc;

	assert_non_null(f);
	addrs_init(&a);
	buf_init(&e, 1024);
	rc = csv ? addrs_read_csv(&a, f, &e) : addrs_read_txt(&a, f, &e);
	fclose(f);
	out[0] = '\0';
	for (i = 0; i < json_array_size(a.emails); i++) {
		if (i)
			strncat(out, " ", sz - strlen(out) - 1);
		strncat(out, json_string_value(json_array_get(a.emails, i)),
		    sz - strlen(out) - 1);
	}
	*invalid = a.invalid;
	snprintf(err, errsz, "%s", e.len ? e.data : "");
	buf_free(&e);
	addrs_free(&a);
	return rc;
}

struct file_case {
	const char	*text;
	int		 csv;
	int		 rc;
	const char	*want;
	size_t		 invalid;
	const char	*err;
};

static const struct file_case file_cases[] = {
	{ "a@x.example\n\n  b@x.example \r\nnot one\n", 0, 0,
	  "a@x.example b@x.example", 1, "" },
	{ "", 0, 0, "", 0, "" },
	/* header names the column */
	{ "Name,E-mail,Company\r\nJane,a@x.example,Acme\r\nBob,nope,Acme\r\n",
	  1, 0, "a@x.example", 1, "" },
	{ "id,Email Address\n1,a@x.example\n2,b@x.example\n", 1, 0,
	  "a@x.example b@x.example", 0, "" },
	{ "\xef\xbb\xbf" "Mail,x\na@x.example,1\n", 1, 0, "a@x.example", 0,
	  "" },
	/* no header: the column that holds addresses most often */
	{ "1,b@x.example,c@x.example\n2,zz,d@x.example\n", 1, 0,
	  "c@x.example d@x.example", 0, "" },
	/* a header row without a known name is recognised as one */
	{ "who,contact\nA,a@x.example\nB,b@x.example", 1, 0,
	  "a@x.example b@x.example", 0, "" },
	/* quoted fields: commas, "" and line breaks inside */
	{ "email,note\n\"a@x.example\",\"x, \"\"y\"\"\nz\"\nb@x.example,\"\"\n",
	  1, 0, "a@x.example b@x.example", 0, "" },
	/* short rows */
	{ "n,email\n1\n2,a@x.example\n", 1, 0, "a@x.example", 0, "" },
	{ "a,b\nc,d\n", 1, -1, "", 0, "no column holds email addresses" },
	{ "", 1, -1, "", 0, "the file is empty" },
	{ "\xef\xbb" "x", 1, -1, "", 0, "line 1: not UTF-8 text" },
};

static void
test_files(void **state)
{
	char out[4096], err[1024];
	size_t i, invalid;
	int rc;

	for (i = 0; i < sizeof(file_cases) / sizeof(file_cases[0]); i++) {
		const struct file_case *t = &file_cases[i];

		rc = read_text(t->text, t->csv, out, sizeof(out), &invalid,
		    err, sizeof(err));
		if (rc != t->rc || strcmp(out, t->want) != 0 ||
		    invalid != t->invalid || strcmp(err, t->err) != 0)
			fail_msg("case %zu: rc %d out '%s' invalid %zu err '%s'",
			    i, rc, out, invalid, err);
	}
}

/* More rows than the sample that chooses the column. */
static void
test_csv_past_the_sample(void **state)
{
	char text[64 * 1024], out[64 * 1024], err[1024];
	size_t n = 0, invalid;
	int i;

	n += (size_t)snprintf(text + n, sizeof(text) - n, "x,email\n");
	for (i = 0; i < 250; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
		    "%d,u%d@x.example\n", i, i);
	assert_int_equal(read_text(text, 1, out, sizeof(out), &invalid, err,
	    sizeof(err)), 0);
	assert_non_null(strstr(out, "u0@x.example u1@x.example"));
	assert_non_null(strstr(out, "u249@x.example"));
	assert_int_equal(invalid, 0);
}

static void
test_row_too_long(void **state)
{
	static char text[70 * 1024];
	char out[256], err[1024];
	size_t invalid;

	memset(text, 'x', sizeof(text) - 1);
	assert_int_equal(read_text(text, 1, out, sizeof(out), &invalid, err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "line 1: a row longer than"));
}

static void
test_samples_kept(void **state)
{
	struct addrs a;

	addrs_init(&a);
	assert_int_equal(addrs_add(&a, " x ", 3), 0);
	assert_int_equal(addrs_add(&a, "y", 1), 0);
	assert_int_equal(addrs_add(&a, "z", 1), 0);
	assert_int_equal(addrs_add(&a, "w", 1), 0);
	assert_int_equal(addrs_add(&a, "   ", 3), 0);	/* blank: skipped */
	assert_int_equal(a.invalid, 4);
	assert_string_equal(a.sample[0], "x");
	assert_string_equal(a.sample[2], "z");
	assert_int_equal(json_array_size(a.emails), 0);
	addrs_free(&a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shaped),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_csv_past_the_sample),
		cmocka_unit_test(test_row_too_long),
		cmocka_unit_test(test_samples_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
