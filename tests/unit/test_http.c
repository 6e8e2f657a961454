/* test_http.c: request and response helpers of src/api/http.c without a web
 * server: query parameters (percent-decoding, '+', malformed escapes, first
 * match wins), header names mapped to CGI variables through a fake param
 * function, the body cap with a fake reader, the response head and the
 * JSON error object. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/http.h"

struct qcase {
	const char	*query;
	const char	*name;
	int		 want;
	const char	*value;		/* decoded value when found */
	size_t		 len;		/* its length (values may hold NUL) */
};

#define Q(q, n, v)	{ q, n, 0, v, sizeof(v) - 1 }
#define QMISS(q, n)	{ q, n, -1, NULL, 0 }

static const struct qcase query_cases[] = {
	Q("a=1&b=2", "a", "1"),
	Q("a=1&b=2", "b", "2"),
	QMISS("a=1&b=2", "c"),
	Q("email=a%40b.example", "email", "a@b.example"),
	Q("q=a+b", "q", "a b"),
	Q("q=%2B", "q", "+"),
	Q("q=%2b%2F", "q", "+/"),
	Q("q=%41%42", "q", "AB"),
	Q("q=%4a%4A", "q", "JJ"),
	Q("q=%e2%82%ac", "q", "\xe2\x82\xac"),
	Q("q=%zz", "q", "%zz"),			/* bad escapes kept as is */
	Q("q=%4", "q", "%4"),
	Q("q=%", "q", "%"),
	Q("q=a%2", "q", "a%2"),
	Q("q=%%41", "q", "%A"),
	Q("q=%4g", "q", "%4g"),
	Q("q=%41&r=1", "q", "A"),		/* escape ends at '&' */
	Q("q=%4&r=1", "q", "%4"),
	Q("q=x%26y&r=1", "q", "x&y"),
	Q("q=a=b", "q", "a=b"),
	Q("q=%00x", "q", "\0x"),
	Q("q=", "q", ""),
	Q("q", "q", ""),			/* present without a value */
	Q("a=1&q&b=2", "q", ""),
	Q("q=1&q=2", "q", "1"),			/* first wins */
	Q("&&q=1&", "q", "1"),
	Q("a=1&&q=2", "q", "2"),
	QMISS("qq=1", "q"),
	QMISS("q2=1", "q"),
	QMISS("Q=1", "q"),			/* names are exact */
	QMISS("x=q=1", "q"),
	QMISS("%71=1", "q"),			/* names are not decoded */
	QMISS("", "q"),
	QMISS("&&&", "q"),
	Q("=1", "", "1"),
};

static void
test_http_query_get_decodes_percent_and_plus_and_keeps_bad_escapes(
    void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(query_cases) / sizeof(query_cases[0]); i++) {
		const struct qcase *c = &query_cases[i];
		struct buf out;

		print_message("case %zu: \"%s\" [%s]\n", i, c->query, c->name);
		buf_init(&out, 1024);
		buf_puts(&out, "previous");
		assert_int_equal(http_query_get(c->query, c->name, &out),
		    c->want);
		if (c->want == 0) {
			assert_int_equal(out.len, c->len);
			assert_memory_equal(buf_str(&out), c->value, c->len);
		} else
			assert_string_equal(buf_str(&out), "previous");
		buf_free(&out);
	}
}

/* A path segment keeps '+' (a tagged address) and decodes %XX. */
static void
test_http_path_decode_keeps_plus(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "a+tag@x.com", "a+tag@x.com" },
		{ "%40example.com", "@example.com" },
		{ "a%2Bb%40x", "a+b@x" },
		{ "100%", "100%" },		/* a bad escape stays */
		{ "%zz", "%zz" },
	};
	struct buf out;
	size_t i;

	(void)state;
	buf_init(&out, 1024);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf_puts(&out, "previous");
		assert_int_equal(http_path_decode(cases[i].in, &out), 0);
		assert_string_equal(buf_str(&out), cases[i].out);
	}
	buf_free(&out);
}

static void
test_http_query_get_of_null_query_is_not_found(void **state)
{
	struct buf out;

	(void)state;
	buf_init(&out, 16);
	assert_int_equal(http_query_get(NULL, "q", &out), -1);
	buf_free(&out);
}

