/* handler_bulk.c: job creation: POST /v1/verify/bulk (up to 100,000 unique
 * addresses, 202) and POST /v1/verify/batch (up to 1,000,000, 201, with an
 * optional webhook_url and callback_data). Both charge one credit per unique
 * address at creation (none for a sandbox key's sandbox addresses, none for
 * an entry not shaped like an address, kept as an invalid_syntax row), and
 * store the Idempotency-Key answer in the same transaction as the job, so a
 * retried request can never create or charge twice; a COMMIT whose answer
 * was lost is answered with the job when it was applied. */
#include "api/api.h"
#include "jobs/fetch.h"
#include "jobs/jobs_body.h"
#include "util/log.h"
#include "util/timeutil.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After a body this large the freed heap is given back to the system. */
#define BULK_TRIM_BYTES (1024 * 1024)

struct handler_bulk_req {
	struct api_call		*c;
	struct jobs_new		 spec;
	struct jobs_body	 body;
	const char		*name;
	char			 secret[64];
	time_t			 created;
	size_t			 body_len;	/* octets of the body read */
};

static json_t *
handler_bulk_body(struct handler_bulk_req *b, const char *id, long long left)
{
	char path[IDS_MAX + 32], prog[IDS_MAX + 48], when[TIMEUTIL_ISO_LEN],
	    eta[TIMEUTIL_ISO_LEN];
	json_t *o;

	if (b->spec.type == JOBS_TYPE_BATCH) {
		timeutil_iso8601(b->created, when);
		timeutil_iso8601(b->created + 60 * (time_t)((b->body.in.n +
		    JOBS_ESTIMATE_PER_MINUTE - 1) / JOBS_ESTIMATE_PER_MINUTE),
		    eta);
		o = json_pack("{s:s,s:s,s:s,s:I,s:i,s:s,s:s,s:I,s:I,s:I}",
		    "id", id, "name", b->name ? b->name : "",
		    "status", "pending",
		    "total_emails", (json_int_t)b->body.in.n,
		    "processed_emails", 0, "created_at", when,
		    "estimated_completion", eta,
		    "duplicates_removed", (json_int_t)b->body.in.duplicates,
		    "credits_charged", (json_int_t)b->spec.cost,
		    "credits_remaining", (json_int_t)left);
		if (b->secret[0])
			json_object_set_new(o, "webhook_secret",
			    json_string(b->secret));
		return o;
	}
	snprintf(path, sizeof(path), "/v1/jobs/%s", id);
	snprintf(prog, sizeof(prog), "/v1/jobs/%s/progress", id);
	return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:s,s:s}",
	    "job_id", id, "status", "pending", "name", b->name ? b->name : "",
	    "total_emails", (json_int_t)b->body.in.n,
	    "duplicates_removed", (json_int_t)b->body.in.duplicates,
	    "credits_charged", (json_int_t)b->spec.cost,
	    "credits_remaining", (json_int_t)left,
	    "status_url", path, "progress_url", prog);
}

/* After a COMMIT whose answer was lost (the connection went with it, its
 * node died perhaps): whether it was applied, the job looked for through
 * the next connection (the job and its answer were committed together, or
 * neither was). */
static int
handler_bulk_committed(struct api_call *c, const char *id)
{
	struct jobs_row row;
	enum jobs_err rc;

	(void)db_sync_wait(c->ctx->db, 1);
	rc = jobs_get(c->ctx->db, c->key.account_id, id, &row);
	(void)db_sync_wait(c->ctx->db, 0);
	if (rc != JOBS_OK)
		return 0;
	jobs_row_free(&row);
	log_warn("event=job_commit_answer_lost req=%s job=%s committed=1",
	    c->req->request_id, id);
	return 1;
}

/* Commits the job jobs_create left open, with its Idempotency-Key answer
 * in the same transaction: 0, or -1 (rolled back, nothing created). */
static int
handler_bulk_commit(struct handler_bulk_req *b, const char *id, int status,
    json_t *answer)
{
	struct api_call *c = b->c;
	enum db_err e;
	int ok;

	ok = api_idempotency_answer_in(c, c->ctx->db, status, answer) == DB_OK &&
	    ((e = db_commit(c->ctx->db)) == DB_OK || (e == DB_ERR_CONNECT &&
	    handler_bulk_committed(c, id)));
	if (!ok)
		db_rollback(c->ctx->db);
	c->idem_done = ok && c->idem_key != NULL;
	return ok ? 0 : -1;
}

/* What the input, the keys of open objects and yajl's buffer may hold
 * together while the body is read (jobs_body.h). */
static size_t
handler_bulk_memory_max(const struct api_call *c)
{
	return (size_t)conf_int(c->ctx->conf, CONF_API_JOB_MEMORY_MB) << 20;
}

