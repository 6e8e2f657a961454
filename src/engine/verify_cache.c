/* verify_cache.c: verdict cache entries without addresses, their JSON
 * text (a compact array) written directly (util/jsonw.h: the worker makes
 * one per address), and read back in either form, the array or the
 * object of entries cached before it (verify_cache.h; verify_cache_entry
 * is declared in verify.h). */
#include "engine/verify_cache.h"
#include "engine/verify_json.h"
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

/* The entry's form: a JSON array whose first member is this number.
 * Entries cached before it are objects (verify_json_read reads them);
 * a binary of before reads an array as a miss (it has no "kind"). */
#define VERIFY_CACHE_FORM 2

/* The array's members, in order. */
enum {
	VERIFY_CACHE_M_FORM, VERIFY_CACHE_M_KIND, VERIFY_CACHE_M_SCORE,
	VERIFY_CACHE_M_BASIS, VERIFY_CACHE_M_FLAGS, VERIFY_CACHE_M_CATCH_ALL,
	VERIFY_CACHE_M_TRAP, VERIFY_CACHE_M_PROVIDER, VERIFY_CACHE_M_MX,
	VERIFY_CACHE_M_SMTP, VERIFY_CACHE_M_VERIFIED_AT,
	VERIFY_CACHE_M_TYPO_DOMAIN	/* (only when there is one) */
};
/* The flags member's bits. */
enum {
	VERIFY_CACHE_F_ROLE = 1, VERIFY_CACHE_F_ACCEPT_ALL = 2,
	VERIFY_CACHE_F_DISPOSABLE = 4, VERIFY_CACHE_F_FREE = 8,
	VERIFY_CACHE_F_TYPO = 16
};

/* A string member, null when the text is empty or there is none. */
static void
verify_cache_opt(struct jsonw *w, const char *s)
{
	if (s != NULL && *s != '\0')
		jsonw_str(w, s);
	else
		jsonw_null(w);
}

/* [code, enhanced code, message with the address marked, tls], or null. */
static void
verify_cache_smtp(struct jsonw *w, const struct verify_result *r)
{
	struct buf m;

	if (!r->has_smtp) {
		jsonw_null(w);
		return;
	}
	buf_init(&m, BUF_NOMAX);
	if (!jsonw_utf8_ok(r->smtp_message) ||
	    verify_cache_message(r, &m) == -1)
		w->err = 1;
	jsonw_open(w, '[');
	if (r->smtp_code)
		jsonw_int(w, r->smtp_code);
	else
		jsonw_null(w);
	verify_cache_opt(w, r->smtp_enhanced);
	jsonw_str(w, buf_str(&m));
	jsonw_bool(w, r->smtp_tls);
	jsonw_close(w, ']');
	buf_free(&m);
}

/* The cache's value: what verify_cache_read needs to make the result
 * again, and nothing else, written directly (the worker writes one per
 * address; about 150 bytes where the object of API.md's result that it
 * replaces took 450-510, and the server's time to store it falls with the
 * size: tests/bench/README, bench-farm):
 *   [2, kind, score, score_basis, flags, catch_all_verdict, trap,
 *    provider, [priority, host, ...], [code, enhanced, message, tls],
 *    verified_at (Unix seconds), typo suggestion's domain (if any)]
 * with null for an empty text. Refused (NULL) where the object was: any
 * text of the result that is not UTF-8 (an MX host that is not is left
 * out). tests/unit/test_verify_cache.c reads both forms of random results
 * and compares. */
static char *
verify_cache_text(const struct verify_result *r)
{
	const char *at = strrchr(r->did_you_mean, '@');
	struct jsonw w;
	struct buf b;
	size_t i;

	buf_init(&b, BUF_NOMAX);
	jsonw_init(&w, &b);
	if (!jsonw_utf8_ok(r->email) || !jsonw_utf8_ok(r->did_you_mean) ||
	    !jsonw_utf8_ok(r->domain))
		w.err = 1;
	jsonw_open(&w, '[');
	jsonw_int(&w, VERIFY_CACHE_FORM);
	jsonw_str(&w, verdict_kind_names[r->v.kind]);
	jsonw_int(&w, r->score);
	jsonw_str(&w, calibration_basis_names[r->score_basis]);
	jsonw_int(&w, (r->role ? VERIFY_CACHE_F_ROLE : 0) |
	    (r->accept_all ? VERIFY_CACHE_F_ACCEPT_ALL : 0) |
	    (r->disposable ? VERIFY_CACHE_F_DISPOSABLE : 0) |
	    (r->free_provider ? VERIFY_CACHE_F_FREE : 0) |
	    (r->v.sub == VERDICT_S_POSSIBLE_TYPO ? VERIFY_CACHE_F_TYPO : 0));
	verify_cache_opt(&w, verdict_catch_all_names[r->catch_all]);
	jsonw_int(&w, r->trap);
	verify_cache_opt(&w, r->provider);
	jsonw_open(&w, '[');
	for (i = 0; i < r->nmx; i++) {
		if (!jsonw_utf8_ok(r->mx[i].host))
			continue;
		jsonw_int(&w, (int)r->mx[i].priority);
		jsonw_str(&w, r->mx[i].host);
	}
	jsonw_close(&w, ']');
	verify_cache_smtp(&w, r);
	jsonw_int(&w, (long long)r->verified_at);
	if (at != NULL && at[1] != '\0')
		jsonw_str(&w, at + 1);
	jsonw_close(&w, ']');
	if (w.err) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
}

