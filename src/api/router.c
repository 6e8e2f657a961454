/* router.c: maps method and path to a handler and runs the checks the spec
 * puts in front of every endpoint, in this order: client address (X-Forwarded-
 * For believed only from trusted_proxies), key lookup, rate limit (429; every
 * response carries X-RateLimit-*), the key's IP allowlist (403), a key of
 * an organization its account has left (403), a bad, expired or revoked
 * key (401), route (404, 405 with Allow), a missing key
 * (401), subscription (403), scope (403), body size (411/413), then the
 * handler, with Idempotency-Key around it where the route creates something.
 * A request without a usable key (none, bad, or from outside its allowlist)
 * is counted in the anonymous bucket of its address, so guessing keys,
 * knocking on unknown paths or asking GET /rate-limit without a key is rate
 * limited too; GET /rate-limit with a usable key is not counted (it is
 * answered from the key cache, authcache.h). */
#include "api/router.h"
#include "core/idempotency.h"
#include "util/cookie.h"
#include "util/log.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum route_auth {
	ROUTE_AUTH_REQUIRED,
	ROUTE_AUTH_OPTIONAL,	/* GET /rate-limit, /v1/openapi.json:
				 * anonymous allowed (and then counted in the
				 * address's bucket, router_gate) */
	ROUTE_AUTH_NONE,	/* the senders' webhooks: the handler checks
				 * the sender's signature; Authorization is
				 * not an API key there (Postmark's basic
				 * auth), the request counts in the
				 * address's bucket */
	ROUTE_AUTH_SIGNIN,	/* POST /v1/session: no key, not counted
				 * here; the handler limits attempts per
				 * account and per address itself */
	ROUTE_AUTH__MAX
};

struct route {
	enum http_method method;
	const char	*pattern;	/* "{}" matches one path segment */
	enum route_auth	 auth;
	int		 scope;		/* enum auth_scope, -1 for none */
	size_t		 body_max;	/* 0: no body expected */
	int		 counted;	/* counts against the rate limit (a
					 * request without a usable key
					 * always does) */
	int		 idempotent;	/* honours Idempotency-Key */
	api_handler_fn	 handler;	/* every route has one */
};

#define MiB (1024 * 1024)
#define REQ ROUTE_AUTH_REQUIRED

