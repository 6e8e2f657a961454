/* test_jobs_body.c: the stream parser of job creation bodies, table-driven:
 * what jansson refused (duplicate keys at any depth, \u0000, lone
 * surrogates, bad UTF-8, form feed and vertical tab, numbers that do not
 * fit, nesting beyond 2048, trailing text) is invalid JSON with a
 * position, a value that is not an object is told apart, and each field is
 * read as bulk_parse expects: name and webhook_url lengths, callback_data
 * as the object jansson made and its limits, the emails array's size, its
 * first non-string element, its entries. Every case gives the same result
 * fed whole and byte by byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/jobs_body.h"
#include "util/buf.h"

#define MEMORY (144 << 20)	/* api_job_memory_mb's default */
#define ANY (-1)
#define A JOBS_BODY_ABSENT
#define S JOBS_BODY_SET
#define W JOBS_BODY_WRONG
#define BIG JOBS_BODY_TOO_BIG
#define BAD JOBS_BODY_INVALID_JSON

struct bcase {
	const char	*body;
	int		 batch;
	int		 rc;		/* enum jobs_body_err */
	int		 name, url, cb, emails;	/* enum jobs_body_field */
	int		 emails_rc;	/* enum jobs_err, ANY */
	long		 count, n, extra; /* extra: duplicates, or bad_index */
};

#define OK_(b, batch, nm, url, cb, em, erc, count, n, extra) \
	{ b, batch, JOBS_BODY_OK, nm, url, cb, em, erc, count, n, extra }
#define BAD_(b) { b, 1, BAD, ANY, ANY, ANY, ANY, ANY, ANY, ANY, ANY }

