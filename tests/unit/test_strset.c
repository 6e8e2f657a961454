/* test_strset.c: a set of caller-stored strings: members are found by
 * their string (the caller's same() decides among equal hashes), strings
 * never added are not, a quarter of a million members grow the table
 * without losing one, and the size it grows to is known beforehand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strset.h"

#define N 250000

static char (*words)[16];

static int
same(void *arg, uint32_t id, const char *s, size_t n)
{
	(void)arg;
	return strlen(words[id]) == n && memcmp(words[id], s, n) == 0;
}

/* strset_has: the strings strset_add copied in, and no other. */
static void
test_strset_has_what_was_added(void **state)
{
	struct strset *s = strset_new(0);
	char w[16];
	unsigned i;

	(void)state;
	assert_non_null(s);
	for (i = 0; i < 1000; i++) {
		snprintf(w, sizeof(w), "a%u@x", i);
		assert_int_equal(strset_has(s, w, strlen(w)), 0);
		assert_int_equal(strset_add(s, w, strlen(w)), 1);
		assert_int_equal(strset_has(s, w, strlen(w)), 1);
	}
	for (i = 0; i < 1000; i++) {
		snprintf(w, sizeof(w), "a%u@x", i);
		assert_int_equal(strset_has(s, w, strlen(w)), 1);
		/* a prefix or an extension of a member is not one */
		assert_int_equal(strset_has(s, w, strlen(w) - 1), 0);
		snprintf(w, sizeof(w), "a%u@xy", i);
		assert_int_equal(strset_has(s, w, strlen(w)), 0);
	}
	assert_int_equal(strset_count(s), 1000);
	strset_free(s);
}

static void
test_strset_finds_members_and_only_them(void **state)
{
	struct strset *s = strset_new(0);
	uint32_t id, i;
	char other[16];

	(void)state;
	assert_non_null(s);
	assert_non_null(words = calloc(N, sizeof(*words)));
	for (i = 0; i < N; i++) {
		snprintf(words[i], sizeof(words[i]), "w%u", i);
		assert_int_equal(strset_find(s, strset_hash(words[i],
		    strlen(words[i])), words[i], strlen(words[i]), same, NULL,
		    &id), 0);
		assert_int_equal(strset_insert(s, strset_hash(words[i],
		    strlen(words[i])), i), 0);
	}
	assert_int_equal(strset_count(s), N);
	/* 250,000 members in 524,288 slots: 12,144 more fit, not 12,145 */
	assert_int_equal(strset_grow_bytes(s, 12144), 0);
	assert_int_equal(strset_grow_bytes(s, 12145), 1048576 * 8);
	for (i = 0; i < N; i++) {
		id = UINT32_MAX;
		assert_int_equal(strset_find(s, strset_hash(words[i],
		    strlen(words[i])), words[i], strlen(words[i]), same, NULL,
		    &id), 1);
		assert_int_equal(id, i);
		snprintf(other, sizeof(other), "x%u", i);
		assert_int_equal(strset_find(s, strset_hash(other,
		    strlen(other)), other, strlen(other), same, NULL, &id), 0);
	}
	strset_free(s);
	free(words);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strset_finds_members_and_only_them),
		cmocka_unit_test(test_strset_has_what_was_added),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
