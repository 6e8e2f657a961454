#!/bin/bash
# test_galera.sh: svc on a three-node MariaDB Galera cluster on loopback
# (galera-4, own ports, datadirs and gcomm addresses, SST by rsync:
# tests/integration/galera.sh) with two svc hosts, a (127.0.0.2, db_hosts
# 1 2 3) and b (127.0.0.3, db_hosts 2 3 1), each with its own svc.conf,
# run_dir, log, lighttpd spawning svc-api and svc-worker; the test DNS, a
# fake SMTP server to hold sessions at will and an SMTP farm of 10 domains
# (tests/bench/farm_smtp.py); an HTTPS webhook receiver. The cluster is
# started once for every case. (1) A 20,000-address bulk job, a 500-row
# upload with preview and confirm and a stream of single verifications and
# key creations with Idempotency-Key (each sent to both hosts in turn) run
# while node 1, host a's, is killed (SIGKILL): the job goes on, the upload
# is confirmed, every repeat answers the same, the ledger is exact, the
# longest run of 5xx is under 60 s (measured, logged). (2) svcadm status
# and doctor with node 1 down; it rejoins by IST. (3) Host a killed whole
# (SIGKILL by pid) while its worker holds chunks: host b finishes both jobs,
# every address once with a result, the ledger exact, every webhook event
# delivered, the stream's answers as in (1). (4) A backup taken with
# mariadb-backup from the node in use while a job runs, restored on a
# single server without wsrep, holds a ledger that matches its totals and
# the half-done job as it was. (5) Two of the three nodes killed during a
# job: both hosts answer 503 with Retry-After while the survivor is not
# Primary (how long is measured), the cluster forms again when they are
# restarted, and the job completes, each address charged once. (6) A new
# cluster bootstrapped from (4)'s backup: the hosts answer from it, the
# half-done job completes.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/integration/galera.sh"
WORKER=$top_builddir/src/worker/svc-worker
[ -x "$WORKER" ] || it_skip "$WORKER is not built"
galera_require
it_require lighttpd mariadb-backup
[ -x "$(it_api)" ] || it_skip "$(it_api) is not built"

# the mail world: the DNS zones, fake SMTP at 127.0.0.30 (held at will) and
# the farm (tests/bench/farm_smtp.py, one process answering for HA_NDOM
# domains d<I>.ha.test on 127.0.1.<I>, user<N>@ accepted and any other
# local part refused, STARTTLS with the test CA's certificate) on the
# same port; the HTTPS webhook receiver with a certificate of that CA
HA_NDOM=10
mail_env_certs 127.0.0.1 127.0.0.1 '*.ha.test'
mkdir -p "$IT_DIR/zones"
{
    echo '$ORIGIN ha.test.'
    echo '$TTL 3600'
    echo '@ 3600 IN SOA ns.ha.test. hostmaster.ha.test. 1 3600 600 86400 3600'
    echo '@ 3600 IN NS ns.ha.test.'
    echo 'ns 3600 IN A 127.0.0.1'
    for i in $(seq 1 $HA_NDOM); do
        printf 'd%d 3600 IN A 192.0.2.1\nd%d 3600 IN MX 10 mx-d%d.ha.test.\nmx-d%d 3600 IN A 127.0.1.%d\n' \
            "$i" "$i" "$i" "$i" "$i"
    done
} > "$IT_DIR/zones/ha.test.zone"
mail_env_dns "$IT_DIR/zones/ha.test.zone"
SMTP_PORT=$(stack_free_port)
fake 127.0.0.30 hold=1
python3 "$top_srcdir/tests/bench/farm_smtp.py" --ready "$IT_DIR/fake-127.0.1.1" --cert "$IT_DIR/tls/server.pem" \
    --key "$IT_DIR/tls/server.key" --port "$SMTP_PORT" --flight-ms 2 \
    $(seq -f '127.0.1.%g' 1 $HA_NDOM) > "$IT_DIR/farm.log" 2>&1 &
FAKE_PIDS+=($!)
it_wait_until 10 "for the SMTP farm" test -s "$IT_DIR/fake-127.0.1.1" ||
    { cat "$IT_DIR/farm.log"; echo "Bail out! farm_smtp.py"; exit 1; }
PYTHONDONTWRITEBYTECODE=1 python3 "$top_srcdir/tests/integration/webhook_receiver.py" --host 127.0.0.1 \
    --port 0 --cert "$IT_DIR/tls/server.pem" --key "$IT_DIR/tls/server.key" \
    --log "$IT_DIR/received" --ready "$IT_DIR/receiver.port" > "$IT_DIR/receiver.log" 2>&1 &
FAKE_PIDS+=($!)
it_wait_until 10 "for the webhook receiver" test -s "$IT_DIR/receiver.port" ||
    { cat "$IT_DIR/receiver.log"; echo "Bail out! webhook_receiver.py"; exit 1; }
RPORT=$(cat "$IT_DIR/receiver.port")
mail_env_lists
# (a held flight waits for the test, not for the reply timeout)
mail_env_conf smtp_reply_timeout_ms=120000
it_conf_add "worker_poll_interval = 1"
# every request reads its key from the database (a causal read on Galera,
# wsrep_sync_wait), not from the responder's one-second cache: what a node
# answers while it loses its quorum is seen at each request
it_conf_add "auth_cache_ms = 0"
# chunks a worker could not finish while the database was unavailable, or
# that a killed host held, are taken up again 5 s after, not 120 (the
# default)
it_conf_add "worker_lease_seconds = 5"
it_conf_add "ca_file = $IT_DIR/tls/ca.pem
allow_private_urls = yes
allow_url_ports = $RPORT
webhook_retry_schedule = 1s 1s 2s 2s 2s 2s 2s"

# ---- the cluster (tests/integration/galera.sh): node 1 bootstraps it, 2
# and 3 join by SST
galera_cluster_start

IT_STACK=yes
SVC_CONF=$IT_DIR/svc.conf
mkdir -p "$IT_DIR/log"
ln -s g2 "$IT_DIR/mariadb"	# it_sql and the logs: a node that stays up
galera_svc_conf "$SVC_CONF"	# svcadm's; the hosts' are made from it
export SVC_CONF
svcadm db migrate --sql-dir "$top_srcdir/sql" > "$IT_DIR/migrate.log" 2>&1 ||
    { cat "$IT_DIR/migrate.log"; echo "Bail out! svcadm db migrate on the cluster"; exit 1; }

