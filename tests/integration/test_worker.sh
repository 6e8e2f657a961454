#!/bin/bash
# test_worker.sh: svc-worker verifies jobs. Jobs are made through the API
# (POST /v1/verify/bulk or /batch: svc-api's jobs_create, charge and all)
# and cancelled through it (DELETE /v1/jobs/{id}), then svc-worker runs
# (--once, or as a daemon) against real servers on
# loopback (tests/integration/mail_env.sh): unbound with the test zones
# (tests/dns), Postfix with postgrey (tests/smtp/mta.sh) and the fake SMTP
# server (tests/smtp/fake_smtp.py).
# It proves per-address verdicts and counts, the refund of unknown results
# (once), greylisted addresses retried later in the job (an attempt counted
# once when the COMMIT that wrote it lost its answer:
# tests/integration/commit_drop_proxy.py), that a cancelled
# job stops counting, and that a worker killed again and again mid-job still
# gives every address exactly one result and the job one charge and at most
# one refund. With a zone of its own (reuse.test: many domains whose MX is
# one host), that one SMTP session checks domain after domain (within
# worker_domain_concurrency, worker_transactions_per_session and
# worker_session_rcpt_limit), each domain's verdicts right, and that a
# server refusing RSET or a later MAIL gets sessions of one transaction;
# STARTTLS sessions to one host resume the TLS sessions of earlier ones.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require timeout

WORKER=$top_builddir/src/worker/svc-worker
[ -x "$WORKER" ] || it_skip "$WORKER is not built"

# --- DNS, the MTA and the fake SMTP servers (mail_env.sh, as in test_verify.sh)
# reuse.test: REUSE_N domains nNN (every 4th, cNN, a catch-all) whose MX is
# mx.reuse.test (one fake server, 127.0.0.33), and 8 domains each behind a
# server that refuses RSET (rNN: mx2, 127.0.0.34) or a second MAIL in a
# session (lNN: mx3, 127.0.0.35), and 8 behind a STARTTLS server that
# takes one MAIL a session too (tNN: mx4, 127.0.0.36); each domain has an
# A record (web presence: a catch-all without one is a "pristine
# catch-all" trap)
REUSE_N=40
reuse_domain() { if [ $(( $1 % 4 )) = 3 ]; then printf 'c%02d.reuse.test' "$1"; else printf 'n%02d.reuse.test' "$1"; fi; }
mkdir -p "$IT_DIR/dns"
{
    printf '%s\n' '$ORIGIN reuse.test.' '$TTL 300' '@ IN SOA ns.reuse.test. hostmaster.reuse.test. 1 3600 600 86400 300' \
        '@ IN NS ns.reuse.test.' 'ns IN A 127.0.0.1' 'mx IN A 127.0.0.33' 'mx2 IN A 127.0.0.34' 'mx3 IN A 127.0.0.35' \
        'mx4 IN A 127.0.0.36'
    for i in $(seq 0 $(( REUSE_N - 1 ))); do
        d=$(reuse_domain "$i"); d=${d%.reuse.test}
        printf '%s IN A 192.0.2.1\n%s IN MX 10 mx\n' "$d" "$d"
    done
    for i in $(seq -w 0 7); do printf 'r%s IN A 192.0.2.1\nr%s IN MX 10 mx2\nl%s IN A 192.0.2.1\nl%s IN MX 10 mx3\n' "$i" "$i" "$i" "$i"; done
    for i in $(seq -w 0 7); do printf 't%s IN A 192.0.2.1\nt%s IN MX 10 mx4\n' "$i" "$i"; done
} > "$IT_DIR/dns/reuse.test.zone"
mail_env_start "$IT_DIR/dns/reuse.test.zone"
fake 127.0.0.30 catchall=1
fake 127.0.0.31
fake 127.0.0.33 'catchall_domains=c[0-9]+\.reuse\.test' flight_delay_ms=30
fake 127.0.0.34 rset=550 flight_delay_ms=30
fake 127.0.0.35 mail_limit=1 flight_delay_ms=30
mail_env_certs mx4.reuse.test mx4.reuse.test
fake 127.0.0.36 --cert "$IT_DIR/tls/server.pem" --key "$IT_DIR/tls/server.key" starttls=offered mail_limit=1
mail_env_lists
mail_env_conf
it_conf_add "verify_time_budget_ms = 20000
worker_poll_interval = 1
worker_lease_seconds = 5
worker_greylist_delay = 3
worker_greylist_retries = 2
worker_concurrency = 20
worker_domain_concurrency = 4
worker_rcpts_per_session = 20"
it_stack_start

ACC=$(it_account admin 100000)
API_KEY=$(it_key "$ACC" '*')
# the jobs by the names the cases give them
declare -A JOBS
# a pipe's last command runs in this shell, so mkjob can fill JOBS
shopt -s lastpipe

# mkjob NAME TYPE [EXTRA-JSON [KEY]] < ADDRESSES: creates a job of the
# addresses (one a line) through the API, POST /v1/verify/bulk or
# /v1/verify/batch with the EXTRA fields, with API_KEY or KEY; its id goes
# to JOBS[NAME]
mkjob() {
    local name=$1 path=/v1/verify/bulk extra=${3:-'{}'} key=${4:-$API_KEY} code
    [ "$2" = batch ] && path=/v1/verify/batch
    jq -R . | jq -sc --argjson x "$extra" '{emails: .} + $x' > "$IT_DIR/$name.json"
    code=$(curl -s -o "$IT_DIR/$name.created" -w '%{http_code}' -H "Authorization: Bearer $key" \
        -H 'Content-Type: application/json' --data-binary "@$IT_DIR/$name.json" "$BASE_URL$path")
    case $code in 201|202) ;; *) it_fail "creating $name: $code $(cat "$IT_DIR/$name.created")"; return 1 ;; esac
    JOBS[$name]=$(jq -r '.job_id // .id' "$IT_DIR/$name.created")
}

# once: one svc-worker --once run (bounded), its standard error kept
once() {
    timeout 300 "$WORKER" --once -c "$SVC_CONF" 2>> "$IT_DIR/log/worker-stderr.log"
}

job_field() { it_sql "SELECT $2 FROM jobs WHERE id = '$1'"; }

# check_counts ID: the count_* columns and processed_emails equal the rows
check_counts() {
    local id=$1 c want got
    for c in valid invalid risky catch_all disposable unknown; do
        want=$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state = 'done' AND classification = '$c'")
        got=$(job_field "$id" "count_$c")
        expect_eq "$id count_$c" "$want" "$got" || return 1
    done
    expect_eq "$id processed_emails" "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state = 'done'")" \
        "$(job_field "$id" processed_emails)"
}

# check_ledger ID: exactly one charge and at most one refund, the pool's
# running totals equal to its ledger rows
check_ledger() {
    local id=$1
    expect_eq "$id charges" 1 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$id:charge%'")" || return 1
    [ "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE kind = 'refund' AND ref LIKE 'job:$id:%'")" -le 1 ] ||
        it_fail "$id has more than one refund" || return 1
    svcadm credits check "$ACC" > "$IT_DIR/credits-check.out" 2>&1 || it_fail "svcadm credits check: $(cat "$IT_DIR/credits-check.out")"
}

# ---------------------------------------------------------------- verdicts
# EMAIL CLASSIFICATION REASON SUB_STATUS, in input order
{
    printf '%s\n' "alice@mx.svc.test valid accepted_email null" "bob@mx.svc.test valid accepted_email null" \
        "info@mx.svc.test risky role_based role_based" "sales@mx.svc.test risky role_based role_based"
    for i in $(seq -w 1 150); do echo "nobody$i@mx.svc.test invalid rejected_email mailbox_not_found"; done
    printf '%s\n' "disabled@mx.svc.test invalid account_disabled account_disabled" \
        "full@mx.svc.test risky mailbox_full mailbox_full" "blocked@mx.svc.test unknown unknown smtp_blocked"
    for i in $(seq -w 1 80); do echo "user$i@catchall.svc.test catch_all catch_all catch_all"; done
    for i in $(seq -w 1 20); do echo "x$i@nosuch.svc.test invalid invalid_domain null"; done
    for i in $(seq -w 1 10); do echo "x$i@throwaway.svc.test disposable disposable_email disposable"; done
    printf '%s\n' "x@unreachable.svc.test unknown unknown smtp_unreachable" "x@timeout.test unknown unknown dns_error" \
        "x@nullmx.svc.test invalid no_mx_record null" "rejected_email@sandbox.svc.example invalid rejected_email mailbox_not_found" \
        "accepted_email@sandbox.svc.example valid accepted_email null" "unknown@sandbox.svc.example unknown unknown null" \
        "jane@pristine.svc.test risky spam_trap spam_trap"
} > "$IT_DIR/expected.txt"
# addresses not shaped like an email (spaces: one field each, kept apart)
for i in 1 2 3 4 5; do echo "not-an-email-$i"; done > "$IT_DIR/syntax.txt"

