/* test_sign.c: the signature value of event deliveries (src/jobs/sign.c):
 * "t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>", one v1 per
 * secret in the order given, against HMACs computed independently
 * (Python's hmac module); nothing is written when it cannot sign. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "jobs/sign.h"

#define BODY "{\"a\":1}"
#define MAC_TEST "38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789"
#define MAC_OLD "b9d801502bb535e960ee9aeee7a294b082bda5089d79c7db610b85116ce6faa6"

static void
test_sign_one_secret_gives_t_and_one_v1(void **state)
{
	const char *secrets[] = { "whsec_test" };
	struct buf b;

	(void)state;
	buf_init(&b, BUF_NOMAX);
	assert_int_equal(sign_header(secrets, 1, 1700000000, BODY,
	    strlen(BODY), &b), 0);
	assert_string_equal(buf_str(&b), "t=1700000000,v1=" MAC_TEST);
	buf_free(&b);
}

static void
test_sign_rotation_gives_one_v1_per_secret_in_order(void **state)
{
	const char *secrets[] = { "whsec_test", "whsec_old" };
	const char *reversed[] = { "whsec_old", "whsec_test" };
	struct buf b;

	(void)state;
	buf_init(&b, BUF_NOMAX);
	assert_int_equal(sign_header(secrets, 2, 1700000000, BODY,
	    strlen(BODY), &b), 0);
	assert_string_equal(buf_str(&b),
	    "t=1700000000,v1=" MAC_TEST ",v1=" MAC_OLD);
	buf_reset(&b);
	assert_int_equal(sign_header(reversed, 2, 1700000000, BODY,
	    strlen(BODY), &b), 0);
	assert_string_equal(buf_str(&b),
	    "t=1700000000,v1=" MAC_OLD ",v1=" MAC_TEST);
	buf_free(&b);
}

static void
test_sign_empty_body_and_time_zero(void **state)
{
	const char *secrets[] = { "k" };
	struct buf b;

	(void)state;
	buf_init(&b, BUF_NOMAX);
	assert_int_equal(sign_header(secrets, 1, 0, NULL, 0, &b), 0);
	assert_string_equal(buf_str(&b), "t=0,v1=6b4a4b8b3c40f1e8f53a3d36682e5f9"
	    "9f7ad2ac1df1c93dfe336f329167641e7");
	buf_free(&b);
}

static void
test_sign_refuses_no_secret_or_an_empty_one_and_writes_nothing(void **state)
{
	const char *empty[] = { "whsec_test", "" };
	const char *null[] = { NULL };
	struct buf b;

	(void)state;
	buf_init(&b, BUF_NOMAX);
	buf_puts(&b, "kept");
	assert_int_equal(sign_header(empty, 0, 1, BODY, strlen(BODY), &b), -1);
	assert_int_equal(sign_header(empty, 2, 1, BODY, strlen(BODY), &b), -1);
	assert_int_equal(sign_header(null, 1, 1, BODY, strlen(BODY), &b), -1);
	assert_string_equal(buf_str(&b), "kept");
	buf_free(&b);
}

static void
test_sign_appends_to_what_the_buffer_holds(void **state)
{
	const char *secrets[] = { "whsec_test" };
	struct buf b;

	(void)state;
	buf_init(&b, BUF_NOMAX);
	buf_puts(&b, "X: ");
	assert_int_equal(sign_header(secrets, 1, 1700000000, BODY,
	    strlen(BODY), &b), 0);
	assert_string_equal(buf_str(&b), "X: t=1700000000,v1=" MAC_TEST);
	buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sign_one_secret_gives_t_and_one_v1),
		cmocka_unit_test(test_sign_rotation_gives_one_v1_per_secret_in_order),
		cmocka_unit_test(test_sign_empty_body_and_time_zero),
		cmocka_unit_test(test_sign_refuses_no_secret_or_an_empty_one_and_writes_nothing),
		cmocka_unit_test(test_sign_appends_to_what_the_buffer_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
