/* test_egress.c: table-driven tests of the smtp_egress parser (direct,
 * bind:ADDRESS, socks5:// with and without credentials, percent escapes,
 * every kind of bad route and its message, passwords never echoed) and of
 * the round robin over the routes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/egress.h"
#include "util/timeutil.h"

struct ecase {
	const char	*in;
	int		 ok;
	size_t		 n;
	const char	*names;		/* the routes' names, space-separated */
	const char	*err;		/* a part of the error message */
};

static const struct ecase cases[] = {
	{ "", 1, 1, "direct", NULL },
	{ "   \t ", 1, 1, "direct", NULL },
	{ "direct", 1, 1, "direct", NULL },
	{ "bind:127.0.0.2", 1, 1, "bind:127.0.0.2", NULL },
	{ "bind:2001:db8::1", 1, 1, "bind:[2001:db8::1]", NULL },
	{ "bind:[::1]", 1, 1, "bind:[::1]", NULL },
	{ " bind:192.0.2.1\tbind:192.0.2.2  direct ", 1, 3,
	    "bind:192.0.2.1 bind:192.0.2.2 direct", NULL },
	{ "socks5://127.0.0.1:1080", 1, 1, "socks5://127.0.0.1:1080", NULL },
	{ "socks5://[::1]:1080", 1, 1, "socks5://[::1]:1080", NULL },
	{ "socks5://user:secret@127.0.0.1:1080", 1, 1,
	    "socks5://user@127.0.0.1:1080", NULL },
	{ "socks5://u%3Ax:p%40ss@w@10.0.0.1:65535", 1, 1,
	    "socks5://u:x@10.0.0.1:65535", NULL },
	{ "direct socks5://a:b@192.0.2.9:1 bind:::1", 1, 3,
	    "direct socks5://a@192.0.2.9:1 bind:[::1]", NULL },
	{ "socks5://u:p@127.0.0.1:1080#egress=192.0.2.7", 1, 1,
	    "socks5://u@127.0.0.1:1080", NULL },
	{ "socks5://[::1]:1080#egress=[2001:db8::7]", 1, 1,
	    "socks5://[::1]:1080", NULL },
	/* a proxy by host name (looked up when used) */
	{ "socks5://Proxy.Example.:1080", 1, 1, "socks5://proxy.example:1080",
	    NULL },
	{ "socks5://u:p@proxy-1.example:1080#egress=192.0.2.7", 1, 1,
	    "socks5://u@proxy-1.example:1080", NULL },
	/* bad ones */
	{ "socks5://127.0.0.1:1080#egress=proxy.example", 0, 0, NULL,
	    "#egress= needs an IPv4 or IPv6 address" },
	{ "socks5://127.0.0.1:1080#egress=", 0, 0, NULL, "#egress= needs" },
	{ "bind:127.0.0.1#egress=127.0.0.2", 0, 0, NULL, "bind: needs" },
	{ "indirect", 0, 0, NULL, "bad route \"indirect\": not direct" },
	{ "DIRECT", 0, 0, NULL, "not direct" },
	{ "direct,bind:127.0.0.1", 0, 0, NULL, "not direct" },
	{ "bind:", 0, 0, NULL, "not direct" },
	{ "bind:localhost", 0, 0, NULL, "bind: needs an IPv4 or IPv6" },
	{ "bind:127.0.0.256", 0, 0, NULL, "bind: needs" },
	{ "bind:127.0.0.1/8", 0, 0, NULL, "bind: needs" },
	{ "socks5://127.0.0.1", 0, 0, NULL, "HOST:PORT expected" },
	{ "socks5://127.0.0.1:", 0, 0, NULL, "HOST:PORT expected" },
	{ "socks5://127.0.0.1:0", 0, 0, NULL, "bad port" },
	{ "socks5://127.0.0.1:65536", 0, 0, NULL, "bad port" },
	{ "socks5://127.0.0.1:99999999999999999999", 0, 0, NULL, "bad port" },
	{ "socks5://127.0.0.1:10x", 0, 0, NULL, "bad port" },
	{ "socks5://-proxy.example:1080", 0, 0, NULL, "must be an IP address "
	    "(IPv6 in brackets) or a host name" },
	{ "socks5://proxy_1.example:1080", 0, 0, NULL, "or a host name" },
	{ "socks5://1.2.3:1080", 0, 0, NULL, "or a host name" },
	{ "socks5://proxy..example:1080", 0, 0, NULL, "or a host name" },
	{ "socks5://::1:1080", 0, 0, NULL, "must be an IP address" },
	{ "socks5://user@127.0.0.1:1080", 0, 0, NULL, "needs a password" },
	{ "socks5://:pw@127.0.0.1:1080", 0, 0, NULL, "bad user name" },
	{ "socks5://u:@127.0.0.1:1080", 0, 0, NULL, "bad password" },
	{ "socks5://u:p%4@127.0.0.1:1080", 0, 0, NULL, "bad password" },
	{ "socks5://u:p%00@127.0.0.1:1080", 0, 0, NULL, "bad password" },
	{ "socks4://127.0.0.1:1080", 0, 0, NULL, "not direct" },
	/* the password never appears in the message */
	{ "socks5://joe:hunter2@proxy_1:1080", 0, 0, NULL,
	    "\"socks5://joe:***@proxy_1:1080\"" },
};