/* The checks of today's order on what the body held: name, webhook_url
 * and callback_data (batch), the emails array, its size, its entries. */
static int
handler_bulk_parse(struct handler_bulk_req *b, size_t max)
{
	struct api_call *c = b->c;
	const struct jobs_body *j = &b->body;

	if (j->name_state == JOBS_BODY_WRONG) {
		api_bad_field(c, "name", "a string of at most %d characters",
		    JOBS_NAME_MAX);
		return -1;
	}
	if (j->name_state == JOBS_BODY_SET)
		b->name = j->name;
	if (api_retention_ask(c, j->retention_state == JOBS_BODY_SET,
	    j->retention_state == JOBS_BODY_WRONG, j->retention_days,
	    &b->spec.retention) == -1)
		return -1;
	if (b->spec.type == JOBS_TYPE_BATCH) {
		const char *why = "a public https:// URL";

		if (j->url_state == JOBS_BODY_WRONG ||
		    (j->url_state == JOBS_BODY_SET &&
		    !fetch_url_allowed(c->ctx->conf, j->webhook_url, &why))) {
			api_bad_field(c, "webhook_url", "%s", why);
			return -1;
		}
		if (j->url_state == JOBS_BODY_SET) {
			b->spec.webhook_url = j->webhook_url;
			if (ids_random_text("whsec_", 32, b->secret,
			    sizeof(b->secret)) == -1)
				return -1;
			b->spec.webhook_secret = b->secret;
		}
		if (j->cb_state == JOBS_BODY_WRONG) {
			api_bad_field(c, "callback_data", "a JSON object");
			return -1;
		}
		if (j->cb_state == JOBS_BODY_TOO_BIG) {
			api_bad_field(c, "callback_data", "a JSON object of at "
			    "most %d bytes, %d levels and %d values",
			    JOBS_BODY_CB_BYTES, JOBS_BODY_CB_DEPTH,
			    JOBS_BODY_CB_VALUES);
			return -1;
		}
	}
	if (j->emails_state != JOBS_BODY_SET) {
		api_bad_field(c, "emails", "an array of addresses");
		return -1;
	}
	if (j->count > JOBS_BODY_ELEMENTS(max)) {
		http_error(c->resp, 400, "too_many_emails", json_pack("{s:I}",
		    "limit", (json_int_t)max), "at most %zu addresses", max);
		return -1;
	}
	if (j->too_big) {
		http_error(c->resp, 413, "file_too_large", json_pack("{s:I}",
		    "limit_bytes", (json_int_t)handler_bulk_memory_max(c)),
		    "the addresses need more than %zu MiB in memory once read "
		    "(api_job_memory_mb); send them in smaller jobs",
		    handler_bulk_memory_max(c) >> 20);
		return -1;
	}
	switch (j->emails_rc) {
	case JOBS_OK:
		return 0;
	case JOBS_EMPTY:
		api_bad_field(c, "emails", "at least one address is needed");
		return -1;
	case JOBS_TOO_MANY:
		http_error(c->resp, 400, "too_many_emails", json_pack("{s:I}",
		    "limit", (json_int_t)max), "more than %zu unique "
		    "addresses", max);
		return -1;
	case JOBS_BAD_ITEM:
		api_bad_field(c, "emails", "element %zu is not a string",
		    j->bad_index);
		return -1;
	default:
		api_internal_error(c, "jobs_input");
		return -1;
	}
}

/* Reads the body as a stream (jobs_body.h), then lets the raw body go: an
 * Idempotency-Key was hashed from it before the handler ran, and nothing
 * else needs it, so a large body does not stay while the job is written. */
static int
handler_bulk_read(struct handler_bulk_req *b, size_t max, const char *sandbox)
{
	struct api_call *c = b->c;
	enum jobs_body_err rc;

	if (api_json_read(c) == -1)
		return -1;
	if (jobs_body_init(&b->body, b->spec.type == JOBS_TYPE_BATCH, max,
	    sandbox, handler_bulk_memory_max(c)) == -1) {
		api_internal_error(c, "jobs_body_init");
		return -1;
	}
	rc = jobs_body_feed(&b->body, c->req->body.data, c->req->body.len);
	if (rc == JOBS_BODY_OK)
		rc = jobs_body_end(&b->body);
	b->body_len = c->req->body.len;
	buf_free(&c->req->body);
	switch (rc) {
	case JOBS_BODY_OK:
		return 0;
	case JOBS_BODY_INVALID_JSON:
		http_error(c->resp, 400, "invalid_json", NULL,
		    "request body is not valid JSON: %s", b->body.error);
		return -1;
	case JOBS_BODY_NOT_OBJECT:
		http_error(c->resp, 400, "invalid_json", NULL,
		    "request body must be a JSON object");
		return -1;
	default:
		api_internal_error(c, "jobs_body");
		return -1;
	}
}

