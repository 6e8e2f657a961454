/* verify_cache.c: verdict cache entries without addresses, their JSON
 * text written directly (util/jsonw.h: the worker makes one per address)
 * (verify_cache.h; verify_cache_entry is declared in verify.h). */
#include "engine/verify_cache.h"
#include "util/jsonw.h"
#include "util/strparse.h"
#include "util/timeutil.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* In the SMTP text stored in the shared cache, the address is this mark;
 * reading the entry back puts the request's address in its place. */
#define VERIFY_CACHE_ADDRESS_MARK "{address}"

/* s with every occurrence (any case) of the address a replaced by b,
 * appended to t: 0, or -1 out of memory. */
static int
verify_cache_swap_into(struct buf *t, const char *s, const char *a,
    const char *b)
{
	size_t n = strlen(a);
	int a0 = tolower((unsigned char)a[0]);
	const char *run = s;

	for (; *s != '\0'; s++) {
		/* (the first byte as strncasecmp compares it, before the
		 * call: most bytes of a message start no address) */
		if (n == 0 || tolower((unsigned char)*s) != a0 ||
		    strncasecmp(s, a, n) != 0)
			continue;
		if (buf_append(t, run, (size_t)(s - run)) == -1 ||
		    buf_puts(t, b) == -1)
			return -1;
		s += n - 1;
		run = s + 1;
	}
	return buf_append(t, run, (size_t)(s - run));
}

/* The same as a new JSON string (NULL if it is not UTF-8). */
static json_t *
verify_cache_swap(const char *s, const char *a, const char *b)
{
	struct buf t;
	json_t *j;

	buf_init(&t, BUF_NOMAX);
	j = verify_cache_swap_into(&t, s, a, b) == 0 ?
	    json_string(buf_str(&t)) : NULL;
	buf_free(&t);
	return j;
}

/* The SMTP text as the cache keeps it: the address as given, then as
 * normalised, replaced by the mark. */
static int
verify_cache_message(const struct verify_result *r, struct buf *out)
{
	struct buf t;
	int rc;

	buf_init(&t, BUF_NOMAX);
	rc = verify_cache_swap_into(&t, r->smtp_message, r->email,
	    VERIFY_CACHE_ADDRESS_MARK);
	if (rc == 0)
		rc = verify_cache_swap_into(out, buf_str(&t), r->normalised,
		    VERIFY_CACHE_ADDRESS_MARK);
	buf_free(&t);
	return rc;
}

/* A member verify_json_result makes null when the text is empty. */
static void
verify_cache_opt(struct jsonw *w, const char *k, const char *s)
{
	jsonw_key(w, k);
	if (s != NULL && *s != '\0')
		jsonw_str(w, s);
	else
		jsonw_null(w);
}

static void
verify_cache_yes_no(struct jsonw *w, const char *k, int b)
{
	jsonw_key(w, k);
	jsonw_str(w, b ? "yes" : "no");
}

static void
verify_cache_smtp(struct jsonw *w, const struct verify_result *r)
{
	struct buf m;

	jsonw_key(w, "smtp");
	if (!r->has_smtp) {
		jsonw_null(w);
		return;
	}
	buf_init(&m, BUF_NOMAX);
	if (!jsonw_utf8_ok(r->smtp_message) ||
	    verify_cache_message(r, &m) == -1)
		w->err = 1;
	jsonw_open(w, '{');
	jsonw_key(w, "code");
	if (r->smtp_code)
		jsonw_int(w, r->smtp_code);
	else
		jsonw_null(w);
	verify_cache_opt(w, "enhanced_code", r->smtp_enhanced);
	jsonw_key(w, "message");
	jsonw_str(w, buf_str(&m));
	jsonw_key(w, "tls");
	jsonw_bool(w, r->smtp_tls);
	jsonw_close(w, '}');
	buf_free(&m);
}

