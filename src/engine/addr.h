/* addr.h: email address syntax (RFC 5321/5322 practical subset, RFC 6531
 * UTF-8 local parts, IDNA2008 domains through libidn2). Pure functions: no
 * network, no allocation visible to the caller. */
#ifndef SVC_ADDR_H
#define SVC_ADDR_H
#include <stddef.h>

#define ADDR_LOCAL_MAX		64	/* octets, as written (RFC 5321 4.5.3.1.1) */
#define ADDR_DOMAIN_MAX		255	/* octets of the domain as given (UTF-8) */
#define ADDR_ASCII_DOMAIN_MAX	253	/* A-label form: 255 wire octets = 253 text */
#define ADDR_LABEL_MAX		63	/* octets of one A-label */
#define ADDR_MAX		254	/* local "@" domain (RFC 5321 path minus <>) */

/* Why an address (or a bare domain) is not acceptable. ADDR_OK is 0. */
enum addr_err {
	ADDR_OK,
	ADDR_EMPTY,			/* nothing left after trimming */
	ADDR_NO_AT,			/* no "@" at all */
	ADDR_TOO_LONG,			/* whole address > ADDR_MAX octets */
	ADDR_BAD_UTF8,			/* input is not valid UTF-8 */
	ADDR_WHITESPACE,		/* white space or folding outside quotes */
	ADDR_COMMENT,			/* "(" or ")" outside quotes: comments */
	ADDR_LOCAL_EMPTY,		/* nothing before the "@" (or "") */
	ADDR_LOCAL_TOO_LONG,		/* local part > ADDR_LOCAL_MAX octets */
	ADDR_LOCAL_BAD_CHAR,		/* character not allowed in a dot-atom */
	ADDR_LOCAL_BAD_DOTS,		/* leading, trailing or consecutive dots */
	ADDR_LOCAL_BAD_QUOTE,		/* unbalanced or misplaced quoting */
	ADDR_DOMAIN_EMPTY,		/* nothing after the "@" */
	ADDR_DOMAIN_LITERAL,		/* [1.2.3.4] style domains: refused */
	ADDR_DOMAIN_TOO_LONG,		/* > ADDR_DOMAIN_MAX or A-labels > 253 */
	ADDR_DOMAIN_LABEL_TOO_LONG,	/* an A-label > 63 octets */
	ADDR_DOMAIN_EMPTY_LABEL,	/* leading, trailing or consecutive dots */
	ADDR_DOMAIN_BAD_CHAR,		/* not a letter, digit, hyphen or UTF-8 */
	ADDR_DOMAIN_BAD_HYPHEN,		/* label starts or ends with "-" */
	ADDR_DOMAIN_NUMERIC_TLD,	/* last label all digits (an IP, "123") */
	ADDR_DOMAIN_IDN,		/* IDNA2008/UTS#46 conversion refused it */
	ADDR_ERR__MAX
};
/* Short snake_case names ("no_at") for logs and JSON. */
extern const char *const addr_err_names[ADDR_ERR__MAX];
/* One-sentence English explanations for API messages. */
extern const char *const addr_err_messages[ADDR_ERR__MAX];

/* struct addr flags */
#define ADDR_F_QUOTED		0x01u	/* local part is a quoted string */
#define ADDR_F_UTF8_LOCAL	0x02u	/* local part has non-ASCII: needs SMTPUTF8 */
#define ADDR_F_IDN		0x04u	/* domain has U-labels or A-labels */
#define ADDR_F_TRIMMED		0x08u	/* white space was trimmed off the input */
#define ADDR_F_TAG		0x10u	/* unquoted local part contains "+" */

struct addr_domain {
	/* Unicode form, lower-cased (UTS#46-mapped when it is an IDN). */
	char		domain[ADDR_DOMAIN_MAX + 1];
	/* A-label (xn--) form, lower-cased: what DNS and plain SMTP use. */
	char		ascii[ADDR_ASCII_DOMAIN_MAX + 1];
	unsigned	flags;		/* ADDR_F_IDN */
};

struct addr {
	/* Local part as written (quotes and escapes kept, case kept). */
	char		local[ADDR_LOCAL_MAX + 1];
	/* Unicode domain, lower-cased. */
	char		domain[ADDR_DOMAIN_MAX + 1];
	/* A-label domain, lower-cased. */
	char		ascii_domain[ADDR_ASCII_DOMAIN_MAX + 1];
	/* local@domain: the cleaned address for display and results. */
	char		address[ADDR_MAX + 1];
	/* local@ascii_domain: the SMTP path (RCPT TO, MAIL FROM). Always the
	 * A-label domain, which every server takes, SMTPUTF8 or not; only a
	 * UTF-8 local part still needs SMTPUTF8 (RFC 6531). */
	char		smtp_path[ADDR_MAX + 1];
	/* De-duplication key: ASCII-lower-cased local part (unquoted when
	 * the quotes were not needed) "@" A-label domain. */
	char		normalised[ADDR_MAX + 1];
	unsigned	flags;		/* ADDR_F_* */
};

/* Parses a NUL-terminated address. On anything but ADDR_OK, *out is zeroed. */
enum addr_err	 addr_parse(const char *, struct addr *out);
/* Same for a counted string (an embedded NUL is a bad character). */
enum addr_err	 addr_parsen(const char *, size_t, struct addr *out);
/* Writes the de-duplication key of an address into out (ADDR_MAX + 1
 * bytes); returns the parse error when the address is invalid. */
enum addr_err	 addr_normalise(const char *, char *out, size_t outsz);
/* Validates a bare domain (the domain-check endpoint): trimmed, one trailing
 * root dot allowed, otherwise the same rules as the domain of an address. */
enum addr_err	 addr_domain_parse(const char *, struct addr_domain *out);
enum addr_err	 addr_domain_parsen(const char *, size_t, struct addr_domain *out);
#endif
