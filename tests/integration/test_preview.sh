#!/bin/bash
# test_preview.sh: the free List Health Preview and its confirmation,
# through lighttpd, svc-api and svc-worker against the real DNS and mail
# servers of mail_env.sh: POST .../preview while ingesting (202 null), once
# computed (200: every free check counted on every row, the suppression
# list, an SMTP sample of min(200, 2%) really probed, the estimate adding
# up), with ?refresh=true (202 refreshing, then recomputed), for a job
# without preview (409) and another account's (404); nothing charged by
# any of it; POST .../confirm charging exactly once under ten concurrent
# confirms (the others 409 with details.status), 402 with details, and a
# job cancelled while awaiting confirmation (nothing charged or refunded);
# the SMTP sample stratified by who runs the mail (a provider with 1 row
# in 100 has its row sampled).
# The lines that are no address are rows but cost nothing: not in
# credits_needed, not charged by confirm, never refunded.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
mail_env_start
mail_env_lists
mail_env_conf
it_conf_add "worker_poll_interval = 1
verify_time_budget_ms = 12000"
it_stack_start

ACC=$(it_account pro 100000)
API_KEY=$(it_key "$ACC" '*')
F=$IT_DIR/files
mkdir -p "$F"

balance() { it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$1'"; }
ledger_rows() { it_sql "SELECT COUNT(*) FROM credit_ledger WHERE account_id = '$1' AND kind <> 'grant'"; }

# The list: 100 unknown mailboxes at mx.svc.test (the Postfix answers 550
# 5.1.1: the only rows that need SMTP), info@ (role, suppressed), an
# NXDOMAIN domain, a disposable one, two lines that are no address, a
# suppressed domain, and repeats.
{
    echo "email,source"
    for i in $(seq 1 100); do echo "nobody$i@mx.svc.test,web"; done
    echo "info@mx.svc.test,form"
    echo "x@nosuch.svc.test,form"
    echo "y@nosuch.svc.test,form"
    echo "z@throwaway.svc.test,form"
    echo "not an address,import"
    echo "neither,import"
    echo "someone@blocked-domain.svc.test,import"
    echo "NOBODY1@mx.svc.test,dup"
    echo "nobody2@MX.svc.test,dup"
} > "$F/list.csv"
TOTAL=107
# the two lines that are no address are rows (invalid_syntax) but free
CREDITS=105

t_preview_while_ingesting_then_computed() {
    local before rows
    http POST /v1/suppressions '{"entries":["info@mx.svc.test","@blocked-domain.svc.test"]}'
    expect_status 201 || return 1
    before=$(balance "$ACC")
    rows=$(ledger_rows "$ACC")
    http POST /v1/verify/bulk/upload "" -F "file=@$F/list.csv" -F preview=true -F name=health
    expect_status 202 && expect_json .preview true || return 1
    JOB=$(json .job_id)
    http POST "/v1/verify/bulk/$JOB/preview" "" --data ""
    expect_status 202 && expect_json .status ingesting && expect_json .preview null || return 1
    it_job_wait "$JOB" awaiting_confirmation || return 1
    http POST "/v1/verify/bulk/$JOB/preview" "" --data ""
    expect_status 200 && expect_json .job_id "$JOB" && expect_json .status awaiting_confirmation || return 1
    expect_json .preview.total_emails $TOTAL && expect_json .preview.duplicates_removed 2 &&
        expect_json .preview.credits_needed $CREDITS || return 1
    # (the suppressed domain does not exist either: a row counts in every
    # check it fails)
    expect_json '.preview.free_checks | [.syntax_invalid, .no_mx, .disposable, .role_based, .suppressed] | map(tostring) | join(" ")' \
        "2 3 1 1 2" || return 1
    expect_json '.preview.free_checks | .resolved_without_smtp + .needs_smtp' $TOTAL || return 1
    expect_json .preview.free_checks.needs_smtp 100 || return 1
    # min(200, 2% of 100): 2 probed, both refused by the MTA; published in
    # steps of 5 rows (no single verdict shows): 2 unknown
    expect_json .preview.smtp_sample.size 2 && expect_json .preview.smtp_sample.counts.invalid 0 &&
        expect_json .preview.smtp_sample.counts.unknown 2 &&
        expect_jq '.preview.smtp_sample.method | length > 40' || return 1
    # the estimate: the 100 SMTP-bound rows by the (coarsened) sample, the
    # rest as found (2 no address + 2 NXDOMAIN + 2 suppressed invalid, 1
    # disposable)
    expect_json .preview.estimated_counts.invalid 6 && expect_json .preview.estimated_counts.unknown 100 &&
        expect_json .preview.estimated_counts.disposable 1 &&
        expect_json '[.preview.estimated_counts[]] | add' $TOTAL || return 1
    expect_json .preview.estimated_by_status.undeliverable 7 && expect_json .preview.estimated_credits_after_refunds $((CREDITS - 100)) &&
        expect_json .preview.confidence low || return 1
    # 95% ranges: present, within [0, 1], low <= estimate <= high; the
    # bounce rate's holds the 7 rows known undeliverable and, from a sample
    # of 2 (both refused), a wide range of the 100 probed; confidence low
    # (0.35 or wider)
    expect_jq '[[.preview.estimated_bounce_rate, .preview.estimated_bounce_rate_interval],
        [.preview.catch_all_share, .preview.catch_all_share_interval],
        [.preview.unknown_share, .preview.unknown_share_interval]]
        | all(.[1] | type == "array" and length == 2) and
          all(.[1][0] >= 0 and .[1][0] <= .[0] and .[0] <= .[1][1] and .[1][1] <= 1)' || return 1
    expect_jq '.preview.estimated_bounce_rate_interval | .[1] - .[0] > 0.35 and .[0] >= 0' || return 1
    expect_jq '.preview.estimated_bounce_rate > 0.05 and .preview.undeliverable_share == 7 / 107' || return 1
    expect_jq '.preview.computed_at | test("^[0-9-]+T[0-9:]+Z$")' || return 1
    # the sample was verified for real: two verdicts of the MTA's 550
    expect_eq "verdicts of the sample" 2 "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash IN ($(seq -f 'nobody%g@mx.svc.test' 1 "$TOTAL" | it_cache_keys -)) AND result LIKE '%\"rejected\"%'")" || return 1
    # never charged
    expect_eq "balance" "$before" "$(balance "$ACC")" && expect_eq "ledger rows" "$rows" "$(ledger_rows "$ACC")" || return 1
    http GET "/v1/jobs/$JOB"
    expect_json .status awaiting_confirmation && expect_json .preview.total_emails $TOTAL && expect_json .credits_charged 0
}
t_case "the preview: 202 while ingesting, then every free check, a probed SMTP sample and an estimate that adds up, free" t_preview_while_ingesting_then_computed

