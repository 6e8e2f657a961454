/* test_dns.c: tests of src/engine/dns. The offline part checks name and
 * resolver-setting parsing and the timeout and deadline paths against
 * silent and closed loopback ports. The server part runs against a real
 * unbound serving the zones of tests/dns on loopback, at the address in
 * $SVC_TEST_DNS, and against tests/dns/slow_dns.py in front of it at
 * $SVC_TEST_SLOW_DNS (500 ms late for the budget-slowNN.svc.test hosts);
 * without them the program re-runs itself through
 * tests/integration/test_dns.sh, which starts and stops both. */
#include "engine/dns.h"
#include "engine/dns_ptr.h"
#include "util/buf.h"
#include "util/conf.h"
#include "util/timeutil.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "unit_server.h"
#include "unit_skip.h"
#include <ldns/ldns.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *server;	/* $SVC_TEST_DNS */
static const char *slow_server;	/* $SVC_TEST_SLOW_DNS */

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* A resolver for the given dns_resolver value and timeout. */
static struct dns_resolver *
resolver_for(const char *addr, const char *timeout_ms)
{
	struct conf cf;
	struct buf err;
	struct dns_resolver *r;

	buf_init(&err, 1024);
	conf_defaults(&cf);
	assert_int_equal(conf_set(&cf, "dns_resolver", addr, &err), 0);
	assert_int_equal(conf_set(&cf, "dns_timeout_ms", timeout_ms, &err), 0);
	r = dns_resolver_new(&cf, &err);
	if (r == NULL)
		fail_msg("dns_resolver_new(%s): %s", addr, buf_str(&err));
	conf_free(&cf);
	buf_free(&err);
	return r;
}

/* ---- offline ---- */

static void
test_name_valid_accepts_host_names_only(void **state)
{
	static const struct { const char *s; int ok; } t[] = {
		{ "example.com", 1 }, { "EXAMPLE.Com.", 1 }, { "a", 1 },
		{ "123.com", 1 }, { "xn--bcher-kva.example", 1 },
		{ "mx-1.a-b.example", 1 },
		{ "", 0 }, { ".", 0 }, { "a..b", 0 }, { ".a", 0 },
		{ "a.b..", 0 }, { "-a.com", 0 }, { "a-.com", 0 },
		{ "a.-b.com", 0 }, { "a_b.com", 0 }, { "a b.com", 0 },
		{ "1.2.3.4", 0 }, { "host.123", 0 }, { "exa\xc3\xa9.com", 0 },
		{ "a\\.b.com", 0 }, { "a/b.com", 0 },
	};
	char l63[64], l64[65], n253[254], n254[255];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (dns_name_valid(t[i].s) != t[i].ok)
			fail_msg("dns_name_valid(\"%s\") != %d", t[i].s,
			    t[i].ok);
	assert_false(dns_name_valid(NULL));
	memset(l63, 'a', 63);
	l63[63] = '\0';
	memset(l64, 'a', 64);
	l64[64] = '\0';
	assert_true(dns_name_valid(l63));
	assert_false(dns_name_valid(l64));
	/* 253 characters: 4 labels of 62 and one of 1, separated by dots. */
	memset(n253, 'b', 253);
	n253[62] = n253[125] = n253[188] = n253[251] = '.';
	n253[253] = '\0';
	assert_true(dns_name_valid(n253));
	memcpy(n254, n253, 253);
	n254[253] = 'c';
	n254[254] = '\0';
	assert_false(dns_name_valid(n254));
}

static void
test_server_parse_forms_and_default_port(void **state)
{
	static const struct {
		const char *in, *addr;
		unsigned port;
		int rc;
	} t[] = {
		{ "127.0.0.1", "127.0.0.1", 53, 0 },
		{ "127.0.0.1:5353", "127.0.0.1", 5353, 0 },
		{ "::1", "::1", 53, 0 },
		{ "2001:db8::53", "2001:db8::53", 53, 0 },
		{ "[::1]", "::1", 53, 0 },
		{ "[::1]:5353", "::1", 5353, 0 },
		{ "", NULL, 0, -1 }, { "localhost", NULL, 0, -1 },
		{ "127.0.0.1:", NULL, 0, -1 }, { "127.0.0.1:0", NULL, 0, -1 },
		{ "127.0.0.1:65536", NULL, 0, -1 },
		{ "127.0.0.1:53x", NULL, 0, -1 },
		{ "[127.0.0.1]:53", NULL, 0, -1 }, { "[::1", NULL, 0, -1 },
		{ "[::1]x", NULL, 0, -1 }, { "[::1]:", NULL, 0, -1 },
		{ "1.2.3", NULL, 0, -1 }, { "::1:53:", NULL, 0, -1 },
	};
	char addr[64];
	unsigned port;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int rc = dns_server_parse(t[i].in, addr, sizeof(addr), &port);
		if (rc != t[i].rc)
			fail_msg("dns_server_parse(\"%s\") = %d", t[i].in, rc);
		if (rc == 0) {
			assert_string_equal(addr, t[i].addr);
			assert_int_equal(port, t[i].port);
		}
	}
}

