/* handler_audit.c: GET /v1/audit (scope jobs:read): the account's erase
 * receipts, newest first (retention.h): who erased (housekeeping at the
 * end of a retention, an API key, the operator), what (a job, or the
 * account's other data), how many rows of each kind, and when. */
#include "api/api.h"
#include "jobs/retention.h"

struct handler_audit_list {
	json_t	*data;
};

static json_t *
handler_audit_opt(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

static int
handler_audit_one(void *arg, const struct retention_audit_row *r)
{
	struct handler_audit_list *l = arg;
	json_t *counts = json_object();
	int k;

	for (k = 0; k < RETENTION_KIND__MAX; k++)
		json_object_set_new(counts, retention_kind_names[k],
		    json_integer(r->counts.n[k]));
	json_array_append_new(l->data, json_pack("{s:I,s:o,s:s,s:o,s:s,s:s,"
	    "s:o}", "id", (json_int_t)r->id, "job_id",
	    handler_audit_opt(r->job_id), "actor", r->actor, "actor_id",
	    handler_audit_opt(r->actor_id), "reason", r->reason,
	    "erased_at", r->created_at, "erased", counts));
	return 0;
}

void
handler_audit_list(struct api_call *c)
{
	struct handler_audit_list l = { NULL };
	long page, limit;
	long long total = 0;

	if (api_query_long(c, "page", 1, 1000000, 1, &page) == -1 ||
	    api_query_long(c, "limit", 1, 100, 20, &limit) == -1)
		return;
	l.data = json_array();
	if (retention_audit_list(c->ctx->db, c->key.account_id,
	    (page - 1) * limit, limit, &total, handler_audit_one, &l) != 0) {
		json_decref(l.data);
		api_internal_error(c, "retention_audit_list");
		return;
	}
	http_json(c->resp, 200, json_pack("{s:o,s:i,s:i,s:I}", "data", l.data,
	    "page", (int)page, "limit", (int)limit, "total", (json_int_t)total));
}
