#!/bin/bash
# bench_worker.sh: job throughput of svc-worker (make bench-worker). A bulk
# job of BENCH_WORKER_DOMAINS (200) domains x BENCH_WORKER_PER_DOMAIN (100)
# addresses (for each domain half user<N>@, which exist, and half
# unknown<N>@; every BENCH_WORKER_CATCHALL_EVERY-th (10th) domain is a
# catch-all, r<run>-c<NNN> where the others are r<run>-d<NNN>, whose other
# half is nobody<N>@: fake_smtp.py rejects unknown* even with catchall=1,
# where a real catch-all accepts everything) is created through the API
# (POST /v1/verify/bulk; /v1/verify/batch beyond 100,000 addresses, or
# with BENCH_WORKER_TYPE=batch) and verified
# by svc-worker (daemon) against loopback SMTP peers that offer STARTTLS and
# PIPELINING and answer each flight of commands BENCH_WORKER_FLIGHT_MS (20)
# after it arrives (tests/smtp/fake_smtp.py flight_delay_ms: this kernel has
# no netem; commands pipelined in one flight cost one delay, as over a real
# network).
#
# Servers, all on loopback, all stopped at the end (DNS, certificates and
# fake servers through tests/integration/mail_env.sh):
#  - unbound (tests/dns/server.sh) serving, besides the test zones, a
#    generated zone bench.test: r<run>-d<NNN>.bench.test
#    with an A record (web presence: a catch-all domain without one would be
#    a "pristine catch-all" spam trap) and an MX; with BENCH_WORKER_MX =
#    per-domain (default) each domain has an MX host of its own
#    (mx.r<run>-d<NNN>.bench.test), with "shared" every domain has the one
#    MX host mx.bench.test (as when a list's business domains are all
#    hosted by one provider: svc-worker runs at most
#    worker_domain_concurrency sessions to it, and each session goes on
#    from domain to domain);
#  - per-domain: fake_smtp.py, BENCH_WORKER_FAKES (10) instances per kind
#    on one port (svc-worker holds worker_domain_concurrency sessions per
#    server address too, so with one address per kind only 5 + 5 sessions
#    would run: ten per kind let the default 50 run, as 200 domains on many
#    servers would): normal ones (catchall=0) on 127.0.0.40, .42, ...,
#    catch-all ones (catchall=1) on 127.0.0.41, .43, ...; domains spread
#    round-robin; shared: one instance on 127.0.0.40 for every domain,
#    catch-all for the r<run>-c<NNN> ones (catchall_domains);
#    STARTTLS with a throw-away certificate made by certtool
#    (tests/smtp/certs.sh; its CA is the worker's ca_file);
#  - MariaDB + lighttpd + svc-api (tests/integration/lib.sh, log_level = warn;
#    InnoDB pool STACK_DB_BUFFER_POOL, 256M here by default); with
#    BENCH_GALERA=1 (make bench-galera, tests/bench/bench_galera.sh) a
#    three-node Galera cluster on loopback instead (tests/integration/
#    galera.sh, the same pool on each node), every program on node 1, or
#    with BENCH_GALERA_WRITERS=all svc-worker process W on node W.
#
# Each of BENCH_WORKER_RUNS (1) runs uses domains of its own (no warm cache)
# and BENCH_WORKER_PROCS (1) fresh svc-worker daemons (each with its own
# MariaDB connection, sharing the job's chunks) with worker_concurrency =
# BENCH_WORKER_CONCURRENCY, worker_domain_concurrency =
# BENCH_WORKER_DOMAIN_CONCURRENCY, worker_rcpts_per_session =
# BENCH_WORKER_RCPTS, worker_transactions_per_session =
# BENCH_WORKER_TRANSACTIONS (unset: the configuration's defaults),
# started (and idle: woken by svc-api through worker_wake_dir, unless
# BENCH_WORKER_WAKE=no, else polling every second) before the job is
# created.
# Measured: end to end, by the client (a Python loop in this script), from
# the first byte of the POST until GET /v1/jobs/{id}/progress (asked every
# BENCH_WORKER_PROGRESS_MS, 50) says completed, with the job's pickup (the
# first answer that says processing) and the rate in each tenth of the
# addresses (from the progress answers; the last tenth no slower than 0.8 x
# the median of the others: checked from 100,000 addresses up, where a
# tenth is long enough to measure); the job's completed_at - started_at
# (set by the worker), every verdict (all
# pages of GET /v1/jobs/{id}/results?limit=1000, or one SQL query beyond
# 100,000 addresses: user@ of normal domains
# valid/accepted_email, unknown@ of normal domains invalid/rejected_email,
# everything at catch-all domains catch_all), the job's counts, the worker's
# peak RSS (VmHWM), CPU time of the worker, mariadbd, the fake servers and
# unbound over the run (also as a timeline per 0.5 s, 10 s beyond 100,000
# addresses), what the first
# worker is doing (sampled every 2 ms from /proc: running or blocked in which
# system call; poll with one fd is its MariaDB round trips), SQL statements
# per address (BENCH_WORKER_SQL_LOG=yes: which ones, from MariaDB's general
# log, which slows the run; BENCH_WORKER_SQL_TIME=yes: the statements that
# took the server's time, from its slow log with long_query_time 0, which
# slows it too), addresses concluded per second, and from the
# fake servers the SMTP sessions, the most open at once (concurrency), the
# most transactions and RCPTs in one session, and the flights of the last
# session; the load average before and after each run. Printed: addresses/minute beside
# the latency-bound limit for the settings used,
#   C x R / (k x flight) x 60 addresses/min,
# C = min(worker_concurrency, MX hosts x worker_domain_concurrency), R =
# recipients per session, k = delayed flights per session (measured).
#
# Goal (exit status 1 when missed or a check fails): at least
# BENCH_WORKER_GOAL addresses/minute end to end (450,000 per-domain,
# 400,000 shared), every verdict right, worker peak RSS under 256 MB, no
# more sessions open at once at a fake server than the workers'
# worker_domain_concurrency. 77: a tool is missing. top_builddir names the
# build benched (use an -O2 build without sanitizers for figures, see
# tests/bench/README); BENCH_WORKER_BIN=PATH benches another svc-worker.
# SVC_TEST_KEEP=1 keeps the work directory.
export STACK_DB_BUFFER_POOL=${STACK_DB_BUFFER_POOL:-256M} STACK_DB_LOG_FILE=${STACK_DB_LOG_FILE:-128M}
. "${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
it_require unbound drill python3 certtool awk

