/* ipnet.c: parsing and matching of IPv4/IPv6 addresses and CIDR networks.
 * Parsing is by inet_pton only, so anything odd ("01.2.3.4", scope ids,
 * trailing junk) is refused rather than guessed at. */
#include "util/ipnet.h"
#include "util/strparse.h"
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

int
ipnet_parse_addr(const char *s, struct ipnet *out)
{
	static const uint8_t mapped[12] = { 0,0,0,0,0,0,0,0,0,0,0xff,0xff };
	uint8_t a6[16];

	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, out->addr) == 1) {
		out->family = 4;
		out->prefix = 32;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a6) == 1) {
		if (memcmp(a6, mapped, sizeof(mapped)) == 0) {
			out->family = 4;
			memcpy(out->addr, a6 + 12, 4);
			out->prefix = 32;
		} else {
			out->family = 6;
			memcpy(out->addr, a6, 16);
			out->prefix = 128;
		}
		return 0;
	}
	return -1;
}

static int
ipnet_bits_match(const uint8_t *a, const uint8_t *b, int prefix)
{
	int full = prefix / 8, rest = prefix % 8;
	uint8_t mask;

	if (memcmp(a, b, (size_t)full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	mask = (uint8_t)(0xff << (8 - rest));
	return (a[full] & mask) == (b[full] & mask);
}

int
ipnet_parse(const char *s, struct ipnet *out)
{
	char tmp[64];
	const char *slash = strchr(s, '/');
	size_t len;
	long prefix;
	int maxp;
	struct ipnet zero;

	if (slash == NULL)
		return ipnet_parse_addr(s, out);
	len = (size_t)(slash - s);
	if (len == 0 || len >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (ipnet_parse_addr(tmp, out) == -1)
		return -1;
	/* A mapped address with a /128-style prefix is not worth supporting. */
	maxp = strchr(tmp, ':') ? 128 : 32;
	if ((out->family == 4) != (maxp == 32))
		return -1;
	if (strparse_long(slash + 1, 0, maxp, &prefix) == -1)
		return -1;
	out->prefix = (int)prefix;
	/* Host bits must be clear: "10.0.0.1/8" is a typo more often than not. */
	memset(&zero, 0, sizeof(zero));
	memcpy(zero.addr, out->addr, 16);
	{
		int i;
		for (i = out->prefix; i < maxp; i++)
			if (zero.addr[i / 8] & (0x80 >> (i % 8)))
				return -1;
	}
	return 0;
}

int
ipnet_contains(const struct ipnet *net, const struct ipnet *addr)
{
	if (net->family != addr->family)
		return 0;
	return ipnet_bits_match(net->addr, addr->addr, net->prefix);
}

int
ipnet_parse_list(const char *s, struct ipnet **out, size_t *n)
{
	struct ipnet *v = NULL, *nv;
	size_t cnt = 0;
	char tok[64];
	size_t tl;

	*out = NULL;
	*n = 0;
	while (*s) {
		while (*s == ',' || *s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (*s == '\0')
			break;
		tl = strcspn(s, ", \t\n");
		if (tl >= sizeof(tok))
			goto fail;
		memcpy(tok, s, tl);
		tok[tl] = '\0';
		s += tl;
		if ((nv = realloc(v, (cnt + 1) * sizeof(*v))) == NULL)
			goto fail;
		v = nv;
		if (ipnet_parse(tok, &v[cnt]) == -1)
			goto fail;
		cnt++;
	}
	*out = v;
	*n = cnt;
	return 0;
fail:
	free(v);
	return -1;
}

int
ipnet_list_contains(const struct ipnet *v, size_t n, const struct ipnet *a)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ipnet_contains(&v[i], a))
			return 1;
	return 0;
}

/* The special-purpose tables: each row is a network (text and prefix
 * length) and where an IPv4 address sits inside it, for the IPv6 forms
 * that carry one: then that IPv4 address decides, so "::ffff:127.0.0.1",
 * "64:ff9b::7f00:1" and "2002:7f00:1::" are as private as 127.0.0.1. The
 * first row that contains the address wins. The ranges are those of the
 * IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890, RFC
 * 8190 and the RFCs that added rows since), plus multicast and the
 * deprecated site-local and IPv4-compatible IPv6 forms. */
struct ipnet_special {
	const char	*net;
	int		 prefix;
	int		 v4_at;	/* byte offset of the IPv4 address; -1: none */
};

static const struct ipnet_special ipnet_special4[] = {
	{ "0.0.0.0", 8, -1 },		/* RFC 791: "this network" */
	{ "10.0.0.0", 8, -1 },		/* RFC 1918: private use */
	{ "100.64.0.0", 10, -1 },	/* RFC 6598: shared (CGNAT) */
	{ "127.0.0.0", 8, -1 },		/* RFC 1122: loopback */
	{ "169.254.0.0", 16, -1 },	/* RFC 3927: link-local (metadata) */
	{ "172.16.0.0", 12, -1 },	/* RFC 1918: private use */
	{ "192.0.0.0", 24, -1 },	/* RFC 6890: IETF protocol use */
	{ "192.0.2.0", 24, -1 },	/* RFC 5737: TEST-NET-1 */
	{ "192.88.99.0", 24, -1 },	/* RFC 7526: 6to4 relay anycast */
	{ "192.168.0.0", 16, -1 },	/* RFC 1918: private use */
	{ "198.18.0.0", 15, -1 },	/* RFC 2544: benchmarking */
	{ "198.51.100.0", 24, -1 },	/* RFC 5737: TEST-NET-2 */
	{ "203.0.113.0", 24, -1 },	/* RFC 5737: TEST-NET-3 */
	{ "224.0.0.0", 4, -1 },		/* RFC 5771: multicast */
	{ "240.0.0.0", 4, -1 },		/* RFC 1112: reserved, with RFC 919's
					 * broadcast 255.255.255.255 */
};

static const struct ipnet_special ipnet_special6[] = {
	{ "::", 128, -1 },		/* RFC 4291: unspecified */
	{ "::1", 128, -1 },		/* RFC 4291: loopback */
	{ "::ffff:0:0", 96, 12 },	/* RFC 4291: IPv4-mapped */
	{ "::", 96, 12 },		/* RFC 4291: IPv4-compatible, old */
	{ "64:ff9b::", 96, 12 },	/* RFC 6052: NAT64 well-known */
	{ "64:ff9b:1::", 48, -1 },	/* RFC 8215: local-use NAT64 */
	{ "100::", 64, -1 },		/* RFC 6666: discard-only */
	{ "100:0:0:1::", 64, -1 },	/* RFC 9780: dummy prefix */
	{ "2001::", 23, -1 },		/* RFC 2928: IETF protocol assignments:
					 * Teredo (RFC 4380), benchmarking
					 * (RFC 5180), ORCHIDv2 (RFC 7343)... */
	{ "2001:db8::", 32, -1 },	/* RFC 3849: documentation */
	{ "2002::", 16, 2 },		/* RFC 3056: 6to4 */
	{ "3fff::", 20, -1 },		/* RFC 9637: documentation */
	{ "5f00::", 16, -1 },		/* RFC 9602: SRv6 SIDs */
	{ "fc00::", 7, -1 },		/* RFC 4193: unique local */
	{ "fe80::", 10, -1 },		/* RFC 4291: link-local */
	{ "fec0::", 10, -1 },		/* RFC 3879: site-local, deprecated */
	{ "ff00::", 8, -1 },		/* RFC 4291: multicast */
};

int
ipnet_is_private(const struct ipnet *a)
{
	const struct ipnet_special *t;
	size_t i, n;
	uint8_t net[16];
	struct ipnet v4;
	int af;

	if (a->family == 4) {
		t = ipnet_special4;
		n = sizeof(ipnet_special4) / sizeof(ipnet_special4[0]);
		af = AF_INET;
	} else if (a->family == 6) {
		t = ipnet_special6;
		n = sizeof(ipnet_special6) / sizeof(ipnet_special6[0]);
		af = AF_INET6;
	} else
		return 1;	/* not an address: never let it through */
	for (i = 0; i < n; i++) {
		if (inet_pton(af, t[i].net, net) != 1 ||
		    !ipnet_bits_match(net, a->addr, t[i].prefix))
			continue;
		if (t[i].v4_at < 0)
			return 1;
		memset(&v4, 0, sizeof(v4));
		v4.family = 4;
		v4.prefix = 32;
		memcpy(v4.addr, a->addr + t[i].v4_at, 4);
		return ipnet_is_private(&v4);
	}
	return 0;
}
