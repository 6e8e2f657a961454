#!/bin/bash
# bench.sh: the foundation benchmark (make bench). On 127.0.0.1 it starts a
# private MariaDB and two lighttpd instances from the same configuration
# (contrib/stack.sh, fcgi-conf/lighttpd-svc.conf): one spawns svc-api, the
# other tests/bench/fcgi_hello, a bare libfcgi responder with the same
# process model (a master forking api_workers children on the socket
# lighttpd gives it on fd 0). Then:
#
#  1. memory: BENCH_WARMUP_REQUESTS (10,000) "GET /rate-limit" with a valid
#     key to svc-api (ab: a fixed count), 1,000 more after a pause longer
#     than auth_cache_ms, VmRSS of every svc-api process from /proc, then
#     BENCH_MEM_REQUESTS (100,000) more, VmRSS again; growth printed; fails
#     if any process was replaced or the total grew by more than
#     BENCH_MEM_SLACK_KB (default 1024 KiB, about 10 bytes per request);
#  2. throughput: BENCH_ROUNDS (3) rounds of wrk for BENCH_DURATION seconds
#     (15) against hello, then against svc-api, the identical request
#     (GET /rate-limit, Authorization: Bearer <key>) with BENCH_CONNECTIONS
#     (16) connections and BENCH_THREADS (2) threads; prints requests/s,
#     the CPU time per request of each party, and the ratio svc/hello:
#     the median of the rounds' ratios (each round's two runs are close in
#     time, so they share the machine's background load). Goal: >= 0.5.
#
# BENCH_SVC_API=PATH benches another svc-api binary (a patched build) with
# the same svcadm and schema. BENCH_AUTH_CACHE_MS sets svc-api's
# auth_cache_ms (0: every request reads its key and window from MariaDB),
# BENCH_RATE_PERMITS_MAX its rate_permits_max (1: every counted request is
# counted in MariaDB on its own).
#
# Counted requests (make bench-counted): BENCH_PATH=/v1/credits (counted
# against the rate limit, where GET /rate-limit is not) and
# BENCH_ACCOUNTS=32: that many admin accounts with a key each (--rate-limit
# 100000), and wrk sends each request with the next key in turn
# (tests/bench/keys.lua); BENCH_MEM_REQUESTS=0 leaves the memory phase out
# (ab sends one key, which its limit would refuse). BENCH_GOAL sets the
# ratio the run must reach (0.5).
#
# Every response must be 200 (wrk's own count, and lighttpd's access log
# for each run); svc-api's answer must be authenticated (tier admin).
# Exit status: 0 goal met, 1 a check or the goal failed, 77 missing tools.
# The stack is tests/integration/lib.sh's (MariaDB, svc.conf, the schema,
# lighttpd with svc-api, in its work directory). Nothing is left running;
# the work directory is removed unless BENCH_KEEP=yes (or SVC_TEST_KEEP=1).
[ "${BENCH_KEEP:-no}" = yes ] && export SVC_TEST_KEEP=1
. "${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
API=${BENCH_SVC_API:-$top_builddir/src/api/svc-api}
HELLO=$top_builddir/tests/bench/fcgi_hello

WORKERS=${BENCH_WORKERS:-4}
DURATION=${BENCH_DURATION:-15}
CONNS=${BENCH_CONNECTIONS:-16}
THREADS=${BENCH_THREADS:-2}
ROUNDS=${BENCH_ROUNDS:-3}
WARMUP=${BENCH_WARMUP_REQUESTS:-10000}
MEMREQ=${BENCH_MEM_REQUESTS:-100000}
MEM_SLACK_KB=${BENCH_MEM_SLACK_KB:-1024}
GOAL=${BENCH_GOAL:-0.5}
URL_PATH=${BENCH_PATH:-/rate-limit}
NACCOUNTS=${BENCH_ACCOUNTS:-1}

die() { echo "bench: FAIL: $*" >&2; exit 1; }

it_require wrk ab awk
[ -x "$HELLO" ] || it_skip "$HELLO is not built (run make bench)"
bench_init bench "$API"

