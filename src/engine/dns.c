/* dns.c: host names, the resolver's servers, and the lookups (MX hosts
 * with their addresses, addresses, web presence) built on dns_reply.c (one
 * question and its checked reply) and dns_send.c (the network: queries of
 * one step asked at once, within the resolver's deadline). Answers are
 * untrusted: names are taken from the wire and checked as host names,
 * counts are capped. SERVFAIL, REFUSED, timeouts and malformed replies are
 * DNS_ERROR, never a verdict about the domain. */
#include "engine/dns.h"
#include "engine/dns_reply.h"
#include "engine/dns_send.h"
#include "util/log.h"
#include "util/strparse.h"
#include <ldns/ldns.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

const char *const dns_status_names[DNS__MAX] = {
	[DNS_OK] = "ok",
	[DNS_NXDOMAIN] = "nxdomain",
	[DNS_NO_MX] = "no_mx",
	[DNS_NO_ADDR] = "no_addr",
	[DNS_INVALID_NAME] = "invalid_name",
	[DNS_ERROR] = "error",
};

#define DNS_RETRIES	2	/* tries per server and query */
#define DNS_MX_PARSE	256	/* MX records looked at in one answer */
#define DNS_ADDR_PARSE	64	/* A or AAAA records looked at per family */
#define DNS_TTL_MAX	86400	/* cap on any TTL handed to a cache */

struct dns_mx_cand {
	unsigned	 pref;
	uint32_t	 ttl;
	char		 name[DNS_NAME_MAX + 1];
};

static int
dns_ldh(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-';
}

int
dns_name_valid(const char *s)
{
	size_t len, i, lab = 0;
	int alldigit = 1;

	if (s == NULL)
		return 0;
	len = strlen(s);
	if (len > 0 && s[len - 1] == '.')
		len--;
	if (len == 0 || len > DNS_NAME_MAX)
		return 0;
	for (i = 0; i <= len; i++) {
		if (i == len || s[i] == '.') {
			if (lab == 0 || lab > 63 || s[i - 1] == '-')
				return 0;
			if (i == len)
				break;
			lab = 0;
			alldigit = 1;
			continue;
		}
		if (!dns_ldh((unsigned char)s[i]))
			return 0;
		if (lab == 0 && s[i] == '-')
			return 0;
		if (s[i] < '0' || s[i] > '9')
			alldigit = 0;
		lab++;
	}
	/* "10.0.0.1" as a name: a numeric top label is never a host name. */
	return !alldigit;
}

int
dns_server_parse(const char *s, char *addr, size_t addrsz, unsigned *port)
{
	const char *host, *end, *colon, *p;
	size_t hlen;
	long n;
	unsigned char tmp[16];
	char hbuf[64];

	*port = 53;
	if (s == NULL || *s == '\0')
		return -1;
	if (*s == '[') {
		host = s + 1;
		if ((end = strchr(host, ']')) == NULL)
			return -1;
		p = end + 1;
		if (*p == ':') {
			if (strparse_long(p + 1, 1, 65535, &n) != 0)
				return -1;
			*port = (unsigned)n;
		} else if (*p != '\0')
			return -1;
	} else {
		host = s;
		colon = strchr(s, ':');
		if (colon != NULL && strchr(colon + 1, ':') == NULL) {
			/* Exactly one colon: IPv4 address and port. */
			end = colon;
			if (strparse_long(colon + 1, 1, 65535, &n) != 0)
				return -1;
			*port = (unsigned)n;
		} else
			end = s + strlen(s);	/* bare address */
	}
	hlen = (size_t)(end - host);
	if (hlen == 0 || hlen >= sizeof(hbuf) || hlen >= addrsz)
		return -1;
	memcpy(hbuf, host, hlen);
	hbuf[hlen] = '\0';
	if (inet_pton(AF_INET, hbuf, tmp) != 1 &&
	    inet_pton(AF_INET6, hbuf, tmp) != 1)
		return -1;
	/* A bracketed address must be IPv6. */
	if (*s == '[' && inet_pton(AF_INET6, hbuf, tmp) != 1)
		return -1;
	memcpy(addr, hbuf, hlen + 1);
	return 0;
}

