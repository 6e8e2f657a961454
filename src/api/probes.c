/* probes.c: the requests that may keep a responder waiting on something
 * outside the service: a single verification or a domain check probing a
 * stranger's mail server, and a key revocation waiting out the key cache.
 * Each holds places of slots.h while it runs:
 * - one of the account's (probe_concurrency_per_account probes, one
 *   revocation): beyond them 429 rate_limited, "concurrency", Retry-After 1
 *   (as Stripe's concurrent-requests limiter), or 409 for a revocation;
 * - one of the host's slow places, api_workers minus
 *   probe_reserved_responders (at least one): beyond them 503
 *   queue_unavailable at once, so that authentication, jobs, credits, keys
 *   and the rate-limit status always find a free responder.
 * Nothing is charged for a refused request. The places are given back when
 * the request ends (router.c), or by the kernel when the process dies. */
#include "api/probes.h"
#include "util/timeutil.h"
#include <stdio.h>

/* The host's slow places: all responders but the reserve, at least one. */
static int
probes_slow_capacity(const struct api_call *c)
{
	long n = c->ctx->responders - conf_int(c->ctx->conf,
	    CONF_PROBE_RESERVED_RESPONDERS);

	return n < 1 ? 1 : (int)n;
}

/* One of the host's slow places: 0, or -1 answered (503, 500). */
static int
probes_take_slow(struct api_call *c)
{
	switch (slots_take(c->ctx->slots, SLOTS_SLOW, NULL,
	    probes_slow_capacity(c))) {
	case 1:
		return 0;
	case 0:
		http_set_header(c->resp, "Retry-After", "1");
		http_error(c->resp, 503, "queue_unavailable", json_pack(
		    "{s:i}", "responders", probes_slow_capacity(c)),
		    "every responder that may wait on a mail server is busy; "
		    "retry in 1 s");
		return -1;
	default:
		api_internal_error(c, "slots");
		return -1;
	}
}

/* verify_gate's admit: the account's probe place, then the host's. */
static int
probes_admit(void *arg)
{
	struct api_call *c = arg;
	long limit = conf_int(c->ctx->conf, CONF_PROBE_CONCURRENCY_PER_ACCOUNT);

	switch (slots_take(c->ctx->slots, SLOTS_PROBE, c->key.account_id,
	    (int)limit)) {
	case 1:
		return probes_take_slow(c);
	case 0:
		http_set_header(c->resp, "Retry-After", "1");
		http_error(c->resp, 429, "rate_limited", json_pack(
		    "{s:I,s:i,s:I,s:s}", "limit", (json_int_t)limit,
		    "remaining", 0, "reset_at",
		    (json_int_t)(timeutil_now_ms() / 1000 + 1), "kind",
		    "concurrency"), "too many concurrent requests: at most "
		    "%ld verifications or domain checks of this account may "
		    "probe mail servers at once; retry in 1 s", limit);
		return -1;
	default:
		api_internal_error(c, "slots");
		return -1;
	}
}

void
probes_gate(struct api_call *c, struct verify_gate *g)
{
	g->admit = probes_admit;
	g->arg = c;
	g->asked = 0;
}

int
probes_revocation(struct api_call *c)
{
	switch (slots_take(c->ctx->slots, SLOTS_REVOKE, c->key.account_id,
	    1)) {
	case 1:
		return probes_take_slow(c);
	case 0:
		http_error(c->resp, 409, "revocation_in_progress", NULL,
		    "another key revocation of this account is still taking "
		    "effect; retry in a moment");
		return -1;
	default:
		api_internal_error(c, "slots");
		return -1;
	}
}
