#!/bin/bash
# test_charges.sh: who pays, and what a failure or a retry costs, through
# the API (lighttpd, svc-api, MariaDB): an organization's key is charged to
# the organization's pool (402 when that pool is short, whatever the
# account's own balance); a request that fails inside (500
# verification_failed) charges nothing and may be retried with the same
# Idempotency-Key; ten identical job creations at once with one
# Idempotency-Key make one job and one charge; a batch over the limit of
# 1,000,000 is refused whole; GET /v1/credits?days=N's usage per UTC day
# is the ledger's.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_stack_start

balance() { it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$1'"; }

t_org_pool_pays() {
    local org acc okey own
    org=$(svcadm org create --name "Pool $RANDOM" --credits 3)
    acc=$(it_account pro 50)
    svcadm org add "$org" "$acc"
    okey=$(it_key "$acc" '*' --org "$org")
    own=$(it_key "$acc" '*')
    API_KEY=$okey http POST /v1/verify/bulk '{"emails":["a@pool.example","b@pool.example"]}'
    expect_status 202 && expect_json .credits_charged 2 && expect_json .credits_remaining 1 || return 1
    expect_eq "organization pool" 1 "$(balance "$org")" || return 1
    expect_eq "account's own pool" 50 "$(balance "$acc")" || return 1
    API_KEY=$okey http GET /v1/credits
    expect_json .balance 50 && expect_json .organization.balance 1 || return 1
    # the pool is short: 402 though the account has 50 of its own
    API_KEY=$okey http POST /v1/verify/bulk '{"emails":["c@pool.example","d@pool.example"]}'
    expect_status 402 && expect_json .error.code insufficient_credits &&
        expect_json .error.details.required 2 && expect_json .error.details.available 1 || return 1
    expect_eq "jobs of the organization's key" 1 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE pool_id = '$org'")" || return 1
    # the account's own key pays from the account
    API_KEY=$own http POST /v1/verify/bulk '{"emails":["c@pool.example","d@pool.example"]}'
    expect_status 202 || return 1
    expect_eq "pools after the account's own job" "1 48" "$(balance "$org") $(balance "$acc")" || return 1
    expect_eq "ledger of the organization" ok "$(svcadm credits check "$org")"
}
t_case "an organization's key is charged to its pool; 402 when the pool is short, whatever the account holds" t_org_pool_pays

t_failure_charges_nothing() {
    local acc key before
    acc=$(it_account pro 10)
    key=$(it_key "$acc" '*')
    before=$(balance "$acc")
    # an unexpected database error inside the job's transaction
    it_sql "CREATE TRIGGER test_jobs_fail BEFORE INSERT ON jobs FOR EACH ROW
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'test_charges: refused'"
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["a@fail.example"]}' -H 'Idempotency-Key: fail-1'
    it_sql "DROP TRIGGER test_jobs_fail"
    expect_status 500 && expect_json .error.code verification_failed && expect_header X-RateLimit-Limit || return 1
    expect_jq '.error.message | contains("req_") or contains("request")' || return 1
    expect_eq "balance after the failure" "$before" "$(balance "$acc")" || return 1
    expect_eq "ledger rows" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE account_id = '$acc' AND kind = 'charge'")" || return 1
    # the key was not kept for the failed request: the retry runs
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["a@fail.example"]}' -H 'Idempotency-Key: fail-1'
    expect_status 202 && expect_json .credits_charged 1 || return 1
    [ -z "$(header_value Idempotent-Replayed)" ] || it_fail "the retry was a replay of the failure"
}
t_case "a request that fails inside (500 verification_failed) charges nothing and may be retried with its Idempotency-Key" t_failure_charges_nothing

