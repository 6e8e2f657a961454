/* strset.c: string set with open addressing and linear probing. The table
 * stays at most half full (it doubles), so probes stay short. A slot holds
 * a member's id plus one (0: empty) and its hash, so growing never reads
 * the strings again and a probe compares strings only when the hashes
 * match. The strings strset_add copies in live in one growing arena (their
 * id is the offset), so a million short keys cost two allocations plus the
 * table, not a million; strset_find and strset_insert leave the strings to
 * the caller. */
#include "util/strset.h"
#include "util/khash.h"
#include <stdlib.h>
#include <string.h>

struct strset_slot {
	uint32_t	 id1;		/* id + 1, 0: empty */
	uint32_t	 hash;
};

struct strset {
	struct strset_slot *slots;
	size_t		 nslots, count;
	size_t		 probes;	/* see strset_probes */
	char		*arena;		/* strset_add's strings */
	size_t		 used, cap;
};

struct strset *
strset_new(size_t expected)
{
	struct strset *s = calloc(1, sizeof(*s));
	size_t n = 64;

	if (s == NULL)
		return NULL;
	while (n < expected * 2)
		n *= 2;
	if ((s->slots = calloc(n, sizeof(*s->slots))) == NULL) {
		free(s);
		return NULL;
	}
	s->nslots = n;
	return s;
}

void
strset_free(struct strset *s)
{
	if (s == NULL)
		return;
	free(s->slots);
	free(s->arena);
	free(s);
}

uint32_t
strset_hash(const char *k, size_t n)
{
	return (uint32_t)khash(k, n);
}

/* The slot of the member that same() takes for k, or the empty slot
 * where k would go; *found says which. */
static size_t
strset_lookup(struct strset *s, uint32_t hash, const char *k, size_t n,
    strset_same_fn same, void *arg, int *found)
{
	size_t i = hash & (s->nslots - 1);

	*found = 0;
	for (; s->slots[i].id1 != 0; i = (i + 1) & (s->nslots - 1)) {
		if (s->slots[i].hash == hash &&
		    same(arg, s->slots[i].id1 - 1, k, n)) {
			*found = 1;
			break;
		}
		s->probes++;
	}
	return i;
}

/* Doubles the table when it would be more than half full with one more. */
static int
strset_room(struct strset *s)
{
	struct strset_slot *t;
	size_t n = s->nslots * 2, i, j;

	if ((s->count + 1) * 2 <= s->nslots)
		return 0;
	if ((t = calloc(n, sizeof(*t))) == NULL)
		return -1;
	for (i = 0; i < s->nslots; i++) {
		if (s->slots[i].id1 == 0)
			continue;
		for (j = s->slots[i].hash & (n - 1); t[j].id1 != 0;
		    j = (j + 1) & (n - 1))
			;
		t[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = t;
	s->nslots = n;
	return 0;
}

int
strset_find(struct strset *s, uint32_t hash, const char *k, size_t n,
    strset_same_fn same, void *arg, uint32_t *id)
{
	size_t i;
	int found;

	i = strset_lookup(s, hash, k, n, same, arg, &found);
	if (found)
		*id = s->slots[i].id1 - 1;
	return found;
}

int
strset_insert(struct strset *s, uint32_t hash, uint32_t id)
{
	size_t i;

	if (id == UINT32_MAX || strset_room(s) == -1)
		return -1;
	for (i = hash & (s->nslots - 1); s->slots[i].id1 != 0;
	    i = (i + 1) & (s->nslots - 1))
		;
	s->slots[i].id1 = id + 1;
	s->slots[i].hash = hash;
	s->count++;
	return 0;
}

/* strset_same_fn of strset_add: the string at offset id of the arena. */
static int
strset_arena_same(void *arg, uint32_t id, const char *k, size_t n)
{
	const char *e = ((const struct strset *)arg)->arena + id;

	return strncmp(e, k, n) == 0 && e[n] == '\0';
}

int
strset_add(struct strset *s, const char *k, size_t n)
{
	size_t ncap;
	uint32_t hash;
	char *na;
	int found;

	if (memchr(k, '\0', n) != NULL)
		n = strlen(k);
	hash = strset_hash(k, n);
	strset_lookup(s, hash, k, n, strset_arena_same, s, &found);
	if (found)
		return 0;
	if (s->used + n + 1 > s->cap) {
		ncap = s->cap ? s->cap * 2 : 4096;
		while (ncap < s->used + n + 1)
			ncap *= 2;
		if (ncap >= UINT32_MAX || (na = realloc(s->arena, ncap)) ==
		    NULL)
			return -1;
		s->arena = na;
		s->cap = ncap;
	}
	if (strset_insert(s, hash, (uint32_t)s->used) == -1)
		return -1;
	memcpy(s->arena + s->used, k, n);
	s->arena[s->used + n] = '\0';
	s->used += n + 1;
	return 1;
}

int
strset_has(struct strset *s, const char *k, size_t n)
{
	int found;

	if (memchr(k, '\0', n) != NULL)
		n = strlen(k);
	strset_lookup(s, strset_hash(k, n), k, n, strset_arena_same, s,
	    &found);
	return found;
}

size_t
strset_count(const struct strset *s)
{
	return s->count;
}

size_t
strset_probes(const struct strset *s)
{
	return s->probes;
}

size_t
strset_bytes(const struct strset *s)
{
	return sizeof(*s) + s->nslots * sizeof(*s->slots) + s->cap;
}

size_t
strset_grow_bytes(const struct strset *s, size_t more)
{
	size_t n = s->nslots;

	while ((s->count + more) * 2 > n)
		n *= 2;
	return n == s->nslots ? 0 : n * sizeof(*s->slots);
}
