/* handler_keys.c: the key management API (scope "*"): POST /v1/keys,
 * GET /v1/keys, DELETE /v1/keys/{id}. A new key is shown once, in the 201:
 * the answer kept for an Idempotency-Key replay lacks it. A customer's
 * rateLimit (rate_limit accepted too) stays within the key's tier or
 * organization limit; without one the key gets the spec's default, 100
 * requests per minute (or that limit when lower: keys.h). */
#include "api/probes.h"
#include "core/keys.h"
#include "util/log.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A JSON array of strings (or one string) joined with commas into out. */
static int
handler_keys_join_strings(json_t *v, struct buf *out)
{
	size_t i;
	json_t *e;

	if (json_is_string(v))
		return buf_puts(out, json_string_value(v));
	if (!json_is_array(v))
		return -1;
	json_array_foreach(v, i, e) {
		if (!json_is_string(e))
			return -1;
		if ((i && buf_putc(out, ',') == -1) ||
		    buf_puts(out, json_string_value(e)) == -1)
			return -1;
	}
	return 0;
}

/* "a,b c" into ["a","b","c"]. */
static json_t *
handler_keys_split(const char *s)
{
	json_t *a = json_array();
	size_t n;

	while (s && *s) {
		s += strspn(s, ", \t");
		if ((n = strcspn(s, ", \t")) == 0)
			break;
		json_array_append_new(a, json_stringn(s, n));
		s += n;
	}
	return a;
}

static int
handler_keys_bad_field(struct api_call *c, const char *field, const char *what)
{
	api_bad_field(c, field, "%s", what);
	return -1;
}

static int
handler_keys_parse_body(struct api_call *c, json_t *body, struct keys_spec *s,
    struct buf *scopes, struct buf *allow, const char **limit_field)
{
	json_t *v, *other;

	v = json_object_get(body, "name");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return handler_keys_bad_field(c, "name",
			    "must be a string");
		s->name = json_string_value(v);
	}
	v = json_object_get(body, "scopes");
	if (v == NULL || handler_keys_join_strings(v, scopes) == -1 ||
	    auth_scope_parse_list(buf_str(scopes), &s->scopes) == -1)
		return handler_keys_bad_field(c, "scopes", "an array of "
		    "scopes out of verify:single, verify:bulk, jobs:read, "
		    "jobs:write, webhooks:manage, credits:read, feedback:write, *");
	v = json_object_get(body, "ip_allowlist");
	if (v && !json_is_null(v)) {
		if (handler_keys_join_strings(v, allow) == -1)
			return handler_keys_bad_field(c, "ip_allowlist",
			    "an array of addresses or CIDR networks");
		s->ip_allowlist = buf_str(allow);
	}
	/* The spec calls it rateLimit; rate_limit is accepted too. */
	*limit_field = "rateLimit";
	v = json_object_get(body, "rateLimit");
	other = json_object_get(body, "rate_limit");
	if (v == NULL || json_is_null(v)) {
		v = other;
		*limit_field = "rate_limit";
	} else if (other && !json_is_null(other) && !json_equal(v, other))
		return handler_keys_bad_field(c, "rateLimit", "rateLimit and "
		    "rate_limit differ; send one of them");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > KEYS_RATE_LIMIT_MAX)
			return handler_keys_bad_field(c, *limit_field,
			    "an integer from 1 to 100000");
		s->rate_limit = (long)json_integer_value(v);
	}
	v = json_object_get(body, "sandbox");
	if (v && !json_is_null(v)) {
		if (!json_is_boolean(v))
			return handler_keys_bad_field(c, "sandbox",
			    "must be a boolean");
		s->sandbox = json_is_true(v);
	}
	v = json_object_get(body, "expires_at");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return handler_keys_bad_field(c, "expires_at",
			    "an ISO 8601 UTC time");
		s->expires_at = json_string_value(v);
	}
	return 0;
}

static json_t *
handler_keys_limit_json(long limit)
{
	return limit == -1 ? json_null() : json_integer(limit);
}

/* The new key's record; with the key text only in the 201 itself. */
static json_t *
handler_keys_created(const char *id, const char *key, const struct keys_spec *s,
    const char *scopes)
{
	json_t *o = json_pack("{s:s,s:s,s:o,s:b,s:o,s:o,s:o,s:o}",
	    "id", id, "name", s->name ? s->name : "",
	    "scopes", handler_keys_split(scopes), "sandbox", s->sandbox,
	    "rateLimit", handler_keys_limit_json(s->rate_limit),
	    "rate_limit", handler_keys_limit_json(s->rate_limit),
	    "ip_allowlist", handler_keys_split(s->ip_allowlist),
	    "expires_at", s->expires_at ? json_string(s->expires_at) :
	    json_null());

	if (key != NULL)
		json_object_set_new(o, "key", json_string(key));
	return o;
}

/* The Idempotency-Key's answer, written in the key's transaction
 * (keys_spec.then): the record without the key's text, which is never
 * stored (key null, key_shown false). */
struct handler_keys_answer {
	struct api_call		*c;
	const struct keys_spec	*s;
	const char		*scopes;
};

static enum db_err
handler_keys_answer(struct db *db, const char *id, void *arg)
{
	struct handler_keys_answer *a = arg;

	return api_idempotency_hide_in(a->c, db, 201, handler_keys_created(id,
	    NULL, a->s, a->scopes), "key");
}