static void
test_http_query_get_fails_when_value_passes_buffer_cap(void **state)
{
	struct buf out;

	(void)state;
	buf_init(&out, 4);
	assert_int_equal(http_query_get("q=1234", "q", &out), 0);
	assert_string_equal(buf_str(&out), "1234");
	assert_int_equal(http_query_get("q=12345", "q", &out), -1);
	assert_int_equal(http_query_get("q=%31%32%33%34%35", "q", &out), -1);
	assert_int_equal(http_query_get("q=%31%32%33%34", "q", &out), 0);
	assert_string_equal(buf_str(&out), "1234");
	buf_free(&out);
}

/* A fake FastCGI environment: records the names asked for. */
struct fake_env {
	const char	*vars[8][2];
	char		 asked[8][256];
	int		 nasked;
};

static const char *
fake_param(void *io, const char *name)
{
	struct fake_env *e = io;
	int i;

	if (e->nasked < 8)
		snprintf(e->asked[e->nasked++], sizeof(e->asked[0]), "%s",
		    name);
	for (i = 0; i < 8 && e->vars[i][0] != NULL; i++)
		if (strcmp(e->vars[i][0], name) == 0)
			return e->vars[i][1];
	return NULL;
}

static const struct {
	const char	*header;
	const char	*var;
} header_cases[] = {
	{ "Idempotency-Key", "HTTP_IDEMPOTENCY_KEY" },
	{ "idempotency-key", "HTTP_IDEMPOTENCY_KEY" },
	{ "X-Request-Id", "HTTP_X_REQUEST_ID" },
	{ "X-Forwarded-For", "HTTP_X_FORWARDED_FOR" },
	{ "Authorization", "HTTP_AUTHORIZATION" },
	{ "Transfer-Encoding", "HTTP_TRANSFER_ENCODING" },
	{ "Content-Type", "CONTENT_TYPE" },	/* CGI: no HTTP_ prefix */
	{ "content-length", "CONTENT_LENGTH" },
	{ "X-Content-Type-Options", "HTTP_X_CONTENT_TYPE_OPTIONS" },
	{ "A", "HTTP_A" },
};

static void
test_http_header_in_maps_names_to_cgi_variables(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(header_cases) / sizeof(header_cases[0]); i++) {
		struct fake_env env;
		struct http_req req;

		memset(&env, 0, sizeof(env));
		memset(&req, 0, sizeof(req));
		env.vars[0][0] = header_cases[i].var;
		env.vars[0][1] = "value";
		req.param = fake_param;
		req.io = &env;
		print_message("case %zu: %s\n", i, header_cases[i].header);
		assert_string_equal(http_header_in(&req,
		    header_cases[i].header), "value");
		assert_int_equal(env.nasked, 1);
		assert_string_equal(env.asked[0], header_cases[i].var);
	}
}

static void
test_http_header_in_returns_null_for_absent_overlong_or_no_env(void **state)
{
	struct fake_env env;
	struct http_req req;
	char name[200];

	(void)state;
	memset(&env, 0, sizeof(env));
	memset(&req, 0, sizeof(req));
	assert_null(http_header_in(&req, "X-Anything"));	/* no param fn */
	req.param = fake_param;
	req.io = &env;
	assert_null(http_header_in(&req, "X-Absent"));
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	env.nasked = 0;
	assert_null(http_header_in(&req, name));
	assert_int_equal(env.nasked, 0);	/* not even asked */
	name[100] = '\0';
	assert_null(http_header_in(&req, name));
	assert_int_equal(env.nasked, 1);
	assert_int_equal(strlen(env.asked[0]), 105);
}

/* A fake body: total bytes of a repeating pattern, handed out at most
 * chunk bytes per call; fails with fail_rc (-1 when 0) after fail_after
 * bytes if set. */
struct fake_body {
	size_t	 total, sent, chunk;
	long	 fail_after;
	int	 fail_rc;
	int	 calls;
};

static long
fake_read(void *io, char *p, size_t n)
{
	struct fake_body *b = io;
	size_t i, k;

	b->calls++;
	if (b->fail_after >= 0 && b->sent >= (size_t)b->fail_after)
		return b->fail_rc ? b->fail_rc : -1;
	k = b->total - b->sent;
	if (k > n)
		k = n;
	if (k > b->chunk)
		k = b->chunk;
	for (i = 0; i < k; i++)
		p[i] = (char)('a' + (b->sent + i) % 26);
	b->sent += k;
	return (long)k;
}

