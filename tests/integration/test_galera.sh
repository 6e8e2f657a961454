#!/bin/bash
# test_galera.sh: svc on a three-node MariaDB Galera cluster on loopback
# (galera-4, own ports, datadirs and gcomm addresses, SST by rsync), with
# svc-api and one svc-worker using db_hosts over the three. The cluster is
# started once for every case. A bulk job runs while the node the programs
# use is killed (SIGKILL by pid): the job completes with one result per
# address, the ledger charges each address once, and the API keeps
# answering (200, or at worst 503 with Retry-After, never 500). A backup
# taken with mariadb-backup from the node in use while a job runs, restored
# on a single server without wsrep, holds a ledger that matches its totals
# and the half-done job as it was. Two of the three nodes killed during a
# job: the API answers 503 with Retry-After while the survivor is not
# Primary (how long is measured and printed), the cluster forms again when
# they are restarted, and the job completes, each address charged once.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
WORKER=$top_builddir/src/worker/svc-worker
GALERA=/usr/lib/galera/libgalera_smm.so
[ -x "$WORKER" ] || it_skip "$WORKER is not built"
[ -r "$GALERA" ] || it_skip "$GALERA is missing (apt-get install galera-4)"
it_require rsync mariadbd lighttpd mariadb-backup
[ -x "$(it_api)" ] || it_skip "$(it_api) is not built"

mail_env_dns
SMTP_PORT=$(stack_free_port)
fake 127.0.0.30 hold=1
mail_env_lists
mail_env_conf
it_conf_add "worker_poll_interval = 1"
# every request reads its key from the database (a causal read on Galera,
# wsrep_sync_wait), not from the responder's one-second cache: what a node
# answers while it loses its quorum is seen at each request
it_conf_add "auth_cache_ms = 0"
# chunks a worker could not finish while the database was unavailable are
# taken up again 5 s after, not 120 (the default)
it_conf_add "worker_lease_seconds = 5"

# ---- the cluster: node 1 bootstraps it, 2 and 3 join by SST
declare -a GPORT DBPORT
for n in 1 2 3; do
    GPORT[$n]=$(stack_free_port)
done
GCOMM="gcomm://127.0.0.1:${GPORT[1]},127.0.0.1:${GPORT[2]},127.0.0.1:${GPORT[3]}"

# galera_node N ADDRESS: IT_DIR/gN from the template datadir, with the wsrep
# settings and the cluster address ADDRESS
galera_node() {
    local n=$1 dir=$IT_DIR/g$1
    if [ "$n" = 1 ]; then
        [ -d "$dir/data" ] || it_db_from_template "$dir"
    elif [ ! -d "$dir/data" ]; then
        # a joiner starts empty and gets everything by SST; the rsync
        # daemon that receives it runs as nobody
        mkdir -p "$dir/tmp" && mkdir -m 0700 "$dir/data" &&
            chown nobody "$dir/data"
        stack_free_port > "$dir/port"
        stack_mariadb_write_cnf "$dir" "$(cat "$dir/port")"
    fi
    DBPORT[$n]=$(cat "$dir/port")
    sed -i '/^\[galera\]/,$d' "$dir/my.cnf"
    cat >> "$dir/my.cnf" <<CNF
[galera]
wsrep_on = ON
wsrep_provider = $GALERA
wsrep_cluster_name = svc_test
wsrep_cluster_address = $2
wsrep_node_name = g$n
wsrep_node_address = 127.0.0.1:${GPORT[$n]}
wsrep_node_incoming_address = 127.0.0.1:${DBPORT[$n]}
wsrep_sst_method = rsync
wsrep_sst_receive_address = 127.0.0.1:$(stack_free_port)
wsrep_provider_options = "gmcast.listen_addr=tcp://127.0.0.1:${GPORT[$n]};ist.recv_addr=127.0.0.1:$(stack_free_port);gcache.size=64M;evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT3S;evs.inactive_check_period=PT0.5S;pc.wait_prim_timeout=PT5S"
binlog_format = ROW
innodb_autoinc_lock_mode = 2
wsrep_slave_threads = 2
CNF
}
gsql() { local n=$1; shift; stack_mariadb_sql "$IT_DIR/g$n" -N -B "$@"; }
gstatus() { gsql "$1" -e "SHOW STATUS LIKE '$2'" 2>/dev/null | cut -f2; }
cluster_size_is() { [ "$(gstatus "$1" wsrep_cluster_size)" = "$2" ]; }

