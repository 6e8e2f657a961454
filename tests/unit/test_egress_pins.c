/* test_egress_pins.c: table-driven tests of the per-provider override
 * file (smtp_provider_routes_file): routes named as in smtp_egress or as
 * logged, helo= and mail_from= (an IDN sender in A-labels, empty for <>),
 * comments, and every kind of bad line with its line number (a route that
 * is not in smtp_egress, a provider twice, an unknown option), passwords
 * never echoed; loading from a file, and the check at start. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/egress_pins.h"

#define ROUTES "direct bind:127.0.0.2 bind:127.0.0.3 " \
	"socks5://joe:s3cret@127.0.0.1:1080"

struct pcase {
	const char	*in;
	int		 ok;
	size_t		 n;		/* pins */
	const char	*provider;	/* of the last pin */
	uint32_t	 routes;
	const char	*helo;
	int		 has_mail_from;
	const char	*mail_from;
	const char	*err;		/* a part of the error message */
};

static const struct pcase cases[] = {
	{ "", 1, 0, NULL, 0, NULL, 0, NULL, NULL },
	{ "# nothing\n\n   \t\n", 1, 0, NULL, 0, NULL, 0, NULL, NULL },
	{ "google bind:127.0.0.2\n", 1, 1, "google", 0x2, "", 0, "", NULL },
	{ "Google bind:127.0.0.2 bind:127.0.0.3 # two\r\n", 1, 1, "google",
	    0x6, "", 0, "", NULL },
	{ "yahoo direct helo=mx-out.example.net mail_from=probe@example.net",
	    1, 1, "yahoo", 0x1, "mx-out.example.net", 1, "probe@example.net",
	    NULL },
	{ "outlook bind:127.0.0.3 mail_from=", 1, 1, "outlook", 0x4, "", 1, "",
	    NULL },
	{ "x.example bind:127.0.0.2 helo=[192.0.2.1] "
	    "mail_from=a@b\xc3\xbc" "cher.example", 1, 1, "x.example", 0x2,
	    "[192.0.2.1]", 1, "a@xn--bcher-kva.example", NULL },
	/* a proxy as written (with its password) or as logged */
	{ "google socks5://joe:s3cret@127.0.0.1:1080", 1, 1, "google", 0x8,
	    "", 0, "", NULL },
	{ "google socks5://joe@127.0.0.1:1080", 1, 1, "google", 0x8, "", 0, "",
	    NULL },
	{ "google bind:127.0.0.2\nyahoo bind:127.0.0.3 helo=y.example\n", 1, 2,
	    "yahoo", 0x4, "y.example", 0, "", NULL },
	/* bad ones */
	{ "google bind:127.0.0.9", 0, 0, NULL, 0, NULL, 0, NULL,
	    "line 1: \"bind:127.0.0.9\": not one of smtp_egress's routes" },
	{ "google", 0, 0, NULL, 0, NULL, 0, NULL, "line 1: no route given" },
	{ "# c\ngoogle bind:127.0.0.2\ngoogle bind:127.0.0.3", 0, 0, NULL, 0,
	    NULL, 0, NULL, "line 3: the provider has a line already" },
	{ "google bind:127.0.0.2 port=26", 0, 0, NULL, 0, NULL, 0, NULL,
	    "line 1: \"port=26\": unknown option" },
	{ "google bind:127.0.0.2 helo=a_b", 0, 0, NULL, 0, NULL, 0, NULL,
	    "bad helo=" },
	{ "google bind:127.0.0.2 helo=a helo=b", 0, 0, NULL, 0, NULL, 0, NULL,
	    "helo= given twice" },
	{ "google bind:127.0.0.2 mail_from=nobody", 0, 0, NULL, 0, NULL, 0,
	    NULL, "bad mail_from=" },
	{ "google bind:127.0.0.2 mail_from=p\xc3\xa9@example.net", 0, 0, NULL,
	    0, NULL, 0, NULL, "bad mail_from=" },
	{ "google bind:127.0.0.2 mail_from=\"a b\"@example.net", 0, 0, NULL,
	    0, NULL, 0, NULL, "bad mail_from=" },
	{ "goo/gle bind:127.0.0.2", 0, 0, NULL, 0, NULL, 0, NULL,
	    "line 1: \"goo/gle\": bad provider" },
	{ "google socks5://joe:wrong@127.0.0.1:1080", 0, 0, NULL, 0, NULL, 0,
	    NULL, "\"socks5://joe:***@127.0.0.1:1080\": not one of" },
	{ "google socks5://joe:s3cret@127.0.0.1:1081", 0, 0, NULL, 0, NULL, 0,
	    NULL, "not one of smtp_egress's routes" },
	{ "google bind:127.0.0.2\n\x01\n", 0, 0, NULL, 0, NULL, 0, NULL,
	    "line 2: \"?\": bad provider" },
};

