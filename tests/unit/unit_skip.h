/* unit_skip.h: the one way a cmocka test program skips what it cannot run
 * here (no test server, no IPv6 loopback, lists not fetched). cmocka's own
 * skip() leaves the exit status 0, so make check would count the program as
 * passed: UNIT_SKIP counts the skip, and main() ends with unit_skip_status(),
 * which exits 77 (automake's SKIP) when something was skipped. The reason is
 * printed on a "SKIP:" line, which the banner of make check shows
 * (tests/list-skips). With SVC_TEST_NO_SKIP=1 (contrib/run-tests, that is
 * CI) a skip is a failure instead, with the same reason. Header only (each
 * test program is one file); include it after cmocka.h. */
#ifndef SVC_TESTS_UNIT_SKIP_H
#define SVC_TESTS_UNIT_SKIP_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_skip_count;

/* SVC_TEST_NO_SKIP=1: every skip is a failure. */
static inline int
unit_skip_forbidden(void)
{
	const char *v = getenv("SVC_TEST_NO_SKIP");

	return v != NULL && strcmp(v, "1") == 0;
}

/* UNIT_SKIP(WHY): inside a test, skip the rest of it because of WHY (a
 * string), or fail it when skips are forbidden. */
#define UNIT_SKIP(why) do {						\
	if (unit_skip_forbidden())					\
		fail_msg("cannot run here: %s (SVC_TEST_NO_SKIP=1 makes a " \
		    "skip a failure)", (why));				\
	unit_skip_count++;						\
	fprintf(stderr, "SKIP: %s\n", (why));				\
	skip();								\
} while (0)

/* unit_skip_status(FAILED): main's exit status once its groups ran (FAILED:
 * what they returned, added up): 1 when a test failed, 77 when one was
 * skipped, else 0. */
static inline int
unit_skip_status(int failed)
{
	if (failed != 0)
		return 1;
	return unit_skip_count > 0 ? 77 : 0;
}

/* unit_skip_rest(FAILED, WHY): main's exit status when the groups that need
 * what is missing (WHY) cannot run at all: 77, or 1 when a test failed or
 * skips are forbidden. */
static inline int
unit_skip_rest(int failed, const char *why)
{
	if (unit_skip_forbidden()) {
		fprintf(stderr, "FAIL: cannot run here: %s (SVC_TEST_NO_SKIP=1 "
		    "makes a skip a failure)\n", why);
		return 1;
	}
	fprintf(stderr, "SKIP: %s\n", why);
	return failed != 0 ? 1 : 77;
}
#endif
