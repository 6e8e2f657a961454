/* fuzz_jobs_input.c: libFuzzer target for the body of POST /v1/verify/bulk
 * and /batch as svc-api reads it: raw bytes through jobs_body (the yajl
 * stream parser) into a jobs_input, as a batch (maximum 50) and as a bulk
 * request (maximum 2), each fed whole, in two pieces split at a point
 * taken from the input, and (short inputs) byte by byte.
 *
 * jansson, which parsed these bodies before, is the reference: the three
 * feedings give the same result; the body is invalid JSON exactly when
 * json_loadb with JSON_REJECT_DUPLICATES | JSON_DECODE_ANY refuses it (or
 * it holds a raw NUL byte, which jansson sometimes skipped), and
 * not an object exactly when jansson's value is not one; otherwise every
 * field is what a plain model computes from jansson's tree: name (at most
 * 200 octets), webhook_url (its first 2049), callback_data (equal to jansson's
 * object, or too big beyond 32 levels or 4096 values), the number of
 * emails elements, and for at most 4 x maximum elements the outcome of the
 * input: the first non-string element, more unique entries than the
 * maximum, none at all, or the entries: trimmed and cut as specified,
 * de-duplicated on the normal form (addr_parse's normalised address, the
 * ASCII-lower-cased text for a non-address) with the first spelling kept,
 * in input order, each with its A-label domain, the sandbox count and the
 * duplicates. */
#include "engine/addr.h"
#include "jobs/jobs_body.h"
#include <ctype.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_jobs_input: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

#define SANDBOX "sandbox.svc.test"
#define MEMORY (144 << 20)	/* never reached by these inputs */
#define LINE_MAX_OCTETS 320	/* job_emails.email VARCHAR(320) */

struct result {
	enum jobs_body_err rc;
	struct jobs_body b;
};

static void
parse(const uint8_t *data, size_t size, int batch, size_t max, size_t split,
    int bytewise, struct result *r)
{
	size_t i;

	CHECK(jobs_body_init(&r->b, batch, max, SANDBOX, MEMORY) == 0);
	if (bytewise) {
		for (i = 0, r->rc = JOBS_BODY_OK; i < size &&
		    r->rc == JOBS_BODY_OK; i++)
			r->rc = jobs_body_feed(&r->b,
			    (const char *)data + i, 1);
	} else {
		r->rc = jobs_body_feed(&r->b, (const char *)data, split);
		if (r->rc == JOBS_BODY_OK)
			r->rc = jobs_body_feed(&r->b,
			    (const char *)data + split, size - split);
	}
	if (r->rc == JOBS_BODY_OK)
		r->rc = jobs_body_end(&r->b);
	CHECK(r->rc < JOBS_BODY_ERR__MAX && r->rc != JOBS_BODY_NOMEM);
	CHECK(!r->b.too_big);
	if (r->rc == JOBS_BODY_INVALID_JSON)
		CHECK(r->b.error[0] != '\0');
}

static void
same_result(const struct result *x, const struct result *y)
{
	const struct jobs_body *a = &x->b, *b = &y->b;
	size_t i;

	CHECK(x->rc == y->rc);
	if (x->rc != JOBS_BODY_OK)
		return;
	CHECK(a->name_state == b->name_state &&
	    a->url_state == b->url_state && a->cb_state == b->cb_state &&
	    a->emails_state == b->emails_state && a->count == b->count);
	CHECK(strcmp(a->name, b->name) == 0);
	CHECK(strcmp(a->webhook_url, b->webhook_url) == 0);
	CHECK((a->callback_data == NULL) == (b->callback_data == NULL));
	if (a->callback_data)
		CHECK(json_equal(a->callback_data, b->callback_data));
	CHECK(a->emails_rc == b->emails_rc && a->bad_index == b->bad_index);
	CHECK(a->in.n == b->in.n && a->in.duplicates == b->in.duplicates &&
	    a->in.sandbox == b->in.sandbox);
	for (i = 0; i < a->in.n; i++)
		CHECK(strcmp(a->in.emails[i], b->in.emails[i]) == 0 &&
		    strcmp(a->in.domains[i], b->in.domains[i]) == 0);
}

