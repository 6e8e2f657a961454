/* urlguard.h: the SSRF guard for outbound URLs that customers give
 * (webhooks, callbacks, files to fetch): what a URL may be when it is
 * accepted, and which resolved addresses a connection may go to. */
#ifndef SVC_URLGUARD_H
#define SVC_URLGUARD_H
#include "util/ipnet.h"

#define URLGUARD_MAX_LEN	2048

enum urlguard_reason {
	URLGUARD_OK,
	URLGUARD_TOO_LONG,		/* over URLGUARD_MAX_LEN characters */
	URLGUARD_BAD_CHAR,		/* control character, space, backslash */
	URLGUARD_MALFORMED,		/* libcurl's URL parser refuses it */
	URLGUARD_BAD_SCHEME,		/* not https (or http when allowed) */
	URLGUARD_NO_HOST,
	URLGUARD_BAD_HOST,		/* not an ASCII name or an IP literal */
	URLGUARD_LOCALHOST,		/* localhost or *.localhost */
	URLGUARD_PRIVATE_ADDRESS,	/* an IP literal ipnet_is_private */
	URLGUARD_BAD_PORT,		/* not 443, 80 for http, or listed */
	URLGUARD_NOMEM,			/* could not be checked */
	URLGUARD__MAX
};

extern const char *const urlguard_reason_names[URLGUARD__MAX];

/*
 * Whether url may be used as an outbound URL. With allow_private (the
 * allow_private_urls setting) http is allowed too and the host is not
 * checked against localhost and private addresses; the syntax is checked
 * either way. Host names are resolved later: a connection must then check
 * every address with urlguard_addr_allowed.
 */
enum urlguard_reason urlguard_check(const char *url, int allow_private);
/* A short text saying what is wrong ("" for URLGUARD_OK). */
const char	*urlguard_message(enum urlguard_reason, int allow_private);
/* The port of a URL that urlguard_check allowed: URLGUARD_OK when it is
 * 443, 80 with http, or one of ports (the allow_url_ports setting: port
 * numbers separated by commas or blanks), else URLGUARD_BAD_PORT (or
 * URLGUARD_MALFORMED, URLGUARD_NOMEM). */
enum urlguard_reason urlguard_check_port(const char *url, const char *ports);
/* Whether ports is a list urlguard_check_port reads: port numbers (1 to
 * 65535) separated by commas or blanks, or empty. */
int		 urlguard_ports_valid(const char *ports);
/* Whether a connection may go to this (resolved) address. */
int		 urlguard_addr_allowed(const struct ipnet *, int allow_private);
#endif
