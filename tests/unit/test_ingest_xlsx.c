/* test_ingest_xlsx.c: the XLSX reader on workbooks that
 * tests/unit/ingest_xlsx_fixtures.py writes when the test starts (with
 * python3-openpyxl, and by hand with zipfile): the first worksheet in the
 * workbook's order (not sheet1.xml, not a chart sheet), found through the
 * relationships (a workbook elsewhere, strict and prefixed namespaces),
 * shared strings with rich text and phonetic runs, inline strings, numbers
 * as written, booleans, cached formula values, errors, sparse cells and
 * rows (missing rows as empty rows, trailing empty cells left out), 250
 * columns cut to 200, UTF-16 XML; the refusals with their messages (a zip
 * bomb, DOCTYPEs, encryption, an OLE file, not a zip, missing parts, a
 * shared string out of range, deep nesting, malformed XML, row numbers
 * past 1048576) and every cap of ingest_limits. Each file gives the same
 * rows whatever the pieces it is fed in (unit_ingest.h). Skipped without
 * python3-openpyxl (a failure under SVC_TEST_NO_SKIP=1). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit_ingest.h"
#include "unit_skip.h"

#define OK INGEST_READ_OK
#define BAD INGEST_READ_INVALID

static char fixtures[] = "/tmp/svc-test-xlsx-XXXXXX";

struct xcase {
	const char	*file;
	enum ingest_read_err rc;
	const char	*rows;
	const char	*error;		/* a part of the message */
	struct ingest_limits limits;	/* 0: the default */
};

static const struct xcase cases[] = {
	{ "rich.xlsx", OK,
	    "[plain@x.y][rich@x.y][\xe6\x9d\xb1\xe4\xba\xac]\n"
	    "[inline][cached][#DIV/0!][TRUE][3.25][7][2024-01-02T00:00:00]"
	    "[FALSE]\n"
	    "[p][1]\n"
	    "[][][9]\n"
	    "\n\n"
	    "[][plain@x.y]\n"
	    "\n"
	    "[][2][1][3]\n", "", { 0 } },
	{ "order.xlsx", OK, "[data sheet]\n", "", { 0 } },
	{ "chart.xlsx", OK, "[after the chart]\n", "", { 0 } },
	{ "sstplace.xlsx", OK, "[rich@x.y]\n", "", { 0 } },
	{ "sstempty.xlsx", OK, "[][x]\n", "", { 0 } },
	{ "nested.xlsx", OK, "[a][bc][][d]\n[e]\n", "", { 0 } },
	{ "strict.xlsx", OK, "\n[][strict@x.y]\n", "", { 0 } },
	{ "norels.xlsx", OK, "[found]\n", "", { 0 } },
	{ "utf16.xlsx", OK, "[\xc3\xa9t\xc3\xa9]\n", "", { 0 } },
	{ "longattr.xlsx", OK, "[ok]\n", "", { 0 } },
	/* refused */
	{ "bomb.xlsx", BAD, "[a]\n", "xl/worksheets/sheet1.xml: compressed "
	    "more than 100 to 1 (a zip bomb?)", { 0 } },
	{ "doctype.xlsx", BAD, "", "xl/worksheets/sheet1.xml: a DOCTYPE "
	    "(DTDs and entities are not allowed)", { 0 } },
	{ "doctypesst.xlsx", BAD, "", "xl/sharedStrings.xml: a DOCTYPE",
	    { 0 } },
	{ "encrypted.xlsx", BAD, "", "is encrypted", { 0 } },
	{ "ole.xlsx", BAD, "", "not an XLSX file: an encrypted workbook or "
	    "an old .xls file", { 0 } },
	{ "notzip.xlsx", BAD, "", "not an XLSX file: not a zip archive",
	    { 0 } },
	{ "nobook.xlsx", BAD, "", "not an XLSX file: no workbook "
	    "(xl/workbook.xml)", { 0 } },
	{ "nosheet.xlsx", BAD, "", "the workbook has no worksheet", { 0 } },
	{ "nopart.xlsx", BAD, "", "xl/worksheets/sheet9.xml is missing",
	    { 0 } },
	{ "sstrange.xlsx", BAD, "[a]\n", "cell B2: shared string 5 of a "
	    "table of 0", { 0 } },
	{ "deep.xlsx", BAD, "", "xl/worksheets/sheet1.xml: XML nested "
	    "deeper than 64 elements", { 0 } },
	{ "malformed.xlsx", BAD, "", "xl/worksheets/sheet1.xml: not "
	    "well-formed XML, line 1: mismatched tag", { 0 } },
	{ "rowmax.xlsx", BAD, "[z]\n", "after row 1: a row number that is "
	    "not one of 1 to 1048576", { 0 } },
	/* the caps, lowered */
	{ "rich.xlsx", BAD, "", "larger than 1000 bytes",
	    { .file_max = 1000 } },
	{ "rich.xlsx", BAD, "", "more than 2000 bytes uncompressed in all",
	    { .unzip_max = 2000 } },
	{ "rich.xlsx", BAD, "", "_rels/.rels: more than 100 bytes "
	    "uncompressed", { .part_max = 100 } },
	{ "rich.xlsx", BAD, "", "shared strings: more than 50 bytes",
	    { .strings_max = 50 } },
	{ "rich.xlsx", BAD, "", "xl/sharedStrings.xml: XML nested deeper "
	    "than 4 elements", { .xml_depth_max = 4 } },
	{ "longattr.xlsx", BAD, "", "xl/worksheets/sheet1.xml: an XML tag "
	    "longer than 65536 bytes", { .xml_token_max = 65536 } },
	{ "bomb.xlsx", BAD, "[a]\n", "compressed more than 500 to 1",
	    { .ratio_max = 500 } },
	{ "bomb.xlsx", BAD, "[a]\n", "more than 8388608 bytes uncompressed "
	    "in all", { .ratio_max = 100000 , .unzip_max = 8 << 20 } },
};

