/* feedback_senders.h: the webhook payloads of the mail senders that
 * report delivery outcomes to /v1/feedback/{sender}, read into
 * feedback_event (feedback.h), and how each one signs.
 *
 * Mailgun (webhooks API v3, JSON): {"signature": {"timestamp", "token",
 * "signature"}, "event-data": {"event", "id", "timestamp", "recipient",
 * "severity", "delivery-status": {"code", "message", ...}}}; the signature
 * is HMAC-SHA256 of timestamp and token (concatenated) with the account's
 * webhook signing key, in hex. Events: delivered; failed (severity
 * permanent: hard_bounce, temporary: soft_bounce); complained. Others
 * (opened, clicked, accepted, unsubscribed, ...) are ignored.
 *
 * Postmark (JSON, one record a request, basic auth credentials set in the
 * webhook's URL): RecordType Delivery (Recipient, DeliveredAt), Bounce
 * (Email, BouncedAt, Type: HardBounce is hard_bounce; SoftBounce,
 * Transient, DnsError are soft_bounce; other types are ignored) and
 * SpamComplaint (Email, BouncedAt). The event id is
 * "RecordType:ID" (or "Delivery:MessageID:Recipient").
 *
 * SendGrid (Event Webhook, JSON array of events, signed): each event has
 * email, timestamp (Unix seconds), event, sg_event_id (the event id) and,
 * for bounces, type ("bounce": hard_bounce; "blocked": soft_bounce, a
 * refusal of the sender rather than of the address), status (the enhanced
 * code) and reason; delivered (response: the reply), deferred
 * (soft_bounce), spamreport (complaint). processed, dropped (SendGrid did
 * not send), open, click and the unsubscribe events are ignored. The
 * signature is ECDSA P-256 with SHA-256 over the
 * X-Twilio-Email-Event-Webhook-Timestamp header's value followed by the
 * raw body, base64 DER in X-Twilio-Email-Event-Webhook-Signature, checked
 * with the account's verification key (base64 DER SubjectPublicKeyInfo). */
#ifndef SVC_FEEDBACK_SENDERS_H
#define SVC_FEEDBACK_SENDERS_H
#include "jobs/feedback.h"
#include <stddef.h>

enum feedback_sender_err {
	FEEDBACK_SENDER_OK,		/* ev filled */
	FEEDBACK_SENDER_IGNORED,	/* a kind of event that is no outcome */
	FEEDBACK_SENDER_INVALID,	/* not such a payload (why says) */
	FEEDBACK_SENDER_ERR__MAX
};

#define FEEDBACK_MAILGUN_FIELD_MAX 128

struct feedback_mailgun_sig {
	char	 timestamp[FEEDBACK_MAILGUN_FIELD_MAX + 1];
	char	 token[FEEDBACK_MAILGUN_FIELD_MAX + 1];
	char	 signature[FEEDBACK_MAILGUN_FIELD_MAX + 1];
};

/* Reads a Mailgun payload: the signature fields always (when present:
 * else INVALID), the event into ev. */
enum feedback_sender_err feedback_senders_mailgun_parse(const char *body,
	    size_t n, const struct addrhash_key *,
	    struct feedback_mailgun_sig *, struct feedback_event *ev,
	    char *why, size_t whysz);
/* 1 when sig->signature is HMAC-SHA256(key, timestamp token) in hex
 * (compared in constant time), else 0. */
int	 feedback_senders_mailgun_verify(const char *signing_key,
	    const struct feedback_mailgun_sig *);
/* Reads a Postmark payload into ev. */
enum feedback_sender_err feedback_senders_postmark_parse(const char *body,
	    size_t n, const struct addrhash_key *, struct feedback_event *ev,
	    char *why, size_t whysz);
/* Reads a SendGrid payload: up to max events into ev (*n of them), the
 * ignored ones counted in *ignored; one event that is not readable makes
 * the whole payload INVALID. OK when at least one event was read, else
 * IGNORED. */
enum feedback_sender_err feedback_senders_sendgrid_parse(const char *body,
	    size_t len, const struct addrhash_key *, struct feedback_event *ev,
	    size_t max, size_t *n, size_t *ignored, char *why, size_t whysz);
/* 1 when signature (base64 DER) is the ECDSA P-256 SHA-256 signature of
 * timestamp followed by the body's len bytes under public_key (base64 DER
 * SubjectPublicKeyInfo), else 0. */
int	 feedback_senders_sendgrid_verify(const char *public_key,
	    const char *signature, const char *timestamp, const char *body,
	    size_t len);
/* 1 when public_key (base64 DER SubjectPublicKeyInfo) is an elliptic-curve
 * public key SendGrid's signatures can be checked with, else 0. */
int	 feedback_senders_sendgrid_key_ok(const char *public_key);
/* 1 when an Authorization header value "Basic base64(user:password)"
 * hashes (SHA-256, hex) to auth_hash, compared in constant time. */
int	 feedback_senders_postmark_verify(const char *authorization,
	    const char *auth_hash);
#endif
