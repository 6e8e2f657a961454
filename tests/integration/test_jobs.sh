#!/bin/bash
# test_jobs.sh: the job endpoints through HTTP (lighttpd, svc-api, MariaDB):
# bulk and batch creation (trimming, case-insensitive de-duplication,
# limits, charging, sandbox, 402, a webhook_url refused unless it is https
# to a host that is not localhost or a private address), Idempotency-Key on
# job creation, job records, listing, progress, results and download before
# completion, cancellation with exact refunds, and one account never seeing
# another's jobs. Processing by svc-worker is covered by test_worker.sh.
# De-duplication is on the normal form of an address (case, Unicode forms
# and IDN labels of the domain), and the stream parser of the body answers
# as jansson did.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_conf_add "service_domain = svc.example"
# 16 MiB for a request's addresses in memory (the default is 144): the
# 100,000-address jobs below fit, t_memory_max's do not
it_conf_add "api_job_memory_mb = 16"
it_stack_start

ACC=$(it_account admin 1000)
API_KEY=$(it_key "$ACC" '*')

ledger() {	# ledger KIND JOB: the amounts of the job's ledger rows of KIND
    it_sql "SELECT COALESCE(GROUP_CONCAT(amount), '') FROM credit_ledger WHERE kind = '$1' AND ref LIKE 'job:$2:%'"
}

t_bulk_create() {
    local id
    http POST /v1/verify/bulk '{"name":"list 1","emails":[" Alice@Example.com","alice@example.com","bob@example.com","not an email","","BOB@EXAMPLE.COM  ","j.doe+x@example.com"]}'
    expect_status 202 && expect_json .status pending && expect_json .name "list 1" &&
        expect_json .total_emails 4 && expect_json .duplicates_removed 2 && expect_json .credits_charged 3 &&
        expect_json .credits_remaining 997 || return 1
    id=$(json .job_id)
    [[ $id == job_* ]] || it_fail "job id $id lacks the job_ prefix" || return 1
    expect_json .status_url "/v1/jobs/$id" && expect_json .progress_url "/v1/jobs/$id/progress" || return 1
    # "not an email" is a row, but free (credit rule 2)
    expect_eq "charge rows" 3 "$(ledger charge "$id")" || return 1
    expect_eq "free rows" "not an email" "$(it_sql "SELECT GROUP_CONCAT(email) FROM job_emails WHERE job_id = '$id' AND charged = 0")" || return 1
    expect_eq "rows in input order" "Alice@Example.com,bob@example.com,not an email,j.doe+x@example.com" \
        "$(it_sql "SELECT GROUP_CONCAT(email ORDER BY seq) FROM job_emails WHERE job_id = '$id'")" || return 1
    http GET "/v1/jobs/$id"
    expect_status 200 && expect_json .job_id "$id" && expect_json .type bulk && expect_json .status pending &&
        expect_json .processed_emails 0 && expect_json .counts.valid 0 && expect_json .credits_charged 3 &&
        expect_json .credits_refunded 0 && expect_json .download_url null && expect_json .error null || return 1
    http GET "/v1/jobs/$id/progress"
    expect_status 200 && expect_json .percent 0 && expect_json .total_emails 4 &&
        expect_json .counts_by_status.deliverable 0 && expect_json .eta_seconds null || return 1
    http GET "/v1/jobs/$id/results"; expect_status 200 && expect_json .total 0 && expect_json .results '[]' || return 1
    http GET "/v1/jobs/$id/download?format=csv"
    expect_status 409 && expect_json .error.code job_not_completed && expect_json .error.details.status pending
}
t_case "a bulk job is created trimmed and de-duplicated case-insensitively, charged per unique address (an entry that is no address is free)" t_bulk_create