static char *
slurp(const char *name, size_t *len)
{
	struct buf b;
	char path[512], piece[65536];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fixtures, name);
	if ((f = fopen(path, "rb")) == NULL)
		fail_msg("%s: not written by the fixture script", path);
	buf_init(&b, BUF_NOMAX);
	while ((n = fread(piece, 1, sizeof(piece), f)) > 0)
		assert_int_equal(buf_append(&b, piece, n), 0);
	fclose(f);
	*len = b.len;
	return buf_steal(&b);
}

static void
test_ingest_xlsx_reads_and_refuses(void **state)
{
	struct unit_ingest u;
	size_t i, len;
	char *data;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct xcase *c = &cases[i];

		memset(&u, 0, sizeof(u));
		u.limits = c->limits;
		data = slurp(c->file, &len);
		unit_ingest_same(&u, INGEST_XLSX, data, len);
		if (u.rc != c->rc || strcmp(buf_str(&u.rows), c->rows) != 0 ||
		    strstr(u.error, c->error) == NULL)
			fail_msg("case %zu (%s): rc %d (want %d), error \"%s\" "
			    "(want \"%s\"), rows:\n%s---\nwant:\n%s---", i,
			    c->file, u.rc, c->rc, u.error, c->error,
			    buf_str(&u.rows), c->rows);
		buf_free(&u.rows);
		free(data);
	}
}

/* openpyxl's workbook: numbers as written, booleans, a formula without a
 * cached value, missing rows, a cell at column 250 dropped, a row of 250
 * cells cut to 200. */
static void
test_ingest_xlsx_reads_openpyxl(void **state)
{
	struct unit_ingest u;
	struct buf want;
	size_t len, c;
	char *data;

	buf_init(&want, BUF_NOMAX);
	buf_puts(&want, "[email][n][flag]\n[a@b.c][42][TRUE]\n"
	    "[x@y.z][1.5][FALSE]\n\n\n[1234567890123][-7][0.1]\n"
	    "[][][near]\n");
	for (c = 1; c <= INGEST_COLUMNS_MAX; c++)
		buf_printf(&want, "[c%zu]", c);
	buf_puts(&want, "\n");
	memset(&u, 0, sizeof(u));
	data = slurp("basic.xlsx", &len);
	unit_ingest_same(&u, INGEST_XLSX, data, len);
	assert_int_equal(u.rc, OK);
	assert_string_equal(buf_str(&u.rows), buf_str(&want));
	assert_int_equal(u.nrows, 8);
	buf_free(&u.rows);
	buf_free(&want);
	free(data);
}

