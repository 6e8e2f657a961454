/* handler_verify.c: POST /v1/verify, one address. Credits are checked
 * before the (possibly slow) verification and charged after it, in one
 * transaction with the result in hand: a request that gets no result (the
 * database failed, the engine could not run, the probe limits refused it:
 * probes.h) is never charged. A sandbox key costs nothing on a
 * sandbox-domain address. With an Idempotency-Key the answer is stored in
 * the charge's transaction: a request cut after its charge (its host or
 * database node died) is charged with its answer stored, or not at all.
 * The result is kept as a keyed hash for the accuracy report and the
 * calibration (single_results.h). */
#include "api/probes.h"
#include "engine/addr.h"
#include "engine/verify_json.h"
#include "core/idempotency.h"
#include "core/ledger.h"
#include "jobs/single_results.h"
#include "util/log.h"
#include <stdlib.h>
#include <string.h>

/* Is this a sandbox-domain address, answered without the network? */
static int
handler_verify_is_sandbox(struct verify_engine *e, const char *email)
{
	struct addr a;

	return addr_parse(email, &a) == ADDR_OK &&
	    strcmp(a.ascii_domain, verify_sandbox_domain(e)) == 0;
}

/* The answer, made in the charge's transaction (ledger_charge_tx_then)
 * with the credits left then, and stored there as the Idempotency-Key's
 * answer when the request has one. */
struct handler_verify_answer {
	struct api_call		*c;
	const struct verify_result *r;
	long long		 cost;
	json_t			*out;
};

static enum db_err
handler_verify_answer(struct db *db, long long remaining, void *arg)
{
	struct handler_verify_answer *a = arg;
	enum db_err e = DB_OK;
	char *text;

	json_decref(a->out);	/* a run before this one's */
	a->out = verify_json_result(a->r);
	json_object_set_new(a->out, "credits_charged", json_integer(a->cost));
	json_object_set_new(a->out, "credits_remaining",
	    json_integer(remaining));
	if (a->c->idem_key == NULL)
		return DB_OK;
	if ((text = json_dumps(a->out, JSON_COMPACT | JSON_ENSURE_ASCII)) ==
	    NULL)
		return DB_ERR_QUERY;
	e = idempotency_finish(db, a->c->key.account_id, a->c->idem_key, 200,
	    text, strlen(text));
	free(text);
	return e;
}

/* Charges cost credits; the answer in a->out, or -1 answered (402/500). */
static int
handler_verify_charge(struct api_call *c, struct handler_verify_answer *a)
{
	enum ledger_err rc;
	long long remaining = 0;

	rc = ledger_charge_tx_then(c->ctx->db, auth_key_pool(&c->key),
	    c->key.account_id, a->cost, NULL, &remaining,
	    handler_verify_answer, a);
	if (rc == LEDGER_OK) {
		c->idem_done = c->idem_key != NULL;
		return 0;
	}
	if (rc == LEDGER_INSUFFICIENT)
		api_insufficient_credits(c, a->cost, remaining);
	else
		api_internal_error(c, "verify_charge");
	return -1;
}

/* Keeps the result as a keyed hash for the accuracy report and the
 * calibration (single_results.h), when the server has a feedback key; a
 * failure is logged, the answer stands (it is charged). */
static void
handler_verify_keep(struct api_call *c, const struct verify_result *r)
{
	struct retention_ask ask;
	struct addrhash_key key;

	if (addrhash_key_from_conf(c->ctx->conf, CONF_FEEDBACK_HASH_KEY,
	    &key) == -1)
		return;
	memset(&ask, 0, sizeof(ask));
	ask.default_days = conf_int(c->ctx->conf, CONF_JOB_RETENTION_DAYS);
	ask.max_days = conf_int(c->ctx->conf, CONF_RETENTION_DAYS_MAX);
	if (single_results_add(c->ctx->db, &key, c->key.account_id, r, &ask) !=
	    DB_OK)
		log_warn("event=single_result_not_kept req=%s error=\"%s\"",
		    c->req->request_id, db_error(c->ctx->db));
}

void
handler_verify(struct api_call *c)
{
	struct verify_result r;
	struct verify_gate gate;
	struct ledger_totals t;
	struct verify_engine *e;
	struct handler_verify_answer a;
	json_t *body, *email;
	long long cost;

	if ((body = api_json_body(c)) == NULL)
		return;
	email = json_object_get(body, "email");
	if (!json_is_string(email)) {
		api_bad_field(c, "email", "a string with the address to verify");
		goto out;
	}
	if ((e = api_engine(c)) == NULL)
		goto out;
	cost = c->key.sandbox && handler_verify_is_sandbox(e,
	    json_string_value(email)) ? 0 : 1;
	if (ledger_totals(c->ctx->db, auth_key_pool(&c->key), &t) != LEDGER_OK) {
		api_internal_error(c, "verify_balance");
		goto out;
	}
	if (t.balance < cost) {
		api_insufficient_credits(c, cost, t.balance);
		goto out;
	}
	probes_gate(c, &gate);
	switch (verify_address(e, c->ctx->db, c->key.account_id,
	    json_string_value(email), &gate, &r)) {
	case VERIFY_OK:
		break;
	case VERIFY_ERR_REFUSED:
		goto out;	/* 429 or 503 answered: nothing charged */
	default:
		api_internal_error(c, "verify_address");
		goto out;
	}
	memset(&a, 0, sizeof(a));
	a.c = c;
	a.r = &r;
	a.cost = cost;
	if (handler_verify_charge(c, &a) == -1) {
		json_decref(a.out);
		goto out;
	}
	log_info("event=verify req=%s status=%s reason=%s cached=%d charged=%lld",
	    c->req->request_id, verdict_status_names[r.v.status],
	    verdict_reason_names[r.v.reason], r.cached, cost);
	handler_verify_keep(c, &r);
	http_json(c->resp, 200, a.out);
out:
	json_decref(body);
}