t_verdicts() {
    local id=job_verdicts total unknown
    { cut -d' ' -f1 "$IT_DIR/expected.txt"; cat "$IT_DIR/syntax.txt"; } | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    total=$(( $(wc -l < "$IT_DIR/expected.txt") + 5 ))
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(job_field $id status)" || return 1
    expect_eq "total_emails" "$total" "$(job_field $id total_emails)"
    expect_eq "processed_emails" "$total" "$(job_field $id processed_emails)"
    { cat "$IT_DIR/expected.txt"; sed 's/$/ invalid invalid_syntax null/' "$IT_DIR/syntax.txt"; } > "$IT_DIR/want.txt"
    it_sql "SELECT email, classification, reason, IFNULL(sub_status, 'null') FROM job_emails
            WHERE job_id = '$id' ORDER BY seq" | tr '\t' ' ' > "$IT_DIR/got.txt"
    diff "$IT_DIR/want.txt" "$IT_DIR/got.txt" > "$IT_DIR/verdicts.diff" ||
        it_fail "per-address verdicts differ: $(head -n 20 "$IT_DIR/verdicts.diff" | tr '\n' '|')"
    expect_eq "rows not done" 0 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state <> 'done'")"
    expect_eq "chunks not done" 0 "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$id' AND state <> 'done'")"
    expect_eq "rows without score or verified_at" 0 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id'
        AND (score IS NULL OR verified_at IS NULL OR status IS NULL)")"
    expect_eq "catch-all rows have a send verdict" 80 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id'
        AND classification = 'catch_all' AND catch_all_verdict IS NOT NULL AND accept_all = 1")"
    check_counts $id || return 1
    unknown=$(grep -c ' unknown [a-z_]* [a-z_]*$' "$IT_DIR/want.txt")
    expect_eq "count_unknown" "$unknown" "$(job_field $id count_unknown)"
    expect_eq "credits_refunded" "$unknown" "$(job_field $id credits_refunded)"
    expect_eq "refund row" "$unknown" "$(it_sql "SELECT amount FROM credit_ledger WHERE ref = 'job:$id:refund'")"
    expect_eq "started_at and completed_at set" 1 "$(job_field $id "started_at IS NOT NULL AND completed_at >= started_at")"
    check_ledger $id
}
t_case "a job of 279 addresses over 10 domains completes with the right verdict per address and counts equal to its rows" t_verdicts

t_event_once() {
    local id=${JOBS[job_verdicts]} payload
    once || it_fail "second svc-worker --once failed"
    expect_eq "job.completed events" 1 "$(it_sql "SELECT COUNT(*) FROM event_outbox WHERE job_id = '$id' AND event = 'job.completed'")"
    expect_eq "refunds after a second run" 1 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref = 'job:$id:refund'")"
    payload=$(it_sql "SELECT payload FROM event_outbox WHERE job_id = '$id'")
    HTTP_REQUEST="event_outbox payload"; HTTP_BODY=$payload
    expect_json .event job.completed && expect_jq '.event_id | startswith("evt_")' &&
        expect_jq '.timestamp | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")' &&
        expect_json .data.job_id $id && expect_json .data.type bulk && expect_json .data.status completed &&
        expect_json .data.total_emails 279 && expect_json .data.counts.catch_all 80 &&
        expect_json .data.counts.unknown "$(job_field $id count_unknown)" &&
        expect_json .data.counts.invalid "$(job_field $id count_invalid)" &&
        # the 5 entries that are no address are free rows
        expect_json .data.credits_charged 274 && expect_json .data.credits_refunded "$(job_field $id credits_refunded)" &&
        expect_json .data.download_url "/v1/jobs/$id/download"
}
t_case "job.completed is in the outbox once with the API.md envelope; a second run refunds nothing more" t_event_once

t_batch() {
    local id=job_batch
    printf '%s\n' alice@mx.svc.test x@unreachable.svc.test unknown@sandbox.svc.example |
        mkjob $id batch '{"callback_data":{"ref":42}}' || return 1
    id=${JOBS[$id]}
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(job_field $id status)" || return 1
    expect_eq "count_unknown" 2 "$(job_field $id count_unknown)"
    expect_eq "batch refunds" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$id:refund%'")"
    HTTP_REQUEST="batch event"; HTTP_BODY=$(it_sql "SELECT payload FROM event_outbox WHERE job_id = '$id' AND event = 'job.completed'")
    expect_json .data.type batch && expect_json .data.callback_data.ref 42 && expect_json .data.credits_refunded 0 &&
        expect_json .data.valid_count 1 && expect_json .data.processed_emails 3
}
t_case "a batch job: unknown results are not refunded; the event carries callback_data and the batch fields" t_batch

t_sandbox_job() {
    local id=job_sandbox
    printf '%s\n' unknown@sandbox.svc.example catch_all@sandbox.svc.example |
        mkjob $id bulk '{}' "$(it_key "$ACC" '*' --sandbox)" || return 1
    id=${JOBS[$id]}
    expect_eq "charged" "1 0" "$(job_field $id "CONCAT_WS(' ', sandbox, credits_charged)")" || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(job_field $id status)" && expect_eq "count_unknown" 1 "$(job_field $id count_unknown)" &&
        expect_eq "credits_refunded" 0 "$(job_field $id credits_refunded)" &&
        expect_eq "ledger rows" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$id:%'")"
}
t_case "a sandbox job (nothing charged) refunds nothing" t_sandbox_job

t_missing_rows() {
    local id=job_broken
    echo alice@mx.svc.test | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    it_sql "DELETE FROM job_emails WHERE job_id = '$id'"
    once || it_fail "svc-worker --once failed"
    expect_eq "status" failed "$(job_field $id status)" && expect_eq "error_code" job_rows_missing "$(job_field $id error_code)" &&
        expect_eq "job.failed events" 1 "$(it_sql "SELECT COUNT(*) FROM event_outbox WHERE job_id = '$id' AND event = 'job.failed'")" &&
        expect_eq "refund of the unprocessed address" 1 "$(it_sql "SELECT amount FROM credit_ledger WHERE ref = 'job:$id:refund'")"
    HTTP_REQUEST="job.failed event"; HTTP_BODY=$(it_sql "SELECT payload FROM event_outbox WHERE job_id = '$id'")
    expect_json .data.error.code job_rows_missing && expect_json .data.job_id $id
}
t_case "a job whose addresses are missing fails with job_rows_missing, a refund and one job.failed event" t_missing_rows

# ---------------------------------------------------------------- greylisting
# wait_due JOB: until the job's chunks that wait for a retry_at are due
# (worker_greylist_delay after their attempt), 30 s at most
wait_due() {
    local i
    for i in $(seq 1 300); do
        [ "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$1' AND state = 'pending' AND not_before > UTC_TIMESTAMP(3)")" = 0 ] && return 0
        sleep 0.1
    done
    it_fail "the chunks of job $1 are not due after 30 s"
}
# shift_retry JOB INTERVAL: the job's waiting chunks and retry rows moved
# by INTERVAL (a pass made then surely comes before their retry_at, however
# slow the machine)
shift_retry() {
    it_sql "UPDATE job_chunks SET not_before = not_before + INTERVAL $2 WHERE job_id = '$1' AND not_before IS NOT NULL;
        UPDATE job_emails SET retry_at = retry_at + INTERVAL $2 WHERE job_id = '$1' AND state = 'retry'"
}

