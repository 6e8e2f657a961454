#!/bin/bash
# bench_jobs_memory.sh: the memory one job creation request costs a
# responder (make bench-jobs-memory). On the stack of tests/integration/
# lib.sh (lighttpd spawning this tree's svc-api, api_workers = 2, MariaDB on
# loopback), four bodies are POSTed with curl as a client would send them:
#
#   batch-short  POST /v1/verify/batch, 1,000,000 distinct addresses of 21
#                octets (u0000000@d000.example): 24 MB, 201
#   batch-64mib  POST /v1/verify/batch, 1,000,000 distinct addresses of 64
#                octets, the body just under the 64 MiB limit, 201
#   batch-tiny   POST /v1/verify/batch, 64 MiB of tiny elements: "", " ",
#                "a", "a@b.co" over and over (13,421,772 of them), which is
#                400 too_many_emails
#   bulk-16mib   POST /v1/verify/bulk, 100,000 distinct addresses of 37
#                octets, each four times (as written, upper-cased, with
#                spaces, upper-cased with spaces), just under 16 MiB, 202
#   batch-idn    POST /v1/verify/batch, 1,000,000 distinct addresses at one
#                domain of 17 one-letter IDN labels (u0000000@ü.ü...ü.de,
#                62 octets; 138 octets as A-labels, kept for each row),
#                65 MB: 413 past api_job_memory_mb (201 without a budget)
#
# Before each request the peak RSS of every svc-api process is reset
# (echo 5 > /proc/PID/clear_refs); after the answer the script reads
# VmHWM of each and prints the largest, with the status, curl's time and
# the answer's counts. BENCH_JOBS_MEMORY_LIMIT_KB (262144: 256 MiB) is the
# goal for that peak; the exit status is 1 when a request passes it or an
# answer is not the expected one.
#
# BENCH_JOBS_MEMORY_BODIES (all five, in the order above) chooses the
# bodies: a responder keeps the heap a request left unless svc-api gives
# it back, so one body per run measures each alone. top_builddir=/path/to/
# another/build measures another svc-api (the same schema), e.g. main's for
# the "before" figures in tests/bench/README.
export STACK_DB_BUFFER_POOL=${STACK_DB_BUFFER_POOL:-1G} STACK_DB_LOG_FILE=${STACK_DB_LOG_FILE:-512M}
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
it_require python3
LIMIT_KB=${BENCH_JOBS_MEMORY_LIMIT_KB:-262144}
BODIES=${BENCH_JOBS_MEMORY_BODIES:-batch-short batch-64mib batch-tiny bulk-16mib batch-idn}
it_stack_start

ACC=$(svcadm account create --email bench@example.com --tier admin --credits 10000000)
KEY=$(svcadm key create --account "$ACC" --scopes '*')

# the bodies, written by Python (jq is too slow for 64 MiB)
python3 - "$IT_DIR" $BODIES <<'EOF'
import sys
d = sys.argv[1]
def write(name, head, elements, tail):
    if name not in sys.argv[2:]:
        return
    with open(f"{d}/{name}.json", "w", encoding="utf-8") as f:
        f.write(head + ",".join(elements) + tail)
write("batch-short", '{"name":"short","emails":[',
      (f'"u{i:07d}@d{i % 1000:03d}.example"' for i in range(1000000)), "]}")
pad = "x" * 42
write("batch-64mib", '{"name":"long","emails":[',
      (f'"u{i:07d}.{pad}@d{i % 1000:03d}.example"' for i in range(1000000)),
      "]}")
tiny = ['""', '" "', '"a"', '"a@b.co"']
n = (64 * 1024 * 1024 - 16) // 20 * 4
write("batch-tiny", '{"emails":[', (tiny[i % 4] for i in range(n)), "]}")
pad = "y" * 16
def spellings(i):
    a = f"u{i:06d}.{pad}@d{i % 1000:03d}.example"
    return [f'"{a}"', f'"{a.upper()}"', f'" {a} "', f'" {a.upper()} "']
write("bulk-16mib", '{"name":"bulk","emails":[',
      (s for i in range(100000) for s in spellings(i)), "]}")
dom = ".".join(["\u00fc"] * 17) + ".de"
write("batch-idn", '{"name":"idn","emails":[',
      (f'"u{i:07d}@{dom}"' for i in range(1000000)), "]}")
EOF

API_PIDS=
api_pids() {	# every svc-api process (the master and its children)
    stack_descendants "$(stack_pidfile_pid "$IT_DIR/lighttpd/lighttpd.pid")"
}

FAILED=0
# measure NAME PATH STATUS: POST the body, print its peak (STATUS: a
# regular expression)
measure() {
    local name=$1 path=$2 want=$3 p peak=0 who= size code t counts hwm
    local -A before
    size=$(stat -c %s "$IT_DIR/$name.json")
    for p in $(api_pids); do
        echo 5 > "/proc/$p/clear_refs"
        before[$p]=$(awk '/^VmHWM:/ { print $2 }' "/proc/$p/status")
    done
    read -r code t < <(curl -s -o "$IT_DIR/out.json" -w '%{http_code} %{time_total}\n' \
        -X POST -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
        --max-time 600 --data-binary "@$IT_DIR/$name.json" "$BASE_URL$path")
    for p in $(api_pids); do
        hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$p/status")
        [ "$hwm" -gt "$peak" ] && { peak=$hwm; who=$p; }
    done
    counts=$(jq -r 'if .error then .error.code else "total \(.total_emails) duplicates \(.duplicates_removed)" end' \
        "$IT_DIR/out.json" 2>/dev/null || head -c 200 "$IT_DIR/out.json")
    printf 'bench: %-12s %9d bytes  status %s (%s)  %6.2f s  peak VmHWM %7d KiB (pid %s, %d KiB before)\n' \
        "$name" "$size" "$code" "$counts" "$t" "$peak" "$who" "${before[$who]:-0}"
    [[ $code =~ ^($want)$ ]] || { echo "bench: $name: expected status $want" >&2; FAILED=1; }
    [ "$peak" -le "$LIMIT_KB" ] || { echo "bench: $name: peak over $LIMIT_KB KiB" >&2; FAILED=1; }
}

echo "bench: svc-api $top_builddir/src/api/svc-api, processes: $(api_pids | wc -l) (1 master + children)"
for p in $(api_pids); do
    echo "bench: pid $p VmRSS $(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status") KiB at start"
done
for body in $BODIES; do
    case $body in
    batch-short | batch-64mib) measure "$body" /v1/verify/batch 201 ;;
    batch-tiny) measure "$body" /v1/verify/batch 400 ;;
    bulk-16mib) measure "$body" /v1/verify/bulk 202 ;;
    batch-idn) measure "$body" /v1/verify/batch '413|201' ;;
    *) echo "bench: no body $body" >&2; FAILED=1 ;;
    esac
done
[ "$FAILED" = 0 ] && echo "bench: GOAL MET: every peak <= $LIMIT_KB KiB" ||
    echo "bench: GOAL NOT MET (or a wrong answer)"
exit "$FAILED"
