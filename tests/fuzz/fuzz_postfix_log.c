/* fuzz_postfix_log.c: libFuzzer target for the Postfix log line reader
 * (util/postfix_log.c). Invariants: no crash or overread; a delivery read
 * has a queue id of 5 to 32 letters and digits, an address without spaces
 * that occurs in the input, a known status, an empty or well-formed dsn
 * and a reply code of 0 or 200-599. */
#include "util/postfix_log.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_postfix_log: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct postfix_log_delivery d;
	char *line;
	size_t q;

	if ((line = malloc(n + 1)) == NULL)
		return 0;
	memcpy(line, data, n);
	line[n] = '\0';
	if (postfix_log_parse((const char *)data, n, 1795894709, &d) ==
	    POSTFIX_LOG_OK) {
		q = strlen(d.queue_id);
		CHECK(q >= 5 && q <= POSTFIX_LOG_QUEUE_ID_MAX);
		CHECK(d.to[0] != '\0' && strchr(d.to, ' ') == NULL);
		CHECK(strstr(line, d.to) != NULL);
		CHECK(d.status < POSTFIX_LOG_STATUS__MAX);
		CHECK(d.dsn[0] == '\0' || ((d.dsn[0] == '2' || d.dsn[0] == '4' ||
		    d.dsn[0] == '5') && d.dsn[1] == '.'));
		CHECK(d.smtp_code == 0 || (d.smtp_code >= 200 &&
		    d.smtp_code <= 599));
	}
	free(line);
	return 0;
}
