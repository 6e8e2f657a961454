/* multipart.c: a streaming parser of multipart/form-data bodies (see
 * multipart.h for what it accepts). A state machine over the bytes:
 * preamble, the rest of a delimiter line, a part's headers, its body, the
 * epilogue. Preamble and bodies are scanned for the delimiter
 * "\r\nboundary" with memchr/memcmp; the bytes at the end of a piece that
 * may be the start of a delimiter are held back (at most the delimiter's
 * length less one) until the next piece says what they are, everything
 * else of a body goes to part_data at once. The body's first delimiter
 * needs no CRLF before it: the scan starts as if "\r\n" had been held back.
 * A part's headers are collected (at most MULTIPART_HEADER_MAX bytes), then
 * parsed in place. */
#include "util/multipart.h"
#include "util/hex.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const multipart_err_names[MULTIPART_ERR__MAX] = {
	"ok", "malformed", "limit", "stopped", "nomem",
};

enum multipart_state {
	MULTIPART_PREAMBLE,
	MULTIPART_AFTER_DELIM,	/* right after "\r\n--boundary" */
	MULTIPART_DASH,		/* "\r\n--boundary-" */
	MULTIPART_PADDING,	/* spaces or tabs after the boundary */
	MULTIPART_LF,		/* the CR that ends the delimiter line */
	MULTIPART_HEADERS,
	MULTIPART_BODY,
	MULTIPART_EPILOGUE,
};

#define MULTIPART_DELIM_MAX (4 + MULTIPART_BOUNDARY_MAX)

struct multipart {
	struct multipart_cb cb;
	void		*arg;
	enum multipart_state state;
	enum multipart_err err;
	const char	*why;
	char		 delim[MULTIPART_DELIM_MAX];	/* "\r\n--boundary" */
	size_t		 dlen;
	char		 look[MULTIPART_DELIM_MAX];	/* held back: a prefix of delim */
	size_t		 looklen;
	/* The part's headers after a "\r\n" of the delimiter line, so that the
	 * end is always "\r\n\r\n"; NUL-terminated by the parse. */
	char		 hdr[2 + MULTIPART_HEADER_MAX + 1];
	size_t		 hlen;
	/* The decoded strings of struct multipart_part. A string is at most
	 * twice its bytes in hdr (ISO-8859-1 to UTF-8), plus its NUL. */
	char		 val[2 * MULTIPART_HEADER_MAX + 8];
	size_t		 vlen;
	int		 parts;
};

struct multipart_span {
	const char	*p;
	size_t		 n;
	int		 quoted;	/* p is a quoted string's inside, escapes kept */
};

static enum multipart_err
multipart_fail(struct multipart *m, enum multipart_err e, const char *why)
{
	if (m->err == MULTIPART_OK) {
		m->err = e;
		m->why = why;
	}
	return m->err;
}

static int
multipart_ws(char c)
{
	return c == ' ' || c == '\t';
}

/* A byte of a lenient token: not white space, a separator of parameters,
 * a quote or a control character. */
static int
multipart_tokenc(char c)
{
	unsigned char u = (unsigned char)c;

	return u > 0x20 && u != 0x7f && c != ';' && c != '"' && c != '=';
}

/* A byte of an unquoted parameter value: a token's, or '=' (boundaries
 * such as ----=_Part_1 are sent unquoted). */
static int
multipart_valuec(char c)
{
	return multipart_tokenc(c) || c == '=';
}

/* The next parameter of a header value at *sp: "; name=value" with white
 * space around the parts, value a token or a quoted string. 1 and the
 * spans, 0 at the end of the value (a last ";" is allowed), -1 when it is
 * not a parameter. */
static int
multipart_param(const char **sp, struct multipart_span *name,
    struct multipart_span *val)
{
	const char *s = *sp;

