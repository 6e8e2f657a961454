/* test_wake.c: the wake-up sockets of a folder: a listener is woken by a
 * send of its kind and not by another kind, one wait takes every wake-up
 * waiting, a socket whose process is gone is removed by the next send, a
 * closed listener removes its socket, and a missing folder or a name too
 * long for a socket is refused without harm. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/wake.h"

static char dir[64];

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_wake.XXXXXX");
	return mkdtemp(dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	return rmdir(dir);
}

static void
test_wake_wakes_its_kind_only(void **state)
{
	struct buf err;
	struct wake *jobs, *uploads;

	(void)state;
	buf_init(&err, 256);
	assert_non_null(jobs = wake_listen(dir, WAKE_JOBS, &err));
	assert_non_null(uploads = wake_listen(dir, WAKE_UPLOADS, &err));
	assert_int_equal(wake_wait(jobs, 0), 0);
	assert_int_equal(wake_send(dir, WAKE_JOBS), 1);
	assert_int_equal(wake_wait(uploads, 50), 0);
	assert_int_equal(wake_wait(jobs, 1000), 1);
	/* three sends, one wait takes them all */
	assert_int_equal(wake_send(dir, WAKE_UPLOADS), 1);
	assert_int_equal(wake_send(dir, WAKE_UPLOADS), 1);
	assert_int_equal(wake_send(dir, WAKE_UPLOADS), 1);
	assert_int_equal(wake_wait(uploads, 1000), 1);
	assert_int_equal(wake_wait(uploads, 0), 0);
	assert_int_equal(wake_wait(jobs, 0), 0);
	wake_close(jobs);
	wake_close(uploads);
	/* closed: their sockets are gone */
	assert_int_equal(wake_send(dir, WAKE_JOBS), 0);
	assert_int_equal(wake_send(dir, WAKE_UPLOADS), 0);
	buf_free(&err);
}

/* A listener killed outright leaves its socket: nobody reads it, and the
 * next send removes it. */
static void
test_wake_removes_sockets_nobody_listens_on(void **state)
{
	struct sockaddr_un a;
	char path[128];
	int fd;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(path, sizeof(path), "%s/jobs-999999-0.sock", dir);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_int_not_equal(fd = socket(AF_UNIX, SOCK_DGRAM, 0), -1);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	close(fd);
	assert_int_equal(access(path, F_OK), 0);
	assert_int_equal(wake_send(dir, WAKE_JOBS), 0);
	assert_int_equal(access(path, F_OK), -1);
}

static void
test_wake_refuses_what_it_cannot_do(void **state)
{
	char longdir[200];
	struct buf err;

	(void)state;
	buf_init(&err, 256);
	assert_int_equal(wake_send("/nonexistent/wake", WAKE_JOBS), 0);
	assert_null(wake_listen("/nonexistent/wake", WAKE_JOBS, &err));
	assert_non_null(strstr(buf_str(&err), "/nonexistent/wake"));
	memset(longdir, 'a', sizeof(longdir) - 1);
	longdir[0] = '/';
	longdir[sizeof(longdir) - 1] = '\0';
	buf_reset(&err);
	assert_null(wake_listen(longdir, WAKE_JOBS, &err));
	assert_non_null(strstr(buf_str(&err), "too long"));
	buf_free(&err);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wake_wakes_its_kind_only),
		cmocka_unit_test(test_wake_removes_sockets_nobody_listens_on),
		cmocka_unit_test(test_wake_refuses_what_it_cannot_do),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
