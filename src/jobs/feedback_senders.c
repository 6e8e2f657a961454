/* feedback_senders.c: Mailgun's, Postmark's and SendGrid's webhook
 * payloads and signatures (feedback_senders.h). */
#include "jobs/feedback_senders.h"
#include "util/hex.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <gnutls/abstract.h>
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

/* ---------------------------------------------------------------- SendGrid */

/* One SendGrid event into ev: OK, IGNORED (not an outcome) or INVALID. */
static enum feedback_sender_err
feedback_senders_sendgrid_event(const json_t *o, const struct addrhash_key *key,
    struct feedback_event *ev, char *why, size_t whysz)
{
	char kind[32], type[32];
	const char *text = NULL;
	json_t *v;

	memset(ev, 0, sizeof(*ev));
	if (!json_is_object(o) || feedback_senders_str(o, "event", kind,
	    sizeof(kind) - 1) == -1)
		return feedback_senders_bad(why, whysz, "an event without "
		    "\"event\"");
	if (strcmp(kind, "delivered") == 0) {
		ev->outcome = FEEDBACK_DELIVERED;
		text = "response";
	} else if (strcmp(kind, "deferred") == 0) {
		ev->outcome = FEEDBACK_SOFT_BOUNCE;
		text = "response";
	} else if (strcmp(kind, "spamreport") == 0)
		ev->outcome = FEEDBACK_COMPLAINT;
	else if (strcmp(kind, "bounce") == 0) {
		if (feedback_senders_str(o, "type", type, sizeof(type) - 1) ==
		    0 && strcmp(type, "blocked") == 0)
			ev->outcome = FEEDBACK_SOFT_BOUNCE;
		else
			ev->outcome = FEEDBACK_HARD_BOUNCE;
		text = "reason";
	} else
		return FEEDBACK_SENDER_IGNORED;
	v = json_object_get(o, "email");
	if (!json_is_string(v) || feedback_event_address(ev,
	    json_string_value(v), key) == -1)
		return feedback_senders_bad(why, whysz, "an event whose email is "
		    "not an address");
	v = json_object_get(o, "timestamp");
	if (!json_is_integer(v) || json_integer_value(v) <= 0)
		return feedback_senders_bad(why, whysz, "an event without a Unix "
		    "timestamp");
	ev->occurred_at = (time_t)json_integer_value(v);
	if (feedback_senders_str(o, "sg_event_id", ev->event_id,
	    FEEDBACK_EVENT_ID_MAX) == -1 ||
	    feedback_senders_event_id(ev->event_id) == -1)
		return feedback_senders_bad(why, whysz, "an event without "
		    "sg_event_id");
	v = text != NULL ? json_object_get(o, text) : NULL;
	feedback_senders_codes(ev, NULL, json_object_get(o, "status"),
	    json_is_string(v) ? json_string_value(v) : NULL);
	if (ev->smtp_code == 0 && json_is_string(v))
		ev->smtp_code = strparse_reply_code(json_string_value(v));
	return FEEDBACK_SENDER_OK;
}

enum feedback_sender_err
feedback_senders_sendgrid_parse(const char *body, size_t len,
    const struct addrhash_key *key, struct feedback_event *ev, size_t max,
    size_t *n, size_t *ignored, char *why, size_t whysz)
{
	enum feedback_sender_err rc = FEEDBACK_SENDER_INVALID, one;
	json_t *root;
	size_t i;

	*n = *ignored = 0;
	if ((root = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL)) ==
	    NULL)
		return feedback_senders_bad(why, whysz, "not JSON");
	if (!json_is_array(root) || json_array_size(root) == 0 ||
	    json_array_size(root) > max) {
		snprintf(why, whysz, "not an array of 1 to %zu events", max);
		goto out;
	}
	for (i = 0; i < json_array_size(root); i++) {
		one = feedback_senders_sendgrid_event(json_array_get(root, i),
		    key, &ev[*n], why, whysz);
		if (one == FEEDBACK_SENDER_INVALID)
			goto out;
		if (one == FEEDBACK_SENDER_IGNORED)
			(*ignored)++;
		else
			(*n)++;
	}
	rc = *n > 0 ? FEEDBACK_SENDER_OK : FEEDBACK_SENDER_IGNORED;
out:
	json_decref(root);
	return rc;
}

/* A public key from base64 DER SubjectPublicKeyInfo, or NULL. */
static gnutls_pubkey_t
feedback_senders_pubkey(const char *b64)
{
	gnutls_datum_t in, der = { NULL, 0 };
	gnutls_pubkey_t pk = NULL;

	if (b64 == NULL || *b64 == '\0' || strlen(b64) > 1024)
		return NULL;
	in.data = (unsigned char *)b64;
	in.size = (unsigned)strlen(b64);
	if (gnutls_base64_decode2(&in, &der) != 0)
		return NULL;
	if (gnutls_pubkey_init(&pk) != 0 ||
	    gnutls_pubkey_import(pk, &der, GNUTLS_X509_FMT_DER) != 0 ||
	    gnutls_pubkey_get_pk_algorithm(pk, NULL) != GNUTLS_PK_ECDSA) {
		if (pk != NULL)
			gnutls_pubkey_deinit(pk);
		pk = NULL;
	}
	gnutls_free(der.data);
	return pk;
}

int
feedback_senders_sendgrid_key_ok(const char *public_key)
{
	gnutls_pubkey_t pk = feedback_senders_pubkey(public_key);

	if (pk == NULL)
		return 0;
	gnutls_pubkey_deinit(pk);
	return 1;
}

int
feedback_senders_sendgrid_verify(const char *public_key,
    const char *signature, const char *timestamp, const char *body,
    size_t len)
{
	gnutls_datum_t in, sig = { NULL, 0 }, data = { NULL, 0 };
	gnutls_pubkey_t pk;
	size_t tl;
	int ok = 0;

	if (signature == NULL || timestamp == NULL || *signature == '\0' ||
	    strlen(signature) > 1024 || (tl = strlen(timestamp)) == 0 ||
	    tl > 32 || (pk = feedback_senders_pubkey(public_key)) == NULL)
		return 0;
	in.data = (unsigned char *)signature;
	in.size = (unsigned)strlen(signature);
	if (gnutls_base64_decode2(&in, &sig) != 0 ||
	    (data.data = gnutls_malloc(tl + len + 1)) == NULL)
		goto out;
	memcpy(data.data, timestamp, tl);
	if (len > 0)
		memcpy(data.data + tl, body, len);
	data.size = (unsigned)(tl + len);
	ok = gnutls_pubkey_verify_data2(pk, GNUTLS_SIGN_ECDSA_SHA256, 0, &data,
	    &sig) >= 0;
out:
	gnutls_free(sig.data);
	gnutls_free(data.data);
	gnutls_pubkey_deinit(pk);
	return ok;
}
