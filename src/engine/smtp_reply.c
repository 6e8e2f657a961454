/* smtp_reply.c: incremental SMTP reply parser. Bytes arrive in any pieces
 * (one at a time, a reply over many reads, several pipelined replies in one
 * read); each complete reply comes back as {code, enhanced code, cleaned
 * text, line count}. Memory is bounded: a line is capped at
 * SMTP_REPLY_LINE_MAX and a reply at SMTP_REPLY_MAX octets; passing either
 * is an error, as are non-digit codes, codes outside 2xx-5xx and lines of
 * one reply with different codes. Also reads EHLO extension keywords. */
#include "engine/smtp_reply.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *const smtp_reply_status_names[SMTP_REPLY_STATUS__MAX] = {
	[SMTP_REPLY_OK] = "ok",
	[SMTP_REPLY_MORE] = "more",
	[SMTP_REPLY_BAD_CODE] = "bad_code",
	[SMTP_REPLY_CODE_RANGE] = "code_range",
	[SMTP_REPLY_BAD_SEPARATOR] = "bad_separator",
	[SMTP_REPLY_CODE_MISMATCH] = "code_mismatch",
	[SMTP_REPLY_LINE_TOO_LONG] = "line_too_long",
	[SMTP_REPLY_TOO_LONG] = "reply_too_long",
	[SMTP_REPLY_NOMEM] = "nomem",
	[SMTP_REPLY_TRAILING] = "trailing_data",
};

const char *const smtp_ext_names[SMTP_EXT__MAX] = {
	[SMTP_EXT_STARTTLS] = "STARTTLS",
	[SMTP_EXT_PIPELINING] = "PIPELINING",
	[SMTP_EXT_SIZE] = "SIZE",
	[SMTP_EXT_8BITMIME] = "8BITMIME",
	[SMTP_EXT_SMTPUTF8] = "SMTPUTF8",
	[SMTP_EXT_ENHANCEDSTATUSCODES] = "ENHANCEDSTATUSCODES",
	[SMTP_EXT_CHUNKING] = "CHUNKING",
	[SMTP_EXT_DSN] = "DSN",
};

static void
smtp_reply_parser_clear_reply(struct smtp_reply_parser *p)
{
	buf_reset(&p->line);
	buf_reset(&p->text);
	p->reply_bytes = 0;
	p->lines = 0;
	p->code = 0;
	p->enhanced[0] = '\0';
	p->enh[0] = p->enh[1] = p->enh[2] = -1;
}

void
smtp_reply_parser_init(struct smtp_reply_parser *p)
{
	memset(p, 0, sizeof(*p));
	/* The line buffer holds a line without its LF. */
	buf_init(&p->line, SMTP_REPLY_LINE_MAX - 1);
	buf_init(&p->text, SMTP_REPLY_MAX);
	smtp_reply_parser_clear_reply(p);
	p->error = SMTP_REPLY_OK;
}

void
smtp_reply_parser_reset(struct smtp_reply_parser *p)
{
	smtp_reply_parser_clear_reply(p);
	p->error = SMTP_REPLY_OK;
}

void
smtp_reply_parser_free(struct smtp_reply_parser *p)
{
	buf_free(&p->line);
	buf_free(&p->text);
}

int
smtp_reply_parser_pending(const struct smtp_reply_parser *p)
{
	return p->line.len > 0 || p->lines > 0;
}

void
smtp_reply_free(struct smtp_reply *r)
{
	free(r->text);
	r->text = NULL;
	r->text_len = 0;
}

size_t
smtp_reply_parse_enhanced(const char *s, size_t len, int v[3])
{
	size_t i = 0, part, nd;
	int val;

	if (len < 5 || (s[0] != '2' && s[0] != '4' && s[0] != '5') ||
	    s[1] != '.')
		return 0;
	v[0] = s[0] - '0';
	i = 2;
	for (part = 1; part < 3; part++) {
		val = 0;
		for (nd = 0; i < len && s[i] >= '0' && s[i] <= '9'; nd++, i++) {
			if (nd == 3)
				return 0;
			val = val * 10 + (s[i] - '0');
		}
		if (nd == 0)
			return 0;
		v[part] = val;
		if (part == 1) {
			if (i >= len || s[i] != '.')
				return 0;
			i++;
		}
	}
	if (i < len && s[i] != ' ' && s[i] != '\t')
		return 0;
	return i;
}

/* Length of a valid UTF-8 sequence at p, 0 when invalid. */
static size_t
smtp_reply_utf8_seq(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t c, min;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, c = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, c = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ||
	    (c >= 0x80 && c <= 0x9f))
		return 0;
	return len;
}

/* Appends s[0..n) cleaned: control characters become spaces, bytes that
 * are not valid UTF-8 become "?". The output is never longer. */
