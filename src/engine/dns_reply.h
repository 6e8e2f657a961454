/* dns_reply.h: for dns*.c only. One DNS question and its checked reply
 * (dns_reply.c), and the resolver state the lookups of dns.c share. */
#ifndef SVC_ENGINE_DNS_REPLY_H
#define SVC_ENGINE_DNS_REPLY_H
#include "engine/dns.h"
#include "engine/dns_send.h"
#include <ldns/ldns.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_NEG_TTL_MAX	10800	/* cap on negative TTLs (RFC 2308) */

struct dns_resolver {
	struct dns_send_conf send;	/* servers, timeout, deadline */
	int		 unreachable;	/* a query of this lookup timed out */
};

/* One query: the question (wire), then its reply checked against it. */
struct dns_reply {
	char		 name[DNS_NAME_MAX + 1];	/* normalised */
	ldns_rr_type	 type;
	uint16_t	 id;
	uint8_t		*wire;		/* the query; NULL: not asked */
	size_t		 wlen;
	ldns_pkt	*pkt;
	ldns_rdf	*qname;
	enum dns_status	 status;	/* OK, NXDOMAIN or ERROR */
};

/* The question for a normalised name; status DNS_ERROR until answered. */
void	 dns_reply_question(struct dns_reply *, const char *name,
	    ldns_rr_type);
/* Sends the questions at once and checks their replies; a timeout marks
 * the resolver unreachable for the rest of the lookup. */
void	 dns_reply_ask(struct dns_resolver *, struct dns_reply *, size_t n);
/* A question and its answer: the reply's status. */
enum dns_status dns_reply_query(struct dns_resolver *, const char *name,
	    ldns_rr_type, struct dns_reply *);
void	 dns_reply_free(struct dns_reply *);
/* The owner name at the end of the question's CNAME chain (not to be
 * freed); lowers *ttl by the CNAME TTLs. */
const ldns_rdf *dns_reply_chain(const struct dns_reply *, uint32_t *ttl);
/* Whether rr is a record of this type, class IN, owned by owner. */
int	 dns_reply_rr_is(const ldns_rr *, ldns_rr_type, const ldns_rdf *owner);
/* A name from the wire as lower-case text without the trailing dot: 1 for
 * a valid host name, 0 for the root, -1 for anything else. */
int	 dns_reply_wire_name(const ldns_rdf *, char *out, size_t outsz);
/* For tests/fuzz only: the same on the uncompressed wire form of one name
 * (len octets); out holds at least DNS_NAME_MAX + 1. */
int	 dns_reply_wire_name_for_test(const uint8_t *wire, size_t len,
	    char *out, size_t outsz);
/* The negative TTL of a reply (its SOA), capped. */
uint32_t dns_reply_neg_ttl(const ldns_pkt *);
uint32_t dns_reply_ttl_min(uint32_t, uint32_t);

#endif