t_bulk_invalid() {
    http POST /v1/verify/bulk '{"emails":[]}'; expect_status 400 && expect_json .error.details.field emails || return 1
    http POST /v1/verify/bulk '{"emails":"a@b.c"}'; expect_status 400 && expect_json .error.code invalid_email || return 1
    http POST /v1/verify/bulk '{"emails":["a@b.c",7]}'; expect_status 400 && expect_jq '.error.message | contains("element 1")' || return 1
    http POST /v1/verify/bulk "{\"name\":\"$(head -c 201 /dev/zero | tr '\0' n)\",\"emails\":[\"a@b.c\"]}"
    expect_status 400 && expect_json .error.details.field name || return 1
    jq -cn '{emails: [range(0; 100001) | "u\(.)@example.com"]}' > "$IT_DIR/too-many.json"
    http POST /v1/verify/bulk "@$IT_DIR/too-many.json"
    expect_status 400 && expect_json .error.code too_many_emails && expect_json .error.details.limit 100000 || return 1
    # 100,000 unique after de-duplication is allowed
    jq -cn '{emails: ([range(0; 100000) | "u\(.)@example.com"] + ["U0@EXAMPLE.COM"])}' > "$IT_DIR/max.json"
    local acc=$(it_account admin 100000)
    API_KEY=$(it_key "$acc" 'verify:bulk') http POST /v1/verify/bulk "@$IT_DIR/max.json"
    expect_status 202 && expect_json .total_emails 100000 && expect_json .duplicates_removed 1
}
t_case "bad bulk bodies get 400 naming the field; more than 100,000 unique addresses 400 too_many_emails" t_bulk_invalid

# dedup_case WANT_ROWS BODY: a bulk job of BODY is one row per address in
# WANT_ROWS ("|"-separated, first spellings, input order): total_emails,
# duplicates_removed (every other non-blank entry), the charge and the
# ledger, and, once the rows are done as a worker leaves them, its results.
dedup_case() {
    local want=$1 body=$2 acc key id n all
    n=$(printf '%s' "$want" | awk -F'|' '{ print NF }')
    all=$(printf '%s' "$body" | jq '.emails | length')
    acc=$(it_account pro 100); key=$(it_key "$acc" '*')
    API_KEY=$key http POST /v1/verify/bulk "$body"
    expect_status 202 && expect_json .total_emails "$n" &&
        expect_json .duplicates_removed $((all - n)) && expect_json .credits_charged "$n" &&
        expect_json .credits_remaining $((100 - n)) || return 1
    id=$(json .job_id)
    expect_eq "charge rows" "$n" "$(ledger charge "$id")" || return 1
    it_sql "UPDATE job_emails SET state = 'done', classification = 'valid', status = 'deliverable', reason = 'accepted_email', score = 90, free = 0, role = 0, disposable = 0, accept_all = 0, verified_at = UTC_TIMESTAMP() WHERE job_id = '$id'"
    API_KEY=$key http GET "/v1/jobs/$id/results"
    expect_status 200 && expect_json .total "$n" && expect_json '[.results[].email] | join("|")' "$want"
}

t_dedup_unicode_case() {
    dedup_case 'anna@BÜCHER.example|bob@x.example' \
        '{"emails":["anna@BÜCHER.example","bob@x.example","anna@bücher.example","ANNA@Bücher.Example"]}'
}
t_case "addresses that differ in the case of a non-ASCII domain letter are one address, charged and verified once" t_dedup_unicode_case

t_dedup_width() {
    dedup_case 'User@ｅｘａｍｐｌｅ.com|bob@x.example' \
        '{"emails":["User@ｅｘａｍｐｌｅ.com","user@example.com","bob@x.example","USER@EXAMPLE.COM","user@ＥＸＡＭＰＬＥ.com"]}'
}
t_case "a domain in full-width (compatibility) forms is the same address as in ASCII, charged and verified once" t_dedup_width

t_dedup_idn_labels() {
    dedup_case 'user@bücher.example|"user.2"@xn--bcher-kva.example' \
        '{"emails":["user@bücher.example","user@xn--bcher-kva.example","\"user.2\"@xn--bcher-kva.example","USER@XN--BCHER-KVA.EXAMPLE","user.2@bücher.example"]}'
}
t_case "the U-label and A-label spellings of one IDN domain (and needless quotes) are one address, charged and verified once" t_dedup_idn_labels