# ---- two svc hosts, as README "High availability" has them: a on
# 127.0.0.2 and b on 127.0.0.3, each with its own svc.conf, run_dir, log,
# lighttpd spawning svc-api and svc-worker; a lists the nodes 1 2 3, b
# 2 3 1 (each uses another node first). svcadm runs on svc.conf (1 2 3).
declare -A URL HOST_IP HOST_ORDER HOST_PORT
HOST_IP=([a]=127.0.0.2 [b]=127.0.0.3)
HOST_ORDER=([a]="1 2 3" [b]="2 3 1")
# host_start NAME: the host's svc.conf, lighttpd (on the same port when
# started again) and svc-worker
host_start() {
    local h=$1 dir=$IT_DIR/$1 ip=${HOST_IP[$1]} k hosts=
    mkdir -p "$dir/run" "$dir/log"
    [ -n "${HOST_PORT[$h]:-}" ] || HOST_PORT[$h]=$(stack_free_port)
    for k in ${HOST_ORDER[$h]}; do hosts="$hosts 127.0.0.1:${DBPORT[$k]}"; done
    sed -e "s|^base_url = .*|base_url = http://$ip:${HOST_PORT[$h]}|" \
        -e "s|^log_file = .*|log_file = $dir/log/svc.log|" \
        -e "s|^db_hosts = .*|db_hosts =$hosts|" "$SVC_CONF" > "$dir/svc.conf"
    echo "run_dir = $dir/run" >> "$dir/svc.conf"
    STACK_HOST=$ip stack_lighttpd_start "$dir/lighttpd" "${HOST_PORT[$h]}" "$(it_api)" "$dir/svc.conf" ||
        { echo "Bail out! lighttpd of host $h"; exit 1; }
    URL[$h]=http://$ip:${HOST_PORT[$h]}
    stack_proc_start "$dir" worker "$WORKER" -c "$dir/svc.conf" ||
        { echo "Bail out! svc-worker of host $h"; exit 1; }
}
node_gone() { ! stack_alive "$1"; }
# host_kill NAME: SIGKILL to the host's lighttpd, every process under it
# (svc-api's master, responders and keeper) and its svc-worker, all at once
host_kill() {
    local dir=$IT_DIR/$1 pids l w p
    l=$(stack_pidfile_pid "$dir/lighttpd/lighttpd.pid") && w=$(stack_pidfile_pid "$dir/worker.pid") || return 1
    pids="$l $(stack_descendants "$l" | tr '\n' ' ') $w"
    it_log "host $1: SIGKILL to $pids"
    # shellcheck disable=SC2086
    kill -9 $pids
    for p in $pids; do it_wait_until 30 "for process $p of host $1 to die" node_gone "$p" || return 1; done
}
host_start a
host_start b
BASE_URL=${URL[a]}
it_show_logs() {
    local f
    for f in "$IT_DIR"/{a,b}/log/svc.log "$IT_DIR"/{a,b}/worker.log "$IT_DIR"/{a,b}/lighttpd/error.log \
            "$IT_DIR"/g{1,2,3}/mariadbd.err; do
        [ -s "$f" ] || continue
        echo "# --- last lines of $f"
        tail -n 25 "$f" | sed 's/^/# /'
    done
}
ACC=$(it_account pro 100000)
API_KEY=$(it_key "$ACC" '*')
G1PID=$(stack_pidfile_pid "$IT_DIR/g1/mariadbd.pid")

held_flights() { case $(fake_ctl 127.0.0.30 held) in held=0|"") return 1 ;; *) return 0 ;; esac; }
job_done() { [ "$(it_sql "SELECT status FROM jobs WHERE id = '$1'")" = completed ]; }
job_status_is() { [ "$(it_sql "SELECT status FROM jobs WHERE id = '$1'")" = "$2" ]; }
job_processed_at_least() { [ "$(it_sql "SELECT processed_emails FROM jobs WHERE id = '$1'")" -ge "$2" ]; }
farm_held() { case $(fake_ctl 127.0.1.1 held) in held=0|"") return 1 ;; *) return 0 ;; esac; }