t_concurrent_idempotent_creation() {
    local acc key i codes jobs
    acc=$(it_account pro 100)
    key=$(it_key "$acc" '*')
    for i in $(seq 1 10); do
        curl -s -o "$IT_DIR/idem-$i.body" -D "$IT_DIR/idem-$i.head" -w '%{http_code}\n' \
            -H "Authorization: Bearer $key" -H 'Content-Type: application/json' -H 'Idempotency-Key: same-10' \
            --data-binary '{"emails":["a@idem.example","b@idem.example","c@idem.example"]}' \
            "$BASE_URL/v1/verify/bulk" > "$IT_DIR/idem-$i.code" &
    done
    wait
    codes=$(cat "$IT_DIR"/idem-*.code | sort | uniq -c | awk '{ print $2 "x" $1 }' | tr '\n' ' ')
    for i in $(seq 1 10); do
        case $(cat "$IT_DIR/idem-$i.code") in
        202) ;;
        409) grep -q idempotency_key_in_use "$IT_DIR/idem-$i.body" || it_fail "409 $i: $(cat "$IT_DIR/idem-$i.body")" ;;
        *) it_fail "answer $i: $(cat "$IT_DIR/idem-$i.code") $(cat "$IT_DIR/idem-$i.body")" ;;
        esac
    done
    [ "$IT_CASE_FAILED" = 0 ] || return 1
    jobs=$(cat "$IT_DIR"/idem-*.body | jq -r 'select(.job_id) | .job_id' | sort -u)
    expect_eq "job ids answered ($codes)" 1 "$(echo "$jobs" | grep -c .)" || return 1
    expect_eq "jobs created" 1 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$acc'")" || return 1
    expect_eq "charges" 3 "$(it_sql "SELECT GROUP_CONCAT(amount) FROM credit_ledger WHERE account_id = '$acc' AND kind = 'charge'")" || return 1
    expect_eq "balance" 97 "$(balance "$acc")" || return 1
    # all but the first 202 are replays
    expect_eq "replays among the 202s" "$(( $(grep -lx 202 "$IT_DIR"/idem-*.code | wc -l) - 1 ))" \
        "$(grep -li '^idempotent-replayed: true' "$IT_DIR"/idem-*.head | wc -l)"
}
t_case "ten identical job creations at once with one Idempotency-Key: one job, one charge, the others replayed or 409" t_concurrent_idempotent_creation

t_batch_limit() {
    local acc
    acc=$(it_account admin 2000000)
    jq -cn '{emails: [range(0; 1000001) | "b\(.)@x.example"]}' > "$IT_DIR/batch-over.json"
    API_KEY=$(it_key "$acc" 'verify:bulk') http POST /v1/verify/batch "@$IT_DIR/batch-over.json"
    expect_status 400 && expect_json .error.code too_many_emails && expect_json .error.details.limit 1000000 &&
        expect_jq '.error.message | contains("1000000")' || return 1
    expect_eq "jobs created" 0 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$acc'")" || return 1
    expect_eq "balance" 2000000 "$(it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$acc'")"
}
t_case "a batch of 1,000,001 unique addresses is refused with 400 too_many_emails (limit 1000000), nothing created or charged" t_batch_limit