t_dedup_sandbox() {
    local acc sb
    acc=$(it_account pro 10)
    sb=$(it_key "$acc" '*' --sandbox)
    API_KEY=$sb http POST /v1/verify/bulk '{"emails":["accepted_email@sandbox.svc.example","ACCEPTED_EMAIL@ｓａｎｄｂｏｘ.svc.example","real@x.example"]}'
    expect_status 202 && expect_json .total_emails 2 && expect_json .duplicates_removed 1 &&
        expect_json .credits_charged 1
}
t_case "a sandbox address in two spellings is one row, free for a sandbox key; the real address is charged" t_dedup_sandbox

t_bulk_json_answers() {
    # what jansson refused is still 400 invalid_json
    for body in '{"emails":["a@b.co"],"emails":["c@d.org"]}' '{"emails":["a@b.co"],"name":"x","name":"y"}' \
            '{"emails":["a@b.co",{"k":1,"k":2}]}' '{"emails":["a\u0000@b.co"]}' '{"emails":["\ud800@b.co"]}' \
            '{"emails":["a@b.co"],"n":99999999999999999999}' '{"emails":["a@b.co"]} x' '{"emails":["a@b.co"]'; do
        http POST /v1/verify/bulk "$body"
        expect_status 400 && expect_json .error.code invalid_json &&
            expect_jq '.error.message | startswith("request body is not valid JSON: ")' || return 1
    done
    http POST /v1/verify/bulk '["a@b.co"]'
    expect_status 400 && expect_json .error.code invalid_json && expect_json .error.message "request body must be a JSON object" || return 1
    http POST /v1/verify/bulk '{"emails":["a@b.co"]}' -H 'Content-Type: text/xml'; expect_status 415 || return 1
    # the element count is refused even when the name, read later, is wrong
    # too: the name is checked first, as before
    jq -cn '{emails: [range(0; 400001) | ""], name: 7}' > "$IT_DIR/big.json"
    http POST /v1/verify/bulk "@$IT_DIR/big.json"; expect_status 400 && expect_json .error.details.field name || return 1
    jq -cn '{emails: [range(0; 400001) | ""]}' > "$IT_DIR/big.json"
    http POST /v1/verify/bulk "@$IT_DIR/big.json"
    expect_status 400 && expect_json .error.code too_many_emails && expect_json .error.details.limit 100000 || return 1
    # callback_data is kept small: 32 levels, 4096 values, 64 KiB
    jq -cn '{emails: ["a@b.co"], callback_data: {a: [range(0; 4095)]}}' > "$IT_DIR/big.json"
    http POST /v1/verify/batch "@$IT_DIR/big.json"
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field callback_data || return 1
    jq -cn '{emails: ["a@b.co"], callback_data: {a: [range(0; 4094)]}}' > "$IT_DIR/big.json"
    http POST /v1/verify/batch "@$IT_DIR/big.json"; expect_status 201
}
t_memory_max() {
    local acc key
    acc=$(it_account pro 200000); key=$(it_key "$acc" '*')
    # 100,000 addresses at a domain of 18 one-letter IDN labels: 56 octets
    # as sent, 146 as A-labels, kept for every address: over 16 MiB
    jq -cn '{emails: [range(0; 100000) | "u\(.)@" + ([range(0; 18) | "ü"] | join(".")) + ".de"]}' > "$IT_DIR/idn.json"
    API_KEY=$key http POST /v1/verify/bulk "@$IT_DIR/idn.json"
    expect_status 413 && expect_json .error.code file_too_large && expect_json .error.details.limit_bytes 16777216 || return 1
    expect_eq "jobs created" 0 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$acc'")" || return 1
    API_KEY=$key http GET /v1/credits; expect_json .balance 200000
}
t_case "addresses that would need more than api_job_memory_mb once read: 413, nothing created or charged" t_memory_max

t_case "bulk and batch bodies: malformed JSON, duplicate keys, \\u0000, lone surrogates and huge numbers 400 invalid_json; element count, callback_data limits" t_bulk_json_answers

t_insufficient() {
    local acc before
    acc=$(it_account pro 2)
    API_KEY=$(it_key "$acc" 'verify:bulk') http POST /v1/verify/bulk '{"emails":["a@x.example","b@x.example","c@x.example"]}'
    expect_status 402 && expect_json .error.code insufficient_credits && expect_json .error.details.required 3 &&
        expect_json .error.details.available 2 || return 1
    expect_eq "jobs created" 0 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$acc'")" || return 1
    expect_eq "ledger charges" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE account_id = '$acc' AND kind = 'charge'")"
}
t_case "credits short of the unique count: 402 with details, nothing created or charged" t_insufficient