static void
handler_bulk_job(struct api_call *c, enum jobs_type type, size_t max)
{
	struct handler_bulk_req b;
	char sandbox[300], retry[24], *cb = NULL;
	struct jobs_created made;
	json_t *answer = NULL;
	enum jobs_err rc;
	int status;

	memset(&b, 0, sizeof(b));
	b.c = c;
	b.created = time(NULL);
	b.spec.type = type;
	snprintf(sandbox, sizeof(sandbox), "sandbox.%s",
	    conf_str(c->ctx->conf, CONF_SERVICE_DOMAIN));
	if (handler_bulk_read(&b, max, sandbox) == -1 ||
	    handler_bulk_parse(&b, max) == -1)
		goto out;
	if (b.body.callback_data != NULL &&
	    (cb = json_dumps(b.body.callback_data, JSON_COMPACT)) == NULL) {
		api_internal_error(c, "callback_data");
		goto out;
	}
	b.spec.account_id = c->key.account_id;
	b.spec.pool_id = auth_key_pool(&c->key);
	b.spec.name = b.name;
	/* A sandbox key's sandbox-domain rows are free, and so are entries
	 * not shaped like an address (credit rule 2: they are kept as
	 * invalid_syntax rows), recorded so: refunds only ever return what
	 * was charged. */
	b.spec.free_domain = c->key.sandbox ? sandbox : NULL;
	b.spec.cost = jobs_input_cost(&b.body.in, c->key.sandbox);
	b.spec.sandbox = c->key.sandbox && b.spec.cost == 0;
	b.spec.callback_data = cb;
	b.spec.jobs_in_flight_max = conf_int(c->ctx->conf,
	    CONF_ACCOUNT_JOBS_IN_FLIGHT_MAX);
	b.spec.free_rows_per_day = conf_int(c->ctx->conf,
	    CONF_ACCOUNT_SANDBOX_ROWS_PER_DAY);
	status = type == JOBS_TYPE_BATCH ? 201 : 202;
	rc = jobs_create(c->ctx->db, &b.spec, &b.body.in, &made);
	if (rc == JOBS_INSUFFICIENT)
		api_insufficient_credits(c, b.spec.cost, made.balance);
	else if (rc == JOBS_TOO_MANY_JOBS)
		api_too_many_jobs(c, made.used);
	else if (rc == JOBS_FREE_ROWS_LIMIT) {
		/* the day ends at 00:00 UTC */
		snprintf(retry, sizeof(retry), "%ld", 86400L -
		    (long)(time(NULL) % 86400));
		http_set_header(c->resp, "Retry-After", retry);
		http_error(c->resp, 429, "sandbox_daily_limit", json_pack(
		    "{s:I,s:I,s:I}", "limit", (json_int_t)b.spec.free_rows_per_day,
		    "used", (json_int_t)made.used, "requested",
		    (json_int_t)((long long)b.body.in.n - b.spec.cost)),
		    "this job's %lld rows that cost no credit (sandbox "
		    "addresses, entries that are not addresses) would pass the "
		    "account's %lld a day (%lld used today, the day starts at "
		    "00:00 UTC)", (long long)b.body.in.n - b.spec.cost,
		    b.spec.free_rows_per_day, made.used);
	} else if (rc != JOBS_OK)
		api_internal_error(c, "jobs_create");
	else if (handler_bulk_commit(&b, made.id, status, (answer =
	    handler_bulk_body(&b, made.id, made.balance))) == -1) {
		json_decref(answer);
		api_internal_error(c, "jobs_create_commit");
	} else {
		log_info("event=job_created req=%s job=%s type=%s total=%zu "
		    "duplicates=%zu charged=%lld", c->req->request_id, made.id,
		    jobs_type_names[type], b.body.in.n, b.body.in.duplicates,
		    b.spec.cost);
		api_wake(c, WAKE_JOBS);
		http_json(c->resp, status, answer);
	}
out:
	free(cb);
	jobs_body_free(&b.body);
#ifdef __GLIBC__
	/* A large job leaves tens of MiB free in the heap: give them back, so
	 * that an idle responder does not keep its last job's size. */
	if (b.body_len >= BULK_TRIM_BYTES)
		malloc_trim(0);
#endif
}

void
handler_bulk_create(struct api_call *c)
{
	handler_bulk_job(c, JOBS_TYPE_BULK, JOBS_BULK_MAX);
}

void
handler_bulk_batch_create(struct api_call *c)
{
	handler_bulk_job(c, JOBS_TYPE_BATCH, JOBS_BATCH_MAX);
}
