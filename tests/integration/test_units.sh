#!/bin/bash
# test_units.sh: the systemd units, web server snippets and logrotate file
# of contrib/systemd.inc, as far as they can be tried without systemd
# running. The units made by the build (with the programs' paths changed to
# the built ones, svc.conf's to this test's) pass "systemd-analyze verify"
# without a word and "systemd-analyze security --offline" with a low
# exposure; svc-api started the way svc-api.socket starts it (the listening
# socket inherited on standard input, by systemd-socket-activate --inetd,
# which execs it on the first connection as systemd does) serves FastCGI
# requests from lighttpd (contrib/systemd/lighttpd-svc-socket.conf) and
# nginx (contrib/systemd/nginx-svc.conf), and again after a reload
# (SIGHUP); contrib/logrotate/svc rotates the log of a running svc-api with
# nothing lost around the rotation and no hole in the new file.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
it_require systemd-analyze systemd-socket-activate logrotate nginx lighttpd

UNITS=$top_builddir/contrib/systemd
for u in svc-worker.service svc-api.service; do
    [ -r "$UNITS/$u" ] || it_skip "$UNITS/$u is not built"
done

it_stack_start --db-only

# the units with the built programs and this test's svc.conf
mkdir -p "$IT_DIR/units"
for u in svc-worker.service svc-api.service; do
    sed -E -e "s|^(Exec[A-Za-z]*=)[^ ]*/svc-api |\1$top_builddir/src/api/svc-api |" \
        -e "s|^(Exec[A-Za-z]*=)[^ ]*/svc-worker |\1$top_builddir/src/worker/svc-worker |" \
        -e "s| -c [^ ]*/svc/svc.conf| -c $SVC_CONF|" "$UNITS/$u" > "$IT_DIR/units/$u"
done
cp "$top_srcdir/contrib/systemd/svc-api.socket" "$IT_DIR/units/"

t_verify() {
    local out page
    # (--man=no: the Documentation= pages are checked below, in man/)
    out=$(cd "$IT_DIR/units" && systemd-analyze verify --man=no \
        ./svc-worker.service ./svc-api.service ./svc-api.socket 2>&1) ||
        it_fail "systemd-analyze verify failed: $out" || return 1
    [ -z "$out" ] || it_fail "systemd-analyze verify says: $out"
    for page in $(sed -n 's/^Documentation=//p' "$IT_DIR"/units/*); do
        page=$(printf '%s' "$page" | sed -n 's/^man:\(.*\)(\([0-9]\))$/\1.\2/p')
        [ -n "$page" ] && [ -r "$top_srcdir/man/$page" ] || it_fail "a unit names a manual svc does not have: $page"
    done
    # and it does say something about a unit with a mistake
    sed 's/^NoNewPrivileges=/NoNewPrivilege=/' "$IT_DIR/units/svc-worker.service" > "$IT_DIR/units/bad.service"
    out=$(cd "$IT_DIR/units" && systemd-analyze verify --man=no ./bad.service 2>&1)
    case $out in *"Unknown key 'NoNewPrivilege'"*) ;; *) it_fail "a misspelt key went unnoticed: $out" ;; esac
    # the built units name the installed program and svc.conf
    grep -q "^ExecStart=/.*/bin/svc-worker -c /.*/svc/svc.conf$" "$UNITS/svc-worker.service" ||
        it_fail "the built unit does not name the installed program: $(grep ExecStart "$UNITS/svc-worker.service")"
}
t_case "systemd-analyze verify accepts the units without a word (and notices a misspelt key)" t_verify

t_hardening() {
    local u out level k
    for u in svc-worker svc-api; do
        for k in 'ProtectSystem=strict' 'NoNewPrivileges=yes' 'PrivateTmp=yes' 'ProtectHome=yes' \
                'User=svc' 'Restart=on-failure' 'LogsDirectory=svc'; do
            grep -qx "$k" "$IT_DIR/units/$u.service" || it_fail "$u.service lacks $k"
        done
        out=$(systemd-analyze security --offline=yes "$IT_DIR/units/$u.service" 2>&1)
        level=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
        [ -n "$level" ] || { it_fail "no exposure level for $u: $out"; continue; }
        it_log "$u.service exposure $level"
        awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }' || it_fail "$u.service exposure $level is above 2.0"
    done
    grep -qx 'StandardInput=socket' "$IT_DIR/units/svc-api.service" || it_fail "svc-api.service does not take the socket on standard input"
    grep -qx 'Accept=no' "$IT_DIR/units/svc-api.socket" || it_fail "svc-api.socket does not hand over its listening socket"
}
t_case "the services run as svc, restart on failure, ProtectSystem=strict and friends: exposure 2.0 or less (systemd-analyze security)" t_hardening

