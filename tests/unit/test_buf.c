/* test_buf.c: the growable buffer of src/util/buf.c: the size cap (an append
 * that would pass max fails and leaves the buffer exactly as it was), growth
 * through printf, NUL termination, reset, and steal handing over ownership. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

/* An append of n bytes to a buffer holding len bytes under cap max. */
struct capcase {
	size_t	 max;
	size_t	 len;		/* bytes already in the buffer */
	size_t	 add;		/* bytes appended */
	int	 want;		/* 0 accepted, -1 refused */
};

static const struct capcase cap_cases[] = {
	{ 0, 0, 0, 0 },		/* empty append always fits */
	{ 0, 0, 1, -1 },
	{ 1, 0, 1, 0 },
	{ 1, 1, 1, -1 },
	{ 10, 0, 10, 0 },	/* exactly max */
	{ 10, 0, 11, -1 },	/* one past max */
	{ 10, 5, 5, 0 },
	{ 10, 5, 6, -1 },
	{ 10, 10, 0, 0 },
	{ 10, 10, 1, -1 },
	{ 100, 63, 1, 0 },	/* crosses the first 64-byte allocation */
	{ 100, 63, 37, 0 },
	{ 100, 63, 38, -1 },
	{ 4096, 4000, 96, 0 },
	{ 4096, 4000, 97, -1 },
};

static void
fill(struct buf *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		assert_int_equal(buf_putc(b, (char)('a' + i % 26)), 0);
}

static void
test_buf_append_refusing_to_pass_max_leaves_buffer_unchanged(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cap_cases) / sizeof(cap_cases[0]); i++) {
		const struct capcase *c = &cap_cases[i];
		struct buf b;
		char *add = malloc(c->add + 1), *before;
		size_t cap_before;

		assert_non_null(add);
		memset(add, 'Z', c->add);
		buf_init(&b, c->max);
		fill(&b, c->len);
		before = strdup(buf_str(&b));
		assert_non_null(before);
		cap_before = b.cap;
		print_message("case %zu: max %zu len %zu add %zu\n", i, c->max,
		    c->len, c->add);
		assert_int_equal(buf_append(&b, add, c->add), c->want);
		if (c->want == -1) {
			assert_int_equal(b.len, c->len);
			assert_int_equal(b.cap, cap_before);
			assert_string_equal(buf_str(&b), before);
		} else {
			assert_int_equal(b.len, c->len + c->add);
			assert_true(b.len <= c->max);
			assert_int_equal(strlen(buf_str(&b)), b.len);
			assert_memory_equal(buf_str(&b), before, c->len);
		}
		free(before);
		free(add);
		buf_free(&b);
	}
}

static void
test_buf_puts_putc_printf_respect_max(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 5);
	assert_int_equal(buf_puts(&b, "abc"), 0);
	assert_int_equal(buf_puts(&b, "def"), -1);
	assert_string_equal(buf_str(&b), "abc");
	assert_int_equal(buf_printf(&b, "%d", 123), -1);
	assert_string_equal(buf_str(&b), "abc");
	assert_int_equal(b.len, 3);
	assert_int_equal(buf_printf(&b, "%d", 12), 0);
	assert_string_equal(buf_str(&b), "abc12");
	assert_int_equal(buf_putc(&b, 'x'), -1);
	assert_string_equal(buf_str(&b), "abc12");
	buf_free(&b);
}

static void
test_buf_append_of_absurd_length_is_refused_without_max(void **state)
{
	struct buf b;
	static const char one[1] = { 'x' };

	(void)state;
	buf_init(&b, BUF_NOMAX);
	assert_int_equal(buf_puts(&b, "ab"), 0);
	/* len + n + 1 wraps around to 0 for n = SIZE_MAX - 2: must fail
	 * rather than "fit" in the current allocation and copy. */
	assert_int_equal(buf_append(&b, one, (size_t)-1), -1);
	assert_int_equal(buf_append(&b, one, (size_t)-2), -1);
	assert_int_equal(buf_append(&b, one, (size_t)-3), -1);
	assert_string_equal(buf_str(&b), "ab");
	buf_free(&b);
}