# ------------------------------------------------------------ the machine
say "machine: $(nproc) CPUs, $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'), Debian $(cat /etc/debian_version 2>/dev/null), kernel $(uname -r)"
say "load average before start: $(cut -d' ' -f1-3 /proc/loadavg)"
say "settings: api_workers=$WORKERS auth_cache_ms=${BENCH_AUTH_CACHE_MS:-default} rate_permits_max=${BENCH_RATE_PERMITS_MAX:-default} wrk -t$THREADS -c$CONNS -d${DURATION}s x $ROUNDS rounds of GET $URL_PATH over $NACCOUNTS account(s); memory: $WARMUP warm-up + $MEMREQ requests"

# ------------------------------------------------------------ the stack
IT_LOG_LEVEL=warn IT_API_WORKERS=$WORKERS IT_SVC_API=$API
if [ -n "${BENCH_AUTH_CACHE_MS:-}" ]; then
    it_conf_add "auth_cache_ms = $BENCH_AUTH_CACHE_MS"
fi
if [ -n "${BENCH_RATE_PERMITS_MAX:-}" ]; then
    it_conf_add "rate_permits_max = $BENCH_RATE_PERMITS_MAX"
fi
it_stack_start
SVC_PORT=$HTTP_PORT
HELLO_PORT=$(stack_free_port) || die "no port"
# KEYS_FILE: one key a line, an account each; KEY the first
KEYS_FILE=$IT_DIR/keys.txt
: > "$KEYS_FILE"
for i in $(seq 1 "$NACCOUNTS"); do
    ACCOUNT=$(svcadm account create --email "bench$i@example.com" --tier admin 2>"$IT_DIR/svcadm.err") ||
        { cat "$IT_DIR/svcadm.err" >&2; die "svcadm account create"; }
    k=$(svcadm key create --account "$ACCOUNT" --scopes '*' --rate-limit 100000 2>"$IT_DIR/svcadm.err") ||
        { cat "$IT_DIR/svcadm.err" >&2; die "svcadm key create"; }
    [ -n "$k" ] || die "svcadm key create printed no key"
    echo "$k" >> "$KEYS_FILE"
done
KEY=$(head -n 1 "$KEYS_FILE")
export BENCH_KEYS_FILE=$KEYS_FILE
# wrk's arguments for the request: one key, or each key in turn
WRK_REQ=(-H "Authorization: Bearer $KEY")
[ "$NACCOUNTS" -gt 1 ] && WRK_REQ=(-s "$top_srcdir/tests/bench/keys.lua")

stack_lighttpd_start "$IT_DIR/lighttpd-hello" "$HELLO_PORT" "$HELLO" "$SVC_CONF" ||
    die "lighttpd with fcgi_hello did not start"
SVC_LIGHTTPD=$(stack_pidfile_pid "$IT_DIR/lighttpd/lighttpd.pid")
HELLO_LIGHTTPD=$(stack_pidfile_pid "$IT_DIR/lighttpd-hello/lighttpd.pid")
DB_PID=$(stack_pidfile_pid "$IT_DIR/mariadb/mariadbd.pid")

# backend_pids LIGHTTPD_PID: the responder processes (master and children).
backend_pids() { stack_descendants "$1" | sort -n; }

# wait until the responders answer and all of them have been forked
for u in "$SVC_PORT" "$HELLO_PORT"; do
    for i in $(seq 1 100); do
        c=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$u/rate-limit") && [ "$c" = 200 ] && break
        sleep 0.1
    done
done
# svc-api's master also keeps a keeper (rate-limit permits, named
# svc-api-keeper), which serves no request: not counted here
svc_n=$(backend_pids "$SVC_LIGHTTPD" | xargs -r ps -o comm= -p | grep -vc '^svc-api-keeper$' || true)
hello_n=$(backend_pids "$HELLO_LIGHTTPD" | wc -l)
say "processes: svc-api $svc_n (1 master + $((svc_n - 1)) children, and a keeper), fcgi_hello $hello_n (1 master + $((hello_n - 1)) children)"
[ "$svc_n" = $((WORKERS + 1)) ] && [ "$hello_n" = $((WORKERS + 1)) ] ||
    die "expected $((WORKERS + 1)) processes behind each lighttpd"

