/* test_ipnet.c: IPv4/IPv6 address and CIDR parsing (strict inet_pton,
 * IPv4-mapped IPv6 folded to IPv4, every prefix length, host bits refused),
 * lists separated by commas and white space, matching across families and
 * the private-address test used by the SSRF and MX guards: every range of
 * the special-purpose registries edge to edge, and the IPv6 forms that
 * carry an IPv4 address. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ipnet.h"

struct pcase {
	const char	*in;
	int		 want;		/* 0 parsed, -1 refused */
	int		 family;
	int		 prefix;
	const char	*addr;		/* canonical text of the address */
};

static const struct pcase addr_cases[] = {
	{ "192.0.2.1", 0, 4, 32, "192.0.2.1" },
	{ "0.0.0.0", 0, 4, 32, "0.0.0.0" },
	{ "255.255.255.255", 0, 4, 32, "255.255.255.255" },
	{ "2001:db8::1", 0, 6, 128, "2001:db8::1" },
	{ "2001:DB8:0:0:0:0:0:1", 0, 6, 128, "2001:db8::1" },
	{ "::", 0, 6, 128, "::" },
	{ "::1", 0, 6, 128, "::1" },
	{ "fe80::1", 0, 6, 128, "fe80::1" },
	{ "::ffff:192.0.2.1", 0, 4, 32, "192.0.2.1" },	/* mapped */
	{ "::FFFF:10.0.0.1", 0, 4, 32, "10.0.0.1" },
	{ "::ffff:c000:201", 0, 4, 32, "192.0.2.1" },
	{ "0:0:0:0:0:ffff:7f00:1", 0, 4, 32, "127.0.0.1" },
	{ "::fffe:c000:201", 0, 6, 128, "::fffe:c000:201" },	/* not mapped */
	{ "", -1, 0, 0, NULL },
	{ "1.2.3", -1, 0, 0, NULL },
	{ "1.2.3.4.5", -1, 0, 0, NULL },
	{ "256.1.1.1", -1, 0, 0, NULL },
	{ "01.2.3.4", -1, 0, 0, NULL },
	{ "0x7f.0.0.1", -1, 0, 0, NULL },
	{ "127.1", -1, 0, 0, NULL },
	{ "2130706433", -1, 0, 0, NULL },
	{ " 1.2.3.4", -1, 0, 0, NULL },
	{ "1.2.3.4 ", -1, 0, 0, NULL },
	{ "1.2.3.4\n", -1, 0, 0, NULL },
	{ "1.2.3.4/32", -1, 0, 0, NULL },	/* a host, not a network */
	{ "fe80::1%eth0", -1, 0, 0, NULL },
	{ "[::1]", -1, 0, 0, NULL },
	{ "2001:db8::g", -1, 0, 0, NULL },
	{ "1:2:3:4:5:6:7:8:9", -1, 0, 0, NULL },
	{ "::ffff:1.2.3", -1, 0, 0, NULL },
	{ "localhost", -1, 0, 0, NULL },
};