t_greylist() {
    local id=job_grey t0
    printf '%s\n' alice@grey.svc.test nobody@grey.svc.test greyforever@greyforever.svc.test | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    t0=$(it_sql "SELECT UTC_TIMESTAMP(3)")
    once || it_fail "svc-worker --once failed"
    expect_eq "after the first pass: status" processing "$(job_field $id status)" || return 1
    expect_eq "retry rows after the first pass" 3 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state = 'retry' AND attempts = 1")"
    expect_eq "processed after the first pass" 0 "$(job_field $id processed_emails)"
    # worker_greylist_delay = 3 after the attempt, which came after t0
    expect_eq "retry rows due worker_greylist_delay after their attempt" 3 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state = 'retry' AND retry_at >= '$t0' + INTERVAL 3 SECOND")" || return 1
    expect_eq "the chunk waits for retry_at" 1 "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$id' AND state = 'pending' AND not_before = (SELECT MIN(retry_at) FROM job_emails WHERE job_id = '$id' AND state = 'retry')")" || return 1
    shift_retry "$id" '1 HOUR'
    once
    expect_eq "a pass before retry_at changes nothing" "0 3" "$(job_field $id processed_emails) $(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state = 'retry' AND attempts = 1")" || return 1
    shift_retry "$id" '-1 HOUR'
    wait_due "$id" || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "alice after the retry" "done valid accepted_email" "$(it_sql "SELECT state, classification, reason FROM job_emails WHERE job_id = '$id' AND seq = 0" | tr '\t' ' ')"
    # the delay that got alice through (one attempt x worker_greylist_delay
    # 3) is in the host's profile, for the next greylisted address there
    expect_eq "greylist_delay_s in mta23's profile" 3 "$(it_sql "SELECT greylist_delay_s FROM mx_profiles WHERE host = 'mta23.svc.test'")"
    expect_eq "nobody after the retry" "done invalid rejected_email" "$(it_sql "SELECT state, classification, reason FROM job_emails WHERE job_id = '$id' AND seq = 1" | tr '\t' ' ')"
    expect_eq "greyforever after the second attempt" "retry 2" "$(it_sql "SELECT state, attempts FROM job_emails WHERE job_id = '$id' AND seq = 2" | tr '\t' ' ')"
    wait_due "$id" || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "greyforever after the retries" "done unknown greylisted" "$(it_sql "SELECT state, classification, sub_status FROM job_emails WHERE job_id = '$id' AND seq = 2" | tr '\t' ' ')"
    expect_eq "status" completed "$(job_field $id status)"
    check_counts $id && expect_eq "refund" 1 "$(job_field $id credits_refunded)" && check_ledger $id
}
t_case "greylisted addresses are retried later in the job: accepted on retry, greylisted result after worker_greylist_retries" t_greylist

t_lost_commit_greylist() {
    local id=job_lostgrey
    # the writer's COMMIT of a greylisted result is applied and its answer
    # lost (tests/integration/commit_drop_proxy.py between svc-worker and
    # MariaDB): the retry must not count the attempt twice
    it_commit_drop_proxy proxy || return 1
    echo greyforever7@greyforever.svc.test | mkjob $id bulk || { kill "$IT_PROXY_PID"; return 1; }
    id=${JOBS[$id]}
    printf '%s' "UPDATE job_emails SET state = 'retry'" > "$IT_DIR/proxy.arm"
    timeout 300 "$WORKER" --once -c "$IT_DIR/proxy.conf" 2>> "$IT_DIR/log/worker-stderr.log"
    kill "$IT_PROXY_PID"; wait "$IT_PROXY_PID" 2>/dev/null
    expect_eq "answers dropped" 1 "$(it_proxy_dropped proxy)" || return 1
    expect_eq "the greylisted row after one attempt" "retry 1" \
        "$(it_sql "SELECT state, attempts FROM job_emails WHERE job_id = '$id'" | tr '\t' ' ')"
}
t_case "a greylisted result whose COMMIT was applied but whose answer was lost counts one attempt, not two" t_lost_commit_greylist

t_greylist_learned() {
    local id=job_grey_learned t0
    # another worker learned that mta23 lets a greylisted address through
    # only after 7 s: the first retry waits that, not worker_greylist_delay
    it_sql "INSERT INTO mx_profiles (host, greylist_delay_s, updated_at) VALUES ('mta23.svc.test', 7, UTC_TIMESTAMP(3))
        ON DUPLICATE KEY UPDATE greylist_delay_s = 7"
    printf '%s\n' bob@grey.svc.test | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    t0=$(it_sql "SELECT UTC_TIMESTAMP(3)")
    once || it_fail "svc-worker --once failed"
    expect_eq "retry row after the first pass" "retry 1" "$(it_sql "SELECT state, attempts FROM job_emails WHERE job_id = '$id'" | tr '\t' ' ')" || return 1
    expect_eq "due the learned 7 s after its attempt" 1 "$(it_sql "SELECT retry_at >= '$t0' + INTERVAL 7 SECOND FROM job_emails WHERE job_id = '$id'")" || return 1
    grep -q "svc-worker\[[0-9]*\] .*event=greylist_retry job=$id seq=0 retry_in_s=7 basis=mx_profile" "$IT_DIR/log/svc.log" ||
        { it_fail "no greylist_retry line with retry_in_s=7"; return 1; }
    it_sql "UPDATE mx_profiles SET greylist_delay_s = NULL WHERE host = 'mta23.svc.test'"
    # (mta23's greylisting wants real time: the retry itself is t_greylist's)
    http DELETE "/v1/jobs/$id"
    expect_status 200
}
t_case "the first retry of a greylisted address waits the delay the host's profile learned" t_greylist_learned

# ---------------------------------------------------------------- one server, many names
# Six domains whose MX hosts are named differently but are one server: the
# per-MX limit (worker_domain_concurrency = 4) holds for the server's
# address too, not just for each name (which would allow 6 x 4 sessions).
# The server holds every flight unanswered until the worker has as many
# sessions open as it may (4), then answers: they overlap whatever the
# machine's pace, and never go beyond 4. This worker waits 60 s for a reply
# (a session it gave up on would stay counted by the held server).
t_throttle_by_address() {
    local id=job_shared i d max pid now conf=$IT_DIR/worker-held.conf
    sed 's/^smtp_reply_timeout_ms = .*/smtp_reply_timeout_ms = 60000/' "$SVC_CONF" > "$conf"
    grep -q '^smtp_reply_timeout_ms = 60000$' "$conf" || { it_fail "no smtp_reply_timeout_ms in $SVC_CONF"; return 1; }
    fake_ctl 127.0.0.31 reset > /dev/null
    fake_set 127.0.0.31 flight_delay_ms=400 hold=1
    for d in 1 2 3 4 5 6; do
        for i in $(seq -w 1 80); do echo "user$i@shared$d.svc.test"; done
    done | mkjob $id bulk || { fake_ctl 127.0.0.31 reset > /dev/null; return 1; }
    id=${JOBS[$id]}
    timeout 300 "$WORKER" --once -c "$conf" 2>> "$IT_DIR/log/worker-stderr.log" &
    pid=$!
    for i in $(seq 1 300); do
        now=$(fake_ctl 127.0.0.31 concurrency | sed 's/.*now=\([0-9]*\).*/\1/')
        [ "$now" -ge 4 ] && break
        sleep 0.1
    done
    fake_set 127.0.0.31 hold=0
    wait "$pid" || it_fail "svc-worker --once failed"
    [ "$now" -ge 4 ] || it_fail "$now sessions open to the held server after 30 s, not 4" || return 1
    expect_eq "status" "completed 480" "$(job_field $id "CONCAT_WS(' ', status, count_valid)")" || return 1
    max=$(fake_ctl 127.0.0.31 concurrency | sed 's/.*max=\([0-9]*\).*/\1/')
    [ "$max" -le 4 ] || it_fail "$max sessions at once to one server (worker_domain_concurrency 4)"
    fake_ctl 127.0.0.31 reset > /dev/null
}
t_case "sessions to one server are limited by its address too, whatever the names of its MX hosts" t_throttle_by_address

# ---------------------------------------------------------------- connection reuse
# reuse_job NAME FIRST: a job of 10 addresses at each reuse.test domain
# (user<FIRST+k>@ and unknown<FIRST+k>@ at normal domains, user and
# nobody at catch-all ones), and the verdicts they must get in
# $IT_DIR/NAME.want (EMAIL CLASSIFICATION REASON)
reuse_job() {
    local name=$1 first=$2 i k d
    for i in $(seq 0 $(( REUSE_N - 1 ))); do
        d=$(reuse_domain "$i")
        for k in 0 1 2 3 4; do
            case $d in
            c*) echo "user$(( first + k ))@$d catch_all catch_all"; echo "nobody$(( first + k ))@$d catch_all catch_all" ;;
            *) echo "user$(( first + k ))@$d valid accepted_email"; echo "unknown$(( first + k ))@$d invalid rejected_email" ;;
            esac
        done
    done > "$IT_DIR/$name.want"
    cut -d' ' -f1 "$IT_DIR/$name.want" | mkjob "$name" bulk
}

