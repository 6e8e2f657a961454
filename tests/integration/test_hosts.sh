#!/bin/bash
# test_hosts.sh: several hosts on one MariaDB, as README "Several hosts"
# describes them. Two hosts, a (127.0.0.2) and b (127.0.0.3), each with its
# own svc.conf, run_dir and log, its own lighttpd spawning svc-api and its
# own svc-worker daemon; one MariaDB, unbound with the test zones and the
# fake SMTP server (127.0.0.31, a little slow per flight, so that a chunk
# outlasts a poll) shared. It proves that a bulk job made on one host and a
# batch job made on the other complete with their chunks finished by both
# workers (job_chunks.done_by), that a rate limit holds exactly over
# requests spread on both hosts, that a key revoked through one host is
# refused by the other once the revocation has answered (it waits
# auth_cache_ms), and that one host's worker killed (SIGKILL) mid-job loses
# nothing: the other finishes the job after the lease, every address once,
# one charge.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require timeout lighttpd

WORKER=$top_builddir/src/worker/svc-worker
[ -x "$WORKER" ] || it_skip "$WORKER is not built"

mail_env_dns
SMTP_PORT=$(stack_free_port)
fake 127.0.0.31 flight_delay_ms=250
mail_env_lists
mail_env_conf
it_conf_add "auth_cache_ms = 2000
worker_poll_interval = 1
worker_lease_seconds = 5
worker_concurrency = 4
worker_domain_concurrency = 4
worker_rcpts_per_session = 25"
it_stack_start --db-only

declare -A URL OWNER
# host_start NAME ADDRESS: the host's svc.conf (the stack's, with its own
# base_url, log_file and run_dir), lighttpd on ADDRESS and a svc-worker
host_start() {
    local h=$1 ip=$2 port dir=$IT_DIR/$1
    port=$(stack_free_port)
    mkdir -p "$dir/run"
    sed -e "s|^base_url = .*|base_url = http://$ip:$port|" \
        -e "s|^log_file = .*|log_file = $dir/svc.log|" "$SVC_CONF" > "$dir/svc.conf"
    echo "run_dir = $dir/run" >> "$dir/svc.conf"
    STACK_HOST=$ip stack_lighttpd_start "$dir/lighttpd" "$port" "$(it_api)" "$dir/svc.conf" ||
        { echo "Bail out! lighttpd of host $h"; exit 1; }
    URL[$h]=http://$ip:$port
    worker_start "$h"
}
worker_start() {
    stack_proc_start "$IT_DIR/$1" worker "$WORKER" -c "$IT_DIR/$1/svc.conf" ||
        { echo "Bail out! svc-worker of host $1"; exit 1; }
    OWNER[$1]=$(hostname):$(stack_pidfile_pid "$IT_DIR/$1/worker.pid")
}
host_start a 127.0.0.2
host_start b 127.0.0.3

it_show_logs() {
    local f
    for f in "$IT_DIR"/{a,b}/svc.log "$IT_DIR"/{a,b}/worker.log "$IT_DIR"/{a,b}/lighttpd/error.log \
            "$IT_DIR/mariadb/mariadbd.err"; do
        [ -s "$f" ] || continue
        echo "# --- last lines of $f"
        tail -n 25 "$f" | sed 's/^/# /'
    done
}

