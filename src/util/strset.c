/* strset.c: string set with open addressing and linear probing. The table
 * stays at most half full (it doubles), so probes stay short; the strings
 * live in one growing arena so a million short keys cost two allocations
 * plus the table, not a million. */
#include "util/strset.h"
#include "util/khash.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct strset {
	uint32_t	*slots;		/* offset+1 into arena, 0: empty */
	size_t		 nslots, count;
	size_t		 probes;	/* see strset_probes */
	char		*arena;
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

/* Entries are stored as the string followed by a NUL. */
static int
strset_equal(const struct strset *s, uint32_t slot, const char *k, size_t n)
{
	const char *e = s->arena + slot - 1;

	return strncmp(e, k, n) == 0 && e[n] == '\0';
}

static int
strset_grow(struct strset *s)
{
	size_t n = s->nslots * 2, i, j;
	uint32_t *t = calloc(n, sizeof(*t));

	if (t == NULL)
		return -1;
	for (i = 0; i < s->nslots; i++) {
		if (s->slots[i] == 0)
			continue;
		const char *e = s->arena + s->slots[i] - 1;
		j = khash(e, strlen(e)) & (n - 1);
		while (t[j])
			j = (j + 1) & (n - 1);
		t[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = t;
	s->nslots = n;
	return 0;
}

int
strset_add(struct strset *s, const char *k, size_t n)
{
	size_t i, ncap;
	char *na;

	if (memchr(k, '\0', n) != NULL)
		n = strlen(k);
	i = khash(k, n) & (s->nslots - 1);
	while (s->slots[i]) {
		if (strset_equal(s, s->slots[i], k, n))
			return 0;
		i = (i + 1) & (s->nslots - 1);
		s->probes++;
	}
	if (s->used + n + 1 > s->cap) {
		ncap = s->cap ? s->cap * 2 : 4096;
		while (ncap < s->used + n + 1)
			ncap *= 2;
		if (ncap > UINT32_MAX || (na = realloc(s->arena, ncap)) == NULL)
			return -1;
		s->arena = na;
		s->cap = ncap;
	}
	memcpy(s->arena + s->used, k, n);
	s->arena[s->used + n] = '\0';
	s->slots[i] = (uint32_t)(s->used + 1);
	s->used += n + 1;
	s->count++;
	if (s->count * 2 > s->nslots && strset_grow(s) == -1)
		return -1;
	return 1;
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