static const struct route routes[] = {
	{ HTTP_GET, "/rate-limit", ROUTE_AUTH_OPTIONAL, -1, 0, 0,
	    0, handler_rate_limit },
	/* the API description: no key needed; like /rate-limit, counted
	 * only without a usable key (in the address's bucket) */
	{ HTTP_GET, "/v1/openapi.json", ROUTE_AUTH_OPTIONAL, -1, 0, 0,
	    0, handler_openapi },
	/* the dashboard's sign-in (websession.h) */
	{ HTTP_POST, "/v1/session", ROUTE_AUTH_SIGNIN, -1, API_JSON_MAX, 0,
	    0, handler_session_create },
	{ HTTP_POST, "/v1/session/invite", ROUTE_AUTH_SIGNIN, -1,
	    API_JSON_MAX, 0, 0, handler_session_accept },
	{ HTTP_GET, "/v1/session", REQ, -1, 0, 1, 0, handler_session_get },
	{ HTTP_DELETE, "/v1/session", REQ, -1, 0, 1, 0,
	    handler_session_delete },
	{ HTTP_POST, "/v1/verify", REQ, AUTH_SCOPE_VERIFY_SINGLE,
	    API_JSON_MAX, 1, 1, handler_verify },
	{ HTTP_POST, "/v1/verify/bulk", REQ, AUTH_SCOPE_VERIFY_BULK, 16 * MiB,
	    1, 1, handler_bulk_create },
	/* Idempotency-Key is the handler's: it hashes the body as it
	 * streams (a file of 50 MB is never held). */
	{ HTTP_POST, "/v1/verify/bulk/upload", REQ, AUTH_SCOPE_VERIFY_BULK,
	    UPLOAD_BODY_MAX, 1, 0, handler_upload },
	{ HTTP_POST, "/v1/verify/bulk/{}/preview", REQ, AUTH_SCOPE_VERIFY_BULK,
	    API_JSON_MAX, 1, 0, handler_preview },
	{ HTTP_POST, "/v1/verify/bulk/{}/confirm", REQ, AUTH_SCOPE_VERIFY_BULK,
	    API_JSON_MAX, 1, 1, handler_preview_confirm },
	{ HTTP_POST, "/v1/verify/batch", REQ, AUTH_SCOPE_VERIFY_BULK,
	    64 * MiB, 1, 1, handler_bulk_batch_create },
	{ HTTP_GET, "/v1/verify/batch/{}", REQ, AUTH_SCOPE_VERIFY_BULK, 0, 1,
	    0, handler_jobs_batch_get },
	{ HTTP_POST, "/v1/domain/check", REQ, AUTH_SCOPE_VERIFY_SINGLE,
	    API_JSON_MAX, 1, 0, handler_domain_check },
	{ HTTP_GET, "/v1/jobs", REQ, AUTH_SCOPE_JOBS_READ, 0, 1, 0,
	    handler_jobs_list },
	{ HTTP_GET, "/v1/jobs/{}", REQ, AUTH_SCOPE_JOBS_READ, 0, 1, 0,
	    handler_jobs_get },
	{ HTTP_DELETE, "/v1/jobs/{}", REQ, AUTH_SCOPE_JOBS_WRITE, 0, 1, 0,
	    handler_jobs_cancel },
	{ HTTP_GET, "/v1/jobs/{}/progress", REQ, AUTH_SCOPE_JOBS_READ, 0, 1,
	    0, handler_jobs_progress },
	{ HTTP_GET, "/v1/jobs/{}/results", REQ, AUTH_SCOPE_JOBS_READ, 0, 1,
	    0, handler_jobs_results },
	{ HTTP_GET, "/v1/jobs/{}/download", REQ, AUTH_SCOPE_JOBS_READ, 0, 1,
	    0, handler_jobs_download },
	{ HTTP_DELETE, "/v1/jobs/{}/data", REQ, AUTH_SCOPE_JOBS_WRITE, 0, 1,
	    0, handler_jobs_erase },
	{ HTTP_GET, "/v1/audit", REQ, AUTH_SCOPE_JOBS_READ, 0, 1, 0,
	    handler_audit_list },
	{ HTTP_GET, "/v1/credits", REQ, AUTH_SCOPE_CREDITS_READ, 0, 1,
	    0, handler_credits_get },
	{ HTTP_POST, "/v1/keys", REQ, AUTH_SCOPE_ALL, API_JSON_MAX, 1,
	    1, handler_keys_create },
	{ HTTP_GET, "/v1/keys", REQ, AUTH_SCOPE_ALL, 0, 1, 0, handler_keys_list },
	{ HTTP_DELETE, "/v1/keys/{}", REQ, AUTH_SCOPE_ALL, 0, 1,
	    0, handler_keys_delete },
	{ HTTP_POST, "/v1/webhooks", REQ, AUTH_SCOPE_WEBHOOKS_MANAGE,
	    API_JSON_MAX, 1, 1, handler_webhooks_create },
	{ HTTP_GET, "/v1/webhooks", REQ, AUTH_SCOPE_WEBHOOKS_MANAGE, 0, 1,
	    0, handler_webhooks_list },
	{ HTTP_GET, "/v1/webhooks/{}", REQ, AUTH_SCOPE_WEBHOOKS_MANAGE, 0, 1,
	    0, handler_webhooks_get },
	{ HTTP_PATCH, "/v1/webhooks/{}", REQ, AUTH_SCOPE_WEBHOOKS_MANAGE,
	    API_JSON_MAX, 1, 0, handler_webhooks_update },
	{ HTTP_DELETE, "/v1/webhooks/{}", REQ, AUTH_SCOPE_WEBHOOKS_MANAGE, 0,
	    1, 0, handler_webhooks_delete },
	{ HTTP_POST, "/v1/webhooks/{}/test", REQ, AUTH_SCOPE_WEBHOOKS_MANAGE,
	    API_JSON_MAX, 1, 0, handler_webhooks_test },
	{ HTTP_POST, "/v1/webhooks/{}/rotate-secret", REQ,
	    AUTH_SCOPE_WEBHOOKS_MANAGE, API_JSON_MAX, 1, 0,
	    handler_webhooks_rotate },
	{ HTTP_GET, "/v1/webhooks/{}/deliveries", REQ,
	    AUTH_SCOPE_WEBHOOKS_MANAGE, 0, 1, 0, handler_webhooks_deliveries },
	{ HTTP_POST, "/v1/suppressions", REQ, AUTH_SCOPE_VERIFY_BULK,
	    API_JSON_MAX, 1, 1, handler_suppressions_add },
	{ HTTP_GET, "/v1/suppressions", REQ, AUTH_SCOPE_VERIFY_BULK, 0, 1,
	    0, handler_suppressions_list },
	{ HTTP_DELETE, "/v1/suppressions/{}", REQ, AUTH_SCOPE_VERIFY_BULK, 0,
	    1, 0, handler_suppressions_delete },
	{ HTTP_POST, "/v1/feedback", REQ, AUTH_SCOPE_FEEDBACK_WRITE,
	    8 * MiB, 1, 0, handler_feedback_post },
	{ HTTP_POST, "/v1/feedback/{}", ROUTE_AUTH_NONE, -1, API_JSON_MAX, 1,
	    0, handler_feedback_sender },
	{ HTTP_GET, "/v1/reports/accuracy", REQ, AUTH_SCOPE_JOBS_READ, 0, 1,
	    0, handler_feedback_report },
};