# check_verdicts NAME: every address of the job got the verdict in its .want
check_verdicts() {
    local id=${JOBS[$1]}
    expect_eq "$1 status" completed "$(job_field "$id" status)" || return 1
    it_sql "SELECT email, classification, reason FROM job_emails WHERE job_id = '$id' ORDER BY seq" |
        tr '\t' ' ' > "$IT_DIR/$1.got"
    diff "$IT_DIR/$1.want" "$IT_DIR/$1.got" > "$IT_DIR/$1.diff" ||
        it_fail "$1: verdicts differ: $(head -n 10 "$IT_DIR/$1.diff" | tr '\n' '|')"
}

# reuse_fake_reset: mx.reuse.test's fake server counts from zero again
reuse_fake_reset() {
    fake_ctl 127.0.0.33 reset > /dev/null
    fake_set 127.0.0.33 'catchall_domains=c[0-9]+\.reuse\.test' flight_delay_ms=30
}

# stat HOST KEY: one figure of the fake server's stats (since its reset)
stat() { fake_ctl "$1" stats | tr ' ' '\n' | sed -n "s/^$2=//p"; }
max_open() { fake_ctl "$1" concurrency | sed 's/.*max=\([0-9]*\).*/\1/'; }

# changed_conf NAME=VALUE...: $IT_DIR/svc-changed.conf, SVC_CONF with
# settings changed
changed_conf() {
    local kv conf=$IT_DIR/svc-changed.conf
    cp "$SVC_CONF" "$conf"
    for kv in "$@"; do
        grep -q "^${kv%%=*} = " "$conf" && sed -i "s|^${kv%%=*} = .*|${kv%%=*} = ${kv#*=}|" "$conf" ||
            echo "${kv%%=*} = ${kv#*=}" >> "$conf"
    done
}

# once_with NAME=VALUE...: one svc-worker --once run with settings changed
once_with() {
    changed_conf "$@"
    timeout 300 "$WORKER" --once -c "$IT_DIR/svc-changed.conf" 2>> "$IT_DIR/log/worker-stderr.log"
}

t_reuse() {
    local sessions max
    reuse_fake_reset
    reuse_job job_reuse 0 || return 1
    once || it_fail "svc-worker --once failed"
    check_verdicts job_reuse || return 1
    sessions=$(stat 127.0.0.33 sessions); max=$(max_open 127.0.0.33)
    it_log "$REUSE_N domains: $sessions sessions, at most $max at once, $(fake_ctl 127.0.0.33 stats)"
    [ "$sessions" -le $(( REUSE_N / 4 )) ] || it_fail "$sessions SMTP sessions for $REUSE_N domains of one MX host"
    [ "$max" -ge 2 ] || it_fail "the sessions never overlapped (max $max): the case proves nothing"
    [ "$max" -le 4 ] || it_fail "$max sessions at once to one host (worker_domain_concurrency 4)"
    [ "$(stat 127.0.0.33 max_mail)" -le 20 ] || it_fail "more than worker_transactions_per_session (20) transactions in a session"
    check_counts "${JOBS[job_reuse]}"
}
t_case "$REUSE_N domains behind one MX host: a few sessions, one domain after another, never more than worker_domain_concurrency at once, every verdict right" t_reuse

t_reuse_limits() {
    reuse_fake_reset
    reuse_job job_reuse_tx 100 || return 1
    once_with worker_transactions_per_session=3 || it_fail "svc-worker --once failed"
    check_verdicts job_reuse_tx || return 1
    expect_eq "most transactions in a session (worker_transactions_per_session 3)" 3 "$(stat 127.0.0.33 max_mail)" || return 1
    [ "$(stat 127.0.0.33 sessions)" -ge $(( REUSE_N / 3 )) ] || it_fail "fewer sessions than $REUSE_N transactions / 3"
    reuse_fake_reset
    reuse_job job_reuse_rcpt 200 || return 1
    once_with worker_session_rcpt_limit=25 || it_fail "svc-worker --once failed"
    check_verdicts job_reuse_rcpt || return 1
    [ "$(stat 127.0.0.33 max_rcpt)" -le 25 ] || it_fail "$(stat 127.0.0.33 max_rcpt) RCPTs in one session (worker_session_rcpt_limit 25)"
    [ "$(stat 127.0.0.33 max_mail)" -ge 2 ] || it_fail "no session carried two transactions"
}
t_case "worker_transactions_per_session and worker_session_rcpt_limit bound what one session carries" t_reuse_limits

# one_domain_job NAME DOMAIN FIRST N: a job of N addresses at one reuse.test
# normal domain (user<k>@ and unknown<k>@ from FIRST on) and its .want
one_domain_job() {
    local k
    for k in $(seq "$3" $(( $3 + $4 / 2 - 1 ))); do
        echo "user$k@$2 valid accepted_email"; echo "unknown$k@$2 invalid rejected_email"
    done > "$IT_DIR/$1.want"
    cut -d' ' -f1 "$IT_DIR/$1.want" | mkjob "$1" bulk
}

t_domain_one_session() {
    reuse_fake_reset
    # 40 addresses, worker_rcpts_per_session 20: two transactions, the
    # second after the first in its session, not in a session of its own
    one_domain_job job_one_session n01.reuse.test 600 40 || return 1
    once || it_fail "svc-worker --once failed"
    check_verdicts job_one_session || return 1
    it_log "40 addresses of one domain: $(fake_ctl 127.0.0.33 stats)"
    expect_eq "SMTP sessions for two transactions of one domain" 1 "$(stat 127.0.0.33 sessions)" || return 1
    expect_eq "transactions in that session" 2 "$(stat 127.0.0.33 max_mail)" || return 1
    # 200 addresses: more than the session carries next, so sessions side
    # by side (up to worker_domain_concurrency 4)
    reuse_fake_reset
    one_domain_job job_side_by_side n02.reuse.test 600 200 || return 1
    once || it_fail "svc-worker --once failed"
    check_verdicts job_side_by_side || return 1
    it_log "200 addresses of one domain: $(fake_ctl 127.0.0.33 stats), at most $(max_open 127.0.0.33) at once"
    [ "$(max_open 127.0.0.33)" -ge 2 ] || it_fail "10 transactions of one domain went one session at a time"
    [ "$(max_open 127.0.0.33)" -le 4 ] || it_fail "more than worker_domain_concurrency (4) sessions at once"
    check_counts "${JOBS[job_side_by_side]}"
}
t_case "a domain's next transaction goes in the session it has when that one carries it next; more than that opens sessions side by side" t_domain_one_session

# window_job NAME FIRST [MAX_OPEN]: a reuse job run by one svc-worker with a
# window of 2..12 sessions at mx.reuse.test (a server that takes MAX_OPEN
# connections at once, 0: any), every verdict checked; BUSY: connections
# it refused as one too many
window_job() {
    reuse_fake_reset
    fake_set 127.0.0.33 max_open="${3:-0}"
    reuse_job "$1" "$2" || return 1
    once_with worker_domain_concurrency=12 worker_domain_concurrency_initial=2 || it_fail "svc-worker --once failed"
    check_verdicts "$1" || return 1
    BUSY=$(fake_ctl 127.0.0.33 concurrency | sed 's/.*busy=\([0-9]*\).*/\1/')
    it_log "$1, window 2..12, max_open ${3:-0}: $(fake_ctl 127.0.0.33 concurrency), $(fake_ctl 127.0.0.33 stats)"
}