static const struct bcase cases[] = {
	OK_("{\"emails\":[\"a@b.co\",\"A@B.CO\",\"\"]}", 0, A, A, A, S,
	    JOBS_OK, 3, 1, 1),
	OK_(" {\"name\" : \"list\", \"emails\":\n[\"a@b.co\"]\r\n} ", 0, S, A,
	    A, S, JOBS_OK, 1, 1, 0),
	/* duplicate keys, at the top, nested, escaped */
	BAD_("{\"emails\":[\"a@b.co\"],\"name\":\"x\",\"name\":\"y\"}"),
	BAD_("{\"x\":1,\"emails\":[\"a@b.co\"],\"x\":2}"),
	BAD_("{\"emails\":[\"a@b.co\",{\"k\":1,\"j\":2,\"k\":3}]}"),
	BAD_("{\"em\\u0061ils\":[],\"emails\":[\"a@b.co\"]}"),
	BAD_("{\"emails\":[\"a@b.co\"],\"callback_data\":{\"a\":{\"b\":1,"
	    "\"b\":2}}}"),
	/* what yajl alone would take */
	BAD_("{\"emails\":[\"a\\u0000@b.co\"]}"),
	BAD_("{\"emails\":[\"\\ud800\"]}"),
	BAD_("{\"emails\":[\"\\ud800\\u0041\"]}"),
	BAD_("{\"emails\":[\"\\udc00\"]}"),
	BAD_("{\"emails\"\f:[\"a@b.co\"]}"),
	BAD_("{\"emails\":\v[\"a@b.co\"]}"),
	BAD_("{\"emails\":[\"\xc0\x80@b.co\"]}"),
	BAD_("{\"emails\":[\"\xed\xa0\x80@b.co\"]}"),
	BAD_("{\"emails\":[\"\xf4\x90\x80\x80@b.co\"]}"),
	BAD_("{\"emails\":[\"a@b.co\"],\"n\":9223372036854775808}"),
	BAD_("{\"emails\":[\"a@b.co\"],\"n\":-9223372036854775809}"),
	BAD_("{\"emails\":[\"a@b.co\"],\"n\":1e309}"),
	BAD_("{\"emails\":[\"a@b.co\"],\"callback_data\":{\"n\":-1e309}}"),
	/* and what both refuse */
	BAD_(""),
	BAD_("{\"emails\":[\"a@b.co\"]} x"),
	BAD_("{\"emails\":[\"a@b.co\"]}{}"),
	BAD_("{\"emails\":[\"a@b.co\""),
	BAD_("{\"emails\":[\"a@b.co\",]}"),
	BAD_("{'emails':[]}"),
	BAD_("{\"emails\":[\"a@b.co\"]} // comment"),
	OK_("{\"emails\":[\"\\ud83d\\ude00@b.co\"],\"n\":-9223372036854775808,"
	    "\"r\":1e-400}", 0, A, A, A, S, JOBS_OK, 1, 1, 0),
	{ "[{\"emails\":[\"a@b.co\"]}]", 0, JOBS_BODY_NOT_OBJECT, ANY, ANY,
	    ANY, ANY, ANY, ANY, ANY, ANY },
	{ "\"emails\"", 0, JOBS_BODY_NOT_OBJECT, ANY, ANY, ANY, ANY, ANY, ANY,
	    ANY, ANY },
	{ "[1,", 0, BAD, ANY, ANY, ANY, ANY, ANY, ANY, ANY, ANY },
	/* name */
	OK_("{\"name\":5,\"emails\":[\"a@b.co\"]}", 0, W, A, A, S, JOBS_OK,
	    1, 1, 0),
	OK_("{\"name\":null,\"emails\":[\"a@b.co\"]}", 0, A, A, A, S, JOBS_OK,
	    1, 1, 0),
	OK_("{\"name\":{\"a\":[1]},\"emails\":[\"a@b.co\"]}", 0, W, A, A, S,
	    JOBS_OK, 1, 1, 0),
	/* batch fields, ignored by bulk */
	OK_("{\"emails\":[\"a@b.co\"],\"webhook_url\":7,\"callback_data\":[1]}",
	    1, A, W, W, S, JOBS_OK, 1, 1, 0),
	OK_("{\"emails\":[\"a@b.co\"],\"webhook_url\":7,\"callback_data\":[1]}",
	    0, A, A, A, S, JOBS_OK, 1, 1, 0),
	OK_("{\"emails\":[\"a@b.co\"],\"webhook_url\":null,\"callback_data\":"
	    "null}", 1, A, A, A, S, JOBS_OK, 1, 1, 0),
	/* emails */
	OK_("{\"name\":\"x\"}", 0, S, A, A, A, ANY, 0, 0, 0),
	OK_("{\"emails\":\"a@b.co\"}", 0, A, A, A, W, ANY, 0, 0, 0),
	OK_("{\"emails\":null}", 0, A, A, A, W, ANY, 0, 0, 0),
	OK_("{\"emails\":{\"a\":\"a@b.co\"}}", 0, A, A, A, W, ANY, 0, 0, 0),
	OK_("{\"emails\":[]}", 0, A, A, A, S, JOBS_EMPTY, 0, 0, 0),
	OK_("{\"emails\":[\" \",\"\\t\"]}", 0, A, A, A, S, JOBS_EMPTY, 2, 0,
	    0),
	OK_("{\"emails\":[\"a@b.co\",7,\"c@d.org\"]}", 0, A, A, A, S,
	    JOBS_BAD_ITEM, 3, 0, 1),
	OK_("{\"emails\":[\"\",[\"a@b.co\"],{\"x\":1}]}", 0, A, A, A, S,
	    JOBS_BAD_ITEM, 3, 0, 1),
	OK_("{\"emails\":[null]}", 0, A, A, A, S, JOBS_BAD_ITEM, 1, 0, 0),
	/* bulk_max 10 here: the 11th unique address is too many... */
	OK_("{\"emails\":[\"1@b.co\",\"2@b.co\",\"3@b.co\",\"4@b.co\","
	    "\"5@b.co\",\"6@b.co\",\"7@b.co\",\"8@b.co\",\"9@b.co\","
	    "\"10@b.co\",\"11@b.co\",7]}", 0, A, A, A, S, JOBS_TOO_MANY, 12, 0,
	    10),
	/* ...but repeats of 10 are not */
	OK_("{\"emails\":[\"1@b.co\",\"2@b.co\",\"3@b.co\",\"4@b.co\","
	    "\"5@b.co\",\"6@b.co\",\"7@b.co\",\"8@b.co\",\"9@b.co\","
	    "\"10@b.co\",\"1@B.CO\"]}", 0, A, A, A, S, JOBS_OK, 11, 10, 1),
	/* more than 4 x 10 elements: counted to the end, the rest read on */
	OK_("{\"emails\":[\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
	    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
	    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\","
	    "\"\",\"\",\"\",7],\"name\":7}", 0, W, A, A, S, ANY, 42, 0, 0),
};

