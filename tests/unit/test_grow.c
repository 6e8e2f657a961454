/* test_grow.c: growing arrays: capacity doubles from the first size only
 * when full, elements already there are kept, and a size that would
 * overflow is refused with the array left as it was. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "util/grow.h"

struct item {
	int	 a;
	char	 b[12];
};

static void
test_grow_doubles_when_full_and_keeps_elements(void **state)
{
	struct item *v = NULL;
	size_t n, cap = 0;

	(void)state;
	for (n = 0; n < 1000; n++) {
		assert_int_equal(grow(&v, n, &cap, sizeof(*v), 4), 0);
		assert_true(cap > n);
		/* capacity is 4, 8, 16, ...: the smallest such above n */
		assert_true(cap == 4 || cap / 2 <= n);
		v[n].a = (int)n;
	}
	assert_int_equal(cap, 1024);
	for (n = 0; n < 1000; n++)
		assert_int_equal(v[n].a, (int)n);
	free(v);
}

static void
test_grow_does_nothing_with_room_left(void **state)
{
	int *v = malloc(8 * sizeof(*v)), *before = v;
	size_t cap = 8;

	(void)state;
	assert_non_null(v);
	assert_int_equal(grow(&v, 7, &cap, sizeof(*v), 4), 0);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, 8);
	free(v);
}

static void
test_grow_refuses_overflowing_sizes(void **state)
{
	char *v = malloc(16), *before = v;
	size_t cap = SIZE_MAX / 2 + 1;

	(void)state;
	assert_non_null(v);
	/* twice the capacity does not fit in size_t */
	assert_int_equal(grow(&v, cap, &cap, 1, 4), -1);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, SIZE_MAX / 2 + 1);
	cap = 16;
	/* 32 elements of SIZE_MAX / 16 bytes do not either */
	assert_int_equal(grow(&v, 16, &cap, SIZE_MAX / 16, 4), -1);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, 16);
	free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_doubles_when_full_and_keeps_elements),
		cmocka_unit_test(test_grow_does_nothing_with_room_left),
		cmocka_unit_test(test_grow_refuses_overflowing_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