t_window() {
    local cap
    # a host that answers every transaction: from 2 sessions at once
    # (worker_domain_concurrency_initial) towards 12, one more a
    # transaction answered while all were in use
    window_job job_window 400 || return 1
    [ "$(max_open 127.0.0.33)" -ge 4 ] || it_fail "at most $(max_open 127.0.0.33) sessions at once: the window never grew from 2"
    [ "$(max_open 127.0.0.33)" -le 12 ] || it_fail "more than worker_domain_concurrency (12) sessions at once"
    # a server that takes 3 connections at once and answers the next 421:
    # the window goes back to 2, every address is checked all the same
    window_job job_window_busy 500 3 || return 1
    [ "$BUSY" -ge 1 ] || it_fail "no connection was refused as one too many: the case proves nothing"
    # (without the cap it was refused 11 times in 38 sessions: the window
    # grew to 4 again after each reset)
    [ "$BUSY" -le 4 ] || it_fail "$BUSY connections refused as one too many: the window kept growing past the server's 3"
    grep -q "event=smtp_window_reset host=mx.reuse.test window=2 " "$IT_DIR/log/svc.log" ||
        it_fail "no event=smtp_window_reset for mx.reuse.test in the log"
    check_counts "${JOBS[job_window_busy]}"
    # the cap went into the host's profile, for every worker that meets it
    cap=$(it_sql "SELECT sessions_max FROM mx_profiles WHERE host = 'mx.reuse.test' AND sessions_max_at > UTC_TIMESTAMP(3) - INTERVAL 10 MINUTE")
    case $cap in [0-9]*) ;; *) it_fail "no sessions_max learned for mx.reuse.test: '$cap'"; return 1 ;; esac
    [ "$cap" -ge 2 ] && [ "$cap" -le 11 ] || it_fail "sessions_max $cap: not below the window of 12 that was refused, or below the initial 2"
    svcadm mx show mx.reuse.test > "$IT_DIR/mx-window.out" 2>&1 || it_fail "svcadm mx show failed: $(cat "$IT_DIR/mx-window.out")"
    grep -q "^sessions_max  *$cap\$" "$IT_DIR/mx-window.out" ||
        it_fail "svcadm mx show does not print sessions_max $cap: $(tr '\n' '|' < "$IT_DIR/mx-window.out")"
    # a worker that meets the host anew starts within what the profile
    # says it takes (3: the server's own limit) and is refused nothing
    it_sql "UPDATE mx_profiles SET sessions_max = 3, sessions_max_at = UTC_TIMESTAMP(3) WHERE host = 'mx.reuse.test'"
    window_job job_window_known 600 3 || return 1
    expect_eq "connections refused as one too many with the host's cap known" 0 "$BUSY" || return 1
    [ "$(max_open 127.0.0.33)" -ge 3 ] || it_fail "at most $(max_open 127.0.0.33) sessions at once: the window never reached the cap, the case proves nothing"
    # a cap learned more than a day ago no longer holds: the window grows
    # past it again
    it_sql "UPDATE mx_profiles SET sessions_max = 2, sessions_max_at = UTC_TIMESTAMP(3) - INTERVAL 2 DAY WHERE host = 'mx.reuse.test'"
    window_job job_window_stale 700 || return 1
    [ "$(max_open 127.0.0.33)" -ge 4 ] || it_fail "at most $(max_open 127.0.0.33) sessions at once: a cap of a day ago still held"
    it_sql "UPDATE mx_profiles SET sessions_max = NULL, sessions_max_at = NULL WHERE host = 'mx.reuse.test'"
}
t_case "a host's window of sessions grows from worker_domain_concurrency_initial while it answers, up to worker_domain_concurrency, starts again below what it refused, and keeps that cap in the host's profile for a day" t_window

t_reuse_refused() {
    local id i k h
    for i in $(seq -w 0 7); do
        for k in 1 2 3; do
            printf 'user%s@r%s.reuse.test valid accepted_email\nunknown%s@r%s.reuse.test invalid rejected_email\n' "$k" "$i" "$k" "$i"
            printf 'user%s@l%s.reuse.test valid accepted_email\nunknown%s@l%s.reuse.test invalid rejected_email\n' "$k" "$i" "$k" "$i"
        done
    done > "$IT_DIR/job_refused.want"
    cut -d' ' -f1 "$IT_DIR/job_refused.want" | mkjob job_refused bulk || return 1
    once || it_fail "svc-worker --once failed"
    check_verdicts job_refused || return 1
    for h in mx2 mx3; do
        grep -q "event=smtp_reuse_refused host=$h.reuse.test" "$IT_DIR/log/svc.log" ||
            it_fail "no smtp_reuse_refused for $h.reuse.test in the log" || return 1
    done
    [ "$(stat 127.0.0.34 rset)" -ge 1 ] || it_fail "no RSET was tried at the RSET-refusing server: the case proves nothing"
    # after the refusal, one transaction per session: about one session
    # per domain (8), a few more for the refused ones
    [ "$(stat 127.0.0.34 sessions)" -ge 8 ] || it_fail "$(stat 127.0.0.34 sessions) sessions for 8 domains at the RSET-refusing server"
    [ "$(stat 127.0.0.35 max_mail)" -le 2 ] || it_fail "more than 2 MAIL in a session at the server that allows 1"
    check_counts "${JOBS[job_refused]}"
}
t_case "a server that refuses RSET (550) or a second MAIL (421) gets sessions of one transaction from then on; every verdict right" t_reuse_refused

# ---------------------------------------------------------------- the shared DNS cache
# Domains a worker meets are read from dns_cache and domain_facts a group
# at a time (verify_batch_mx_cached_many) and the resolver's answers
# written a group at a time (verify_batch_mx_answer_many): each domain
# must get its own row's answer and facts.
t_dns_cache_groups() {
    local id=job_dns_cache d want got
    # every reuse.test domain the cases above resolved has its own answer
    for d in n00 c03 n38 r0 l7; do
        want=mx; case $d in r*) want=mx2 ;; l*) want=mx3 ;; esac
        got=$(it_sql "SELECT JSON_VALUE(result, '\$.hosts[0].name') FROM dns_cache WHERE domain = '$d.reuse.test'")
        expect_eq "the cached MX host of $d.reuse.test" "$want.reuse.test" "$got" || return 1
    done
    expect_eq "dns_cache rows of reuse.test domains" $(( REUSE_N + 16 )) \
        "$(it_sql "SELECT COUNT(*) FROM dns_cache WHERE domain LIKE '%.reuse.test'")" || return 1
    # three domains no zone knows, found only in the cache; dc2 known to
    # accept every address (domain_facts), the others not known
    for d in dc1 dc2 dc3; do
        it_sql "REPLACE INTO dns_cache (domain, result, expires_at) VALUES ('$d.cached.test',
            '{\"status\":0,\"implicit\":false,\"null_mx\":false,\"hosts\":[{\"name\":\"mx.cached.test\",\"pref\":10,\"addrs\":[\"127.0.0.31\"]}]}',
            UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)"
    done
    it_sql "REPLACE INTO domain_facts (domain, accept_all, web_presence, expires_at) VALUES
        ('dc2.cached.test', 1, 1, UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)"
    printf '%s\n' user1@dc1.cached.test unknown1@dc1.cached.test user1@dc2.cached.test \
        user1@dc3.cached.test unknown1@dc3.cached.test | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(job_field "$id" status)" || return 1
    expect_eq "verdicts (dc2 accepts all: its 250 is a catch-all, no probe needed)" \
        "user1@dc1.cached.test valid|unknown1@dc1.cached.test invalid|user1@dc2.cached.test catch_all|user1@dc3.cached.test valid|unknown1@dc3.cached.test invalid" \
        "$(it_sql "SELECT email, classification FROM job_emails WHERE job_id = '$id' ORDER BY seq" | tr '\t' ' ' | paste -sd'|')" || return 1
    expect_eq "domain_facts: dc1 and dc3 probed (not accept-all), dc2 as it was" "0 1 0" \
        "$(it_sql "SELECT GROUP_CONCAT(accept_all ORDER BY domain SEPARATOR ' ') FROM domain_facts WHERE domain LIKE 'dc_.cached.test'")"
}
t_case "the shared DNS cache and domain facts are read and written a group of domains at a time, each domain its own answer and facts" t_dns_cache_groups

t_reuse_greylist() {
    local id=job_reuse_grey i
    reuse_fake_reset
    for i in 00 01 02 04 05 06; do printf 'grey1@n%s.reuse.test\nuser300@n%s.reuse.test\n' "$i" "$i"; done | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    once || it_fail "svc-worker --once failed"
    expect_eq "greylisted after the first pass" 6 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state = 'retry'")" || return 1
    expect_eq "accepted in the first pass" 6 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state = 'done' AND classification = 'valid'")" || return 1
    [ "$(stat 127.0.0.33 max_mail)" -ge 2 ] || it_fail "no session carried two domains: the case proves nothing"
    wait_due "$id" || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(job_field $id status)" || return 1
    expect_eq "valid after the retry" 12 "$(job_field $id count_valid)"
}
t_case "greylisting in sessions that carry several domains: retried later in the job and accepted" t_reuse_greylist

# ---------------------------------------------------------------- cancellation and SIGTERM
start_worker() { stack_proc_start "$IT_DIR/log" worker "$WORKER" -c "$SVC_CONF"; }
worker_pid() { stack_pidfile_pid "$IT_DIR/log/worker.pid"; }

