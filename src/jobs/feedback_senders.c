/* feedback_senders.c: Mailgun's and Postmark's webhook payloads and
 * signatures (feedback_senders.h). */
#include "jobs/feedback_senders.h"
#include "util/hex.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static enum feedback_sender_err
feedback_senders_bad(char *why, size_t whysz, const char *w)
{
	snprintf(why, whysz, "%s", w);
	return FEEDBACK_SENDER_INVALID;
}

/* A string member of at most max bytes into out: 0, or -1. */
static int
feedback_senders_str(const json_t *o, const char *name, char *out,
    size_t max)
{
	json_t *v = json_object_get(o, name);

	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) > max)
		return -1;
	strparse_copy(out, max + 1, json_string_value(v));
	return 0;
}

/* An event id as feedback.c accepts one (printable ASCII). */
static int
feedback_senders_event_id(char *id)
{
	size_t i;

	for (i = 0; id[i] != '\0'; i++)
		if (id[i] < 0x21 || id[i] > 0x7e)
			return -1;
	return i > 0 ? 0 : -1;
}

/* The codes of a delivery status: code, else the first in text. */
static void
feedback_senders_codes(struct feedback_event *ev, const json_t *code,
    const json_t *enhanced, const char *text)
{
	if (json_is_integer(code) && json_integer_value(code) >= 200 &&
	    json_integer_value(code) <= 599)
		ev->smtp_code = (int)json_integer_value(code);
	if (json_is_string(enhanced) &&
	    feedback_enhanced_ok(json_string_value(enhanced)) == 0)
		strparse_copy(ev->enhanced, sizeof(ev->enhanced),
		    json_string_value(enhanced));
	else if (text != NULL && feedback_enhanced_find(text, ev->enhanced) ==
	    -1)
		ev->enhanced[0] = '\0';
}

enum feedback_sender_err
feedback_senders_mailgun_parse(const char *body, size_t n,
    const struct addrhash_key *key, struct feedback_mailgun_sig *sig,
    struct feedback_event *ev, char *why, size_t whysz)
{
	enum feedback_sender_err rc = FEEDBACK_SENDER_INVALID;
	json_t *root, *s, *d, *ds, *v;
	const char *event, *sev;
	double ts;

