/* handler_domain_check.c: POST /v1/domain/check: MX records, provider,
 * catch-all (one probe of a random address), disposable. Free of charge,
 * with its own limit of 30 requests a minute per account, answered with the
 * flat 429 body of the spec. */
#include "api/probes.h"
#include "engine/addr.h"
#include "util/timeutil.h"
#include <stdio.h>

#define DOMAIN_CHECK_LIMIT 30

/* The endpoint's own window; 0 to go on, -1 when answered. */
static int
handler_domain_check_limit(struct api_call *c)
{
	struct ratelimit_status st;
	char bucket[96], when[TIMEUTIL_ISO_LEN], v[32];
	int64_t now = timeutil_now_ms();
	long long wait;

	snprintf(bucket, sizeof(bucket), "domain:%s", c->key.account_id);
	if (ratelimit_check(c->ctx->db, bucket, DOMAIN_CHECK_LIMIT, 1, now,
	    &st) != DB_OK) {
		api_internal_error(c, "domain_check_limit");
		return -1;
	}
	if (!st.exceeded)
		return 0;
	wait = st.reset_at - now / 1000;
	snprintf(v, sizeof(v), "%lld", wait < 1 ? 1 : wait);
	http_set_header(c->resp, "Retry-After", v);
	timeutil_iso8601((time_t)st.reset_at, when);
	c->resp->error_code = "rate_limited";
	http_json(c->resp, 429, json_pack("{s:b,s:s,s:i,s:s}", "success", 0,
	    "error", "Domain check rate limit of 30 requests per minute "
	    "exceeded", "limit", DOMAIN_CHECK_LIMIT, "reset_at", when));
	return -1;
}

void
handler_domain_check(struct api_call *c)
{
	struct verify_domain_result d;
	struct verify_gate gate;
	struct addr_domain ad;
	struct verify_engine *e;
	json_t *body, *domain, *mx;
	size_t i;

	if ((body = api_json_body(c)) == NULL)
		return;
	domain = json_object_get(body, "domain");
	if (!json_is_string(domain)) {
		api_bad_field(c, "domain", "a string with the domain name");
		goto out;
	}
	if (addr_domain_parsen(json_string_value(domain),
	    json_string_length(domain), &ad) != ADDR_OK) {
		api_bad_field(c, "domain", "not a valid domain name");
		goto out;
	}
	if (handler_domain_check_limit(c) == -1 || (e = api_engine(c)) == NULL)
		goto out;
	probes_gate(c, &gate);
	if (verify_domain(e, c->ctx->db, ad.ascii, ad.domain, &gate, &d) ==
	    VERIFY_ERR_REFUSED)
		goto out;	/* 429 or 503 answered */
	mx = json_array();
	for (i = 0; i < d.nmx; i++)
		json_array_append_new(mx, json_pack("{s:i,s:s}", "priority",
		    (int)d.mx[i].priority, "host", d.mx[i].host));
	http_json(c->resp, 200, json_pack("{s:s,s:o,s:s,s:b,s:b,s:b}",
	    "domain", d.domain, "mx_records", mx,
	    "provider", d.provider[0] ? d.provider : "unknown",
	    "accept_all", d.accept_all == 1, "disposable", d.disposable,
	    "has_valid_mx", d.has_valid_mx));
out:
	json_decref(body);
}
