/* apierr.c: the API's error answers as svc reads them: the standard body
 * { error: { code, message, details } } and the flat 429 body { success:
 * false, error, limit, reset_at (ISO 8601) } of the per-endpoint limiter,
 * the wait before a 429 is retried, and the exit status of an answer. The
 * text comes from the network: it is cut to size and control characters
 * are replaced before anyone prints it. */
#include "cli/apierr.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <jansson.h>
#include <string.h>

const char *const apierr_exit_names[APIERR_EXIT__MAX] = {
	"ok", "error", "usage", "auth", "not_found", "insufficient_credits",
	"rate_limited", "network", "server"
};

/* Copies s into dst (sz bytes) with control characters as '?'. */
static void
apierr_clean(char *dst, size_t sz, const char *s)
{
	size_t i;

	strparse_copy(dst, sz, s);
	for (i = 0; dst[i]; i++)
		if ((unsigned char)dst[i] < 0x20 || dst[i] == 0x7f)
			dst[i] = '?';
}

void
apierr_parse(const char *body, size_t len, struct apierr *e)
{
	json_t *root, *err, *v;
	time_t t;

	memset(e, 0, sizeof(*e));
	if (body == NULL || len == 0 ||
	    (root = json_loadb(body, len, JSON_DECODE_ANY, NULL)) == NULL)
		return;
	if (!json_is_object(root))
		goto out;
	err = json_object_get(root, "error");
	if (json_is_object(err)) {
		v = json_object_get(err, "code");
		if (json_is_string(v))
			apierr_clean(e->code, sizeof(e->code),
			    json_string_value(v));
		v = json_object_get(err, "message");
		if (json_is_string(v))
			apierr_clean(e->message, sizeof(e->message),
			    json_string_value(v));
		v = json_object_get(json_object_get(err, "details"),
		    "reset_at");
		if (json_is_integer(v) && json_integer_value(v) > 0)
			e->reset_at = json_integer_value(v);
	} else if (json_is_string(err)) {
		/* the flat shape: the text is the message, the code implied */
		e->flat = 1;
		apierr_clean(e->message, sizeof(e->message),
		    json_string_value(err));
		strparse_copy(e->code, sizeof(e->code), "rate_limited");
		v = json_object_get(root, "reset_at");
		if (json_is_string(v) &&
		    timeutil_parse_iso8601(json_string_value(v), &t) == 0 &&
		    t > 0)
			e->reset_at = (long long)t;
		else if (json_is_integer(v) && json_integer_value(v) > 0)
			e->reset_at = json_integer_value(v);
	}
out:
	json_decref(root);
}

long
apierr_retry_wait(const char *retry_after, const struct apierr *e,
    time_t now)
{
	long v;

	if (retry_after != NULL &&
	    strparse_long(retry_after, 0, 86400 * 365, &v) == 0)
		return v;
	if (e->reset_at > 0) {
		if (e->reset_at - (long long)now > 86400LL * 365)
			return 86400L * 365;
		return e->reset_at > (long long)now ?
		    (long)(e->reset_at - (long long)now) : 1;
	}
	return -1;
}

enum apierr_exit
apierr_exit(long status)
{
	if (status >= 200 && status < 300)
		return APIERR_EXIT_OK;
	switch (status) {
	case 401:
	case 403:
		return APIERR_EXIT_AUTH;
	case 402:
		return APIERR_EXIT_CREDITS;
	case 404:
		return APIERR_EXIT_NOT_FOUND;
	case 429:
		return APIERR_EXIT_RATE_LIMITED;
	default:
		break;
	}
	if (status >= 500 || status < 100)
		return APIERR_EXIT_SERVER;
	return APIERR_EXIT_ERROR;
}
