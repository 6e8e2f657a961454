/* fuzz_feedback.c: libFuzzer target for the events of POST /v1/feedback
 * (feedback_event_parse) and the enhanced-code readers of bounce texts
 * (feedback_enhanced_find, feedback_enhanced_ok). The input is parsed as
 * JSON; an object's "events" (or the value itself) is checked event by
 * event. Properties: an accepted event has a 32-hex hash, a known outcome,
 * a code in range, an enhanced code that feedback_enhanced_ok accepts; a
 * refused one names a field and says why; any code found in the raw text
 * is itself valid. */
#include "jobs/feedback.h"
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_feedback: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

static void
fuzz_one(const json_t *e, const struct addrhash_key *key)
{
	struct feedback_event ev;
	char field[64], why[200];
	size_t i;

	field[0] = why[0] = '\0';
	if (feedback_event_parse(e, key, &ev, field, sizeof(field), why,
	    sizeof(why)) == -1) {
		CHECK(why[0] != '\0');
		return;
	}
	CHECK(strlen(ev.addr_hash) == ADDRHASH_HEX_LEN);
	for (i = 0; i < ADDRHASH_HEX_LEN; i++)
		CHECK(strchr("0123456789abcdef", ev.addr_hash[i]) != NULL);
	CHECK(ev.outcome < FEEDBACK_OUTCOME__MAX);
	CHECK(ev.smtp_code == 0 || (ev.smtp_code >= 200 &&
	    ev.smtp_code <= 599));
	CHECK(ev.enhanced[0] == '\0' || feedback_enhanced_ok(ev.enhanced) ==
	    0);
	CHECK(strlen(ev.event_id) <= FEEDBACK_EVENT_ID_MAX);
	if (feedback_suppresses(&ev))
		CHECK(ev.outcome == FEEDBACK_HARD_BOUNCE);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addrhash_key key;
	char *text, code[FEEDBACK_ENHANCED_MAX + 1];
	json_t *v, *events, *e;
	size_t i;

	memset(&key, 7, sizeof(key));
	if ((text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (feedback_enhanced_find(text, code) == 0)
		CHECK(feedback_enhanced_ok(code) == 0);
	free(text);
	v = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (v == NULL)
		return 0;
	events = json_is_object(v) ? json_object_get(v, "events") : NULL;
	if (json_is_array(events))
		json_array_foreach(events, i, e)
			fuzz_one(e, &key);
	else
		fuzz_one(v, &key);
	json_decref(v);
	return 0;
}
