#!/bin/bash
# bench_verify.sh: single verifications (POST /v1/verify) per second through
# the API, and their p50/p99 latency, for two cases (make bench-verify):
#
#  1. cached: BENCH_VERIFY_ADDRESSES (200) addresses are verified once
#     (4 mailboxes and 96 unknown local parts at mx.svc.test, 100 addresses
#     at catchall.svc.test), then wrk cycles over them for
#     BENCH_VERIFY_DURATION seconds (15) with BENCH_VERIFY_CACHED_CONNECTIONS
#     (8) connections: every answer must be 200 with "cached":true;
#  2. fresh probes: every request a never-seen address
#     (f<run>-<thread>-<n>@mx.svc.test, unknown at the MTA: 550 5.1.1), so
#     each one is a real SMTP session (EHLO, STARTTLS, MAIL, RCPT) with the
#     loopback Postfix; BENCH_VERIFY_FRESH_CONNECTIONS (4) connections, as
#     many probes as one account may have at once by default
#     (probe_concurrency_per_account). Every answer must be 200,
#     "cached":false, reason rejected_email, and Postfix's log must show one
#     rejected RCPT per answered request.
#
# The servers are the ones the integration tests use, set up the same way
# (tests/integration/lib.sh, mail_env.sh): unbound with the test zones
# (tests/dns/server.sh), the private Postfix (tests/smtp/mta.sh), MariaDB +
# lighttpd + svc-api on 127.0.0.1, but with log_level = warn and
# api_workers = BENCH_VERIFY_WORKERS (16, svc.conf's default). Each case uses
# an admin account of its own with 10,000,000 credits and a key with
# --rate-limit 100000 (per minute), so neither credits nor the rate limit
# stop a run. wrk uses BENCH_VERIFY_THREADS (1) thread: the machine's cores
# belong to the servers.
#
# For each case it prints wrk's --latency report and one summary line:
# requests/s, p50/p90/p99/max latency, and the CPU time per request spent by
# svc-api, MariaDB, lighttpd, Postfix (master and its children) and wrk,
# plus how busy the whole machine was (other load included).
#
# top_builddir names the build whose svc-api and svcadm are benched (make
# passes its own; point it at an -O2 build without sanitizers for figures
# worth writing down, see tests/bench/README); BENCH_SVC_API=PATH benches
# another svc-api (a patched build, or a wrapper script that execs one). Exit status: 0 all checks
# held, 1 a check failed, 77 missing tools or programs. Nothing is left
# running; the work directory is removed unless SVC_TEST_KEEP=1.
. "${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
it_require wrk unbound drill postfix awk

WORKERS=${BENCH_VERIFY_WORKERS:-16}
DURATION=${BENCH_VERIFY_DURATION:-15}
NADDR=${BENCH_VERIFY_ADDRESSES:-200}
CACHED_CONNS=${BENCH_VERIFY_CACHED_CONNECTIONS:-8}
FRESH_CONNS=${BENCH_VERIFY_FRESH_CONNECTIONS:-4}
THREADS=${BENCH_VERIFY_THREADS:-1}
API=${BENCH_SVC_API:-$top_builddir/src/api/svc-api}

[ "$NADDR" -ge 8 ] || it_skip "BENCH_VERIFY_ADDRESSES must be at least 8"
bench_init bench-verify "$API"

# --- DNS and the MTA (tests/integration/mail_env.sh, as in test_verify.sh)
mail_env_start
mail_env_lists
mail_env_conf

IT_LOG_LEVEL=warn IT_API_WORKERS=$WORKERS IT_SVC_API=$API
it_stack_start

# bench_key NAME: an admin account with 10M credits and a key for it, printed
bench_key() {
    local acc
    acc=$(svcadm account create --email "$1@bench.example" --tier admin --credits 10000000 2>> "$IT_DIR/svcadm.log")
    svcadm key create --account "$acc" --scopes '*' --rate-limit 100000 2>> "$IT_DIR/svcadm.log"
}

# --- CPU accounting: clock ticks of each party (bench_lib.sh): the
# responders, MariaDB and Postfix as process trees, lighttpd alone
LIGHTTPD_PID=$(stack_pidfile_pid "$IT_DIR/lighttpd/lighttpd.pid")
MARIADB_PID=$(stack_pidfile_pid "$IT_DIR/mariadb/mariadbd.pid")
POSTFIX_PID=$(head -n 1 "$IT_DIR/mta/queue/pid/master.pid" | tr -dc 0-9)
cpu_snapshot() {
    echo "$(bench_tree_ticks $(pgrep -P "$LIGHTTPD_PID")) $(bench_tree_ticks "$MARIADB_PID")" \
        "$(bench_ticks "$LIGHTTPD_PID") $(bench_tree_ticks "$POSTFIX_PID") $(bench_machine_ticks)"
}