/* A string member of at most max octets. */
static void
check_string(const json_t *v, size_t max, enum jobs_body_field got,
    const char *text)
{
	if (v == NULL || json_is_null(v)) {
		CHECK(got == JOBS_BODY_ABSENT);
	} else if (json_is_string(v) && json_string_length(v) <= max) {
		CHECK(got == JOBS_BODY_SET);
		CHECK(strlen(text) == json_string_length(v) &&
		    memcmp(text, json_string_value(v), strlen(text)) == 0);
	} else
		CHECK(got == JOBS_BODY_WRONG);
}

/* webhook_url: a string of any length, kept cut to JOBS_BODY_URL_KEEP. */
static void
check_url(const json_t *v, const struct jobs_body *b)
{
	size_t n;

	if (v == NULL || json_is_null(v)) {
		CHECK(b->url_state == JOBS_BODY_ABSENT);
	} else if (json_is_string(v)) {
		n = json_string_length(v);
		if (n > JOBS_BODY_URL_KEEP)
			n = JOBS_BODY_URL_KEEP;
		CHECK(b->url_state == JOBS_BODY_SET);
		CHECK(strlen(b->webhook_url) == n &&
		    memcmp(b->webhook_url, json_string_value(v), n) == 0);
	} else
		CHECK(b->url_state == JOBS_BODY_WRONG);
}

/* Nesting levels and values of a JSON value (itself included). */
static void
measure(const json_t *v, size_t level, size_t *depth, size_t *values)
{
	const char *k;
	json_t *e;
	size_t i;

	(*values)++;
	if (level > *depth)
		*depth = level;
	if (json_is_object(v))
		json_object_foreach((json_t *)v, k, e)
			measure(e, level + 1, depth, values);
	else if (json_is_array(v))
		json_array_foreach(v, i, e)
			measure(e, level + 1, depth, values);
}

static void
check_callback(const json_t *v, const struct jobs_body *b, size_t size)
{
	size_t depth = 0, values = 0;

	if (v == NULL || json_is_null(v)) {
		CHECK(b->cb_state == JOBS_BODY_ABSENT);
		return;
	}
	if (!json_is_object(v)) {
		CHECK(b->cb_state == JOBS_BODY_WRONG);
		return;
	}
	measure(v, 1, &depth, &values);
	if (depth > JOBS_BODY_CB_DEPTH || values > JOBS_BODY_CB_VALUES) {
		CHECK(b->cb_state == JOBS_BODY_TOO_BIG);
		CHECK(b->callback_data == NULL);
	} else if (b->cb_state == JOBS_BODY_SET) {
		CHECK(json_equal(b->callback_data, v));
	} else	/* only the size as sent can be over */
		CHECK(size > JOBS_BODY_CB_BYTES &&
		    b->cb_state == JOBS_BODY_TOO_BIG);
}

/* The entry as jobs_input keeps it: trimmed, cut to 320 octets at a
 * character boundary, trimmed again. */
static size_t
model_entry(const char *s, size_t len, char *out)
{
	size_t b = 0, e = len;

	while (b < len && isspace((unsigned char)s[b]))
		b++;
	while (e > b && isspace((unsigned char)s[e - 1]))
		e--;
	if (e - b > LINE_MAX_OCTETS) {
		e = b + LINE_MAX_OCTETS;
		while (e > b + 1 && ((unsigned char)s[e] & 0xC0) == 0x80)
			e--;
		while (e > b + 1 && isspace((unsigned char)s[e - 1]))
			e--;
	}
	memcpy(out, s + b, e - b);
	out[e - b] = '\0';
	return e - b;
}

static void
model_key(const char *entry, char *key)
{
	struct addr a;
	size_t i;

	if (addr_parse(entry, &a) == ADDR_OK) {
		memcpy(key, a.normalised, strlen(a.normalised) + 1);
		return;
	}
	for (i = 0; entry[i] != '\0'; i++)
		key[i] = (char)tolower((unsigned char)entry[i]);
	key[i] = '\0';
}

