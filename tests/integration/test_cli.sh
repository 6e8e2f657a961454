#!/bin/bash
# test_cli.sh: svc, the command-line tool, against the real server behind
# lighttpd on loopback (MariaDB, svc-api, svc-worker for the jobs, and the
# DNS and MTA of mail_env.sh for world addresses): every command and its
# options, human and --json output (parsed here), exit statuses, the key
# and base URL precedence, the config file's permissions and atomic
# writes, invalid_input refused without a request (the rate-limit count
# unchanged), a 429 retried after Retry-After with a low-limit key, an
# idempotent bulk create whose answer was lost (a proxy drops it), --wait
# with a live bar under a terminal (tmux) and plain lines otherwise, and
# Ctrl-C that stops the waiting but not the job; bulk upload (CSV, TXT,
# XLSX, source_url), preview and confirm with svc-worker reading the files
# and computing the previews, and callbacks signed with the secret svc
# showed.
# tests/integration/cli_stub.py stands in for the server only where it
# cannot be made to answer what is tested: the flat 429 body (only
# /v1/domain/check sends it, which svc does not call), a 429 that never
# ends, a 500 and an answer that is not JSON, and a download of 40 MB
# (the server would need a job of 300,000 rows). As a proxy in front of
# the real server it logs what svc sends and loses answers on the way
# back.
# Its answers come from cli_stub.py (faults on demand) as well as svc-api:
# not held to src/api/openapi.yaml (the other scripts hold every svc-api
# answer to it).
SVC_TEST_OPENAPI=0
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require python3 tmux timeout
SVC=$top_builddir/src/cli/svc
WORKER=$top_builddir/src/worker/svc-worker
[ -x "$SVC" ] || it_skip "$SVC is not built"
[ -x "$WORKER" ] || it_skip "$WORKER is not built"

STUB_PIDS=()
TMUX_SOCK=$IT_DIR/tmux.sock
cli_test_stop() {
    local p
    # (in the EXIT trap set -e still holds: a status of kill or wait must
    # not end the loop and leave the others running)
    for p in "${STUB_PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    [ -S "$TMUX_SOCK" ] && { tmux -S "$TMUX_SOCK" kill-server 2>/dev/null || true; }
    return 0
}
trap 'rc=$?; cli_test_stop; mail_env_stop; it_cleanup "$rc"' EXIT

mail_env_start
mail_env_lists
mail_env_conf
mail_env_certs 127.0.0.1 127.0.0.1
# the receiver of upload callbacks: webhook_receiver.py (HTTPS) on loopback
RECEIVED=$IT_DIR/received
python3 "$top_srcdir/tests/integration/webhook_receiver.py" --host 127.0.0.1 \
    --cert "$IT_DIR/tls/server.pem" --key "$IT_DIR/tls/server.key" \
    --log "$RECEIVED" --ready "$IT_DIR/receiver.port" > "$IT_DIR/receiver.log" 2>&1 &
STUB_PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$IT_DIR/receiver.port" ] && break; sleep 0.1; done
[ -s "$IT_DIR/receiver.port" ] || { cat "$IT_DIR/receiver.log"; echo "Bail out! receiver"; exit 1; }
R=https://127.0.0.1:$(cat "$IT_DIR/receiver.port")
# a 6 s window (the spec's 60 made testable, as in test_rate_window.sh);
# callbacks to loopback, trusting the test CA
it_conf_add "rate_window_seconds = 6
verify_time_budget_ms = 12000
allow_private_urls = yes
allow_url_ports = $(cat "$IT_DIR/receiver.port")
ca_file = $IT_DIR/tls/ca.pem"
it_stack_start

SB=sandbox.svc.example
ACC=$(it_account pro 1000)
KEY=$(it_key "$ACC" '*')
# svc's own settings: a config folder of its own, the key and the base
# URL from the environment unless a case says otherwise
export XDG_CONFIG_HOME=$IT_DIR/xdg
export ROCKETVERIFIER_API_KEY=$KEY SVC_BASE_URL=$BASE_URL SVC_WAIT_INTERVAL=1
DEAD=http://127.0.0.1:$(stack_free_port)	# nothing listens there
JOB= PENDING=

# cli ARGS...: runs svc; CLI_RC, CLI_OUT, CLI_ERR; the output is HTTP_BODY
# for lib.sh's expect_json and expect_jq
cli() {
    CLI_RC=0
    "$SVC" "$@" > "$IT_DIR/cli.out" 2> "$IT_DIR/cli.err" < /dev/null || CLI_RC=$?
    CLI_OUT=$(cat "$IT_DIR/cli.out")
    CLI_ERR=$(cat "$IT_DIR/cli.err")
    # kept, so that t_done finds any sanitizer report of svc
    cat "$IT_DIR/cli.err" >> "$IT_DIR/log/svc-cli-stderr.log"
    HTTP_BODY=$CLI_OUT
    HTTP_REQUEST="svc $*"
}
# expect_rc N: svc's exit status
expect_rc() {
    [ "$CLI_RC" = "$1" ] && return 0
    it_fail "$HTTP_REQUEST: exit status $CLI_RC, expected $1; stdout: $(head -c 400 "$IT_DIR/cli.out" | tr '\n' ' ') stderr: $(head -c 400 "$IT_DIR/cli.err" | tr '\n' ' ')"
}
# expect_err TEXT: stderr holds TEXT
expect_err() {
    grep -qF -- "$1" "$IT_DIR/cli.err" && return 0
    it_fail "$HTTP_REQUEST: stderr lacks '$1': $(head -c 600 "$IT_DIR/cli.err" | tr '\n' ' ')"
}
# kv LABEL: the value of a "label  value" line of the human output
kv() { awk -v l="$1" 'substr($0, 1, 18) ~ "^" l " *$" { print substr($0, 21); exit }' "$IT_DIR/cli.out"; }
expect_kv() { expect_eq "$HTTP_REQUEST: line '$1'" "$2" "$(kv "$1")"; }
used() {	# used KEY: the rate-limit window's count of the key's account
    API_KEY=$1 http GET /rate-limit > /dev/null; json .used
}
balance() { it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$1'"; }
run_worker() {	# run_worker JOB: svc-worker --once until the job ended
    local st
    for _ in $(seq 1 30); do
        timeout 120 "$WORKER" -c "$SVC_CONF" --once >> "$IT_DIR/log/worker.log" 2>&1
        st=$(it_sql "SELECT status FROM jobs WHERE id = '$1'")
        case $st in completed|failed|cancelled) return 0 ;; esac
        sleep 0.5
    done
    it_fail "job $1 is still $st"
}
# cli_stub DIR MODE ARGS...: cli_stub.py MODE in the background, logging
# to DIR/log; CLI_STUB_URL its address
cli_stub() {
    local dir=$1
    shift
    mkdir -p "$dir"
    : > "$dir/log"
    python3 "$top_srcdir/tests/integration/cli_stub.py" "$@" --port-file "$dir/port" \
        --log "$dir/log" > "$dir/out" 2>&1 &
    STUB_PIDS+=($!)
    for _ in $(seq 1 100); do [ -s "$dir/port" ] && break; sleep 0.1; done
    CLI_STUB_URL=http://127.0.0.1:$(cat "$dir/port")
}
# stub NAME RESPONSES-JSON: cli_stub.py answering RESPONSES; STUB_URL, STUB_LOG
stub() {
    mkdir -p "$IT_DIR/stub-$1"
    printf '%s' "$2" > "$IT_DIR/stub-$1/responses.json"
    cli_stub "$IT_DIR/stub-$1" stub --responses "$IT_DIR/stub-$1/responses.json"
    STUB_URL=$CLI_STUB_URL
    STUB_LOG=$IT_DIR/stub-$1/log
}
# proxy NAME DROP: cli_stub.py forwarding to the real server, logging each
# request and losing the answers of the first DROP; PROXY_URL, PROXY_LOG
proxy() {
    cli_stub "$IT_DIR/proxy-$1" proxy --upstream "$HTTP_PORT" --drop "$2"
    PROXY_URL=$CLI_STUB_URL
    PROXY_LOG=$IT_DIR/proxy-$1/log
}
# bg NAME ARGS...: svc in the background (BG its pid), its output in
# IT_DIR/NAME.out and NAME.err; bg_end NAME waits for it and sets what cli
# sets; bg_kv NAME LABEL waits for a "label  value" line of its output
bg() {
    local n=$1
    shift
    "$SVC" "$@" > "$IT_DIR/$n.out" 2> "$IT_DIR/$n.err" < /dev/null &
    BG=$!
}
bg_end() {
    CLI_RC=0
    wait "$BG" || CLI_RC=$?
    cp "$IT_DIR/$1.out" "$IT_DIR/cli.out"
    cp "$IT_DIR/$1.err" "$IT_DIR/cli.err"
    cat "$IT_DIR/$1.err" >> "$IT_DIR/log/svc-cli-stderr.log"
    CLI_OUT=$(cat "$IT_DIR/cli.out")
    CLI_ERR=$(cat "$IT_DIR/cli.err")
    HTTP_BODY=$CLI_OUT
    HTTP_REQUEST="svc (in the background) $1"
}
# wait_line FILE REGEX: until FILE has a line matching REGEX (grep -E), 60 s
# at most
wait_line() {
    for _ in $(seq 1 600); do
        grep -Eq -- "$2" "$1" 2> /dev/null && return 0
        sleep 0.1
    done
    it_fail "no line matching '$2' in $1: $(cat "$1")"
}
# bg_line NAME REGEX: until the background svc's standard error has a
# line matching REGEX
bg_line() { wait_line "$IT_DIR/$1.err" "$2"; }
bg_kv() {
    local v
    for _ in $(seq 1 100); do
        v=$(awk -v l="$2" 'substr($0, 1, 18) ~ "^" l " *$" { print substr($0, 21); exit }' "$IT_DIR/$1.out")
        [ -n "$v" ] && { echo "$v"; return 0; }
        sleep 0.1
    done
    it_fail "svc $1 printed no '$2' line: $(cat "$IT_DIR/$1.out" "$IT_DIR/$1.err")"
    return 1
}
# wait_job_of FILE: the job whose --wait lines (on stderr) FILE shows
# (with --json --wait nothing is on stdout before the end)
wait_job_of() {
    local j
    for _ in $(seq 1 100); do
        j=$(sed -n 's/^\(job_[A-Za-z0-9_-]*\): .*/\1/p' "$1" 2>/dev/null | head -n 1)
        [ -n "$j" ] && { echo "$j"; return 0; }
        sleep 0.1
    done
    it_fail "no --wait line in $1: $(cat "$1")"
    return 1
}
# json_one FILE: FILE holds exactly one JSON document (python3's parser)
json_one() {
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" 2> "$IT_DIR/json_one.err" ||
        it_fail "not one JSON document: $(head -c 600 "$1") ($(tail -n 1 "$IT_DIR/json_one.err"))"
}
# resp STATUS BODY: one response of cli_stub.py's list
resp() { jq -cn --argjson s "$1" --arg b "$2" '{status: $s, body: $b}'; }
stub_count() { wc -l < "$STUB_LOG" | tr -d ' '; }