static void
test_parse_table(void **state)
{
	struct egress *e = malloc(sizeof(*e));
	struct buf err, names;
	size_t i, j;

	(void)state;
	assert_non_null(e);
	buf_init(&err, 4096);
	buf_init(&names, 4096);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf_reset(&err);
		buf_reset(&names);
		if (egress_parse(cases[i].in, e, &err) != (cases[i].ok ? 0 :
		    -1))
			fail_msg("case %zu \"%s\": %s", i, cases[i].in,
			    buf_str(&err));
		if (!cases[i].ok) {
			if (strstr(buf_str(&err), cases[i].err) == NULL)
				fail_msg("case %zu \"%s\": message \"%s\" "
				    "lacks \"%s\"", i, cases[i].in,
				    buf_str(&err), cases[i].err);
			assert_null(strstr(buf_str(&err), "hunter2"));
			continue;
		}
		assert_int_equal(e->n, cases[i].n);
		for (j = 0; j < e->n; j++)
			buf_printf(&names, "%s%s", j ? " " : "",
			    e->r[j].name);
		if (strcmp(buf_str(&names), cases[i].names) != 0)
			fail_msg("case %zu \"%s\": names \"%s\", want \"%s\"",
			    i, cases[i].in, buf_str(&names), cases[i].names);
	}
	buf_free(&err);
	buf_free(&names);
	free(e);
}

static void
test_route_fields(void **state)
{
	struct egress *e = malloc(sizeof(*e));
	struct buf err;
	const struct sockaddr_in *sin;
	const struct sockaddr_in6 *sin6;
	uint8_t v6[16];

	(void)state;
	buf_init(&err, 1024);
	assert_int_equal(egress_parse("socks5://u%3Ax:p%40ss@w@10.0.0.1:1080 "
	    "bind:2001:db8::7 socks5://[::1]:9", e, &err), 0);
	assert_int_equal(e->r[0].kind, EGRESS_SOCKS5);
	assert_string_equal(e->r[0].user, "u:x");
	assert_string_equal(e->r[0].pass, "p@ss@w");
	assert_int_equal(e->r[0].family, AF_INET);
	sin = (const struct sockaddr_in *)&e->r[0].sa;
	assert_int_equal(ntohs(sin->sin_port), 1080);
	assert_int_equal(ntohl(sin->sin_addr.s_addr), 0x0a000001);
	assert_int_equal(e->r[1].kind, EGRESS_BIND);
	assert_int_equal(e->r[1].family, AF_INET6);
	sin6 = (const struct sockaddr_in6 *)&e->r[1].sa;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::7", v6), 1);
	assert_memory_equal(&sin6->sin6_addr, v6, 16);
	assert_int_equal(ntohs(sin6->sin6_port), 0);
	assert_int_equal(e->r[2].kind, EGRESS_SOCKS5);
	assert_string_equal(e->r[2].user, "");
	assert_int_equal(e->r[2].salen, sizeof(struct sockaddr_in6));
	buf_free(&err);
	free(e);
}

