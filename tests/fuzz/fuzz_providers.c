/* fuzz_providers.c: libFuzzer target for the MX provider table parser
 * (mx_providers.txt comes from an update or the operator). The first half
 * of the input is parsed as the shipped file, the second as the operator's
 * local/ one; then every token of the input is looked up. Invariants: an id found is
 * 1 to PROVIDERS_ID_MAX of [a-z0-9_-]; providers_of_mx writes a NUL-
 * terminated name of at most PROVIDERS_NAME_MAX - 1 bytes; counts add up. */
#include "engine/providers.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_providers: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
check_id(const char *id)
{
	size_t i, n;

	if (id == NULL)
		return;
	n = strlen(id);
	CHECK(n >= 1 && n <= PROVIDERS_ID_MAX);
	for (i = 0; i < n; i++)
		CHECK((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' &&
		    id[i] <= '9') || id[i] == '-' || id[i] == '_');
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char tok[300], out[PROVIDERS_NAME_MAX];
	struct providers *p = providers_new();
	struct buf msg;
	size_t half = size / 2, i, j;

	if (p == NULL)
		return 0;
	buf_init(&msg, 1 << 16);
	CHECK(providers_parse(p, text, half, "shipped", 0, &msg) ==
	    PROVIDERS_OK);
	CHECK(providers_parse(p, text + half, size - half, "local", 1, &msg) ==
	    PROVIDERS_OK);
	CHECK(providers_count(p) <= size);
	/* Every white-space separated token, with and without "*.". */
	for (i = 0; i < size; i = j + 1) {
		for (j = i; j < size && data[j] != ' ' && data[j] != '\n' &&
		    data[j] != '\t'; j++)
			continue;
		if (j - i >= sizeof(tok) - 1 || j == i)
			continue;
		memcpy(tok, text + i, j - i);
		tok[j - i] = '\0';
		check_id(providers_lookup(p, tok));
		check_id(providers_lookup(p, tok[0] == '*' && tok[1] == '.' ?
		    tok + 2 : tok));
		if (providers_of_mx(p, tok, out) == 0)
			CHECK(out[0] != '\0' && strlen(out) < PROVIDERS_NAME_MAX);
		else
			CHECK(out[0] == '\0');
	}
	providers_free(p);
	buf_free(&msg);
	return 0;
}
