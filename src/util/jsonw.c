/* jsonw.c: JSON text written straight into a buf as jansson's
 * json_dumps(JSON_COMPACT) would write it (jsonw.h): "," and ":" with no
 * spaces, in strings '"' and '\\' escaped, \b \f \n \r \t, the other
 * control characters as \u00XX (upper-case hex), everything else (DEL and
 * non-ASCII UTF-8 included) as it is. Each call makes room for its worst
 * case once and writes into the buffer itself. tests/unit/test_jsonw.c
 * compares it with jansson. */
#include "util/jsonw.h"
#include <stdint.h>
#include <string.h>

void
jsonw_init(struct jsonw *w, struct buf *b)
{
	w->b = b;
	w->start = b->len;
	w->err = 0;
}

/* Where the next n bytes go (room made for them), or NULL (err set). */
static char *
jsonw_room(struct jsonw *w, size_t n)
{
	if (w->err || buf_reserve(w->b, n) == -1) {
		w->err = 1;
		return NULL;
	}
	return w->b->data + w->b->len;
}

/* The bytes written end at e. */
static void
jsonw_end(struct jsonw *w, char *e)
{
	w->b->len = (size_t)(e - w->b->data);
	*e = '\0';
}

/* The "," before a value or key that follows another at its level: after
 * an opening bracket or a key's ':' there is none. Room for it is made. */
static char *
jsonw_sep(struct jsonw *w, char *o)
{
	char last;

	if (w->b->len <= w->start)
		return o;
	last = w->b->data[w->b->len - 1];
	if (last != '{' && last != '[' && last != ':')
		*o++ = ',';
	return o;
}

/* Writes n bytes of t, after a "," where one is due. */
static void
jsonw_token(struct jsonw *w, const char *t, size_t n, int sep)
{
	char *o;

	if ((o = jsonw_room(w, n + 1)) == NULL)
		return;
	if (sep)
		o = jsonw_sep(w, o);
	memcpy(o, t, n);
	jsonw_end(w, o + n);
}

void
jsonw_open(struct jsonw *w, char c)
{
	jsonw_token(w, &c, 1, 1);
}

void
jsonw_close(struct jsonw *w, char c)
{
	jsonw_token(w, &c, 1, 0);
}

/* The length of the valid UTF-8 sequence at p (a NUL ends the string
 * before any byte after it is read), 0 if there is none. */
static size_t
jsonw_utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return (p[1] & 0xC0) == 0x80 ? 2 : 0;
	if (c >= 0xE0 && c <= 0xEF) {
		if ((p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
			return 0;
		if ((c == 0xE0 && p[1] < 0xA0) ||	/* overlong */
		    (c == 0xED && p[1] >= 0xA0))	/* UTF-16 surrogates */
			return 0;
		return 3;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		if ((p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
		    (p[3] & 0xC0) != 0x80)
			return 0;
		if ((c == 0xF0 && p[1] < 0x90) ||	/* overlong */
		    (c == 0xF4 && p[1] >= 0x90))	/* beyond U+10FFFF */
			return 0;
		return 4;
	}
	return 0;	/* a continuation byte, C0, C1, F5-FF */
}

int
jsonw_utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	while (*p != '\0') {
		if ((n = jsonw_utf8_len(p)) == 0)
			return 0;
		p += n;
	}
	return 1;
}

void
jsonw_key(struct jsonw *w, const char *k)
{
	jsonw_str(w, k);
	jsonw_token(w, ":", 1, 0);
}

void
jsonw_str(struct jsonw *w, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s;
	size_t len, n;
	char *o;

	if (s == NULL) {
		w->err = 1;
		return;
	}
	/* at most 6 bytes a byte (\u00XX), the quotes and a "," */
	len = strlen(s);
	if (len > (SIZE_MAX - 3) / 6 || (o = jsonw_room(w, 6 * len + 3)) ==
	    NULL) {
		w->err = 1;
		return;
	}
	o = jsonw_sep(w, o);
	*o++ = '"';
	while (*p != '\0') {
		if (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') {
			*o++ = (char)*p++;
			continue;
		}
		if (*p >= 0x80) {
			if ((n = jsonw_utf8_len(p)) == 0) {
				w->err = 1;
				w->b->data[w->b->len] = '\0';
				return;	/* (len as it was) */
			}
			memcpy(o, p, n);
			o += n;
			p += n;
			continue;
		}
		*o++ = '\\';
		switch (*p) {
		case '"':	*o++ = '"'; break;
		case '\\':	*o++ = '\\'; break;
		case '\b':	*o++ = 'b'; break;
		case '\f':	*o++ = 'f'; break;
		case '\n':	*o++ = 'n'; break;
		case '\r':	*o++ = 'r'; break;
		case '\t':	*o++ = 't'; break;
		default:
			memcpy(o, "u00", 3);
			o[3] = hex[*p >> 4];
			o[4] = hex[*p & 0xF];
			o += 5;
		}
		p++;
	}
	*o++ = '"';
	jsonw_end(w, o);
}

void
jsonw_int(struct jsonw *w, long long v)
{
	char t[24], *e = t + sizeof(t), *q = e;
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v :
	    (unsigned long long)v;

	do
		*--q = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--q = '-';
	jsonw_token(w, q, (size_t)(e - q), 1);
}

void
jsonw_bool(struct jsonw *w, int v)
{
	if (v)
		jsonw_token(w, "true", 4, 1);
	else
		jsonw_token(w, "false", 5, 1);
}

void
jsonw_null(struct jsonw *w)
{
	jsonw_token(w, "null", 4, 1);
}
