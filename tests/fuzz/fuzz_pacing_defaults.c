/* fuzz_pacing_defaults.c: libFuzzer target for the pacing defaults parser
 * (engine/pacing_defaults.c). Invariants: it never fails but for memory,
 * every entry it keeps has a valid pattern, a rate and a penalty in range
 * and no two entries share a pattern; a lookup of every pattern (as a
 * provider and as a host under a suffix) finds an entry. */
#include "engine/pacing_defaults.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_pacing_defaults: " \
	"%s failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pacing_defaults d;
	struct buf msg;
	char host[PACING_PATTERN_MAX + 8];
	size_t i, j;

	memset(&d, 0, sizeof(d));
	buf_init(&msg, 1024 * 1024);
	CHECK(pacing_defaults_parse(&d, "fuzz", (const char *)data, size,
	    &msg) == 0);
	for (i = 0; i < d.n; i++) {
		CHECK(d.v[i].pattern[0] != '\0');
		CHECK(d.v[i].start_rate >= 1 &&
		    d.v[i].start_rate <= PACING_RATE_MAX);
		CHECK(d.v[i].penalty_s >= 1 &&
		    d.v[i].penalty_s <= PACING_PENALTY_MAX);
		for (j = i + 1; j < d.n; j++)
			CHECK(strcasecmp(d.v[i].pattern, d.v[j].pattern) != 0);
		if (strncmp(d.v[i].pattern, "*.", 2) == 0) {
			snprintf(host, sizeof(host), "mx%s", d.v[i].pattern + 1);
			CHECK(pacing_defaults_match(&d, NULL, host) != NULL);
		} else
			CHECK(pacing_defaults_match(&d, d.v[i].pattern,
			    d.v[i].pattern) != NULL);
	}
	pacing_defaults_free(&d);
	buf_free(&msg);
	return 0;
}
