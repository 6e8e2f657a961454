/* handler_credits.c: GET /v1/credits, the account's pool and, for members
 * of an organization, the organization's pool. */
#include "api/api.h"
#include "core/ledger.h"

void
handler_credits_get(struct api_call *c)
{
	struct ledger_totals mine, pool;
	char org[IDS_MAX];
	json_t *orgv;

	/* one statement: the account's pool, its organization and that
	 * pool's balance */
	if (ledger_account_totals(c->ctx->db, c->key.account_id, &mine, org,
	    &pool) != LEDGER_OK) {
		api_internal_error(c, "credits");
		return;
	}
	orgv = org[0] ? json_pack("{s:s,s:I}", "id", org, "balance",
	    (json_int_t)pool.balance) : json_null();
	http_json(c->resp, 200, json_pack("{s:I,s:I,s:I,s:o}",
	    "balance", (json_int_t)mine.balance, "used", (json_int_t)mine.used,
	    "refunded", (json_int_t)mine.refunded, "organization", orgv));
}
