#!/bin/bash
# bench_providers.sh: a bulk job against rate-limited provider personas
# (make bench-providers, issue 24): the time from the POST that creates the
# job until GET /progress says completed, against the bound that the
# personas' limits allow, every verdict checked, and the personas' 421s and
# blocks counted. Everything runs on loopback; no real server is contacted.
#
# The world (tests/integration/mail_env.sh starts and stops it):
#  - unbound serving test zones that use the providers' real MX host names
#    on loopback (google.com: aspmx.l, alt1.aspmx.l; outlook.com: tenants'
#    *.mail.protection and hotmail-com / outlook-com.olc.protection;
#    yahoodns.net: mta5/mta6.am0; zoho.com: mx, mx2; mimecast.com:
#    us-smtp-inbound-1/2) and bench.test, the customers' domains: four per
#    provider (<prefix><1-4>.bench.test) and the friendly ones
#    (r1-dNNN.bench.test, every tenth r1-cNNN a catch-all);
#  - one persona process per provider (tests/smtp/fake_smtp.py, on the two
#    addresses its MX names point at, for all its domains, as a provider's
#    servers are), STARTTLS with the test CA's certificate, PIPELINING,
#    every flight answered BENCH_PROVIDERS_FLIGHT_MS (20) after it arrives,
#    and a rate limit per client source address: L RCPTs in any
#    BENCH_PROVIDERS_WINDOW_MS (60,000), the next one "421 4.7.28 ... rate
#    limited" and a penalty of BENCH_PROVIDERS_PENALTY_MS (60,000) in which
#    coming back is a strike, BENCH_PROVIDERS_BLOCK_AFTER (3) strikes a
#    block (554 5.7.1 ... zen.spamhaus.org). L = BENCH_PROVIDERS_LIMIT_FACTOR
#    (4) x the provider's shipped start rate (contrib/lists/
#    pacing_defaults.txt): the providers take more than svc starts at, so
#    svc has to grow to it. Their ways of answering: google (user: 250,
#    unknown: 550 5.1.1, gmailbusy: 450 4.2.1 "receiving mail at a rate",
#    gmaildisabled: 550 5.2.1), microsoft365 (two tenants with
#    directory-based edge blocking: 550 5.4.1 AS(201806281); two accept-all
#    tenants), outlook (one RCPT a session: 452 4.5.3 to the next), yahoo
#    (accept-all), zoho (plain), mimecast (550 Invalid Recipient);
#  - the friendly domains on tests/bench/farm_smtp.py (one asyncio process,
#    127.0.1.x, no limit), user<N> 250, unknown<N> 550, catch-alls 250;
#  - MariaDB, lighttpd + svc-api and one svc-worker daemon at the shipped
#    defaults (pacing included), with what an operator of a host with two
#    source addresses sets: smtp_egress = BENCH_PROVIDERS_SOURCES (2) bind
#    routes, bind:127.0.0.2, bind:127.0.0.3; log_level =
#    BENCH_PROVIDERS_LOG_LEVEL (info: the pacing events).
#
# The list: BENCH_PROVIDERS_ADDRESSES (20,000) addresses, shuffled. Each
# provider gets the RCPTs that its limit lets through in
# BENCH_PROVIDERS_BOUND_S (90) seconds from the source addresses
# (L x sources x BOUND_S / window: its addresses and one catch-all probe per
# domain); the rest are friendly. A known truth per address (exists, does
# not, disabled, accept-all) is checked against every result.
#
# The bound (the best possible): for each provider its RCPTs (addresses and
# one probe per domain) over its allowed rate (L per window from each
# source address); the whole job by the slowest provider, and never less
# than what the friendly domains need (the plain client,
# tests/bench/farm_client.py, over the friendly domains after the job).
# (A client that sent each window's L at its start could be one window
# quicker: printed too, as "in bursts", but the goal is on the rate bound.)
# Also printed: when svc's shipped ramp alone (the start rate doubling once
# a pacing window) would let each provider's share through.
# Printed: the time, the bound, their ratio against BENCH_PROVIDERS_GOAL
# (1.25), the verdicts, each persona's RCPTs, 421s, strikes and blocks,
# when each provider's last address was concluded and how many were in
# each window, the pacing_pairs rows and the pacing events of the log.
# Exit status 0: goal met and every check held (every verdict right, no
# block); 1: missed or a check failed; 77: a tool is missing.
# BENCH_PROVIDERS_LEARN=1: the job is measured on an install that has met
# the personas' limits before, as every install has after its first days:
# first a learning job (other domains of the same providers, 4 L per source
# address each) takes every (provider, source address) pair past its limit
# to its first 421; once every pair has learnt a rate it is cancelled
# (DELETE /v1/jobs/ID) and the pairs' penalties (the shipped ones, 5-15
# minutes) are waited out, then the measured job runs as above, with cold
# DNS and verdict caches (its domains and addresses are new). Printed too:
# the rate each pair learnt against the persona's limit, the learning job's
# 421s. About 20 minutes.
# BENCH_PROVIDERS_TIMEOUT (1200 s): the most the job is waited for.
# Figures and the command in tests/bench/README. SVC_TEST_KEEP=1 keeps the
# work directory.
export STACK_DB_BUFFER_POOL=${STACK_DB_BUFFER_POOL:-256M} STACK_DB_LOG_FILE=${STACK_DB_LOG_FILE:-128M}
. "${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/bench/bench_lib.sh"
it_require unbound drill python3 certtool awk jq

