#!/bin/bash
# test_status.sh: "svcadm status" against the real MariaDB of the stack:
# the schema version, the job queue (jobs made through the API), the
# workers seen (the heartbeat rows svc-worker writes, daemon or --once,
# refreshed while a daemon idles, deleted by housekeeping once a day old),
# the outbox backlog, text and --json output, and the exit status a monitor
# reads: 0 healthy, 1 when a limit (setting or option) is passed, when the
# schema is behind or when the database cannot be reached.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require timeout

WORKER=$top_builddir/src/worker/svc-worker
[ -x "$WORKER" ] || it_skip "$WORKER is not built"

# No mail servers: the jobs here stay queued (the worker runs with nothing to
# claim), and a resolver that nobody answers is enough for its engine.
mail_env_lists
it_conf_add "lists_dir = $IT_DIR/lists
dns_resolver = 127.0.0.1:9
service_domain = svc.example
worker_poll_interval = 1"
it_stack_start

ACC=$(it_account pro 1000)
API_KEY=$(it_key "$ACC" '*')

# status ARGS...: runs svcadm status, keeps its output in OUT and its exit
# status in RC
status() {
    set +e
    OUT=$(svcadm status "$@" 2> "$IT_DIR/status.err")
    RC=$?
    set -e
}
# sj FILTER: jq -r FILTER on the last --json output
sj() { printf '%s' "$OUT" | jq -r "$1"; }

t_no_worker() {
    local v
    status
    expect_eq "exit status without any worker" 1 "$RC"
    case $OUT in *"problem: workers: 0 seen in the last 120 s, status_min_workers is 1"*) ;;
    *) it_fail "no workers problem in: $OUT" ;; esac
    # (the build's version: the last migration's, which the stack applied)
    v=$(build_schema)
    case $OUT in *"status: unhealthy"*"schema: $v (this build needs $v)"*) ;;
    *) it_fail "status or schema line missing: $OUT" ;; esac
    status --min-workers 0
    expect_eq "exit status with --min-workers 0" 0 "$RC"
    case $OUT in *"status: healthy"*) ;; *) it_fail "not healthy: $OUT" ;; esac
    case $OUT in *problem:*) it_fail "a problem left: $OUT" ;; esac
}
t_case "no worker seen: exit 1 naming the workers check; --min-workers 0 makes it healthy (exit 0)" t_no_worker

t_worker_once() {
    local owner
    timeout 60 "$WORKER" --once -c "$SVC_CONF" 2>> "$IT_DIR/log/worker-stderr.log" ||
        it_fail "svc-worker --once failed" || return 1
    status --json
    expect_eq "exit status after a --once run" 0 "$RC" || return 1
    expect_eq "healthy" true "$(sj .healthy)"
    expect_eq "workers seen" 1 "$(sj .workers.seen)"
    expect_eq "mode" once "$(sj '.workers.list[0].mode')"
    owner=$(sj '.workers.list[0].owner')
    expect_eq "owner is host:pid" "$(hostname):$(sj '.workers.list[0].pid')" "$owner"
    expect_eq "version" "$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"/\1/p' "$top_builddir/config.h")" \
        "$(sj '.workers.list[0].version')"
    expect_eq "schema" "$(build_schema) $(build_schema)" "$(sj '"\(.schema.version) \(.schema.needed)"')"
    expect_eq "problems" 0 "$(sj '.problems | length')"
}
t_case "a svc-worker --once run is seen (host:pid, mode once, version) and the service is healthy (--json)" t_worker_once

t_window() {
    it_sql "UPDATE worker_heartbeats SET seen_at = UTC_TIMESTAMP(3) - INTERVAL 300 SECOND"
    status --json
    expect_eq "exit status once the worker is 300 s old" 1 "$RC"
    expect_eq "seen" 0 "$(sj .workers.seen)"
    expect_eq "failed check" workers "$(sj '.problems[0].check')"
    status --json --worker-window 600
    expect_eq "exit status with --worker-window 600" 0 "$RC"
    expect_eq "seen within 600 s" 1 "$(sj .workers.seen)"
    # a worker row older than a day goes at the next housekeeping (a --once
    # run does housekeeping first), which writes its own row
    it_sql "UPDATE worker_heartbeats SET seen_at = UTC_TIMESTAMP(3) - INTERVAL 2 DAY"
    timeout 60 "$WORKER" --once -c "$SVC_CONF" 2>> "$IT_DIR/log/worker-stderr.log" || it_fail "svc-worker --once failed"
    expect_eq "rows older than a day" 0 "$(it_sql "SELECT COUNT(*) FROM worker_heartbeats WHERE seen_at < UTC_TIMESTAMP(3) - INTERVAL 1 DAY")"
    expect_eq "rows" 1 "$(it_sql "SELECT COUNT(*) FROM worker_heartbeats")"
}
t_case "a worker counts within status_worker_window only (--worker-window); housekeeping deletes rows a day old" t_window

