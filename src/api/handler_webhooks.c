/* handler_webhooks.c: the webhook management API (scope webhooks:manage,
 * API.md "Webhooks and callbacks"): POST /v1/webhooks (201 with the
 * secret, shown only there: the answer kept for an Idempotency-Key replay
 * lacks it), GET /v1/webhooks, GET, PATCH and DELETE /v1/webhooks/{id},
 * POST /v1/webhooks/{id}/test (202: svc-worker sends a webhook.test
 * event; one test of a webhook at a time, 409 webhook_test_in_flight
 * while one is being sent, and webhook_test_limit an hour, then 429
 * rate_limited with Retry-After), POST /v1/webhooks/{id}/rotate-secret (the old secret keeps
 * signing for 24 hours) and GET /v1/webhooks/{id}/deliveries. Another
 * account's webhook is 404; a URL must be a public https:// one unless
 * allow_private_urls is set (400 naming the field). */
#include "api/api.h"
#include "jobs/fetch.h"
#include "jobs/webhooks.h"
#include "util/log.h"
#include <stdio.h>
#include <string.h>

/* What a create or change body says. */
struct handler_webhooks_body {
	const char	*url, *description;
	unsigned	 events;
	int		 enabled;	/* -1: not given */
};

static json_t *
handler_webhooks_opt(const char *s)
{
	return s != NULL && *s != '\0' ? json_string(s) : json_null();
}

static json_t *
handler_webhooks_json(const struct webhooks_row *w)
{
	json_t *ev = json_array();
	int i;

	for (i = 0; i < WEBHOOKS_EVENT__MAX; i++)
		if (w->events & (1u << i))
			json_array_append_new(ev,
			    json_string(webhooks_event_names[i]));
	return json_pack("{s:s, s:s, s:o, s:s, s:b, s:o, s:s, s:s, s:o}",
	    "id", w->id, "url", w->url, "events", ev,
	    "description", w->description, "enabled", w->enabled,
	    "disabled_reason", handler_webhooks_opt(w->disabled_reason),
	    "created_at", w->created_at, "updated_at", w->updated_at,
	    "previous_secret_expires_at",
	    handler_webhooks_opt(w->rotated_until));
}

/* Characters of a UTF-8 string (jansson's strings are valid UTF-8). */
static size_t
handler_webhooks_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Reads url, events, description and (change) enabled; -1 with 400
 * answered. create: url is required. */
static int
handler_webhooks_parse(struct api_call *c, json_t *body, int create,
    struct handler_webhooks_body *b)
{
	const char *why;
	json_t *v, *e;
	size_t i;
	unsigned bit;

	memset(b, 0, sizeof(*b));
	b->enabled = -1;
	v = json_object_get(body, "url");
	if ((v == NULL && create) || (v != NULL && !json_is_string(v))) {
		api_bad_field(c, "url", "a public https:// URL");
		return -1;
	}
	if (v != NULL) {
		b->url = json_string_value(v);
		if (!fetch_url_allowed(c->ctx->conf, b->url, &why)) {
			api_bad_field(c, "url", "%s", why);
			return -1;
		}
	}
	v = json_object_get(body, "events");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_array(v) || json_array_size(v) == 0)
			goto bad_events;
		json_array_foreach(v, i, e) {
			if (!json_is_string(e) || (bit = webhooks_event_bit(
			    json_string_value(e))) == 0)
				goto bad_events;
			b->events |= bit;
		}
	}
	v = json_object_get(body, "description");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_string(v) || handler_webhooks_chars(
		    json_string_value(v)) > WEBHOOKS_DESCRIPTION_MAX) {
			api_bad_field(c, "description", "a string of at most "
			    "%d characters", WEBHOOKS_DESCRIPTION_MAX);
			return -1;
		}
		b->description = json_string_value(v);
	}
	v = json_object_get(body, "enabled");
	if (!create && v != NULL && !json_is_null(v)) {
		if (!json_is_boolean(v)) {
			api_bad_field(c, "enabled", "must be a boolean");
			return -1;
		}
		b->enabled = json_is_true(v);
	}
	return 0;
bad_events:
	api_bad_field(c, "events", "a non-empty array of events out of "
	    "job.completed, job.failed");
	return -1;
}

