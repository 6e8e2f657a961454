/* egress_pins.c: the parser of the per-provider override file
 * (egress_pins.h), and the session options of each pin. Which sessions
 * take them is the engine's (verify.c: by the provider of the MX host)
 * and svc-worker's (sessions.c: the routes it starts sessions on). */
#include "engine/egress_pins.h"
#include "engine/addr.h"
#include "util/log.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EGRESS_PINS_TOKEN_MAX	1024

/* A provider: 1..253 of [a-z0-9._-] (folded), starting with a letter or a
 * digit. */
static int
egress_pins_provider(const char *p, size_t len, char *out)
{
	size_t i;
	char c;

	if (len == 0 || len >= EGRESS_PINS_NAME_MAX)
		return -1;
	for (i = 0; i < len; i++) {
		c = p[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    (i > 0 && (c == '.' || c == '-' || c == '_'))))
			return -1;
		out[i] = c;
	}
	out[len] = '\0';
	return 0;
}

/* A HELO name: a host name (letters, digits, '-', '.'), or an address
 * literal "[...]" of hex digits, '.', ':' (and "IPv6:"). */
static int
egress_pins_helo(const char *p, size_t len, char *out)
{
	size_t i;
	int lit = len >= 3 && p[0] == '[' && p[len - 1] == ']';

	if (len == 0 || len >= EGRESS_PINS_NAME_MAX)
		return -1;
	for (i = lit ? 1 : 0; i < (lit ? len - 1 : len); i++) {
		char c = p[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-' ||
		    (lit && c == ':'))
			continue;
		return -1;
	}
	if (!lit && (p[0] == '.' || p[0] == '-'))
		return -1;
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}

/* A sender: "" (the null sender) or an address with an ASCII local part,
 * not quoted (it goes on MAIL FROM without SMTPUTF8), its domain in
 * A-labels. */
static int
egress_pins_sender(const char *p, size_t len, struct egress_pin *pin)
{
	struct addr a;

	pin->has_mail_from = 1;
	if (len == 0) {
		pin->mail_from[0] = '\0';
		return 0;
	}
	if (len >= EGRESS_PINS_ADDR_MAX || addr_parsen(p, len, &a) != ADDR_OK ||
	    (a.flags & (ADDR_F_QUOTED | ADDR_F_UTF8_LOCAL)) != 0 ||
	    strlen(a.smtp_path) >= sizeof(pin->mail_from))
		return -1;
	memcpy(pin->mail_from, a.smtp_path, strlen(a.smtp_path) + 1);
	return 0;
}

/* The index of the route of e that tok names (as written in smtp_egress
 * or as logged), or -1. */
static int
egress_pins_route(const char *tok, size_t len, const struct egress *e)
{
	struct egress *one;
	struct buf err;
	char text[EGRESS_PINS_TOKEN_MAX + 1];
	size_t i;
	int found = -1;

	if (len > EGRESS_PINS_TOKEN_MAX)
		return -1;
	memcpy(text, tok, len);
	text[len] = '\0';
	for (i = 0; i < e->n; i++)
		if (strcmp(e->r[i].name, text) == 0)
			return (int)i;
	if ((one = malloc(sizeof(*one))) == NULL)
		return -1;
	buf_init(&err, 1024);
	if (egress_parse(text, one, &err) == 0 && one->n == 1)
		for (i = 0; i < e->n && found < 0; i++)
			if (strcmp(e->r[i].name, one->r[0].name) == 0 &&
			    strcmp(e->r[i].pass, one->r[0].pass) == 0)
				found = (int)i;
	buf_free(&err);
	free(one);
	return found;
}

/* One line (without its end); NULL or why it is bad (bad: the token). */
static const char *
egress_pins_line(const char *p, size_t len, const struct egress *e,
    struct egress_pins *out, const char **bad, size_t *badlen)
{
	struct egress_pin pin;
	const char *end = p + len, *t;
	size_t tl, i;
	int r, first = 1;

