/* urlguard.c: the SSRF guard for outbound URLs given by customers. The URL
 * is parsed by libcurl's URL API, the parser that will fetch it, so the
 * guard judges the host the fetch will use (curl decodes percent-encoding
 * in the host and turns "127.1", "0x7f.0.0.1" or "2130706433" into
 * "127.0.0.1"). Host names are resolved only when a connection is made,
 * which must check each address with urlguard_addr_allowed. */
#include "util/urlguard.h"
#include "util/strparse.h"
#include <arpa/inet.h>
#include <curl/curl.h>
#include <string.h>
#include <strings.h>

const char *const urlguard_reason_names[URLGUARD__MAX] = {
	[URLGUARD_OK] = "ok",
	[URLGUARD_TOO_LONG] = "too_long",
	[URLGUARD_BAD_CHAR] = "bad_character",
	[URLGUARD_MALFORMED] = "malformed",
	[URLGUARD_BAD_SCHEME] = "bad_scheme",
	[URLGUARD_NO_HOST] = "no_host",
	[URLGUARD_BAD_HOST] = "bad_host",
	[URLGUARD_LOCALHOST] = "localhost",
	[URLGUARD_PRIVATE_ADDRESS] = "private_address",
	[URLGUARD_BAD_PORT] = "port_not_allowed",
	[URLGUARD_NOMEM] = "out_of_memory",
};

static const char *const urlguard_messages[URLGUARD__MAX] = {
	[URLGUARD_OK] = "",
	[URLGUARD_TOO_LONG] = "the URL is longer than 2048 characters",
	[URLGUARD_BAD_CHAR] = "the URL contains a control character, a space "
	    "or a backslash",
	[URLGUARD_MALFORMED] = "not a valid URL",
	[URLGUARD_BAD_SCHEME] = "the URL must start with https://",
	[URLGUARD_NO_HOST] = "the URL has no host",
	[URLGUARD_BAD_HOST] = "the host must be an IP address or a name of "
	    "ASCII letters, digits, '-', '_' and '.' (xn-- for others)",
	[URLGUARD_LOCALHOST] = "the host is localhost",
	[URLGUARD_PRIVATE_ADDRESS] = "the host is a private, loopback, "
	    "link-local or reserved address",
	[URLGUARD_BAD_PORT] = "the URL's port is not allowed (443, or 80 "
	    "for http)",
	[URLGUARD_NOMEM] = "the URL could not be checked (out of memory)",
};

#define URLGUARD_NAME_CHARS	"abcdefghijklmnopqrstuvwxyz" \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._"

const char *
urlguard_message(enum urlguard_reason r, int allow_private)
{
	if (r == URLGUARD_BAD_SCHEME && allow_private)
		return "the URL must start with https:// or http://";
	return r < URLGUARD__MAX ? urlguard_messages[r] : "";
}

int
urlguard_addr_allowed(const struct ipnet *a, int allow_private)
{
	return allow_private || !ipnet_is_private(a);
}

/* Whether a host name is an IPv4 address in one of the forms the resolver
 * (inet_aton) takes: "127.1", "0x7f.0.0.1", "0177.0.0.1", "2130706433".
 * curl rewrites most of them as dotted quads, but not all ("127.1." is
 * left alone). The name holds no white space, after which inet_aton would
 * ignore the rest. */
static int
urlguard_numeric_v4(const char *h, struct ipnet *a)
{
	struct in_addr in;

	if (inet_aton(h, &in) == 0)
		return 0;
	memset(a, 0, sizeof(*a));
	a->family = 4;
	a->prefix = 32;
	memcpy(a->addr, &in.s_addr, 4);
	return 1;
}

/* An IPv6 literal as curl gives it: "[...]", any zone id split off. */
static enum urlguard_reason
urlguard_host_v6(const char *host, int zone, int allow_private)
{
	char h[64];
	size_t n = strlen(host);
	struct ipnet a;

	if (n < 3 || host[n - 1] != ']' || n - 2 >= sizeof(h))
		return URLGUARD_BAD_HOST;
	memcpy(h, host + 1, n - 2);
	h[n - 2] = '\0';
	if (ipnet_parse_addr(h, &a) == -1)
		return URLGUARD_BAD_HOST;
	/* a zone id names a local link */
	if (!allow_private && (zone || !urlguard_addr_allowed(&a, 0)))
		return URLGUARD_PRIVATE_ADDRESS;
	return URLGUARD_OK;
}

static enum urlguard_reason
urlguard_host(const char *host, int zone, int allow_private)
{
	char h[256];
	size_t n = strlen(host);
	struct ipnet a;

	if (host[0] == '[')
		return urlguard_host_v6(host, zone, allow_private);
	if (strspn(host, URLGUARD_NAME_CHARS) != n)
		return URLGUARD_BAD_HOST;
	/* "localhost." and "127.1." are the names without the dot */
	if (n > 0 && host[n - 1] == '.')
		n--;
	if (n == 0 || n >= sizeof(h))
		return URLGUARD_BAD_HOST;
	memcpy(h, host, n);
	h[n] = '\0';
	if (h[0] == '.' || strstr(h, "..") != NULL)
		return URLGUARD_BAD_HOST;
	if (allow_private)
		return URLGUARD_OK;
	if (strcasecmp(h, "localhost") == 0 || (n > 10 &&
	    strcasecmp(h + n - 10, ".localhost") == 0))
		return URLGUARD_LOCALHOST;
	if (urlguard_numeric_v4(h, &a) && !urlguard_addr_allowed(&a, 0))
		return URLGUARD_PRIVATE_ADDRESS;
	return URLGUARD_OK;
}

