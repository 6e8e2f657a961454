/* fuzz_svc_webhook.c: libFuzzer target for libsvc-sdk's signature header
 * parser (src/sdk/svc_webhook.c). The input is the X-Service-Signature
 * header up to the first newline and the body after it. Invariants: no
 * crash, leak or overflow; a result of the four; the same answer twice; a
 * header longer than 8192 bytes, or one with an item lacking '=' added,
 * is bad_header; with no secret nothing is ok; the check that the
 * signature is right comes before the clock (a header that matched stays
 * matched, whatever the clock says). */
#include "sdk/svc-sdk.h"
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_svc_webhook: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *secrets[] = { "whsec_fuzz", "k" };
	const uint8_t *nl = memchr(data, '\n', size);
	size_t hlen = nl ? (size_t)(nl - data) : size;
	const uint8_t *body = nl ? nl + 1 : data + size;
	size_t blen = size - hlen - (nl != NULL);
	enum svc_webhook_result r, far, none;
	char *h, *longer;

	if ((h = malloc(hlen + 1)) == NULL)
		return 0;
	memcpy(h, data, hlen);
	h[hlen] = '\0';
	r = svc_webhook_verify(h, body, blen, secrets, 2, 300, 1700000000);
	CHECK((unsigned)r < SVC_WEBHOOK__MAX);
	CHECK(strcmp(svc_webhook_result_name(r), "unknown") != 0);
	CHECK(svc_webhook_verify(h, body, blen, secrets, 2, 300,
	    1700000000) == r);
	none = svc_webhook_verify(h, body, blen, NULL, 0, 300, 1700000000);
	CHECK(none != SVC_WEBHOOK_OK && none != SVC_WEBHOOK_TIMESTAMP);
	CHECK((none == SVC_WEBHOOK_BAD_HEADER) == (r == SVC_WEBHOOK_BAD_HEADER));
	far = svc_webhook_verify(h, body, blen, secrets, 2, 0, LLONG_MIN);
	if (r == SVC_WEBHOOK_OK || r == SVC_WEBHOOK_TIMESTAMP)
		CHECK(far == SVC_WEBHOOK_TIMESTAMP ||
		    far == SVC_WEBHOOK_OK);
	else
		CHECK(far == r);
	if (strlen(h) > 8192)
		CHECK(r == SVC_WEBHOOK_BAD_HEADER);
	if ((longer = malloc(strlen(h) + 4)) != NULL) {
		memcpy(longer, h, strlen(h));
		memcpy(longer + strlen(h), ",v2", 4);
		CHECK(svc_webhook_verify(longer, body, blen, secrets, 2, 300,
		    1700000000) == SVC_WEBHOOK_BAD_HEADER);
		free(longer);
	}
	free(h);
	return 0;
}