t_idempotent_create() {
    local acc key id n
    acc=$(it_account pro 50)
    key=$(it_key "$acc" '*')
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["a@x.example","b@x.example"]}' -H 'Idempotency-Key: job-1'
    expect_status 202 || return 1
    id=$(json .job_id)
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["a@x.example","b@x.example"]}' -H 'Idempotency-Key: job-1'
    expect_status 202 && expect_json .job_id "$id" && expect_header Idempotent-Replayed true || return 1
    n=$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$acc'")
    expect_eq "jobs after a retried request" 1 "$n" || return 1
    API_KEY=$key http GET /v1/credits; expect_json .balance 48 || return 1
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["c@x.example"]}' -H 'Idempotency-Key: job-1'
    expect_status 422 && expect_json .error.code idempotency_key_reused
}
t_case "a retried bulk request with its Idempotency-Key never creates or charges twice" t_idempotent_create

t_sandbox() {
    local acc sb id
    acc=$(it_account pro 0)
    sb=$(it_key "$acc" '*' --sandbox)
    API_KEY=$sb http POST /v1/verify/bulk '{"emails":["accepted_email@sandbox.svc.example","rejected_email@sandbox.svc.example"]}'
    expect_status 202 && expect_json .credits_charged 0 || return 1
    id=$(json .job_id)
    expect_eq "sandbox flag" 1 "$(it_sql "SELECT sandbox FROM jobs WHERE id = '$id'")" || return 1
    API_KEY=$sb http POST /v1/verify/bulk '{"emails":["accepted_email@sandbox.svc.example","real@x.example"]}'
    expect_status 402 && expect_json .error.details.required 1
}
t_case "sandbox keys run sandbox-address jobs at no cost and pay for real addresses" t_sandbox

t_batch() {
    local id
    http POST /v1/verify/batch '{"name":"b1","emails":["a@x.example","b@x.example","A@X.EXAMPLE"],"webhook_url":"https://hooks.example.com/svc","callback_data":{"list":7}}'
    expect_status 201 && expect_json .name b1 && expect_json .status pending && expect_json .total_emails 2 &&
        expect_json .processed_emails 0 && expect_jq '.webhook_secret | startswith("whsec_")' &&
        expect_jq '.created_at | test("Z$")' && expect_jq '.estimated_completion >= .created_at' || return 1
    id=$(json .id)
    expect_eq "callback_data stored" '{"list":7}' "$(it_sql "SELECT callback_data FROM jobs WHERE id = '$id'")" || return 1
    expect_eq "kept 30 days" 30 "$(it_sql "SELECT TIMESTAMPDIFF(DAY, created_at, expires_at) FROM jobs WHERE id = '$id'")" || return 1
    http GET "/v1/verify/batch/$id"
    expect_status 200 && expect_json .id "$id" && expect_json .valid_count 0 && expect_json .invalid_count 0 &&
        expect_json .risky_count 0 && expect_jq 'has("download_url") | not' || return 1
    http POST /v1/verify/batch '{"emails":["a@x.example"],"webhook_url":"ftp://x"}'
    expect_status 400 && expect_json .error.details.field webhook_url || return 1
    http POST /v1/verify/batch '{"emails":["a@x.example"],"callback_data":[1]}'
    expect_status 400 && expect_json .error.details.field callback_data || return 1
    http POST /v1/verify/batch '{"emails":["a@x.example"]}'; expect_status 201 && expect_jq 'has("webhook_secret") | not' || return 1
    # a retried batch request replays the same 201
    http POST /v1/verify/batch '{"emails":["r@x.example"]}' -H 'Idempotency-Key: batch-1'; expect_status 201 || return 1
    id=$(json .id)
    http POST /v1/verify/batch '{"emails":["r@x.example"]}' -H 'Idempotency-Key: batch-1'
    expect_status 201 && expect_json .id "$id" && expect_header Idempotent-Replayed true || return 1
    # an over-long entry is cut, not a failure of the whole request
    http POST /v1/verify/batch "{\"emails\":[\"a@x.example\",\"$(head -c 400 /dev/zero | tr '\0' x)@x.example\"]}"
    expect_status 201 && expect_json .total_emails 2 || return 1
    # a bulk job is not a batch
    http POST /v1/verify/bulk '{"emails":["a@x.example"]}'; expect_status 202 || return 1
    http GET "/v1/verify/batch/$(json .job_id)"; expect_status 404
}
t_case "batch jobs: 201 with the spec's fields and a webhook secret, status endpoint, bad webhook_url 400" t_batch

