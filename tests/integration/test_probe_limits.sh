#!/bin/bash
# test_probe_limits.sh: slow mail servers cannot take the API down. The MX
# of silent.svc.test (the fake SMTP server) holds every flight of commands
# unanswered while the test says so (hold=1), so every single verification
# of an address there holds its responder until the test releases it (the
# timeouts are longer than any case). With 8
# responders, probe_reserved_responders 2 and probe_concurrency_per_account
# 2: an account's third probe at once is refused with 429 (concurrency),
# another account is still served, the seventh probe on the host is refused
# with 503, ordinary requests are answered throughout, nothing refused is
# charged, a responder killed mid-probe gives its places back, and a key
# revocation (auth_cache_ms) holds places like a probe.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require ss timeout

mail_env_start
fake 127.0.0.32
mail_env_lists
mail_env_conf smtp_reply_timeout_ms=60000
IT_API_WORKERS=8
it_conf_add "verify_time_budget_ms = 60000
probe_concurrency_per_account = 2
probe_reserved_responders = 2
auth_cache_ms = 3000"
it_stack_start

ACC_A=$(it_account pro 100); KEY_A=$(it_key "$ACC_A" '*')
ACC_B=$(it_account pro 100); KEY_B=$(it_key "$ACC_B" '*')
ACC_C=$(it_account pro 100); KEY_C=$(it_key "$ACC_C" '*')
ACC_D=$(it_account pro 100); KEY_D=$(it_key "$ACC_D" '*')
N=0

# hold: the silent MX answers nothing from now on; release: it answers
# what it held and what comes, and the probes out are waited for
hold() { fake_set 127.0.0.32 hold=1; }
release() { fake_set 127.0.0.32 hold=0; wait_probes; }

# probe KEY NAME: POST /v1/verify of a new silent address in the
# background; its status, body and time in ms go to IT_DIR/probe-NAME.*
probe() {
    local key=$1 name=$2
    N=$((N + 1))
    (
        start=$(date +%s%N)
        code=$(curl -s -o "$IT_DIR/probe-$name.body" -D "$IT_DIR/probe-$name.head" -w '%{http_code}' \
            --max-time 120 -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
            --data-binary "{\"email\":\"u$N-$RANDOM@silent.svc.test\"}" "$BASE_URL/v1/verify")
        echo "$code $(( ($(date +%s%N) - start) / 1000000 ))" > "$IT_DIR/probe-$name.out"
    ) &
    PIDS+=($!)
}
probe_status() { cut -d' ' -f1 "$IT_DIR/probe-$1.out"; }
probe_ms() { cut -d' ' -f2 "$IT_DIR/probe-$1.out"; }
probe_json() { jq -r "$2" < "$IT_DIR/probe-$1.body"; }
wait_probes() { local p; for p in "${PIDS[@]}"; do wait "$p"; done; PIDS=(); }
balance() { it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$1'"; }
PIDS=()

# the responder processes of this test's svc-api whose connection to the
# silent MX is open (the ones probing now: each holds its places)
probing_pids() {
    ss -Htnp state established dst 127.0.0.32 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u
}
probing() { probing_pids | grep -c . || true; }
# wait_probing N: until N responders are connected to the silent MX, 60 s
# at most (a probe there takes its places before it connects)
wait_probing() {
    local i
    for i in $(seq 1 600); do [ "$(probing)" -ge "$1" ] && return 0; sleep 0.1; done
    it_fail "$(probing) responders probing the silent MX, not $1, after 60 s"
}
# answered_while_held NAME...: these background probes have their answer
# (waited for, 60 s at most) while the MX still holds the probes out, so
# they did not wait for a place to come free
answered_while_held() {
    local n i
    for n in "$@"; do
        for i in $(seq 1 600); do [ -s "$IT_DIR/probe-$n.out" ] && break; sleep 0.1; done
        [ -s "$IT_DIR/probe-$n.out" ] || { it_fail "probe $n: no answer in 60 s while the others were held"; return 1; }
    done
}

# credits_while_probing KEY N: GET /v1/credits answered 200 while the N
# probes out are held (an ordinary request does not wait for a probe's
# responder to come free)
credits_while_probing() {
    API_KEY=$1 HTTP_TIMEOUT=60 http GET /v1/credits
    expect_status 200 || return 1
    [ "$(probing)" -ge "$2" ] || it_fail "only $(probing) probes out when GET /v1/credits was answered, not $2"
}

t_account_limit() {
    local i refused=0 served=0 before
    before=$(balance "$ACC_A")
    hold
    for i in 1 2; do probe "$KEY_A" "a$i"; done
    wait_probing 2 || { release; return 1; }
    for i in 3 4 5 6; do probe "$KEY_A" "a$i"; done
    probe "$KEY_B" b1
    wait_probing 3 && answered_while_held a3 a4 a5 a6 || { release; return 1; }
    for i in 1 2 3; do credits_while_probing "$KEY_C" 3 || break; done
    release
    for i in 1 2 3 4 5 6; do
        case $(probe_status "a$i") in
        200) served=$((served + 1)) ;;
        429)
            refused=$((refused + 1))
            [ "$(probe_json "a$i" .error.code)" = rate_limited ] || it_fail "a$i: $(cat "$IT_DIR/probe-a$i.body")"
            [ "$(probe_json "a$i" .error.details.kind)" = concurrency ] || it_fail "a$i: details.kind"
            probe_json "a$i" .error.message | grep -q concurrent || it_fail "a$i: the message does not say concurrency"
            grep -qi '^retry-after: 1' "$IT_DIR/probe-a$i.head" || it_fail "a$i: no Retry-After: 1"
            grep -qi '^x-ratelimit-limit: 100' "$IT_DIR/probe-a$i.head" || it_fail "a$i: no X-RateLimit-Limit"
            ;;
        *) it_fail "a$i: status $(probe_status "a$i")" ;;
        esac
    done
    expect_eq "account A's probes answered / refused" "2 4" "$served $refused" || return 1
    expect_eq "a1, answered once the MX answered" undeliverable "$(probe_json a1 .status)" || return 1
    expect_eq "account B's probe" 200 "$(probe_status b1)" || return 1
    expect_eq "account A charged for the answered probes only" $((before - 2)) "$(balance "$ACC_A")"
}
t_case "an account's probes beyond probe_concurrency_per_account get 429 at once (not charged); another account and other requests are served" t_account_limit

