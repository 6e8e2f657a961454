#!/bin/sh
# test_node.sh: the Node helper contrib/sdk/svc-webhook.js against the
# shared vectors (node --test). Node comes from Debian (contrib/install-deps
# installs npm, which brings nodejs). 77 (skipped) without node; a failure
# instead under SVC_TEST_NO_SKIP=1 (contrib/run-tests).
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! command -v node >/dev/null 2>&1; then
	if [ "${SVC_TEST_NO_SKIP:-0}" = 1 ]; then
		echo "FAIL: test_node: node is not installed (run contrib/install-deps)"
		exit 1
	fi
	echo "SKIP: test_node: node is not installed (run contrib/install-deps)"
	exit 77
fi
SVC_SDK_VECTORS=$top/tests/sdk/vectors.json exec node --test "$top/contrib/sdk/svc-webhook.test.js"