t_batch_webhook_guard() {
    local acc key pair url want
    acc=$(it_account pro 10)
    key=$(it_key "$acc" '*')
    # URL|what the message must name
    for pair in 'https://127.0.0.1/|private' 'https://169.254.169.254/latest|private' \
            'https://[::1]/|private' 'https://localhost/x|localhost' 'https://LOCALHOST./x|localhost' \
            'https://2130706433/|private' 'https://[::ffff:127.0.0.1]/|private' \
            'http://example.com/|https://'; do
        url=${pair%|*} want=${pair##*|}
        API_KEY=$key http POST /v1/verify/batch "$(jq -cn --arg u "$url" '{emails: ["a@x.example"], webhook_url: $u}')"
        expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field webhook_url &&
            expect_jq ".error.message | startswith(\"webhook_url: \") and contains(\"$want\")" || return 1
    done
    expect_eq "jobs created" 0 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$acc'")" || return 1
    expect_eq "ledger charges" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE account_id = '$acc' AND kind = 'charge'")" || return 1
    API_KEY=$key http GET /v1/credits; expect_json .balance 10 || return 1
    API_KEY=$key http POST /v1/verify/batch '{"emails":["a@x.example"],"webhook_url":"https://hooks.example.com/svc"}'
    expect_status 201 && expect_jq '.webhook_secret | startswith("whsec_")' && expect_json .credits_remaining 9
}
t_case "batch webhook_url on loopback, metadata, localhost, IPv6 or numeric forms of them, or http: 400 naming why, nothing created or charged" t_batch_webhook_guard

t_cancel() {
    local id processed
    http POST /v1/verify/bulk '{"emails":["a@c.example","b@c.example","c@c.example","d@c.example","e@c.example"]}'
    expect_status 202 && expect_json .credits_charged 5 || return 1
    id=$(json .job_id)
    # two addresses done, as a worker would leave them
    it_sql "UPDATE jobs SET status = 'processing', processed_emails = 2, count_valid = 2, charged_done = 2 WHERE id = '$id'"
    http DELETE "/v1/jobs/$id"
    expect_status 200 && expect_json .status cancelled && expect_json .credits_refunded 3 || return 1
    expect_eq "refund rows" 3 "$(ledger refund "$id")" || return 1
    http GET "/v1/jobs/$id"; expect_json .status cancelled && expect_json .credits_refunded 3 || return 1
    http DELETE "/v1/jobs/$id"
    expect_status 409 && expect_json .error.code job_not_cancellable || return 1
    expect_eq "refund rows after a second cancel" 3 "$(ledger refund "$id")" || return 1
    expect_eq "chunks left to claim" 0 "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$id' AND state <> 'done'")"
}
t_case "cancelling refunds exactly the unprocessed addresses, once; a finished job is 409" t_cancel

# A sandbox job made before migration 006: nothing charged, but its rows
# count as charged (the column's default), so a worker has counted more
# charged rows done than the job was charged for.
t_cancel_refunds_never_negative() {
    local acc sb id
    acc=$(it_account pro 0)
    sb=$(it_key "$acc" '*' --sandbox)
    API_KEY=$sb http POST /v1/verify/bulk '{"emails":["a@sandbox.svc.example","b@sandbox.svc.example","c@sandbox.svc.example"]}'
    expect_status 202 && expect_json .credits_charged 0 || return 1
    id=$(json .job_id)
    it_sql "UPDATE job_emails SET charged = 1 WHERE job_id = '$id';
        UPDATE jobs SET status = 'processing', processed_emails = 2, count_valid = 2, charged_done = 2 WHERE id = '$id'"
    API_KEY=$sb http DELETE "/v1/jobs/$id"
    expect_status 200 && expect_json .status cancelled && expect_json .credits_refunded 0 || return 1
    API_KEY=$sb http GET "/v1/jobs/$id"; expect_json .credits_refunded 0 || return 1
    expect_eq "ledger rows" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$id:%'")" || return 1
    API_KEY=$sb http GET /v1/credits; expect_json .balance 0 && expect_json .refunded 0
}
t_case "cancelling a job that counted more charged rows done than it was charged refunds nothing (never a negative amount)" t_cancel_refunds_never_negative

