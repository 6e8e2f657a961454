/* dns.h: MX and address lookups with ldns for the verification engine:
 * MX hosts in preference order with their A/AAAA addresses, implicit MX
 * (RFC 5321 5.1), null MX (RFC 7505), and the "does the domain exist"
 * verdicts, keeping DNS failures apart from answers. */
#ifndef SVC_DNS_H
#define SVC_DNS_H
#include "util/buf.h"
#include "util/conf.h"
#include "util/ipnet.h"
#include <stddef.h>
#include <stdint.h>

#define DNS_NAME_MAX	253	/* presentation form, no trailing dot */
#define DNS_MAX_MX	20	/* MX hosts kept per domain */
#define DNS_MAX_ADDRS	10	/* addresses kept per host */
#define DNS_ADDR_TEXT	46	/* INET6_ADDRSTRLEN */

enum dns_status {
	DNS_OK,			/* an answer with usable data */
	DNS_NXDOMAIN,		/* the name does not exist */
	DNS_NO_MX,		/* null MX, or no (usable) MX and no address */
	DNS_NO_ADDR,		/* the name exists but has no A or AAAA */
	DNS_INVALID_NAME,	/* the name is not a valid host name */
	DNS_ERROR,		/* SERVFAIL, REFUSED, timeout, bad answer */
	DNS__MAX
};
extern const char *const dns_status_names[DNS__MAX];

struct dns_addr {
	struct ipnet	 ip;	/* family 4 or 6 (IPv4-mapped AAAA is 4) */
	char		 text[DNS_ADDR_TEXT];
};

/* Addresses of one host: A and AAAA, both families kept when the host has
 * both, each family sorted, at most DNS_MAX_ADDRS. */
struct dns_addrs {
	enum dns_status	 status;	/* OK, NXDOMAIN, NO_ADDR, INVALID_NAME, ERROR */
	uint32_t	 ttl;		/* minimum TTL of what was used */
	size_t		 n;
	struct dns_addr	 addr[DNS_MAX_ADDRS];
};

struct dns_mx_host {
	char		 name[DNS_NAME_MAX + 1];	/* lower case, no dot */
	unsigned	 preference;
	struct dns_addrs addrs;
};

/*
 * Result of dns_lookup_mx. Hosts are sorted by preference, then by name
 * (a stable order for equal preferences; the SMTP client may shuffle).
 * ttl is the minimum TTL of every record used (CNAMEs, MX, addresses) or,
 * for NXDOMAIN and NO_MX, the negative TTL from the SOA (capped at 3 h;
 * every TTL at 1 day). It is what a cache of results (MariaDB, not here)
 * should keep them for. DNS_ERROR has ttl 0: never cache it, nor an
 * incomplete result (ttl 0 too): some MX host's addresses could not be
 * looked up (its addrs.status is DNS_ERROR: a failure, or the deadline cut
 * the lookup off), so the hosts are known but not all of their addresses.
 */
struct dns_mx_result {
	enum dns_status	 status;	/* OK, NXDOMAIN, NO_MX, INVALID_NAME, ERROR */
	int		 implicit;	/* no MX: the domain itself, preference 0 */
	int		 null_mx;	/* the domain says it takes no mail */
	int		 incomplete;	/* a host's lookup failed: no caching */
	uint32_t	 ttl;
	size_t		 invalid_hosts;	/* MX targets that are not host names */
	size_t		 dropped_hosts;	/* valid MX beyond DNS_MAX_MX */
	size_t		 nhosts;
	struct dns_mx_host *hosts;
};

/* One resolver per process or thread (it is not shared between threads);
 * the bulk worker keeps one for all its lookups. */
struct dns_resolver;

/* From dns_resolver ("127.0.0.1", "127.0.0.1:5353", "::1", "[::1]:5353")
 * or, when empty, /etc/resolv.conf (its first 4 nameservers, taken in
 * turn); dns_timeout_ms per try, 2 tries per server. NULL on error, with a
 * message in err. */
struct dns_resolver *dns_resolver_new(const struct conf *, struct buf *err);
void	 dns_resolver_free(struct dns_resolver *);
/* Until set again, every lookup of this resolver ends by deadline (a
 * timeutil_mono_ms() time; 0: none, the default): a query waits the
 * smaller of dns_timeout_ms and what is left, none is sent once it has
 * passed, and what was not answered by then is DNS_ERROR. */
void	 dns_resolver_set_deadline(struct dns_resolver *, int64_t deadline);

/* MX lookup for an A-label domain. Always fills *res (free it with
 * dns_mx_result_free, whatever the status) and returns res->status. */
enum dns_status dns_lookup_mx(struct dns_resolver *, const char *domain,
	    struct dns_mx_result *res);
void	 dns_mx_result_free(struct dns_mx_result *);

/* A and AAAA of one host name; fills *out and returns out->status. */
enum dns_status dns_lookup_addrs(struct dns_resolver *, const char *host,
	    struct dns_addrs *out);

/* Whether the domain or www.<domain> has an A or AAAA record (a web
 * presence). DNS_OK with *present set to 0 or 1; DNS_ERROR when it cannot
 * be told; DNS_INVALID_NAME for a bad domain. */
enum dns_status dns_web_presence(struct dns_resolver *, const char *domain,
	    int *present);

/* Helpers, exposed for tests and for other modules. */
/* 1 if s (optionally with one trailing dot) is a host name: LDH labels of
 * 1-63 characters, no hyphen at either end, at most 253 characters, and a
 * last label that is not all digits. */
int	 dns_name_valid(const char *s);
/* Parses a dns_resolver value into an address text and a port (53 when
 * none is given). 0 on success, -1 if malformed. */
int	 dns_server_parse(const char *s, char *addr, size_t addrsz,
	    unsigned *port);
#endif
