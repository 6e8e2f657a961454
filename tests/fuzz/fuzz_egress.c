/* fuzz_egress.c: libFuzzer target for the smtp_egress parser. Invariants:
 * no crash or leak; success gives 1..EGRESS_ROUTES_MAX routes, each of a
 * known kind with a NUL-terminated, printable name that never holds the
 * password, a bind or socks5 route an AF_INET or AF_INET6 address of the
 * matching length or, for a proxy by host name, none yet (a bind port 0, a proxy port 1-65535; a proxy's name is
 * the scheme, the user and the address only), credentials both
 * set or both empty, a proxy's #egress= address an address in text (none
 * for other routes); failure gives an error message and no routes; the
 * names of the routes without a user parse again. */
#include "engine/egress.h"
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_egress: %s failed " \
	"(line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
check_route(const struct egress_route *r)
{
	const char *p, *hp;
	unsigned port;

	CHECK(r->kind < EGRESS__MAX);
	CHECK(memchr(r->name, '\0', sizeof(r->name)) != NULL);
	for (p = r->name; *p; p++)
		CHECK((unsigned char)*p > 0x20 && (unsigned char)*p < 0x7f);
	CHECK((r->user[0] == '\0') == (r->pass[0] == '\0'));
	/* a proxy's #egress= address: an address as text, only for proxies */
	CHECK(memchr(r->egress_addr, '\0', sizeof(r->egress_addr)) != NULL);
	CHECK(r->kind == EGRESS_SOCKS5 || r->egress_addr[0] == '\0');
	CHECK(strspn(r->egress_addr, "0123456789abcdef.:") ==
	    strlen(r->egress_addr));
	if (r->kind == EGRESS_DIRECT) {
		CHECK(strcmp(r->name, "direct") == 0);
		return;
	}
	if (r->kind == EGRESS_SOCKS5 && r->host[0] != '\0') {
		/* by host name: no address until looked up */
		CHECK(r->family == 0 && r->salen == 0);
		CHECK(r->port >= 1 && r->port <= 65535);
		CHECK(strspn(r->host, "abcdefghijklmnopqrstuvwxyz0123456789-.")
		    == strlen(r->host));
		CHECK(strstr(r->name, r->host) != NULL);
		return;
	}
	CHECK(r->family == AF_INET || r->family == AF_INET6);
	CHECK(r->salen == (r->family == AF_INET ?
	    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)));
	CHECK(r->sa.ss_family == r->family);
	port = r->family == AF_INET ?
	    ntohs(((const struct sockaddr_in *)&r->sa)->sin_port) :
	    ntohs(((const struct sockaddr_in6 *)&r->sa)->sin6_port);
	if (r->kind == EGRESS_BIND) {
		CHECK(port == 0);
		CHECK(strncmp(r->name, "bind:", 5) == 0);
	} else {
		CHECK(port >= 1);
		CHECK(strncmp(r->name, "socks5://", 9) == 0);
		/* "socks5://" [user "@"] address ":" port: the password has
		 * no place in it */
		hp = strrchr(r->name, '@');
		if (r->user[0] != '\0')
			CHECK(hp != NULL && (size_t)(hp - r->name) == 9 +
			    strlen(r->user));
		hp = hp != NULL ? hp + 1 : r->name + 9;
		CHECK(strspn(hp, "0123456789abcdef.:[]") == strlen(hp));
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct egress *e, *again;
	struct buf err, names;
	char *text;
	size_t i;

	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	e = malloc(sizeof(*e));
	again = malloc(sizeof(*again));
	CHECK(e != NULL && again != NULL);
	buf_init(&err, 4096);
	buf_init(&names, 64 * 1024);
	if (egress_parse(text, e, &err) == 0) {
		CHECK(e->n >= 1 && e->n <= EGRESS_ROUTES_MAX);
		for (i = 0; i < e->n; i++) {
			check_route(&e->r[i]);
			/* a name without a user parses back to the route */
			if (e->r[i].user[0] == '\0')
				buf_printf(&names, "%s ", e->r[i].name);
		}
		buf_reset(&err);
		CHECK(egress_parse(buf_str(&names), again, &err) == 0);
	} else {
		CHECK(err.len > 0);
		CHECK(e->n == 0);
	}
	buf_free(&err);
	buf_free(&names);
	free(e);
	free(again);
	free(text);
	return 0;
}