static const struct pcase net_cases[] = {
	{ "10.0.0.0/8", 0, 4, 8, "10.0.0.0" },
	{ "0.0.0.0/0", 0, 4, 0, "0.0.0.0" },
	{ "192.0.2.1/32", 0, 4, 32, "192.0.2.1" },
	{ "192.0.2.128/25", 0, 4, 25, "192.0.2.128" },
	{ "192.0.2.1", 0, 4, 32, "192.0.2.1" },		/* bare address */
	{ "10.0.0.0/08", 0, 4, 8, "10.0.0.0" },
	{ "2001:db8::/32", 0, 6, 32, "2001:db8::" },
	{ "2001:db8::/33", 0, 6, 33, "2001:db8::" },
	{ "::/0", 0, 6, 0, "::" },
	{ "2001:db8::1/128", 0, 6, 128, "2001:db8::1" },
	{ "fe80::/10", 0, 6, 10, "fe80::" },
	{ "fe80::/9", 0, 6, 9, "fe80::" },
	{ "::ffff:10.0.0.1", 0, 4, 32, "10.0.0.1" },	/* bare mapped */
	{ "10.0.0.1/8", -1, 0, 0, NULL },		/* host bits set */
	{ "10.0.0.0/6", -1, 0, 0, NULL },
	{ "10.0.0.0/7", 0, 4, 7, "10.0.0.0" },
	{ "192.0.2.129/25", -1, 0, 0, NULL },
	{ "192.0.2.1/31", -1, 0, 0, NULL },
	{ "fe80::/8", -1, 0, 0, NULL },
	{ "2001:db8::1/64", -1, 0, 0, NULL },
	{ "2001:db8::/28", -1, 0, 0, NULL },
	{ "2001:db8::/29", 0, 6, 29, "2001:db8::" },
	{ "10.0.0.0/33", -1, 0, 0, NULL },		/* prefix range */
	{ "10.0.0.0/128", -1, 0, 0, NULL },
	{ "10.0.0.0/-1", -1, 0, 0, NULL },
	{ "2001:db8::/129", -1, 0, 0, NULL },
	{ "10.0.0.0/", -1, 0, 0, NULL },		/* shape */
	{ "/8", -1, 0, 0, NULL },
	{ "/", -1, 0, 0, NULL },
	{ "10.0.0.0/8/8", -1, 0, 0, NULL },
	{ "10.0.0.0/ 8", -1, 0, 0, NULL },
	{ "10.0.0.0/8 ", -1, 0, 0, NULL },
	{ "10.0.0.0 /8", -1, 0, 0, NULL },
	{ "10.0.0.0/8x", -1, 0, 0, NULL },
	{ "10.0.0.0/0x8", -1, 0, 0, NULL },
	{ "10.0.0/8", -1, 0, 0, NULL },
	{ "::ffff:10.0.0.0/104", -1, 0, 0, NULL },	/* mapped network */
	{ "::ffff:10.0.0.0/8", -1, 0, 0, NULL },
	{ "0000:0000:0000:0000:0000:0000:0000:0000:0000/0", -1, 0, 0, NULL },
	{ "0000000000000000000000000000000000000000000000000000000000000/0",
	  -1, 0, 0, NULL },				/* too long */
};

static void
check_cases(const struct pcase *cases, size_t n,
    int (*parse)(const char *, struct ipnet *))
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct pcase *c = &cases[i];
		struct ipnet net;
		char text[INET6_ADDRSTRLEN];

		print_message("case %zu: \"%s\"\n", i, c->in);
		assert_int_equal(parse(c->in, &net), c->want);
		if (c->want == -1)
			continue;
		assert_int_equal(net.family, c->family);
		assert_int_equal(net.prefix, c->prefix);
		assert_non_null(inet_ntop(c->family == 4 ? AF_INET : AF_INET6,
		    net.addr, text, sizeof(text)));
		assert_string_equal(text, c->addr);
		if (c->family == 4) {
			static const uint8_t zero[12];
			assert_memory_equal(net.addr + 4, zero, 12);
		}
	}
}

static void
test_ipnet_parse_addr_accepts_v4_v6_and_folds_mapped_to_v4(void **state)
{
	(void)state;
	check_cases(addr_cases, sizeof(addr_cases) / sizeof(addr_cases[0]),
	    ipnet_parse_addr);
}

static void
test_ipnet_parse_accepts_cidrs_and_refuses_host_bits_and_bad_prefixes(
    void **state)
{
	(void)state;
	check_cases(net_cases, sizeof(net_cases) / sizeof(net_cases[0]),
	    ipnet_parse);
}

/* For every prefix p of a family: the all-ones address masked to p bits is
 * accepted with prefix p; with the first host bit set it is refused. */
static void
check_every_prefix(int family)
{
	int bits = family == 4 ? 32 : 128, p, i;
	int af = family == 4 ? AF_INET : AF_INET6;

	for (p = 0; p <= bits; p++) {
		uint8_t a[16];
		char text[INET6_ADDRSTRLEN], cidr[80];
		struct ipnet net;

		memset(a, 0, sizeof(a));
		for (i = 0; i < p; i++)
			a[i / 8] |= (uint8_t)(0x80 >> (i % 8));
		assert_non_null(inet_ntop(af, a, text, sizeof(text)));
		snprintf(cidr, sizeof(cidr), "%s/%d", text, p);
		print_message("%s\n", cidr);
		/* "::ffff:0:0"-shaped results would be mapped: skip those. */
		if (family == 6 && strchr(text, '.') != NULL)
			continue;
		assert_int_equal(ipnet_parse(cidr, &net), 0);
		assert_int_equal(net.family, family);
		assert_int_equal(net.prefix, p);
		assert_memory_equal(net.addr, a, (size_t)bits / 8);
		if (p == bits)
			continue;
		a[p / 8] |= (uint8_t)(0x80 >> (p % 8));
		assert_non_null(inet_ntop(af, a, text, sizeof(text)));
		snprintf(cidr, sizeof(cidr), "%s/%d", text, p);
		if (family == 6 && strchr(text, '.') != NULL)
			continue;
		assert_int_equal(ipnet_parse(cidr, &net), -1);
	}
}

