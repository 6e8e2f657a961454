/* test_smtp_tls_cache.c: the SMTP client's cache of TLS session data
 * (src/engine/smtp_tls_cache.c): an entry is found by host name (any
 * case), port and egress route only, is a copy, carries its verification,
 * expires (at its own time, an hour at most), is replaced by a newer one,
 * can be dropped, and a full cache lets its least recently used entry go. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/smtp_tls_cache.h"

/* The entry's data as a string ("" when none), and its verification. */
static int
get(struct smtp_tls_cache *c, const char *host, unsigned port,
    const char *route, int64_t now, char *out, size_t size, int *verified)
{
	void *d;
	size_t len;
	int r, v;

	r = smtp_tls_cache_get(c, host, port, route, now, &d, &len, &v);
	out[0] = '\0';
	if (r == 1) {
		assert_true(len < size);
		memcpy(out, d, len);
		out[len] = '\0';
		free(d);
	} else
		assert_null(d);
	if (verified != NULL)
		*verified = v;
	return r;
}

static int
put(struct smtp_tls_cache *c, const char *host, unsigned port,
    const char *route, const char *data, int verified, int64_t expires,
    int64_t now)
{
	return smtp_tls_cache_put(c, host, port, route, data, strlen(data),
	    verified, expires, now);
}

static void
test_key_is_host_port_and_route(void **state)
{
	struct smtp_tls_cache *c = smtp_tls_cache_new(0);
	char b[64];
	int v;

	(void)state;
	assert_non_null(c);
	assert_int_equal(get(c, "mx.a.test", 25, "direct", 0, b, sizeof(b),
	    &v), 0);
	assert_int_equal(put(c, "MX.A.test", 25, "bind:192.0.2.1", "one", 1,
	    1000, 0), 0);
	assert_int_equal(get(c, "mx.a.test", 25, "bind:192.0.2.1", 10, b,
	    sizeof(b), &v), 1);
	assert_string_equal(b, "one");
	assert_int_equal(v, 1);
	/* any other part differs: nothing */
	assert_int_equal(get(c, "mx.a.test", 25, "bind:192.0.2.2", 10, b,
	    sizeof(b), &v), 0);
	assert_int_equal(get(c, "mx.a.test", 25, "direct", 10, b, sizeof(b),
	    &v), 0);
	assert_int_equal(get(c, "mx.a.test", 25, NULL, 10, b, sizeof(b), &v),
	    0);
	assert_int_equal(get(c, "mx.a.test", 587, "bind:192.0.2.1", 10, b,
	    sizeof(b), &v), 0);
	assert_int_equal(get(c, "mx2.a.test", 25, "bind:192.0.2.1", 10, b,
	    sizeof(b), &v), 0);
	/* NULL route is "direct" */
	assert_int_equal(put(c, "mx.a.test", 25, NULL, "two", 0, 1000, 0), 0);
	assert_int_equal(get(c, "mx.a.test", 25, "direct", 10, b, sizeof(b),
	    &v), 1);
	assert_string_equal(b, "two");
	assert_int_equal(v, 0);
	assert_int_equal(smtp_tls_cache_count(c), 2);
	/* a newer one replaces it, verification included */
	assert_int_equal(put(c, "mx.a.test", 25, "direct", "three", 1, 1000,
	    0), 0);
	assert_int_equal(get(c, "mx.a.test", 25, "direct", 10, b, sizeof(b),
	    &v), 1);
	assert_string_equal(b, "three");
	assert_int_equal(v, 1);
	assert_int_equal(smtp_tls_cache_count(c), 2);
	smtp_tls_cache_drop(c, "mx.a.test", 25, "direct");
	assert_int_equal(get(c, "mx.a.test", 25, "direct", 10, b, sizeof(b),
	    &v), 0);
	assert_int_equal(smtp_tls_cache_count(c), 1);
	smtp_tls_cache_free(c);
}

