/* handler_feedback.c: delivery outcomes in, and the accuracy report out
 * (feedback.h, feedback_report.h).
 *
 * POST /v1/feedback (scope feedback:write) { "events": [ ... ] }: 1 to
 * 10,000 events, all checked before anything is written (one bad event is
 * a 400 invalid_email naming it: details.field "events[3].outcome");
 * answers the counts and the event_ids that were replays.
 *
 * GET /v1/reports/accuracy?since=&until= (scope jobs:read): the calling
 * account's report over the results verified in [since, until) (ISO 8601
 * UTC; default: the last 30 days up to now).
 *
 * POST /v1/feedback/{sender}?account=ID (no API key: the sender's own
 * authentication, set per account with svcadm feedback set): mailgun
 * (HMAC-SHA256 signature in the payload), postmark (HTTP basic auth),
 * sendgrid (ECDSA signature headers) and ses (SNS messages, signed by
 * SNS: handler_feedback_ses.c).
 * A bad or missing signature or credentials: 401, nothing written; an
 * event that is no outcome (opened, clicked...): 200 {"ignored": true};
 * a replay (the sender's event id again) is counted as one. */
#include "api/api.h"
#include "api/handler_feedback.h"
#include "jobs/feedback.h"
#include "jobs/feedback_report.h"
#include "jobs/feedback_senders.h"
#include "util/timeutil.h"
#include "util/log.h"
#include <stdlib.h>
#include <string.h>

#define FEEDBACK_REPORT_DEFAULT_DAYS 30

int
handler_feedback_key(struct api_call *c, struct addrhash_key *key)
{
	if (addrhash_key_from_conf(c->ctx->conf, CONF_FEEDBACK_HASH_KEY,
	    key) == 0)
		return 0;
	log_error("event=feedback_key_missing req=%s", c->req->request_id);
	http_error(c->resp, 503, "feedback_unavailable", NULL,
	    "delivery feedback is not configured on this server "
	    "(feedback_hash_key)");
	return -1;
}

void
handler_feedback_store(struct api_call *c, const char *account,
    enum feedback_source src, struct feedback_event *ev, size_t n)
{
	struct feedback_counts counts;
	json_t *replays;
	size_t i;

	memset(&counts, 0, sizeof(counts));
	if ((counts.replay = calloc(n ? n : 1, 1)) == NULL) {
		api_internal_error(c, "feedback_store");
		return;
	}
	if (feedback_store(c->ctx->db, account, src, ev, n,
	    conf_int(c->ctx->conf, CONF_ACCOUNT_SUPPRESSIONS_MAX), &counts) !=
	    DB_OK) {
		free(counts.replay);
		api_internal_error(c, "feedback_store");
		return;
	}
	replays = json_array();
	for (i = 0; i < n; i++)
		if (counts.replay[i] && ev[i].event_id[0])
			json_array_append_new(replays,
			    json_string(ev[i].event_id));
	log_info("event=feedback_stored req=%s account=%s source=%s "
	    "accepted=%zu replayed=%zu suppressed=%zu complainers=%zu",
	    c->req->request_id, account, feedback_source_names[src],
	    counts.accepted, counts.replayed, counts.suppressed,
	    counts.complainers);
	http_json(c->resp, 200, json_pack("{s:I,s:I,s:o,s:I,s:I,s:I}",
	    "accepted", (json_int_t)counts.accepted,
	    "replayed", (json_int_t)counts.replayed,
	    "replayed_event_ids", replays,
	    "suppressed", (json_int_t)counts.suppressed,
	    "suppressions_skipped", (json_int_t)counts.suppress_skipped,
	    "complainers_added", (json_int_t)counts.complainers));
	free(counts.replay);
}

