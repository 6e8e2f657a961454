# outbound.sh: what the tests of svc-worker's outbound HTTPS (webhook and
# callback deliveries, source_url downloads) share, sourced after
# mail_env.sh (whose EXIT trap it extends):
#
#   ALIAS                      a host name that is no IP literal nor
#                              "localhost" but resolves to 127.0.0.1: the
#                              guard must refuse it when the worker
#                              connects (the script is skipped without one)
#   outbound_certs             IT_DIR/tls: a test CA and a certificate for
#                              127.0.0.1 and ALIAS (mail_env_certs)
#   outbound_server NAME SCRIPT [ARGS...]
#                              the Python HTTPS server SCRIPT (of this
#                              folder) on 127.0.0.1 with that certificate,
#                              its output in IT_DIR/NAME.log; its port in
#                              OUTBOUND_PORT
#   once [CONF]                svc-worker --once (bounded)
#   daemon [CONF]              svc-worker as a daemon, its pid in DAEMON
#   stop_daemon                stops it (the EXIT trap does too, first)
it_require python3 certtool timeout
WORKER=$top_builddir/src/worker/svc-worker
[ -x "$WORKER" ] || it_skip "$WORKER is not built"

ALIAS=
for n in "$(hostname)" ip6-localhost localhost.localdomain; do
    if [ -n "$n" ] && [ "$n" != localhost ] &&
            [ "$(getent ahostsv4 "$n" 2>/dev/null | awk 'NR == 1 { print $1 }')" = 127.0.0.1 ]; then
        ALIAS=$n
        break
    fi
done
[ -n "$ALIAS" ] || it_skip "no host name other than localhost resolves to 127.0.0.1 here"

outbound_certs() { mail_env_certs 127.0.0.1 127.0.0.1 "$ALIAS"; }

outbound_server() {
    local name=$1 script=$2
    shift 2
    PYTHONDONTWRITEBYTECODE=1 python3 "$top_srcdir/tests/integration/$script" --host 127.0.0.1 \
        --cert "$IT_DIR/tls/server.pem" --key "$IT_DIR/tls/server.key" \
        --ready "$IT_DIR/$name.port" "$@" > "$IT_DIR/$name.log" 2>&1 &
    FAKE_PIDS+=($!)
    for _ in $(seq 1 100); do [ -s "$IT_DIR/$name.port" ] && break; sleep 0.1; done
    [ -s "$IT_DIR/$name.port" ] || { cat "$IT_DIR/$name.log"; echo "Bail out! $name"; exit 1; }
    OUTBOUND_PORT=$(cat "$IT_DIR/$name.port")
}

once() {
    timeout 120 "$WORKER" --once -c "${1:-$SVC_CONF}" >> "$IT_DIR/log/worker-once.log" 2>&1 ||
        it_fail "svc-worker --once failed"
}

DAEMON=
daemon() {
    "$WORKER" -c "${1:-$SVC_CONF}" >> "$IT_DIR/log/worker-daemon.log" 2>&1 &
    DAEMON=$!
}
stop_daemon() {
    [ -n "$DAEMON" ] || return 0
    kill "$DAEMON" 2>/dev/null || true
    wait "$DAEMON" 2>/dev/null || true
    DAEMON=
}
trap 'rc=$?; stop_daemon; mail_env_stop; it_cleanup "$rc"' EXIT
