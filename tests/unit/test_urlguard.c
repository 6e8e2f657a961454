/* test_urlguard.c: the SSRF guard for customers' outbound URLs: accepted
 * and refused URLs with the reason (scheme, length, characters, host
 * syntax, localhost, private IP literals in every form a resolver takes,
 * IPv6 literals with embedded IPv4), what allow_private_urls lifts and what
 * it keeps, the messages, and the connect-time address check. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "util/urlguard.h"

struct ucase {
	const char		*url;
	enum urlguard_reason	 want;		/* allow_private_urls = no */
	enum urlguard_reason	 want_allow;	/* allow_private_urls = yes */
};

#define OK	URLGUARD_OK
#define PRIV	URLGUARD_PRIVATE_ADDRESS

static const struct ucase url_cases[] = {
	/* accepted */
	{ "https://hooks.example.com/svc", OK, OK },
	{ "https://example.com", OK, OK },
	{ "HTTPS://Example.COM/path?q=1&r=%20#frag", OK, OK },
	{ "https://example.com:8443/x", OK, OK },
	{ "https://user:pass@example.com/", OK, OK },
	{ "https://example.com./x", OK, OK },		/* absolute name */
	{ "https://_hooks.example-1.com/", OK, OK },
	{ "https://xn--bcher-kva.example/", OK, OK },
	{ "https://localhost.example.com/", OK, OK },	/* only a label */
	{ "https://notlocalhost/", OK, OK },
	{ "https://8.8.8.8/", OK, OK },
	{ "https://0x08080808/", OK, OK },		/* 8.8.8.8 */
	{ "https://1.1.1.1:/", OK, OK },
	{ "https://[2606:4700:4700::1111]/", OK, OK },
	{ "https://[::ffff:8.8.8.8]/", OK, OK },
	{ "https://[64:ff9b::808:808]/", OK, OK },	/* NAT64 of 8.8.8.8 */
	{ "https://1.2.3.4.5/", OK, OK },		/* a name, not an address */
	{ "https://4294967296/", OK, OK },		/* likewise (2^32) */
	/* the scheme: https, and http only with allow_private_urls */
	{ "http://example.com/", URLGUARD_BAD_SCHEME, OK },
	{ "HTTP://example.com/", URLGUARD_BAD_SCHEME, OK },
	{ "ftp://example.com/", URLGUARD_BAD_SCHEME, URLGUARD_BAD_SCHEME },
	{ "file:///etc/passwd", URLGUARD_BAD_SCHEME, URLGUARD_BAD_SCHEME },
	{ "gopher://127.0.0.1:25/", URLGUARD_BAD_SCHEME, URLGUARD_BAD_SCHEME },
	{ "dict://127.0.0.1:11211/", URLGUARD_BAD_SCHEME, URLGUARD_BAD_SCHEME },
	{ "javascript:alert(1)", URLGUARD_BAD_SCHEME, URLGUARD_BAD_SCHEME },
	{ "//example.com/", URLGUARD_BAD_SCHEME, URLGUARD_BAD_SCHEME },
	{ "example.com/x", URLGUARD_BAD_SCHEME, URLGUARD_BAD_SCHEME },
	{ "", URLGUARD_BAD_SCHEME, URLGUARD_BAD_SCHEME },
	/* syntax */
	{ "https:example.com", URLGUARD_MALFORMED, URLGUARD_MALFORMED },
	{ "https://example.com:99999/", URLGUARD_MALFORMED,
	  URLGUARD_MALFORMED },
	{ "https://", URLGUARD_NO_HOST, URLGUARD_NO_HOST },
	{ "https:///", URLGUARD_NO_HOST, URLGUARD_NO_HOST },
	{ "https://exa mple.com/", URLGUARD_BAD_CHAR, URLGUARD_BAD_CHAR },
	{ "https://example.com/a b", URLGUARD_BAD_CHAR, URLGUARD_BAD_CHAR },
	{ "https://example.com/\tb", URLGUARD_BAD_CHAR, URLGUARD_BAD_CHAR },
	{ "https://example.com/\r\nHost: x", URLGUARD_BAD_CHAR,
	  URLGUARD_BAD_CHAR },
	{ "https://example.com/\x7f", URLGUARD_BAD_CHAR, URLGUARD_BAD_CHAR },
	{ "https://example.com/\x01", URLGUARD_BAD_CHAR, URLGUARD_BAD_CHAR },
	{ "https://example.com\\@127.0.0.1/", URLGUARD_BAD_CHAR,
	  URLGUARD_BAD_CHAR },
	{ "https://example..com/", URLGUARD_BAD_HOST, URLGUARD_BAD_HOST },
	{ "https://.example.com/", URLGUARD_BAD_HOST, URLGUARD_BAD_HOST },
	{ "https://*.example.com/", URLGUARD_BAD_HOST, URLGUARD_BAD_HOST },
	{ "https://[::1/", URLGUARD_BAD_HOST, URLGUARD_BAD_HOST },
	{ "https://[1.2.3.4]/", URLGUARD_BAD_HOST, URLGUARD_BAD_HOST },
	{ "https://evil.com%00.127.0.0.1/", URLGUARD_BAD_HOST,
	  URLGUARD_BAD_HOST },
	{ "https://127.0.0.1%2fx.example.com/", URLGUARD_BAD_HOST,
	  URLGUARD_BAD_HOST },
	/* names IDNA would map to ASCII ("localhost", "127.0.0.1"): refused
	 * as not ASCII rather than judged after a mapping curl may do */
	{ "https://\xef\xbd\x8c\xef\xbd\x8f\xef\xbd\x83\xef\xbd\x81\xef\xbd\x8c"
	  "\xef\xbd\x88\xef\xbd\x8f\xef\xbd\x93\xef\xbd\x94/",
	  URLGUARD_BAD_HOST, URLGUARD_BAD_HOST },	/* fullwidth localhost */
	{ "https://127\xe3\x80\x82" "0\xe3\x80\x82" "0\xe3\x80\x82" "1/",
	  URLGUARD_BAD_HOST, URLGUARD_BAD_HOST },	/* ideographic dots */
	{ "https://b\xc3\xbc" "cher.example/", URLGUARD_BAD_HOST,
	  URLGUARD_BAD_HOST },
	{ "https://b%C3%BCcher.example/", URLGUARD_BAD_HOST,
	  URLGUARD_BAD_HOST },
	/* localhost, case-insensitive, trailing dot ignored */
	{ "https://localhost/x", URLGUARD_LOCALHOST, OK },
	{ "https://LOCALHOST./x", URLGUARD_LOCALHOST, OK },
	{ "https://LocalHost:8443/", URLGUARD_LOCALHOST, OK },
	{ "https://api.localhost/", URLGUARD_LOCALHOST, OK },
	{ "https://a.b.LOCALHOST./", URLGUARD_LOCALHOST, OK },
	{ "https://%6c%6f%63%61%6c%68%6f%73%74/", URLGUARD_LOCALHOST, OK },
	{ "http://localhost/", URLGUARD_BAD_SCHEME, OK },
	/* IPv4 literals in every form the resolver takes */
	{ "https://127.0.0.1/", PRIV, OK },
	{ "https://169.254.169.254/latest", PRIV, OK },
	{ "https://10.0.0.1:8080/", PRIV, OK },
	{ "https://192.0.2.1/", PRIV, OK },
	{ "https://0.0.0.0/", PRIV, OK },
	{ "https://0/", PRIV, OK },
	{ "https://127.1/", PRIV, OK },
	{ "https://10.1/", PRIV, OK },
	{ "https://127.1./", PRIV, OK },		/* curl leaves this one */
	{ "https://127.0.0.1./", PRIV, OK },
	{ "https://0x7f.0.0.1/", PRIV, OK },
	{ "https://0X7F.1/", PRIV, OK },
	{ "https://0177.0.0.1/", PRIV, OK },
	{ "https://0177.1./", PRIV, OK },
	{ "https://2130706433/", PRIV, OK },
	{ "https://2130706433./", PRIV, OK },
	{ "https://0x7f000001/", PRIV, OK },
	{ "https://017700000001/", PRIV, OK },
	{ "https://0xa9.0xfe.0xa9.0xfe/", PRIV, OK },	/* 169.254.169.254 */
	{ "https://%31%32%37.0.0.1/", PRIV, OK },	/* percent-encoded */
	{ "https://user@10.0.0.1/", PRIV, OK },
	{ "https://example.com@127.0.0.1/", PRIV, OK },
	{ "https://example.com%2f@127.0.0.1/", PRIV, OK },
	/* IPv6 literals, and IPv6 forms carrying IPv4 */
	{ "https://[::1]/", PRIV, OK },
	{ "https://[0:0:0:0:0:0:0:1]:8443/", PRIV, OK },
	{ "https://[::]/", PRIV, OK },
	{ "https://[::ffff:127.0.0.1]/", PRIV, OK },
	{ "https://[::ffff:7f00:1]/", PRIV, OK },
	{ "https://[::ffff:169.254.169.254]/", PRIV, OK },
	{ "https://[::127.0.0.1]/", PRIV, OK },
	{ "https://[64:ff9b::a9fe:a9fe]/", PRIV, OK },
	{ "https://[2002:7f00:1::1]/", PRIV, OK },
	{ "https://[fd00::1]:8443/", PRIV, OK },
	{ "https://[fe80::1]/", PRIV, OK },
	{ "https://[fe80::1%25eth0]/", PRIV, OK },
	{ "https://[2606:4700::1%25eth0]/", PRIV, OK },	/* a zone id */
	{ "https://[2001:db8::1]/", PRIV, OK },
	{ "https://[ff02::1]/", PRIV, OK },
	{ "http://[::1]:8080/hook", URLGUARD_BAD_SCHEME, OK },
	{ "http://127.0.0.1:8080/hook", URLGUARD_BAD_SCHEME, OK },
};

