/* fuzz_jobs_input.c: libFuzzer target for jobs_input_from_json, the
 * cleaning of the "emails" array of POST /v1/verify/bulk and /batch. The
 * input is a request body, parsed as the router does (JSON_REJECT_DUPLICATES);
 * "emails" of an object, or a top-level array, goes through with a small
 * maximum (50, then 2). Invariants: on JOBS_OK 1 <= n <= max; every email is
 * non-empty, trimmed, valid UTF-8 and fits job_emails.email (320); no two
 * are equal case-insensitively; n + duplicates + blank entries is the array
 * size; domains[i] is "" or the lower-case A-label domain of an address;
 * sandbox counts the addresses at the sandbox domain. For entries of at most
 * 320 octets the result is that of a plain model (trim, de-duplicate with
 * strcasecmp, in input order); JOBS_BAD_ITEM names the first non-string;
 * a failed call leaves the input zeroed. */
#include "core/addr.h"
#include "core/jobs.h"
#include <ctype.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_jobs_input: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

#define SANDBOX "sandbox.svc.test"
#define EMAIL_COLUMN 320	/* job_emails.email VARCHAR(320) */
#define MODEL_MAX 64		/* model kept for arrays up to this size */

struct model {
	size_t	 size, blanks, strings, nonstring, first_bad;
	int	 comparable;	/* every trimmed entry within EMAIL_COLUMN */
	size_t	 n;		/* distinct (case-insensitive) entries */
	const char *s[MODEL_MAX];	/* first occurrence, trimmed */
	size_t	 len[MODEL_MAX];
};

static void
trim(const char *s, size_t len, size_t *b, size_t *e)
{
	*b = 0;
	while (*b < len && isspace((unsigned char)s[*b]))
		(*b)++;
	*e = len;
	while (*e > *b && isspace((unsigned char)s[*e - 1]))
		(*e)--;
}

static int
same_ci(const char *x, size_t xl, const char *y, size_t yl)
{
	return xl == yl && strncasecmp(x, y, xl) == 0;
}

/* The specification in its plainest form. */
static void
model_build(const json_t *arr, struct model *m)
{
	size_t i, j, b, e;
	json_t *v;

	memset(m, 0, sizeof(*m));
	m->size = json_array_size(arr);
	m->comparable = m->size <= MODEL_MAX;
	m->first_bad = (size_t)-1;
	json_array_foreach(arr, i, v) {
		const char *s;
		if (!json_is_string(v)) {
			if (m->nonstring++ == 0)
				m->first_bad = i;
			continue;
		}
		m->strings++;
		s = json_string_value(v);
		trim(s, json_string_length(v), &b, &e);
		if (e == b) {
			m->blanks++;
			continue;
		}
		if (e - b > EMAIL_COLUMN)
			m->comparable = 0;
		if (!m->comparable || m->nonstring > 0)
			continue;
		for (j = 0; j < m->n; j++)
			if (same_ci(m->s[j], m->len[j], s + b, e - b))
				break;
		if (j == m->n) {
			m->s[m->n] = s + b;
			m->len[m->n++] = e - b;
		}
	}
}

static int
utf8_valid(const char *s)
{
	json_t *j = json_string(s);	/* jansson checks UTF-8 */

	if (j == NULL)
		return 0;
	json_decref(j);
	return 1;
}

static void
check_ok(const struct jobs_input *in, size_t max, const struct model *m)
{
	struct addr a;
	size_t i, j, len, sandbox = 0;
	const char *d;

	CHECK(in->n >= 1 && in->n <= max);
	CHECK(in->emails != NULL && in->domains != NULL);
	CHECK(m->nonstring == 0);
	CHECK(in->n + in->duplicates + m->blanks == m->size);
	for (i = 0; i < in->n; i++) {
		const char *s = in->emails[i];
		CHECK(s != NULL && in->domains[i] != NULL);
		len = strlen(s);
		CHECK(len >= 1 && len <= EMAIL_COLUMN);
		CHECK(!isspace((unsigned char)s[0]));
		CHECK(!isspace((unsigned char)s[len - 1]));
		CHECK(utf8_valid(s));
		for (j = 0; j < i; j++)
			CHECK(strcasecmp(in->emails[j], s) != 0);
		d = in->domains[i];
		if (addr_parse(s, &a) == ADDR_OK) {
			CHECK(strcmp(d, a.ascii_domain) == 0);
			CHECK(*d != '\0' && strlen(d) <= ADDR_ASCII_DOMAIN_MAX);
			for (j = 0; d[j] != '\0'; j++)
				CHECK((d[j] >= 'a' && d[j] <= 'z') ||
				    (d[j] >= '0' && d[j] <= '9') ||
				    d[j] == '-' || d[j] == '.');
			if (strcmp(d, SANDBOX) == 0)
				sandbox++;
		} else
			CHECK(*d == '\0');
	}
	CHECK(in->sandbox == sandbox);
	if (m->comparable) {
		CHECK(in->n == m->n);
		for (i = 0; i < in->n; i++)
			CHECK(strlen(in->emails[i]) == m->len[i] &&
			    memcmp(in->emails[i], m->s[i], m->len[i]) == 0);
	}
}

static void
check_zeroed(const struct jobs_input *in)
{
	CHECK(in->emails == NULL && in->domains == NULL && in->n == 0 &&
	    in->duplicates == 0 && in->sandbox == 0);
}

static enum jobs_err
run(const json_t *arr, size_t max, const struct model *m)
{
	struct jobs_input in;
	size_t bad = (size_t)-1;
	enum jobs_err rc;

	rc = jobs_input_from_json(arr, max, SANDBOX, &in, &bad);
	CHECK(rc < JOBS_ERR__MAX);
	switch (rc) {
	case JOBS_OK:
		check_ok(&in, max, m);
		break;
	case JOBS_EMPTY:
		check_zeroed(&in);
		/* Nothing but blank strings. */
		CHECK(m->nonstring == 0 && m->strings == m->blanks);
		if (m->comparable)
			CHECK(m->n == 0);
		break;
	case JOBS_TOO_MANY:
		check_zeroed(&in);
		if (m->comparable)
			CHECK(m->n > max);
		break;
	case JOBS_BAD_ITEM:
		check_zeroed(&in);
		CHECK(bad < m->size && bad == m->first_bad);
		CHECK(!json_is_string(json_array_get(arr, bad)));
		break;
	default:
		/* JOBS_NOMEM may happen; nothing else comes from here. */
		CHECK(rc == JOBS_NOMEM);
		check_zeroed(&in);
		break;
	}
	jobs_input_free(&in);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model *m;
	json_t *root, *arr;
	enum jobs_err r50, r2;

	root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES,
	    NULL);
	if (root == NULL)
		return 0;
	arr = json_is_array(root) ? root : json_object_get(root, "emails");
	if (!json_is_array(arr)) {
		json_decref(root);
		return 0;
	}
	if ((m = malloc(sizeof(*m))) == NULL)
		abort();
	model_build(arr, m);
	r50 = run(arr, 50, m);
	r2 = run(arr, 2, m);
	/* A smaller maximum only turns success into JOBS_TOO_MANY. */
	if (r50 == JOBS_OK && m->comparable)
		CHECK(r2 == (m->n <= 2 ? JOBS_OK : JOBS_TOO_MANY));
	if (r50 == JOBS_EMPTY || r50 == JOBS_BAD_ITEM)
		CHECK(r2 == r50 || r2 == JOBS_TOO_MANY);
	free(m);
	json_decref(root);
	return 0;
}
