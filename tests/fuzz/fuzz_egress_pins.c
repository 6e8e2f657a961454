/* fuzz_egress_pins.c: libFuzzer target for the per-provider override file
 * (smtp_provider_routes_file), against fixed routes (direct, two bind:
 * addresses, a SOCKS5 proxy with a password). Invariants: no crash or
 * leak; success gives pins whose provider is non-empty, lower-case and
 * unique, whose routes are a non-empty set of the egress's routes, whose
 * HELO name and sender are printable without spaces or angle brackets;
 * failure gives "line N: ..." without the proxy's password (unless the
 * word is in the input elsewhere), and no pins. */
#include "engine/egress_pins.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_egress_pins: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
check_text(const char *s, size_t size)
{
	CHECK(memchr(s, '\0', size) != NULL);
	for (; *s; s++)
		CHECK((unsigned char)*s > 0x20 && (unsigned char)*s < 0x7f &&
		    *s != '<' && *s != '>');
}

/* Whether every "s3cret" of the input is the password of a route token
 * "socks5://joe:s3cret@..." (then no message may show it). */
static int
only_as_password(const uint8_t *data, size_t size)
{
	static const char pre[] = "socks5://joe:";
	size_t i, pl = sizeof(pre) - 1;

	for (i = 0; i + 6 <= size; i++) {
		if (memcmp(data + i, "s3cret", 6) != 0)
			continue;
		if (i < pl || memcmp(data + i - pl, pre, pl) != 0 ||
		    i + 6 >= size || data[i + 6] != '@' ||
		    (i > pl && data[i - pl - 1] != ' ' &&
		    data[i - pl - 1] != '\t' && data[i - pl - 1] != '\n'))
			return 0;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct egress *e;
	struct egress_pins ps;
	struct buf err;
	const char *p;
	size_t i, k;

	if (e == NULL) {
		CHECK((e = malloc(sizeof(*e))) != NULL);
		buf_init(&err, 1024);
		CHECK(egress_parse("direct bind:127.0.0.2 bind:[::1] "
		    "socks5://joe:s3cret@127.0.0.1:1080", e, &err) == 0);
		buf_free(&err);
	}
	buf_init(&err, 64 * 1024);
	if (egress_pins_parse((const char *)data, size, e, &ps, &err) == 0) {
		CHECK(ps.n <= EGRESS_PINS_MAX);
		for (i = 0; i < ps.n; i++) {
			const struct egress_pin *pin = &ps.v[i];

			check_text(pin->provider, sizeof(pin->provider));
			CHECK(pin->provider[0] != '\0');
			for (p = pin->provider; *p; p++)
				CHECK(!(*p >= 'A' && *p <= 'Z'));
			CHECK(pin->routes != 0);
			CHECK((pin->routes >> e->n) == 0);
			check_text(pin->helo, sizeof(pin->helo));
			check_text(pin->mail_from, sizeof(pin->mail_from));
			CHECK(pin->has_mail_from || pin->mail_from[0] == '\0');
			CHECK(egress_pins_find(&ps, pin->provider) == pin);
			for (k = 0; k < i; k++)
				CHECK(strcmp(ps.v[k].provider,
				    pin->provider) != 0);
		}
	} else {
		CHECK(ps.n == 0 && ps.v == NULL);
		CHECK(strncmp(buf_str(&err), "line ", 5) == 0);
		/* the password of a proxy route is never echoed (the input
		 * may hold the word elsewhere: then it may be) */
		if (only_as_password(data, size))
			CHECK(strstr(buf_str(&err), "s3cret") == NULL);
	}
	egress_pins_free(&ps);
	buf_free(&err);
	return 0;
}