static void
test_parse_table(void **state)
{
	struct egress *e = malloc(sizeof(*e));
	struct egress_pins ps;
	struct buf err;
	const struct egress_pin *last;
	size_t i;

	(void)state;
	buf_init(&err, 4096);
	assert_int_equal(egress_parse(ROUTES, e, &err), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *c = &cases[i];
		int rc;

		buf_reset(&err);
		rc = egress_pins_parse(c->in, strlen(c->in), e, &ps, &err);
		if (rc != (c->ok ? 0 : -1))
			fail_msg("case %zu (%s): rc %d, err \"%s\"", i, c->in,
			    rc, buf_str(&err));
		if (!c->ok) {
			assert_int_equal(ps.n, 0);
			if (strstr(buf_str(&err), c->err) == NULL)
				fail_msg("case %zu: \"%s\" lacks \"%s\"", i,
				    buf_str(&err), c->err);
			assert_null(strstr(buf_str(&err), "s3cret"));
			assert_null(strstr(buf_str(&err), "wrong"));
			continue;
		}
		assert_int_equal(ps.n, c->n);
		if (c->n > 0) {
			last = &ps.v[ps.n - 1];
			assert_string_equal(last->provider, c->provider);
			assert_int_equal(last->routes, c->routes);
			assert_string_equal(last->helo, c->helo);
			assert_int_equal(last->has_mail_from, c->has_mail_from);
			assert_string_equal(last->mail_from, c->mail_from);
			assert_ptr_equal(egress_pins_find(&ps, c->provider),
			    last);
		}
		egress_pins_free(&ps);
	}
	buf_free(&err);
	free(e);
}

static void
test_find(void **state)
{
	struct egress *e = malloc(sizeof(*e));
	struct egress_pins ps;
	struct buf err;
	const char *text = "google bind:127.0.0.2\nexample.net direct\n";

	(void)state;
	buf_init(&err, 4096);
	assert_int_equal(egress_parse(ROUTES, e, &err), 0);
	assert_int_equal(egress_pins_parse(text, strlen(text), e, &ps, &err),
	    0);
	assert_non_null(egress_pins_find(&ps, "GOOGLE"));
	assert_string_equal(egress_pins_find(&ps, "example.net")->provider,
	    "example.net");
	assert_null(egress_pins_find(&ps, "yahoo"));
	assert_null(egress_pins_find(&ps, ""));
	assert_null(egress_pins_find(&ps, NULL));
	assert_null(egress_pins_find(NULL, "google"));
	egress_pins_free(&ps);
	buf_free(&err);
	free(e);
}

/* The file: absent setting, a missing file, a bad line named by the path
 * and line; egress_check at start reads it with smtp_egress. */
static void
test_load_and_check(void **state)
{
	char path[] = "/tmp/test_egress_pins.XXXXXX";
	struct egress *e = malloc(sizeof(*e));
	struct egress_pins ps;
	struct buf err;
	struct conf c;
	FILE *f;
	int fd;

	(void)state;
	buf_init(&err, 4096);
	assert_int_equal(egress_parse(ROUTES, e, &err), 0);
	assert_int_equal(egress_pins_load("", e, &ps, &err), 0);
	assert_int_equal(ps.n, 0);
	assert_int_equal(egress_pins_load(NULL, e, &ps, &err), 0);
	assert_int_equal(egress_pins_load("/nonexistent/pins.txt", e, &ps,
	    &err), -1);
	assert_non_null(strstr(buf_str(&err), "/nonexistent/pins.txt: No such "
	    "file"));
	assert_true((fd = mkstemp(path)) >= 0);
	assert_non_null(f = fdopen(fd, "w"));
	fputs("# pins\nyahoo bind:127.0.0.3 helo=y.example\n", f);
	fclose(f);
	buf_reset(&err);
	assert_int_equal(egress_pins_load(path, e, &ps, &err), 0);
	assert_int_equal(ps.n, 1);
	egress_pins_free(&ps);

	conf_defaults(&c);
	assert_int_equal(conf_set(&c, "smtp_egress", ROUTES, &err), 0);
	assert_int_equal(conf_set(&c, "smtp_provider_routes_file", path, &err),
	    0);
	assert_int_equal(egress_check(&c, &err), 0);
	/* the same file against other routes: a clear error at start */
	assert_int_equal(conf_set(&c, "smtp_egress", "bind:127.0.0.2", &err),
	    0);
	buf_reset(&err);
	assert_int_equal(egress_check(&c, &err), -1);
	assert_non_null(strstr(buf_str(&err), "smtp_provider_routes_file: "));
	assert_non_null(strstr(buf_str(&err), ": line 2: \"bind:127.0.0.3\": "
	    "not one of smtp_egress's routes"));
	conf_free(&c);
	unlink(path);
	buf_free(&err);
	free(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_load_and_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
