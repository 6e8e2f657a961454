/* handler_feedback_ses.c: POST /v1/feedback/ses?account=ID, Amazon SES
 * outcomes as Amazon SNS posts them (feedback_sns.h).
 *
 * In order, each refusal writing nothing: the body must be an SNS message
 * (400 invalid_json); its TopicArn one of the account's (svcadm feedback
 * set --ses-topic-arns; else 401, nothing fetched); its SigningCertURL
 * https on sns.<region>.amazonaws.com with a .pem path (else 401); the
 * certificate there (fetched once a day at most, feedback_sns_fetch.h;
 * unreachable: 503, SNS sends again) must verify the message's signature
 * (SignatureVersion 1 SHA1withRSA, 2 SHA256withRSA; else 401). Then a
 * SubscriptionConfirmation is confirmed by a GET of its SubscribeURL (an
 * SNS URL too; 200 {"confirmed": true}), an UnsubscribeConfirmation is
 * logged (200 {"unsubscribed": true}), and a Notification's SES event is
 * stored as the other senders' are (a replayed MessageId counted as a
 * replay; an event that is no outcome: 200 {"ignored": true}). */
#include "api/handler_feedback.h"
#include "jobs/feedback_sns.h"
#include "jobs/feedback_sns_fetch.h"
#include "util/log.h"
#include <string.h>

static void
handler_feedback_ses_refuse(struct api_call *c, const char *account,
    const char *reason, const char *message)
{
	log_info("event=sns_refused req=%s account=%s reason=%s",
	    c->req->request_id, account, reason);
	http_error(c->resp, 401, "unauthorized", NULL, "%s", message);
}

/* The signature checked with the certificate of SigningCertURL: 0, or -1
 * answered. */
static int
handler_feedback_ses_signed(struct api_call *c, const char *account,
    const struct feedback_sns *m)
{
	enum feedback_sns_fetch_err fe;
	struct buf pem;
	char why[300];
	int fetched, rc = -1;

	buf_init(&pem, FEEDBACK_SNS_CERT_MAX);
	fe = feedback_sns_fetch_cert(c->ctx->db, c->ctx->conf,
	    m->signing_cert_url, &pem, &fetched, why, sizeof(why));
	if (fe == FEEDBACK_SNS_FETCH_REFUSED)
		handler_feedback_ses_refuse(c, account, "cert_url",
		    "SigningCertURL is not an https URL of "
		    "sns.<region>.amazonaws.com ending in .pem");
	else if (fe == FEEDBACK_SNS_FETCH_DB)
		api_internal_error(c, "sns_cert_cache");
	else if (fe != FEEDBACK_SNS_FETCH_OK) {
		log_warn("event=sns_cert_failed req=%s account=%s error=\"%s\"",
		    c->req->request_id, account, why);
		http_set_header(c->resp, "Retry-After", API_RETRY_AFTER);
		http_error(c->resp, 503, "feedback_unavailable", NULL,
		    "the SNS signing certificate could not be fetched");
	} else {
		if (fetched)
			log_info("event=sns_cert_fetched req=%s account=%s",
			    c->req->request_id, account);
		if (feedback_sns_verify(m, buf_str(&pem), pem.len))
			rc = 0;
		else
			handler_feedback_ses_refuse(c, account, "signature",
			    "the SNS signature does not match the message");
	}
	buf_free(&pem);
	return rc;
}

static void
handler_feedback_ses_notification(struct api_call *c,
    const struct feedback_sns *m, const struct addrhash_key *key,
    const char *account)
{
	struct feedback_event ev[FEEDBACK_SNS_RECIPIENTS_MAX];
	enum feedback_sender_err rc;
	char why[200];
	size_t n;

	rc = feedback_sns_ses_parse(m->message, m->message_id, key, ev,
	    FEEDBACK_SNS_RECIPIENTS_MAX, &n, why, sizeof(why));
	if (rc == FEEDBACK_SENDER_INVALID)
		http_error(c->resp, 400, "invalid_json", NULL,
		    "not an SES event: %s", why);
	else if (rc == FEEDBACK_SENDER_IGNORED)
		http_json(c->resp, 200, json_pack("{s:b}", "ignored", 1));
	else
		handler_feedback_store(c, account, FEEDBACK_SOURCE_SES, ev, n);
}

void
handler_feedback_ses(struct api_call *c, const struct feedback_settings *set,
    const struct addrhash_key *key, const char *account)
{
	const char *hdr = http_param(c->req, "HTTP_X_AMZ_SNS_MESSAGE_TYPE");
	enum feedback_sns_fetch_err fe;
	struct feedback_sns m;
	char why[300];

	if (feedback_sns_parse(buf_str(&c->req->body), c->req->body.len, &m,
	    why, sizeof(why)) == -1) {
		http_error(c->resp, 400, "invalid_json", NULL,
		    "not an SNS message: %s", why);
		return;
	}
	if (hdr != NULL && *hdr != '\0' &&
	    strcmp(hdr, feedback_sns_type_names[m.type]) != 0) {
		http_error(c->resp, 400, "invalid_json", NULL, "the message's "
		    "Type is not its x-amz-sns-message-type header's");
		goto out;
	}
	if (!feedback_sns_topic_listed(set->ses_topic_arns, m.topic_arn)) {
		handler_feedback_ses_refuse(c, account, "topic",
		    "this account takes no SNS messages of this TopicArn "
		    "(svcadm feedback set --ses-topic-arns)");
		goto out;
	}
	if (handler_feedback_ses_signed(c, account, &m) == -1)
		goto out;
	switch (m.type) {
	case FEEDBACK_SNS_SUBSCRIPTION_CONFIRMATION:
		if ((fe = feedback_sns_fetch_confirm(c->ctx->conf, m.subscribe_url,
		    why, sizeof(why))) == FEEDBACK_SNS_FETCH_REFUSED) {
			http_error(c->resp, 400, "invalid_json", NULL,
			    "SubscribeURL is not an https URL of "
			    "sns.<region>.amazonaws.com");
			break;
		}
		if (fe != FEEDBACK_SNS_FETCH_OK) {
			log_warn("event=sns_confirm_failed req=%s account=%s "
			    "error=\"%s\"", c->req->request_id, account, why);
			http_set_header(c->resp, "Retry-After", API_RETRY_AFTER);
			http_error(c->resp, 503, "feedback_unavailable", NULL,
			    "the subscription could not be confirmed");
			break;
		}
		log_info("event=sns_subscription_confirmed req=%s account=%s "
		    "topic=%s", c->req->request_id, account, m.topic_arn);
		http_json(c->resp, 200, json_pack("{s:b}", "confirmed", 1));
		break;
	case FEEDBACK_SNS_UNSUBSCRIBE_CONFIRMATION:
		log_info("event=sns_unsubscribed req=%s account=%s topic=%s",
		    c->req->request_id, account, m.topic_arn);
		http_json(c->resp, 200, json_pack("{s:b}", "unsubscribed", 1));
		break;
	default:
		handler_feedback_ses_notification(c, &m, key, account);
		break;
	}
out:
	feedback_sns_free(&m);
}