static const struct {
	size_t	 total, chunk, max;
	long	 fail_after;
	int	 want;
	int	 fail_rc;
} body_cases[] = {
	{ 0, 100, 10, -1, 0 },
	{ 10, 3, 10, -1, 0 },			/* exactly the cap */
	{ 11, 3, 10, -1, -1 },			/* one past it */
	{ 11, 100, 10, -1, -1 },
	{ 1000, 1, 1000, -1, 0 },
	{ 200000, 65536, 1048576, -1, 0 },	/* several reads */
	{ 200000, 100000, 1048576, -1, 0 },
	{ 2000000, 65536, 1048576, -1, -1 },
	{ 100, 10, 1000, 50, -1 },		/* reader error */
	{ 100, 10, 1000, 0, -1 },
	/* the body did not come in time: told apart from too long */
	{ 100, 10, 1000, 30, HTTP_READ_TIMEOUT, HTTP_READ_TIMEOUT },
	{ 100, 10, 1000, 0, HTTP_READ_TIMEOUT, HTTP_READ_TIMEOUT },
};

static void
test_http_read_body_stops_at_cap_and_on_reader_error(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(body_cases) / sizeof(body_cases[0]); i++) {
		struct fake_body fb;
		struct http_req req;
		int calls;

		print_message("case %zu\n", i);
		memset(&fb, 0, sizeof(fb));
		fb.total = body_cases[i].total;
		fb.chunk = body_cases[i].chunk;
		fb.fail_after = body_cases[i].fail_after;
		fb.fail_rc = body_cases[i].fail_rc;
		memset(&req, 0, sizeof(req));
		req.read = fake_read;
		req.io = &fb;
		assert_int_equal(http_read_body(&req, body_cases[i].max),
		    body_cases[i].want);
		assert_true(req.body.len <= body_cases[i].max);
		if (body_cases[i].want == 0) {
			assert_int_equal(req.body.len, fb.total);
			for (j = 0; j < fb.total; j++)
				assert_int_equal(req.body.data[j],
				    'a' + j % 26);
		}
		/* A second call reads nothing more and gives the same answer. */
		calls = fb.calls;
		assert_int_equal(http_read_body(&req, body_cases[i].max),
		    body_cases[i].want);
		assert_int_equal(fb.calls, calls);
		buf_free(&req.body);
	}
}

static void
test_http_read_body_without_reader_is_empty(void **state)
{
	struct http_req req;

	(void)state;
	memset(&req, 0, sizeof(req));
	assert_int_equal(http_read_body(&req, 100), 0);
	assert_int_equal(req.body.len, 0);
	assert_string_equal(buf_str(&req.body), "");
	buf_free(&req.body);
}

static void
test_http_format_head_writes_status_headers_and_length(void **state)
{
	struct http_resp r;
	struct buf out;

	(void)state;
	http_resp_init(&r);
	buf_init(&out, BUF_NOMAX);
	assert_int_equal(http_set_header(&r, "X-Request-Id", "req_1"), 0);
	assert_int_equal(http_set_header(&r, "Content-Type", "text/plain"), 0);
	buf_puts(&r.body, "hello");
	http_format_head(&r, &out);
	assert_string_equal(buf_str(&out), "Status: 200 OK\r\n"
	    "X-Request-Id: req_1\r\nContent-Type: text/plain\r\n"
	    "Content-Length: 5\r\n\r\n");
	/* Replacing a header keeps its place; an explicit length is kept. */
	buf_reset(&out);
	r.status = 429;
	assert_int_equal(http_set_header(&r, "x-request-id", "req_2"), 0);
	assert_int_equal(http_set_header(&r, "Content-Length", "0"), 0);
	http_format_head(&r, &out);
	assert_string_equal(buf_str(&out), "Status: 429 Too Many Requests\r\n"
	    "X-Request-Id: req_2\r\nContent-Type: text/plain\r\n"
	    "Content-Length: 0\r\n\r\n");
	buf_reset(&out);
	r.status = 299;
	http_format_head(&r, &out);
	assert_true(strncmp(buf_str(&out), "Status: 299 Unknown\r\n", 21) == 0);
	http_resp_free(&r);
	buf_free(&out);
}

