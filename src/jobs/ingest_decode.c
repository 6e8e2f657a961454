/* ingest_decode.c: the text encodings of uploaded files (ingest_decode.h).
 * Windows-1252 is WHATWG's table: 0x81, 0x8D, 0x8F, 0x90 and 0x9D map to
 * the C1 controls of the same number. */
#include "jobs/ingest_decode.h"
#include <stdint.h>
#include <string.h>

#define INGEST_DECODE_REPLACEMENT 0xFFFD

/* 0x80 to 0x9F; 0xA0 to 0xFF are U+00A0 to U+00FF. */
static const unsigned short ingest_decode_cp1252_c1[32] = {
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178
};

size_t
ingest_decode_utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, need, k;
	unsigned c, lo, hi;
	uint64_t w;

	while (i < n) {
		/* ASCII eight bytes at a time */
		while (n - i >= 8) {
			memcpy(&w, s + i, 8);
			if (w & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i == n)
			break;
		if ((c = s[i]) < 0x80) {
			i++;
			continue;
		}
		lo = 0x80;
		hi = 0xBF;
		if (c >= 0xC2 && c <= 0xDF)
			need = 1;
		else if (c >= 0xE0 && c <= 0xEF) {
			need = 2;
			if (c == 0xE0)
				lo = 0xA0;
			else if (c == 0xED)
				hi = 0x9F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			need = 3;
			if (c == 0xF0)
				lo = 0x90;
			else if (c == 0xF4)
				hi = 0x8F;
		} else
			return i;
		if (n - i - 1 < need || s[i + 1] < lo || s[i + 1] > hi)
			return i;
		for (k = 2; k <= need; k++)
			if ((s[i + k] & 0xC0) != 0x80)
				return i;
		i += need + 1;
	}
	return n;
}

/* A code point as UTF-8 into out (4 bytes); the bytes written. */
static size_t
ingest_decode_put(char *out, unsigned cp)
{
	unsigned char *o = (unsigned char *)out;

	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xC0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xE0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
	o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
	o[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

size_t
ingest_decode_cp1252(char *dst, size_t dstmax, const char *s, size_t n)
{
	char tmp[4];
	size_t i, o = 0, k;
	unsigned c;

	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x80 && c < 0xA0)
			c = ingest_decode_cp1252_c1[c - 0x80];
		k = ingest_decode_put(tmp, c);
		if (dstmax - o < k)
			break;
		memcpy(dst + o, tmp, k);
		o += k;
	}
	return o;
}

size_t
ingest_decode_utf16(struct ingest_decode_utf16 *st, const char *in, size_t n,
    char *out)
{
	const unsigned char *p = (const unsigned char *)in, *e = p + n;
	size_t o = 0;
	unsigned u, b0, b1;

	while (p < e) {
		if (st->odd) {
			b0 = st->byte;
			b1 = *p++;
			st->odd = 0;
		} else if (e - p >= 2) {
			b0 = p[0];
			b1 = p[1];
			p += 2;
		} else {
			st->byte = *p++;
			st->odd = 1;
			break;
		}
		u = st->be ? b0 << 8 | b1 : b1 << 8 | b0;
		if (u >= 0xDC00 && u <= 0xDFFF && st->high) {
			u = 0x10000 + ((st->high - 0xD800) << 10) +
			    (u - 0xDC00);
			st->high = 0;
			o += ingest_decode_put(out + o, u);
			continue;
		}
		if (st->high) {
			o += ingest_decode_put(out + o,
			    INGEST_DECODE_REPLACEMENT);
			st->high = 0;
		}
		if (u >= 0xD800 && u <= 0xDBFF)
			st->high = u;
		else if (u >= 0xDC00 && u <= 0xDFFF)
			o += ingest_decode_put(out + o,
			    INGEST_DECODE_REPLACEMENT);
		else
			o += ingest_decode_put(out + o, u);
	}
	return o;
}

int
ingest_decode_utf16_end(struct ingest_decode_utf16 *st, char *out)
{
	size_t o = 0;

	if (st->odd)
		return -1;
	if (st->high) {
		o = ingest_decode_put(out, INGEST_DECODE_REPLACEMENT);
		st->high = 0;
	}
	return (int)o;
}
