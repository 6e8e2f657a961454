#!/bin/bash
# test_slow_clients.sh: clients that send their bodies slowly cannot stop
# the API. Behind lighttpd (fcgi-conf/lighttpd-svc.conf buffers every body
# before svc-api sees the request) four bodies trickling one byte a second
# hold no responder, so an ordinary request is answered at once; and
# svc-api itself gives up on a body that has not arrived within
# api_body_timeout_ms (408 request_timeout), so even a peer speaking
# FastCGI to it directly frees its responder in time.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
it_require python3 timeout jq

IT_API_WORKERS=2
it_stack_start

ACC=$(it_account pro 100)
API_KEY=$(it_key "$ACC" '*')
SLOW=$top_srcdir/tests/integration/slow_client.py
SLOW_PIDS=()
stop_slow() { local p; for p in "${SLOW_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; SLOW_PIDS=(); }

t_lighttpd_buffers() {
    local i
    for i in 1 2 3 4; do
        python3 "$SLOW" http 127.0.0.1 "$HTTP_PORT" /v1/verify "$API_KEY" 60 1 > "$IT_DIR/slow-$i.out" 2>&1 &
        SLOW_PIDS+=($!)
    done
    sleep 2
    # more requests than responders: each is answered at once
    for i in 1 2 3 4 5 6; do
        HTTP_TIMEOUT=3 http GET /v1/credits; expect_status 200 || break
    done
    stop_slow
}
t_case "four bodies trickling in one byte a second hold no responder: other requests are answered at once" t_lighttpd_buffers

# svc-api with one responder on its own FastCGI port, a short body deadline
t_svc_api_deadline() {
    local port start end got
    port=$(stack_free_port)
    sed 's/^api_body_timeout_ms = .*//' "$SVC_CONF" > "$IT_DIR/direct.conf"
    echo "api_body_timeout_ms = 2000" >> "$IT_DIR/direct.conf"
    stack_proc_start "$IT_DIR/log" direct-api "$top_builddir/src/api/svc-api" \
        -c "$IT_DIR/direct.conf" -s "tcp:127.0.0.1:$port" -n 1 || return 1
    start=$(date +%s%N)
    python3 "$SLOW" fcgi 127.0.0.1 "$port" /v1/verify 100 1 "$API_KEY" > "$IT_DIR/direct-slow.out" 2>&1 &
    SLOW_PIDS+=($!)
    sleep 0.5
    got=$(timeout 20 python3 "$SLOW" fcgi 127.0.0.1 "$port" /rate-limit 0 0)
    end=$(date +%s%N)
    expect_eq "the next request on the only responder" "Status: 200 OK" "$got" || { stop_slow; return 1; }
    wait "${SLOW_PIDS[0]}"
    SLOW_PIDS=()
    expect_eq "the slow body's answer" "Status: 408 Request Timeout" "$(cat "$IT_DIR/direct-slow.out")" || return 1
    # the body had 100 s to go: the responder was freed by the deadline
    [ $(( (end - start) / 1000000 )) -lt 15000 ] || it_fail "the responder was held $(( (end - start) / 1000000 )) ms"
    stack_proc_stop "$IT_DIR/log" direct-api
}
t_case "svc-api answers 408 request_timeout to a body that has not arrived within api_body_timeout_ms and serves the next request" t_svc_api_deadline

# an upload announcing 60 MB and sending 100 bytes is
# answered 413 with the JSON error while the rest is unsent (5 s at most)
t_lighttpd_early_413() {
    local out
    out=$(python3 "$SLOW" early 127.0.0.1 "$HTTP_PORT" /v1/verify/bulk/upload "$API_KEY" 60000000 5)
    expect_eq "status line" "HTTP/1.1 413 Payload Too Large" "$(printf '%s\n' "$out" | sed -n 1p)" || return 1
    expect_eq "Content-Type" "application/json" "$(printf '%s\n' "$out" | sed -n 2p)" || return 1
    expect_eq "error code and limit" "file_too_large 53477376" \
        "$(printf '%s\n' "$out" | sed -n '3,$p' | jq -r '.error.code + " " + (.error.details.limit_bytes | tostring)')"
}
t_case "lighttpd answers an upload whose Content-Length is over the limit with 413 file_too_large (JSON) before the body is sent" t_lighttpd_early_413

stop_slow
t_done
