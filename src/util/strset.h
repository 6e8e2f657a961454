/* strset.h: a set of strings (open addressing, keyed hash: util/khash.h),
 * for de-duplicating large lists such as the addresses of a job. Either
 * the set copies the strings in (strset_add), or the caller keeps them
 * (strset_find, strset_insert): then a member costs the set only its
 * 32-bit id, the caller's, and its hash, and the caller's same() tells
 * whether a member of the same hash is the string looked for. One set
 * uses one of the two ways. */
#ifndef SVC_STRSET_H
#define SVC_STRSET_H
#include <stddef.h>
#include <stdint.h>

struct strset;

struct strset *strset_new(size_t expected);
void	 strset_free(struct strset *);
/* 1: added, 0: already there, -1: out of memory. */
int	 strset_add(struct strset *, const char *, size_t len);
/* 1 when strset_add added this string, else 0. */
int	 strset_has(struct strset *, const char *, size_t len);
size_t	 strset_count(const struct strset *);
/* Slots strset_add has stepped over so far, past the first it looked at:
 * about half the count when the hashes spread, the count squared over two
 * when they all collide (tests/unit/test_khash.c). */
size_t	 strset_probes(const struct strset *);
/* The memory the set holds: its table and strset_add's strings. */
size_t	 strset_bytes(const struct strset *);
/* The size of the table that more members would make it grow to, 0 when
 * they fit (while it grows, the old table is held too). */
size_t	 strset_grow_bytes(const struct strset *, size_t more);

/* Strings kept by the caller: 1 when member id is the string s of n
 * bytes, else 0. */
typedef int (*strset_same_fn)(void *arg, uint32_t id, const char *s,
	    size_t n);
uint32_t strset_hash(const char *, size_t);
/* 1 and *id when a member of that hash is the same as s, 0 when none. */
int	 strset_find(struct strset *, uint32_t hash, const char *, size_t,
	    strset_same_fn, void *arg, uint32_t *id);
/* Adds member id (the caller knows it is not there; id < UINT32_MAX):
 * 0, or -1 when out of memory, the set unchanged. */
int	 strset_insert(struct strset *, uint32_t hash, uint32_t id);
#endif
