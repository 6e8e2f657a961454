/* egress_pins.h: the per-provider override file (setting
 * smtp_provider_routes_file; empty: no pins). It pins a provider's MX
 * hosts to some of smtp_egress's routes, with a HELO name and a MAIL FROM
 * of its own. One provider a line, '#' starts a comment (at the start of a
 * line or after white space), blank lines ignored:
 *   PROVIDER ROUTE [ROUTE ...] [helo=NAME] [mail_from=ADDRESS]
 * PROVIDER is what mx_providers.txt names (google, microsoft365, ...) or,
 * for a host no pattern matches, its registrable domain (providers.h):
 * 1..253 of [a-z0-9._-] (upper case folded). ROUTE is one of smtp_egress's
 * routes, written as there ("bind:192.0.2.1", "socks5://u:p@192.0.2.9:1080")
 * or as logged (the password left out: "socks5://u@192.0.2.9:1080").
 * helo=NAME: a host name or an address literal ("[192.0.2.1]");
 * mail_from=ADDRESS: an address (an ASCII local part, not quoted; an IDN
 * domain is sent in A-labels), or empty for the null sender <>. Any bad
 * line is an error (the programs stop at start with its line number): a
 * route that is not in smtp_egress, a provider given twice, an unknown
 * option. */
#ifndef SVC_EGRESS_PINS_H
#define SVC_EGRESS_PINS_H
#include "engine/egress.h"
#include "engine/smtp.h"
#include "util/buf.h"
#include <stddef.h>
#include <stdint.h>

#define EGRESS_PINS_MAX		1024	/* lines with a pin */
#define EGRESS_PINS_FILE_MAX	(1024 * 1024)
#define EGRESS_PINS_NAME_MAX	254	/* provider, HELO name: 253 + NUL */
#define EGRESS_PINS_ADDR_MAX	255	/* an address: 254 + NUL */

struct egress_pin {
	char		 provider[EGRESS_PINS_NAME_MAX];
	uint32_t	 routes;	/* bit i: route i of the egress */
	char		 helo[EGRESS_PINS_NAME_MAX];	/* "": smtp_helo_name */
	int		 has_mail_from;	/* 0: smtp_mail_from */
	/* as it goes on the wire (an IDN domain in A-labels); "": <> */
	char		 mail_from[EGRESS_PINS_ADDR_MAX];
};

struct egress_pins {
	size_t		 n;
	struct egress_pin *v;
};

/* Parses text (len bytes, any content) against the routes of e into *out
 * (empty first). 0, or -1 with "line N: why" in err and *out empty. */
int	 egress_pins_parse(const char *text, size_t len, const struct egress *e,
	    struct egress_pins *out, struct buf *err);
/* The file at path (NULL or "": no pins, 0) parsed as above; -1 with
 * "PATH: why" (cannot be read, too large, a bad line) in err. */
int	 egress_pins_load(const char *path, const struct egress *e,
	    struct egress_pins *out, struct buf *err);
/* The pin of provider (any case), or NULL. */
const struct egress_pin *egress_pins_find(const struct egress_pins *,
	    const char *provider);
/* The options of each pin's sessions (an array of ps->n, free()): base's,
 * with the pin's routes (opts.routes), HELO name and sender, which point
 * into ps (it must outlive them); each pin logged (event=egress_pin).
 * NULL when out of memory or ps has none. */
struct smtp_opts *egress_pins_opts(const struct egress_pins *ps,
	    const struct smtp_opts *base);
void	 egress_pins_free(struct egress_pins *);
#endif
