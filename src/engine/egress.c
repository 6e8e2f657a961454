/* egress.c: the parser of smtp_egress (egress.h) and the round robin over
 * its routes. What a route does to a connection is smtp_io.c's and the
 * SOCKS5 exchange is socks5.c's. */
#include "engine/egress.h"
#include "engine/egress_pins.h"
#include "util/hex.h"
#include "util/timeutil.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

const char *const egress_kind_names[EGRESS__MAX] = {
	[EGRESS_DIRECT] = "direct",
	[EGRESS_BIND] = "bind",
	[EGRESS_SOCKS5] = "socks5",
};

#define EGRESS_TOKEN_MAX 1024

/* An IP address literal (IPv6 with or without brackets when brackets is
 * 0, with them only when 1) into sa with port; 0 or -1. */
static int
egress_addr(const char *p, size_t len, int brackets, unsigned port,
    struct egress_route *r)
{
	char tmp[64];
	struct sockaddr_in *sin = (struct sockaddr_in *)&r->sa;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&r->sa;
	int bracketed = len >= 2 && p[0] == '[' && p[len - 1] == ']';

	if (bracketed) {
		p++;
		len -= 2;
	}
	if (len == 0 || len >= sizeof(tmp))
		return -1;
	memcpy(tmp, p, len);
	tmp[len] = '\0';
	memset(&r->sa, 0, sizeof(r->sa));
	if (!bracketed && inet_pton(AF_INET, tmp, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		r->salen = sizeof(*sin);
		r->family = AF_INET;
		return 0;
	}
	if ((bracketed || !brackets) &&
	    inet_pton(AF_INET6, tmp, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		r->salen = sizeof(*sin6);
		r->family = AF_INET6;
		return 0;
	}
	return -1;
}

/* A user name or password, percent-decoded (so that ':' and '@' can be
 * written %3A and %40) into out: 1..EGRESS_CRED_MAX octets, no NUL. */
static int
egress_cred(const char *p, size_t len, char *out)
{
	size_t i, o = 0;
	int h, l;

	for (i = 0; i < len; i++) {
		if (o >= EGRESS_CRED_MAX)
			return -1;
		if (p[i] != '%') {
			out[o++] = p[i];
			continue;
		}
		if (i + 2 >= len)
			return -1;
		if ((h = hex_value((unsigned char)p[i + 1])) < 0 ||
		    (l = hex_value((unsigned char)p[i + 2])) < 0 ||
		    (h == 0 && l == 0))
			return -1;
		out[o++] = (char)(h * 16 + l);
		i += 2;
	}
	out[o] = '\0';
	return o == 0 ? -1 : 0;
}

/* The address of r as text for its name: "192.0.2.1" or "[2001:db8::1]". */
static void
egress_addr_text(const struct egress_route *r, char *b, size_t size)
{
	char a[INET6_ADDRSTRLEN];

	if (r->family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&r->sa)->
		    sin6_addr, a, sizeof(a));
		snprintf(b, size, "[%s]", a);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)&r->sa)->
		    sin_addr, a, sizeof(a));
		snprintf(b, size, "%s", a);
	}
}

/* A proxy's host name: 1..253 of letters, digits, '-' and '.', at least
 * one letter (not an address), labels of 1..63 not starting or ending
 * with '-'; lower-cased into out (254 octets), without a final dot. */
static int
egress_host(const char *p, size_t len, char *out)
{
	size_t i, label = 0;
	int alpha = 0;
	char c;

	if (len > 0 && p[len - 1] == '.')
		len--;
	if (len == 0 || len > 253)
		return -1;
	for (i = 0; i < len; i++) {
		c = p[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c == '.') {
			if (label == 0 || p[i - 1] == '-')
				return -1;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    (c == '-' && label > 0)) {
			alpha |= c >= 'a' && c <= 'z';
			if (++label > 63)
				return -1;
		} else
			return -1;
		out[i] = c;
	}
	if (p[len - 1] == '-' || !alpha)
		return -1;
	out[len] = '\0';
	return 0;
}

