/* buckets.c: which buckets of svc-worker's domain table hold a domain (a
 * bit each, sched.h), so that the loop's walks over the table (the
 * scheduler, the next domain for a session, the sweep) step over the empty
 * ones: they visit the same buckets in the same order as a walk over every
 * bucket from the starting one, without reading the ~1,000 empty ones on
 * every turn of the loop. */
#include "worker/sched.h"

void
buckets_mark(struct process *p, unsigned b)
{
	uint64_t bit = (uint64_t)1 << (b % 64);

	if (p->hash[b] != NULL)
		p->hash_used[b / 64] |= bit;
	else
		p->hash_used[b / 64] &= ~bit;
}

/* The first bucket in [b, lim) that holds a domain, or lim. */
static unsigned
buckets_used_from(const struct process *p, unsigned b, unsigned lim)
{
	uint64_t w;

	while (b < lim) {
		w = p->hash_used[b / 64] >> (b % 64);
		if (w != 0) {
			b += (unsigned)__builtin_ctzll(w);
			return b < lim ? b : lim;
		}
		b = (b / 64 + 1) * 64;
	}
	return lim;
}

/* From s->at on: start .. SCHED_HASH - 1, then 0 .. start - 1. */
static int
buckets_find(const struct process *p, struct buckets_scan *s)
{
	unsigned lim;

	for (;;) {
		lim = s->wrapped ? s->start : SCHED_HASH;
		if ((s->at = buckets_used_from(p, s->at, lim)) < lim)
			return (int)s->at;
		if (s->wrapped)
			return -1;
		s->wrapped = 1;
		s->at = 0;
	}
}

int
buckets_first(const struct process *p, struct buckets_scan *s,
    unsigned start)
{
	s->start = start % SCHED_HASH;
	s->at = s->start;
	s->wrapped = 0;
	return buckets_find(p, s);
}

int
buckets_next(const struct process *p, struct buckets_scan *s)
{
	s->at++;
	return buckets_find(p, s);
}