t_host_limit() {
    local before
    before=$(balance "$ACC_D")
    hold
    probe "$KEY_A" h1; probe "$KEY_A" h2
    probe "$KEY_B" h3; probe "$KEY_B" h4
    probe "$KEY_C" h5; probe "$KEY_C" h6
    wait_probing 6 || { release; return 1; }
    probe "$KEY_D" h7
    answered_while_held h7 || { release; return 1; }
    credits_while_probing "$KEY_D" 6 && credits_while_probing "$KEY_A" 6
    API_KEY=$KEY_D http GET /rate-limit; expect_status 200
    release
    expect_eq "the 7th probe on a host of 8 responders, 2 reserved" 503 "$(probe_status h7)" || return 1
    expect_eq "its code" queue_unavailable "$(probe_json h7 .error.code)" || return 1
    grep -qi '^retry-after: 1' "$IT_DIR/probe-h7.head" || it_fail "no Retry-After on the 503" || return 1
    expect_eq "the six before it" "200 200 200 200 200 200" \
        "$(for i in 1 2 3 4 5 6; do probe_status "h$i"; done | tr '\n' ' ' | sed 's/ $//')" || return 1
    expect_eq "nothing charged for the 503" "$before" "$(balance "$ACC_D")"
}
t_case "probes beyond all responders but the reserve get 503 queue_unavailable at once; ordinary requests still find a responder" t_host_limit

t_cached_takes_no_slot() {
    local addr=cached-$RANDOM@silent.svc.test i
    API_KEY=$KEY_A http POST /v1/verify "{\"email\":\"$addr\"}"; expect_status 200 || return 1
    hold
    probe "$KEY_A" c1; probe "$KEY_A" c2
    wait_probing 2 || { release; return 1; }
    # the account's two places are taken: a cached answer and a sandbox
    # address need none
    API_KEY=$KEY_A http POST /v1/verify "{\"email\":\"$addr\"}"
    expect_status 200 && expect_json .cached true || { release; return 1; }
    API_KEY=$KEY_A http POST /v1/verify '{"email":"someone@sandbox.svc.example"}'
    expect_status 200 && expect_json .reason accepted_email || { release; return 1; }
    # what the verifications before learnt of the domain is forgotten: the
    # check must probe its MX
    it_sql "DELETE FROM domain_facts WHERE domain = 'silent.svc.test'"
    API_KEY=$KEY_A http POST /v1/domain/check '{"domain":"silent.svc.test"}'
    expect_status 429 && expect_json .error.details.kind concurrency || { release; return 1; }
    release
}
t_case "cached answers and sandbox addresses take no place; a domain check counts like a verification" t_cached_takes_no_slot

t_killed_responder_frees_places() {
    local pids p
    hold
    probe "$KEY_A" k1; probe "$KEY_A" k2
    wait_probing 2 || { release; return 1; }
    pids=$(probing_pids)
    for p in $pids; do kill -KILL "$p"; done
    wait_probes
    # the kernel dropped their locks as they died: account A's places are
    # free again (the master forks new responders meanwhile)
    probe "$KEY_A" k3; probe "$KEY_A" k4
    wait_probing 2 || { release; return 1; }
    probe "$KEY_A" k5
    answered_while_held k5
    release
    expect_eq "probes after the kill" "200 200 429" "$(probe_status k3) $(probe_status k4) $(probe_status k5)"
}
t_case "a responder killed mid-probe gives its places back (the kernel drops its locks)" t_killed_responder_frees_places