t_refresh_and_refusals() {
    local first other okey bulk asked e holder worker ready
    first=$(it_sql "SELECT JSON_VALUE(preview, '$.computed_at') FROM jobs WHERE id = '$JOB'")
    sleep 1.1
    http POST "/v1/verify/bulk/$JOB/preview?refresh=true" "" --data ""
    expect_status 202 && expect_json .refreshing true && expect_json .status awaiting_confirmation || return 1
    expect_jq '.refresh_requested_at | test("^[0-9-]+T[0-9:]+Z$")' && expect_jq ".refresh_requested_at > \"$first\"" || return 1
    asked=$(json .refresh_requested_at)
    # the data changes meanwhile: two more suppressed addresses
    http POST /v1/suppressions '{"entries":["nobody1@mx.svc.test","nobody2@mx.svc.test"]}'
    expect_status 201 || return 1
    # asked again without refresh while no worker has run: still 202
    # refreshing, since the same time, beside the old preview (never a 200
    # with the old one, which a client would take for the new)
    http POST "/v1/verify/bulk/$JOB/preview" "" --data ""
    expect_status 202 && expect_json .refreshing true && expect_json .refresh_requested_at "$asked" &&
        expect_json .preview.computed_at "$first" && expect_json .preview.free_checks.suppressed 2 || return 1
    it_worker_once || return 1
    http POST "/v1/verify/bulk/$JOB/preview" "" --data ""
    expect_status 200 && expect_jq ".preview.computed_at > \"$first\"" && expect_json .preview.total_emails $TOTAL &&
        expect_json .preview.credits_needed $CREDITS || return 1
    expect_jq 'has("refreshing") | not' && expect_json .preview.free_checks.suppressed 4 &&
        expect_json .preview.free_checks.needs_smtp 98 || return 1
    expect_eq "refresh flag" 0 "$(it_sql "SELECT preview_refresh FROM jobs WHERE id = '$JOB'")" || return 1
    # a refresh asked for while a worker computes the preview of an earlier
    # one is not cleared by that worker's result, but computed again: the
    # worker is held in the middle (its write of throwaway.svc.test's MX
    # answer waits for a row another session inserted and holds)
    ready=$(cat "$IT_DIR"/log/*.log | grep -c "event=preview_ready job=$JOB ")
    http POST "/v1/verify/bulk/$JOB/preview?refresh=true" "" --data ""; expect_status 202 || return 1
    it_sql "DELETE FROM dns_cache WHERE domain = 'throwaway.svc.test'"
    mkfifo "$IT_DIR/holder.in"
    stack_mariadb_sql "$IT_DIR/mariadb" -N -B -n svc < "$IT_DIR/holder.in" > "$IT_DIR/holder.out" 2>&1 &
    holder=$!
    exec 7> "$IT_DIR/holder.in"
    echo "BEGIN; INSERT INTO dns_cache VALUES ('throwaway.svc.test', '{}', UTC_TIMESTAMP(3) + INTERVAL 1 HOUR); SELECT 'held';" >&7
    for _ in $(seq 1 100); do grep -q held "$IT_DIR/holder.out" && break; sleep 0.1; done
    timeout 120 "$top_builddir/src/worker/svc-worker" -c "$SVC_CONF" --once >> "$IT_DIR/log/worker-stderr.log" 2>&1 &
    worker=$!
    waiting() { it_sql "SELECT COUNT(*) FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE '%dns_cache%'"; }
    for _ in $(seq 1 300); do [ "$(waiting)" -ge 1 ] && break; sleep 0.1; done
    expect_eq "the worker waits for the row held" 1 "$(waiting)" &&
        expect_eq "the job claimed" 1 "$(it_sql "SELECT ingest_owner IS NOT NULL FROM jobs WHERE id = '$JOB'")" || { exec 7>&-; wait "$holder"; wait "$worker"; return 1; }
    http POST "/v1/verify/bulk/$JOB/preview?refresh=true" "" --data ""; expect_status 202 || { exec 7>&-; wait "$holder"; wait "$worker"; return 1; }
    echo "ROLLBACK;" >&7
    exec 7>&-
    wait "$holder"
    wait "$worker" || it_fail "svc-worker --once failed" || return 1
    # the pass computed it twice: the second for the request that came
    # while it computed the first (the pass takes work until none is left)
    expect_eq "previews computed by the pass" $((ready + 2)) "$(cat "$IT_DIR"/log/*.log | grep -c "event=preview_ready job=$JOB ")" || return 1
    http POST "/v1/verify/bulk/$JOB/preview" "" --data ""
    expect_status 200 && expect_json .preview.free_checks.suppressed 4 || return 1
    expect_eq "refresh flag" 0 "$(it_sql "SELECT preview_refresh FROM jobs WHERE id = '$JOB'")" || return 1
    # (the list as it was for the cases below)
    for e in nobody1 nobody2; do http DELETE "/v1/suppressions/$e%40mx.svc.test"; expect_status 200 || return 1; done
    http POST "/v1/verify/bulk/$JOB/preview?refresh=maybe" "" --data ""
    expect_status 400 && expect_json .error.details.field refresh || return 1
    # a job uploaded without preview, and a JSON bulk job: 409
    http POST /v1/verify/bulk/upload "" -F "file=@$F/list.csv"
    other=$(json .job_id)
    http POST "/v1/verify/bulk/$other/preview" "" --data ""
    expect_status 409 && expect_json .error.code preview_unavailable || return 1
    http POST /v1/verify/bulk '{"emails":["alice@mx.svc.test"]}'
    bulk=$(json .job_id)
    http POST "/v1/verify/bulk/$bulk/preview" "" --data ""
    expect_status 409 && expect_json .error.code preview_unavailable || return 1
    http DELETE "/v1/jobs/$other"
    http DELETE "/v1/jobs/$bulk"
    # another account's job is not there
    okey=$(it_key "$(it_account pro 10)" '*')
    API_KEY=$okey http POST "/v1/verify/bulk/$JOB/preview" "" --data ""
    expect_status 404 && expect_json .error.code not_found || return 1
    API_KEY=$okey http POST "/v1/verify/bulk/$JOB/confirm" "" --data ""
    expect_status 404 && expect_json .error.code not_found
}
t_case "refresh=true recomputes: 202 refreshing with refresh_requested_at and the old preview to every caller until the new one, from data changed meanwhile, is stored; one asked for while a worker computes is computed again; 409 preview_unavailable without preview; 404 for another account" t_refresh_and_refusals

t_confirm_once() {
    local poor pkey pjob before i codes
    # not enough credits: 402 with what is needed and what there is
    poor=$(it_account pro 5)
    pkey=$(it_key "$poor" '*')
    API_KEY=$pkey http POST /v1/verify/bulk/upload "" -F "file=@$F/list.csv" -F preview=true
    pjob=$(json .job_id)
    it_job_wait "$pjob" awaiting_confirmation || return 1
    API_KEY=$pkey http POST "/v1/verify/bulk/$pjob/confirm" "" --data ""
    expect_status 402 && expect_json .error.code insufficient_credits &&
        expect_json .error.details.required $CREDITS && expect_json .error.details.available 5 || return 1
    expect_eq "poor balance" 5 "$(balance "$poor")" || return 1
    # ten confirms at once: one charge
    before=$(balance "$ACC")
    for i in $(seq 1 10); do
        curl -s -o "$IT_DIR/confirm-$i.body" -w '%{http_code}\n' -d '' -H "Authorization: Bearer $API_KEY" \
            "$BASE_URL/v1/verify/bulk/$JOB/confirm" > "$IT_DIR/confirm-$i.code" &
    done
    wait
    codes=$(cat "$IT_DIR"/confirm-*.code | sort | uniq -c | awk '{ print $2 "x" $1 }' | tr '\n' ' ')
    expect_eq "answers" "200x1 409x9 " "$codes" || return 1
    for i in $(seq 1 10); do
        case $(cat "$IT_DIR/confirm-$i.code") in
        200) HTTP_BODY=$(cat "$IT_DIR/confirm-$i.body"); HTTP_REQUEST=confirm
             expect_json .status pending && expect_json .credits_charged $CREDITS &&
                 expect_json .credits_remaining "$((before - CREDITS))" || return 1 ;;
        409) HTTP_BODY=$(cat "$IT_DIR/confirm-$i.body"); HTTP_REQUEST=confirm
             expect_json .error.code job_not_awaiting_confirmation && expect_json .error.details.status pending || return 1 ;;
        esac
    done
    expect_eq "balance after ten confirms" "$((before - CREDITS))" "$(balance "$ACC")" || return 1
    expect_eq "charges" "1 $CREDITS" "$(it_sql "SELECT COUNT(*), SUM(amount) FROM credit_ledger WHERE ref = 'job:$JOB:charge'" | tr '\t' ' ')" || return 1
    it_job_wait "$JOB" completed || return 1
    http GET "/v1/jobs/$JOB"
    expect_json .credits_charged $CREDITS && expect_json .processed_emails $TOTAL && expect_json .credits_refunded 0 || return 1
    # the lines that are no address: free rows, verified invalid_syntax
    expect_eq "free rows" "neither invalid_syntax|not an address invalid_syntax" \
        "$(it_sql "SELECT CONCAT(email, ' ', reason) FROM job_emails WHERE job_id = '$JOB' AND charged = 0 ORDER BY email" | paste -sd'|')" || return 1
    expect_eq "balance after completion" "$((before - CREDITS))" "$(balance "$ACC")"
}
t_case "confirm charges credits_needed (no address is free) exactly once under ten concurrent confirms; 402 with details when short" t_confirm_once

t_cancel_awaiting() {
    local job before rows
    before=$(balance "$ACC")
    rows=$(ledger_rows "$ACC")
    http POST /v1/verify/bulk/upload "" -F "file=@$F/list.csv" -F preview=true
    job=$(json .job_id)
    it_job_wait "$job" awaiting_confirmation || return 1
    http DELETE "/v1/jobs/$job"
    expect_status 200 && expect_json .status cancelled && expect_json .credits_refunded 0 || return 1
    http POST "/v1/verify/bulk/$job/confirm" "" --data ""
    expect_status 409 && expect_json .error.details.status cancelled || return 1
    expect_eq "balance" "$before" "$(balance "$ACC")" && expect_eq "ledger rows" "$rows" "$(ledger_rows "$ACC")"
}
t_case "cancelling a job awaiting confirmation charges and refunds nothing" t_cancel_awaiting

t_stratified_sample() {
    local job n
    # 99 rows at catchall.svc.test (its MX mta21 named "bigmail" by the
    # operator's mx_providers.txt) and one at mx.svc.test (mta20: the
    # registrable domain svc.test): two strata. The sample, min(200, 2%) =
    # 2 rows, gives each stratum one: the small one's row is probed every
    # time (a uniform draw would take it 2 times in 100).
    echo 'mta21.svc.test bigmail' >> "$IT_DIR/lists/local/mx_providers.txt"
    { echo email; for i in $(seq 1 99); do echo "someone$i@catchall.svc.test"; done
      echo nobody777@mx.svc.test; } > "$F/strata.csv"
    n=$(grep -c 'event=preview_computed .* strata=2 ' "$IT_DIR/log/svc.log")
    http POST /v1/verify/bulk/upload "" -F "file=@$F/strata.csv" -F preview=true
    expect_status 202 || return 1
    job=$(json .job_id)
    it_job_wait "$job" awaiting_confirmation || return 1
    sed -i '/^mta21.svc.test bigmail$/d' "$IT_DIR/lists/local/mx_providers.txt"
    http POST "/v1/verify/bulk/$job/preview" "" --data ""
    expect_status 200 && expect_json .preview.free_checks.needs_smtp 100 &&
        expect_json .preview.smtp_sample.size 2 || return 1
    expect_eq "the small stratum's row probed" 1 \
        "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash IN ($(it_cache_keys nobody777@mx.svc.test))")" || return 1
    expect_eq "previews computed from two strata" $((n + 1)) \
        "$(grep -c 'event=preview_computed .* strata=2 ' "$IT_DIR/log/svc.log")" || return 1
    http DELETE "/v1/jobs/$job"
    expect_status 200
}
t_case "the SMTP sample is stratified by who runs the mail: a provider with 1 row in 100 gets one of the 2 sampled rows" t_stratified_sample

t_done
