/* fuzz_jsonw.c: libFuzzer target for the JSON writer (util/jsonw.c), which
 * writes SMTP replies and other text from outside into the verdict cache.
 * The input up to its first NUL is a string; invariants: jsonw refuses it
 * exactly when jansson's json_string does (not UTF-8), and otherwise
 * writes the bytes json_dumps(JSON_COMPACT) writes for ["<s>",{"<s>":
 * <n>}], n read from the input's first bytes. */
#include "util/jsonw.h"
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_jsonw: %s failed " \
	"(line %d)\n", #c, __LINE__); abort(); } } while (0)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct buf b;
	struct jsonw w;
	json_t *s, *o;
	long long v = 0;
	char *in, *want;

	if ((in = malloc(n + 1)) == NULL)
		return 0;
	memcpy(in, data, n);
	in[n] = '\0';
	memcpy(&v, data, n < sizeof(v) ? n : sizeof(v));
	buf_init(&b, BUF_NOMAX);
	jsonw_init(&w, &b);
	jsonw_open(&w, '[');
	jsonw_str(&w, in);
	jsonw_open(&w, '{');
	jsonw_key(&w, in);
	jsonw_int(&w, v);
	jsonw_close(&w, '}');
	jsonw_close(&w, ']');
	s = json_string(in);
	CHECK((s == NULL) == !jsonw_utf8_ok(in));
	CHECK((s == NULL) == (w.err != 0));
	if (s != NULL && (o = json_pack("[O,{s:I}]", s, in,
	    (json_int_t)v)) != NULL) {
		want = json_dumps(o, JSON_COMPACT);
		CHECK(want != NULL && strcmp(want, buf_str(&b)) == 0);
		free(want);
		json_decref(o);
	}
	json_decref(s);
	buf_free(&b);
	free(in);
	return 0;
}
