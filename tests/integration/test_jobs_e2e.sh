#!/bin/bash
# test_jobs_e2e.sh: jobs from end to end through HTTP: a bulk job and a
# batch job created with the API, verified by svc-worker against the real
# servers of mail_env.sh, then read back: the job record and its counts,
# progress, results in input order with filters and paging, the CSV
# download for every filter, the refund of unknown results (bulk only,
# once), the ledger, the job.completed event in the outbox, and addresses at
# an IDN domain and at a top-level domain (tests/dns/svctld.zone).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
WORKER=$top_builddir/src/worker/svc-worker
[ -x "$WORKER" ] || it_skip "$WORKER is not built"
mail_env_start "$top_srcdir/tests/dns/svctld.zone"
fake 127.0.0.30 catchall=1
mail_env_lists
mail_env_conf
it_conf_add "feedback_hash_key_file = $IT_DIR/feedback-hash-key"
it_conf_add "verify_time_budget_ms = 15000
worker_poll_interval = 1
worker_greylist_delay = 3
worker_greylist_retries = 3"
it_stack_start

ACC=$(it_account admin 1000)
API_KEY=$(it_key "$ACC" '*')

# run_worker JOB: svc-worker --once until the job is finished (60 s at most)
run_worker() {
    local st
    for _ in $(seq 1 60); do
        "$WORKER" -c "$SVC_CONF" --once >> "$IT_DIR/worker.out" 2>&1
        st=$(it_sql "SELECT status FROM jobs WHERE id = '$1'")
        case $st in completed|failed|cancelled) return 0 ;; esac
        sleep 1
    done
    it_fail "job $1 is still $st"
}

# address:classification:status, in input order
CASES="alice@mx.svc.test:valid:deliverable
nobody@mx.svc.test:invalid:undeliverable
info@mx.svc.test:risky:risky
full@mx.svc.test:risky:risky
disabled@mx.svc.test:invalid:undeliverable
jane@catchall.svc.test:catch_all:unknown
x@throwaway.svc.test:disposable:undeliverable
not an email:invalid:undeliverable
x@unreachable.svc.test:unknown:unknown
x@nosuch.svc.test:invalid:undeliverable
alice@grey.svc.test:valid:deliverable
blocked@mx.svc.test:unknown:unknown
bob@mx.svc.test:valid:deliverable
user12@pristine.svc.test:risky:risky"
N=$(echo "$CASES" | wc -l)
# "not an email" is a row but free (credit rule 2): N - 1 charged

t_bulk_to_completion() {
    local body id want got
    body=$(echo "$CASES" | cut -d: -f1 | jq -R . | jq -sc '{name: "e2e", emails: .}')
    http POST /v1/verify/bulk "$body"; expect_status 202 && expect_json .total_emails "$N" || return 1
    JOB=$(json .job_id)
    run_worker "$JOB" || return 1
    http GET "/v1/jobs/$JOB"
    expect_json .status completed && expect_json .processed_emails "$N" && expect_json .counts.valid 3 &&
        expect_json .counts.invalid 4 && expect_json .counts.risky 3 && expect_json .counts.catch_all 1 &&
        expect_json .counts.disposable 1 && expect_json .counts.unknown 2 && expect_json .credits_charged "$((N - 1))" &&
        expect_json .credits_refunded 2 && expect_json .download_url "$BASE_URL/v1/jobs/$JOB/download" &&
        expect_jq '.started_at != null and .completed_at != null' || return 1
    want=$(echo "$CASES" | cut -d: -f1,2 | tr '\n' ' ')
    http GET "/v1/jobs/$JOB/results?limit=1000"
    got=$(json '.results[] | "\(.email):\(.classification)"' | tr '\n' ' ')
    expect_eq "results in input order" "$want" "$got"
}
t_case "a bulk job is verified by svc-worker with the right classification for every address" t_bulk_to_completion

