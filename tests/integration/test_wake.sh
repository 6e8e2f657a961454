#!/bin/bash
# test_wake.sh: jobs start at once. svc-worker runs as a daemon with
# worker_poll_interval = 30 and worker_wake_dir set, so that only svc-api's
# wake-up (a datagram to the worker's sockets, src/util/wake.h) can explain
# work taken up within seconds: a bulk job, a batch job, an upload (the
# upload thread reads it and computes its preview) and its confirmation
# all complete long before the next poll, and so does a job created while
# the worker is busy with another. GET /v1/jobs/{id}/progress is
# live while the job runs (processed_emails shows a chunk's end while the
# next chunk's sessions are held at the fake server).
# Without the sockets (removed, or no folder) the job is taken up at the
# next poll instead (a second daemon polling every 2 s). Verification runs
# against a fake SMTP server on loopback (tests/integration/mail_env.sh).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require timeout

WORKER=$top_builddir/src/worker/svc-worker
[ -x "$WORKER" ] || it_skip "$WORKER is not built"

mail_env_start
fake 127.0.0.30
fake 127.0.0.31
mail_env_lists
# a held session (t_busy_worker_woken) waits for its answer as long as the
# test needs
mail_env_conf smtp_reply_timeout_ms=60000
WAKE_DIR=$IT_DIR/wake
mkdir -p "$WAKE_DIR"
it_conf_add "worker_poll_interval = 30
worker_wake_dir = $WAKE_DIR
worker_concurrency = 4
worker_domain_concurrency = 2
worker_rcpts_per_session = 10"
it_stack_start

ACC=$(it_account admin 100000)
API_KEY=$(it_key "$ACC" '*')
LOG=$IT_DIR/log/svc.log

start_worker() { stack_proc_start "$IT_DIR/log" worker "$WORKER" -c "${1:-$SVC_CONF}"; }
stop_worker() { stack_proc_stop "$IT_DIR/log" worker; }

# sockets KIND: the wake-up sockets of that kind in the folder
sockets() { find "$WAKE_DIR" -name "$1-*.sock" 2>/dev/null | wc -l; }

# idle_worker: start the daemon and wait until it listens (both sockets)
# and has finished its first pass (found nothing): from then on it polls
# again only 30 s later
idle_worker() {
    local from
    from=$(wc -l < "$LOG")
    start_worker "$@" || return 1
    for _ in $(seq 1 100); do
        [ "$(sockets jobs)" -ge 1 ] && [ "$(sockets uploads)" -ge 1 ] &&
            tail -n +"$((from + 1))" "$LOG" | grep -q 'event=housekeeping ' && { sleep 0.5; return 0; }
        sleep 0.1
    done
    it_fail "svc-worker did not start listening"
}

job_field() { it_sql "SELECT $2 FROM jobs WHERE id = '$1'"; }

# wait_status ID STATUS SECONDS: the job reaches STATUS within SECONDS
# (well under the 30 s poll interval)
wait_status() {
    local i
    for i in $(seq 1 $(($3 * 5))); do
        [ "$(job_field "$1" status)" = "$2" ] && return 0
        sleep 0.2
    done
    it_fail "job $1 is $(job_field "$1" status) after $3 s, not $2"
}

# pickup ID: ms from the job's creation to its first claim (started_at)
pickup() { job_field "$1" "TIMESTAMPDIFF(MICROSECOND, created_at, started_at) DIV 1000"; }

emails() { # emails N DOMAIN: a JSON body of N addresses
    seq -w 1 "$1" | sed "s/.*/user&@$2/" | jq -R . | jq -sc '{emails: .}'
}

idle_worker || exit 1

t_bulk_starts_at_once() {
    local id
    http POST /v1/verify/bulk "$(emails 20 shared1.svc.test)"
    expect_status 202 || return 1
    id=$(json .job_id)
    wait_status "$id" completed 10 || return 1
    expect_eq "valid" 20 "$(job_field "$id" count_valid)" || return 1
    grep -q "event=wake .*what=jobs woken=1" "$LOG" || it_fail "svc-api logged no wake-up of one worker"
    it_log "bulk job: claimed $(pickup "$id") ms after its creation"
}
t_case "a bulk job is taken up at once, not at the next poll 30 s later" t_bulk_starts_at_once

