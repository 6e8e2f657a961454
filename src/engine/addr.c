/* addr.c: email address syntax. The practical RFC 5321/5322 address:
 * a dot-atom or quoted-string local part (UTF-8 allowed per RFC 6531/6532,
 * valid UTF-8 only), "@", and a domain converted to A-labels with libidn2
 * (IDNA2008, UTS#46 non-transitional mapping). A domain of one label
 * ("user@tld") is valid (RFC 5321): DNS decides whether it takes mail; only
 * an all-numeric last label is refused, an IP address without brackets.
 * Refused on purpose: comments, folding white space, the obsolete mixed
 * local parts ("a".b), and domain literals such as [192.0.2.1]: we verify by
 * MX lookup and never connect to an address a user typed, and such literals
 * do not occur in real mailing lists.
 * Errors are reported in scan order: the first problem met wins, then the
 * length limits. */
#include "engine/addr.h"
#include <idn2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *const addr_err_names[ADDR_ERR__MAX] = {
	[ADDR_OK] = "ok",
	[ADDR_EMPTY] = "empty",
	[ADDR_NO_AT] = "no_at",
	[ADDR_TOO_LONG] = "too_long",
	[ADDR_BAD_UTF8] = "bad_utf8",
	[ADDR_WHITESPACE] = "whitespace",
	[ADDR_COMMENT] = "comment",
	[ADDR_LOCAL_EMPTY] = "local_empty",
	[ADDR_LOCAL_TOO_LONG] = "local_too_long",
	[ADDR_LOCAL_BAD_CHAR] = "local_bad_char",
	[ADDR_LOCAL_BAD_DOTS] = "local_bad_dots",
	[ADDR_LOCAL_BAD_QUOTE] = "local_bad_quote",
	[ADDR_DOMAIN_EMPTY] = "domain_empty",
	[ADDR_DOMAIN_LITERAL] = "domain_literal",
	[ADDR_DOMAIN_TOO_LONG] = "domain_too_long",
	[ADDR_DOMAIN_LABEL_TOO_LONG] = "domain_label_too_long",
	[ADDR_DOMAIN_EMPTY_LABEL] = "domain_empty_label",
	[ADDR_DOMAIN_BAD_CHAR] = "domain_bad_char",
	[ADDR_DOMAIN_BAD_HYPHEN] = "domain_bad_hyphen",
	[ADDR_DOMAIN_NUMERIC_TLD] = "domain_numeric_tld",
	[ADDR_DOMAIN_IDN] = "domain_idn",
};

const char *const addr_err_messages[ADDR_ERR__MAX] = {
	[ADDR_OK] = "valid address",
	[ADDR_EMPTY] = "the address is empty",
	[ADDR_NO_AT] = "the address has no @",
	[ADDR_TOO_LONG] = "the address is longer than 254 characters",
	[ADDR_BAD_UTF8] = "the address is not valid UTF-8",
	[ADDR_WHITESPACE] = "the address contains white space",
	[ADDR_COMMENT] = "the address contains a comment or parenthesis",
	[ADDR_LOCAL_EMPTY] = "nothing before the @",
	[ADDR_LOCAL_TOO_LONG] = "the part before the @ is longer than 64 characters",
	[ADDR_LOCAL_BAD_CHAR] = "the part before the @ contains a character that is not allowed",
	[ADDR_LOCAL_BAD_DOTS] = "the part before the @ starts or ends with a dot or has two dots in a row",
	[ADDR_LOCAL_BAD_QUOTE] = "the part before the @ has misplaced or unbalanced quotes",
	[ADDR_DOMAIN_EMPTY] = "nothing after the @",
	[ADDR_DOMAIN_LITERAL] = "IP address literals are not accepted as a domain",
	[ADDR_DOMAIN_TOO_LONG] = "the domain is longer than 253 characters",
	[ADDR_DOMAIN_LABEL_TOO_LONG] = "a part of the domain is longer than 63 characters",
	[ADDR_DOMAIN_EMPTY_LABEL] = "the domain starts or ends with a dot or has two dots in a row",
	[ADDR_DOMAIN_BAD_CHAR] = "the domain contains a character that is not allowed",
	[ADDR_DOMAIN_BAD_HYPHEN] = "a part of the domain starts or ends with a hyphen",
	[ADDR_DOMAIN_NUMERIC_TLD] = "the top-level domain is numeric",
	[ADDR_DOMAIN_IDN] = "the international domain name is not valid",
};