/* Adds a server given as an address text and a port. */
static int
dns_server_add(struct dns_send_conf *sc, const char *addr, unsigned port)
{
	struct dns_send_server *s = &sc->srv[sc->nsrv];
	struct sockaddr_in *in4 = (struct sockaddr_in *)&s->addr;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&s->addr;

	if (sc->nsrv >= DNS_SEND_SERVERS_MAX)
		return -1;
	memset(s, 0, sizeof(*s));
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		s->len = sizeof(*in4);
	} else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		s->len = sizeof(*in6);
	} else
		return -1;
	sc->nsrv++;
	return 0;
}

/* The nameservers of /etc/resolv.conf (ldns reads it). */
static int
dns_servers_from_resolv_conf(struct dns_send_conf *sc, struct buf *err)
{
	ldns_resolver *res = NULL;
	ldns_rdf **ns;
	ldns_status st;
	size_t i, len;

	st = ldns_resolver_new_frm_file(&res, NULL);
	if (st != LDNS_STATUS_OK) {
		buf_printf(err, "dns: /etc/resolv.conf: %s",
		    ldns_get_errorstr_by_id(st));
		return -1;
	}
	ns = ldns_resolver_nameservers(res);
	for (i = 0; i < ldns_resolver_nameserver_count(res) &&
	    sc->nsrv < DNS_SEND_SERVERS_MAX; i++) {
		struct sockaddr_storage *ss = ldns_rdf2native_sockaddr_storage(
		    ns[i], ldns_resolver_port(res), &len);
		if (ss == NULL)
			continue;
		if (len <= sizeof(sc->srv[0].addr)) {
			memset(&sc->srv[sc->nsrv], 0, sizeof(sc->srv[0]));
			memcpy(&sc->srv[sc->nsrv].addr, ss, len);
			sc->srv[sc->nsrv++].len = (socklen_t)len;
		}
		free(ss);
	}
	ldns_resolver_deep_free(res);
	if (sc->nsrv == 0) {
		buf_printf(err, "dns: /etc/resolv.conf has no nameserver");
		return -1;
	}
	return 0;
}

struct dns_resolver *
dns_resolver_new(const struct conf *cf, struct buf *err)
{
	struct dns_resolver *r;
	const char *setting = conf_str(cf, CONF_DNS_RESOLVER);
	char addr[64];
	unsigned port;
	long ms = conf_int(cf, CONF_DNS_TIMEOUT_MS);

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		buf_printf(err, "dns: out of memory");
		return NULL;
	}
	if (setting != NULL && *setting != '\0') {
		if (dns_server_parse(setting, addr, sizeof(addr), &port) != 0 ||
		    dns_server_add(&r->send, addr, port) != 0) {
			buf_printf(err, "dns_resolver: not an address[:port]: ");
			log_quote(err, setting, 64);
			goto fail;
		}
	} else if (dns_servers_from_resolv_conf(&r->send, err) != 0)
		goto fail;
	r->send.timeout_ms = ms > 0 ? (int)ms : 3000;
	r->send.tries = DNS_RETRIES;
	r->send.deadline = 0;
	return r;
fail:
	free(r);
	return NULL;
}

void
dns_resolver_free(struct dns_resolver *r)
{
	free(r);
}

void
dns_resolver_set_deadline(struct dns_resolver *r, int64_t deadline)
{
	r->send.deadline = deadline;
}

/* Lower-case copy of a valid name without its trailing dot; -1 if bad. */
static int
dns_norm(const char *in, char *out, size_t outsz)
{
	size_t len, i;

	if (!dns_name_valid(in))
		return -1;
	len = strlen(in);
	if (in[len - 1] == '.')
		len--;
	if (len >= outsz)
		return -1;
	for (i = 0; i < len; i++)
		out[i] = (in[i] >= 'A' && in[i] <= 'Z') ? (char)(in[i] + 32) :
		    in[i];
	out[len] = '\0';
	return 0;
}


