/* doctor.c: "svcadm doctor" (doctor.h). The outbound address comes from
 * --address, else doctor_address, else the local address the kernel picks
 * for the route to doctor_port25_target (a UDP socket connected there: no
 * packet is sent). DNS goes through the engine's resolver (dns_resolver),
 * the port 25 probe reads one greeting with the engine's reply parser and
 * says QUIT. What comes from the network is untrusted: names are read as
 * host names by the DNS code, the greeting is cleaned by the parser and
 * cut short before it is printed. */
#include "admin/doctor.h"
#include "admin/port25.h"
#include "core/dbcluster.h"
#include "engine/dns.h"
#include "engine/dns_ptr.h"
#include "engine/egress.h"
#include "engine/smtp_reply.h"
#include "util/ipnet.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

const char *const doctor_check_names[DOCTOR_CHECK__MAX] = {
	[DOCTOR_PTR] = "ptr",
	[DOCTOR_FCRDNS] = "fcrdns",
	[DOCTOR_PORT25] = "port25",
	[DOCTOR_DNSBL] = "dnsbl",
	[DOCTOR_PORT25_SEEN] = "port25_seen",
	[DOCTOR_DB_CLUSTER] = "db_cluster",
};

const char *const doctor_result_names[DOCTOR_RESULT__MAX] = {
	[DOCTOR_OK] = "ok",
	[DOCTOR_FAIL] = "fail",
	[DOCTOR_ERROR] = "error",
	[DOCTOR_SKIPPED] = "skipped",
};

#define DOCTOR_DETAIL_MAX	1024	/* octets of one check's message */
#define DOCTOR_GREETING_MAX	120	/* octets of a greeting shown */
#define DOCTOR_ZONES_MAX	16	/* blocklists asked at most */
#define DOCTOR_TARGET_PORT	25

struct doctor {
	const struct conf	*c;
	struct dns_resolver	*r;
	const char		*helo;		/* smtp_helo_name as set */
	char			 helo_norm[DNS_NAME_MAX + 1];
	char			 host[DNS_NAME_MAX + 1];	/* the target */
	unsigned		 port;
	struct ipnet		 addr;
	char			 addr_text[DNS_ADDR_TEXT];
	const char		*addr_from;	/* option, setting or route */
	char			 addr_why[512];	/* "" when addr is usable */
	enum doctor_result	 res[DOCTOR_CHECK__MAX];
	struct buf		 detail[DOCTOR_CHECK__MAX];
	/* dnsbl: one result per smtp_egress route */
	size_t			 nroutes;
	struct doctor_route {
		char		 name[EGRESS_NAME_MAX + 1];
		enum doctor_result res;
		char		 detail[DOCTOR_DETAIL_MAX];
	}			 route[EGRESS_ROUTES_MAX];
};

/* Marks the checks named in list (commas or white space) skipped. */
static int
doctor_skip(struct doctor *d, const char *list, struct buf *err)
{
	char word[32];
	const char *p = list;
	size_t n;
	int k;

	while (p != NULL && *p != '\0') {
		p += strspn(p, ", \t");
		if ((n = strcspn(p, ", \t")) == 0)
			break;
		for (k = 0; k < DOCTOR_CHECK__MAX; k++)
			if (strlen(doctor_check_names[k]) == n &&
			    strncmp(p, doctor_check_names[k], n) == 0)
				break;
		if (k == DOCTOR_CHECK__MAX) {
			strparse_copy(word, n < sizeof(word) ? n + 1 :
			    sizeof(word), p);
			buf_printf(err, "no check \"%s\" to skip (ptr, fcrdns, "
			    "port25, dnsbl, port25_seen, db_cluster)", word);
			return -1;
		}
		d->res[k] = DOCTOR_SKIPPED;
		p += n;
	}
	return 0;
}

/* doctor_port25_target: "host", "host:port", "[v6]:port" or a bare IPv6
 * address. */
