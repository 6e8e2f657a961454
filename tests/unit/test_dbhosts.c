/* test_dbhosts.c: the db_hosts endpoint list: host:port, bare host (3306),
 * bracketed IPv6, spaces and commas, and what is refused (bad port, bad
 * characters, duplicates, too many, a missing ']'); and db_hosts read from
 * svc.conf with a clear error naming the setting and the line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "util/conf.h"
#include "util/dbhosts.h"

static size_t
parse_ok(const char *s, struct dbhost *h)
{
	struct buf err;
	size_t n = 99;

	buf_init(&err, 256);
	assert_int_equal(dbhosts_parse(s, h, DBHOSTS_MAX, &n, &err), 0);
	buf_free(&err);
	return n;
}

static void
parse_bad(const char *s, const char *why)
{
	struct dbhost h[DBHOSTS_MAX];
	struct buf err;
	size_t n;

	buf_init(&err, 256);
	assert_int_equal(dbhosts_parse(s, h, DBHOSTS_MAX, &n, &err), -1);
	print_message("%s -> %s\n", s, buf_str(&err));
	assert_non_null(strstr(buf_str(&err), why));
	buf_free(&err);
}

static void
test_dbhosts_lists(void **state)
{
	struct dbhost h[DBHOSTS_MAX];
	char text[300];

	(void)state;
	assert_int_equal(parse_ok("", h), 0);
	assert_int_equal(parse_ok("  , ", h), 0);
	assert_int_equal(parse_ok("127.0.0.1:3307 127.0.0.1:3308,db-3", h), 3);
	assert_string_equal(h[0].host, "127.0.0.1");
	assert_int_equal(h[0].port, 3307);
	assert_int_equal(h[1].port, 3308);
	assert_string_equal(h[2].host, "db-3");
	assert_int_equal(h[2].port, 3306);
	assert_int_equal(parse_ok("[::1]:4000\t[fe80::1]", h), 2);
	assert_string_equal(h[0].host, "::1");
	assert_int_equal(h[0].port, 4000);
	assert_int_equal(h[1].port, 3306);
	dbhosts_format(&h[0], text, sizeof(text));
	assert_string_equal(text, "[::1]:4000");
	assert_int_equal(parse_ok("a.example:65535", h), 1);
	dbhosts_format(&h[0], text, sizeof(text));
	assert_string_equal(text, "a.example:65535");
}

static void
test_dbhosts_refusals(void **state)
{
	char many[400];
	size_t i, off = 0;

	(void)state;
	parse_bad("a:0", "port not in 1..65535");
	parse_bad("a:65536", "port not in 1..65535");
	parse_bad("a:", "bad port");
	parse_bad("a:12x", "bad port");
	parse_bad("a:1234567", "bad port");
	parse_bad(":3306", "host empty");
	parse_bad("a/b:1", "bad character");
	parse_bad("[::1", "no ']'");
	parse_bad("[::1]x", "':' expected");
	parse_bad("[xy]:1", "bad character");
	parse_bad("a:1 b:2 a:1", "listed twice");
	for (i = 0; i <= DBHOSTS_MAX; i++)
		off += (size_t)snprintf(many + off, sizeof(many) - off,
		    "h%zu ", i);
	parse_bad(many, "more than 16 endpoints");
}

static void
test_dbhosts_in_svc_conf(void **state)
{
	static const char good[] = "db_hosts = 127.0.0.1:1 127.0.0.1:2\n";
	static const char bad[] = "# x\ndb_hosts = 127.0.0.1:1 b:99999\n";
	struct conf c;
	struct buf err;
	FILE *f;

	(void)state;
	buf_init(&err, 1024);
	f = fmemopen((void *)good, strlen(good), "r");
	assert_int_equal(conf_load_stream(&c, f, "t.conf", &err), 0);
	fclose(f);
	assert_int_equal(conf_int(&c, CONF_DB_HOSTS), 2);
	conf_free(&c);
	f = fmemopen((void *)bad, strlen(bad), "r");
	assert_int_equal(conf_load_stream(&c, f, "t.conf", &err), -1);
	fclose(f);
	print_message("%s\n", buf_str(&err));
	assert_non_null(strstr(buf_str(&err), "t.conf:2"));
	assert_non_null(strstr(buf_str(&err), "db_hosts"));
	assert_non_null(strstr(buf_str(&err), "b:99999"));
	conf_free(&c);
	buf_free(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dbhosts_lists),
		cmocka_unit_test(test_dbhosts_refusals),
		cmocka_unit_test(test_dbhosts_in_svc_conf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
