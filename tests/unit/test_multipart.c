/* test_multipart.c: the streaming multipart/form-data parser. Every case of
 * the table is fed whole, byte by byte, in two pieces split at every offset
 * and in random pieces, and must give the same callback stream and result
 * each time: bodies as curl and browsers write them, preamble and epilogue,
 * binary content with CR, LF, "--" and near-miss delimiters, empty parts,
 * header and Content-Disposition rules, filenames, MALFORMED and LIMIT.
 * Then the boundary of a Content-Type value, bodies handed on as they come,
 * a callback that stops the parser, and a large binary part. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/multipart.h"

/* What the callbacks saw: "<name;filename;content-type>" at part_begin
 * ("(none)" for NULL), the data, "</>" at part_end. Data pieces are
 * appended as they come, so the stream does not depend on their split. */
struct rec {
	struct buf	 out;
	const char	*stop;		/* "b2": the 2nd part_begin returns -1 (d, e) */
	int		 seen[3];	/* part_begin, part_data, part_end calls */
};

/* 0, or -1 when this call is the one r->stop names. */
static int
rec_event(struct rec *r, int kind)
{
	r->seen[kind]++;
	if (r->stop == NULL || r->stop[0] != "bde"[kind])
		return 0;
	return r->seen[kind] == r->stop[1] - '0' ? -1 : 0;
}

static int
rec_begin(void *arg, const struct multipart_part *p)
{
	struct rec *r = arg;

	assert_non_null(p->name);
	assert_int_equal(buf_printf(&r->out, "<%s;%s;%s>", p->name,
	    p->filename ? p->filename : "(none)",
	    p->content_type ? p->content_type : "(none)"), 0);
	return rec_event(r, 0);
}

static int
rec_data(void *arg, const char *data, size_t len)
{
	struct rec *r = arg;

	assert_true(len > 0);
	assert_int_equal(buf_append(&r->out, data, len), 0);
	return rec_event(r, 1);
}

static int
rec_end(void *arg)
{
	struct rec *r = arg;

	assert_int_equal(buf_puts(&r->out, "</>"), 0);
	return rec_event(r, 2);
}

static const struct multipart_cb rec_cb = { rec_begin, rec_data, rec_end };

enum split { SPLIT_WHOLE, SPLIT_BYTES, SPLIT_AT, SPLIT_RANDOM };

static uint32_t rng_state = 12345;

static uint32_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* Parses body with the split given (at: the offset of SPLIT_AT), the
 * stream in r (to free), the result of multipart_finish (or of the feed
 * that failed) and its reason in why (a copy). */
static enum multipart_err
run(const char *boundary, const char *body, size_t len, enum split how,
    size_t at, const char *stop, struct rec *r, char *why, size_t whysz)
{
	struct multipart *m;
	enum multipart_err e = MULTIPART_OK;
	size_t off = 0, n;

	memset(r, 0, sizeof(*r));
	buf_init(&r->out, BUF_NOMAX);
	assert_int_equal(buf_puts(&r->out, ""), 0);
	r->stop = stop;
	m = multipart_new(boundary, &rec_cb, r);
	assert_non_null(m);
	assert_string_equal(multipart_error(m), "");
	while (off < len && e == MULTIPART_OK) {
		switch (how) {
		case SPLIT_WHOLE:
			n = len;
			break;
		case SPLIT_BYTES:
			n = 1;
			break;
		case SPLIT_AT:
			n = off < at ? at - off : len - off;
			break;
		default:
			n = 1 + rng() % (rng() % 4 == 0 ? 200 : 9);
			break;
		}
		if (n > len - off)
			n = len - off;
		e = multipart_feed(m, body + off, n);
		off += n;
	}
	if (e == MULTIPART_OK)
		e = multipart_finish(m);
	else	/* an error stays */
		assert_int_equal(multipart_feed(m, "x", 1), e);
	assert_int_equal(multipart_finish(m), e);
	snprintf(why, whysz, "%s", multipart_error(m));
	if (e == MULTIPART_OK)
		assert_string_equal(why, "");
	else
		assert_string_not_equal(why, "");
	multipart_free(m);
	return e;
}

/* Checks one body in every split against the expected result, stream and
 * a word of the reason. */
static void
check_body(const char *what, const char *boundary, const char *body,
    size_t len, enum multipart_err want, const char *stream, size_t slen,
    const char *why_has, const char *stop)
{
	struct rec r;
	char why[256];
	size_t at, i;
	enum multipart_err e;

	for (i = 0; i < 4 + 20; i++) {
		enum split how = i < 3 ? (enum split)i : SPLIT_RANDOM;

		if (how == SPLIT_AT) {
			for (at = 1; at < len && len < 4000; at++) {
				e = run(boundary, body, len, SPLIT_AT, at,
				    stop, &r, why, sizeof(why));
				if (e != want || r.out.len != slen ||
				    memcmp(r.out.data, stream, slen) != 0)
					fail_msg("%s: split at %zu: %s (%s), "
					    "stream \"%s\"", what, at,
					    multipart_err_names[e], why,
					    buf_str(&r.out));
				buf_free(&r.out);
			}
			continue;
		}
		e = run(boundary, body, len, how, 0, stop, &r, why,
		    sizeof(why));
		if (e != want || r.out.len != slen ||
		    memcmp(r.out.data, stream, slen) != 0)
			fail_msg("%s: split %zu: %s (%s), stream \"%s\"", what,
			    i, multipart_err_names[e], why, buf_str(&r.out));
		if (why_has != NULL && strstr(why, why_has) == NULL)
			fail_msg("%s: reason \"%s\" lacks \"%s\"", what, why,
			    why_has);
		buf_free(&r.out);
	}
}

