/* handler_session.c: the dashboard's sign-in (issue 27): POST /v1/session
 * (e-mail and password: a session cookie and its CSRF token), GET
 * /v1/session (who is signed in, the CSRF token), DELETE /v1/session
 * (sign-out). Attempts are limited per e-mail and per client address
 * (signin_attempts_max, signin_address_attempts_max failures a
 * rate-limit window; then 429 with Retry-After, even for the right
 * password); an
 * unknown e-mail and a wrong password get the same answer. The cookie is
 * HttpOnly, SameSite=Strict, Path=/, and Secure when the request came
 * over HTTPS. */
#include "api/api.h"
#include "util/hex.h"
#include "util/log.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <gnutls/crypto.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int
handler_session_https(const struct api_call *c)
{
	const char *https = http_param(c->req, "HTTPS");
	const char *scheme = http_param(c->req, "REQUEST_SCHEME");

	return (https != NULL && (strcasecmp(https, "on") == 0 ||
	    strcmp(https, "1") == 0)) ||
	    (scheme != NULL && strcasecmp(scheme, "https") == 0);
}

/* Set-Cookie of value (max_age -1: a session cookie; 0: removes it). */
static void
handler_session_cookie(struct api_call *c, const char *value, long max_age)
{
	char h[256];

	if (max_age >= 0)
		snprintf(h, sizeof(h), "%s=%s; Path=/; HttpOnly; "
		    "SameSite=Strict; Max-Age=%ld%s", WEBSESSION_COOKIE, value,
		    max_age, handler_session_https(c) ? "; Secure" : "");
	else
		snprintf(h, sizeof(h), "%s=%s; Path=/; HttpOnly; "
		    "SameSite=Strict%s", WEBSESSION_COOKIE, value,
		    handler_session_https(c) ? "; Secure" : "");
	http_set_header(c->resp, "Set-Cookie", h);
	http_set_header(c->resp, "Cache-Control", "no-store");
}

static json_t *
handler_session_json(const struct websession *s)
{
	char at[TIMEUTIL_ISO_LEN];

	timeutil_iso8601((time_t)(s->expires_ms / 1000), at);
	return json_pack("{s:s,s:s,s:s,s:s}", "account_id", s->account_id,
	    "email", s->email, "csrf_token", s->csrf, "expires_at", at);
}

/* Before an attempt: 0 when the bucket's window has room for another
 * failure, 1 when it is full (429 with Retry-After answered), -1 on
 * failure (500 answered). Only failures are counted (handler_session_fail).
 */
static int
handler_session_limit(struct api_call *c, const char *bucket, long limit,
    int64_t now)
{
	struct ratelimit_status st;
	char after[32];
	long long wait;

	if (ratelimit_check(c->ctx->db, bucket, limit, 0, now, &st) !=
	    DB_OK) {
		api_internal_error(c, "signin_limit");
		return -1;
	}
	if (st.used < limit)
		return 0;
	wait = st.reset_at - now / 1000;
	if (wait < 1)
		wait = 1;
	snprintf(after, sizeof(after), "%lld", wait);
	http_set_header(c->resp, "Retry-After", after);
	http_error(c->resp, 429, "too_many_signin_attempts",
	    json_pack("{s:I}", "retry_after", (json_int_t)wait),
	    "too many failed sign-in attempts; try again in %lld seconds",
	    wait);
	return 1;
}

/* A failed attempt counts in both buckets. */
static void
handler_session_fail(struct api_call *c, const char *ipb, const char *eb,
    int64_t now)
{
	struct ratelimit_status st;

	if (ratelimit_check(c->ctx->db, ipb, conf_int(c->ctx->conf,
	    CONF_SIGNIN_ADDRESS_ATTEMPTS_MAX), 1, now, &st) != DB_OK ||
	    ratelimit_check(c->ctx->db, eb, conf_int(c->ctx->conf,
	    CONF_SIGNIN_ATTEMPTS_MAX), 1, now, &st) != DB_OK)
		log_error("event=signin_count_failed req=%s",
		    c->req->request_id);
}

