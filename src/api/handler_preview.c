/* handler_preview.c: an upload's free List Health Preview and its
 * confirmation (scope verify:bulk): POST /v1/verify/bulk/{id}/preview
 * (200 with the preview; 202 with preview null while ingesting; 202
 * refreshing, with refresh_requested_at and the old preview, from
 * ?refresh=true until the new one is stored, whoever asks; 409
 * preview_unavailable for a job uploaded without preview; 409
 * rate_limit_exceeded past preview_refresh_limit refreshes of one job)
 * and POST /v1/verify/bulk/{id}/confirm
 * (charges credits_needed exactly once and queues the job; 402 with
 * details.required and details.available; 409
 * job_not_awaiting_confirmation with details.status; an Idempotency-Key's
 * answer to a confirmation is stored in its transaction). */
#include "api/api.h"
#include "jobs/uploads.h"
#include <stdlib.h>
#include <string.h>

/* A refresh counted, or refused past preview_refresh_limit (409: the
 * job's refreshes are used up for good, no wait would help). */
static int
handler_preview_refresh_limit(struct api_call *c)
{
	long limit = conf_int(c->ctx->conf, CONF_PREVIEW_REFRESH_LIMIT);
	long long used;

	switch (uploads_preview_refresh_count(c->ctx->db, c->key.account_id,
	    c->params[0], limit, &used)) {
	case UPLOADS_OK:
		return 0;
	case UPLOADS_REFRESH_LIMIT:
		http_error(c->resp, 409, "rate_limit_exceeded", json_pack(
		    "{s:I,s:I}", "limit", (json_int_t)limit, "used",
		    (json_int_t)used), "the preview of job %s was refreshed "
		    "%lld times, the most allowed", c->params[0], used);
		return -1;
	default:
		api_internal_error(c, "uploads_preview_refresh_count");
		return -1;
	}
}

void
handler_preview(struct api_call *c)
{
	struct uploads_preview p;
	struct buf v;
	json_t *preview = NULL;
	int refresh = 0;

	buf_init(&v, 64);
	if (http_query_get(c->req->query, "refresh", &v) == 0) {
		if (strcmp(buf_str(&v), "true") == 0)
			refresh = 1;
		else if (strcmp(buf_str(&v), "false") != 0) {
			buf_free(&v);
			api_bad_field(c, "refresh", "true or false");
			return;
		}
	}
	buf_free(&v);
	if (refresh && handler_preview_refresh_limit(c) == -1)
		return;
	switch (uploads_preview_get(c->ctx->db, c->key.account_id,
	    c->params[0], refresh, &p)) {
	case UPLOADS_OK:
		break;
	case UPLOADS_NOT_FOUND:
		http_error(c->resp, 404, "not_found", NULL, "no job %s",
		    c->params[0]);
		return;
	case UPLOADS_NO_PREVIEW:
		http_error(c->resp, 409, "preview_unavailable", NULL,
		    "job %s was not uploaded with preview=true", c->params[0]);
		return;
	default:
		api_internal_error(c, "uploads_preview_get");
		return;
	}
	if (p.preview != NULL)
		preview = json_loads(p.preview, 0, NULL);
	free(p.preview);
	if (p.status == JOBS_FAILED || p.status == JOBS_CANCELLED) {
		json_decref(preview);
		http_error(c->resp, 409, "preview_unavailable", json_pack(
		    "{s:s}", "status", jobs_status_names[p.status]),
		    "job %s is %s: see GET /v1/jobs/%s", c->params[0],
		    jobs_status_names[p.status], c->params[0]);
		return;
	}
	if (refresh && p.refreshing)
		api_wake(c, WAKE_UPLOADS);
	if (p.refreshing || preview == NULL) {
		/* the old preview, if any, beside the news that it is being
		 * replaced, for every caller until the new one is stored */
		http_json(c->resp, 202, json_pack("{s:s,s:s,s:o,s:b,s:o}",
		    "job_id", c->params[0], "status",
		    jobs_status_names[p.status], "preview",
		    preview ? preview : json_null(), "refreshing",
		    p.refreshing, "refresh_requested_at", p.refreshing &&
		    p.refresh_requested_at[0] ?
		    json_string(p.refresh_requested_at) : json_null()));
		return;
	}
	http_json(c->resp, 200, json_pack("{s:s,s:s,s:o}", "job_id",
	    c->params[0], "status", jobs_status_names[p.status], "preview",
	    preview));
}

static json_t *
handler_preview_confirmed(const char *job, const struct uploads_confirmed *k)
{
	return json_pack("{s:s,s:s,s:I,s:I}", "job_id", job, "status",
	    "pending", "credits_charged", (json_int_t)k->charged,
	    "credits_remaining", (json_int_t)k->balance);
}

/* The Idempotency-Key's answer, written in the confirmation's transaction
 * (uploads_confirm's then): a job charged and queued is answered, or not
 * charged. */
static enum db_err
handler_preview_confirm_answer(struct db *db,
    const struct uploads_confirmed *k, void *arg)
{
	struct api_call *c = arg;
	json_t *o = handler_preview_confirmed(c->params[0], k);
	enum db_err e;

	e = api_idempotency_answer_in(c, db, 200, o);
	json_decref(o);
	return e;
}

void
handler_preview_confirm(struct api_call *c)
{
	struct uploads_confirmed k;

	switch (uploads_confirm(c->ctx->db, c->key.account_id, c->params[0],
	    &k, c->idem_key != NULL ? handler_preview_confirm_answer : NULL,
	    c)) {
	case UPLOADS_OK:
		c->idem_done = c->idem_key != NULL;
		api_wake(c, WAKE_JOBS);
		http_json(c->resp, 200, handler_preview_confirmed(c->params[0],
		    &k));
		break;
	case UPLOADS_NOT_FOUND:
		http_error(c->resp, 404, "not_found", NULL, "no job %s",
		    c->params[0]);
		break;
	case UPLOADS_WRONG_STATUS:
		http_error(c->resp, 409, "job_not_awaiting_confirmation",
		    json_pack("{s:s}", "status", jobs_status_names[k.status]),
		    "job %s is %s, not awaiting_confirmation", c->params[0],
		    jobs_status_names[k.status]);
		break;
	case UPLOADS_INSUFFICIENT:
		api_insufficient_credits(c, k.required, k.balance);
		break;
	default:
		api_internal_error(c, "uploads_confirm");
		break;
	}
}