	while (multipart_ws(*s))
		s++;
	if (*s == '\0')
		return 0;
	if (*s++ != ';')
		return -1;
	while (multipart_ws(*s))
		s++;
	if (*s == '\0') {
		*sp = s;
		return 0;
	}
	name->p = s;
	while (multipart_tokenc(*s))
		s++;
	if ((name->n = (size_t)(s - name->p)) == 0)
		return -1;
	while (multipart_ws(*s))
		s++;
	if (*s++ != '=')
		return -1;
	while (multipart_ws(*s))
		s++;
	if (*s == '"') {
		val->p = ++s;
		val->quoted = 1;
		while (*s != '"') {
			if (*s == '\0')
				return -1;
			if (*s == '\\' && s[1] != '\0')
				s++;
			s++;
		}
		val->n = (size_t)(s - val->p);
		s++;
	} else {
		val->p = s;
		val->quoted = 0;
		while (multipart_valuec(*s))
			s++;
		if ((val->n = (size_t)(s - val->p)) == 0)
			return -1;
	}
	*sp = s;
	return 1;
}

static int
multipart_span_is(const struct multipart_span *sp, const char *word)
{
	return strlen(word) == sp->n && strncasecmp(sp->p, word, sp->n) == 0;
}

/* The value of sp into dst (room bytes with the NUL): a quoted string
 * without its backslashes. Its length, or -1 when it does not fit. */
static int
multipart_unquote(const struct multipart_span *sp, char *dst, size_t room)
{
	size_t i, n = 0;

	for (i = 0; i < sp->n; i++) {
		if (sp->quoted && sp->p[i] == '\\' && i + 1 < sp->n)
			i++;
		if (n + 1 >= room)
			return -1;
		dst[n++] = sp->p[i];
	}
	if (room == 0)
		return -1;
	dst[n] = '\0';
	return (int)n;
}

int
multipart_boundary(const char *ct, char *out, size_t outsz)
{
	static const char type[] = "multipart/form-data";
	static const char bchars[] = "0123456789abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ";
	struct multipart_span name, val;
	char b[MULTIPART_BOUNDARY_MAX + 1];
	int r, n, found = 0;

	if (ct == NULL)
		return -1;
	while (multipart_ws(*ct))
		ct++;
	if (strncasecmp(ct, type, sizeof(type) - 1) != 0)
		return -1;
	ct += sizeof(type) - 1;
	if (*ct != '\0' && *ct != ';' && !multipart_ws(*ct))
		return -1;
	while ((r = multipart_param(&ct, &name, &val)) == 1) {
		if (!multipart_span_is(&name, "boundary"))
			continue;
		if (found++)
			return -1;
		if ((n = multipart_unquote(&val, b, sizeof(b))) < 1)
			return -1;
		if (strspn(b, bchars) != (size_t)n || b[n - 1] == ' ')
			return -1;
	}
	if (r == -1 || !found || strlen(b) + 1 > outsz)
		return -1;
	memcpy(out, b, strlen(b) + 1);
	return 0;
}

struct multipart *
multipart_new(const char *boundary, const struct multipart_cb *cb, void *arg)
{
	struct multipart *m;
	size_t n = boundary ? strlen(boundary) : 0;

	if (n < 1 || n > MULTIPART_BOUNDARY_MAX)
		return NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	if (cb != NULL)
		m->cb = *cb;
	m->arg = arg;
	memcpy(m->delim, "\r\n--", 4);
	memcpy(m->delim + 4, boundary, n);
	m->dlen = 4 + n;
	/* The first delimiter may start the body: as if a CRLF came first. */
	memcpy(m->look, "\r\n", 2);
	m->looklen = 2;
	m->state = MULTIPART_PREAMBLE;
	m->why = "";
	return m;
}

void
multipart_free(struct multipart *m)
{
	free(m);
}

const char *
multipart_error(const struct multipart *m)
{
	return m->why;
}

/* Hands body bytes to part_data (preamble bytes are dropped). -1 when the
 * callback stopped the parser. */
