#!/bin/bash
# bench_probes.sh: ordinary requests while tarpit probes are in flight
# (make bench-probes). The MX of silent.svc.test is the fake SMTP server in
# its silent mode: it accepts the connection and never answers, so every
# POST /v1/verify of an address there holds its responder for the whole
# verify_time_budget_ms (60 s here). The script measures, with wrk on
# GET /v1/credits (4 keys of accounts of its own per measure, taken in
# turn; BENCH_PROBES_CONNECTIONS connections, one wrk thread,
# BENCH_PROBES_DURATION seconds):
#   1. idle: no probe out;
#   2. BENCH_PROBES_INFLIGHT (64) tarpit probes in flight, from 8 accounts
#      (probe_concurrency_per_account = 8), with api_workers =
#      BENCH_PROBES_WORKERS (72) and probe_reserved_responders 2;
#   3. the same 64 probes tried at the defaults of svc.conf (api_workers,
#      probe_concurrency_per_account and probe_reserved_responders as
#      shipped): how many get in, how many are refused, and wrk meanwhile.
# Each prints requests/s, p50/p99 and non-2xx answers, and the responders'
# resident memory (sum of VmRSS of the svc-api processes). The figures and
# the command go to tests/bench/README. Point top_builddir at an -O2 build
# without sanitizers. Exit 0 when every check held (probes in flight as
# asked, every wrk answer 200), 1 otherwise, 77 without the tools.
. "${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
it_require wrk unbound drill ss curl

WORKERS=${BENCH_PROBES_WORKERS:-72}
INFLIGHT=${BENCH_PROBES_INFLIGHT:-64}
DURATION=${BENCH_PROBES_DURATION:-10}
CONNS=${BENCH_PROBES_CONNECTIONS:-8}
API=${BENCH_SVC_API:-$top_builddir/src/api/svc-api}
bench_init bench-probes "$API"

mail_env_dns
SMTP_PORT=$(stack_free_port)
fake 127.0.0.32 banner=silent
mail_env_lists
mail_env_conf

# start_api WORKERS [EXTRA CONF...]: (re)start lighttpd with svc-api
start_api() {
    local w=$1
    shift
    stack_lighttpd_stop "$IT_DIR/lighttpd" 2>/dev/null || true
    sed -i -e "s/^api_workers = .*/api_workers = $w/" \
        -e '/^probe_/d' -e '/^verify_time_budget_ms/d' -e '/^smtp_reply_timeout_ms/d' "$SVC_CONF"
    { echo "verify_time_budget_ms = 60000"; echo "smtp_reply_timeout_ms = 60000"
      printf '%s\n' "$@"; } >> "$SVC_CONF"
    it_api_start
}
IT_LOG_LEVEL=warn IT_SVC_API=$API
it_stack_start --db-only
[ -x "$API" ] || it_skip "$API is not built"
# conf_default NAME: the value svc.conf has when it does not set NAME
: > "$IT_DIR/empty.conf"
conf_default() { "$top_builddir/src/admin/svcadm" -c "$IT_DIR/empty.conf" config | sed -n "s/^$1 = //p"; }

KEYS=()
for i in 1 2 3 4 5 6 7 8; do
    acc=$(svcadm account create --email "p$i@bench.example" --tier admin --credits 1000000 2>/dev/null)
    KEYS+=("$(svcadm key create --account "$acc" --scopes '*' --rate-limit 100000 2>/dev/null)")
done
# wrk's keys: for each measure 4 accounts of its own (keys.lua takes them in
# turn), none of the probes': a key's limit is 100,000 requests a minute at
# most and its window is its account's, so one account would answer 429 to
# a 10 s measure past 10,000 req/s, and to the next measure in the same
# minute (both happened with one key shared by all)
WRK_MEASURES=0
wrk_keys() {
    local i acc
    WRK_MEASURES=$(( WRK_MEASURES + 1 ))
    for i in 1 2 3 4; do
        acc=$(svcadm account create --email "w$WRK_MEASURES-$i@bench.example" --tier admin --credits 1000000 2>/dev/null)
        svcadm key create --account "$acc" --scopes '*' --rate-limit 100000 2>/dev/null
    done > "$IT_DIR/wrk-keys-$WRK_MEASURES"
    export BENCH_KEYS_FILE=$IT_DIR/wrk-keys-$WRK_MEASURES
}

rss_kb() {
    local p t=0
    for p in $(stack_descendants "$(stack_pidfile_pid "$IT_DIR/lighttpd/lighttpd.pid")"); do
        t=$(( t + $(awk '/^VmRSS/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0) ))
    done
    echo "$t"
}
inflight() { ss -Htn state established dst 127.0.0.32 2>/dev/null | wc -l; }

# measure LABEL: wrk on GET /v1/credits, one summary line
measure() {
    local out
    wrk_keys
    out=$(wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -s "$top_srcdir/tests/bench/keys.lua" \
        "$BASE_URL/v1/credits" 2>&1)
    echo "$out" > "$IT_DIR/wrk-$1.txt"
    grep -q 'Non-2xx' <<< "$out" && bad "$1: answers other than 2xx: $(grep Non-2xx <<< "$out")"
    say "$1: $(awk '/Requests\/sec/ { print $2 " req/s" }' <<< "$out"), p50 $(awk '$1 == "50%" { print $2 }' <<< "$out"), p99 $(awk '$1 == "99%" { print $2 }' <<< "$out"), probes in flight $(inflight), svc-api RSS $(( $(rss_kb) / 1024 )) MB"
}

# probes N: N tarpit probes in the background, spread over the 8 accounts
PROBE_PIDS=()
probes() {
    local i
    for i in $(seq 1 "$1"); do
        curl -s -o /dev/null -w '%{http_code}\n' --max-time 90 -H "Authorization: Bearer ${KEYS[$((i % 8))]}" \
            -H 'Content-Type: application/json' --data-binary "{\"email\":\"t$i-$RANDOM@silent.svc.test\"}" \
            "$BASE_URL/v1/verify" >> "$IT_DIR/probes.codes" &
        PROBE_PIDS+=($!)
    done
}
stop_probes() {
    local p
    for p in "${PROBE_PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    PROBE_PIDS=()
}

say "svc-api $API, $(nproc) cores, wrk -t1 -c$CONNS -d${DURATION}s GET /v1/credits"
start_api "$WORKERS" "probe_concurrency_per_account = 8" "probe_reserved_responders = 2"
measure "idle, api_workers=$WORKERS"
: > "$IT_DIR/probes.codes"
probes "$INFLIGHT"
for _ in $(seq 1 100); do [ "$(inflight)" -ge "$INFLIGHT" ] && break; sleep 0.2; done
[ "$(inflight)" -ge "$INFLIGHT" ] || bad "only $(inflight) of $INFLIGHT probes reached the tarpit"
measure "$INFLIGHT tarpit probes in flight, api_workers=$WORKERS"
stop_probes

# the defaults as shipped
start_api "$(conf_default api_workers)"
: > "$IT_DIR/probes.codes"
probes "$INFLIGHT"
sleep 3
measure "$INFLIGHT tarpit probes tried, defaults (api_workers=$(conf_default api_workers), probe_concurrency_per_account=$(conf_default probe_concurrency_per_account), probe_reserved_responders=$(conf_default probe_reserved_responders))"
say "defaults: probes refused at once: $(grep -c '^429' "$IT_DIR/probes.codes" || true) with 429, $(grep -c '^503' "$IT_DIR/probes.codes" || true) with 503"
stop_probes
[ "$FAILED" = 0 ]
