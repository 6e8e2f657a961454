/* fuzz_url.c: libFuzzer target for the outbound URL guard (src/util/
 * urlguard.c). The input is the URL. Invariants: no crash or leak; every
 * answer has a name and a message; what is accepted without
 * allow_private_urls is accepted with it; an accepted URL is at most 2048
 * characters without control characters, spaces or backslashes, and
 * libcurl reads it as https (http too only with allow_private_urls) with a
 * host; without allow_private_urls that host is not localhost, and an IP
 * literal in it (bracketed IPv6, or IPv4 in any form inet_aton takes, a
 * trailing dot ignored) is not a private address; its port passes
 * urlguard_check_port with no list only when it is 443, or 80 with http. */
#include "util/urlguard.h"
#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_url: %s failed " \
	"(line %d)\n", #c, __LINE__); abort(); } } while (0)

/* The host as libcurl reads it, and its scheme; NULL if it does not. */
static char *
curl_host(const char *url, int *https)
{
	CURLU *u = curl_url();
	char *host = NULL, *scheme = NULL;

	CHECK(u != NULL);
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
		*https = strcmp(scheme, "https") == 0 ? 1 :
		    strcmp(scheme, "http") == 0 ? 0 : -1;
	curl_free(scheme);
	curl_url_cleanup(u);
	return host;
}

/* The port libcurl will connect to (its scheme's default when none is
 * given); -1 if it cannot say. */
static long
curl_port(const char *url)
{
	CURLU *u = curl_url();
	char *port = NULL;
	long p = -1;

	CHECK(u != NULL);
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
	    CURLUE_OK)
		p = strtol(port, NULL, 10);
	curl_free(port);
	curl_url_cleanup(u);
	return p;
}

/* Without allow_private_urls: the accepted host names no local address. */
static void
check_public_host(const char *host)
{
	char h[300];
	size_t n = strlen(host);
	struct ipnet a;
	struct in_addr in;

	CHECK(n > 0 && n < sizeof(h));
	memcpy(h, host, n + 1);
	if (h[0] == '[') {
		CHECK(n > 2 && h[n - 1] == ']');
		h[n - 1] = '\0';
		CHECK(ipnet_parse_addr(h + 1, &a) == 0);
		CHECK(!ipnet_is_private(&a));
		return;
	}
	if (h[n - 1] == '.')
		h[--n] = '\0';
	CHECK(strcasecmp(h, "localhost") != 0);
	CHECK(n <= 10 || strcasecmp(h + n - 10, ".localhost") != 0);
	if (inet_aton(h, &in) == 1) {
		memset(&a, 0, sizeof(a));
		a.family = 4;
		a.prefix = 32;
		memcpy(a.addr, &in.s_addr, 4);
		CHECK(!ipnet_is_private(&a));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum urlguard_reason r0, r1, rp;
	char *s, *host;
	size_t i;
	int https = -1;

	if (size > 8192 || (s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	r0 = urlguard_check(s, 0);
	r1 = urlguard_check(s, 1);
	CHECK(r0 < URLGUARD__MAX && r1 < URLGUARD__MAX);
	CHECK(urlguard_reason_names[r0] != NULL);
	CHECK(urlguard_message(r0, 0) != NULL);
	CHECK(urlguard_message(r1, 1) != NULL);
	CHECK((r0 == URLGUARD_OK) == (urlguard_message(r0, 0)[0] == '\0'));
	CHECK(urlguard_check(s, 0) == r0);
	if (r0 == URLGUARD_OK)
		CHECK(r1 == URLGUARD_OK);
	if (r1 != URLGUARD_OK)
		goto out;
	CHECK(strlen(s) <= URLGUARD_MAX_LEN);
	for (i = 0; s[i] != '\0'; i++)
		CHECK((unsigned char)s[i] > ' ' && s[i] != 0x7f &&
		    s[i] != '\\');
	host = curl_host(s, &https);
	CHECK(host != NULL && https != -1);
	if (r0 == URLGUARD_OK) {
		CHECK(https == 1);
		check_public_host(host);
	}
	curl_free(host);
	/* the port: 443, or 80 with http, unless a list allows more */
	rp = urlguard_check_port(s, "");
	CHECK(rp == URLGUARD_OK || rp == URLGUARD_BAD_PORT);
	if (rp == URLGUARD_OK)
		CHECK(curl_port(s) == 443 || (curl_port(s) == 80 && https == 0));
	else
		CHECK(urlguard_check_port(s, "1-x") == URLGUARD_BAD_PORT);
out:
	(void)urlguard_ports_valid(s);
	free(s);
	return 0;
}