# ---- the load the first cases run under: a bulk job of HA_N addresses
# at the farm (user<N>@ valid, nobody<N>@ invalid, over HA_NDOM domains),
# an upload of HA_ROWS rows with preview and confirm, and a stream of
# single verifications and key creations with Idempotency-Key
# (ha_stream) on an account of its own, the jobs' account with a webhook
# for job.completed at the receiver
HA_N=20000
HA_ROWS=500
BULK='' UPLOAD='' JOBS='' HOOK='' SACC='' STREAM='' T_BULK=$EPOCHREALTIME BACKUP_JOB='' BACKUP_ACC2='' BACKUP_N=''
NXDOM=nx-stream.svc.test	# no such name: a verdict without SMTP
# on HOST METHOD PATH [BODY] [CURL ARGS...]: http on that host
on() { local h=$1; shift; BASE_URL=${URL[$h]} http "$@"; }
# ha_stream KEY STOPFILE DIR PREFIX: until STOPFILE exists, request after
# request, a single verification (odd) or a key creation (even), each with
# an Idempotency-Key of its own (ha-PREFIX<N>) and sent, host after host,
# until two answers that are no 5xx, no cut connection and no 409
# idempotency_key_in_use have come (at most 600 attempts; three 409 in use
# end it: a dead request's entry); a line per attempt in DIR/log
# (tests/integration/ha_stream_check.py reads it). A host that does not
# answer is skipped, as a load balancer would; after a 5xx or no answer
# the next attempt comes 0.1 s later, as a client backs off (no wait of
# the test's). While DIR/pause exists it sends nothing (DIR/paused says
# so: stream_pause).
ha_stream() {
    local key=$1 stop=$2 dir=$3 p=$4 i=0 a answered in_use kind path body h status
    mkdir -p "$dir"
    while [ ! -e "$stop" ]; do
        if [ -e "$dir/pause" ]; then
            touch "$dir/paused"
            while [ -e "$dir/pause" ] && [ ! -e "$stop" ]; do sleep 0.05; done
            rm -f "$dir/paused"
        fi
        i=$((i + 1)) a=0 answered=0 in_use=0
        if [ $((i % 2)) = 1 ]; then
            kind=verify path=/v1/verify body="{\"email\":\"s$p$i@$NXDOM\"}"
        else
            kind=key path=/v1/keys body="{\"name\":\"k$p$i\",\"scopes\":[\"verify:single\"]}"
        fi
        while [ "$answered" -lt 2 ] && [ "$a" -lt 600 ]; do
            a=$((a + 1))
            if [ $(((i + a) % 2)) = 0 ]; then h=a; else h=b; fi
            status=$(curl -sS -o "$dir/$p$i.$a" -w '%{http_code}' --max-time 60 -H "Authorization: Bearer $key" \
                -H "Idempotency-Key: ha-$p$i" -H 'Content-Type: application/json' \
                --data-binary "$body" "${URL[$h]}$path" 2> /dev/null) || status=000
            echo "${EPOCHREALTIME/./} $h $kind $p$i $status" >> "$dir/log"
            case $status in
            409) if grep -q idempotency_key_in_use "$dir/$p$i.$a"; then
                     in_use=$((in_use + 1)); [ "$in_use" -lt 3 ] || break
                 else answered=$((answered + 1)); fi ;;
            [24]??) answered=$((answered + 1)) ;;
            *) sleep 0.1 ;;
            esac
        done
    done
}
# stream_check: ha_stream_check.py's figures logged (STREAM_FIGURES), each
# problem it finds a failure
STREAM_FIGURES=
stream_check() {
    local out
    out=$(python3 "$top_srcdir/tests/integration/ha_stream_check.py" "$IT_DIR/stream") ||
        { it_fail "ha_stream_check.py: $out"; return 1; }
    STREAM_FIGURES=$(printf '%s\n' "$out" | head -n 1)
    it_log "the stream so far: $STREAM_FIGURES"
    [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && return 0
    printf '%s\n' "$out" | tail -n +2 | sed 's/^/#   FAIL: /'
    IT_CASE_FAILED=1
    return 1
}
# stream_pause: the stream between two requests, until stream_resume
stream_pause() {
    touch "$IT_DIR/stream/pause"
    it_wait_until 120 "for the stream to pause" test -e "$IT_DIR/stream/paused"
}
stream_resume() { rm -f "$IT_DIR/stream/pause"; }
stream_figure() { printf '%s\n' "$STREAM_FIGURES" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# ledger_check: svcadm credits check of both accounts; the stream's
# charges: one per single verification answered 200; each job of JOBS:
# charged minus refunded = its rows not refunded (verified, not unknown)
ledger_check() {
    local a j rows charged refunded
    for a in "$ACC" "$SACC"; do
        expect_eq "svcadm credits check $a" ok "$(svcadm credits check "$a" 2> "$IT_DIR/credits-check.err")" ||
            cat "$IT_DIR/credits-check.err"
    done
    # one charge per single verification answered 200: one cut by its
    # host's death was charged with its answer stored (a retry replays
    # it), or not charged (its key left running: verify_left)
    expect_eq "charges of the stream's single verifications (one per request answered 200)" \
        "$(stream_figure verify_200)" \
        "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE account_id = '$SACC' AND kind = 'charge'")"
    for j in $JOBS; do
        charged=$(it_sql "SELECT COALESCE(SUM(amount), 0) FROM credit_ledger WHERE ref LIKE 'job:$j:%' AND kind = 'charge'")
        refunded=$(it_sql "SELECT COALESCE(SUM(amount), 0) FROM credit_ledger WHERE ref LIKE 'job:$j:%' AND kind = 'refund'")
        rows=$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$j' AND NOT (state = 'done' AND classification = 'unknown')")
        expect_eq "job $j: charged $charged minus refunded $refunded = its rows not refunded" \
            "$rows" "$(( ${charged#-} - ${refunded#-} ))"
    done
}
# idem_twice HOST1 HOST2 KEY METHOD PATH [BODY] [CURL ARGS...]: the request
# sent to HOST1, then the same to HOST2, with Idempotency-Key KEY: the
# second a replay, both answers the same; HTTP_* of the first
idem_twice() {
    local h1=$1 h2=$2 key=$3 first st
    shift 3
    on "$h1" "$@" -H "Idempotency-Key: $key" || return 1
    first=$HTTP_BODY st=$HTTP_STATUS
    on "$h2" "$@" -H "Idempotency-Key: $key" || return 1
    expect_eq "$1 $2 (Idempotency-Key $key) on host $h2 after host $h1" "$st $first" "$HTTP_STATUS $HTTP_BODY"
    expect_header Idempotent-Replayed true
    HTTP_BODY=$first HTTP_STATUS=$st
}

t_two_hosts_node() {
    local f i k0 t_kill
    SACC=$(it_account pro 100000) && SKEY=$(it_key "$SACC" '*' --rate-limit 100000) || return 1
    on a POST /v1/webhooks "{\"url\":\"https://127.0.0.1:$RPORT/hook\",\"events\":[\"job.completed\"]}"
    expect_status 201 || return 1
    HOOK=$(json .id)
    rm -f "$IT_DIR/stream.stop"
    ha_stream "$SKEY" "$IT_DIR/stream.stop" "$IT_DIR/stream" n &
    STREAM=$!
    # the bulk job, made on a and replayed by b
    f=$IT_DIR/bulk.json
    awk -v n=$HA_N -v nd=$HA_NDOM 'BEGIN { printf "{\"name\":\"ha\",\"emails\":["
        for (i = 0; i < n; i++) printf "%s\"%s%d@d%d.ha.test\"", (i ? "," : ""), (i % 2 ? "nobody" : "user"), i, i % nd + 1
        printf "]}" }' > "$f"
    T_BULK=$EPOCHREALTIME
    idem_twice a b ha-bulk POST /v1/verify/bulk "@$f" || return 1
    expect_status 202 || return 1
    BULK=$(json .job_id)
    # the upload with preview, made on b and replayed by a
    { echo email,name; for i in $(seq 1 $HA_ROWS); do
        if [ $((i % 5)) = 0 ]; then echo "nobody$i@d$((i % HA_NDOM + 1)).ha.test,n$i"
        else echo "user$i@d$((i % HA_NDOM + 1)).ha.test,n$i"; fi; done; } > "$IT_DIR/upload.csv"
    idem_twice b a ha-upload POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/upload.csv" -F preview=true || return 1
    expect_status 202 || return 1
    UPLOAD=$(json .job_id)
    JOBS="$BULK $UPLOAD"
    # the job under way, then node 1 (host a's) killed
    it_wait_until 120 "for the bulk job to be under way" job_processed_at_least "$BULK" 2000 || return 1
    expect_eq "svc connections on node 1 (host a's first)" yes \
        "$(gsql 1 -e "SELECT IF(COUNT(*) > 0, 'yes', 'no') FROM information_schema.processlist WHERE user = 'svc'")"
    k0=$(it_sql "SELECT processed_emails FROM jobs WHERE id = '$BULK'")
    t_kill=${EPOCHREALTIME/./}
    kill -9 "$G1PID"
    it_log "node 1 killed with the bulk job at $k0 of $HA_N, $(it_seconds_since "$T_BULK") s after it was made"
    it_wait_until 30 "for node 1 to die" node_gone "$G1PID" || return 1
    # the upload's preview and confirm while node 1 is down
    it_wait_until 120 "for the upload's preview" job_status_is "$UPLOAD" awaiting_confirmation || return 1
    on a POST "/v1/verify/bulk/$UPLOAD/preview" "" --data ""
    expect_status 200 && expect_json .preview.total_emails $HA_ROWS || return 1
    idem_twice a b ha-confirm POST "/v1/verify/bulk/$UPLOAD/confirm" "" --data "" || return 1
    expect_status 200 || return 1
    # the job goes on after the kill
    it_wait_until 120 "for the bulk job to go on after the kill" job_processed_at_least "$BULK" $((k0 + 2000)) || return 1
    grep -q "svc-worker.* event=db_endpoint endpoint=127.0.0.1:${DBPORT[2]}" "$IT_DIR/a/log/svc.log" ||
        it_fail "host a's svc-worker did not log its move to node 2"
    # held: the job stops mid-way, chunks under way (case 3 kills a host)
    fake_set 127.0.1.1 hold=1
    it_wait_until 30 "for held flights at the farm" farm_held || return 1
    it_log "bulk job held at $(it_sql "SELECT processed_emails FROM jobs WHERE id = '$BULK'") of $HA_N, $(( (${EPOCHREALTIME/./} - t_kill) / 1000 )) ms after the kill"
    # the figures with no request of the stream in flight
    stream_pause || return 1
    stream_check
    ledger_check
    stream_resume
    expect_eq "the bulk job's addresses with more than one row" 0 \
        "$(it_sql "SELECT COUNT(*) FROM (SELECT email FROM job_emails WHERE job_id = '$BULK' GROUP BY email HAVING COUNT(*) > 1) d")"
    it_log "the longest run of 5xx answers to the stream so far: $(stream_figure max_5xx_run_ms) ms (bound: 60000)"
    [ "$(stream_figure max_5xx_run_ms)" -lt 60000 ] ||
        it_fail "the API answered 5xx for $(stream_figure max_5xx_run_ms) ms in a row"
}
t_case "two hosts (a on node 1 first, b on node 2) under a ${HA_N}-address bulk job, a ${HA_ROWS}-row upload with preview and confirm and a stream of idempotent requests; node 1 killed (SIGKILL) mid-job: the job goes on, each idempotent request answers the same on both hosts, the ledger is exact, 5xx never for 60 s in a row" t_two_hosts_node