void
handler_session_create(struct api_call *c)
{
	char ipb[96], eb[96], id[WEBSESSION_ID_MAX], lower[256];
	char hexh[33];
	uint8_t h[32];
	struct websession s;
	enum websession_result wr;
	json_t *body, *email, *pw;
	int64_t now = timeutil_now_ms();
	size_t i;

	if ((body = api_json_body(c)) == NULL)
		return;
	email = json_object_get(body, "email");
	pw = json_object_get(body, "password");
	if (!json_is_string(email) || json_string_length(email) == 0 ||
	    json_string_length(email) >= sizeof(lower)) {
		api_bad_field(c, "email", "a string with the account's e-mail");
		goto out;
	}
	if (!json_is_string(pw)) {
		api_bad_field(c, "password", "a string with the password");
		goto out;
	}
	/* per address and per e-mail (folded to lower case, hashed: the
	 * bucket name holds no address) */
	for (i = 0; i <= json_string_length(email); i++) {
		char ch = json_string_value(email)[i];
		lower[i] = (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') :
		    ch;
	}
	gnutls_hash_fast(GNUTLS_DIG_SHA256, lower, strlen(lower), h);
	hex_encode(h, 16, hexh);
	snprintf(eb, sizeof(eb), "signin:e:%s", hexh);
	if (snprintf(ipb, sizeof(ipb), "signin:ip:%s", c->req->client_ip) >=
	    (int)sizeof(ipb) || handler_session_limit(c, ipb,
	    conf_int(c->ctx->conf, CONF_SIGNIN_ADDRESS_ATTEMPTS_MAX), now) !=
	    0 || handler_session_limit(c, eb, conf_int(c->ctx->conf,
	    CONF_SIGNIN_ATTEMPTS_MAX), now) != 0)
		goto out;
	wr = websession_signin(c->ctx->db, json_string_value(email),
	    json_string_value(pw), id, &s);
	if (wr == WEBSESSION_ERROR) {
		api_internal_error(c, "signin");
		goto out;
	}
	if (wr != WEBSESSION_OK) {
		handler_session_fail(c, ipb, eb, now);
		http_error(c->resp, 401, "invalid_credentials", NULL,
		    "the e-mail or the password is wrong");
		goto out;
	}
	memcpy(c->account_for_log, s.account_id, IDS_MAX);
	/* the new session as GET /v1/session will show it */
	if (websession_lookup(c->ctx->db, id, conf_int(c->ctx->conf,
	    CONF_SESSION_IDLE_SECONDS), conf_int(c->ctx->conf,
	    CONF_SESSION_MAX_SECONDS), &s) != WEBSESSION_OK) {
		api_internal_error(c, "signin_lookup");
		goto out;
	}
	handler_session_cookie(c, id, -1);
	http_json(c->resp, 201, handler_session_json(&s));
out:
	json_decref(body);
}

/* POST /v1/session/invite: {"token","password"} sets the password of the
 * invitation's account, once. Failures count in the address's bucket. */
void
handler_session_accept(struct api_call *c)
{
	char ipb[96];
	enum websession_result wr;
	json_t *body, *tok, *pw;
	int64_t now = timeutil_now_ms();
	struct ratelimit_status st;

	if ((body = api_json_body(c)) == NULL)
		return;
	tok = json_object_get(body, "token");
	pw = json_object_get(body, "password");
	if (!json_is_string(tok)) {
		api_bad_field(c, "token", "a string with the invitation's token");
		goto out;
	}
	if (!json_is_string(pw)) {
		api_bad_field(c, "password", "a string with the new password");
		goto out;
	}
	if (snprintf(ipb, sizeof(ipb), "signin:ip:%s", c->req->client_ip) >=
	    (int)sizeof(ipb) || handler_session_limit(c, ipb,
	    conf_int(c->ctx->conf, CONF_SIGNIN_ADDRESS_ATTEMPTS_MAX), now) !=
	    0)
		goto out;
	wr = websession_accept(c->ctx->db, json_string_value(tok),
	    json_string_value(pw));
	if (wr == WEBSESSION_ERROR)
		api_internal_error(c, "invite_accept");
	else if (wr == WEBSESSION_INVALID)
		api_bad_field(c, "password", "%d to %d characters",
		    WEBSESSION_PASSWORD_MIN, WEBSESSION_PASSWORD_MAX);
	else if (wr == WEBSESSION_REFUSED) {
		if (ratelimit_check(c->ctx->db, ipb, conf_int(c->ctx->conf,
		    CONF_SIGNIN_ADDRESS_ATTEMPTS_MAX), 1, now, &st) != DB_OK)
			log_error("event=signin_count_failed req=%s",
			    c->req->request_id);
		http_error(c->resp, 401, "invalid_invitation", NULL,
		    "the invitation is unknown, used or expired");
	} else
		http_json(c->resp, 200, json_pack("{s:b}", "password_set", 1));
out:
	json_decref(body);
}

/* 401 for a request made with a key: the session endpoints are the
 * browser's. */
static int
handler_session_required(struct api_call *c)
{
	if (c->session)
		return 0;
	http_error(c->resp, 401, "session_required", NULL, "this endpoint "
	    "takes the dashboard's session cookie (POST /v1/session), not an "
	    "API key");
	return -1;
}

void
handler_session_get(struct api_call *c)
{
	if (handler_session_required(c) == -1)
		return;
	http_set_header(c->resp, "Cache-Control", "no-store");
	http_json(c->resp, 200, handler_session_json(&c->ws));
}

void
handler_session_delete(struct api_call *c)
{
	if (handler_session_required(c) == -1)
		return;
	if (websession_end(c->ctx->db, c->session_id) != WEBSESSION_OK) {
		api_internal_error(c, "signout");
		return;
	}
	handler_session_cookie(c, "", 0);
	http_json(c->resp, 200, json_pack("{s:b}", "signed_in", 0));
}