static void
test_urlguard_check_accepts_public_https_and_refuses_the_rest(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(url_cases) / sizeof(url_cases[0]); i++) {
		const struct ucase *c = &url_cases[i];

		print_message("case %zu: %s: %s / %s\n", i, c->url,
		    urlguard_reason_names[c->want],
		    urlguard_reason_names[c->want_allow]);
		assert_string_equal(urlguard_reason_names[urlguard_check(c->url,
		    0)], urlguard_reason_names[c->want]);
		assert_string_equal(urlguard_reason_names[urlguard_check(c->url,
		    1)], urlguard_reason_names[c->want_allow]);
	}
}

/* At most 2048 characters, with allow_private_urls or without. */
static void
test_urlguard_check_refuses_urls_over_2048_characters(void **state)
{
	char url[URLGUARD_MAX_LEN + 2];
	size_t head = strlen("https://example.com/");

	(void)state;
	memcpy(url, "https://example.com/", head);
	memset(url + head, 'a', URLGUARD_MAX_LEN - head);
	url[URLGUARD_MAX_LEN] = '\0';
	assert_int_equal(urlguard_check(url, 0), URLGUARD_OK);
	url[URLGUARD_MAX_LEN] = 'a';
	url[URLGUARD_MAX_LEN + 1] = '\0';
	assert_int_equal(urlguard_check(url, 0), URLGUARD_TOO_LONG);
	assert_int_equal(urlguard_check(url, 1), URLGUARD_TOO_LONG);
}