# node_in_use: the node with svc-api's and svc-worker's connections
node_in_use() {
    for n in 1 2 3; do
        echo "$(gsql $n -e "SELECT COUNT(*) FROM information_schema.processlist WHERE user = 'svc'" 2>/dev/null || echo 0) $n"
    done | sort -n | tail -n 1 | cut -d' ' -f2
}
# node_rejoin N: start node N again after it died: its position recovered
# from InnoDB first (what galera_recovery does), so that IST from the
# others' gcache suffices; its datadir given to nobody in case an rsync
# SST is needed after all. Does not wait for it to answer.
node_rejoin() {
    local n=$1 pos
    mariadbd --defaults-file="$IT_DIR/g$n/my.cnf" --wsrep-recover \
        --log-error="$IT_DIR/g$n/recover.err" > /dev/null 2>&1
    pos=$(sed -n 's/.*WSREP: Recovered position: *//p' "$IT_DIR/g$n/recover.err" | tail -n 1)
    [ -n "$pos" ] && echo "wsrep_start_position = $pos" >> "$IT_DIR/g$n/my.cnf"
    it_log "node $n recovered position: ${pos:-none}"
    chown -R nobody "$IT_DIR/g$n/data"
    rm -f "$IT_DIR/g$n/mariadb.sock"
    stack_daemon "$IT_DIR/g$n/mariadbd.pid" "$IT_DIR/g$n/mariadbd.out" \
        "$(stack_mariadb_bin)" --defaults-file="$IT_DIR/g$n/my.cnf" > /dev/null
}
# doctor_cluster: svcadm doctor's db_cluster line alone (the other checks skipped)
doctor_cluster() {
    svcadm doctor --skip ptr,fcrdns,port25,dnsbl,port25_seen 2>&1 | sed -n 's/^db_cluster: //p'
}

t_status_doctor() {
    local out
    # node 1 is still down: two of three
    out=$(svcadm status 2>&1)
    case $out in *"db node: 127.0.0.1:${DBPORT[1]}: unreachable (not ready)"*) ;; *) it_fail "status without node 1: $out" ;; esac
    case $out in *"db node: 127.0.0.1:${DBPORT[2]}: Synced, cluster size 2"*) ;; *) it_fail "status of node 2: $out" ;; esac
    case $out in *"database: 127.0.0.1:${DBPORT[2]} (used by this program), cluster size 2"*) ;; *) it_fail "status: endpoint used: $out" ;; esac
    expect_eq "status --json: cluster size, ready nodes" "2 2" \
        "$(svcadm status --json 2>/dev/null | jq -r '"\(.database.cluster_size) \([.database.nodes[] | select(.ready)] | length)"')"
    out=$(doctor_cluster)
    expect_eq "doctor with node 1 down" "fail: 127.0.0.1:${DBPORT[1]} is not ready: unreachable" "${out%%: Can*}"
    # node 1 rejoins
    node_rejoin 1
    it_wait_until 60 "for node 1 to rejoin" cluster_size_is 2 3 || return 1
    it_wait_until 30 "for node 1 to be Synced" sh -c "[ \"\$(mariadb --no-defaults --socket='$IT_DIR/g1/mariadb.sock' -uroot -N -B -e \"SHOW STATUS LIKE 'wsrep_local_state_comment'\" | cut -f2)\" = Synced ]" || return 1
    grep -q "IST received" "$IT_DIR/g1/mariadbd.err" || it_log "node 1 rejoined without IST (SST)"
    expect_eq "doctor with three Synced nodes" "ok: 3 endpoints Synced, cluster size 3" "$(doctor_cluster)"
    # a node stopped: doctor fails again, naming it
    stack_mariadb_stop "$IT_DIR/g3"
    it_wait_until 30 "for a cluster of 2" cluster_size_is 2 2 || return 1
    case $(doctor_cluster) in "fail: 127.0.0.1:${DBPORT[3]} is not ready"*) ;; *) it_fail "doctor with node 3 stopped: $(doctor_cluster)" ;; esac
}
t_case "svcadm status shows each endpoint's state, the cluster size and the endpoint used; svcadm doctor fails while a node is down, passes when the killed node has rejoined" t_status_doctor

