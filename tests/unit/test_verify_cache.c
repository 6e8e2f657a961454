/* test_verify_cache.c: the verdict cache's entries (src/engine/
 * verify_cache.c), a compact JSON array written directly, against the
 * object they were before (kept here as the reference: verify_json_result's
 * jansson object, "kind" and "trap" added, the address stripped, then
 * json_dumps(JSON_COMPACT)), which entries cached by earlier versions
 * still hold. For fixed results and 20,000 random ones (every verdict
 * kind, suggestions with and without a domain, MX lists, SMTP texts
 * holding the address in any case, quotes, control characters, non-ASCII,
 * and now and then a text that is not UTF-8) both must refuse the same
 * results, and for the others the entry (same key and lifetime) must read
 * back (verify_cache_read) as the very same result as the object read
 * (the reader of earlier versions, verify_json_read, which must see the
 * array as a miss); and an entry must read back as it was. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "engine/verify.h"
#include "engine/verify_cache.h"
#include "engine/verify_json.h"
#include "util/buf.h"
#include "unit_rand.h"

/* ------------------------------------------- the reference (jansson) */

static json_t *
ref_swap(const char *s, const char *a, const char *b)
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

static void
ref_strip(const struct verify_result *r, json_t *j)
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
		m = ref_swap(json_string_value(m), r->email, "{address}");
		json_object_set_new(smtp, "message", ref_swap(
		    json_string_value(m), r->normalised, "{address}"));
		json_decref(m);
	}
}

static char *
ref_entry(const struct verify_result *r)
{
	json_t *j;
	char *s;

	if (r->sandbox || r->cached || r->normalised[0] == '\0' ||
	    r->cache_key[0] == '\0')
		return NULL;
	if ((j = verify_json_result(r)) == NULL)
		return NULL;
	json_object_set_new(j, "kind",
	    json_string(verdict_kind_names[r->v.kind]));
	json_object_set_new(j, "trap", json_integer(r->trap));
	ref_strip(r, j);
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return s;
}

/* ------------------------------------------------------------ results */


static const char *
pick(const char *const *v, size_t n)
{
	return v[unit_rand() % n];
}
#define PICK(v) pick(v, sizeof(v) / sizeof(v[0]))

/* Texts of every kind, a few of them not UTF-8. */
static const char *const pieces[] = {
	"", "a", "Z", " ", "<", ">", ":", "\"", "\\", "/", "\t", "\r\n", "\x01",
	"\x1f", "\x7f", "caf\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
	"5.1.1", "550", "{address}", "@", "user", "USER", "Example.COM",
	"example.com", "mailbox unavailable", "\xED\xA0\x80", "\xC3", "\xFF",
};

static void
random_text(char *o, size_t max, const char *addr, int allow_bad)
{
	struct buf b;
	int i, n = (int)(unit_rand() % 12);
	const char *p;
	char up[VERIFY_EMAIL_MAX + 1];
	size_t k;

	buf_init(&b, max - 1);
	for (i = 0; i < n; i++) {
		switch (unit_rand() % 4) {
		case 0:		/* the address, in a random case */
			for (k = 0; addr[k] != '\0' && k < sizeof(up) - 1; k++)
				up[k] = unit_rand() % 2 ? (char)toupper(
				    (unsigned char)addr[k]) : addr[k];
			up[k] = '\0';
			p = up;
			break;
		default:
			do
				p = PICK(pieces);
			while (!allow_bad && (strcmp(p, "\xED\xA0\x80") == 0 ||
			    strcmp(p, "\xC3") == 0 || strcmp(p, "\xFF") == 0));
		}
		(void)buf_puts(&b, p);
	}
	snprintf(o, max, "%s", buf_str(&b));
	buf_free(&b);
}

static const char *const locals[] = {
	"user1", "User.Name", "a", "j\xC3\xBCrgen", "x+tag", "o'brien",
	"quote\"d", "\xC3",
};
static const char *const domains[] = {
	"example.com", "Example.COM", "m\xC3\xBCnchen.de", "gmai.com", "b.test",
	"\xE2\x82",
};
static const char *const hosts[] = {
	"mx1.example.com", "mx.b.test", "aspmx.l.google.com", "bad\xFFhost",
};
static const char *const provs[] = { "", "google", "microsoft", "b.test",
	"\xC3" };