# --- wrk scripts. setup() numbers the threads; response() counts the
# answers by status and by what they say; done() prints one line.
cat > "$IT_DIR/common.lua" <<'EOF'
local threads, nthreads = {}, 0
function setup(thread)
    thread:set("tid", nthreads)
    nthreads = nthreads + 1
    table.insert(threads, thread)
end
ok, cached, fresh, rejected, other = 0, 0, 0, 0, 0
function response(status, headers, body)
    if status ~= 200 then other = other + 1; return end
    ok = ok + 1
    if body:find('"cached":true', 1, true) then cached = cached + 1 end
    if body:find('"cached":false', 1, true) then fresh = fresh + 1 end
    if body:find('"reason":"rejected_email"', 1, true) then rejected = rejected + 1 end
end
function done(summary, latency, requests)
    local c = { ok = 0, cached = 0, fresh = 0, rejected = 0, other = 0 }
    for _, t in ipairs(threads) do
        for k, _ in pairs(c) do c[k] = c[k] + t:get(k) end
    end
    local e = summary.errors
    io.write(string.format("RESULT requests=%d seconds=%.3f rps=%.1f " ..
        "p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f mean_ms=%.2f " ..
        "status200=%d not200=%d cached=%d fresh=%d rejected=%d " ..
        "sock_errors=%d\n",
        summary.requests, summary.duration / 1e6,
        summary.requests / (summary.duration / 1e6),
        latency:percentile(50) / 1e3, latency:percentile(90) / 1e3,
        latency:percentile(99) / 1e3, latency.max / 1e3, latency.mean / 1e3,
        c.ok, c.other + e.status, c.cached, c.fresh, c.rejected,
        e.connect + e.read + e.write + e.timeout))
end
EOF
cat "$IT_DIR/common.lua" - > "$IT_DIR/cached.lua" <<'EOF'
-- cached.lua, args: KEY FILE (one address a line); cycles over the file's addresses
local reqs, idx = {}, 0
function init(args)
    local hdr = { ["Authorization"] = "Bearer " .. args[1],
                  ["Content-Type"] = "application/json" }
    for line in io.lines(args[2]) do
        reqs[#reqs + 1] = wrk.format("POST", "/v1/verify", hdr,
            '{"email":"' .. line .. '"}')
    end
    idx = (tid * 53) % #reqs
end
function request()
    idx = idx % #reqs + 1
    return reqs[idx]
end
EOF
cat "$IT_DIR/common.lua" - > "$IT_DIR/fresh.lua" <<'EOF'
-- fresh.lua, args: KEY RUN; every request a new address f<RUN>-<thread>-<n>@mx.svc.test
local hdr, run, n = nil, nil, 0
function init(args)
    hdr = { ["Authorization"] = "Bearer " .. args[1],
            ["Content-Type"] = "application/json" }
    run = args[2]
end
function request()
    n = n + 1
    return wrk.format("POST", "/v1/verify", hdr, string.format(
        '{"email":"f%s-%d-%d@mx.svc.test"}', run, tid, n))
end
EOF

