/* test_notify.c: the notify pipe wakes a poll once however often it is
 * raised, is quiet again once cleared, and can be raised again after. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <poll.h>

#include "util/notify.h"

/* Whether the pipe's read end is readable now. */
static int
readable(const struct notify *n)
{
	struct pollfd p = { notify_fd(n), POLLIN, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void
test_notify_raise_wakes_clear_quiets(void **state)
{
	struct notify n;
	struct buf err;
	int i;

	(void)state;
	buf_init(&err, 64);
	assert_int_equal(notify_open(&n, &err), 0);
	assert_false(readable(&n));
	for (i = 0; i < 3; i++)
		notify_raise(&n);
	assert_true(readable(&n));
	notify_clear(&n);
	assert_false(readable(&n));
	assert_int_equal(n.raised, 0);
	notify_clear(&n);		/* nothing to drain: no harm */
	assert_false(readable(&n));
	notify_raise(&n);		/* and again after a clear */
	assert_true(readable(&n));
	notify_close(&n);
	assert_int_equal(n.fd[0], -1);
	notify_close(&n);		/* closing twice: no harm */
	buf_free(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_raise_wakes_clear_quiets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