/* The cache's value: verify_json_result's object (API.md's result) with
 * "kind" and "trap" added and the address taken out, written directly
 * (the worker writes one per address): the members in the order jansson
 * kept when it was built as that object and changed, "email" and
 * "did_you_mean" left out, "did_you_mean_domain" last. Refused (NULL)
 * where jansson refused: a text that is not UTF-8.
 * tests/unit/test_verify_cache.c compares the two. */
static char *
verify_cache_text(const struct verify_result *r)
{
	const char *at = strrchr(r->did_you_mean, '@');
	char when[TIMEUTIL_ISO_LEN];
	struct jsonw w;
	struct buf b;
	size_t i;

	buf_init(&b, BUF_NOMAX);
	jsonw_init(&w, &b);
	if (!jsonw_utf8_ok(r->email) || !jsonw_utf8_ok(r->did_you_mean))
		w.err = 1;
	jsonw_open(&w, '{');
	jsonw_key(&w, "status");
	jsonw_str(&w, verdict_status_names[r->v.status]);
	jsonw_key(&w, "reason");
	jsonw_str(&w, verdict_reason_names[r->v.reason]);
	verify_cache_opt(&w, "sub_status", verdict_sub_names[r->v.sub]);
	jsonw_key(&w, "score");
	jsonw_int(&w, r->score);
	jsonw_key(&w, "score_basis");
	jsonw_str(&w, calibration_basis_names[r->score_basis]);
	verify_cache_yes_no(&w, "spam_trap", r->v.kind == VERDICT_K_SPAM_TRAP);
	verify_cache_yes_no(&w, "role", r->role);
	verify_cache_opt(&w, "catch_all_verdict",
	    verdict_catch_all_names[r->catch_all]);
	jsonw_key(&w, "domain");
	jsonw_open(&w, '{');
	jsonw_key(&w, "name");
	jsonw_str(&w, r->domain);
	verify_cache_yes_no(&w, "acceptAll", r->accept_all);
	verify_cache_yes_no(&w, "disposable", r->disposable);
	verify_cache_yes_no(&w, "free", r->free_provider);
	jsonw_close(&w, '}');
	jsonw_key(&w, "mx");
	jsonw_open(&w, '[');
	for (i = 0; i < r->nmx; i++) {
		/* (jansson left out a host that is not UTF-8) */
		if (!jsonw_utf8_ok(r->mx[i].host))
			continue;
		jsonw_open(&w, '{');
		jsonw_key(&w, "priority");
		jsonw_int(&w, (int)r->mx[i].priority);
		jsonw_key(&w, "host");
		jsonw_str(&w, r->mx[i].host);
		jsonw_close(&w, '}');
	}
	jsonw_close(&w, ']');
	verify_cache_opt(&w, "provider", r->provider);
	verify_cache_smtp(&w, r);
	timeutil_iso8601(r->verified_at, when);
	jsonw_key(&w, "verified_at");
	jsonw_str(&w, when);
	jsonw_key(&w, "cached");
	jsonw_bool(&w, r->cached);
	if (verdict_kind_names[r->v.kind] != NULL) {
		jsonw_key(&w, "kind");
		jsonw_str(&w, verdict_kind_names[r->v.kind]);
	}
	jsonw_key(&w, "trap");
	jsonw_int(&w, r->trap);
	if (at != NULL && at[1] != '\0') {
		jsonw_key(&w, "did_you_mean_domain");
		jsonw_str(&w, at + 1);
	}
	jsonw_close(&w, '}');
	if (w.err) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
}

int
verify_cache_entry(const struct verify_result *r, struct vcache_entry *out)
{
	memset(out, 0, sizeof(*out));
	/* An address on the verifying account's own complainer list: its
	 * verdict may be that list's, which no other account shares. */
	if (r->sandbox || r->cached || r->normalised[0] == '\0' ||
	    r->cache_key[0] == '\0' || r->account_complainer == 1)
		return -1;
	if ((out->value = verify_cache_text(r)) == NULL)
		return -1;
	out->key = strdup(r->cache_key);
	out->seconds = verdict_cache_seconds(&r->v);
	if (out->key == NULL) {
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