# A second revocation of the account is refused while the first holds its
# place: from before its key's row is revoked until auth_cache_ms after.
# When the second came after that (a slow machine: its row was revoked
# auth_cache_ms or more after the first's, by the database's clock) it is
# rightly let through, and the case starts again (3 tries).
t_revocations() {
    local k1 k2 kb start ms i try
    for try in 1 2 3; do
        API_KEY=$KEY_A http POST /v1/keys '{"scopes":["jobs:read"]}'; k1=$(json .id)
        API_KEY=$KEY_A http POST /v1/keys '{"scopes":["jobs:read"]}'; k2=$(json .id)
        API_KEY=$KEY_B http POST /v1/keys '{"scopes":["jobs:read"]}'; kb=$(json .id)
        rm -f "$IT_DIR/rev1"
        ( API_KEY=$KEY_A http DELETE "/v1/keys/$k1"; echo "$HTTP_STATUS" > "$IT_DIR/rev1" ) &
        PIDS+=($!)
        for i in $(seq 1 300); do
            [ "$(it_sql "SELECT revoked_at IS NOT NULL FROM api_keys WHERE id = '$k1'")" = 1 ] && break
            sleep 0.1
        done
        API_KEY=$KEY_A http DELETE "/v1/keys/$k2"
        if [ "$HTTP_STATUS" = 200 ] && [ "$(it_sql "SELECT (SELECT revoked_at FROM api_keys WHERE id = '$k2') >=
                (SELECT revoked_at FROM api_keys WHERE id = '$k1') + INTERVAL 3 SECOND")" = 1 ]; then
            wait_probes
            it_log "try $try: the second revocation came after the first's place was given back; again"
            continue
        fi
        expect_status 409 && expect_json .error.code revocation_in_progress || { wait_probes; return 1; }
        start=$(date +%s%N)
        API_KEY=$KEY_B http DELETE "/v1/keys/$kb"; expect_status 200 || { wait_probes; return 1; }
        ms=$(( ($(date +%s%N) - start) / 1000000 ))
        [ "$ms" -ge 2900 ] || it_fail "a revocation answered after $ms ms, before auth_cache_ms (3000)" || { wait_probes; return 1; }
        wait_probes
        expect_eq "the first revocation" 200 "$(cat "$IT_DIR/rev1")" || return 1
        API_KEY=$KEY_A http DELETE "/v1/keys/$k2"; expect_status 200
        return
    done
    it_fail "the second revocation came after the first's place was given back, 3 times"
}
t_case "one revocation wait per account at a time (409 for a second), another account's goes on" t_revocations

# Under mod_fcgid each svc-api process serves alone ("-n 1", no master):
# processes started apart share places through run_dir/svc-api.slots.
t_run_dir_shared() {
    local p1 p2 conf=$IT_DIR/alone.conf body
    mkdir -p "$IT_DIR/run"
    grep -v '^probe_concurrency_per_account' "$SVC_CONF" > "$conf"
    printf 'run_dir = %s\nprobe_concurrency_per_account = 1\n' "$IT_DIR/run" >> "$conf"
    p1=$(stack_free_port); p2=$(stack_free_port)
    stack_proc_start "$IT_DIR/log" alone1 "$top_builddir/src/api/svc-api" -c "$conf" -s "tcp:127.0.0.1:$p1" -n 1 || return 1
    stack_proc_start "$IT_DIR/log" alone2 "$top_builddir/src/api/svc-api" -c "$conf" -s "tcp:127.0.0.1:$p2" -n 1 || return 1
    body="{\"email\":\"r$RANDOM@silent.svc.test\"}"
    hold
    python3 "$SLOW" fcgi 127.0.0.1 "$p1" /v1/verify 0 0 "$KEY_A" "$body" > "$IT_DIR/alone1.out" &
    PIDS+=($!)
    wait_probing 1 || { release; return 1; }
    body="{\"email\":\"s$RANDOM@silent.svc.test\"}"
    expect_eq "the same account through the other process" "Status: 429 Too Many Requests" \
        "$(python3 "$SLOW" fcgi 127.0.0.1 "$p2" /v1/verify 0 0 "$KEY_A" "$body")"
    release
    expect_eq "the first probe" "Status: 200 OK" "$(cat "$IT_DIR/alone1.out")"
    [ -e "$IT_DIR/run/svc-api.slots" ] || it_fail "no run_dir/svc-api.slots"
    stack_proc_stop "$IT_DIR/log" alone1
    stack_proc_stop "$IT_DIR/log" alone2
}
SLOW=$top_srcdir/tests/integration/slow_client.py
t_case "svc-api processes serving alone (mod_fcgid) share the places through run_dir" t_run_dir_shared

t_done