static void
test_urlguard_names_and_messages_cover_every_reason(void **state)
{
	int i, j;

	(void)state;
	for (i = 0; i < URLGUARD__MAX; i++) {
		assert_non_null(urlguard_reason_names[i]);
		for (j = 0; j < i; j++)
			assert_string_not_equal(urlguard_reason_names[i],
			    urlguard_reason_names[j]);
		if (i == URLGUARD_OK) {
			assert_string_equal(urlguard_message(i, 0), "");
			continue;
		}
		assert_true(strlen(urlguard_message(i, 0)) > 0);
		assert_true(strlen(urlguard_message(i, 1)) > 0);
	}
	/* the scheme message says what is allowed */
	assert_non_null(strstr(urlguard_message(URLGUARD_BAD_SCHEME, 0),
	    "https://"));
	assert_null(strstr(urlguard_message(URLGUARD_BAD_SCHEME, 0),
	    "http://"));
	assert_non_null(strstr(urlguard_message(URLGUARD_BAD_SCHEME, 1),
	    "http://"));
	assert_non_null(strstr(urlguard_message(URLGUARD_LOCALHOST, 0),
	    "localhost"));
	assert_non_null(strstr(urlguard_message(URLGUARD_PRIVATE_ADDRESS, 0),
	    "private"));
	assert_non_null(strstr(urlguard_message(URLGUARD_TOO_LONG, 0),
	    "2048"));
}

