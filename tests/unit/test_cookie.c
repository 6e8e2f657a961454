/* test_cookie.c: the Cookie header parser (util/cookie.c): the named
 * cookie among others, spaces, quotes, prefixes of other names, bad bytes,
 * sizes and absent headers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/cookie.h"

struct cookiecase {
	const char	*header;
	int		 want;		/* 0 found, -1 refused */
	const char	*value;
};

static const struct cookiecase cases[] = {
	{ "svc_session=abc", 0, "abc" },
	{ "a=1; svc_session=abc; b=2", 0, "abc" },
	{ "a=1;svc_session=abc", 0, "abc" },
	{ "  svc_session = abc  ", 0, "abc" },
	{ "svc_session=\"abc\"", 0, "abc" },
	{ "svc_session=abc; svc_session=def", 0, "abc" },	/* first */
	{ "xsvc_session=abc", -1, NULL },
	{ "svc_session_x=abc", -1, NULL },
	{ "svc_sessio=abc", -1, NULL },
	{ "a=1; b=2", -1, NULL },
	{ "svc_session", -1, NULL },			/* no '=' */
	{ "svc_session=", -1, NULL },			/* empty */
	{ "svc_session=\"\"", -1, NULL },
	{ "svc_session=a b", -1, NULL },		/* space inside */
	{ "svc_session=a\\b", -1, NULL },
	{ "svc_session=a,b", -1, NULL },
	{ "svc_session=a\x7f", -1, NULL },
	{ "svc_session=\xc3\xa9", -1, NULL },
	{ "junk; svc_session=ok1", 0, "ok1" },
	{ ";;; ;svc_session=ok2;;", 0, "ok2" },
	{ "", -1, NULL },
};

static void
test_cases(void **state)
{
	char out[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = cookie_get(cases[i].header, "svc_session", out,
		    sizeof(out));
		if (rc != cases[i].want)
			fail_msg("case %zu \"%s\": %d", i, cases[i].header, rc);
		if (rc == 0)
			assert_string_equal(out, cases[i].value);
	}
}

static void
test_sizes(void **state)
{
	char out[4];

	(void)state;
	assert_int_equal(cookie_get("s=abc", "s", out, sizeof(out)), 0);
	assert_string_equal(out, "abc");
	assert_int_equal(cookie_get("s=abcd", "s", out, sizeof(out)), -1);
	assert_int_equal(cookie_get("s=a", "s", out, 0), -1);
	assert_int_equal(cookie_get(NULL, "s", out, sizeof(out)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