AUTH="Authorization: Bearer $KEY"
# (lib.sh runs the script under set -e: a failed curl still prints 000)
while read -r k; do
    code=$(curl -s -o "$IT_DIR/smoke.json" -w '%{http_code}' -H "Authorization: Bearer $k" "http://127.0.0.1:$SVC_PORT/rate-limit") || true
    [ "$code" = 200 ] || die "svc-api answered $code to GET /rate-limit: $(cat "$IT_DIR/smoke.json")"
    grep -q '"tier": *"admin"' "$IT_DIR/smoke.json" && grep -q '"limit": *100000' "$IT_DIR/smoke.json" ||
        die "GET /rate-limit is not authenticated with the bench key: $(cat "$IT_DIR/smoke.json")"
done < "$KEYS_FILE"
code=$(curl -s -o "$IT_DIR/smoke.json" -w '%{http_code}' -H "$AUTH" "http://127.0.0.1:$SVC_PORT$URL_PATH") || true
[ "$code" = 200 ] || die "svc-api answered $code to GET $URL_PATH: $(cat "$IT_DIR/smoke.json")"
say "svc-api answers GET $URL_PATH: $(cat "$IT_DIR/smoke.json")"
code=$(curl -s -o "$IT_DIR/smoke-hello.json" -w '%{http_code}' -H "$AUTH" "http://127.0.0.1:$HELLO_PORT$URL_PATH") || true
[ "$code" = 200 ] || die "fcgi_hello answered $code"

# ------------------------------------------------------------ helpers

# access_lines DIR [AT_LEAST]: lines in that lighttpd's access log once
# lighttpd has flushed it (it buffers the log): the count must stay the same
# for a second (and reach AT_LEAST, if given; at most 20 s).
access_lines() {
    local n m i
    n=$(wc -l < "$1/access.log")
    for i in $(seq 1 20); do
        sleep 1
        m=$(wc -l < "$1/access.log")
        [ "$m" = "$n" ] && [ "$m" -ge "${2:-0}" ] && break
        n=$m
    done
    echo "$m"
}

