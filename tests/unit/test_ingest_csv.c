/* test_ingest_csv.c: the readers of text uploads (CSV, TSV, TXT),
 * table-driven: the delimiter sniffed (among , ; tab |, quotes not
 * counted, the most lines split alike, only the start of the file),
 * RFC 4180 quoting (delimiters, doubled quotes and line ends in quotes,
 * text after a closing quote, quotes inside unquoted text), ragged rows,
 * blank lines as empty rows, CRLF, LF and CR line ends, a BOM, UTF-16 LE
 * and BE, Windows-1252 cells, the refusals (an open quote at the end with
 * its line, NUL bytes, binary signatures, odd UTF-16), the caps on cells
 * and columns, stopping from the callback, and the format of a file name.
 * Every file gives the same rows fed whole, byte by byte, in random pieces
 * and split in two at every place (unit_ingest.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_ingest.h"

#define OK INGEST_READ_OK
#define BAD INGEST_READ_INVALID

struct ccase {
	enum ingest_format format;
	const char	*in;
	size_t		 len;		/* 0: strlen(in) */
	enum ingest_read_err rc;
	const char	*rows;
	const char	*error;		/* a part of the message */
};

#define CSV_(in, rows) { INGEST_CSV, in, 0, OK, rows, "" }
#define BAD_(f, in, len, rows, error) { f, in, len, BAD, rows, error }