static void
test_http_set_header_refuses_line_breaks_and_the_25th_header(void **state)
{
	struct http_resp r;
	char name[32];
	int i;

	(void)state;
	http_resp_init(&r);
	assert_int_equal(http_set_header(&r, "X-A", "a\r\nSet-Cookie: x"), -1);
	assert_int_equal(http_set_header(&r, "X-A", "a\nb"), -1);
	assert_int_equal(http_set_header(&r, "X-A", "a\rb"), -1);
	assert_null(http_resp_header(&r, "X-A"));
	for (i = 0; i < 24; i++) {
		snprintf(name, sizeof(name), "X-H%d", i);
		assert_int_equal(http_set_header(&r, name, "v"), 0);
	}
	assert_int_equal(http_set_header(&r, "X-One-Too-Many", "v"), -1);
	assert_int_equal(http_set_header(&r, "x-h3", "replaced"), 0);
	assert_string_equal(http_resp_header(&r, "X-H3"), "replaced");
	http_resp_free(&r);
}

static const struct {
	int		 status;
	const char	*text;
} status_cases[] = {
	{ 200, "OK" }, { 201, "Created" }, { 202, "Accepted" },
	{ 204, "No Content" }, { 400, "Bad Request" }, { 401, "Unauthorized" },
	{ 402, "Payment Required" }, { 403, "Forbidden" },
	{ 404, "Not Found" }, { 405, "Method Not Allowed" },
	{ 409, "Conflict" }, { 410, "Gone" }, { 411, "Length Required" },
	{ 413, "Payload Too Large" }, { 415, "Unsupported Media Type" },
	{ 422, "Unprocessable Entity" }, { 429, "Too Many Requests" },
	{ 500, "Internal Server Error" }, { 501, "Not Implemented" },
	{ 503, "Service Unavailable" }, { 0, "Unknown" }, { 999, "Unknown" },
};

static void
test_http_status_text_names_every_status_the_api_sends(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(status_cases) / sizeof(status_cases[0]); i++)
		assert_string_equal(http_status_text(status_cases[i].status),
		    status_cases[i].text);
}

/* Parses the body and checks { "error": { code, message, details } } with
 * exactly those three members; returns the object for more checks. */
static json_t *
check_error_shape(const struct http_resp *r, int status, const char *code,
    const char *message)
{
	json_error_t jerr;
	json_t *v, *e;

	assert_int_equal(r->status, status);
	assert_string_equal(r->error_code, code);
	assert_string_equal(http_resp_header(r, "Content-Type"),
	    "application/json; charset=utf-8");
	v = json_loadb(r->body.data, r->body.len, 0, &jerr);
	assert_non_null(v);
	assert_true(json_is_object(v));
	assert_int_equal(json_object_size(v), 1);
	e = json_object_get(v, "error");
	assert_true(json_is_object(e));
	assert_int_equal(json_object_size(e), 3);
	assert_string_equal(json_string_value(json_object_get(e, "code")),
	    code);
	assert_true(json_is_string(json_object_get(e, "message")));
	if (message != NULL)
		assert_string_equal(json_string_value(json_object_get(e,
		    "message")), message);
	assert_non_null(json_object_get(e, "details"));
	return v;
}

static void
test_http_error_has_code_message_and_null_details(void **state)
{
	struct http_resp r;
	json_t *v;

	(void)state;
	http_resp_init(&r);
	http_error(&r, 404, "not_found", NULL, "no such endpoint: %s", "/v1/x");
	v = check_error_shape(&r, 404, "not_found", "no such endpoint: /v1/x");
	assert_true(json_is_null(json_object_get(json_object_get(v, "error"),
	    "details")));
	json_decref(v);
	http_resp_free(&r);
}