T0=$SECONDS
galera_node 1 gcomm://
stack_mariadb_start "$IT_DIR/g1" || { echo "Bail out! Galera node 1 did not bootstrap"; cat "$IT_DIR/g1/mariadbd.err"; exit 1; }
stack_mariadb_create_db "$IT_DIR/g1" >/dev/null || { echo "Bail out! database on node 1"; exit 1; }
for n in 2 3; do
    galera_node $n "$GCOMM"
    stack_mariadb_start "$IT_DIR/g$n" || { echo "Bail out! Galera node $n did not join"; tail -n 30 "$IT_DIR/g$n/mariadbd.err"; exit 1; }
done
it_wait_until 30 "for a cluster of 3" cluster_size_is 1 3 || exit 1
# node 1 rejoins the others when restarted, not a new cluster
galera_node 1 "$GCOMM"
it_log "cluster of 3 up in $((SECONDS - T0)) s"

IT_STACK=yes
HTTP_PORT=$(stack_free_port)
BASE_URL=http://127.0.0.1:$HTTP_PORT
SVC_CONF=$IT_DIR/svc.conf
mkdir -p "$IT_DIR/log"
ln -s g2 "$IT_DIR/mariadb"	# it_sql and the logs: a node that stays up
(umask 077; cat > "$SVC_CONF" <<EOF
db_hosts = 127.0.0.1:${DBPORT[1]} 127.0.0.1:${DBPORT[2]} 127.0.0.1:${DBPORT[3]}
db_name = svc
db_user = svc
db_password_file = $IT_DIR/g1/db-password
cache_hash_key_file = $IT_DIR/cache_hash_key
base_url = $BASE_URL
log_level = info
log_file = $IT_DIR/log/svc.log
api_workers = 2
$IT_CONF_EXTRA
EOF
)
export SVC_CONF BASE_URL HTTP_PORT
svcadm db migrate --sql-dir "$top_srcdir/sql" > "$IT_DIR/migrate.log" 2>&1 ||
    { cat "$IT_DIR/migrate.log"; echo "Bail out! svcadm db migrate on the cluster"; exit 1; }
it_api_start
stack_proc_start "$IT_DIR" svc-worker "$WORKER" -c "$SVC_CONF" || { echo "Bail out! svc-worker"; exit 1; }
ACC=$(it_account pro 100000)
API_KEY=$(it_key "$ACC" '*')
G1PID=$(stack_pidfile_pid "$IT_DIR/g1/mariadbd.pid")

held_flights() { case $(fake_ctl 127.0.0.30 held) in held=0|"") return 1 ;; *) return 0 ;; esac; }
job_done() { [ "$(it_sql "SELECT status FROM jobs WHERE id = '$1'")" = completed ]; }
# record: HTTP_STATUS and whether a Retry-After came with it
record() { echo "$HTTP_STATUS $(printf '%s' "$HTTP_HEADERS" | grep -ci '^retry-after:')" >> "$IT_DIR/codes"; }

