# bench_lib.sh: what the benchmarks share, sourced (bash) after
# tests/integration/lib.sh, which starts the servers and the stack in a
# work directory of its own and stops them at exit:
#
#   bench_init NAME PROGRAM...  names the lines of the report ("NAME: ...")
#                               and warns for each PROGRAM built with
#                               AddressSanitizer (no figures worth keeping)
#   say TEXT...                 a line of the report
#   bad TEXT...                 a check failed: "NAME: FAIL: TEXT", and
#                               FAILED=1 (the script's exit status)
#   bench_ticks PID...          CPU time (user + system) of the processes,
#                               in clock ticks (HZ a second); 0 for a PID
#                               that is gone or empty
#   bench_tree_ticks PID...     the same for the processes and all their
#                               descendants, with what their reaped
#                               children used
#   bench_machine_ticks         "BUSY ALL": the ticks the whole machine was
#                               busy and all its ticks (/proc/stat)
# shellcheck shell=bash disable=SC2034
# (HZ and FAILED are for the scripts that source this file.)

HZ=$(getconf CLK_TCK)
FAILED=0
BENCH_NAME=bench

bench_init() {
    local p
    BENCH_NAME=$1
    shift
    for p in "$@"; do
        if grep -q __asan_init "$p" 2>/dev/null; then
            say "WARNING: $p is built with AddressSanitizer; the figures are not representative"
        fi
    done
}

say() { echo "$BENCH_NAME: $*"; }
bad() { echo "$BENCH_NAME: FAIL: $*"; FAILED=1; }

# bench_proc_ticks PID N: the first N of utime, stime, cutime, cstime.
bench_proc_ticks() {
    local v
    v=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null |
        awk -v n="$2" '{ s = 0; for (i = 12; i < 12 + n; i++) s += $i; print s }')
    echo "${v:-0}"
}

bench_ticks() {
    local p t=0
    for p in "$@"; do
        if [ -n "$p" ]; then t=$(( t + $(bench_proc_ticks "$p" 2) )); fi
    done
    echo "$t"
}

bench_tree_ticks() {
    local p v t=0
    for p in "$@"; do
        [ -n "$p" ] || continue
        for v in "$p" $(stack_descendants "$p"); do
            t=$(( t + $(bench_proc_ticks "$v" 4) ))
        done
    done
    echo "$t"
}

bench_machine_ticks() {
    awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat
}

# The per-account caps (README, "Per-account caps") are not what the
# benchmarks measure: their jobs, free sandbox rows and uploads may pass
# the defaults in one account.
it_conf_add "account_jobs_in_flight_max = 1000000
account_upload_storage_mb = 1000000
account_sandbox_rows_per_day = 100000000"