static void
test_ipnet_parse_accepts_every_v4_prefix_0_to_32(void **state)
{
	(void)state;
	check_every_prefix(4);
}

static void
test_ipnet_parse_accepts_every_v6_prefix_0_to_128(void **state)
{
	(void)state;
	check_every_prefix(6);
}

struct ccase {
	const char	*net;
	const char	*addr;
	int		 want;
};

static const struct ccase contains_cases[] = {
	{ "10.0.0.0/8", "10.1.2.3", 1 },
	{ "10.0.0.0/8", "10.255.255.255", 1 },
	{ "10.0.0.0/8", "11.0.0.0", 0 },
	{ "10.0.0.0/8", "9.255.255.255", 0 },
	{ "10.0.0.0/8", "::ffff:10.1.2.3", 1 },		/* mapped is v4 */
	{ "10.0.0.0/8", "::a01:203", 0 },		/* compatible is v6 */
	{ "192.0.2.128/25", "192.0.2.128", 1 },
	{ "192.0.2.128/25", "192.0.2.255", 1 },
	{ "192.0.2.128/25", "192.0.2.127", 0 },
	{ "128.0.0.0/1", "200.0.0.1", 1 },
	{ "128.0.0.0/1", "127.255.255.255", 0 },
	{ "0.0.0.0/0", "1.2.3.4", 1 },
	{ "0.0.0.0/0", "::ffff:1.2.3.4", 1 },
	{ "0.0.0.0/0", "2001:db8::1", 0 },		/* across families */
	{ "::/0", "2001:db8::1", 1 },
	{ "::/0", "1.2.3.4", 0 },
	{ "::/0", "::ffff:1.2.3.4", 0 },
	{ "192.0.2.1", "192.0.2.1", 1 },		/* host entry */
	{ "192.0.2.1", "192.0.2.2", 0 },
	{ "2001:db8::/32", "2001:db8:ffff::1", 1 },
	{ "2001:db8::/32", "2001:db9::1", 0 },
	{ "2001:db8::/33", "2001:db8:7fff::1", 1 },
	{ "2001:db8::/33", "2001:db8:8000::", 0 },
	{ "2001:db8::1", "2001:db8::1", 1 },
	{ "2001:db8::1", "2001:db8::2", 0 },
	{ "::1", "127.0.0.1", 0 },
	{ "127.0.0.1", "::1", 0 },
};

static void
test_ipnet_contains_matches_prefix_bits_within_one_family(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(contains_cases) / sizeof(contains_cases[0]);
	    i++) {
		const struct ccase *c = &contains_cases[i];
		struct ipnet net, a;

		print_message("case %zu: %s in %s\n", i, c->addr, c->net);
		assert_int_equal(ipnet_parse(c->net, &net), 0);
		assert_int_equal(ipnet_parse_addr(c->addr, &a), 0);
		assert_int_equal(ipnet_contains(&net, &a), c->want);
	}
}