# check_access DIR FROM: every request logged after line FROM answered 200.
check_access() {
    local bad
    bad=$(tail -n +"$(( $2 + 1 ))" "$1/access.log" |
        awk -F'"' '{ split($3, a, " "); if (a[1] != "200") n[a[1]]++ }
            END { for (s in n) printf "%s:%d ", s, n[s] }')
    [ -z "$bad" ] || die "non-200 responses in $1/access.log: $bad"
}

# db_queries: statements mariadbd has run so far (Questions counts each
# COM_STMT_EXECUTE and COM_QUERY, not prepares).
db_queries() {
    stack_mariadb_sql "$IT_DIR/mariadb" -N -B -e "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{ print $2 }'
}

# db_calls: CALLs of stored procedures so far (ratelimit_lease: the round
# trips that count requests)
db_calls() {
    stack_mariadb_sql "$IT_DIR/mariadb" -N -B -e "SHOW GLOBAL STATUS LIKE 'Com_call_procedure'" | awk '{ print $2 }'
}

# wrk_check OUT: wrk's own error report must be clean.
wrk_check() {
    if grep -q 'Non-2xx or 3xx responses' "$1"; then
        die "wrk saw non-2xx/3xx responses: $(grep 'Non-2xx' "$1")"
    fi
    if grep -q 'Socket errors' "$1"; then
        die "wrk saw socket errors: $(grep 'Socket errors' "$1")"
    fi
}

# busy_ticks: CPU ticks spent by anything on the machine (/proc/stat).
busy_ticks() {
    awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat
}

# per_req TICKS REQUESTS: microseconds of CPU per request.
per_req() { awk -v t="$1" -v n="$2" -v hz="$HZ" 'BEGIN { printf "%.0f", t / hz * 1e6 / n }'; }

# run_wrk NAME LIGHTTPD_DIR LIGHTTPD_PID PORT SECONDS: one timed run; sets
# RPS and prints the rate, latency and the CPU time per request of lighttpd,
# the responder processes, mariadbd, wrk itself, and "other" (everything
# else on the machine: other users' work disturbs the figures), plus the
# SQL statements per request.
run_wrk() {
    local name=$1 dir=$2 lpid=$3 port=$4 secs=$5 out before q0 q1 c0 c1 bpids reqs
    local t0l t0b t0d t0a t1l t1b t1d t1a wt
    out=$IT_DIR/wrk-$name-$RANDOM.txt
    before=$(access_lines "$dir")
    bpids=$(backend_pids "$lpid")
    q0=$(db_queries)
    c0=$(db_calls)
    t0l=$(bench_ticks "$lpid"); t0b=$(bench_ticks $bpids); t0d=$(bench_ticks "$DB_PID"); t0a=$(busy_ticks)
    # the subshell's "times" (second line) is wrk's user and system time
    ( wrk -t"$THREADS" -c"$CONNS" -d"${secs}s" --latency "${WRK_REQ[@]}" \
        "http://127.0.0.1:$port$URL_PATH" > "$out" 2>&1 || exit 1
      times > "$out.times" ) || { cat "$out" >&2; die "wrk failed"; }
    t1l=$(bench_ticks "$lpid"); t1b=$(bench_ticks $bpids); t1d=$(bench_ticks "$DB_PID"); t1a=$(busy_ticks)
    q1=$(db_queries)
    c1=$(db_calls)
    wt=$(awk -v hz="$HZ" 'NR == 2 { n = split($0, f, /[ ms]+/); s = 0
        for (i = 1; i < n; i += 2) s += f[i] * 60 + f[i + 1]; printf "%.0f", s * hz }' "$out.times")
    wrk_check "$out"
    check_access "$dir" "$before"
    RPS=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$out")
    reqs=$(awk '/requests in/ { print $1 }' "$out")
    [ -n "$RPS" ] && [ "$reqs" -gt 0 ] || { cat "$out" >&2; die "no rate in wrk's output"; }
    printf 'bench: %-5s %6s req/s %7s reqs  p50 %-7s p99 %-7s  CPU us/req: lighttpd %3s responders %3s mariadbd %3s wrk %3s other %3s  SQL/req %.2f (CALL %.3f)\n' \
        "$name" "$RPS" "$reqs" \
        "$(awk '$1 == "50%" { print $2 }' "$out")" "$(awk '$1 == "99%" { print $2 }' "$out")" \
        "$(per_req $((t1l - t0l)) "$reqs")" "$(per_req $((t1b - t0b)) "$reqs")" \
        "$(per_req $((t1d - t0d)) "$reqs")" "$(per_req "$wt" "$reqs")" \
        "$(per_req $(( (t1a - t0a) - (t1l - t0l) - (t1b - t0b) - (t1d - t0d) - wt )) "$reqs")" \
        "$(awk -v q=$((q1 - q0 - 2)) -v n="$reqs" 'BEGIN { print q / n }')" \
        "$(awk -v q=$((c1 - c0)) -v n="$reqs" 'BEGIN { print q / n }')"
}

# run_count N: exactly N requests to svc-api with ab (wrk cannot stop after
# a number of requests), keep-alive, BENCH_CONNECTIONS at a time; all must
# be 200. Prints how many requests lighttpd logged meanwhile.
run_count() {
    local n=$1 out before after
    out=$IT_DIR/ab-count-$RANDOM.txt
    before=$(access_lines "$IT_DIR/lighttpd")
    ab -q -k -n "$n" -c "$CONNS" -H "$AUTH" "http://127.0.0.1:$SVC_PORT$URL_PATH" > "$out" 2>&1 ||
        { cat "$out" >&2; die "ab failed"; }
    grep -q "^Complete requests: *$n\$" "$out" && grep -q '^Failed requests: *0$' "$out" ||
        { cat "$out" >&2; die "ab: not all $n requests completed"; }
    ! grep -q '^Non-2xx responses' "$out" || die "ab: $(grep '^Non-2xx' "$out")"
    after=$(access_lines "$IT_DIR/lighttpd" $(( before + n )))
    check_access "$IT_DIR/lighttpd" "$before"
    echo $(( after - before ))
}

# rss_sample: "pid rss_kib" for every svc-api process.
rss_sample() {
    local p
    for p in $(backend_pids "$SVC_LIGHTTPD"); do
        echo "$p $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status")"
    done
}