# ---------------------------------------------------------------- commands

t_version_help() {
    local c
    cli --version; expect_rc 0 && expect_eq "--version" "svc 1.1.0" "$CLI_OUT" || return 1
    cli help; expect_rc 0 || return 1
    for c in "verify <email>" "bulk create" "bulk upload" "bulk preview" "bulk confirm" "bulk status" \
            "bulk results" "bulk download" "jobs list" "jobs progress" "jobs cancel" "credits" \
            "config set-key" "config show" "config set-base-url"; do
        grep -qF "svc $c" "$IT_DIR/cli.out" || it_fail "svc help does not list $c" || return 1
    done
    cli help bulk upload; expect_rc 0 || return 1
    for c in --email-column --column-mapping --name --callback-url --preview --wait; do
        grep -qF -- "$c" "$IT_DIR/cli.out" || it_fail "svc help bulk upload lacks $c" || return 1
    done
    cli bulk download --help; expect_rc 0 && grep -q -- '--include-original' "$IT_DIR/cli.out" || it_fail "bulk download --help" || return 1
    cli help nosuch; expect_rc 2 || return 1
    cli nosuch; expect_rc 2 || return 1
    cli bulk; expect_rc 2 || return 1
    cli bulk nosuch; expect_rc 2 || return 1
    cli verify; expect_rc 2 && expect_err "missing argument" || return 1
    cli verify a@b.example c@d.example; expect_rc 2 || return 1
    cli credits --bogus; expect_rc 2 && expect_err "unknown option --bogus"
}
t_case "--version prints 1.1.0; help lists every command of the spec and each one's options; usage errors exit 2" t_version_help

t_verify_human() {
    cli verify "catch_all@$SB"; expect_rc 0 || return 1
    expect_kv email "catch_all@$SB" && expect_kv status unknown && expect_kv reason catch_all &&
        expect_kv sub-status catch_all && expect_kv accept-all yes && expect_kv disposable no &&
        expect_kv free no && expect_kv role no && expect_kv "catch-all verdict" send_with_caution &&
        expect_kv score-basis rules || return 1
    [[ $(kv score) =~ ^[0-9]+$ ]] && [[ $(kv verified-at) =~ Z$ ]] || it_fail "score or verified-at: $(cat "$IT_DIR/cli.out")" || return 1
    cli verify "accepted_email@$SB"; expect_rc 0 || return 1
    expect_kv status deliverable && expect_kv reason accepted_email || return 1
    # absent fields are left out, not shown empty
    [ -z "$(kv sub-status)" ] && [ -z "$(kv did-you-mean)" ] && [ -z "$(kv "catch-all verdict")" ] &&
        [ -z "$(kv provider)" ] ||
        it_fail "null fields shown: $(cat "$IT_DIR/cli.out")" || return 1
    cli verify "role_based@$SB"; expect_kv role yes && expect_kv status risky
}
t_case "verify: status, reason, score, disposable, free, accept-all, role, verified-at; sub-status and send verdict when present" t_verify_human

t_verify_json_world() {
    cli --json verify "rejected_email@$SB"; expect_rc 0 || return 1
    expect_json .status undeliverable && expect_json .sub_status mailbox_not_found && expect_json .credits_charged 1 || return 1
    # world addresses: the real MTA and DNS of mail_env.sh
    cli verify alice@mx.svc.test --json; expect_rc 0 && expect_json .status deliverable && expect_json .smtp.code 250 || return 1
    cli verify x@mailbx.svc.test; expect_rc 0 || return 1
    expect_kv status undeliverable && expect_kv sub-status possible_typo && expect_kv did-you-mean x@mailbox.svc.test
}
t_case "verify --json prints the API's JSON; world addresses: deliverable, and did-you-mean for a typo" t_verify_json_world

t_invalid_input_local() {
    local acc key before
    acc=$(it_account pro 5)
    key=$(it_key "$acc" '*')
    before=$(used "$key")
    expect_eq "rate-limit count of a new key" 0 "$before" || return 1
    ROCKETVERIFIER_API_KEY=$key cli verify "not an email"
    expect_rc 2 && expect_err "invalid_input" || return 1
    ROCKETVERIFIER_API_KEY=$key cli --json verify "a@@b.example"
    expect_rc 2 && expect_json .error.code invalid_input || return 1
    ROCKETVERIFIER_API_KEY=$key cli bulk create "no at sign" "two@@ats" --json
    expect_rc 2 && expect_json .error.code invalid_input || return 1
    expect_eq "rate-limit count after refusals" 0 "$(used "$key")" || return 1
    expect_eq "credits after refusals" 5 "$(balance "$acc")" || return 1
    expect_eq "jobs after refusals" 0 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$acc'")" || return 1
    # the count does see svc's requests: one verification moves it
    ROCKETVERIFIER_API_KEY=$key cli verify "accepted_email@$SB"; expect_rc 0 || return 1
    expect_eq "rate-limit count after one verification" 1 "$(used "$key")" || return 1
    # a list keeps its good addresses and leaves out the others
    ROCKETVERIFIER_API_KEY=$key cli bulk create "accepted_email@$SB" "not an email" --json
    expect_rc 0 && expect_json .total_emails 1 && expect_err "1 value not shaped like an email left out" &&
        expect_err "'not an email'"
}
t_case "addresses not shaped like an email are invalid_input locally: exit 2, no request (rate-limit count, credits and jobs unchanged)" t_invalid_input_local

# ---------------------------------------------------------------- settings

t_config_file() {
    local f=$XDG_CONFIG_HOME/svc/config ino
    cli config set-key "$KEY"; expect_rc 0 || return 1
    expect_eq "config file mode" 600 "$(stat -c %a "$f")" || return 1
    expect_eq "config folder mode" 700 "$(stat -c %a "$(dirname "$f")")" || return 1
    grep -qx "api_key = $KEY" "$f" || it_fail "config file: $(cat "$f")" || return 1
    grep -qF -- "$KEY" "$IT_DIR/cli.out" && it_fail "set-key printed the whole key" && return 1
    # written anew and renamed over the old one, no temporary file left
    ino=$(stat -c %i "$f")
    echo "$KEY" | "$SVC" config set-key > /dev/null || it_fail "set-key from stdin" || return 1
    [ "$(stat -c %i "$f")" != "$ino" ] || it_fail "the config file was rewritten in place" || return 1
    expect_eq "files in the config folder" config "$(ls -A "$(dirname "$f")")" || return 1
    expect_eq "config file mode after a rewrite" 600 "$(stat -c %a "$f")" || return 1
    env -u ROCKETVERIFIER_API_KEY "$SVC" config show > "$IT_DIR/cli.out" 2>&1 || it_fail "config show" || return 1
    grep -qF -- "$KEY" "$IT_DIR/cli.out" && it_fail "config show printed the whole key" && return 1
    grep -q "^api-key .*${KEY: -4} (from the config file)" "$IT_DIR/cli.out" || it_fail "config show: $(cat "$IT_DIR/cli.out")" || return 1
    # others may read it: refused, with what to do
    chmod 644 "$f"
    ROCKETVERIFIER_API_KEY= cli credits
    expect_rc 3 && expect_err "chmod 600" || return 1
    chmod 640 "$f"
    ROCKETVERIFIER_API_KEY= cli --json credits
    expect_rc 3 && expect_json .error.code config || return 1
    chmod 600 "$f"
    ROCKETVERIFIER_API_KEY= cli --json credits; expect_rc 0 && expect_json .balance "$(balance "$ACC")"
}
t_case "config set-key: 0600 file in a 0700 folder, written by rename, never printed whole; a file others can read is refused" t_config_file

