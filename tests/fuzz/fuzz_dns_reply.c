/* fuzz_dns_reply.c: libFuzzer target for the DNS reply handling of
 * src/engine/dns*.c that is not ldns's own: the reader of MX host names
 * from the wire (dns_reply_wire_name, through dns_reply_wire_name_for_test),
 * plus the string checks dns_name_valid and dns_server_parse.
 *
 * The input is a DNS message in wire format. When ldns parses it, every
 * domain-name rdata and owner name of every record goes through the reader,
 * which must agree with ldns's presentation form: 0 only for the root, 1
 * exactly when that form is a host name (dns_name_valid), and then the
 * same name in lower case without the dot. The raw input is also read as
 * one name (odd bytes, bad lengths): a 1 is a valid lower-case name of at
 * most DNS_NAME_MAX. The input as a string goes through dns_name_valid and
 * dns_server_parse: a parsed server is an IPv4 or IPv6 address with a port
 * in 1..65535. The message also goes through the PTR reader of
 * src/engine/dns_ptr.c (dns_ptr_names_for_test): every name it keeps is a
 * valid lower-case host name, kept once, DNS_PTR_MAX at most. */
#include "engine/dns.h"
#include "engine/dns_ptr.h"
#include "engine/dns_reply.h"
#include <arpa/inet.h>
#include <ldns/ldns.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_dns_reply: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
check_host(const char *s)
{
	size_t i;

	CHECK(strlen(s) <= DNS_NAME_MAX);
	CHECK(dns_name_valid(s));
	for (i = 0; s[i] != '\0'; i++)
		CHECK((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '-' || s[i] == '.');
	CHECK(i > 0 && s[i - 1] != '.');
}

/* One well-formed name from ldns against the reader. */
static void
check_rdf(const ldns_rdf *rdf)
{
	char out[DNS_NAME_MAX + 1], *text;
	const uint8_t *d = ldns_rdf_data(rdf);
	size_t sz = ldns_rdf_size(rdf), len, i;
	int rc, root;

	rc = dns_reply_wire_name_for_test(d, sz, out, sizeof(out));
	root = sz == 1 && d[0] == 0;
	CHECK(rc == 0 ? root : !root);
	if ((text = ldns_rdf2str(rdf)) == NULL)
		return;
	len = strlen(text);
	if (rc == 1) {
		check_host(out);
		CHECK(len == strlen(out) + 1 && text[len - 1] == '.');
		for (i = 0; i + 1 < len; i++)
			CHECK(out[i] == ((text[i] >= 'A' && text[i] <= 'Z') ?
			    text[i] + 32 : text[i]));
	} else if (rc == -1)
		CHECK(!dns_name_valid(text));
	free(text);
}

static void
check_list(const ldns_rr_list *l)
{
	size_t i, j;

	for (i = 0; i < ldns_rr_list_rr_count(l); i++) {
		const ldns_rr *rr = ldns_rr_list_rr(l, i);
		if (ldns_rr_owner(rr) != NULL)
			check_rdf(ldns_rr_owner(rr));
		for (j = 0; j < ldns_rr_rd_count(rr); j++) {
			const ldns_rdf *f = ldns_rr_rdf(rr, j);
			if (f != NULL &&
			    ldns_rdf_get_type(f) == LDNS_RDF_TYPE_DNAME)
				check_rdf(f);
		}
	}
}

static void
check_strings(const uint8_t *data, size_t size)
{
	char s[300], addr[64], tmp[16];
	unsigned port = 0;
	size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;

	memcpy(s, data, n);
	s[n] = '\0';
	if (dns_name_valid(s))
		CHECK(strlen(s) <= DNS_NAME_MAX + 1);
	if (dns_server_parse(s, addr, sizeof(addr), &port) == 0) {
		CHECK(port >= 1 && port <= 65535);
		CHECK(strlen(addr) < sizeof(addr));
		CHECK(inet_pton(AF_INET, addr, tmp) == 1 ||
		    inet_pton(AF_INET6, addr, tmp) == 1);
	}
}

static void
check_ptr(const uint8_t *data, size_t size)
{
	struct dns_ptrs p;
	size_t i, j;

	if (dns_ptr_names_for_test(data, size, &p) != DNS_OK) {
		CHECK(p.n == 0);
		return;
	}
	CHECK(p.n <= DNS_PTR_MAX);
	CHECK(p.n > 0 || p.invalid > 0);
	for (i = 0; i < p.n; i++) {
		check_host(p.name[i]);
		for (j = 0; j < i; j++)
			CHECK(strcmp(p.name[i], p.name[j]) != 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ldns_pkt *pkt = NULL;
	char out[DNS_NAME_MAX + 1];
	int rc;

	if (ldns_wire2pkt(&pkt, data, size) == LDNS_STATUS_OK &&
	    pkt != NULL) {
		check_list(ldns_pkt_question(pkt));
		check_list(ldns_pkt_answer(pkt));
		check_list(ldns_pkt_authority(pkt));
		check_list(ldns_pkt_additional(pkt));
	}
	if (pkt != NULL)
		ldns_pkt_free(pkt);
	rc = dns_reply_wire_name_for_test(data, size, out, sizeof(out));
	CHECK(rc >= -1 && rc <= 1);
	if (rc == 1)
		check_host(out);
	else if (rc == 0)
		CHECK(size == 1 && data[0] == 0);
	check_strings(data, size);
	check_ptr(data, size);
	return 0;
}