TOTAL=${BENCH_PROVIDERS_ADDRESSES:-20000}
FACTOR=${BENCH_PROVIDERS_LIMIT_FACTOR:-4}
BOUND_S=${BENCH_PROVIDERS_BOUND_S:-90}
NSRC=${BENCH_PROVIDERS_SOURCES:-2}
WINDOW_MS=${BENCH_PROVIDERS_WINDOW_MS:-60000}
PENALTY_MS=${BENCH_PROVIDERS_PENALTY_MS:-60000}
BLOCK_AFTER=${BENCH_PROVIDERS_BLOCK_AFTER:-3}
FLIGHT_MS=${BENCH_PROVIDERS_FLIGHT_MS:-20}
GOAL=${BENCH_PROVIDERS_GOAL:-1.25}
TIMEOUT=${BENCH_PROVIDERS_TIMEOUT:-1200}
WORKER=${BENCH_WORKER_BIN:-$top_builddir/src/worker/svc-worker}
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)
[ -x "$WORKER" ] || it_skip "$WORKER is not built"
[ "$NSRC" -ge 1 ] && [ "$NSRC" -le 8 ] || it_skip "BENCH_PROVIDERS_SOURCES must be 1-8"
bench_init bench-providers "$WORKER"

# ------------------------------------------------------------- personas
# id prefix address1 address2 MX1 MX2 mix [setting...]: MX1 (at address1)
# serves the odd domains, MX2 the even ones; microsoft365's tenants have MX
# names of their own (<domain with dashes>.mail.protection.outlook.com) on
# the same two addresses. mix: the local parts given in turn (user and
# gmailbusy exist; unknown, officeunknown and mimecastinvalid do not;
# gmaildisabled is disabled; nobody exists nowhere, but an accept-all
# domain takes it).
PERSONAS="google gw 127.0.2.1 127.0.2.2 aspmx.l.google.com alt1.aspmx.l.google.com user,unknown,user,gmailbusy,unknown,gmaildisabled
microsoft365 ms 127.0.3.1 127.0.3.2 - - user,officeunknown catchall_domains=ms[34]\.bench\.test
outlook ol 127.0.4.1 127.0.4.2 hotmail-com.olc.protection.outlook.com outlook-com.olc.protection.outlook.com user,unknown rcpt_max=1
yahoo yh 127.0.5.1 127.0.5.2 mta5.am0.yahoodns.net mta6.am0.yahoodns.net user,nobody catchall=1
zoho zo 127.0.6.1 127.0.6.2 mx.zoho.com mx2.zoho.com user,unknown
mimecast mc 127.0.7.1 127.0.7.2 us-smtp-inbound-1.mimecast.com us-smtp-inbound-2.mimecast.com user,mimecastinvalid"
NDOMP=4		# domains per provider
ms_mx() { echo "${1//./-}.mail.protection.outlook.com"; }	# a tenant's MX
# the shipped start rate (RCPTs a minute) of a provider id
start_rate() { awk -v id="$1" '$1 == id { print $2; exit }' "$top_srcdir/contrib/lists/pacing_defaults.txt"; }

# sizes: per provider its limit L (RCPTs per window per source address),
# its RCPTs (L x sources x BOUND_S / window) and addresses (RCPTs less one
# probe per domain)
declare -A LIM RCPTS ADDRS START
psum=0
while read -r id _; do
    START[$id]=$(start_rate "$id")
    [ -n "${START[$id]}" ] || it_skip "no shipped pacing default for $id"
    LIM[$id]=$(( FACTOR * START[$id] * WINDOW_MS / 60000 ))
    RCPTS[$id]=$(( LIM[$id] * NSRC * BOUND_S * 1000 / WINDOW_MS ))
    ADDRS[$id]=$(( RCPTS[$id] - NDOMP ))
    psum=$(( psum + ADDRS[$id] ))
