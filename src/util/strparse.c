/* strparse.c: range-checked number parsing (never atoi), lists of
 * durations, trimming, case-folded ASCII comparison and constant-time
 * comparison for secrets. */
#include "util/strparse.h"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Whole string must be a decimal integer within [min, max]. */
int
strparse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
strparse_bool(const char *s, int *out)
{
	if (strcasecmp(s, "yes") == 0 || strcasecmp(s, "true") == 0 ||
	    strcmp(s, "1") == 0 || strcasecmp(s, "on") == 0)
		*out = 1;
	else if (strcasecmp(s, "no") == 0 || strcasecmp(s, "false") == 0 ||
	    strcmp(s, "0") == 0 || strcasecmp(s, "off") == 0)
		*out = 0;
	else
		return -1;
	return 0;
}

/* Trims ASCII white space in place; returns the start of the trimmed text. */
char *
strparse_trim(char *s)
{
	char *e;

	while (*s && isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int
strparse_ieq(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

/* Compares n bytes in time that does not depend on where they differ. */
int
strparse_consttime_eq(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	unsigned char d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

size_t
strparse_utf8_cut(const char *s, size_t n, size_t max)
{
	size_t i;

	if (n <= max)
		return n;
	for (i = max; i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80; i--)
		;
	return i;
}

void
strparse_copy(char *dst, size_t sz, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (sz == 0)
		return;
	n = strparse_utf8_cut(src, n, sz - 1);
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

long
strparse_utf8_chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned long cp;
	long n = 0;
	int more, i;

	while (*p) {
		if (*p < 0x80) {
			p++;
			n++;
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf) {
			more = 1;
			cp = *p & 0x1f;
		} else if (*p >= 0xe0 && *p <= 0xef) {
			more = 2;
			cp = *p & 0x0f;
		} else if (*p >= 0xf0 && *p <= 0xf4) {
			more = 3;
			cp = *p & 0x07;
		} else
			return -1;
		for (i = 1; i <= more; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return -1;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		/* overlong forms, surrogates, beyond U+10FFFF */
		if ((more == 2 && cp < 0x800) || (more == 3 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return -1;
		p += more + 1;
		n++;
	}
	return n;
}

int
strparse_durations(const char *s, long *out, size_t max, size_t *n)
{
	static const char units[] = "smhd";
	static const long mult[] = { 1, 60, 3600, 86400 };
	char num[16];
	const char *u;
	size_t len, k = 0;
	long v, m;

	*n = 0;
	if (s == NULL)
		return -1;
	for (;;) {
		s += strspn(s, ", \t");
		if (*s == '\0')
			break;
		len = strspn(s, "0123456789");
		if (len == 0 || len >= sizeof(num))
			return -1;
		memcpy(num, s, len);
		num[len] = '\0';
		s += len;
		m = 1;
		if (*s != '\0' && (u = strchr(units, *s)) != NULL) {
			m = mult[u - units];
			s++;
		}
		if (*s != '\0' && strchr(", \t", *s) == NULL)
			return -1;
		if (strparse_long(num, 1, STRPARSE_DURATION_MAX / m, &v) == -1 ||
		    k == max)
			return -1;
		out[k++] = v * m;
	}
	if (k == 0)
		return -1;
	*n = k;
	return 0;
}

/* 1 to 3 digits at p: the end, or NULL (none, or a fourth one). */
static const char *
strparse_code_part(const char *p)
{
	int n = 0;

	while (*p >= '0' && *p <= '9' && n < 3) {
		p++;
		n++;
	}
	return n == 0 || (*p >= '0' && *p <= '9') ? NULL : p;
}

size_t
strparse_enhanced_len(const char *s)
{
	const char *p = s;

	if ((*p != '2' && *p != '4' && *p != '5') || p[1] != '.')
		return 0;
	if ((p = strparse_code_part(p + 2)) == NULL || *p != '.')
		return 0;
	if ((p = strparse_code_part(p + 1)) == NULL)
		return 0;
	return (size_t)(p - s);
}

int
strparse_reply_code(const char *text)
{
	if (text[0] < '2' || text[0] > '5' || text[1] < '0' || text[1] > '9' ||
	    text[2] < '0' || text[2] > '9' || (text[3] != ' ' && text[3] != '-'))
		return 0;
	return (text[0] - '0') * 100 + (text[1] - '0') * 10 + (text[2] - '0');
}