t_cancel() {
    local id=job_cancel i processed after refund
    fake_set 127.0.0.31 flight_delay_ms=300
    for i in $(seq -w 1 800); do echo "user$i@greyforever.svc.test"; done | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    start_worker || return 1
    for i in $(seq 1 100); do
        [ "$(job_field $id processed_emails)" -gt 0 ] && break
        sleep 0.2
    done
    http DELETE "/v1/jobs/$id"
    expect_status 200 && expect_json .status cancelled || return 1
    # what the worker had written when the job was cancelled is final
    processed=$(job_field $id processed_emails)
    expect_json .credits_refunded $((800 - processed)) || return 1
    [ "$processed" -gt 0 ] && [ "$processed" -lt 800 ] || it_fail "cancelled at processed=$processed, not mid-way" || return 1
    sleep 4
    after=$(job_field $id processed_emails)
    expect_eq "processed after the cancellation" "$processed" "$after"
    expect_eq "rows done after the cancellation" "$processed" "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state = 'done'")"
    expect_eq "status" cancelled "$(job_field $id status)"
    expect_eq "leased chunks" 0 "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$id' AND state = 'leased'")"
    expect_eq "job.completed events" 0 "$(it_sql "SELECT COUNT(*) FROM event_outbox WHERE job_id = '$id'")"
    refund=$(it_sql "SELECT amount FROM credit_ledger WHERE ref = 'job:$id:refund'")
    expect_eq "refund of the unprocessed" $((800 - processed)) "$refund"
    check_counts $id && check_ledger $id
}
t_case "a cancelled job stops: nothing is counted after the cancellation and no chunk stays leased" t_cancel

# held: every flight to the job's server waits unanswered until the test
# lets it go, so the job is mid-way at the SIGTERM (or the restart) however
# fast or loaded the machine is. sessions_open: how many the server has.
sessions_open() { fake_ctl 127.0.0.31 concurrency | sed 's/.*now=\([0-9]*\).*/\1/'; }
wait_held_session() {
    local i
    for i in $(seq 1 600); do
        [ "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$1' AND state = 'leased'")" -gt 0 ] &&
            [ "$(sessions_open)" -ge 1 ] && return 0
        sleep 0.1
    done
    it_fail "no chunk of $1 leased with a session open after 60 s"
}

t_sigterm() {
    local id=job_term i pid
    fake_set 127.0.0.31 hold=1
    for i in $(seq -w 1 600); do echo "user$i@greyforever.svc.test"; done | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    wait_held_session "$id" || { fake_set 127.0.0.31 hold=0; return 1; }
    pid=$(worker_pid) || return 1
    stack_proc_stop "$IT_DIR/log" worker
    fake_set 127.0.0.31 hold=0
    stack_alive "$pid" && it_fail "svc-worker still runs after SIGTERM"
    expect_eq "chunks leased after SIGTERM" 0 "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$id' AND state = 'leased'")"
    grep -q "event=chunk_released job=$id" "$IT_DIR/log/svc.log" || it_fail "no chunk_released in the log"
    check_counts $id
    # out of the way of the next cases
    http DELETE "/v1/jobs/$id"; expect_status 200
}
t_case "SIGTERM: the daemon gives its leases back and exits" t_sigterm

# job_done ID: wait (the daemon works) until the job is completed
job_done() {
    local i
    for i in $(seq 1 600); do
        [ "$(job_field "$1" status)" = completed ] && return 0
        sleep 0.1
    done
    it_fail "job $1 is $(job_field "$1" status) after 60 s of the daemon"
}

t_sighup() {
    local pid fds started
    start_worker || return 1
    pid=$(worker_pid) || return 1
    one_domain_job job_hup1 n05.reuse.test 800 2 || return 1
    job_done "${JOBS[job_hup1]}" || return 1
    expect_eq "provider before the reload" reuse.test \
        "$(it_sql "SELECT DISTINCT provider FROM job_emails WHERE job_id = '${JOBS[job_hup1]}'")" || return 1
    fds=$(ls "/proc/$pid/fd" | wc -l)
    started=$(grep -c "svc-worker\[$pid\] .*event=started mode=daemon" "$IT_DIR/log/svc.log")
    # a chunk leased under this process's owner name, as one lost with the
    # database before the reload would be (a done job's: nobody claims it)
    it_sql "INSERT INTO job_chunks (job_id, chunk, state, lease_owner, lease_expires)
        VALUES ('${JOBS[job_hup1]}', 999, 'leased', '$(hostname):$pid', UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)"
    # a new table (as svcadm lists update installs one), then SIGHUP: the
    # daemon stops as on SIGTERM and starts again in the same process,
    # with the new table
    echo 'mx.reuse.test reusebox' >> "$IT_DIR/lists/local/mx_providers.txt"
    kill -HUP "$pid"
    restarted() { [ "$(grep -c "svc-worker\[$pid\] .*event=started mode=daemon" "$IT_DIR/log/svc.log")" -gt "$started" ]; }
    it_wait_until 30 "for svc-worker to start again after SIGHUP" restarted || return 1
    grep -q "svc-worker\[$pid\] .*event=reloading" "$IT_DIR/log/svc.log" || it_fail "no event=reloading"
    expect_eq "the same process" "$pid" "$(worker_pid)" || return 1
    given_back() { [ "$(it_sql "SELECT state, IFNULL(lease_owner, 'NULL') FROM job_chunks WHERE job_id = '${JOBS[job_hup1]}' AND chunk = 999" | tr '\t' ' ')" = "pending NULL" ]; }
    it_wait_until 30 "for the new image to give back its own lease" given_back || return 1
    it_sql "DELETE FROM job_chunks WHERE job_id = '${JOBS[job_hup1]}' AND chunk = 999"
    one_domain_job job_hup2 n05.reuse.test 900 2 || return 1
    job_done "${JOBS[job_hup2]}" || return 1
    expect_eq "provider after the reload" reusebox \
        "$(it_sql "SELECT DISTINCT provider FROM job_emails WHERE job_id = '${JOBS[job_hup2]}'")" || return 1
    # nothing of the first image is left open in the second
    [ "$(ls "/proc/$pid/fd" | wc -l)" -le "$fds" ] ||
        it_fail "$(ls "/proc/$pid/fd" | wc -l) files open after the reload, $fds before"
    stack_proc_stop "$IT_DIR/log" worker
    rm -f "$IT_DIR/lists/local/mx_providers.txt"
}
t_case "SIGHUP: the daemon starts again in the same process and reads the tables anew (a local provider pattern added)" t_sighup