static const struct {
	const char	*addr;
	int		 want;		/* allowed without allow_private_urls */
} addr_cases[] = {
	{ "8.8.8.8", 1 },
	{ "2606:4700:4700::1111", 1 },
	{ "::ffff:8.8.8.8", 1 },
	{ "127.0.0.1", 0 },
	{ "169.254.169.254", 0 },
	{ "10.1.2.3", 0 },
	{ "100.64.0.1", 0 },
	{ "198.51.100.7", 0 },
	{ "::1", 0 },
	{ "::ffff:127.0.0.1", 0 },
	{ "64:ff9b::a9fe:a9fe", 0 },
	{ "2002:a9fe:a9fe::1", 0 },
	{ "fd00::1", 0 },
	{ "fe80::1", 0 },
};

static const struct {
	const char		*url, *ports;
	enum urlguard_reason	 want;
} port_cases[] = {
	{ "https://h.example/x", "", URLGUARD_OK },
	{ "https://h.example:443/x", "", URLGUARD_OK },
	{ "http://h.example/x", "", URLGUARD_OK },
	{ "https://h.example:80/x", "", URLGUARD_BAD_PORT },
	{ "https://h.example:8443/x", "", URLGUARD_BAD_PORT },
	{ "https://h.example:22/x", "8443", URLGUARD_BAD_PORT },
	{ "https://h.example:8443/x", "8443", URLGUARD_OK },
	{ "https://h.example:8443/x", "80, 8443", URLGUARD_OK },
	{ "https://h.example:9000/x", "8443 9000", URLGUARD_OK },
	{ "https://h.example:844/x", "8443", URLGUARD_BAD_PORT },
	{ "https://h.example:8443/x", "nonsense", URLGUARD_BAD_PORT },
	{ "https://h.example:8443/x", NULL, URLGUARD_BAD_PORT },
	{ "http://127.0.0.1:25/x", "", URLGUARD_BAD_PORT },
	{ "https://h.example:0/x", "", URLGUARD_BAD_PORT },
	{ "https://[::0]:0/", "0,443", URLGUARD_BAD_PORT },
};

static void
test_urlguard_check_port_allows_443_80_for_http_and_listed(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(port_cases) / sizeof(port_cases[0]); i++) {
		print_message("%s [%s]\n", port_cases[i].url,
		    port_cases[i].ports ? port_cases[i].ports : "(null)");
		assert_string_equal(urlguard_reason_names[urlguard_check_port(
		    port_cases[i].url, port_cases[i].ports)],
		    urlguard_reason_names[port_cases[i].want]);
	}
	assert_true(urlguard_ports_valid(""));
	assert_true(urlguard_ports_valid("8443"));
	assert_true(urlguard_ports_valid(" 80, 8443 ,9000 "));
	assert_false(urlguard_ports_valid("0"));
	assert_false(urlguard_ports_valid("65536"));
	assert_false(urlguard_ports_valid("84x3"));
	assert_false(urlguard_ports_valid("8443;9000"));
}

static void
test_urlguard_addr_allowed_refuses_private_unless_allowed(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(addr_cases) / sizeof(addr_cases[0]); i++) {
		struct ipnet a;

		print_message("case %zu: %s\n", i, addr_cases[i].addr);
		assert_int_equal(ipnet_parse_addr(addr_cases[i].addr, &a), 0);
		assert_int_equal(urlguard_addr_allowed(&a, 0),
		    addr_cases[i].want);
		assert_true(urlguard_addr_allowed(&a, 1));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urlguard_check_accepts_public_https_and_refuses_the_rest),
		cmocka_unit_test(test_urlguard_check_refuses_urls_over_2048_characters),
		cmocka_unit_test(test_urlguard_names_and_messages_cover_every_reason),
		cmocka_unit_test(test_urlguard_addr_allowed_refuses_private_unless_allowed),
		cmocka_unit_test(test_urlguard_check_port_allows_443_80_for_http_and_listed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