# hook_events_received: every event of the webhook HOOK (its deliveries'
# event ids) is in a request the receiver logged; the count in HOOK_EVENTS
hook_events_received() {
    local want got
    want=$(it_sql "SELECT DISTINCT event_id FROM event_deliveries WHERE webhook_id = '$HOOK' ORDER BY event_id")
    HOOK_EVENTS=$(printf '%s\n' "$want" | grep -c . || true)
    got=$(python3 -c 'import base64, json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["path"] == "/hook":
        print(json.loads(base64.b64decode(r["body_b64"]))["event_id"])' "$IT_DIR/received" 2>/dev/null | sort -u)
    [ -n "$want" ] && [ -z "$(comm -23 <(printf '%s\n' "$want") <(printf '%s\n' "$got"))" ]
}
# jobs_events: the jobs of JOBS each have their job.completed event
jobs_events() {
    [ "$(it_sql "SELECT COUNT(DISTINCT job_id) FROM event_deliveries WHERE webhook_id = '$HOOK' AND event = 'job.completed' AND job_id IN ('${JOBS// /\',\'}')")" = "$(echo $JOBS | wc -w)" ]
}

t_two_hosts_host() {
    local wa wb t_kill j n held
    # host a's worker holds chunks of the bulk job, their flights held
    wa=$(hostname):$(stack_pidfile_pid "$IT_DIR/a/worker.pid")
    wb=$(hostname):$(stack_pidfile_pid "$IT_DIR/b/worker.pid")
    # (it may hold none when the farm began holding: every chunk may have
    # been claimed by then, and host a's finished or, after node 1's
    # death, given back and taken by host b; then the host is killed all
    # the same, with its API's requests in flight, and what its chunks
    # become is test_hosts.sh's on one node)
    held=$(it_sql "SELECT chunk FROM job_chunks WHERE job_id = '$BULK' AND state = 'leased' AND lease_owner = '$wa'" | paste -sd, -)
    n=$(echo "$held" | tr ',' '\n' | grep -c . || true)
    it_log "host a's worker ($wa) holds $n chunks of the bulk job"
    t_kill=$EPOCHREALTIME
    host_kill a || return 1
    fake_set 127.0.1.1 hold=0
    # host b's worker finishes both jobs (a's chunks when their leases end)
    for j in $JOBS; do
        it_wait_until 200 "for job $j to complete on host b" job_done "$j" ||
            { it_sql "SELECT status, processed_emails FROM jobs WHERE id = '$j'"; return 1; }
    done
    it_log "the bulk job completed $(it_seconds_since "$t_kill") s after host a was killed, $(it_seconds_since "$T_BULK") s after it was made ($HA_N addresses over $HA_NDOM domains)"
    it_wait_until 60 "for the webhook's job.completed events" jobs_events || return 1
    it_wait_until 60 "for the receiver to have every event of the webhook" hook_events_received || return 1
    it_log "webhook events delivered: $HOOK_EVENTS, $(grep -c '"path": "/hook"' "$IT_DIR/received") requests"
    touch "$IT_DIR/stream.stop"
    wait "$STREAM"
    # host a again, for the cases that follow
    host_start a
    # every address once, with a result; the counts agree
    expect_eq "the bulk job: rows done with a result, distinct addresses, processed, valid, invalid" \
        "$HA_N $HA_N $HA_N $((HA_N / 2)) $((HA_N / 2))" \
        "$(it_sql "SELECT (SELECT COUNT(*) FROM job_emails WHERE job_id = j.id AND state = 'done' AND classification IS NOT NULL),
                   (SELECT COUNT(DISTINCT email) FROM job_emails WHERE job_id = j.id),
                   processed_emails, count_valid, count_invalid FROM jobs j WHERE id = '$BULK'" | tr '\t' ' ')"
    expect_eq "the upload: rows done with a result, processed, valid, invalid" \
        "$HA_ROWS $HA_ROWS $((HA_ROWS * 4 / 5)) $((HA_ROWS / 5))" \
        "$(it_sql "SELECT (SELECT COUNT(*) FROM job_emails WHERE job_id = j.id AND state = 'done' AND classification IS NOT NULL),
                   processed_emails, count_valid, count_invalid FROM jobs j WHERE id = '$UPLOAD'" | tr '\t' ' ')"
    # the chunks host a held were finished by host b's worker
    expect_eq "chunks of the bulk job not done" 0 \
        "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$BULK' AND state <> 'done'")"
    [ "$n" = 0 ] || expect_eq "the chunks host a held, done by host b's worker" "$n" \
        "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$BULK' AND chunk IN ($held) AND done_by = '$wb'")"
    stream_check || return 1
    ledger_check
    expect_eq "keys the stream created (one per key creation answered 201)" "$(stream_figure keys_201)" \
        "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$SACC' AND name LIKE 'k%'")"
    it_log "the longest run of 5xx answers to the stream: $(stream_figure max_5xx_run_ms) ms (bound: 60000)"
    [ "$(stream_figure max_5xx_run_ms)" -lt 60000 ] ||
        it_fail "the API answered 5xx for $(stream_figure max_5xx_run_ms) ms in a row"
}
t_case "host a killed (lighttpd, svc-api, svc-worker: SIGKILL) with chunks of the bulk job under way: host b's worker finishes both jobs, every address once with a result, the ledger exact, every idempotent request answered the same, every webhook event delivered, 5xx never for 60 s in a row" t_two_hosts_host

# ---- backup with mariadb-backup from the node in use, restored on a
# single server (README, "High availability")
NXDOM=nx-backup.svc.test	# no such name: a verdict without SMTP
job_halfway() {
    held_flights && [ "$(it_sql "SELECT processed_emails FROM jobs WHERE id = '$1'")" -ge "$2" ]
}
# verify_stream KEY STOPFILE: POST /v1/verify (a charge each) until STOPFILE
verify_stream() {
    local i=0
    while [ ! -e "$2" ]; do
        i=$((i + 1))
        curl -sS -o /dev/null -w '%{http_code}\n' --max-time 30 -H "Authorization: Bearer $1" \
            -H 'Content-Type: application/json' --data-binary "{\"email\":\"s$i@$NXDOM\"}" \
            "$BASE_URL/v1/verify" || echo 000
    done
}
rsql() { stack_mariadb_sql "$IT_DIR/restore" -N -B svc -e "$1"; }