/* "socks5://[USER:PASS@]HOST:PORT" after the scheme. */
static const char *
egress_socks5(const char *p, size_t len, struct egress_route *r)
{
	const char *at = NULL, *colon, *hp;
	char a[256];	/* an address in text, or a host name */
	size_t i, hlen;
	unsigned long port = 0;

	/* "#egress=ADDRESS" at the end: the proxy's outgoing address */
	for (i = len; i >= 8; i--)
		if (memcmp(p + i - 8, "#egress=", 8) == 0) {
			struct egress_route tmp;

			memset(&tmp, 0, sizeof(tmp));
			if (egress_addr(p + i, len - i, 0, 0, &tmp) == -1)
				return "#egress= needs an IPv4 or IPv6 address";
			inet_ntop(tmp.family, tmp.family == AF_INET6 ?
			    (const void *)&((const struct sockaddr_in6 *)
			    &tmp.sa)->sin6_addr : (const void *)
			    &((const struct sockaddr_in *)&tmp.sa)->sin_addr,
			    r->egress_addr, sizeof(r->egress_addr));
			len = i - 8;
			break;
		}
	for (i = 0; i < len; i++)
		if (p[i] == '@')
			at = p + i;	/* the last one: a password may have '@' */
	if (at != NULL) {
		colon = memchr(p, ':', (size_t)(at - p));
		if (colon == NULL)
			return "a user name needs a password (USER:PASS@)";
		if (egress_cred(p, (size_t)(colon - p), r->user) == -1)
			return "bad user name (1-255 octets, %XX escapes)";
		if (egress_cred(colon + 1, (size_t)(at - colon - 1),
		    r->pass) == -1)
			return "bad password (1-255 octets, %XX escapes)";
		hp = at + 1;
	} else
		hp = p;
	hlen = len - (size_t)(hp - p);
	/* HOST:PORT, the port after the last ':' */
	for (i = hlen; i > 0 && hp[i - 1] != ':'; i--)
		;
	if (i == 0 || i == hlen)
		return "HOST:PORT expected";
	for (colon = hp + i; colon < hp + hlen; colon++) {
		if (*colon < '0' || *colon > '9' || port > 65535)
			return "bad port";
		port = port * 10 + (unsigned long)(*colon - '0');
	}
	if (port == 0 || port > 65535)
		return "bad port (1-65535)";
	r->port = (unsigned)port;
	if (egress_addr(hp, i - 1, 1, (unsigned)port, r) == 0)
		egress_addr_text(r, a, sizeof(a));
	else if (egress_host(hp, i - 1, r->host) == 0)
		snprintf(a, sizeof(a), "%s", r->host);
	else
		return "the proxy's HOST must be an IP address (IPv6 in "
		    "brackets) or a host name";
	{
		char name[sizeof(r->name)];
		size_t k;

		/* the user name as it may be logged: printable ASCII */
		snprintf(name, sizeof(name), "socks5://%s%s%s:%lu", r->user,
		    r->user[0] ? "@" : "", a, port);
		for (k = 9; name[k]; k++)
			if ((unsigned char)name[k] < 0x21 ||
			    (unsigned char)name[k] > 0x7e || name[k] == '"')
				name[k] = '?';
		memcpy(r->name, name, sizeof(name));
	}
	return NULL;
}

/* One route; NULL or why it is bad. */
static const char *
egress_route(const char *p, size_t len, struct egress_route *r)
{
	char a[INET6_ADDRSTRLEN + 2];

	memset(r, 0, sizeof(*r));
	if (len == 6 && memcmp(p, "direct", 6) == 0) {
		r->kind = EGRESS_DIRECT;
		snprintf(r->name, sizeof(r->name), "direct");
		return NULL;
	}
	if (len > 5 && memcmp(p, "bind:", 5) == 0) {
		r->kind = EGRESS_BIND;
		if (egress_addr(p + 5, len - 5, 0, 0, r) == -1)
			return "bind: needs an IPv4 or IPv6 address";
		egress_addr_text(r, a, sizeof(a));
		snprintf(r->name, sizeof(r->name), "bind:%s", a);
		return NULL;
	}
	if (len > 9 && memcmp(p, "socks5://", 9) == 0) {
		r->kind = EGRESS_SOCKS5;
		return egress_socks5(p + 9, len - 9, r);
	}
	return "not direct, bind:ADDRESS or "
	    "socks5://[USER:PASS@]HOST:PORT[#egress=ADDRESS]";
}

void
egress_quote(struct buf *err, const char *p, size_t len, size_t max)
{
	const char *at = NULL, *colon = NULL;
	size_t i;

	if (len > 9 && memcmp(p, "socks5://", 9) == 0) {
		for (i = 9; i < len; i++)
			if (p[i] == '@')
				at = p + i;
		if (at != NULL)
			colon = memchr(p + 9, ':', (size_t)(at - p - 9));
	}
	for (i = 0; i < len && i < max; i++) {
		if (colon != NULL && p + i > colon && p + i < at) {
			if (p + i == colon + 1)
				buf_puts(err, "***");
			continue;
		}
		buf_putc(err, (unsigned char)p[i] >= 0x20 &&
		    (unsigned char)p[i] < 0x7f ? p[i] : '?');
	}
	if (len > max)
		buf_puts(err, "...");
}

