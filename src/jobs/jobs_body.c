/* jobs_body.c: the body of a job creation request, read as a stream with
 * yajl (see jobs_body.h).
 *
 * yajl accepts a little more than jansson does, so three checks close the
 * gap: a pass over the raw text (jobs_body_text: well-formed UTF-8, no
 * form feed or vertical tab, which yajl takes for white space, no \u0000,
 * surrogate escapes in pairs), the numbers (integers must fit a long long,
 * reals a double) and the keys (nesting of at most 2048 containers, no
 * key twice in one object: each object's keys are kept as 64-bit keyed
 * hashes, khash.h, while it is open and compared when it closes). An error is
 * reported at the first place the text check or yajl found one. */
#include "jobs/jobs_body.h"
#include "util/buf.h"
#include "util/khash.h"
#include "util/strparse.h"
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#define JOBS_BODY_DEPTH_MAX 2048	/* jansson's JSON_PARSER_MAX_DEPTH */

/* The members of the top-level object that are read. */
enum jobs_body_member {
	JOBS_BODY_OTHER,
	JOBS_BODY_NAME,
	JOBS_BODY_URL,
	JOBS_BODY_CALLBACK,
	JOBS_BODY_EMAILS,
	JOBS_BODY_RETENTION,
	JOBS_BODY_MEMBER__MAX
};

enum jobs_body_kind {
	JOBS_BODY_NULL,
	JOBS_BODY_BOOL,
	JOBS_BODY_NUMBER,
	JOBS_BODY_STRING,
	JOBS_BODY_MAP,
	JOBS_BODY_ARRAY
};

/* Where the raw text check is: outside strings, in one, after a
 * backslash, in the hex digits of \u, or after a high surrogate escape,
 * waiting for its "\u" of the low half. */
enum jobs_body_text {
	JOBS_BODY_TEXT_OUT,
	JOBS_BODY_TEXT_STR,
	JOBS_BODY_TEXT_ESC,
	JOBS_BODY_TEXT_HEX,
	JOBS_BODY_TEXT_LOW_BS,
	JOBS_BODY_TEXT_LOW_U
};

struct jobs_body_frame {
	size_t		 keys;		/* this object's first key in keys[] */
	int		 object;
};

struct jobs_body_parse {
	struct jobs_body *b;
	yajl_handle	 y;
	int		 batch;
	size_t		 max, memory_max;
	const char	*sandbox;
	enum jobs_body_err rc;		/* sticky */
	const char	*why;		/* a callback's reason to stop */
	enum jobs_body_err why_rc;
	/* structure */
	int		 depth;		/* open containers */
	int		 top_object;
	enum jobs_body_member member;	/* of the top object, being read */
	unsigned	 seen;		/* members read so far (bits) */
	int		 input_live;	/* emails strings still go to b->in */
	struct jobs_body_frame frames[JOBS_BODY_DEPTH_MAX + 1];
	uint64_t	*keys;
	size_t		 nkeys, capkeys;
	/* callback_data being built: cb[i] is the container at depth i + 2 */
	json_t		*cb[JOBS_BODY_CB_DEPTH];
	int		 cb_live;
	size_t		 cb_values;
	unsigned long long cb_start;	/* offset of its "{" */
	struct buf	 cb_key;	/* the key of the value to come */
	/* the raw text check */
	enum jobs_body_text text;
	unsigned	 cp, nhex, low, u8need;
	unsigned char	 u8lo, u8hi;
	/* position: bytes fed before this piece, line, where it starts */
	unsigned long long offset, line_start;
	unsigned long	 line;
	const char	*piece;		/* the piece yajl is reading */
	size_t		 piece_len;
	size_t		 decoded;	/* yajl's buffer for escaped strings */
};

static const char *const jobs_body_names[JOBS_BODY_MEMBER__MAX] = {
	"", "name", "webhook_url", "callback_data", "emails", "retention_days"
};

/* ---------------------------------------------------------------- text */

