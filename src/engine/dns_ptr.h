/* dns_ptr.h: the reverse side of DNS (dns_ptr.c), for the checks of a
 * verifier host (svcadm doctor): an address's reverse name, under
 * in-addr.arpa or ip6.arpa or a DNS blocklist's zone, and its PTR names. */
#ifndef SVC_DNS_PTR_H
#define SVC_DNS_PTR_H
#include "engine/dns.h"
#include "util/ipnet.h"
#include <stddef.h>
#include <stdint.h>

#define DNS_PTR_MAX	8	/* names kept */

struct dns_ptrs {
	enum dns_status	 status;	/* OK (n > 0, or invalid > 0 alone),
					 * NXDOMAIN, NO_ADDR (the name exists
					 * without PTR), INVALID_NAME, ERROR */
	size_t		 n;
	size_t		 invalid;	/* PTR targets that are not host names */
	char		 name[DNS_PTR_MAX][DNS_NAME_MAX + 1];	/* lower case,
					 * no dot, no repeats */
};

/* The PTR names of an address; fills *out and returns out->status. */
enum dns_status dns_ptr_lookup(struct dns_resolver *, const struct ipnet *,
	    struct dns_ptrs *out);
/* The name of an address's reverse lookup: its octets (IPv4) or nibbles
 * (IPv6) in reverse order, then zone, or in-addr.arpa / ip6.arpa when zone
 * is NULL ("2.0.0.127.zen.spamhaus.org" is how a DNS blocklist is asked).
 * 0, or -1 when it is not a valid host name or does not fit in outsz. */
int	 dns_ptr_reverse_name(const struct ipnet *, const char *zone,
	    char *out, size_t outsz);
/* For tests/fuzz only: the PTR names a reply (wire form) gives for the
 * name of its question. */
enum dns_status dns_ptr_names_for_test(const uint8_t *wire, size_t len,
	    struct dns_ptrs *);
#endif