t_failover() {
    local n=200 body job codes bad
    body=$(seq 1 $n | sed 's/.*/u&@pristine.svc.test/' | jq -R . | jq -sc '{name: "galera", emails: .}')
    http POST /v1/verify/bulk "$body"
    expect_status 202 || return 1
    job=$(json .job_id)
    # the job is under way: svc-worker's SMTP sessions wait at the fake server
    it_wait_until 30 "for held SMTP flights" held_flights || return 1
    expect_eq "svc connections on node 1 (the first listed)" yes \
        "$(gsql 1 -e "SELECT IF(COUNT(*) > 0, 'yes', 'no') FROM information_schema.processlist WHERE user = 'svc'")"
    kill -9 "$G1PID"
    # requests during the failover, then the held sessions go on
    : > "$IT_DIR/codes"
    for _ in $(seq 1 20); do http GET /v1/credits; record; done
    fake_set 127.0.0.30 hold=0
    it_wait_until 60 "for the job to complete" job_done "$job" ||
        { it_sql "SELECT status, processed_emails FROM jobs WHERE id = '$job'"; return 1; }
    for _ in $(seq 1 10); do http GET "/v1/jobs/$job"; record; done
    codes=$(cut -d' ' -f1 "$IT_DIR/codes" | sort | uniq -c | tr -s ' ' | paste -sd, -)
    it_log "API answers during the failover (count status): $codes"
    bad=$(awk '!($1 == 200 || ($1 == 503 && $2 > 0))' "$IT_DIR/codes" | head -3 | paste -sd, -)
    expect_eq "answers other than 200 or 503 with Retry-After" "" "$bad"
    expect_eq "addresses with a result" "$n" \
        "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$job' AND state = 'done' AND classification IS NOT NULL")"
    expect_eq "the job's charge rows and credits (charged once)" "1 $n" \
        "$(it_sql "SELECT COUNT(*), SUM(amount) FROM credit_ledger WHERE ref LIKE 'job:$job:%' AND kind = 'charge'" | tr '\t' ' ')"
    expect_eq "ledger totals" ok "$(svcadm credits check "$ACC")"
    grep -q 'event=db_endpoint endpoint=127.0.0.1:' "$IT_DIR/log/svc.log" ||
        it_fail "no program logged its move to another endpoint"
}
t_case "a bulk job runs on while the node its programs use is killed (SIGKILL): it completes, each address charged once, the API answers 200 or 503 with Retry-After" t_failover

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
    mariadb-backup --defaults-file="$rdir/my.cnf" --move-back --target-dir="$bdir" \
        --datadir="$rdir/data" > "$IT_DIR/restore.log" 2>&1 ||
        { it_fail "mariadb-backup --move-back: $(tail -n 5 "$IT_DIR/restore.log")"; return 1; }
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
    rm -rf "$bdir" "$rdir/data"
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
    local n=100 body job key watch pwatch used survivor dead=() k pid t_kill t_lost t_prim bad \
        first last back gap codes=$IT_DIR/quorum.codes
    # three nodes (case 2 stopped node 3)
    for k in 1 2 3; do
        node_synced "$k" 2>/dev/null && continue
        stack_mariadb_start "$IT_DIR/g$k" || { it_fail "node $k did not start"; return 1; }
    done
    for k in 1 2 3; do it_wait_until 60 "for node $k to be Synced in a cluster of 3" sh -c "
        [ \"\$(mariadb --no-defaults --socket='$IT_DIR/g$k/mariadb.sock' -uroot -N -B -e \"SHOW STATUS LIKE 'wsrep_cluster_size'\" | cut -f2)\" = 3 ]" || return 1; done
    key=$(it_key "$ACC" '*' --rate-limit 100000) || return 1
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
    prim_watch "$survivor" "$IT_DIR/quorum.stop" > "$IT_DIR/quorum.prim" &
    pwatch=$!
    it_wait_until 30 "for the API's first answer" test -s "$codes" ||
        { touch "$IT_DIR/quorum.stop"; wait "$watch" "$pwatch"; return 1; }
    t_kill=${EPOCHREALTIME/./}
    for k in "${dead[@]}"; do
        pid=$(stack_pidfile_pid "$IT_DIR/g$k/mariadbd.pid") && kill -9 "$pid"
        it_wait_until 30 "for node $k to die" node_gone "$pid"
    done
    it_wait_until 60 "for node $survivor to lose the Primary component" sh -c "
        [ \"\$(mariadb --no-defaults --socket='$IT_DIR/g$survivor/mariadb.sock' -uroot -N -B -e \"SHOW STATUS LIKE 'wsrep_cluster_status'\" | cut -f2)\" = non-Primary ]" ||
        { touch "$IT_DIR/quorum.stop"; wait "$watch" "$pwatch"; return 1; }
    it_wait_until 60 "for the API to answer 503" api_answered_503 ||
        { touch "$IT_DIR/quorum.stop"; wait "$watch" "$pwatch"; return 1; }
    # the held SMTP sessions end while there is no Primary component
    fake_set 127.0.0.30 hold=0
    # the killed nodes come back
    for k in "${dead[@]}"; do node_rejoin "$k"; done
    it_wait_until 120 "for a Primary component again" node_primary "$survivor" ||
        { touch "$IT_DIR/quorum.stop"; wait "$watch" "$pwatch"; return 1; }
    it_wait_until 60 "for the API to answer 200 again" api_answers_200_since "${EPOCHREALTIME/./}"
    touch "$IT_DIR/quorum.stop"
    wait "$watch" "$pwatch"
    for k in "${dead[@]}"; do
        it_wait_until 60 "for node $k to be Synced" node_synced "$k" || return 1
    done
    # the statuses: 200 or 503 with Retry-After, never another
    it_log "API answers from the kill on (count status): $(awk -v t="$t_kill" '$1 >= t { print $2 }' "$codes" | sort | uniq -c | tr -s ' ' | paste -sd, -)"
    bad=$(awk '!($2 == 200 || ($2 == 503 && $3 > 0))' "$codes" | head -3 | paste -sd, -)
    expect_eq "answers other than 200 or 503 with Retry-After" "" "$bad"
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
    it_log "the slowest answer to GET /v1/credits: $(sed -n 's|.*path="/v1/credits" status=\([0-9]*\) ms=\([0-9]*\).*|\2 ms (\1)|p' "$IT_DIR/log/svc.log" | sort -n | tail -n 1)"
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
    expect_eq "ledger totals" ok "$(svcadm credits check "$ACC")"
}
t_case "the cluster loses its quorum (two of three nodes killed) during a bulk job and regains it when they come back: the API answers 503 with Retry-After meanwhile, never 500, and 200 once the component is Primary again; the job completes, each address with one result and one charge" t_quorum

t_done