t_batch_starts_at_once() {
    local id
    http POST /v1/verify/batch "$(emails 5 shared2.svc.test)"
    expect_status 201 || return 1
    id=$(json .id // .job_id)
    wait_status "$id" completed 10 || return 1
    it_log "batch job: claimed $(pickup "$id") ms after its creation"
}
t_case "a batch job is taken up at once" t_batch_starts_at_once

t_progress_live() {
    local id i p seen=0 total=400
    # two chunks of JOBS_CHUNK_SIZE (200): the first at the fake server
    # 127.0.0.30, answered at once; the second at 127.0.0.31, which holds
    # every flight until the test lets it go. So the job is surely part
    # done (200 of 400) while the test reads /progress, however slow the
    # machine, and completes once released.
    fake_set 127.0.0.31 hold=1
    http POST /v1/verify/bulk "$( { seq -w 1 200 | sed 's/.*/user&@pristine.svc.test/'
        seq -w 1 200 | sed 's/.*/user&@shared3.svc.test/'; } | jq -R . | jq -sc '{emails: .}')"
    expect_status 202 || { fake_set 127.0.0.31 hold=0; return 1; }
    id=$(json .job_id)
    for i in $(seq 1 600); do
        http GET "/v1/jobs/$id/progress"
        p=$(json .processed_emails)
        [ "$p" = 200 ] && break
        [ "$p" -le 200 ] || break
        sleep 0.1
    done
    if [ "$p" = 200 ]; then
        # read twice more while the second chunk is held: the answer stays
        for i in 1 2; do
            http GET "/v1/jobs/$id/progress"
            expect_json .status processing && expect_json .processed_emails 200 &&
                expect_json .percent 50 && seen=$((seen + 1))
        done
    fi
    [ "$(fake_ctl 127.0.0.31 held)" != held=0 ] || it_fail "the second chunk's sessions are not held at the fake server"
    fake_set 127.0.0.31 hold=0
    [ "$p" = 200 ] || { it_fail "processed_emails was $p, never 200 (the first chunk done)"; return 1; }
    [ "$seen" = 2 ] || return 1
    wait_status "$id" completed 60 || return 1
    http GET "/v1/jobs/$id/progress"
    expect_json .status completed && expect_json .processed_emails $total && expect_json .percent 100
}
t_case "GET /v1/jobs/{id}/progress is live: processed_emails grows while the job runs" t_progress_live

t_busy_worker_woken() {
    local a b sandbox i
    sandbox=$(it_key "$ACC" '*' --sandbox)
    # job A keeps the worker busy: the fake server holds every flight of
    # commands unanswered until the test lets it go, so A is surely still
    # running when B ends, however slow the machine; its one chunk is
    # claimed, so the worker's next claim waits for the 30 s poll unless
    # it is woken
    fake_set 127.0.0.31 hold=1
    http POST /v1/verify/bulk "$(emails 60 shared7.svc.test)"
    expect_status 202 || { fake_set 127.0.0.31 hold=0; return 1; }
    a=$(json .job_id)
    for i in $(seq 1 100); do
        [ "$(fake_ctl 127.0.0.31 held)" != held=0 ] && break
        sleep 0.1
    done
    [ "$(fake_ctl 127.0.0.31 held)" != held=0 ] ||
        { fake_set 127.0.0.31 hold=0; it_fail "job A's sessions never reached the fake server"; return 1; }
    API_KEY=$sandbox http POST /v1/verify/bulk '{"emails":["valid@sandbox.svc.example","invalid@sandbox.svc.example"]}'
    expect_status 202 || { fake_set 127.0.0.31 hold=0; return 1; }
    b=$(json .job_id)
    wait_status "$b" completed 10
    local rc=$?
    expect_eq "job A while job B completed" processing "$(job_field "$a" status)" || rc=1
    fake_set 127.0.0.31 hold=0
    wait_status "$a" completed 60 || return 1
    [ $rc = 0 ] || return 1
    expect_eq "valid in job A" 60 "$(job_field "$a" count_valid)" || return 1
    it_log "job B: claimed $(pickup "$b") ms after its creation, while job A ran"
}
t_case "a job created while the worker is busy with another is taken up at once, not at the next poll" t_busy_worker_woken

t_upload_and_confirm_start_at_once() {
    local id
    seq -w 1 12 | sed 's/.*/user&@shared5.svc.test/' > "$IT_DIR/list.csv"
    http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/list.csv" -F preview=true
    expect_status 202 || return 1
    id=$(json .job_id)
    wait_status "$id" awaiting_confirmation 10 || return 1
    grep -q "event=wake .*what=uploads woken=1" "$LOG" || it_fail "no wake-up of the upload thread" || return 1
    http POST "/v1/verify/bulk/$id/confirm" "" --data ""
    expect_status 200 || return 1
    wait_status "$id" completed 10 || return 1
    expect_eq "valid" 12 "$(job_field "$id" count_valid)"
}
t_case "an upload is read and previewed at once, and its confirmation verified at once" t_upload_and_confirm_start_at_once

t_worker_removes_its_sockets() {
    stop_worker
    expect_eq "sockets left by the stopped worker" 0 "$(find "$WAKE_DIR" -name '*.sock' | wc -l)"
}
t_case "a stopped svc-worker removes its wake-up sockets" t_worker_removes_its_sockets

t_poll_without_sockets() {
    local id conf=$IT_DIR/svc-poll2.conf
    # a daemon that polls every 2 s, and nothing in the folder to wake
    sed 's/^worker_poll_interval = .*/worker_poll_interval = 2/' "$SVC_CONF" > "$conf"
    idle_worker "$conf" || return 1
    rm -f "$WAKE_DIR"/*.sock
    http POST /v1/verify/bulk "$(emails 10 shared6.svc.test)"
    expect_status 202 || return 1
    id=$(json .job_id)
    wait_status "$id" completed 15 || return 1
    # and with no folder at all, svc-api still answers
    rm -rf "$WAKE_DIR"
    http POST /v1/verify/bulk "$(emails 3 shared6.svc.test)"
    expect_status 202 || return 1
    wait_status "$(json .job_id)" completed 15 || return 1
    stop_worker
}
t_case "without a wake-up socket the job is taken up at the next poll" t_poll_without_sockets

t_done