static void
test_buf_printf_grows_past_initial_allocation(void **state)
{
	struct buf b, want;
	int i;

	(void)state;
	buf_init(&b, BUF_NOMAX);
	buf_init(&want, BUF_NOMAX);
	for (i = 0; i < 1000; i++) {
		char tmp[32];
		int n = snprintf(tmp, sizeof(tmp), "%d,", i);

		assert_int_equal(buf_printf(&b, "%d,", i), 0);
		assert_int_equal(buf_append(&want, tmp, (size_t)n), 0);
		assert_int_equal(b.len, want.len);
		assert_true(b.cap > b.len);
	}
	assert_string_equal(buf_str(&b), buf_str(&want));
	/* A single printf much larger than the allocation. */
	buf_reset(&b);
	assert_int_equal(buf_printf(&b, "%5000s|", "x"), 0);
	assert_int_equal(b.len, 5001);
	assert_int_equal(strlen(buf_str(&b)), 5001);
	assert_int_equal(buf_str(&b)[4999], 'x');
	buf_free(&b);
	buf_free(&want);
}

static void
test_buf_str_of_fresh_buffer_is_empty_string(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 10);
	assert_null(b.data);
	assert_string_equal(buf_str(&b), "");
	buf_reset(&b);			/* no data yet: must not crash */
	assert_string_equal(buf_str(&b), "");
	assert_int_equal(buf_append(&b, "", 0), 0);
	assert_string_equal(buf_str(&b), "");
	buf_free(&b);
}

static void
test_buf_keeps_embedded_nul_bytes_and_terminates(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, BUF_NOMAX);
	assert_int_equal(buf_append(&b, "a\0b", 3), 0);
	assert_int_equal(b.len, 3);
	assert_memory_equal(b.data, "a\0b\0", 4);
	buf_free(&b);
}

static void
test_buf_reset_empties_but_keeps_max(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 4);
	assert_int_equal(buf_puts(&b, "abcd"), 0);
	buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(buf_str(&b), "");
	assert_int_equal(buf_puts(&b, "wxyz"), 0);
	assert_int_equal(buf_puts(&b, "!"), -1);
	assert_string_equal(buf_str(&b), "wxyz");
	buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
}

static void
test_buf_steal_hands_over_string_and_empties_buffer(void **state)
{
	struct buf b;
	char *s;

	(void)state;
	buf_init(&b, BUF_NOMAX);
	assert_int_equal(buf_printf(&b, "%s-%d", "key", 42), 0);
	s = buf_steal(&b);
	assert_string_equal(s, "key-42");
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
	/* The buffer is usable again and independent of the stolen string. */
	assert_int_equal(buf_puts(&b, "new"), 0);
	assert_string_equal(s, "key-42");
	assert_string_equal(buf_str(&b), "new");
	free(s);
	buf_free(&b);
}

static void
test_buf_steal_of_empty_buffer_returns_empty_string(void **state)
{
	struct buf b;
	char *s;

	(void)state;
	buf_init(&b, BUF_NOMAX);
	s = buf_steal(&b);
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_append_refusing_to_pass_max_leaves_buffer_unchanged),
		cmocka_unit_test(test_buf_puts_putc_printf_respect_max),
		cmocka_unit_test(test_buf_append_of_absurd_length_is_refused_without_max),
		cmocka_unit_test(test_buf_printf_grows_past_initial_allocation),
		cmocka_unit_test(test_buf_str_of_fresh_buffer_is_empty_string),
		cmocka_unit_test(test_buf_keeps_embedded_nul_bytes_and_terminates),
		cmocka_unit_test(test_buf_reset_empties_but_keeps_max),
		cmocka_unit_test(test_buf_steal_hands_over_string_and_empties_buffer),
		cmocka_unit_test(test_buf_steal_of_empty_buffer_returns_empty_string),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