static void
test_bad_entries_refused(void **state)
{
	struct smtp_tls_cache *c = smtp_tls_cache_new(0);
	static char big[SMTP_TLS_CACHE_DATA_MAX + 2];
	char host[400];

	(void)state;
	assert_int_equal(put(c, "", 25, "direct", "x", 0, 1000, 0), -1);
	assert_int_equal(put(c, NULL, 25, "direct", "x", 0, 1000, 0), -1);
	assert_int_equal(put(c, "mx.a.test", 25, "direct", "", 0, 1000, 0), -1);
	/* already expired */
	assert_int_equal(put(c, "mx.a.test", 25, "direct", "x", 0, 5, 5), -1);
	memset(big, 'a', sizeof(big) - 1);
	assert_int_equal(put(c, "mx.a.test", 25, "direct", big, 0, 1000, 0),
	    -1);
	memset(host, 'h', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	assert_int_equal(smtp_tls_cache_put(c, host, 25, host, "x", 1, 0,
	    1000, 0), -1);
	assert_int_equal(smtp_tls_cache_count(c), 0);
	assert_int_equal(put(NULL, "mx.a.test", 25, "direct", "x", 0, 1000, 0),
	    -1);
	smtp_tls_cache_free(c);
	smtp_tls_cache_free(NULL);
}

static void
test_entries_expire(void **state)
{
	struct smtp_tls_cache *c = smtp_tls_cache_new(0);
	char b[16];

	(void)state;
	assert_int_equal(put(c, "mx.a.test", 25, "direct", "x", 0, 1000, 0), 0);
	assert_int_equal(get(c, "mx.a.test", 25, "direct", 999, b, sizeof(b),
	    NULL), 1);
	assert_int_equal(get(c, "mx.a.test", 25, "direct", 1000, b, sizeof(b),
	    NULL), 0);
	assert_int_equal(smtp_tls_cache_count(c), 0);	/* dropped */
	/* a day asked for: an hour kept */
	assert_int_equal(put(c, "mx.a.test", 25, "direct", "x", 0,
	    86400 * 1000LL, 0), 0);
	assert_int_equal(get(c, "mx.a.test", 25, "direct",
	    SMTP_TLS_CACHE_TTL_MS - 1, b, sizeof(b), NULL), 1);
	assert_int_equal(get(c, "mx.a.test", 25, "direct",
	    SMTP_TLS_CACHE_TTL_MS, b, sizeof(b), NULL), 0);
	smtp_tls_cache_free(c);
}

/* Full: the least recently used goes, a look-up counts as a use. */
static void
test_full_cache_drops_least_recently_used(void **state)
{
	struct smtp_tls_cache *c = smtp_tls_cache_new(3);
	char b[16], h[32];
	int i;

	(void)state;
	assert_int_equal(put(c, "h1", 25, "direct", "1", 0, 1000, 0), 0);
	assert_int_equal(put(c, "h2", 25, "direct", "2", 0, 1000, 0), 0);
	assert_int_equal(put(c, "h3", 25, "direct", "3", 0, 1000, 0), 0);
	assert_int_equal(get(c, "h1", 25, "direct", 1, b, sizeof(b), NULL), 1);
	assert_int_equal(put(c, "h4", 25, "direct", "4", 0, 1000, 0), 0);
	assert_int_equal(smtp_tls_cache_count(c), 3);
	assert_int_equal(get(c, "h2", 25, "direct", 1, b, sizeof(b), NULL), 0);
	assert_int_equal(get(c, "h1", 25, "direct", 1, b, sizeof(b), NULL), 1);
	assert_string_equal(b, "1");
	assert_int_equal(get(c, "h3", 25, "direct", 1, b, sizeof(b), NULL), 1);
	assert_int_equal(get(c, "h4", 25, "direct", 1, b, sizeof(b), NULL), 1);
	/* many more: never above the bound, the last ones there */
	for (i = 0; i < 100; i++) {
		snprintf(h, sizeof(h), "n%d", i);
		assert_int_equal(put(c, h, 25, "direct", h, 0, 1000, 0), 0);
		assert_true(smtp_tls_cache_count(c) <= 3);
	}
	assert_int_equal(get(c, "n99", 25, "direct", 1, b, sizeof(b), NULL), 1);
	assert_string_equal(b, "n99");
	assert_int_equal(get(c, "n96", 25, "direct", 1, b, sizeof(b), NULL), 0);
	smtp_tls_cache_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_is_host_port_and_route),
		cmocka_unit_test(test_bad_entries_refused),
		cmocka_unit_test(test_entries_expire),
		cmocka_unit_test(test_full_cache_drops_least_recently_used),
	};

	return cmocka_run_group_tests_name("smtp_tls_cache", tests, NULL, NULL);
}
