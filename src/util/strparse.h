/* strparse.h: range-checked number parsing and small string helpers. */
#ifndef SVC_STRPARSE_H
#define SVC_STRPARSE_H
#include <stddef.h>

int	 strparse_long(const char *, long min, long max, long *out);
int	 strparse_bool(const char *, int *out);
char	*strparse_trim(char *);
int	 strparse_ieq(const char *, const char *);
int	 strparse_consttime_eq(const void *, const void *, size_t);
/* Copies src (NULL: "") into dst of sz bytes, cut to fit, NUL-terminated. */
void	 strparse_copy(char *dst, size_t sz, const char *src);
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
#endif