static void
test_ipnet_parse_list_splits_on_commas_and_white_space(void **state)
{
	struct ipnet *v;
	size_t n;
	struct ipnet a;

	(void)state;
	assert_int_equal(ipnet_parse_list(" 10.0.0.0/8, 192.168.0.0/16 "
	    "2001:db8::/32,,\t::1\n", &v, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(v[0].family, 4);
	assert_int_equal(v[0].prefix, 8);
	assert_int_equal(v[1].prefix, 16);
	assert_int_equal(v[2].family, 6);
	assert_int_equal(v[2].prefix, 32);
	assert_int_equal(v[3].prefix, 128);
	assert_int_equal(ipnet_parse_addr("192.168.7.7", &a), 0);
	assert_true(ipnet_list_contains(v, n, &a));
	assert_int_equal(ipnet_parse_addr("::1", &a), 0);
	assert_true(ipnet_list_contains(v, n, &a));
	assert_int_equal(ipnet_parse_addr("172.16.0.1", &a), 0);
	assert_false(ipnet_list_contains(v, n, &a));
	free(v);
}

static const struct {
	const char	*in;
	int		 want;
	size_t		 n;
} list_cases[] = {
	{ "", 0, 0 },
	{ "   ", 0, 0 },
	{ ", ,\t\n,", 0, 0 },
	{ "1.2.3.4", 0, 1 },
	{ "1.2.3.4,", 0, 1 },
	{ ",1.2.3.4", 0, 1 },
	{ "1.2.3.4 5.6.7.8", 0, 2 },
	{ "1.2.3.4,,,5.6.7.8", 0, 2 },
	{ "10.0.0.0/8,bogus", -1, 0 },
	{ "bogus", -1, 0 },
	{ "10.0.0.1/8", -1, 0 },		/* host bits, inside a list */
	{ "1.2.3.4;5.6.7.8", -1, 0 },		/* ';' is not a separator */
	{ "1.2.3.4 / 8", -1, 0 },
	{ "10.0.0.0/8 00000000000000000000000000000000000000000000000000000"
	  "00000000000000000", -1, 0 },		/* token too long */
};

static void
test_ipnet_parse_list_is_all_or_nothing(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(list_cases) / sizeof(list_cases[0]); i++) {
		struct ipnet *v = (struct ipnet *)&v;
		size_t n = 99;

		print_message("case %zu: \"%s\"\n", i, list_cases[i].in);
		assert_int_equal(ipnet_parse_list(list_cases[i].in, &v, &n),
		    list_cases[i].want);
		assert_int_equal(n, list_cases[i].n);
		if (list_cases[i].want == -1 || list_cases[i].n == 0)
			assert_null(v);
		free(v);
	}
}

static void
test_ipnet_list_contains_of_empty_list_is_false(void **state)
{
	struct ipnet a;

	(void)state;
	assert_int_equal(ipnet_parse_addr("1.2.3.4", &a), 0);
	assert_false(ipnet_list_contains(NULL, 0, &a));
}

static const struct {
	const char	*addr;
	int		 want;
} private_cases[] = {
	/* IPv6 forms carrying an IPv4 address: the IPv4 address decides */
	{ "64:ff9b::a00:1", 1 },	/* NAT64 of 10.0.0.1 */
	{ "64:ff9b::7f00:1", 1 },	/* NAT64 of 127.0.0.1 */
	{ "64:ff9b::c000:221", 1 },	/* NAT64 of 192.0.2.33, documentation */
	{ "64:ff9b::808:808", 0 },	/* NAT64 of 8.8.8.8 */
	{ "::127.0.0.1", 1 },		/* IPv4-compatible loopback */
	{ "::a9fe:1", 1 },		/* IPv4-compatible 169.254.0.1 */
	{ "2002:c0a8:101::1", 1 },	/* 6to4 of 192.168.1.1 */
	{ "2002:0808:0808::1", 0 },	/* 6to4 of 8.8.8.8 */
	{ "127.0.0.1", 1 },		/* loopback */
	{ "127.255.255.254", 1 },
	{ "::1", 1 },
	{ "::ffff:127.0.0.1", 1 },
	{ "10.0.0.1", 1 },		/* RFC 1918 */
	{ "10.255.255.255", 1 },
	{ "172.16.0.1", 1 },
	{ "172.31.255.255", 1 },
	{ "192.168.0.1", 1 },
	{ "192.168.255.255", 1 },
	{ "::ffff:10.0.0.1", 1 },
	{ "::ffff:192.168.1.1", 1 },
	{ "169.254.0.1", 1 },		/* link-local */
	{ "169.254.169.254", 1 },	/* cloud metadata */
	{ "fe80::1", 1 },
	{ "febf:ffff::1", 1 },
	{ "fc00::1", 1 },		/* unique local */
	{ "fd12:3456:789a::1", 1 },
	{ "100.64.0.1", 1 },		/* CGNAT */
	{ "100.127.255.255", 1 },
	{ "0.0.0.0", 1 },		/* unspecified, "this network" */
	{ "0.1.2.3", 1 },
	{ "::", 1 },
	{ "224.0.0.1", 1 },		/* multicast and reserved */
	{ "239.255.255.255", 1 },
	{ "255.255.255.255", 1 },
	{ "ff02::1", 1 },
	{ "198.18.0.1", 1 },		/* benchmarking */
	{ "198.19.255.255", 1 },
	{ "192.0.0.8", 1 },
	{ "8.8.8.8", 0 },		/* public */
	{ "1.1.1.1", 0 },
	{ "9.255.255.255", 0 },
	{ "11.0.0.0", 0 },
	{ "126.255.255.255", 0 },
	{ "128.0.0.1", 0 },
	{ "172.15.255.255", 0 },
	{ "172.32.0.0", 0 },
	{ "192.167.255.255", 0 },
	{ "192.169.0.0", 0 },
	{ "169.253.255.255", 0 },
	{ "169.255.0.0", 0 },
	{ "100.63.255.255", 0 },
	{ "100.128.0.0", 0 },
	{ "198.17.255.255", 0 },
	{ "198.20.0.0", 0 },
	{ "223.255.255.255", 0 },
	{ "::ffff:8.8.8.8", 0 },
	{ "2001:4860:4860::8888", 0 },
	{ "2606:4700:4700::1111", 0 },
	{ "fbff:ffff::1", 0 },
	{ "fec0::1", 1 },		/* site-local, just past fe80::/10 */
	{ "fe7f::1", 0 },
};

static void
test_ipnet_is_private_for_internal_ranges_and_not_for_public(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(private_cases) / sizeof(private_cases[0]); i++) {
		struct ipnet a;

		print_message("case %zu: %s\n", i, private_cases[i].addr);
		assert_int_equal(ipnet_parse_addr(private_cases[i].addr, &a), 0);
		assert_int_equal(ipnet_is_private(&a), private_cases[i].want);
	}
}

