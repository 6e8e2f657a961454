/* strset.h: a set of strings (open addressing, keyed hash: util/khash.h),
 * for de-duplicating large lists such as the addresses of a job. Strings
 * are copied in. */
#ifndef SVC_STRSET_H
#define SVC_STRSET_H
#include <stddef.h>

struct strset;

struct strset *strset_new(size_t expected);
void	 strset_free(struct strset *);
/* 1: added, 0: already there, -1: out of memory. */
int	 strset_add(struct strset *, const char *, size_t len);
size_t	 strset_count(const struct strset *);
/* Slots strset_add has stepped over so far, past the first it looked at:
 * about half the count when the hashes spread, the count squared over two
 * when they all collide (tests/unit/test_khash.c). */
size_t	 strset_probes(const struct strset *);
#endif
