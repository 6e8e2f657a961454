/* handler_suppressions.c: an account's suppression list (API.md, scope
 * verify:bulk): POST /v1/suppressions { entries: [...] } adds addresses
 * and "@domain" entries (all or none: one bad entry is a 400 naming it),
 * at most account_suppressions_max on a list (beyond: 409
 * suppression_limit_reached, nothing added), GET lists them newest first
 * (?q= searches: the entries that hold q, in either case), DELETE
 * /v1/suppressions/{entry} removes one (the entry percent-encoded in the
 * path: %40example.com). An Idempotency-Key's answer to an addition is
 * stored in the addition's transaction. */
#include "api/api.h"
#include "jobs/suppressions.h"
#include <stdlib.h>
#include <string.h>

#define SUPPRESSIONS_PAGE_MAX 1000

static json_t *
handler_suppressions_added(size_t added, size_t existing)
{
	return json_pack("{s:I,s:I}", "added", (json_int_t)added, "existing",
	    (json_int_t)existing);
}

/* The Idempotency-Key's answer, written in the entries' transaction
 * (suppressions_add's then): entries added are answered, or not added. */
static enum db_err
handler_suppressions_answer(struct db *db, size_t added, size_t existing,
    void *arg)
{
	json_t *o = handler_suppressions_added(added, existing);
	enum db_err e;

	e = api_idempotency_answer_in(arg, db, 201, o);
	json_decref(o);
	return e;
}

void
handler_suppressions_add(struct api_call *c)
{
	char (*norm)[SUPPRESSIONS_ENTRY_MAX + 1] = NULL;
	size_t i, n, added, existing;
	long long max, total;
	json_t *body, *entries, *e;
	char field[32];

	if ((body = api_json_body(c)) == NULL)
		return;
	entries = json_object_get(body, "entries");
	if (!json_is_array(entries) || (n = json_array_size(entries)) == 0 ||
	    n > SUPPRESSIONS_ADD_MAX) {
		api_bad_field(c, "entries", "an array of 1 to %d addresses or "
		    "\"@domain\" entries", SUPPRESSIONS_ADD_MAX);
		goto out;
	}
	if ((norm = calloc(n, sizeof(*norm))) == NULL) {
		api_internal_error(c, "suppressions_add");
		goto out;
	}
	json_array_foreach(entries, i, e) {
		if (json_is_string(e) && suppressions_norm(json_string_value(e),
		    norm[i]) == SUPPRESSIONS_OK)
			continue;
		snprintf(field, sizeof(field), "entries[%zu]", i);
		api_bad_field(c, field, "not an email address or \"@domain\"");
		goto out;
	}
	max = conf_int(c->ctx->conf, CONF_ACCOUNT_SUPPRESSIONS_MAX);
	switch (suppressions_add(c->ctx->db, c->key.account_id, norm, n, max,
	    &added, &existing, &total, c->idem_key != NULL ?
	    handler_suppressions_answer : NULL, c)) {
	case SUPPRESSIONS_OK:
		break;
	case SUPPRESSIONS_LIMIT:
		http_error(c->resp, 409, "suppression_limit_reached",
		    json_pack("{s:I,s:I}", "limit", (json_int_t)max,
		    "entries", (json_int_t)total), "the suppression list "
		    "holds %lld entries and may hold %lld "
		    "(account_suppressions_max): nothing was added; remove "
		    "entries first", total, max);
		goto out;
	default:
		api_internal_error(c, "suppressions_add");
		goto out;
	}
	c->idem_done = c->idem_key != NULL;
	http_json(c->resp, 201, handler_suppressions_added(added, existing));
out:
	free(norm);
	json_decref(body);
}

static int
handler_suppressions_one(void *arg, const char *entry, const char *created)
{
	json_array_append_new(arg, json_pack("{s:s,s:s}", "entry", entry,
	    "created_at", created));
	return 0;
}

void
handler_suppressions_list(struct api_call *c)
{
	long page, limit;
	long long total = 0;
	struct buf q;
	json_t *data;

	if (api_query_long(c, "page", 1, 100000000, 1, &page) == -1 ||
	    api_query_long(c, "limit", 1, SUPPRESSIONS_PAGE_MAX, 100,
	    &limit) == -1)
		return;
	/* (no cap of its own: the request line's bounds it; too long is 400) */
	buf_init(&q, BUF_NOMAX);
	if (http_query_get(c->req->query, "q", &q) == 0 &&
	    (q.len > SUPPRESSIONS_SEARCH_MAX || strlen(buf_str(&q)) != q.len)) {
		api_bad_field(c, "q", "a text of at most %d bytes",
		    SUPPRESSIONS_SEARCH_MAX);
		goto out;
	}
	data = json_array();
	if (suppressions_list(c->ctx->db, c->key.account_id, buf_str(&q), page,
	    limit, &total, handler_suppressions_one, data) != SUPPRESSIONS_OK) {
		json_decref(data);
		api_internal_error(c, "suppressions_list");
		goto out;
	}
	http_json(c->resp, 200, json_pack("{s:o,s:i,s:i,s:I,s:s}", "data",
	    data, "page", (int)page, "limit", (int)limit, "total",
	    (json_int_t)total, "q", buf_str(&q)));
out:
	buf_free(&q);
}

void
handler_suppressions_delete(struct api_call *c)
{
	struct buf entry;

	buf_init(&entry, 1024);
	if (http_path_decode(c->params[0], &entry) == -1) {
		api_internal_error(c, "suppressions_delete");
		goto out;
	}
	switch (suppressions_delete(c->ctx->db, c->key.account_id,
	    buf_str(&entry))) {
	case SUPPRESSIONS_OK:
		http_json(c->resp, 200, json_pack("{s:s,s:b}", "entry",
		    buf_str(&entry), "deleted", 1));
		break;
	case SUPPRESSIONS_NOT_FOUND:
		http_error(c->resp, 404, "not_found", NULL,
		    "%s is not on the suppression list", buf_str(&entry));
		break;
	default:
		api_internal_error(c, "suppressions_delete");
		break;
	}
out:
	buf_free(&entry);
}