t_key_precedence() {
    local a b c ka kb kc
    a=$(it_account pro 11); ka=$(it_key "$a" '*')
    b=$(it_account pro 22); kb=$(it_key "$b" '*')
    c=$(it_account pro 33); kc=$(it_key "$c" '*')
    "$SVC" config set-key "$kc" > /dev/null || return 1
    ROCKETVERIFIER_API_KEY= cli credits --json; expect_json .balance 33 || return 1
    ROCKETVERIFIER_API_KEY=$kb cli credits --json; expect_json .balance 22 || return 1
    ROCKETVERIFIER_API_KEY=$kb cli --api-key "$ka" credits --json; expect_json .balance 11 || return 1
    ROCKETVERIFIER_API_KEY=$kb cli credits --api-key "$ka" --json; expect_json .balance 11 || return 1
    ROCKETVERIFIER_API_KEY=$kb cli config show --json
    expect_json .api_key_source environment && expect_jq ".api_key | endswith(\"${kb: -4}\")" || return 1
    ROCKETVERIFIER_API_KEY= cli config show --json; expect_json .api_key_source config || return 1
    "$SVC" config set-key "$KEY" > /dev/null
    # no key anywhere
    rm -f "$XDG_CONFIG_HOME/svc/config"
    ROCKETVERIFIER_API_KEY= cli credits; expect_rc 3 && expect_err "no API key" || return 1
    "$SVC" config set-key "$KEY" > /dev/null
}
t_case "the key: --api-key over ROCKETVERIFIER_API_KEY over the config file" t_key_precedence

t_base_url_precedence() {
    cli config set-base-url "$DEAD/"; expect_rc 0 || return 1
    grep -qx "base_url = $DEAD" "$XDG_CONFIG_HOME/svc/config" || it_fail "base_url line" || return 1
    grep -qx "api_key = $KEY" "$XDG_CONFIG_HOME/svc/config" || it_fail "set-base-url lost the key" || return 1
    SVC_BASE_URL= cli credits; expect_rc 7 && expect_err "no answer from the API" || return 1
    SVC_BASE_URL= cli config show --json; expect_json .base_url "$DEAD" && expect_json .base_url_source config || return 1
    cli credits --json; expect_rc 0 || return 1
    SVC_BASE_URL=$DEAD cli --base-url "$BASE_URL" credits --json; expect_rc 0 || return 1
    cli --base-url "$DEAD" credits; expect_rc 7 || return 1
    cli config set-base-url "$BASE_URL"; expect_rc 0 || return 1
    SVC_BASE_URL= cli credits --json; expect_rc 0 || return 1
    cli config set-base-url "ftp://x"; expect_rc 2 || return 1
    SVC_BASE_URL= ROCKETVERIFIER_API_KEY= cli config show; expect_rc 0 &&
        expect_kv base-url "$BASE_URL (from the config file)"
}
t_case "the base URL: --base-url over SVC_BASE_URL over the config file" t_base_url_precedence

# ---------------------------------------------------------------- errors

t_exit_statuses() {
    local acc key poor one
    cli --api-key svc_live_nosuchkey000000000000 credits --json
    expect_rc 3 && expect_json .error.code unauthorized && expect_err "unauthorized" || return 1
    acc=$(it_account pro 0)
    key=$(it_key "$acc" 'credits:read')
    cli --api-key "$key" verify "accepted_email@$SB"; expect_rc 3 && expect_err "insufficient_scope" || return 1
    cli bulk status job_nosuchjob000000000000; expect_rc 4 && expect_err "svc: not_found: " && expect_err "(HTTP 404, request req_" || return 1
    poor=$(it_key "$acc" '*')
    cli --api-key "$poor" verify "accepted_email@$SB" --json; expect_rc 5 && expect_json .error.code insufficient_credits || return 1
    one=$(it_account pro 1)
    cli --api-key "$(it_key "$one" '*')" bulk create "a@x.example" "b@x.example"
    expect_rc 5 && expect_err "insufficient_credits" || return 1
    cli --base-url "$DEAD" credits; expect_rc 7 || return 1
    stub s500 '[{"status": 500, "headers": {"Content-Type": "text/html"}, "body": "<h1>oops</h1>"}]'
    cli --base-url "$STUB_URL" credits; expect_rc 8 && expect_err "HTTP 500" || return 1
    stub s200 '[{"status": 200, "body": "not json"}]'
    cli --base-url "$STUB_URL" credits; expect_rc 8 && expect_err "not a JSON object"
}
t_case "exit statuses: auth 3, not found 4, insufficient credits 5, network 7, server 8, with the API's code" t_exit_statuses

t_429_retried_real() {
    local acc key start took wait
    acc=$(it_account free 10)
    key=$(it_key "$acc" '*' --rate-limit 1)
    API_KEY=$key http GET /v1/credits; expect_status 200 || return 1
    API_KEY=$key http GET /v1/credits; expect_status 429 || return 1
    start=$(date +%s.%N)
    cli --api-key "$key" credits --json
    took=$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "%d", n - s }')
    expect_rc 0 && expect_json .balance 10 && expect_err "rate limited (429); trying again in" &&
        expect_err "(retry 1 of 2)" || return 1
    wait=$(sed -n 's/.*trying again in \([0-9]*\) s.*/\1/p' "$IT_DIR/cli.err" | head -n 1)
    [ "$wait" -ge 1 ] && [ "$took" -ge $((wait - 1)) ] || it_fail "waited ${took}s for Retry-After $wait"
}
t_case "a 429 of a key limited to 1 request is retried after its Retry-After, and succeeds" t_429_retried_real

t_429_shapes() {
    local start took
    # the flat shape, no Retry-After: reset_at (ISO 8601) says when
    stub flat '[{"status": 429, "body": "{\"success\":false,\"error\":\"Too many domain checks\",\"limit\":30,\"reset_at\":\"{RESET_ISO+2}\"}"},
        {"status": 200, "body": "{\"balance\":7,\"used\":0,\"refunded\":0,\"organization\":null}"}]'
    start=$(date +%s)
    cli --base-url "$STUB_URL" credits --json
    took=$(( $(date +%s) - start ))
    expect_rc 0 && expect_json .balance 7 && expect_eq "requests" 2 "$(stub_count)" || return 1
    [ "$took" -ge 1 ] || it_fail "did not wait for the flat shape's reset_at (${took}s)" || return 1
    # the standard shape, no Retry-After: details.reset_at (Unix seconds)
    stub std '[{"status": 429, "body": "{\"error\":{\"code\":\"rate_limited\",\"message\":\"slow down\",\"details\":{\"limit\":1,\"remaining\":0,\"reset_at\":{RESET_UNIX+2}}}}"},
        {"status": 200, "body": "{\"balance\":8,\"used\":0,\"refunded\":0,\"organization\":null}"}]'
    start=$(date +%s)
    cli --base-url "$STUB_URL" credits --json
    took=$(( $(date +%s) - start ))
    expect_rc 0 && expect_json .balance 8 && expect_eq "requests" 2 "$(stub_count)" || return 1
    [ "$took" -ge 1 ] || it_fail "did not wait for details.reset_at (${took}s)" || return 1
    # a 429 that does not end: the first try and 2 retries, then exit 6
    stub always '[{"status": 429, "headers": {"Retry-After": "1"}, "body": "{\"error\":{\"code\":\"rate_limited\",\"message\":\"Rate limit exceeded\",\"details\":{\"limit\":1,\"remaining\":0,\"reset_at\":0}}}"}]'
    cli --base-url "$STUB_URL" credits --json
    expect_rc 6 && expect_json .error.code rate_limited && expect_eq "requests" 3 "$(stub_count)" &&
        expect_err "(retry 2 of 2)" || return 1
    stub flatalways '[{"status": 429, "headers": {"Retry-After": "1"}, "body": "{\"success\":false,\"error\":\"Too many domain checks\",\"limit\":30,\"reset_at\":\"{RESET_ISO+1}\"}"}]'
    cli --base-url "$STUB_URL" credits
    expect_rc 6 && expect_err "rate_limited: Too many domain checks (HTTP 429)" && expect_eq "requests" 3 "$(stub_count)"
}
t_case "both 429 body shapes: the wait read from reset_at when there is no Retry-After; 2 retries, then exit 6" t_429_shapes

# ---------------------------------------------------------------- jobs