t_scopes_and_accounts() {
    local other okey id
    http POST /v1/verify/bulk '{"emails":["a@d.example"]}'; expect_status 202 || return 1
    id=$(json .job_id)
    other=$(it_account pro 10); okey=$(it_key "$other" '*')
    for p in "/v1/jobs/$id" "/v1/jobs/$id/progress" "/v1/jobs/$id/results" "/v1/jobs/$id/download"; do
        API_KEY=$okey http GET "$p"; expect_status 404 && expect_json .error.code not_found || return 1
    done
    API_KEY=$okey http DELETE "/v1/jobs/$id"; expect_status 404 || return 1
    API_KEY=$okey http GET /v1/jobs; expect_json .total 0 || return 1
    API_KEY=$(it_key "$ACC" 'jobs:read') http DELETE "/v1/jobs/$id"
    expect_status 403 && expect_json .error.details.required_scope jobs:write || return 1
    API_KEY=$(it_key "$ACC" 'verify:single') http POST /v1/verify/bulk '{"emails":["a@d.example"]}'
    expect_status 403 && expect_json .error.details.required_scope verify:bulk || return 1
    # batch creation and its status need verify:bulk too (API.md)
    http POST /v1/verify/batch '{"emails":["a@d.example"]}'; expect_status 201 || return 1
    id=$(json .id)
    API_KEY=$(it_key "$ACC" 'verify:single,jobs:read') http POST /v1/verify/batch '{"emails":["a@d.example"]}'
    expect_status 403 && expect_json .error.code insufficient_scope &&
        expect_json .error.details.required_scope verify:bulk || return 1
    API_KEY=$(it_key "$ACC" 'verify:single,jobs:read') http GET "/v1/verify/batch/$id"
    expect_status 403 && expect_json .error.details.required_scope verify:bulk || return 1
    # the domain check needs verify:single (API.md)
    API_KEY=$(it_key "$ACC" 'verify:bulk,jobs:read') http POST /v1/domain/check '{"domain":"x.example"}'
    expect_status 403 && expect_json .error.details.required_scope verify:single
}
t_case "another account's job is 404 everywhere; scopes enforced: jobs:write, verify:bulk (bulk, batch and its status), verify:single (domain check)" t_scopes_and_accounts

t_list() {
    local acc key
    acc=$(it_account pro 20); key=$(it_key "$acc" '*')
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["a@l.example"],"name":"one"}'; expect_status 202 || return 1
    API_KEY=$key http POST /v1/verify/batch '{"emails":["a@l.example"],"name":"two"}'; expect_status 201 || return 1
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["a@l.example"],"name":"three"}'; expect_status 202 || return 1
    API_KEY=$key http GET /v1/jobs
    expect_status 200 && expect_json .total 3 && expect_json '[.data[].name] | join(",")' "three,two,one" || return 1
    API_KEY=$key http GET "/v1/jobs?type=batch"; expect_json .total 1 && expect_json .data[0].name two || return 1
    API_KEY=$key http GET "/v1/jobs?limit=2&page=2"; expect_json '.data | length' 1 && expect_json .page 2 || return 1
    API_KEY=$key http GET "/v1/jobs?status=completed"; expect_json .total 0 || return 1
    API_KEY=$key http GET "/v1/jobs?status=nope"; expect_status 400 && expect_json .error.details.field status || return 1
    API_KEY=$key http GET "/v1/jobs/x/results?limit=1001"; expect_status 400 && expect_json .error.details.field limit
}
t_case "jobs are listed newest first with status, type and paging filters" t_list

t_done