NDOM=${BENCH_WORKER_DOMAINS:-200}
PERDOM=${BENCH_WORKER_PER_DOMAIN:-100}
CA_EVERY=${BENCH_WORKER_CATCHALL_EVERY:-10}
FLIGHT_MS=${BENCH_WORKER_FLIGHT_MS:-20}
NFAKES=${BENCH_WORKER_FAKES:-10}
MXMODE=${BENCH_WORKER_MX:-per-domain}
# BENCH_WORKER_SERVER=farm (make bench-farm, tests/bench/bench_farm.sh): one
# asyncio process (tests/bench/farm_smtp.py) answers for every domain on
# 127.0.1.<I+1> (per-domain; shared: 127.0.1.1), and after the job
# tests/bench/farm_client.py, a plain client, goes through the same
# addresses over the same farm; its rate and the ratio are printed, the goal
# being a ratio of at least BENCH_FARM_RATIO_GOAL (0.8)
SERVER=${BENCH_WORKER_SERVER:-fake}
RATIO_GOAL=${BENCH_FARM_RATIO_GOAL:-0.8}
RUNS=${BENCH_WORKER_RUNS:-1}
NPROCS=${BENCH_WORKER_PROCS:-1}
GOAL_DEFAULT=450000; [ "$MXMODE" = shared ] && GOAL_DEFAULT=400000
GOAL=${BENCH_WORKER_GOAL:-$GOAL_DEFAULT}
PROGRESS_MS=${BENCH_WORKER_PROGRESS_MS:-50}
RSS_LIMIT_KB=$(( 256 * 1024 ))
TIMEOUT=${BENCH_WORKER_TIMEOUT:-600}
WORKER=${BENCH_WORKER_BIN:-$top_builddir/src/worker/svc-worker}
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)

[ -x "$WORKER" ] || it_skip "$WORKER is not built"
case $MXMODE in per-domain|shared) ;; *) it_skip "BENCH_WORKER_MX must be per-domain or shared" ;; esac
[ $(( PERDOM % 2 )) = 0 ] && [ "$PERDOM" -ge 2 ] || it_skip "BENCH_WORKER_PER_DOMAIN must be even"
[ "$NFAKES" -ge 1 ] && [ "$NFAKES" -le 50 ] || it_skip "BENCH_WORKER_FAKES must be 1-50"
TOTAL=$(( NDOM * PERDOM ))
TYPE=${BENCH_WORKER_TYPE:-bulk}; [ "$TOTAL" -gt 100000 ] && TYPE=batch
case $TYPE in bulk|batch) ;; *) it_skip "BENCH_WORKER_TYPE must be bulk or batch" ;; esac
bench_init "${BENCH_WORKER_NAME:-bench-worker}" "$WORKER"

# ------------------------------------------------------------- certificates
mail_env_certs mx.bench.test "*.bench.test" bench.test

# ------------------------------------------------------------- fake SMTP peers
# fake_host KIND I: the address of the I-th fake server of KIND (n or c)
fake_host() { if [ "$1" = n ]; then echo "127.0.0.$(( 40 + 2 * $2 ))"; else echo "127.0.0.$(( 41 + 2 * $2 ))"; fi; }
SMTP_PORT=$(stack_free_port)
FAKE_HOSTS=()
declare -A FAKE_CA=()	# 1: a catch-all server
if [ "$MXMODE" = shared ]; then
    h=$(fake_host n 0); FAKE_HOSTS=("$h"); FAKE_CA[$h]=0
else
    for i in $(seq 0 $(( NFAKES - 1 ))); do
        h=$(fake_host n "$i"); FAKE_HOSTS+=("$h"); FAKE_CA[$h]=0
        h=$(fake_host c "$i"); FAKE_HOSTS+=("$h"); FAKE_CA[$h]=1
    done
fi
# fake_settings HOST: what the fake server at HOST is started with (and
# set again after its counters are reset), one a line
fake_settings() {
    printf '%s\n' starttls=offered pipelining=1 "flight_delay_ms=$FLIGHT_MS" "catchall=${FAKE_CA[$1]}"
    [ "$MXMODE" != shared ] || echo 'catchall_domains=r[0-9]+-c[0-9]+\.bench\.test'
}
farm_host() { echo "127.0.1.$(( $1 + 1 ))"; }	# farm_host I: domain I's MX address
if [ "$SERVER" = farm ]; then
    [ "$NDOM" -le 254 ] || it_skip "the farm has at most 254 addresses"
    FAKE_HOSTS=("$(farm_host 0)"); FAKE_CA[$(farm_host 0)]=0
    farm_hosts=("$(farm_host 0)")
    [ "$MXMODE" = shared ] || for i in $(seq 1 $(( NDOM - 1 ))); do farm_hosts+=("$(farm_host "$i")"); done
    "$PYTHON" "$top_srcdir/tests/bench/farm_smtp.py" --ready "$IT_DIR/fake-$(farm_host 0)" \
        --cert "$IT_DIR/tls/server.pem" --key "$IT_DIR/tls/server.key" --port "$SMTP_PORT" \
        --flight-ms "$FLIGHT_MS" --catchall 'r[0-9]+-c[0-9]+\.bench\.test' "${farm_hosts[@]}" \
        > "$IT_DIR/farm.log" 2>&1 &
    FAKE_PIDS+=($!)
    for _ in $(seq 1 100); do [ -s "$IT_DIR/fake-$(farm_host 0)" ] && break; sleep 0.1; done
    [ -s "$IT_DIR/fake-$(farm_host 0)" ] || { cat "$IT_DIR/farm.log"; echo "Bail out! farm_smtp.py"; exit 1; }
