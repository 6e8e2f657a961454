#!/bin/bash
# test_refunds.sh: refunds return only what was charged. Jobs are created
# through the API (lighttpd, svc-api) and verified by svc-worker against the
# real mail servers on loopback (tests/integration/mail_env.sh). A sandbox
# key's sandbox-domain addresses are free; a job mixing them with real
# addresses is charged for the real ones only, and completion (unknown
# results), cancellation and failure (unprocessed addresses) never give back
# more than the charged rows concerned. A catch-all verdict is an answer and
# is not refunded. Entries not shaped like an address are free rows too.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require timeout

WORKER=$top_builddir/src/worker/svc-worker
[ -x "$WORKER" ] || it_skip "$WORKER is not built"

mail_env_start
fake 127.0.0.30 catchall=1
mail_env_lists
mail_env_conf
it_conf_add "worker_poll_interval = 1
worker_lease_seconds = 30"
it_stack_start

ACC=$(it_account pro 2000)
SANDBOX_KEY=$(it_key "$ACC" '*' --sandbox)
LIVE_KEY=$(it_key "$ACC" '*')

once() { timeout 120 "$WORKER" --once -c "$SVC_CONF" 2>> "$IT_DIR/log/worker-stderr.log"; }
job_field() { it_sql "SELECT $2 FROM jobs WHERE id = '$1'"; }
balance() { it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$ACC'"; }
SB=sandbox.svc.example
# the sandbox local parts whose answer is unknown, each a free row
SANDBOX_UNKNOWN="\"unknown@$SB\",\"greylisted@$SB\",\"smtp_blocked@$SB\",\"smtp_unreachable@$SB\",\"dns_error@$SB\""

# create KEY EMAILS-JSON: POST /v1/verify/bulk, sets JOB
create() {
    API_KEY=$1 http POST /v1/verify/bulk "{\"emails\":[$2]}"
    expect_status 202 || return 1
    JOB=$(json .job_id)
}

# 200 real addresses fill a chunk of their own (jobs.c: a domain that does
# not fit whole into the current chunk starts the next), so the sandbox
# rows after them in domain order are another chunk
REAL200="\"alice@mx.svc.test\",\"bob@mx.svc.test\"$(printf ',"nobody%03d@mx.svc.test"' $(seq 1 198))"

# hold_chunk JOB DOMAIN: the job's chunk of DOMAIN is leased by another
# worker for an hour, so this test's worker leaves it alone
hold_chunk() {
    it_sql "UPDATE job_chunks SET state = 'leased', lease_owner = 'elsewhere:1',
        lease_expires = UTC_TIMESTAMP(3) + INTERVAL 1 HOUR WHERE job_id = '$1'
        AND chunk = (SELECT MIN(chunk) FROM job_emails WHERE job_id = '$1' AND domain = '$2')"
}

t_complete_mixed() {
    local before
    before=$(balance)
    create "$SANDBOX_KEY" "\"alice@mx.svc.test\",\"bob@mx.svc.test\",\"x@unreachable.svc.test\",\"jane@catchall.svc.test\",$SANDBOX_UNKNOWN" || return 1
    expect_json .credits_charged 4 && expect_json .total_emails 9 || return 1
    expect_eq "free rows recorded" 5 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND charged = 0")" || return 1
    once || it_fail "svc-worker --once failed"
    API_KEY=$SANDBOX_KEY http GET "/v1/jobs/$JOB"
    expect_json .status completed && expect_json .counts.unknown 6 && expect_json .counts.catch_all 1 &&
        expect_json .counts.valid 2 || return 1
    # only x@unreachable was charged and came out unknown; catch-all is an answer
    expect_json .credits_refunded 1 || return 1
    expect_eq "refund row" 1 "$(it_sql "SELECT amount FROM credit_ledger WHERE ref = 'job:$JOB:refund'")" || return 1
    expect_eq "balance" $((before - 3)) "$(balance)"
}
t_case "sandbox key, mixed job: charged for real addresses only, completion refunds only charged unknowns (not free ones, not catch-all)" t_complete_mixed

t_cancel_after_real_done() {
    local before
    before=$(balance)
    create "$SANDBOX_KEY" "$REAL200,$SANDBOX_UNKNOWN" || return 1
    expect_json .credits_charged 200 || return 1
    hold_chunk "$JOB" "$SB"
    once || it_fail "svc-worker --once failed"
    expect_eq "real rows verified" "processing 200 2" "$(job_field "$JOB" "CONCAT_WS(' ', status, processed_emails, count_valid)")" || return 1
    API_KEY=$SANDBOX_KEY http DELETE "/v1/jobs/$JOB"
    expect_status 200 && expect_json .status cancelled && expect_json .credits_refunded 0 || return 1
    expect_eq "refund rows" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref = 'job:$JOB:refund'")" || return 1
    expect_eq "balance" $((before - 200)) "$(balance)"
}
t_case "cancelling a mixed sandbox job after its real addresses were verified refunds nothing (the unprocessed rows were free)" t_cancel_after_real_done

t_cancel_before() {
    local before
    before=$(balance)
    create "$SANDBOX_KEY" "\"alice@mx.svc.test\",\"bob@mx.svc.test\",$SANDBOX_UNKNOWN" || return 1
    API_KEY=$SANDBOX_KEY http DELETE "/v1/jobs/$JOB"
    expect_status 200 && expect_json .credits_refunded 2 || return 1
    expect_eq "balance" "$before" "$(balance)" || return 1
    create "$SANDBOX_KEY" "$SANDBOX_UNKNOWN" || return 1
    expect_json .credits_charged 0 || return 1
    API_KEY=$SANDBOX_KEY http DELETE "/v1/jobs/$JOB"
    expect_status 200 && expect_json .credits_refunded 0 || return 1
    expect_eq "ledger rows of the free job" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$JOB:%'")" || return 1
    expect_eq "balance" "$before" "$(balance)"
}
t_case "cancelling before processing refunds the charged rows only; an uncharged sandbox job refunds nothing" t_cancel_before

t_fail_after_real_done() {
    local before
    before=$(balance)
    create "$SANDBOX_KEY" "$REAL200,$SANDBOX_UNKNOWN" || return 1
    hold_chunk "$JOB" "$SB"
    once || it_fail "svc-worker --once failed"
    expect_eq "real rows verified" 200 "$(job_field "$JOB" processed_emails)" || return 1
    # the free chunk loses its rows and its lease: the job cannot go on
    it_sql "DELETE FROM job_emails WHERE job_id = '$JOB' AND domain = '$SB';
        UPDATE job_chunks SET state = 'pending', lease_owner = NULL, lease_expires = NULL
        WHERE job_id = '$JOB' AND state = 'leased'"
    once || it_fail "svc-worker --once failed"
    expect_eq "status" "failed job_rows_missing" "$(job_field "$JOB" "CONCAT_WS(' ', status, error_code)")" || return 1
    expect_eq "credits_refunded" 0 "$(job_field "$JOB" credits_refunded)" || return 1
    expect_eq "balance" $((before - 200)) "$(balance)"
}
t_case "a mixed sandbox job that fails after its real addresses were verified refunds nothing" t_fail_after_real_done

t_fail_before() {
    local before
    before=$(balance)
    create "$SANDBOX_KEY" "$REAL200,$SANDBOX_UNKNOWN" || return 1
    hold_chunk "$JOB" mx.svc.test
    it_sql "DELETE FROM job_emails WHERE job_id = '$JOB' AND domain = '$SB'"
    once || it_fail "svc-worker --once failed"
    expect_eq "status" failed "$(job_field "$JOB" status)" || return 1
    expect_eq "credits_refunded" 200 "$(job_field "$JOB" credits_refunded)" || return 1
    expect_eq "balance" "$before" "$(balance)"
}
t_case "a job that fails before its charged addresses were verified refunds them" t_fail_before

# A sandbox job made before migration 006: nothing charged, but its rows
# count as charged (the column's default), so its unknown results count as
# charged unknowns; completion gives back at most what was charged.
t_complete_refund_capped() {
    local before
    before=$(balance)
    create "$SANDBOX_KEY" "$SANDBOX_UNKNOWN" || return 1
    expect_json .credits_charged 0 || return 1
    it_sql "UPDATE job_emails SET charged = 1 WHERE job_id = '$JOB'"
    once || it_fail "svc-worker --once failed"
    expect_eq "job" "completed 5 0" "$(job_field "$JOB" "CONCAT_WS(' ', status, count_unknown, credits_refunded)")" || return 1
    expect_eq "ledger rows" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$JOB:%'")" || return 1
    expect_eq "balance" "$before" "$(balance)"
}
t_case "completion refunds at most what was charged: a job whose free rows count as charged (made before migration 006) refunds nothing" t_complete_refund_capped

t_live_key_pays_sandbox() {
    local before
    before=$(balance)
    create "$LIVE_KEY" "$SANDBOX_UNKNOWN" || return 1
    expect_json .credits_charged 5 || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "refunded" "completed 5" "$(job_field "$JOB" "CONCAT_WS(' ', status, credits_refunded)")" || return 1
    expect_eq "balance" "$before" "$(balance)" || return 1
    svcadm credits check "$ACC" > "$IT_DIR/check.out" 2>&1 || it_fail "svcadm credits check: $(cat "$IT_DIR/check.out")"
}
t_case "a live key pays for sandbox addresses, and gets their unknown results back at completion" t_live_key_pays_sandbox

# Entries not shaped like an address cost nothing anywhere (credit rule 2):
# a JSON bulk or batch job keeps them as invalid_syntax rows, uncharged, so
# neither completion nor cancellation gives anything back for them.
NOT_ADDRESSES="\"not an address\",\"jane@gmail,com\",\"@mx.svc.test\""

t_non_addresses_free() {
    local before
    before=$(balance)
    create "$LIVE_KEY" "$NOT_ADDRESSES,\"alice@mx.svc.test\",\"x@unreachable.svc.test\"" || return 1
    expect_json .credits_charged 2 && expect_json .total_emails 5 && expect_json .credits_remaining $((before - 2)) || return 1
    expect_eq "charge row" 2 "$(it_sql "SELECT amount FROM credit_ledger WHERE ref = 'job:$JOB:charge'")" || return 1
    expect_eq "free rows" 3 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND charged = 0")" || return 1
    once || it_fail "svc-worker --once failed"
    API_KEY=$LIVE_KEY http GET "/v1/jobs/$JOB"
    expect_json .status completed && expect_json .counts.invalid 3 && expect_json .counts.unknown 1 &&
        expect_json .credits_refunded 1 || return 1
    API_KEY=$LIVE_KEY http GET "/v1/jobs/$JOB/results?classification=invalid"
    expect_json '[.results[] | .email + "=" + .reason] | sort | join(",")' \
        "@mx.svc.test=invalid_syntax,jane@gmail,com=invalid_syntax,not an address=invalid_syntax" || return 1
    expect_eq "balance" $((before - 1)) "$(balance)" || return 1
    # cancelled before any row is verified: the charged rows come back
    before=$(balance)
    create "$LIVE_KEY" "$NOT_ADDRESSES,\"alice@mx.svc.test\",\"bob@mx.svc.test\"" || return 1
    expect_json .credits_charged 2 || return 1
    API_KEY=$LIVE_KEY http DELETE "/v1/jobs/$JOB"
    expect_status 200 && expect_json .credits_refunded 2 || return 1
    expect_eq "balance after cancel" "$before" "$(balance)" || return 1
    # a batch: the same rule; only entries that are no address: free
    API_KEY=$LIVE_KEY http POST /v1/verify/batch "{\"emails\":[$NOT_ADDRESSES,\"alice@mx.svc.test\"]}"
    expect_status 201 && expect_json .credits_charged 1 && expect_json .total_emails 4 || return 1
    API_KEY=$LIVE_KEY http POST /v1/verify/bulk "{\"emails\":[$NOT_ADDRESSES]}"
    expect_status 202 && expect_json .credits_charged 0 || return 1
    JOB=$(json .job_id)
    expect_eq "ledger rows of the free job" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$JOB:%'")" || return 1
    expect_eq "balance after batch and free job" $((before - 1)) "$(balance)"
}
t_case "entries that are no address are invalid_syntax rows, never charged nor refunded (bulk, batch, cancel)" t_non_addresses_free

t_done
