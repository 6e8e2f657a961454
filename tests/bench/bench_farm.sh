#!/bin/bash
# bench_farm.sh: svc against an independent friendly farm (make bench-farm,
# issue 24): tests/bench/bench_worker.sh with BENCH_WORKER_SERVER=farm, i.e.
# one asyncio SMTP server process (tests/bench/farm_smtp.py) answering for
# 200 domains on 200 loopback addresses 127.0.1.1-200 (a provider's one
# process, not a server per domain), every flight answered 20 ms after it
# arrives, STARTTLS with a certificate of the test CA, 100 addresses a
# domain, a tenth of the domains catch-all, the zone in unbound; a
# 20,000-address bulk job through svc-api and one svc-worker daemon at the
# defaults, end to end (POST until /progress says completed, cold caches:
# domains never seen), every verdict checked; then in the same run the
# plain client (tests/bench/farm_client.py: one session per domain, all at
# once, each domain's RCPTs in one flight) over the same farm, and the
# ratio svc / plain client. BENCH_FARM_MX: both (default: per-domain, then
# one MX host for all domains), per-domain or shared. Goal: ratio >=
# BENCH_FARM_RATIO_GOAL (0.8); exit 1 when missed. The BENCH_WORKER_* knobs
# apply. Figures and the command in tests/bench/README.
export BENCH_WORKER_SERVER=farm
export BENCH_WORKER_GOAL=${BENCH_WORKER_GOAL:-0}
dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rc=0
case ${BENCH_FARM_MX:-both} in both) modes="per-domain shared" ;; *) modes=$BENCH_FARM_MX ;; esac
for m in $modes; do
    BENCH_WORKER_NAME="bench-farm-$m" BENCH_WORKER_MX=$m bash "$dir/bench_worker.sh" || rc=$?
done
exit "$rc"
