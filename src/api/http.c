/* http.c: request accessors (headers, query, bounded body reading) and
 * response building (status, headers, JSON bodies, the error object). */
#include "api/http.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const http_method_names[HTTP_METHOD__MAX] = {
	"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "OTHER"
};

const char *
http_param(const struct http_req *r, const char *name)
{
	return r->param ? r->param(r->io, name) : NULL;
}

const char *
http_header_in(const struct http_req *r, const char *name)
{
	char var[128];
	size_t i, n = strlen(name);

	/* CGI (RFC 3875) passes these two without the HTTP_ prefix. */
	if (strcasecmp(name, "Content-Type") == 0)
		return http_param(r, "CONTENT_TYPE");
	if (strcasecmp(name, "Content-Length") == 0)
		return http_param(r, "CONTENT_LENGTH");
	if (n + 6 >= sizeof(var))
		return NULL;
	memcpy(var, "HTTP_", 5);
	for (i = 0; i < n; i++)
		var[5 + i] = name[i] == '-' ? '_' :
		    (char)toupper((unsigned char)name[i]);
	var[5 + n] = '\0';
	return http_param(r, var);
}

int
http_read_body(struct http_req *r, size_t max)
{
	char chunk[65536];
	long n;

	/* body_read: 0 not yet, 1 read whole, else the error returned. */
	if (r->body_read)
		return r->body_read < 0 ? r->body_read : 0;
	r->body_read = -1;
	buf_init(&r->body, max);
	if (r->read == NULL) {
		r->body_read = 1;
		return 0;
	}
	while ((n = r->read(r->io, chunk, sizeof(chunk))) > 0)
		if (buf_append(&r->body, chunk, (size_t)n) == -1)
			return -1;
	if (n < 0) {
		r->body_read = n == HTTP_READ_TIMEOUT ? HTTP_READ_TIMEOUT : -1;
		return r->body_read;
	}
	r->body_read = 1;
	return 0;
}

void
http_body_error(struct http_resp *resp, int rc, size_t max)
{
	if (rc == HTTP_READ_TIMEOUT)
		http_error(resp, 408, "request_timeout", NULL,
		    "the request body did not arrive in time");
	else
		http_error(resp, 413, "file_too_large",
		    json_pack("{s:I}", "limit_bytes", (json_int_t)max),
		    "request body is larger than %zu bytes", max);
}

static int
http_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decodes %XX (and '+' as a space in a query component) into out. */
static int
http_pct_decode(const char *s, size_t n, int plus_space, struct buf *out)
{
	size_t i;
	int h, l;

	for (i = 0; i < n; i++) {
		if (s[i] == '+' && plus_space) {
			if (buf_putc(out, ' ') == -1)
				return -1;
		} else if (s[i] == '%' && i + 2 < n &&
		    (h = http_hexval((unsigned char)s[i + 1])) >= 0 &&
		    (l = http_hexval((unsigned char)s[i + 2])) >= 0) {
			if (buf_putc(out, (char)(h * 16 + l)) == -1)
				return -1;
			i += 2;
		} else if (buf_putc(out, s[i]) == -1)
			return -1;
	}
	return 0;
}

int
http_path_decode(const char *segment, struct buf *out)
{
	buf_reset(out);
	return http_pct_decode(segment, strlen(segment), 0, out);
}

int
http_query_get(const char *q, const char *name, struct buf *out)
{
	size_t nlen = strlen(name), seg, klen;
	const char *eq;

	while (q && *q) {
		seg = strcspn(q, "&");
		eq = memchr(q, '=', seg);
		klen = eq ? (size_t)(eq - q) : seg;
		if (klen == nlen && memcmp(q, name, nlen) == 0) {
			buf_reset(out);
			if (eq)
				return http_pct_decode(eq + 1,
				    seg - klen - 1, 1, out);
			return 0;
		}
		q += seg;
		if (*q == '&')
			q++;
	}
	return -1;
}

void
http_resp_init(struct http_resp *r)
{
	memset(r, 0, sizeof(*r));
	r->status = 200;
	buf_init(&r->body, BUF_NOMAX);
}

void
http_resp_free(struct http_resp *r)
{
	size_t i;

	for (i = 0; i < r->nheaders; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	r->nheaders = 0;
	buf_free(&r->body);
	if (r->stream_free)
		r->stream_free(r->stream_arg);
	r->stream = NULL;
	r->stream_free = NULL;
	r->stream_arg = NULL;
}

int
http_set_header(struct http_resp *r, const char *name, const char *value)
{
	size_t i;
	char *v;

	/* Header values come from our own code; refuse line breaks anyway. */
	if (strpbrk(value, "\r\n") != NULL)
		return -1;
	for (i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0) {
			if ((v = strdup(value)) == NULL)
				return -1;
			free(r->headers[i].value);
			r->headers[i].value = v;
			return 0;
		}
	if (r->nheaders == sizeof(r->headers) / sizeof(r->headers[0]))
		return -1;
	r->headers[r->nheaders].name = strdup(name);
	r->headers[r->nheaders].value = strdup(value);
	if (!r->headers[r->nheaders].name || !r->headers[r->nheaders].value) {
		free(r->headers[r->nheaders].name);
		free(r->headers[r->nheaders].value);
		return -1;
	}
	r->nheaders++;
	return 0;
}

const char *
http_resp_header(const struct http_resp *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}

const char *
http_status_text(int s)
{
	switch (s) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 402: return "Payment Required";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 413: return "Payload Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	default: return "Unknown";
	}
}

void
http_format_head(const struct http_resp *r, struct buf *out)
{
	size_t i;

	buf_printf(out, "Status: %d %s\r\n", r->status,
	    http_status_text(r->status));
	for (i = 0; i < r->nheaders; i++)
		buf_printf(out, "%s: %s\r\n", r->headers[i].name,
		    r->headers[i].value);
	if (http_resp_header(r, "Content-Length") == NULL && r->stream == NULL)
		buf_printf(out, "Content-Length: %zu\r\n", r->body.len);
	buf_puts(out, "\r\n");
}

void
http_json(struct http_resp *r, int status, json_t *obj)
{
	char *s;

	r->status = status;
	buf_reset(&r->body);
	http_set_header(r, "Content-Type", "application/json; charset=utf-8");
	s = obj ? json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	if (s == NULL) {
		buf_puts(&r->body, "{}");
	} else {
		buf_puts(&r->body, s);
		free(s);
	}
	json_decref(obj);
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 if there is none. */
static size_t
http_utf8_len(const unsigned char *s)
{
	size_t n, i;
	unsigned long cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/* Replaces each byte that is not part of well-formed UTF-8 with '?', so that
 * a message quoting request text (or cut inside a character) stays a JSON
 * string: jansson refuses invalid UTF-8 and the error object would be lost. */
static void
http_utf8_clean(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t n;

	while (*p) {
		if ((n = http_utf8_len(p)) == 0) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

void
http_error(struct http_resp *r, int status, const char *code,
    json_t *details, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	http_utf8_clean(msg);
	r->error_code = code;
	http_json(r, status, json_pack("{s:{s:s,s:s,s:o}}", "error", "code",
	    code, "message", msg, "details", details ? details : json_null()));
}
