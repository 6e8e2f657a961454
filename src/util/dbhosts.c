/* dbhosts.c: parser of the db_hosts endpoint list (see dbhosts.h). Host
 * names are letters, digits, '-', '_' and '.'; bracketed hosts are IPv6
 * literals (hex digits, ':' and '.'); ports are 1..65535. */
#include "util/dbhosts.h"
#include <stdio.h>
#include <string.h>

/* Quoted tokens are cut at 64 bytes so a message stays short. */
#define DBHOSTS_Q(len) ((len) > 64 ? 64 : (int)(len))

static int
dbhosts_namechar(char ch, int bracketed)
{
	if (bracketed)
		return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
		    (ch >= 'A' && ch <= 'F') || ch == ':' || ch == '.';
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
	    (ch >= 'A' && ch <= 'Z') || ch == '-' || ch == '_' || ch == '.';
}

/* One endpoint from tok[0..len). */
static int
dbhosts_one(const char *tok, size_t len, struct dbhost *h, struct buf *err)
{
	const char *host = tok, *port = NULL, *end = tok + len;
	size_t hlen, i;
	unsigned long v = 0;
	int br = 0;

	if (*tok == '[') {
		const char *close = memchr(tok, ']', len);

		if (close == NULL) {
			buf_printf(err, "\"%.*s\": no ']'", DBHOSTS_Q(len), tok);
			return -1;
		}
		br = 1;
		host = tok + 1;
		hlen = (size_t)(close - host);
		if (close + 1 < end) {
			if (close[1] != ':') {
				buf_printf(err, "\"%.*s\": ':' expected after "
				    "']'", DBHOSTS_Q(len), tok);
				return -1;
			}
			port = close + 2;
		}
	} else {
		const char *colon = memchr(tok, ':', len);

		hlen = colon ? (size_t)(colon - tok) : len;
		if (colon)
			port = colon + 1;
	}
	if (hlen == 0 || hlen > DBHOSTS_HOST_MAX) {
		buf_printf(err, "\"%.*s\": host empty or too long", DBHOSTS_Q(len),
		    tok);
		return -1;
	}
	for (i = 0; i < hlen; i++)
		if (!dbhosts_namechar(host[i], br)) {
			buf_printf(err, "\"%.*s\": bad character in host",
			    DBHOSTS_Q(len), tok);
			return -1;
		}
	if (port != NULL) {
		if (port == end || end - port > 5) {
			buf_printf(err, "\"%.*s\": bad port", DBHOSTS_Q(len), tok);
			return -1;
		}
		for (; port < end; port++) {
			if (*port < '0' || *port > '9') {
				buf_printf(err, "\"%.*s\": bad port", DBHOSTS_Q(len),
				    tok);
				return -1;
			}
			v = v * 10 + (unsigned long)(*port - '0');
		}
		if (v < 1 || v > 65535) {
			buf_printf(err, "\"%.*s\": port not in 1..65535",
			    DBHOSTS_Q(len), tok);
			return -1;
		}
	} else
		v = DBHOSTS_DEFAULT_PORT;
	memcpy(h->host, host, hlen);
	h->host[hlen] = '\0';
	h->port = (unsigned)v;
	return 0;
}

int
dbhosts_parse(const char *s, struct dbhost *out, size_t max, size_t *n,
    struct buf *err)
{
	size_t len, i, k = 0;

	*n = 0;
	while (*s) {
		s += strspn(s, " \t,");
		if (*s == '\0')
			break;
		len = strcspn(s, " \t,");
		if (k == max) {
			buf_printf(err, "more than %zu endpoints", max);
			return -1;
		}
		if (dbhosts_one(s, len, &out[k], err) == -1)
			return -1;
		for (i = 0; i < k; i++)
			if (out[i].port == out[k].port &&
			    strcmp(out[i].host, out[k].host) == 0) {
				buf_printf(err, "\"%.*s\" listed twice",
				    DBHOSTS_Q(len), s);
				return -1;
			}
		k++;
		s += len;
	}
	*n = k;
	return 0;
}

void
dbhosts_format(const struct dbhost *h, char *dst, size_t len)
{
	if (strchr(h->host, ':') != NULL)
		snprintf(dst, len, "[%s]:%u", h->host, h->port);
	else
		snprintf(dst, len, "%s:%u", h->host, h->port);
}
