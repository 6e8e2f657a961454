/* test_svc_webhook.c: libsvc-sdk's svc_webhook_verify (src/sdk), linked as
 * the library receivers install, against the shared vectors
 * tests/sdk/vectors.json (the Node and Python helpers are tested against
 * the same file), plus what the vectors cannot say: NULL arguments,
 * binary bodies, the result names, a clock far from any timestamp. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sdk/svc-sdk.h"

#ifndef SDK_VECTORS
#define SDK_VECTORS "tests/sdk/vectors.json"
#endif

static enum svc_webhook_result
result_of(const char *name)
{
	int r;

	for (r = 0; r < SVC_WEBHOOK__MAX; r++)
		if (strcmp(svc_webhook_result_name(r), name) == 0)
			return (enum svc_webhook_result)r;
	fail_msg("unknown expected result \"%s\"", name);
	return SVC_WEBHOOK__MAX;
}

static void
test_svc_webhook_shared_vectors(void **state)
{
	json_error_t jerr;
	json_t *root, *vecs, *v, *s;
	const char *secrets[8];
	size_t i, j, n;

	(void)state;
	root = json_load_file(SDK_VECTORS, 0, &jerr);
	if (root == NULL)
		fail_msg("%s: %s", SDK_VECTORS, jerr.text);
	vecs = json_object_get(root, "vectors");
	assert_true(json_array_size(vecs) >= 30);
	json_array_foreach(vecs, i, v) {
		const char *body = json_string_value(json_object_get(v, "body"));

		print_message("%s\n", json_string_value(json_object_get(v,
		    "name")));
		n = json_array_size(json_object_get(v, "secrets"));
		assert_true(n <= 8);
		json_array_foreach(json_object_get(v, "secrets"), j, s)
			secrets[j] = json_string_value(s);
		assert_string_equal(svc_webhook_result_name(svc_webhook_verify(
		    json_string_value(json_object_get(v, "header")), body,
		    strlen(body), secrets, n,
		    (long)json_integer_value(json_object_get(v, "tolerance")),
		    json_integer_value(json_object_get(v, "now")))),
		    svc_webhook_result_name(result_of(json_string_value(
		    json_object_get(v, "expected")))));
	}
	json_decref(root);
}

/* HMAC-SHA256("k", "5.\0\1\2"), from Python's hmac module. */
#define BIN_SIG "t=5,v1=" \
	"5f889ff2be3e6b4d18e123405a9a5833872989c754dbb7bad3d26f9cead3a308"

static void
test_svc_webhook_null_header_or_secret_never_ok(void **state)
{
	static const unsigned char body[] = { 0, 1, 2 };
	const char *secrets[] = { NULL, "" };

	(void)state;
	assert_int_equal(svc_webhook_verify(NULL, body, sizeof(body), secrets,
	    2, 300, 5), SVC_WEBHOOK_BAD_HEADER);
	assert_int_equal(svc_webhook_verify(BIN_SIG, body, sizeof(body),
	    secrets, 2, 300, 5), SVC_WEBHOOK_NO_MATCH);
	assert_int_equal(svc_webhook_verify(BIN_SIG, body, sizeof(body), NULL,
	    0, 300, 5), SVC_WEBHOOK_NO_MATCH);
}

static void
test_svc_webhook_binary_body_and_clock_extremes(void **state)
{
	static const unsigned char body[] = { 0, 1, 2 };
	const char *secrets[] = { "k" };

	(void)state;
	/* the body's bytes count, NUL included */
	assert_int_equal(svc_webhook_verify(BIN_SIG, body, sizeof(body),
	    secrets, 1, 300, 5), SVC_WEBHOOK_OK);
	assert_int_equal(svc_webhook_verify(BIN_SIG, body, 2, secrets, 1, 300,
	    5), SVC_WEBHOOK_NO_MATCH);
	/* a negative tolerance counts as 0 */
	assert_int_equal(svc_webhook_verify(BIN_SIG, body, sizeof(body),
	    secrets, 1, -1, 5), SVC_WEBHOOK_OK);
	assert_int_equal(svc_webhook_verify(BIN_SIG, body, sizeof(body),
	    secrets, 1, -1, 6), SVC_WEBHOOK_TIMESTAMP);
	/* a clock at either end of its range: no overflow */
	assert_int_equal(svc_webhook_verify(BIN_SIG, body, sizeof(body),
	    secrets, 1, 300, LLONG_MIN), SVC_WEBHOOK_TIMESTAMP);
	assert_int_equal(svc_webhook_verify(BIN_SIG, body, sizeof(body),
	    secrets, 1, 300, LLONG_MAX), SVC_WEBHOOK_TIMESTAMP);
	assert_int_equal(svc_webhook_verify(BIN_SIG, body, sizeof(body),
	    secrets, 1, LONG_MAX, LLONG_MAX), SVC_WEBHOOK_OK);
}

static void
test_svc_webhook_result_names(void **state)
{
	(void)state;
	assert_string_equal(svc_webhook_result_name(SVC_WEBHOOK_OK), "ok");
	assert_string_equal(svc_webhook_result_name(SVC_WEBHOOK_BAD_HEADER),
	    "bad_header");
	assert_string_equal(svc_webhook_result_name(SVC_WEBHOOK_NO_MATCH),
	    "no_matching_signature");
	assert_string_equal(svc_webhook_result_name(SVC_WEBHOOK_TIMESTAMP),
	    "timestamp_outside_tolerance");
	assert_string_equal(svc_webhook_result_name(SVC_WEBHOOK__MAX),
	    "unknown");
	assert_string_equal(svc_webhook_result_name(
	    (enum svc_webhook_result)-1), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_svc_webhook_shared_vectors),
		cmocka_unit_test(test_svc_webhook_null_header_or_secret_never_ok),
		cmocka_unit_test(test_svc_webhook_binary_body_and_clock_extremes),
		cmocka_unit_test(test_svc_webhook_result_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
