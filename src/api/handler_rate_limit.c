/* handler_rate_limit.c: GET /rate-limit, the caller's window. The router
 * has already measured it (without counting this request: asking how much
 * is left must not use any of it). */
#include "api/api.h"

void
handler_rate_limit(struct api_call *c)
{
	const char *tier = c->authenticated ? auth_tier_names[c->key.tier] :
	    auth_tier_names[AUTH_TIER_ANONYMOUS];
	const char *sub = c->authenticated ? c->key.subscription_type : "none";

	http_json(c->resp, 200, json_pack("{s:b,s:s,s:s,s:I,s:I,s:I,s:I}",
	    "success", 1, "tier", tier, "subscription_type", sub,
	    "limit", (json_int_t)c->rl.limit,
	    "remaining", (json_int_t)c->rl.remaining,
	    "used", (json_int_t)c->rl.used,
	    "reset_at", (json_int_t)c->rl.reset_at));
}