# GET /v1/credits?days=N: each UTC day's charges and refunds are the
# ledger's (days moved into the past in the database, not waited for)
t_daily_usage() {
    local acc key j1 j2 j3 i want got
    acc=$(it_account pro 100)
    key=$(it_key "$acc" '*')
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["a@daily.example","b@daily.example","c@daily.example"]}'
    expect_status 202 || return 1
    j1=$(jq -r .job_id <<<"$HTTP_BODY")
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["d@daily.example","e@daily.example"]}'
    expect_status 202 || return 1
    j2=$(jq -r .job_id <<<"$HTTP_BODY")
    # no worker runs: cancelling j2 refunds its 2 addresses
    API_KEY=$key http DELETE "/v1/jobs/$j2"
    expect_status 200 || return 1
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["f@daily.example","g@daily.example","h@daily.example","i@daily.example"]}'
    expect_status 202 || return 1
    j3=$(jq -r .job_id <<<"$HTTP_BODY")
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["j@daily.example"]}'
    expect_status 202 || return 1
    # j1's charge 3 days ago, j2's charge and refund 29 days ago (the
    # window's first day), the last charge today; an old grant moved into
    # the window is no usage; a charge 30 days ago is outside it
    it_sql "UPDATE credit_ledger SET created_at = UTC_TIMESTAMP(3) - INTERVAL 3 DAY WHERE ref LIKE '%$j1%'"
    it_sql "UPDATE credit_ledger SET created_at = CAST(UTC_DATE() - INTERVAL 29 DAY AS DATETIME(3)) WHERE ref LIKE '%$j2%'"
    it_sql "UPDATE credit_ledger SET created_at = UTC_TIMESTAMP(3) - INTERVAL 2 DAY WHERE pool_id = '$acc' AND kind = 'grant'"
    it_sql "UPDATE credit_ledger SET created_at = CAST(UTC_DATE() - INTERVAL 29 DAY AS DATETIME(3)) - INTERVAL 1 SECOND WHERE ref LIKE '%$j3%'"
    API_KEY=$key http GET '/v1/credits?days=30'
    expect_status 200 || return 1
    expect_jq '.daily | length == 30' || return 1
    expect_eq "the last day" "$(it_sql "SELECT UTC_DATE()")" "$(jq -r '.daily[29].date' <<<"$HTTP_BODY")" || return 1
    expect_eq "the first day" "$(it_sql "SELECT UTC_DATE() - INTERVAL 29 DAY")" "$(jq -r '.daily[0].date' <<<"$HTTP_BODY")" || return 1
    # every day against the ledger's rows of that day
    want=$(for i in $(seq 29 -1 0); do
        it_sql "SELECT CONCAT(UTC_DATE() - INTERVAL $i DAY, ' ',
            COALESCE(SUM(CASE kind WHEN 'charge' THEN amount END), 0), ' ',
            COALESCE(SUM(CASE kind WHEN 'refund' THEN amount END), 0))
            FROM credit_ledger WHERE pool_id = '$acc' AND DATE(created_at) = UTC_DATE() - INTERVAL $i DAY"
    done)
    got=$(jq -r '.daily[] | "\(.date) \(.used) \(.refunded)"' <<<"$HTTP_BODY")
    expect_eq "each day's used and refunded against the ledger" "$want" "$got" || return 1
    expect_eq "the non-zero days" "$(it_sql "SELECT UTC_DATE() - INTERVAL 29 DAY") 2 2,$(it_sql "SELECT UTC_DATE() - INTERVAL 3 DAY") 3 0,$(it_sql "SELECT UTC_DATE()") 1 0" \
        "$(jq -r '[.daily[] | select(.used + .refunded > 0) | "\(.date) \(.used) \(.refunded)"] | join(",")' <<<"$HTTP_BODY")" || return 1
    # the window's sums are the totals but the charge before it
    expect_jq '([.daily[].used] | add) == .used - 4 and ([.daily[].refunded] | add) == .refunded' || return 1
    # one day: today's only
    API_KEY=$key http GET '/v1/credits?days=1'
    expect_status 200 && expect_jq '.daily | length == 1 and .[0].used == 1' || return 1
    # without days the answer is what it was
    API_KEY=$key http GET /v1/credits
    expect_status 200 && expect_jq 'has("daily") | not'
}
t_case "GET /v1/credits?days=30: 30 UTC days, each day's credits used and refunded equal to the ledger's rows (grants and older days left out)" t_daily_usage

t_daily_usage_bad() {
    local key d
    key=$(it_key "$(it_account pro 10)" 'credits:read')
    for d in 0 367 -1 abc 1.5 ''; do
        API_KEY=$key http GET "/v1/credits?days=$d"
        expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field days ||
            { it_fail "days=$d"; return 1; }
    done
    API_KEY=$key http GET '/v1/credits?days=366'
    expect_status 200 && expect_jq '.daily | length == 366'
}
t_case "GET /v1/credits?days= outside 1 to 366 (0, 367, -1, abc, 1.5, empty): 400 invalid_email naming days; 366 accepted" t_daily_usage_bad

t_done
