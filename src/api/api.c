/* api.c: what every handler of svc-api uses (api.h): the process's DB
 * connection and verification engine, made on first use, the JSON body and
 * the integer query parameters of a request, the Idempotency-Key answer
 * written in the transaction of what it answers (without the secret a
 * request shows once), the wake-up of the workers, and
 * the error answers the handlers share (400 naming a field, 402, 500 and
 * 503). */
#include "api/api.h"
#include "core/idempotency.h"
#include "util/log.h"
#include "util/strparse.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct db *
api_db(struct api_call *c)
{
	struct buf err;

	if (c->ctx->db != NULL)
		return c->ctx->db;
	buf_init(&err, 1024);
	if (db_open(c->ctx->conf, 1, &c->ctx->db, &err) != DB_OK) {
		log_error("event=db_unavailable req=%s error=\"%s\"",
		    c->req->request_id, buf_str(&err));
		api_unavailable(c, "the service cannot reach its database");
	}
	buf_free(&err);
	return c->ctx->db;
}

struct verify_engine *
api_engine(struct api_call *c)
{
	struct buf err;

	if (c->ctx->engine != NULL)
		return c->ctx->engine;
	buf_init(&err, 1024);
	if ((c->ctx->engine = verify_engine_new(c->ctx->conf, &err)) == NULL) {
		log_error("event=engine_unavailable req=%s error=\"%s\"",
		    c->req->request_id, buf_str(&err));
		api_unavailable(c, "the verification engine cannot start");
	}
	buf_free(&err);
	return c->ctx->engine;
}

void
api_wake(struct api_call *c, enum wake_kind kind)
{
	const char *dir = conf_str(c->ctx->conf, CONF_WORKER_WAKE_DIR);
	int n;

	if (*dir == '\0')
		return;
	n = wake_send(dir, kind);
	log_debug("event=wake req=%s what=%s woken=%d", c->req->request_id,
	    wake_kind_names[kind], n);
}

void
api_insufficient_credits(struct api_call *c, long long required,
    long long available)
{
	http_error(c->resp, 402, "insufficient_credits",
	    json_pack("{s:I,s:I}", "required", (json_int_t)required,
	    "available", (json_int_t)(available < 0 ? 0 : available)),
	    "%lld credits are needed, %lld are available", required,
	    available < 0 ? 0 : available);
}

void
api_too_many_jobs(struct api_call *c, long long used)
{
	long long max = conf_int(c->ctx->conf,
	    CONF_ACCOUNT_JOBS_IN_FLIGHT_MAX);

	http_error(c->resp, 409, "too_many_jobs", json_pack("{s:I,s:I}",
	    "limit", (json_int_t)max, "in_flight", (json_int_t)used),
	    "the account has %lld jobs not yet completed, failed or "
	    "cancelled (account_jobs_in_flight_max %lld): wait for one to end "
	    "or cancel one", used, max);
}

enum db_err
api_idempotency_answer_in(struct api_call *c, struct db *db, int status,
    const json_t *o)
{
	char *text;
	enum db_err e;

	if (c->idem_key == NULL)
		return DB_OK;
	if (o == NULL || (text = json_dumps(o, JSON_COMPACT |
	    JSON_ENSURE_ASCII)) == NULL)
		return DB_ERR_QUERY;
	e = idempotency_finish(db, c->key.account_id, c->idem_key, status,
	    text, strlen(text));
	free(text);
	return e;
}

enum db_err
api_idempotency_hide_in(struct api_call *c, struct db *db, int status,
    json_t *o, const char *field)
{
	char shown[64];
	enum db_err e;

	snprintf(shown, sizeof(shown), "%s_shown", field);
	if (o != NULL) {
		json_object_set_new(o, field, json_null());
		json_object_set_new(o, shown, json_false());
	}
	e = api_idempotency_answer_in(c, db, status, o);
	json_decref(o);
	return e;
}

void
api_bad_field(struct api_call *c, const char *field, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	http_error(c->resp, 400, "invalid_email", json_pack("{s:s}", "field",
	    field), "%s: %s", field, msg);
}

void
api_unavailable(struct api_call *c, const char *why)
{
	http_set_header(c->resp, "Retry-After", API_RETRY_AFTER);
	http_error(c->resp, 503, "queue_unavailable", NULL,
	    "%s; retry in %s s", why, API_RETRY_AFTER);
}

void
api_internal_error(struct api_call *c, const char *what)
{
	log_error("event=internal_error req=%s what=%s db=\"%s\"",
	    c->req->request_id, what,
	    c->ctx->db ? db_error(c->ctx->db) : "");
	/* A database that went away is an outage, not a broken request. */
	if (c->ctx->db != NULL && db_unreachable(c->ctx->db)) {
		api_unavailable(c, "the service cannot reach its database");
		return;
	}
	http_error(c->resp, 500, "verification_failed", NULL,
	    "unexpected error (request %s)", c->req->request_id);
}

int
api_json_read(struct api_call *c)
{
	const char *ct = http_param(c->req, "CONTENT_TYPE");
	int rc;

	/* JSON is accepted under its own type, with no type, and under the
	 * types command-line clients send by default (curl -d); a body that
	 * announces itself as something else (multipart, XML...) is not. */
	if (ct && *ct && strncasecmp(ct, "application/json", 16) != 0 &&
	    strncasecmp(ct, "application/x-www-form-urlencoded", 33) != 0 &&
	    strncasecmp(ct, "text/plain", 10) != 0) {
		http_error(c->resp, 415, "unsupported_media_type", NULL,
		    "send the body as application/json");
		return -1;
	}
	if ((rc = http_read_body(c->req, c->body_max)) != 0) {
		http_body_error(c->resp, rc, c->body_max);
		return -1;
	}
	return 0;
}