t_backup() {
    local held=20 nx=40 body job acc2 key2 stream bdir=$IT_DIR/backup rdir=$IT_DIR/restore \
        node info got
    node=$(node_in_use)
    it_log "backup from node $node"
    fake_set 127.0.0.30 hold=1
    body=$({ seq 1 $held | sed 's/.*/b&@pristine.svc.test/'; seq 1 $nx | sed "s/.*/n&@$NXDOM/"; } |
        jq -R . | jq -sc '{name: "backup", emails: .}')
    http POST /v1/verify/bulk "$body"
    expect_status 202 || return 1
    job=$(json .job_id)
    # under way: the addresses without a domain done, the others' SMTP held
    it_wait_until 60 "for the job to be half done" job_halfway "$job" "$nx" || return 1
    # and charges made while the backup is taken
    acc2=$(it_account pro 100000) && key2=$(it_key "$acc2" '*' --rate-limit 100000) || return 1
    rm -f "$IT_DIR/backup.done"
    verify_stream "$key2" "$IT_DIR/backup.done" > "$IT_DIR/backup-stream.codes" &
    stream=$!
    it_wait_until 30 "for the first single verification" test -s "$IT_DIR/backup-stream.codes" ||
        { touch "$IT_DIR/backup.done"; wait "$stream"; return 1; }
    mariadb-backup --defaults-file="$IT_DIR/g$node/my.cnf" --backup --galera-info \
        --user=root --socket="$IT_DIR/g$node/mariadb.sock" --target-dir="$bdir" \
        > "$IT_DIR/backup.log" 2>&1 || it_fail "mariadb-backup --backup: $(tail -n 5 "$IT_DIR/backup.log")"
    touch "$IT_DIR/backup.done"
    wait "$stream"
    fake_set 127.0.0.30 hold=0
    [ "$IT_CASE_FAILED" = 0 ] || return 1
    it_log "single verifications during the backup (count status): $(sort "$IT_DIR/backup-stream.codes" | uniq -c | tr -s ' ' | paste -sd, -)"
    info=$(cat "$bdir/xtrabackup_galera_info" 2>/dev/null)
    [[ $info =~ ^[0-9a-f-]{36}:[0-9]+ ]] ||
        it_fail "xtrabackup_galera_info is not uuid:seqno: '$info'"
    mariadb-backup --prepare --target-dir="$bdir" > "$IT_DIR/prepare.log" 2>&1 ||
        { it_fail "mariadb-backup --prepare: $(tail -n 5 "$IT_DIR/prepare.log")"; return 1; }
    # restored on a single server: wsrep off (no [galera] section)
    mkdir -p "$rdir/tmp"
    stack_free_port > "$rdir/port"
    stack_mariadb_write_cnf "$rdir" "$(cat "$rdir/port")"
    # (--copy-back: the backup stays for case 6, a cluster made from it)
    mariadb-backup --defaults-file="$rdir/my.cnf" --copy-back --target-dir="$bdir" \
        --datadir="$rdir/data" > "$IT_DIR/restore.log" 2>&1 ||
        { it_fail "mariadb-backup --copy-back: $(tail -n 5 "$IT_DIR/restore.log")"; return 1; }
    stack_mariadb_start "$rdir" || { it_fail "mariadbd on the restored datadir"; return 1; }
    expect_eq "wsrep on the restored server" 0 "$(rsql 'SELECT @@wsrep_on')"
    sed "s|^db_hosts = .*|db_host = localhost\ndb_socket = $rdir/mariadb.sock|" "$SVC_CONF" > "$IT_DIR/restore.conf"
    # the ledger matches the credit totals: no charge torn in two
    for a in "$ACC" "$acc2"; do
        expect_eq "credits check of $a on the restored server" ok \
            "$("$top_builddir/src/admin/svcadm" -c "$IT_DIR/restore.conf" credits check "$a" 2>&1)"
    done
    got=$(rsql "SELECT COUNT(*) FROM credit_ledger WHERE account_id = '$acc2' AND kind = 'charge'")
    it_log "charges of the single verifications in the backup: $got of $(grep -c '^200$' "$IT_DIR/backup-stream.codes")"
    [ "$got" -gt 0 ] || it_fail "no charge of the verifications made during the backup in it"
    # the job as it was, half done: its counts agree with its rows
    expect_eq "the job restored: status, processed, rows done, counts' sum" "processing $nx $nx $nx" \
        "$(rsql "SELECT j.status, j.processed_emails,
                  (SELECT COUNT(*) FROM job_emails e WHERE e.job_id = j.id AND e.state = 'done'),
                  j.count_valid + j.count_invalid + j.count_risky + j.count_catch_all + j.count_disposable + j.count_unknown
                FROM jobs j WHERE j.id = '$job'" | tr '\t' ' ')"
    expect_eq "the job's charge rows and credits in the backup" "1 $((held + nx))" \
        "$(rsql "SELECT COUNT(*), SUM(amount) FROM credit_ledger WHERE ref LIKE 'job:$job:%' AND kind = 'charge'" | tr '\t' ' ')"
    stack_mariadb_stop "$rdir"
    rm -rf "$rdir/data"
    BACKUP_JOB=$job BACKUP_ACC2=$acc2 BACKUP_N=$((held + nx))
}
t_case "a backup taken with mariadb-backup --galera-info from the node in use while a job runs and charges are made, prepared and restored on a single server (wsrep off): the ledger matches the totals, the half-done job's counts match its rows" t_backup

# ---- quorum lost and regained
node_primary() { [ "$(gstatus "$1" wsrep_cluster_status)" = Primary ]; }
node_synced() { [ "$(gstatus "$1" wsrep_local_state_comment)" = Synced ]; }
node_gone() { ! stack_alive "$1"; }
# api_watch KEY STOPFILE: GET /v1/credits until STOPFILE exists; a line
# per answer: the microsecond it came, its status, 1 with a Retry-After
api_watch() {
    local API_KEY=$1 HTTP_TIMEOUT=30
    while [ ! -e "$2" ]; do
        http GET /v1/credits || HTTP_STATUS=000
        echo "${EPOCHREALTIME/./} $HTTP_STATUS $(printf '%s' "$HTTP_HEADERS" | grep -ci '^retry-after:')"
    done
}
# prim_watch NODE STOPFILE: a line whenever node NODE's wsrep_cluster_status
# changes: the microsecond it was seen and the new status
prim_watch() {
    local st last=
    while [ ! -e "$2" ]; do
        st=$(gstatus "$1" wsrep_cluster_status)
        [ "$st" = "$last" ] || { echo "${EPOCHREALTIME/./} ${st:-unreachable}"; last=$st; }
        sleep 0.05
    done
}
api_status_since() {	# FILE FROM_US: the last status at or after FROM_US
    awk -v t="$2" '$1 >= t { s = $2 } END { print s }' "$1"
}
api_answered_503() { grep -q ' 503 ' "$IT_DIR/quorum.codes"; }
api_answers_200_since() { [ "$(api_status_since "$IT_DIR/quorum.codes" "$1")" = 200 ]; }