# ------------------------------------------------------------ 1. memory
mem_ok=yes
ta=0 tb=0
if [ "$MEMREQ" -gt 0 ]; then
say "memory: $WARMUP warm-up requests to svc-api ..."
served=$(run_count "$WARMUP") || exit 1
# run_count waits for lighttpd's log to settle (1 s and more), longer than
# the default auth_cache_ms: these requests take the path that reads a
# cached key and window again, once in each process, before the sample
sleep 0.5
served=$(( served + $(run_count 1000) )) || exit 1
say "memory: warm-up served $served requests"
rss_sample > "$IT_DIR/rss-before"
say "memory: $MEMREQ requests to svc-api ..."
served=$(run_count "$MEMREQ") || exit 1
rss_sample > "$IT_DIR/rss-after"
say "memory: served $served requests between the samples (lighttpd access log)"
[ "$(cut -d' ' -f1 "$IT_DIR/rss-before")" = "$(cut -d' ' -f1 "$IT_DIR/rss-after")" ] ||
    die "svc-api processes changed between the samples: $(tr '\n' ' ' < "$IT_DIR/rss-before") / $(tr '\n' ' ' < "$IT_DIR/rss-after")"
master=$(head -n 1 "$IT_DIR/rss-before" | cut -d' ' -f1)
paste -d' ' "$IT_DIR/rss-before" "$IT_DIR/rss-after" | while read -r p b _ a; do
    role=child; [ "$p" = "$master" ] && role=master
    printf 'bench: memory: svc-api pid %-7s %-6s VmRSS before %6d KiB  after %6d KiB  growth %+d KiB\n' "$p" "$role" "$b" "$a" $(( a - b ))
done
tb=$(awk '{ s += $2 } END { print s }' "$IT_DIR/rss-before")
ta=$(awk '{ s += $2 } END { print s }' "$IT_DIR/rss-after")
say "memory: total VmRSS before $tb KiB, after $ta KiB, growth $(( ta - tb )) KiB over $served requests ($(awk -v g=$(( (ta - tb) * 1024 )) -v n="$served" 'BEGIN { printf "%.2f", g / n }') bytes/request)"
[ $(( ta - tb )) -le "$MEM_SLACK_KB" ] || mem_ok=no
fi