static const struct ccase cases[] = {
	/* delimiters sniffed */
	CSV_("a,b\r\nc,d\r\n", "[a][b]\n[c][d]\n"),
	CSV_("email;name\na@b.c;Bob\n", "[email][name]\n[a@b.c][Bob]\n"),
	CSV_("email\tname\na@b.c\tBob\n", "[email][name]\n[a@b.c][Bob]\n"),
	CSV_("email|name\na@b.c|Bob\n", "[email][name]\n[a@b.c][Bob]\n"),
	CSV_("a@b.c\nx@y.z\n", "[a@b.c]\n[x@y.z]\n"),
	CSV_("a@b.c", "[a@b.c]\n"),
	/* quoted delimiters do not count */
	CSV_("\"a,b\";c\n\"d,e,f\";g\n", "[a,b][c]\n[d,e,f][g]\n"),
	/* the most lines split alike wins, not the most fields */
	CSV_("name;email\nSmith, John;a@b.c\nDoe, Jane;x@y.z\nX;y\n",
	    "[name][email]\n[Smith, John][a@b.c]\n[Doe, Jane][x@y.z]\n"
	    "[X][y]\n"),
	CSV_("a,b,c;d\ne,f;g\nh;i,j,k,l\n", "[a,b,c][d]\n[e,f][g]\n"
	    "[h][i,j,k,l]\n"),
	/* a tie goes to , then ; then tab then | */
	CSV_("a,b;c\n", "[a][b;c]\n"),
	CSV_("a|b\tc\n", "[a|b][c]\n"),
	/* blank lines are not counted, and are empty rows */
	CSV_("\n\na;b\n\n", "\n\n[a][b]\n\n"),
	/* line ends */
	CSV_("a,b\rc,d\r\ne,f\ng,h", "[a][b]\n[c][d]\n[e][f]\n[g][h]\n"),
	CSV_("a,b\r\r\nc,d\n\r", "[a][b]\n\n[c][d]\n\n"),
	CSV_("\n", "\n"),
	CSV_("\r\n\r\n", "\n\n"),
	/* quoting */
	CSV_("\"a\"\"b\",c\n", "[a\"b][c]\n"),
	CSV_("\"\",x\n\"\"\"\",y\n", "[][x]\n[\"][y]\n"),
	CSV_("\"line1\nline2\",x\r\n\"l1\r\nl2\",y\n",
	    "[line1\nline2][x]\n[l1\r\nl2][y]\n"),
	CSV_("ab\"c,d\"\ne,f\n", "[ab\"c][d\"]\n[e][f]\n"),
	CSV_("\"ab\"c,d\n\"x\" ,y\n", "[abc][d]\n[x ][y]\n"),
	CSV_(" \"a,b\",c\n", "[ \"a][b\"][c]\n"),
	/* a CR in quotes, then the line end after the closing quote */
	CSV_("\"a\r\"\nb,c\nd,e\n", "[a\r]\n[b][c]\n[d][e]\n"),
	CSV_("\"a\",\"b\"\r\n\"c\",\"d\"", "[a][b]\n[c][d]\n"),
	/* ragged rows, empty fields */
	CSV_("a,b,c\nd\ne,f\n", "[a][b][c]\n[d]\n[e][f]\n"),
	CSV_("a,b,\n,c,d\n,,\n", "[a][b][]\n[][c][d]\n[][][]\n"),
	CSV_("a,b\nc,", "[a][b]\n[c][]\n"),
	/* encodings */
	CSV_("\xEF\xBB\xBF" "email,name\na@b.c,x\n",
	    "[email][name]\n[a@b.c][x]\n"),
	CSV_("\xEF\xBB\xBF", ""),
	CSV_("caf\xe9,\x80 5,\x81\n", "[caf\xc3\xa9][\xe2\x82\xac 5]"
	    "[\xc2\x81]\n"),
	CSV_("caf\xc3\xa9,caf\xe9\n", "[caf\xc3\xa9][caf\xc3\xa9]\n"),
	/* overlong, surrogate, above U+10FFFF: not UTF-8, so Windows-1252 */
	CSV_("\xC0\xAF,\xED\xA0\x80,\xF4\x90\x80\x80\n",
	    "[\xc3\x80\xc2\xaf][\xc3\xad\xc2\xa0\xe2\x82\xac]"
	    "[\xc3\xb4\xc2\x90\xe2\x82\xac\xe2\x82\xac]\n"),
	CSV_("\xF0\x9F\x98\x80;\xE2\x82\xAC\n", "[\xF0\x9F\x98\x80]"
	    "[\xE2\x82\xAC]\n"),
	/* UTF-16 LE and BE with BOM: "a;\xe4\n\U0001F600;b\r\n" */
	{ INGEST_CSV, "\xFF\xFE" "a\0;\0\xe4\0\n\0" "\x3d\xd8\x00\xde;\0b\0"
	    "\r\0\n\0", 22, OK, "[a][\xc3\xa4]\n[\xF0\x9F\x98\x80][b]\n", "" },
	{ INGEST_CSV, "\xFE\xFF" "\0a\0;\0\xe4\0\n" "\xd8\x3d\xde\x00\0;\0b"
	    "\0\r\0\n", 22, OK, "[a][\xc3\xa4]\n[\xF0\x9F\x98\x80][b]\n", "" },
	/* unpaired surrogates: U+FFFD */
	{ INGEST_TXT, "\xFF\xFE" "\x3d\xd8" "a\0" "\x00\xde" "\n\0\x3d\xd8",
	    12, OK, "[\xEF\xBF\xBD" "a\xEF\xBF\xBD]\n[\xEF\xBF\xBD]\n", "" },
	/* refused */
	BAD_(INGEST_CSV, "a,b\nc,\"d\ne\n", 0, "[a][b]\n",
	    "line 2: a quoted field is not closed by the end of the file"),
	BAD_(INGEST_CSV, "\"a\nb\",c\r\nd,\"e\n", 0, "[a\nb][c]\n",
	    "line 3: a quoted field is not closed"),
	BAD_(INGEST_TSV, "\"a\tb", 0, "", "line 1: a quoted field"),
	BAD_(INGEST_CSV, "a,b\nc\0d,e\n", 10, "[a][b]\n",
	    "line 2: a NUL byte: not a text file"),
	BAD_(INGEST_TXT, "a\n\"b\0", 5, "[a]\n", "line 2: a NUL byte"),
	BAD_(INGEST_CSV, "a\0,\0b\0\n\0", 8, "", "line 1: a NUL byte"),
	BAD_(INGEST_CSV, "\xFF\xFE" "a\0\n\0\0\0", 8, "[a]\n",
	    "line 2: a NUL byte"),
	BAD_(INGEST_CSV, "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", 0, "",
	    "a PDF document, not a text file"),
	BAD_(INGEST_CSV, "PK\3\4\x14\0\0\0", 8, "",
	    "a zip archive (an XLSX file?), not a text file"),
	BAD_(INGEST_TXT, "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1\0\0", 10, "",
	    "an OLE document (an old .xls file?), not a text file"),
	BAD_(INGEST_CSV, "\xFF\xFE" "a\0,\0b", 7, "",
	    "a UTF-16 file with an odd number of bytes"),
	/* TSV: tab only, quoting */
	{ INGEST_TSV, "a,b\tc\n\"d\te\"\tf;g\n", 0, OK,
	    "[a,b][c]\n[d\te][f;g]\n", "" },
	{ INGEST_TSV, "a;b\nc;d\n", 0, OK, "[a;b]\n[c;d]\n", "" },
	/* TXT: lines, nothing else */
	{ INGEST_TXT, "a,b;c\n\"q\"\n\nx\r\"y\r\nz", 0, OK,
	    "[a,b;c]\n[\"q\"]\n\n[x]\n[\"y]\n[z]\n", "" },
	{ INGEST_TXT, "\xEF\xBB\xBF" "a@b.c\r\n\xe9@b.c\r\n", 0, OK,
	    "[a@b.c]\n[\xc3\xa9@b.c]\n", "" },
};