static int
smtp_reply_append_clean(struct buf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k, start;

	while (i < n) {
		start = i;
		while (i < n && u[i] >= 0x20 && u[i] < 0x7f)
			i++;
		if (i > start && buf_append(b, s + start, i - start) == -1)
			return -1;
		if (i >= n)
			break;
		if (u[i] < 0x20 || u[i] == 0x7f) {
			if (buf_putc(b, ' ') == -1)
				return -1;
			i++;
		} else if ((k = smtp_reply_utf8_seq(u + i, n - i)) > 0) {
			if (buf_append(b, s + i, k) == -1)
				return -1;
			i += k;
		} else {
			if (buf_putc(b, '?') == -1)
				return -1;
			i++;
		}
	}
	return 0;
}

/* One complete line (without LF) is in p->line. */
static enum smtp_reply_status
smtp_reply_line_done(struct smtp_reply_parser *p, struct smtp_reply *out)
{
	const char *l = buf_str(&p->line), *t;
	size_t n = p->line.len, tn, k;
	int code, last, v[3];

	if (n > 0 && l[n - 1] == '\r')
		n--;
	if (n < 3 || l[0] < '0' || l[0] > '9' || l[1] < '0' || l[1] > '9' ||
	    l[2] < '0' || l[2] > '9')
		return SMTP_REPLY_BAD_CODE;
	code = (l[0] - '0') * 100 + (l[1] - '0') * 10 + (l[2] - '0');
	if (code < 200 || code > 599)
		return SMTP_REPLY_CODE_RANGE;
	if (n > 3 && l[3] != ' ' && l[3] != '-')
		return SMTP_REPLY_BAD_SEPARATOR;
	last = n == 3 || l[3] == ' ';
	if (p->lines > 0 && code != p->code)
		return SMTP_REPLY_CODE_MISMATCH;
	t = n > 4 ? l + 4 : "";
	tn = n > 4 ? n - 4 : 0;
	if (p->lines == 0) {
		p->code = code;
		k = smtp_reply_parse_enhanced(t, tn, v);
		if (k > 0 && v[0] == code / 100) {
			memcpy(p->enhanced, t, k);
			p->enhanced[k] = '\0';
			memcpy(p->enh, v, sizeof(v));
		}
	}
	/* Strip the enhanced code from each line that repeats it. */
	k = strlen(p->enhanced);
	if (k > 0 && tn >= k && memcmp(t, p->enhanced, k) == 0 &&
	    (tn == k || t[k] == ' ' || t[k] == '\t')) {
		t += k;
		tn -= k;
		while (tn > 0 && (*t == ' ' || *t == '\t'))
			t++, tn--;
	}
	if (p->lines > 0 && buf_putc(&p->text, '\n') == -1)
		return SMTP_REPLY_NOMEM;
	if (smtp_reply_append_clean(&p->text, t, tn) == -1)
		return SMTP_REPLY_NOMEM;
	p->lines++;
	buf_reset(&p->line);
	if (!last)
		return SMTP_REPLY_MORE;

	memset(out, 0, sizeof(*out));
	out->code = p->code;
	memcpy(out->enhanced, p->enhanced, sizeof(out->enhanced));
	out->enh_class = p->enh[0];
	out->enh_subject = p->enh[1];
	out->enh_detail = p->enh[2];
	out->text_len = p->text.len;
	out->lines = p->lines;
	if ((out->text = buf_steal(&p->text)) == NULL) {
		memset(out, 0, sizeof(*out));
		return SMTP_REPLY_NOMEM;
	}
	smtp_reply_parser_clear_reply(p);
	return SMTP_REPLY_OK;
}

enum smtp_reply_status
smtp_reply_parser_feed(struct smtp_reply_parser *p, const char *data,
    size_t len, size_t *used, struct smtp_reply *out)
{
	enum smtp_reply_status st;
	const char *nl;
	size_t i = 0, seg;

	*used = 0;
	if (p->error != SMTP_REPLY_OK)
		return p->error;
	while (i < len) {
		nl = memchr(data + i, '\n', len - i);
		seg = nl ? (size_t)(nl - (data + i)) : len - i;
		if (seg > p->line.max - p->line.len)
			st = SMTP_REPLY_LINE_TOO_LONG;
		else if (seg + (nl ? 1 : 0) > SMTP_REPLY_MAX - p->reply_bytes)
			st = SMTP_REPLY_TOO_LONG;
		else if (buf_append(&p->line, data + i, seg) == -1)
			st = SMTP_REPLY_NOMEM;
		else
			st = SMTP_REPLY_MORE;
		if (st != SMTP_REPLY_MORE)
			goto fail;
		p->reply_bytes += seg;
		i += seg;
		if (nl == NULL)
			break;
		i++;
		p->reply_bytes++;
		st = smtp_reply_line_done(p, out);
		if (st == SMTP_REPLY_OK) {
			*used = i;
			return st;
		}
		if (st != SMTP_REPLY_MORE)
			goto fail;
	}
	*used = len;
	return SMTP_REPLY_MORE;
fail:
	*used = i;
	p->error = st;
	return st;
}

