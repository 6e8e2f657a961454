/* fuzz_multipart.c: libFuzzer target for the streaming multipart/form-data
 * parser (util/multipart.c). Input: two bytes that choose the splits, a
 * Content-Type value up to the first LF (its boundary, or "b" when it has
 * none), then the body. Invariants, besides no crash or leak:
 * - the callback stream and the result are the same whether the body is fed
 *   whole, in two pieces, byte by byte or in random pieces;
 * - a reason comes with every error and only with one; part_data never gets
 *   0 bytes, no more body bytes come out than went in, at most 64 parts;
 *   no string holds a control character other than tab, a filename holds no
 *   '/' or '\' and is not "." or "..";
 * - a callback that stops the parser at a part_begin or part_end gets no
 *   call after it, and the stream up to it is the same;
 * - a body that parsed has a close delimiter, and it is written again (the parts' names, filenames, types
 *   and data with the same boundary) and parses to the same stream;
 * - an accepted boundary is 1-70 characters and reads back from
 *   multipart/form-data; boundary="...". */
#include "util/buf.h"
#include "util/multipart.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_multipart: %s " \
	"failed (line %d)\n", #c, __LINE__); abort(); } } while (0)

/* The stream: 'B' name NUL, 'F' filename NUL or 'N', 'T' type NUL or 'N';
 * 'D' and an 8-byte length before a run of data (consecutive pieces
 * merged); 'E'. Last, 'R' and the result. */
struct fuzz_rec {
	struct buf	 out;
	struct buf	 data;		/* pieces not yet written to out */
	size_t		 total;		/* body bytes seen */
	int		 parts;
	int		 stop_at;	/* the part_begin or part_end that stops */
	int		 events;		/* part_begin and part_end calls */
};

/* -1 at the event r->stop_at names, after which none may come. */
static int
fuzz_event(struct fuzz_rec *r)
{
	CHECK(r->stop_at == 0 || r->events < r->stop_at);
	return ++r->events == r->stop_at ? -1 : 0;
}

static void
fuzz_flush(struct fuzz_rec *r)
{
	uint64_t n = r->data.len;

	if (n == 0)
		return;
	CHECK(buf_putc(&r->out, 'D') == 0);
	CHECK(buf_append(&r->out, &n, sizeof(n)) == 0);
	CHECK(buf_append(&r->out, r->data.data, r->data.len) == 0);
	buf_reset(&r->data);
}

static void
fuzz_string(struct fuzz_rec *r, char tag, const char *s, int file)
{
	const unsigned char *p;

	if (s == NULL) {
		CHECK(buf_putc(&r->out, 'N') == 0);
		return;
	}
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		CHECK((*p >= 0x20 && *p != 0x7f) || *p == '\t');
	if (file) {
		CHECK(strchr(s, '/') == NULL && strchr(s, '\\') == NULL);
		CHECK(strcmp(s, ".") != 0 && strcmp(s, "..") != 0);
	}
	CHECK(buf_putc(&r->out, tag) == 0);
	CHECK(buf_append(&r->out, s, strlen(s) + 1) == 0);
}

static int
fuzz_begin(void *arg, const struct multipart_part *p)
{
	struct fuzz_rec *r = arg;

	fuzz_flush(r);
	CHECK(p->name != NULL);
	CHECK(++r->parts <= MULTIPART_PARTS_MAX);
	fuzz_string(r, 'B', p->name, 0);
	fuzz_string(r, 'F', p->filename, 1);
	fuzz_string(r, 'T', p->content_type, 0);
	return fuzz_event(r);
}

static int
fuzz_data(void *arg, const char *data, size_t len)
{
	struct fuzz_rec *r = arg;

	CHECK(len > 0);
	CHECK(r->stop_at == 0 || r->events < r->stop_at);
	r->total += len;
	CHECK(buf_append(&r->data, data, len) == 0);
	return 0;
}

static int
fuzz_end(void *arg)
{
	struct fuzz_rec *r = arg;

	fuzz_flush(r);
	CHECK(buf_putc(&r->out, 'E') == 0);
	return fuzz_event(r);
}