int
router_ctx_init(struct api_ctx *ctx, const struct conf *c,
    const struct api_shared *sh, struct buf *err)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->conf = c;
	ctx->responders = sh->responders;
	ctx->permits = sh->permits;
	ctx->pending = sh->pending;
	ratelimit_set_window(conf_int(c, CONF_RATE_WINDOW_SECONDS));
	authcache_init(&ctx->cache, conf_int(c, CONF_AUTH_CACHE_MS), sh->gens);
	if ((ctx->slots = slots_attach(sh->slots_fd, err)) == NULL)
		return -1;
	if (ipnet_parse_list(conf_str(c, CONF_TRUSTED_PROXIES), &ctx->proxies,
	    &ctx->nproxies) == -1) {
		buf_puts(err, "trusted_proxies: not a list of addresses or "
		    "CIDR networks");
		return -1;
	}
	return 0;
}

void
router_ctx_free(struct api_ctx *ctx)
{
	verify_engine_free(ctx->engine);
	ctx->engine = NULL;
	authcache_free(&ctx->cache);
	slots_free(ctx->slots);
	ctx->slots = NULL;
	db_close(ctx->db);
	free(ctx->proxies);
	ctx->db = NULL;
	ctx->proxies = NULL;
}

/* Segment-wise match; "{}" captures one non-empty segment. */
static int
router_match(const char *pattern, const char *path,
    char params[API_MAX_PARAMS][256])
{
	int np = 0;
	size_t n;

	while (*pattern && *path) {
		if (pattern[0] == '{' && pattern[1] == '}') {
			n = strcspn(path, "/");
			if (n == 0 || n >= 256 || np == API_MAX_PARAMS)
				return 0;
			memcpy(params[np], path, n);
			params[np++][n] = '\0';
			path += n;
			pattern += 2;
			continue;
		}
		if (*pattern != *path)
			return 0;
		pattern++;
		path++;
	}
	return *pattern == '\0' && *path == '\0';
}

static const struct route *
router_find(const struct http_req *req, char params[API_MAX_PARAMS][256],
    struct buf *allow)
{
	char scratch[API_MAX_PARAMS][256];
	size_t i;
	const struct route *found = NULL;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (!router_match(routes[i].pattern, req->path, scratch))
			continue;
		if (allow->len)
			buf_puts(allow, ", ");
		buf_puts(allow, http_method_names[routes[i].method]);
		if (routes[i].method == req->method && found == NULL) {
			found = &routes[i];
			memcpy(params, scratch, sizeof(scratch));
		}
	}
	return found;
}

/* The client's address: REMOTE_ADDR, unless that is a trusted proxy, in
 * which case X-Forwarded-For is walked from the right past trusted hops. */