# on HOST METHOD PATH [BODY]: http on that host
on() { local h=$1; shift; BASE_URL=${URL[$h]} http "$@"; }
job_field() { it_sql "SELECT $2 FROM jobs WHERE id = '$1'"; }
# emails FROM TO: "user<N>@sharedD.svc.test" for N in FROM..TO and each
# of the six domains (all at the fake server), as a JSON array's inside
emails() { local d; for d in 1 2 3 4 5 6; do printf '"user%d@shared'$d'.svc.test",' $(seq "$1" "$2"); done | sed 's/,$//'; }
# wait_done JOB SECONDS: until the job completed
wait_done() {
    local i
    for i in $(seq 1 $(( $2 * 5 ))); do
        [ "$(job_field "$1" status)" = completed ] && return 0
        sleep 0.2
    done
    it_fail "job $1 is $(job_field "$1" status) after $2 s ($(job_field "$1" processed_emails) processed)"
}
# check_once JOB TOTAL: every address has one result, the counts agree,
# one charge of TOTAL credits
check_once() {
    local id=$1 n=$2
    expect_eq "$id rows" "$n" "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state = 'done'")" || return 1
    expect_eq "$id distinct addresses" "$n" "$(it_sql "SELECT COUNT(DISTINCT email) FROM job_emails WHERE job_id = '$id'")"
    expect_eq "$id processed_emails" "$n" "$(job_field "$id" processed_emails)"
    expect_eq "$id valid" "$n" "$(job_field "$id" count_valid)"
    expect_eq "$id charges" 1 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$id:charge%'")"
    expect_eq "$id charged" "$n" "$(it_sql "SELECT COALESCE(SUM(amount), 0) FROM credit_ledger WHERE ref LIKE 'job:$id:charge%'")"
    expect_eq "$id refunds" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE kind = 'refund' AND ref LIKE 'job:$id:%'")"
}
# done_by JOB: the owners that finished the job's chunks, "host:pid" sorted
done_by() { it_sql "SELECT DISTINCT done_by FROM job_chunks WHERE job_id = '$1' ORDER BY done_by" | tr '\n' ' ' | sed 's/ $//'; }

ACC=$(it_account pro 100000)
API_KEY=$(it_key "$ACC" '*')
BOTH=$(printf '%s\n' "${OWNER[a]}" "${OWNER[b]}" | sort | tr '\n' ' ' | sed 's/ $//')

t_split() {
    local bulk batch
    on a POST /v1/verify/bulk "{\"emails\":[$(emails 1000 1199)]}"
    expect_status 202 || return 1
    bulk=$(json .job_id)
    on b POST /v1/verify/batch "{\"emails\":[$(emails 2000 2199)]}"
    expect_status 201 || return 1
    batch=$(json '.job_id // .id')
    wait_done "$bulk" 90 && wait_done "$batch" 90 || return 1
    check_once "$bulk" 1200 && check_once "$batch" 1200 || return 1
    expect_eq "bulk chunks done by" "$BOTH" "$(done_by "$bulk")"
    expect_eq "batch chunks done by" "$BOTH" "$(done_by "$batch")"
    # each host reads the other's job
    on b GET "/v1/jobs/$bulk"
    expect_status 200 && expect_json .status completed
    on a GET "/v1/verify/batch/$batch"
    expect_status 200 && expect_json .status completed
    svcadm credits check "$ACC" > "$IT_DIR/credits-check.out" 2>&1 || it_fail "svcadm credits check: $(cat "$IT_DIR/credits-check.out")"
}
t_case "a bulk job made on host a and a batch job made on host b complete, their chunks finished by both hosts' workers, each address once, one charge" t_split

t_rate_limit() {
    local acc key i h got=
    acc=$(it_account pro 10)
    key=$(it_key "$acc" '*' --rate-limit 10)
    for i in $(seq 1 14); do
        h=a; [ $((i % 2)) = 0 ] && h=b
        API_KEY=$key on $h GET /v1/credits || return 1
        got="$got $HTTP_STATUS"
        [ "$i" = 10 ] && { expect_header X-RateLimit-Remaining 0 || return 1; }
    done
    expect_eq "statuses of 14 requests alternating between hosts" \
        " 200 200 200 200 200 200 200 200 200 200 429 429 429 429" "$got"
}
t_case "a key's limit of 10 a minute holds exactly over requests alternating between the hosts" t_rate_limit