else for h in "${FAKE_HOSTS[@]}"; do
    mapfile -t args < <(fake_settings "$h")
    fake "$h" --cert "$IT_DIR/tls/server.pem" --key "$IT_DIR/tls/server.key" "${args[@]}"
done; fi

# ------------------------------------------------------------- DNS
# domain R I: the name of domain I of run R (r<R>-c<I> for a catch-all)
domain() { if [ $(( $2 % CA_EVERY )) = $(( CA_EVERY - 1 )) ]; then printf 'r%d-c%03d.bench.test' "$1" "$2"; else printf 'r%d-d%03d.bench.test' "$1" "$2"; fi; }
mkdir -p "$IT_DIR/dns"
{
    echo '$ORIGIN bench.test.'
    echo '$TTL 3600'
    echo '@ 3600 IN SOA ns.bench.test. hostmaster.bench.test. 1 3600 600 86400 3600'
    echo '@ 3600 IN NS ns.bench.test.'
    echo 'ns 3600 IN A 127.0.0.1'
    if [ "$SERVER" = farm ]; then echo "mx 3600 IN A $(farm_host 0)"; else echo "mx 3600 IN A $(fake_host n 0)"; fi
    for r in $(seq 1 "$RUNS"); do
        awk -v r="$r" -v n="$NDOM" -v every="$CA_EVERY" -v nf="$NFAKES" -v mode="$MXMODE" -v farm="$SERVER" 'BEGIN {
            nn = 0; nc = 0
            for (i = 0; i < n; i++) {
                if (i % every == every - 1) { k = "c"; f = nc++ % nf } else { k = "n"; f = nn++ % nf }
                d = sprintf("r%d-%s%03d", r, (k == "c" ? "c" : "d"), i)
                printf "%s 3600 IN A 192.0.2.1\n", d
                if (mode == "shared")
                    printf "%s 3600 IN MX 10 mx.bench.test.\n", d
                else if (farm == "farm") {
                    # mx-<domain>.bench.test: the certificate of the farm
                    # (*.bench.test) is valid for every MX host
                    printf "%s 3600 IN MX 10 mx-%s.bench.test.\n", d, d
                    printf "mx-%s 3600 IN A 127.0.1.%d\n", d, i + 1
                } else {
                    printf "%s 3600 IN MX 10 mx.%s.bench.test.\n", d, d
                    printf "mx.%s 3600 IN A 127.0.0.%d\n", d, (k == "n" ? 40 : 41) + 2 * f
                }
            } }'
    done
} > "$IT_DIR/dns/bench.test.zone"
mail_env_dns "$IT_DIR/dns/bench.test.zone"
drill -Q -p "${DNS##*:}" @127.0.0.1 "$(domain 1 0)" MX 2>/dev/null | grep -q bench.test ||
    { cat "$IT_DIR/dns/unbound.log"; echo "Bail out! unbound does not answer for $(domain 1 0)"; exit 1; }
UNBOUND_PID=$(stack_pidfile_pid "$IT_DIR/dns/server.pid")

# ------------------------------------------------------------- the stack
mail_env_lists
mail_env_conf dns_timeout_ms=2000 smtp_connect_timeout_ms=5000 smtp_reply_timeout_ms=10000
it_conf_add "ca_file = $IT_DIR/tls/ca.pem
worker_poll_interval = 1"
# svc-api wakes the workers when the job is committed (worker_wake_dir, as
# contrib's quickstart sets it); BENCH_WORKER_WAKE=no leaves the poll alone
if [ "${BENCH_WORKER_WAKE:-yes}" = yes ]; then
    mkdir -p "$IT_DIR/wake"
    it_conf_add "worker_wake_dir = $IT_DIR/wake"
fi
[ -n "${BENCH_WORKER_CONCURRENCY:-}" ] && it_conf_add "worker_concurrency = $BENCH_WORKER_CONCURRENCY"
[ -n "${BENCH_WORKER_DOMAIN_CONCURRENCY:-}" ] && it_conf_add "worker_domain_concurrency = $BENCH_WORKER_DOMAIN_CONCURRENCY"
[ -n "${BENCH_WORKER_RCPTS:-}" ] && it_conf_add "worker_rcpts_per_session = $BENCH_WORKER_RCPTS"
[ -n "${BENCH_WORKER_TRANSACTIONS:-}" ] && it_conf_add "worker_transactions_per_session = $BENCH_WORKER_TRANSACTIONS"
IT_LOG_LEVEL=${BENCH_WORKER_LOG_LEVEL:-warn}
if [ "${BENCH_GALERA:-0}" = 1 ]; then
    # the database a three-node Galera cluster on loopback
    # (tests/integration/galera.sh), every program on db_hosts = node 1 2 3
    # (node 1 takes the writes, 2 and 3 apply them synchronously); the
    # CPU figure "mariadbd" is the three nodes' together
    . "$top_srcdir/tests/integration/galera.sh"
    galera_require
    galera_cluster_start
    ln -s g1 "$IT_DIR/mariadb"
    IT_STACK=yes
    HTTP_PORT=$(stack_free_port)
    BASE_URL=http://127.0.0.1:$HTTP_PORT
    SVC_CONF=$IT_DIR/svc.conf
    mkdir -p "$IT_DIR/log"
    galera_svc_conf "$SVC_CONF"
    export SVC_CONF BASE_URL HTTP_PORT
    svcadm db migrate --sql-dir "$top_srcdir/sql" > "$IT_DIR/migrate.log" 2>&1 ||
        { cat "$IT_DIR/migrate.log"; echo "Bail out! svcadm db migrate on the cluster"; exit 1; }
    it_api_start
    MARIADB_PID=$(for n in 1 2 3; do stack_pidfile_pid "$IT_DIR/g$n/mariadbd.pid"; done | tr '\n' ' ')
    if [ "${BENCH_GALERA_WRITERS:-one}" = all ]; then
        say "database: a Galera cluster of 3 nodes on loopback (galera-4), svc-api on node 1, svc-worker process W on node W (BENCH_GALERA_WRITERS=all: writes to every node)"
    else
        say "database: a Galera cluster of 3 nodes on loopback (galera-4), every program on node 1 (db_hosts 1 2 3; the others hot standbys)"
    fi