/* Every special-purpose range with its first and last address (private)
 * and the addresses just below and just above it (public), NULL where that
 * neighbour is itself special or does not exist. The test also checks that
 * the four addresses really are the range's edges. */
static const struct {
	const char	*range;
	const char	*below, *first, *last, *above;
} range_cases[] = {
	{ "0.0.0.0/8", NULL, "0.0.0.0", "0.255.255.255", "1.0.0.0" },
	{ "10.0.0.0/8", "9.255.255.255", "10.0.0.0", "10.255.255.255",
	  "11.0.0.0" },
	{ "100.64.0.0/10", "100.63.255.255", "100.64.0.0", "100.127.255.255",
	  "100.128.0.0" },
	{ "127.0.0.0/8", "126.255.255.255", "127.0.0.0", "127.255.255.255",
	  "128.0.0.0" },
	{ "169.254.0.0/16", "169.253.255.255", "169.254.0.0",
	  "169.254.255.255", "169.255.0.0" },
	{ "172.16.0.0/12", "172.15.255.255", "172.16.0.0", "172.31.255.255",
	  "172.32.0.0" },
	{ "192.0.0.0/24", "191.255.255.255", "192.0.0.0", "192.0.0.255",
	  "192.0.1.0" },
	{ "192.0.2.0/24", "192.0.1.255", "192.0.2.0", "192.0.2.255",
	  "192.0.3.0" },
	{ "192.88.99.0/24", "192.88.98.255", "192.88.99.0", "192.88.99.255",
	  "192.88.100.0" },
	{ "192.168.0.0/16", "192.167.255.255", "192.168.0.0",
	  "192.168.255.255", "192.169.0.0" },
	{ "198.18.0.0/15", "198.17.255.255", "198.18.0.0", "198.19.255.255",
	  "198.20.0.0" },
	{ "198.51.100.0/24", "198.51.99.255", "198.51.100.0",
	  "198.51.100.255", "198.51.101.0" },
	{ "203.0.113.0/24", "203.0.112.255", "203.0.113.0", "203.0.113.255",
	  "203.0.114.0" },
	{ "224.0.0.0/4", "223.255.255.255", "224.0.0.0", "239.255.255.255",
	  NULL },
	{ "240.0.0.0/4", NULL, "240.0.0.0", "255.255.255.255", NULL },
	{ "::/128", NULL, "::", "::", NULL },
	{ "::1/128", NULL, "::1", "::1", NULL },
	/* IPv4-compatible: the edges carry 0.0.0.0 and 255.255.255.255 */
	{ "::/96", NULL, "::", "::ffff:ffff", "::1:0:0" },
	{ "64:ff9b::/96", "64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff",
	  "64:ff9b::", "64:ff9b::ffff:ffff", "64:ff9b::1:0:0" },
	{ "64:ff9b:1::/48", "64:ff9b:0:ffff:ffff:ffff:ffff:ffff",
	  "64:ff9b:1::", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "64:ff9b:2::" },
	{ "100::/64", "ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "100::",
	  "100::ffff:ffff:ffff:ffff", NULL },
	{ "100:0:0:1::/64", NULL, "100:0:0:1::",
	  "100:0:0:1:ffff:ffff:ffff:ffff", "100:0:0:2::" },
	{ "2001::/23", "2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001::",
	  "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:200::" },
	{ "2001:db8::/32", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff",
	  "2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
	  "2001:db9::" },
	/* 6to4: the edges carry 0.0.0.0 and 255.255.255.255 */
	{ "2002::/16", "2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2002::",
	  "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2003::" },
	{ "3fff::/20", "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff::",
	  "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff:1000::" },
	{ "5f00::/16", "5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f00::",
	  "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f01::" },
	{ "fc00::/7", "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fc00::",
	  "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fe00::" },
	{ "fe80::/10", "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fe80::",
	  "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", NULL },
	{ "fec0::/10", NULL, "fec0::", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
	  NULL },
	{ "ff00::/8", NULL, "ff00::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
	  NULL },
};