t_revoke() {
    local acc admin victim vid t0 t1 i got=
    acc=$(it_account pro 10)
    admin=$(it_key "$acc" '*')
    victim=$(it_key "$acc" '*' 2> "$IT_DIR/victim.err")
    vid=$(sed -n 's/^key id \([^ ]*\) .*/\1/p' "$IT_DIR/victim.err")
    # host b's responders have the key cached (api_workers = 2)
    for i in 1 2 3 4; do API_KEY=$victim on b GET /v1/credits; expect_status 200 || return 1; done
    t0=$(date +%s%N)
    API_KEY=$admin on a DELETE "/v1/keys/$vid"
    t1=$(date +%s%N)
    expect_status 200 || return 1
    [ $(( (t1 - t0) / 1000000 )) -ge 2000 ] ||
        it_fail "the revocation answered after $(( (t1 - t0) / 1000000 )) ms, before auth_cache_ms (2000)"
    for i in 1 2 3 4; do API_KEY=$victim on b GET /v1/credits; got="$got $HTTP_STATUS"; done
    expect_eq "host b once the revocation on a has answered" " 401 401 401 401" "$got"
    API_KEY=$admin on b GET /v1/credits
    expect_status 200
}
t_case "a key revoked through host a is refused by every responder of host b once the revocation answered (after auth_cache_ms)" t_revoke

t_kill() {
    local id i pid
    fake_set 127.0.0.31 flight_delay_ms=100
    on b POST /v1/verify/bulk "{\"emails\":[$(emails 3000 3199)]}"
    expect_status 202 || return 1
    id=$(json .job_id)
    # host a's worker is killed while it holds chunks of the job, results
    # in: it is stopped (SIGSTOP) while its chunks are read, so that none
    # can end between the look and the kill; let go again if it holds none
    pid=$(stack_pidfile_pid "$IT_DIR/a/worker.pid")
    : > "$IT_DIR/held"
    for i in $(seq 1 300); do
        kill -STOP "$pid"
        it_sql "SELECT chunk FROM job_chunks WHERE job_id = '$id' AND state = 'leased' AND lease_owner = '${OWNER[a]}'" > "$IT_DIR/held"
        [ -s "$IT_DIR/held" ] && [ "$(job_field "$id" processed_emails)" -ge 50 ] && break
        : > "$IT_DIR/held"
        kill -CONT "$pid"
        sleep 0.1
    done
    [ -s "$IT_DIR/held" ] || { kill -CONT "$pid"; it_fail "host a's worker never held a chunk of the job"; return 1; }
    kill -KILL "$pid"
    for i in $(seq 1 100); do stack_alive "$pid" || break; sleep 0.05; done
    it_log "killed host a's worker holding chunks $(tr '\n' ' ' < "$IT_DIR/held")at $(job_field "$id" processed_emails) of 1200"
    [ "$(job_field "$id" status)" != completed ] || it_fail "the job completed before the kill" || return 1
    wait_done "$id" 90 || return 1
    check_once "$id" 1200 || return 1
    for i in $(cat "$IT_DIR/held"); do
        expect_eq "chunk $i (held by the killed worker) finished by" "${OWNER[b]}" \
            "$(it_sql "SELECT done_by FROM job_chunks WHERE job_id = '$id' AND chunk = $i")"
    done
    expect_eq "job.completed events" 1 "$(it_sql "SELECT COUNT(*) FROM event_outbox WHERE job_id = '$id' AND event = 'job.completed'")"
    stack_proc_stop "$IT_DIR/a" worker
}
t_case "host a's worker killed mid-job: host b's worker finishes its chunks after the lease, each address once, one charge" t_kill

t_status() {
    local out
    # both workers wrote heartbeats; the killed one is still "seen" within
    # the window, which is what the window is for
    out=$(svcadm status --json) || it_fail "svcadm status: $out"
    expect_eq "workers seen" 2 "$(printf '%s' "$out" | jq -r .workers.seen)"
    expect_eq "their owners" "$BOTH" "$(printf '%s' "$out" | jq -r '[.workers.list[].owner] | sort | join(" ")')"
}
t_case "svcadm status sees both hosts' workers" t_status

t_done