static void
test_limits(void **state)
{
	struct egress *e = malloc(sizeof(*e));
	struct buf err, in;
	size_t i;

	(void)state;
	buf_init(&err, 1024);
	buf_init(&in, 64 * 1024);
	for (i = 0; i < EGRESS_ROUTES_MAX; i++)
		buf_puts(&in, "direct ");
	assert_int_equal(egress_parse(buf_str(&in), e, &err), 0);
	assert_int_equal(e->n, EGRESS_ROUTES_MAX);
	buf_puts(&in, "direct");
	assert_int_equal(egress_parse(buf_str(&in), e, &err), -1);
	assert_non_null(strstr(buf_str(&err), "more than"));
	assert_int_equal(e->n, 0);	/* nothing half-parsed is left */
	/* 255-octet credentials are the most RFC 1929 carries */
	buf_reset(&in);
	buf_puts(&in, "socks5://");
	for (i = 0; i < 255; i++)
		buf_putc(&in, 'u');
	buf_puts(&in, ":p@127.0.0.1:1");
	assert_int_equal(egress_parse(buf_str(&in), e, &err), 0);
	assert_int_equal(strlen(e->r[0].user), 255);
	buf_reset(&in);
	buf_puts(&in, "socks5://");
	for (i = 0; i < 256; i++)
		buf_putc(&in, 'u');
	buf_puts(&in, ":p@127.0.0.1:1");
	buf_reset(&err);
	assert_int_equal(egress_parse(buf_str(&in), e, &err), -1);
	assert_non_null(strstr(buf_str(&err), "bad user name"));
	buf_free(&err);
	buf_free(&in);
	free(e);
}

static void
test_pick_goes_round(void **state)
{
	struct egress *e = malloc(sizeof(*e));
	struct buf err;
	size_t seen[3] = { 0, 0, 0 }, i;

	(void)state;
	buf_init(&err, 1024);
	assert_int_equal(egress_pick(NULL), 0);
	assert_int_equal(egress_parse("bind:127.0.0.2 bind:127.0.0.3 direct",
	    e, &err), 0);
	for (i = 0; i < 30; i++)
		seen[egress_pick(e)]++;
	assert_int_equal(seen[0], 10);
	assert_int_equal(seen[1], 10);
	assert_int_equal(seen[2], 10);
	buf_free(&err);
	free(e);
}

/* A provider pinned to some routes: the pick stays in the set, a route
 * of the set marked down is passed over while another of the set is up
 * (a route outside the set being up does not count). */
