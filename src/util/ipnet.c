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

/* IPv6 forms that carry an IPv4 address: NAT64 (64:ff9b::/96), the
 * deprecated IPv4-compatible ::/96, and 6to4 (2002::/16, bits 16-47). The
 * embedded address decides, so "::127.0.0.1" is as private as 127.0.0.1. */
static int
ipnet_embedded_v4(const struct ipnet *a, struct ipnet *v4)
{
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
	static const uint8_t compat[12] = { 0 };

	if (a->family != 6)
		return 0;
	memset(v4, 0, sizeof(*v4));
	v4->family = 4;
	v4->prefix = 32;
	if (memcmp(a->addr, nat64, 12) == 0 || (memcmp(a->addr, compat, 12) ==
	    0 && (a->addr[12] | a->addr[13] | a->addr[14] | a->addr[15]))) {
		memcpy(v4->addr, a->addr + 12, 4);
		return 1;
	}
	if (a->addr[0] == 0x20 && a->addr[1] == 0x02) {
		memcpy(v4->addr, a->addr + 2, 4);
		return 1;
	}
	return 0;
}

int
ipnet_is_private(const struct ipnet *a)
{
	struct ipnet v4;
	static const char *const nets[] = {
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8",
		"169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
		"192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4",
		"240.0.0.0/4", "::/128", "::1/128", "fc00::/7", "fe80::/10",
		"ff00::/8", "64:ff9b:1::/48", "100::/64",
	};
	struct ipnet n;
	size_t i;

	for (i = 0; i < sizeof(nets) / sizeof(nets[0]); i++)
		if (ipnet_parse(nets[i], &n) == 0 && ipnet_contains(&n, a))
			return 1;
	return ipnet_embedded_v4(a, &v4) && ipnet_is_private(&v4);
}