void
handler_keys_create(struct api_call *c)
{
	struct handler_keys_answer answer;
	struct keys_spec s;
	struct buf scopes, allow, why, fmt;
	char id[IDS_MAX], key[AUTH_KEY_MAX], field[32];
	const char *limit_field = "rateLimit", *colon;
	json_t *body;
	enum keys_err rc;

	if ((body = api_json_body(c)) == NULL)
		return;
	memset(&s, 0, sizeof(s));
	s.account_id = c->key.account_id;
	/* A key made by an organization's key belongs to that organization
	 * (its pool and api_rate_limit); an account's own key makes own keys. */
	s.org_id = c->key.org_id[0] ? c->key.org_id : NULL;
	s.rate_limit = -1;
	s.capped = 1;
	buf_init(&scopes, 1024);
	buf_init(&allow, 4096);
	buf_init(&why, 512);
	buf_init(&fmt, 256);
	if (handler_keys_parse_body(c, body, &s, &scopes, &allow,
	    &limit_field) == -1)
		goto out;
	/* a sandbox key makes sandbox keys only: it must not be a way to a
	 * key that is charged and probes real mail servers */
	if (c->key.sandbox && !s.sandbox) {
		http_error(c->resp, 403, "sandbox_key_restricted", NULL,
		    "a sandbox key may create sandbox keys only: send "
		    "\"sandbox\": true");
		goto out;
	}
	auth_scope_format(s.scopes, &fmt);
	/* the key is never stored: a replay says it is not shown */
	if (c->idem_key != NULL) {
		answer.c = c;
		answer.s = &s;
		answer.scopes = buf_str(&fmt);
		s.then = handler_keys_answer;
		s.then_arg = &answer;
	}
	rc = keys_create(c->ctx->db, &s, id, key, &why);
	if (rc == KEYS_INVALID) {
		/* keys.c names the field before a colon */
		colon = strchr(buf_str(&why), ':');
		snprintf(field, sizeof(field), "body");
		if (colon && (size_t)(colon - buf_str(&why)) < sizeof(field))
			snprintf(field, sizeof(field), "%.*s",
			    (int)(colon - buf_str(&why)), buf_str(&why));
		handler_keys_bad_field(c, strcmp(field, "rate_limit") == 0 ?
		    limit_field : field, colon ? colon + 2 : buf_str(&why));
		goto out;
	}
	if (rc != KEYS_OK) {
		api_internal_error(c, "keys_create");
		goto out;
	}
	c->idem_done = c->idem_key != NULL;
	http_json(c->resp, 201, handler_keys_created(id, key, &s,
	    buf_str(&fmt)));
	memset(key, 0, sizeof(key));
out:
	json_decref(body);
	buf_free(&scopes);
	buf_free(&allow);
	buf_free(&why);
	buf_free(&fmt);
}

static json_t *
handler_keys_opt_string(const char *s)
{
	return s ? json_string(s) : json_null();
}

static int
handler_keys_list_one(void *arg, const struct keys_info *k)
{
	json_t *data = arg;
	const char *status = k->revoked_at ? "revoked" : "active";

	json_t *o = json_pack(
	    "{s:s,s:s,s:s,s:o,s:b,s:o,s:o,s:o,s:s,s:o,s:o,s:s}",
	    "id", k->id, "name", k->name ? k->name : "", "hint", k->hint,
	    "scopes", handler_keys_split(k->scopes), "sandbox", k->sandbox,
	    "rateLimit", handler_keys_limit_json(k->rate_limit),
	    "ip_allowlist", handler_keys_split(k->ip_allowlist),
	    "organization_id", handler_keys_opt_string(k->org_id),
	    "created_at", k->created_at,
	    "expires_at", handler_keys_opt_string(k->expires_at),
	    "revoked_at", handler_keys_opt_string(k->revoked_at),
	    "status", status);

	json_object_set_new(o, "rate_limit",
	    handler_keys_limit_json(k->rate_limit));
	json_array_append_new(data, o);
	return 0;
}

void
handler_keys_list(struct api_call *c)
{
	json_t *data = json_array();

	if (keys_list(c->ctx->db, c->key.account_id, handler_keys_list_one,
	    data) != KEYS_OK) {
		json_decref(data);
		api_internal_error(c, "keys_list");
		return;
	}
	http_json(c->resp, 200, json_pack("{s:o}", "data", data));
}

void
handler_keys_delete(struct api_call *c)
{
	/* An unknown or revoked key is 404 at once; a real revocation
	 * waits auth_cache_ms below, within the probe limits (probes.h). */
	switch (keys_find_active(c->ctx->db, c->key.account_id,
	    c->params[0])) {
	case KEYS_OK:
		break;
	case KEYS_NOT_FOUND:
		http_error(c->resp, 404, "not_found", NULL, "no active key %s",
		    c->params[0]);
		return;
	default:
		api_internal_error(c, "keys_find_active");
		return;
	}
	if (probes_revocation(c) == -1)
		return;
	switch (keys_revoke(c->ctx->db, c->key.account_id, c->params[0])) {
	case KEYS_OK:
		/* answered only once no responder anywhere, this one
		 * included, still trusts a cached row of the key
		 * (authcache.h) */
		authcache_settle(conf_int(c->ctx->conf, CONF_AUTH_CACHE_MS));
		http_json(c->resp, 200, json_pack("{s:s,s:b}", "id",
		    c->params[0], "revoked", 1));
		break;
	case KEYS_NOT_FOUND:
		http_error(c->resp, 404, "not_found", NULL, "no key %s",
		    c->params[0]);
		break;
	default:
		api_internal_error(c, "keys_revoke");
		break;
	}
}