static void
router_client_ip(struct api_ctx *ctx, struct http_req *req)
{
	const char *xff = http_header_in(req, "X-Forwarded-For");
	const char *remote = req->remote_addr ? req->remote_addr : "";
	struct ipnet a;
	char hop[64];
	const char *end, *start;
	size_t n;

	snprintf(req->client_ip, sizeof(req->client_ip), "%s", remote);
	if (ctx->nproxies == 0 || xff == NULL ||
	    ipnet_parse_addr(remote, &a) == -1 ||
	    !ipnet_list_contains(ctx->proxies, ctx->nproxies, &a))
		return;
	end = xff + strlen(xff);
	while (end > xff) {
		start = end;
		while (start > xff && start[-1] != ',')
			start--;
		n = (size_t)(end - start);
		end = start > xff ? start - 1 : xff;
		while (n && (*start == ' ' || *start == '\t')) {
			start++;
			n--;
		}
		while (n && (start[n - 1] == ' ' || start[n - 1] == '\t'))
			n--;
		if (n == 0 || n >= sizeof(hop))
			return;		/* garbage: keep the last good hop */
		memcpy(hop, start, n);
		hop[n] = '\0';
		if (ipnet_parse_addr(hop, &a) == -1)
			return;
		snprintf(req->client_ip, sizeof(req->client_ip), "%s", hop);
		if (!ipnet_list_contains(ctx->proxies, ctx->nproxies, &a))
			return;
	}
}

static int
router_ip_allowed(const struct auth_key *k, const char *ip)
{
	struct ipnet *nets, a;
	size_t n;
	int ok;

	if (k->ip_allowlist[0] == '\0')
		return 1;
	if (ipnet_parse_addr(ip, &a) == -1 ||
	    ipnet_parse_list(k->ip_allowlist, &nets, &n) == -1)
		return 0;
	ok = ipnet_list_contains(nets, n, &a);
	free(nets);
	return ok;
}

static void
router_ratelimit_headers(struct api_call *c)
{
	char v[32];

	snprintf(v, sizeof(v), "%ld", c->rl.limit);
	http_set_header(c->resp, "X-RateLimit-Limit", v);
	snprintf(v, sizeof(v), "%ld", c->rl.remaining);
	http_set_header(c->resp, "X-RateLimit-Remaining", v);
	snprintf(v, sizeof(v), "%lld", (long long)c->rl.reset_at);
	http_set_header(c->resp, "X-RateLimit-Reset", v);
}

/* Every response carries X-RateLimit-*: when the window could not be read
 * (the database is down), the limit this request would have, nothing
 * known to be used, and a window starting now. */
static void
router_ratelimit_fallback(struct api_call *c)
{
	if (http_resp_header(c->resp, "X-RateLimit-Limit") != NULL)
		return;
	memset(&c->rl, 0, sizeof(c->rl));
	c->rl.limit = c->key.account_id[0] ? auth_key_rate_limit(&c->key) :
	    auth_tier_limits[AUTH_TIER_ANONYMOUS];
	c->rl.remaining = c->rl.limit;
	c->rl.reset_at = (timeutil_now_ms() + ratelimit_window_ms()) / 1000;
	router_ratelimit_headers(c);
}

static void
router_too_many(struct api_call *c, int64_t now_ms)
{
	long long wait = c->rl.reset_at - now_ms / 1000;
	char v[32];

	if (wait < 1)
		wait = 1;
	snprintf(v, sizeof(v), "%lld", wait);
	http_set_header(c->resp, "Retry-After", v);
	http_error(c->resp, 429, "rate_limited",
	    json_pack("{s:I,s:I,s:I}", "limit", (json_int_t)c->rl.limit,
	    "remaining", (json_int_t)c->rl.remaining, "reset_at",
	    (json_int_t)c->rl.reset_at),
	    "rate limit of %ld requests per minute exceeded; retry in %lld s",
	    c->rl.limit, wait);
}

/* The rate-limit bucket of an account (auth_lookup_window builds the same
 * name in SQL). */
static void
router_account_bucket(char *out, size_t n, const char *account_id)
{
	snprintf(out, n, RATELIMIT_ACCOUNT_PREFIX "%s", account_id);
}

