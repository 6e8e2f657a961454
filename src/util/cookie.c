/* cookie.c: the Cookie header parser (cookie.h). Pairs are separated by
 * ';' and optional spaces; a pair without '=' is skipped. */
#include "util/cookie.h"
#include <string.h>

/* RFC 6265 cookie-octet: %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E */
static int
cookie_octet(unsigned char c)
{
	return c >= 0x21 && c <= 0x7e && c != '"' && c != ',' && c != ';' &&
	    c != '\\';
}

int
cookie_get(const char *h, const char *name, char *out, size_t outsz)
{
	size_t nlen = strlen(name), plen, vlen;
	const char *p, *v, *eq;

	if (h == NULL || outsz == 0)
		return -1;
	for (p = h; *p != '\0'; p += plen) {
		p += strspn(p, "; \t");
		plen = strcspn(p, ";");
		eq = memchr(p, '=', plen);
		if (eq == NULL)
			continue;
		v = eq + 1;
		while (eq > p && (eq[-1] == ' ' || eq[-1] == '\t'))
			eq--;
		if ((size_t)(eq - p) != nlen || memcmp(p, name, nlen) != 0)
			continue;
		vlen = plen - (size_t)(v - p);
		while (vlen > 0 && (*v == ' ' || *v == '\t'))
			v++, vlen--;
		while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
			vlen--;
		if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"')
			v++, vlen -= 2;
		if (vlen == 0 || vlen >= outsz)
			return -1;
		for (size_t i = 0; i < vlen; i++)
			if (!cookie_octet((unsigned char)v[i]))
				return -1;
		memcpy(out, v, vlen);
		out[vlen] = '\0';
		return 0;
	}
	return -1;
}
