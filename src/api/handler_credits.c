/* handler_credits.c: GET /v1/credits, the account's pool and, for members
 * of an organization, the organization's pool: from the process's cache
 * while it is current (authcache.h), else one statement. With ?days=N (1
 * to LEDGER_DAYS_MAX) also "daily": the account's pool's credits used and
 * refunded per UTC day over the last N days, oldest first, today's last
 * (ledger_daily; read from the ledger each time, never cached). */
#include "api/api.h"
#include "util/timeutil.h"
#include <stdlib.h>
#include <time.h>

/* The "daily" array of ndays days, or NULL with 500 answered. */
static json_t *
handler_credits_daily(struct api_call *c, int ndays)
{
	struct ledger_day *days;
	struct tm tm;
	char date[16];
	json_t *a;
	int i;

	if ((days = calloc((size_t)ndays, sizeof(*days))) == NULL ||
	    ledger_daily(c->ctx->db, c->key.account_id, time(NULL), ndays,
	    days) != LEDGER_OK) {
		free(days);
		api_internal_error(c, "credits_daily");
		return NULL;
	}
	a = json_array();
	for (i = 0; i < ndays; i++) {
		gmtime_r(&days[i].day, &tm);
		strftime(date, sizeof(date), "%Y-%m-%d", &tm);
		json_array_append_new(a, json_pack("{s:s,s:I,s:I}", "date",
		    date, "used", (json_int_t)days[i].used, "refunded",
		    (json_int_t)days[i].refunded));
	}
	free(days);
	return a;
}

void
handler_credits_get(struct api_call *c)
{
	struct authcache *cache = &c->ctx->cache;
	struct authcache_credits_read rd;
	struct authcache_credits cr;
	int64_t mono = timeutil_mono_ms();
	json_t *orgv, *body, *daily = NULL;
	long ndays;

	if (api_query_long(c, "days", 1, LEDGER_DAYS_MAX, 0, &ndays) == -1)
		return;
	if (ndays > 0 && (daily = handler_credits_daily(c, (int)ndays)) ==
	    NULL)
		return;
	if (!authcache_credits(cache, c->key_hash, mono, &cr)) {
		/* one statement: the account's pool, its organization and
		 * that pool's balance */
		authcache_credits_begin(cache, c->key_hash, &c->key, mono, &rd);
		if (ledger_account_totals(c->ctx->db, c->key.account_id,
		    &cr.mine, cr.org, &cr.pool) != LEDGER_OK) {
			json_decref(daily);
			api_internal_error(c, "credits");
			return;
		}
		authcache_credits_end(cache, c->key_hash, &rd, &cr);
	}
	orgv = cr.org[0] ? json_pack("{s:s,s:I}", "id", cr.org, "balance",
	    (json_int_t)cr.pool.balance) : json_null();
	body = json_pack("{s:I,s:I,s:I,s:o}",
	    "balance", (json_int_t)cr.mine.balance,
	    "used", (json_int_t)cr.mine.used,
	    "refunded", (json_int_t)cr.mine.refunded, "organization", orgv);
	if (daily != NULL)
		json_object_set_new(body, "daily", daily);
	http_json(c->resp, 200, body);
}