t_queue() {
    local job
    http POST /v1/verify/bulk "{\"emails\":[$(printf '"a%d@queue.svc.test",' $(seq 1 450))\"b@queue2.svc.test\"]}"
    expect_status 202 || return 1
    job=$(json .job_id)
    status --json --min-workers 0
    expect_eq "exit status with a fresh job" 0 "$RC"
    expect_eq "pending jobs" 1 "$(sj .jobs.pending)"
    expect_eq "pending chunks" "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$job'")" "$(sj .chunks.pending)"
    [ "$(sj .chunks.pending)" -ge 3 ] || it_fail "451 addresses in fewer than 3 chunks"
    [ "$(sj .jobs.oldest_age_seconds)" -le 5 ] || it_fail "a fresh job is $(sj .jobs.oldest_age_seconds) s old"
    status --min-workers 0 --max-queue 2
    expect_eq "exit status with --max-queue 2" 1 "$RC"
    case $OUT in *"problem: queue: $(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$job'") chunks waiting, status_max_queue is 2"*) ;;
    *) it_fail "no queue problem: $OUT" ;; esac
    # a chunk leased by a worker that died: leased and past its lease
    it_sql "UPDATE job_chunks SET state = 'leased', lease_owner = 'gone:1', lease_expires = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE job_id = '$job' AND chunk = 0"
    status --json --min-workers 0
    expect_eq "leased" 1 "$(sj .chunks.leased)"
    expect_eq "past their lease" 1 "$(sj .chunks.lease_expired)"
    expect_eq "not before a later time" 0 "$(sj .chunks.later)"
    # one handed back (or a greylisted retry's) until a later time
    it_sql "UPDATE job_chunks SET not_before = UTC_TIMESTAMP(3) + INTERVAL 1 HOUR WHERE job_id = '$job' AND chunk = 1"
    status --min-workers 0
    case $OUT in *"chunks: $(it_sql "SELECT COUNT(*) - 1 FROM job_chunks WHERE job_id = '$job'") pending (1 of them not before a later time), 1 leased, 1 past their lease"*) ;;
    *) it_fail "chunks line: $OUT" ;; esac
    status --json --min-workers 0
    expect_eq "not before a later time (JSON)" 1 "$(sj .chunks.later)"
    it_sql "UPDATE jobs SET created_at = UTC_TIMESTAMP(3) - INTERVAL 7200 SECOND WHERE id = '$job'"
    status --json --min-workers 0
    expect_eq "exit status with a job 2 h old (status_max_job_age 3600)" 1 "$RC"
    expect_eq "failed check" job_age "$(sj '[.problems[].check] | join(",")')"
    [ "$(sj .jobs.oldest_age_seconds)" -ge 7200 ] || it_fail "oldest age $(sj .jobs.oldest_age_seconds)"
    status --min-workers 0 --max-job-age 0
    expect_eq "exit status with --max-job-age 0 (no check)" 0 "$RC"
    # waiting for the customer's confirmation is not waiting for a worker
    it_sql "UPDATE jobs SET status = 'awaiting_confirmation' WHERE id = '$job'"
    status --json --min-workers 0
    expect_eq "exit status with the job awaiting confirmation" 0 "$RC"
    expect_eq "awaiting" 1 "$(sj .jobs.awaiting_confirmation)"
    expect_eq "oldest queued" null "$(sj .jobs.oldest_age_seconds)"
    it_sql "UPDATE jobs SET status = 'cancelled' WHERE id = '$job'; UPDATE job_chunks SET state = 'done' WHERE job_id = '$job'"
}
t_case "queue: pending jobs and chunks counted, leased chunks past their lease shown; --max-queue and status_max_job_age make it unhealthy" t_queue