static void
test_status_names_complete(void **state)
{
	size_t i, j;

	(void)state;
	for (i = 0; i < DNS__MAX; i++) {
		assert_non_null(dns_status_names[i]);
		for (j = 0; j < i; j++)
			assert_string_not_equal(dns_status_names[i],
			    dns_status_names[j]);
	}
	assert_string_equal(dns_status_names[DNS_NXDOMAIN], "nxdomain");
}

static void
test_reverse_name_of_ipv4_and_ipv6_under_a_zone(void **state)
{
	static const struct {
		const char	*addr, *zone, *want;
	} cases[] = {
		{ "192.0.2.25", NULL, "25.2.0.192.in-addr.arpa" },
		{ "127.0.0.2", "zen.spamhaus.org", "2.0.0.127.zen.spamhaus.org" },
		{ "::ffff:10.1.2.3", NULL, "3.2.1.10.in-addr.arpa" },
		{ "2001:db8::567:89ab", NULL, "b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0."
		    "0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa" },
		{ "2001:db8::1", "bl.example", "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
		    "0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.bl.example" },
	};
	struct ipnet ip;
	char out[DNS_NAME_MAX + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ipnet_parse_addr(cases[i].addr, &ip), 0);
		assert_int_equal(dns_ptr_reverse_name(&ip, cases[i].zone, out,
		    sizeof(out)), 0);
		assert_string_equal(out, cases[i].want);
	}
	/* too small a buffer, a zone that makes no host name */
	assert_int_equal(ipnet_parse_addr("192.0.2.25", &ip), 0);
	assert_int_equal(dns_ptr_reverse_name(&ip, NULL, out, 10), -1);
	assert_int_equal(dns_ptr_reverse_name(&ip, "bad zone", out, sizeof(out)),
	    -1);
	assert_int_equal(ipnet_parse_addr("2001:db8::1", &ip), 0);
	assert_int_equal(dns_ptr_reverse_name(&ip, NULL, out, 64), -1);
}

/* A reply to "PTR 41.0.0.127.in-addr.arpa" with the records given in
 * presentation form, on the wire. */
static size_t
ptr_reply(const char *const *records, size_t n, ldns_pkt_rcode rcode,
    uint8_t **wire)
{
	ldns_pkt *p;
	ldns_rr *rr;
	size_t len = 0, i;

	p = ldns_pkt_query_new(ldns_dname_new_frm_str(
	    "41.0.0.127.in-addr.arpa."), LDNS_RR_TYPE_PTR, LDNS_RR_CLASS_IN,
	    LDNS_RD);
	assert_non_null(p);
	ldns_pkt_set_qr(p, 1);
	ldns_pkt_set_rcode(p, rcode);
	for (i = 0; i < n; i++) {
		assert_int_equal(ldns_rr_new_frm_str(&rr, records[i], 300, NULL,
		    NULL), LDNS_STATUS_OK);
		ldns_pkt_push_rr(p, LDNS_SECTION_ANSWER, rr);
	}
	assert_int_equal(ldns_pkt2wire(wire, p, &len), LDNS_STATUS_OK);
	ldns_pkt_free(p);
	return len;
}

static void
test_ptr_names_read_from_the_answer(void **state)
{
	static const char *const one[] = {
		"41.0.0.127.in-addr.arpa. 60 IN PTR Verifier.Doctor.TEST.",
	};
	/* RFC 2317: a CNAME into the delegated zone, a repeated name, a name
	 * that is no host name, a record of another owner */
	static const char *const classless[] = {
		"41.0.0.127.in-addr.arpa. 60 IN CNAME 41.0-63.0.0.127.in-addr.arpa.",
		"41.0-63.0.0.127.in-addr.arpa. 60 IN PTR a.doctor.test.",
		"41.0-63.0.0.127.in-addr.arpa. 60 IN PTR A.doctor.test.",
		"41.0-63.0.0.127.in-addr.arpa. 60 IN PTR bad\\_name.doctor.test.",
		"42.0.0.127.in-addr.arpa. 60 IN PTR other.doctor.test.",
	};
	static const char *const none[] = {
		"41.0.0.127.in-addr.arpa. 60 IN TXT \"no name\"",
	};
	struct dns_ptrs p;
	uint8_t *w;
	size_t len;

	(void)state;
	len = ptr_reply(one, 1, LDNS_RCODE_NOERROR, &w);
	assert_int_equal(dns_ptr_names_for_test(w, len, &p), DNS_OK);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.name[0], "verifier.doctor.test");
	free(w);
	len = ptr_reply(classless, 5, LDNS_RCODE_NOERROR, &w);
	assert_int_equal(dns_ptr_names_for_test(w, len, &p), DNS_OK);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.name[0], "a.doctor.test");
	assert_int_equal(p.invalid, 1);
	free(w);
	len = ptr_reply(none, 1, LDNS_RCODE_NOERROR, &w);
	assert_int_equal(dns_ptr_names_for_test(w, len, &p), DNS_NO_ADDR);
	assert_int_equal(p.n, 0);
	free(w);
	len = ptr_reply(NULL, 0, LDNS_RCODE_SERVFAIL, &w);
	assert_int_equal(dns_ptr_names_for_test(w, len, &p), DNS_ERROR);
	free(w);
}