t_refund_once() {
    expect_eq "charges" "$((N - 1))" "$(it_sql "SELECT GROUP_CONCAT(amount) FROM credit_ledger WHERE ref LIKE 'job:$JOB:%' AND kind = 'charge'")" || return 1
    expect_eq "refunds" 2 "$(it_sql "SELECT GROUP_CONCAT(amount) FROM credit_ledger WHERE ref LIKE 'job:$JOB:%' AND kind = 'refund'")" || return 1
    "$WORKER" -c "$SVC_CONF" --once >> "$IT_DIR/worker.out" 2>&1
    expect_eq "refunds after another worker pass" 1 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$JOB:%' AND kind = 'refund'")" || return 1
    http GET /v1/credits; expect_json .balance $((1000 - (N - 1) + 2)) || return 1
    expect_eq "ledger totals" ok "$(svcadm credits check "$ACC")"
}
t_case "the unknown results of a bulk job are refunded once, and the ledger adds up" t_refund_once

t_progress_and_results() {
    http GET "/v1/jobs/$JOB/progress"
    expect_json .percent 100 && expect_json .processed_emails "$N" && expect_json .eta_seconds null &&
        expect_json .counts_by_status.deliverable 3 && expect_json .counts_by_status.undeliverable 5 &&
        expect_json .counts_by_status.risky 3 && expect_json .counts_by_status.unknown 3 || return 1
    http GET "/v1/jobs/$JOB/results?classification=invalid&limit=2&page=2"
    expect_json .total 4 && expect_json .page 2 && expect_json '[.results[].email] | join(",")' "not an email,x@nosuch.svc.test" || return 1
    http GET "/v1/jobs/$JOB/results?limit=1"
    expect_json .results[0].email alice@mx.svc.test && expect_json .results[0].status deliverable &&
        expect_json .results[0].reason accepted_email && expect_json .results[0].sub_status null &&
        expect_jq '.results[0].score >= 90' && expect_json .results[0].free no && expect_json .results[0].role no &&
        expect_jq '.results[0].verified_at | test("Z$")' || return 1
    http GET "/v1/jobs/$JOB/results?classification=catch_all"
    expect_json .results[0].catch_all_verdict send_safe && expect_json .results[0].accept_all yes
}
t_case "progress shows 100% with counts by status; results filter by classification and page" t_progress_and_results

csv_col() {	# csv_col FILE COLUMN: one column of a CSV file, a value a line
    python3 -c 'import csv,sys
r = csv.DictReader(open(sys.argv[1], newline=""))
for row in r: print(row[sys.argv[2]])' "$1" "$2"
}

t_download() {
    local f want
    curl -s -H "Authorization: Bearer $API_KEY" -o "$IT_DIR/all.csv" -D "$IT_DIR/all.h" "$BASE_URL/v1/jobs/$JOB/download?format=csv"
    grep -qi '^content-type: text/csv' "$IT_DIR/all.h" || it_fail "download is not text/csv" || return 1
    expect_eq "CSV header" "email,svc_status,svc_classification,svc_sub_status,svc_reason,svc_score,svc_free,svc_role,svc_disposable,svc_accept_all,svc_catch_all_verdict,svc_verified_at,svc_provider,svc_score_basis" \
        "$(head -n 1 "$IT_DIR/all.csv" | tr -d '\r')" || return 1
    expect_eq "all rows" "$(echo "$CASES" | cut -d: -f1)" "$(csv_col "$IT_DIR/all.csv" email)" || return 1
    for f in deliverable undeliverable risky unknown; do
        curl -s -H "Authorization: Bearer $API_KEY" -o "$IT_DIR/$f.csv" "$BASE_URL/v1/jobs/$JOB/download?filter=$f"
        want=$(echo "$CASES" | awk -F: -v s="$f" '$3 == s { print $1 }')
        expect_eq "rows of filter=$f" "$want" "$(csv_col "$IT_DIR/$f.csv" email)" || return 1
    done
    curl -s -H "Authorization: Bearer $API_KEY" -o "$IT_DIR/safe.csv" "$BASE_URL/v1/jobs/$JOB/download?filter=send_safe"
    expect_eq "rows of filter=send_safe" "alice@mx.svc.test jane@catchall.svc.test alice@grey.svc.test bob@mx.svc.test" \
        "$(csv_col "$IT_DIR/safe.csv" email | tr '\n' ' ' | sed 's/ $//')" || return 1
    http GET "/v1/jobs/$JOB/download?filter=everything"; expect_status 400 || return 1
    http GET "/v1/jobs/$JOB/download?format=xlsx"; expect_status 400
}
t_case "the CSV download has the header row and the right rows for every filter" t_download