void
handler_feedback_post(struct api_call *c)
{
	struct feedback_event *ev = NULL;
	struct addrhash_key key;
	json_t *body, *events, *e;
	char field[64], name[96], why[200];
	size_t i, n;

	if (handler_feedback_key(c, &key) == -1)
		return;
	if ((body = api_json_body(c)) == NULL)
		return;
	events = json_object_get(body, "events");
	if (!json_is_array(events) || (n = json_array_size(events)) == 0 ||
	    n > FEEDBACK_EVENTS_MAX) {
		api_bad_field(c, "events", "an array of 1 to %d events",
		    FEEDBACK_EVENTS_MAX);
		goto out;
	}
	if ((ev = calloc(n, sizeof(*ev))) == NULL) {
		api_internal_error(c, "feedback_post");
		goto out;
	}
	json_array_foreach(events, i, e) {
		if (feedback_event_parse(e, &key, &ev[i], field, sizeof(field),
		    why, sizeof(why)) == 0)
			continue;
		if (field[0])
			snprintf(name, sizeof(name), "events[%zu].%s", i,
			    field);
		else
			snprintf(name, sizeof(name), "events[%zu]", i);
		api_bad_field(c, name, "%s; nothing was stored", why);
		goto out;
	}
	handler_feedback_store(c, c->key.account_id, FEEDBACK_SOURCE_API, ev,
	    n);
out:
	free(ev);
	json_decref(body);
}

/* A time query parameter (ISO 8601 UTC), def when absent: 0, or -1 with
 * 400 answered. */
static int
handler_feedback_time(struct api_call *c, const char *name, time_t def,
    time_t *out)
{
	struct buf v;
	int rc = 0;

	buf_init(&v, 64);
	*out = def;
	if (http_query_get(c->req->query, name, &v) == 0 &&
	    timeutil_parse_iso8601(buf_str(&v), out) == -1) {
		api_bad_field(c, name, "an ISO 8601 UTC time such as "
		    "2026-11-01T00:00:00Z");
		rc = -1;
	}
	buf_free(&v);
	return rc;
}

void
handler_feedback_report(struct api_call *c)
{
	struct feedback_report rep;
	struct addrhash_key key;
	time_t now = time(NULL), since, until;

	if (handler_feedback_key(c, &key) == -1)
		return;
	if (handler_feedback_time(c, "until", now + 1, &until) == -1 ||
	    handler_feedback_time(c, "since", until -
	    FEEDBACK_REPORT_DEFAULT_DAYS * 86400, &since) == -1)
		return;
	if (since >= until) {
		api_bad_field(c, "since", "must be before until");
		return;
	}
	if (feedback_report_build(c->ctx->db, &key, c->key.account_id, since,
	    until, &rep) != DB_OK) {
		api_internal_error(c, "report_accuracy");
		return;
	}
	http_json(c->resp, 200, feedback_report_json(&rep));
	feedback_report_free(&rep);
}

void
handler_feedback_unauthorized(struct api_call *c, const char *sender)
{
	if (strcmp(sender, "postmark") == 0)
		http_set_header(c->resp, "WWW-Authenticate",
		    "Basic realm=\"svc feedback\"");
	http_error(c->resp, 401, "unauthorized", NULL,
	    "the %s signature or credentials do not match this account's",
	    sender);
}

/* SendGrid's signed array of events (feedback_senders.h): the signature
 * over the timestamp header and the raw body first, then every event. */
static void
handler_feedback_sendgrid(struct api_call *c, const char *sender,
    const struct feedback_settings *set, const struct addrhash_key *key,
    const char *account)
{
	struct feedback_event *ev;
	size_t n, ignored;
	char why[200];
	enum feedback_sender_err rc;

	if (!feedback_senders_sendgrid_verify(set->sendgrid_public_key,
	    http_param(c->req, "HTTP_X_TWILIO_EMAIL_EVENT_WEBHOOK_SIGNATURE"),
	    http_param(c->req, "HTTP_X_TWILIO_EMAIL_EVENT_WEBHOOK_TIMESTAMP"),
	    buf_str(&c->req->body), c->req->body.len)) {
		handler_feedback_unauthorized(c, sender);
		return;
	}
	if ((ev = calloc(FEEDBACK_EVENTS_MAX, sizeof(*ev))) == NULL) {
		api_internal_error(c, "feedback_sendgrid");
		return;
	}
	rc = feedback_senders_sendgrid_parse(buf_str(&c->req->body),
	    c->req->body.len, key, ev, FEEDBACK_EVENTS_MAX, &n, &ignored, why,
	    sizeof(why));
	if (rc == FEEDBACK_SENDER_INVALID)
		http_error(c->resp, 400, "invalid_json", NULL,
		    "not a %s event array: %s", sender, why);
	else if (rc == FEEDBACK_SENDER_IGNORED)
		http_json(c->resp, 200, json_pack("{s:b}", "ignored", 1));
	else
		handler_feedback_store(c, account, FEEDBACK_SOURCE_SENDGRID, ev,
		    n);
	free(ev);
}

