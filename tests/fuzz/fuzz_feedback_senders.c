/* fuzz_feedback_senders.c: libFuzzer target for the senders' webhook
 * payloads (feedback_senders.c): the same bytes as a Mailgun, a Postmark
 * and a SendGrid payload, a Postmark Authorization header, and a SendGrid
 * signature and verification key. Properties: an
 * accepted event has a hash, a known outcome, a valid event id and codes;
 * a refused one says why; no crash or sanitizer report on any input. */
#include "jobs/feedback_senders.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_feedback_senders: " \
	"%s failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
fuzz_check(enum feedback_sender_err rc, const struct feedback_event *ev,
    const char *why)
{
	if (rc == FEEDBACK_SENDER_INVALID) {
		CHECK(why[0] != '\0');
		return;
	}
	if (rc != FEEDBACK_SENDER_OK)
		return;
	CHECK(strlen(ev->addr_hash) == ADDRHASH_HEX_LEN);
	CHECK(ev->outcome < FEEDBACK_OUTCOME__MAX);
	CHECK(ev->event_id[0] != '\0');
	CHECK(ev->smtp_code == 0 || (ev->smtp_code >= 200 &&
	    ev->smtp_code <= 599));
	CHECK(ev->enhanced[0] == '\0' || feedback_enhanced_ok(ev->enhanced) ==
	    0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct feedback_mailgun_sig sig;
	struct feedback_event ev, many[4];
	struct addrhash_key key;
	char why[200], *text;
	enum feedback_sender_err rc;
	size_t n, ignored, i;

	memset(&key, 9, sizeof(key));
	why[0] = '\0';
	fuzz_check(feedback_senders_mailgun_parse((const char *)data, size, &key, &sig,
	    &ev, why, sizeof(why)), &ev, why);
	(void)feedback_senders_mailgun_verify("key-fuzz", &sig);
	why[0] = '\0';
	fuzz_check(feedback_senders_postmark_parse((const char *)data, size, &key, &ev,
	    why, sizeof(why)), &ev, why);
	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	(void)feedback_senders_postmark_verify(text, "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef");
	why[0] = '\0';
	rc = feedback_senders_sendgrid_parse((const char *)data, size, &key,
	    many, 4, &n, &ignored, why, sizeof(why));
	CHECK(n <= 4 && (rc != FEEDBACK_SENDER_OK || n > 0));
	for (i = 0; rc == FEEDBACK_SENDER_OK && i < n; i++)
		fuzz_check(rc, &many[i], why);
	if (rc == FEEDBACK_SENDER_INVALID)
		CHECK(why[0] != '\0');
	/* the same text as key and signature never verifies */
	CHECK(!feedback_senders_sendgrid_verify(text, text, "1764331200",
	    (const char *)data, size));
	(void)feedback_senders_sendgrid_key_ok(text);
	free(text);
	return 0;
}
