/* feedback_sns.h: Amazon SES delivery outcomes as Amazon SNS posts them
 * to a subscribed endpoint (/v1/feedback/ses): the SNS message, the
 * checks of its signature, and the SES event inside a Notification.
 *
 * An SNS message is a JSON object with Type (SubscriptionConfirmation,
 * Notification, UnsubscriptionConfirmation), MessageId, TopicArn,
 * Message, Timestamp, SignatureVersion ("1": SHA1withRSA, "2":
 * SHA256withRSA), Signature (base64), SigningCertURL, and Subject
 * (Notification, optional) or SubscribeURL and Token (the confirmations).
 * The signed text is "Name\nvalue\n" for each of these fields in this
 * order: Notification: Message, MessageId, Subject (when present),
 * Timestamp, TopicArn, Type; the confirmations: Message, MessageId,
 * SubscribeURL, Timestamp, Token, TopicArn, Type.
 *
 * SigningCertURL (and SubscribeURL) must be https, on a host
 * sns.<region>.amazonaws.com (or .com.cn; the region 3 or more letters,
 * digits or hyphens), with no user or fragment; the certificate's URL
 * also has a path ending in ".pem" and no query.
 *
 * The SES event (Message of a Notification): notificationType (SES
 * notifications) or eventType (event publishing) Delivery
 * (delivery.recipients, delivery.timestamp, delivery.smtpResponse),
 * Bounce (bounce.bounceType Permanent: hard_bounce; Transient:
 * soft_bounce; Undetermined is ignored; bounce.bouncedRecipients'
 * emailAddress, status, diagnosticCode; bounce.timestamp) or Complaint
 * (complaint.complainedRecipients, complaint.timestamp); other types
 * (Send, Reject, Open, Click, ...) are ignored. One event per recipient,
 * its id the SNS MessageId, ":" and the recipient's place in the list. */
#ifndef SVC_FEEDBACK_SNS_H
#define SVC_FEEDBACK_SNS_H
#include "jobs/feedback.h"
#include "jobs/feedback_senders.h"
#include <stddef.h>

#define FEEDBACK_SNS_URL_MAX	1024
#define FEEDBACK_SNS_ID_MAX	128	/* MessageId */
#define FEEDBACK_SNS_ARN_MAX	256
#define FEEDBACK_SNS_TOKEN_MAX	1024
#define FEEDBACK_SNS_SIG_MAX	2048	/* base64 */
#define FEEDBACK_SNS_RECIPIENTS_MAX 100	/* SES sends to 50 at most */

enum feedback_sns_type {
	FEEDBACK_SNS_SUBSCRIPTION_CONFIRMATION,
	FEEDBACK_SNS_NOTIFICATION,
	FEEDBACK_SNS_UNSUBSCRIBE_CONFIRMATION,
	FEEDBACK_SNS_TYPE__MAX
};
extern const char *const feedback_sns_type_names[FEEDBACK_SNS_TYPE__MAX];

/* A parsed SNS message; free with feedback_sns_free. */
struct feedback_sns {
	enum feedback_sns_type	 type;
	int			 version;	/* SignatureVersion: 1 or 2 */
	char			 message_id[FEEDBACK_SNS_ID_MAX + 1];
	char			 topic_arn[FEEDBACK_SNS_ARN_MAX + 1];
	char			 timestamp[64];
	char			 signing_cert_url[FEEDBACK_SNS_URL_MAX + 1];
	char			 subscribe_url[FEEDBACK_SNS_URL_MAX + 1];
	char			 token[FEEDBACK_SNS_TOKEN_MAX + 1];
	char			 signature[FEEDBACK_SNS_SIG_MAX + 1];
	char			*message;	/* Message (malloc) */
	char			*subject;	/* Subject or NULL (malloc) */
	int			 has_subject;
};

/* Reads an SNS message: 0, or -1 with why (a missing or malformed field,
 * an unknown Type or SignatureVersion). */
int	 feedback_sns_parse(const char *body, size_t n, struct feedback_sns *,
	    char *why, size_t whysz);
void	 feedback_sns_free(struct feedback_sns *);
/* The text SNS signed (see above), malloc'd, its length in *len; NULL when
 * out of memory. */
char	*feedback_sns_string_to_sign(const struct feedback_sns *, size_t *len);
/* Whether url may be an SNS SigningCertURL (cert 1) or SubscribeURL
 * (cert 0), as above: 1 or 0. */
int	 feedback_sns_url_ok(const char *url, int cert);
/* 1 when the message's Signature is its signed text's signature (per its
 * SignatureVersion) by the key of cert_pem (a PEM X.509 certificate with
 * an RSA key, valid now: not expired, not before its activation), else
 * 0. */
int	 feedback_sns_verify(const struct feedback_sns *, const char *cert_pem,
	    size_t cert_len);
/* Whether cert_pem is a PEM X.509 certificate with an RSA key, valid
 * now: 1/0. */
int	 feedback_sns_cert_ok(const char *cert_pem, size_t cert_len);
/* Whether arn is one of topics (ARNs separated by commas or blanks): 1/0. */
int	 feedback_sns_topic_listed(const char *topics, const char *arn);
/* Whether topics is such a list of SNS topic ARNs (arn:aws...:sns:...),
 * each at most FEEDBACK_SNS_ARN_MAX bytes: 1/0. */
int	 feedback_sns_topics_valid(const char *topics);

/* Reads the SES event of a Notification's Message into ev (max of them,
 * *n read); the events' ids are message_id ":" index. OK when at least
 * one, IGNORED when the event is no outcome, INVALID with why. */
enum feedback_sender_err feedback_sns_ses_parse(const char *message,
	    const char *message_id, const struct addrhash_key *,
	    struct feedback_event *ev, size_t max, size_t *n, char *why,
	    size_t whysz);
#endif