# ---------------------------------------------------------------- the socket
SOCK=$IT_DIR/run/svc-api.sock
mkdir -p "$IT_DIR/run"
# svc-api as svc-api.service runs it, on the socket svc-api.socket makes
EXEC=$(sed -n 's/^ExecStart=//p' "$IT_DIR/units/svc-api.service")
# shellcheck disable=SC2086
stack_proc_start "$IT_DIR/proc" api systemd-socket-activate --inetd -l "$SOCK" -- $EXEC ||
    { echo "Bail out! systemd-socket-activate"; exit 1; }
api_pid() { stack_pidfile_pid "$IT_DIR/proc/api.pid"; }
# what SocketGroup= and SocketMode= of svc-api.socket do
chgrp www-data "$SOCK" && chmod 0660 "$SOCK" || { echo "Bail out! $SOCK"; exit 1; }

# lighttpd connecting to it (the snippet, with var.svc_socket set)
# (stack_lighttpd_start sets var.svc_fcgi_conf, where svc-413.html is
# read, to the folder of this wrapper)
cp "$top_srcdir/fcgi-conf/svc-413.html" "$IT_DIR/"
printf 'var.svc_socket = "%s"\ninclude "%s"\n' "$SOCK" \
    "$top_srcdir/contrib/systemd/lighttpd-svc-socket.conf" > "$IT_DIR/lighttpd-socket.conf"
it_api_start_socket() {
    stack_lighttpd_start "$IT_DIR/lighttpd" "$HTTP_PORT" "$(it_api)" "$SVC_CONF" "$IT_DIR/lighttpd-socket.conf" ||
        { echo "Bail out! lighttpd with the socket snippet"; it_show_logs; exit 1; }
}
it_api_start_socket

# nginx with the snippet (the socket's path changed), on its own port
NGINX_PORT=$(stack_free_port)
mkdir -p "$IT_DIR/nginx/tmp"
# (made at build time with the installed svc-413.html, here the source's)
sed -e "s|unix:/run/svc-api.sock|unix:$SOCK|" -e "s|alias .*/fcgi-conf/svc-413.html;|alias $top_srcdir/fcgi-conf/svc-413.html;|" \
    -e "s|alias .*/www/;|alias $top_srcdir/src/www/;|" -e "s|alias .*/www/index.html;|alias $top_srcdir/src/www/index.html;|" \
    "$top_builddir/contrib/systemd/nginx-svc.conf" > "$IT_DIR/nginx/svc.conf"
grep -q "alias $top_srcdir/fcgi-conf/svc-413.html;" "$IT_DIR/nginx/svc.conf" || { echo "Bail out! no alias of svc-413.html in nginx-svc.conf"; exit 1; }
# "include fastcgi_params" is read beside nginx.conf, as in /etc/nginx
cp /etc/nginx/fastcgi_params "$IT_DIR/nginx/" || it_skip "nginx has no /etc/nginx/fastcgi_params"
cat > "$IT_DIR/nginx/nginx.conf" <<EOF
daemon off;
user www-data;
worker_processes 1;
pid $IT_DIR/nginx/nginx.pid;
error_log $IT_DIR/nginx/error.log;
events { worker_connections 64; }
http {
    access_log $IT_DIR/nginx/access.log;
    client_body_temp_path $IT_DIR/nginx/tmp;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        include $IT_DIR/nginx/svc.conf;
    }
}
EOF
stack_proc_start "$IT_DIR/nginx" nginx nginx -p "$IT_DIR/nginx" -c "$IT_DIR/nginx/nginx.conf" ||
    { echo "Bail out! nginx"; cat "$IT_DIR/nginx/error.log"; exit 1; }