static void
test_http_error_takes_over_details_and_replaces_previous_body(void **state)
{
	struct http_resp r;
	json_t *v, *d;

	(void)state;
	http_resp_init(&r);
	buf_puts(&r.body, "stale");
	http_error(&r, 413, "file_too_large",
	    json_pack("{s:I}", "limit_bytes", (json_int_t)1048576),
	    "request body is larger than %zu bytes", (size_t)1048576);
	v = check_error_shape(&r, 413, "file_too_large",
	    "request body is larger than 1048576 bytes");
	d = json_object_get(json_object_get(v, "error"), "details");
	assert_true(json_is_object(d));
	assert_int_equal(json_integer_value(json_object_get(d, "limit_bytes")),
	    1048576);
	json_decref(v);
	http_resp_free(&r);
}

/* Messages quote request text (paths, ids): bytes that are not UTF-8 and a
 * message cut inside a character must still give the error object. */
static void
test_http_error_keeps_its_shape_with_non_utf8_or_cut_message(void **state)
{
	static const char *const texts[] = {
		"/v1/\xff\xfe",
		"/v1/\xc3",			/* truncated sequence */
		"/v1/\xc0\xaf",			/* overlong '/' */
		"/v1/\xed\xa0\x80",		/* surrogate */
		"/v1/caf\xc3\xa9",		/* valid: kept as is */
		"/v1/\x01\x1f",			/* control bytes: valid JSON */
	};
	struct http_resp r;
	char longpath[2000];
	size_t i;
	json_t *v;

	(void)state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		print_message("case %zu\n", i);
		http_resp_init(&r);
		http_error(&r, 404, "not_found", NULL, "no such endpoint: %s",
		    texts[i]);
		v = check_error_shape(&r, 404, "not_found", NULL);
		json_decref(v);
		http_resp_free(&r);
	}
	http_resp_init(&r);
	http_error(&r, 404, "not_found", NULL, "%s", "/v1/caf\xc3\xa9");
	v = check_error_shape(&r, 404, "not_found", "/v1/caf\xc3\xa9");
	json_decref(v);
	http_resp_free(&r);
	/* A long message of two-byte characters is cut, never mid-character. */
	for (i = 0; i + 2 < sizeof(longpath); i += 2)
		memcpy(longpath + i, "\xc3\xa9", 2);
	longpath[i] = '\0';
	for (i = 0; i < 3; i++) {
		http_resp_init(&r);
		http_error(&r, 404, "not_found", NULL, "%.*s%s", (int)i, "xx",
		    longpath);
		v = check_error_shape(&r, 404, "not_found", NULL);
		json_decref(v);
		http_resp_free(&r);
	}
}

static void
test_http_json_of_null_object_is_empty_object(void **state)
{
	struct http_resp r;

	(void)state;
	http_resp_init(&r);
	http_json(&r, 200, NULL);
	assert_int_equal(r.status, 200);
	assert_string_equal(buf_str(&r.body), "{}");
	http_json(&r, 201, json_pack("{s:s}", "k", "\xe2\x82\xac"));
	assert_int_equal(r.status, 201);
	assert_string_equal(buf_str(&r.body), "{\"k\":\"\\u20AC\"}");
	http_resp_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_query_get_decodes_percent_and_plus_and_keeps_bad_escapes),
		cmocka_unit_test(test_http_query_get_of_null_query_is_not_found),
		cmocka_unit_test(test_http_path_decode_keeps_plus),
		cmocka_unit_test(test_http_query_get_fails_when_value_passes_buffer_cap),
		cmocka_unit_test(test_http_header_in_maps_names_to_cgi_variables),
		cmocka_unit_test(test_http_header_in_returns_null_for_absent_overlong_or_no_env),
		cmocka_unit_test(test_http_read_body_stops_at_cap_and_on_reader_error),
		cmocka_unit_test(test_http_read_body_without_reader_is_empty),
		cmocka_unit_test(test_http_format_head_writes_status_headers_and_length),
		cmocka_unit_test(test_http_set_header_refuses_line_breaks_and_the_25th_header),
		cmocka_unit_test(test_http_status_text_names_every_status_the_api_sends),
		cmocka_unit_test(test_http_error_has_code_message_and_null_details),
		cmocka_unit_test(test_http_error_takes_over_details_and_replaces_previous_body),
		cmocka_unit_test(test_http_error_keeps_its_shape_with_non_utf8_or_cut_message),
		cmocka_unit_test(test_http_json_of_null_object_is_empty_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