/* A string literal and its length (it may hold NUL bytes). */
#define S(lit)	lit, sizeof(lit) - 1

struct mcase {
	const char	*what;
	const char	*boundary;
	const char	*body;
	size_t		 len;
	enum multipart_err want;
	const char	*stream;
	size_t		 slen;
	const char	*why;		/* a word of multipart_error(), or NULL */
};

#define CURL_B	"------------------------3a17825e7534c03d"
#define CHROME_B "----WebKitFormBoundary7MA4YWxkTrZu0gW"
#define FIREFOX_B "---------------------------9051914041544843365972754266"
#define CD	"Content-Disposition: form-data; "
#define PART(hdrs, data)	"--bnd\r\n" hdrs "\r\n\r\n" data "\r\n"
#define NOHDR(data)	"--bnd\r\n\r\n" data "\r\n"
#define CLOSE	"--bnd--\r\n"

static const struct mcase cases[] = {
	/* Bodies as clients write them. */
	{ "curl -F file=@list.csv -F name=mylist -F preview=true -F column_mapping=...",
	  CURL_B, S(
	"--------------------------3a17825e7534c03d\r\n"
	"Content-Disposition: form-data; name=\"file\"; filename=\"list.csv\"\r\n"
	"Content-Type: application/octet-stream\r\n"
	"\r\n"
	"email,name\r\n"
	"ann@example.com,Ann\n"
	"bob@example.org,\"Bob, Jr.\"\n"
	"\r\n"
	"--------------------------3a17825e7534c03d\r\n"
	"Content-Disposition: form-data; name=\"name\"\r\n"
	"\r\n"
	"mylist\r\n"
	"--------------------------3a17825e7534c03d\r\n"
	"Content-Disposition: form-data; name=\"preview\"\r\n"
	"\r\n"
	"true\r\n"
	"--------------------------3a17825e7534c03d\r\n"
	"Content-Disposition: form-data; name=\"column_mapping\"\r\n"
	"\r\n"
	"{\"email\":\"email\"}\r\n"
	"--------------------------3a17825e7534c03d--\r\n"), MULTIPART_OK, S(
	"<file;list.csv;application/octet-stream>email,name\r\n"
	"ann@example.com,Ann\nbob@example.org,\"Bob, Jr.\"\n</>"
	"<name;(none);(none)>mylist</><preview;(none);(none)>true</>"
	"<column_mapping;(none);(none)>{\"email\":\"email\"}</>"), NULL },
	{ "Chrome: a file, a quote in its name as %22, an empty file input",
	  CHROME_B, S(
	"------WebKitFormBoundary7MA4YWxkTrZu0gW\r\n"
	"Content-Disposition: form-data; name=\"file\"; filename=\"my %22best%22 list.csv\"\r\n"
	"Content-Type: text/csv\r\n"
	"\r\n"
	"email\r\nann@example.com\r\n\r\n"
	"------WebKitFormBoundary7MA4YWxkTrZu0gW\r\n"
	"Content-Disposition: form-data; name=\"other\"; filename=\"\"\r\n"
	"Content-Type: application/octet-stream\r\n"
	"\r\n"
	"\r\n"
	"------WebKitFormBoundary7MA4YWxkTrZu0gW--\r\n"), MULTIPART_OK, S(
	"<file;my %22best%22 list.csv;text/csv>email\r\nann@example.com\r\n</>"
	"<other;;application/octet-stream></>"), NULL },
	{ "Firefox: UTF-8 filename as raw bytes",
	  FIREFOX_B, S(
	"-----------------------------9051914041544843365972754266\r\n"
	"Content-Disposition: form-data; name=\"file\"; filename=\"adr\xc3\xa8sses.txt\"\r\n"
	"Content-Type: text/plain\r\n"
	"\r\n"
	"a@b.c\n"
	"\r\n"
	"-----------------------------9051914041544843365972754266--\r\n"),
	  MULTIPART_OK, S("<file;adr\xc3\xa8sses.txt;text/plain>a@b.c\n</>"), NULL },

	/* Structure. */
	{ "preamble and epilogue are ignored, with delimiters in the epilogue",
	  "bnd", S("This is a preamble.\r\n--bn\r\n-- bnd\r\n"
	  PART(CD "name=a", "x") "--bnd--\r\nepilogue\r\n--bnd\r\nContent-"),
	  MULTIPART_OK, S("<a;(none);(none)>x</>"), NULL },
	{ "preamble with a lone CR and LF before the first delimiter",
	  "bnd", S("\r\r\n\n\r\n--bnd\r\n\r\ny\r\n--bnd--"), MULTIPART_OK,
	  S("<;(none);(none)>y</>"), NULL },
	{ "spaces and tabs after a delimiter", "bnd",
	  S("--bnd \t \r\n" CD "name=a\r\n\r\nx\r\n--bnd\t\r\n\r\n\r\n--bnd--"),
	  MULTIPART_OK, S("<a;(none);(none)>x</><;(none);(none)></>"), NULL },
	{ "close delimiter with no part", "bnd", S("--bnd--"), MULTIPART_OK,
	  S(""), NULL },
	{ "close delimiter without CRLF after it", "bnd",
	  S(PART(CD "name=a", "x") "--bnd--"), MULTIPART_OK,
	  S("<a;(none);(none)>x</>"), NULL },
	{ "a part without headers", "bnd", S("--bnd\r\n\r\ndata\r\n--bnd--"),
	  MULTIPART_OK, S("<;(none);(none)>data</>"), NULL },
	{ "empty parts", "bnd",
	  S(PART(CD "name=a", "") PART(CD "name=b", "") CLOSE), MULTIPART_OK,
	  S("<a;(none);(none)></><b;(none);(none)></>"), NULL },
	{ "empty file part", "bnd",
	  S(PART(CD "name=\"file\"; filename=\"empty.csv\"\r\n"
	  "Content-Type: text/csv", "") CLOSE), MULTIPART_OK,
	  S("<file;empty.csv;text/csv></>"), NULL },
	{ "a one-character boundary", "-",
	  S("---\r\n\r\n-\r\n--\r\n---x\r\n----"), MULTIPART_MALFORMED,
	  S("<;(none);(none)>-\r\n--</>"), "goes on" },
	{ "a one-character boundary, closed", "-",
	  S("---\r\n\r\n-\r\n--\r\n-----\r\n"), MULTIPART_OK,
	  S("<;(none);(none)>-\r\n--</>"), NULL },

	/* Binary content. */
	{ "CR, LF, dashes and near-miss delimiters in a part's body", "bnd",
	  S(PART(CD "name=f; filename=f.bin",
	  "\r\n--bn\r\n--BND\r\n-bnd\n--bnd\r--bnd x--bnd\r\r\n-\r\n--b"
	  "\r\n--bn\r\r\n\r\n--\r\n") CLOSE), MULTIPART_OK,
	  S("<f;f.bin;(none)>\r\n--bn\r\n--BND\r\n-bnd\n--bnd\r--bnd x--bnd"
	  "\r\r\n-\r\n--b\r\n--bn\r\r\n\r\n--\r\n</>"), NULL },
	{ "NUL bytes and all byte values in a part's body", "bnd",
	  S(NOHDR("\0\x01\x7f\x80\xfe\xff\0\r\0\n\0") CLOSE), MULTIPART_OK,
	  S("<;(none);(none)>\0\x01\x7f\x80\xfe\xff\0\r\0\n\0</>"), NULL },
	{ "a body that ends with CR before the delimiter", "bnd",
	  S(NOHDR("abc\r") CLOSE), MULTIPART_OK,
	  S("<;(none);(none)>abc\r</>"), NULL },
	{ "a body that is CRLF", "bnd", S(NOHDR("\r\n") CLOSE),
	  MULTIPART_OK, S("<;(none);(none)>\r\n</>"), NULL },
	{ "a body that is the delimiter less its last byte", "bnd",
	  S(NOHDR("\r\n--bn") CLOSE), MULTIPART_OK,
	  S("<;(none);(none)>\r\n--bn</>"), NULL },

	/* Headers. */
	{ "header names in any case", "bnd",
	  S(PART("content-disposition: FORM-DATA; NAME=x; FileName=\"a.csv\"\r\n"
	  "CONTENT-TYPE: text/csv", "1") CLOSE), MULTIPART_OK,
	  S("<x;a.csv;text/csv>1</>"), NULL },
	{ "other headers are ignored", "bnd",
	  S(PART("X-Foo: bar\r\nContent-Transfer-Encoding: binary\r\n"
	  CD "name=a\r\nContent-Length: 1", "1") CLOSE), MULTIPART_OK,
	  S("<a;(none);(none)>1</>"), NULL },
	{ "values trimmed, Content-Type kept whole", "bnd",
	  S(PART("Content-Type:   text/csv; charset=utf-8 \t\r\n"
	  "Content-Disposition:form-data;name=a  ", "1") CLOSE), MULTIPART_OK,
	  S("<a;(none);text/csv; charset=utf-8>1</>"), NULL },
	{ "folded header lines are unfolded", "bnd",
	  S(PART("Content-Disposition: form-data;\r\n name=\"a\";\r\n\tfilename=b.txt\r\n"
	  "Content-Type: text/\r\n plain", "1") CLOSE), MULTIPART_OK,
	  S("<a;b.txt;text/   plain>1</>"), NULL },
	{ "a first header line that is folded", "bnd",
	  S(PART(" " CD "name=a", "1") CLOSE), MULTIPART_MALFORMED, S(""),
	  "folded" },
	{ "bare LF in headers", "bnd",
	  S("--bnd\r\n" CD "name=a\n\n1\r\n--bnd--"), MULTIPART_MALFORMED,
	  S(""), "bare LF" },
	{ "bare LF at the end of headers", "bnd",
	  S("--bnd\r\n" CD "name=a\r\n\n1\r\n--bnd--"), MULTIPART_MALFORMED,
	  S(""), "bare LF" },
	{ "bare CR in headers", "bnd",
	  S("--bnd\r\n" CD "name=a\rX: y\r\n\r\n1\r\n--bnd--"),
	  MULTIPART_MALFORMED, S(""), "bare CR" },
	{ "a delimiter line that ends with LF alone", "bnd",
	  S("--bnd\n" CD "name=a\r\n\r\n1\r\n--bnd--"), MULTIPART_MALFORMED,
	  S(""), "goes on" },
	{ "a delimiter line that ends with CR and no LF", "bnd",
	  S("--bnd\rX"), MULTIPART_MALFORMED, S(""), "CRLF" },
	{ "a delimiter that goes on with other characters", "bnd",
	  S(NOHDR("1") "--bndx\r\n\r\n2\r\n--bnd--"), MULTIPART_MALFORMED,
	  S("<;(none);(none)>1</>"), "goes on" },
	{ "a delimiter followed by one dash", "bnd",
	  S(NOHDR("1") "--bnd-\r\n"), MULTIPART_MALFORMED,
	  S("<;(none);(none)>1</>"), "goes on" },
	{ "a delimiter-like line in the preamble", "bnd",
	  S("--bndary\r\n" NOHDR("1") CLOSE), MULTIPART_MALFORMED, S(""),
	  "goes on" },
	{ "a NUL byte in headers", "bnd",
	  S(PART(CD "name=\"a\0b\"", "1") CLOSE), MULTIPART_MALFORMED, S(""),
	  "control" },
	{ "an escape character in headers", "bnd",
	  S(PART(CD "name=\"a\x1b[31m\"", "1") CLOSE), MULTIPART_MALFORMED,
	  S(""), "control" },
	{ "a header line without a colon", "bnd",
	  S(PART("Content-Disposition form-data", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "colon" },
	{ "a space before the colon", "bnd",
	  S(PART("Content-Type : text/csv", "1") CLOSE), MULTIPART_MALFORMED,
	  S(""), "colon" },
	{ "a header line without a name", "bnd",
	  S(PART(": x", "1") CLOSE), MULTIPART_MALFORMED, S(""), "colon" },
	{ "two Content-Disposition headers", "bnd",
	  S(PART(CD "name=a\r\n" CD "name=b", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "two" },
	{ "two Content-Type headers", "bnd",
	  S(PART("Content-Type: a/b\r\ncontent-type: c/d", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "two" },

	/* Content-Disposition. */
	{ "parameters in any order, white space around them", "bnd",
	  S(PART("Content-Disposition: form-data ; filename = \"l.csv\" ;name= f ;", "1")
	  CLOSE), MULTIPART_OK, S("<f;l.csv;(none)>1</>"), NULL },
	{ "unknown parameters are ignored", "bnd",
	  S(PART(CD "size=12; name=a; creation-date=\"x; y\"", "1") CLOSE),
	  MULTIPART_OK, S("<a;(none);(none)>1</>"), NULL },
	{ "quoted strings with backslash escapes", "bnd",
	  S(PART(CD "name=\"a\\\"b\\\\c;d=e\\x\"; filename=\"q\\\"t.csv\"", "1")
	  CLOSE), MULTIPART_OK, S("<a\"b\\c;d=ex;q\"t.csv;(none)>1</>"), NULL },
	{ "a name with UTF-8 bytes and a tab", "bnd",
	  S(PART(CD "name=\"n\xc3\xa9\tx\"", "1") CLOSE), MULTIPART_OK,
	  S("<n\xc3\xa9\tx;(none);(none)>1</>"), NULL },
	{ "a Content-Disposition without name", "bnd",
	  S(PART("Content-Disposition: form-data", "1") CLOSE), MULTIPART_OK,
	  S("<;(none);(none)>1</>"), NULL },
	{ "a Content-Disposition that is not form-data", "bnd",
	  S(PART("Content-Disposition: attachment; name=a", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "form-data" },
	{ "name twice", "bnd", S(PART(CD "name=a; name=b", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "twice" },
	{ "filename twice", "bnd",
	  S(PART(CD "name=a; filename=b; FILENAME=c", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "twice" },
	{ "an unterminated quoted string", "bnd",
	  S(PART(CD "name=\"abc", "1") CLOSE), MULTIPART_MALFORMED, S(""),
	  "not well formed" },
	{ "a parameter without a value", "bnd",
	  S(PART(CD "name=", "1") CLOSE), MULTIPART_MALFORMED, S(""),
	  "not well formed" },
	{ "a parameter without =", "bnd",
	  S(PART(CD "name", "1") CLOSE), MULTIPART_MALFORMED, S(""),
	  "not well formed" },
	{ "junk after a quoted value", "bnd",
	  S(PART(CD "name=\"a\"b", "1") CLOSE), MULTIPART_MALFORMED, S(""),
	  "not well formed" },

	/* Filenames. */
	{ "a Unix path keeps its last component", "bnd",
	  S(PART(CD "name=f; filename=\"/home/ann/lists/list.csv\"", "1") CLOSE),
	  MULTIPART_OK, S("<f;list.csv;(none)>1</>"), NULL },
	{ "a Windows path as old browsers sent it", "bnd",
	  S(PART(CD "name=f; filename=\"C:\\Users\\ann\\list.csv\"", "1") CLOSE),
	  MULTIPART_OK, S("<f;list.csv;(none)>1</>"), NULL },
	{ "a Windows network path", "bnd",
	  S(PART(CD "name=f; filename=\"\\\\srv\\share\\x.txt\"", "1") CLOSE),
	  MULTIPART_OK, S("<f;x.txt;(none)>1</>"), NULL },
	{ "an escaped backslash is a separator too", "bnd",
	  S(PART(CD "name=f; filename=\"dir\\\\a.csv\"", "1") CLOSE),
	  MULTIPART_OK, S("<f;a.csv;(none)>1</>"), NULL },
	{ "a relative path and dot names", "bnd",
	  S(PART(CD "name=f; filename=\"../../etc/passwd\"", "1")
	  PART(CD "name=g; filename=\"a/..\"", "2")
	  PART(CD "name=h; filename=\".\"", "3")
	  PART(CD "name=i; filename=\"dir/\"", "4") CLOSE), MULTIPART_OK,
	  S("<f;passwd;(none)>1</><g;;(none)>2</><h;;(none)>3</><i;;(none)>4</>"),
	  NULL },
	{ "filename* in UTF-8 wins over filename", "bnd",
	  S(PART(CD "name=f; filename*=UTF-8''%e2%82%AC%20rates.csv; filename=\"EUR rates.csv\"", "1")
	  PART(CD "filename=\"x.csv\"; name=g; filename*=utf-8'en'dir%2Fy.csv", "2")
	  CLOSE), MULTIPART_OK,
	  S("<f;\xe2\x82\xac rates.csv;(none)>1</><g;y.csv;(none)>2</>"), NULL },
	{ "filename* in ISO-8859-1 becomes UTF-8", "bnd",
	  S(PART(CD "name=f; filename*=ISO-8859-1'en'%A3%e9.csv", "1") CLOSE),
	  MULTIPART_OK, S("<f;\xc2\xa3\xc3\xa9.csv;(none)>1</>"), NULL },
	{ "filename* quoted", "bnd",
	  S(PART(CD "name=f; filename*=\"UTF-8''a%20b.csv\"", "1") CLOSE),
	  MULTIPART_OK, S("<f;a b.csv;(none)>1</>"), NULL },
	{ "filename* in another charset is ignored", "bnd",
	  S(PART(CD "name=f; filename*=KOI8-R''%C1.csv; filename=a.csv", "1")
	  PART(CD "name=g; filename*=KOI8-R''%C1.csv", "2") CLOSE),
	  MULTIPART_OK, S("<f;a.csv;(none)>1</><g;(none);(none)>2</>"), NULL },
	{ "filename* with a bad percent escape", "bnd",
	  S(PART(CD "name=f; filename*=UTF-8''a%G1.csv", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "not well formed" },
	{ "filename* cut after a percent sign", "bnd",
	  S(PART(CD "name=f; filename*=UTF-8''a%4", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "not well formed" },
	{ "filename* with an encoded NUL", "bnd",
	  S(PART(CD "name=f; filename*=UTF-8''a%00.csv", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "not well formed" },
	{ "filename* with an encoded newline", "bnd",
	  S(PART(CD "name=f; filename*=UTF-8''a%0a.csv", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "not well formed" },
	{ "filename* without charset and language", "bnd",
	  S(PART(CD "name=f; filename*=a.csv", "1") CLOSE),
	  MULTIPART_MALFORMED, S(""), "not well formed" },
	{ "filename* twice", "bnd",
	  S(PART(CD "name=f; filename*=UTF-8''a; filename*=UTF-8''b", "1")
	  CLOSE), MULTIPART_MALFORMED, S(""), "twice" },

	/* Truncated bodies. */
	{ "an empty body", "bnd", S(""), MULTIPART_MALFORMED, S(""),
	  "no delimiter" },
	{ "a preamble only", "bnd", S("hello\r\n--bn"), MULTIPART_MALFORMED,
	  S(""), "no delimiter" },
	{ "cut in a delimiter line", "bnd", S("--bnd  "), MULTIPART_MALFORMED,
	  S(""), "before its closing" },
	{ "cut in headers", "bnd", S("--bnd\r\n" CD "name=a\r\n"),
	  MULTIPART_MALFORMED, S(""), "before its closing" },
	{ "cut in a part's body", "bnd",
	  S("--bnd\r\n" CD "name=a\r\n\r\nabc\r\n--bn"), MULTIPART_MALFORMED,
	  S("<a;(none);(none)>abc"), "before its closing" },
	{ "no closing delimiter", "bnd", S(PART(CD "name=a", "abc") "--bnd\r\n"),
	  MULTIPART_MALFORMED, S("<a;(none);(none)>abc</>"),
	  "before its closing" },
	{ "half a closing delimiter", "bnd", S(PART(CD "name=a", "abc") "--bnd-"),
	  MULTIPART_MALFORMED, S("<a;(none);(none)>abc</>"),
	  "before its closing" },
	{ "the boundary without dashes at the end", "bnd",
	  S(PART(CD "name=a", "abc") "bnd--\r\n"), MULTIPART_MALFORMED,
	  S("<a;(none);(none)>abc\r\nbnd--"), "before its closing" },
};

static void
test_multipart_table_same_stream_in_every_split(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct mcase *c = &cases[i];

		print_message("case %zu: %s\n", i, c->what);
		check_body(c->what, c->boundary, c->body, c->len, c->want,
		    c->stream, c->slen, c->why, NULL);
	}
}

/* A body of n parts named p0, p1... with data d0, d1... */
static void
parts_body(struct buf *body, struct buf *stream, int n)
{
	int i;

	buf_init(body, BUF_NOMAX);
	buf_init(stream, BUF_NOMAX);
	assert_int_equal(buf_puts(stream, ""), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(buf_printf(body, "--bnd\r\n" CD "name=p%d\r\n"
		    "\r\nd%d\r\n", i, i), 0);
		assert_int_equal(buf_printf(stream, "<p%d;(none);(none)>d%d</>",
		    i, i), 0);
	}
	assert_int_equal(buf_puts(body, CLOSE), 0);
}

static void
test_multipart_at_most_64_parts(void **state)
{
	struct buf body, stream;

	(void)state;
	parts_body(&body, &stream, MULTIPART_PARTS_MAX);
	check_body("64 parts", "bnd", body.data, body.len, MULTIPART_OK,
	    stream.data, stream.len, NULL, NULL);
	buf_free(&body);
	buf_free(&stream);
	parts_body(&body, &stream, MULTIPART_PARTS_MAX + 1);
	/* The 65th part is refused when its delimiter line ends. */
	stream.len -= strlen("<p64;(none);(none)>d64</>");
	check_body("65 parts", "bnd", body.data, body.len, MULTIPART_LIMIT,
	    stream.data, stream.len, "64 parts", NULL);
	buf_free(&body);
	buf_free(&stream);
}

/* A part whose headers are n bytes with the empty line that ends them. */
static void
header_body(struct buf *body, size_t n, int fields)
{
	static const char cd[] = CD "name=a\r\n";
	int i;

	buf_init(body, BUF_NOMAX);
	assert_int_equal(buf_puts(body, "--bnd\r\n" CD "name=a\r\n"), 0);
	for (i = 2; i < fields; i++)
		assert_int_equal(buf_puts(body, "X: y\r\n"), 0);
	n -= sizeof(cd) - 1 + 6 * (size_t)(fields - 2) + strlen("X-Pad: \r\n\r\n");
	assert_int_equal(buf_puts(body, "X-Pad: "), 0);
	while (n-- > 0)
		assert_int_equal(buf_putc(body, 'p'), 0);
	assert_int_equal(buf_puts(body, "\r\n\r\n1\r\n" CLOSE), 0);
}

static void
test_multipart_headers_at_most_8k_and_32_fields(void **state)
{
	struct buf body;

	(void)state;
	header_body(&body, MULTIPART_HEADER_MAX, 2);
	check_body("8192 bytes of headers", "bnd", body.data, body.len,
	    MULTIPART_OK, S("<a;(none);(none)>1</>"), NULL, NULL);
	buf_free(&body);
	header_body(&body, MULTIPART_HEADER_MAX + 1, 2);
	check_body("8193 bytes of headers", "bnd", body.data, body.len,
	    MULTIPART_LIMIT, S(""), "8192", NULL);
	buf_free(&body);
	header_body(&body, 1000, MULTIPART_HEADERS_MAX);
	check_body("32 header fields", "bnd", body.data, body.len,
	    MULTIPART_OK, S("<a;(none);(none)>1</>"), NULL, NULL);
	buf_free(&body);
	header_body(&body, 1000, MULTIPART_HEADERS_MAX + 1);
	check_body("33 header fields", "bnd", body.data, body.len,
	    MULTIPART_LIMIT, S(""), "32", NULL);
	buf_free(&body);
}

static void
test_multipart_callback_stops_the_parser(void **state)
{
	static const char body[] = PART(CD "name=a", "xyz") NOHDR("") CLOSE;
	enum multipart_err e;
	struct rec r;
	char why[256];

	(void)state;
	check_body("stop at the first part_begin", "bnd", S(body),
	    MULTIPART_STOPPED, S("<a;(none);(none)>"), "stopped", "b1");
	check_body("stop at the first part_end", "bnd", S(body),
	    MULTIPART_STOPPED, S("<a;(none);(none)>xyz</>"), "stopped", "e1");
	check_body("stop at the second part_begin", "bnd", S(body),
	    MULTIPART_STOPPED, S("<a;(none);(none)>xyz</><;(none);(none)>"),
	    "stopped", "b2");
	/* Where part_data stops depends on the pieces: no call after it. */
	e = run("bnd", S(body), SPLIT_WHOLE, 0, "d1", &r, why, sizeof(why));
	assert_int_equal(e, MULTIPART_STOPPED);
	assert_string_equal(buf_str(&r.out), "<a;(none);(none)>xyz");
	buf_free(&r.out);
	e = run("bnd", S(body), SPLIT_BYTES, 0, "d2", &r, why, sizeof(why));
	assert_int_equal(e, MULTIPART_STOPPED);
	assert_string_equal(buf_str(&r.out), "<a;(none);(none)>xy");
	assert_int_equal(r.seen[1], 2);
	assert_int_equal(r.seen[2], 0);
	buf_free(&r.out);
}

static void
test_multipart_boundary_of_content_type(void **state)
{
	static const struct {
		const char	*ct;
		const char	*want;		/* NULL: refused */
	} bc[] = {
		{ "multipart/form-data; boundary=abc", "abc" },
		{ "multipart/form-data; boundary=" CURL_B, CURL_B },
		{ "Multipart/Form-Data; BOUNDARY=abc", "abc" },
		{ "  multipart/form-data;boundary=abc  ", "abc" },
		{ "multipart/form-data ; charset=utf-8 ; boundary = abc ;", "abc" },
		{ "multipart/form-data; boundary=\"a b:c?d\"", "a b:c?d" },
		{ "multipart/form-data; boundary=\"a\\\"b\"", NULL },
		{ "multipart/form-data; boundary=----=_Part_0_1", "----=_Part_0_1" },
		{ "multipart/form-data; boundary=1234567890123456789012345678901234567890123456789012345678901234567890",
		  "1234567890123456789012345678901234567890123456789012345678901234567890" },
		{ "multipart/form-data; boundary=12345678901234567890123456789012345678901234567890123456789012345678901",
		  NULL },
		{ "multipart/form-data; boundary=\"\"", NULL },
		{ "multipart/form-data; boundary=", NULL },
		{ "multipart/form-data; boundary=\"ab \"", NULL },
		{ "multipart/form-data; boundary=\"a@b\"", NULL },
		{ "multipart/form-data; boundary=\"abc", NULL },
		{ "multipart/form-data; boundary=abc junk", NULL },
		{ "multipart/form-data; boundary=a; boundary=a", NULL },
		{ "multipart/form-data", NULL },
		{ "multipart/form-data; charset=utf-8", NULL },
		{ "multipart/mixed; boundary=abc", NULL },
		{ "multipart/form-datax; boundary=abc", NULL },
		{ "text/plain; boundary=abc", NULL },
		{ "application/json", NULL },
		{ "", NULL },
	};
	char out[MULTIPART_BOUNDARY_MAX + 1], small[3];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bc) / sizeof(bc[0]); i++) {
		int r;

		print_message("case %zu: %s\n", i, bc[i].ct);
		memset(out, 'Z', sizeof(out));
		r = multipart_boundary(bc[i].ct, out, sizeof(out));
		if (bc[i].want == NULL) {
			assert_int_equal(r, -1);
			continue;
		}
		assert_int_equal(r, 0);
		assert_string_equal(out, bc[i].want);
	}
	assert_int_equal(multipart_boundary(NULL, out, sizeof(out)), -1);
	assert_int_equal(multipart_boundary("multipart/form-data; boundary=ab",
	    small, sizeof(small)), 0);
	assert_string_equal(small, "ab");
	assert_int_equal(multipart_boundary("multipart/form-data; boundary=abc",
	    small, sizeof(small)), -1);
}

static void
test_multipart_new_refuses_bad_boundaries(void **state)
{
	char b[MULTIPART_BOUNDARY_MAX + 2];
	struct multipart *m;

	(void)state;
	assert_null(multipart_new("", &rec_cb, NULL));
	assert_null(multipart_new(NULL, &rec_cb, NULL));
	memset(b, 'a', sizeof(b) - 1);
	b[sizeof(b) - 1] = '\0';
	assert_null(multipart_new(b, &rec_cb, NULL));
	b[sizeof(b) - 2] = '\0';
	assert_non_null(m = multipart_new(b, &rec_cb, NULL));
	multipart_free(m);
	assert_non_null(m = multipart_new("x", NULL, NULL));	/* no callbacks */
	assert_int_equal(multipart_feed(m, S("--x\r\n\r\n1\r\n--x--")),
	    MULTIPART_OK);
	assert_int_equal(multipart_finish(m), MULTIPART_OK);
	multipart_free(m);
}

/* A part's body goes to part_data as it comes: after each piece, all of it
 * but the bytes that may start a delimiter. */
static void
test_multipart_hands_bodies_on_as_they_come(void **state)
{
	static const char head[] = "--bnd\r\n" CD "name=f\r\n\r\n";
	struct multipart *m;
	struct rec r;
	size_t i, before;

	(void)state;
	memset(&r, 0, sizeof(r));
	buf_init(&r.out, BUF_NOMAX);
	assert_non_null(m = multipart_new("bnd", &rec_cb, &r));
	assert_int_equal(multipart_feed(m, S(head)), MULTIPART_OK);
	assert_string_equal(buf_str(&r.out), "<f;(none);(none)>");
	before = r.out.len;
	for (i = 1; i <= 1000; i++) {
		assert_int_equal(multipart_feed(m, S("0123456789")), MULTIPART_OK);
		assert_int_equal(r.out.len, before + 10 * i);
	}
	assert_int_equal(multipart_feed(m, S("abc\r\n--bn")), MULTIPART_OK);
	assert_int_equal(r.out.len, before + 10003);	/* "\r\n--bn" held */
	assert_int_equal(multipart_feed(m, S("x")), MULTIPART_OK);
	assert_int_equal(r.out.len, before + 10010);	/* it was not one */
	assert_int_equal(multipart_feed(m, S("\r")), MULTIPART_OK);
	assert_int_equal(r.out.len, before + 10010);
	assert_int_equal(multipart_feed(m, S("\r")), MULTIPART_OK);
	assert_int_equal(r.out.len, before + 10011);	/* the first CR */
	assert_int_equal(multipart_feed(m, S("\n--bnd--")), MULTIPART_OK);
	assert_int_equal(multipart_finish(m), MULTIPART_OK);
	assert_int_equal(r.out.len, before + 10011 + 3);
	assert_memory_equal(r.out.data + r.out.len - 5, "x\r</>", 5);
	multipart_free(m);
	buf_free(&r.out);
}

/* Random binary file content (with CR, LF, dashes and prefixes of the
 * delimiter planted in it), 2 MB, fed in random pieces. */
static void
test_multipart_large_binary_part(void **state)
{
	static const char head[] = "--" CHROME_B "\r\n" CD
	    "name=\"file\"; filename=\"big.bin\"\r\n\r\n";
	static const char tail[] = "\r\n--" CHROME_B "--\r\n";
	static const char delim[] = "\r\n--" CHROME_B;
	size_t n = 2 * 1024 * 1024, i, off, k, total;
	char *body, *file, *p;
	struct multipart *m;
	struct rec r;

	(void)state;
	assert_non_null(file = malloc(n));
	for (i = 0; i < n; i++)
		file[i] = (char)(rng() >> 7);
	for (i = 0; i + 64 < n; i += 1 + rng() % 4000) {	/* near misses */
		k = 1 + rng() % (sizeof(delim) - 2);
		memcpy(file + i, delim, k);
	}
	/* A prefix and a random byte after it may make a whole delimiter. */
	while ((p = memmem(file, n, delim, sizeof(delim) - 1)) != NULL)
		p[sizeof(delim) - 2] ^= 1;
	total = sizeof(head) - 1 + n + sizeof(tail) - 1;
	assert_non_null(body = malloc(total));
	memcpy(body, head, sizeof(head) - 1);
	memcpy(body + sizeof(head) - 1, file, n);
	memcpy(body + sizeof(head) - 1 + n, tail, sizeof(tail) - 1);
	memset(&r, 0, sizeof(r));
	buf_init(&r.out, BUF_NOMAX);
	assert_non_null(m = multipart_new(CHROME_B, &rec_cb, &r));
	for (off = 0; off < total; off += k) {
		k = 1 + rng() % 70000;
		if (k > total - off)
			k = total - off;
		assert_int_equal(multipart_feed(m, body + off, k), MULTIPART_OK);
	}
	assert_int_equal(multipart_finish(m), MULTIPART_OK);
	k = strlen("<file;big.bin;(none)>");
	assert_int_equal(r.out.len, k + n + 3);
	assert_memory_equal(r.out.data, "<file;big.bin;(none)>", k);
	assert_memory_equal(r.out.data + k, file, n);
	assert_memory_equal(r.out.data + k + n, "</>", 3);
	multipart_free(m);
	buf_free(&r.out);
	free(body);
	free(file);
}

static void
test_multipart_err_names(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < MULTIPART_ERR__MAX; i++)
		assert_non_null(multipart_err_names[i]);
	assert_string_equal(multipart_err_names[MULTIPART_LIMIT], "limit");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_multipart_table_same_stream_in_every_split),
		cmocka_unit_test(test_multipart_at_most_64_parts),
		cmocka_unit_test(test_multipart_headers_at_most_8k_and_32_fields),
		cmocka_unit_test(test_multipart_callback_stops_the_parser),
		cmocka_unit_test(test_multipart_boundary_of_content_type),
		cmocka_unit_test(test_multipart_new_refuses_bad_boundaries),
		cmocka_unit_test(test_multipart_hands_bodies_on_as_they_come),
		cmocka_unit_test(test_multipart_large_binary_part),
		cmocka_unit_test(test_multipart_err_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
