#!/bin/sh
# tests/integration/test_smtp.sh: runs the SMTP client's tests against the
# scriptable fake server tests/smtp/fake_smtp.py on loopback. Makes a test
# CA and server certificate (tests/smtp/certs.sh) in a temporary folder,
# starts the server on a free port of 127.0.0.1 and 127.0.0.3 (127.0.0.2 is
# left empty: the dead MX), runs the command (default tests/unit/test_smtp) with
#   SVC_TEST_SMTP_PORT, SVC_TEST_SMTP_CONTROL (control port on 127.0.0.1),
#   SVC_TEST_SMTP_CA (the CA that signed the server certificate)
# then stops the server and removes the folder; nothing is left running.
#   tests/integration/test_smtp.sh [command...]
#   e.g. tests/integration/test_smtp.sh valgrind --leak-check=full tests/unit/test_smtp
set -u

srcdir=${top_srcdir:-${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}}
[ $# -gt 0 ] || set -- "${top_builddir:-.}/tests/unit/test_smtp"
# The unit test re-runs itself through this script unless this is set.
SVC_TEST_SMTP_NOEXEC=1
export SVC_TEST_SMTP_NOEXEC

# Debian's Python 3 (tests/smtp/fake_smtp.py needs only its standard library).
if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3
else python=$(command -v python3 || true); fi
if [ -z "$python" ] || ! command -v certtool >/dev/null 2>&1; then
	echo "python3 or certtool (gnutls-bin) not installed: server tests skipped" >&2
	unset SVC_TEST_SMTP_PORT
	exec "$@"	# offline tests only; exits 77 if they pass
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/svc-test-smtp.XXXXXX") || exit 99
server=
cleanup() {
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null
		# It stops within a few tenths of a second; never wait forever.
		i=0
		while kill -0 "$server" 2>/dev/null && [ $i -lt 30 ]; do
			sleep 0.1; i=$((i + 1))
		done
		kill -9 "$server" 2>/dev/null
		wait "$server" 2>/dev/null
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
. "$srcdir/tests/integration/unit_server.sh"

# A throw-away CA and a server certificate for mx.fake.test and 127.0.0.1.
if ! sh "$srcdir/tests/smtp/certs.sh" "$dir" mx.fake.test mx.fake.test 127.0.0.1 \
    >"$dir/certtool.log" 2>&1; then
	cat "$dir/certtool.log" >&2
	echo "could not make the test certificates" >&2
	exit 99
fi

"$python" "$srcdir/tests/smtp/fake_smtp.py" --ready "$dir/ready" \
    --host 127.0.0.1 --also 127.0.0.3 \
    --cert "$dir/server.pem" --key "$dir/server.key" \
    >"$dir/fake_smtp.log" 2>&1 &
server=$!
if ! unit_server_wait "$dir/ready" "$server"; then
	echo "could not start the fake SMTP server" >&2
	cat "$dir/fake_smtp.log" >&2
	exit 99
fi
read -r port control <"$dir/ready"
echo "fake smtp server at 127.0.0.1:$port and 127.0.0.3:$port (control $control)" >&2
SVC_TEST_SMTP_PORT=$port
SVC_TEST_SMTP_CONTROL=$control
SVC_TEST_SMTP_CA=$dir/ca.pem
export SVC_TEST_SMTP_PORT SVC_TEST_SMTP_CONTROL SVC_TEST_SMTP_CA
unit_server_run "$dir/fake_smtp.log" "fake_smtp log" "$@"
