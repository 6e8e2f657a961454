#!/bin/bash
# test_retention.sh: retention you can set and see, erasure and its receipts
# (issue 30), on one stack (MariaDB, lighttpd, svc-api; sandbox jobs only go
# through svc-worker, so no DNS or SMTP is needed): retention_days on bulk,
# batch and upload bounded by retention_days_max (refused with nothing
# written), the account's retention, data_expires_at; housekeeping erasing a
# job's data on time with the clock moved by test_clock_offset_seconds (the
# job keeps its counts); DELETE /v1/jobs/{id}/data (cancel and refund first,
# 404 for another account) and svcadm account erase leaving no test address
# in any text or binary column of any table; the receipts in GET /v1/audit
# and svcadm audit.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_conf_add "service_domain = svc.example
worker_poll_interval = 1
job_retention_days = 10
retention_days_max = 30"
it_stack_start

ACC=$(it_account pro 100)
API_KEY=$(it_key "$ACC" '*')
SB=$(it_key "$ACC" '*' --sandbox)
OTHER=$(it_account pro 10)
OKEY=$(it_key "$OTHER" '*')

# addresses_left TOKEN: how many values of every text or binary column of
# every table hold TOKEN (each test's addresses carry their own token)
addresses_left() {
    local sql
    sql=$(it_sql "SET SESSION group_concat_max_len = 1048576; SELECT GROUP_CONCAT(CONCAT('SELECT COUNT(*) AS n FROM \`', table_name, '\` WHERE \`', column_name, '\` LIKE ''%$1%''') SEPARATOR ' UNION ALL ')
        FROM information_schema.columns WHERE table_schema = 'svc' AND data_type IN
        ('char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext', 'binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob', 'json', 'enum', 'set')")
    [ -n "$sql" ] || { echo "no columns"; return; }
    it_sql "SELECT SUM(n) FROM ($sql) AS t"
}
# Where TOKEN is, for a failure message.
where_left() {
    it_sql "SELECT CONCAT(table_name, '.', column_name) FROM information_schema.columns WHERE table_schema = 'svc' AND data_type IN
        ('char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext', 'blob', 'mediumblob', 'longblob')" |
    while IFS= read -r tc; do
        n=$(it_sql "SELECT COUNT(*) FROM \`${tc%%.*}\` WHERE \`${tc#*.}\` LIKE '%$1%'")
        [ "$n" = 0 ] || echo "$tc:$n"
    done
}
count_all() {	# jobs, job rows, ledger rows, stored files of the account
    it_sql "SELECT (SELECT COUNT(*) FROM jobs WHERE account_id = '$ACC'), (SELECT COUNT(*) FROM job_emails e JOIN jobs j ON j.id = e.job_id WHERE j.account_id = '$ACC'),
        (SELECT COUNT(*) FROM credit_ledger WHERE account_id = '$ACC' OR pool_id = '$ACC'), (SELECT COUNT(*) FROM upload_chunks)" | tr '\t' ' '
}

t_bounds() {
    local before f=$IT_DIR/list.csv
    printf 'email\nbad.zq7bad@x.example\n' > "$f"
    before=$(count_all)
    for v in 31 0 -1 1.5 '"7"' true; do
        http POST /v1/verify/bulk "{\"emails\":[\"a.zq7bad@x.example\"],\"retention_days\":$v}"
        expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field retention_days || return 1
    done
    http POST /v1/verify/batch '{"emails":["a.zq7bad@x.example"],"retention_days":31}'
    expect_status 400 && expect_json .error.details.field retention_days || return 1
    http POST /v1/verify/bulk/upload "" -F "file=@$f" -F retention_days=31
    expect_status 400 && expect_json .error.details.field retention_days || return 1
    http POST /v1/verify/bulk/upload "" -F "file=@$f" -F retention_days=abc
    expect_status 400 && expect_json .error.details.field retention_days || return 1
    http POST /v1/verify/bulk/upload '{"source_url":"https://files.example/l.csv","retention_days":"x"}'
    expect_status 400 && expect_json .error.details.field retention_days || return 1
    expect_eq "jobs, rows, ledger rows and stored files after refusals" "$before" "$(count_all)" || return 1
    expect_eq "no address written" 0 "$(addresses_left zq7bad)" || return 1
    # the account's retention is bounded by the operator's maximum too
    svcadm account retention "$ACC" 31 2> /dev/null && it_fail "svcadm account retention 31 was accepted with retention_days_max 30"
    svcadm account retention "$ACC" 0 2> /dev/null && it_fail "svcadm account retention 0 was accepted"
    svcadm account retention acc_nosuch 5 2> /dev/null && it_fail "an unknown account was accepted"
    return 0
}
t_case "retention_days above retention_days_max (or not a whole number of days) is 400 on bulk, batch and upload, with nothing written" t_bounds

# Each job made here is cancelled (no worker verifies an address at
# x.example: the later cases run svc-worker for sandbox jobs only).
t_defaults() {
    local id rc=0
    t_defaults_checks || rc=1
    for id in $(it_sql "SELECT id FROM jobs WHERE account_id = '$ACC' AND status IN ('pending', 'ingesting')"); do
        http DELETE "/v1/jobs/$id"; expect_status 200 || rc=1
    done
    return $rc
}
t_defaults_checks() {
    http POST /v1/verify/bulk '{"emails":["a.zq7def@x.example"]}'
    expect_status 202 || return 1
    http GET "/v1/jobs/$(json .job_id)"
    expect_json .retention_days 10 && expect_json .data_expires_at null && expect_json .data_erased_at null || return 1
    svcadm account retention "$ACC" 5 || { it_fail "svcadm account retention 5 failed"; return 1; }
    http POST /v1/verify/batch '{"emails":["b.zq7def@x.example"]}'
    expect_status 201 || return 1
    http GET "/v1/verify/batch/$(json .id)"
    expect_json .retention_days 5 || return 1
    # a batch's data goes at its expires_at (30 days) if that comes first
    expect_jq '.data_expires_at | type == "string"' || return 1
    http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/list.csv" -F retention_days=3
    expect_status 202 || return 1
    http GET "/v1/jobs/$(json .job_id)"
    expect_json .retention_days 3 || return 1
    svcadm account retention "$ACC" default || return 1
    http POST /v1/verify/bulk '{"emails":["c.zq7def@x.example"],"retention_days":30}'
    expect_status 202 && http GET "/v1/jobs/$(json .job_id)" && expect_json .retention_days 30
}
t_case "a job's retention: retention_days asked, else the account's (svcadm account retention), else job_retention_days; a batch's data_expires_at" t_defaults

t_expiry() {
    local short long done_at sec
    API_KEY=$SB http POST /v1/verify/bulk '{"emails":["one.zq7exp@sandbox.svc.example","two.zq7exp@sandbox.svc.example","rejected_email@sandbox.svc.example"],"retention_days":1}'
    expect_status 202 || return 1
    short=$(json .job_id)
    API_KEY=$SB http POST /v1/verify/bulk '{"emails":["keep.zq7kept@sandbox.svc.example"],"retention_days":2}'
    expect_status 202 || return 1
    long=$(json .job_id)
    it_job_wait "$short" completed || return 1
    expect_eq "the 2-day job" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$long'")" || return 1
    http GET "/v1/jobs/$short"
    expect_json .status completed && expect_json .counts.valid 2 && expect_json .retention_days 1 || return 1
    done_at=$(it_sql "SELECT DATE_FORMAT(completed_at + INTERVAL 1 DAY, '%Y-%m-%dT%H:%i:%sZ') FROM jobs WHERE id = '$short'")
    expect_json .data_expires_at "$done_at" || return 1
    expect_eq "rows before expiry" 3 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$short'")" || return 1
    # 23 hours on: nothing yet
    echo "test_clock_offset_seconds = $((23 * 3600))" >> "$SVC_CONF"
    it_worker_once || return 1
    expect_eq "rows 23 hours on" 3 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$short'")" || return 1
    # 25 hours on: the 1-day job's data is erased, the 2-day job's is not
    sed -i '/^test_clock_offset_seconds/d' "$SVC_CONF"
    echo "test_clock_offset_seconds = $((25 * 3600))" >> "$SVC_CONF"
    it_worker_once || return 1
    sed -i '/^test_clock_offset_seconds/d' "$SVC_CONF"
    expect_eq "rows, chunks, events of the erased job" "0 0 0" "$(it_sql "SELECT (SELECT COUNT(*) FROM job_emails WHERE job_id = '$short'),
        (SELECT COUNT(*) FROM job_chunks WHERE job_id = '$short'), (SELECT COUNT(*) FROM event_outbox WHERE job_id = '$short')" | tr '\t' ' ')" || return 1
    expect_eq "addresses of the erased job in any table" 0 "$(addresses_left zq7exp)" || { where_left zq7exp | sed 's/^/# left: /'; return 1; }
    expect_eq "rows of the 2-day job" 1 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$long'")" || return 1
    http GET "/v1/jobs/$short"
    expect_status 200 && expect_json .status completed && expect_json .total_emails 3 && expect_json .counts.valid 2 &&
        expect_json .counts.invalid 1 && expect_json .data_expires_at null && expect_json .download_url null &&
        expect_jq '.data_erased_at | type == "string"' || return 1
    http GET "/v1/jobs/$short/results"; expect_status 410 && expect_json .error.code job_data_erased || return 1
    http GET "/v1/jobs/$short/download"; expect_status 410 || return 1
    http GET /v1/audit
    expect_status 200 && expect_json .total 1 && expect_json .data[0].job_id "$short" && expect_json .data[0].actor housekeeping &&
        expect_json .data[0].actor_id null && expect_json .data[0].reason expired && expect_json .data[0].erased.results 3 &&
        expect_jq '.data[0].erased.chunks >= 1 and .data[0].erased.events == 1' || return 1
    # the 2-day job goes two days after it ended
    echo "test_clock_offset_seconds = $((49 * 3600))" >> "$SVC_CONF"
    it_worker_once || return 1
    sed -i '/^test_clock_offset_seconds/d' "$SVC_CONF"
    expect_eq "the 2-day job's addresses 49 hours on" 0 "$(addresses_left zq7kept)"
}
t_case "housekeeping erases a job's data retention_days after it ended (clock moved by test_clock_offset_seconds), not before; the job keeps its counts; results 410; receipt" t_expiry

t_erase_endpoint() {
    local id charged
    http POST /v1/verify/batch '{"name":"to erase","emails":["a.zq7del@x.example","b.zq7del@x.example"],"callback_data":{"contact":"c.zq7del@x.example"}}'
    expect_status 201 || return 1
    id=$(json .id)
    charged=$(json .credits_charged)
    API_KEY=$OKEY http DELETE "/v1/jobs/$id/data"
    expect_status 404 && expect_json .error.code not_found || return 1
    expect_eq "rows after another account's erase" 2 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$id'")" || return 1
    http DELETE "/v1/jobs/$id/data"
    expect_status 200 && expect_json .job_id "$id" && expect_json .status cancelled &&
        expect_json .credits_refunded "$charged" && expect_json .erased.results 2 && expect_json .erased.job_fields 2 &&
        expect_jq '.data_erased_at | type == "string"' || return 1
    expect_eq "addresses of the erased job in any table" 0 "$(addresses_left zq7del)" || { where_left zq7del | sed 's/^/# left: /'; return 1; }
    expect_eq "ledger rows kept (charge, refund)" "charge refund" "$(echo $(it_sql "SELECT kind FROM credit_ledger WHERE ref LIKE 'job:$id:%' ORDER BY id"))" || return 1
    http GET "/v1/jobs/$id"
    expect_json .name "" && expect_json .total_emails 2 && expect_json .credits_refunded "$charged" || return 1
    # erasing again: nothing more, no second receipt
    http DELETE "/v1/jobs/$id/data"
    expect_status 200 && expect_json .erased.results 0 || return 1
    http GET /v1/audit
    expect_json .total 3 && expect_json .data[0].job_id "$id" && expect_json .data[0].actor api_key &&
        expect_json .data[0].reason requested && expect_json .data[0].erased.results 2 || return 1
    expect_jq '.data[0].actor_id | startswith("key_")' || return 1
    API_KEY=$OKEY http GET /v1/audit
    expect_status 200 && expect_json .total 0
}
t_case "DELETE /v1/jobs/{id}/data cancels a running job with its refund, erases every address (any table), keeps the ledger; 404 for another account" t_erase_endpoint

t_account_erase() {
    local acc key sb done pending upload out f=$IT_DIR/acc.csv
    acc=$(it_account pro 50); key=$(it_key "$acc" '*'); sb=$(it_key "$acc" '*' --sandbox)
    API_KEY=$sb http POST /v1/verify/bulk '{"emails":["x.zq7acc@sandbox.svc.example","y.zq7acc@sandbox.svc.example"]}'
    done=$(json .job_id)
    it_job_wait "$done" completed || return 1
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["p.zq7acc@x.example"]}' -H 'Idempotency-Key: acc-erase-1'
    expect_status 202 || return 1
    pending=$(json .job_id)
    printf 'email\nu1.zq7acc@x.example\nu2.zq7acc@x.example\n' > "$f"
    API_KEY=$key http POST /v1/verify/bulk/upload "" -F "file=@$f"
    expect_status 202 || return 1
    upload=$(json .job_id)
    printf 's.zq7acc@x.example\n' | svcadm suppressions import --account "$acc" - > /dev/null || return 1
    [ "$(addresses_left zq7acc)" -ge 5 ] || it_fail "the account's addresses were not stored" || return 1
    out=$(svcadm account erase "$acc") || { it_fail "svcadm account erase failed"; return 1; }
    expect_eq "erase report" "jobs 3|credits_refunded 1|results 3|suppressions 1|stored_answers 1" \
        "$(printf '%s\n' "$out" | grep -E '^(jobs|credits_refunded|results|suppressions|stored_answers) ' | paste -sd'|')" || return 1
    expect_eq "the account's addresses in any table" 0 "$(addresses_left zq7acc)" || { where_left zq7acc | sed 's/^/# left: /'; return 1; }
    expect_eq "statuses" "cancelled completed cancelled" "$(echo $(it_sql "SELECT status FROM jobs WHERE id IN ('$pending', '$done', '$upload') ORDER BY FIELD(id, '$pending', '$done', '$upload')"))" || return 1
    expect_eq "the ledger keeps charge and refund" "charge refund" "$(echo $(it_sql "SELECT kind FROM credit_ledger WHERE ref LIKE 'job:$pending:%' ORDER BY id"))" || return 1
    expect_eq "receipts" "4 operator account_erase" "$(it_sql "SELECT COUNT(*), MIN(actor), MIN(reason) FROM erase_audit WHERE account_id = '$acc'" | tr '\t' ' ')" || return 1
    API_KEY=$key http GET /v1/audit
    expect_json .total 4 && expect_json .data[0].job_id null && expect_json .data[0].erased.suppressions 1 &&
        expect_json .data[0].erased.stored_answers 1 || return 1
    expect_eq "svcadm audit lines" 4 "$(svcadm audit --account "$acc" | grep -c "account=$acc .*reason=account_erase")" || return 1
    svcadm account erase acc_nosuch 2> /dev/null && it_fail "erasing an unknown account succeeded"
    # the key and the account still work
    API_KEY=$key http GET /v1/credits; expect_status 200
}
t_case "svcadm account erase cancels (with refund) and erases every job's data, suppressions and stored answers: no address left in any table; receipts for the API and svcadm audit" t_account_erase

t_done