static void
test_resolver_new_rejects_bad_setting(void **state)
{
	struct conf cf;
	struct buf err;

	(void)state;
	buf_init(&err, 1024);
	conf_defaults(&cf);
	assert_int_equal(conf_set(&cf, "dns_resolver", "dns.example:53", &err),
	    0);
	assert_null(dns_resolver_new(&cf, &err));
	assert_non_null(strstr(buf_str(&err), "dns_resolver"));
	conf_free(&cf);
	buf_free(&err);
}

static void
test_resolver_new_from_resolv_conf(void **state)
{
	struct conf cf;
	struct buf err;
	struct dns_resolver *r;
	FILE *f = fopen("/etc/resolv.conf", "r");
	char line[256];
	int has_ns = 0;

	(void)state;
	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "nameserver", 10) == 0)
				has_ns = 1;
		fclose(f);
	}
	if (!has_ns)
		UNIT_SKIP("/etc/resolv.conf names no nameserver");
	buf_init(&err, 1024);
	conf_defaults(&cf);
	r = dns_resolver_new(&cf, &err);	/* dns_resolver is empty */
	assert_non_null(r);
	dns_resolver_free(r);
	conf_free(&cf);
	buf_free(&err);
}

static void
test_invalid_domain_is_refused_without_a_query(void **state)
{
	struct dns_resolver *r;
	struct dns_mx_result res;
	struct dns_addrs a;
	unsigned port;
	char addr[32];
	int fd = unit_server_loopback(SOCK_DGRAM, 1, &port), present = 1;
	double t0;

	(void)state;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	r = resolver_for(addr, "300");
	t0 = now_ms();
	assert_int_equal(dns_lookup_mx(r, "bad_domain.example", &res),
	    DNS_INVALID_NAME);
	dns_mx_result_free(&res);
	assert_int_equal(dns_lookup_mx(r, "10.0.0.1", &res), DNS_INVALID_NAME);
	dns_mx_result_free(&res);
	assert_int_equal(dns_lookup_addrs(r, "a..b", &a), DNS_INVALID_NAME);
	assert_int_equal(dns_web_presence(r, "", &present), DNS_INVALID_NAME);
	assert_int_equal(present, 0);
	assert_true(now_ms() - t0 < 100);	/* nothing was sent */
	dns_resolver_free(r);
	close(fd);
}

/* A server that never answers: DNS_ERROR (never a verdict), quickly. */
static void
test_silent_server_is_dns_error_within_timeout(void **state)
{
	struct dns_resolver *r;
	struct dns_mx_result res;
	struct dns_addrs a;
	unsigned port;
	char addr[32];
	int fd = unit_server_loopback(SOCK_DGRAM, 1, &port), present = 1;
	double t0, dt;

	(void)state;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	r = resolver_for(addr, "300");
	t0 = now_ms();
	assert_int_equal(dns_lookup_mx(r, "example.com", &res), DNS_ERROR);
	dt = now_ms() - t0;
	assert_int_equal(res.nhosts, 0);
	assert_int_equal(res.ttl, 0);
	dns_mx_result_free(&res);
	/* Two tries of 300 ms, and no further query once one timed out. */
	assert_true(dt >= 250 && dt < 1500);
	t0 = now_ms();
	assert_int_equal(dns_lookup_addrs(r, "example.com", &a), DNS_ERROR);
	assert_int_equal(a.n, 0);
	assert_int_equal(dns_web_presence(r, "example.com", &present),
	    DNS_ERROR);
	assert_int_equal(present, 0);
	assert_true(now_ms() - t0 < 3000);
	dns_resolver_free(r);
	close(fd);
}

