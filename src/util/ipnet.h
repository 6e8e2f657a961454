/* ipnet.h: IPv4/IPv6 addresses and CIDR networks, for allowlists,
 * trusted proxies and the private-address guards. */
#ifndef SVC_IPNET_H
#define SVC_IPNET_H
#include <stddef.h>
#include <stdint.h>

struct ipnet {
	int	 family;	/* 4 or 6; IPv4-mapped IPv6 is stored as 4 */
	uint8_t	 addr[16];
	int	 prefix;
};

/* "192.0.2.1", "2001:db8::1": a host (prefix 32 or 128). */
int	 ipnet_parse_addr(const char *, struct ipnet *);
/* "192.0.2.0/24", "2001:db8::/32" or a bare address. Host bits must be 0. */
int	 ipnet_parse(const char *, struct ipnet *);
int	 ipnet_contains(const struct ipnet *net, const struct ipnet *addr);
/* A list separated by commas and/or white space; *out is malloc'd. */
int	 ipnet_parse_list(const char *, struct ipnet **out, size_t *n);
int	 ipnet_list_contains(const struct ipnet *, size_t, const struct ipnet *);
/* In a special-purpose range of the IANA registries (RFC 6890 and later:
 * loopback, private use, link-local, documentation, benchmarking, ...),
 * multicast or reserved. An IPv6 form that carries an IPv4 address
 * (mapped, compatible, NAT64, 6to4) is judged by that address. */
int	 ipnet_is_private(const struct ipnet *);
#endif