done <<< "$PERSONAS"
LEARN=${BENCH_PROVIDERS_LEARN:-0}
FRIENDLY=$(( TOTAL - psum ))
NFD=$(( (FRIENDLY + 99) / 100 ))	# friendly domains, 100 addresses each
[ "$FRIENDLY" -ge 100 ] && [ "$NFD" -le 250 ] ||
    it_skip "$TOTAL addresses do not hold the providers' $psum and 100-25,000 friendly ones"

# ------------------------------------------------------------- certificates, DNS
certnames=("*.bench.test" aspmx.l.google.com "*.aspmx.l.google.com" "*.mail.protection.outlook.com"
    "*.olc.protection.outlook.com" "*.am0.yahoodns.net" mx.zoho.com mx2.zoho.com "*.mimecast.com")
mail_env_certs mx.bench.test "${certnames[@]}"
Z=$IT_DIR/zones
mkdir -p "$Z"
zone() {	# zone NAME RECORD...: NAME.zone in $Z
    local n=$1
    shift
    printf '%s\n' "\$ORIGIN $n." '$TTL 3600' "@ 3600 IN SOA ns.bench.test. hostmaster.bench.test. 1 3600 600 86400 3600" \
        '@ 3600 IN NS ns.bench.test.' "$@" > "$Z/$n.zone"
}
# the customers' domains: "DOMAIN MX ADDRESS ACCEPTALL MIX PROVIDER" a line
: > "$IT_DIR/domains.txt"
while read -r id pre a1 a2 m1 m2 mix _; do
    for j in $(seq 1 "$NDOMP"); do
        d=$pre$j.bench.test
        if [ $(( j % 2 )) = 1 ]; then mx=$m1 addr=$a1; else mx=$m2 addr=$a2; fi
        ca=0 m=$mix
        if [ "$id" = microsoft365 ]; then
            mx=$(ms_mx "$d")
            if [ "$j" -ge 3 ]; then ca=1 m=user,nobody; fi
        fi
        if [ "$id" = yahoo ]; then ca=1; fi
        echo "$d $mx $addr $ca $m $id"
    done
done <<< "$PERSONAS" >> "$IT_DIR/domains.txt"
# the learning job's domains (BENCH_PROVIDERS_LEARN=1): l<prefix><1-4>, the
# same MX hosts
: > "$IT_DIR/learn-domains.txt"
[ "$LEARN" = 1 ] && awk '$6 != "friendly" { d = "l" $1; mx = $2
        if ($6 == "microsoft365") { mx = d; gsub(/\./, "-", mx); mx = mx ".mail.protection.outlook.com" }
        print d, mx, $3, $4, $5, $6 }' "$IT_DIR/domains.txt" > "$IT_DIR/learn-domains.txt"
for i in $(seq 0 $(( NFD - 1 ))); do
    if [ $(( i % 10 )) = 9 ]; then d=$(printf 'r1-c%03d.bench.test' "$i"); ca=1; else d=$(printf 'r1-d%03d.bench.test' "$i"); ca=0; fi
    echo "$d mx-${d%.bench.test}.bench.test 127.0.1.$(( i + 1 )) $ca user,unknown friendly"
done >> "$IT_DIR/domains.txt"
# each MX host name in the zone it belongs to
mxrec() { awk -v z="$1" '{ n = $2; if (substr(n, length(n) - length(z)) == "." z && !seen[n]++) print n ". 3600 IN A " $3 }' "$IT_DIR/domains.txt" "$IT_DIR/learn-domains.txt"; }
mapfile -t recs < <(awk '{ print $1 ". 3600 IN A 192.0.2.1"; print $1 ". 3600 IN MX 10 " $2 "." }' "$IT_DIR/domains.txt" "$IT_DIR/learn-domains.txt"; mxrec bench.test)
zone bench.test 'ns 3600 IN A 127.0.0.1' "${recs[@]}"
for z in google.com outlook.com yahoodns.net zoho.com mimecast.com; do
    mapfile -t recs < <(mxrec "$z")
    zone "$z" "${recs[@]}"
