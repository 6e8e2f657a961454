#!/bin/sh
# tests/dns/server.sh: starts or stops a real unbound resolver on loopback
# (127.0.0.1 and ::1, a free port) that serves the test zones of this folder
# (svc.test, other.test) plus two fault zones: refused.test answers REFUSED,
# timeout.test drops every query. A CNAME loop in svc.test gives SERVFAIL.
# The top-level domain nosuchtld is NXDOMAIN, as the root servers answer for
# a TLD that does not exist (other names outside the zones time out: no
# root zone is served).
#
#   server.sh start DIR [ZONEFILE...]
#                         prints "127.0.0.1:PORT"; DIR keeps conf, log, pid;
#                         each ZONEFILE (NAME.zone, an absolute path) is
#                         served as one more zone NAME (a test's own zone,
#                         even one unbound has built in: 127.in-addr.arpa)
#   server.sh stop DIR    stops the server started with DIR (waits for it)
#
# Used by tests/integration/test_dns.sh and by any test that needs DNS.
set -u

here=$(cd "$(dirname "$0")" && pwd)

die() { echo "server.sh: $*" >&2; exit 1; }

port_free() {
	# Nothing bound on that port, TCP or UDP, any address.
	[ -z "$(ss -Hlntu "( sport = :$1 )" 2>/dev/null)" ]
}

# write_conf DIR PORT [ZONEFILE...]: the test zones of this folder and the
# ZONEFILEs, each NAME.zone served as NAME
write_conf() {
	conf=$1/unbound.conf
	cat > "$conf" <<EOF
server:
	interface: 127.0.0.1@$2
	interface: ::1@$2
	do-daemonize: no
	username: ""
	chroot: ""
	directory: "$1"
	pidfile: "$1/unbound.pid"
	use-syslog: no
	logfile: "$1/unbound.log"
	verbosity: 1
	num-threads: 1
	so-reuseport: no
	module-config: "iterator"
	access-control: 127.0.0.0/8 allow
	access-control: ::1 allow
	do-not-query-localhost: no
	max-udp-size: 1232
	local-zone: "test." nodefault
	local-zone: "refused.test." refuse
	local-zone: "timeout.test." deny
	local-zone: "nosuchtld." always_nxdomain
EOF
	shift 2
	# a test's own zone wins over unbound's built-in local zone of the
	# same name (127.in-addr.arpa, the documentation ranges' reverse zones)
	for zf in "$@"; do
		echo "	local-zone: \"$(basename "$zf" .zone).\" nodefault" >> "$conf"
	done
	for zf in "$here/svc.test.zone" "$here/other.test.zone" "$@"; do
		cat >> "$conf" <<EOF
auth-zone:
	name: "$(basename "$zf" .zone)."
	zonefile: "$zf"
	for-downstream: no
	for-upstream: yes
	fallback-enabled: no
EOF
	done
	cat >> "$conf" <<EOF
remote-control:
	control-enable: no
EOF
}

start() {
	dir=$1
	shift
	for zf in "$@"; do
		case $zf in
		/*.zone) [ -r "$zf" ] || die "cannot read $zf" ;;
		*) die "$zf: not an absolute path of a NAME.zone file" ;;
		esac
	done
	command -v unbound >/dev/null 2>&1 || die "unbound not installed"
	command -v drill >/dev/null 2>&1 || die "drill (ldnsutils) not installed"
	mkdir -p "$dir" || die "cannot create $dir"
	tries=0
	while [ $tries -lt 10 ]; do
		tries=$((tries + 1))
		port=$(( ($(od -An -N2 -tu2 /dev/urandom) % 30000) + 20000 ))
		port_free "$port" || continue
		write_conf "$dir" "$port" "$@"
		: > "$dir/unbound.log"
		unbound -d -c "$dir/unbound.conf" </dev/null >>"$dir/unbound.log" 2>&1 &
		pid=$!
		echo "$pid" > "$dir/server.pid"
		i=0
		while [ $i -lt 100 ]; do
			if ! kill -0 "$pid" 2>/dev/null; then
				break	# died: port taken meanwhile, or a bad conf
			fi
			# Query only once it listens: the query then waits in
			# the socket buffer instead of being lost.
			if ! port_free "$port" &&
			    drill -Q -p "$port" @127.0.0.1 svc.test SOA 2>/dev/null \
			    | grep -q hostmaster; then
				echo "127.0.0.1:$port"
				return 0
			fi
			sleep 0.1
			i=$((i + 1))
		done
		stop "$dir"
	done
	cat "$dir/unbound.log" >&2
	die "could not start unbound"
}

stop() {
	dir=$1
	[ -f "$dir/server.pid" ] || return 0
	pid=$(cat "$dir/server.pid")
	rm -f "$dir/server.pid"
	# Only the pid we started, and only if it is still our unbound.
	case $(cat "/proc/$pid/cmdline" 2>/dev/null | tr '\0' ' ') in
	*unbound*"$dir/unbound.conf"*) ;;
	*) return 0 ;;
	esac
	kill "$pid" 2>/dev/null
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid" 2>/dev/null
	fi
	return 0
}

case ${1:-} in
start)	[ $# -ge 2 ] || die "usage: server.sh start DIR [ZONEFILE...]"
	shift; start "$@" ;;
stop)	[ $# -eq 2 ] || die "usage: server.sh stop DIR"; stop "$2" ;;
*)	die "usage: server.sh start DIR [ZONEFILE...] | stop DIR" ;;
esac
