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
 * "RecordType:ID" (or "Delivery:MessageID:Recipient"). */
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
/* 1 when an Authorization header value "Basic base64(user:password)"
 * hashes (SHA-256, hex) to auth_hash, compared in constant time. */
int	 feedback_senders_postmark_verify(const char *authorization,
	    const char *auth_hash);
#endif