static int
addr_is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' ||
	    c == '\v' || c == '\f';
}

static int
addr_is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

static char
addr_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

/* RFC 5322 atext, ASCII part. */
static int
addr_is_atext(unsigned char c)
{
	return addr_is_alnum(c) || (c != '\0' &&
	    strchr("!#$%&'*+-/=?^_`{|}~", c) != NULL);
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid.
 * Refuses overlong forms, surrogates and code points above U+10FFFF. */
static size_t
addr_utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t c, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	} else if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		len = 2, c = p[0] & 0x1f, min = 0x80;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3, c = p[0] & 0x0f, min = 0x800;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4, c = p[0] & 0x07, min = 0x10000;
	} else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

static int
addr_utf8_valid(const char *s, size_t n)
{
	size_t i = 0, k;
	uint32_t cp;

	while (i < n) {
		if ((k = addr_utf8_seq((const unsigned char *)s + i,
		    n - i, &cp)) == 0)
			return 0;
		i += k;
	}
	return 1;
}

static void
addr_trim(const char **s, size_t *n)
{
	while (*n > 0 && addr_is_ws((unsigned char)**s))
		(*s)++, (*n)--;
	while (*n > 0 && addr_is_ws((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

/* A non-ASCII character allowed in a local part (not a C1 control). */
static size_t
addr_local_utf8(const char *s, size_t n)
{
	uint32_t cp;
	size_t k;

	k = addr_utf8_seq((const unsigned char *)s, n, &cp);
	if (k == 0 || (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return k;
}

/* Dot-atom of atext and UTF-8, or an error. Sets flags. */
static enum addr_err
addr_dot_atom(const char *s, size_t n, unsigned *flags)
{
	size_t i = 0, k;
	unsigned char c;

	while (i < n) {
		c = (unsigned char)s[i];
		if (c == '.') {
			if (i == 0 || s[i - 1] == '.' || i == n - 1)
				return ADDR_LOCAL_BAD_DOTS;
		} else if (addr_is_ws(c)) {
			return ADDR_WHITESPACE;
		} else if (c == '(' || c == ')') {
			return ADDR_COMMENT;
		} else if (c == '"') {
			return ADDR_LOCAL_BAD_QUOTE;
		} else if (c >= 0x80) {
			if ((k = addr_local_utf8(s + i, n - i)) == 0)
				return ADDR_LOCAL_BAD_CHAR;
			*flags |= ADDR_F_UTF8_LOCAL;
			i += k;
			continue;
		} else if (!addr_is_atext(c)) {
			return ADDR_LOCAL_BAD_CHAR;
		} else if (c == '+')
			*flags |= ADDR_F_TAG;
		i++;
	}
	return ADDR_OK;
}

/* RFC 5321 Quoted-string (qtextSMTP is %d32-33 / %d35-91 / %d93-126 plus
 * UTF-8; quoted-pairSMTP is "\" %d32-126). The quotes must enclose the whole
 * local part. */
static enum addr_err
addr_quoted(const char *s, size_t n, unsigned *flags)
{
	size_t i = 1, k;
	unsigned char c;

	while (i < n) {
		c = (unsigned char)s[i];
		if (c == '"')
			break;
		if (c == '\\') {
			if (i + 1 >= n)
				return ADDR_LOCAL_BAD_QUOTE;
			c = (unsigned char)s[i + 1];
			if (c < 32 || c > 126)
				return addr_is_ws(c) ? ADDR_WHITESPACE :
				    ADDR_LOCAL_BAD_CHAR;
			i += 2;
			continue;
		}
		if (c >= 0x80) {
			if ((k = addr_local_utf8(s + i, n - i)) == 0)
				return ADDR_LOCAL_BAD_CHAR;
			*flags |= ADDR_F_UTF8_LOCAL;
			i += k;
			continue;
		}
		if (c == '\t' || c == '\r' || c == '\n')
			return ADDR_WHITESPACE;
		if (c < 32 || c == 127)
			return ADDR_LOCAL_BAD_CHAR;
		i++;
	}
	if (i >= n || i != n - 1)
		return ADDR_LOCAL_BAD_QUOTE;	/* unterminated, or text after */
	if (n == 2)
		return ADDR_LOCAL_EMPTY;	/* "" is no mailbox in practice */
	*flags |= ADDR_F_QUOTED;
	return ADDR_OK;
}

static enum addr_err
addr_local_check(const char *s, size_t n, unsigned *flags)
{
	if (n == 0)
		return ADDR_LOCAL_EMPTY;
	if (s[0] == '"')
		return addr_quoted(s, n, flags);
	return addr_dot_atom(s, n, flags);
}

/* Structural checks on an A-label (ASCII, lower-case) domain. */
static enum addr_err
addr_ascii_check(const char *s, size_t n)
{
	size_t i, start = 0, j;
	int digits;

	if (n > ADDR_ASCII_DOMAIN_MAX)
		return ADDR_DOMAIN_TOO_LONG;
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (i == start)
			return ADDR_DOMAIN_EMPTY_LABEL;
		if (i - start > ADDR_LABEL_MAX)
			return ADDR_DOMAIN_LABEL_TOO_LONG;
		for (j = start; j < i; j++)
			if (!addr_is_alnum((unsigned char)s[j]) && s[j] != '-')
				return ADDR_DOMAIN_BAD_CHAR;
		if (s[start] == '-' || s[i - 1] == '-')
			return ADDR_DOMAIN_BAD_HYPHEN;
		start = i + 1;
	}
	/* The last label (start of the TLD is after the last dot). */
	for (i = n; i > 0 && s[i - 1] != '.'; i--)
		;
	digits = 1;
	for (j = i; j < n; j++)
		if (s[j] < '0' || s[j] > '9')
			digits = 0;
	if (digits)
		return ADDR_DOMAIN_NUMERIC_TLD;
	return ADDR_OK;
}

static enum addr_err
addr_idn2_err(int rc)
{
	switch (rc) {
	case IDN2_TOO_BIG_LABEL:
	case IDN2_PUNYCODE_BIG_OUTPUT:	/* the A-label would pass 63 */
		return ADDR_DOMAIN_LABEL_TOO_LONG;
	case IDN2_TOO_BIG_DOMAIN:
		return ADDR_DOMAIN_TOO_LONG;
	case IDN2_HYPHEN_STARTEND:
		return ADDR_DOMAIN_BAD_HYPHEN;
	default:
		return ADDR_DOMAIN_IDN;
	}
}

/* Validates the domain s[0..n) (valid UTF-8, no trailing root dot) and
 * fills d. */
static enum addr_err
addr_domain_check(const char *s, size_t n, struct addr_domain *d)
{
	char tmp[ADDR_DOMAIN_MAX + 1];
	char *o = NULL;
	size_t i, k, alen;
	int idn = 0, rc;
	unsigned char c;
	enum addr_err e;

	if (n == 0)
		return ADDR_DOMAIN_EMPTY;
	if (s[0] == '[')
		return ADDR_DOMAIN_LITERAL;
	for (i = 0; i < n; i += k) {
		c = (unsigned char)s[i];
		k = 1;
		if (c == '.') {
			if (i == 0 || s[i - 1] == '.' || i == n - 1)
				return ADDR_DOMAIN_EMPTY_LABEL;
		} else if (addr_is_alnum(c) || c == '-') {
			;
		} else if (addr_is_ws(c)) {
			return ADDR_WHITESPACE;
		} else if (c == '(' || c == ')') {
			return ADDR_COMMENT;
		} else if (c >= 0x80) {
			uint32_t cp;

			if ((k = addr_utf8_seq((const unsigned char *)s + i,
			    n - i, &cp)) == 0)
				return ADDR_BAD_UTF8;
			idn = 1;
		} else
			return ADDR_DOMAIN_BAD_CHAR;
	}
	if (n > ADDR_DOMAIN_MAX)
		return ADDR_DOMAIN_TOO_LONG;
	/* An ASCII label "xn--..." is an A-label: libidn2 validates it. */
	for (i = 0; !idn && i + 4 <= n; i++)
		if ((i == 0 || s[i - 1] == '.') &&
		    addr_lower(s[i]) == 'x' && addr_lower(s[i + 1]) == 'n' &&
		    s[i + 2] == '-' && s[i + 3] == '-')
			idn = 1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (idn) {
		rc = idn2_to_ascii_8z(tmp, &o,
		    IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
		if (rc != IDN2_OK) {
			free(o);
			return addr_idn2_err(rc);
		}
		alen = strlen(o);
		if (alen > ADDR_ASCII_DOMAIN_MAX) {
			free(o);
			return ADDR_DOMAIN_TOO_LONG;
		}
		for (i = 0; i < alen; i++)
			d->ascii[i] = addr_lower(o[i]);
		d->ascii[alen] = '\0';
		free(o);
		o = NULL;
	} else {
		if (n > ADDR_ASCII_DOMAIN_MAX)
			return ADDR_DOMAIN_TOO_LONG;
		alen = n;
		for (i = 0; i < n; i++)
			d->ascii[i] = addr_lower(s[i]);
		d->ascii[n] = '\0';
	}
	if ((e = addr_ascii_check(d->ascii, alen)) != ADDR_OK)
		return e;
	/* Only A-labels make an IDN: a mapped "ＥＸＡＭＰＬＥ.com" is not one. */
	idn = 0;
	for (i = 0; i + 4 <= alen; i++)
		if ((i == 0 || d->ascii[i - 1] == '.') &&
		    memcmp(d->ascii + i, "xn--", 4) == 0)
			idn = 1;
	if (idn) {
		/* libidn2 accepts some A-labels whose U-label it would refuse
		 * (e.g. "xn--" labels that decode to U+00AF): demand that the
		 * U-label form converts back to the very same A-labels. */
		d->flags |= ADDR_F_IDN;
		rc = idn2_to_unicode_8z8z(d->ascii, &o, 0);
		if (rc != IDN2_OK || (k = strlen(o)) > ADDR_DOMAIN_MAX) {
			free(o);
			return ADDR_DOMAIN_IDN;
		}
		memcpy(d->domain, o, k + 1);
		free(o);
		o = NULL;
		rc = idn2_to_ascii_8z(d->domain, &o,
		    IDN2_NONTRANSITIONAL | IDN2_NFC_INPUT);
		if (rc != IDN2_OK || strcmp(o, d->ascii) != 0) {
			free(o);
			return ADDR_DOMAIN_IDN;
		}
		free(o);
	} else
		memcpy(d->domain, d->ascii, alen + 1);
	return ADDR_OK;
}

enum addr_err
addr_domain_parsen(const char *s, size_t n, struct addr_domain *out)
{
	enum addr_err e;

	memset(out, 0, sizeof(*out));
	addr_trim(&s, &n);
	if (n == 0)
		return ADDR_EMPTY;
	if (!addr_utf8_valid(s, n))
		return ADDR_BAD_UTF8;
	if (n > 1 && s[n - 1] == '.' && s[n - 2] != '.')
		n--;			/* one root dot: "example.com." */
	if ((e = addr_domain_check(s, n, out)) != ADDR_OK)
		memset(out, 0, sizeof(*out));
	return e;
}

enum addr_err
addr_domain_parse(const char *s, struct addr_domain *out)
{
	return addr_domain_parsen(s, strlen(s), out);
}

/* The de-duplication form of a local part: the content of a quoted string
 * when it would be a valid dot-atom anyway, then ASCII lower-cased. */
static void
addr_local_normalise(const char *local, size_t n, unsigned flags, char *out)
{
	char un[ADDR_LOCAL_MAX + 1];
	size_t i, m = 0;
	unsigned f = 0;

	if (flags & ADDR_F_QUOTED) {
		for (i = 1; i + 1 < n; i++) {
			if (local[i] == '\\')
				i++;
			un[m++] = local[i];
		}
		if (m > 0 && addr_dot_atom(un, m, &f) == ADDR_OK) {
			local = un;
			n = m;
		}
	}
	for (i = 0; i < n; i++)
		out[i] = addr_lower(local[i]);
	out[n] = '\0';
}

static size_t
addr_max3(size_t a, size_t b, size_t c)
{
	return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

enum addr_err
addr_parsen(const char *s, size_t n, struct addr *out)
{
	struct addr_domain d;
	const char *at, *dom;
	size_t ln, dn, i, dl, al;
	unsigned flags = 0;
	enum addr_err e;

	memset(out, 0, sizeof(*out));
	memset(&d, 0, sizeof(d));
	i = n;
	addr_trim(&s, &n);
	if (n != i)
		flags |= ADDR_F_TRIMMED;
	if (n == 0)
		return ADDR_EMPTY;
	if (!addr_utf8_valid(s, n))
		return ADDR_BAD_UTF8;
	/* The last "@": a quoted local part may contain "@", a domain never. */
	at = NULL;
	for (i = n; i > 0; i--)
		if (s[i - 1] == '@') {
			at = s + i - 1;
			break;
		}
	if (at == NULL)
		return ADDR_NO_AT;
	ln = (size_t)(at - s);
	dom = at + 1;
	dn = n - ln - 1;
	if ((e = addr_local_check(s, ln, &flags)) != ADDR_OK)
		return e;
	if (ln > ADDR_LOCAL_MAX)
		return ADDR_LOCAL_TOO_LONG;
	if ((e = addr_domain_check(dom, dn, &d)) != ADDR_OK)
		return e;
	dl = strlen(d.domain);
	al = strlen(d.ascii);
	if (ln + 1 + addr_max3(dn, dl, al) > ADDR_MAX)
		return ADDR_TOO_LONG;
	flags |= d.flags;
	memcpy(out->local, s, ln);
	out->local[ln] = '\0';
	memcpy(out->domain, d.domain, dl + 1);
	memcpy(out->ascii_domain, d.ascii, al + 1);
	memcpy(out->address, s, ln);
	out->address[ln] = '@';
	memcpy(out->address + ln + 1, d.domain, dl + 1);
	memcpy(out->smtp_path, s, ln);
	out->smtp_path[ln] = '@';
	memcpy(out->smtp_path + ln + 1, d.ascii, al + 1);
	addr_local_normalise(s, ln, flags, out->normalised);
	i = strlen(out->normalised);
	out->normalised[i] = '@';
	memcpy(out->normalised + i + 1, d.ascii, al + 1);
	out->flags = flags;
	return ADDR_OK;
}

enum addr_err
addr_parse(const char *s, struct addr *out)
{
	return addr_parsen(s, strlen(s), out);
}

enum addr_err
addr_normalise(const char *s, char *out, size_t outsz)
{
	struct addr a;
	enum addr_err e;
	size_t n;

	if (outsz > 0)
		out[0] = '\0';
	if ((e = addr_parse(s, &a)) != ADDR_OK)
		return e;
	n = strlen(a.normalised);
	if (n >= outsz)
		return ADDR_TOO_LONG;
	memcpy(out, a.normalised, n + 1);
	return ADDR_OK;
}