# The verdict cache is written on a connection of its own, beside the
# results: with verdict_cache locked by another client, a chunk's results
# are still written; the job is completed only once its verdicts are in
# the cache (a chunk's end waits for the cache entries handed over before
# it).
# lock_table TABLE: LOCK TABLES TABLE WRITE held by a client of its own
# (SLEEP is the holder's, not the test's wait) until unlock_table kills
# its connection.
lock_table() {
    : > "$IT_DIR/locker.out"
    stack_mariadb_sql "$IT_DIR/mariadb" --unbuffered -N -B svc -e "LOCK TABLES $1 WRITE;
        SELECT CONNECTION_ID(); SELECT SLEEP(600)" > "$IT_DIR/locker.out" 2>&1 &
    LOCK_PID=$!
    it_wait_until 30 "for the lock holder" lock_held
}
# (the holder's first line is its connection id once it holds the lock)
lock_held() { head -n 1 "$IT_DIR/locker.out" | grep -qx '[0-9][0-9]*'; }
unlock_table() {
    if lock_held; then it_sql "KILL $(head -n 1 "$IT_DIR/locker.out")" || true; fi
    kill "$LOCK_PID" 2>/dev/null || true
    wait "$LOCK_PID" 2>/dev/null || true
}
# waiting_for_lock PATTERN: a statement like PATTERN waits for a table lock
waiting_for_lock() {
    [ "$(it_sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST
        WHERE STATE LIKE 'Waiting for table metadata lock%' AND INFO LIKE '$1'")" -ge 1 ]
}
rows_done() { [ "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$1' AND state = 'done'")" = "$2" ]; }
completed() { local j; for j; do [ "$(job_field "$j" status)" = completed ] || return 1; done; }
finish_waits() { grep -q "event=chunk_finish_waits_cache job=$1 " "$IT_DIR/log/svc.log"; }

t_cache_lane() {
    local id=job_cache_lane i rc=0
    # the claim reads the cache (look-ups): the lock comes once the
    # addresses are in a session, held unanswered by the server
    fake_set 127.0.0.31 hold=1
    for i in $(seq 2001 2040); do echo "user$i@greyforever.svc.test"; done | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    # no housekeeping pass (it deletes from verdict_cache) while the lock
    # is held, and a lease that outlasts it
    changed_conf housekeeping_interval=86400 worker_lease_seconds=300
    stack_proc_start "$IT_DIR/log" worker "$WORKER" -c "$IT_DIR/svc-changed.conf" ||
        { fake_set 127.0.0.31 hold=0; return 1; }
    wait_held_session "$id" || rc=1
    [ $rc = 0 ] && { lock_table verdict_cache || rc=1; }
    fake_set 127.0.0.31 hold=0
    [ $rc = 0 ] && { it_wait_until 60 "for a cache write waiting for the lock" waiting_for_lock 'REPLACE INTO verdict_cache%' || rc=1; }
    [ $rc = 0 ] && { it_wait_until 60 "for the 40 results written while the cache waits" rows_done "$id" 40 || rc=1; }
    [ $rc = 0 ] && { it_wait_until 60 "for the chunk's end waiting for the cache" finish_waits "$id" || rc=1; }
    [ $rc = 0 ] && { [ "$(job_field "$id" status)" = processing ] ||
        it_fail "the job is $(job_field "$id" status) while its verdicts are not in the cache" || rc=1; }
    unlock_table
    [ $rc = 0 ] && { it_wait_until 60 "for the job to complete" completed "$id" || rc=1; }
    stack_proc_stop "$IT_DIR/log" worker
    [ $rc = 0 ] || return 1
    expect_eq "valid" 40 "$(job_field $id count_valid)" || return 1
    # the same addresses again: every one from the cache, written before
    # the first job completed
    fake_ctl 127.0.0.31 reset > /dev/null
    for i in $(seq 2001 2040); do echo "user$i@greyforever.svc.test"; done | mkjob job_cache_lane2 bulk || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "valid again" 40 "$(job_field "${JOBS[job_cache_lane2]}" count_valid)" || return 1
    expect_eq "SMTP sessions for the second job (its verdicts from the cache)" 0 "$(stat 127.0.0.31 sessions)" || return 1
    grep -q "event=cache_writer_unavailable" "$IT_DIR/log/svc.log" && it_fail "the cache writer's connection was not made"
    check_counts $id
}
t_case "the verdict cache is written beside the results (a chunk's results go in while its cache entries wait for a lock) and a job completes only once its verdicts are cached" t_cache_lane

# ---------------------------------------------------------------- deferrals
t_backoff() {
    local id=job_defer i start end
    fake_set 127.0.0.31 mail=451 flight_delay_ms=0
    for i in $(seq -w 1 10); do echo "defer$i@greyforever.svc.test"; done | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    start=$(date +%s%N)
    once || it_fail "svc-worker --once failed"
    end=$(date +%s%N)
    fake_set 127.0.0.31 mail=ok
    expect_eq "status" completed "$(job_field $id status)" || return 1
    expect_eq "results" "10 unknown smtp_unreachable" "$(it_sql "SELECT COUNT(*), classification, sub_status FROM job_emails
        WHERE job_id = '$id' GROUP BY classification, sub_status" | tr '\t' ' ')"
    expect_eq "back-offs" "1000 2000 4000" "$(grep -o 'event=smtp_backoff host=fake31.svc.test ms=[0-9]*' "$IT_DIR/log/svc.log" |
        head -n 3 | sed 's/.*ms=//' | tr '\n' ' ' | sed 's/ $//')"
    [ $(( (end - start) / 1000000 )) -ge 7000 ] || it_fail "4 sessions to a deferring host took less than the back-offs (7 s)"
    check_counts $id && check_ledger $id && expect_eq "refund" 10 "$(job_field $id credits_refunded)"
}
t_case "a host that defers MAIL (451) gets sessions after a back-off of 1, 2, 4 s; then the addresses are unknown" t_backoff

# ---------------------------------------------------------------- database
# MariaDB stops mid-job and comes back: the daemon notices (its writer and
# its own connection fail), retries, and takes the chunks over when their
# leases expire; every address still gets exactly one result.
t_db_restart() {
    local id=job_dbrestart i
    fake_set 127.0.0.31 flight_delay_ms=300 hold=1
    for i in $(seq -w 1 600); do echo "user$i@greyforever.svc.test"; done | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    start_worker || return 1
    wait_held_session "$id" || { fake_set 127.0.0.31 hold=0; return 1; }
    [ "$(job_field $id status)" = processing ] || it_fail "the job is not being processed" || return 1
    # the answers come while the database is away
    stack_mariadb_stop "$IT_DIR/mariadb"
    fake_set 127.0.0.31 hold=0
    sleep 2
    stack_mariadb_start "$IT_DIR/mariadb" || it_fail "MariaDB did not start again" || return 1
    for i in $(seq 1 600); do
        [ "$(job_field $id status)" = completed ] && break
        sleep 0.2
    done
    stack_proc_stop "$IT_DIR/log" worker
    expect_eq "status" completed "$(job_field $id status)" || return 1
    grep -q 'event=process_stopped' "$IT_DIR/log/svc.log" ||
        it_fail "the worker did not notice the database going away" || return 1
    # its chunks given back by itself when the database came back, not
    # left for their leases to run out
    grep -Eq 'event=chunks_released reason=db_failure chunks=[1-9]' "$IT_DIR/log/svc.log" ||
        it_fail "the worker did not give its chunks back after the outage" || return 1
    expect_eq "rows not done" 0 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state <> 'done'")"
    expect_eq "processed_emails" 600 "$(job_field $id processed_emails)"
    expect_eq "valid" 600 "$(job_field $id count_valid)"
    check_counts $id && check_ledger $id
}
t_case "MariaDB restarted mid-job: the daemon retries, gives back its chunks when the database is back, and the job completes with one result per address" t_db_restart

# ---------------------------------------------------------------- crash
t_crash() {
    local id=job_crash i k
    fake_set 127.0.0.31 flight_delay_ms=300
    {
        for i in $(seq -w 1 2400); do echo "user$i@greyforever.svc.test"; done
        for i in $(seq -w 1 300); do echo "unknown$i@greyforever.svc.test"; done
        for i in $(seq -w 1 300); do echo "crash$i@catchall.svc.test"; done
    } | shuf --random-source=<(yes) | mkjob $id bulk || return 1
    id=${JOBS[$id]}
    # killed each time another 500 results are in, so always mid-job
    for k in 1 2 3 4; do
        start_worker || return 1
        for i in $(seq 1 300); do
            [ "$(job_field $id processed_emails)" -ge $((k * 500)) ] && break
            sleep 0.2
        done
        kill -KILL "$(worker_pid)"
        it_log "killed svc-worker ($k): processed $(job_field $id processed_emails) of 3000"
        sleep 0.3
    done
    [ "$(job_field $id status)" != completed ] || it_fail "the job completed before the last kill: not a crash test" || return 1
    start_worker || return 1
    for i in $(seq 1 900); do
        [ "$(job_field $id status)" = completed ] && break
        sleep 0.2
    done
    stack_proc_stop "$IT_DIR/log" worker
    expect_eq "status" completed "$(job_field $id status)" || return 1
    expect_eq "rows not done" 0 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id' AND state <> 'done'")"
    expect_eq "processed_emails" 3000 "$(job_field $id processed_emails)"
    expect_eq "valid" 2400 "$(job_field $id count_valid)"
    expect_eq "invalid" 300 "$(job_field $id count_invalid)"
    expect_eq "catch_all" 300 "$(job_field $id count_catch_all)"
    check_counts $id && check_ledger $id
    expect_eq "job.completed events" 1 "$(it_sql "SELECT COUNT(*) FROM event_outbox WHERE job_id = '$id' AND event = 'job.completed'")"
    expect_eq "chunks claimed more than once" 1 "$(it_sql "SELECT MAX(attempts) > 1 FROM job_chunks WHERE job_id = '$id'")"
}
t_case "svc-worker killed 4 times mid-job (3000 addresses): one result per address, exact counts, one charge, at most one refund" t_crash