static void
test_ingest_csv_reads_every_dialect(void **state)
{
	struct unit_ingest u;
	size_t i, len;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ccase *c = &cases[i];

		memset(&u, 0, sizeof(u));
		len = c->len ? c->len : strlen(c->in);
		unit_ingest_same(&u, c->format, c->in, len);
		if (u.rc != c->rc || strcmp(buf_str(&u.rows), c->rows) != 0 ||
		    strstr(u.error, c->error) == NULL)
			fail_msg("case %zu: rc %d (want %d), error \"%s\" (want "
			    "\"%s\"), rows:\n%s---\nwant:\n%s---", i, u.rc,
			    c->rc, u.error, c->error, buf_str(&u.rows), c->rows);
		buf_free(&u.rows);
	}
}

/* The sniffer looks at the first 50 lines (and 64 KiB) only: later lines
 * that would outvote them do not count. */
static void
test_ingest_csv_sniffs_the_start_only(void **state)
{
	struct unit_ingest u;
	struct buf in, want;
	size_t i;

	memset(&u, 0, sizeof(u));
	buf_init(&in, BUF_NOMAX);
	buf_init(&want, BUF_NOMAX);
	for (i = 0; i < 50; i++) {
		buf_printf(&in, "a%zu;b\n", i);
		buf_printf(&want, "[a%zu][b]\n", i);
	}
	for (i = 0; i < 200; i++) {
		buf_puts(&in, "c,d,e,f\n");
		buf_puts(&want, "[c,d,e,f]\n");
	}
	unit_ingest_same(&u, INGEST_CSV, buf_str(&in), in.len);
	assert_int_equal(u.rc, OK);
	assert_string_equal(buf_str(&u.rows), buf_str(&want));
	buf_free(&u.rows);

	/* one line of 70 KiB: the first 64 KiB choose */
	buf_reset(&in);
	buf_reset(&want);
	buf_puts(&in, "x");
	buf_puts(&want, "[x");
	for (i = 0; i < 7000; i++) {
		buf_puts(&in, "|123456789");
		buf_puts(&want, "][123456789");
	}
	buf_puts(&in, "\n1,2\n3,4\n");
	buf_puts(&want, "]\n[1,2]\n[3,4]\n");
	unit_ingest_same(&u, INGEST_CSV, buf_str(&in), in.len);
	assert_int_equal(u.rc, OK);
	assert_int_equal(u.nrows, 3);
	assert_true(strstr(buf_str(&u.rows), "[1,2]\n[3,4]\n") != NULL);
	assert_true(strncmp(buf_str(&u.rows), "[x][123456789][", 15) == 0);
	buf_free(&u.rows);
	buf_free(&in);
	buf_free(&want);
}

/* A cell keeps at most INGEST_CELL_MAX bytes, cut at a character
 * boundary, whether UTF-8, Windows-1252 or UTF-16; a row at most
 * INGEST_COLUMNS_MAX cells; a quoted cell of 1 MiB is cut the same. */