static int
dns_addr_cmp(const void *a, const void *b)
{
	const struct dns_addr *x = a, *y = b;

	if (x->ip.family != y->ip.family)
		return x->ip.family - y->ip.family;
	return memcmp(x->ip.addr, y->ip.addr, 16);
}

/* Collects the A or AAAA records at the end of the chain. Returns the
 * number added to cand (at most room). */
static size_t
dns_collect_addrs(const struct dns_reply *rp, ldns_rr_type type,
    struct dns_addr *cand, size_t room, uint32_t *ttl)
{
	ldns_rr_list *ans = ldns_pkt_answer(rp->pkt);
	const ldns_rdf *owner;
	size_t i, n = 0;
	uint32_t t = DNS_TTL_MAX;
	char text[DNS_ADDR_TEXT];
	int af = type == LDNS_RR_TYPE_A ? AF_INET : AF_INET6;
	size_t alen = type == LDNS_RR_TYPE_A ? 4 : 16;

	owner = dns_reply_chain(rp, &t);
	for (i = 0; i < ldns_rr_list_rr_count(ans) && n < room; i++) {
		ldns_rr *rr = ldns_rr_list_rr(ans, i);
		ldns_rdf *d;
		struct dns_addr *a = &cand[n];
		if (!dns_reply_rr_is(rr, type, owner) ||
		    ldns_rr_rd_count(rr) != 1)
			continue;
		d = ldns_rr_rdf(rr, 0);
		if (ldns_rdf_size(d) != alen ||
		    inet_ntop(af, ldns_rdf_data(d), text, sizeof(text)) == NULL)
			continue;
		memset(a, 0, sizeof(*a));
		if (ipnet_parse_addr(text, &a->ip) != 0)
			continue;
		/* An IPv4-mapped AAAA is stored and shown as IPv4. */
		if (inet_ntop(a->ip.family == 4 ? AF_INET : AF_INET6,
		    a->ip.addr, a->text, sizeof(a->text)) == NULL)
			continue;
		t = dns_reply_ttl_min(t, ldns_rr_ttl(rr));
		n++;
	}
	if (n > 0)
		*ttl = dns_reply_ttl_min(*ttl, t);
	return n;
}

/* Sorted, without duplicates, at most DNS_MAX_ADDRS, both families kept. */
static void
dns_pick_addrs(struct dns_addr *cand, size_t n, struct dns_addrs *out)
{
	size_t i, u = 0, n4 = 0, n6, k4, k6, half = DNS_MAX_ADDRS / 2;

	qsort(cand, n, sizeof(*cand), dns_addr_cmp);
	for (i = 0; i < n; i++)
		if (u == 0 || dns_addr_cmp(&cand[u - 1], &cand[i]) != 0)
			cand[u++] = cand[i];
	for (i = 0; i < u; i++)
		if (cand[i].ip.family == 4)
			n4++;
	n6 = u - n4;
	k4 = n4;
	k6 = n6;
	if (k4 + k6 > DNS_MAX_ADDRS) {
		if (k4 > half && k6 > half)
			k4 = k6 = half;
		else if (k4 > half)
			k4 = DNS_MAX_ADDRS - k6;
		else
			k6 = DNS_MAX_ADDRS - k4;
	}
	out->n = 0;
	for (i = 0; i < k4; i++)
		out->addr[out->n++] = cand[i];
	for (i = 0; i < k6; i++)
		out->addr[out->n++] = cand[n4 + i];
}

/* A host's status from its A and AAAA replies (rp[0], rp[1]); cand has
 * room for 2 * DNS_ADDR_PARSE addresses. */
static void
dns_addrs_of(struct dns_reply *rp, struct dns_addr *cand,
    struct dns_addrs *out)
{
	static const ldns_rr_type types[2] = { LDNS_RR_TYPE_A,
	    LDNS_RR_TYPE_AAAA };
	size_t n = 0, t;
	uint32_t ttl = DNS_TTL_MAX, neg = DNS_NEG_TTL_MAX;
	int errors = 0;