t_purge() {
    local id=${JOBS[job_batch]} grey=${JOBS[job_grey]} sandbox=${JOBS[job_sandbox]} broken=${JOBS[job_broken]}
    it_sql "UPDATE jobs SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE id = '$id'"
    it_sql "UPDATE jobs SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE id = '$grey'"
    once || it_fail "svc-worker --once failed"
    expect_eq "expired batch job rows" "1 0 0" "$(it_sql "SELECT (SELECT COUNT(*) FROM jobs WHERE id = '$id' AND data_erased_at IS NOT NULL),
        (SELECT COUNT(*) FROM job_emails WHERE job_id = '$id'), (SELECT COUNT(*) FROM job_chunks WHERE job_id = '$id')" | tr '\t' ' ')"
    expect_eq "a bulk job with an expires_at is kept" 1 "$(it_sql "SELECT COUNT(*) > 0 FROM job_emails WHERE job_id = '$grey'")" || return 1
    # bulk and upload jobs: job_retention_days (90) after they ended
    it_sql "UPDATE jobs SET completed_at = UTC_TIMESTAMP(3) - INTERVAL 91 DAY WHERE id = '$grey';
        UPDATE jobs SET completed_at = UTC_TIMESTAMP(3) - INTERVAL 89 DAY WHERE id = '$sandbox';
        UPDATE jobs SET status = 'pending', created_at = UTC_TIMESTAMP(3) - INTERVAL 200 DAY WHERE id = '$broken'"
    once || it_fail "svc-worker --once failed"
    expect_eq "bulk job 91 days after it completed" "1 0 0" "$(it_sql "SELECT (SELECT COUNT(*) FROM jobs WHERE id = '$grey' AND data_erased_at IS NOT NULL),
        (SELECT COUNT(*) FROM job_emails WHERE job_id = '$grey'), (SELECT COUNT(*) FROM job_chunks WHERE job_id = '$grey')" | tr '\t' ' ')" || return 1
    expect_eq "bulk job 89 days after it completed" 1 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE id = '$sandbox' AND data_erased_at IS NULL")" || return 1
    expect_eq "an old job that has not ended" 1 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE id = '$broken' AND data_erased_at IS NULL")" || return 1
    it_sql "UPDATE jobs SET status = 'failed' WHERE id = '$broken'"
}
t_case "housekeeping erases the data of batch jobs past expires_at and bulk jobs job_retention_days after they ended (addresses, chunks; the job row stays)" t_purge

t_housekeeping_expiry() {
    local t
    it_sql "INSERT INTO verdict_cache (address_hash, result, expires_at) VALUES
        (REPEAT('a', 32), '{}', UTC_TIMESTAMP(3) - INTERVAL 1 SECOND),
        (REPEAT('b', 32), '{}', UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)"
    it_sql "INSERT INTO dns_cache (domain, result, expires_at) VALUES
        ('old.hk.test', '{}', UTC_TIMESTAMP(3) - INTERVAL 1 SECOND),
        ('new.hk.test', '{}', UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)"
    it_sql "INSERT INTO domain_facts (domain, accept_all, expires_at) VALUES
        ('old.hk.test', 1, UTC_TIMESTAMP(3) - INTERVAL 1 SECOND),
        ('new.hk.test', 1, UTC_TIMESTAMP(3) + INTERVAL 1 HOUR)"
    it_sql "INSERT INTO rate_counts (bucket, sec, n) VALUES
        ('acct:hk_old', UNIX_TIMESTAMP() - 61, 3), ('acct:hk_new', UNIX_TIMESTAMP(), 2)"
    it_sql "INSERT INTO rate_buckets (bucket) VALUES ('acct:hk_old'), ('acct:hk_new'), ('ip:192.0.2.99')"
    it_sql "INSERT INTO idempotency_keys (account_id, idem_key, request_hash, state, status, body, created_at) VALUES
        ('acc_hk', 'old', REPEAT('a', 32), 'done', 202, '{}', UTC_TIMESTAMP(3) - INTERVAL 25 HOUR),
        ('acc_hk', 'new', REPEAT('a', 32), 'done', 202, '{}', UTC_TIMESTAMP(3) - INTERVAL 23 HOUR)"
    once || it_fail "svc-worker --once failed"
    expect_eq "verdict_cache left" "$(printf 'b%.0s' $(seq 32))" "$(it_sql "SELECT address_hash FROM verdict_cache WHERE address_hash IN (REPEAT('a', 32), REPEAT('b', 32))")" || return 1
    for t in dns_cache domain_facts; do
        expect_eq "$t left" "new.hk.test" "$(it_sql "SELECT domain FROM $t WHERE domain LIKE '%.hk.test'")" || return 1
    done
    expect_eq "rate_counts left" "acct:hk_new" "$(it_sql "SELECT bucket FROM rate_counts WHERE bucket LIKE 'acct:hk_%'")" || return 1
    expect_eq "rate_buckets left" "acct:hk_new" "$(it_sql "SELECT GROUP_CONCAT(bucket) FROM rate_buckets
        WHERE bucket IN ('acct:hk_old', 'acct:hk_new', 'ip:192.0.2.99')")" || return 1
    expect_eq "idempotency keys left" "new" "$(it_sql "SELECT idem_key FROM idempotency_keys WHERE account_id = 'acc_hk'")" || return 1
    grep -q "event=housekeeping idempotency_expired=[1-9]" "$IT_DIR/log/svc.log" ||
        it_fail "no housekeeping line with the expired idempotency key in the log"
}
t_case "housekeeping expires cached verdicts, DNS answers and domain facts, rate-limit seconds past the window and idempotency keys past 24 h, and keeps the rest" t_housekeeping_expiry

# tls_job NAME FIRST: user<FIRST>@ and unknown<FIRST>@ at each tNN domain
tls_job() {
    local i
    for i in $(seq -w 0 7); do
        printf 'user%s@t%s.reuse.test valid accepted_email\nunknown%s@t%s.reuse.test invalid rejected_email\n' "$2" "$i" "$2" "$i"
    done > "$IT_DIR/$1.want"
    cut -d' ' -f1 "$IT_DIR/$1.want" | mkjob "$1" bulk
}

# 8 domains behind one STARTTLS server that takes one MAIL a session: at
# least 8 sessions, never more than 4 at once (worker_domain_concurrency),
# so some begin after others ended and resume their TLS sessions (the
# server says so); smtp_tls_resume = no: none does
t_tls_resumed() {
    local tls resumed
    tls_job job_tls 1 || return 1
    once || it_fail "svc-worker --once failed"
    check_verdicts job_tls || return 1
    tls=$(stat 127.0.0.36 tls); resumed=$(stat 127.0.0.36 resumed)
    it_log "8 domains over STARTTLS: $(fake_ctl 127.0.0.36 stats)"
    expect_eq "TLS sessions" "$(stat 127.0.0.36 sessions)" "$tls" || return 1
    [ "$tls" -gt 4 ] || it_fail "$tls TLS sessions: the case proves nothing"
    [ "$resumed" -ge 1 ] || it_fail "none of $tls TLS sessions resumed" || return 1
    grep -q "event=smtp_session domain=t[0-9]*.reuse.test .* tls=1 resumed=1" "$IT_DIR/log/svc.log" ||
        it_fail "no event=smtp_session line with resumed=1" || return 1
    # the host's profile says it offers STARTTLS; mx.reuse.test does not
    expect_eq "starttls in the profiles of mx4 and mx" "1 0" \
        "$(it_sql "SELECT (SELECT starttls FROM mx_profiles WHERE host = 'mx4.reuse.test'), (SELECT starttls FROM mx_profiles WHERE host = 'mx.reuse.test')" | tr '\t' ' ')" || return 1
    fake_ctl 127.0.0.36 reset > /dev/null
    fake_set 127.0.0.36 starttls=offered mail_limit=1
    tls_job job_tls_off 2 || return 1
    once_with smtp_tls_resume=no || it_fail "svc-worker --once failed"
    check_verdicts job_tls_off || return 1
    [ "$(stat 127.0.0.36 tls)" -gt 4 ] || it_fail "$(stat 127.0.0.36 tls) TLS sessions with smtp_tls_resume = no"
    expect_eq "resumed with smtp_tls_resume = no" 0 "$(stat 127.0.0.36 resumed)"
}
t_case "STARTTLS sessions to one host resume the TLS sessions of earlier ones (smtp_tls_resume), not with smtp_tls_resume = no" t_tls_resumed

t_no_worker_left() {
    expect_eq "svc-worker processes left" 0 "$(pgrep -fc -- "$WORKER -c $SVC_CONF" || true)"
}
t_case "no svc-worker is left running" t_no_worker_left

t_done