static void
test_pick_in_a_set(void **state)
{
	struct egress *e = malloc(sizeof(*e));
	struct buf err;
	size_t seen[4] = { 0, 0, 0, 0 }, i;
	uint32_t set = (UINT32_C(1) << 1) | (UINT32_C(1) << 3);

	(void)state;
	buf_init(&err, 1024);
	assert_true(egress_in(0, 5));
	assert_true(egress_in(set, 3));
	assert_false(egress_in(set, 2));
	assert_int_equal(egress_parse("bind:127.0.0.2 bind:127.0.0.3 direct "
	    "bind:127.0.0.4", e, &err), 0);
	for (i = 0; i < 40; i++)
		seen[egress_pick_in(e, set)]++;
	assert_int_equal(seen[0], 0);
	assert_int_equal(seen[2], 0);
	assert_int_equal(seen[1] + seen[3], 40);
	assert_true(seen[1] >= 10 && seen[3] >= 10);
	egress_set_down(e, 1, timeutil_mono_ms() + 60000);
	for (i = 0; i < 10; i++)
		assert_int_equal(egress_pick_in(e, set), 3);
	assert_true(egress_avoid_in(e, 1, timeutil_mono_ms(), set));
	/* both routes of the set down: none is better, route 0 and 2 are
	 * still not taken */
	egress_set_down(e, 3, timeutil_mono_ms() + 60000);
	assert_false(egress_avoid_in(e, 1, timeutil_mono_ms(), set));
	for (i = 0; i < 10; i++) {
		size_t r = egress_pick_in(e, set);

		assert_true(r == 1 || r == 3);
	}
	buf_free(&err);
	free(e);
}

/* A proxy's outgoing address (#egress=), for svcadm doctor: kept as text,
 * not in the route's name; none for the other routes. */
static void
test_proxy_egress_addr(void **state)
{
	struct egress *e = malloc(sizeof(*e));
	struct buf err;

	(void)state;
	buf_init(&err, 1024);
	assert_int_equal(egress_parse("socks5://u:p%23x@127.0.0.1:1080#egress="
	    "192.0.2.7 socks5://[::1]:1080#egress=2001:db8::7 "
	    "socks5://127.0.0.1:1081 bind:127.0.0.2", e, &err), 0);
	assert_string_equal(e->r[0].egress_addr, "192.0.2.7");
	assert_string_equal(e->r[0].pass, "p#x");
	assert_string_equal(e->r[1].egress_addr, "2001:db8::7");
	assert_string_equal(e->r[1].name, "socks5://[::1]:1080");
	assert_string_equal(e->r[2].egress_addr, "");
	assert_string_equal(e->r[3].egress_addr, "");
	buf_free(&err);
	free(e);
}

/* A proxy by host name: no address until looked up (egress_resolve.h),
 * its name and port kept. */
static void
test_proxy_host_name(void **state)
{
	struct egress *e = malloc(sizeof(*e));
	struct buf err;

	(void)state;
	buf_init(&err, 1024);
	assert_int_equal(egress_parse("socks5://u:p@proxy.example:1080 "
	    "socks5://127.0.0.1:1081", e, &err), 0);
	assert_string_equal(e->r[0].host, "proxy.example");
	assert_int_equal(e->r[0].port, 1080);
	assert_int_equal(e->r[0].family, 0);
	assert_int_equal(e->r[0].resolve_at, 0);
	assert_string_equal(e->r[1].host, "");
	assert_int_equal(e->r[1].family, AF_INET);
	buf_free(&err);
	free(e);
}

static void
test_from_conf(void **state)
{
	struct conf c;
	struct buf err;
	struct egress *e;

	(void)state;
	buf_init(&err, 1024);
	conf_defaults(&c);
	e = egress_from_conf(&c, &err);
	assert_non_null(e);
	assert_int_equal(e->n, 1);
	assert_int_equal(e->r[0].kind, EGRESS_DIRECT);
	free(e);
	assert_int_equal(conf_set(&c, "smtp_egress", "bind:127.0.0.1 "
	    "socks5://x:y@127.0.0.1", &err), 0);
	assert_int_equal(egress_check(&c, &err), -1);
	assert_non_null(strstr(buf_str(&err), "smtp_egress: bad route "
	    "\"socks5://x:***@127.0.0.1\": HOST:PORT expected"));
	conf_free(&c);
	buf_free(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_route_fields),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_pick_goes_round),
		cmocka_unit_test(test_pick_in_a_set),
		cmocka_unit_test(test_proxy_egress_addr),
		cmocka_unit_test(test_proxy_host_name),
		cmocka_unit_test(test_from_conf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
