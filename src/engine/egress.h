/* egress.h: the routes SMTP probes leave by (setting smtp_egress): a
 * space-separated list of "direct" (the default), "bind:ADDRESS" (an IPv4
 * or IPv6 source address bound before connect) and
 * "socks5://[USER:PASS@]HOST:PORT[#egress=ADDRESS]" (a SOCKS5 proxy, RFC
 * 1928, by address or host name, with username/password authentication, RFC 1929, when USER:PASS
 * is given; ADDRESS: the address the proxy connects from, as mail servers
 * see it, for svcadm doctor's blocklist check, else unknown to us).
 * The parser, and the pick that spreads sessions over the routes. */
#ifndef SVC_EGRESS_H
#define SVC_EGRESS_H
#include "util/buf.h"
#include "util/conf.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define EGRESS_ROUTES_MAX	32
#define EGRESS_CRED_MAX		255	/* RFC 1929: 1..255 octets each */
#define EGRESS_NAME_MAX		(EGRESS_CRED_MAX + 300)
#define EGRESS_ADDR_TEXT	46	/* INET6_ADDRSTRLEN */

enum egress_kind {
	EGRESS_DIRECT,
	EGRESS_BIND,
	EGRESS_SOCKS5,
	EGRESS__MAX
};
extern const char *const egress_kind_names[EGRESS__MAX];

struct egress_route {
	enum egress_kind kind;
	/* bind: the source address (port 0); socks5: the proxy. */
	struct sockaddr_storage sa;
	socklen_t	 salen;
	int		 family;		/* AF_INET, AF_INET6; 0: direct */
	char		 user[EGRESS_CRED_MAX + 1];	/* socks5; "" none */
	char		 pass[EGRESS_CRED_MAX + 1];
	/* socks5 by host name: the name (its address, in sa, is looked up
	 * when the route is used: egress_resolve.h; family 0 until then or
	 * while it does not resolve), the port, and when to look it up
	 * again (monotonic ms); "" for a proxy by address */
	char		 host[254];
	unsigned	 port;
	int64_t		 resolve_at;
	/* socks5 "#egress=ADDRESS": the proxy's outgoing address as text
	 * (IPv6 without brackets); "": not known */
	char		 egress_addr[EGRESS_ADDR_TEXT];
	/* For logs: "direct", "bind:192.0.2.1", "socks5://user@[::1]:1080"
	 * (never the password). */
	char		 name[EGRESS_NAME_MAX + 1];
};

struct egress {
	size_t		 n;			/* 1..EGRESS_ROUTES_MAX */
	struct egress_route r[EGRESS_ROUTES_MAX];
	unsigned	 next;			/* round robin */
	/* A route marked down (a proxy that failed: egress_down.h) until
	 * this monotonic clock time (ms); 0: up. Set by the program that
	 * owns the egress, read by its sessions. */
	int64_t		 down_until[EGRESS_ROUTES_MAX];
};

/* Parses the setting's text into *e (empty or blank: one direct route).
 * 0, or -1 with the first bad route and why in err. Pure: no DNS, no
 * sockets (a proxy's HOST is an IP address literal, IPv6 in brackets, or
 * a host name, looked up later: egress_resolve.h). */
int	 egress_parse(const char *text, struct egress *e, struct buf *err);
/* A route's text as written, for an error message: printable, at most max
 * bytes ("..." after), a socks5:// password replaced by "***". */
void	 egress_quote(struct buf *err, const char *p, size_t len, size_t max);
/* The setting of a configuration, parsed into a new egress (free()), its
 * round robin starting at a random route; NULL with "smtp_egress: ..." in
 * err when it is bad or no memory. */
struct egress *egress_from_conf(const struct conf *, struct buf *err);
/* Whether the configuration's smtp_egress parses, and its
 * smtp_provider_routes_file (egress_pins.h) with it: 0, or -1 with the
 * message in err (programs check it at start, before they serve). */
int	 egress_check(const struct conf *, struct buf *err);
/* The route the next session starts with: one after another (round
 * robin, shared by the threads of a process), skipping routes marked down
 * while another is up. */
size_t	 egress_pick(struct egress *);
/* Route r is marked down at now, and another route is not. */
int	 egress_avoid(const struct egress *, size_t r, int64_t now);
/* A set of routes (a provider pinned to some: egress_pins.h): bit i for
 * route i; 0 for all of them. Whether route r is in it. */
int	 egress_in(uint32_t routes, size_t r);
/* egress_pick among the routes of the set only. */
size_t	 egress_pick_in(struct egress *, uint32_t routes);
/* Route r is marked down at now, and another route of the set is not. */
int	 egress_avoid_in(const struct egress *, size_t r, int64_t now,
	    uint32_t routes);
/* Marks route r down until (monotonic ms; 0: up). */
void	 egress_set_down(struct egress *, size_t r, int64_t until);
#endif