/* The raw bytes of an address's text (no IPv4-mapped folding). */
static int
raw_addr(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, s, out) == 1)
		return 4;
	assert_int_equal(inet_pton(AF_INET6, s, out), 1);
	return 16;
}

/* Adds delta (+1 or -1) to a big-endian number of len bytes. */
static void
raw_step(uint8_t *a, int len, int delta)
{
	int i;

	for (i = len - 1; i >= 0; i--) {
		a[i] = (uint8_t)(a[i] + delta);
		if (a[i] != (delta > 0 ? 0x00 : 0xff))
			break;
	}
}

static void
check_private(const char *addr, int want)
{
	struct ipnet a;

	print_message("  %s: %s\n", addr, want ? "private" : "public");
	assert_int_equal(ipnet_parse_addr(addr, &a), 0);
	assert_int_equal(ipnet_is_private(&a), want);
}

static void
test_ipnet_is_private_covers_each_special_range_edge_to_edge(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(range_cases) / sizeof(range_cases[0]); i++) {
		char text[64];
		const char *slash;
		uint8_t net[16], first[16], last[16], x[16];
		long prefix;
		int len, b;

		print_message("range %s\n", range_cases[i].range);
		slash = strchr(range_cases[i].range, '/');
		assert_non_null(slash);
		snprintf(text, sizeof(text), "%.*s",
		    (int)(slash - range_cases[i].range), range_cases[i].range);
		len = raw_addr(text, net);
		prefix = strtol(slash + 1, NULL, 10);
		/* the table's addresses are the range's edges and neighbours */
		memcpy(first, net, 16);
		memcpy(last, net, 16);
		for (b = (int)prefix; b < len * 8; b++)
			last[b / 8] |= (uint8_t)(0x80 >> (b % 8));
		assert_int_equal(raw_addr(range_cases[i].first, x), len);
		assert_memory_equal(x, first, (size_t)len);
		assert_int_equal(raw_addr(range_cases[i].last, x), len);
		assert_memory_equal(x, last, (size_t)len);
		if (range_cases[i].below) {
			raw_step(first, len, -1);
			assert_int_equal(raw_addr(range_cases[i].below, x), len);
			assert_memory_equal(x, first, (size_t)len);
			check_private(range_cases[i].below, 0);
		}
		if (range_cases[i].above) {
			raw_step(last, len, +1);
			assert_int_equal(raw_addr(range_cases[i].above, x), len);
			assert_memory_equal(x, last, (size_t)len);
			check_private(range_cases[i].above, 0);
		}
		check_private(range_cases[i].first, 1);
		check_private(range_cases[i].last, 1);
	}
}

