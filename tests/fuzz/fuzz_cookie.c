/* fuzz_cookie.c: libFuzzer target for the Cookie header parser
 * (util/cookie.c). Invariants: no crash or overread; a found value is
 * non-empty, fits the buffer, holds only RFC 6265 cookie-octets, and
 * occurs in the input. */
#include "util/cookie.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_cookie: %s failed " \
	"(line %d)\n", #c, __LINE__); abort(); } } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	char *h, out[48];
	size_t i, len;

	if ((h = malloc(n + 1)) == NULL)
		return 0;
	memcpy(h, data, n);
	h[n] = '\0';
	if (cookie_get(h, "svc_session", out, sizeof(out)) == 0) {
		len = strlen(out);
		CHECK(len > 0 && len < sizeof(out));
		for (i = 0; i < len; i++)
			CHECK(out[i] > 0x20 && out[i] < 0x7f && out[i] != '"' &&
			    out[i] != ';' && out[i] != ',' && out[i] != '\\');
		CHECK(strstr(h, out) != NULL);
	}
	free(h);
	return 0;
}
