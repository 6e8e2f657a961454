/* strparse.h: range-checked number parsing and small string helpers. */
#ifndef SVC_STRPARSE_H
#define SVC_STRPARSE_H
#include <stddef.h>

int	 strparse_long(const char *, long min, long max, long *out);
int	 strparse_bool(const char *, int *out);
char	*strparse_trim(char *);
int	 strparse_ieq(const char *, const char *);
int	 strparse_consttime_eq(const void *, const void *, size_t);
/* Copies src (NULL: "") into dst of sz bytes, cut to fit at a UTF-8
 * character boundary (strparse_utf8_cut), NUL-terminated. */
void	 strparse_copy(char *dst, size_t sz, const char *src);
/* The length of s[0..n) (UTF-8) cut to at most max bytes at a character
 * boundary: never inside a character. */
size_t	 strparse_utf8_cut(const char *s, size_t n, size_t max);
/* The characters (code points) of UTF-8 text, -1 when it is not valid
 * UTF-8 (overlong forms and surrogates included). */
long	 strparse_utf8_chars(const char *);
/* A list of durations separated by commas and/or white space, each a
 * whole number of seconds with an optional unit s, m, h or d ("60, 5m
 * 2h"), from 1 second to 30 days. At most max of them go to out (seconds);
 * *n says how many. 0, or -1 for anything else (an empty list, a bad
 * entry, more than max entries). */
#define STRPARSE_DURATION_MAX (30L * 86400)
int	 strparse_durations(const char *, long *out, size_t max, size_t *n);
/* The length of an RFC 3463 enhanced status code at s ("5.1.1": class 2,
 * 4 or 5, then two parts of 1 to 3 digits), 0 when there is none. */
size_t	 strparse_enhanced_len(const char *s);
/* The SMTP reply code text starts with ("550 5.1.1 ...", "250-OK": 200 to
 * 599, then a space or '-'), 0 when it does not. */
int	 strparse_reply_code(const char *text);
#endif
