/* unit_rand.h: the random numbers of the unit tests that try random inputs
 * (test_buckets.c, test_jsonw.c, test_verify_cache.c): a xorshift generator
 * that each program seeds with a fixed number of its own (unit_rand_seed,
 * in main), so every
 * run makes the same sequence and a failure repeats. Header only (each test
 * program is one file). */
#ifndef SVC_TESTS_UNIT_RAND_H
#define SVC_TESTS_UNIT_RAND_H
#include <stdint.h>

static uint64_t unit_rand_state;

/* Starts the sequence again from seed (not 0: xorshift stays at 0). */
static inline void
unit_rand_seed(uint64_t seed)
{
	unit_rand_state = seed;
}

/* The next number of the sequence. */
static inline uint32_t
unit_rand(void)
{
	unit_rand_state ^= unit_rand_state << 13;
	unit_rand_state ^= unit_rand_state >> 7;
	unit_rand_state ^= unit_rand_state << 17;
	return (uint32_t)(unit_rand_state >> 11);
}
#endif