t_bulk_create_wait_plain() {
    local pid
    "$SVC" bulk create "accepted_email@$SB" "rejected_email@$SB" "catch_all@$SB" --name cli-wait --wait --json \
        > "$IT_DIR/wait.out" 2> "$IT_DIR/wait-err.log" &
    pid=$!
    JOB=$(wait_job_of "$IT_DIR/wait-err.log") || return 1
    [ -s "$IT_DIR/wait.out" ] && it_fail "--json printed before the end: $(cat "$IT_DIR/wait.out")" && return 1
    # the worker runs only once --wait has seen the job pending
    wait_line "$IT_DIR/wait-err.log" "^$JOB: pending 0% \\(0/3, 0/min, ETA --\\)$" || return 1
    run_worker "$JOB" || return 1
    wait "$pid" || it_fail "bulk create --wait exited $?: $(cat "$IT_DIR/wait-err.log")" || return 1
    # one JSON document: the completed job, the creation's answer in it
    json_one "$IT_DIR/wait.out" || return 1
    HTTP_BODY=$(cat "$IT_DIR/wait.out"); HTTP_REQUEST="bulk create --wait --json"
    expect_json .job_id "$JOB" && expect_json .status completed && expect_json .counts.valid 1 &&
        expect_json .created.job_id "$JOB" && expect_json .created.status pending && expect_json .created.total_emails 3 &&
        expect_jq '.created.credits_remaining | type == "number"' || return 1
    grep -q "^$JOB: pending 0% (0/3, 0/min, ETA --)$" "$IT_DIR/wait-err.log" || it_fail "no plain pending line: $(cat "$IT_DIR/wait-err.log")" || return 1
    grep -q "^$JOB: completed 100% (3/3, " "$IT_DIR/wait-err.log" || it_fail "no plain completed line: $(cat "$IT_DIR/wait-err.log")" || return 1
    if grep -q $'[\r\033]' "$IT_DIR/wait-err.log"; then it_fail "terminal codes in plain lines"; fi
}
t_case "bulk create --wait, not on a terminal: plain progress lines, then the completed job (with --json one document, the creation's answer under created)" t_bulk_create_wait_plain

t_bulk_status_results() {
    cli bulk status "$JOB"; expect_rc 0 || return 1
    expect_kv job "$JOB" && expect_kv status completed && expect_kv name cli-wait &&
        expect_kv counts "valid 1, invalid 1, risky 0, catch_all 1, disposable 0, unknown 0" || return 1
    cli bulk status "$JOB" --json; expect_json .counts.catch_all 1 || return 1
    cli bulk results "$JOB"; expect_rc 0 || return 1
    head -n 1 "$IT_DIR/cli.out" | grep -Eq '^EMAIL +STATUS +CLASSIFICATION +SUB_STATUS +SCORE$' || it_fail "results header: $(head -n 1 "$IT_DIR/cli.out")" || return 1
    grep -Eq "^rejected_email@$SB +undeliverable +invalid +mailbox_not_found +[0-9]+$" "$IT_DIR/cli.out" ||
        it_fail "results row: $(cat "$IT_DIR/cli.out")" || return 1
    grep -Eq "^accepted_email@$SB +deliverable +valid +- +[0-9]+$" "$IT_DIR/cli.out" || it_fail "a null sub_status" || return 1
    cli bulk results "$JOB" --classification catch_all --json
    expect_json .total 1 && expect_json '.results[0].email' "catch_all@$SB" && expect_json '.results[0].sub_status' catch_all || return 1
    cli bulk results "$JOB" --limit 1 --page 2 --json
    expect_json .page 2 && expect_json .limit 1 && expect_json '[.results[].email] | join(",")' "rejected_email@$SB" || return 1
    cli bulk results "$JOB" --limit 1 --page 3; expect_rc 0 && grep -q "^page 3 of 3 (3 results, 1 a page)$" "$IT_DIR/cli.out" || it_fail "paging line" || return 1
    cli bulk results "$JOB" --limit 1001; expect_rc 2 && expect_err "1 to 1000" || return 1
    cli bulk results "$JOB" --limit 0; expect_rc 2 || return 1
    cli bulk results "$JOB" --classification deliverable; expect_rc 2
}
t_case "bulk status and bulk results (--classification, --limit up to 1000, --page) with a sub_status column" t_bulk_status_results