	for (t = 0; t < 2; t++) {
		if (rp[t].status == DNS_OK) {
			n += dns_collect_addrs(&rp[t], types[t], cand + n,
			    DNS_ADDR_PARSE, &ttl);
			neg = dns_reply_ttl_min(neg,
			    dns_reply_neg_ttl(rp[t].pkt));
		} else if (rp[t].status == DNS_NXDOMAIN && n == 0 &&
		    errors == 0) {
			/* The name does not exist: the other answer is moot. */
			out->status = DNS_NXDOMAIN;
			out->ttl = dns_reply_neg_ttl(rp[t].pkt);
			dns_reply_chain(&rp[t], &out->ttl);
			return;
		} else
			errors++;
	}
	if (n > 0) {
		dns_pick_addrs(cand, n, out);
		out->status = DNS_OK;
		out->ttl = ttl;
	} else if (errors > 0) {
		out->status = DNS_ERROR;
		out->ttl = 0;
	} else {
		out->status = DNS_NO_ADDR;
		out->ttl = neg;
	}
}

/* A and AAAA of n hosts, all asked at once, within the current lookup
 * (r->unreachable kept). */
static void
dns_addrs_many(struct dns_resolver *r, const char *const *hosts,
    struct dns_addrs *const *outs, size_t n)
{
	struct dns_reply *rp = calloc(2 * n, sizeof(*rp));
	struct dns_addr *cand = calloc(2 * DNS_ADDR_PARSE, sizeof(*cand));
	char name[DNS_NAME_MAX + 1];
	size_t i;

	for (i = 0; i < n; i++) {
		memset(outs[i], 0, sizeof(*outs[i]));
		outs[i]->status = DNS_ERROR;
		if (dns_norm(hosts[i], name, sizeof(name)) != 0)
			outs[i]->status = DNS_INVALID_NAME;
		else if (rp != NULL) {
			dns_reply_question(&rp[2 * i], name, LDNS_RR_TYPE_A);
			dns_reply_question(&rp[2 * i + 1], name,
			    LDNS_RR_TYPE_AAAA);
		}
	}
	if (rp == NULL || cand == NULL)
		goto out;
	dns_reply_ask(r, rp, 2 * n);
	for (i = 0; i < n; i++)
		if (outs[i]->status != DNS_INVALID_NAME)
			dns_addrs_of(&rp[2 * i], cand, outs[i]);
out:
	for (i = 0; rp != NULL && i < 2 * n; i++)
		dns_reply_free(&rp[i]);
	free(rp);
	free(cand);
}

static enum dns_status
dns_addrs(struct dns_resolver *r, const char *host, struct dns_addrs *out)
{
	dns_addrs_many(r, &host, &out, 1);
	return out->status;
}

enum dns_status
dns_lookup_addrs(struct dns_resolver *r, const char *host,
    struct dns_addrs *out)
{
	enum dns_status st;

	r->unreachable = 0;
	st = dns_addrs(r, host, out);
	log_debug("event=dns_addrs status=%s naddrs=%zu ttl=%u",
	    dns_status_names[st], out->n, (unsigned)out->ttl);
	return st;
}