else
    it_stack_start
    MARIADB_PID=$(stack_pidfile_pid "$IT_DIR/mariadb/mariadbd.pid")
    say "database: one MariaDB server"
fi
# the effective worker settings (defaults included)
setting() { svcadm config 2>/dev/null | awk -v k="$1" '$1 == k { print $3; exit }'; }
CONC=$(setting worker_concurrency)
DCONC=$(setting worker_domain_concurrency)
RCPTS=$(setting worker_rcpts_per_session)
TXS=$(setting worker_transactions_per_session)
[ -n "$CONC" ] && [ -n "$DCONC" ] && [ -n "$RCPTS" ] ||
    { svcadm config; echo "Bail out! svcadm config does not name the worker settings"; exit 1; }

ACC=$(svcadm account create --email bench-worker@bench.example --tier admin --credits 100000000)
API_KEY=$(svcadm key create --account "$ACC" --scopes '*' --rate-limit 100000)

# ------------------------------------------------------------- CPU accounting
snapshot() {	# snapshot WORKER_PID...: workers mariadbd fakes unbound machine_busy machine_all
    echo "$(bench_ticks "$@") $(bench_ticks $MARIADB_PID) $(bench_ticks "${FAKE_PIDS[@]}")" \
        "$(bench_ticks "$UNBOUND_PID") $(bench_machine_ticks)"
}
elapsed() { echo "$1 $(date +%s.%N)" | awk '{ printf "%.3f", $2 - $1 }'; }
sql_status() {
    it_sql "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Com_select', 'Com_update', 'Com_insert', 'Com_commit')"
}
status_kb() { sed -n "s/^$2:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$1/status" 2>/dev/null; }

say "svc-worker: $WORKER; $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1); load average $(cut -d' ' -f1-3 /proc/loadavg)"
say "job: $NDOM domains x $PERDOM addresses, every ${CA_EVERY}th domain a catch-all; $NFAKES fake server(s) per kind, flight delay ${FLIGHT_MS} ms, MX hosts $MXMODE"
say "settings: $NPROCS svc-worker process(es), each worker_concurrency=$CONC worker_domain_concurrency=$DCONC worker_rcpts_per_session=$RCPTS worker_transactions_per_session=$TXS"

# ------------------------------------------------------------- runs
SUMMARY=
for run in $(seq 1 "$RUNS"); do
    # the fake servers count (sessions, the most open at once) from zero
    for h in "${FAKE_HOSTS[@]}"; do
        fake_ctl "$h" reset > /dev/null
        mapfile -t args < <(fake_settings "$h")
        fake_set "$h" "${args[@]}"
    done
    # the job: for each domain PERDOM/2 user<N>@ and PERDOM/2 unknown<N>@
    # (nobody<N>@ at catch-all domains: fake_smtp.py rejects unknown* even
    # with catchall=1, a real catch-all accepts every local part)
    awk -v r="$run" -v n="$NDOM" -v per="$PERDOM" -v every="$CA_EVERY" 'BEGIN {
        printf "{\"emails\":["
        s = ""
        for (i = 0; i < n; i++) {
            ca = (i % every == every - 1)
            no = ca ? "nobody" : "unknown"
            d = sprintf("r%d-%s%03d.bench.test", r, ca ? "c" : "d", i)
            for (j = 0; j < per / 2; j++) {
                printf "%s\"user%d@%s\",\"%s%d@%s\"", s, j, d, no, j, d
                s = ","
            }
        }
        print "]}" }' > "$IT_DIR/job-$run.json"
    load0=$(cut -d' ' -f1-3 /proc/loadavg)

    # the workers first, idle as in production: the job is picked up when
    # svc-api wakes them, or at their next poll (worker_poll_interval = 1)
    WPIDS=()
    for w in $(seq 1 "$NPROCS"); do
        wconf=$SVC_CONF
        if [ "${BENCH_GALERA:-0}" = 1 ] && [ "${BENCH_GALERA_WRITERS:-one}" = all ]; then
            # worker W on node W first (1 2 3, 2 3 1, 3 1 2, ...)
            wconf=$IT_DIR/svc-worker-$w.conf
            sed "s|^db_hosts = .*|db_hosts = $(for i in 0 1 2; do
                printf '127.0.0.1:%s ' "${DBPORT[$(( (w - 1 + i) % 3 + 1 ))]}"; done)|" "$SVC_CONF" > "$wconf"
        fi
        stack_proc_start "$IT_DIR/worker-$run" "svc-worker-$w" "$WORKER" -c "$wconf" ||
            { bad "run $run: svc-worker did not start"; break 2; }
        WPIDS+=("$(stack_pidfile_pid "$IT_DIR/worker-$run/svc-worker-$w.pid")")
    done
    WPID=${WPIDS[0]}
    sleep 1.5
    sql_before=$(sql_status)
    # BENCH_WORKER_SQL_LOG=yes: MariaDB's general log during the run (it
    # slows the run: for finding out which statements run, not for figures)
    [ "${BENCH_WORKER_SQL_LOG:-no}" = yes ] &&
        it_sql "SET GLOBAL general_log_file = '$IT_DIR/mariadb/general-$run.log', general_log = 1"
    # BENCH_WORKER_SQL_TIME=yes: every statement in the slow log, with the
    # time the server took for it (prepared ones included)
    [ "${BENCH_WORKER_SQL_TIME:-no}" = yes ] &&
        it_sql "SET GLOBAL slow_query_log_file = '$IT_DIR/mariadb/slow-$run.log', long_query_time = 0, slow_query_log = 1"
    before=$(snapshot "${WPIDS[@]}")
    t0=$(date +%s.%N)
    # CPU of each party every 0.1 s, until the stop file appears
    rm -f "$IT_DIR/sampler.stop"
    "$PYTHON" - "$IT_DIR/sampler.stop" "$HZ" "$WPID" "${MARIADB_PID%% *}" "${FAKE_PIDS[*]}" \
        > "$IT_DIR/cpu-$run.tsv" 2>/dev/null <<'EOF' &
