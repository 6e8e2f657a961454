#!/bin/sh
# tests/integration/test_dns.sh: runs the DNS module's tests against a real
# unbound on loopback. Starts tests/dns/server.sh on a free port, and
# tests/dns/slow_dns.py in front of it (answering 500 ms late for the
# budget-slowNN.svc.test hosts), runs the command (default tests/unit/test_dns)
# with SVC_TEST_DNS=127.0.0.1:PORT (unbound) and SVC_TEST_SLOW_DNS (the slow
# forwarder), then stops both; nothing is left running, whatever happens.
#   tests/integration/test_dns.sh [command...]
#   e.g. tests/integration/test_dns.sh valgrind --leak-check=full tests/unit/test_dns
set -u

# make check exports top_srcdir and top_builddir (tests/integration/Makefile.inc).
srcdir=${top_srcdir:-${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}}
[ $# -gt 0 ] || set -- "${top_builddir:-.}/tests/unit/test_dns"
# The unit test re-runs itself through this script unless this is set.
SVC_TEST_DNS_NOEXEC=1
export SVC_TEST_DNS_NOEXEC

if ! command -v unbound >/dev/null 2>&1 || ! command -v drill >/dev/null 2>&1
then
	echo "unbound or drill not installed: server tests skipped" >&2
	unset SVC_TEST_DNS
	exec "$@"	# offline tests only; exits 77 if they pass
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/svc-test-dns.XXXXXX") || exit 99
slow=
cleanup() {
	if [ -n "$slow" ]; then
		kill "$slow" 2>/dev/null
		wait "$slow" 2>/dev/null
	fi
	sh "$srcdir/tests/dns/server.sh" stop "$dir"
	rm -rf "$dir"
}
trap cleanup EXIT
. "$srcdir/tests/integration/unit_server.sh"

if ! addr=$(sh "$srcdir/tests/dns/server.sh" start "$dir"); then
	echo "could not start the DNS test server" >&2
	exit 99
fi
echo "dns test server at $addr" >&2
SVC_TEST_DNS=$addr
export SVC_TEST_DNS
if command -v python3 >/dev/null 2>&1; then
	python3 "$srcdir/tests/dns/slow_dns.py" --ready "$dir/slow-dns" \
	    --upstream "$addr" --pattern '^budget-slow[0-9]+\.svc\.test$' \
	    --delay-ms 500 > "$dir/slow-dns.log" 2>&1 &
	slow=$!
	if ! unit_server_wait "$dir/slow-dns" "$slow"; then
		cat "$dir/slow-dns.log" >&2
		echo "could not start the slow DNS forwarder" >&2
		exit 99
	fi
	SVC_TEST_SLOW_DNS=$(cat "$dir/slow-dns")
	export SVC_TEST_SLOW_DNS
fi
unit_server_run "$dir/unbound.log" "unbound log" "$@"