static void
test_closed_port_is_dns_error(void **state)
{
	struct dns_resolver *r;
	struct dns_mx_result res;
	unsigned port;
	char addr[32];
	double t0;

	(void)state;
	unit_server_loopback(SOCK_DGRAM, 0, &port);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	r = resolver_for(addr, "300");
	t0 = now_ms();
	assert_int_equal(dns_lookup_mx(r, "example.com", &res), DNS_ERROR);
	assert_true(now_ms() - t0 < 1500);
	dns_mx_result_free(&res);
	dns_resolver_free(r);
}

/* A resolver on a silent loopback port; *fd is that port's socket. */
static struct dns_resolver *
silent_resolver(const char *timeout_ms, int *fd)
{
	unsigned port;
	char addr[32];

	*fd = unit_server_loopback(SOCK_DGRAM, 1, &port);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	return resolver_for(addr, timeout_ms);
}

/* A deadline shorter than the tries: the lookup ends by it, not after two
 * tries of dns_timeout_ms. */
static void
test_deadline_cuts_a_silent_server_short(void **state)
{
	struct dns_resolver *r;
	struct dns_mx_result res;
	int fd, present = 1;
	double t0, dt;

	(void)state;
	r = silent_resolver("2000", &fd);
	t0 = now_ms();
	dns_resolver_set_deadline(r, timeutil_mono_ms() + 300);
	assert_int_equal(dns_lookup_mx(r, "example.com", &res), DNS_ERROR);
	dt = now_ms() - t0;
	assert_int_equal(res.ttl, 0);
	dns_mx_result_free(&res);
	if (dt < 250 || dt > 800)
		fail_msg("lookup took %.0f ms, the deadline was 300 ms", dt);
	/* Once it has passed, nothing waits. */
	t0 = now_ms();
	assert_int_equal(dns_web_presence(r, "example.com", &present),
	    DNS_ERROR);
	assert_true(now_ms() - t0 < 100);
	dns_resolver_free(r);
	close(fd);
}

/* Whether a datagram waits on the silent server's socket (then drained). */
static int
datagram_waiting(int fd)
{
	char b[512];
	int n = 0;

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		n++;
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	return n > 0;
}

static void
test_no_query_is_sent_after_the_deadline(void **state)
{
	struct dns_resolver *r;
	struct dns_mx_result res;
	struct dns_addrs a;
	int fd;
	double t0;

	(void)state;
	r = silent_resolver("300", &fd);
	dns_resolver_set_deadline(r, timeutil_mono_ms() - 1);
	t0 = now_ms();
	assert_int_equal(dns_lookup_mx(r, "example.com", &res), DNS_ERROR);
	dns_mx_result_free(&res);
	assert_int_equal(dns_lookup_addrs(r, "example.com", &a), DNS_ERROR);
	assert_true(now_ms() - t0 < 100);
	usleep(50 * 1000);
	assert_false(datagram_waiting(fd));
	/* Without a deadline the same lookup does ask. */
	dns_resolver_set_deadline(r, 0);
	assert_int_equal(dns_lookup_mx(r, "example.com", &res), DNS_ERROR);
	dns_mx_result_free(&res);
	assert_true(datagram_waiting(fd));
	dns_resolver_free(r);
	close(fd);
}

/* ---- against the test server ---- */

static int
server_setup(void **state)
{
	*state = resolver_for(server, "2000");
	return 0;
}

static int
server_teardown(void **state)
{
	dns_resolver_free(*state);
	return 0;
}

/* Looks up domain, expecting status and nhosts. */
static void
mx(void **state, const char *domain, enum dns_status want, size_t nhosts,
    struct dns_mx_result *res)
{
	enum dns_status st = dns_lookup_mx(*state, domain, res);

	if (st != want || res->status != want)
		fail_msg("%s: status %s, want %s", domain,
		    dns_status_names[st], dns_status_names[want]);
	if (res->nhosts != nhosts)
		fail_msg("%s: %zu hosts, want %zu", domain, res->nhosts,
		    nhosts);
}

static void
host_is(const struct dns_mx_host *h, const char *name, unsigned pref,
    const char *addrs)
{
	char got[512] = "";
	size_t i, o = 0;

	assert_string_equal(h->name, name);
	assert_int_equal(h->preference, pref);
	for (i = 0; i < h->addrs.n; i++)
		o += (size_t)snprintf(got + o, sizeof(got) - o, "%s%s",
		    i ? " " : "", h->addrs.addr[i].text);
	assert_string_equal(got, addrs);
}