static void
run(const struct bcase *c, int bytewise, struct jobs_body *b,
    enum jobs_body_err *rc)
{
	size_t i, n = strlen(c->body);

	assert_int_equal(jobs_body_init(b, c->batch, 10, "sandbox.svc.test",
	    MEMORY), 0);
	if (bytewise)
		for (i = 0, *rc = JOBS_BODY_OK; i < n && *rc == JOBS_BODY_OK;
		    i++)
			*rc = jobs_body_feed(b, c->body + i, 1);
	else
		*rc = jobs_body_feed(b, c->body, n);
	if (*rc == JOBS_BODY_OK)
		*rc = jobs_body_end(b);
}

static void
check(const struct bcase *c, const struct jobs_body *b, enum jobs_body_err rc)
{
	if ((int)rc != c->rc)
		fail_msg("%s: rc %d, want %d (%s)", c->body, rc, c->rc,
		    b->error);
	if (rc == BAD) {
		assert_non_null(strstr(b->error, " at line 1 column "));
		return;
	}
	if (rc != JOBS_BODY_OK)
		return;
	assert_int_equal(b->name_state, c->name);
	assert_int_equal(b->url_state, c->url);
	assert_int_equal(b->cb_state, c->cb);
	assert_int_equal(b->emails_state, c->emails);
	assert_int_equal(b->count, c->count);
	if (c->emails_rc != ANY)
		assert_int_equal(b->emails_rc, c->emails_rc);
	if (c->emails_rc == JOBS_OK) {
		assert_int_equal(b->in.n, c->n);
		assert_int_equal(b->in.duplicates, c->extra);
	} else if (c->emails_rc == JOBS_BAD_ITEM)
		assert_int_equal(b->bad_index, c->extra);
	if (c->emails_rc != JOBS_OK)
		assert_null(b->in.emails);
	assert_false(b->too_big);
}

static void
test_jobs_body_reads_bodies_as_jansson_did(void **state)
{
	struct jobs_body b;
	enum jobs_body_err rc;
	size_t i;
	int bytewise;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (bytewise = 0; bytewise < 2; bytewise++) {
			run(&cases[i], bytewise, &b, &rc);
			check(&cases[i], &b, rc);
			jobs_body_free(&b);
		}
}

static enum jobs_body_err
parse_text(const char *s, int batch, struct jobs_body *b)
{
	enum jobs_body_err rc;

	assert_int_equal(jobs_body_init(b, batch, 10, "sandbox.svc.test",
	    MEMORY), 0);
	rc = jobs_body_feed(b, s, strlen(s));
	return rc == JOBS_BODY_OK ? jobs_body_end(b) : rc;
}

static void
test_jobs_body_error_names_reason_and_place(void **state)
{
	struct jobs_body b;

	(void)state;
	assert_int_equal(parse_text("{\"emails\":[],\n\"emails\":[]}", 0, &b),
	    BAD);
	assert_string_equal(b.error, "duplicate object key at line 2 "
	    "column 9");
	jobs_body_free(&b);
	assert_int_equal(parse_text("{\"emails\":[\"\\u0000\"]}", 0, &b), BAD);
	assert_string_equal(b.error, "\\u0000 is not allowed at line 1 "
	    "column 18");
	jobs_body_free(&b);
	assert_int_equal(parse_text("{\"emails\":[1,]}", 0, &b), BAD);
	assert_non_null(strstr(b.error, "parse error"));
	jobs_body_free(&b);
}

/* Nesting: 2048 containers are valid JSON, 2049 are not. */
static void
test_jobs_body_depth_is_janssons(void **state)
{
	struct jobs_body b;
	char *s;
	size_t d, i, n;

	(void)state;
	for (d = 2048; d <= 2049; d++) {
		assert_non_null(s = malloc(2 * d + 32));
		n = 0;
		memcpy(s, "{\"x\":", 5);
		n = 5;
		for (i = 1; i < d; i++)
			s[n++] = '[';
		for (i = 1; i < d; i++)
			s[n++] = ']';
		memcpy(s + n, "}", 2);
		assert_int_equal(parse_text(s, 0, &b), d == 2048 ?
		    JOBS_BODY_OK : BAD);
		if (d == 2049)
			assert_non_null(strstr(b.error,
			    "maximum parsing depth"));
		jobs_body_free(&b);
		free(s);
	}
}