# run_wrk NAME CONNS LUA ARGS...: wrk for DURATION s; prints the report, sets
# RESULT (the summary line) and CPU (ms of CPU per request for each party)
run_wrk() {
    local name=$1 conns=$2 lua=$3 before after wrk_ticks
    shift 3
    before=$(cpu_snapshot)
    wrk_ticks=$( { TIMEFORMAT='%U %S'; time wrk -t "$THREADS" -c "$conns" -d "${DURATION}s" --timeout 30s \
        --latency -s "$lua" "$BASE_URL/v1/verify" -- "$@" > "$IT_DIR/wrk-$name.out" 2>&1; } 2>&1 |
        awk -v hz="$HZ" '{ print int(($1 + $2) * hz + 0.5) }')
    after=$(cpu_snapshot)
    sed 's/^/# /' "$IT_DIR/wrk-$name.out"
    RESULT=$(grep '^RESULT ' "$IT_DIR/wrk-$name.out" | sed 's/^RESULT //')
    local req
    req=$(printf '%s\n' "$RESULT" | sed -n 's/^requests=\([0-9]*\) .*/\1/p')
    [ -n "$req" ] && [ "$req" -gt 0 ] || { bad "$name: wrk answered nothing"; req=1; }
    CPU=$(echo "$before $after $wrk_ticks $req" | awk -v hz="$HZ" '{
        r = $14; ms = 1000 / hz / r
        printf "cpu_ms_per_req: svc-api=%.2f mariadbd=%.2f lighttpd=%.2f postfix=%.2f wrk=%.2f; machine busy %.0f%% of %d cores",
            ($7 - $1) * ms, ($8 - $2) * ms, ($9 - $3) * ms, ($10 - $4) * ms, $13 * ms,
            100 * ($11 - $5) / ($12 - $6), '"$(nproc)"' }')
}
result_field() { printf '%s\n' "$RESULT" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

say "svc-api: $API ($WORKERS workers); wrk: $THREADS thread(s), ${DURATION}s a run; $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"

# ------------------------------------------------------------- 1. cached
API_KEY=$(bench_key cached)
: > "$IT_DIR/addresses"
for l in alice bob info sales; do echo "$l@mx.svc.test"; done >> "$IT_DIR/addresses"
half=$(( NADDR / 2 ))
for i in $(seq 1 $(( half - 4 ))); do echo "nobody$i@mx.svc.test"; done >> "$IT_DIR/addresses"
for i in $(seq 1 $(( NADDR - half ))); do echo "user$i@catchall.svc.test"; done >> "$IT_DIR/addresses"
say "priming the cache: $NADDR addresses verified once"
prime_bad=0
while IFS= read -r a; do
    http POST /v1/verify "{\"email\":\"$a\"}" || { prime_bad=$((prime_bad + 1)); continue; }
    [ "$HTTP_STATUS" = 200 ] && [ "$(json .cached)" = false ] || {
        prime_bad=$((prime_bad + 1)); say "priming $a: $HTTP_STATUS $(it_body_excerpt)"; }
    echo "$(json .status) $(json .reason)" >> "$IT_DIR/prime-kinds"
done < "$IT_DIR/addresses"
[ "$prime_bad" = 0 ] || bad "priming: $prime_bad of $NADDR verifications were not fresh 200 answers"
say "primed: $(sort "$IT_DIR/prime-kinds" | uniq -c | awk '{ printf "%s%d %s/%s", s, $1, $2, $3; s = ", " }')"
http POST /v1/verify '{"email":"bob@mx.svc.test"}'
[ "$HTTP_STATUS" = 200 ] && [ "$(json .cached)" = true ] ||
    bad "a primed address is not answered from the cache: $HTTP_STATUS $(it_body_excerpt)"

say "cached: $CACHED_CONNS connections cycling over the $NADDR addresses"
run_wrk cached "$CACHED_CONNS" "$IT_DIR/cached.lua" "$API_KEY" "$IT_DIR/addresses"
CACHED_RESULT=$RESULT CACHED_CPU=$CPU
[ "$(result_field not200)" = 0 ] && [ "$(result_field sock_errors)" = 0 ] ||
    bad "cached: answers other than 200 or socket errors ($RESULT)"
[ "$(result_field cached)" = "$(result_field status200)" ] ||
    bad "cached: not every answer was \"cached\":true ($RESULT)"

# ------------------------------------------------------------- 2. fresh
API_KEY=$(bench_key fresh)
RUN=$(date +%s)
before_rejects=$(grep -c "NOQUEUE: reject: RCPT from .*<f$RUN-" "$IT_DIR/mta/maillog" 2>/dev/null || true)
say "fresh probes: $FRESH_CONNS connections, a new address at mx.svc.test every request"
run_wrk fresh "$FRESH_CONNS" "$IT_DIR/fresh.lua" "$API_KEY" "$RUN"
FRESH_RESULT=$RESULT FRESH_CPU=$CPU
[ "$(result_field not200)" = 0 ] && [ "$(result_field sock_errors)" = 0 ] ||
    bad "fresh: answers other than 200 or socket errors ($RESULT)"
[ "$(result_field fresh)" = "$(result_field status200)" ] &&
    [ "$(result_field rejected)" = "$(result_field status200)" ] ||
    bad "fresh: not every answer was a fresh rejected_email ($RESULT)"
sleep 1	# Postfix's log is written by postlogd, asynchronously
rejects=$(( $(grep -c "NOQUEUE: reject: RCPT from .*<f$RUN-" "$IT_DIR/mta/maillog" 2>/dev/null || true) - ${before_rejects:-0} ))
say "Postfix logged $rejects rejected RCPTs for the run's addresses"
# wrk may count a request it sent before the end but whose answer it dropped:
# Postfix may have seen up to one per connection more than wrk counted
[ "$rejects" -ge "$(result_field status200)" ] && [ "$rejects" -le $(( $(result_field status200) + FRESH_CONNS )) ] ||
    bad "fresh: Postfix saw $rejects probes for $(result_field status200) answers"

# ------------------------------------------------------------- summary
echo
say "summary (svc-api $WORKERS workers, wrk $THREADS thread(s), ${DURATION}s each):"
printf '  cached  c=%-3s %s\n          %s\n' "$CACHED_CONNS" "$CACHED_RESULT" "$CACHED_CPU"
printf '  fresh   c=%-3s %s\n          %s\n' "$FRESH_CONNS" "$FRESH_RESULT" "$FRESH_CPU"
grep -h -E ' (error|warn|crit)[ :]' "$IT_DIR/log/svc.log" 2>/dev/null | head -n 5 | sed 's/^/# svc.log: /' || true
[ "$FAILED" = 0 ] && say "all checks held" || say "some checks failed"
exit "$FAILED"
