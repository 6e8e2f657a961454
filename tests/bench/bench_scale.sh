#!/bin/bash
# bench_scale.sh: svc-worker at scale (make bench-scale): a 1,000,000-address
# batch (POST /v1/verify/batch) over 10,000 domains, 100 addresses each (a
# tenth catch-all), run by tests/bench/bench_worker.sh with everything else
# as there (per-domain MX hosts on 20 fake servers with STARTTLS,
# PIPELINING and 20 ms a flight, unbound, MariaDB with a 1 GB pool, one
# svc-worker daemon at the defaults). Printed and checked: the job
# completes, every verdict right (one SQL query), the worker's peak RSS
# under 256 MB, and the rate in each tenth of the job, the last no slower
# than 0.8 x the median of the others (no slowdown as the job goes on); the
# end-to-end rate is printed beside the 20,000-address figures (no goal
# here: BENCH_WORKER_GOAL, 0). Any BENCH_WORKER_* knob of bench_worker.sh
# applies (BENCH_WORKER_MX=shared: every domain behind one MX host).
# Figures and the command in tests/bench/README.
export BENCH_WORKER_NAME=${BENCH_WORKER_NAME:-bench-scale}
export BENCH_WORKER_DOMAINS=${BENCH_WORKER_DOMAINS:-10000}
export BENCH_WORKER_PER_DOMAIN=${BENCH_WORKER_PER_DOMAIN:-100}
export BENCH_WORKER_TYPE=batch
export BENCH_WORKER_GOAL=${BENCH_WORKER_GOAL:-0}
export BENCH_WORKER_PROGRESS_MS=${BENCH_WORKER_PROGRESS_MS:-250}
export BENCH_WORKER_TIMEOUT=${BENCH_WORKER_TIMEOUT:-3600}
export STACK_DB_BUFFER_POOL=${STACK_DB_BUFFER_POOL:-1G} STACK_DB_LOG_FILE=${STACK_DB_LOG_FILE:-512M}
exec bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bench_worker.sh"