	memset(sig, 0, sizeof(*sig));
	memset(ev, 0, sizeof(*ev));
	if ((root = json_loadb(body, n, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return feedback_senders_bad(why, whysz, "not JSON");
	s = json_object_get(root, "signature");
	d = json_object_get(root, "event-data");
	if (!json_is_object(s) || !json_is_object(d) ||
	    feedback_senders_str(s, "timestamp", sig->timestamp,
	    FEEDBACK_MAILGUN_FIELD_MAX) == -1 ||
	    feedback_senders_str(s, "token", sig->token,
	    FEEDBACK_MAILGUN_FIELD_MAX) == -1 ||
	    feedback_senders_str(s, "signature", sig->signature,
	    FEEDBACK_MAILGUN_FIELD_MAX) == -1) {
		feedback_senders_bad(why, whysz, "no signature or event-data");
		goto out;
	}
	v = json_object_get(d, "event");
	event = json_is_string(v) ? json_string_value(v) : "";
	v = json_object_get(d, "severity");
	sev = json_is_string(v) ? json_string_value(v) : "";
	if (strcmp(event, "delivered") == 0)
		ev->outcome = FEEDBACK_DELIVERED;
	else if (strcmp(event, "failed") == 0 && strcmp(sev, "permanent") == 0)
		ev->outcome = FEEDBACK_HARD_BOUNCE;
	else if (strcmp(event, "failed") == 0 && strcmp(sev, "temporary") == 0)
		ev->outcome = FEEDBACK_SOFT_BOUNCE;
	else if (strcmp(event, "complained") == 0)
		ev->outcome = FEEDBACK_COMPLAINT;
	else {
		rc = FEEDBACK_SENDER_IGNORED;
		goto out;
	}
	v = json_object_get(d, "recipient");
	if (!json_is_string(v) || feedback_event_address(ev,
	    json_string_value(v), key) == -1) {
		feedback_senders_bad(why, whysz, "event-data.recipient is not "
		    "an address");
		goto out;
	}
	v = json_object_get(d, "timestamp");
	ts = json_is_number(v) ? json_number_value(v) : -1;
	if (!(ts >= 946684800.0 && ts < 4102444800.0)) {
		feedback_senders_bad(why, whysz, "event-data.timestamp");
		goto out;
	}
	ev->occurred_at = (time_t)ts;	/* positive: truncation is floor */
	if (feedback_senders_str(d, "id", ev->event_id,
	    FEEDBACK_EVENT_ID_MAX) == -1 ||
	    feedback_senders_event_id(ev->event_id) == -1) {
		feedback_senders_bad(why, whysz, "event-data.id");
		goto out;
	}
	ds = json_object_get(d, "delivery-status");
	if (json_is_object(ds)) {
		v = json_object_get(ds, "message");
		feedback_senders_codes(ev, json_object_get(ds, "code"),
		    json_object_get(ds, "enhanced-code"),
		    json_is_string(v) ? json_string_value(v) : NULL);
	}
	rc = FEEDBACK_SENDER_OK;
out:
	json_decref(root);
	return rc;
}

int
feedback_senders_mailgun_verify(const char *signing_key,
    const struct feedback_mailgun_sig *sig)
{
	unsigned char mac[32];
	char data[2 * FEEDBACK_MAILGUN_FIELD_MAX + 1], hex[65];
	int len;

	if (signing_key == NULL || *signing_key == '\0' ||
	    strlen(sig->signature) != 64)
		return 0;
	len = snprintf(data, sizeof(data), "%s%s", sig->timestamp,
	    sig->token);
	if (len < 0 || (size_t)len >= sizeof(data))
		return 0;
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, signing_key,
	    strlen(signing_key), data, (size_t)len, mac) != 0)
		return 0;
	hex_encode(mac, sizeof(mac), hex);
	return strparse_consttime_eq(hex, sig->signature, 64);
}

enum feedback_sender_err
feedback_senders_postmark_parse(const char *body, size_t n,
    const struct addrhash_key *key, struct feedback_event *ev, char *why,
    size_t whysz)
{
	enum feedback_sender_err rc = FEEDBACK_SENDER_INVALID;
	const char *type, *addr_member = "Email", *at_member = "BouncedAt";
	char record[32], msgid[100];
	json_t *root, *v;

	memset(ev, 0, sizeof(*ev));
	if ((root = json_loadb(body, n, JSON_REJECT_DUPLICATES, NULL)) == NULL)
		return feedback_senders_bad(why, whysz, "not JSON");
	if (!json_is_object(root) || feedback_senders_str(root, "RecordType",
	    record, sizeof(record) - 1) == -1) {
		feedback_senders_bad(why, whysz, "no RecordType");
		goto out;
	}
	if (strcmp(record, "Delivery") == 0) {
		ev->outcome = FEEDBACK_DELIVERED;
		addr_member = "Recipient";
		at_member = "DeliveredAt";
	} else if (strcmp(record, "SpamComplaint") == 0)
		ev->outcome = FEEDBACK_COMPLAINT;
	else if (strcmp(record, "Bounce") == 0) {
		v = json_object_get(root, "Type");
		type = json_is_string(v) ? json_string_value(v) : "";
		if (strcmp(type, "HardBounce") == 0)
			ev->outcome = FEEDBACK_HARD_BOUNCE;
		else if (strcmp(type, "SoftBounce") == 0 ||
		    strcmp(type, "Transient") == 0 ||
		    strcmp(type, "DnsError") == 0)
			ev->outcome = FEEDBACK_SOFT_BOUNCE;
		else {
			rc = FEEDBACK_SENDER_IGNORED;
			goto out;
		}
	} else {
		rc = FEEDBACK_SENDER_IGNORED;
		goto out;
	}
	v = json_object_get(root, addr_member);
	if (!json_is_string(v) || feedback_event_address(ev,
	    json_string_value(v), key) == -1) {
		feedback_senders_bad(why, whysz, "the recipient is not an "
		    "address");
		goto out;
	}
	v = json_object_get(root, at_member);
	if (!json_is_string(v) || timeutil_parse_iso8601(json_string_value(v),
	    &ev->occurred_at) == -1) {
		feedback_senders_bad(why, whysz, "the time is not ISO 8601 UTC");
		goto out;
	}
	if (ev->outcome == FEEDBACK_DELIVERED) {
		if (feedback_senders_str(root, "MessageID", msgid,
		    sizeof(msgid) - 1) == -1) {
			feedback_senders_bad(why, whysz, "no MessageID");
			goto out;
		}
		snprintf(ev->event_id, sizeof(ev->event_id), "Delivery:%s:%s",
		    msgid, ev->addr_hash);
	} else {
		v = json_object_get(root, "ID");
		if (!json_is_integer(v)) {
			feedback_senders_bad(why, whysz, "no ID");
			goto out;
		}
		snprintf(ev->event_id, sizeof(ev->event_id), "%s:%lld",
		    record, (long long)json_integer_value(v));
		v = json_object_get(root, "Details");
		feedback_senders_codes(ev, NULL, NULL, json_is_string(v) ?
		    json_string_value(v) : NULL);
	}
	if (feedback_senders_event_id(ev->event_id) == -1) {
		feedback_senders_bad(why, whysz, "MessageID");
		goto out;
	}
	rc = FEEDBACK_SENDER_OK;
out:
	json_decref(root);
	return rc;
}

int
feedback_senders_postmark_verify(const char *authorization,
    const char *auth_hash)
{
	gnutls_datum_t in, out = { NULL, 0 };
	unsigned char hash[32];
	char hex[65];
	int ok = 0;

	if (authorization == NULL || auth_hash == NULL ||
	    strlen(auth_hash) != 64 ||
	    strncasecmp(authorization, "Basic ", 6) != 0)
		return 0;
	in.data = (unsigned char *)(authorization + 6);
	in.size = (unsigned)strlen(authorization + 6);
	if (in.size == 0 || in.size > 1024 ||
	    gnutls_base64_decode2(&in, &out) != 0)
		return 0;
	gnutls_hash_fast(GNUTLS_DIG_SHA256, out.data, out.size, hash);
	hex_encode(hash, sizeof(hash), hex);
	ok = strparse_consttime_eq(hex, auth_hash, 64);
	gnutls_free(out.data);
	return ok;
}