/* The mark of this host's leases of an account's bucket, taken before a
 * read of its window (permits.h); 0 without a shared table. */
static uint64_t
router_mark(struct api_call *c, const char *account_id)
{
	char bucket[96];

	if (c->ctx->permits == NULL)
		return 0;
	router_account_bucket(bucket, sizeof(bucket), account_id);
	return permits_mark(c->ctx->permits, bucket);
}

/* The presented key (hash) and, for a request that is not counted
 * (want_window), its account's window: from the process's cache
 * when it is fresh (authcache.h), else from MariaDB, one statement, and
 * kept for the next requests. */
static enum auth_result
router_key(struct api_call *c, const uint8_t hash[32], int64_t now,
    int want_window, struct ratelimit_window *win)
{
	struct authcache *cache = &c->ctx->cache;
	struct db *db = c->ctx->db;
	char bucket[96], known[IDS_MAX];
	int64_t mono = timeutil_mono_ms(), expires = 0;
	enum auth_result ar;
	uint64_t mark;
	uint32_t gen;

	if (authcache_key(cache, hash, mono, now, &c->key, &ar, known)) {
		if (!want_window || ar != AUTH_OK ||
		    authcache_window(cache, hash, mono, now, win))
			return ar;
		/* the key is known, its window is not: read only that */
		router_account_bucket(bucket, sizeof(bucket),
		    c->key.account_id);
		gen = authcache_gen(cache, c->key.account_id);
		mark = router_mark(c, c->key.account_id);
		if (ratelimit_window_read(db, bucket, now, win) != DB_OK)
			return AUTH_DB_ERROR;
		win->mark = mark;
		authcache_put_window(cache, hash, win, mono, gen);
		return AUTH_OK;
	}
	if (!want_window) {
		ar = auth_lookup(db, hash, &c->key, &expires);
		if (ar == AUTH_OK)
			authcache_put(cache, hash, &c->key, expires, mono);
		return ar;
	}
	/* A window read in the same statement as the key is kept only when
	 * the account was known before the read, since its generation and
	 * mark must be taken before the read (a key's account never
	 * changes); else router_window reads it again. */
	gen = known[0] ? authcache_gen(cache, known) : 0;
	mark = known[0] ? router_mark(c, known) : PERMITS_MARK_STALE;
	ar = auth_lookup_window(db, hash, now, &c->key, &expires, win);
	if (ar == AUTH_OK) {
		authcache_put(cache, hash, &c->key, expires, mono);
		if (known[0] && strcmp(known, c->key.account_id) == 0) {
			win->mark = mark;
			authcache_put_window(cache, hash, win, mono, gen);
		} else
			win->mark = PERMITS_MARK_STALE;
	}
	return ar;
}

/* The window of a request that is not counted (an authenticated GET
 * /rate-limit, router_key has it), less the permits this host has leased
 * of it and not used (permits.h): exact for the requests this host has
 * answered. A window read under another state of the host's leases (a
 * round trip of the bucket since) is read again, and kept; twice at most
 * (requests of the bucket counted at that very time). */
static enum db_err
router_window(struct api_call *c, const char *bucket, long limit,
    int64_t now, struct ratelimit_window *win)
{
	int64_t mono;
	enum db_err e;
	long unused = 0;
	uint64_t mark;
	uint32_t gen;
	int tries;

	for (tries = 0; c->ctx->permits != NULL; tries++) {
		if ((unused = permits_unused(c->ctx->permits, bucket, now,
		    win->mark)) >= 0 || tries == 2)
			break;
		mono = timeutil_mono_ms();
		gen = authcache_gen(&c->ctx->cache, c->key.account_id);
		mark = permits_mark(c->ctx->permits, bucket);
		if ((e = ratelimit_window_read(c->ctx->db, bucket, now,
		    win)) != DB_OK)
			return e;
		win->mark = mark;
		authcache_put_window(&c->ctx->cache, c->key_hash, win, mono,
		    gen);
	}
	if (unused > 0)
		win->used = win->used > unused ? win->used - unused : 0;
	ratelimit_status_from(limit, win, now, &c->rl);
	return DB_OK;
}

