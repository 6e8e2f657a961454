# unit_server.sh: what test_dns.sh and test_smtp.sh share, the scripts that
# start the servers of a unit test program (tests/unit/unit_server.h), run
# it and stop them. Sourced (sh) before they start a server:
#
#   . "$srcdir/tests/integration/unit_server.sh"
#   unit_server_wait FILE PID     until server PID has written FILE (its
#                                 "ready" file), 10 s at most: 1 when it
#                                 died first or the time ran out
#   unit_server_run LOG WHAT CMD...
#                                 runs CMD and returns its status; when it
#                                 failed (not 0, not 77: skipped), shows LOG
#                                 under "--- WHAT"
#
# A signal stops the command too, and exits 130: the script's EXIT trap
# then stops the servers.
# shellcheck shell=sh

unit_server_child=
trap '[ -n "$unit_server_child" ] && kill "$unit_server_child" 2>/dev/null; exit 130' INT TERM HUP

unit_server_wait() {
	unit_server_i=0
	while [ ! -s "$1" ] && [ $unit_server_i -lt 100 ]; do
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
		unit_server_i=$((unit_server_i + 1))
	done
	[ -s "$1" ]
}

unit_server_run() {
	unit_server_log=$1
	unit_server_what=$2
	shift 2
	# In the background, so that a signal is handled at once, not after it.
	"$@" &
	unit_server_child=$!
	wait "$unit_server_child"
	unit_server_rc=$?
	unit_server_child=
	if [ $unit_server_rc -ne 0 ] && [ $unit_server_rc -ne 77 ]; then
		echo "--- $unit_server_what" >&2
		cat "$unit_server_log" >&2
	fi
	return $unit_server_rc
}
