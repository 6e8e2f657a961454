/* test_port25.c: the port 25 judgement of "svcadm status" and "svcadm
 * doctor" (src/admin/port25.h): too few direct sessions tell nothing;
 * 80% or more of them failing to connect the same way (refused, or timed
 * out: each counted on its own) says port 25 looks blocked, 79% does not;
 * a mix of refused and timed-out connects is not one way of failing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "admin/port25.h"

static int
judge(long long sessions, long long connected, long long refused,
    long long timed_out, char *msg, size_t size)
{
	struct port25_figures f;

	f.sessions = sessions;
	f.connected = connected;
	f.refused = refused;
	f.timed_out = timed_out;
	return port25_blocked(&f, msg, size);
}

static void
test_too_few_sessions(void **state)
{
	char msg[512];

	(void)state;
	/* 19 of 19 refused: one short of the sessions needed */
	assert_int_equal(judge(PORT25_MIN_SESSIONS - 1, 0,
	    PORT25_MIN_SESSIONS - 1, 0, msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "19 direct SMTP sessions in the last "
	    "hour, too few to tell (20 needed)"));
	assert_int_equal(judge(0, 0, 0, 0, msg, sizeof(msg)), 0);
	/* 20 of 20 timed out: enough */
	assert_int_equal(judge(PORT25_MIN_SESSIONS, 0, 0,
	    PORT25_MIN_SESSIONS, msg, sizeof(msg)), 1);
}

static void
test_share_refused(void **state)
{
	char msg[512];

	(void)state;
	/* 80% refused: blocked, and the message says how and what to do */
	assert_int_equal(judge(100, 20, 80, 0, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "outbound port 25 looks blocked: 80 of "
	    "100 direct SMTP sessions in the last hour could not connect "
	    "(refused)"));
	assert_non_null(strstr(msg, "a route is needed"));
	assert_int_equal(judge(20, 4, 16, 0, msg, sizeof(msg)), 1);
	/* 79%: not */
	assert_int_equal(judge(100, 21, 79, 0, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "21 of 100 direct SMTP sessions in the "
	    "last hour connected");
	assert_int_equal(judge(20, 5, 15, 0, msg, sizeof(msg)), 0);
}

static void
test_share_timed_out(void **state)
{
	char msg[512];

	(void)state;
	/* timed-out connects count as refused ones do (a dropping firewall) */
	assert_int_equal(judge(100, 20, 0, 80, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "80 of 100 direct SMTP sessions in the "
	    "last hour could not connect (timed out)"));
	assert_int_equal(judge(100, 21, 0, 79, msg, sizeof(msg)), 0);
	/* 80% of one way beside a few of the other: blocked, that way */
	assert_int_equal(judge(100, 10, 10, 80, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "(timed out)"));
	assert_int_equal(judge(100, 5, 85, 10, msg, sizeof(msg)), 1);
	assert_non_null(strstr(msg, "85 of 100"));
	assert_non_null(strstr(msg, "(refused)"));
}

static void
test_mixed_failures(void **state)
{
	char msg[512];

	(void)state;
	/* every connect failed, but not the same way: not the look of a
	 * closed port 25 (each way under 80%) */
	assert_int_equal(judge(100, 0, 50, 50, msg, sizeof(msg)), 0);
	assert_int_equal(judge(100, 0, 79, 21, msg, sizeof(msg)), 0);
	assert_int_equal(judge(20, 0, 12, 8, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "0 of 20 direct SMTP sessions in the last "
	    "hour connected");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_too_few_sessions),
		cmocka_unit_test(test_share_refused),
		cmocka_unit_test(test_share_timed_out),
		cmocka_unit_test(test_mixed_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