static const struct multipart_cb fuzz_cb = { fuzz_begin, fuzz_data, fuzz_end };

enum fuzz_split { FUZZ_WHOLE, FUZZ_TWO, FUZZ_BYTES, FUZZ_RANDOM };

/* Parses body fed as how says; the stream in r->out (to free). */
static enum multipart_err
fuzz_run(const char *boundary, const char *body, size_t len,
    enum fuzz_split how, uint32_t seed, int stop_at, struct fuzz_rec *r)
{
	struct multipart *m;
	enum multipart_err e = MULTIPART_OK;
	size_t off = 0, n;

	memset(r, 0, sizeof(*r));
	buf_init(&r->out, BUF_NOMAX);
	buf_init(&r->data, BUF_NOMAX);
	r->stop_at = stop_at;
	if ((m = multipart_new(boundary, &fuzz_cb, r)) == NULL)
		abort();
	CHECK(*multipart_error(m) == '\0');
	while (off < len && e == MULTIPART_OK) {
		if (how == FUZZ_WHOLE)
			n = len;
		else if (how == FUZZ_TWO)	/* at seed % len, 0: whole */
			n = off == 0 && seed % len != 0 ? seed % len : len - off;
		else if (how == FUZZ_BYTES)
			n = 1;
		else {
			seed = seed * 1103515245u + 12345u;
			n = 1 + (seed >> 16) % 97;
		}
		if (n > len - off)
			n = len - off;
		e = multipart_feed(m, body + off, n);
		off += n;
	}
	if (e == MULTIPART_OK)
		e = multipart_finish(m);
	CHECK(multipart_finish(m) == e);
	CHECK((e == MULTIPART_OK) == (*multipart_error(m) == '\0'));
	CHECK(r->total <= len);
	fuzz_flush(r);
	CHECK(buf_putc(&r->out, 'R') == 0);
	CHECK(buf_putc(&r->out, (char)e) == 0);
	multipart_free(m);
	buf_free(&r->data);
	return e;
}

static void
fuzz_quoted(struct buf *b, const char *s)
{
	CHECK(buf_putc(b, '"') == 0);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			CHECK(buf_putc(b, '\\') == 0);
		CHECK(buf_putc(b, *s) == 0);
	}
	CHECK(buf_putc(b, '"') == 0);
}

/* The body that stream describes, with boundary; -1 when a part's headers
 * would pass the limit written this way. */
static int
fuzz_write(const char *boundary, const struct buf *stream, struct buf *body)
{
	const char *p = stream->data, *end = stream->data + stream->len;
	size_t hstart;
	uint64_t n;

	while (p < end && *p != 'R') {
		if (*p == 'B') {
			CHECK(buf_printf(body, "--%s\r\n", boundary) == 0);
			hstart = body->len;
			CHECK(buf_puts(body, "Content-Disposition: form-data; name=") == 0);
			fuzz_quoted(body, p + 1);
			p += strlen(p) + 1;
			if (*p == 'F') {
				CHECK(buf_puts(body, "; filename=") == 0);
				fuzz_quoted(body, p + 1);
				p += strlen(p) + 1;
			} else
				p++;
			CHECK(buf_puts(body, "\r\n") == 0);
			if (*p == 'T') {
				CHECK(buf_printf(body, "Content-Type: %s\r\n", p + 1) == 0);
				p += strlen(p) + 1;
			} else
				p++;
			CHECK(buf_puts(body, "\r\n") == 0);
			if (body->len - hstart > MULTIPART_HEADER_MAX)
				return -1;
		} else if (*p == 'D') {
			memcpy(&n, p + 1, sizeof(n));
			CHECK(buf_append(body, p + 1 + sizeof(n), (size_t)n) == 0);
			p += 1 + sizeof(n) + n;
		} else {
			CHECK(*p == 'E');
			CHECK(buf_printf(body, "\r\n") == 0);
			p++;
		}
	}
	CHECK(buf_printf(body, "--%s--\r\n", boundary) == 0);
	return 0;
}