json_t *
api_json_body(struct api_call *c)
{
	json_error_t jerr;
	json_t *v;

	if (api_json_read(c) == -1)
		return NULL;
	v = json_loadb(buf_str(&c->req->body), c->req->body.len,
	    JSON_REJECT_DUPLICATES, &jerr);
	if (v == NULL) {
		http_error(c->resp, 400, "invalid_json", NULL,
		    "request body is not valid JSON: %s at line %d column %d",
		    jerr.text, jerr.line, jerr.column);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		http_error(c->resp, 400, "invalid_json", NULL,
		    "request body must be a JSON object");
		return NULL;
	}
	return v;
}

int
api_query_long(struct api_call *c, const char *name, long min, long max,
    long def, long *out)
{
	struct buf v;
	int rc = 0;

	buf_init(&v, 64);
	*out = def;
	if (http_query_get(c->req->query, name, &v) == 0 &&
	    strparse_long(buf_str(&v), min, max, out) == -1) {
		api_bad_field(c, name, "an integer from %ld to %ld", min, max);
		rc = -1;
	}
	buf_free(&v);
	return rc;
}

int
api_idempotency_key_check(struct api_call *c, const char *key)
{
	if (idempotency_key_valid(key))
		return 0;
	http_error(c->resp, 400, "invalid_email", NULL,
	    "Idempotency-Key: 1 to %d visible ASCII characters",
	    IDEMPOTENCY_KEY_MAX);
	return -1;
}

int
api_idempotency_begin(struct api_call *c, const char *key,
    const uint8_t hash[32])
{
	int status = 0;
	struct buf stored;
	enum idempotency_outcome o;

	buf_init(&stored, BUF_NOMAX);
	/* an entry of this host's own left running by a request that
	 * answered 5xx is gone before this one looks for its key */
	api_idempotency_flush(c->ctx);
	o = idempotency_begin(c->ctx->db, c->key.account_id, key, hash,
	    IDEMPOTENCY_IN_USE_WAIT_MS, &c->idem_claim, &status, &stored);
	/* its INSERT (or take-over) sent, the answer lost: the row may be
	 * there, this request's, and nobody to finish it */
	if (o == IDEMPOTENCY_DB_ERROR && c->idem_claim.unsure &&
	    idempotency_pending_add(c->ctx->pending, c->key.account_id, key,
	    &c->idem_claim, 0) == 0)
		log_warn("event=idempotency_abandon_pending req=%s sure=0",
		    c->req->request_id);
	switch (o) {
	case IDEMPOTENCY_PROCEED:
		buf_free(&stored);
		return 0;
	case IDEMPOTENCY_REPLAY:
		c->resp->status = status;
		http_set_header(c->resp, "Content-Type",
		    "application/json; charset=utf-8");
		http_set_header(c->resp, "Idempotent-Replayed", "true");
		buf_reset(&c->resp->body);
		buf_append(&c->resp->body, stored.data ? stored.data : "",
		    stored.len);
		break;
	case IDEMPOTENCY_IN_USE:
		http_error(c->resp, 409, "idempotency_key_in_use", NULL,
		    "a request with this Idempotency-Key is still running");
		break;
	case IDEMPOTENCY_MISMATCH:
		http_error(c->resp, 422, "idempotency_key_reused", NULL,
		    "this Idempotency-Key was used with a different request");
		break;
	default:
		api_internal_error(c, "idempotency_begin");
		break;
	}
	buf_free(&stored);
	return -1;
}

void
api_idempotency_abandon(struct api_call *c)
{
	enum db_err e;

	e = idempotency_abandon_within(c->ctx->db, c->key.account_id,
	    c->idem_key, &c->idem_claim, IDEMPOTENCY_ABANDON_TRY_MS);
	if (e == DB_OK)
		return;
	if (e != DB_ERR_CONNECT && e != DB_ERR_RETRY) {
		log_error("event=idempotency_abandon_failed req=%s "
		    "error=\"%s\"", c->req->request_id, db_error(c->ctx->db));
		return;
	}
	if (idempotency_pending_add(c->ctx->pending, c->key.account_id,
	    c->idem_key, &c->idem_claim, 1) == 0)
		log_warn("event=idempotency_abandon_pending req=%s sure=1",
		    c->req->request_id);
	else
		log_error("event=idempotency_abandon_lost req=%s reason=\"the "
		    "table of entries left to abandon is full\"",
		    c->req->request_id);
}

void
api_idempotency_flush(struct api_ctx *ctx)
{
	if (ctx->db != NULL && idempotency_pending_count(ctx->pending) > 0)
		(void)idempotency_pending_flush(ctx->pending, ctx->db);
}

int
api_retention_ask(struct api_call *c, int given, int wrong, long days,
    struct retention_ask *out)
{
	out->max_days = conf_int(c->ctx->conf, CONF_RETENTION_DAYS_MAX);
	out->default_days = conf_int(c->ctx->conf, CONF_JOB_RETENTION_DAYS);
	out->days = 0;
	if (wrong || (given && (days < 1 || days > out->max_days))) {
		api_bad_field(c, "retention_days", "a whole number of days from "
		    "1 to %ld (retention_days_max)", out->max_days);
		return -1;
	}
	if (given)
		out->days = days;
	return 0;
}