/* The emails array against a model of at most 4 x max elements. */
static void
check_emails(const json_t *arr, const struct jobs_body *b, size_t max)
{
	char (*keys)[LINE_MAX_OCTETS + 1], entry[LINE_MAX_OCTETS + 1],
	    key[LINE_MAX_OCTETS + 1];
	size_t i, j, n = 0, blanks = 0, sandbox = 0;
	enum jobs_err want = JOBS_OK;
	size_t bad = 0;
	struct addr a;
	json_t *v;

	CHECK(b->count == json_array_size(arr));
	if (b->count > JOBS_BODY_ELEMENTS(max)) {
		CHECK(b->in.n == 0 && b->in.emails == NULL);
		return;
	}
	if ((keys = calloc(b->count + 1, sizeof(*keys))) == NULL)
		abort();
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v)) {
			want = JOBS_BAD_ITEM;
			bad = i;
			break;
		}
		if (model_entry(json_string_value(v), json_string_length(v),
		    entry) == 0) {
			blanks++;
			continue;
		}
		model_key(entry, key);
		for (j = 0; j < n && strcmp(keys[j], key) != 0; j++)
			;
		if (j < n)
			continue;
		if (n == max) {
			want = JOBS_TOO_MANY;
			break;
		}
		/* the n-th unique entry: the first spelling is kept */
		CHECK(b->emails_rc != JOBS_OK || (n < b->in.n &&
		    strcmp(b->in.emails[n], entry) == 0));
		memcpy(keys[n++], key, strlen(key) + 1);
	}
	if (want == JOBS_OK && n == 0)
		want = JOBS_EMPTY;
	CHECK(b->emails_rc == want);
	if (want == JOBS_BAD_ITEM)
		CHECK(b->bad_index == bad);
	if (want != JOBS_OK) {
		CHECK(b->in.n == 0 && b->in.emails == NULL);
		free(keys);
		return;
	}
	CHECK(b->in.n == n);
	CHECK(b->in.n + b->in.duplicates + blanks == b->count);
	for (i = 0; i < n; i++) {
		const char *d = b->in.domains[i];
		if (addr_parse(b->in.emails[i], &a) == ADDR_OK) {
			CHECK(strcmp(d, a.ascii_domain) == 0);
			if (strcmp(d, SANDBOX) == 0)
				sandbox++;
		} else
			CHECK(*d == '\0');
	}
	CHECK(b->in.sandbox == sandbox);
	free(keys);
}

static void
check_reference(const json_t *root, int nul, const struct result *r,
    int batch, size_t max, size_t size)
{
	const struct jobs_body *b = &r->b;
	const json_t *v;

	/* jansson 2.14 skipped a raw NUL after a literal or a number
	 * ("{"a":null\0}" was valid); a raw NUL is never valid JSON. */
	if (root == NULL || nul) {
		CHECK(r->rc == JOBS_BODY_INVALID_JSON);
		return;
	}
	CHECK(r->rc != JOBS_BODY_INVALID_JSON);
	if (!json_is_object(root)) {
		CHECK(r->rc == JOBS_BODY_NOT_OBJECT);
		return;
	}
	CHECK(r->rc == JOBS_BODY_OK);
	check_string(json_object_get(root, "name"), JOBS_NAME_MAX,
	    b->name_state, b->name);
	if (batch) {
		check_url(json_object_get(root, "webhook_url"), b);
		check_callback(json_object_get(root, "callback_data"), b, size);
	} else
		CHECK(b->url_state == JOBS_BODY_ABSENT &&
		    b->cb_state == JOBS_BODY_ABSENT &&
		    b->callback_data == NULL);
	v = json_object_get(root, "emails");
	if (v == NULL)
		CHECK(b->emails_state == JOBS_BODY_ABSENT);
	else if (!json_is_array(v))
		CHECK(b->emails_state == JOBS_BODY_WRONG);
	else {
		CHECK(b->emails_state == JOBS_BODY_SET);
		check_emails(v, b, max);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct { int batch; size_t max; } runs[] = {
		{ 1, 50 }, { 0, 2 }
	};
	struct result *whole, *split;
	size_t i, at;
	json_t *root;

	root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES |
	    JSON_DECODE_ANY, NULL);
	if ((whole = calloc(2, sizeof(*whole))) == NULL)
		abort();
	split = whole + 1;
	at = size ? ((size_t)data[size - 1] * 131 + size) % (size + 1) : 0;
	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		parse(data, size, runs[i].batch, runs[i].max, size, 0, whole);
		check_reference(root, memchr(data, '\0', size) != NULL, whole,
		    runs[i].batch, runs[i].max, size);
		parse(data, size, runs[i].batch, runs[i].max, at, 0, split);
		same_result(whole, split);
		jobs_body_free(&split->b);
		if (size <= 512) {
			parse(data, size, runs[i].batch, runs[i].max, 0, 1,
			    split);
			same_result(whole, split);
			jobs_body_free(&split->b);
		}
		jobs_body_free(&whole->b);
	}
	free(whole);
	json_decref(root);
	return 0;
}