/* curl_url_set's refusals, in the guard's reasons. */
static enum urlguard_reason
urlguard_from_curl(CURLUcode rc)
{
	switch (rc) {
	case CURLUE_OUT_OF_MEMORY:
		return URLGUARD_NOMEM;
	case CURLUE_NO_HOST:
		return URLGUARD_NO_HOST;
	case CURLUE_BAD_SCHEME:
	case CURLUE_UNSUPPORTED_SCHEME:
		return URLGUARD_BAD_SCHEME;
	case CURLUE_BAD_HOSTNAME:
	case CURLUE_BAD_IPV6:
		return URLGUARD_BAD_HOST;
	default:
		return URLGUARD_MALFORMED;
	}
}

enum urlguard_reason
urlguard_check(const char *url, int allow_private)
{
	CURLU *u;
	CURLUcode rc;
	char *scheme = NULL, *host = NULL, *zone = NULL;
	const unsigned char *p;
	enum urlguard_reason r;

	if (strnlen(url, URLGUARD_MAX_LEN + 1) > URLGUARD_MAX_LEN)
		return URLGUARD_TOO_LONG;
	for (p = (const unsigned char *)url; *p != '\0'; p++)
		if (*p <= ' ' || *p == 0x7f || *p == '\\')
			return URLGUARD_BAD_CHAR;
	if ((u = curl_url()) == NULL)
		return URLGUARD_NOMEM;
	if ((rc = curl_url_set(u, CURLUPART_URL, url, 0)) != CURLUE_OK) {
		r = urlguard_from_curl(rc);
		goto out;
	}
	if ((rc = curl_url_get(u, CURLUPART_SCHEME, &scheme, 0)) !=
	    CURLUE_OK) {
		r = urlguard_from_curl(rc);
		goto out;
	}
	if (strcmp(scheme, "https") != 0 && (strcmp(scheme, "http") != 0 ||
	    !allow_private)) {
		r = URLGUARD_BAD_SCHEME;
		goto out;
	}
	rc = curl_url_get(u, CURLUPART_HOST, &host, 0);
	if (rc == CURLUE_NO_HOST || (rc == CURLUE_OK && host[0] == '\0')) {
		r = URLGUARD_NO_HOST;
		goto out;
	}
	if (rc != CURLUE_OK) {
		r = urlguard_from_curl(rc);
		goto out;
	}
	rc = curl_url_get(u, CURLUPART_ZONEID, &zone, 0);
	if (rc != CURLUE_OK && rc != CURLUE_NO_ZONEID) {
		r = urlguard_from_curl(rc);
		goto out;
	}
	r = urlguard_host(host, zone != NULL, allow_private);
out:
	curl_free(zone);
	curl_free(host);
	curl_free(scheme);
	curl_url_cleanup(u);
	return r;
}

/* Whether port is one of list's (port numbers separated by commas or
 * blanks); -1 when list is not such a list. */
static int
urlguard_port_listed(const char *list, long port)
{
	char tok[8];
	size_t n;
	long v;
	int found = 0;

	while (*list != '\0') {
		list += strspn(list, ", \t");
		if ((n = strcspn(list, ", \t")) == 0)
			break;
		if (n >= sizeof(tok))
			return -1;
		memcpy(tok, list, n);
		tok[n] = '\0';
		if (strparse_long(tok, 1, 65535, &v) == -1)
			return -1;
		found |= v == port;
		list += n;
	}
	return found;
}

int
urlguard_ports_valid(const char *ports)
{
	return urlguard_port_listed(ports, 0) != -1;
}

enum urlguard_reason
urlguard_check_port(const char *url, const char *ports)
{
	CURLU *u;
	char *scheme = NULL, *port = NULL;
	long p;
	enum urlguard_reason r = URLGUARD_MALFORMED;

	if ((u = curl_url()) == NULL)
		return URLGUARD_NOMEM;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) !=
	    CURLUE_OK || strparse_long(port, 0, 65535, &p) == -1)
		goto out;
	/* libcurl takes ":0" (never listed: lists hold 1-65535), so a URL
	 * urlguard_check allowed with port 0 is refused as BAD_PORT, not
	 * as MALFORMED */
	if (p == 443 || (p == 80 && strcmp(scheme, "http") == 0) ||
	    urlguard_port_listed(ports ? ports : "", p) == 1)
		r = URLGUARD_OK;
	else
		r = URLGUARD_BAD_PORT;
out:
	curl_free(port);
	curl_free(scheme);
	curl_url_cleanup(u);
	return r;
}