t_download_formulas() {
    local job
    http POST /v1/verify/bulk '{"emails":["=HYPERLINK(\"http://evil.example\",\"x\")","+1+2","-cmd@mx.svc.test","@SUM(A1:A2)","plain@mx.svc.test"]}'
    expect_status 202 || return 1
    job=$(json .job_id)
    run_worker "$job" || return 1
    curl -s -H "Authorization: Bearer $API_KEY" -o "$IT_DIR/formulas.csv" "$BASE_URL/v1/jobs/$job/download"
    expect_eq "cells that would be formulas start with '" \
        "'=HYPERLINK(\"http://evil.example\",\"x\") '+1+2 '-cmd@mx.svc.test '@SUM(A1:A2) plain@mx.svc.test" \
        "$(csv_col "$IT_DIR/formulas.csv" email | tr '\n' ' ' | sed 's/ $//')"
}
t_case "the CSV download writes cells starting with = + - @ with a leading ' (no formula injection)" t_download_formulas

t_event() {
    local payload
    expect_eq "job.completed events" 1 "$(it_sql "SELECT COUNT(*) FROM event_outbox WHERE job_id = '$JOB' AND event = 'job.completed'")" || return 1
    payload=$(it_sql "SELECT payload FROM event_outbox WHERE job_id = '$JOB'")
    HTTP_BODY=$payload; HTTP_REQUEST="outbox payload"
    expect_json .event job.completed && expect_json .data.job_id "$JOB" && expect_json .data.type bulk &&
        expect_json .data.status completed && expect_json .data.counts.valid 3 && expect_json .data.credits_refunded 2 &&
        expect_json .data.download_url "/v1/jobs/$JOB/download" && expect_jq '.event_id | startswith("evt_")'
}
t_case "completion writes one job.completed event with the API.md envelope" t_event

t_batch() {
    local id
    http POST /v1/verify/batch '{"name":"b","emails":["alice@mx.svc.test","x@unreachable.svc.test","nobody@mx.svc.test"],"callback_data":{"k":1}}'
    expect_status 201 || return 1
    id=$(json .id)
    run_worker "$id" || return 1
    http GET "/v1/verify/batch/$id"
    expect_json .status completed && expect_json .processed_emails 3 && expect_json .valid_count 1 &&
        expect_json .invalid_count 1 && expect_json .risky_count 0 &&
        expect_json .download_url "$BASE_URL/v1/jobs/$id/download" || return 1
    http GET "/v1/jobs/$id"; expect_json .counts.unknown 1 && expect_json .credits_refunded 0 || return 1
    expect_eq "refunds of a batch" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$id:%' AND kind = 'refund'")" || return 1
    HTTP_BODY=$(it_sql "SELECT payload FROM event_outbox WHERE job_id = '$id'"); HTTP_REQUEST="batch payload"
    expect_json .data.callback_data.k 1
}
t_case "a batch job completes with its status fields and no refund of unknown" t_batch