static void
test_jobs_body_builds_callback_data_as_jansson(void **state)
{
	struct jobs_body b;
	char *dump;

	(void)state;
	assert_int_equal(parse_text("{\"callback_data\":{\"list\":7,\"r\":1.5,"
	    "\"e\":1E2,\"z\":-0,\"t\":true,\"f\":false,\"n\":null,"
	    "\"s\":\"\\u00e9\\n\",\"a\":[1,[2,{}]],\"o\":{\"k\":\"v\"}},"
	    "\"emails\":[\"a@b.co\"]}", 1, &b), JOBS_BODY_OK);
	assert_int_equal(b.cb_state, S);
	assert_non_null(dump = json_dumps(b.callback_data, JSON_COMPACT));
	assert_string_equal(dump, "{\"list\":7,\"r\":1.5,\"e\":100.0,\"z\":0,"
	    "\"t\":true,\"f\":false,\"n\":null,\"s\":\"\xc3\xa9\\n\","
	    "\"a\":[1,[2,{}]],\"o\":{\"k\":\"v\"}}");
	free(dump);
	jobs_body_free(&b);
}

/* callback_data: 32 levels, 4096 values, 65536 octets as sent, and one
 * more of each is too big; the rest of the body is still read. */
static void
test_jobs_body_limits_callback_data(void **state)
{
	struct jobs_body b;
	struct buf s;
	size_t i, levels;

	(void)state;
	for (levels = 32; levels <= 33; levels++) {
		buf_init(&s, BUF_NOMAX);
		buf_puts(&s, "{\"callback_data\":");
		for (i = 1; i < levels; i++)
			buf_puts(&s, "{\"a\":");
		buf_puts(&s, "{}");
		for (i = 1; i < levels; i++)
			buf_puts(&s, "}");
		buf_puts(&s, ",\"emails\":[\"a@b.co\"],\"name\":5}");
		assert_int_equal(parse_text(buf_str(&s), 1, &b), JOBS_BODY_OK);
		assert_int_equal(b.cb_state, levels == 32 ? S : BIG);
		assert_int_equal(b.name_state, W);
		assert_int_equal(b.in.n, 1);
		jobs_body_free(&b);
		buf_free(&s);
	}
	for (levels = 4094; levels <= 4095; levels++) {	/* values - 2 */
		buf_init(&s, BUF_NOMAX);
		buf_puts(&s, "{\"callback_data\":{\"a\":[");
		for (i = 1; i < levels; i++)
			buf_puts(&s, "0,");
		buf_puts(&s, "0]},\"emails\":[\"a@b.co\"]}");
		assert_int_equal(parse_text(buf_str(&s), 1, &b), JOBS_BODY_OK);
		assert_int_equal(b.cb_state, levels == 4094 ? S : BIG);
		jobs_body_free(&b);
		buf_free(&s);
	}
	for (i = 0; i < 2; i++) {
		/* {"s":"x...x"} is 8 octets plus the string */
		buf_init(&s, BUF_NOMAX);
		buf_puts(&s, "{\"emails\":[\"a@b.co\"],\"callback_data\":"
		    "{\"s\":\"");
		for (levels = 0; levels < JOBS_BODY_CB_BYTES - 8 + i; levels++)
			buf_putc(&s, 'x');
		buf_puts(&s, "\"}}");
		assert_int_equal(parse_text(buf_str(&s), 1, &b), JOBS_BODY_OK);
		assert_int_equal(b.cb_state, i == 0 ? S : BIG);
		jobs_body_free(&b);
		buf_free(&s);
	}
}

/* retention_days: a whole number of days from 1 to
 * JOBS_BODY_RETENTION_MAX, in bulk and batch bodies; anything else is
 * WRONG (the handler answers 400), and the emails are still read. */