# ------------------------------------------------------------ 2. throughput
say "throughput: warming up both for 3 s"
wrk -t"$THREADS" -c"$CONNS" -d3s "${WRK_REQ[@]}" "http://127.0.0.1:$HELLO_PORT$URL_PATH" > /dev/null 2>&1 || true
wrk -t"$THREADS" -c"$CONNS" -d3s "${WRK_REQ[@]}" "http://127.0.0.1:$SVC_PORT$URL_PATH" > /dev/null 2>&1 || true
say "throughput: wrk -t$THREADS -c$CONNS -d${DURATION}s --latency $([ "$NACCOUNTS" -gt 1 ] && echo "-s tests/bench/keys.lua ($NACCOUNTS keys in turn)" || echo "-H 'Authorization: Bearer <key>'") http://127.0.0.1:PORT$URL_PATH"
hello_rates=
svc_rates=
ratios=
for r in $(seq 1 "$ROUNDS"); do
    run_wrk hello "$IT_DIR/lighttpd-hello" "$HELLO_LIGHTTPD" "$HELLO_PORT" "$DURATION"
    hello_rates="$hello_rates $RPS"
    run_wrk svc "$IT_DIR/lighttpd" "$SVC_LIGHTTPD" "$SVC_PORT" "$DURATION"
    svc_rates="$svc_rates $RPS"
    ratios="$ratios $(awk -v s="$RPS" -v h="${hello_rates##* }" 'BEGIN { printf "%.3f", s / h }')"
    say "round $r: ratio svc/hello ${ratios##* }"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# shellcheck disable=SC2086
hm=$(median $hello_rates)
# shellcheck disable=SC2086
sm=$(median $svc_rates)
# shellcheck disable=SC2086
ratio=$(median $ratios)
say "throughput: median hello $hm req/s, median svc-api $sm req/s; ratios per round:$ratios"
say "RATIO svc-api/hello = $ratio (median of the rounds' ratios; goal >= $GOAL)"
# BENCH_PERF=yes: one more svc-api run under "perf record -a" (cpu-clock,
# all processes), then where the time went by program, by shared object
# and by symbol; the report is kept in the work directory.
if [ "${BENCH_PERF:-no}" = yes ] && command -v perf >/dev/null 2>&1; then
    say "perf: recording ${DURATION}s of svc-api under load (perf record -e cpu-clock -F 999 -a -g)"
    wrk -t"$THREADS" -c"$CONNS" -d"$(( DURATION + 2 ))s" "${WRK_REQ[@]}" "http://127.0.0.1:$SVC_PORT$URL_PATH" > "$IT_DIR/wrk-perf.txt" 2>&1 &
    wpid=$!
    sleep 1
    perf record -q -e cpu-clock -F 999 -a -g -o "$IT_DIR/perf.data" -- sleep "$DURATION" > "$IT_DIR/perf-record.log" 2>&1 || true
    wait "$wpid" || true
    perf report -i "$IT_DIR/perf.data" --no-children --sort comm --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 8 | sed 's/^/bench: perf comm   /'
    perf report -i "$IT_DIR/perf.data" --no-children --sort comm,dso --stdio 2>/dev/null | grep -v '^#' | grep '%' | head -n 15 | sed 's/^/bench: perf dso    /'
    perf report -i "$IT_DIR/perf.data" --no-children --sort comm,sym -g none --stdio 2>/dev/null | grep -v '^#' | grep '%' | head -n 40 | sed 's/^/bench: perf sym    /'
    perf report -i "$IT_DIR/perf.data" --no-children --sort comm,dso,sym --stdio > "$IT_DIR/perf-report.txt" 2>&1
    say "perf: full report in $IT_DIR/perf-report.txt (BENCH_KEEP=yes keeps it)"
fi

# late-flushed log lines of the last runs: every line of both logs is 200
for dir in "$IT_DIR/lighttpd" "$IT_DIR/lighttpd-hello"; do
    n=$(access_lines "$dir")
    check_access "$dir" 0
    say "$(basename "$dir")/access.log: all $n requests answered 200"
done
say "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -s "$IT_DIR/log/svc.log" ]; then
    say "svc.log (warn and above) has $(wc -l < "$IT_DIR/log/svc.log") lines:"
    tail -n 5 "$IT_DIR/log/svc.log" | sed 's/^/bench:   /'
fi

rc=0
if [ "$mem_ok" != yes ]; then
    echo "bench: FAIL: svc-api grew by $(( ta - tb )) KiB (> $MEM_SLACK_KB KiB) over $served requests" >&2
    rc=1
fi
if awk -v r="$ratio" -v g="$GOAL" 'BEGIN { exit !(r < g) }'; then
    echo "bench: FAIL: ratio $ratio is below the goal $GOAL" >&2
    rc=1
fi
[ "$rc" = 0 ] && say "PASS: ratio $ratio >= $GOAL; memory growth $(( ta - tb )) KiB <= $MEM_SLACK_KB KiB"
exit "$rc"
