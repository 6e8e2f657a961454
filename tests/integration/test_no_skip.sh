#!/bin/sh
# test_no_skip.sh: a test that cannot run is never taken for one that
# passed. it_skip (tests/integration/lib.sh), tests/unit/unit_skip.h (through
# test_dns without its DNS server) and tests/unit/no-cmocka.sh exit 77 with
# their reason on a "SKIP:" line, and fail (exit 1, the reason kept) under
# SVC_TEST_NO_SKIP=1, which contrib/run-tests sets; tests/list-skips lists
# skipped tests, and passing ones whose cmocka cases were skipped, and
# nothing else. Needs no server and no root.
set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$srcdir}
dir=$(mktemp -d "${TMPDIR:-/tmp}/svc-test-no-skip.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
n=0
failed=0

# check NAME WANT_STATUS WANT_LINE COMMAND...: COMMAND exits WANT_STATUS and
# prints a line starting with WANT_LINE.
check() {
	name=$1 want=$2 line=$3
	shift 3
	n=$((n + 1))
	"$@" > "$dir/out" 2>&1
	got=$?
	if [ "$got" = "$want" ] && grep -qF -- "$line" "$dir/out"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name: exit status $got, want $want and a line '$line'"
		sed 's/^/#   /' "$dir/out"
		failed=$((failed + 1))
	fi
}

# A script whose server is missing, as an integration script sees it.
cat > "$dir/test_cannot.sh" <<EOF
. "$srcdir/tests/integration/lib.sh"
it_skip "no such server here"
EOF
check "it_skip: exit 77 with the reason" 77 "SKIP: test_cannot: " \
    env -u SVC_TEST_NO_SKIP top_srcdir="$srcdir" top_builddir="$builddir" bash "$dir/test_cannot.sh"
check "it_skip under SVC_TEST_NO_SKIP=1: a failure with the reason" 1 "FAIL: test_cannot: cannot run here: " \
    env SVC_TEST_NO_SKIP=1 top_srcdir="$srcdir" top_builddir="$builddir" bash "$dir/test_cannot.sh"

check "no-cmocka.sh: exit 77 with the reason" 77 "SKIP: cmocka was not found" \
    env -u SVC_TEST_NO_SKIP sh "$srcdir/tests/unit/no-cmocka.sh"
check "no-cmocka.sh under SVC_TEST_NO_SKIP=1: a failure" 1 "FAIL: cannot run here: cmocka" \
    env SVC_TEST_NO_SKIP=1 sh "$srcdir/tests/unit/no-cmocka.sh"

# test_dns without SVC_TEST_DNS runs its offline group only (unit_skip_rest),
# and a server case without the slow forwarder skips inside (UNIT_SKIP).
dns=$builddir/tests/unit/test_dns
if [ -x "$dns" ]; then
	check "unit_skip_rest: exit 77 with the reason" 77 "SKIP: server tests need SVC_TEST_DNS" \
	    env -u SVC_TEST_NO_SKIP -u SVC_TEST_DNS SVC_TEST_DNS_NOEXEC=1 "$dns"
	check "unit_skip_rest under SVC_TEST_NO_SKIP=1: a failure" 1 "FAIL: cannot run here: server tests need SVC_TEST_DNS" \
	    env -u SVC_TEST_DNS SVC_TEST_NO_SKIP=1 SVC_TEST_DNS_NOEXEC=1 "$dns"
else
	n=$((n + 1))
	echo "not ok $n - $dns is not built (no cmocka? no-cmocka.sh says so too)"
	failed=$((failed + 1))
fi

# list-skips on a build folder of three tests: one skipped, one passed with
# a cmocka case skipped, one passed
mkdir -p "$dir/build/tests"
printf ':test-result: SKIP\n' > "$dir/build/tests/a.trs"
printf 'SKIP: a: no such server here\n' > "$dir/build/tests/a.log"
printf ':test-result: PASS\n' > "$dir/build/tests/b.trs"
printf '[ RUN      ] test_x\nSKIP: no IPv6 loopback\n[  SKIPPED ] test_x\n' > "$dir/build/tests/b.log"
printf ':test-result: PASS\n' > "$dir/build/tests/c.trs"
printf '[       OK ] test_y\n' > "$dir/build/tests/c.log"
list() { (cd "$dir/build" && sh "$srcdir/tests/list-skips" "$@"); }
check "list-skips: a skipped test with its reason" 1 "      SKIP: a: no such server here" list
check "list-skips: a passed test whose cmocka case was skipped" 1 "tests/b (PASS, but cmocka skipped: test_x)" list
check "list-skips: the logs given only" 1 "SKIPPED: 1 test(s)" list tests/b.log tests/c.log
n=$((n + 1))
if grep -q "tests/c" "$dir/out"; then
	echo "not ok $n - list-skips lists a test that ran whole"; failed=$((failed + 1))
else
	echo "ok $n - list-skips leaves out a test that ran whole"
fi
n=$((n + 1))
if list tests/c.log > "$dir/out" 2>&1 && [ ! -s "$dir/out" ]; then
	echo "ok $n - list-skips: nothing skipped, nothing printed, exit 0"
else
	echo "not ok $n - list-skips printed or failed when nothing was skipped"; failed=$((failed + 1))
fi

echo "$((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
