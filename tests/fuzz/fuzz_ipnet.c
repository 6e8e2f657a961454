/* fuzz_ipnet.c: libFuzzer target for address, CIDR and list parsing.
 * Invariants: no crash or leak; a parsed address or network has a family of
 * 4 or 6, a prefix within the family, no host bits, the unused bytes of an
 * IPv4 address zero, contains itself, and prints (inet_ntop) to text that
 * parses back to the same value; IPv4-mapped IPv6 is always folded to
 * IPv4; a refused list returns nothing. The first 16 input bytes are also
 * used as raw IPv4 and IPv6 addresses for the print/parse round trip, and
 * the private test must agree between an IPv4 address and its mapped form. */
#include "util/ipnet.h"
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_ipnet: %s failed " \
	"(line %d)\n", #c, __LINE__); abort(); } } while (0)

static const uint8_t mapped_prefix[12] =
    { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

static void
check_net(const struct ipnet *n)
{
	int bits, i;
	char text[INET6_ADDRSTRLEN], cidr[80];
	struct ipnet back;
	static const uint8_t zero[12];

	CHECK(n->family == 4 || n->family == 6);
	bits = n->family == 4 ? 32 : 128;
	CHECK(n->prefix >= 0 && n->prefix <= bits);
	if (n->family == 4)
		CHECK(memcmp(n->addr + 4, zero, 12) == 0);
	else
		CHECK(memcmp(n->addr, mapped_prefix, 12) != 0);
	for (i = n->prefix; i < bits; i++)
		CHECK((n->addr[i / 8] & (0x80 >> (i % 8))) == 0);
	CHECK(ipnet_contains(n, n));
	CHECK(inet_ntop(n->family == 4 ? AF_INET : AF_INET6, n->addr, text,
	    sizeof(text)) != NULL);
	snprintf(cidr, sizeof(cidr), "%s/%d", text, n->prefix);
	CHECK(ipnet_parse(cidr, &back) == 0);
	CHECK(back.family == n->family && back.prefix == n->prefix);
	CHECK(memcmp(back.addr, n->addr, 16) == 0);
}

static void
check_raw(const uint8_t *raw)
{
	char text[INET6_ADDRSTRLEN];
	struct ipnet a, m;
	uint8_t v6[16];

	/* raw IPv4 */
	CHECK(inet_ntop(AF_INET, raw, text, sizeof(text)) != NULL);
	CHECK(ipnet_parse_addr(text, &a) == 0);
	CHECK(a.family == 4 && a.prefix == 32 && memcmp(a.addr, raw, 4) == 0);
	/* its IPv4-mapped form is the same address */
	memcpy(v6, mapped_prefix, 12);
	memcpy(v6 + 12, raw, 4);
	CHECK(inet_ntop(AF_INET6, v6, text, sizeof(text)) != NULL);
	CHECK(ipnet_parse_addr(text, &m) == 0);
	CHECK(m.family == 4 && memcmp(m.addr, a.addr, 16) == 0);
	CHECK(ipnet_is_private(&a) == ipnet_is_private(&m));
	/* raw IPv6 */
	CHECK(inet_ntop(AF_INET6, raw, text, sizeof(text)) != NULL);
	CHECK(ipnet_parse_addr(text, &a) == 0);
	if (memcmp(raw, mapped_prefix, 12) == 0)
		CHECK(a.family == 4 && memcmp(a.addr, raw + 12, 4) == 0);
	else
		CHECK(a.family == 6 && a.prefix == 128 &&
		    memcmp(a.addr, raw, 16) == 0);
	check_net(&a);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipnet n, *v;
	size_t cnt, i;
	char *s;

	if (size >= 16)
		check_raw(data);
	if (size > 4096 || (s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (ipnet_parse_addr(s, &n) == 0) {
		CHECK(n.prefix == (n.family == 4 ? 32 : 128));
		check_net(&n);
		(void)ipnet_is_private(&n);
	}
	if (ipnet_parse(s, &n) == 0)
		check_net(&n);
	v = (struct ipnet *)&v;
	cnt = 12345;
	if (ipnet_parse_list(s, &v, &cnt) == 0) {
		CHECK(cnt <= size);
		CHECK((cnt == 0) == (v == NULL));
		for (i = 0; i < cnt; i++) {
			check_net(&v[i]);
			CHECK(ipnet_list_contains(v, cnt, &v[i]));
		}
		free(v);
	} else
		CHECK(v == NULL && cnt == 0);
	free(s);
	return 0;
}
