/* fuzz_cli_apierr.c: libFuzzer target for svc's reading of the API's
 * error answers (src/cli/apierr.c), which come from the network: both 429
 * shapes and anything else. Invariants: no crash or leak; code and
 * message are NUL-terminated within their arrays and hold no control
 * character (svc prints them); the retry wait is -1 or within a year. */
#include "cli/apierr.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_cli_apierr: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
printable(const char *s, size_t sz)
{
	size_t i, n = strnlen(s, sz);

	CHECK(n < sz);
	for (i = 0; i < n; i++)
		CHECK((unsigned char)s[i] >= 0x20 && s[i] != 0x7f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct apierr e;
	long w;

	if (size > 1024 * 1024)
		return 0;
	apierr_parse((const char *)data, size, &e);
	printable(e.code, sizeof(e.code));
	printable(e.message, sizeof(e.message));
	CHECK(e.reset_at >= 0);
	w = apierr_retry_wait(NULL, &e, 1790000000);
	CHECK(w == -1 || (w >= 1 && w <= 86400L * 365));
	CHECK((e.reset_at == 0) == (w == -1));
	return 0;
}