static void
fuzz_boundary(const char *ct, char *b, size_t bsz)
{
	char again[MULTIPART_BOUNDARY_MAX + 1];
	struct buf q;

	if (multipart_boundary(ct, b, bsz) == -1) {
		memcpy(b, "b", 2);
		return;
	}
	CHECK(strlen(b) >= 1 && strlen(b) <= MULTIPART_BOUNDARY_MAX);
	buf_init(&q, BUF_NOMAX);
	CHECK(buf_puts(&q, "multipart/form-data; boundary=") == 0);
	fuzz_quoted(&q, b);
	CHECK(multipart_boundary(buf_str(&q), again, sizeof(again)) == 0);
	CHECK(strcmp(again, b) == 0);
	buf_free(&q);
}

/* A body that parsed has a close delimiter: "--boundary--" at its start
 * or after a CRLF. */
static void
fuzz_closed(const char *boundary, const char *body, size_t len)
{
	struct buf close, crlf;

	buf_init(&close, BUF_NOMAX);
	buf_init(&crlf, BUF_NOMAX);
	CHECK(buf_printf(&close, "\r\n--%s--", boundary) == 0);
	CHECK(buf_puts(&crlf, "\r\n") == 0);
	CHECK(buf_append(&crlf, body, len) == 0);
	CHECK(memmem(crlf.data, crlf.len, buf_str(&close), close.len) != NULL);
	buf_free(&close);
	buf_free(&crlf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char boundary[MULTIPART_BOUNDARY_MAX + 1], ct[256];
	const char *body, *nl;
	struct fuzz_rec whole, other;
	struct buf again;
	enum multipart_err e;
	uint32_t seed;
	size_t len, i;

	if (size < 2 || size > 65536)
		return 0;
	seed = (uint32_t)data[0] << 8 | data[1];
	body = (const char *)data + 2;
	len = size - 2;
	if ((nl = memchr(body, '\n', len)) == NULL ||
	    (size_t)(nl - body) >= sizeof(ct))
		ct[0] = '\0';
	else {	/* a NUL in the value ends it, as in a C string */
		memcpy(ct, body, (size_t)(nl - body));
		ct[nl - body] = '\0';
		len -= (size_t)(nl - body) + 1;
		body = nl + 1;
	}
	fuzz_boundary(ct, boundary, sizeof(boundary));

	e = fuzz_run(boundary, body, len, FUZZ_WHOLE, 0, 0, &whole);
	if (e == MULTIPART_OK)
		fuzz_closed(boundary, body, len);
	for (i = 1; i < 5; i++) {
		if (i == FUZZ_BYTES && len > 4096)
			continue;
		fuzz_run(boundary, body, len, i < 4 ? (enum fuzz_split)i :
		    FUZZ_RANDOM, i < 4 ? seed : ~seed, 0, &other);
		if (other.out.len != whole.out.len ||
		    memcmp(other.out.data, whole.out.data, whole.out.len) != 0) {
			fprintf(stderr, "fuzz_multipart: split %zu (seed %u) "
			    "gives another stream\n", i, seed);
			abort();
		}
		buf_free(&other.out);
	}
	/* A callback that stops at the k-th part_begin or part_end: STOPPED
	 * with the stream so far if the body has that many, and none after. */
	if (whole.events > 0) {
		int k = 1 + (int)(seed % (uint32_t)whole.events);

		CHECK(fuzz_run(boundary, body, len, FUZZ_RANDOM, seed, k,
		    &other) == MULTIPART_STOPPED);
		CHECK(other.events == k);
		CHECK(other.out.len - 2 <= whole.out.len);
		CHECK(memcmp(other.out.data, whole.out.data,
		    other.out.len - 2) == 0);
		buf_free(&other.out);
	}
	if (e == MULTIPART_OK) {
		buf_init(&again, BUF_NOMAX);
		if (fuzz_write(boundary, &whole.out, &again) == 0) {
			CHECK(fuzz_run(boundary, again.data, again.len,
			    FUZZ_RANDOM, seed, 0, &other) == MULTIPART_OK);
			CHECK(other.out.len == whole.out.len);
			CHECK(memcmp(other.out.data, whole.out.data,
			    whole.out.len) == 0);
			buf_free(&other.out);
		}
		buf_free(&again);
	}
	buf_free(&whole.out);
	return 0;
}
