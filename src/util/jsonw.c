/* jsonw.c: JSON text written straight into a buf as jansson's
 * json_dumps(JSON_COMPACT) would write it (jsonw.h): "," and ":" with no
 * spaces, in strings '"' and '\\' escaped, \b \f \n \r \t, the other
 * control characters as \u00XX (upper-case hex), everything else (DEL and
 * non-ASCII UTF-8 included) as it is. tests/unit/test_jsonw.c compares it
 * with jansson. */
#include "util/jsonw.h"
#include <stdio.h>
#include <string.h>

void
jsonw_init(struct jsonw *w, struct buf *b)
{
	w->b = b;
	w->start = b->len;
	w->err = 0;
}

static void
jsonw_put(struct jsonw *w, const char *p, size_t n)
{
	if (buf_append(w->b, p, n) == -1)
		w->err = 1;
}

/* The "," before a value or key that follows another at its level: after
 * an opening bracket or a key's ':' there is none. */
static void
jsonw_sep(struct jsonw *w)
{
	char last;

	if (w->b->len <= w->start)
		return;
	last = w->b->data[w->b->len - 1];
	if (last != '{' && last != '[' && last != ':')
		jsonw_put(w, ",", 1);
}

void
jsonw_open(struct jsonw *w, char c)
{
	jsonw_sep(w);
	jsonw_put(w, &c, 1);
}

void
jsonw_close(struct jsonw *w, char c)
{
	jsonw_put(w, &c, 1);
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
	jsonw_put(w, ":", 1);
}

void
jsonw_str(struct jsonw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run;
	char esc[8];
	size_t n;

	if (s == NULL) {
		w->err = 1;
		return;
	}
	jsonw_sep(w);
	jsonw_put(w, "\"", 1);
	for (run = p; *p != '\0'; ) {
		if (*p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') {
			p++;
			continue;
		}
		if (*p >= 0x80) {
			if ((n = jsonw_utf8_len(p)) == 0) {
				w->err = 1;
				return;
			}
			p += n;
			continue;
		}
		jsonw_put(w, (const char *)run, (size_t)(p - run));
		switch (*p) {
		case '"':	memcpy(esc, "\\\"", 3); break;
		case '\\':	memcpy(esc, "\\\\", 3); break;
		case '\b':	memcpy(esc, "\\b", 3); break;
		case '\f':	memcpy(esc, "\\f", 3); break;
		case '\n':	memcpy(esc, "\\n", 3); break;
		case '\r':	memcpy(esc, "\\r", 3); break;
		case '\t':	memcpy(esc, "\\t", 3); break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04X", (unsigned)*p);
		}
		jsonw_put(w, esc, strlen(esc));
		run = ++p;
	}
	jsonw_put(w, (const char *)run, (size_t)(p - run));
	jsonw_put(w, "\"", 1);
}

void
jsonw_int(struct jsonw *w, long long v)
{
	char t[24];
	int n = snprintf(t, sizeof(t), "%lld", v);

	jsonw_sep(w);
	jsonw_put(w, t, (size_t)n);
}

void
jsonw_bool(struct jsonw *w, int v)
{
	jsonw_sep(w);
	if (v)
		jsonw_put(w, "true", 4);
	else
		jsonw_put(w, "false", 5);
}

void
jsonw_null(struct jsonw *w)
{
	jsonw_sep(w);
	jsonw_put(w, "null", 4);
}