static void
test_mx_sorted_by_preference_with_addresses(void **state)
{
	struct dns_mx_result res;

	mx(state, "prefs.svc.test", DNS_OK, 3, &res);
	assert_false(res.implicit);
	assert_false(res.null_mx);
	assert_int_equal(res.invalid_hosts, 0);
	host_is(&res.hosts[0], "mx-a4.svc.test", 10, "192.0.2.1");
	host_is(&res.hosts[1], "mx-a6.svc.test", 20, "2001:db8::1");
	host_is(&res.hosts[2], "mx-both.svc.test", 30,
	    "192.0.2.2 192.0.2.3 2001:db8::2");
	assert_int_equal(res.hosts[0].addrs.status, DNS_OK);
	assert_int_equal(res.hosts[0].addrs.addr[0].ip.family, 4);
	assert_int_equal(res.hosts[1].addrs.addr[0].ip.family, 6);
	/* The minimum: address records of 60 s under MX records of 300 s. */
	assert_true(res.ttl > 0 && res.ttl <= 60);
	dns_mx_result_free(&res);

	/* Upper case and a trailing dot are the same domain. */
	mx(state, "PREFS.Svc.Test.", DNS_OK, 3, &res);
	assert_string_equal(res.hosts[0].name, "mx-a4.svc.test");
	dns_mx_result_free(&res);
}

static void
test_mx_equal_preferences_in_stable_order(void **state)
{
	struct dns_mx_result res;
	int i;

	/* The server rotates the records; the order must not change. */
	for (i = 0; i < 6; i++) {
		mx(state, "equal.svc.test", DNS_OK, 4, &res);
		host_is(&res.hosts[0], "mx-a6.svc.test", 5, "2001:db8::1");
		host_is(&res.hosts[1], "mx-a4.svc.test", 10, "192.0.2.1");
		host_is(&res.hosts[2], "mx-b.svc.test", 10, "192.0.2.11");
		host_is(&res.hosts[3], "mx-c.svc.test", 10, "192.0.2.12");
		dns_mx_result_free(&res);
	}
}

static void
test_mx_addresses_capped_keeping_both_families(void **state)
{
	struct dns_mx_result res;

	mx(state, "many.svc.test", DNS_OK, 1, &res);
	assert_int_equal(res.hosts[0].addrs.n, DNS_MAX_ADDRS);
	host_is(&res.hosts[0], "mx-many.svc.test", 10,
	    "192.0.2.101 192.0.2.102 192.0.2.103 192.0.2.104 192.0.2.105 "
	    "192.0.2.106 192.0.2.107 2001:db8::101 2001:db8::102 "
	    "2001:db8::103");
	dns_mx_result_free(&res);
}

static void
test_mx_hosts_without_address_are_reported(void **state)
{
	struct dns_mx_result res;

	mx(state, "dangling.svc.test", DNS_OK, 3, &res);
	host_is(&res.hosts[0], "nohost.svc.test", 10, "");
	assert_int_equal(res.hosts[0].addrs.status, DNS_NXDOMAIN);
	host_is(&res.hosts[1], "mx-txt.svc.test", 20, "");
	assert_int_equal(res.hosts[1].addrs.status, DNS_NO_ADDR);
	host_is(&res.hosts[2], "mx-a4.svc.test", 30, "192.0.2.1");
	assert_int_equal(res.hosts[2].addrs.status, DNS_OK);
	dns_mx_result_free(&res);
}

static void
test_implicit_mx_from_address_records(void **state)
{
	struct dns_mx_result res;

	mx(state, "impl4.svc.test", DNS_OK, 1, &res);
	assert_true(res.implicit);
	host_is(&res.hosts[0], "impl4.svc.test", 0, "192.0.2.40");
	assert_true(res.ttl > 0 && res.ttl <= 120);
	dns_mx_result_free(&res);

	mx(state, "impl6.svc.test", DNS_OK, 1, &res);
	assert_true(res.implicit);
	host_is(&res.hosts[0], "impl6.svc.test", 0, "2001:db8::40");
	dns_mx_result_free(&res);

	mx(state, "impl46.svc.test", DNS_OK, 1, &res);
	assert_true(res.implicit);
	host_is(&res.hosts[0], "impl46.svc.test", 0,
	    "192.0.2.41 2001:db8::41");
	dns_mx_result_free(&res);
}

static void
test_null_mx_is_no_mx(void **state)
{
	struct dns_mx_result res;

	/* nullmx.svc.test also has an A record: no implicit MX then. */
	mx(state, "nullmx.svc.test", DNS_NO_MX, 0, &res);
	assert_true(res.null_mx);
	assert_false(res.implicit);
	assert_true(res.ttl > 0);
	dns_mx_result_free(&res);
}