csv_col() { python3 -c 'import csv,sys
for row in csv.DictReader(open(sys.argv[1], newline="")): print(row[sys.argv[2]])' "$1" "$2"; }

t_download() {
    local d=$IT_DIR/dl
    mkdir -p "$d"
    (cd "$d" && "$SVC" bulk download "$JOB" > "$d/default.msg") || it_fail "download to the default file" || return 1
    expect_eq "rows of $JOB.csv" "accepted_email@$SB rejected_email@$SB catch_all@$SB" "$(csv_col "$d/$JOB.csv" email | tr '\n' ' ' | sed 's/ $//')" || return 1
    grep -q "^wrote [0-9]* bytes to $JOB.csv$" "$d/default.msg" || it_fail "download message: $(cat "$d/default.msg")" || return 1
    cli bulk download "$JOB" --format csv --filter deliverable --output "$d/good.csv" --json
    expect_rc 0 && expect_json .output "$d/good.csv" && expect_json .bytes "$(stat -c %s "$d/good.csv")" || return 1
    expect_eq "filter=deliverable" "accepted_email@$SB" "$(csv_col "$d/good.csv" email)" || return 1
    cli bulk download "$JOB" --filter send_safe --output -; expect_rc 0 || return 1
    head -n 1 "$IT_DIR/cli.out" | grep -q '^email,svc_status,' || it_fail "--output - is not the CSV" || return 1
    cli bulk download "$JOB" --filter undeliverable --output "$d/bad.csv"
    expect_eq "filter=undeliverable" "rejected_email@$SB" "$(csv_col "$d/bad.csv" email)" || return 1
    cli bulk download "$JOB" --format xlsx; expect_rc 2 || return 1
    cli bulk download "$JOB" --filter valid; expect_rc 2 || return 1
    # refused (409): an error, and no file (nor a temporary one) left behind
    cli bulk create "accepted_email@$SB" --json; PENDING=$(json .job_id)
    cli bulk download "$PENDING" --output "$d/pending.csv"; expect_rc 1 && expect_err "job_not_completed" || return 1
    [ -z "$(ls "$d" | grep pending)" ] || it_fail "a refused download left a file: $(ls "$d")" || return 1
    # --include-original is for uploads (t_upload_txt_xlsx_json): a JSON
    # job's is refused by the server
    cli bulk download "$JOB" --include-original --output "$d/orig.csv"
    expect_rc 1 && expect_err "include_original" || return 1
    [ ! -e "$d/orig.csv" ] || it_fail "file of a refused download" || return 1
    # streamed to disk: 40 MB, more than svc keeps of an answer in memory
    # (32 MiB), written whole while svc's memory stays small. cli_stub.py
    # serves it: the real server would need a job of some 300,000 rows.
    stub bigcsv "[$(jq -cn --arg row "x@big.example,deliverable,valid,,accepted_email,95,no,no,no,no,,2026-01-01T00:00:00Z" \
        '{status: 200, headers: {"Content-Type": "text/csv"}, body: ($row + "\r\n"), repeat: 480000}')]"
    python3 - "$SVC" "$STUB_URL" "$JOB" "$d" <<'PY' || { it_fail "memory of a large download"; return 1; }
import os, subprocess, sys
svc, stub, job, d = sys.argv[1:5]
def peak(args):	# svc's exit status and peak RSS
    p = subprocess.Popen([svc] + args, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_maxrss * 1024
rc0, small = peak(["bulk", "download", job, "--output", d + "/small.csv"])
rc, big = peak(["--base-url", stub, "bulk", "download", "job_big", "--output", d + "/big.csv"])
size = os.path.getsize(d + "/big.csv")
print("# download of %d bytes: exit %d, peak RSS %d bytes (%d for a small one)" % (size, rc, big, small))
assert rc0 == 0 and rc == 0 and size == 480000 * 86 and big - small < size / 8, (rc0, rc, size, small, big)
PY
}
t_case "bulk download: streamed to --output (default <job>.csv, - for stdout), --filter, --format csv; a refusal leaves no file" t_download

t_jobs() {
    cli jobs list --json; expect_rc 0 && expect_jq "[.data[].job_id] | index(\"$JOB\") != null" || return 1
    cli jobs list --status completed --json; expect_jq '[.data[].status] | all(. == "completed")' && expect_jq ".data | length >= 1" || return 1
    cli jobs list --status pending; expect_rc 0 || return 1
    head -n 1 "$IT_DIR/cli.out" | grep -Eq '^JOB +TYPE +STATUS +TOTAL +PROCESSED +CREATED +NAME$' || it_fail "jobs list header" || return 1
    grep -q "^$PENDING " "$IT_DIR/cli.out" && ! grep -q "^$JOB " "$IT_DIR/cli.out" || it_fail "jobs list --status pending: $(cat "$IT_DIR/cli.out")" || return 1
    cli jobs list --status nosuch; expect_rc 2 || return 1
    cli jobs list --limit 101; expect_rc 2 || return 1
    cli jobs progress "$JOB"; expect_rc 0 && expect_kv status completed && expect_kv progress "100% (3/3)" &&
        expect_kv "by status" "deliverable 1, undeliverable 1, risky 0, unknown 1" && expect_kv eta -- || return 1
    cli jobs progress "$PENDING" --json; expect_json .status pending && expect_json .percent 0 || return 1
    cli jobs cancel "$PENDING"; expect_rc 0 && expect_kv status cancelled && expect_kv credits "1 refunded" || return 1
    cli jobs cancel "$PENDING" --json; expect_rc 1 && expect_json .error.code job_not_cancellable || return 1
    cli jobs progress "$PENDING" --wait; expect_rc 1 && expect_err "was cancelled"
}
t_case "jobs list (--status), jobs progress, jobs cancel (refunds; a second cancel is an error)" t_jobs

t_credits() {
    cli credits; expect_rc 0 || return 1
    API_KEY=$KEY http GET /v1/credits
    expect_kv balance "$(json .balance)" && expect_kv used "$(json .used)" && expect_kv refunded "$(json .refunded)" || return 1
    cli credits --json; expect_json .balance "$(balance "$ACC")"
}
t_case "credits: balance, used and refunded" t_credits

t_bulk_create_file() {
    local d=$IT_DIR/files
    mkdir -p "$d"
    printf 'Name,E-mail,Company\r\n"Doe, Jane","accepted_email@%s",Acme\r\nBob,"not an email",Acme\r\n"Multi\nLine",role_based@%s,"X ""Y"""\r\n' "$SB" "$SB" > "$d/list.csv"
    cli bulk create --file "$d/list.csv" --name from-csv --json
    expect_rc 0 && expect_json .total_emails 2 && expect_json .name from-csv && expect_err "1 value not shaped" || return 1
    expect_eq "addresses of the CSV job" "accepted_email@$SB role_based@$SB" \
        "$(it_sql "SELECT email FROM job_emails WHERE job_id = '$(json .job_id)' ORDER BY seq" | tr '\n' ' ' | sed 's/ $//')" || return 1
    # no header: the column that holds addresses
    printf '1,x,mailbox_full@%s\n2,y,unknown@%s\n' "$SB" "$SB" > "$d/nohead.csv"
    cli bulk create --file "$d/nohead.csv" --json; expect_rc 0 && expect_json .total_emails 2 || return 1
    printf 'accepted_email@%s\n\n  spam_trap@%s  \r\n' "$SB" "$SB" > "$d/list.txt"
    cli bulk create --file "$d/list.txt" "extra@$SB" --json; expect_rc 0 && expect_json .total_emails 3 || return 1
    cli bulk create --file "$d/list.xls"; expect_rc 2 && expect_err ".csv or .txt" || return 1
    cli bulk create --file "$d/missing.csv"; expect_rc 1 || return 1
    cli bulk create; expect_rc 2 && expect_err "no addresses"
}
t_case "bulk create --file: .csv (email column by header or by content, quoted fields) and .txt; other files refused" t_bulk_create_file

# The answer of the first try is lost on its way back (a proxy drops it):
# svc sends the request again with the same Idempotency-Key, the server
# replays its answer, and there is one job, charged once.
t_idempotent_retry() {
    local acc key keys
    acc=$(it_account pro 10)
    key=$(it_key "$acc" '*')
    proxy create 1
    cli --api-key "$key" --base-url "$PROXY_URL" bulk create "one@$SB" "two@$SB" --json
    expect_rc 0 && expect_err "no answer from the API" || return 1
    expect_eq "jobs of the account" "$(json .job_id)" "$(it_sql "SELECT id FROM jobs WHERE account_id = '$acc'")" || return 1
    expect_eq "balance" 8 "$(balance "$acc")" || return 1
    keys=$(jq -r 'select(.path == "/v1/verify/bulk") | .headers["idempotency-key"]' "$PROXY_LOG")
    expect_eq "tries" 2 "$(echo "$keys" | wc -l)" || return 1
    expect_eq "one key for both tries" 1 "$(echo "$keys" | sort -u | wc -l)" || return 1
    [[ $keys == svc-cli-* ]] || it_fail "Idempotency-Key $keys" || return 1
    # --idempotency-key repeats a create by hand: the same job, not charged again
    cli --api-key "$key" bulk create "one@$SB" "two@$SB" --idempotency-key "$(echo "$keys" | head -n 1)"
    expect_rc 0 && expect_kv job "$(it_sql "SELECT id FROM jobs WHERE account_id = '$acc'")" &&
        expect_kv note "this job was created earlier with the same Idempotency-Key: nothing was charged again" || return 1
    expect_eq "balance after the repeat" 8 "$(balance "$acc")" || return 1
    # each create has a key of its own
    cli --api-key "$key" bulk create "one@$SB" "two@$SB" --json; expect_rc 0 || return 1
    expect_eq "jobs after a second create" 2 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$acc'")"
}
t_case "bulk create whose answer was lost is sent again with the same Idempotency-Key: one job, charged once" t_idempotent_retry

# ---------------------------------------------------------------- terminals

# tmux_run NAME COMMAND [LINES]: COMMAND in a detached terminal of 100
# columns and LINES (10) lines; its exit status goes to IT_DIR/NAME.rc
tmux_run() {
    tmux -S "$TMUX_SOCK" new-session -d -s "$1" -x 100 -y "${3:-10}" \
        "env SVC_WAIT_INTERVAL=1 ROCKETVERIFIER_API_KEY=$KEY SVC_BASE_URL=$BASE_URL XDG_CONFIG_HOME=$XDG_CONFIG_HOME $2; echo \$? > $IT_DIR/$1.rc; sleep 30"
}
screen() { tmux -S "$TMUX_SOCK" capture-pane -p -t "$1"; }
# wait_screen NAME REGEX: until the terminal shows a line matching REGEX
wait_screen() {
    for _ in $(seq 1 100); do screen "$1" | grep -Eq -- "$2" && return 0; sleep 0.1; done
    it_fail "terminal $1 never showed /$2/: $(screen "$1" | tr '\n' '|')"
}
wait_rc() {
    for _ in $(seq 1 100); do [ -s "$IT_DIR/$1.rc" ] && { cat "$IT_DIR/$1.rc"; return 0; }; sleep 0.1; done
    echo none
}

t_wait_bar_tty() {
    local job
    cli bulk create "accepted_email@$SB" "unknown@$SB" --json; job=$(json .job_id)
    tmux_run bar "$SVC jobs progress $job --wait"
    wait_screen bar "^$job  pending  \[-{10,}\]    0%  0/2  0/min  ETA --" || return 1
    run_worker "$job" || return 1
    wait_screen bar "^$job  completed  \[#{10,}\]  100%  2/2  " || return 1
    expect_eq "exit status" 0 "$(wait_rc bar)" || return 1
    # the bar was redrawn in place: one line for it, then the summary
    expect_eq "bar lines" 1 "$(screen bar | grep -c "^$job  ")" || return 1
    screen bar | grep -q "^progress  *100% (2/2)$" || it_fail "no summary after the bar: $(screen bar | tr '\n' '|')"
}
t_case "--wait on a terminal (tmux): a live bar with percent, counts, rate and ETA, redrawn in place" t_wait_bar_tty

t_ctrl_c() {
    local job pid
    cli bulk create "accepted_email@$SB" --name keep-going --json; job=$(json .job_id)
    tmux_run intr "$SVC jobs progress $job --wait"
    wait_screen intr "^$job  pending  \[" || return 1
    tmux -S "$TMUX_SOCK" send-keys -t intr C-c
    expect_eq "exit status after Ctrl-C" 130 "$(wait_rc intr)" || return 1
    screen intr | grep -q "stopped waiting; job $job goes on" || it_fail "no message: $(screen intr | tr '\n' '|')" || return 1
    API_KEY=$KEY http GET "/v1/jobs/$job"; expect_json .status pending || return 1
    # SIGINT to a --wait that is not on a terminal, after bulk create
    "$SVC" bulk create "accepted_email@$SB" --wait --json > "$IT_DIR/intr.out" 2> "$IT_DIR/intr-err.log" &
    pid=$!
    for _ in $(seq 1 100); do grep -q ': pending' "$IT_DIR/intr-err.log" 2>/dev/null && break; sleep 0.1; done
    kill -INT "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"; wait "$pid"
        it_fail "svc --wait went on after SIGINT"; return 1
    fi
    wait "$pid"; expect_eq "exit status after SIGINT" 130 "$?" || return 1
    grep -q "stopped waiting; job job_.* goes on" "$IT_DIR/intr-err.log" || it_fail "no message after SIGINT" || return 1
    # with --json the one document says so and keeps the creation's answer
    json_one "$IT_DIR/intr.out" || return 1
    HTTP_BODY=$(cat "$IT_DIR/intr.out"); HTTP_REQUEST="bulk create --wait --json, interrupted"
    expect_json .error.code interrupted && expect_json .created.status pending || return 1
    job=$(json .created.job_id)
    API_KEY=$KEY http GET "/v1/jobs/$job"; expect_json .status pending || return 1
    # svc-api's log shows svc's polls, and no DELETE of the job
    grep -q "method=GET path=\"/v1/jobs/$job/progress\"" "$IT_DIR/log/svc.log" || it_fail "svc's polls are not in the log" || return 1
    expect_eq "DELETE requests in the log" 0 "$(grep -c "method=DELETE path=\"/v1/jobs/$job\"" "$IT_DIR/log/svc.log")"
}
t_case "Ctrl-C stops --wait (exit 130) and never cancels the job" t_ctrl_c

# ---------------------------------------------------------------- uploads

# Uploads, previews and confirmations against the real server, svc-worker
# reading the files (--once, by it_job_wait) and the real MTA of
# mail_env.sh for the preview's SMTP sample; callbacks go to
# webhook_receiver.py. svc waits in the background while the worker runs.
UP=$IT_DIR/up
mkdir -p "$UP"
# Two columns of addresses: the header rules would take Email;
# --email-column and --column-mapping choose Backup.
{
    echo "Name,Email,Backup"
    echo "Ann,accepted_email@$SB,role_based@$SB"
    echo "Bob,rejected_email@$SB,catch_all@$SB"
    echo "Cy,mailbox_full@$SB,ROLE_BASED@$SB"
} > "$UP/list.csv"
# For the preview: 40 unknown mailboxes at mx.svc.test (refused by the
# MTA: the rows that need SMTP, so that the sample, whichever it draws,
# finds them undeliverable), a role address and another address at an
# NXDOMAIN domain, a disposable one, a line that is no address, and a
# repeat.
{
    echo "email,source"
    for i in $(seq 1 40); do echo "nobody$i@mx.svc.test,web"; done
    echo "info@nosuch.svc.test,form"
    echo "x@nosuch.svc.test,form"
    echo "z@throwaway.svc.test,form"
    echo "not an address,import"
    echo "NOBODY1@mx.svc.test,dup"
} > "$UP/health.csv"
HEALTH=44
# the line that is no address is a row but free: credits needed
HEALTH_CREDITS=43
# python3-openpyxl is Debian's: the first python3 that has it writes XLSX
PYX=
for p in python3 /usr/bin/python3; do "$p" -c 'import openpyxl' 2>/dev/null && { PYX=$p; break; }; done
ledger_charges() { it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref = 'job:$1:charge'"; }
# addresses_of JOB: the job's addresses as svc bulk results --json gives them
addresses_of() {
    "$SVC" bulk results "$1" --json | jq -r '[.results[].email] | join(" ")'
}
# callback_of JOB SECRET: the receiver got JOB's job.completed, signed with
# SECRET (svc-worker --once sends what is due)
callback_of() {
    local i
    for i in $(seq 1 10); do
        jq -e --arg j "job_callback:$1" 'select(.headers["x-webhook-id"] == $j)' "$RECEIVED" > /dev/null 2>&1 && break
        it_worker_once
    done
    jq -c --arg j "job_callback:$1" 'select(.headers["x-webhook-id"] == $j)' "$RECEIVED" | head -n 1 > "$IT_DIR/cb.json"
    [ -s "$IT_DIR/cb.json" ] || { it_fail "no callback of $1: $(cat "$RECEIVED")"; return 1; }
    python3 - "$IT_DIR/cb.json" "$2" "$1" <<'PY' || { it_fail "the callback of $1"; return 1; }
import base64, hashlib, hmac, json, sys
r = json.load(open(sys.argv[1]))
body = base64.b64decode(r["body_b64"])
sig = dict(p.split("=", 1) for p in r["headers"]["x-service-signature"].split(","))
want = hmac.new(sys.argv[2].encode(), sig["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
assert hmac.compare_digest(sig["v1"], want), (sig, want)
ev = json.loads(body)
assert ev["event"] == "job.completed" and ev["data"]["job_id"] == sys.argv[3], ev
PY
}

t_upload_csv_wait() {
    local before job secret
    before=$(balance "$ACC")
    bg up1 bulk upload "$UP/list.csv" --email-column Backup --name up-csv --callback-url "$R/cb1" --wait
    job=$(bg_kv up1 job) || return 1
    # the worker reads the file only once --wait has seen it unread
    bg_line up1 "^$job: ingesting 0% \(0 rows read\)$" || return 1
    it_job_wait "$job" completed || return 1
    bg_end up1; expect_rc 0 || return 1
    expect_kv job "$job" && expect_kv status ingesting && expect_kv preview no &&
        expect_kv status-url "/v1/jobs/$job" || return 1
    secret=$(kv callback-secret)
    [[ $secret == whsec_* ]] && grep -q "^ *(shown once: keep it" "$IT_DIR/cli.out" ||
        it_fail "callback secret: $(cat "$IT_DIR/cli.out")" || return 1
    # --wait: the plain lines of the reading, then of the verification,
    # then the finished job
    grep -q "^$job: ingesting 0% (0 rows read)$" "$IT_DIR/cli.err" &&
        grep -q "^$job: completed 100% (2/2, " "$IT_DIR/cli.err" || it_fail "--wait lines: $(cat "$IT_DIR/cli.err")" || return 1
    expect_eq "status lines" "ingesting completed" "$(awk '/^status  / { print $2 }' "$IT_DIR/cli.out" | tr '\n' ' ' | sed 's/ $//')" || return 1
    # the Backup column, de-duplicated, charged once per unique address
    expect_eq "addresses" "role_based@$SB catch_all@$SB" "$(addresses_of "$job")" || return 1
    expect_eq "balance" "$((before - 2))" "$(balance "$ACC")" || return 1
    cli bulk status "$job" --json
    expect_json .type upload && expect_json .name up-csv && expect_jq '.callback_secret == null' || return 1
    # the secret svc showed signs the job's callback
    callback_of "$job" "$secret"
}
t_case "bulk upload FILE.csv --email-column --name --callback-url --wait: the real server and worker; the callback secret shown once signs the callback" t_upload_csv_wait

t_upload_txt_xlsx_json() {
    local job
    printf 'accepted_email@%s\n\n  rejected_email@%s \r\nACCEPTED_EMAIL@%s\n' "$SB" "$SB" "$SB" > "$UP/list.txt"
    bg up2 bulk upload "$UP/list.txt" --json --wait --callback-url "$R/cb-txt"
    job=$(wait_job_of "$IT_DIR/up2.err") || return 1
    it_job_wait "$job" completed || return 1
    bg_end up2; expect_rc 0 || return 1
    # one JSON document: the finished job, with the API's 202 (and the
    # callback secret it alone shows) under created
    json_one "$IT_DIR/cli.out" || return 1
    expect_json .job_id "$job" && expect_json .status completed && expect_json .total_emails 2 &&
        expect_json .duplicates_removed 1 && expect_json .created.status ingesting && expect_json .created.preview false || return 1
    expect_jq '.created.callback_secret | startswith("whsec_")' || return 1
    callback_of "$job" "$(json .created.callback_secret)" || return 1
    expect_eq "addresses of the TXT" "accepted_email@$SB rejected_email@$SB" "$(addresses_of "$job")" || return 1
    [ -n "$PYX" ] || { it_fail "no python3 with openpyxl (python3-openpyxl) to write an XLSX"; return 1; }
    "$PYX" - "$UP/list.xlsx" "$SB" <<'PY' || { it_fail "openpyxl could not write the workbook"; return 1; }
import sys, openpyxl
wb = openpyxl.Workbook()
ws = wb.active
ws.append(["Name", "Email", "Work Mail"])
ws.append(["Ann", "accepted_email@" + sys.argv[2], "spam_trap@" + sys.argv[2]])
ws.append(["Bob", "rejected_email@" + sys.argv[2], "unknown@" + sys.argv[2]])
wb.save(sys.argv[1])
PY
    bg up3 bulk upload "$UP/list.xlsx" --column-mapping '{"email":"Work Mail"}' --name sheet --wait --json
    job=$(wait_job_of "$IT_DIR/up3.err") || return 1
    it_job_wait "$job" completed || return 1
    bg_end up3; expect_rc 0 || return 1
    json_one "$IT_DIR/cli.out" || return 1
    expect_json .status completed && expect_json .name sheet && expect_json .total_emails 2 || return 1
    expect_eq "addresses of the XLSX (Work Mail)" "spam_trap@$SB unknown@$SB" "$(addresses_of "$job")" || return 1
    # the original columns come back with --include-original, --filter
    # applied
    cli bulk download "$job" --include-original --filter unknown --output "$UP/sheet.csv"; expect_rc 0 || return 1
    expect_eq "header of the download" "Name,Email,Work Mail,svc_status" "$(head -n 1 "$UP/sheet.csv" | tr -d '\r' | cut -d, -f1-4)" &&
        expect_eq "rows" "Bob,rejected_email@$SB,unknown@$SB,unknown" "$(sed 1d "$UP/sheet.csv" | tr -d '\r' | cut -d, -f1-4)"
}
t_case "bulk upload FILE.txt and FILE.xlsx (--column-mapping) --wait --json: one document, the finished job with the 202 (its callback secret, which signs the callback) under created; the original columns downloaded" t_upload_txt_xlsx_json

# the report's line of a status: its count, share and bar of 30
preview_line() {	# preview_line STATUS COUNT SUM
    awk -v s="$1" -v n="$2" -v t="$3" 'BEGIN {
        b = t > 0 ? int(n * 30 / t) : 0; if (b == 0 && n > 0) b = 1
        bar = ""; for (i = 0; i < b; i++) bar = bar "#"
        printf "  %-16s %8d  %5.1f%%  %s\n", s, n, (t > 0 ? 100 * n / t : 0), bar }'
}
# expect_report JOB: svc's report shows what the API's preview says
expect_report() {
    local p=$IT_DIR/preview.json s sum line
    API_KEY=$KEY http POST "/v1/verify/bulk/$1/preview" "" --data ""
    expect_status 200 || return 1
    printf '%s' "$HTTP_BODY" > "$p"
    grep -qx "List Health Preview of job $1" "$IT_DIR/cli.out" || it_fail "report title: $(cat "$IT_DIR/cli.out")" || return 1
    sum=$(jq '[.preview.estimated_by_status[]] | add' "$p")
    for s in deliverable undeliverable risky unknown; do
        line=$(preview_line "$s" "$(jq ".preview.estimated_by_status.$s" "$p")" "$sum")
        # (an empty line would match any empty line of the report)
        [ -n "$line" ] || it_fail "preview_line $s printed nothing" || return 1
        grep -qxF -- "$line" "$IT_DIR/cli.out" ||
            it_fail "the line of $s: want '$line' in $(cat "$IT_DIR/cli.out")" || return 1
    done
    expect_kv computed-at "$(jq -r .preview.computed_at "$p")" &&
        expect_kv addresses "$(jq -r '.preview | "\(.total_emails) unique, \(.duplicates_removed) duplicates removed"' "$p")" &&
        expect_kv "credits needed" "$(jq .preview.credits_needed "$p")" &&
        expect_kv "after refunds" "$(jq .preview.estimated_credits_after_refunds "$p") (estimated)" &&
        expect_kv confidence "$(jq -r .preview.confidence "$p")" &&
        expect_kv "bounce rate" "$(jq -r '.preview.estimated_bounce_rate * 1000 | round / 10 | tostring | if test("\\.") then . else . + ".0" end' "$p")%" &&
        expect_kv "smtp sample" "$(jq -r '.preview.smtp_sample | "\(.size) probed: valid \(.counts.valid), invalid \(.counts.invalid), catch_all \(.counts.catch_all), unknown \(.counts.unknown)"' "$p")" &&
        expect_kv "sample method" "$(jq -r .preview.smtp_sample.method "$p")" || return 1
    grep -qx "Confirm with: svc bulk confirm $1" "$IT_DIR/cli.out" || it_fail "no confirm hint"
}

t_upload_preview_wait() {
    local before
    before=$(balance "$ACC")
    bg pv1 bulk upload "$UP/health.csv" --preview --name health --wait
    PJOB=$(bg_kv pv1 job) || return 1
    # the worker reads the file only once --wait has seen it unread
    bg_line pv1 "^$PJOB: ingesting 0% \(0 rows read\)$" || return 1
    it_job_wait "$PJOB" awaiting_confirmation || return 1
    bg_end pv1; expect_rc 0 || return 1
    expect_kv preview yes || return 1
    # while read: the reading's lines, then the preview when it is there
    grep -q "^$PJOB: ingesting 0% (0 rows read)$" "$IT_DIR/cli.err" &&
        grep -q "^$PJOB: awaiting_confirmation: the file is read, $HEALTH unique addresses$" "$IT_DIR/cli.err" &&
        grep -q "^preview ready$" "$IT_DIR/cli.err" || it_fail "--wait lines: $(cat "$IT_DIR/cli.err")" || return 1
    expect_report "$PJOB" || return 1
    expect_kv "credits needed" "$HEALTH_CREDITS" || return 1
    # the NXDOMAIN domain's two, the line that is no address and the
    # disposable domain are undeliverable; the 40 mailboxes behind SMTP are
    # fewer than preview_smtp_min_rows, so none is probed (a preview must
    # not tell one address's verdict) and they are estimated unknown
    grep -Eq "^  undeliverable +4 " "$IT_DIR/cli.out" && grep -Eq "^  unknown +40 " "$IT_DIR/cli.out" &&
        expect_kv "smtp sample" "0 probed: valid 0, invalid 0, catch_all 0, unknown 0" ||
        it_fail "undeliverable 4, unknown 40, no sample: $(cat "$IT_DIR/cli.out")" || return 1
    expect_eq "balance after a preview" "$before" "$(balance "$ACC")"
}
t_case "bulk upload --preview --wait: the reading followed, then the report (counts, shares, bar chart, credits, confidence) as the API's preview says; nothing charged" t_upload_preview_wait

t_preview_refresh() {
    local first e
    cli bulk preview "$PJOB"; expect_rc 0 || return 1
    expect_report "$PJOB" || return 1
    first=$(kv computed-at)
    cli bulk preview "$PJOB" --json; expect_rc 0 || return 1
    expect_json .status awaiting_confirmation && expect_json .preview.computed_at "$first" &&
        expect_json .preview.total_emails "$HEALTH" || return 1
    expect_json .preview.free_checks.suppressed 0 || return 1
    sleep 1.1
    # --refresh: 202 refreshing, asked again (without refresh) until there
    proxy refresh 0
    bg pv2 --base-url "$PROXY_URL" bulk preview "$PJOB" --refresh --wait
    bg_line pv2 "being computed again" || { bg_end pv2; return 1; }
    # the data changes before the worker computes the new preview (two of
    # the list's addresses suppressed), and svc asks twice more meanwhile:
    # the old preview it gets then is not the new one, so it goes on waiting
    API_KEY=$KEY http POST /v1/suppressions '{"entries":["nobody1@mx.svc.test","nobody2@mx.svc.test"]}'
    expect_status 201 || return 1
    for _ in $(seq 1 100); do [ "$(wc -l < "$PROXY_LOG")" -ge 3 ] && break; sleep 0.1; done
    kill -0 "$BG" 2> /dev/null || it_fail "svc stopped waiting before the new preview: $(cat "$IT_DIR/pv2.out" "$IT_DIR/pv2.err")" || return 1
    grep -Eq "^$PJOB: the preview is being computed again, asked at [0-9-]+T[0-9:]+Z$" "$IT_DIR/pv2.err" ||
        it_fail "the waiting line: $(cat "$IT_DIR/pv2.err")" || return 1
    it_worker_once
    bg_end pv2; expect_rc 0 || return 1
    expect_report "$PJOB" || return 1
    [[ $(kv computed-at) > $first ]] || it_fail "computed-at $(kv computed-at) is not after $first" || return 1
    # the report printed is the new preview: the suppressed addresses in it
    grep -q "^free checks  .*suppressed 2," "$IT_DIR/cli.out" || it_fail "not the new preview: $(cat "$IT_DIR/cli.out")" || return 1
    expect_kv addresses "$HEALTH unique, 1 duplicates removed" || return 1
    expect_eq "requests" "POST /v1/verify/bulk/$PJOB/preview?refresh=true" "$(jq -r '.method + " " + .path' "$PROXY_LOG" | head -n 1)" || return 1
    jq -r '.path' "$PROXY_LOG" | sed 1d | grep -qvx "/v1/verify/bulk/$PJOB/preview" &&
        it_fail "asked again with refresh: $(jq -r .path "$PROXY_LOG" | tr '\n' ' ')" && return 1
    # without --wait a 202 is said, not waited for
    cli bulk preview "$PJOB" --refresh; expect_rc 0 && grep -q "being computed again (svc bulk preview $PJOB --wait)" "$IT_DIR/cli.out" ||
        it_fail "preview --refresh: $(cat "$IT_DIR/cli.out")" || return 1
    it_worker_once
    for e in nobody1 nobody2; do API_KEY=$KEY http DELETE "/v1/suppressions/$e%40mx.svc.test"; expect_status 200 || return 1; done
}
t_case "bulk preview: the report, --json, --refresh --wait (computed again, asked for without refresh until the new one, made from data changed meanwhile, is there)" t_preview_refresh

t_confirm() {
    local poor pkey pjob before need
    poor=$(it_account pro 3)
    pkey=$(it_key "$poor" '*')
    bg pv3 --api-key "$pkey" bulk upload "$UP/health.csv" --preview --wait --json
    pjob=$(wait_job_of "$IT_DIR/pv3.err") || return 1
    it_job_wait "$pjob" awaiting_confirmation || return 1
    bg_end pv3; expect_rc 0 || return 1
    # one document: the preview, the upload's 202 under created
    json_one "$IT_DIR/cli.out" || return 1
    expect_json .status awaiting_confirmation && expect_json .preview.credits_needed "$HEALTH_CREDITS" &&
        expect_json .created.job_id "$pjob" && expect_json .created.preview true || return 1
    cli --api-key "$pkey" bulk confirm "$pjob"
    expect_rc 5 && expect_err "svc: insufficient_credits: " && expect_err "(HTTP 402" || return 1
    expect_eq "the poor balance" 3 "$(balance "$poor")" || return 1
    cli --api-key "$pkey" jobs cancel "$pjob"; expect_rc 0 && expect_kv credits "0 refunded" || return 1
    # the first answer is lost: svc asks again with the same key, and the
    # job is charged once
    before=$(balance "$ACC")
    need=$(it_sql "SELECT JSON_VALUE(preview, '$.credits_needed') FROM jobs WHERE id = '$PJOB'")
    proxy confirm 1
    cli --base-url "$PROXY_URL" bulk confirm "$PJOB"
    expect_rc 0 && expect_err "no answer from the API" && expect_kv status pending &&
        expect_kv credits "$need charged, $((before - need)) left" || return 1
    expect_eq "tries" 2 "$(jq -r '.headers["idempotency-key"]' "$PROXY_LOG" | wc -l)" &&
        expect_eq "one key" 1 "$(jq -r '.headers["idempotency-key"]' "$PROXY_LOG" | sort -u | wc -l)" || return 1
    expect_eq "balance after confirm" "$((before - need))" "$(balance "$ACC")" &&
        expect_eq "charges" 1 "$(ledger_charges "$PJOB")" || return 1
    # confirmed already: refused, nothing charged
    cli bulk confirm "$PJOB" --json
    expect_rc 1 && expect_json .error.code job_not_awaiting_confirmation && expect_json .error.details.status pending || return 1
    expect_eq "balance after a second confirm" "$((before - need))" "$(balance "$ACC")" || return 1
    cli bulk preview "$PJOB" --json; expect_rc 0 && expect_json .status pending || return 1
    it_job_wait "$PJOB" completed
}
t_case "bulk confirm: 402 (exit 5) when short; charged once even when its answer was lost; a second confirm refused (exit 1)" t_confirm

t_upload_source_url() {
    local job job2 body
    proxy url 0
    cli --base-url "$PROXY_URL" bulk upload https://files.example/list.csv --column-mapping '{"email":"Work Mail"}' \
        --name fetched --callback-url "$R/cb-url" --preview --json
    expect_rc 0 && expect_json .status ingesting && expect_json .preview true && expect_jq '.callback_secret | startswith("whsec_")' || return 1
    job=$(json .job_id)
    body=$(jq -r 'select(.path == "/v1/verify/bulk/upload") | .body' "$PROXY_LOG" | base64 -d)
    HTTP_BODY=$body HTTP_REQUEST="the source_url request"
    expect_json .source_url https://files.example/list.csv && expect_json .column_mapping.email "Work Mail" &&
        expect_json .name fetched && expect_json .preview true && expect_json .callback_url "$R/cb-url" || return 1
    expect_eq "content type" application/json "$(jq -r '.headers["content-type"]' "$PROXY_LOG")" || return 1
    [[ $(jq -r '.headers["idempotency-key"]' "$PROXY_LOG") == svc-cli-* ]] || it_fail "no Idempotency-Key" || return 1
    # the job is made, for the worker to fetch
    expect_eq "the job" "upload ingesting https://files.example/list.csv column_mapping Work Mail 1 fetched" \
        "$(it_sql "SELECT CONCAT_WS(' ', type, status, source_url, column_rule, email_column, want_preview, name) FROM jobs WHERE id = '$job'")" || return 1
    # --email-column: a number is an index
    cli bulk upload https://files.example/list.csv --email-column 2 --json; expect_rc 0 || return 1
    job2=$(json .job_id)
    expect_eq "the second job" "email_column 2 0" \
        "$(it_sql "SELECT CONCAT_WS(' ', column_rule, email_column, want_preview) FROM jobs WHERE id = '$job2'")" || return 1
    # (the fetching is not tested here: the jobs are cancelled)
    cli jobs cancel "$job"; expect_rc 0 || return 1
    cli jobs cancel "$job2"; expect_rc 0 || return 1
    # refused here, before any request
    cli --base-url "$PROXY_URL" bulk upload https://files.example/l.csv --column-mapping 'not json' --json
    expect_rc 2 && expect_json .error.code invalid_column_mapping || return 1
    cli --base-url "$PROXY_URL" bulk upload http://files.example/l.csv; expect_rc 2 || return 1
    cli --base-url "$PROXY_URL" bulk upload "$UP/missing.csv"; expect_rc 1 || return 1
    cli --base-url "$PROXY_URL" bulk upload https://f.example/l.csv --email-column a --column-mapping '{"email":"a"}'; expect_rc 2 || return 1
    expect_eq "requests" 1 "$(wc -l < "$PROXY_LOG")" || return 1
    # refused by the server (a host that is no name)
    cli bulk upload 'https://bad_host!/l.csv' --json; expect_rc 1 && expect_json .error.code invalid_source_url
}
t_case "bulk upload https://...: source_url as JSON with column_mapping, name, callback_url, preview; the job made; bad options refused locally" t_upload_source_url

t_upload_refusals() {
    local acc sbkey job
    cli bulk upload "$top_srcdir/README" --json; expect_rc 1 && expect_json .error.code unsupported_file_type || return 1
    printf 'a,b\n1,2\n' > "$UP/none.csv"
    cli bulk upload "$UP/list.csv" --column-mapping '["email"]'; expect_rc 2 && expect_err "invalid_column_mapping" || return 1
    : > "$UP/empty.csv"
    cli bulk upload "$UP/empty.csv" --json; expect_rc 1 && expect_json .error.code empty_file || return 1
    cli bulk upload "$UP/list.csv" --callback-url ftp://x.example/ --json; expect_rc 1 && expect_json .error.code invalid_callback_url || return 1
    acc=$(it_account pro 10)
    sbkey=$(it_key "$acc" '*' --sandbox)
    cli --api-key "$sbkey" bulk upload "$UP/list.csv" --json; expect_rc 3 && expect_json .error.code sandbox_key_restricted || return 1
    cli bulk preview job_nosuchjob000000000000; expect_rc 4 && expect_err "not_found" || return 1
    cli bulk confirm job_nosuchjob000000000000 --json; expect_rc 4 && expect_json .error.code not_found || return 1
    cli bulk preview "$JOB"; expect_rc 1 && expect_err "preview_unavailable" || return 1
    # a file without addresses: the job fails while read, and --wait says why
    bg none bulk upload "$UP/none.csv" --preview --wait
    job=$(bg_kv none job) || return 1
    it_job_wait "$job" failed || return 1
    bg_end none; expect_rc 1 && expect_err "svc: job_failed: job $job failed: " || return 1
    expect_err "$(it_sql "SELECT error_code FROM jobs WHERE id = '$job'")"
}
t_case "bulk upload refusals of the server by exit status (1, 3, 4); a file that fails while read ends --wait with its code" t_upload_refusals

t_upload_lost_answer() {
    local acc key s1 s2
    acc=$(it_account pro 10)
    key=$(it_key "$acc" '*')
    proxy upload 1
    cli --api-key "$key" --base-url "$PROXY_URL" bulk upload "$UP/list.csv" --callback-url "$R/cb-lost" --json
    expect_rc 0 && expect_err "no answer from the API" || return 1
    expect_eq "jobs" "$(json .job_id)" "$(it_sql "SELECT id FROM jobs WHERE account_id = '$acc'")" || return 1
    expect_eq "callback secret" "$(json .callback_secret)" "$(it_sql "SELECT callback_secret FROM jobs WHERE account_id = '$acc'")" || return 1
    expect_eq "tries" 2 "$(wc -l < "$PROXY_LOG")" &&
        expect_eq "one key" 1 "$(jq -r '.headers["idempotency-key"]' "$PROXY_LOG" | sort -u | wc -l)" || return 1
    expect_eq "bodies of both tries" 1 "$(jq -r .body "$PROXY_LOG" | sort -u | wc -l)" || return 1
    cli --api-key "$key" jobs cancel "$(json .job_id)"
}
t_case "bulk upload whose answer was lost is sent again, file and all, with the same Idempotency-Key: one job" t_upload_lost_answer

t_upload_big() {
    local size
    # 30 MB, streamed from disk: svc's memory stays far below the file's
    head -c 22000000 /dev/urandom | base64 -w 76 | sed 's/^/x/;s/$/@big.example/' > "$UP/big.txt"
    size=$(stat -c %s "$UP/big.txt")
    python3 - "$SVC" "$UP/big.txt" "$IT_DIR/big.out" "$UP/list.csv" "$IT_DIR/small.out" <<'PY' || { it_fail "memory of a large upload"; return 1; }
import os, subprocess, sys
def peak(path, out):	# svc's exit status and peak RSS uploading path
    p = subprocess.Popen([sys.argv[1], "bulk", "upload", path, "--json"], stdout=open(out, "w"))
    _, status, ru = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), ru.ru_maxrss * 1024
size = os.path.getsize(sys.argv[2])
rc0, small = peak(sys.argv[4], sys.argv[5])
rc, big = peak(sys.argv[2], sys.argv[3])
print("# upload of %d bytes: exit %d, peak RSS %d bytes (%d for a small file)" % (size, rc, big, small))
assert rc0 == 0 and rc == 0 and big - small < size / 8, (rc0, rc, small, big, size)
PY
    HTTP_BODY=$(cat "$IT_DIR/big.out"); HTTP_REQUEST="the big upload"
    expect_json .status ingesting || return 1
    expect_eq "stored size" "$size" "$(it_sql "SELECT file_size FROM jobs WHERE id = '$(json .job_id)'")" || return 1
    cli jobs progress "$(jq -r .job_id "$IT_DIR/big.out")"; expect_rc 0 || return 1
    expect_kv status ingesting && expect_kv ingestion "0% (0 rows, 0 of $size bytes read)" || return 1
    HTTP_BODY=$(cat "$IT_DIR/big.out")
    cli jobs cancel "$(json .job_id)"; expect_rc 0 || return 1
    cli jobs cancel "$(jq -r .job_id "$IT_DIR/small.out")"; expect_rc 0 || return 1
    # over 50 MB: 413 (exit 1), no job
    head -c 40000000 /dev/urandom | base64 -w 76 > "$UP/huge.csv"
    cli bulk upload "$UP/huge.csv" --json; expect_rc 1 && expect_json .error.code file_too_large || return 1
}
t_case "bulk upload of 30 MB streamed from disk (svc's memory grows by less than an eighth of the file; all of it stored); over 50 MB is 413 (exit 1)" t_upload_big

t_upload_bar_tty() {
    local job
    tmux_run upbar "$SVC bulk upload $UP/list.csv --name tty --wait" 40
    wait_screen upbar "^job +job_" || return 1
    job=$(screen upbar | awk '/^job / { print $2; exit }')
    wait_screen upbar "^$job  ingesting  \[-{10,}\]    0%  0 rows read$" || return 1
    run_worker "$job" || return 1
    wait_screen upbar "^$job  completed  \[#{10,}\]  100%  3/3  " || return 1
    expect_eq "exit status" 0 "$(wait_rc upbar)"
}
t_case "bulk upload --wait on a terminal (tmux): the bar of the reading, then of the verification" t_upload_bar_tty

t_done
