/* test_jsonw.c: the JSON writer of src/util/jsonw.c against jansson: for
 * fixed nasty strings and 20,000 random ones (valid UTF-8 of every length
 * class and at the edges of the ranges, control characters, quotes,
 * backslashes, DEL; and random bytes, truncated, overlong and surrogate
 * sequences, which both must refuse), an object of such keys and values,
 * integers, booleans, nulls and a nested array written by jsonw must be
 * the very bytes of json_dumps(JSON_COMPACT) of the same object, and
 * jsonw_utf8_ok must agree with json_string. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonw.h"
#include "unit_rand.h"

/* Appends code point c as UTF-8 (surrogates too: an invalid string). */
static size_t
put_cp(unsigned char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (unsigned char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (unsigned char)(0xC0 | c >> 6);
		o[1] = (unsigned char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (unsigned char)(0xE0 | c >> 12);
		o[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
		o[2] = (unsigned char)(0x80 | (c & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | c >> 18);
	o[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
	o[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
	o[3] = (unsigned char)(0x80 | (c & 0x3F));
	return 4;
}

/* Code points where the encodings change or the escapes are. */
static const uint32_t edges[] = {
	0x01, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1F, 0x20, 0x22, 0x2F, 0x5C,
	0x7E, 0x7F, 0x80, 0xFF, 0x7FF, 0x800, 0xFFF, 0xD7FF, 0xE000, 0xFEFF,
	0xFFFD, 0xFFFE, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF,
};

/* A random valid UTF-8 string of up to max - 4 bytes, NUL-terminated. */
static void
random_valid(unsigned char *o, size_t max)
{
	size_t n = 0, len = unit_rand() % (max - 4);
	uint32_t c;

	while (n < len) {
		switch (unit_rand() % 6) {
		case 0:
			c = 1 + unit_rand() % 0x7F;	/* any ASCII but NUL */
			break;
		case 1:
			c = 1 + unit_rand() % 0x20;	/* control characters */
			break;
		case 2:
			c = edges[unit_rand() %
			    (sizeof(edges) / sizeof(edges[0]))];
			break;
		case 3:
			c = 0x80 + unit_rand() % (0x800 - 0x80);
			break;
		case 4:
			do
				c = 0x800 + unit_rand() % (0x10000 - 0x800);
			while (c >= 0xD800 && c <= 0xDFFF);
			break;
		default:
			c = 0x10000 + unit_rand() % (0x110000 - 0x10000);
		}
		if (n + 4 >= max)
			break;
		n += put_cp(o + n, c);
	}
	o[n] = '\0';
}

/* A string of random bytes, or a valid one with a broken sequence. */
static void
random_bytes(unsigned char *o, size_t max)
{
	static const char *const broken[] = {
		"\xC0\x80", "\xC1\xBF", "\xE0\x9F\xBF", "\xED\xA0\x80",
		"\xED\xBF\xBF", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80",
		"\xF5\x80\x80\x80", "\xFF", "\xFE", "\x80", "\xBF", "\xC3",
		"\xE2\x82", "\xF0\x9F\x98", "\xC3\x28", "\xE2\x28\xA1",
	};
	const char *b;
	size_t n, i, len;

	if (unit_rand() % 2) {
		len = unit_rand() % (max - 1);
		for (i = 0; i < len; i++)
			if ((o[i] = (unsigned char)unit_rand()) == 0)
				o[i] = 0x80;
		o[len] = '\0';
		return;
	}
	random_valid(o, max / 2);
	n = strlen((char *)o);
	i = n ? unit_rand() % (n + 1) : 0;
	b = broken[unit_rand() % (sizeof(broken) / sizeof(broken[0]))];
	len = strlen(b);
	memmove(o + i + len, o + i, n - i + 1);
	memcpy(o + i, b, len);
}

/* Both writers on {"<k>":"<v>","n":<i>,"t":<b>,"z":null,"a":["<v>",<i>,
 * {}],"e":[]}; with a string jansson refuses, jsonw must fail too. */
static void
check_pair(const char *k, const char *v, long long i, int b)
{
	struct buf out;
	struct jsonw w;
	json_t *jk = json_string(k), *jv = json_string(v), *o;
	char *want;

	/* (a key equal to one of the fixed ones would replace that member
	 * in jansson's object) */
	if (strlen(k) == 1 && strchr("ntzae", k[0]) != NULL) {
		json_decref(jk);
		jk = json_string(k = "K");
	}
	assert_int_equal(jsonw_utf8_ok(k), jk != NULL);
	assert_int_equal(jsonw_utf8_ok(v), jv != NULL);
	buf_init(&out, BUF_NOMAX);
	jsonw_init(&w, &out);
	jsonw_open(&w, '{');
	jsonw_key(&w, k);
	jsonw_str(&w, v);
	jsonw_key(&w, "n");
	jsonw_int(&w, i);
	jsonw_key(&w, "t");
	jsonw_bool(&w, b);
	jsonw_key(&w, "z");
	jsonw_null(&w);
	jsonw_key(&w, "a");
	jsonw_open(&w, '[');
	jsonw_str(&w, v);
	jsonw_int(&w, i);
	jsonw_open(&w, '{');
	jsonw_close(&w, '}');
	jsonw_close(&w, ']');
	jsonw_key(&w, "e");
	jsonw_open(&w, '[');
	jsonw_close(&w, ']');
	jsonw_close(&w, '}');
	if (jk == NULL || jv == NULL) {
		assert_int_equal(w.err, 1);
		json_decref(jk);
		json_decref(jv);
		buf_free(&out);
		return;
	}
	assert_int_equal(w.err, 0);
	o = json_pack("{s:o,s:I,s:b,s:n,s:[O,I,{}],s:[]}", k, jv, "n",
	    (json_int_t)i, "t", b, "z", "a", jv, (json_int_t)i, "e");
	assert_non_null(o);
	want = json_dumps(o, JSON_COMPACT);
	assert_non_null(want);
	assert_string_equal(buf_str(&out), want);
	free(want);
	json_decref(o);
	json_decref(jk);
	buf_free(&out);
}

static void
test_jsonw_same_bytes_as_jansson_for_nasty_strings(void **st)
{
	static const char *const s[] = {
		"", "a", "\"", "\\", "\\\"", "/", "</script>", "\x01\x1F\x7F",
		"\b\f\n\r\t", "tab\there", "caf\xC3\xA9", "\xE2\x82\xAC 5",
		"\xF0\x9F\x98\x80", "\xEF\xBB\xBF bom", "\xEF\xBF\xBF",
		"\xF4\x8F\xBF\xBF", "550 5.1.1 <{address}>: \"no\" \\ user",
		"\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF",
	};
	static const long long ints[] = { 0, -1, 1, 100, LLONG_MAX,
	    LLONG_MIN, INT_MIN, INT_MAX };
	size_t i, j;

	(void)st;
	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		for (j = 0; j < sizeof(s) / sizeof(s[0]); j++)
			check_pair(i == 0 ? "k" : s[i], s[j],
			    ints[(i + j) % (sizeof(ints) / sizeof(ints[0]))],
			    (int)(i & 1));
}

static void
test_jsonw_same_bytes_as_jansson_for_random_strings(void **st)
{
	unsigned char k[64], v[600];
	int i, refused = 0;

	(void)st;
	for (i = 0; i < 20000; i++) {
		random_valid(k, sizeof(k));
		if (i % 3 == 2) {
			random_bytes(v, sizeof(v));
			refused += !jsonw_utf8_ok((char *)v);
		} else
			random_valid(v, sizeof(v));
		check_pair((char *)k, (char *)v,
		    (long long)((uint64_t)unit_rand() << 32 | unit_rand()),
		    i & 1);
	}
	/* the invalid ones were refused (by both), not just skipped */
	assert_true(refused > 1000);
}

static void
test_jsonw_null_string_is_an_error(void **st)
{
	struct buf out;
	struct jsonw w;

	(void)st;
	buf_init(&out, BUF_NOMAX);
	jsonw_init(&w, &out);
	jsonw_open(&w, '[');
	jsonw_str(&w, NULL);
	assert_int_equal(w.err, 1);
	buf_free(&out);
}

static void
test_jsonw_appends_after_what_the_buffer_holds(void **st)
{
	struct buf out;
	struct jsonw w;

	(void)st;
	buf_init(&out, BUF_NOMAX);
	buf_puts(&out, "x:");
	jsonw_init(&w, &out);
	jsonw_open(&w, '{');
	jsonw_key(&w, "a");
	jsonw_int(&w, 1);
	jsonw_close(&w, '}');
	assert_int_equal(w.err, 0);
	assert_string_equal(buf_str(&out), "x:{\"a\":1}");
	buf_free(&out);
}

static void
test_jsonw_cap_reached_is_an_error(void **st)
{
	struct buf out;
	struct jsonw w;

	(void)st;
	buf_init(&out, 8);
	jsonw_init(&w, &out);
	jsonw_open(&w, '[');
	jsonw_str(&w, "0123456789");
	jsonw_close(&w, ']');
	assert_int_equal(w.err, 1);
	buf_free(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonw_same_bytes_as_jansson_for_nasty_strings),
		cmocka_unit_test(test_jsonw_same_bytes_as_jansson_for_random_strings),
		cmocka_unit_test(test_jsonw_null_string_is_an_error),
		cmocka_unit_test(test_jsonw_appends_after_what_the_buffer_holds),
		cmocka_unit_test(test_jsonw_cap_reached_is_an_error),
	};

	unit_rand_seed(0x9e3779b97f4a7c15ULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