/* Counts a request: from the host's leased permits (permits.h), else on
 * its own in MariaDB. *changed: the window in MariaDB changed. */
static enum db_err
router_count(struct api_call *c, const char *bucket, long limit,
    int64_t now, int *changed)
{
	if (c->ctx->permits != NULL)
		return permits_take(c->ctx->permits, c->ctx->db, bucket,
		    limit, &c->rl, changed);
	*changed = 1;
	return ratelimit_check(c->ctx->db, bucket, limit, 1, now, &c->rl);
}

/* A sender's webhook counts in the bucket of the account it names
 * (?account=), under feedback_webhook_rate_limit: a sender posts from a
 * few addresses for many customers, far past the anonymous limit. 0, or
 * -1 when there is no usable account parameter (the address's bucket). */
static int
router_sender_bucket(struct api_call *c, char *bucket, size_t n)
{
	struct buf account;
	int rc = -1;

	buf_init(&account, 64);
	if (http_query_get(c->req->query, "account", &account) == 0 &&
	    account.len > 0 && account.len < IDS_MAX &&
	    strspn(buf_str(&account), "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == account.len) {
		snprintf(bucket, n, "feedback:%s", buf_str(&account));
		rc = 0;
	}
	buf_free(&account);
	return rc;
}

/* The dashboard's session cookie of a request without Authorization:
 * AUTH_MISSING (no cookie), AUTH_OK (c->session, c->key as a key with
 * every scope of the account would be, c->key_hash the session id's
 * hash), AUTH_UNKNOWN (ended or unknown session) or AUTH_DB_ERROR. */
static enum auth_result
router_session(struct api_call *c, uint8_t hash[32])
{
	const struct conf *cf = c->ctx->conf;
	enum websession_result wr;

	if (cookie_get(http_param(c->req, "HTTP_COOKIE"), WEBSESSION_COOKIE,
	    c->session_id, sizeof(c->session_id)) == -1)
		return AUTH_MISSING;
	wr = websession_lookup(c->ctx->db, c->session_id,
	    conf_int(cf, CONF_SESSION_IDLE_SECONDS),
	    conf_int(cf, CONF_SESSION_MAX_SECONDS), &c->ws);
	if (wr == WEBSESSION_OK)
		wr = websession_key(c->ctx->db, c->ws.account_id, &c->key);
	if (wr == WEBSESSION_ERROR)
		return AUTH_DB_ERROR;
	if (wr != WEBSESSION_OK)
		return AUTH_UNKNOWN;
	auth_key_hash(c->session_id, hash);
	c->session = 1;
	return AUTH_OK;
}

/* Authentication, allowlist and rate limit; returns 0 to go on, -1 when
 * the response has been decided. The key comes from router_key; a request
 * that is not counted (GET /rate-limit) reports its account's window from
 * there too; a counted one is counted (router_count), never from a
 * cache. */
static int
router_gate(struct api_call *c, const struct route *rt)
{
	const char *authz = http_param(c->req, "HTTP_AUTHORIZATION");
	enum auth_result ar = AUTH_MISSING;
	int64_t now = timeutil_now_ms();
	int count = rt == NULL || rt->counted;
	struct ratelimit_window win;
	uint8_t hash[32];
	char bucket[96];
	struct db *db;
	long limit;
	int ip_refused = 0, changed = 0;
	enum db_err e;

	if ((db = api_db(c)) == NULL)
		return -1;
	if (rt != NULL && rt->auth == ROUTE_AUTH_SIGNIN)
		return 0;
	if (rt != NULL && rt->auth == ROUTE_AUTH_NONE)
		authz = NULL;
	else if (authz == NULL || *authz == '\0') {
		/* a session is always counted: the key cache knows keys */
		if ((ar = router_session(c, hash)) == AUTH_DB_ERROR) {
			api_internal_error(c, "session_lookup");
			return -1;
		}
		if (ar != AUTH_MISSING)
			count = 1;
	}
	if (authz != NULL && *authz != '\0' &&
	    (ar = auth_presented_hash(authz, hash)) == AUTH_OK) {
		ar = router_key(c, hash, now, !count, &win);
		if (ar == AUTH_DB_ERROR) {
			api_internal_error(c, "auth_lookup");
			return -1;
		}
	}
	if (ar == AUTH_OK && !router_ip_allowed(&c->key, c->req->client_ip))
		ip_refused = 1;
	c->authenticated = ar == AUTH_OK && !ip_refused;
	/* a request without a usable key is always counted, in its
	 * address's bucket: GET /rate-limit too, else each would be an
	 * uncounted read of MariaDB */
	if (!c->authenticated)
		count = 1;
	if (ar == AUTH_OK) {
		memcpy(c->account_for_log, c->key.account_id, IDS_MAX);
		memcpy(c->key_hash, hash, sizeof(c->key_hash));
	}
	if (c->authenticated) {
		router_account_bucket(bucket, sizeof(bucket),
		    c->key.account_id);
		limit = auth_key_rate_limit(&c->key);
	} else if (rt != NULL && rt->auth == ROUTE_AUTH_NONE &&
	    router_sender_bucket(c, bucket, sizeof(bucket)) == 0) {
		limit = conf_int(c->ctx->conf,
		    CONF_FEEDBACK_WEBHOOK_RATE_LIMIT);
	} else {
		ratelimit_ip_bucket(c->req->client_ip, bucket, sizeof(bucket));
		limit = auth_tier_limits[AUTH_TIER_ANONYMOUS];
	}
	if (count)
		e = router_count(c, bucket, limit, now, &changed);
	else
		e = router_window(c, bucket, limit, now, &win);
	if (e != DB_OK) {
		api_internal_error(c, "ratelimit");
		return -1;
	}
	/* before the answer leaves: the client's next request, whichever
	 * process serves it, must not report a window read before this one
	 * changed it (a permit taken from a lease changes none: what the
	 * host has not used of its lease is taken off every window read) */
	if (c->authenticated && changed)
		authcache_counted(&c->ctx->cache, c->key.account_id);
	router_ratelimit_headers(c);
	if (c->rl.exceeded) {
		router_too_many(c, now);
		return -1;
	}
	if (ip_refused) {
		http_error(c->resp, 403, "ip_not_allowed", NULL,
		    "this key may not be used from %s", c->req->client_ip);
		return -1;
	}
	if (ar == AUTH_ORG_CHANGED) {
		http_error(c->resp, 403, "key_organization_changed", NULL,
		    "this key was made for an organization its account is no "
		    "longer a member of; make a new key");
		return -1;
	}
	if (ar != AUTH_OK && ar != AUTH_MISSING) {
		http_error(c->resp, 401, "unauthorized", NULL, "%s",
		    c->session_id[0] ? "the session has ended; sign in again" :
		    ar == AUTH_EXPIRED ? "API key has expired" :
		    ar == AUTH_REVOKED ? "API key has been revoked" :
		    "API key is not valid");
		return -1;
	}
	return 0;
}

static int
router_body_limits(struct api_call *c, const struct route *rt)
{
	const char *te = http_param(c->req, "HTTP_TRANSFER_ENCODING");

	if (rt->body_max == 0)
		return 0;
	if (c->req->content_length < 0 && te != NULL && *te != '\0') {
		http_error(c->resp, 411, "length_required", NULL,
		    "send the body with a Content-Length header");
		return -1;
	}
	if (c->req->content_length > (long long)rt->body_max) {
		http_error(c->resp, 413, "file_too_large",
		    json_pack("{s:I}", "limit_bytes", (json_int_t)rt->body_max),
		    "request body is larger than %zu bytes", rt->body_max);
		return -1;
	}
	return 0;
}

/* Idempotency-Key (API.md): 0 to run the handler, -1 when the response
 * is already decided (replay, 409, 422, 400, 413). */
static int
router_idempotency_begin(struct api_call *c, const char *key)
{
	uint8_t hash[32];
	int rc;

	if (api_idempotency_key_check(c, key) == -1)
		return -1;
	if ((rc = http_read_body(c->req, c->body_max)) != 0) {
		http_body_error(c->resp, rc, c->body_max);
		return -1;
	}
	idempotency_request_hash(c->req->method_text, c->req->path,
	    c->req->body.data, c->req->body.len, hash);
	return api_idempotency_begin(c, key, hash);
}

static void
router_idempotency_end(struct api_call *c, const char *key)
{
	if (c->idem_done)
		return;
	if (c->resp->status >= 500)
		api_idempotency_abandon(c);
	else if (idempotency_finish(c->ctx->db, c->key.account_id, key,
	    c->resp->status, buf_str(&c->resp->body), c->resp->body.len) !=
	    DB_OK)
		log_error("event=idempotency_finish_failed req=%s",
		    c->req->request_id);
}

void
router_dispatch(struct api_ctx *ctx, struct http_req *req,
    struct http_resp *resp, char account_for_log[IDS_MAX])
{
	const char *idem;
	struct api_call c;
	struct buf allow;
	const struct route *rt;

	memset(&c, 0, sizeof(c));
	c.ctx = ctx;
	c.req = req;
	c.resp = resp;
	c.account_for_log = account_for_log;
	account_for_log[0] = '\0';
	router_client_ip(ctx, req);
	buf_init(&allow, 256);
	rt = router_find(req, c.params, &allow);
	if (router_gate(&c, rt) == -1)
		goto out;
	if (rt == NULL && allow.len) {
		http_set_header(resp, "Allow", buf_str(&allow));
		http_error(resp, 405, "method_not_allowed", NULL,
		    "%s is not allowed on %s; allowed: %s", req->method_text,
		    req->path, buf_str(&allow));
		goto out;
	}
	if (rt == NULL) {
		http_error(resp, 404, "not_found", NULL, "no such endpoint: %s",
		    req->path);
		goto out;
	}
	if (rt->auth == ROUTE_AUTH_REQUIRED) {
		if (!c.authenticated) {
			http_error(resp, 401, "unauthorized", NULL,
			    "send \"Authorization: Bearer <API key>\"");
			goto out;
		}
		/* a request made with the session's cookie changes
		 * nothing unless it carries the session's CSRF token (a
		 * page of another site can send the cookie, not the token) */
		if (c.session && req->method != HTTP_GET &&
		    req->method != HTTP_HEAD && !websession_csrf_ok(&c.ws,
		    http_header_in(req, "X-CSRF-Token"))) {
			http_error(resp, 403, "csrf_token_invalid", NULL,
			    "a request made with the session cookie must send "
			    "the session's CSRF token in X-CSRF-Token");
			goto out;
		}
		if (!c.key.subscription_active) {
			http_error(resp, 403, "subscription_required", NULL,
			    "this account has no active subscription");
			goto out;
		}
		if (rt->scope >= 0 && !auth_has_scope(c.key.scopes,
		    (enum auth_scope)rt->scope)) {
			http_error(resp, 403, "insufficient_scope",
			    json_pack("{s:s}", "required_scope",
			    auth_scope_names[rt->scope]),
			    "this key lacks the scope \"%s\"",
			    auth_scope_names[rt->scope]);
			goto out;
		}
	}
	c.body_max = rt->body_max;
	if (router_body_limits(&c, rt) == -1)
		goto out;
	idem = rt->idempotent ? http_header_in(req, "Idempotency-Key") : NULL;
	if (idem != NULL && router_idempotency_begin(&c, idem) == -1)
		goto out;
	c.idem_key = idem;
	rt->handler(&c);
	if (idem != NULL)
		router_idempotency_end(&c, idem);
	/* before the answer leaves: whatever this request charged or
	 * refunded (its transaction is committed) shows in the client's next
	 * GET /v1/credits, whichever process serves it (authcache.h) */
	if (req->method != HTTP_GET) {
		authcache_ledger_changed(&ctx->cache, c.key.account_id);
		if (c.key.org_id[0])
			authcache_ledger_changed(&ctx->cache, c.key.org_id);
	}
out:
	slots_release_all(ctx->slots);
	router_ratelimit_fallback(&c);
	/* every 503 says when to come back (openapi.yaml), whichever handler
	 * answered it */
	if (resp->status == 503 && http_resp_header(resp, "Retry-After") ==
	    NULL)
		http_set_header(resp, "Retry-After", API_RETRY_AFTER);
	buf_free(&allow);
}