t_outbox() {
    it_sql "INSERT INTO event_outbox (id, account_id, job_id, event, payload, created_at)
        VALUES ('evt_status1', '$ACC', 'job_status1', 'job.completed', '{}', UTC_TIMESTAMP(3) - INTERVAL 900 SECOND)"
    it_sql "INSERT INTO event_deliveries (id, event_id, event, account_id, receiver, url, host, payload, state, next_attempt_at, created_at)
        VALUES ('dlv_status1', 'evt_status0', 'job.completed', '$ACC', 'wh_1', 'https://x.example/', 'x.example', '{}', 'pending', UTC_TIMESTAMP(3) - INTERVAL 60 SECOND, UTC_TIMESTAMP(3)),
               ('dlv_status2', 'evt_status0', 'job.completed', '$ACC', 'wh_2', 'https://x.example/', 'x.example', '{}', 'pending', UTC_TIMESTAMP(3) + INTERVAL 1 HOUR, UTC_TIMESTAMP(3)),
               ('dlv_status3', 'evt_status0', 'job.completed', '$ACC', 'wh_3', 'https://x.example/', 'x.example', '{}', 'delivered', NULL, UTC_TIMESTAMP(3))"
    status --json --min-workers 0
    expect_eq "exit status with an event 900 s undelivered (status_max_outbox_age 600)" 1 "$RC"
    expect_eq "failed check" outbox "$(sj '[.problems[].check] | join(",")')"
    expect_eq "undelivered events" 1 "$(sj .outbox.events_undelivered)"
    [ "$(sj .outbox.oldest_event_age_seconds)" -ge 900 ] || it_fail "event age $(sj .outbox.oldest_event_age_seconds)"
    expect_eq "deliveries waiting (pending, not delivered)" 2 "$(sj .outbox.deliveries_waiting)"
    expect_eq "deliveries due" 1 "$(sj .outbox.deliveries_due)"
    [ "$(sj .outbox.oldest_due_age_seconds)" -ge 60 ] || it_fail "due age $(sj .outbox.oldest_due_age_seconds)"
    status --min-workers 0 --max-outbox-age 1000
    expect_eq "exit status with --max-outbox-age 1000" 0 "$RC"
    status --min-workers 0 --max-outbox-age 30
    expect_eq "exit status with --max-outbox-age 30" 1 "$RC"
    it_sql "UPDATE event_outbox SET delivered_at = UTC_TIMESTAMP(3)"
    status --json --min-workers 0 --max-outbox-age 30
    expect_eq "a delivery due 60 s is still over 30 s" 1 "$RC"
    it_sql "DELETE FROM event_deliveries WHERE id LIKE 'dlv_status%'"
    status --min-workers 0 --max-outbox-age 30
    expect_eq "exit status once the outbox is empty" 0 "$RC"
}
t_case "outbox: undelivered events and due deliveries counted with their age; status_max_outbox_age makes it unhealthy" t_outbox

t_daemon() {
    local i seen
    stack_proc_start "$IT_DIR/log" worker "$WORKER" -c "$SVC_CONF" || return 1
    for i in $(seq 1 50); do
        [ "$(it_sql "SELECT COUNT(*) FROM worker_heartbeats WHERE mode = 'daemon'")" = 1 ] && break
        sleep 0.2
    done
    it_sql "UPDATE worker_heartbeats SET seen_at = UTC_TIMESTAMP(3) - INTERVAL 1 HOUR"
    # an idle daemon writes its row every 10 s (HEARTBEAT_SECONDS)
    for i in $(seq 1 80); do
        seen=$(it_sql "SELECT TIMESTAMPDIFF(SECOND, seen_at, UTC_TIMESTAMP(3)) FROM worker_heartbeats WHERE mode = 'daemon'")
        [ "$seen" -le 5 ] && break
        sleep 0.25
    done
    status --json
    stack_proc_stop "$IT_DIR/log" worker
    expect_eq "exit status with an idle daemon" 0 "$RC"
    expect_eq "workers seen" 1 "$(sj .workers.seen)"
    expect_eq "mode" daemon "$(sj '.workers.list[0].mode')"
    expect_eq "pid" "$(sj '.workers.list[0].owner' | sed 's/.*://')" "$(sj '.workers.list[0].pid')"
}
t_case "an idle svc-worker daemon refreshes its row within seconds and is seen" t_daemon

t_schema_behind() {
    local v p
    # the build's version is the last migration's; one before it
    v=$(build_schema)
    p=$(it_sql "SELECT MAX(version) FROM schema_version WHERE version < $v")
    it_sql "DELETE FROM schema_version WHERE version = $v"
    status --json
    it_sql "INSERT INTO schema_version (version, applied_at) VALUES ($v, UTC_TIMESTAMP(3))"
    expect_eq "exit status with the schema at $p" 1 "$RC"
    expect_eq "failed check" schema "$(sj '[.problems[].check] | join(",")')"
    expect_eq "message" "the schema is at version $p, this build needs $v: run svcadm db migrate" "$(sj '.problems[0].message')"
}
t_case "a schema behind the build: exit 1, the schema check says to migrate" t_schema_behind

t_db_down() {
    local conf=$IT_DIR/down.conf
    sed "s|^db_socket = .*|db_socket = $IT_DIR/no-such.sock|" "$SVC_CONF" > "$conf"
    set +e
    OUT=$("$top_builddir/src/admin/svcadm" -c "$conf" status --json 2> "$IT_DIR/status.err")
    RC=$?
    set -e
    expect_eq "exit status without a database" 1 "$RC"
    expect_eq "healthy" false "$(sj .healthy)"
    [ -n "$(sj .error)" ] || it_fail "no error in $OUT"
    grep -q "svcadm: status:" "$IT_DIR/status.err" || it_fail "no message on standard error"
}
t_case "the database out of reach: exit 1, {\"healthy\": false, \"error\"} and a message" t_db_down

t_bad_option() {
    status --max-queue -1
    expect_eq "exit status of a value out of range" 1 "$RC"
    grep -q "status_max_queue" "$IT_DIR/status.err" || it_fail "the message does not name the setting: $(cat "$IT_DIR/status.err")"
}
t_case "an option out of range is refused with the setting's message" t_bad_option

t_done