static void
test_ingest_csv_caps_cells_and_columns(void **state)
{
	static const struct {
		const char	*unit;	/* repeated */
		size_t		 times;
		size_t		 want;	/* bytes kept */
		const char	*last;	/* the kept text's last bytes */
	} cells[] = {
		{ "a", 40000, INGEST_CELL_MAX, "a" },
		{ "a", INGEST_CELL_MAX, INGEST_CELL_MAX, "a" },
		{ "\xc3\xa9", 20000, INGEST_CELL_MAX - 1, "\xc3\xa9" },
		{ "\xe9", 40000, INGEST_CELL_MAX - 1, "\xc3\xa9" },
		{ "\xe2\x82\xac", 20000, INGEST_CELL_MAX - 1, "\xe2\x82\xac" },
		{ "\xF0\x9F\x98\x80", 10000, INGEST_CELL_MAX - 3,
		    "\xF0\x9F\x98\x80" },
		{ "b\xF0\x9F\x98\x80", 8000, INGEST_CELL_MAX - 1, "b" },
	};
	struct unit_ingest u;
	struct buf in;
	size_t i, k, n;
	const char *r;

	buf_init(&in, BUF_NOMAX);
	for (i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		memset(&u, 0, sizeof(u));
		buf_reset(&in);
		buf_puts(&in, "x,\"");
		for (k = 0; k < cells[i].times; k++)
			buf_puts(&in, cells[i].unit);
		buf_puts(&in, "\",y\nz\n");
		unit_ingest_same(&u, INGEST_CSV, buf_str(&in), in.len);
		assert_int_equal(u.rc, OK);
		r = buf_str(&u.rows);
		assert_int_equal(u.rows.len, 3 + cells[i].want + 6 + 4);
		assert_memory_equal(r, "[x][", 4);
		n = strlen(cells[i].last);
		assert_memory_equal(r + 4 + cells[i].want - n, cells[i].last, n);
		assert_string_equal(r + 4 + cells[i].want, "][y]\n[z]\n");
		buf_free(&u.rows);
	}
	/* UTF-16: 20000 x U+00E9 is 40000 bytes of UTF-8 */
	memset(&u, 0, sizeof(u));
	buf_reset(&in);
	buf_append(&in, "\xFF\xFE", 2);
	for (k = 0; k < 20000; k++)
		buf_append(&in, "\xe9\0", 2);
	unit_ingest_same(&u, INGEST_TXT, in.data, in.len);
	assert_int_equal(u.rc, OK);
	assert_int_equal(u.rows.len, INGEST_CELL_MAX - 1 + 3);
	buf_free(&u.rows);
	/* 1 MiB in quotes, with line ends: one cut cell */
	memset(&u, 0, sizeof(u));
	buf_reset(&in);
	buf_puts(&in, "h1,h2\n\"");
	for (k = 0; k < (1 << 20) / 8; k++)
		buf_puts(&in, "1234567\n");
	buf_puts(&in, "\",b\nc,d\n");
	unit_ingest_same(&u, INGEST_CSV, in.data, in.len);
	assert_int_equal(u.rc, OK);
	assert_int_equal(u.nrows, 3);
	assert_int_equal(u.rows.len, 10 + INGEST_CELL_MAX + 5 + 7);
	buf_free(&u.rows);
	/* 250 columns: 200 handed over */
	memset(&u, 0, sizeof(u));
	buf_reset(&in);
	for (k = 0; k < 250; k++)
		buf_printf(&in, "%sc%zu", k ? "," : "", k);
	buf_puts(&in, "\na,b\n");
	unit_ingest_same(&u, INGEST_CSV, in.data, in.len);
	assert_int_equal(u.rc, OK);
	r = buf_str(&u.rows);
	assert_true(strstr(r, "[c198][c199]\n[a][b]\n") != NULL);
	assert_null(strstr(r, "c200"));
	buf_free(&u.rows);
	buf_free(&in);
}

static int
count_rows(void *arg, const struct ingest_cell *cells, size_t n)
{
	(*(unsigned long long *)arg)++;
	return 0;
}