static int
dns_cand_cmp(const void *a, const void *b)
{
	const struct dns_mx_cand *x = a, *y = b;

	if (x->pref != y->pref)
		return x->pref < y->pref ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The MX hosts found: sorted, de-duplicated, capped, then resolved, all
 * at once. */
static void
dns_mx_hosts(struct dns_resolver *r, struct dns_mx_cand *cand, size_t n,
    struct dns_mx_result *res)
{
	const char *names[DNS_MAX_MX];
	struct dns_addrs *outs[DNS_MAX_MX];
	size_t i, j, u = 0, ok = 0, err = 0;

	qsort(cand, n, sizeof(*cand), dns_cand_cmp);
	/* One host named twice keeps its lowest preference. */
	for (i = 0; i < n; i++) {
		for (j = 0; j < u; j++)
			if (strcmp(cand[j].name, cand[i].name) == 0)
				break;
		if (j == u)
			cand[u++] = cand[i];
	}
	if (u > DNS_MAX_MX) {
		res->dropped_hosts = u - DNS_MAX_MX;
		u = DNS_MAX_MX;
	}
	if ((res->hosts = calloc(u, sizeof(*res->hosts))) == NULL) {
		res->status = DNS_ERROR;
		return;
	}
	res->nhosts = u;
	for (i = 0; i < u; i++) {
		struct dns_mx_host *h = &res->hosts[i];
		memcpy(h->name, cand[i].name, sizeof(h->name));
		h->preference = cand[i].pref;
		res->ttl = dns_reply_ttl_min(res->ttl, cand[i].ttl);
		names[i] = h->name;
		outs[i] = &h->addrs;
	}
	dns_addrs_many(r, names, outs, u);
	for (i = 0; i < u; i++) {
		switch (res->hosts[i].addrs.status) {
		case DNS_OK:
			ok++;
			res->ttl = dns_reply_ttl_min(res->ttl,
			    res->hosts[i].addrs.ttl);
			break;
		case DNS_ERROR:
			err++;
			break;
		default:
			/* NXDOMAIN or no address: part of the answer. */
			res->ttl = dns_reply_ttl_min(res->ttl,
			    res->hosts[i].addrs.ttl);
			break;
		}
	}
	/* Hosts without addresses are still an answer, unless some could
	 * not be looked up and none has an address: then we do not know.
	 * With some looked up and some not, it is an incomplete answer. */
	res->status = (ok == 0 && err > 0) ? DNS_ERROR : DNS_OK;
	res->incomplete = err > 0;
}

/* No MX record at all: the domain itself, if it has an address. */
static void
dns_mx_implicit(struct dns_resolver *r, const char *domain,
    struct dns_mx_result *res)
{
	struct dns_addrs addrs;

	switch (dns_addrs(r, domain, &addrs)) {
	case DNS_OK:
		if ((res->hosts = calloc(1, sizeof(*res->hosts))) == NULL) {
			res->status = DNS_ERROR;
			return;
		}
		res->nhosts = 1;
		res->implicit = 1;
		memcpy(res->hosts[0].name, domain, strlen(domain) + 1);
		res->hosts[0].preference = 0;
		res->hosts[0].addrs = addrs;
		res->ttl = dns_reply_ttl_min(res->ttl, addrs.ttl);
		res->status = DNS_OK;
		break;
	case DNS_NO_ADDR:
		res->ttl = dns_reply_ttl_min(res->ttl, addrs.ttl);
		res->status = DNS_NO_MX;
		break;
	case DNS_NXDOMAIN:
		/* Gone between the two queries. */
		res->ttl = dns_reply_ttl_min(res->ttl, addrs.ttl);
		res->status = DNS_NXDOMAIN;
		break;
	default:
		res->status = DNS_ERROR;
		break;
	}
}

enum dns_status
dns_lookup_mx(struct dns_resolver *r, const char *domain,
    struct dns_mx_result *res)
{
	struct dns_reply rp;
	struct dns_mx_cand *cand = NULL;
	ldns_rr_list *ans;
	const ldns_rdf *owner;
	char name[DNS_NAME_MAX + 1];
	size_t i, n = 0, nmx = 0, nroot = 0;
	uint32_t ttl = DNS_TTL_MAX;
	int kind;

	memset(res, 0, sizeof(*res));
	memset(&rp, 0, sizeof(rp));
	res->status = DNS_INVALID_NAME;
	if (dns_norm(domain, name, sizeof(name)) != 0)
		return res->status;
	r->unreachable = 0;
	res->status = DNS_ERROR;
	switch (dns_reply_query(r, name, LDNS_RR_TYPE_MX, &rp)) {
	case DNS_OK:
		break;
	case DNS_NXDOMAIN:
		res->status = DNS_NXDOMAIN;
		res->ttl = dns_reply_neg_ttl(rp.pkt);
		dns_reply_chain(&rp, &res->ttl);
		goto out;
	default:
		goto out;
	}
	if ((cand = calloc(DNS_MX_PARSE, sizeof(*cand))) == NULL)
		goto out;
	owner = dns_reply_chain(&rp, &ttl);
	ans = ldns_pkt_answer(rp.pkt);
	for (i = 0; i < ldns_rr_list_rr_count(ans) && nmx < DNS_MX_PARSE;
	    i++) {
		ldns_rr *rr = ldns_rr_list_rr(ans, i);
		ldns_rdf *pref;
		if (!dns_reply_rr_is(rr, LDNS_RR_TYPE_MX, owner))
			continue;
		nmx++;
		pref = ldns_rr_rdf(rr, 0);
		if (ldns_rr_rd_count(rr) != 2 || ldns_rdf_size(pref) != 2) {
			res->invalid_hosts++;
			continue;
		}
		kind = dns_reply_wire_name(ldns_rr_rdf(rr, 1), cand[n].name,
		    sizeof(cand[n].name));
		ttl = dns_reply_ttl_min(ttl, ldns_rr_ttl(rr));
		if (kind == 0) {
			nroot++;
		} else if (kind < 0) {
			res->invalid_hosts++;
		} else {
			cand[n].pref = ldns_rdf2native_int16(pref);
			cand[n].ttl = ldns_rr_ttl(rr);
			n++;
		}
	}
	res->ttl = ttl;
	if (nmx == 0) {
		/* NOERROR without MX: RFC 5321 5.1 implicit MX. The
		 * negative answer's TTL also bounds the cache. */
		res->ttl = dns_reply_ttl_min(res->ttl,
		    dns_reply_neg_ttl(rp.pkt));
		dns_reply_free(&rp);
		dns_mx_implicit(r, name, res);
	} else if (n == 0) {
		/* Only "." (RFC 7505 null MX) or only unusable targets. */
		res->null_mx = nroot > 0;
		res->status = DNS_NO_MX;
	} else {
		/* A "." next to real hosts breaks RFC 7505: it is ignored. */
		dns_reply_free(&rp);
		dns_mx_hosts(r, cand, n, res);
	}
out:
	if (res->status == DNS_ERROR || res->incomplete)
		res->ttl = 0;
	else if (res->ttl > DNS_TTL_MAX)
		res->ttl = DNS_TTL_MAX;
	log_debug("event=dns_mx domain=%s status=%s hosts=%zu implicit=%d "
	    "null_mx=%d invalid=%zu incomplete=%d ttl=%u", name,
	    dns_status_names[res->status], res->nhosts, res->implicit,
	    res->null_mx, res->invalid_hosts, res->incomplete,
	    (unsigned)res->ttl);
	free(cand);
	dns_reply_free(&rp);
	return res->status;
}

void
dns_mx_result_free(struct dns_mx_result *res)
{
	if (res == NULL)
		return;
	free(res->hosts);
	res->hosts = NULL;
	res->nhosts = 0;
}

enum dns_status
dns_web_presence(struct dns_resolver *r, const char *domain, int *present)
{
	struct dns_addrs a;
	char name[DNS_NAME_MAX + 1], www[DNS_NAME_MAX + 1];
	enum dns_status st1, st2 = DNS_NO_ADDR;
	size_t len;

	*present = 0;
	if (dns_norm(domain, name, sizeof(name)) != 0)
		return DNS_INVALID_NAME;
	r->unreachable = 0;
	st1 = dns_addrs(r, name, &a);
	if (st1 == DNS_OK) {
		*present = 1;
		return DNS_OK;
	}
	if (st1 == DNS_NXDOMAIN)
		return DNS_OK;	/* nothing exists below it (RFC 8020) */
	len = strlen(name);
	if (len + 4 <= DNS_NAME_MAX) {
		memcpy(www, "www.", 4);
		memcpy(www + 4, name, len + 1);
		st2 = dns_addrs(r, www, &a);
		if (st2 == DNS_OK) {
			*present = 1;
			return DNS_OK;
		}
	}
	if (st1 == DNS_ERROR || st2 == DNS_ERROR)
		return DNS_ERROR;
	return DNS_OK;
}
