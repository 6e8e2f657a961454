/* dns_reply.c: one DNS question and its reply, with ldns: the query on the
 * wire, the reply checked against it (id, question, class) before its rcode
 * is believed, the questions of one step sent at once through dns_send.c,
 * CNAME chains inside an answer, TTLs (negative ones from the SOA, RFC
 * 2308) and names taken from the wire. dns.c builds its lookups on these. */
#include "engine/dns_reply.h"
#include "util/log.h"
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define DNS_EDNS_SIZE	1232	/* EDNS buffer size (DNS flag day 2020) */
#define DNS_CNAME_MAX	8	/* CNAME hops followed inside one answer */
#define DNS_NEG_TTL_DEF	300	/* negative TTL when the reply has no SOA */

/*
 * A domain name from the wire (uncompressed rdf data) as lower-case text
 * without the trailing dot. Returns 1 for a valid host name, 0 for the
 * root ".", -1 for anything else (odd bytes, empty labels, too long).
 */
int
dns_reply_wire_name(const ldns_rdf *rdf, char *out, size_t outsz)
{
	const uint8_t *d;
	size_t sz, pos = 0, o = 0, i;
	uint8_t lab;

	if (rdf == NULL || ldns_rdf_get_type(rdf) != LDNS_RDF_TYPE_DNAME)
		return -1;
	d = ldns_rdf_data(rdf);
	sz = ldns_rdf_size(rdf);
	if (sz == 1 && d[0] == 0) {
		out[0] = '\0';
		return 0;
	}
	while (pos < sz) {
		lab = d[pos++];
		if (lab == 0)
			break;
		if (lab > 63 || pos + lab > sz)
			return -1;
		if (o != 0) {
			if (o + 1 >= outsz)
				return -1;
			out[o++] = '.';
		}
		for (i = 0; i < lab; i++) {
			unsigned char c = d[pos + i];
			/* LDH only: dns_name_valid checks at the end. */
			if (c <= ' ' || c == '.' || c >= 0x7f || o + 1 >= outsz)
				return -1;
			out[o++] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) :
			    (char)c;
		}
		pos += lab;
	}
	if (pos != sz || o == 0)
		return -1;
	out[o] = '\0';
	return dns_name_valid(out) ? 1 : -1;
}

int
dns_reply_wire_name_for_test(const uint8_t *wire, size_t len, char *out,
    size_t outsz)
{
	ldns_rdf *rdf;
	int rc;

	/* The rdf borrows wire; ldns_rdf_free leaves the data alone. */
	if ((rdf = ldns_rdf_new(LDNS_RDF_TYPE_DNAME, len, (void *)wire)) ==
	    NULL)
		return -1;
	rc = dns_reply_wire_name(rdf, out, outsz);
	ldns_rdf_free(rdf);
	return rc;
}

uint32_t
dns_reply_ttl_min(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Negative TTL (RFC 2308): the SOA in the authority section. */
uint32_t
dns_reply_neg_ttl(const ldns_pkt *p)
{
	ldns_rr_list *auth = ldns_pkt_authority(p);
	size_t i;
	uint32_t ttl = DNS_NEG_TTL_DEF;

	for (i = 0; i < ldns_rr_list_rr_count(auth); i++) {
		ldns_rr *rr = ldns_rr_list_rr(auth, i);
		ldns_rdf *min;
		if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_SOA)
			continue;
		ttl = ldns_rr_ttl(rr);
		min = ldns_rr_rdf(rr, 6);
		if (min != NULL && ldns_rdf_size(min) == 4)
			ttl = dns_reply_ttl_min(ttl,
			    ldns_rdf2native_int32(min));
		break;
	}
	return dns_reply_ttl_min(ttl, DNS_NEG_TTL_MAX);
}

static uint16_t
dns_reply_random_id(void)
{
	uint16_t id;

	if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
		id = (uint16_t)random();
	return id;
}

void
dns_reply_free(struct dns_reply *rp)
{
	if (rp->pkt != NULL)
		ldns_pkt_free(rp->pkt);
	if (rp->qname != NULL)
		ldns_rdf_deep_free(rp->qname);
	free(rp->wire);
	memset(rp, 0, sizeof(*rp));
}

/* The question for a normalised name, on the wire. The reply's status is
 * DNS_ERROR until an answer is checked (and stays so if this fails). */
void
dns_reply_question(struct dns_reply *rp, const char *name,
    ldns_rr_type type)
{
	ldns_pkt *q;
	ldns_rdf *qn;
	char fq[DNS_NAME_MAX + 2];
	size_t len = strlen(name);

	memset(rp, 0, sizeof(*rp));
	rp->status = DNS_ERROR;
	rp->type = type;
	if (len + 2 > sizeof(fq))
		return;
	memcpy(rp->name, name, len + 1);
	memcpy(fq, name, len);
	fq[len] = '.';
	fq[len + 1] = '\0';
	if ((rp->qname = ldns_dname_new_frm_str(fq)) == NULL ||
	    (qn = ldns_rdf_clone(rp->qname)) == NULL)
		return;
	if ((q = ldns_pkt_query_new(qn, type, LDNS_RR_CLASS_IN, LDNS_RD)) ==
	    NULL) {
		ldns_rdf_deep_free(qn);
		return;
	}
	rp->id = dns_reply_random_id();
	ldns_pkt_set_id(q, rp->id);
	ldns_pkt_set_edns_udp_size(q, DNS_EDNS_SIZE);
	if (ldns_pkt2wire(&rp->wire, q, &rp->wlen) != LDNS_STATUS_OK) {
		free(rp->wire);
		rp->wire = NULL;
	}
	ldns_pkt_free(q);
}

