/* test_buckets.c: the walk over svc-worker's domain table
 * (src/worker/buckets.c) visits exactly the buckets that hold a domain,
 * in the order of a walk over every bucket from the starting one (the
 * order the scheduler's fairness rests on), for random tables, as
 * domains come and go, from every kind of start. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "worker/sched.h"
#include "unit_rand.h"

/* The walk as the loop made it before: every bucket, empty or not. */
static size_t
walk_all(const struct process *p, unsigned start, int *out)
{
	size_t n = 0;
	unsigned i, b;

	for (i = 0; i < SCHED_HASH; i++) {
		b = (start + i) % SCHED_HASH;
		if (p->hash[b] != NULL)
			out[n++] = (int)b;
	}
	return n;
}

static size_t
walk_marked(const struct process *p, unsigned start, int *out)
{
	struct buckets_scan s;
	size_t n = 0;
	int b;

	for (b = buckets_first(p, &s, start); b >= 0; b = buckets_next(p, &s))
		out[n++] = b;
	return n;
}

static void
check_walks(const struct process *p, unsigned start)
{
	int want[SCHED_HASH], got[SCHED_HASH];
	size_t nw = walk_all(p, start, want), ng = walk_marked(p, start, got);

	assert_int_equal(ng, nw);
	assert_memory_equal(got, want, nw * sizeof(int));
}

static void
test_buckets_walk_as_a_walk_over_every_bucket(void **st)
{
	static struct process_domain dom;	/* only its address is used */
	static const unsigned starts[] = { 0, 1, 63, 64, 65, 511, 1022, 1023 };
	struct process *p = calloc(1, sizeof(*p));
	unsigned b;
	size_t i, k;
	int round, fill;

	(void)st;
	assert_non_null(p);
	for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
		check_walks(p, starts[i]);		/* empty table */
	for (round = 0; round < 400; round++) {
		/* from nearly empty to nearly full and back */
		fill = round % 40 < 20 ? round % 20 : 20 - round % 20;
		for (k = 0; k < 64; k++) {
			b = unit_rand() % SCHED_HASH;
			p->hash[b] = (int)(unit_rand() % 20) < fill ?
			    &dom : NULL;
			buckets_mark(p, b);
		}
		if (round % 50 == 7)		/* every bucket, or the edges */
			for (b = 0; b < SCHED_HASH; b++) {
				p->hash[b] = round % 100 == 7 || b % 64 == 0 ||
				    b % 64 == 63 ? &dom : NULL;
				buckets_mark(p, b);
			}
		for (i = 0; i < sizeof(starts) / sizeof(starts[0]); i++)
			check_walks(p, starts[i]);
		check_walks(p, unit_rand() % SCHED_HASH);
	}
	free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_walk_as_a_walk_over_every_bucket),
	};

	unit_rand_seed(0x853c49e6748fea9bULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