static void
test_no_mx_and_no_address_is_no_mx(void **state)
{
	struct dns_mx_result res;

	mx(state, "txtonly.svc.test", DNS_NO_MX, 0, &res);
	assert_false(res.null_mx);
	assert_false(res.implicit);
	/* Negative TTL: SOA minimum 120. */
	assert_true(res.ttl > 0 && res.ttl <= 120);
	dns_mx_result_free(&res);
}

static void
test_nxdomain_is_invalid_domain(void **state)
{
	struct dns_mx_result res;

	mx(state, "nonexistent.svc.test", DNS_NXDOMAIN, 0, &res);
	assert_true(res.ttl > 0 && res.ttl <= 120);
	dns_mx_result_free(&res);
	mx(state, "deeper.nonexistent.other.test", DNS_NXDOMAIN, 0, &res);
	dns_mx_result_free(&res);
}

static void
test_cname_chain_to_domain_with_mx(void **state)
{
	struct dns_mx_result res;

	mx(state, "alias.svc.test", DNS_OK, 1, &res);
	assert_false(res.implicit);
	host_is(&res.hosts[0], "mx.other.test", 10, "192.0.2.20");
	/* The first CNAME has the smallest TTL (90). */
	assert_true(res.ttl > 0 && res.ttl <= 90);
	dns_mx_result_free(&res);
}

static void
test_servfail_and_refused_are_dns_error(void **state)
{
	struct dns_mx_result res;
	struct dns_addrs a;
	int present = 1;

	mx(state, "loop1.svc.test", DNS_ERROR, 0, &res);	/* SERVFAIL */
	assert_int_equal(res.ttl, 0);
	dns_mx_result_free(&res);
	mx(state, "x.refused.test", DNS_ERROR, 0, &res);	/* REFUSED */
	dns_mx_result_free(&res);
	assert_int_equal(dns_lookup_addrs(*state, "loop1.svc.test", &a),
	    DNS_ERROR);
	assert_int_equal(dns_web_presence(*state, "loop1.svc.test", &present),
	    DNS_ERROR);
	assert_int_equal(present, 0);
}

static void
test_dropped_query_times_out_then_resolver_recovers(void **state)
{
	struct dns_resolver *r = resolver_for(server, "300");
	struct dns_mx_result res;
	double t0 = now_ms(), dt;

	(void)state;
	assert_int_equal(dns_lookup_mx(r, "x.timeout.test", &res), DNS_ERROR);
	dt = now_ms() - t0;
	dns_mx_result_free(&res);
	assert_true(dt >= 250 && dt < 1500);
	/* ldns would mark the server unreachable for good; not here. */
	assert_int_equal(dns_lookup_mx(r, "prefs.svc.test", &res), DNS_OK);
	assert_int_equal(res.nhosts, 3);
	dns_mx_result_free(&res);
	dns_resolver_free(r);
}

static void
test_invalid_mx_host_names_are_skipped(void **state)
{
	struct dns_mx_result res;

	/* bad_host.svc.test has an A record but is not a host name. */
	mx(state, "badmx.svc.test", DNS_OK, 1, &res);
	assert_int_equal(res.invalid_hosts, 1);
	host_is(&res.hosts[0], "mx-a4.svc.test", 20, "192.0.2.1");
	dns_mx_result_free(&res);
	/* "-lead.svc.test" and "127.0.0.1.": nothing usable is left. */
	mx(state, "allbad.svc.test", DNS_NO_MX, 0, &res);
	assert_int_equal(res.invalid_hosts, 2);
	assert_false(res.null_mx);
	dns_mx_result_free(&res);
}

static void
test_large_answer_arrives_over_tcp_and_is_capped(void **state)
{
	struct dns_mx_result res;
	ldns_resolver *lr;
	ldns_rdf *ns, *qn;
	ldns_pkt *p = NULL;
	char addr[64], name[128];
	unsigned port, i;

	/* Over UDP alone the server can only send a truncated answer. */
	assert_int_equal(dns_server_parse(server, addr, sizeof(addr), &port),
	    0);
	lr = ldns_resolver_new();
	ns = ldns_rdf_new_frm_str(LDNS_RDF_TYPE_A, addr);
	assert_int_equal(ldns_resolver_push_nameserver(lr, ns), LDNS_STATUS_OK);
	ldns_rdf_deep_free(ns);
	ldns_resolver_set_port(lr, (uint16_t)port);
	ldns_resolver_set_fallback(lr, false);
	ldns_resolver_set_edns_udp_size(lr, 4096);
	qn = ldns_dname_new_frm_str("big.svc.test.");
	assert_int_equal(ldns_resolver_send(&p, lr, qn, LDNS_RR_TYPE_MX,
	    LDNS_RR_CLASS_IN, LDNS_RD), LDNS_STATUS_OK);
	assert_true(ldns_pkt_tc(p));
	assert_true(ldns_pkt_ancount(p) < 30);
	ldns_pkt_free(p);
	ldns_rdf_deep_free(qn);
	ldns_resolver_deep_free(lr);

	/* All 30 records seen (so TCP was used), the first 20 kept. */
	mx(state, "big.svc.test", DNS_OK, DNS_MAX_MX, &res);
	assert_int_equal(res.dropped_hosts, 10);
	assert_int_equal(res.invalid_hosts, 0);
	for (i = 0; i < DNS_MAX_MX; i++) {
		snprintf(name, sizeof(name), "mx%02u-a-rather-long-label-to-"
		    "make-the-answer-large.big.svc.test", i + 1);
		host_is(&res.hosts[i], name, i + 1, "192.0.2.90");
	}
	dns_mx_result_free(&res);
}

