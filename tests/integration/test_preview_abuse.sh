#!/bin/bash
# test_preview_abuse.sh: the free preview is no free verification (issue
# 25), through lighttpd, svc-api and svc-worker against the real DNS and
# mail servers of mail_env.sh: a preview upload needs a positive balance
# (402); a list with fewer SMTP-bound rows than preview_smtp_min_rows gets
# no SMTP sample (nothing probed, the rows estimated unknown); a sample's
# counts are published in steps of 5 rows; ?refresh=true is refused past
# preview_refresh_limit (409 rate_limit_exceeded); and a greylisted
# unknown of a preview's sample stays out of the shared verdict cache, so
# a later verification of the address is not served it.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
mail_env_start
fake 127.0.0.31
mail_env_lists
mail_env_conf
it_conf_add "worker_poll_interval = 1
verify_time_budget_ms = 12000
greylist_retry_ms = 2500"
it_stack_start

ACC=$(it_account pro 100000)
API_KEY=$(it_key "$ACC" '*')
F=$IT_DIR/files
mkdir -p "$F"

balance() { it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$1'"; }
preview_of() { http POST "/v1/verify/bulk/$1/preview" "" --data ""; }

t_preview_needs_balance() {
    local poor pkey
    printf 'email\nnobody1@mx.svc.test\n' > "$F/one.csv"
    poor=$(it_account pro 0)
    pkey=$(it_key "$poor" '*')
    API_KEY=$pkey http POST /v1/verify/bulk/upload "" -F "file=@$F/one.csv" -F preview=true
    expect_status 402 && expect_json .error.code insufficient_credits &&
        expect_json .error.details.required 1 && expect_json .error.details.available 0 || return 1
    expect_eq "jobs of the poor account" 0 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$poor'")" || return 1
    # with one credit the preview upload is taken, and charges nothing
    svcadm credits grant "$poor" 1 > /dev/null || return 1
    API_KEY=$pkey http POST /v1/verify/bulk/upload "" -F "file=@$F/one.csv" -F preview=true
    expect_status 202 && expect_json .preview true || return 1
    it_job_wait "$(json .job_id)" awaiting_confirmation || return 1
    expect_eq "balance after the preview" 1 "$(balance "$poor")"
}
t_case "a preview upload needs a positive balance (402 insufficient_credits at upload), and charges nothing" t_preview_needs_balance

t_short_list_no_sample() {
    local job
    # one mailbox the MTA refuses, among rows the free checks settle
    printf 'email\nnobody7@mx.svc.test\nx@nosuch.svc.test\nnot an address\n' > "$F/short.csv"
    http POST /v1/verify/bulk/upload "" -F "file=@$F/short.csv" -F preview=true
    job=$(json .job_id)
    it_job_wait "$job" awaiting_confirmation || return 1
    preview_of "$job"
    expect_status 200 && expect_json .preview.free_checks.needs_smtp 1 || return 1
    # below preview_smtp_min_rows (100): nothing probed, nothing told
    expect_json .preview.smtp_sample.size 0 && expect_json '[.preview.smtp_sample.counts[]] | add' 0 || return 1
    expect_json .preview.estimated_counts.unknown 1 && expect_json .preview.estimated_counts.invalid 2 &&
        expect_json .preview.estimated_counts.valid 0 && expect_json .preview.confidence low || return 1
    expect_eq "verdicts of the address" 0 "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash = $(it_cache_keys nobody7@mx.svc.test)")"
}
t_case "a list with fewer SMTP-bound rows than preview_smtp_min_rows gets no SMTP sample: its preview tells no address's verdict" t_short_list_no_sample

t_sample_coarsened() {
    local i
    # 300 SMTP-bound rows: a sample of 6 (2%), all refused by the MTA;
    # published as 5 invalid and 1 unknown
    { echo email; for i in $(seq 1 300); do echo "nobody$i@mx.svc.test"; done; } > "$F/long.csv"
    http POST /v1/verify/bulk/upload "" -F "file=@$F/long.csv" -F preview=true
    JOB=$(json .job_id)
    it_job_wait "$JOB" awaiting_confirmation || return 1
    preview_of "$JOB"
    expect_status 200 && expect_json .preview.free_checks.needs_smtp 300 && expect_json .preview.smtp_sample.size 6 || return 1
    expect_json .preview.smtp_sample.counts.invalid 5 && expect_json .preview.smtp_sample.counts.unknown 1 || return 1
    expect_json .preview.estimated_counts.invalid 250 && expect_json .preview.estimated_counts.unknown 50 || return 1
    # (the sample was probed: six refusals in the verdict cache)
    expect_eq "verdicts of the sample" 6 "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash IN ($(seq -f 'nobody%g@mx.svc.test' 1 300 | it_cache_keys -)) AND result LIKE '%\"rejected\"%'")"
}
t_case "a sample's counts are published in steps of 5 rows, the rest unknown, and the estimate drawn from them" t_sample_coarsened

t_refresh_limit() {
    local i
    # preview_refresh_limit (5) refreshes, then 409 for good
    for i in 1 2 3 4 5; do
        http POST "/v1/verify/bulk/$JOB/preview?refresh=true" "" --data ""
        expect_status 202 && expect_json .refreshing true || return 1
    done
    http POST "/v1/verify/bulk/$JOB/preview?refresh=true" "" --data ""
    expect_status 409 && expect_json .error.code rate_limit_exceeded &&
        expect_json .error.details.limit 5 && expect_json .error.details.used 5 || return 1
    expect_eq "refreshes counted" 5 "$(it_sql "SELECT preview_refreshes FROM jobs WHERE id = '$JOB'")" || return 1
    # the preview itself is still there, and the job can be confirmed
    it_worker_once || return 1
    preview_of "$JOB"
    expect_status 200 && expect_json .preview.total_emails 300 || return 1
    http DELETE "/v1/jobs/$JOB"
    expect_status 200
}
t_case "?refresh=true is refused past preview_refresh_limit with 409 rate_limit_exceeded; the preview stays readable" t_refresh_limit

t_greylisted_unknown_not_shared() {
    local job
    # a sample of one row (preview_smtp_min_rows = 1 for this case: read
    # by svc-worker at each pass) at the fake server that greylists
    # grey1@ the first time and accepts it afterwards
    echo "preview_smtp_min_rows = 1" >> "$SVC_CONF"
    printf 'email\ngrey1@greyforever.svc.test\n' > "$F/grey.csv"
    http POST /v1/verify/bulk/upload "" -F "file=@$F/grey.csv" -F preview=true
    job=$(json .job_id)
    it_job_wait "$job" awaiting_confirmation || return 1
    preview_of "$job"
    expect_status 200 && expect_json .preview.smtp_sample.size 1 || return 1
    expect_eq "the preview's unknown in the shared cache" 0 \
        "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash = $(it_cache_keys grey1@greyforever.svc.test)")" || return 1
    # a verification of the address asks the server again (past its
    # greylisting now) instead of being served the preview's unknown
    http POST /v1/verify '{"email":"grey1@greyforever.svc.test"}'
    expect_status 200 && expect_json .cached false && expect_json .status deliverable
}
t_case "a preview's greylisted unknown stays out of the shared verdict cache: a later verification is not served it" t_greylisted_unknown_not_shared

t_done
