#!/bin/bash
# test_prefork.sh: svc-api as its own prefork master on a TCP socket
# (-s tcp:HOST:PORT -n 2), driven with cgi-fcgi as the FastCGI client: the
# master replaces a child that is killed (a responder or its keeper, the
# process that gives back rate-limit permits), replaces all children on
# SIGHUP (re-reading svc.conf), stops them all on SIGTERM, and children do
# not outlive a master killed outright. Also svcadm's operator commands.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
it_require cgi-fcgi strace
API=$top_builddir/src/api/svc-api
[ -x "$API" ] || it_skip "$API is not built"
it_stack_start --db-only

PORT=$(stack_free_port)
MASTER=

start_master() {
    "$API" -c "$SVC_CONF" -s "tcp:127.0.0.1:$PORT" -n 2 2>> "$IT_DIR/api.err" &
    MASTER=$!
    for _ in $(seq 1 50); do [ "$(children | wc -w)" = 2 ] && return 0; sleep 0.1; done
    it_fail "the master did not fork 2 children"
}
# the responders (the keeper names itself svc-api-keeper)
children() { pgrep -x -P "$MASTER" svc-api | sort | tr '\n' ' '; }
keeper() { pgrep -x -P "$MASTER" svc-api-keeper; }
# two_children: KIDS = the master's children, which must be 2 now (a check
# of "every child" must not pass over none)
KIDS=
two_children() {
    KIDS=$(children)
    [ "$(echo $KIDS | wc -w)" = 2 ] || it_fail "the master has not 2 children but '$KIDS'"
}
fcgi_get() {	# fcgi_get PATH: the response body of a GET through FastCGI
    REQUEST_METHOD=GET REQUEST_URI=$1 REMOTE_ADDR=127.0.0.9 SCRIPT_FILENAME=/svc \
        cgi-fcgi -bind -connect "127.0.0.1:$PORT" | tr -d '\r' | sed '1,/^$/d'
}
# alive PID: running (a zombie waiting for its reaper has exited already)
alive() { [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
stop_master() {
    if [ -n "$MASTER" ]; then
        kill "$MASTER" 2>/dev/null || true
        wait "$MASTER" 2>/dev/null || true
    fi
    MASTER=
}
trap 'rc=$?; stop_master; it_cleanup "$rc"' EXIT

t_serves() {
    start_master || return 1
    HTTP_BODY=$(fcgi_get /rate-limit); HTTP_REQUEST="FastCGI GET /rate-limit"
    expect_json .tier anonymous && expect_json .limit 5
}
t_case "svc-api -s tcp:HOST:PORT -n 2 forks two children that answer FastCGI requests" t_serves

t_keeper() {
    local k k2
    k=$(keeper) || it_fail "the master has no keeper process" || return 1
    kill -9 "$k"
    for _ in $(seq 1 50); do k2=$(keeper) && [ "$k2" != "$k" ] && break; sleep 0.1; done
    [ -n "$k2" ] && [ "$k2" != "$k" ] || it_fail "the keeper killed with SIGKILL was not replaced" || return 1
    two_children
}
t_case "the master keeps a keeper process beside the responders and replaces it when it dies" t_keeper

t_restart() {
    local before after victim
    two_children || return 1; before=$KIDS; victim=${before%% *}
    kill -9 "$victim"
    for _ in $(seq 1 40); do
        after=$(children)
        [ "$(echo "$after" | wc -w)" = 2 ] && ! echo " $after" | grep -q " $victim " && break
        sleep 0.1
    done
    [ "$(echo "$after" | wc -w)" = 2 ] || it_fail "children after a kill: '$after'" || return 1
    echo " $after" | grep -q " $victim " && it_fail "the killed child is still listed" && return 1
    grep -q "event=child_died pid=$victim" "$IT_DIR/log/svc.log" || it_fail "no child_died log line"
    HTTP_BODY=$(fcgi_get /rate-limit); expect_json .success true
}
t_case "a child killed with SIGKILL is replaced and the socket keeps answering" t_restart

t_reload() {
    local before after
    two_children || return 1; before=$KIDS
    echo "log_level = info" >> "$IT_DIR/reload.marker"
    kill -HUP "$MASTER"
    for _ in $(seq 1 50); do
        after=$(children)
        [ "$(echo "$after" | wc -w)" = 2 ] && [ -z "$(comm -12 <(echo $before | tr ' ' '\n' | sort) <(echo $after | tr ' ' '\n' | sort))" ] && break
        sleep 0.1
    done
    [ -z "$(comm -12 <(echo $before | tr ' ' '\n' | sort) <(echo $after | tr ' ' '\n' | sort))" ] ||
        it_fail "children before ($before) and after SIGHUP ($after) overlap" || return 1
    grep -q "event=reload" "$IT_DIR/log/svc.log" || it_fail "no reload log line" || return 1
    HTTP_BODY=$(fcgi_get /rate-limit); expect_json .success true
}
t_case "SIGHUP re-reads svc.conf and replaces every child" t_reload

t_bad_reload() {
    local before
    two_children || return 1; before=$KIDS
    cp "$SVC_CONF" "$IT_DIR/svc.conf.good"
    echo "no_such_setting = 1" >> "$SVC_CONF"
    kill -HUP "$MASTER"; sleep 1
    cp "$IT_DIR/svc.conf.good" "$SVC_CONF"
    expect_eq "children after a bad reload" "$before" "$(children)" || return 1
    grep -q 'event=reload_failed' "$IT_DIR/log/svc.log" || it_fail "no reload_failed log line"
}
t_case "a reload with a broken svc.conf keeps the running children" t_bad_reload

t_term() {
    local kids
    two_children || return 1; kids="$KIDS $(keeper)"
    kill -TERM "$MASTER"; wait "$MASTER"; MASTER=
    for k in $kids; do alive "$k" && it_fail "child $k outlived SIGTERM"; done
    grep -q 'event=stopped' "$IT_DIR/log/svc.log" || it_fail "no stopped log line"
}
t_case "SIGTERM stops the master and all children" t_term

t_orphans() {
    local kids
    start_master || return 1
    two_children || return 1; kids="$KIDS $(keeper)"
    kill -9 "$MASTER"; wait "$MASTER" 2>/dev/null; MASTER=
    # they notice at once, and exit as soon as the machine lets them: wait
    # for that (10 s at most) rather than a second by guess
    local k i
    for k in $kids; do
        for i in $(seq 1 100); do alive "$k" || break; sleep 0.1; done
        alive "$k" && it_fail "child $k outlived its master"
    done
    return 0
}
t_case "children exit when their master is killed outright" t_orphans

t_usage() {
    "$API" -c "$SVC_CONF" -n 0 2>/dev/null; expect_eq "exit status for -n 0" 2 $? || return 1
    "$API" -c "$SVC_CONF" -s bogus 2>/dev/null; expect_eq "exit status for -s bogus" 2 $? || return 1
    "$API" -c "$SVC_CONF" < /dev/null 2>/dev/null; expect_eq "exit status without a socket" 2 $?
}
t_case "svc-api refuses bad options and a standard input that is not a socket" t_usage

# -s unix:PATH: the socket is made with mode 0660 from the start, the umask
# set before the bind (traced), never chmod-ed wider or narrower after it
t_unix_socket_mode() {
    local sock=$IT_DIR/api.sock tr=$IT_DIR/strace.txt st master bind_line umask_line
    strace -f -qq -e trace=umask,bind,chmod,fchmodat -o "$tr" \
        "$API" -c "$SVC_CONF" -s "unix:$sock" -n 1 2>> "$IT_DIR/api.err" &
    st=$!
    for _ in $(seq 1 100); do [ -S "$sock" ] && master=$(pgrep -P "$st" -x svc-api) && break; sleep 0.1; done
    [ -S "$sock" ] && [ -n "$master" ] || { kill "$st"; wait "$st"; it_fail "svc-api did not listen on $sock"; return 1; }
    kill "$master"; wait "$st" 2>/dev/null
    expect_eq "mode of the socket" 660 "$(stat -c %a "$sock")" || return 1
    bind_line=$(grep -n "bind(.*$sock" "$tr" | head -n 1 | cut -d: -f1)
    umask_line=$(grep -n 'umask(0117)' "$tr" | head -n 1 | cut -d: -f1)
    [ -n "$bind_line" ] || it_fail "no bind of $sock traced: $(head -c 400 "$tr")" || return 1
    [ -n "$umask_line" ] && [ "$umask_line" -lt "$bind_line" ] ||
        it_fail "the umask is not set to 0117 before the bind: $(grep -E 'umask|bind' "$tr" | head -n 5)" || return 1
    expect_eq "chmods of the socket" 0 "$(grep -c "chmod.*$sock" "$tr")"
}
t_case "svc-api -s unix:PATH creates its socket 0660 with the umask set before bind, no chmod after" t_unix_socket_mode

# -s tcp:PORT without a host listens on 127.0.0.1 only (in /proc/net/tcp:
# 0100007F:PORT in state 0A), not on every interface
t_tcp_port_is_loopback() {
    local p pid hex addrs
    p=$(stack_free_port)
    hex=$(printf '%04X' "$p")
    (cd "$IT_DIR" && exec "$API" -c "$SVC_CONF" -s "tcp:$p" -n 1 2>> "$IT_DIR/api.err") &
    pid=$!
    for _ in $(seq 1 100); do
        addrs=$(awk -v h=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == h { print $2 }' /proc/net/tcp /proc/net/tcp6)
        [ -n "$addrs" ] && break; sleep 0.1
    done
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    expect_eq "listening addresses for tcp:$p" "0100007F:$hex" "$addrs" || return 1
    [ ! -e "$IT_DIR/$p" ] || it_fail "tcp:$p made a file named $p"
}
t_case "svc-api -s tcp:PORT listens on 127.0.0.1 only" t_tcp_port_is_loopback

t_svcadm() {
    local acc org key id out
    out=$(svcadm config)
    echo "$out" | grep -q "^db_password = (hidden)$" || it_fail "svcadm config shows the password" || return 1
    echo "$out" | grep -q "^db_socket = $DB_SOCKET$" || it_fail "svcadm config lacks db_socket" || return 1
    echo "$out" | grep -q "^allow_url_ports = $" || it_fail "svcadm config lacks allow_url_ports" || return 1
    acc=$(svcadm account create --email ops@example.com --tier trial --credits 5)
    svcadm account create --email ops@example.com --tier trial 2>/dev/null && it_fail "a second account for one email" && return 1
    org=$(svcadm org create --name Ops --rate-limit 7 --credits 3)
    svcadm org add "$org" "$acc"
    expect_eq "credits grant prints the balance" 15 "$(svcadm credits grant "$acc" 10)" || return 1
    expect_eq "credits check" ok "$(svcadm credits check "$org")" || return 1
    key=$(svcadm key create --account "$acc" --scopes 'jobs:read,credits:read' --org "$org" --name ops 2>/dev/null)
    [[ $key == svc_live_* ]] || it_fail "key $key" || return 1
    id=$(svcadm key list --account "$acc" | cut -f1)
    svcadm key revoke "$id"
    svcadm key list --account "$acc" | grep -q revoked || it_fail "key not listed as revoked" || return 1
    svcadm key create --account "$acc" --scopes root 2>/dev/null && it_fail "a key with an unknown scope" && return 1
    svcadm account tier "$acc" pro && svcadm account subscription "$acc" inactive || return 1
    expect_eq "tier and subscription" "pro 0" "$(it_sql "SELECT CONCAT(tier, ' ', subscription_active) FROM accounts WHERE id = '$acc'")"
}
t_case "svcadm: config hides the password; accounts, organizations, credits and keys" t_svcadm

t_done