static void
test_lookup_addrs_statuses(void **state)
{
	struct dns_addrs a;

	assert_int_equal(dns_lookup_addrs(*state, "mx-both.svc.test", &a),
	    DNS_OK);
	assert_int_equal(a.n, 3);
	assert_string_equal(a.addr[0].text, "192.0.2.2");
	assert_string_equal(a.addr[2].text, "2001:db8::2");
	assert_true(a.ttl > 0 && a.ttl <= 300);
	assert_int_equal(dns_lookup_addrs(*state, "nohost.svc.test", &a),
	    DNS_NXDOMAIN);
	assert_int_equal(a.n, 0);
	assert_int_equal(dns_lookup_addrs(*state, "mx-txt.svc.test", &a),
	    DNS_NO_ADDR);
	/* A CNAME to a name with MX but no address. */
	assert_int_equal(dns_lookup_addrs(*state, "alias.svc.test", &a),
	    DNS_NO_ADDR);
	/* Resolvable, but not a host name: never asked. */
	assert_int_equal(dns_lookup_addrs(*state, "bad_host.svc.test", &a),
	    DNS_INVALID_NAME);
}

static void
test_web_presence_on_domain_or_www(void **state)
{
	static const struct { const char *d; int present; } t[] = {
		{ "web.svc.test", 1 }, { "wwwonly.svc.test", 1 },
		{ "noweb.svc.test", 0 }, { "nonexistent.svc.test", 0 },
	};
	size_t i;
	int present;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		present = -1;
		assert_int_equal(dns_web_presence(*state, t[i].d, &present),
		    DNS_OK);
		if (present != t[i].present)
			fail_msg("%s: present %d", t[i].d, present);
	}
}

static void
test_ipv6_resolver_address(void **state)
{
	struct dns_resolver *r;
	struct dns_mx_result res;
	char addr[64], v6[80];
	unsigned port;

	(void)state;
	assert_int_equal(dns_server_parse(server, addr, sizeof(addr), &port),
	    0);
	snprintf(v6, sizeof(v6), "[::1]:%u", port);
	r = resolver_for(v6, "1000");
	assert_int_equal(dns_lookup_mx(r, "prefs.svc.test", &res), DNS_OK);
	assert_int_equal(res.nhosts, 3);
	dns_mx_result_free(&res);
	dns_resolver_free(r);
}

/* A resolver on the slow forwarder; skips the test without it. */
static struct dns_resolver *
slow_resolver(void)
{
	if (slow_server == NULL || *slow_server == '\0')
		UNIT_SKIP("no slow DNS forwarder (SVC_TEST_SLOW_DNS: "
		    "tests/integration/test_dns.sh starts one with python3)");
	return resolver_for(slow_server, "2000");
}

/* budget-slowmx: dead (at once) and ten hosts 500 ms late each. */
static void
test_mx_hosts_are_looked_up_at_once(void **state)
{
	struct dns_resolver *r = slow_resolver();
	struct dns_mx_result res;
	double t0 = now_ms(), dt;
	size_t i;

	(void)state;
	assert_int_equal(dns_lookup_mx(r, "budget-slowmx.svc.test", &res),
	    DNS_OK);
	dt = now_ms() - t0;
	assert_int_equal(res.nhosts, 11);
	assert_false(res.incomplete);
	assert_true(res.ttl > 0);
	for (i = 0; i < res.nhosts; i++) {
		assert_int_equal(res.hosts[i].addrs.status, DNS_OK);
		assert_string_equal(res.hosts[i].addrs.addr[0].text,
		    "127.0.0.9");
	}
	dns_mx_result_free(&res);
	/* One at a time: 20 queries of 500 ms. */
	if (dt < 450 || dt > 2000)
		fail_msg("lookup took %.0f ms, want one round of 500 ms", dt);
	dns_resolver_free(r);
}