/* 404 or 500 for what webhooks.c answered. */
static void
handler_webhooks_error(struct api_call *c, enum webhooks_err rc,
    const char *what)
{
	switch (rc) {
	case WEBHOOKS_NOT_FOUND:
		http_error(c->resp, 404, "not_found", NULL, "no webhook %s",
		    c->params[0]);
		break;
	case WEBHOOKS_LIMIT:
		http_error(c->resp, 409, "webhook_limit_reached",
		    json_pack("{s:i}", "limit", WEBHOOKS_PER_ACCOUNT),
		    "an account has at most %d webhooks", WEBHOOKS_PER_ACCOUNT);
		break;
	case WEBHOOKS_TEST_IN_FLIGHT:
		http_error(c->resp, 409, "webhook_test_in_flight", NULL,
		    "a test of webhook %s is being sent; ask again once it "
		    "is over", c->params[0]);
		break;
	default:
		api_internal_error(c, what);
		break;
	}
}

/* The Idempotency-Key's answer, written in the webhook's transaction
 * (webhooks_create's then): a creation cut before its answer was stored
 * (its host died) is either not made or replayed, never made twice. The
 * secret is shown once: a replay says it is not shown. */
static enum db_err
handler_webhooks_answer(struct db *db, const struct webhooks_row *w,
    void *arg)
{
	return api_idempotency_hide_in(arg, db, 201, handler_webhooks_json(w),
	    "secret");
}

void
handler_webhooks_create(struct api_call *c)
{
	struct handler_webhooks_body b;
	struct webhooks_row w;
	char secret[WEBHOOKS_SECRET_MAX];
	enum webhooks_err rc;
	json_t *body, *o;

	if ((body = api_json_body(c)) == NULL)
		return;
	if (handler_webhooks_parse(c, body, 1, &b) == -1)
		goto out;
	rc = webhooks_create(c->ctx->db, c->key.account_id, b.url, b.events,
	    b.description, &w, secret, c->idem_key != NULL ?
	    handler_webhooks_answer : NULL, c);
	if (rc != WEBHOOKS_OK) {
		handler_webhooks_error(c, rc, "webhooks_create");
		goto out;
	}
	c->idem_done = c->idem_key != NULL;
	o = handler_webhooks_json(&w);
	webhooks_row_free(&w);
	json_object_set_new(o, "secret", json_string(secret));
	http_json(c->resp, 201, o);
	memset(secret, 0, sizeof(secret));
out:
	json_decref(body);
}

static int
handler_webhooks_list_one(void *arg, const struct webhooks_row *w)
{
	return json_array_append_new(arg, handler_webhooks_json(w));
}

void
handler_webhooks_list(struct api_call *c)
{
	json_t *data = json_array();
	enum webhooks_err rc;

	rc = webhooks_list(c->ctx->db, c->key.account_id,
	    handler_webhooks_list_one, data);
	if (rc != WEBHOOKS_OK) {
		json_decref(data);
		handler_webhooks_error(c, rc, "webhooks_list");
		return;
	}
	http_json(c->resp, 200, json_pack("{s:o}", "data", data));
}

void
handler_webhooks_get(struct api_call *c)
{
	struct webhooks_row w;
	enum webhooks_err rc;

	rc = webhooks_get(c->ctx->db, c->key.account_id, c->params[0], &w);
	if (rc != WEBHOOKS_OK) {
		handler_webhooks_error(c, rc, "webhooks_get");
		return;
	}
	http_json(c->resp, 200, handler_webhooks_json(&w));
	webhooks_row_free(&w);
}

void
handler_webhooks_update(struct api_call *c)
{
	struct handler_webhooks_body b;
	struct webhooks_change ch;
	struct webhooks_row w;
	enum webhooks_err rc;
	json_t *body;

	if ((body = api_json_body(c)) == NULL)
		return;
	if (handler_webhooks_parse(c, body, 0, &b) == -1)
		goto out;
	memset(&ch, 0, sizeof(ch));
	ch.url = b.url;
	ch.events = b.events;
	ch.description = b.description;
	ch.enabled = b.enabled;
	rc = webhooks_update(c->ctx->db, c->key.account_id, c->params[0], &ch,
	    &w);
	if (rc != WEBHOOKS_OK) {
		handler_webhooks_error(c, rc, "webhooks_update");
		goto out;
	}
	http_json(c->resp, 200, handler_webhooks_json(&w));
	webhooks_row_free(&w);
out:
	json_decref(body);
}

void
handler_webhooks_delete(struct api_call *c)
{
	enum webhooks_err rc;

	rc = webhooks_delete(c->ctx->db, c->key.account_id, c->params[0]);
	if (rc != WEBHOOKS_OK) {
		handler_webhooks_error(c, rc, "webhooks_delete");
		return;
	}
	http_json(c->resp, 200, json_pack("{s:s, s:b}", "id", c->params[0],
	    "deleted", 1));
}