enum smtp_reply_status
smtp_reply_parser_finish(struct smtp_reply_parser *p, struct smtp_reply *out)
{
	enum smtp_reply_status st;

	if (p->error != SMTP_REPLY_OK)
		return p->error;
	if (p->line.len == 0)
		return SMTP_REPLY_MORE;
	st = smtp_reply_line_done(p, out);
	if (st != SMTP_REPLY_OK && st != SMTP_REPLY_MORE)
		p->error = st;
	return st;
}

enum smtp_reply_status
smtp_reply_parse(const char *s, size_t len, struct smtp_reply *out)
{
	struct smtp_reply_parser p;
	enum smtp_reply_status st;
	size_t used;

	memset(out, 0, sizeof(*out));
	smtp_reply_parser_init(&p);
	st = smtp_reply_parser_feed(&p, s, len, &used, out);
	if (st == SMTP_REPLY_OK && used < len) {
		smtp_reply_free(out);
		memset(out, 0, sizeof(*out));
		st = SMTP_REPLY_TRAILING;
	} else if (st == SMTP_REPLY_MORE)
		st = smtp_reply_parser_finish(&p, out);
	smtp_reply_parser_free(&p);
	return st;
}

int
smtp_reply_oneline(const struct smtp_reply *r, struct buf *b)
{
	const char *t = r->text ? r->text : "";
	size_t i, start = 0;

	for (i = 0; i <= r->text_len; i++) {
		if (i < r->text_len && t[i] != '\n')
			continue;
		if (start > 0 && buf_putc(b, ' ') == -1)
			return -1;
		if (buf_append(b, t + start, i - start) == -1)
			return -1;
		start = i + 1;
	}
	return 0;
}

static int
smtp_reply_ieq(const char *a, size_t an, const char *b)
{
	size_t i;
	char ca, cb;

	for (i = 0; i < an; i++) {
		ca = a[i];
		cb = b[i];
		if (cb == '\0')
			return 0;
		if (ca >= 'a' && ca <= 'z')
			ca = (char)(ca - 'a' + 'A');
		if (cb >= 'a' && cb <= 'z')
			cb = (char)(cb - 'a' + 'A');
		if (ca != cb)
			return 0;
	}
	return b[an] == '\0';
}

int
smtp_reply_ehlo_has(const struct smtp_reply *r, const char *kw,
    const char **params, size_t *paramslen)
{
	const char *t = r->text ? r->text : "", *line, *end, *sp;
	size_t n = r->text_len;

	if (r->code < 200 || r->code > 299)
		return 0;
	/* The first line is the server's name and greeting. */
	if ((line = memchr(t, '\n', n)) == NULL)
		return 0;
	line++;
	while (line < t + n) {
		if ((end = memchr(line, '\n', (size_t)(t + n - line))) == NULL)
			end = t + n;
		for (sp = line; sp < end && *sp != ' ' && *sp != '='; sp++)
			;
		if (smtp_reply_ieq(line, (size_t)(sp - line), kw)) {
			if (sp < end)
				sp++;
			if (params)
				*params = sp;
			if (paramslen)
				*paramslen = (size_t)(end - sp);
			return 1;
		}
		line = end + 1;
	}
	return 0;
}

int
smtp_reply_ehlo(const struct smtp_reply *r, struct smtp_ehlo *e)
{
	const char *pr;
	size_t pl, i;
	unsigned long v;
	int x;

	memset(e, 0, sizeof(*e));
	if (r->code < 200 || r->code > 299)
		return -1;
	for (x = 0; x < SMTP_EXT__MAX; x++)
		if (smtp_reply_ehlo_has(r, smtp_ext_names[x], &pr, &pl))
			e->ext |= SMTP_EXT_BIT(x);
	if (e->ext & SMTP_EXT_BIT(SMTP_EXT_SIZE)) {
		smtp_reply_ehlo_has(r, "SIZE", &pr, &pl);
		v = 0;
		for (i = 0; i < pl && pr[i] >= '0' && pr[i] <= '9'; i++) {
			if (v > (~0UL - 9) / 10) {
				v = 0;	/* absurd: treat as no limit */
				break;
			}
			v = v * 10 + (unsigned long)(pr[i] - '0');
		}
		e->size = v;
	}
	return 0;
}