done
mail_env_dns "$Z"/*.zone
drill -Q -p "${DNS##*:}" @127.0.0.1 gw1.bench.test MX 2>/dev/null | grep -q google.com ||
    { cat "$IT_DIR/dns/unbound.log" 2>/dev/null; echo "Bail out! unbound does not answer for gw1.bench.test"; exit 1; }

# ------------------------------------------------------------- SMTP servers
SMTP_PORT=$(stack_free_port)
mapfile -t farm_hosts < <(awk '$6 == "friendly" { print $3 }' "$IT_DIR/domains.txt")
"$PYTHON" "$top_srcdir/tests/bench/farm_smtp.py" --ready "$IT_DIR/fake-127.0.1.1" \
    --cert "$IT_DIR/tls/server.pem" --key "$IT_DIR/tls/server.key" --port "$SMTP_PORT" \
    --flight-ms "$FLIGHT_MS" --catchall 'r[0-9]+-c[0-9]+\.bench\.test' \
    "${farm_hosts[@]}" > "$IT_DIR/farm.log" 2>&1 &
FAKE_PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$IT_DIR/fake-127.0.1.1" ] && break; sleep 0.1; done
[ -s "$IT_DIR/fake-127.0.1.1" ] || { cat "$IT_DIR/farm.log"; echo "Bail out! farm_smtp.py"; exit 1; }
while read -r id pre a1 a2 m1 m2 mix extra; do
    # shellcheck disable=SC2086 # (extra: the persona's own settings, words)
    fake "$a1" --also "$a2" --cert "$IT_DIR/tls/server.pem" --key "$IT_DIR/tls/server.key" \
        starttls=offered pipelining=1 "flight_delay_ms=$FLIGHT_MS" "rate_limit=${LIM[$id]}" \
        "rate_window_ms=$WINDOW_MS" "rate_penalty_ms=$PENALTY_MS" "block_after=$BLOCK_AFTER" $extra
done <<< "$PERSONAS"

# ------------------------------------------------------------- the stack
routes=
for s in $(seq 1 "$NSRC"); do routes="$routes bind:127.0.0.$(( s + 1 ))"; done
mail_env_lists
mail_env_conf dns_timeout_ms=2000 smtp_connect_timeout_ms=5000 smtp_reply_timeout_ms=10000
mkdir -p "$IT_DIR/wake"
it_conf_add "ca_file = $IT_DIR/tls/ca.pem
worker_poll_interval = 1
worker_wake_dir = $IT_DIR/wake
smtp_egress =$routes"
IT_LOG_LEVEL=${BENCH_PROVIDERS_LOG_LEVEL:-info}
it_stack_start
ACC=$(svcadm account create --email bench-providers@bench.example --tier admin --credits 100000000)
API_KEY=$(svcadm key create --account "$ACC" --scopes '*' --rate-limit 100000)
# svc's effective pacing window (the shipped default unless set)
PWIN=$(svcadm config 2>/dev/null | awk '$1 == "pacing_window_ms" { print $3; exit }')
[ -n "$PWIN" ] || { echo "Bail out! svcadm config does not name pacing_window_ms"; exit 1; }
# ramp ID: when svc's shipped schedule alone lets the provider's share
# through: its rate starts at the shipped rate and doubles once a pacing
# window, a window's budget at once, from every source address; "W s
# (window K, rate R/min: over the limit)" when the rate it needs is more
# than the persona takes (a 421 to come)
ramp() {
    awk -v s="${START[$1]}" -v need="${RCPTS[$1]}" -v n="$NSRC" -v pw="$PWIN" -v l="${LIM[$1]}" -v w="$WINDOW_MS" 'BEGIN {
        per = need / n; cum = 0; r = s
        for (k = 0; k < 30; k++) { cum += r * pw / 60000; if (cum >= per) break; r *= 2 }
        printf "%d s (window %d, rate %d/min%s)", k * pw / 1000, k + 1, r, (r * pw / 60000 > l * pw / w ? ": over the limit" : "") }'
}

# ------------------------------------------------------------- the list
# job.json (the POST's body), truth.tsv ("EMAIL KIND": exists, not,
# disabled, acceptall) and friendly.txt (farm_client.py's list)
"$PYTHON" - "$IT_DIR" "$FRIENDLY" "${ADDRS[google]} ${ADDRS[microsoft365]} ${ADDRS[outlook]} ${ADDRS[yahoo]} ${ADDRS[zoho]} ${ADDRS[mimecast]}" <<'EOF'
import json, random, sys
out, friendly, counts = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3].split()]
order = ["google", "microsoft365", "outlook", "yahoo", "zoho", "mimecast"]
doms = {}
for line in open(out + "/domains.txt"):
    d, mx, addr, ca, mix, prov = line.split()
    doms.setdefault(prov, []).append((d, mx, addr, ca == "1", mix.split(",")))
def kind(local, ca):
    if ca:
        return "acceptall"
    if local in ("user", "gmailbusy"):
        return "exists"
    return "disabled" if local == "gmaildisabled" else "not"
rows, plain = [], {}
def spread(ds, n):
    for k in range(n):
        d, mx, addr, ca, mix = ds[k % len(ds)]
        i = k // len(ds)
        local = mix[i % len(mix)]
        rows.append(("%s%d@%s" % (local, i, d), kind(local, ca)))
        plain.setdefault(d, (mx, addr, []))[2].append("%s%d" % (local, i))
for prov, n in zip(order, counts):
    spread(doms[prov], n)
spread(doms["friendly"], friendly)
random.Random(24).shuffle(rows)
json.dump({"name": "bench-providers", "emails": [e for e, _ in rows]}, open(out + "/job.json", "w"))
with open(out + "/truth.tsv", "w") as f:
    for e, k in rows:
        f.write("%s\t%s\n" % (e, k))
with open(out + "/friendly.txt", "w") as f:
    for d, mx, addr, ca, mix in doms["friendly"]:
        f.write("%s %s %s %s\n" % (d, mx, addr, ",".join(plain[d][2])))
EOF
[ "$(wc -l < "$IT_DIR/truth.tsv")" = "$TOTAL" ] || { echo "Bail out! the list has $(wc -l < "$IT_DIR/truth.tsv") addresses"; exit 1; }

# learn.json: the learning job, 4 L per source address of each provider
# (more than the ramp S, 2 S, 4 S ... sends before it passes L) at its
# l-domains, addresses that exist
if [ "$LEARN" = 1 ]; then
    while read -r id _; do echo "$id $(( 4 * LIM[$id] * NSRC ))"; done <<< "$PERSONAS" > "$IT_DIR/learn-sizes.txt"
    "$PYTHON" - "$IT_DIR" <<'EOF'
import json, sys
out = sys.argv[1]
sizes = dict(l.split() for l in open(out + "/learn-sizes.txt"))
doms = {}
for line in open(out + "/learn-domains.txt"):
    f = line.split()
    doms.setdefault(f[5], []).append(f[0])
emails = []
for prov, n in sizes.items():
    ds = doms[prov]
    emails += ["learn%d@%s" % (k, ds[k % len(ds)]) for k in range(int(n))]
json.dump({"name": "bench-providers-learning", "emails": emails}, open(out + "/learn.json", "w"))
EOF
fi

say "svc-worker: $WORKER; $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
say "list: $TOTAL addresses, $FRIENDLY at $NFD friendly domains, $psum at $NDOMP domains of each of 6 providers; $NSRC source address(es):$routes; flight delay ${FLIGHT_MS} ms"
while read -r id _; do
    say "persona $id: shipped start ${START[$id]}/min; limit ${LIM[$id]} RCPTs per ${WINDOW_MS} ms per source address (x$FACTOR), penalty ${PENALTY_MS} ms, block after $BLOCK_AFTER strikes; ${ADDRS[$id]} addresses + $NDOMP probes = ${RCPTS[$id]} RCPTs"
done <<< "$PERSONAS"

# ------------------------------------------------------------- the run
stack_proc_start "$IT_DIR/worker" svc-worker "$WORKER" -c "$SVC_CONF" || { bad "svc-worker did not start"; exit 1; }
WPID=$(stack_pidfile_pid "$IT_DIR/worker/svc-worker.pid")
sleep 1.5
# personas' counters: "ID refused strikes blocked" a line
persona_counts() {
    local id rate
    while read -r id _ a1 _; do
        rate=$(fake_ctl "$a1" rate)
        printf '%s %s\n' "$id" "$(printf '%s\n' "$rate" | tr ' ' '\n' | awk -F= '$1 == "refused" || $1 == "strikes" || $1 == "blocked" { printf "%s ", $2 }')"
    done <<< "$PERSONAS"
}
if [ "$LEARN" = 1 ]; then
    # ------------------------------------------------- the learning job
    npairs=$(( 6 * NSRC ))
    l0=$(date +%s)
    http POST /v1/verify/bulk "@$IT_DIR/learn.json" || true
    [ "$HTTP_STATUS" = 202 ] || [ "$HTTP_STATUS" = 200 ] || [ "$HTTP_STATUS" = 201 ] ||
        { bad "the learning job: POST /v1/verify/bulk: $HTTP_STATUS $(head -c 300 <<< "$HTTP_BODY")"; exit 1; }
    LJOB=$(json .job_id)
    say "learning job $LJOB: $(jq '.emails | length' "$IT_DIR/learn.json") addresses at the providers' other domains"
    provs=$(awk '{ printf "%s'\''%s'\''", (NR > 1 ? "," : ""), $1 }' <<< "$PERSONAS")
    learnt=0
    while [ $(( $(date +%s) - l0 )) -lt "$TIMEOUT" ]; do
        learnt=$(it_sql "SELECT COUNT(*) FROM pacing_pairs WHERE pair IN ($provs) AND learned_rate IS NOT NULL")
        [ "$learnt" -ge "$npairs" ] && break
        stack_alive "$WPID" || { bad "svc-worker exited"; exit 1; }
        sleep 2
    done
    [ "$learnt" -ge "$npairs" ] || { bad "only $learnt of $npairs pairs learnt a rate in ${TIMEOUT}s"; exit 1; }
    say "every pair learnt a rate $(( $(date +%s) - l0 )) s after the learning job's POST; cancelling it"
    http DELETE "/v1/jobs/$LJOB" || true
    [ "$HTTP_STATUS" = 200 ] || [ "$HTTP_STATUS" = 204 ] || { bad "DELETE /v1/jobs/$LJOB: $HTTP_STATUS"; exit 1; }
    while :; do
        left=$(it_sql "SELECT COUNT(*), IFNULL(MAX(TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(3), GREATEST(IFNULL(penalty_until, 0), IFNULL(paused_until, 0)))), 0) FROM pacing_pairs WHERE penalty_until > UTC_TIMESTAMP(3) OR paused_until > UTC_TIMESTAMP(3)")
        [ "${left%%[[:space:]]*}" = 0 ] && break
        [ $(( $(date +%s) - l0 )) -lt $(( TIMEOUT + 1800 )) ] || { bad "pairs still in a penalty: $left"; exit 1; }
        sleep 5
    done
    say "learnt (pair, egress, learned RCPTs/min, the persona's limit a minute), $(( $(date +%s) - l0 )) s after the learning job's POST, every penalty over:"
    while read -r pair egress lr; do
        echo "#   $pair $egress $lr $(( LIM[$pair] * 60000 / WINDOW_MS ))"
    done < <(it_sql "SELECT pair, egress, learned_rate FROM pacing_pairs WHERE pair IN ($provs) ORDER BY pair, egress")
    persona_counts > "$IT_DIR/learn-counts.txt"
    say "personas after the learning job (refused strikes blocked): $(tr '\n' ';' < "$IT_DIR/learn-counts.txt")"
fi
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# the client (tests/bench/job_client.py): the POST, then GET /progress
# every 0.2 s until the job has ended: "JOB id code t0 t1 total" (POST
# sent and answered, epoch seconds), "DONE t status"
"$PYTHON" "$top_srcdir/tests/bench/job_client.py" "$BASE_URL" "$API_KEY" /v1/verify/bulk "$IT_DIR/job.json" \
    200 "$TIMEOUT" > "$IT_DIR/client.out" 2> "$IT_DIR/client.err" &
CLIENT=$!
while kill -0 "$CLIENT" 2>/dev/null; do
    stack_alive "$WPID" || { bad "svc-worker exited"; kill "$CLIENT"; break; }
    sleep 1
done
wait "$CLIENT" 2>/dev/null || true
load1=$(cut -d' ' -f1-3 /proc/loadavg)
JOB=; total=; state=
read -r _ JOB _ post0 _ total < <(grep '^JOB ' "$IT_DIR/client.out") || true
read -r _ done_t state < <(grep '^DONE ' "$IT_DIR/client.out") || true
state=${state:-not completed after ${TIMEOUT}s}
[ -n "$JOB" ] && [ "$total" = "$TOTAL" ] || { bad "POST /v1/verify/bulk: $(cat "$IT_DIR/client.out" "$IT_DIR/client.err" | head -c 300)"; exit 1; }
e2e=$(echo "$post0 ${done_t:-$(date +%s.%N)}" | awk '{ printf "%.1f", $2 - $1 }')
[ "$state" = completed ] || bad "job $JOB ended: $state"

# ------------------------------------------------------------- verdicts
: > "$IT_DIR/results.tsv"
for p in $(seq 1 $(( (TOTAL + 999) / 1000 ))); do
    http GET "/v1/jobs/$JOB/results?page=$p&limit=1000" || break
    [ "$HTTP_STATUS" = 200 ] || { bad "results page $p: $HTTP_STATUS"; break; }
    json '.results[] | [.email, .classification, .reason, (.sub_status // "null"), (.provider // "null")] | @tsv' >> "$IT_DIR/results.tsv"
done
# right: exists valid/accepted_email, not invalid/rejected_email, disabled
# invalid/account_disabled, acceptall catch_all
TALLY=$(awk -F'\t' 'NR == FNR { truth[$1] = $2; next }
    { k = truth[$1]; if (k == "") k = "?"
      ok = (k == "exists" && $2 == "valid" && $3 == "accepted_email") ||
           (k == "not" && $2 == "invalid" && $3 == "rejected_email") ||
           (k == "disabled" && $2 == "invalid" && $3 == "account_disabled") ||
           (k == "acceptall" && $2 == "catch_all")
      n[$5 " " k " -> " $2 "/" $3 "/" $4]++; if (ok) right++; else { wrong++; if (wrong <= 5) ex = ex " " $1 }
      seen[$1]++ }
    END { for (x in n) printf "  %6d  %s\n", n[x], x
          u = 0; for (e in seen) u++
          printf "RIGHT %d WRONG %d UNIQUE %d EXAMPLES%s\n", right, wrong, u, ex }' "$IT_DIR/truth.tsv" "$IT_DIR/results.tsv" | sort -k2)
printf '%s\n' "$TALLY" | grep -v '^RIGHT' | sed 's/^/# /'
read -r _ right _ wrong _ uniq _ examples <<< "$(printf '%s\n' "$TALLY" | grep '^RIGHT')"
[ "$right" = "$TOTAL" ] && [ "$uniq" = "$TOTAL" ] ||
    bad "$right of $TOTAL verdicts right, $wrong wrong ($examples), $uniq distinct addresses in the results"

# ------------------------------------------------------------- the bound
"$PYTHON" "$top_srcdir/tests/bench/farm_client.py" "$IT_DIR/tls/ca.pem" "$SMTP_PORT" "$IT_DIR/friendly.txt" \
    > "$IT_DIR/plain.out" 2>&1 || true
plain_s=$(sed -n 's/.* seconds=\([0-9.]*\) .*/\1/p' "$IT_DIR/plain.out")
[ -n "$plain_s" ] || { bad "the plain client over the friendly domains: $(head -c 300 "$IT_DIR/plain.out")"; plain_s=0; }
say "friendly domains: the plain client (one session per domain, all at once): $(cat "$IT_DIR/plain.out")"
bound=$plain_s; slowest=friendly
blocks=0; refused=0
while read -r id _ a1 _; do
    b=$(awk -v r="${RCPTS[$id]}" -v l="${LIM[$id]}" -v s="$NSRC" -v w="$WINDOW_MS" 'BEGIN { printf "%.1f", r / (l * s) * w / 1000 }')
    # a client that sends a whole window's L at its start needs one
    # window less: (ceil(RCPTs per source / L) - 1) windows
    bw=$(awk -v r="${RCPTS[$id]}" -v l="${LIM[$id]}" -v s="$NSRC" -v w="$WINDOW_MS" 'BEGIN {
        k = r / s / l; k = (k == int(k) ? k : int(k) + 1); printf "%.1f", (k - 1) * w / 1000 }')
    awk -v b="$b" -v m="$bound" 'BEGIN { exit !(b > m) }' && { bound=$b; slowest=$id; }
    rate=$(fake_ctl "$a1" rate)
    v() { printf '%s\n' "$rate" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
    n=$(v blocked); blocks=$(( blocks + ${n:-0} ))
    n=$(v refused); refused=$(( refused + ${n:-0} ))
    # the measured job's own: less the learning job's
    [ -s "$IT_DIR/learn-counts.txt" ] &&
        refused=$(( refused - $(awk -v id="$id" '$1 == id { print $2 + 0 }' "$IT_DIR/learn-counts.txt") ))
    last=$(it_sql "SELECT ROUND(MAX(TIMESTAMPDIFF(MICROSECOND, j.created_at, e.verified_at)) / 1e6, 1), COUNT(*) FROM job_emails e JOIN jobs j ON j.id = e.job_id WHERE e.job_id = '$JOB' AND e.provider = '$id'" | tr '\t' ' ')
    per=$(it_sql "SELECT CONCAT('w', w, ' ', COUNT(*)) FROM (SELECT FLOOR(TIMESTAMPDIFF(MICROSECOND, j.created_at, e.verified_at) / 1000 / $WINDOW_MS) AS w FROM job_emails e JOIN jobs j ON j.id = e.job_id WHERE e.job_id = '$JOB' AND e.provider = '$id') x GROUP BY w ORDER BY w" | tr '\n' ' ')
    say "persona $id: bound $b s (in bursts of a window's L at once: $bw s); svc's shipped ramp alone lets its share through at the earliest at $(ramp "$id"); its last of ${last#* } addresses concluded ${last%% *} s after the POST; per window of ${WINDOW_MS} ms: ${per}; $rate"
done <<< "$PERSONAS"
ratio=$(awk -v t="$e2e" -v b="$bound" 'BEGIN { printf "%.2f", (b > 0 ? t / b : 0) }')
# what svc sent: RCPTs (answered / in all) of each provider from each
# route in each persona window after the POST, from svc.log's
# event=smtp_session lines (one per transaction, at info)
say "RCPTs answered/sent per provider and route in each window of ${WINDOW_MS} ms after the POST (svc.log):"
"$PYTHON" - "$IT_DIR/domains.txt" "$IT_DIR/log/svc.log" "$post0" "$WINDOW_MS" <<'PY' | sed 's/^/#   /'
import calendar, re, sys, time
prov = {}
for line in open(sys.argv[1]):
    f = line.split()
    prov[f[1].lower()] = f[5]
t0, w = float(sys.argv[3]), int(sys.argv[4]) / 1000.0
tab = {}
pat = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z svc-worker\[\d+\] .*event=smtp_session .*host=(\S+) .*route=(\S+) .*rcpts=(\d+) answered=(\d+)")
for line in open(sys.argv[2], errors="replace"):
    m = pat.match(line)
    if not m or prov.get(m.group(3).lower(), "friendly") == "friendly":
        continue
    t = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) + int(m.group(2)) / 1000.0
    if t < t0:
        continue        # the learning job's (BENCH_PROVIDERS_LEARN=1)
    c = tab.setdefault((prov[m.group(3).lower()], m.group(4)), {})
    i = int((t - t0) // w)
    a, n = c.get(i, (0, 0))
    c[i] = (a + int(m.group(6)), n + int(m.group(5)))
for k in sorted(tab):
    print("%s %s: %s" % (k[0], k[1], " ".join("w%d %d/%d" % (i, a, n) for i, (a, n) in sorted(tab[k].items()))))
PY

say "pacing_pairs at the end (pair, egress, start, base, learned, strikes, in penalty, paused, reason):"
it_sql "SELECT pair, egress, start_rate, base_rate, IFNULL(learned_rate, '-'), strikes, IFNULL(penalty_until > UTC_TIMESTAMP(3), 0), IFNULL(paused_until > UTC_TIMESTAMP(3), 0), IFNULL(reason, '-') FROM pacing_pairs ORDER BY pair, egress" |
    sed 's/^/#   /'
say "pacing events in svc.log (first 20):"
grep -h -E 'event=(pacing_slow_down|pacing_pause|mx_rcpt_limit)' "$IT_DIR/log/svc.log" 2>/dev/null | head -n 20 | sed 's/^/#   /'
grep -h -E ' (error|crit)[ :]' "$IT_DIR/log/svc.log" 2>/dev/null | head -n 5 | sed 's/^/# svc.log: /' || true

[ "$blocks" = 0 ] || bad "the personas blocked a source address $blocks time(s)"
[ "$LEARN" = 1 ] && say "the job ran after a learning job (BENCH_PROVIDERS_LEARN=1): every pair had met its limit once"
line="$TOTAL addresses end to end (POST until /progress says completed) in $e2e s; bound $bound s ($slowest); RATIO $ratio (goal <= $GOAL); verdicts right ${right:-0}/$TOTAL; personas' 421s $refused, blocks $blocks; load average $load0 before, $load1 after"
say "$line"
awk -v r="$ratio" -v g="$GOAL" 'BEGIN { exit !(r > 0 && r <= g) }' || bad "ratio $ratio above the goal $GOAL"
[ "$FAILED" = 0 ] && say "goal met and all checks held" || say "goal missed or a check failed"
exit "$FAILED"