import os, sys, time
stop, hz, wpid, mpid, fpids = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5].split()
def ticks(pids):
    t = 0
    for p in pids:
        try:
            f = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
            t += int(f[11]) + int(f[12])
        except (OSError, IndexError, ValueError):
            pass
    return t
def machine():
    f = open("/proc/stat").readline().split()[1:]
    v = [int(x) for x in f[:8]]
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7], sum(v)
# and what the worker is doing, every 2 ms: running, or blocked in which
# system call (the first two arguments: fd or poll's nfds)
names = {"0": "read", "1": "write", "7": "poll", "44": "sendto", "45": "recvfrom",
         "46": "sendmsg", "47": "recvmsg", "232": "epoll_wait", "271": "ppoll"}
states = {}
def worker_state():
    try:
        st = open("/proc/%s/stat" % wpid).read().rsplit(")", 1)[1].split()[0]
        if st == "R":
            return "running"
        sc = open("/proc/%s/syscall" % wpid).read().split()
    except (OSError, IndexError):
        return None
    if not sc or sc[0] in ("running", "-1"):
        return "running"
    n = names.get(sc[0], "syscall " + sc[0])
    if sc[0] in ("7", "271"):
        return "%s nfds=%s" % (n, "1" if int(sc[2], 16) == 1 else ">1")
    if len(sc) > 1:
        return "%s fd %d" % (n, int(sc[1], 16))
    return n
t0 = time.monotonic()
last = -1
while not os.path.exists(stop):
    now = time.monotonic()
    if now - last >= 0.1:
        last = now
        b, a = machine()
        print("%.2f %d %d %d %d %d" % (now - t0, ticks([wpid]), ticks([mpid]), ticks(fpids), b, a), flush=True)
    w = worker_state()
    if w:
        states[w] = states.get(w, 0) + 1
    time.sleep(0.002)
total = sum(states.values()) or 1
print("STATES " + "; ".join("%s %.1f%%" % (k, 100.0 * v / total) for k, v in
      sorted(states.items(), key=lambda kv: -kv[1])[:8]) + " (%d samples)" % total, flush=True)
