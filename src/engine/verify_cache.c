/* verify_cache.c: verdict cache entries without addresses
 * (verify_cache.h; verify_cache_entry is declared in verify.h). */
#include "engine/verify_cache.h"
#include "engine/verify_json.h"
#include "util/strparse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* In the SMTP text stored in the shared cache, the address is this mark;
 * reading the entry back puts the request's address in its place. */
#define VERIFY_CACHE_ADDRESS_MARK "{address}"

/* s with every occurrence (any case) of the address a replaced by b: a new
 * JSON string. */
static json_t *
verify_cache_swap(const char *s, const char *a, const char *b)
{
	size_t n = strlen(a);
	struct buf t;
	json_t *j;

	buf_init(&t, BUF_NOMAX);
	while (*s != '\0') {
		if (n > 0 && strncasecmp(s, a, n) == 0) {
			buf_puts(&t, b);
			s += n;
		} else
			buf_append(&t, s++, 1);
	}
	j = json_string(buf_str(&t));
	buf_free(&t);
	return j;
}

/* The cache is shared by every account and keyed by a hash: its value
 * holds no address either. The input address goes, the suggestion keeps
 * its domain, and the SMTP text has the address (as given or normalised)
 * replaced by a mark. */
static void
verify_cache_strip(const struct verify_result *r, json_t *j)
{
	const char *at = strrchr(r->did_you_mean, '@');
	json_t *smtp = json_object_get(j, "smtp"), *m;

	json_object_del(j, "email");
	json_object_del(j, "did_you_mean");
	if (at != NULL && at[1] != '\0')
		json_object_set_new(j, "did_you_mean_domain",
		    json_string(at + 1));
	if (json_is_object(smtp) && (m = json_object_get(smtp, "message")) &&
	    json_is_string(m)) {
		m = verify_cache_swap(json_string_value(m), r->email,
		    VERIFY_CACHE_ADDRESS_MARK);
		json_object_set_new(smtp, "message", verify_cache_swap(
		    json_string_value(m), r->normalised,
		    VERIFY_CACHE_ADDRESS_MARK));
		json_decref(m);
	}
}

int
verify_cache_entry(const struct verify_result *r, struct vcache_entry *out)
{
	json_t *j;

	memset(out, 0, sizeof(*out));
	if (r->sandbox || r->cached || r->normalised[0] == '\0' ||
	    r->cache_key[0] == '\0')
		return -1;
	if ((j = verify_json_result(r)) == NULL)
		return -1;
	json_object_set_new(j, "kind",
	    json_string(verdict_kind_names[r->v.kind]));
	json_object_set_new(j, "trap", json_integer(r->trap));
	verify_cache_strip(r, j);
	out->value = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	out->key = strdup(r->cache_key);
	out->seconds = verdict_cache_seconds(&r->v);
	if (out->value == NULL || out->key == NULL) {
		vcache_entries_clear(out, 1);
		return -1;
	}
	return 0;
}

void
verify_cache_restore(struct verify_result *r, const struct addr *a,
    const struct verify_result *c)
{
	json_t *m;

	if (r->did_you_mean[0] != '\0' && snprintf(r->did_you_mean,
	    sizeof(r->did_you_mean), "%s@%s", a->local, c->did_you_mean) >=
	    (int)sizeof(r->did_you_mean))
		r->did_you_mean[0] = '\0';
	if (r->smtp_message[0] != '\0') {
		m = verify_cache_swap(c->smtp_message, VERIFY_CACHE_ADDRESS_MARK,
		    r->email);
		strparse_copy(r->smtp_message, sizeof(r->smtp_message),
		    json_string_value(m));
		json_decref(m);
	}
}
