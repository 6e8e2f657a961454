/* test_cli_apierr.c: how svc reads the API's error answers: both 429 body
 * shapes (the standard error object with details.reset_at in Unix
 * seconds, and the flat { success, error, limit, reset_at (ISO 8601) }),
 * bodies that are not API errors, control characters in messages, the
 * wait before a retry (Retry-After first, else reset_at) and the exit
 * status of each HTTP status. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cli/apierr.h"

struct parse_case {
	const char	*body;
	const char	*code;
	const char	*message;
	int		 flat;
	long long	 reset_at;
};

static const struct parse_case parse_cases[] = {
	{ "{\"error\":{\"code\":\"rate_limited\",\"message\":\"Rate limit "
	  "exceeded\",\"details\":{\"limit\":10,\"remaining\":0,\"reset_at\":"
	  "1790000000}}}", "rate_limited", "Rate limit exceeded", 0,
	  1790000000LL },
	{ "{\"success\":false,\"error\":\"Too many requests\",\"limit\":30,"
	  "\"reset_at\":\"2026-09-21T10:00:00Z\"}", "rate_limited",
	  "Too many requests", 1, 1789984800LL },
	{ "{\"success\":false,\"error\":\"x\",\"reset_at\":\"not a date\"}",
	  "rate_limited", "x", 1, 0 },
	{ "{\"error\":{\"code\":\"insufficient_credits\",\"message\":\"2 "
	  "needed\",\"details\":{\"required\":2,\"available\":1}}}",
	  "insufficient_credits", "2 needed", 0, 0 },
	{ "{\"error\":{\"code\":\"not_found\",\"message\":\"a\\u001b[31mb\\n"
	  "c\",\"details\":null}}", "not_found", "a?[31mb?c", 0, 0 },
	{ "{\"error\":{\"code\":7}}", "", "", 0, 0 },
	{ "{\"error\":{\"code\":\"x\",\"details\":{\"reset_at\":-5}}}", "x",
	  "", 0, 0 },
	{ "<html>502 Bad Gateway</html>", "", "", 0, 0 },
	{ "[1,2]", "", "", 0, 0 },
	{ "\"error\"", "", "", 0, 0 },
	{ "", "", "", 0, 0 },
};

static void
test_parse(void **state)
{
	struct apierr e;
	size_t i;

	for (i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *t = &parse_cases[i];

		apierr_parse(t->body, strlen(t->body), &e);
		assert_string_equal(e.code, t->code);
		assert_string_equal(e.message, t->message);
		assert_int_equal(e.flat, t->flat);
		assert_int_equal(e.reset_at, t->reset_at);
	}
	apierr_parse(NULL, 0, &e);
	assert_string_equal(e.code, "");
}

static void
test_long_message_is_cut(void **state)
{
	char body[2048];
	struct apierr e;

	memset(body, 0, sizeof(body));
	strcpy(body, "{\"error\":{\"code\":\"c\",\"message\":\"");
	memset(body + strlen(body), 'm', 1500);
	strcat(body, "\"}}");
	apierr_parse(body, strlen(body), &e);
	assert_int_equal(strlen(e.message), sizeof(e.message) - 1);
}

static void
test_retry_wait(void **state)
{
	struct apierr e;
	const time_t now = 1790000000;

	memset(&e, 0, sizeof(e));
	assert_int_equal(apierr_retry_wait("7", &e, now), 7);
	assert_int_equal(apierr_retry_wait("0", &e, now), 0);
	assert_int_equal(apierr_retry_wait(NULL, &e, now), -1);
	assert_int_equal(apierr_retry_wait("soon", &e, now), -1);
	assert_int_equal(apierr_retry_wait("-3", &e, now), -1);
	/* no usable Retry-After: reset_at of either shape */
	e.reset_at = now + 12;
	assert_int_equal(apierr_retry_wait(NULL, &e, now), 12);
	assert_int_equal(apierr_retry_wait("Wed, 21 Oct 2015 07:28:00 GMT",
	    &e, now), 12);
	/* the header wins */
	assert_int_equal(apierr_retry_wait("3", &e, now), 3);
	/* a reset already past: at least a second */
	e.reset_at = now - 100;
	assert_int_equal(apierr_retry_wait(NULL, &e, now), 1);
	e.reset_at = now + 86400LL * 1000;
	assert_int_equal(apierr_retry_wait(NULL, &e, now), 86400L * 365);
}

static void
test_exit(void **state)
{
	static const struct { long status; enum apierr_exit rc; } m[] = {
		{ 200, APIERR_EXIT_OK }, { 202, APIERR_EXIT_OK },
		{ 400, APIERR_EXIT_ERROR }, { 401, APIERR_EXIT_AUTH },
		{ 402, APIERR_EXIT_CREDITS }, { 403, APIERR_EXIT_AUTH },
		{ 404, APIERR_EXIT_NOT_FOUND }, { 409, APIERR_EXIT_ERROR },
		{ 411, APIERR_EXIT_ERROR }, { 413, APIERR_EXIT_ERROR },
		{ 429, APIERR_EXIT_RATE_LIMITED }, { 500, APIERR_EXIT_SERVER },
		{ 501, APIERR_EXIT_SERVER }, { 503, APIERR_EXIT_SERVER },
		{ 0, APIERR_EXIT_SERVER }, { 302, APIERR_EXIT_ERROR },
	};
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		assert_int_equal(apierr_exit(m[i].status), m[i].rc);
	for (i = 0; i < APIERR_EXIT__MAX; i++)
		assert_non_null(apierr_exit_names[i]);
	assert_int_equal(APIERR_EXIT_NETWORK, 7);
	assert_int_equal(APIERR_EXIT_SERVER, 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_long_message_is_cut),
		cmocka_unit_test(test_retry_wait),
		cmocka_unit_test(test_exit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