static void
random_result(struct verify_result *r)
{
	const char *l, *d, *dl;
	size_t i;
	int bad = unit_rand() % 8 == 0;	/* a text that may not be UTF-8 */

	memset(r, 0, sizeof(*r));
	do {
		l = PICK(locals);
		d = PICK(domains);
	} while (!bad && (strcmp(l, "\xC3") == 0 ||
	    strcmp(d, "\xE2\x82") == 0));
	snprintf(r->email, sizeof(r->email), "%s@%s", l, d);
	for (i = 0; r->email[i] != '\0'; i++)
		r->normalised[i] = (char)tolower((unsigned char)r->email[i]);
	if (unit_rand() % 10 == 0)	/* (one that is not UTF-8 when bad) */
		snprintf(r->normalised, sizeof(r->normalised), "%sother@%s",
		    bad ? "\xC3" : "", d);
	snprintf(r->domain, sizeof(r->domain), "%s", d);
	do	/* the suggestion's local part */
		dl = PICK(locals);
	while (!bad && strcmp(dl, "\xC3") == 0);
	r->v = verdict_of((enum verdict_kind)(unit_rand() % VERDICT_KIND__MAX),
	    unit_rand() % 5 == 0);
	r->score = (int)(unit_rand() % 130) - 10;
	r->score_basis = (enum calibration_basis)(unit_rand() % CALIBRATION_BASIS__MAX);
	switch (unit_rand() % 5) {
	case 0:
		snprintf(r->did_you_mean, sizeof(r->did_you_mean), "%s@gmail.com",
		    dl);
		break;
	case 1:
		snprintf(r->did_you_mean, sizeof(r->did_you_mean), "%s@", dl);
		break;
	case 2:
		snprintf(r->did_you_mean, sizeof(r->did_you_mean), "no-at");
		break;
	default:
		break;
	}
	r->trap = (enum verdict_trap)(unit_rand() % VERDICT_TRAP__MAX);
	r->role = unit_rand() % 2;
	r->free_provider = unit_rand() % 2;
	r->disposable = unit_rand() % 2;
	r->accept_all = unit_rand() % 2;
	r->catch_all = (enum verdict_catch_all)(unit_rand() % VERDICT_CA__MAX);
	r->nmx = unit_rand() % 4;
	for (i = 0; i < r->nmx; i++) {
		r->mx[i].priority = unit_rand() % 3 == 0 ? 0 : unit_rand() % 70000;
		do
			snprintf(r->mx[i].host, sizeof(r->mx[i].host), "%s",
			    PICK(hosts));
		while (!bad && strcmp(r->mx[i].host, "bad\xFFhost") == 0);
	}
	do
		snprintf(r->provider, sizeof(r->provider), "%s", PICK(provs));
	while (!bad && strcmp(r->provider, "\xC3") == 0);
	r->has_smtp = unit_rand() % 4 != 0;
	if (r->has_smtp) {
		r->smtp_code = unit_rand() % 4 == 0 ? 0 : 250 + (int)(unit_rand() % 310);
		if (unit_rand() % 2)
			snprintf(r->smtp_enhanced, sizeof(r->smtp_enhanced),
			    "%d.%d.%d", (int)(unit_rand() % 6), (int)(unit_rand() % 8),
			    (int)(unit_rand() % 8));
		random_text(r->smtp_message, sizeof(r->smtp_message),
		    unit_rand() % 3 ? r->email : r->normalised, bad);
		r->smtp_tls = unit_rand() % 2;
	}
	r->verified_at = (time_t)(1700000000 + unit_rand() % 100000000);
	snprintf(r->cache_key, sizeof(r->cache_key), "%08x%08x", unit_rand(), unit_rand());
	/* the results the cache never takes */
	switch (unit_rand() % 40) {
	case 0:
		r->sandbox = 1;
		break;
	case 1:
		r->cached = 1;
		break;
	case 2:
		r->normalised[0] = '\0';
		break;
	case 3:
		r->cache_key[0] = '\0';
		break;
	default:
		break;
	}
}

/* Both ways on r: the same refusal, or entries that read back as the
 * same result. 1 if stored. */