/* The array form back into r (zeroed by the caller): 0, or -1 for an
 * array that is not one (a miss). */
static int
verify_cache_read_array(json_t *j, struct verify_result *r)
{
	const char *s = json_string_value(json_array_get(j,
	    VERIFY_CACHE_M_KIND));
	json_t *mx, *smtp, *at = json_array_get(j, VERIFY_CACHE_M_VERIFIED_AT);
	enum verdict_kind k;
	long long flags, n;
	size_t i;

	if (json_integer_value(json_array_get(j, VERIFY_CACHE_M_FORM)) !=
	    VERIFY_CACHE_FORM || s == NULL || verdict_parse_kind(s, &k) == -1 ||
	    !json_is_integer(at))
		return -1;
	flags = json_integer_value(json_array_get(j, VERIFY_CACHE_M_FLAGS));
	r->v = verdict_of(k, (flags & VERIFY_CACHE_F_TYPO) != 0);
	r->score = (int)json_integer_value(json_array_get(j,
	    VERIFY_CACHE_M_SCORE));
	(void)calibration_basis_parse(json_string_value(json_array_get(j,
	    VERIFY_CACHE_M_BASIS)), &r->score_basis);
	r->role = (flags & VERIFY_CACHE_F_ROLE) != 0;
	r->accept_all = (flags & VERIFY_CACHE_F_ACCEPT_ALL) != 0;
	r->disposable = (flags & VERIFY_CACHE_F_DISPOSABLE) != 0;
	r->free_provider = (flags & VERIFY_CACHE_F_FREE) != 0;
	s = json_string_value(json_array_get(j, VERIFY_CACHE_M_CATCH_ALL));
	for (n = 1; s && n < VERDICT_CA__MAX; n++)
		if (strcmp(s, verdict_catch_all_names[n]) == 0)
			r->catch_all = (enum verdict_catch_all)n;
	n = json_integer_value(json_array_get(j, VERIFY_CACHE_M_TRAP));
	r->trap = n > 0 && n < VERDICT_TRAP__MAX ? (enum verdict_trap)n :
	    VERDICT_TRAP_NONE;
	if ((s = json_string_value(json_array_get(j,
	    VERIFY_CACHE_M_PROVIDER))))
		strparse_copy(r->provider, sizeof(r->provider), s);
	mx = json_array_get(j, VERIFY_CACHE_M_MX);
	for (i = 0; i < DNS_MAX_MX && (s = json_string_value(
	    json_array_get(mx, 2 * i + 1))) != NULL; i++) {
		r->mx[i].priority = (unsigned)json_integer_value(
		    json_array_get(mx, 2 * i));
		strparse_copy(r->mx[i].host, sizeof(r->mx[i].host), s);
		r->nmx = i + 1;
	}
	smtp = json_array_get(j, VERIFY_CACHE_M_SMTP);
	if (json_is_array(smtp)) {
		r->has_smtp = 1;
		r->smtp_code = (int)json_integer_value(json_array_get(smtp, 0));
		if ((s = json_string_value(json_array_get(smtp, 1))))
			strparse_copy(r->smtp_enhanced, sizeof(r->smtp_enhanced),
			    s);
		if ((s = json_string_value(json_array_get(smtp, 2))))
			strparse_copy(r->smtp_message, sizeof(r->smtp_message),
			    s);
		r->smtp_tls = json_is_true(json_array_get(smtp, 3));
	}
	r->verified_at = (time_t)json_integer_value(at);
	/* (the suggestion's domain: verify_from_cache adds the local part) */
	if ((s = json_string_value(json_array_get(j,
	    VERIFY_CACHE_M_TYPO_DOMAIN))))
		strparse_copy(r->did_you_mean, sizeof(r->did_you_mean), s);
	return 0;
}

int
verify_cache_read(json_t *j, struct verify_result *r)
{
	/* (a text longer than its buffer, which only a damaged or foreign
	 * row has, is cut between characters: strparse_copy) */
	return json_is_array(j) ? verify_cache_read_array(j, r) :
	    verify_json_read(j, r);
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
