#!/bin/sh
# no-cmocka.sh: stands for the unit tests when configure found no cmocka
# (tests/unit/Makefile.inc): skipped, or failed under SVC_TEST_NO_SKIP=1
# (contrib/run-tests), so that no build passes make check without them.
why="cmocka was not found by configure: no unit test was built (install libcmocka-dev, run contrib/install-deps)"
if [ "${SVC_TEST_NO_SKIP:-0}" = 1 ]; then
	echo "FAIL: cannot run here: $why (SVC_TEST_NO_SKIP=1 makes a skip a failure)"
	exit 1
fi
echo "SKIP: $why"
exit 77
