/* buf.c: growable, NUL-terminated byte buffer with a size cap. Every append
 * returns 0 on success and -1 when memory runs out or the cap would be passed;
 * on failure the buffer is left as it was. */
#include "util/buf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = b->cap = 0;
	b->max = max;
}

int
buf_reserve(struct buf *b, size_t extra)
{
	size_t need, ncap;
	char *p;

	/* len + extra + 1 (the NUL) must not wrap around either. */
	if (extra > b->max || b->len > b->max - extra ||
	    b->len + extra == (size_t)-1)
		return -1;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap = ncap > ((size_t)-1) / 2 ? need : ncap * 2;
	if ((p = realloc(b->data, ncap)) == NULL)
		return -1;
	b->data = p;
	b->cap = ncap;
	return 0;
}

int
buf_append(struct buf *b, const void *p, size_t n)
{
	if (buf_reserve(b, n) == -1)
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int
buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int
buf_putc(struct buf *b, char c)
{
	return buf_append(b, &c, 1);
}

int
buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || buf_reserve(b, (size_t)n) == -1)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

const char *
buf_str(const struct buf *b)
{
	return b->data ? b->data : "";
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void
buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

char *
buf_steal(struct buf *b)
{
	char *p = b->data;

	if (p == NULL)
		p = calloc(1, 1);
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