static int
multipart_emit(struct multipart *m, const char *p, size_t n)
{
	if (n == 0 || m->state != MULTIPART_BODY || m->cb.part_data == NULL)
		return 0;
	if (m->cb.part_data(m->arg, p, n) == -1) {
		multipart_fail(m, MULTIPART_STOPPED, "a callback stopped the parser");
		return -1;
	}
	return 0;
}

/* A delimiter was found after the preamble or a part's body. */
static void
multipart_delimiter(struct multipart *m)
{
	if (m->state == MULTIPART_BODY && m->cb.part_end != NULL &&
	    m->cb.part_end(m->arg) == -1) {
		multipart_fail(m, MULTIPART_STOPPED, "a callback stopped the parser");
		return;
	}
	m->state = MULTIPART_AFTER_DELIM;
}

/* The held-back bytes and the start of data: a delimiter that starts in
 * the held-back bytes, or a longer held-back prefix, or none (the held-back
 * bytes are body). The bytes of data consumed. */
static size_t
multipart_scan_held(struct multipart *m, const char *data, size_t len)
{
	char tmp[2 * MULTIPART_DELIM_MAX];
	size_t i, n, more = len < m->dlen - 1 ? len : m->dlen - 1;
	size_t tlen = m->looklen + more, ll = m->looklen;

	memcpy(tmp, m->look, ll);
	memcpy(tmp + ll, data, more);
	for (i = 0; i < ll; i++) {
		n = tlen - i < m->dlen ? tlen - i : m->dlen;
		if (memcmp(tmp + i, m->delim, n) != 0)
			continue;
		m->looklen = 0;
		if (multipart_emit(m, tmp, i) == -1)
			return len;
		if (n == m->dlen) {
			multipart_delimiter(m);
			return i + m->dlen - ll;
		}
		/* All of data is in tmp: a longer prefix is held back. */
		memcpy(m->look, tmp + i, tlen - i);
		m->looklen = tlen - i;
		return len;
	}
	m->looklen = 0;
	multipart_emit(m, tmp, ll);
	return 0;
}

/* Preamble or a part's body: up to and with the next delimiter, or all of
 * data with a possible start of a delimiter held back. The bytes of data
 * consumed. */
static size_t
multipart_scan(struct multipart *m, const char *data, size_t len)
{
	const char *q, *end = data + len, *p = data;
	size_t n;

	if (m->looklen > 0)
		return multipart_scan_held(m, data, len);
	while ((q = memchr(p, '\r', (size_t)(end - p))) != NULL) {
		n = (size_t)(end - q);
		if (n >= m->dlen) {
			if (memcmp(q, m->delim, m->dlen) == 0) {
				if (multipart_emit(m, data, (size_t)(q - data)) == 0)
					multipart_delimiter(m);
				return (size_t)(q - data) + m->dlen;
			}
		} else if (memcmp(q, m->delim, n) == 0) {
			memcpy(m->look, q, n);
			m->looklen = n;
			multipart_emit(m, data, (size_t)(q - data));
			return len;
		}
		p = q + 1;
	}
	multipart_emit(m, data, len);
	return len;
}

/* One byte of the rest of a delimiter line: "--" (the close delimiter), or
 * optional spaces and tabs, then CRLF. */