int
egress_parse(const char *text, struct egress *e, struct buf *err)
{
	const char *p = text != NULL ? text : "", *end;
	const char *why;
	size_t len;

	memset(e, 0, sizeof(*e));
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		for (end = p; *end && *end != ' ' && *end != '\t'; end++)
			;
		len = (size_t)(end - p);
		if (e->n >= EGRESS_ROUTES_MAX) {
			buf_printf(err, "more than %d routes",
			    EGRESS_ROUTES_MAX);
			memset(e, 0, sizeof(*e));
			return -1;
		}
		why = len > EGRESS_TOKEN_MAX ? "too long" :
		    egress_route(p, len, &e->r[e->n]);
		if (why != NULL) {
			buf_puts(err, "bad route \"");
			egress_quote(err, p, len, 100);
			buf_printf(err, "\": %s", why);
			memset(e, 0, sizeof(*e));
			return -1;
		}
		e->n++;
		p = end;
	}
	if (e->n == 0) {
		e->r[0].kind = EGRESS_DIRECT;
		snprintf(e->r[0].name, sizeof(e->r[0].name), "direct");
		e->n = 1;
	}
	return 0;
}

struct egress *
egress_from_conf(const struct conf *c, struct buf *err)
{
	struct egress *e;

	if ((e = malloc(sizeof(*e))) == NULL) {
		buf_puts(err, "out of memory");
		return NULL;
	}
	buf_puts(err, "smtp_egress: ");
	if (egress_parse(conf_str(c, CONF_SMTP_EGRESS), e, err) == -1) {
		free(e);
		return NULL;
	}
	/* Each process (a prefork responder, a worker) starts the round
	 * at a route of its own, so that they do not all begin on the
	 * first. */
	if (getrandom(&e->next, sizeof(e->next), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(e->next))
		e->next = 0;
	buf_reset(err);
	return e;
}

int
egress_check(const struct conf *c, struct buf *err)
{
	struct egress *e = egress_from_conf(c, err);
	struct egress_pins pins;
	int rc;

	if (e == NULL)
		return -1;
	buf_puts(err, "smtp_provider_routes_file: ");
	rc = egress_pins_load(conf_str(c, CONF_SMTP_PROVIDER_ROUTES_FILE), e,
	    &pins, err);
	if (rc == 0)
		buf_reset(err);
	egress_pins_free(&pins);
	free(e);
	return rc;
}

int
egress_in(uint32_t routes, size_t r)
{
	return routes == 0 || (r < 32 && (routes & (UINT32_C(1) << r)) != 0);
}

int
egress_avoid_in(const struct egress *e, size_t r, int64_t now,
    uint32_t routes)
{
	size_t i;

	if (e == NULL || e->n <= 1 || __atomic_load_n(&e->down_until[r % e->n],
	    __ATOMIC_RELAXED) <= now)
		return 0;
	for (i = 0; i < e->n; i++)
		if (i != r % e->n && egress_in(routes, i) &&
		    __atomic_load_n(&e->down_until[i], __ATOMIC_RELAXED) <= now)
			return 1;
	return 0;	/* every route of the set is down: none is better */
}

int
egress_avoid(const struct egress *e, size_t r, int64_t now)
{
	return egress_avoid_in(e, r, now, 0);
}

void
egress_set_down(struct egress *e, size_t r, int64_t until)
{
	if (e != NULL && r < e->n)
		__atomic_store_n(&e->down_until[r], until, __ATOMIC_RELAXED);
}

size_t
egress_pick(struct egress *e)
{
	return egress_pick_in(e, 0);
}

size_t
egress_pick_in(struct egress *e, uint32_t routes)
{
	int64_t now;
	size_t i, r, c, first = (size_t)-1;

	if (e == NULL || e->n <= 1)
		return 0;
	r = __atomic_fetch_add(&e->next, 1, __ATOMIC_RELAXED) % e->n;
	now = timeutil_mono_ms();
	for (i = 0; i < e->n; i++) {
		c = (r + i) % e->n;
		if (!egress_in(routes, c))
			continue;
		if (first == (size_t)-1)
			first = c;
		if (!egress_avoid_in(e, c, now, routes))
			return c;
	}
	return first != (size_t)-1 ? first : r;
}
