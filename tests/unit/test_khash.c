/* test_khash.c: src/util/khash.c, the keyed hash: SipHash-2-4's reference
 * answers and byte order, a random per-process key (neither zero nor a
 * fixed one), the same hash for the same input, other hashes under another
 * key, and why the key matters: strings built to collide under the FNV-1a
 * the tables used before spread out under the key, and a strset of them
 * still de-duplicates without stepping over each other. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/khash.h"
#include "util/strset.h"

/* SipHash's reference key 00 01 .. 0f. */
static const uint8_t ref_key[KHASH_KEY_LEN] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
};

/* The old tables' FNV-1a-64, as someone choosing inputs could compute it:
 * from h (the offset basis at first), through the string s. */
#define FNV_BASIS 1469598103934665603ULL

static uint64_t
fnv1a64(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

#define COLL_N		1024
#define COLL_LEN	32

/*
 * COLL_N distinct addresses whose FNV-1a-64 hashes share their low 16 bits,
 * so they had one home slot in every table of up to 65536 slots. The low
 * 16 bits of FNV-1a depend only on the low 16 bits of the state, and both
 * steps of a byte (xor, times an odd prime) are one-to-one on them: after
 * "u<i>" and two letters, a third letter b makes the state xor b equal U
 * exactly when the state's high byte is U's and b is its low byte xor U's;
 * the rest of b's step and the fixed "@example.com" then take every such
 * string from U to the same value.
 */
static void
fnv_colliding(char out[COLL_N][COLL_LEN])
{
	static const char alnum[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	const uint16_t U = 0x6b00;
	size_t got = 0, i, j;
	unsigned pfx;
	uint64_t h, h2;
	char p[16], two[3] = "";
	int b;

	for (pfx = 0; got < COLL_N; pfx++) {
		snprintf(p, sizeof(p), "u%u", pfx);
		h = fnv1a64(FNV_BASIS, p);
		for (i = 0; i < 36 && got < COLL_N; i++) {
			for (j = 0; j < 36 && got < COLL_N; j++) {
				two[0] = alnum[i];
				two[1] = alnum[j];
				h2 = fnv1a64(h, two);
				if ((h2 & 0xff00) != U)
					continue;
				b = (int)((h2 ^ U) & 0xff);
				if (b == 0 || strchr(alnum, b) == NULL)
					continue;
				snprintf(out[got++], COLL_LEN,
				    "%s%c%c%c@example.com", p, alnum[i],
				    alnum[j], b);
			}
		}
	}
}

/* Runs first: before any test sets a key. */
static void
test_khash_key_is_random_per_process(void **state)
{
	uint8_t zero[KHASH_KEY_LEN] = { 0 };
	unsigned char raw[8];
	uint64_t h, other;
	int i;

	(void)state;
	assert_int_equal(khash_init(), 0);
	assert_int_equal(khash_init(), 0);	/* once is enough, twice harmless */
	h = khash("alice@example.com", 17);
	assert_true(h == khash("alice@example.com", 17));
	/* not the all-zero key (what a failed set-up would leave) ... */
	crypto_shorthash(raw, (const unsigned char *)"alice@example.com", 17,
	    zero);
	for (other = 0, i = 7; i >= 0; i--)
		other = other << 8 | raw[i];
	assert_true(h != other);
	/* ... nor the reference key */
	crypto_shorthash(raw, (const unsigned char *)"alice@example.com", 17,
	    ref_key);
	for (other = 0, i = 7; i >= 0; i--)
		other = other << 8 | raw[i];
	assert_true(h != other);
}

static void
test_khash_siphash24_reference_vectors(void **state)
{
	/* From the SipHash paper's reference vectors: the empty message and
	 * 00 01 .. 0e, under key 00 01 .. 0f. SipHash writes its 64-bit
	 * result little-endian, and libsodium does the same. */
	static const unsigned char ref15[8] = {
		0xe5, 0x45, 0xbe, 0x49, 0x61, 0xca, 0x29, 0xa1,
	};
	unsigned char msg[15], raw[8];
	int i;

	(void)state;
	for (i = 0; i < 15; i++)
		msg[i] = (unsigned char)i;
	crypto_shorthash(raw, msg, sizeof(msg), ref_key);
	assert_memory_equal(raw, ref15, 8);
	khash_set_key(ref_key);
	assert_true(khash(msg, sizeof(msg)) == 0xa129ca6149be45e5ULL);
	assert_true(khash("", 0) == 0x726fdb47dd0e0e31ULL);
	/* the same input, the same hash */
	assert_true(khash(msg, sizeof(msg)) == 0xa129ca6149be45e5ULL);
	assert_true(khash(msg, 14) != khash(msg, 15));
}

static void
test_khash_other_key_other_hashes(void **state)
{
	uint8_t k2[KHASH_KEY_LEN];
	static uint64_t h1[1000];
	char s[32];
	size_t i, moved = 0;

	(void)state;
	memcpy(k2, ref_key, sizeof(k2));
	k2[15] ^= 1;	/* one bit apart */
	khash_set_key(ref_key);
	for (i = 0; i < 1000; i++) {
		snprintf(s, sizeof(s), "user%zu@example.com", i);
		h1[i] = khash(s, strlen(s));
		assert_true(h1[i] == khash(s, strlen(s)));
	}
	khash_set_key(k2);
	for (i = 0; i < 1000; i++) {
		snprintf(s, sizeof(s), "user%zu@example.com", i);
		assert_true(khash(s, strlen(s)) != h1[i]);
		/* and so, nearly always, another slot of a 1024-slot table */
		if ((khash(s, strlen(s)) & 1023) != (h1[i] & 1023))
			moved++;
	}
	assert_true(moved > 950);
}

static void
test_khash_spreads_fnv_collisions(void **state)
{
	static char coll[COLL_N][COLL_LEN];
	static uint8_t used[4096];
	uint64_t f0;
	size_t i, slots = 0;

	(void)state;
	fnv_colliding(coll);
	f0 = fnv1a64(FNV_BASIS, coll[0]);
	for (i = 0; i < COLL_N; i++) {
		/* they do collide under FNV-1a, and are all different */
		assert_true((fnv1a64(FNV_BASIS, coll[i]) & 0xffff) ==
		    (f0 & 0xffff));
		if (i > 0)
			assert_string_not_equal(coll[i], coll[i - 1]);
	}
	/* Under the key they take about as many of 4096 slots as random
	 * positions would (906 on average), not one. */
	khash_set_key(ref_key);
	memset(used, 0, sizeof(used));
	for (i = 0; i < COLL_N; i++)
		used[khash(coll[i], strlen(coll[i])) & 4095] = 1;
	for (i = 0; i < 4096; i++)
		slots += used[i];
	assert_true(slots > 850);
}

static void
test_khash_strset_of_fnv_collisions_probes_little_and_dedups(void **state)
{
	static char coll[COLL_N][COLL_LEN];
	struct strset *s;
	size_t i;

	(void)state;
	fnv_colliding(coll);
	khash_set_key(ref_key);
	assert_non_null(s = strset_new(0));
	for (i = 0; i < COLL_N; i++)
		assert_int_equal(strset_add(s, coll[i], strlen(coll[i])), 1);
	for (i = 0; i < COLL_N; i++)
		assert_int_equal(strset_add(s, coll[i], strlen(coll[i])), 0);
	/* a prefix of a member is not a member */
	assert_int_equal(strset_add(s, coll[0], strlen(coll[0]) - 1), 1);
	assert_int_equal(strset_count(s), COLL_N + 1);
	/* Two adds of each string stepped over a few slots each; with the
	 * old hash every add walked the whole run of the strings before it,
	 * COLL_N * COLL_N steps in all. */
	assert_true(strset_probes(s) < 8 * COLL_N);
	strset_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_khash_key_is_random_per_process),
		cmocka_unit_test(test_khash_siphash24_reference_vectors),
		cmocka_unit_test(test_khash_other_key_other_hashes),
		cmocka_unit_test(test_khash_spreads_fnv_collisions),
		cmocka_unit_test(
		    test_khash_strset_of_fnv_collisions_probes_little_and_dedups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