static void
test_deadline_leaves_late_hosts_as_errors(void **state)
{
	struct dns_resolver *r = slow_resolver();
	struct dns_mx_result res;
	double t0 = now_ms(), dt;
	size_t i;

	(void)state;
	dns_resolver_set_deadline(r, timeutil_mono_ms() + 250);
	assert_int_equal(dns_lookup_mx(r, "budget-slowmx.svc.test", &res),
	    DNS_OK);
	dt = now_ms() - t0;
	if (dt < 200 || dt > 450)
		fail_msg("lookup took %.0f ms, the deadline was 250 ms", dt);
	/* The hosts are known, the late ones' addresses are not: not an
	 * answer to keep. */
	assert_int_equal(res.nhosts, 11);
	assert_true(res.incomplete);
	assert_int_equal(res.ttl, 0);
	host_is(&res.hosts[0], "dead.svc.test", 5, "127.0.0.9");
	assert_int_equal(res.hosts[0].addrs.status, DNS_OK);
	for (i = 1; i < res.nhosts; i++) {
		assert_int_equal(res.hosts[i].addrs.status, DNS_ERROR);
		assert_int_equal(res.hosts[i].addrs.n, 0);
	}
	dns_mx_result_free(&res);
	/* Without the deadline the resolver waits for them again. */
	dns_resolver_set_deadline(r, 0);
	assert_int_equal(dns_lookup_mx(r, "budget-slowmx.svc.test", &res),
	    DNS_OK);
	assert_false(res.incomplete);
	assert_int_equal(res.hosts[10].addrs.status, DNS_OK);
	dns_mx_result_free(&res);
	dns_resolver_free(r);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest offline[] = {
		cmocka_unit_test(test_name_valid_accepts_host_names_only),
		cmocka_unit_test(test_server_parse_forms_and_default_port),
		cmocka_unit_test(test_status_names_complete),
		cmocka_unit_test(test_reverse_name_of_ipv4_and_ipv6_under_a_zone),
		cmocka_unit_test(test_ptr_names_read_from_the_answer),
		cmocka_unit_test(test_resolver_new_rejects_bad_setting),
		cmocka_unit_test(test_resolver_new_from_resolv_conf),
		cmocka_unit_test(test_invalid_domain_is_refused_without_a_query),
		cmocka_unit_test(test_silent_server_is_dns_error_within_timeout),
		cmocka_unit_test(test_closed_port_is_dns_error),
		cmocka_unit_test(test_deadline_cuts_a_silent_server_short),
		cmocka_unit_test(test_no_query_is_sent_after_the_deadline),
	};
	const struct CMUnitTest online[] = {
		cmocka_unit_test(test_mx_sorted_by_preference_with_addresses),
		cmocka_unit_test(test_mx_equal_preferences_in_stable_order),
		cmocka_unit_test(test_mx_addresses_capped_keeping_both_families),
		cmocka_unit_test(test_mx_hosts_without_address_are_reported),
		cmocka_unit_test(test_implicit_mx_from_address_records),
		cmocka_unit_test(test_null_mx_is_no_mx),
		cmocka_unit_test(test_no_mx_and_no_address_is_no_mx),
		cmocka_unit_test(test_nxdomain_is_invalid_domain),
		cmocka_unit_test(test_cname_chain_to_domain_with_mx),
		cmocka_unit_test(test_servfail_and_refused_are_dns_error),
		cmocka_unit_test(test_dropped_query_times_out_then_resolver_recovers),
		cmocka_unit_test(test_invalid_mx_host_names_are_skipped),
		cmocka_unit_test(test_large_answer_arrives_over_tcp_and_is_capped),
		cmocka_unit_test(test_lookup_addrs_statuses),
		cmocka_unit_test(test_web_presence_on_domain_or_www),
		cmocka_unit_test(test_ipv6_resolver_address),
		cmocka_unit_test(test_mx_hosts_are_looked_up_at_once),
		cmocka_unit_test(test_deadline_leaves_late_hosts_as_errors),
	};
	int rc;

	(void)argc;
	server = getenv("SVC_TEST_DNS");
	slow_server = getenv("SVC_TEST_SLOW_DNS");
	if (server == NULL || *server == '\0')
		unit_server_reexec("dns", argv);
	rc = cmocka_run_group_tests_name("dns_offline", offline, NULL, NULL);
	if (server == NULL || *server == '\0')
		return unit_skip_rest(rc, "server tests need SVC_TEST_DNS "
		    "(see tests/integration/test_dns.sh)");
	rc += cmocka_run_group_tests_name("dns_server", online, server_setup,
	    server_teardown);
	return unit_skip_status(rc);
}