/* The callback stops the reader: feed and end say so from then on. */
static void
test_ingest_csv_stops_when_told(void **state)
{
	struct unit_ingest u;
	const char *in = "a\nb\nc\nd\n";
	struct ingest_reader *r;
	unsigned long long n = 0;

	memset(&u, 0, sizeof(u));
	u.stop_at = 2;
	unit_ingest_same(&u, INGEST_CSV, in, strlen(in));
	assert_int_equal(u.rc, INGEST_READ_STOPPED);
	assert_int_equal(u.nrows, 2);
	assert_string_equal(buf_str(&u.rows), "[a]\n[b]\n");
	assert_string_equal(u.error, "");
	buf_free(&u.rows);
	/* the last row, handed over by end */
	memset(&u, 0, sizeof(u));
	u.stop_at = 1;
	unit_ingest_same(&u, INGEST_TXT, "x", 1);
	assert_int_equal(u.rc, INGEST_READ_STOPPED);
	buf_free(&u.rows);
	/* progress */
	assert_non_null(r = ingest_reader_new(INGEST_CSV, count_rows, &n));
	assert_int_equal(ingest_reader_rows(r), 0);
	assert_int_equal(ingest_reader_feed(r, in, strlen(in)), OK);
	assert_int_equal(ingest_reader_end(r), OK);
	assert_int_equal(ingest_reader_rows(r), 4);
	assert_int_equal(n, 4);
	assert_string_equal(ingest_reader_error(r), "");
	ingest_reader_free(r);
}

static void
test_ingest_csv_format_of_name(void **state)
{
	assert_int_equal(ingest_format_of_name("list.csv"), INGEST_CSV);
	assert_int_equal(ingest_format_of_name("LIST.CSV"), INGEST_CSV);
	assert_int_equal(ingest_format_of_name("a.b.Tsv"), INGEST_TSV);
	assert_int_equal(ingest_format_of_name("a.TXT"), INGEST_TXT);
	assert_int_equal(ingest_format_of_name("book.xlsx"), INGEST_XLSX);
	assert_int_equal(ingest_format_of_name(".csv"), INGEST_CSV);
	assert_int_equal(ingest_format_of_name("book.xls"), -1);
	assert_int_equal(ingest_format_of_name("list.csv.gz"), -1);
	assert_int_equal(ingest_format_of_name("csv"), -1);
	assert_int_equal(ingest_format_of_name("list."), -1);
	assert_int_equal(ingest_format_of_name(""), -1);
	assert_int_equal(ingest_format_of_name(NULL), -1);
	assert_string_equal(ingest_format_names[INGEST_XLSX], "xlsx");
	assert_string_equal(ingest_read_err_names[INGEST_READ_INVALID],
	    "invalid");
}

/* A source_url's Content-Type: the media type alone, in any case, its
 * parameters and white space ignored; nothing else matches. */
static void
test_ingest_csv_format_of_media_type(void **state)
{
	static const struct {
		const char	*ct;
		int		 format;
	} t[] = {
		{ "text/csv", INGEST_CSV },
		{ "Text/CSV; charset=utf-8", INGEST_CSV },
		{ "  application/csv ;header=present", INGEST_CSV },
		{ "text/tab-separated-values", INGEST_TSV },
		{ "text/tab-separated-values\t; charset=utf-8", INGEST_TSV },
		{ "application/vnd.openxmlformats-officedocument."
		    "spreadsheetml.sheet", INGEST_XLSX },
		{ "text/plain", -1 },
		{ "text/csvx", -1 },
		{ "text/cs", -1 },
		{ "application/octet-stream", -1 },
		{ "application/vnd.ms-excel", -1 },
		{ ";text/csv", -1 },
		{ "", -1 },
		{ NULL, -1 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(ingest_format_of_media_type(t[i].ct),
		    t[i].format);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ingest_csv_reads_every_dialect),
		cmocka_unit_test(test_ingest_csv_sniffs_the_start_only),
		cmocka_unit_test(test_ingest_csv_caps_cells_and_columns),
		cmocka_unit_test(test_ingest_csv_stops_when_told),
		cmocka_unit_test(test_ingest_csv_format_of_name),
		cmocka_unit_test(test_ingest_csv_format_of_media_type),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