static void
multipart_delim_byte(struct multipart *m, char c)
{
	switch (m->state) {
	case MULTIPART_AFTER_DELIM:
		if (c == '-') {
			m->state = MULTIPART_DASH;
			return;
		}
		/* FALLTHROUGH */
	case MULTIPART_PADDING:
		if (multipart_ws(c))
			m->state = MULTIPART_PADDING;
		else if (c == '\r')
			m->state = MULTIPART_LF;
		else
			multipart_fail(m, MULTIPART_MALFORMED, "a line starts "
			    "with the delimiter but goes on with other characters");
		return;
	case MULTIPART_DASH:
		if (c == '-')
			m->state = MULTIPART_EPILOGUE;
		else
			multipart_fail(m, MULTIPART_MALFORMED, "a line starts "
			    "with the delimiter but goes on with other characters");
		return;
	default:	/* MULTIPART_LF */
		if (c != '\n') {
			multipart_fail(m, MULTIPART_MALFORMED,
			    "a delimiter line does not end with CRLF");
			return;
		}
		if (m->parts == MULTIPART_PARTS_MAX) {
			multipart_fail(m, MULTIPART_LIMIT, "more than 64 parts");
			return;
		}
		memcpy(m->hdr, "\r\n", 2);
		m->hlen = 2;
		m->state = MULTIPART_HEADERS;
		return;
	}
}

/* Room for a string of up to n bytes in m->val, or NULL. */
static char *
multipart_val(struct multipart *m, size_t n, size_t *room)
{
	if (sizeof(m->val) - m->vlen < n + 1)
		return NULL;
	*room = sizeof(m->val) - m->vlen;
	return m->val + m->vlen;
}

/* filename*: charset'language'percent-encoded (RFC 8187) into dst (room
 * bytes with the NUL, at least twice the span's length plus one): its
 * length, 0 with *ignored for a charset other than UTF-8 and ISO-8859-1,
 * -1 when malformed. */
static int
multipart_extvalue(const struct multipart_span *sp, char *dst, size_t room,
    int *ignored)
{
	char raw[MULTIPART_HEADER_MAX + 1];
	const char *q1, *q2, *p;
	size_t n = 0;
	int latin1, hi, lo, len;
	unsigned char c;

	*ignored = 0;
	if ((len = multipart_unquote(sp, raw, sizeof(raw))) < 0 ||
	    (q1 = memchr(raw, '\'', (size_t)len)) == NULL ||
	    (q2 = memchr(q1 + 1, '\'', (size_t)(raw + len - q1 - 1))) == NULL)
		return -1;
	if ((size_t)(q1 - raw) == 5 && strncasecmp(raw, "UTF-8", 5) == 0)
		latin1 = 0;
	else if ((size_t)(q1 - raw) == 10 &&
	    strncasecmp(raw, "ISO-8859-1", 10) == 0)
		latin1 = 1;
	else {
		*ignored = 1;
		return 0;
	}
	for (p = q2 + 1; p < raw + len; p++) {
		c = (unsigned char)*p;
		if (c == '%') {
			if (raw + len - p < 3)
				return -1;
			if ((hi = hex_value((unsigned char)p[1])) < 0 ||
			    (lo = hex_value((unsigned char)p[2])) < 0)
				return -1;
			c = (unsigned char)(hi << 4 | lo);
			p += 2;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return -1;
		if (n + 3 > room)
			return -1;
		if (latin1 && c >= 0x80) {
			dst[n++] = (char)(0xc0 | c >> 6);
			dst[n++] = (char)(0x80 | (c & 0x3f));
		} else
			dst[n++] = (char)c;
	}
	dst[n] = '\0';
	return (int)n;
}

/* A filename's last path component, in place: after the last '/' or '\';
 * "." and ".." become "". Its new length. */
static size_t
multipart_basename(char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && s[i - 1] != '/' && s[i - 1] != '\\')
		i--;
	memmove(s, s + i, n - i + 1);
	n -= i;
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		s[n = 0] = '\0';
	return n;
}

/* A quoted filename as old browsers sent it: a whole Windows path
 * ("C:\dir\f.csv", "\\host\share\f.csv") whose backslashes are not
 * escapes. */