static int
check_same(const struct verify_result *r)
{
	struct verify_result a, b;
	struct vcache_entry e;
	char *want = ref_entry(r);
	int rc = verify_cache_entry(r, &e);
	json_t *old, *now;

	if (want == NULL) {
		assert_int_equal(rc, -1);
		assert_null(e.value);
		return 0;
	}
	assert_int_equal(rc, 0);
	assert_string_equal(e.key, r->cache_key);
	assert_int_equal(e.seconds, verdict_cache_seconds(&r->v));
	assert_non_null(old = json_loads(want, 0, NULL));
	assert_non_null(now = json_loads(e.value, 0, NULL));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	assert_int_equal(verify_cache_read(old, &a), 0);
	assert_int_equal(verify_cache_read(now, &b), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	/* earlier versions read the new form as a miss */
	memset(&b, 0, sizeof(b));
	assert_int_equal(verify_json_read(now, &b), -1);
	/* and it is shorter */
	assert_true(strlen(e.value) < strlen(want));
	json_decref(old);
	json_decref(now);
	vcache_entries_clear(&e, 1);
	free(want);
	return 1;
}

static void
test_entry_reads_as_the_old_object_for_random_results(void **st)
{
	struct verify_result r;
	int i, stored = 0, refused = 0, smtp = 0, mark = 0;
	char *t;
	struct vcache_entry e;

	(void)st;
	for (i = 0; i < 20000; i++) {
		random_result(&r);
		if (check_same(&r)) {
			stored++;
			if (r.has_smtp && verify_cache_entry(&r, &e) == 0) {
				smtp++;
				t = strstr(e.value, "{address}");
				mark += t != NULL;
				vcache_entries_clear(&e, 1);
			}
		} else
			refused++;
	}
	/* every branch was taken many times */
	assert_true(stored > 10000);
	assert_true(refused > 1000);
	assert_true(smtp > 5000);
	assert_true(mark > 3000);
}

static void
test_entry_of_a_plain_rejection(void **st)
{
	struct verify_result r;
	struct vcache_entry e;

	(void)st;
	memset(&r, 0, sizeof(r));
	strcpy(r.email, "Jo@Example.com");
	strcpy(r.normalised, "jo@example.com");
	strcpy(r.domain, "example.com");
	r.v = verdict_of(VERDICT_K_REJECTED, 0);
	r.nmx = 1;
	r.mx[0].priority = 10;
	strcpy(r.mx[0].host, "mx.example.com");
	strcpy(r.provider, "example.com");
	r.has_smtp = 1;
	r.smtp_code = 550;
	strcpy(r.smtp_enhanced, "5.1.1");
	strcpy(r.smtp_message, "<JO@example.com>: \"no\" such user\t"
	    "(jo@EXAMPLE.COM)");
	r.smtp_tls = 1;
	r.verified_at = 1764374400;	/* 2025-11-29T00:00:00Z */
	strcpy(r.cache_key, "abc");
	assert_int_equal(check_same(&r), 1);
	assert_int_equal(verify_cache_entry(&r, &e), 0);
	assert_string_equal(e.value, "[2,\"rejected\",0,\"rules\",0,null,0,"
	    "\"example.com\",[10,\"mx.example.com\"],[550,\"5.1.1\","
	    "\"<{address}>: \\\"no\\\" such user\\t({address})\",true],"
	    "1764374400]");
	vcache_entries_clear(&e, 1);
}

/* What the cache stored reads back as the result it came from. */
static void
test_entry_reads_back(void **st)
{
	struct verify_result r, c;
	struct vcache_entry e;
	json_t *j;
	size_t k, nmx;
	int i, n = 0;

	(void)st;
	for (i = 0; i < 2000; i++) {
		random_result(&r);
		if (verify_cache_entry(&r, &e) == -1)
			continue;
		assert_non_null(j = json_loads(e.value, 0, NULL));
		memset(&c, 0, sizeof(c));
		assert_int_equal(verify_cache_read(j, &c), 0);
		assert_int_equal(c.v.kind, r.v.kind);
		assert_int_equal(c.score, r.score);
		/* (a host that is not UTF-8 is left out) */
		for (k = nmx = 0; k < r.nmx; k++)
			nmx += strcmp(r.mx[k].host, "bad\xFFhost") != 0;
		assert_int_equal(c.nmx, nmx);
		assert_int_equal(c.has_smtp, r.has_smtp);
		assert_int_equal(c.verified_at, r.verified_at);
		assert_string_equal(c.provider, r.provider);
		json_decref(j);
		vcache_entries_clear(&e, 1);
		n++;
	}
	assert_true(n > 1000);
}

/* VERIFY_CACHE_BENCH=N: the CPU time of N entries of a bench-worker
 * rejection made both ways, printed (tests/bench/README, "svc-worker's
 * CPU per address"); no check. */
static double
cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
bench_entries(long n)
{
	struct verify_result r;
	struct vcache_entry e;
	double t0, t1, t2;
	size_t bytes = 0;
	long i;
	char *s;

	memset(&r, 0, sizeof(r));
	strcpy(r.email, "unknown17@r1-d042.bench.test");
	strcpy(r.normalised, r.email);
	strcpy(r.domain, "r1-d042.bench.test");
	r.v = verdict_of(VERDICT_K_REJECTED, 0);
	r.nmx = 1;
	r.mx[0].priority = 10;
	strcpy(r.mx[0].host, "mx.r1-d042.bench.test");
	strcpy(r.provider, "bench.test");
	r.has_smtp = 1;
	r.smtp_code = 550;
	strcpy(r.smtp_enhanced, "5.1.1");
	strcpy(r.smtp_message, "5.1.1 <unknown17@r1-d042.bench.test>: "
	    "Recipient address rejected: User unknown");
	r.smtp_tls = 1;
	r.verified_at = 1764374400;
	strcpy(r.cache_key, "0123456789abcdef0123456789abcdef");
	t0 = cpu_s();
	for (i = 0; i < n; i++) {
		s = ref_entry(&r);
		bytes += strlen(s);
		free(s);
	}
	t1 = cpu_s();
	for (i = 0; i < n; i++) {
		(void)verify_cache_entry(&r, &e);
		bytes += strlen(e.value);
		vcache_entries_clear(&e, 1);
	}
	t2 = cpu_s();
	printf("verdict cache entry, %ld each way: jansson %.0f ns, direct "
	    "%.0f ns (%zu bytes in all)\n", n, (t1 - t0) / (double)n * 1e9,
	    (t2 - t1) / (double)n * 1e9, bytes);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_reads_as_the_old_object_for_random_results),
		cmocka_unit_test(test_entry_of_a_plain_rejection),
		cmocka_unit_test(test_entry_reads_back),
	};
	const char *bench = getenv("VERIFY_CACHE_BENCH");

	unit_rand_seed(0x2545f4914f6cdd1dULL);
	if (bench != NULL && atol(bench) > 0) {
		bench_entries(atol(bench));
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