EOF
    SAMPLER=$!
    # the client: the POST, then GET /progress every PROGRESS_MS until the
    # job has ended: "JOB id status t0 t1 total" (POST sent and answered,
    # epoch seconds), "SAMPLE t processed status" per answer, "DONE t status"
    "$PYTHON" "$top_srcdir/tests/bench/job_client.py" "$BASE_URL" "$API_KEY" "/v1/verify/$TYPE" \
        "$IT_DIR/job-$run.json" "$PROGRESS_MS" "$TIMEOUT" \
        > "$IT_DIR/client-$run.out" 2> "$IT_DIR/client-$run.err" &
    CLIENT=$!
    conn_max=0; conn_sum=0; conn_n=0
    while kill -0 "$CLIENT" 2>/dev/null; do
        # SMTP connections open now (established to the fake servers' port)
        c=$(ss -Htn state established "( dport = :$SMTP_PORT )" 2>/dev/null | wc -l)
        conn_n=$(( conn_n + 1 )); conn_sum=$(( conn_sum + c ))
        [ "$c" -gt "$conn_max" ] && conn_max=$c
        for w in "${WPIDS[@]}"; do stack_alive "$w" || { bad "run $run: svc-worker $w exited"; kill "$CLIENT"; break 2; }; done
        sleep 0.2
    done
    wait "$CLIENT" 2>/dev/null || true
    after=$(snapshot "${WPIDS[@]}")
    load1=$(cut -d' ' -f1-3 /proc/loadavg)
    JOB=; total=; state=
    read -r _ JOB code post0 post1 total < <(grep '^JOB ' "$IT_DIR/client-$run.out") || true
    read -r _ done_t state < <(grep '^DONE ' "$IT_DIR/client-$run.out") || true
    state=${state:-not completed after ${TIMEOUT}s}
    wall=$(elapsed "$t0")
    HWM=0; RSS=0	# the largest of the workers
    for w in "${WPIDS[@]}"; do
        v=$(status_kb "$w" VmHWM); [ "${v:-0}" -gt "$HWM" ] && HWM=$v
        v=$(status_kb "$w" VmRSS); [ "${v:-0}" -gt "$RSS" ] && RSS=$v
    done
    sql_after=$(sql_status)
    [ "${BENCH_WORKER_SQL_LOG:-no}" = yes ] && it_sql "SET GLOBAL general_log = 0"
    touch "$IT_DIR/sampler.stop"; wait "$SAMPLER" 2>/dev/null || true
    for w in $(seq 1 "$NPROCS"); do stack_proc_stop "$IT_DIR/worker-$run" "svc-worker-$w"; done
    [ -n "$JOB" ] && [ "$total" = "$TOTAL" ] ||
        { bad "run $run: POST /v1/verify/$TYPE: $(cat "$IT_DIR/client-$run.out" "$IT_DIR/client-$run.err" | head -c 300)"; break; }
    [ "$state" = completed ] || { bad "run $run: job $JOB ended $state"; it_show_logs; break; }
    say "run $run: job $JOB ($TYPE), $TOTAL addresses, $(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$JOB'") chunks"

    secs=$(it_sql "SELECT TIMESTAMPDIFF(MICROSECOND, started_at, completed_at) / 1e6 FROM jobs WHERE id = '$JOB'")
    rate=$(echo "$TOTAL $secs" | awk '{ printf "%d", $1 / $2 * 60 }')
    # end to end, as the client saw it; the pickup: from the POST's answer
    # to the first progress answer that is no longer pending
    e2e=$(echo "$post0 $done_t" | awk '{ printf "%.3f", $2 - $1 }')
    e2e_rate=$(echo "$TOTAL $e2e" | awk '{ printf "%d", $1 / $2 * 60 }')
    post_s=$(echo "$post0 $post1" | awk '{ printf "%.3f", $2 - $1 }')
    pickup=$(awk -v t1="$post1" '$1 == "SAMPLE" && $4 != "pending" { printf "%.3f", $2 - t1; exit }' "$IT_DIR/client-$run.out")
    pickup_db=$(it_sql "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, started_at) / 1e6 FROM jobs WHERE id = '$JOB'")
    # addresses/min in each tenth of the job, from the first progress answer
    # that is no longer pending to the one that reports the tenth done
    tenths=$(awk -v total="$TOTAL" '$1 == "SAMPLE" && $4 != "pending" {
            if (prev == "") prev = $2
            while (k < 10 && $3 >= (k + 1) * total / 10) {
                k++; dt = $2 - prev; prev = $2
                printf "%s%d", (k > 1 ? " " : ""), (dt > 0 ? total / 10 / dt * 60 : 0)
            } }' "$IT_DIR/client-$run.out")
    # the last tenth's rate over the median of the others
    steady=$(echo "$tenths" | awk '{ n = NF - 1
            for (i = 1; i <= n; i++) { x = $i; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
            m = n < 1 ? 0 : n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            printf "%.2f", (m > 0 ? $NF / m : 0) }')

    # every verdict: from the API's result pages, or (beyond 100,000
    # addresses, where 1,000-row pages take minutes) one query
    if [ "$TOTAL" -le 100000 ]; then
        : > "$IT_DIR/results-$run.tsv"
        pages=$(( (TOTAL + 999) / 1000 ))
        for p in $(seq 1 "$pages"); do
            http GET "/v1/jobs/$JOB/results?page=$p&limit=1000" || break
            [ "$HTTP_STATUS" = 200 ] || { bad "results page $p: $HTTP_STATUS $(it_body_excerpt)"; break; }
            json '.results[] | [.email, .classification, .status, .reason] | @tsv' >> "$IT_DIR/results-$run.tsv"
        done
        verdicts_from="the API's result pages"
    else
        it_sql "SELECT email, classification, IFNULL(status, ''), reason FROM job_emails WHERE job_id = '$JOB'" \
            > "$IT_DIR/results-$run.tsv"
        verdicts_from="job_emails (SQL)"
    fi
    TALLY=$(awk -F'\t' '{
            split($1, at, "@"); ca = (at[2] ~ /^r[0-9]+-c/)
            local = at[1]; sub(/[0-9]+$/, "", local)
            kind = (ca ? "catchall-domain" : "normal-domain") " " local
            if (ca) want = ($2 == "catch_all")
            else if (local == "user") want = ($2 == "valid" && $4 == "accepted_email")
            else want = ($2 == "invalid" && $4 == "rejected_email")
            n[kind " -> " $2 "/" $3 "/" $4]++
            if (want) ok++; else wrong++
            seen[$1]++
        } END {
            for (k in n) printf "  %6d  %s\n", n[k], k
            u = 0; for (e in seen) u++
            printf "RIGHT %d WRONG %d UNIQUE %d\n", ok, wrong, u
        }' "$IT_DIR/results-$run.tsv" | sort -k2)
    right=$(printf '%s\n' "$TALLY" | awk '/^RIGHT/ { print $2 }')
    wrong=$(printf '%s\n' "$TALLY" | awk '/^RIGHT/ { print $4 }')
    uniq=$(printf '%s\n' "$TALLY" | awk '/^RIGHT/ { print $6 }')
    printf '%s\n' "$TALLY" | grep -v '^RIGHT' | sed 's/^/# /'
    say "  verdicts from $verdicts_from"
    [ "$right" = "$TOTAL" ] && [ "$wrong" = 0 ] && [ "$uniq" = "$TOTAL" ] ||
        bad "run $run: $right of $TOTAL verdicts right, $wrong wrong, $uniq distinct addresses in the results"
    counts=$(it_sql "SELECT processed_emails, count_valid, count_invalid, count_catch_all, count_risky + count_disposable + count_unknown FROM jobs WHERE id = '$JOB'")
    nca=$(awk -v n="$NDOM" -v e="$CA_EVERY" 'BEGIN { c = 0; for (i = 0; i < n; i++) if (i % e == e - 1) c++; print c }')
    want_counts=$(printf '%s\t%s\t%s\t%s\t%s' "$TOTAL" $(( (NDOM - nca) * PERDOM / 2 )) $(( (NDOM - nca) * PERDOM / 2 )) $(( nca * PERDOM )) 0)
    [ "$counts" = "$want_counts" ] || bad "run $run: job counts (processed valid invalid catch_all other) $counts, expected $want_counts"

    # SMTP sessions, the most open at once and what one session carried,
    # and the flights of a last session, from the fake servers
    sessions=0; flights=; cmds=; fmax=0; fmax_mail=0; fmax_rcpt=0
    for h in "${FAKE_HOSTS[@]}"; do
        l=$(fake_ctl "$h" log)
        st=$(fake_ctl "$h" stats)
        s=$(printf '%s\n' "$st" | sed -n 's/^sessions=\([0-9]*\).*/\1/p')
        m=$(fake_ctl "$h" concurrency | sed -n 's/.*max=\([0-9]*\).*/\1/p')
        mm=$(printf '%s\n' "$st" | sed -n 's/.*max_mail=\([0-9]*\).*/\1/p')
        mr=$(printf '%s\n' "$st" | sed -n 's/.*max_rcpt=\([0-9]*\).*/\1/p')
        sessions=$(( sessions + ${s:-0} ))
        [ "${m:-0}" -gt "$fmax" ] && fmax=$m
        [ "${mm:-0}" -gt "$fmax_mail" ] && fmax_mail=$mm
        [ "${mr:-0}" -gt "$fmax_rcpt" ] && fmax_rcpt=$mr
        if [ -z "$flights" ]; then
            flights=$(printf '%s\n' "$l" | sed -n 's/.* flights=\([0-9]*\).*/\1/p')
            # EHLO,MAIL,RCPT,RCPT,RCPT -> EHLO,MAIL,RCPTx3
            cmds=$(printf '%s\n' "$l" | sed -n 's/.* commands=\(.*\)/\1/p' | awk -F, '{
                o = ""; for (i = 1; i <= NF; i++) { n = 1; while (i < NF && $(i + 1) == $i) { n++; i++ }
                o = o (o == "" ? "" : ",") $i (n > 1 ? "x" n : "") } print o }')
        fi
        if [ "${#FAKE_HOSTS[@]}" -le 4 ]; then say "fake $h: $st, at most ${m:-?} open at once"; fi
    done
    say "fake servers (${#FAKE_HOSTS[@]}): $sessions SMTP sessions, at most $fmax open at once at one server (limit: $NPROCS x worker_domain_concurrency $DCONC), at most $fmax_mail transactions and $fmax_rcpt RCPTs in one session"
    [ "$fmax" -le $(( NPROCS * DCONC )) ] || bad "run $run: $fmax sessions open at once at one fake server, more than $NPROCS x worker_domain_concurrency ($DCONC)"
    # k: delayed flights per transaction (a session of one transaction:
    # EHLO | STARTTLS | EHLO | MAIL+RCPTs+QUIT = 4; a session going on from
    # domain to domain: about one per transaction)
    K=$(awk -v s="$sessions" -v t="$TOTAL" -v r="$RCPTS" -v f="${flights:-4}" 'BEGIN {
        tx = t / r; if (s <= 0 || tx <= 0) { print f; exit } k = (3 * s + tx) / tx; printf "%.2f", k < f ? k : f }')
    case $MXMODE in
    shared) hosts=1 ;;
    *) hosts=$NDOM ;;
    esac
    CEFF=$(( NPROCS * (hosts * DCONC < CONC ? hosts * DCONC : CONC) ))
    limit=$(awk -v c="$CEFF" -v r="$RCPTS" -v k="$K" -v f="$FLIGHT_MS" 'BEGIN { printf "%d", c * r / (k * f / 1000) * 60 }')
    cpu=$(echo "$before $after $secs $TOTAL $wall" | awk -v hz="$HZ" -v nc="$(nproc)" '{
        w = $7 - $1; m = $8 - $2; f = $9 - $3; u = $10 - $4
        printf "CPU s (per 1000 addresses, ms): worker %.2f (%.1f), mariadbd %.2f (%.1f), fake SMTP %.2f (%.1f), unbound %.2f; machine busy %.0f%% of %d cores over %.2f s",
            w / hz, w / hz * 1e6 / $14, m / hz, m / hz * 1e6 / $14, f / hz, f / hz * 1e6 / $14, u / hz,
            100 * ($11 - $5) / ($12 - $6), nc, $15 }')
    line=$(printf 'run %d: %d addresses end to end (POST until /progress says completed) in %.3f s: %d addresses/min (goal %d); the worker (started_at -> completed_at) %.3f s: %d/min; POST %.3f s, pickup %s s after it (first /progress not pending; started_at - created_at %.3f s); latency-bound limit %d/min for C=%d (%d process(es) x min(worker_concurrency %d, %d MX hosts x worker_domain_concurrency %d)), R=%d, k=%s flights x %d ms; %d SMTP sessions (%.1f addresses each); verdicts right %d/%d; worker peak RSS %d KiB (VmHWM; VmRSS at the end %d KiB); load average %s before, %s after' \
        "$run" "$TOTAL" "$e2e" "$e2e_rate" "$GOAL" "$secs" "$rate" "$post_s" "${pickup:-?}" "$pickup_db" "$limit" "$CEFF" "$NPROCS" "$CONC" "$hosts" "$DCONC" "$RCPTS" "$K" "$FLIGHT_MS" \
        "$sessions" "$(echo "$TOTAL $sessions" | awk '{ print ($2 ? $1 / $2 : 0) }')" "${right:-0}" "$TOTAL" "${HWM:-0}" "${RSS:-0}" "$load0" "$load1")
    say "$line"
    say "  addresses/min in each tenth of the job: $tenths (last / median of the others: $steady)"
    say "  last session's commands (${flights:-?} flights): $cmds"
    say "  $cpu"
    say "  SMTP connections open (sampled every ~0.2 s): max $conn_max, mean $(( conn_sum / (conn_n ? conn_n : 1) ))"
    sqls=$(printf '%s\n%s\n' "$sql_before" "$sql_after" | awk -v t="$TOTAL" '
        { if ($1 in a) d[$1] = $2 - a[$1]; else a[$1] = $2 }
        END { printf "SQL per address (whole server, this script'"'"'s polling included): statements %.2f (select %.2f, update %.2f, insert %.2f, commit %.3f)",
            d["Questions"] / t, d["Com_select"] / t, d["Com_update"] / t, d["Com_insert"] / t, d["Com_commit"] / t }')
    say "  $sqls"
    # CPU over time, per 0.5 s or 10 s (percent of one core; other = the rest of
    # the machine: lighttpd, this script, other users' work)
    step=0.5; [ "$TOTAL" -le 100000 ] || step=10
    say "  CPU timeline (% of one core per $step s from the POST: worker/mariadbd/fake SMTP/other):"
    grep -v '^STATES' "$IT_DIR/cpu-$run.tsv" | awk -v hz="$HZ" -v step="$step" 'NR == 1 { t0 = $1; p1 = $2; p2 = $3; p3 = $4; p4 = $5; p5 = $6; next }
        $1 - t0 >= step {
            dt = $1 - t0; ours = ($2 - p1) + ($3 - p2) + ($4 - p3); all = $5 - p4
            o = o sprintf(" %.1fs:%d/%d/%d/%d", t0, 100 * ($2 - p1) / hz / dt, 100 * ($3 - p2) / hz / dt,
                100 * ($4 - p3) / hz / dt, (all - ours) > 0 ? 100 * (all - ours) / hz / dt : 0)
            t0 = $1; p1 = $2; p2 = $3; p3 = $4; p4 = $5; p5 = $6
        } END { print o }' | fold -s -w 96 | sed 's/^/bench-worker:    /'
    say "  worker sampled every 2 ms: $(sed -n 's/^STATES //p' "$IT_DIR/cpu-$run.tsv")"
    if [ "${BENCH_WORKER_SQL_LOG:-no}" = yes ]; then
        say "  statements executed during the run (general log; count, per address, text):"
        awk -v t="$TOTAL" '$0 ~ /[0-9]+ (Query|Execute)\t/ {
                sub(/^.*[0-9]+ (Query|Execute)\t/, ""); gsub(/'"'"'[^'"'"']*'"'"'/, "?"); gsub(/[0-9]+/, "N")
                c[substr($0, 1, 90)]++ }
            END { for (k in c) printf "%7d %6.3f  %s\n", c[k], c[k] / t, k }' "$IT_DIR/mariadb/general-$run.log" |
            sort -rn | head -n 15 | sed 's/^/bench-worker:    /'
    fi
    if [ "${BENCH_WORKER_SQL_TIME:-no}" = yes ]; then
        it_sql "SET GLOBAL slow_query_log = 0"
        say "  server time by statement (slow log; count, ms in all, us each, % of all, text):"
        awk '/^# Query_time: / { t = $3; next }
            /^(SET timestamp|use |# )/ { next }
            t != "" { q = $0; gsub(/'"'"'[^'"'"']*'"'"'/, "?", q); gsub(/[0-9]+/, "N", q); gsub(/[[:space:]]+/, " ", q)
                      q = substr(q, 1, 100); n[q]++; s[q] += t; all += t; t = "" }
            END { for (q in n) printf "%7d %8.1f %8.1f %5.1f%%  %s\n", n[q], 1000 * s[q], 1e6 * s[q] / n[q], 100 * s[q] / all, q }' \
            "$IT_DIR/mariadb/slow-$run.log" | sort -k2 -rn | head -n 20 | sed 's/^/bench-worker:    /'
    fi
    # addresses concluded per second of the run (verified_at, whole seconds)
    [ "$TOTAL" -gt 100000 ] || say "  verified per second from started_at: $(it_sql "SELECT CONCAT('+', t, 's:', COUNT(*)) FROM (SELECT TIMESTAMPDIFF(SECOND, DATE_FORMAT(j.started_at, '%Y-%m-%d %H:%i:%s'), e.verified_at) AS t FROM job_emails e JOIN jobs j ON j.id = e.job_id WHERE e.job_id = '$JOB') x GROUP BY t ORDER BY t" | tr '\n' ' ')"
    SUMMARY="$SUMMARY$line
  $cpu
"
    if [ "$SERVER" = farm ]; then
        # the plain client over the same farm and the same addresses (its
        # own sessions: the farm keeps no state between sessions)
        awk -v r="$run" -v n="$NDOM" -v per="$PERDOM" -v every="$CA_EVERY" -v mode="$MXMODE" 'BEGIN {
            for (i = 0; i < n; i++) {
                ca = (i % every == every - 1); no = ca ? "nobody" : "unknown"
                l = ""; for (j = 0; j < per / 2; j++) l = l (j ? "," : "") "user" j "," no j
                d = sprintf("r%d-%s%03d", r, ca ? "c" : "d", i)
                printf "%s.bench.test %s 127.0.1.%d %s\n", d, mode == "shared" ? "mx.bench.test" : "mx-" d ".bench.test", mode == "shared" ? 1 : i + 1, l
            } }' > "$IT_DIR/client-list-$run.txt"
        cl=$("$PYTHON" "$top_srcdir/tests/bench/farm_client.py" "$IT_DIR/tls/ca.pem" "$SMTP_PORT" "$IT_DIR/client-list-$run.txt" 2> "$IT_DIR/farm-client-$run.err") || true
        [ -s "$IT_DIR/farm-client-$run.err" ] && head -n 5 "$IT_DIR/farm-client-$run.err" | sed 's/^/# farm client: /'
        say "  plain client over the same farm: $cl"
        crate=$(printf '%s\n' "$cl" | sed -n 's/.* rate=\([0-9]*\).*/\1/p')
        case $cl in *" wrong=0 "*" errors=0"*) ;; *) bad "run $run: the plain client: $cl" ;; esac
        ratio=$(awk -v a="$e2e_rate" -v b="${crate:-0}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
        line="$line; plain client ${crate:-?}/min, RATIO svc/plain $ratio (goal $RATIO_GOAL)"
        say "run $run: svc end to end $e2e_rate/min, plain client ${crate:-?}/min: RATIO $ratio (goal >= $RATIO_GOAL)"
        SUMMARY="$SUMMARY  plain client ${crate:-?}/min, RATIO $ratio (goal >= $RATIO_GOAL)
"
        awk -v r="$ratio" -v g="$RATIO_GOAL" 'BEGIN { exit !(r >= g) }' || bad "run $run: ratio $ratio below $RATIO_GOAL"
    fi
    [ "$e2e_rate" -ge "$GOAL" ] || bad "run $run: $e2e_rate addresses/min end to end is below the goal of $GOAL"
    [ "$TOTAL" -lt 100000 ] || awk -v s="$steady" 'BEGIN { exit !(s >= 0.8) }' ||
        bad "run $run: the last tenth ran at $steady x the median rate of the others (a slowdown)"
    [ "${HWM:-0}" -gt 0 ] && [ "$HWM" -lt "$RSS_LIMIT_KB" ] || bad "run $run: worker peak RSS ${HWM:-?} KiB is not under 256 MB"
done

echo
say "summary:"
printf '%s' "$SUMMARY" | sed 's/^/  /'
grep -h -E ' (error|crit)[ :]' "$IT_DIR/log/svc.log" 2>/dev/null | head -n 5 | sed 's/^/# svc.log: /' || true
[ "$FAILED" = 0 ] && say "goal met and all checks held" || say "goal missed or a check failed"
exit "$FAILED"