# svc-worker's sessions carry the A-label domain in RCPT (the Postfix refuses
# the U-label form); jobs.c records each address's A-label domain, a dotless
# one too, and "" for an address that is not one.
t_idn_dotless() {
    local body id want got
    want="alice@bücher.svc.test:valid:accepted_email:xn--bcher-kva.svc.test
nobody@bücher.svc.test:invalid:rejected_email:xn--bcher-kva.svc.test
alice@svctld:valid:accepted_email:svctld
nobody@svctld:invalid:rejected_email:svctld
x@nosuchtld:invalid:invalid_domain:nosuchtld
x@123:invalid:invalid_syntax:"
    body=$(echo "$want" | cut -d: -f1 | jq -R . | jq -sc '{name: "idn", emails: .}')
    http POST /v1/verify/bulk "$body"; expect_status 202 && expect_json .total_emails 6 || return 1
    id=$(json .job_id)
    expect_eq "domains recorded by jobs.c" "$(echo "$want" | cut -d: -f4)" \
        "$(it_sql "SELECT domain FROM job_emails WHERE job_id = '$id' ORDER BY seq")" || return 1
    run_worker "$id" || return 1
    http GET "/v1/jobs/$id/results?limit=100"
    got=$(json '.results[] | "\(.email):\(.classification):\(.reason)"')
    expect_eq "results" "$(echo "$want" | cut -d: -f1-3)" "$got" || return 1
    http GET "/v1/jobs/$id"
    expect_json .status completed && expect_json .counts.valid 2 && expect_json .counts.invalid 4 &&
        expect_json .counts.unknown 0
}
t_case "a bulk job with IDN and dotless addresses: A-label RCPTs, DNS decides for a TLD" t_idn_dotless

# The worker reads the verdict cache and the complainer list for a chunk at
# once and writes results and cache entries in multi-row statements: 150
# addresses on the catch-all domain (more than one group of 128 written;
# read in one statement whose list is filled up to 256 with the last key
# again), two of them on the complainer list, one near the end, and alice,
# whose cached verdict (from the first job) is changed to "full", in the
# object form of entries cached by earlier versions, to show it is used.
t_cache_and_complainers() {
    local body id got
    printf 'u005@catchall.svc.test\nu140@catchall.svc.test\n' |
        svcadm complainers import - --source e2e > /dev/null || return 1
    # (in the form entries had before the compact array: still read)
    it_sql "UPDATE verdict_cache SET result = '{\"status\":\"risky\",\"reason\":\"mailbox_full\",\"sub_status\":\"mailbox_full\",\"score\":40,\"score_basis\":\"rules\",\"spam_trap\":\"no\",\"role\":\"no\",\"catch_all_verdict\":null,\"domain\":{\"name\":\"mx.svc.test\",\"acceptAll\":\"no\",\"disposable\":\"no\",\"free\":\"no\"},\"mx\":[{\"priority\":10,\"host\":\"mx.svc.test\"}],\"provider\":\"svc.test\",\"smtp\":{\"code\":452,\"enhanced_code\":\"4.2.2\",\"message\":\"{address}: mailbox full\",\"tls\":false},\"verified_at\":\"2026-11-29T00:00:00Z\",\"cached\":false,\"kind\":\"full\",\"trap\":0}'
        WHERE address_hash = $(it_cache_keys alice@mx.svc.test)" > /dev/null
    body=$({ echo alice@mx.svc.test; for i in $(seq -w 1 150); do echo "u$i@catchall.svc.test"; done; } |
        jq -R . | jq -sc '{emails: .}')
    http POST /v1/verify/bulk "$body"; expect_status 202 || return 1
    id=$(json .job_id)
    run_worker "$id" || return 1
    http GET "/v1/jobs/$id"
    expect_json .status completed && expect_json .processed_emails 151 && expect_json .counts.catch_all 148 &&
        expect_json .counts.risky 3 || return 1
    http GET "/v1/jobs/$id/results?classification=risky"
    got=$(json '.results[] | "\(.email):\(.sub_status)"' | tr '\n' ' ')
    expect_eq "risky results" "alice@mx.svc.test:mailbox_full u005@catchall.svc.test:known_complainer u140@catchall.svc.test:known_complainer " "$got" || return 1
    expect_eq "verdicts cached for the job's fresh addresses" 150 \
        "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash IN ($(seq -f 'u%03g@catchall.svc.test' 1 150 | it_cache_keys -))")" || return 1
    expect_eq "alice's cache entry was not rewritten" full \
        "$(it_sql "SELECT JSON_VALUE(result, '\$.kind') FROM verdict_cache WHERE address_hash = $(it_cache_keys alice@mx.svc.test)")"
}
t_case "a job takes cached verdicts and marks known complainers, with more addresses than one statement group" t_cache_and_complainers

t_done