	memset(&pin, 0, sizeof(pin));
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end || *p == '#')
			break;
		for (t = p; p < end && *p != ' ' && *p != '\t'; p++)
			;
		tl = (size_t)(p - t);
		*bad = t;
		*badlen = tl;
		if (first) {
			if (egress_pins_provider(t, tl, pin.provider) == -1)
				return "bad provider (1-253 of a-z 0-9 . _ -)";
			first = 0;
		} else if (tl >= 5 && memcmp(t, "helo=", 5) == 0) {
			if (pin.helo[0] != '\0')
				return "helo= given twice";
			if (egress_pins_helo(t + 5, tl - 5, pin.helo) == -1)
				return "bad helo= (a host name or an address "
				    "literal in brackets)";
		} else if (tl >= 10 && memcmp(t, "mail_from=", 10) == 0) {
			if (pin.has_mail_from)
				return "mail_from= given twice";
			if (egress_pins_sender(t + 10, tl - 10, &pin) == -1)
				return "bad mail_from= (an address, or empty "
				    "for <>)";
		} else if (memchr(t, '=', tl) != NULL &&
		    !(tl > 9 && memcmp(t, "socks5://", 9) == 0))
			return "unknown option (helo=, mail_from=)";
		else if ((r = egress_pins_route(t, tl, e)) < 0)
			return "not one of smtp_egress's routes";
		else
			pin.routes |= UINT32_C(1) << r;
	}
	if (first)
		return NULL;		/* blank or a comment */
	*bad = NULL;
	if (pin.routes == 0)
		return "no route given";
	for (i = 0; i < out->n; i++)
		if (strcmp(out->v[i].provider, pin.provider) == 0)
			return "the provider has a line already";
	if (out->n >= EGRESS_PINS_MAX)
		return "too many lines";
	if (out->n % 16 == 0) {
		struct egress_pin *v = realloc(out->v, (out->n + 16) *
		    sizeof(*v));

		if (v == NULL)
			return "out of memory";
		out->v = v;
	}
	out->v[out->n++] = pin;
	return NULL;
}

int
egress_pins_parse(const char *text, size_t len, const struct egress *e,
    struct egress_pins *out, struct buf *err)
{
	const char *p = text, *end = text + len, *nl, *why, *bad;
	size_t line = 0, badlen = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		line++;
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			nl = end;
		bad = NULL;
		why = memchr(p, '\0', (size_t)(nl - p)) != NULL ?
		    "a NUL byte" : egress_pins_line(p, (size_t)(nl - p) -
		    (nl > p && nl[-1] == '\r'), e, out, &bad, &badlen);
		if (why != NULL) {
			buf_printf(err, "line %zu: ", line);
			if (bad != NULL) {
				buf_putc(err, '"');
				egress_quote(err, bad, badlen, 80);
				buf_puts(err, "\": ");
			}
			buf_puts(err, why);
			egress_pins_free(out);
			return -1;
		}
		p = nl + (nl < end);
	}
	return 0;
}

int
egress_pins_load(const char *path, const struct egress *e,
    struct egress_pins *out, struct buf *err)
{
	struct buf text;
	char chunk[8192];
	size_t got;
	FILE *f;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (path == NULL || path[0] == '\0')
		return 0;
	if ((f = fopen(path, "re")) == NULL) {
		buf_printf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	buf_init(&text, EGRESS_PINS_FILE_MAX);
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_append(&text, chunk, got) == -1) {
			buf_printf(err, "%s: larger than %d bytes", path,
			    EGRESS_PINS_FILE_MAX);
			goto out;
		}
	if (ferror(f)) {
		buf_printf(err, "%s: cannot be read", path);
		goto out;
	}
	buf_printf(err, "%s: ", path);
	if (egress_pins_parse(text.data != NULL ? text.data : "", text.len, e,
	    out, err) == 0) {
		buf_reset(err);
		rc = 0;
	}
out:
	fclose(f);
	buf_free(&text);
	return rc;
}

const struct egress_pin *
egress_pins_find(const struct egress_pins *ps, const char *provider)
{
	size_t i;

	if (ps == NULL || provider == NULL || provider[0] == '\0')
		return NULL;
	for (i = 0; i < ps->n; i++)
		if (strcasecmp(ps->v[i].provider, provider) == 0)
			return &ps->v[i];
	return NULL;
}

struct smtp_opts *
egress_pins_opts(const struct egress_pins *ps, const struct smtp_opts *base)
{
	const struct egress_pin *pin;
	struct smtp_opts *o;
	const char *from;
	size_t i;

	if (ps == NULL || ps->n == 0 || (o = calloc(ps->n, sizeof(*o))) ==
	    NULL)
		return NULL;
	for (i = 0; i < ps->n; i++) {
		pin = &ps->v[i];
		o[i] = *base;
		o[i].routes = pin->routes;
		if (pin->helo[0] != '\0')
			o[i].helo_name = pin->helo;
		if (pin->has_mail_from)
			o[i].mail_from = pin->mail_from;
		/* (the sender's domain only: no whole address in logs) */
		from = strrchr(o[i].mail_from, '@');
		log_info("event=egress_pin provider=%s routes=%#x helo=%s "
		    "mail_from_domain=%s", pin->provider,
		    (unsigned)pin->routes, o[i].helo_name,
		    from != NULL ? from + 1 : "-");
	}
	return o;
}

void
egress_pins_free(struct egress_pins *ps)
{
	if (ps == NULL)
		return;
	free(ps->v);
	memset(ps, 0, sizeof(*ps));
}
