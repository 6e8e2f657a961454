/* handler_credits.c: GET /v1/credits, the account's pool and, for members
 * of an organization, the organization's pool: from the process's cache
 * while it is current (authcache.h), else one statement. */
#include "api/api.h"
#include "util/timeutil.h"

void
handler_credits_get(struct api_call *c)
{
	struct authcache *cache = &c->ctx->cache;
	struct authcache_credits_read rd;
	struct authcache_credits cr;
	int64_t mono = timeutil_mono_ms();
	json_t *orgv;

	if (!authcache_credits(cache, c->key_hash, mono, &cr)) {
		/* one statement: the account's pool, its organization and
		 * that pool's balance */
		authcache_credits_begin(cache, c->key_hash, &c->key, mono, &rd);
		if (ledger_account_totals(c->ctx->db, c->key.account_id,
		    &cr.mine, cr.org, &cr.pool) != LEDGER_OK) {
			api_internal_error(c, "credits");
			return;
		}
		authcache_credits_end(cache, c->key_hash, &rd, &cr);
	}
	orgv = cr.org[0] ? json_pack("{s:s,s:I}", "id", cr.org, "balance",
	    (json_int_t)cr.pool.balance) : json_null();
	http_json(c->resp, 200, json_pack("{s:I,s:I,s:I,s:o}",
	    "balance", (json_int_t)cr.mine.balance,
	    "used", (json_int_t)cr.mine.used,
	    "refunded", (json_int_t)cr.mine.refunded, "organization", orgv));
}