stack_wait_port "$NGINX_PORT" "$(stack_pidfile_pid "$IT_DIR/nginx/nginx.pid")" "$IT_DIR/nginx/error.log" nginx ||
    { echo "Bail out! nginx does not answer"; exit 1; }

ACC=$(it_account pro 100)
API_KEY=$(it_key "$ACC" '*' --sandbox)
LIVE_KEY=$(it_key "$ACC" '*')

# serves URL: the API answers through that web server
serves() {
    local via=$1
    BASE_URL=$via http GET /rate-limit || return 1
    expect_status 200 || return 1
    BASE_URL=$via http GET /v1/credits || return 1
    expect_status 200 && expect_json .balance 100 || return 1
    BASE_URL=$via http POST /v1/verify/bulk '{"emails":["accepted_email@sandbox.svc.example","rejected_email@sandbox.svc.example"]}' || return 1
    expect_status 202 && expect_json .total_emails 2 || return 1
    # a body sent without Content-Length reaches svc-api marked so (411)
    printf -- '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\nemail\r\na@b.example\r\n--XyZ--\r\n' > "$IT_DIR/upload.body"
    API_KEY=$LIVE_KEY BASE_URL=$via http POST /v1/verify/bulk/upload "@$IT_DIR/upload.body" \
        -H 'Content-Type: multipart/form-data; boundary=XyZ' -H 'Transfer-Encoding: chunked' || return 1
    expect_status 411 || return 1
    # an upload announced over the limit: 413 file_too_large (JSON) while
    # its body is still unsent
    early_413 "$via"
}

# early_413 URL: an upload announcing 60 MB and sending 100 bytes is
# answered 413 with the API's JSON error before the rest is sent
early_413() {
    local port=${1##*:} out
    out=$(python3 "$top_srcdir/tests/integration/slow_client.py" early 127.0.0.1 "$port" \
        /v1/verify/bulk/upload "$LIVE_KEY" 60000000 5)
    expect_eq "status" 413 "$(printf '%s\n' "$out" | sed -n 1p | cut -d' ' -f2)" || return 1
    expect_eq "Content-Type" "application/json" "$(printf '%s\n' "$out" | sed -n 2p)" || return 1
    expect_eq "error code and limit" "file_too_large 53477376" \
        "$(printf '%s\n' "$out" | sed -n '3,$p' | jq -r '.error.code + " " + (.error.details.limit_bytes | tostring)')"
}

t_inherited() {
    local pid fd0
    serves "http://127.0.0.1:$HTTP_PORT" || return 1
    pid=$(api_pid)
    # systemd-socket-activate became svc-api (exec), the socket on fd 0
    case $(tr '\0' ' ' < "/proc/$pid/cmdline") in
    "$top_builddir/src/api/svc-api -c $SVC_CONF "*) ;;
    *) it_fail "pid $pid is not svc-api: $(tr '\0' ' ' < "/proc/$pid/cmdline")" ;; esac
    fd0=$(readlink "/proc/$pid/fd/0")
    case $fd0 in socket:*) ;; *) it_fail "svc-api's standard input is $fd0, not a socket" ;; esac
    grep -q "$SOCK" /proc/net/unix || it_fail "nothing listens on $SOCK"
    [ "$(pgrep -P "$pid" | wc -l)" -ge 2 ] || it_fail "svc-api has no responders (api_workers 2)"
}
t_case "svc-api given the socket on standard input (as svc-api.socket does) serves lighttpd through lighttpd-svc-socket.conf (411, early JSON 413)" t_inherited

t_nginx() {
    serves "http://127.0.0.1:$NGINX_PORT"
}
t_case "nginx through nginx-svc.conf, on the same socket: the same answers, 411 for a chunked upload, early JSON 413" t_nginx