static int
doctor_target(struct doctor *d, struct buf *err)
{
	const char *s = conf_str(d->c, CONF_DOCTOR_PORT25_TARGET), *end, *c;
	long port = DOCTOR_TARGET_PORT;
	size_t n;

	if (*s == '[') {
		if ((end = strchr(s, ']')) == NULL || (end[1] != '\0' &&
		    (end[1] != ':' || strparse_long(end + 2, 1, 65535, &port)
		    == -1)))
			goto bad;
		s++;
	} else if ((c = strchr(s, ':')) != NULL && strchr(c + 1, ':') ==
	    NULL) {
		end = c;
		if (strparse_long(c + 1, 1, 65535, &port) == -1)
			goto bad;
	} else
		end = s + strlen(s);
	n = (size_t)(end - s);
	if (n == 0 || n >= sizeof(d->host))
		goto bad;
	memcpy(d->host, s, n);
	d->host[n] = '\0';
	d->port = (unsigned)port;
	return 0;
bad:
	buf_puts(err, "doctor_port25_target: not host[:port]: ");
	buf_printf(err, "%.64s", conf_str(d->c, CONF_DOCTOR_PORT25_TARGET));
	return -1;
}

/* The target's addresses: itself when it is one, else from DNS. */
static enum dns_status
doctor_target_addrs(struct doctor *d, struct dns_addrs *out)
{
	memset(out, 0, sizeof(*out));
	if (ipnet_parse_addr(d->host, &out->addr[0].ip) == 0) {
		strparse_copy(out->addr[0].text, sizeof(out->addr[0].text),
		    d->host);
		out->n = 1;
		out->status = DNS_OK;
		return DNS_OK;
	}
	return dns_lookup_addrs(d->r, d->host, out);
}

static socklen_t
doctor_sockaddr(const struct ipnet *ip, unsigned port,
    struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (ip->family == 4) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		memcpy(&in4->sin_addr, ip->addr, 4);
		return sizeof(*in4);
	}
	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons((uint16_t)port);
	memcpy(&in6->sin6_addr, ip->addr, 16);
	return sizeof(*in6);
}

/* The outbound address: from the option, the setting, or the route. */
static int
doctor_address(struct doctor *d, const char *option, struct buf *err)
{
	const char *a = option;
	struct sockaddr_storage ss;
	struct dns_addrs t;
	socklen_t len;
	char text[DNS_ADDR_TEXT];
	int fd;

	d->addr_from = "option";
	if (a == NULL || *a == '\0') {
		a = conf_str(d->c, CONF_DOCTOR_ADDRESS);
		d->addr_from = "setting";
	}
	if (*a != '\0') {
		if (ipnet_parse_addr(a, &d->addr) == -1) {
			buf_printf(err, "%s: not an IP address: %.64s",
			    option && *option ? "--address" : "doctor_address",
			    a);
			return -1;
		}
		goto text;
	}
	d->addr_from = "route";
	if (doctor_target_addrs(d, &t) != DNS_OK || t.n == 0) {
		snprintf(d->addr_why, sizeof(d->addr_why), "no outbound "
		    "address: %s has no address (%s); set doctor_address",
		    d->host, dns_status_names[t.status]);
		return 0;
	}
	len = doctor_sockaddr(&t.addr[0].ip, d->port, &ss);
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd == -1 || connect(fd, (struct sockaddr *)&ss, len) == -1 ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) == -1 ||
	    inet_ntop(ss.ss_family, ss.ss_family == AF_INET ?
	    (void *)&((struct sockaddr_in *)&ss)->sin_addr :
	    (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr, text,
	    sizeof(text)) == NULL || ipnet_parse_addr(text, &d->addr) == -1) {
		snprintf(d->addr_why, sizeof(d->addr_why), "no outbound "
		    "address: no route to %s (%s); set doctor_address",
		    t.addr[0].text, strerror(errno));
		if (fd != -1)
			close(fd);
		return 0;
	}
	close(fd);
	/* Behind NAT the route's address is not the one mail servers see. */
	if (ipnet_is_private(&d->addr))
		snprintf(d->addr_why, sizeof(d->addr_why), "the route's local "
		    "address %s is not a public one (behind NAT?): set "
		    "doctor_address to the address mail servers see", text);
text:
	if (inet_ntop(d->addr.family == 4 ? AF_INET : AF_INET6, d->addr.addr,
	    d->addr_text, sizeof(d->addr_text)) == NULL)
		strparse_copy(d->addr_text, sizeof(d->addr_text), "?");
	return 0;
}