void
handler_feedback_sender(struct api_call *c)
{
	const char *sender = c->params[0];
	struct feedback_mailgun_sig sig;
	struct feedback_settings set;
	struct feedback_event ev;
	struct addrhash_key key;
	enum feedback_sender_err rc;
	enum feedback_source src;
	struct buf account;
	char why[200];

	if (strcmp(sender, "mailgun") == 0)
		src = FEEDBACK_SOURCE_MAILGUN;
	else if (strcmp(sender, "postmark") == 0)
		src = FEEDBACK_SOURCE_POSTMARK;
	else if (strcmp(sender, "sendgrid") == 0)
		src = FEEDBACK_SOURCE_SENDGRID;
	else if (strcmp(sender, "ses") == 0)
		src = FEEDBACK_SOURCE_SES;
	else {
		http_error(c->resp, 404, "not_found", NULL, "no feedback "
		    "receiver for this sender (mailgun, postmark, sendgrid, "
		    "ses)");
		return;
	}
	if (handler_feedback_key(c, &key) == -1)
		return;
	buf_init(&account, 64);
	if (http_query_get(c->req->query, "account", &account) == -1 ||
	    account.len == 0 || account.len >= IDS_MAX) {
		api_bad_field(c, "account", "the account id the webhook "
		    "reports for (?account=acc_...)");
		goto out;
	}
	if (feedback_settings_get(c->ctx->db, buf_str(&account), &set) !=
	    DB_OK) {
		api_internal_error(c, "feedback_settings");
		goto out;
	}
	if (src == FEEDBACK_SOURCE_POSTMARK && !feedback_senders_postmark_verify(
	    http_param(c->req, "HTTP_AUTHORIZATION"),
	    set.postmark_auth_hash)) {
		handler_feedback_unauthorized(c, sender);
		goto out;
	}
	if (api_json_read(c) == -1)
		goto out;
	if (src == FEEDBACK_SOURCE_SES) {
		memcpy(c->account_for_log, buf_str(&account), account.len + 1);
		handler_feedback_ses(c, &set, &key, buf_str(&account));
		goto out;
	}
	if (src == FEEDBACK_SOURCE_SENDGRID) {
		memcpy(c->account_for_log, buf_str(&account), account.len + 1);
		handler_feedback_sendgrid(c, sender, &set, &key,
		    buf_str(&account));
		goto out;
	}
	if (src == FEEDBACK_SOURCE_MAILGUN) {
		rc = feedback_senders_mailgun_parse(buf_str(&c->req->body),
		    c->req->body.len, &key, &sig, &ev, why, sizeof(why));
		if (!feedback_senders_mailgun_verify(set.mailgun_signing_key, &sig)) {
			handler_feedback_unauthorized(c, sender);
			goto out;
		}
	} else
		rc = feedback_senders_postmark_parse(buf_str(&c->req->body),
		    c->req->body.len, &key, &ev, why, sizeof(why));
	memcpy(c->account_for_log, buf_str(&account), account.len + 1);
	if (rc == FEEDBACK_SENDER_INVALID) {
		http_error(c->resp, 400, "invalid_json", NULL,
		    "not a %s event: %s", sender, why);
		goto out;
	}
	if (rc == FEEDBACK_SENDER_IGNORED) {
		http_json(c->resp, 200, json_pack("{s:b}", "ignored", 1));
		goto out;
	}
	handler_feedback_store(c, buf_str(&account), src, &ev, 1);
out:
	buf_free(&account);
}