static int
multipart_winpath(const struct multipart_span *sp)
{
	const char *p = sp->p;

	if (!sp->quoted || sp->n < 3)
		return 0;
	if (p[0] == '\\' && p[1] == '\\')
		return 1;
	return ((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z'))
	    && p[1] == ':' && p[2] == '\\';
}

/* The decoded filename or filename* parameter into m->val. */
static const char *
multipart_filename(struct multipart *m, const struct multipart_span *sp,
    int ext, int *ignored)
{
	struct multipart_span raw = *sp;
	size_t room;
	char *dst;
	int n;

	*ignored = 0;
	if ((dst = multipart_val(m, 2 * sp->n, &room)) == NULL)
		return NULL;
	if (ext)
		n = multipart_extvalue(sp, dst, room, ignored);
	else {
		if (multipart_winpath(sp))
			raw.quoted = 0;
		n = multipart_unquote(&raw, dst, room);
	}
	if (n < 0 || *ignored)
		return NULL;
	m->vlen += multipart_basename(dst, (size_t)n) + 1;
	return dst;
}

/* Content-Disposition: form-data and its name, filename, filename*. */
static int
multipart_disposition(struct multipart *m, const char *v,
    struct multipart_part *part)
{
	struct multipart_span name, val;
	const char *fn = NULL, *fnext = NULL, *p = v;
	size_t room;
	char *dst;
	int r, n, ignored, seenext = 0;

	while (multipart_tokenc(*p))
		p++;
	if ((size_t)(p - v) != 9 || strncasecmp(v, "form-data", 9) != 0) {
		multipart_fail(m, MULTIPART_MALFORMED,
		    "a part's Content-Disposition is not form-data");
		return -1;
	}
	while ((r = multipart_param(&p, &name, &val)) == 1) {
		if (multipart_span_is(&name, "name")) {
			if (part->name != NULL)
				goto dup;
			if ((dst = multipart_val(m, val.n, &room)) == NULL ||
			    (n = multipart_unquote(&val, dst, room)) < 0)
				goto bad;
			m->vlen += (size_t)n + 1;
			part->name = dst;
		} else if (multipart_span_is(&name, "filename")) {
			if (fn != NULL)
				goto dup;
			if ((fn = multipart_filename(m, &val, 0, &ignored)) == NULL)
				goto bad;
		} else if (multipart_span_is(&name, "filename*")) {
			if (seenext++)
				goto dup;
			fnext = multipart_filename(m, &val, 1, &ignored);
			if (fnext == NULL && !ignored)
				goto bad;
		}
	}
	if (r == -1)
		goto bad;
	part->filename = fnext != NULL ? fnext : fn;
	return 0;
dup:
	multipart_fail(m, MULTIPART_MALFORMED,
	    "a Content-Disposition parameter appears twice");
	return -1;
bad:
	multipart_fail(m, MULTIPART_MALFORMED,
	    "a part's Content-Disposition is not well formed");
	return -1;
}

/* The part's headers are complete in m->hdr: parse them, part_begin. */
static void
multipart_begin(struct multipart *m)
{
	struct multipart_part part = { NULL, NULL, NULL };
	char *text = m->hdr + 2, *end = m->hdr + m->hlen - 2, *line, *eol;
	char *colon, *v, *ve, *disp = NULL;
	int fields = 0;

	*end = '\0';
	m->vlen = 0;
	if (multipart_ws(*text)) {
		multipart_fail(m, MULTIPART_MALFORMED,
		    "a part's headers start with a folded line");
		return;
	}
	/* Unfold: a CRLF before a space or tab is white space. */
	for (v = text; v + 2 < end; v++)
		if (v[0] == '\r' && multipart_ws(v[2]))
			v[0] = v[1] = ' ';
	for (line = text; line < end; line = eol + 2) {
		if ((eol = strstr(line, "\r\n")) == NULL) {	/* never: no NUL */
			multipart_fail(m, MULTIPART_MALFORMED,
			    "a NUL byte in a part's headers");
			return;
		}
		*eol = '\0';
		if (++fields > MULTIPART_HEADERS_MAX) {
			multipart_fail(m, MULTIPART_LIMIT,
			    "more than 32 header fields in a part");
			return;
		}
		for (colon = line; (unsigned char)*colon > 0x20 &&
		    (unsigned char)*colon < 0x7f && *colon != ':'; colon++)
			;
		if (colon == line || *colon != ':') {
			multipart_fail(m, MULTIPART_MALFORMED,
			    "a header line is not a name, a colon and a value");
			return;
		}
		*colon = '\0';
		for (v = colon + 1; multipart_ws(*v); v++)
			;
		for (ve = eol; ve > v && multipart_ws(ve[-1]); ve--)
			;
		*ve = '\0';
		if (strcasecmp(line, "Content-Disposition") == 0) {
			if (disp != NULL)
				goto dup;
			disp = v;
		} else if (strcasecmp(line, "Content-Type") == 0) {
			if (part.content_type != NULL)
				goto dup;
			part.content_type = v;
		}
	}
	if (disp != NULL && multipart_disposition(m, disp, &part) == -1)
		return;
	if (part.name == NULL)
		part.name = "";
	m->parts++;
	m->state = MULTIPART_BODY;
	if (m->cb.part_begin != NULL && m->cb.part_begin(m->arg, &part) == -1)
		multipart_fail(m, MULTIPART_STOPPED, "a callback stopped the parser");
	return;
dup:
	multipart_fail(m, MULTIPART_MALFORMED,
	    "a part has two Content-Disposition or Content-Type headers");
}

/* A part's headers, byte by byte up to the empty line that ends them. The
 * bytes of data consumed. */
static size_t
multipart_headers(struct multipart *m, const char *data, size_t len)
{
	size_t i;
	char c, prev;

	for (i = 0; i < len; i++) {
		c = data[i];
		prev = m->hdr[m->hlen - 1];
		if (m->hlen - 2 == MULTIPART_HEADER_MAX) {
			multipart_fail(m, MULTIPART_LIMIT,
			    "a part's headers are longer than 8192 bytes");
			return len;
		}
		if (prev == '\r' && c != '\n') {
			multipart_fail(m, MULTIPART_MALFORMED,
			    "a bare CR in a part's headers");
			return len;
		}
		if (c == '\n' && prev != '\r') {
			multipart_fail(m, MULTIPART_MALFORMED,
			    "a bare LF in a part's headers (lines end with CRLF)");
			return len;
		}
		if (((unsigned char)c < 0x20 && c != '\t' && c != '\r' &&
		    c != '\n') || c == 0x7f) {
			multipart_fail(m, MULTIPART_MALFORMED,
			    "a control character in a part's headers");
			return len;
		}
		m->hdr[m->hlen++] = c;
		if (c == '\n' && memcmp(m->hdr + m->hlen - 4, "\r\n\r\n", 4) == 0) {
			multipart_begin(m);
			return i + 1;
		}
	}
	return len;
}

enum multipart_err
multipart_feed(struct multipart *m, const char *data, size_t len)
{
	size_t n;

	while (len > 0 && m->err == MULTIPART_OK) {
		switch (m->state) {
		case MULTIPART_PREAMBLE:
		case MULTIPART_BODY:
			n = multipart_scan(m, data, len);
			break;
		case MULTIPART_HEADERS:
			n = multipart_headers(m, data, len);
			break;
		case MULTIPART_EPILOGUE:
			n = len;
			break;
		default:
			multipart_delim_byte(m, *data);
			n = 1;
			break;
		}
		data += n;
		len -= n;
	}
	return m->err;
}

enum multipart_err
multipart_finish(struct multipart *m)
{
	if (m->state != MULTIPART_EPILOGUE)
		multipart_fail(m, MULTIPART_MALFORMED, m->parts == 0 &&
		    m->state == MULTIPART_PREAMBLE ? "no delimiter in the body" :
		    "the body ends before its closing delimiter");
	return m->err;
}