/* Sets a check's result and message. */
static enum doctor_result
doctor_set(struct doctor *d, enum doctor_check k, enum doctor_result r,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static enum doctor_result
doctor_set(struct doctor *d, enum doctor_check k, enum doctor_result r,
    const char *fmt, ...)
{
	char line[DOCTOR_DETAIL_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	buf_reset(&d->detail[k]);
	buf_puts(&d->detail[k], line);
	d->res[k] = r;
	return r;
}

/* Checks that need the outbound address: an error without it. */
static int
doctor_need_address(struct doctor *d, enum doctor_check k)
{
	if (d->addr_why[0] == '\0')
		return 1;
	doctor_set(d, k, DOCTOR_ERROR, "%s", d->addr_why);
	return 0;
}

/* Checks that need smtp_helo_name to be a host name. */
static int
doctor_need_helo(struct doctor *d, enum doctor_check k)
{
	if (d->helo_norm[0] != '\0')
		return 1;
	doctor_set(d, k, DOCTOR_FAIL, "smtp_helo_name \"%.64s\" is not a host "
	    "name", d->helo);
	return 0;
}

static void
doctor_ptr(struct doctor *d)
{
	struct dns_ptrs p;
	struct buf names;
	size_t i;

	if (!doctor_need_address(d, DOCTOR_PTR) ||
	    !doctor_need_helo(d, DOCTOR_PTR))
		return;
	switch (dns_ptr_lookup(d->r, &d->addr, &p)) {
	case DNS_OK:
		break;
	case DNS_NXDOMAIN:
	case DNS_NO_ADDR:
		doctor_set(d, DOCTOR_PTR, DOCTOR_FAIL, "%s has no PTR record "
		    "(ask whoever gave you the address to set it to %s)",
		    d->addr_text, d->helo_norm);
		return;
	default:
		doctor_set(d, DOCTOR_PTR, DOCTOR_ERROR, "the PTR of %s could "
		    "not be looked up (%s)", d->addr_text,
		    dns_status_names[p.status]);
		return;
	}
	buf_init(&names, DOCTOR_DETAIL_MAX / 2);
	for (i = 0; i < p.n; i++) {
		if (strcmp(p.name[i], d->helo_norm) == 0) {
			doctor_set(d, DOCTOR_PTR, DOCTOR_OK, "%s has PTR %s",
			    d->addr_text, p.name[i]);
			buf_free(&names);
			return;
		}
		buf_printf(&names, "%s%s", i ? ", " : "", p.name[i]);
	}
	if (p.invalid > 0)
		buf_printf(&names, "%s%zu name(s) that are no host names",
		    p.n ? ", " : "", p.invalid);
	doctor_set(d, DOCTOR_PTR, DOCTOR_FAIL, "%s has PTR %s, not "
	    "smtp_helo_name %s", d->addr_text, buf_str(&names), d->helo_norm);
	buf_free(&names);
}

static void
doctor_fcrdns(struct doctor *d)
{
	struct dns_addrs a;
	struct buf list;
	size_t i;

	if (!doctor_need_address(d, DOCTOR_FCRDNS) ||
	    !doctor_need_helo(d, DOCTOR_FCRDNS))
		return;
	switch (dns_lookup_addrs(d->r, d->helo_norm, &a)) {
	case DNS_OK:
		break;
	case DNS_NXDOMAIN:
		doctor_set(d, DOCTOR_FCRDNS, DOCTOR_FAIL, "%s does not exist "
		    "(NXDOMAIN): give it an address record for %s",
		    d->helo_norm, d->addr_text);
		return;
	case DNS_NO_ADDR:
		doctor_set(d, DOCTOR_FCRDNS, DOCTOR_FAIL, "%s has no A or "
		    "AAAA record: give it one for %s", d->helo_norm,
		    d->addr_text);
		return;
	default:
		doctor_set(d, DOCTOR_FCRDNS, DOCTOR_ERROR, "the addresses of "
		    "%s could not be looked up (%s)", d->helo_norm,
		    dns_status_names[a.status]);
		return;
	}
	buf_init(&list, DOCTOR_DETAIL_MAX / 2);
	for (i = 0; i < a.n; i++) {
		if (a.addr[i].ip.family == d->addr.family &&
		    memcmp(a.addr[i].ip.addr, d->addr.addr, 16) == 0) {
			doctor_set(d, DOCTOR_FCRDNS, DOCTOR_OK, "%s resolves to "
			    "%s", d->helo_norm, d->addr_text);
			buf_free(&list);
			return;
		}
		buf_printf(&list, "%s%s", i ? ", " : "", a.addr[i].text);
	}
	doctor_set(d, DOCTOR_FCRDNS, DOCTOR_FAIL, "%s resolves to %s, not %s",
	    d->helo_norm, buf_str(&list), d->addr_text);
	buf_free(&list);
}

/* Waits for fd to be ready for events until the mono-clock deadline: 1
 * ready, 0 timed out, -1 error. */
static int
doctor_wait(int fd, short events, int64_t deadline)
{
	struct pollfd p = { fd, events, 0 };
	int64_t left;
	int rc;

	for (;;) {
		left = deadline - timeutil_mono_ms();
		if (left <= 0)
			return 0;
		rc = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (rc > 0)
			return 1;
		if (rc == -1 && errno != EINTR)
			return -1;
	}
}

/* Connects to one address of the target and reads its greeting: OK with
 * the reply shown, else FAIL with what went wrong in why. */
static enum doctor_result
doctor_greeting(struct doctor *d, const struct dns_addr *a, struct buf *why)
{
	struct smtp_reply_parser rp;
	struct smtp_reply reply;
	struct sockaddr_storage ss;
	enum smtp_reply_status st = SMTP_REPLY_MORE;
	enum doctor_result res = DOCTOR_FAIL;
	struct buf text;
	socklen_t len = doctor_sockaddr(&a->ip, d->port, &ss);
	char data[1024];
	size_t used;
	ssize_t n;
	int fd, soerr = 0, w;
	socklen_t sl = sizeof(soerr);
	int64_t deadline;

	smtp_reply_parser_init(&rp);
	buf_init(&text, 4096);
	memset(&reply, 0, sizeof(reply));
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0);
	if (fd == -1) {
		buf_printf(why, "%s: %s", a->text, strerror(errno));
		goto out;
	}
	deadline = timeutil_mono_ms() + conf_int(d->c,
	    CONF_SMTP_CONNECT_TIMEOUT_MS);
	if (connect(fd, (struct sockaddr *)&ss, len) == -1 &&
	    errno != EINPROGRESS) {
		buf_printf(why, "%s port %u: %s", a->text, d->port,
		    strerror(errno));
		goto out;
	}
	if ((w = doctor_wait(fd, POLLOUT, deadline)) != 1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == -1 ||
	    soerr != 0) {
		buf_printf(why, "%s port %u: %s", a->text, d->port, w == 0 ?
		    "no connection within smtp_connect_timeout_ms (port 25 "
		    "blocked outbound?)" : strerror(soerr ? soerr : errno));
		goto out;
	}
	deadline = timeutil_mono_ms() + conf_int(d->c,
	    CONF_SMTP_REPLY_TIMEOUT_MS);
	while (st == SMTP_REPLY_MORE) {
		if ((w = doctor_wait(fd, POLLIN, deadline)) != 1) {
			buf_printf(why, "%s port %u: connected, but no "
			    "greeting within smtp_reply_timeout_ms", a->text,
			    d->port);
			goto out;
		}
		if ((n = read(fd, data, sizeof(data))) <= 0) {
			buf_printf(why, "%s port %u: connected, but closed "
			    "before a greeting", a->text, d->port);
			goto out;
		}
		st = smtp_reply_parser_feed(&rp, data, (size_t)n, &used,
		    &reply);
	}
	if (st != SMTP_REPLY_OK) {
		buf_printf(why, "%s port %u: connected, but the greeting is "
		    "not SMTP (%s)", a->text, d->port,
		    smtp_reply_status_names[st]);
		goto out;
	}
	smtp_reply_oneline(&reply, &text);
	buf_printf(why, "%s port %u greets %d %.*s%s", a->text, d->port,
	    reply.code, DOCTOR_GREETING_MAX, buf_str(&text),
	    text.len > DOCTOR_GREETING_MAX ? "..." : "");
	if (write(fd, "QUIT\r\n", 6) < 0) {
		/* the answer is in already */
	}
	res = DOCTOR_OK;
out:
	if (fd != -1)
		close(fd);
	smtp_reply_free(&reply);
	smtp_reply_parser_free(&rp);
	buf_free(&text);
	return res;
}

static void
doctor_port25(struct doctor *d)
{
	struct dns_addrs t;
	struct buf why;
	size_t i;

	if (doctor_target_addrs(d, &t) != DNS_OK || t.n == 0) {
		doctor_set(d, DOCTOR_PORT25, DOCTOR_ERROR, "%s has no address "
		    "(%s)", d->host, dns_status_names[t.status]);
		return;
	}
	buf_init(&why, DOCTOR_DETAIL_MAX);
	/* One address that greets is enough. */
	for (i = 0; i < t.n; i++) {
		buf_reset(&why);
		if (doctor_greeting(d, &t.addr[i], &why) == DOCTOR_OK) {
			doctor_set(d, DOCTOR_PORT25, DOCTOR_OK, "%s",
			    buf_str(&why));
			buf_free(&why);
			return;
		}
	}
	doctor_set(d, DOCTOR_PORT25, DOCTOR_FAIL, "%s", buf_str(&why));
	buf_free(&why);
}

/* What svc-worker's direct sessions of the last hour say about port 25. */
static void
doctor_port25_seen(struct doctor *d, struct db *db, const char *db_why)
{
	struct port25_figures f;
	char msg[400];

	/* a host without the database (a web host, a laptop) has no
	 * workers' figures to judge */
	if (db == NULL) {
		doctor_set(d, DOCTOR_PORT25_SEEN, DOCTOR_SKIPPED, "no database "
		    "(%.200s)", db_why != NULL ? db_why : "");
		return;
	}
	if (port25_read(db, &f) != DB_OK) {
		doctor_set(d, DOCTOR_PORT25_SEEN, DOCTOR_ERROR, "%s",
		    db_error(db));
		return;
	}
	doctor_set(d, DOCTOR_PORT25_SEEN, port25_blocked(&f, msg,
	    sizeof(msg)) ? DOCTOR_FAIL : DOCTOR_OK, "%s", msg);
}

/* One blocklist: 1 listed (code in *how), 0 not listed, -1 could not
 * tell (why in *how). */
static int
doctor_dnsbl_zone(struct doctor *d, const struct ipnet *addr,
    const char *zone, struct buf *how)
{
	struct ipnet loop, refused;
	struct dns_addrs a;
	char name[DNS_NAME_MAX + 1];
	size_t i;

	if (dns_ptr_reverse_name(addr, zone, name, sizeof(name)) == -1) {
		buf_printf(how, "%s: not a DNS zone", zone);
		return -1;
	}
	switch (dns_lookup_addrs(d->r, name, &a)) {
	case DNS_NXDOMAIN:
	case DNS_NO_ADDR:
		return 0;
	case DNS_OK:
		break;
	default:
		buf_printf(how, "%s: %s", zone, dns_status_names[a.status]);
		return -1;
	}
	/* Listings are 127.0.0.0/8; Spamhaus answers 127.255.255.x when it
	 * refuses to answer (an open or public resolver, or over quota). */
	ipnet_parse("127.0.0.0/8", &loop);
	ipnet_parse("127.255.255.0/24", &refused);
	for (i = 0; i < a.n; i++)
		if (ipnet_contains(&loop, &a.addr[i].ip) &&
		    !ipnet_contains(&refused, &a.addr[i].ip)) {
			buf_printf(how, "%s (%s)", zone, a.addr[i].text);
			return 1;
		}
	buf_printf(how, "%s: %s %s", zone, ipnet_contains(&refused,
	    &a.addr[0].ip) ? "refused the query with" : "answered",
	    a.addr[0].text);
	return -1;
}

/* One address (as text in at) on every zone of doctor_dnsbl_zones: the
 * result, and its message in msg; the zones listing it in listed. */
static enum doctor_result
doctor_dnsbl_addr(struct doctor *d, const struct ipnet *addr, const char *at,
    char *msg, size_t size, struct buf *listed)
{
	const char *p = conf_str(d->c, CONF_DOCTOR_DNSBL_ZONES);
	char zone[DNS_NAME_MAX + 1];
	struct buf unknown, how;
	size_t n, zones = 0;
	int nl = 0, nu = 0, rc;
	enum doctor_result r;

	buf_init(&unknown, DOCTOR_DETAIL_MAX / 2);
	buf_init(&how, DOCTOR_DETAIL_MAX / 2);
	while (*p != '\0' && zones < DOCTOR_ZONES_MAX) {
		p += strspn(p, ", \t");
		if ((n = strcspn(p, ", \t")) == 0)
			break;
		strparse_copy(zone, n < sizeof(zone) ? n + 1 : sizeof(zone), p);
		p += n;
		zones++;
		buf_reset(&how);
		rc = doctor_dnsbl_zone(d, addr, zone, &how);
		if (rc == 1)
			buf_printf(listed, "%s%s", nl++ ? ", " : "",
			    buf_str(&how));
		else if (rc == -1)
			buf_printf(&unknown, "%s%s", nu++ ? "; " : "",
			    buf_str(&how));
	}
	if (nl > 0) {
		r = DOCTOR_FAIL;
		snprintf(msg, size, "%s is listed on %s%s%s", at,
		    buf_str(listed), nu ? "; not told: " : "",
		    buf_str(&unknown));
	} else if (nu > 0) {
		r = DOCTOR_ERROR;
		snprintf(msg, size, "%s is listed on none that answered; not "
		    "told: %s", at, buf_str(&unknown));
	} else {
		r = DOCTOR_OK;
		snprintf(msg, size, "%s is listed on none of %zu", at, zones);
	}
	buf_free(&unknown);
	buf_free(&how);
	return r;
}

/* The address a route's probes come from, as mail servers see it: 1 (in
 * *a and text), 0 not known (why in text: a proxy without #egress=), -1
 * the outbound address is not usable (why in text). */
static int
doctor_route_addr(struct doctor *d, const struct egress_route *rt,
    struct ipnet *a, char *text, size_t size)
{
	char t[EGRESS_ADDR_TEXT];

	switch (rt->kind) {
	case EGRESS_DIRECT:
		if (d->addr_why[0] != '\0') {
			snprintf(text, size, "%s", d->addr_why);
			return -1;
		}
		*a = d->addr;
		snprintf(text, size, "%s", d->addr_text);
		return 1;
	case EGRESS_BIND:
		if (inet_ntop(rt->family, rt->family == AF_INET6 ?
		    (const void *)&((const struct sockaddr_in6 *)&rt->sa)->
		    sin6_addr : (const void *)&((const struct sockaddr_in *)
		    &rt->sa)->sin_addr, t, sizeof(t)) == NULL ||
		    ipnet_parse_addr(t, a) == -1)
			break;
		snprintf(text, size, "%s", t);
		return 1;
	case EGRESS_SOCKS5:
		if (rt->egress_addr[0] == '\0') {
			snprintf(text, size, "the address the proxy connects "
			    "from is not known to svc: name it in smtp_egress "
			    "(%s#egress=ADDRESS)", rt->name);
			return 0;
		}
		if (ipnet_parse_addr(rt->egress_addr, a) == -1)
			break;
		snprintf(text, size, "%s", rt->egress_addr);
		return 1;
	default:
		break;
	}
	snprintf(text, size, "no address");
	return -1;
}

/* Every egress route's address (smtp_egress: direct is the outbound
 * address, bind: its own, a proxy the #egress= address if named) on every
 * zone: one result per route, and the check's: failed when a route is
 * listed, an error when one could not be told. With the one route direct
 * (the default) the check's message is that route's. */
static void
doctor_dnsbl(struct doctor *d)
{
	struct doctor_route *dr;
	struct egress *e;
	struct ipnet a;
	struct buf err, listed, sum;
	char at[DOCTOR_DETAIL_MAX / 2];
	size_t i, n[DOCTOR_RESULT__MAX] = { 0 };
	int rc;

	if (conf_str(d->c, CONF_DOCTOR_DNSBL_ZONES)[strspn(conf_str(d->c,
	    CONF_DOCTOR_DNSBL_ZONES), ", \t")] == '\0') {
		doctor_set(d, DOCTOR_DNSBL, DOCTOR_SKIPPED, "doctor_dnsbl_zones "
		    "is empty");
		return;
	}
	buf_init(&err, 1024);
	if ((e = egress_from_conf(d->c, &err)) == NULL) {
		doctor_set(d, DOCTOR_DNSBL, DOCTOR_ERROR, "%s", buf_str(&err));
		buf_free(&err);
		return;
	}
	buf_free(&err);
	buf_init(&listed, DOCTOR_DETAIL_MAX / 2);
	buf_init(&sum, DOCTOR_DETAIL_MAX);
	for (i = 0; i < e->n; i++) {
		dr = &d->route[d->nroutes++];
		strparse_copy(dr->name, sizeof(dr->name), e->r[i].name);
		buf_reset(&listed);
		rc = doctor_route_addr(d, &e->r[i], &a, at, sizeof(at));
		if (rc != 1) {
			dr->res = rc == 0 ? DOCTOR_SKIPPED : DOCTOR_ERROR;
			snprintf(dr->detail, sizeof(dr->detail), "%s", at);
		} else
			dr->res = doctor_dnsbl_addr(d, &a, at, dr->detail,
			    sizeof(dr->detail), &listed);
		n[dr->res]++;
		if (dr->res == DOCTOR_FAIL)
			buf_printf(&sum, "%s%s (%s) on %s", n[DOCTOR_FAIL] > 1 ?
			    "; " : "", dr->name, at, buf_str(&listed));
	}
	if (e->n == 1 && e->r[0].kind == EGRESS_DIRECT)
		doctor_set(d, DOCTOR_DNSBL, d->route[0].res, "%s",
		    d->route[0].detail);
	else if (n[DOCTOR_FAIL] > 0)
		doctor_set(d, DOCTOR_DNSBL, DOCTOR_FAIL, "%zu of %zu routes "
		    "listed: %s", n[DOCTOR_FAIL], e->n, buf_str(&sum));
	else if (n[DOCTOR_ERROR] > 0)
		doctor_set(d, DOCTOR_DNSBL, DOCTOR_ERROR, "%zu of %zu routes "
		    "could not be told (dnsbl route lines)", n[DOCTOR_ERROR],
		    e->n);
	else if (n[DOCTOR_OK] > 0)
		doctor_set(d, DOCTOR_DNSBL, DOCTOR_OK, "%zu of %zu routes listed "
		    "nowhere, %zu skipped", n[DOCTOR_OK], e->n,
		    n[DOCTOR_SKIPPED]);
	else
		doctor_set(d, DOCTOR_DNSBL, DOCTOR_SKIPPED, "no route's "
		    "address is known (dnsbl route lines)");
	buf_free(&listed);
	buf_free(&sum);
	free(e);
}

/* The database endpoints: with db_hosts, a Galera cluster of three nodes
 * at least (fewer cannot lose one and keep a quorum) whose every listed
 * endpoint is Synced; a single server passes (no cluster was asked for).
 * Skipped when no endpoint could be opened at all (as port25_seen). */
static void
doctor_db_cluster(struct doctor *d, struct db *db, const char *db_why)
{
	struct dbcluster_node nodes[DBHOSTS_MAX];
	long long size = 0;
	size_t n, i;

	if (db == NULL) {
		doctor_set(d, DOCTOR_DB_CLUSTER, DOCTOR_SKIPPED, "no database: "
		    "%.200s", db_why ? db_why : "");
		return;
	}
	if (dbcluster_probe(d->c, nodes, DBHOSTS_MAX, &n) == -1) {
		doctor_set(d, DOCTOR_DB_CLUSTER, DOCTOR_ERROR, "db_hosts "
		    "cannot be read");
		return;
	}
	for (i = 0; i < n; i++) {
		if (!dbcluster_node_ready(&nodes[i])) {
			doctor_set(d, DOCTOR_DB_CLUSTER, DOCTOR_FAIL, "%s is "
			    "not ready: %s%s%s", nodes[i].endpoint,
			    nodes[i].state, nodes[i].error[0] ? ": " : "",
			    nodes[i].error);
			return;
		}
		if (nodes[i].cluster_size > size)
			size = nodes[i].cluster_size;
	}
	if (conf_int(d->c, CONF_DB_HOSTS) == 0 && n == 1 && !nodes[0].galera) {
		doctor_set(d, DOCTOR_DB_CLUSTER, DOCTOR_OK, "one server, %s "
		    "(not a cluster: set db_hosts for one)", nodes[0].endpoint);
		return;
	}
	if (size < 3) {
		doctor_set(d, DOCTOR_DB_CLUSTER, DOCTOR_FAIL, "the cluster has "
		    "%lld nodes: below 3, losing one loses the quorum", size);
		return;
	}
	doctor_set(d, DOCTOR_DB_CLUSTER, DOCTOR_OK, "%zu endpoints Synced, "
	    "cluster size %lld", n, size);
}

static void
doctor_print(const struct doctor *d, int json, int failed, FILE *out)
{
	json_t *o, *checks, *routes;
	size_t i;
	int k;

	if (!json) {
		fprintf(out, "address: %s (%s)\n", d->addr_text[0] ?
		    d->addr_text : "none", d->addr_from);
		fprintf(out, "ehlo: %s (smtp_helo_name)\n", d->helo);
		for (k = 0; k < DOCTOR_CHECK__MAX; k++) {
			fprintf(out, "%s: %s%s%s\n", doctor_check_names[k],
			    doctor_result_names[d->res[k]],
			    d->detail[k].len ? ": " : "",
			    buf_str(&d->detail[k]));
			for (i = 0; k == DOCTOR_DNSBL && i < d->nroutes; i++)
				fprintf(out, "dnsbl route %s: %s: %s\n",
				    d->route[i].name,
				    doctor_result_names[d->route[i].res],
				    d->route[i].detail);
		}
		fprintf(out, "doctor: %s\n", failed ? "problems found" :
		    "ok");
		return;
	}
	checks = json_array();
	for (k = 0; k < DOCTOR_CHECK__MAX; k++)
		json_array_append_new(checks, json_pack("{s:s, s:s, s:s}",
		    "check", doctor_check_names[k], "result",
		    doctor_result_names[d->res[k]], "detail",
		    buf_str(&d->detail[k])));
	routes = json_array();
	for (i = 0; i < d->nroutes; i++)
		json_array_append_new(routes, json_pack("{s:s, s:s, s:s}",
		    "route", d->route[i].name, "result",
		    doctor_result_names[d->route[i].res], "detail",
		    d->route[i].detail));
	o = json_pack("{s:b, s:s?, s:s, s:s, s:o, s:o}", "ok", !failed,
	    "address", d->addr_text[0] ? d->addr_text : NULL, "address_from",
	    d->addr_from, "ehlo", d->helo, "checks", checks, "dnsbl_routes",
	    routes);
	if (o != NULL) {
		json_dumpf(o, out, JSON_INDENT(2));
		fputc('\n', out);
		json_decref(o);
	}
}

int
doctor_run(const struct conf *c, struct db *db, const char *db_why,
    const char *skip, const char *address, int json, FILE *out,
    struct buf *err)
{
	struct doctor d;
	int k, failed = 0, rc = -1;

	memset(&d, 0, sizeof(d));
	d.c = c;
	for (k = 0; k < DOCTOR_CHECK__MAX; k++)
		buf_init(&d.detail[k], DOCTOR_DETAIL_MAX);
	/* smtp_helo_name in lower case without a final dot, as DNS names
	 * come back; left empty when it is no host name. */
	d.helo = conf_str(c, CONF_SMTP_HELO_NAME);
	if (dns_name_valid(d.helo)) {
		strparse_copy(d.helo_norm, sizeof(d.helo_norm), d.helo);
		for (k = 0; d.helo_norm[k] != '\0'; k++)
			if (d.helo_norm[k] >= 'A' && d.helo_norm[k] <= 'Z')
				d.helo_norm[k] = (char)(d.helo_norm[k] + 32);
		if (k > 0 && d.helo_norm[k - 1] == '.')
			d.helo_norm[k - 1] = '\0';
	}
	if (doctor_skip(&d, conf_str(c, CONF_DOCTOR_SKIP), err) == -1 ||
	    doctor_skip(&d, skip, err) == -1 || doctor_target(&d, err) == -1)
		goto out;
	if ((d.r = dns_resolver_new(c, err)) == NULL)
		goto out;
	if (doctor_address(&d, address, err) == -1)
		goto out;
	if (d.res[DOCTOR_PTR] != DOCTOR_SKIPPED)
		doctor_ptr(&d);
	if (d.res[DOCTOR_FCRDNS] != DOCTOR_SKIPPED)
		doctor_fcrdns(&d);
	if (d.res[DOCTOR_PORT25] != DOCTOR_SKIPPED)
		doctor_port25(&d);
	if (d.res[DOCTOR_DNSBL] != DOCTOR_SKIPPED)
		doctor_dnsbl(&d);
	if (d.res[DOCTOR_PORT25_SEEN] != DOCTOR_SKIPPED)
		doctor_port25_seen(&d, db, db_why);
	if (d.res[DOCTOR_DB_CLUSTER] != DOCTOR_SKIPPED)
		doctor_db_cluster(&d, db, db_why);
	for (k = 0; k < DOCTOR_CHECK__MAX; k++)
		if (d.res[k] == DOCTOR_FAIL || d.res[k] == DOCTOR_ERROR)
			failed++;
	doctor_print(&d, json, failed, out);
	rc = failed ? 1 : 0;
out:
	dns_resolver_free(d.r);
	for (k = 0; k < DOCTOR_CHECK__MAX; k++)
		buf_free(&d.detail[k]);
	return rc;
}
