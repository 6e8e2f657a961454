#!/bin/bash
# test_account_caps.sh: what one account may hold in the shared database
# (issue 25, item 2), through lighttpd, svc-api and MariaDB, with every cap
# set low: jobs not yet ended (account_jobs_in_flight_max: bulk, batch and
# upload 409 too_many_jobs), rows costing no credit per UTC day
# (account_sandbox_rows_per_day: 429 sandbox_daily_limit, yesterday's not
# counted), raw upload bytes stored and not yet ingested
# (account_upload_storage_mb: 409 upload_storage_exceeded, a source_url
# too once the account is at the cap; a cancelled upload's file no longer
# counts). A refused request writes nothing: no job, no rows, no charge,
# no stored piece. The suppression list's cap is in test_suppressions.sh.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_conf_add "service_domain = svc.example
account_jobs_in_flight_max = 3
account_sandbox_rows_per_day = 10
account_upload_storage_mb = 1"
it_stack_start

SB=sandbox.svc.example
F=$IT_DIR/files
mkdir -p "$F"

balance() { it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$1'"; }
jobs_of() { it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$1'"; }
rows_of() { it_sql "SELECT COUNT(*) FROM job_emails e JOIN jobs j ON j.id = e.job_id WHERE j.account_id = '$1'"; }

t_jobs_in_flight() {
    local acc id1 i
    acc=$(it_account pro 100)
    API_KEY=$(it_key "$acc" '*')
    http POST /v1/verify/bulk '{"emails":["a1@c.example"]}'
    expect_status 202 || return 1
    id1=$(json .job_id)
    http POST /v1/verify/batch '{"emails":["a2@c.example"]}'
    expect_status 201 || return 1
    printf 'email\na3@c.example\n' > "$F/one.csv"
    http POST /v1/verify/bulk/upload "" -F "file=@$F/one.csv" -F preview=true
    expect_status 202 || return 1
    # three in flight (pending, pending, ingesting): the fourth of any kind is refused
    http POST /v1/verify/bulk '{"emails":["a4@c.example","a5@c.example"]}'
    expect_status 409 && expect_json .error.code too_many_jobs &&
        expect_json .error.details.limit 3 && expect_json .error.details.in_flight 3 || return 1
    http POST /v1/verify/batch '{"emails":["a4@c.example"]}'
    expect_status 409 && expect_json .error.code too_many_jobs || return 1
    http POST /v1/verify/bulk/upload "" -F "file=@$F/one.csv"
    expect_status 409 && expect_json .error.code too_many_jobs || return 1
    expect_eq "jobs" 3 "$(jobs_of "$acc")" && expect_eq "rows" 2 "$(rows_of "$acc")" &&
        expect_eq "balance (two rows charged)" 98 "$(balance "$acc")" &&
        expect_eq "stored pieces" 1 "$(it_sql "SELECT COUNT(*) FROM upload_chunks")" || return 1
    # a job that ended no longer counts
    http DELETE "/v1/jobs/$id1"
    expect_status 200 || return 1
    http POST /v1/verify/bulk '{"emails":["a4@c.example","a5@c.example"]}'
    expect_status 202 && expect_json .credits_charged 2 || return 1
    http POST /v1/verify/bulk '{"emails":["a6@c.example"]}'
    expect_status 409 && expect_json .error.code too_many_jobs
}
t_case "at account_jobs_in_flight_max jobs not ended, bulk, batch and upload are 409 too_many_jobs, nothing written" t_jobs_in_flight

t_sandbox_rows_per_day() {
    local acc sb live
    acc=$(it_account pro 5)
    sb=$(it_key "$acc" '*' --sandbox)
    live=$(it_key "$acc" '*')
    API_KEY=$sb http POST /v1/verify/batch "{\"emails\":[\"a@$SB\",\"b@$SB\",\"c@$SB\",\"d@$SB\",\"e@$SB\",\"f@$SB\"]}"
    expect_status 201 && expect_json .credits_charged 0 || return 1
    # 6 + 5 free rows > 10: refused whole
    API_KEY=$sb http POST /v1/verify/bulk "{\"emails\":[\"g@$SB\",\"h@$SB\",\"i@$SB\",\"j@$SB\",\"k@$SB\"]}"
    expect_status 429 && expect_json .error.code sandbox_daily_limit &&
        expect_json .error.details.limit 10 && expect_json .error.details.used 6 &&
        expect_json .error.details.requested 5 || return 1
    # Retry-After: the seconds until 00:00 UTC
    [[ $HTTP_HEADERS =~ [Rr]etry-[Aa]fter:\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] &&
        [ "${BASH_REMATCH[1]}" -le 86400 ] || it_fail "Retry-After missing or out of range: $HTTP_HEADERS" || return 1
    expect_eq "jobs" 1 "$(jobs_of "$acc")" && expect_eq "rows" 6 "$(rows_of "$acc")" || return 1
    # up to the cap is fine (the jobs ended: jobs in flight are not what is counted here)
    it_sql "UPDATE jobs SET status = 'completed' WHERE account_id = '$acc'"
    API_KEY=$sb http POST /v1/verify/bulk "{\"emails\":[\"g@$SB\",\"h@$SB\",\"i@$SB\",\"j@$SB\"]}"
    expect_status 202 || return 1
    it_sql "UPDATE jobs SET status = 'completed' WHERE account_id = '$acc'"
    # entries that are no address cost nothing either, whatever the key
    API_KEY=$live http POST /v1/verify/bulk '{"emails":["not an address","real@c.example"]}'
    expect_status 429 && expect_json .error.code sandbox_daily_limit && expect_json .error.details.requested 1 || return 1
    # a job with no free row is not held to it
    API_KEY=$live http POST /v1/verify/bulk '{"emails":["real@c.example"]}'
    expect_status 202 && expect_json .credits_charged 1 || return 1
    expect_eq "balance" 4 "$(balance "$acc")" || return 1
    # yesterday's rows do not count today
    it_sql "UPDATE jobs SET status = 'completed', created_at = UTC_DATE() - INTERVAL 1 SECOND WHERE account_id = '$acc'"
    API_KEY=$sb http POST /v1/verify/bulk "{\"emails\":[\"g@$SB\",\"h@$SB\",\"i@$SB\",\"j@$SB\",\"k@$SB\"]}"
    expect_status 202
}
t_case "rows costing no credit past account_sandbox_rows_per_day today: 429 sandbox_daily_limit, nothing written" t_sandbox_rows_per_day

t_upload_storage() {
    local acc id pieces
    acc=$(it_account pro 100)
    API_KEY=$(it_key "$acc" '*')
    # exactly 1 MiB: at the cap, taken
    { echo email; yes 'somebody@c.example' | head -c $((1048576 - 6 - 8)); echo; echo 'x@c.ex'; } > "$F/mib.csv"
    expect_eq "file size" 1048576 "$(stat -c %s "$F/mib.csv")" || return 1
    http POST /v1/verify/bulk/upload "" -F "file=@$F/mib.csv" -F preview=true
    expect_status 202 || return 1
    id=$(json .job_id)
    pieces=$(it_sql "SELECT COUNT(*) FROM upload_chunks")
    printf 'email\nsmall@c.example\n' > "$F/small.csv"
    http POST /v1/verify/bulk/upload "" -F "file=@$F/small.csv"
    expect_status 409 && expect_json .error.code upload_storage_exceeded || return 1
    # a source_url's size is not known: refused when the account is at the cap
    http POST /v1/verify/bulk/upload '{"source_url":"https://files.example.com/list.csv"}'
    expect_status 409 && expect_json .error.code upload_storage_exceeded &&
        expect_json .error.details.stored_bytes 1048576 && expect_json .error.details.limit_bytes 1048576 || return 1
    expect_eq "jobs" 1 "$(jobs_of "$acc")" &&
        expect_eq "stored pieces" "$pieces" "$(it_sql "SELECT COUNT(*) FROM upload_chunks")" || return 1
    # a cancelled upload's file is deleted: room again
    http DELETE "/v1/jobs/$id"
    expect_status 200 || return 1
    http POST /v1/verify/bulk/upload "" -F "file=@$F/small.csv"
    expect_status 202 || return 1
    http POST /v1/verify/bulk/upload '{"source_url":"https://files.example.com/list.csv"}'
    expect_status 202
}
t_case "raw upload bytes stored past account_upload_storage_mb: 409 upload_storage_exceeded, nothing stored" t_upload_storage

t_done
