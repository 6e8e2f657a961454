#!/bin/bash
# bench_pickup.sh: how soon svc-worker takes up a new job (make
# bench-pickup). A svc-worker daemon idles (nothing to claim) with
# worker_poll_interval = BENCH_PICKUP_POLL (30) and worker_wake_dir set, so
# that svc-api wakes it when a job is committed (src/util/wake.h);
# BENCH_PICKUP_JOBS (20) bulk jobs of BENCH_PICKUP_ADDRESSES (5) addresses
# (sandbox.<service_domain>: verdicts without a network) are created through
# the API one at a time, each once the last has completed and the worker
# has been idle for BENCH_PICKUP_IDLE_MS (300); the pickup latency of a job
# is its started_at (set by its first claim) less its created_at, both
# written by MariaDB's clock. Printed: each latency, the median, the 90th
# percentile and the largest, and the same without wake-ups (no
# worker_wake_dir, worker_poll_interval = BENCH_PICKUP_FALLBACK_POLL, 2: the
# poll alone, for comparison).
#
# Goal (exit status 1 when missed): the largest pickup latency with
# wake-ups under BENCH_PICKUP_GOAL_MS (250). 77: a tool is missing.
# BENCH_WORKER_BIN=PATH benches another svc-worker; SVC_TEST_KEEP=1 keeps
# the work directory.
. "${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
it_require jq awk

NJOBS=${BENCH_PICKUP_JOBS:-20}
NADDR=${BENCH_PICKUP_ADDRESSES:-5}
POLL=${BENCH_PICKUP_POLL:-30}
FALLBACK_POLL=${BENCH_PICKUP_FALLBACK_POLL:-2}
IDLE_MS=${BENCH_PICKUP_IDLE_MS:-300}
GOAL_MS=${BENCH_PICKUP_GOAL_MS:-250}
WORKER=${BENCH_WORKER_BIN:-$top_builddir/src/worker/svc-worker}
[ -x "$WORKER" ] || it_skip "$WORKER is not built"
bench_init bench-pickup "$WORKER" "$(it_api)"

mail_env_dns
SMTP_PORT=$(stack_free_port)
mail_env_lists
mail_env_conf
WAKE_DIR=$IT_DIR/wake
mkdir -p "$WAKE_DIR"
IT_LOG_LEVEL=info
it_conf_add "worker_wake_dir = $WAKE_DIR
worker_poll_interval = $POLL"
it_stack_start
ACC=$(it_account admin 100000000)
API_KEY=$(it_key "$ACC" '*')
BODY=$(seq 1 "$NADDR" | sed 's/.*/user&@sandbox.svc.example/' | jq -R . | jq -sc '{emails: .}')

say "machine: $(nproc) CPUs, $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"

# measure NAME CONF: start a worker on CONF, run the jobs, print the
# latencies; sets MAX_MS
measure() {
    local name=$1 conf=$2 i id st lat=()
    stack_proc_start "$IT_DIR/log" "worker-$name" "$WORKER" -c "$conf" || { bad "$name: svc-worker did not start"; return 1; }
    sleep 1
    for i in $(seq 1 "$NJOBS"); do
        sleep "$(awk -v m="$IDLE_MS" 'BEGIN { printf "%.3f", m / 1000 }')"
        http POST /v1/verify/bulk "$BODY" > /dev/null
        [ "$HTTP_STATUS" = 202 ] || { bad "$name: job $i: HTTP $HTTP_STATUS $(it_body_excerpt)"; return 1; }
        id=$(json .job_id)
        for _ in $(seq 1 $(( (POLL + 10) * 20 ))); do
            st=$(it_sql "SELECT status FROM jobs WHERE id = '$id'")
            [ "$st" = completed ] && break
            sleep 0.05
        done
        [ "$st" = completed ] || { bad "$name: job $i is $st"; return 1; }
        lat+=("$(it_sql "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, started_at) DIV 1000 FROM jobs WHERE id = '$id'")")
    done
    stack_proc_stop "$IT_DIR/log" "worker-$name"
    say "$name: pickup ms of $NJOBS jobs: ${lat[*]}"
    printf '%s\n' "${lat[@]}" | sort -n | awk -v name="$name" -v b="$BENCH_NAME" '
        { a[NR] = $1; s += $1 }
        END { p90 = a[int((NR * 9 + 9) / 10)]; if (p90 == "") p90 = a[NR]
              printf "%s: %s: median %d ms, p90 %d ms, max %d ms, mean %.0f ms\n", b, name, a[int((NR + 1) / 2)], p90, a[NR], s / NR }'
    MAX_MS=$(printf '%s\n' "${lat[@]}" | sort -n | tail -n 1)
}

measure wake "$SVC_CONF" || exit 1
WAKE_MAX=$MAX_MS
POLL_CONF=$IT_DIR/svc-poll.conf
sed -e "s/^worker_wake_dir = .*/worker_wake_dir =/" \
    -e "s/^worker_poll_interval = .*/worker_poll_interval = $FALLBACK_POLL/" "$SVC_CONF" > "$POLL_CONF"
measure "poll-${FALLBACK_POLL}s" "$POLL_CONF" || exit 1
say "settings: wake: worker_poll_interval = $POLL with worker_wake_dir; poll: worker_poll_interval = $FALLBACK_POLL without; $NJOBS jobs of $NADDR sandbox addresses, $IDLE_MS ms idle before each"
say "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$WAKE_MAX" -ge "$GOAL_MS" ]; then
    bad "the largest pickup latency with wake-ups, $WAKE_MAX ms, is not under $GOAL_MS ms"
else
    say "PASS: every job taken up within $WAKE_MAX ms of its creation (goal < $GOAL_MS ms)"
fi
exit "$FAILED"
