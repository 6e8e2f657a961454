/* fuzz_query.c: libFuzzer target for the request pieces of src/api/http.c.
 * The input is "<name>\n<text>". Invariants: http_query_get(text, name)
 * agrees with a plain reference decoder written here; http_error quoting
 * the text always yields {"error":{code,message,details}} that parses, with
 * the message unchanged when it was short, well-formed UTF-8; http_header_in
 * asks for HTTP_<NAME> with '-' as '_'; a header value with CR or LF is
 * refused and the formatted head has exactly one line per header. */
#include "api/http.h"
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_query: %s failed " \
	"(line %d)\n", #c, __LINE__); abort(); } } while (0)

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reference: first "&"-separated field whose key is name; its value with
 * '+' as space and %XX decoded when both X are hex digits. */
static int
ref_query_get(const char *q, const char *name, char *out, size_t *outlen)
{
	const char *end, *eq, *v;
	size_t n = 0;

	for (; *q; q = *end ? end + 1 : end) {
		end = strchr(q, '&');
		if (end == NULL)
			end = q + strlen(q);
		eq = memchr(q, '=', (size_t)(end - q));
		if ((size_t)((eq ? eq : end) - q) != strlen(name) ||
		    strncmp(q, name, strlen(name)) != 0)
			continue;
		for (v = eq ? eq + 1 : end; v < end; v++) {
			if (*v == '+')
				out[n++] = ' ';
			else if (*v == '%' && end - v >= 3 &&
			    hexval((unsigned char)v[1]) >= 0 &&
			    hexval((unsigned char)v[2]) >= 0) {
				out[n++] = (char)(hexval((unsigned char)v[1]) *
				    16 + hexval((unsigned char)v[2]));
				v += 2;
			} else
				out[n++] = *v;
		}
		*outlen = n;
		return 0;
	}
	return -1;
}

static int
is_utf8(const unsigned char *s)
{
	/* Enough for the check: jansson decides what is valid. */
	json_t *j = json_string((const char *)s);
	int ok = j != NULL;

	json_decref(j);
	return ok;
}

struct env {
	char	asked[256];
};

static const char *
param(void *io, const char *name)
{
	struct env *e = io;

	snprintf(e->asked, sizeof(e->asked), "%s", name);
	return "v";
}

static void
check_query(const char *name, const char *text)
{
	struct buf out;
	char *ref = malloc(strlen(text) + 1);
	size_t reflen = 0;
	int rc;

	CHECK(ref != NULL);
	buf_init(&out, BUF_NOMAX);
	rc = http_query_get(text, name, &out);
	CHECK(rc == ref_query_get(text, name, ref, &reflen));
	if (rc == 0) {
		CHECK(out.len == reflen);
		CHECK(out.len == 0 || memcmp(out.data, ref, reflen) == 0);
		CHECK(out.len <= strlen(text));
	}
	buf_free(&out);
	free(ref);
}

static void
check_error(const char *text)
{
	struct http_resp r;
	json_error_t jerr;
	json_t *v, *e;
	const char *msg;

	http_resp_init(&r);
	http_error(&r, 400, "invalid_email", NULL, "%s", text);
	v = json_loadb(r.body.data, r.body.len, 0, &jerr);
	CHECK(v != NULL);
	e = json_object_get(v, "error");
	CHECK(json_is_object(e) && json_object_size(e) == 3);
	CHECK(strcmp(json_string_value(json_object_get(e, "code")),
	    "invalid_email") == 0);
	CHECK(json_is_null(json_object_get(e, "details")));
	msg = json_string_value(json_object_get(e, "message"));
	CHECK(msg != NULL);
	CHECK(strlen(msg) <= strlen(text) && strlen(msg) < 512);
	if (strlen(text) < 512 && is_utf8((const unsigned char *)text))
		CHECK(strcmp(msg, text) == 0);
	json_decref(v);
	http_resp_free(&r);
}

static void
check_header_in(const char *name)
{
	struct env e;
	struct http_req req;
	const char *got;
	size_t i, n = strlen(name);

	memset(&req, 0, sizeof(req));
	memset(&e, 0, sizeof(e));
	req.param = param;
	req.io = &e;
	got = http_header_in(&req, name);
	if (strcasecmp(name, "Content-Type") == 0) {
		CHECK(strcmp(e.asked, "CONTENT_TYPE") == 0);
		return;
	}
	if (strcasecmp(name, "Content-Length") == 0) {
		CHECK(strcmp(e.asked, "CONTENT_LENGTH") == 0);
		return;
	}
	if (got == NULL) {
		CHECK(n + 6 >= 128 && e.asked[0] == '\0');
		return;
	}
	CHECK(strlen(e.asked) == n + 5 && strncmp(e.asked, "HTTP_", 5) == 0);
	for (i = 0; i < n; i++)
		CHECK((unsigned char)e.asked[5 + i] == (name[i] == '-' ? '_' :
		    toupper((unsigned char)name[i])));
}

static void
check_head(const char *text)
{
	struct http_resp r;
	struct buf head;
	const char *p;
	size_t lines = 0;

	http_resp_init(&r);
	buf_init(&head, BUF_NOMAX);
	if (http_set_header(&r, "X-Fuzz", text) == 0)
		CHECK(strpbrk(text, "\r\n") == NULL);
	else
		CHECK(strpbrk(text, "\r\n") != NULL);
	http_format_head(&r, &head);
	for (p = buf_str(&head); (p = strchr(p, '\n')) != NULL; p++) {
		CHECK(p > buf_str(&head) && p[-1] == '\r');
		lines++;
	}
	/* status, headers, Content-Length, blank line */
	CHECK(lines == r.nheaders + 3);
	buf_free(&head);
	http_resp_free(&r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy, *text;

	if (size > 65536 || (copy = malloc(size + 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	if ((text = strchr(copy, '\n')) != NULL)
		*text++ = '\0';
	else
		text = copy + strlen(copy);
	check_query(copy, text);
	check_error(text);
	check_header_in(copy);
	check_head(text);
	free(copy);
	return 0;
}
