#!/bin/sh
# test_python.sh: the Python helper contrib/sdk/svc_webhook.py against the
# shared vectors (unittest). 77 (skipped) without python3; a failure
# instead under SVC_TEST_NO_SKIP=1 (contrib/run-tests).
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! command -v python3 >/dev/null 2>&1; then
	if [ "${SVC_TEST_NO_SKIP:-0}" = 1 ]; then
		echo "FAIL: test_python: python3 is not installed (run contrib/install-deps)"
		exit 1
	fi
	echo "SKIP: test_python: python3 is not installed (run contrib/install-deps)"
	exit 77
fi
PYTHONDONTWRITEBYTECODE=1 SVC_SDK_VECTORS=$top/tests/sdk/vectors.json \
	exec python3 -m unittest discover -v -s "$top/contrib/sdk" -p 'test_*.py'