/* Row 1048576 is the last: the rows before it are handed over empty. */
static void
test_ingest_xlsx_reads_the_last_row(void **state)
{
	struct unit_ingest u;
	size_t len;
	char *data;

	memset(&u, 0, sizeof(u));
	data = slurp("lastrow.xlsx", &len);
	unit_ingest_read(&u, INGEST_XLSX, data, len, 0, 4096, 0);
	assert_int_equal(u.rc, OK);
	assert_int_equal(u.nrows, 1048576);
	assert_int_equal(u.rows.len, 1048575 + 4);
	assert_string_equal(buf_str(&u.rows) + 1048575, "[z]\n");
	buf_free(&u.rows);
	free(data);
}

/* The callback stops the reader, while a row ends or empty rows are
 * handed over. */
static void
test_ingest_xlsx_stops_when_told(void **state)
{
	struct unit_ingest u;
	size_t len;
	char *data;

	memset(&u, 0, sizeof(u));
	u.stop_at = 2;
	data = slurp("rich.xlsx", &len);
	unit_ingest_same(&u, INGEST_XLSX, data, len);
	assert_int_equal(u.rc, INGEST_READ_STOPPED);
	assert_int_equal(u.nrows, 2);
	assert_string_equal(u.error, "");
	buf_free(&u.rows);
	free(data);
	memset(&u, 0, sizeof(u));
	u.stop_at = 1000;
	data = slurp("lastrow.xlsx", &len);
	unit_ingest_read(&u, INGEST_XLSX, data, len, 0, 0, 0);
	assert_int_equal(u.rc, INGEST_READ_STOPPED);
	assert_int_equal(u.nrows, 1000);
	buf_free(&u.rows);
	free(data);
}

/* The fixtures, written by the script with the first python3 that has
 * openpyxl: 0, 77 when there is none, -1 on another failure. */
static int
write_fixtures(void)
{
	static const char *const pythons[] = { "/usr/bin/python3", "python3" };
	size_t i;
	pid_t pid;
	int status;

	if (mkdtemp(fixtures) == NULL) {
		perror("mkdtemp");
		return -1;
	}
	for (i = 0; i < sizeof(pythons) / sizeof(pythons[0]); i++) {
		if ((pid = fork()) == -1)
			return -1;
		if (pid == 0) {
			execlp(pythons[i], pythons[i], INGEST_XLSX_FIXTURES,
			    fixtures, (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) == -1 || !WIFEXITED(status))
			return -1;
		if (WEXITSTATUS(status) == 0)
			return 0;
		if (WEXITSTATUS(status) != 77 && WEXITSTATUS(status) != 127) {
			fprintf(stderr, "%s %s failed\n", pythons[i],
			    INGEST_XLSX_FIXTURES);
			return -1;
		}
	}
	return 77;
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return remove(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ingest_xlsx_reads_and_refuses),
		cmocka_unit_test(test_ingest_xlsx_reads_openpyxl),
		cmocka_unit_test(test_ingest_xlsx_reads_the_last_row),
		cmocka_unit_test(test_ingest_xlsx_stops_when_told),
	};
	int rc;

	switch (write_fixtures()) {
	case 0:
		break;
	case 77:
		rc = unit_skip_rest(0, "no python3 with openpyxl "
		    "(Debian: python3-openpyxl) to write the XLSX fixtures");
		goto out;
	default:
		rc = 1;
		goto out;
	}
	rc = unit_skip_status(cmocka_run_group_tests(tests, NULL, NULL));
out:
	nftw(fixtures, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return rc;
}