static void
test_jobs_body_reads_retention_days(void **state)
{
	static const struct {
		const char	*value;
		enum jobs_body_field want;
		long		 days;
	} cases[] = {
		{ "1", S, 1 }, { "30", S, 30 }, { "36500", S, 36500 },
		{ "36501", W, 0 }, { "0", W, 0 }, { "-1", W, 0 },
		{ "1.5", W, 0 }, { "1e1", W, 0 }, { "\"7\"", W, 0 },
		{ "true", W, 0 }, { "[]", W, 0 }, { "null", A, 0 },
		{ "9999999999999", W, 0 },
	};
	struct jobs_body b;
	struct buf s;
	size_t i;
	int batch;

	(void)state;
	for (batch = 0; batch < 2; batch++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			buf_init(&s, BUF_NOMAX);
			buf_printf(&s, "{\"emails\":[\"a@b.co\"],"
			    "\"retention_days\":%s}", cases[i].value);
			assert_int_equal(parse_text(buf_str(&s), batch, &b),
			    JOBS_BODY_OK);
			assert_int_equal(b.retention_state, cases[i].want);
			if (cases[i].want == S)
				assert_int_equal(b.retention_days,
				    cases[i].days);
			assert_int_equal(b.in.n, 1);
			jobs_body_free(&b);
			buf_free(&s);
		}
	/* twice is a duplicate key, as for the other members */
	assert_int_equal(parse_text("{\"retention_days\":1,\"emails\":[],"
	    "\"retention_days\":2}", 0, &b), JOBS_BODY_INVALID_JSON);
	jobs_body_free(&b);
}

/* memory_max: past it while the input is built or kept, the input is
 * dropped and too_big set; an answer decided before stays. */
static void
test_jobs_body_memory_max_drops_the_input(void **state)
{
	static const char *const tails[] = {
		"]}",				/* the input alone */
		",7]}",				/* a bad element after it */
	};
	struct jobs_body b;
	struct buf s;
	size_t i, t;

	(void)state;
	for (t = 0; t < 2; t++) {
		buf_init(&s, BUF_NOMAX);
		buf_puts(&s, "{\"emails\":[");
		for (i = 0; i < 5000; i++)
			buf_printf(&s, "%s\"user%zu@example.com\"", i ? "," :
			    "", i);
		buf_puts(&s, tails[t]);
		assert_int_equal(jobs_body_init(&b, 1, 10000,
		    "sandbox.svc.test", 64 << 10), 0);
		assert_int_equal(jobs_body_feed(&b, buf_str(&s), s.len),
		    JOBS_BODY_OK);
		assert_int_equal(jobs_body_end(&b), JOBS_BODY_OK);
		assert_true(b.too_big);
		assert_null(b.in.emails);
		assert_int_equal(b.count, 5000 + t);
		jobs_body_free(&b);
		buf_free(&s);
	}
	/* the first element was bad: decided before any memory was used */
	assert_int_equal(jobs_body_init(&b, 1, 10000, "sandbox.svc.test",
	    64 << 10), 0);
	buf_init(&s, BUF_NOMAX);
	buf_puts(&s, "{\"emails\":[7");
	for (i = 0; i < 5000; i++)
		buf_printf(&s, ",\"user%zu@example.com\"", i);
	buf_puts(&s, "]}");
	assert_int_equal(jobs_body_feed(&b, buf_str(&s), s.len), JOBS_BODY_OK);
	assert_int_equal(jobs_body_end(&b), JOBS_BODY_OK);
	assert_false(b.too_big);
	assert_int_equal(b.emails_rc, JOBS_BAD_ITEM);
	jobs_body_free(&b);
	buf_free(&s);
	/* the keys of the top object count too, after the emails */
	assert_int_equal(jobs_body_init(&b, 1, 10000, "sandbox.svc.test",
	    64 << 10), 0);
	buf_init(&s, BUF_NOMAX);
	buf_puts(&s, "{\"emails\":[\"a@b.co\"]");
	for (i = 0; i < 10000; i++)
		buf_printf(&s, ",\"k%zu\":0", i);
	buf_puts(&s, "}");
	assert_int_equal(jobs_body_feed(&b, buf_str(&s), s.len), JOBS_BODY_OK);
	assert_int_equal(jobs_body_end(&b), JOBS_BODY_OK);
	assert_true(b.too_big);
	assert_int_equal(b.emails_rc, JOBS_OK);
	assert_null(b.in.emails);
	jobs_body_free(&b);
	buf_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jobs_body_reads_bodies_as_jansson_did),
		cmocka_unit_test(test_jobs_body_error_names_reason_and_place),
		cmocka_unit_test(test_jobs_body_depth_is_janssons),
		cmocka_unit_test(
		    test_jobs_body_builds_callback_data_as_jansson),
		cmocka_unit_test(test_jobs_body_limits_callback_data),
		cmocka_unit_test(test_jobs_body_reads_retention_days),
		cmocka_unit_test(test_jobs_body_memory_max_drops_the_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
