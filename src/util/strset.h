/* strset.h: a set of strings (open addressing, FNV-1a), for de-duplicating
 * large lists such as the addresses of a job. Strings are copied in. */
#ifndef SVC_STRSET_H
#define SVC_STRSET_H
#include <stddef.h>

struct strset;

struct strset *strset_new(size_t expected);
void	 strset_free(struct strset *);
/* 1: added, 0: already there, -1: out of memory. */
int	 strset_add(struct strset *, const char *, size_t len);
size_t	 strset_count(const struct strset *);
#endif
