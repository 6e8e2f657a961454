/* fuzz_addr.c: libFuzzer target for addr_parsen and addr_domain_parsen.
 * Invariants: no crash; outputs within their length limits; A-label
 * domains are lower-case LDH (one label or more) whose last label is not
 * all digits; a parsed address re-parses to the same normalised form, both
 * as displayed and as its SMTP path (A-label form). */
#include "engine/addr.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_addr: %s failed " \
	"(line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
check_ascii(const char *s)
{
	size_t i;

	CHECK(strlen(s) <= ADDR_ASCII_DOMAIN_MAX);
	for (i = 0; s[i] != '\0'; i++)
		CHECK((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '-' || s[i] == '.');
}

/* The last label is all digits: an IP address, never a domain. */
static int
numeric_last_label(const char *s)
{
	const char *p = strrchr(s, '.');

	p = p ? p + 1 : s;
	return strspn(p, "0123456789") == strlen(p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addr a, b;
	struct addr_domain d, d2;
	char ascii_addr[ADDR_MAX + 1], norm[ADDR_MAX + 1];
	enum addr_err e;
	size_t ln;

	e = addr_parsen((const char *)data, size, &a);
	CHECK(e < ADDR_ERR__MAX && addr_err_names[e] != NULL &&
	    addr_err_messages[e] != NULL);
	if (e == ADDR_OK) {
		ln = strlen(a.local);
		CHECK(ln >= 1 && ln <= ADDR_LOCAL_MAX);
		CHECK(strlen(a.address) <= ADDR_MAX);
		CHECK(strlen(a.normalised) <= ADDR_MAX);
		CHECK(strlen(a.domain) <= ADDR_DOMAIN_MAX);
		check_ascii(a.ascii_domain);
		CHECK(!numeric_last_label(a.ascii_domain));
		CHECK(ln + 1 + strlen(a.ascii_domain) <= ADDR_MAX);
		/* Idempotent: the cleaned address parses to the same key. */
		CHECK(addr_parse(a.address, &b) == ADDR_OK);
		CHECK(strcmp(a.normalised, b.normalised) == 0);
		CHECK(strcmp(a.address, b.address) == 0);
		/* The SMTP path is local "@" A-label domain, and parses to
		 * the same key. */
		memcpy(ascii_addr, a.local, ln);
		ascii_addr[ln] = '@';
		memcpy(ascii_addr + ln + 1, a.ascii_domain,
		    strlen(a.ascii_domain) + 1);
		CHECK(strcmp(a.smtp_path, ascii_addr) == 0);
		CHECK(addr_parse(a.smtp_path, &b) == ADDR_OK);
		CHECK(strcmp(a.normalised, b.normalised) == 0);
		CHECK(strcmp(a.ascii_domain, b.ascii_domain) == 0);
		/* The key is itself a valid address with the same key. */
		CHECK(addr_normalise(a.normalised, norm, sizeof(norm)) ==
		    ADDR_OK);
		CHECK(strcmp(norm, a.normalised) == 0);
	}
	e = addr_domain_parsen((const char *)data, size, &d);
	CHECK(e < ADDR_ERR__MAX);
	if (e == ADDR_OK) {
		check_ascii(d.ascii);
		CHECK(!numeric_last_label(d.ascii));
		CHECK(strlen(d.domain) <= ADDR_DOMAIN_MAX);
		CHECK(addr_domain_parse(d.domain, &d2) == ADDR_OK);
		CHECK(strcmp(d.ascii, d2.ascii) == 0);
	}
	return 0;
}
