/* svc-webhook-check.c: checks one recorded delivery with libsvc-sdk, for
 * the integration tests (tests/integration/test_webhooks.sh):
 *
 *   svc-webhook-check HEADER BODY-FILE NOW SECRET...
 *
 * prints svc_webhook_verify's result name (tolerance
 * SVC_WEBHOOK_TOLERANCE) and exits 0 for ok, 1 otherwise, 2 on usage. */
#include "sdk/svc-sdk.h"
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
	static char body[16 * 1024 * 1024];
	enum svc_webhook_result r;
	size_t len;
	FILE *f;

	if (argc < 5 || (f = fopen(argv[2], "rb")) == NULL) {
		fprintf(stderr, "usage: svc-webhook-check HEADER BODY-FILE NOW "
		    "SECRET...\n");
		return 2;
	}
	len = fread(body, 1, sizeof(body), f);
	fclose(f);
	r = svc_webhook_verify(argv[1], body, len,
	    (const char *const *)argv + 4, (size_t)(argc - 4),
	    SVC_WEBHOOK_TOLERANCE, strtoll(argv[3], NULL, 10));
	printf("%s\n", svc_webhook_result_name(r));
	return r == SVC_WEBHOOK_OK ? 0 : 1;
}