t_quorum() {
    local n=100 body job key watch pwatch run5 used survivor dead=() k pid t_kill t_lost t_prim bad \
        first last back gap codes=$IT_DIR/quorum.codes
    # three nodes (case 2 stopped node 3)
    for k in 1 2 3; do
        node_synced "$k" 2>/dev/null && continue
        stack_mariadb_start "$IT_DIR/g$k" || { it_fail "node $k did not start"; return 1; }
    done
    for k in 1 2 3; do it_wait_until 60 "for node $k to be Synced in a cluster of 3" sh -c "
        [ \"\$(mariadb --no-defaults --socket='$IT_DIR/g$k/mariadb.sock' -uroot -N -B -e \"SHOW STATUS LIKE 'wsrep_cluster_size'\" | cut -f2)\" = 3 ]" || return 1; done
    key=$(it_key "$ACC" '*' --rate-limit 100000) || return 1
    # the stream of idempotent requests again, through the quorum's loss
    rm -f "$IT_DIR/stream.stop"
    ha_stream "$SKEY" "$IT_DIR/stream.stop" "$IT_DIR/stream" q &
    STREAM=$!
    fake_set 127.0.0.30 hold=1
    body=$(seq 1 $n | sed 's/.*/q&@pristine.svc.test/' | jq -R . | jq -sc '{name: "quorum", emails: .}')
    http POST /v1/verify/bulk "$body"
    expect_status 202 || return 1
    job=$(json .job_id)
    it_wait_until 30 "for held SMTP flights" held_flights || return 1
    # kill the node in use and another: the survivor is alone, not Primary
    used=$(node_in_use)
    for k in 1 2 3; do [ "$k" = "$used" ] || { survivor=$k; break; }; done
    for k in 1 2 3; do [ "$k" = "$survivor" ] || dead+=("$k"); done
    it_log "programs on node $used; killing nodes ${dead[*]}, node $survivor survives"
    rm -f "$IT_DIR/quorum.stop"
    api_watch "$key" "$IT_DIR/quorum.stop" > "$codes" &
    watch=$!
    BASE_URL=${URL[b]} api_watch "$key" "$IT_DIR/quorum.stop" > "$codes.b" &
    watch="$watch $!"
    prim_watch "$survivor" "$IT_DIR/quorum.stop" > "$IT_DIR/quorum.prim" &
    pwatch=$!
    it_wait_until 30 "for the API's first answer" test -s "$codes" ||
        { touch "$IT_DIR/quorum.stop"; wait $watch "$pwatch"; return 1; }
    t_kill=${EPOCHREALTIME/./}
    for k in "${dead[@]}"; do
        pid=$(stack_pidfile_pid "$IT_DIR/g$k/mariadbd.pid") && kill -9 "$pid"
        it_wait_until 30 "for node $k to die" node_gone "$pid"
    done
    it_wait_until 60 "for node $survivor to lose the Primary component" sh -c "
        [ \"\$(mariadb --no-defaults --socket='$IT_DIR/g$survivor/mariadb.sock' -uroot -N -B -e \"SHOW STATUS LIKE 'wsrep_cluster_status'\" | cut -f2)\" = non-Primary ]" ||
        { touch "$IT_DIR/quorum.stop"; wait $watch "$pwatch"; return 1; }
    it_wait_until 60 "for the API to answer 503" api_answered_503 ||
        { touch "$IT_DIR/quorum.stop"; wait $watch "$pwatch"; return 1; }
    # the held SMTP sessions end while there is no Primary component
    fake_set 127.0.0.30 hold=0
    # the killed nodes come back
    for k in "${dead[@]}"; do node_rejoin "$k"; done
    it_wait_until 120 "for a Primary component again" node_primary "$survivor" ||
        { touch "$IT_DIR/quorum.stop"; wait $watch "$pwatch"; return 1; }
    it_wait_until 60 "for the API to answer 200 again" api_answers_200_since "${EPOCHREALTIME/./}"
    touch "$IT_DIR/quorum.stop"
    wait $watch "$pwatch"
    for k in "${dead[@]}"; do
        it_wait_until 60 "for node $k to be Synced" node_synced "$k" || return 1
    done
    # the statuses: 200 or 503 with Retry-After, never another
    it_log "API answers from the kill on (count status): $(awk -v t="$t_kill" '$1 >= t { print $2 }' "$codes" | sort | uniq -c | tr -s ' ' | paste -sd, -)"
    bad=$(awk '!($2 == 200 || ($2 == 503 && $3 > 0))' "$codes" "$codes.b" | head -3 | paste -sd, -)
    expect_eq "answers other than 200 or 503 with Retry-After (hosts a and b)" "" "$bad"
    it_log "host b's answers from the kill on (count status): $(awk -v t="$t_kill" '$1 >= t { print $2 }' "$codes.b" | sort | uniq -c | tr -s ' ' | paste -sd, -)"
    # the longest run of 5xx: from the first 5xx of a run to the next
    # answer that is not one, on either host
    run5=$(sort -n "$codes" "$codes.b" | awk '$2 ~ /^5/ { if (!s) s = $1; next }
        s { if ($1 - s > m) m = $1 - s; s = 0 } END { if (s) m = -1; print int(m / 1000) }')
    it_log "the longest run of 5xx answers of hosts a and b: $run5 ms (bound: 60000)"
    [ "$run5" -ge 0 ] && [ "$run5" -lt 60000 ] || it_fail "the API answered 5xx for $run5 ms in a row (-1: to the end)"
    # how long: the survivor's view of its component, the API's answers
    # (times in ms from the kill)
    t_lost=$(awk '$2 == "non-Primary" { print $1; exit }' "$IT_DIR/quorum.prim")
    t_prim=$(awk -v t="$t_lost" '$1 > t && $2 == "Primary" { print $1; exit }' "$IT_DIR/quorum.prim")
    first=$(awk '$2 != 200 { print $1; exit }' "$codes")
    last=$(awk '$2 != 200 { t = $1 } END { print t }' "$codes")
    back=$(awk -v t="$last" '$1 > t && $2 == 200 { print $1; exit }' "$codes")
    # the longest time without a 2xx: from a 200 to the next, non-2xx between
    gap=$(awk '$2 == 200 { if (bad && $1 - ok > max) max = $1 - ok; ok = $1; bad = 0; next }
               { bad = 1 } END { print int(max / 1000) }' "$codes")
    it_log "ms after the kill: survivor non-Primary $(( (t_lost - t_kill) / 1000 )), Primary again $(( (t_prim - t_kill) / 1000 )); API non-2xx from $(( (first - t_kill) / 1000 )) to $(( (last - t_kill) / 1000 )), 200 again $(( (back - t_kill) / 1000 )) ($(( (back - t_prim) / 1000 )) ms after Primary); the longest time without a 2xx: $gap ms"
    it_log "the slowest answer to GET /v1/credits: $(sed -n 's|.*path="/v1/credits" status=\([0-9]*\) ms=\([0-9]*\).*|\2 ms (\1)|p' "$IT_DIR"/{a,b}/log/svc.log | sort -n | tail -n 1)"
    # (that the API answers 200 again once the component is Primary was
    # waited for above; how soon is logged, not asserted: a wall-clock
    # bound fails on a busy machine)
    it_wait_until 180 "for the job to complete" job_done "$job" ||
        { it_sql "SELECT status, processed_emails FROM jobs WHERE id = '$job'"; return 1; }
    expect_eq "addresses with a result" "$n" \
        "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$job' AND state = 'done' AND classification IS NOT NULL" | tr '\t' ' ')"
    expect_eq "the job's processed count" "$n" "$(it_sql "SELECT processed_emails FROM jobs WHERE id = '$job'")"
    expect_eq "the job's charge rows and credits (charged once)" "1 $n" \
        "$(it_sql "SELECT COUNT(*), SUM(amount) FROM credit_ledger WHERE ref LIKE 'job:$job:%' AND kind = 'charge'" | tr '\t' ' ')"
    # the stream, the ledger and the webhook's events as after cases 1 and 3
    touch "$IT_DIR/stream.stop"
    wait "$STREAM"
    stream_check
    # (a request that answered 503 with its Idempotency-Key's row written
    # keeps it to delete once the database answers: how often, logged)
    it_log "Idempotency-Key rows svc-api could not delete at once and kept: $(cat "$IT_DIR"/{a,b}/log/svc.log |
        grep -c 'event=idempotency_abandon_pending'), deleted later: $(cat "$IT_DIR"/{a,b}/log/svc.log |
        grep -c 'event=idempotency_abandoned ')"
    JOBS="$JOBS $job"
    ledger_check
    it_wait_until 60 "for the jobs' job.completed events" jobs_events || return 1
    it_wait_until 60 "for the receiver to have every event of the webhook" hook_events_received || return 1
    it_log "webhook events delivered: $HOOK_EVENTS, $(grep -c '"path": "/hook"' "$IT_DIR/received") requests"
    it_log "the longest run of 5xx answers to the stream: $(stream_figure max_5xx_run_ms) ms (bound: 60000)"
    [ "$(stream_figure max_5xx_run_ms)" -lt 60000 ] ||
        it_fail "the API answered 5xx for $(stream_figure max_5xx_run_ms) ms in a row"
}
t_case "the cluster loses its quorum (two of three nodes killed) during a bulk job and regains it when they come back: the API answers 503 with Retry-After meanwhile, never 500, and 200 once the component is Primary again; the job completes, each address with one result and one charge" t_quorum

# ---- a new cluster bootstrapped from case 4's backup (README, "High
# availability": every node stopped, the backup restored on node 1 with its
# Galera settings and started as a new cluster, the others emptied and
# joining by SST, node 1's address set back to the full list)
api_ok_on() { on "$1" GET /v1/credits && [ "$HTTP_STATUS" = 200 ]; }
t_bootstrap_from_backup() {
    local bdir=$IT_DIR/backup k t0=$EPOCHREALTIME
    [ -n "$BACKUP_JOB" ] && [ -d "$bdir" ] || { it_fail "no backup from case 4"; return 1; }
    for k in 3 2 1; do stack_mariadb_stop "$IT_DIR/g$k"; done
    mv "$IT_DIR/g1/data" "$IT_DIR/g1/data.old"
    mariadb-backup --defaults-file="$IT_DIR/g1/my.cnf" --copy-back --target-dir="$bdir" \
        --datadir="$IT_DIR/g1/data" > "$IT_DIR/bootstrap-restore.log" 2>&1 ||
        { it_fail "mariadb-backup --copy-back: $(tail -n 5 "$IT_DIR/bootstrap-restore.log")"; return 1; }
    galera_node 1 gcomm://
    stack_mariadb_start "$IT_DIR/g1" ||
        { it_fail "node 1 did not start a cluster from the backup: $(tail -n 5 "$IT_DIR/g1/mariadbd.err")"; return 1; }
    for k in 2 3; do
        mv "$IT_DIR/g$k/data" "$IT_DIR/g$k/data.old"
        mkdir -m 0700 "$IT_DIR/g$k/data" && chown nobody "$IT_DIR/g$k/data"
        galera_node "$k" "$GCOMM"
        stack_mariadb_start "$IT_DIR/g$k" ||
            { it_fail "node $k did not join the new cluster: $(tail -n 5 "$IT_DIR/g$k/mariadbd.err")"; return 1; }
    done
    galera_node 1 "$GCOMM"
    it_wait_until 60 "for a cluster of 3" cluster_size_is 1 3 || return 1
    for k in 1 2 3; do it_wait_until 60 "for node $k to be Synced" node_synced "$k" || return 1; done
    it_log "a cluster of 3 from the backup in $(it_seconds_since "$t0") s"
    # the hosts, not restarted, answer from it
    for k in a b; do it_wait_until 60 "for host $k to answer 200" api_ok_on "$k" || return 1; done
    # it holds the backup's moment: nothing of case 5 (its job came
    # after), case 4's job half done as it was; the workers finish that
    # job once the leases it had then have expired, each address once
    expect_eq "jobs named quorum (made after the backup)" 0 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE name = 'quorum'")"
    it_wait_until 120 "for the backup's half-done job to complete" job_done "$BACKUP_JOB" ||
        { it_sql "SELECT status, processed_emails FROM jobs WHERE id = '$BACKUP_JOB'"; return 1; }
    expect_eq "the backup's job: rows done with a result, processed" "$BACKUP_N $BACKUP_N" \
        "$(it_sql "SELECT (SELECT COUNT(*) FROM job_emails WHERE job_id = j.id AND state = 'done' AND classification IS NOT NULL),
                   processed_emails FROM jobs j WHERE id = '$BACKUP_JOB'" | tr '\t' ' ')"
    expect_eq "the job's charge rows and credits (charged once)" "1 $BACKUP_N" \
        "$(it_sql "SELECT COUNT(*), SUM(amount) FROM credit_ledger WHERE ref LIKE 'job:$BACKUP_JOB:%' AND kind = 'charge'" | tr '\t' ' ')"
    for k in "$ACC" "$BACKUP_ACC2"; do
        expect_eq "svcadm credits check $k" ok "$(svcadm credits check "$k" 2> "$IT_DIR/credits-check.err")" ||
            cat "$IT_DIR/credits-check.err"
    done
}
t_case "a new cluster bootstrapped from the backup of case 4 (restored on node 1, started as a new cluster, nodes 2 and 3 emptied and joining by SST): both hosts answer from it without a restart, it holds the backup's moment, and the half-done job completes, each address once, charged once" t_bootstrap_from_backup


t_done
