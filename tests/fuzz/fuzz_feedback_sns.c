/* fuzz_feedback_sns.c: libFuzzer target for Amazon SNS messages and the
 * SES events in them (feedback_sns.c): the bytes as an SNS message (then
 * its text to sign, its URLs and its signature against a certificate that
 * is the same bytes), as an SES event, as a URL and as a list of topics.
 * Properties: a parsed message has a known Type and SignatureVersion and
 * its text to sign starts with its Message; an accepted SES event has a
 * hash, a known outcome, an id starting with the MessageId and valid
 * codes; a refusal says why; nothing verifies against these bytes; no
 * crash or sanitizer report on any input. */
#include "jobs/feedback_sns.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_feedback_sns: " \
	"%s failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
fuzz_ses(const char *text, const struct addrhash_key *key)
{
	struct feedback_event ev[4];
	enum feedback_sender_err rc;
	char why[200];
	size_t n, i;

	why[0] = '\0';
	rc = feedback_sns_ses_parse(text, "msg-1", key, ev, 4, &n, why,
	    sizeof(why));
	CHECK(rc == FEEDBACK_SENDER_OK ? n > 0 && n <= 4 : n == 0);
	if (rc == FEEDBACK_SENDER_INVALID)
		CHECK(why[0] != '\0');
	for (i = 0; rc == FEEDBACK_SENDER_OK && i < n; i++) {
		CHECK(strlen(ev[i].addr_hash) == ADDRHASH_HEX_LEN);
		CHECK(ev[i].outcome < FEEDBACK_OUTCOME__MAX);
		CHECK(strncmp(ev[i].event_id, "msg-1:", 6) == 0);
		CHECK(ev[i].smtp_code == 0 || (ev[i].smtp_code >= 200 &&
		    ev[i].smtp_code <= 599));
		CHECK(ev[i].enhanced[0] == '\0' ||
		    feedback_enhanced_ok(ev[i].enhanced) == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct feedback_sns m;
	struct addrhash_key key;
	char why[300], *text, *signed_text;
	size_t len;

	memset(&key, 7, sizeof(key));
	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	why[0] = '\0';
	if (feedback_sns_parse((const char *)data, size, &m, why,
	    sizeof(why)) == 0) {
		CHECK(m.type < FEEDBACK_SNS_TYPE__MAX);
		CHECK(m.version == 1 || m.version == 2);
		if ((signed_text = feedback_sns_string_to_sign(&m, &len)) !=
		    NULL) {
			CHECK(strncmp(signed_text, "Message\n", 8) == 0);
			CHECK(len == strlen(signed_text));
			free(signed_text);
		}
		(void)feedback_sns_url_ok(m.signing_cert_url, 1);
		(void)feedback_sns_url_ok(m.subscribe_url, 0);
		CHECK(!feedback_sns_verify(&m, text, size));
		fuzz_ses(m.message, &key);
		feedback_sns_free(&m);
	} else
		CHECK(why[0] != '\0');
	fuzz_ses(text, &key);
	(void)feedback_sns_url_ok(text, 1);
	(void)feedback_sns_url_ok(text, 0);
	(void)feedback_sns_cert_ok(text, size);
	(void)feedback_sns_topics_valid(text);
	(void)feedback_sns_topic_listed(text, "arn:aws:sns:us-east-1:1:t");
	free(text);
	return 0;
}