# the dashboard's files at /app/ through both snippets, with their headers
t_dashboard_files() {
    local via p
    for via in "$BASE_URL" "http://127.0.0.1:$NGINX_PORT"; do
        for p in /app/ /app/js/app.js /app/invite; do
            BASE_URL=$via SVC_TEST_OPENAPI=0 API_KEY= http GET "$p" || return 1
            expect_status 200 || { it_fail "$via$p"; return 1; }
            header_value content-security-policy | grep -q "script-src 'self'.*frame-ancestors 'none'" ||
                it_fail "$via$p: CSP $(header_value content-security-policy)"
            expect_eq "$via$p nosniff" nosniff "$(header_value x-content-type-options | tr -d ' ')"
            expect_eq "$via$p Referrer-Policy" no-referrer "$(header_value referrer-policy | tr -d ' ')"
        done
        case $(header_value content-type) in text/html*) ;; *) it_fail "$via/app/invite: $(header_value content-type)" ;; esac
        BASE_URL=$via SVC_TEST_OPENAPI=0 API_KEY= http GET /app/js/app.js || return 1
        case $(header_value content-type) in text/javascript*) ;; *) it_fail "$via app.js: $(header_value content-type)" ;; esac
    done
}
t_case "the dashboard at /app/ through lighttpd-svc-socket.conf and nginx-svc.conf, with the CSP, nosniff and no-referrer" t_dashboard_files

t_reload() {
    local before after i
    before=$(pgrep -P "$(api_pid)" | sort | tr '\n' ' ')
    kill -HUP "$(api_pid)"    # ExecReload
    for i in $(seq 1 50); do
        after=$(pgrep -P "$(api_pid)" | sort | tr '\n' ' ')
        [ -n "$after" ] && [ "$after" != "$before" ] && [ "$(pgrep -P "$(api_pid)" | wc -l)" -ge 2 ] && break
        sleep 0.1
    done
    [ "$after" != "$before" ] || it_fail "SIGHUP did not replace the responders ($before)"
    serves "http://127.0.0.1:$HTTP_PORT" && serves "http://127.0.0.1:$NGINX_PORT"
}
t_case "systemctl reload (SIGHUP) replaces the responders and both web servers keep being served" t_reload

t_logrotate() {
    local log=$IT_DIR/log/svc.log lines_before rotated
    sed -e "s|/var/log/svc/|$IT_DIR/log/|" -e 's|^    su svc svc$|    su root root|' \
        "$top_srcdir/contrib/logrotate/svc" > "$IT_DIR/logrotate.conf"
    grep -q "^$IT_DIR/log/\*.log {" "$IT_DIR/logrotate.conf" || it_fail "the logrotate file names no /var/log/svc/*.log" || return 1
    serves "http://127.0.0.1:$HTTP_PORT" || return 1
    cp "$log" "$IT_DIR/before-rotation.log"
    lines_before=$(wc -l < "$IT_DIR/before-rotation.log")
    [ "$lines_before" -gt 0 ] || it_fail "svc-api wrote nothing to $log" || return 1
    logrotate -f -s "$IT_DIR/logrotate.state" "$IT_DIR/logrotate.conf" > "$IT_DIR/logrotate.out" 2>&1 ||
        it_fail "logrotate: $(cat "$IT_DIR/logrotate.out")" || return 1
    rotated=$log.1
    [ -s "$rotated" ] || it_fail "no $rotated" || return 1
    # the old lines kept, first (svc-api may have written more since the
    # copy above: they are in one file or the other)
    head -n "$lines_before" "$rotated" | cmp -s - "$IT_DIR/before-rotation.log" ||
        it_fail "$rotated does not begin with the $lines_before lines the log had" || return 1
    serves "http://127.0.0.1:$HTTP_PORT" || return 1
    [ -s "$log" ] || it_fail "svc-api writes no more to $log after the rotation" || return 1
    [ "$(tr -d '\000' < "$log" | wc -c)" = "$(wc -c < "$log")" ] || it_fail "the new $log starts with a hole (NUL bytes)"
    [ "$(wc -c < "$log")" -lt "$(wc -c < "$rotated")" ] || it_fail "$log was not truncated"
    head -n 1 "$log" | grep -q '^20[0-9][0-9]-.* svc-api\[' || it_fail "the new log does not start with a line of svc-api: $(head -c 200 "$log")"
}
t_case "logrotate rotates a running svc-api's log (copytruncate): the old lines kept, new ones from the start of the file" t_logrotate

t_done