static int
jobs_body_hex(unsigned c)
{
	if (c >= '0' && c <= '9')
		return (int)(c - '0');
	if (c >= 'a' && c <= 'f')
		return (int)(c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (int)(c - 'A' + 10);
	return -1;
}

/* The four hex digits of a \u escape are in: 0, or -1 with *why. */
static int
jobs_body_escape(struct jobs_body_parse *p, const char **why)
{
	p->text = JOBS_BODY_TEXT_STR;
	if (p->low) {
		p->low = 0;
		if (p->cp < 0xDC00 || p->cp > 0xDFFF) {
			*why = "invalid Unicode escape (high surrogate without "
			    "its low half)";
			return -1;
		}
		return 0;
	}
	if (p->cp == 0) {
		*why = "\\u0000 is not allowed";
		return -1;
	}
	if (p->cp >= 0xDC00 && p->cp <= 0xDFFF) {
		*why = "invalid Unicode escape (low surrogate alone)";
		return -1;
	}
	if (p->cp >= 0xD800 && p->cp <= 0xDBFF)
		p->text = JOBS_BODY_TEXT_LOW_BS;
	return 0;
}

/* The length of the first bytes of s[0..n) that pass; *why says what is
 * wrong with the next one when that is less than n. Errors that are
 * syntax errors for yajl as well (a bad escape character, a control
 * character) are left to yajl. */
static size_t
jobs_body_text(struct jobs_body_parse *p, const unsigned char *s, size_t n,
    const char **why)
{
	size_t i;
	unsigned c;
	int h;

	for (i = 0; i < n; i++) {
		c = s[i];
		if (p->u8need > 0) {
			if (c < p->u8lo || c > p->u8hi)
				goto bad_utf8;
			p->u8need--;
			p->u8lo = 0x80;
			p->u8hi = 0xBF;
			continue;
		}
		if (c >= 0x80) {
			p->u8lo = 0x80;
			p->u8hi = 0xBF;
			if (c >= 0xC2 && c <= 0xDF)
				p->u8need = 1;
			else if (c >= 0xE0 && c <= 0xEF) {
				p->u8need = 2;
				if (c == 0xE0)
					p->u8lo = 0xA0;
				else if (c == 0xED)	/* no surrogates */
					p->u8hi = 0x9F;
			} else if (c >= 0xF0 && c <= 0xF4) {
				p->u8need = 3;
				if (c == 0xF0)
					p->u8lo = 0x90;
				else if (c == 0xF4)	/* up to U+10FFFF */
					p->u8hi = 0x8F;
			} else
				goto bad_utf8;
		} else if (c == 0x0B || c == 0x0C) {
			*why = "invalid character (form feed or vertical tab)";
			return i;
		}
		switch (p->text) {
		case JOBS_BODY_TEXT_OUT:
			if (c == '"')
				p->text = JOBS_BODY_TEXT_STR;
			break;
		case JOBS_BODY_TEXT_STR:
			if (c == '"')
				p->text = JOBS_BODY_TEXT_OUT;
			else if (c == '\\')
				p->text = JOBS_BODY_TEXT_ESC;
			break;
		case JOBS_BODY_TEXT_ESC:
			p->text = JOBS_BODY_TEXT_STR;
			if (c == 'u') {
				p->text = JOBS_BODY_TEXT_HEX;
				p->cp = p->nhex = 0;
			}
			break;
		case JOBS_BODY_TEXT_HEX:
			if ((h = jobs_body_hex(c)) < 0) {
				/* not hex: yajl's error to report */
				p->text = JOBS_BODY_TEXT_STR;
				p->low = 0;
				break;
			}
			p->cp = p->cp << 4 | (unsigned)h;
			if (++p->nhex == 4 && jobs_body_escape(p, why) == -1)
				return i;
			break;
		case JOBS_BODY_TEXT_LOW_BS:
		case JOBS_BODY_TEXT_LOW_U:
			if (c != (p->text == JOBS_BODY_TEXT_LOW_BS ? '\\' :
			    'u')) {
				*why = "invalid Unicode escape (high surrogate "
				    "without its low half)";
				return i;
			}
			if (p->text == JOBS_BODY_TEXT_LOW_BS)
				p->text = JOBS_BODY_TEXT_LOW_U;
			else {
				p->text = JOBS_BODY_TEXT_HEX;
				p->cp = p->nhex = 0;
				p->low = 1;
			}
			break;
		}
	}
	return n;
bad_utf8:
	*why = "invalid UTF-8";
	return i;
}

/* Line and start of line after s[0..n), from *line and *start. */
static void
jobs_body_lines(const char *s, size_t n, unsigned long long offset,
    unsigned long *line, unsigned long long *start)
{
	const char *q = s, *nl;

	while ((nl = memchr(q, '\n', n - (size_t)(q - s))) != NULL) {
		(*line)++;
		q = nl + 1;
		*start = offset + (unsigned long long)(q - s);
	}
}

/* Stops for good with INVALID_JSON at s[at] of the piece s. */
static enum jobs_body_err
jobs_body_invalid(struct jobs_body_parse *p, const char *s, size_t at,
    const char *why)
{
	unsigned long line = p->line;
	unsigned long long start = p->line_start;

	if (s != NULL)
		jobs_body_lines(s, at, p->offset, &line, &start);
	snprintf(p->b->error, sizeof(p->b->error), "%s at line %lu column "
	    "%llu", why, line, p->offset + at - start + 1);
	return p->rc = JOBS_BODY_INVALID_JSON;
}

/* yajl stopped on s[0..n): its own error or a callback's. */
static enum jobs_body_err
jobs_body_yajl_failed(struct jobs_body_parse *p, yajl_status st,
    const char *s, size_t n)
{
	unsigned char *msg;
	char why[128];
	size_t at = yajl_get_bytes_consumed(p->y), len;

	if (at > n)
		at = n;
	if (st == yajl_status_client_canceled) {
		if (p->why_rc == JOBS_BODY_NOMEM)
			return p->rc = JOBS_BODY_NOMEM;
		return jobs_body_invalid(p, s, at, p->why);
	}
	why[0] = '\0';
	if ((msg = yajl_get_error(p->y, 0, NULL, 0)) != NULL) {
		snprintf(why, sizeof(why), "%s", (char *)msg);
		yajl_free_error(p->y, msg);
	}
	len = strlen(why);
	while (len > 0 && (why[len - 1] == '\n' || why[len - 1] == ' ' ||
	    why[len - 1] == '.'))
		why[--len] = '\0';
	return jobs_body_invalid(p, s, at, why[0] ? why : "parse error");
}

/* ---------------------------------------------------------------- values */

/* Stops the parse from a callback: INVALID_JSON for why, or NOMEM. */
static int
jobs_body_stop(struct jobs_body_parse *p, enum jobs_body_err rc,
    const char *why)
{
	p->why_rc = rc;
	p->why = why;
	return 0;
}

static unsigned long long
jobs_body_at(const struct jobs_body_parse *p)
{
	return p->offset + yajl_get_bytes_consumed(p->y);
}

/* jansson's limits on numbers; *out (when not NULL) gets the value. */
static int
jobs_body_number(struct jobs_body_parse *p, const char *s, size_t n,
    json_t **out)
{
	char small[64], *t = small;
	int real = memchr(s, '.', n) || memchr(s, 'e', n) || memchr(s, 'E', n);
	long long i = 0;
	double d = 0;
	int ok = 1;

	if (!real && n >= sizeof(small))	/* no leading zeros in JSON */
		return jobs_body_stop(p, JOBS_BODY_INVALID_JSON,
		    "too big integer");
	if (n >= sizeof(small) && (t = malloc(n + 1)) == NULL)
		return jobs_body_stop(p, JOBS_BODY_NOMEM, NULL);
	memcpy(t, s, n);
	t[n] = '\0';
	errno = 0;
	if (real) {
		d = strtod(t, NULL);
		ok = !((d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE);
	} else {
		i = strtoll(t, NULL, 10);
		ok = errno != ERANGE;
	}
	if (t != small)
		free(t);
	if (!ok)
		return jobs_body_stop(p, JOBS_BODY_INVALID_JSON, real ?
		    "real number overflow" : "too big integer");
	if (out != NULL && (*out = real ? json_real(d) : json_integer(i)) ==
	    NULL)
		return jobs_body_stop(p, JOBS_BODY_NOMEM, NULL);
	return 1;
}

static void
jobs_body_cb_drop(struct jobs_body_parse *p)
{
	json_decref(p->cb[0]);
	p->cb[0] = NULL;
	p->cb_live = 0;
	p->b->cb_state = JOBS_BODY_TOO_BIG;
}

/* A value inside callback_data (depth 2 or more while it is built). */
static int
jobs_body_cb_value(struct jobs_body_parse *p, enum jobs_body_kind k,
    const char *s, size_t n)
{
	json_t *v = NULL, *parent = p->cb[p->depth - 2];
	int rc;

	if (++p->cb_values > JOBS_BODY_CB_VALUES ||
	    jobs_body_at(p) - p->cb_start > JOBS_BODY_CB_BYTES ||
	    ((k == JOBS_BODY_MAP || k == JOBS_BODY_ARRAY) &&
	    p->depth > JOBS_BODY_CB_DEPTH)) {
		jobs_body_cb_drop(p);
		return k == JOBS_BODY_NUMBER ?
		    jobs_body_number(p, s, n, NULL) : 1;
	}
	switch (k) {
	case JOBS_BODY_NULL:
		v = json_null();
		break;
	case JOBS_BODY_BOOL:
		v = json_boolean(n);
		break;
	case JOBS_BODY_NUMBER:
		if (!jobs_body_number(p, s, n, &v))
			return 0;
		break;
	case JOBS_BODY_STRING:
		v = json_stringn_nocheck(s, n);
		break;
	case JOBS_BODY_MAP:
		v = json_object();
		break;
	case JOBS_BODY_ARRAY:
		v = json_array();
		break;
	}
	if (v == NULL)
		return jobs_body_stop(p, JOBS_BODY_NOMEM, NULL);
	if (k == JOBS_BODY_MAP || k == JOBS_BODY_ARRAY)
		p->cb[p->depth - 1] = v;
	if (json_is_object(parent))
		rc = json_object_setn_new_nocheck(parent,
		    buf_str(&p->cb_key), p->cb_key.len, v);
	else
		rc = json_array_append_new(parent, v);
	return rc == 0 ? 1 : jobs_body_stop(p, JOBS_BODY_NOMEM, NULL);
}

/* Drops the input: it would pass memory_max (the answer is 413). */
static void
jobs_body_too_big(struct jobs_body_parse *p)
{
	jobs_input_free(&p->b->in);
	p->input_live = 0;
	p->b->too_big = 1;
}

/* The input, the keys (and extra, what is about to be allocated for them
 * for a moment) and yajl's decoding buffer against memory_max: the input
 * gets what the rest leaves, or is dropped when it holds more already. */
static void
jobs_body_budget(struct jobs_body_parse *p, size_t extra)
{
	struct jobs_body *b = p->b;
	size_t rest = p->capkeys * sizeof(*p->keys) + extra + p->decoded;

	if (b->in.store == NULL)
		return;
	if (rest >= p->memory_max ||
	    jobs_input_bytes(&b->in) > p->memory_max - rest)
		jobs_body_too_big(p);
	else
		jobs_input_set_memory_max(&b->in, p->memory_max - rest);
}

/* A value of the top object's member p->member. */
static int
jobs_body_member_value(struct jobs_body_parse *p, enum jobs_body_kind k,
    const char *s, size_t n)
{
	struct jobs_body *b = p->b;
	enum jobs_body_field f = k == JOBS_BODY_NULL ? JOBS_BODY_ABSENT :
	    JOBS_BODY_WRONG;

	switch (p->member) {
	case JOBS_BODY_NAME:
		if (k == JOBS_BODY_STRING && n <= JOBS_NAME_MAX) {
			memcpy(b->name, s, n);
			b->name[n] = '\0';
			f = JOBS_BODY_SET;
		}
		b->name_state = f;
		break;
	case JOBS_BODY_URL:
		if (k == JOBS_BODY_STRING) {
			if (n > JOBS_BODY_URL_KEEP)
				n = JOBS_BODY_URL_KEEP;
			memcpy(b->webhook_url, s, n);
			b->webhook_url[n] = '\0';
			f = JOBS_BODY_SET;
		}
		b->url_state = f;
		break;
	case JOBS_BODY_CALLBACK:
		if (k == JOBS_BODY_MAP) {
			if ((p->cb[0] = json_object()) == NULL)
				return jobs_body_stop(p, JOBS_BODY_NOMEM,
				    NULL);
			p->cb_live = 1;
			p->cb_values = 1;
			p->cb_start = jobs_body_at(p) - 1;
			f = JOBS_BODY_SET;	/* unless dropped later */
		}
		b->cb_state = f;
		break;
	case JOBS_BODY_RETENTION:
		/* a whole number of days, at least 1 (the caller checks the
		 * operator's maximum) */
		if (k == JOBS_BODY_NUMBER && n < 16 && !memchr(s, '.', n) &&
		    !memchr(s, 'e', n) && !memchr(s, 'E', n)) {
			char t[16];

			memcpy(t, s, n);
			t[n] = '\0';
			if (strparse_long(t, 1, JOBS_BODY_RETENTION_MAX,
			    &b->retention_days) == 0)
				f = JOBS_BODY_SET;
		}
		b->retention_state = f;
		break;
	case JOBS_BODY_EMAILS:
		/* emails: null is not an array either */
		b->emails_state = JOBS_BODY_WRONG;
		if (k != JOBS_BODY_ARRAY)
			break;
		b->emails_state = JOBS_BODY_SET;
		if (jobs_input_init(&b->in, p->max, p->sandbox) == -1)
			return jobs_body_stop(p, JOBS_BODY_NOMEM, NULL);
		p->input_live = 1;
		jobs_body_budget(p, 0);
		break;
	default:
		break;
	}
	return 1;
}

/* An element of the emails array. */
static int
jobs_body_element(struct jobs_body_parse *p, enum jobs_body_kind k,
    const char *s, size_t n)
{
	struct jobs_body *b = p->b;
	size_t index = b->count++;
	enum jobs_err rc = JOBS_BAD_ITEM;

	if (!p->input_live)
		return 1;
	if (b->count > JOBS_BODY_ELEMENTS(p->max)) {
		jobs_input_free(&b->in);	/* too_many_emails anyway */
		p->input_live = 0;
		return 1;
	}
	if (k == JOBS_BODY_STRING &&
	    (rc = jobs_input_add(&b->in, s, n)) == JOBS_OK)
		return 1;
	if (rc == JOBS_NOMEM)
		return jobs_body_stop(p, JOBS_BODY_NOMEM, NULL);
	if (rc == JOBS_TOO_BIG) {
		jobs_body_too_big(p);
		return 1;
	}
	b->emails_rc = rc;
	b->bad_index = index;
	jobs_input_free(&b->in);
	p->input_live = 0;
	return 1;
}

/* A string or key that yajl decoded into its buffer (it had escapes):
 * that buffer grows to the longest one, in powers of two, counted twice
 * (while it grows, the old one is held too). */
static void
jobs_body_decoded(struct jobs_body_parse *p, const char *s, size_t n)
{
	size_t size = 2048;

	if ((uintptr_t)s >= (uintptr_t)p->piece &&
	    (uintptr_t)s < (uintptr_t)p->piece + p->piece_len)
		return;		/* in the body itself */
	while (size <= n && size < SIZE_MAX / 4)
		size *= 2;
	if (2 * size > p->decoded) {
		p->decoded = 2 * size;
		jobs_body_budget(p, 0);
	}
}

/* Every value: checked, then given to whoever reads it. */
static int
jobs_body_value(struct jobs_body_parse *p, enum jobs_body_kind k,
    const char *s, size_t n)
{
	struct jobs_body_frame *f;

	if (k == JOBS_BODY_NUMBER && !p->cb_live &&
	    !jobs_body_number(p, s, n, NULL))
		return 0;
	if (k == JOBS_BODY_STRING)
		jobs_body_decoded(p, s, n);
	if (p->depth == 0)
		p->top_object = k == JOBS_BODY_MAP;
	else if (p->depth == 1 && p->top_object) {
		if (!jobs_body_member_value(p, k, s, n))
			return 0;
	} else if (p->depth == 2 && p->member == JOBS_BODY_EMAILS &&
	    !p->frames[2].object) {
		if (!jobs_body_element(p, k, s, n))
			return 0;
	} else if (p->cb_live && !jobs_body_cb_value(p, k, s, n))
		return 0;
	if (k != JOBS_BODY_MAP && k != JOBS_BODY_ARRAY)
		return 1;
	if (p->depth == JOBS_BODY_DEPTH_MAX)
		return jobs_body_stop(p, JOBS_BODY_INVALID_JSON,
		    "maximum parsing depth reached");
	f = &p->frames[++p->depth];
	f->object = k == JOBS_BODY_MAP;
	f->keys = p->nkeys;
	return 1;
}

static int
jobs_body_key(void *ctx, const unsigned char *key, size_t n)
{
	struct jobs_body_parse *p = ctx;
	const char *s = (const char *)key;
	uint64_t *nk;
	size_t cap;
	int m;

	if (p->nkeys == p->capkeys) {
		cap = p->capkeys ? p->capkeys * 2 : 64;
		jobs_body_budget(p, cap * sizeof(*nk));	/* old and new */
		if ((nk = realloc(p->keys, cap * sizeof(*nk))) == NULL)
			return jobs_body_stop(p, JOBS_BODY_NOMEM, NULL);
		p->keys = nk;
		p->capkeys = cap;
		jobs_body_budget(p, 0);
	}
	p->keys[p->nkeys++] = khash(s, n);
	jobs_body_decoded(p, s, n);
	if (p->depth == 1 && p->top_object) {
		p->member = JOBS_BODY_OTHER;
		for (m = JOBS_BODY_NAME; m < JOBS_BODY_MEMBER__MAX; m++)
			if (strlen(jobs_body_names[m]) == n &&
			    memcmp(jobs_body_names[m], s, n) == 0)
				p->member = (enum jobs_body_member)m;
		if (!p->batch && (p->member == JOBS_BODY_URL ||
		    p->member == JOBS_BODY_CALLBACK))
			p->member = JOBS_BODY_OTHER;
		if (p->member == JOBS_BODY_OTHER)
			return 1;
		if (p->seen & (1u << p->member))
			return jobs_body_stop(p, JOBS_BODY_INVALID_JSON,
			    "duplicate object key");
		p->seen |= 1u << p->member;
	} else if (p->cb_live) {
		if (jobs_body_at(p) - p->cb_start > JOBS_BODY_CB_BYTES) {
			jobs_body_cb_drop(p);
			return 1;
		}
		buf_reset(&p->cb_key);
		if (buf_append(&p->cb_key, s, n) == -1)
			return jobs_body_stop(p, JOBS_BODY_NOMEM, NULL);
	}
	return 1;
}

/* Sorts v[0..n) (heapsort: in place, no allocation). */
static void
jobs_body_sort(uint64_t *v, size_t n)
{
	size_t start, end, root, child;
	uint64_t t;

	for (start = n / 2; n > 1; ) {
		if (start > 0)
			start--;
		else {
			end = --n;
			t = v[end];
			v[end] = v[0];
			v[0] = t;
			if (n < 2)
				break;
		}
		for (root = start; (child = 2 * root + 1) < n; root = child) {
			if (child + 1 < n && v[child] < v[child + 1])
				child++;
			if (v[root] >= v[child])
				break;
			t = v[root];
			v[root] = v[child];
			v[child] = t;
		}
	}
}

/* The end of an object or an array. */
static int
jobs_body_close(void *ctx)
{
	struct jobs_body_parse *p = ctx;
	struct jobs_body *b = p->b;
	struct jobs_body_frame *f = &p->frames[p->depth];
	size_t i, n;

	if (f->object) {
		n = p->nkeys - f->keys;
		jobs_body_sort(p->keys + f->keys, n);
		for (i = 1; i < n; i++)
			if (p->keys[f->keys + i] == p->keys[f->keys + i - 1])
				return jobs_body_stop(p,
				    JOBS_BODY_INVALID_JSON,
				    "duplicate object key");
		p->nkeys = f->keys;
	}
	if (p->depth == 2 && p->top_object) {
		if (p->cb_live) {
			if (jobs_body_at(p) - p->cb_start > JOBS_BODY_CB_BYTES)
				jobs_body_cb_drop(p);
			else {
				b->callback_data = p->cb[0];
				p->cb[0] = NULL;
				p->cb_live = 0;
			}
		}
		if (p->input_live) {
			p->input_live = 0;
			b->emails_rc = jobs_input_end(&b->in);
		}
	}
	p->depth--;
	return 1;
}

/* ---------------------------------------------------------------- yajl */

static int
jobs_body_null(void *ctx)
{
	return jobs_body_value(ctx, JOBS_BODY_NULL, NULL, 0);
}

static int
jobs_body_bool(void *ctx, int v)
{
	return jobs_body_value(ctx, JOBS_BODY_BOOL, NULL, v != 0);
}

static int
jobs_body_num(void *ctx, const char *s, size_t n)
{
	return jobs_body_value(ctx, JOBS_BODY_NUMBER, s, n);
}

static int
jobs_body_string(void *ctx, const unsigned char *s, size_t n)
{
	return jobs_body_value(ctx, JOBS_BODY_STRING, (const char *)s, n);
}

static int
jobs_body_map(void *ctx)
{
	return jobs_body_value(ctx, JOBS_BODY_MAP, NULL, 0);
}

static int
jobs_body_array(void *ctx)
{
	return jobs_body_value(ctx, JOBS_BODY_ARRAY, NULL, 0);
}

static const yajl_callbacks jobs_body_callbacks = {
	.yajl_null = jobs_body_null,
	.yajl_boolean = jobs_body_bool,
	.yajl_number = jobs_body_num,
	.yajl_string = jobs_body_string,
	.yajl_start_map = jobs_body_map,
	.yajl_map_key = jobs_body_key,
	.yajl_end_map = jobs_body_close,
	.yajl_start_array = jobs_body_array,
	.yajl_end_array = jobs_body_close,
};

/* ---------------------------------------------------------------- API */

int
jobs_body_init(struct jobs_body *b, int batch, size_t max,
    const char *sandbox, size_t memory_max)
{
	struct jobs_body_parse *p;

	memset(b, 0, sizeof(*b));
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -1;
	p->b = b;
	p->batch = batch;
	p->max = max;
	p->memory_max = memory_max;
	p->sandbox = sandbox;
	p->line = 1;
	buf_init(&p->cb_key, JOBS_BODY_CB_BYTES);
	if ((p->y = yajl_alloc(&jobs_body_callbacks, NULL, p)) == NULL) {
		free(p);
		return -1;
	}
	b->parse = p;
	return 0;
}

enum jobs_body_err
jobs_body_feed(struct jobs_body *b, const char *s, size_t n)
{
	struct jobs_body_parse *p = b->parse;
	const char *why = NULL;
	yajl_status st = yajl_status_ok;
	size_t good;

	if (p->rc != JOBS_BODY_OK || n == 0)
		return p->rc;
	good = jobs_body_text(p, (const unsigned char *)s, n, &why);
	p->piece = s;
	p->piece_len = good;
	if (good > 0)
		st = yajl_parse(p->y, (const unsigned char *)s, good);
	if (st != yajl_status_ok)
		return jobs_body_yajl_failed(p, st, s, good);
	if (good < n)
		return jobs_body_invalid(p, s, good, why);
	jobs_body_lines(s, n, p->offset, &p->line, &p->line_start);
	p->offset += n;
	return JOBS_BODY_OK;
}

enum jobs_body_err
jobs_body_end(struct jobs_body *b)
{
	struct jobs_body_parse *p = b->parse;
	yajl_status st;

	if (p->rc != JOBS_BODY_OK)
		return p->rc;
	if ((st = yajl_complete_parse(p->y)) != yajl_status_ok)
		return jobs_body_yajl_failed(p, st, NULL, 0);
	/* cannot be after yajl's end of a document; to be safe */
	if (p->u8need > 0 || p->text != JOBS_BODY_TEXT_OUT)
		return jobs_body_invalid(p, NULL, 0, "premature end of input");
	if (!p->top_object)
		p->rc = JOBS_BODY_NOT_OBJECT;
	return p->rc;
}

void
jobs_body_free(struct jobs_body *b)
{
	struct jobs_body_parse *p = b->parse;

	if (p != NULL) {
		yajl_free(p->y);
		json_decref(p->cb[0]);
		free(p->keys);
		buf_free(&p->cb_key);
		free(p);
	}
	json_decref(b->callback_data);
	jobs_input_free(&b->in);
	memset(b, 0, sizeof(*b));
}
