/* fuzz_dbhosts.c: libFuzzer target for the db_hosts endpoint list parser.
 * Invariants: no crash or leak; a refused list says why; an accepted list
 * has 0..DBHOSTS_MAX entries, each with a non-empty host of allowed
 * characters and a port in 1..65535, and each formats to text that parses
 * back to the same endpoint. */
#include "util/dbhosts.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_dbhosts: %s failed " \
	"(line %d)\n", #c, __LINE__); abort(); } } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dbhost h[DBHOSTS_MAX], back[DBHOSTS_MAX];
	char *s, text[DBHOSTS_HOST_MAX + 16];
	struct buf err;
	size_t n, m, i;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	buf_init(&err, 256);
	if (dbhosts_parse(s, h, DBHOSTS_MAX, &n, &err) == -1)
		CHECK(err.len > 0);
	else {
		CHECK(n <= DBHOSTS_MAX);
		for (i = 0; i < n; i++) {
			CHECK(h[i].host[0] != '\0');
			CHECK(h[i].port >= 1 && h[i].port <= 65535);
			dbhosts_format(&h[i], text, sizeof(text));
			CHECK(dbhosts_parse(text, back, 1, &m, &err) == 0);
			CHECK(m == 1 && back[0].port == h[i].port &&
			    strcmp(back[0].host, h[i].host) == 0);
		}
	}
	buf_free(&err);
	free(s);
	return 0;
}
