/* verify_json.c: a verification's result as JSON: API.md's result object,
 * which is also what the verdict cache stores, and that object read back
 * from the cache (verify_json.h). */
#include "engine/verify_json.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <string.h>
#include <time.h>

static const char *
verify_json_yes_no(int b)
{
	return b ? "yes" : "no";
}

static json_t *
verify_json_opt(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

json_t *
verify_json_result(const struct verify_result *r)
{
	char when[TIMEUTIL_ISO_LEN];
	json_t *mx = json_array(), *smtp;
	size_t i;

	for (i = 0; i < r->nmx; i++)
		json_array_append_new(mx, json_pack("{s:i,s:s}", "priority",
		    (int)r->mx[i].priority, "host", r->mx[i].host));
	smtp = r->has_smtp ? json_pack("{s:o,s:o,s:s,s:b}",
	    "code", r->smtp_code ? json_integer(r->smtp_code) : json_null(),
	    "enhanced_code", verify_json_opt(r->smtp_enhanced),
	    "message", r->smtp_message, "tls", r->smtp_tls) : json_null();
	timeutil_iso8601(r->verified_at, when);
	return json_pack("{s:s,s:s,s:s,s:o,s:i,s:s,s:o,s:s,s:s,s:o,"
	    "s:{s:s,s:s,s:s,s:s},s:o,s:o,s:o,s:s,s:b}",
	    "email", r->email,
	    "status", verdict_status_names[r->v.status],
	    "reason", verdict_reason_names[r->v.reason],
	    "sub_status", verify_json_opt(verdict_sub_names[r->v.sub]),
	    "score", r->score,
	    "score_basis", calibration_basis_names[r->score_basis],
	    "did_you_mean", verify_json_opt(r->did_you_mean),
	    "spam_trap", verify_json_yes_no(r->v.kind == VERDICT_K_SPAM_TRAP),
	    "role", verify_json_yes_no(r->role),
	    "catch_all_verdict", verify_json_opt(verdict_catch_all_names[r->catch_all]),
	    "domain", "name", r->domain,
	    "acceptAll", verify_json_yes_no(r->accept_all),
	    "disposable", verify_json_yes_no(r->disposable),
	    "free", verify_json_yes_no(r->free_provider),
	    "mx", mx, "provider", verify_json_opt(r->provider), "smtp", smtp,
	    "verified_at", when, "cached", r->cached);
}

static int
verify_json_yes(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s && strcmp(s, "yes") == 0;
}

int
verify_json_read(json_t *j, struct verify_result *r)
{
	json_t *d = json_object_get(j, "domain"), *mx, *h, *smtp;
	const char *s, *kind = json_string_value(json_object_get(j, "kind"));
	enum verdict_kind k;
	time_t when;
	size_t i;
	int n;

	/* An entry without "provider" was cached by an earlier version:
	 * unusable, the address is verified again. */
	if (kind == NULL || verdict_parse_kind(kind, &k) == -1 ||
	    !json_is_object(d) || json_object_get(j, "provider") == NULL)
		return -1;
	if ((s = json_string_value(json_object_get(j, "provider"))))
		strparse_copy(r->provider, sizeof(r->provider), s);
	s = json_string_value(json_object_get(j, "sub_status"));
	r->v = verdict_of(k, s && strcmp(s, "possible_typo") == 0);
	r->score = (int)json_integer_value(json_object_get(j, "score"));
	/* (an entry cached before calibration has none: rules) */
	(void)calibration_basis_parse(json_string_value(json_object_get(j,
	    "score_basis")), &r->score_basis);
	/* (the suggestion's domain: verify_from_cache adds the local part) */
	if ((s = json_string_value(json_object_get(j, "did_you_mean_domain"))))
		strparse_copy(r->did_you_mean, sizeof(r->did_you_mean), s);
	n = (int)json_integer_value(json_object_get(j, "trap"));
	r->trap = n > 0 && n < VERDICT_TRAP__MAX ? (enum verdict_trap)n :
	    VERDICT_TRAP_NONE;
	r->role = verify_json_yes(j, "role");
	r->accept_all = verify_json_yes(d, "acceptAll");
	r->disposable = verify_json_yes(d, "disposable");
	r->free_provider = verify_json_yes(d, "free");
	s = json_string_value(json_object_get(j, "catch_all_verdict"));
	for (n = 1; s && n < VERDICT_CA__MAX; n++)
		if (strcmp(s, verdict_catch_all_names[n]) == 0)
			r->catch_all = (enum verdict_catch_all)n;
	mx = json_object_get(j, "mx");
	json_array_foreach(mx, i, h) {
		if (i >= DNS_MAX_MX || !(s = json_string_value(
		    json_object_get(h, "host"))))
			break;
		r->mx[i].priority = (unsigned)json_integer_value(
		    json_object_get(h, "priority"));
		strparse_copy(r->mx[i].host, sizeof(r->mx[i].host), s);
		r->nmx = i + 1;
	}
	smtp = json_object_get(j, "smtp");
	if (json_is_object(smtp)) {
		r->has_smtp = 1;
		r->smtp_code = (int)json_integer_value(json_object_get(smtp,
		    "code"));
		if ((s = json_string_value(json_object_get(smtp,
		    "enhanced_code"))))
			strparse_copy(r->smtp_enhanced, sizeof(r->smtp_enhanced),
			    s);
		if ((s = json_string_value(json_object_get(smtp, "message"))))
			strparse_copy(r->smtp_message, sizeof(r->smtp_message),
			    s);
		r->smtp_tls = json_is_true(json_object_get(smtp, "tls"));
	}
	s = json_string_value(json_object_get(j, "verified_at"));
	r->verified_at = s && timeutil_parse_iso8601(s, &when) == 0 ? when :
	    time(NULL);
	return 0;
}
