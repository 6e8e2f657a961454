/* dns_ptr.c: the reverse side of DNS, for the checks of a verifier host
 * (svcadm doctor): an address's name under in-addr.arpa or ip6.arpa, or
 * under a DNS blocklist's zone, and the PTR names of an address. PTR
 * answers are untrusted like every answer: names are read from the wire
 * and kept only when they are host names, the CNAME chain of a classless
 * delegation (RFC 2317) is followed inside the answer, counts are capped. */
#include "engine/dns_ptr.h"
#include "engine/dns_reply.h"
#include "util/log.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DNS_PTR_PARSE	64	/* PTR records looked at in one answer */

int
dns_ptr_reverse_name(const struct ipnet *ip, const char *zone, char *out,
    size_t outsz)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, zl;
	int i, n;

	if (zone == NULL)
		zone = ip->family == 4 ? "in-addr.arpa" : "ip6.arpa";
	zl = strlen(zone);
	if (ip->family == 4) {
		for (i = 3; i >= 0; i--) {
			n = snprintf(out + o, outsz - o, "%u.",
			    (unsigned)ip->addr[i]);
			if (n < 0 || (size_t)n >= outsz - o)
				return -1;
			o += (size_t)n;
		}
	} else if (ip->family == 6) {
		if (outsz < 64 + 1)
			return -1;
		for (i = 15; i >= 0; i--) {
			out[o++] = hex[ip->addr[i] & 0x0f];
			out[o++] = '.';
			out[o++] = hex[ip->addr[i] >> 4];
			out[o++] = '.';
		}
	} else
		return -1;
	if (o + zl + 1 > outsz)
		return -1;
	memcpy(out + o, zone, zl + 1);
	return dns_name_valid(out) ? 0 : -1;
}

/* The PTR names at the end of the question's chain. */
static void
dns_ptr_collect(const struct dns_reply *rp, struct dns_ptrs *out)
{
	ldns_rr_list *ans = ldns_pkt_answer(rp->pkt);
	const ldns_rdf *owner;
	uint32_t ttl = 0;
	size_t i, j, seen = 0;
	char name[DNS_NAME_MAX + 1];

	owner = dns_reply_chain(rp, &ttl);
	for (i = 0; i < ldns_rr_list_rr_count(ans) && seen < DNS_PTR_PARSE &&
	    out->n < DNS_PTR_MAX; i++) {
		ldns_rr *rr = ldns_rr_list_rr(ans, i);
		if (!dns_reply_rr_is(rr, LDNS_RR_TYPE_PTR, owner) ||
		    ldns_rr_rd_count(rr) != 1)
			continue;
		seen++;
		if (dns_reply_wire_name(ldns_rr_rdf(rr, 0), name,
		    sizeof(name)) != 1) {
			out->invalid++;
			continue;
		}
		for (j = 0; j < out->n; j++)
			if (strcmp(out->name[j], name) == 0)
				break;
		if (j == out->n)
			memcpy(out->name[out->n++], name, sizeof(name));
	}
}

/* The status of a PTR question and its answer. */
static enum dns_status
dns_ptr_of(struct dns_reply *rp, struct dns_ptrs *out)
{
	memset(out, 0, sizeof(*out));
	out->status = rp->status;
	if (rp->status != DNS_OK)
		return out->status;
	dns_ptr_collect(rp, out);
	if (out->n == 0 && out->invalid == 0)
		out->status = DNS_NO_ADDR;
	return out->status;
}

enum dns_status
dns_ptr_lookup(struct dns_resolver *r, const struct ipnet *ip,
    struct dns_ptrs *out)
{
	struct dns_reply rp;
	char name[DNS_NAME_MAX + 1];

	memset(out, 0, sizeof(*out));
	if (dns_ptr_reverse_name(ip, NULL, name, sizeof(name)) == -1) {
		out->status = DNS_INVALID_NAME;
		return out->status;
	}
	r->unreachable = 0;
	dns_reply_query(r, name, LDNS_RR_TYPE_PTR, &rp);
	dns_ptr_of(&rp, out);
	dns_reply_free(&rp);
	log_debug("event=dns_ptr status=%s names=%zu invalid=%zu",
	    dns_status_names[out->status], out->n, out->invalid);
	return out->status;
}

enum dns_status
dns_ptr_names_for_test(const uint8_t *wire, size_t len, struct dns_ptrs *out)
{
	struct dns_reply rp;
	ldns_rr_list *q;

	memset(&rp, 0, sizeof(rp));
	memset(out, 0, sizeof(*out));
	out->status = DNS_ERROR;
	if (ldns_wire2pkt(&rp.pkt, wire, len) != LDNS_STATUS_OK ||
	    rp.pkt == NULL)
		goto out;
	q = ldns_pkt_question(rp.pkt);
	if (ldns_rr_list_rr_count(q) != 1 ||
	    ldns_rr_owner(ldns_rr_list_rr(q, 0)) == NULL ||
	    (rp.qname = ldns_rdf_clone(ldns_rr_owner(ldns_rr_list_rr(q, 0))))
	    == NULL)
		goto out;
	rp.status = ldns_pkt_get_rcode(rp.pkt) == LDNS_RCODE_NOERROR ? DNS_OK :
	    DNS_ERROR;
	dns_ptr_of(&rp, out);
out:
	dns_reply_free(&rp);
	return out->status;
}