/* Checks that a reply answers the question and takes its rcode. */
static void
dns_reply_answer(struct dns_reply *rp, const uint8_t *wire, size_t len)
{
	ldns_pkt *a = NULL;
	ldns_rr *qrr;
	const char *n = rp->name;

	if (ldns_wire2pkt(&a, wire, len) != LDNS_STATUS_OK || a == NULL) {
		log_debug("event=dns_query name=%s result=malformed_reply", n);
		if (a != NULL)
			ldns_pkt_free(a);
		return;
	}
	rp->pkt = a;
	/* The reply must be the answer to this question. */
	if (!ldns_pkt_qr(a) || ldns_pkt_id(a) != rp->id ||
	    ldns_pkt_get_opcode(a) != LDNS_PACKET_QUERY ||
	    ldns_rr_list_rr_count(ldns_pkt_question(a)) != 1 ||
	    ldns_pkt_tc(a)) {
		log_debug("event=dns_query name=%s result=mismatched_reply", n);
		return;
	}
	qrr = ldns_rr_list_rr(ldns_pkt_question(a), 0);
	if (ldns_rr_get_type(qrr) != rp->type ||
	    ldns_rr_get_class(qrr) != LDNS_RR_CLASS_IN ||
	    ldns_dname_compare(ldns_rr_owner(qrr), rp->qname) != 0) {
		log_debug("event=dns_query name=%s result=wrong_question", n);
		return;
	}
	switch (ldns_pkt_get_rcode(a)) {
	case LDNS_RCODE_NOERROR:
		rp->status = DNS_OK;
		break;
	case LDNS_RCODE_NXDOMAIN:
		rp->status = DNS_NXDOMAIN;
		break;
	default:
		log_debug("event=dns_query name=%s type=%d rcode=%d", n,
		    (int)rp->type, (int)ldns_pkt_get_rcode(a));
		break;
	}
}

/*
 * Sends the questions of rp at once and checks their replies. A question
 * that times out (or is cut off by the deadline) stays DNS_ERROR and marks
 * the server unreachable for the rest of the lookup: the same server is
 * not waited for once per record.
 */
void
dns_reply_ask(struct dns_resolver *r, struct dns_reply *rp, size_t n)
{
	struct dns_send_query *q;
	size_t *idx, i, m = 0;

	if (r->unreachable)
		return;
	q = calloc(n, sizeof(*q));
	idx = calloc(n, sizeof(*idx));
	if (q == NULL || idx == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if (rp[i].wire == NULL)
			continue;
		q[m].msg = rp[i].wire;
		q[m].len = rp[i].wlen;
		idx[m++] = i;
	}
	dns_send(&r->send, q, m);
	for (i = 0; i < m; i++) {
		struct dns_reply *p = &rp[idx[i]];
		if (q[i].status == DNS_SEND_OK) {
			dns_reply_answer(p, q[i].reply, q[i].rlen);
		} else {
			r->unreachable = 1;
			log_debug("event=dns_query name=%s type=%d result=%s",
			    p->name, (int)p->type,
			    dns_send_status_names[q[i].status]);
		}
		free(q[i].reply);
	}
out:
	free(q);
	free(idx);
}

/* One query for a normalised name. */
enum dns_status
dns_reply_query(struct dns_resolver *r, const char *name,
    ldns_rr_type type, struct dns_reply *rp)
{
	dns_reply_question(rp, name, type);
	dns_reply_ask(r, rp, 1);
	return rp->status;
}

/*
 * Follows the CNAME chain of the question name inside the answer section.
 * Returns the final owner name (owned by the reply's qname or a CNAME rdf,
 * not to be freed) and lowers *ttl by the CNAME TTLs.
 */
const ldns_rdf *
dns_reply_chain(const struct dns_reply *rp, uint32_t *ttl)
{
	ldns_rr_list *ans = ldns_pkt_answer(rp->pkt);
	const ldns_rdf *cur = rp->qname;
	size_t i, hop;
	int moved;

	for (hop = 0; hop < DNS_CNAME_MAX; hop++) {
		moved = 0;
		for (i = 0; i < ldns_rr_list_rr_count(ans); i++) {
			ldns_rr *rr = ldns_rr_list_rr(ans, i);
			if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_CNAME ||
			    ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN ||
			    ldns_rr_rd_count(rr) != 1 ||
			    ldns_dname_compare(ldns_rr_owner(rr), cur) != 0)
				continue;
			*ttl = dns_reply_ttl_min(*ttl, ldns_rr_ttl(rr));
			cur = ldns_rr_rdf(rr, 0);
			moved = 1;
			break;
		}
		if (!moved)
			break;
	}
	return cur;
}

/* Whether rr is a record of this type, class IN, owned by owner. */
int
dns_reply_rr_is(const ldns_rr *rr, ldns_rr_type type,
    const ldns_rdf *owner)
{
	return ldns_rr_get_type(rr) == type &&
	    ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN &&
	    ldns_dname_compare(ldns_rr_owner(rr), owner) == 0;
}