void
handler_webhooks_test(struct api_call *c)
{
	char delivery[IDS_MAX], event[IDS_MAX], v[24];
	long limit = conf_int(c->ctx->conf, CONF_WEBHOOK_TEST_LIMIT);
	long retry_after = 1;
	long long reset_at = 0;
	enum webhooks_err rc;

	rc = webhooks_test(c->ctx->db, c->key.account_id, c->params[0], limit,
	    delivery, event, &retry_after, &reset_at);
	if (rc == WEBHOOKS_TEST_LIMIT) {
		snprintf(v, sizeof(v), "%ld", retry_after);
		http_set_header(c->resp, "Retry-After", v);
		http_error(c->resp, 429, "rate_limited", json_pack(
		    "{s:i, s:i, s:I, s:s}", "limit", (int)limit, "remaining", 0,
		    "reset_at", (json_int_t)reset_at, "scope", "webhook_test"),
		    "webhook %s was tested %ld times in the last hour, the "
		    "most (webhook_test_limit)", c->params[0], limit);
		return;
	}
	if (rc != WEBHOOKS_OK) {
		handler_webhooks_error(c, rc, "webhooks_test");
		return;
	}
	http_json(c->resp, 202, json_pack("{s:s, s:s, s:s, s:s, s:s}",
	    "webhook_id", c->params[0], "delivery_id", delivery,
	    "event_id", event, "event", "webhook.test", "status", "pending"));
}

void
handler_webhooks_rotate(struct api_call *c)
{
	char secret[WEBHOOKS_SECRET_MAX], until[TIMEUTIL_ISO_LEN];
	enum webhooks_err rc;

	rc = webhooks_rotate(c->ctx->db, c->key.account_id, c->params[0],
	    secret, until);
	if (rc != WEBHOOKS_OK) {
		handler_webhooks_error(c, rc, "webhooks_rotate");
		return;
	}
	http_json(c->resp, 200, json_pack("{s:s, s:s, s:o}", "id",
	    c->params[0], "secret", secret, "previous_secret_expires_at",
	    handler_webhooks_opt(until)));
	memset(secret, 0, sizeof(secret));
}

static int
handler_webhooks_delivery_one(void *arg, const struct webhooks_delivery *d)
{
	json_t *log = json_array(), *o;
	const struct webhooks_attempt *a;
	size_t i;

	for (i = 0; i < d->nlog; i++) {
		a = &d->log[i];
		json_array_append_new(log, json_pack("{s:i, s:s, s:o, s:o, "
		    "s:o}", "attempt", a->attempt, "started_at", a->started_at,
		    "duration_ms", a->duration_ms < 0 ? json_null() :
		    json_integer(a->duration_ms), "status_code",
		    a->status_code > 0 ? json_integer(a->status_code) :
		    json_null(), "error", handler_webhooks_opt(a->error)));
	}
	o = json_pack("{s:s, s:s, s:s, s:o, s:s, s:i, s:o, s:o, s:o, s:s, "
	    "s:o, s:o}", "id", d->id, "event_id", d->event_id, "event",
	    d->event, "job_id", handler_webhooks_opt(d->job_id), "status",
	    d->state, "attempts", d->attempts, "last_status_code",
	    d->last_status > 0 ? json_integer(d->last_status) : json_null(),
	    "last_error", handler_webhooks_opt(d->last_error),
	    "next_retry_at", handler_webhooks_opt(d->next_attempt_at),
	    "created_at", d->created_at,
	    "finished_at", handler_webhooks_opt(d->finished_at),
	    "attempt_log", log);
	return json_array_append_new(arg, o);
}

void
handler_webhooks_deliveries(struct api_call *c)
{
	long page, limit;
	long long total = 0;
	enum webhooks_err rc;
	json_t *data;

	if (api_query_long(c, "page", 1, 1000000, 1, &page) == -1 ||
	    api_query_long(c, "limit", 1, WEBHOOKS_PAGE_MAX, 20, &limit) == -1)
		return;
	data = json_array();
	rc = webhooks_deliveries(c->ctx->db, c->key.account_id, c->params[0],
	    page, limit, &total, handler_webhooks_delivery_one, data);
	if (rc != WEBHOOKS_OK) {
		json_decref(data);
		handler_webhooks_error(c, rc, "webhooks_deliveries");
		return;
	}
	http_json(c->resp, 200, json_pack("{s:s, s:o, s:i, s:i, s:I}",
	    "webhook_id", c->params[0], "data", data, "page", (int)page,
	    "limit", (int)limit, "total", (json_int_t)total));
}
