#!/bin/bash
# bench_galera.sh: svc-worker's job throughput on a three-node Galera
# cluster against one MariaDB server (make bench-galera, issue 28):
# tests/bench/bench_worker.sh at its settings (a 20,000-address bulk job,
# 200 domains, one svc-worker daemon, end to end from the POST that
# creates the job until GET /progress says completed), run
# BENCH_GALERA_ROUNDS (3) times each way, alternately (one server, then
# the cluster, then one server ...: a machine that others load at the same
# time weighs on both alike), each run with a stack of its own. Prints every
# run's addresses/minute, the median and spread of each way and the ratio
# of the medians, cluster / one server. BENCH_GALERA_MODES="galera
# galera-all" (with BENCH_WORKER_PROCS=2, say) compares instead every
# program on node 1 (the others hot standbys) with svc-worker process W
# writing to node W (BENCH_GALERA_WRITERS=all): the job claim load on
# one node against all. Every run's own checks (all
# verdicts right) apply; the throughput goal of bench-worker does not
# (BENCH_WORKER_GOAL=0). The BENCH_WORKER_* knobs apply. Figures and the
# command in tests/bench/README.
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export BENCH_WORKER_GOAL=${BENCH_WORKER_GOAL:-0}
rounds=${BENCH_GALERA_ROUNDS:-3}
out=$(mktemp -d "${TMPDIR:-/tmp}/svc-bench-galera.XXXXXX")
trap 'rm -rf "$out"' EXIT
rc=0
# rate FILE: the end-to-end addresses/minute of the run's report
rate() { sed -n 's/.* end to end (POST until \/progress says completed) in [0-9.]* s: \([0-9]*\) addresses\/min.*/\1/p' "$1" | head -n 1; }
set -- ${BENCH_GALERA_MODES:-single galera}
[ $# = 2 ] || { echo "bench-galera: BENCH_GALERA_MODES names two of single, galera, galera-all"; exit 77; }
m1=$1 m2=$2
for r in $(seq 1 "$rounds"); do
    for mode in "$m1" "$m2"; do
        case $mode in
        single) g=0 wr=one ;;
        galera) g=1 wr=one ;;
        galera-all) g=1 wr=all ;;
        *) echo "bench-galera: no mode $mode"; exit 77 ;;
        esac
        BENCH_GALERA=$g BENCH_GALERA_WRITERS=$wr BENCH_WORKER_NAME="bench-galera-$mode-$r" bash "$dir/bench_worker.sh" \
            > "$out/$mode-$r.log" 2>&1 || rc=1
        grep -E '^bench-galera-[a-z-]+-[0-9]+: (database|run 1:|  CPU s|FAIL)' "$out/$mode-$r.log"
        v=$(rate "$out/$mode-$r.log")
        echo "bench-galera: round $r, $mode: ${v:-?} addresses/min end to end; load average $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "${v:-0}" >> "$out/$mode"
    done
done
# stats FILE: "median min max" of the numbers in FILE
stats() { sort -n "$1" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%d %d %d", m, v[1], v[NR] }'; }
read -r sm smin smax < <(stats "$out/$m1")
read -r gm gmin gmax < <(stats "$out/$m2")
echo "bench-galera: $m1: median $sm addresses/min (min $smin, max $smax) over $rounds runs"
echo "bench-galera: $m2: median $gm addresses/min (min $gmin, max $gmax) over $rounds runs"
echo "bench-galera: RATIO $m2 / $m1 (medians): $(awk -v a="$gm" -v b="$sm" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
    "(per round: $(paste -d' ' "$out/$m1" "$out/$m2" | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), ($1 > 0 ? $2 / $1 : 0) }'))"
[ "$rc" = 0 ] || echo "bench-galera: a run failed a check (its log above)"
exit "$rc"