/* IPv6 forms that carry an IPv4 address are judged by that address; the
 * rest of 2001::/23 (Teredo included) is private whatever it carries. */
static const struct {
	const char	*addr;
	int		 want;
} embedded_cases[] = {
	{ "::ffff:127.0.0.1", 1 },		/* IPv4-mapped */
	{ "::ffff:169.254.169.254", 1 },
	{ "::ffff:203.0.113.9", 1 },
	{ "::ffff:8.8.8.8", 0 },
	{ "::127.0.0.1", 1 },			/* IPv4-compatible */
	{ "::2", 1 },				/* 0.0.0.2 */
	{ "::a9fe:a9fe", 1 },			/* 169.254.169.254 */
	{ "::c633:6401", 1 },			/* 198.51.100.1 */
	{ "::8.8.8.8", 0 },
	{ "64:ff9b::7f00:1", 1 },		/* NAT64 */
	{ "64:ff9b::a9fe:a9fe", 1 },
	{ "64:ff9b::c0a8:1", 1 },		/* 192.168.0.1 */
	{ "64:ff9b::e000:1", 1 },		/* 224.0.0.1 */
	{ "64:ff9b::808:808", 0 },
	{ "2002:7f00:1::", 1 },			/* 6to4 */
	{ "2002:a9fe:a9fe:1234:5678:9abc:def0:1", 1 },
	{ "2002:a00:1::1", 1 },			/* 10.0.0.1 */
	{ "2002:c000:201::1", 1 },		/* 192.0.2.1 */
	{ "2002:6440:1::1", 1 },		/* 100.64.0.1 */
	{ "2002:808:808::1", 0 },
	{ "2002:808:808:ffff:ffff:ffff:ffff:ffff", 0 },
	{ "2001:0:4136:e378:8000:63bf:3fff:fdd2", 1 },	/* Teredo */
	{ "2001:0:808:808::1", 1 },
	{ "2001:2::1", 1 },			/* benchmarking */
	{ "2001:20::1", 1 },			/* ORCHIDv2 */
};

static void
test_ipnet_is_private_judges_embedded_ipv4_by_the_ipv4_address(void **state)
{
	size_t i;
	struct ipnet m;

	(void)state;
	for (i = 0; i < sizeof(embedded_cases) / sizeof(embedded_cases[0]);
	    i++)
		check_private(embedded_cases[i].addr, embedded_cases[i].want);
	/* a mapped address not folded to IPv4 (built from a sockaddr_in6) */
	memset(&m, 0, sizeof(m));
	m.family = 6;
	m.prefix = 128;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:127.0.0.1", m.addr), 1);
	assert_true(ipnet_is_private(&m));
	assert_int_equal(inet_pton(AF_INET6, "::ffff:8.8.4.4", m.addr), 1);
	assert_false(ipnet_is_private(&m));
	/* no family at all is never public */
	memset(&m, 0, sizeof(m));
	assert_true(ipnet_is_private(&m));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipnet_parse_addr_accepts_v4_v6_and_folds_mapped_to_v4),
		cmocka_unit_test(test_ipnet_parse_accepts_cidrs_and_refuses_host_bits_and_bad_prefixes),
		cmocka_unit_test(test_ipnet_parse_accepts_every_v4_prefix_0_to_32),
		cmocka_unit_test(test_ipnet_parse_accepts_every_v6_prefix_0_to_128),
		cmocka_unit_test(test_ipnet_contains_matches_prefix_bits_within_one_family),
		cmocka_unit_test(test_ipnet_parse_list_splits_on_commas_and_white_space),
		cmocka_unit_test(test_ipnet_parse_list_is_all_or_nothing),
		cmocka_unit_test(test_ipnet_list_contains_of_empty_list_is_false),
		cmocka_unit_test(test_ipnet_is_private_for_internal_ranges_and_not_for_public),
		cmocka_unit_test(test_ipnet_is_private_covers_each_special_range_edge_to_edge),
		cmocka_unit_test(test_ipnet_is_private_judges_embedded_ipv4_by_the_ipv4_address),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
