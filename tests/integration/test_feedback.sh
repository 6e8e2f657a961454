#!/bin/bash
# test_feedback.sh: delivery feedback and the accuracy report. A small list
# is verified twice by svc-worker against fake SMTP servers (one stack);
# then outcomes come in through POST /v1/feedback: a 5.1.1 hard bounce puts
# the address on the account's suppression list (a bare 550 does not; an
# account that turned it off gets none), a complaint on its complainer
# list, a replayed event_id is ignored and reported, a bad event refuses
# the whole call with nothing written, and no address is stored in clear.
# GET /v1/reports/accuracy (and svcadm report accuracy) then give exact
# counts per classification and provider, the unknown share and the
# stability of verdicts verified twice. svcadm feedback import reads a
# Postfix log into another account's outcomes, twice: the second time
# changes nothing. Calibration: a list at the accept-all host is verified,
# most of it reported delivered; svcadm calibration update (and the
# worker's housekeeping) counts outcomes per provider (and mail host) and
# classification only, and a later verdict there (single, bulk, download)
# has score_basis "calibrated" with the score computed from the counts as
# the README says, and its catch-all send verdict follows that score;
# before calibration_min_outcomes it says "rules". A second accept-all
# host of the same provider whose addresses all bounced then scores
# lower than the first. A single verification (POST /v1/verify) is kept as
# a keyed hash until its retention ends, and its outcome counts in the
# report and the calibration. An account's complaint puts the address on
# its own complainer list: its single verifications and bulk jobs then say
# known_complainer (afresh or from the verdict cache), another account's
# stay valid, and the shared verdict cache never holds that verdict (nor
# the upload preview's sample of it).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require timeout

mkdir -p "$IT_DIR/dns"
printf '%s\n' '$ORIGIN feedback.test.' '$TTL 300' \
    '@ IN SOA ns.feedback.test. hostmaster.feedback.test. 1 3600 600 86400 300' \
    '@ IN NS ns.feedback.test.' 'ns IN A 127.0.0.1' 'mx1 IN A 127.0.0.31' 'mx2 IN A 127.0.0.30' \
    'good IN A 192.0.2.1' 'good IN MX 10 mx1' 'ca IN A 192.0.2.1' 'ca IN MX 10 mx2' \
    'mx3 IN A 127.0.0.32' 'ca2 IN A 192.0.2.1' 'ca2 IN MX 10 mx3' \
    > "$IT_DIR/dns/feedback.test.zone"
mail_env_dns "$IT_DIR/dns/feedback.test.zone"
SMTP_PORT=$(stack_free_port)
fake 127.0.0.30 catchall=1
fake 127.0.0.31
fake 127.0.0.32 catchall=1
mail_env_lists
mail_env_conf
it_conf_add "feedback_hash_key_file = $IT_DIR/feedback-hash-key
worker_poll_interval = 1
account_suppressions_max = 5
calibration_min_outcomes = 10
calibration_reload_seconds = 0
preview_smtp_min_rows = 1"
it_stack_start
[ -s "$IT_DIR/feedback-hash-key" ] || { echo "Bail out! svcadm db migrate wrote no feedback_hash_key_file"; exit 1; }

ACC=$(it_account admin 1000)
API_KEY=$(it_key "$ACC" '*')
LIST='["user@good.feedback.test","ok@good.feedback.test","unknown@good.feedback.test","full@good.feedback.test","jane@ca.feedback.test"]'

verify_list() {
    local id
    http POST /v1/verify/bulk "{\"emails\":$LIST}"
    expect_status 202 || return 1
    id=$(json .job_id)
    it_job_wait "$id" completed
}
t_verify() {
    verify_list && verify_list || return 1
    expect_eq "rows verified" 10 "$(it_sql "SELECT COUNT(*) FROM job_emails e JOIN jobs j ON j.id = e.job_id WHERE j.account_id = '$ACC' AND e.state = 'done'")"
}
t_case "a small list is verified twice by svc-worker" t_verify

NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
outcomes() { it_sql "SELECT COUNT(*) FROM feedback_outcomes WHERE account_id = '${1:-$ACC}'"; }

t_post() {
    http POST /v1/feedback "$(jq -cn --arg t "$NOW" '{events: [
        {email: "user@good.feedback.test", outcome: "delivered", occurred_at: $t, event_id: "e1"},
        {email: "ok@good.feedback.test", outcome: "delivered", occurred_at: "2020-01-01T00:00:00Z", event_id: "e2"},
        {email: "OK@good.feedback.test", outcome: "soft_bounce", occurred_at: $t, smtp_code: 452, enhanced_code: "4.2.2", event_id: "e3"},
        {email: "unknown@good.feedback.test", outcome: "hard_bounce", occurred_at: $t, smtp_code: 550, enhanced_code: "5.1.1",
         diagnostic: "550 5.1.1 <unknown@good.feedback.test>: user unknown", event_id: "e4"},
        {email: "full@good.feedback.test", outcome: "complaint", occurred_at: $t},
        {email: "jane@ca.feedback.test", outcome: "hard_bounce", occurred_at: $t, smtp_code: 550}]}')"
    expect_status 200 && expect_json .accepted 6 && expect_json .replayed 0 && expect_json .suppressed 1 &&
        expect_json .complainers_added 1 && expect_json .suppressions_skipped 0 || return 1
    expect_eq "suppressed" "unknown@good.feedback.test" \
        "$(it_sql "SELECT GROUP_CONCAT(entry) FROM suppressions WHERE account_id = '$ACC'")" || return 1
    expect_eq "complainers" 1 "$(it_sql "SELECT COUNT(*) FROM account_complainers WHERE account_id = '$ACC'")" || return 1
    expect_eq "outcomes" 6 "$(outcomes)" || return 1
    # only hashes: no address, no diagnostic, in any stored column
    expect_eq "clear addresses" 0 "$(it_sql "SELECT COUNT(*) FROM feedback_outcomes WHERE addr_hash NOT REGEXP '^[0-9a-f]{32}\$' OR CONCAT_WS(' ', enhanced_code, event_id) LIKE '%@%'")" || return 1
    expect_eq "complainer hashes" 0 "$(it_sql "SELECT COUNT(*) FROM account_complainers WHERE addr_hash NOT REGEXP '^[0-9a-f]{32}\$'")"
}
t_case "outcomes in: a 5.1.1 hard bounce is suppressed (a bare 550 is not), a complaint listed, only hashes stored" t_post

t_replay() {
    http POST /v1/feedback "$(jq -cn --arg t "$NOW" '{events: [
        {email: "user@good.feedback.test", outcome: "delivered", occurred_at: $t, event_id: "e1"},
        {email: "unknown@good.feedback.test", outcome: "hard_bounce", occurred_at: $t, enhanced_code: "5.1.1", event_id: "e4"}]}')"
    expect_status 200 && expect_json .accepted 0 && expect_json .replayed 2 &&
        expect_jq '.replayed_event_ids == ["e1","e4"]' && expect_json .suppressed 0 || return 1
    expect_eq "outcomes" 6 "$(outcomes)"
}
t_case "a replayed event_id is ignored and reported" t_replay

bad() {	# bad FIELD EVENTS-JSON: 400 naming FIELD, nothing stored
    http POST /v1/feedback "{\"events\":$2}"
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field "$1" || return 1
    expect_eq "outcomes and suppressions after a refused call" "6 1" \
        "$(it_sql "SELECT CONCAT((SELECT COUNT(*) FROM feedback_outcomes WHERE account_id = '$ACC'), ' ', (SELECT COUNT(*) FROM suppressions WHERE account_id = '$ACC'))")"
}
t_bad() {
    local ok='{"email":"new@good.feedback.test","outcome":"hard_bounce","occurred_at":"2026-11-01T00:00:00Z","enhanced_code":"5.1.1","event_id":"n1"}'
    bad 'events[1].outcome' "[$ok,{\"email\":\"a@b.test\",\"outcome\":\"bounced\",\"occurred_at\":\"2026-11-01T00:00:00Z\"}]" &&
    bad 'events[1].email' "[$ok,{\"email\":\"not an address\",\"outcome\":\"delivered\",\"occurred_at\":\"2026-11-01T00:00:00Z\"}]" &&
    bad 'events[0].occurred_at' '[{"email":"a@b.test","outcome":"delivered","occurred_at":"yesterday"}]' &&
    bad 'events[0].enhanced_code' '[{"email":"a@b.test","outcome":"hard_bounce","occurred_at":"2026-11-01T00:00:00Z","enhanced_code":"5.1"}]' &&
    bad 'events[0].smtp_code' '[{"email":"a@b.test","outcome":"hard_bounce","occurred_at":"2026-11-01T00:00:00Z","smtp_code":99}]' &&
    bad 'events[0].color' '[{"email":"a@b.test","outcome":"delivered","occurred_at":"2026-11-01T00:00:00Z","color":"red"}]' &&
    bad events '[]' || return 1
    jq -cn '{events: [range(0; 10001) | {email: "u\(.)@b.test", outcome: "delivered", occurred_at: "2026-11-01T00:00:00Z"}]}' > "$IT_DIR/many.json"
    http POST /v1/feedback "@$IT_DIR/many.json"
    expect_status 400 && expect_json .error.details.field events && expect_eq "outcomes" 6 "$(outcomes)"
}
t_case "a bad event (or more than 10,000) refuses the whole call: 400 naming it, nothing written" t_bad

t_scope() {
    API_KEY=$(it_key "$ACC" 'verify:bulk,jobs:read') http POST /v1/feedback '{"events":[]}'
    expect_status 403 && expect_json .error.details.required_scope feedback:write || return 1
    API_KEY=$(it_key "$ACC" 'feedback:write') http POST /v1/feedback "$(jq -cn --arg t "$NOW" '{events: [
        {email: "x@good.feedback.test", outcome: "delivered", occurred_at: $t, event_id: "s1"}]}')"
    expect_status 200 && expect_json .accepted 1 || return 1
    it_sql "DELETE FROM feedback_outcomes WHERE event_id = 's1'"
}
t_case "POST /v1/feedback needs the scope feedback:write (or *)" t_scope

t_setting_off() {
    local acc key
    acc=$(it_account pro 10); key=$(it_key "$acc" '*')
    svcadm feedback set "$acc" --suppress-hard-bounces off || return 1
    API_KEY=$key http POST /v1/feedback "$(jq -cn --arg t "$NOW" '{events: [
        {email: "unknown@good.feedback.test", outcome: "hard_bounce", occurred_at: $t, enhanced_code: "5.1.1"}]}')"
    expect_status 200 && expect_json .accepted 1 && expect_json .suppressed 0 || return 1
    expect_eq "suppressions" 0 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$acc'")"
}
t_case "an account that turned suppression off gets none from a hard bounce" t_setting_off

t_limit() {
    local acc key
    acc=$(it_account pro 10); key=$(it_key "$acc" '*')
    for i in $(seq 1 5); do it_sql "INSERT INTO suppressions VALUES ('$acc', 'pre$i@x.test', UTC_TIMESTAMP(3))"; done
    API_KEY=$key http POST /v1/feedback "$(jq -cn --arg t "$NOW" '{events: [
        {email: "unknown@good.feedback.test", outcome: "hard_bounce", occurred_at: $t, enhanced_code: "5.1.1"}]}')"
    expect_status 200 && expect_json .accepted 1 && expect_json .suppressed 0 && expect_json .suppressions_skipped 1 || return 1
    expect_eq "suppressions" 5 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$acc'")"
}
t_case "a full suppression list (account_suppressions_max) skips the suppression, keeps the outcome" t_limit

# the rows of ACC's jobs
ROWS="job_emails e JOIN jobs j ON j.id = e.job_id WHERE j.account_id"

t_report() {
    local classes c_full prov n
    # what the report must say, from the rows themselves
    classes=$(it_sql "SELECT GROUP_CONCAT(DISTINCT CONCAT(e.email, '=', e.classification) ORDER BY e.email SEPARATOR ' ') FROM $ROWS = '$ACC'")
    it_log "classifications: $classes"
    expect_eq "classifications" "full@good.feedback.test=risky jane@ca.feedback.test=catch_all ok@good.feedback.test=valid unknown@good.feedback.test=invalid user@good.feedback.test=valid" "$classes" || return 1
    c_full=risky
    http GET /v1/reports/accuracy
    expect_status 200 || return 1
    local total; total=$(printf "%s" "$HTTP_BODY" | jq -cS .total)
    expect_json .total.verified 10 && expect_json .total.delivered 2 && expect_json .total.soft_bounce 2 &&
        expect_json .total.hard_bounce 4 && expect_json .total.complaint 2 && expect_json .total.no_outcome 0 &&
        expect_json .by_classification.valid.verified 4 && expect_json .by_classification.valid.delivered 2 &&
        expect_json .by_classification.valid.soft_bounce 2 && expect_json .by_classification.invalid.hard_bounce 2 &&
        expect_json .by_classification.catch_all.hard_bounce 2 && expect_json ".by_classification.$c_full.complaint" 2 &&
        expect_json .by_classification.unknown.verified 0 && expect_json .unknown_share 0 &&
        expect_json .stability.addresses_verified_twice 5 || return 1
    expect_json .stability.same_classification 5 || return 1
    # per provider: the rows' own provider column
    while read -r prov n; do
        expect_json ".by_provider[\"$prov\"].verified" "$n" || return 1
    done < <(it_sql "SELECT COALESCE(provider, 'none'), COUNT(*) FROM $ROWS = '$ACC' GROUP BY 1")
    expect_jq '.by_provider | length > 0' || return 1
    # a window before the verifications is empty; a bad bound is a 400
    http GET "/v1/reports/accuracy?since=2020-01-01T00:00:00Z&until=2020-02-01T00:00:00Z"
    expect_status 200 && expect_json .total.verified 0 || return 1
    http GET "/v1/reports/accuracy?since=yesterday"
    expect_status 400 && expect_json .error.details.field since || return 1
    # the operator's view: every account (the others verified nothing)
    svcadm report accuracy --json > "$IT_DIR/report.json" || return 1
    expect_eq "svcadm total" "$total" "$(jq -cS .total "$IT_DIR/report.json")" || return 1
    svcadm report accuracy > "$IT_DIR/report.txt" || return 1
    grep -Eq '^invalid +2 +0 +2 +0 +0 +0$' "$IT_DIR/report.txt" || it_fail "svcadm text report: $(cat "$IT_DIR/report.txt")" || return 1
    # the customer's view in the CLI
    HOME=$IT_DIR ROCKETVERIFIER_API_KEY=$API_KEY SVC_BASE_URL=$BASE_URL "$top_builddir/src/cli/svc" report accuracy \
        > "$IT_DIR/cli-report.txt" 2>&1 || it_fail "svc report accuracy: $(cat "$IT_DIR/cli-report.txt")" || return 1
    grep -Eq '^valid +4 +2 +0 +2 +0 +0$' "$IT_DIR/cli-report.txt" &&
        grep -q 'addresses verified twice 5, same classification every time 5' "$IT_DIR/cli-report.txt" ||
        it_fail "svc report accuracy: $(cat "$IT_DIR/cli-report.txt")"
}
t_case "the accuracy report's numbers are exact (API and svcadm)" t_report

# ---- the senders' webhooks (sample payloads in tests/integration/feedback/)
SAMPLES=$top_srcdir/tests/integration/feedback
MG_KEY=key-3ax6xnjp29jd6fds4gc373sgvjxteol0
mailgun() {	# mailgun SAMPLE [KEY]: the sample signed with KEY (default MG_KEY), POSTed
    local f=$IT_DIR/mg.json ts token sig
    ts=$(jq -r .signature.timestamp "$SAMPLES/$1"); token=$(jq -r .signature.token "$SAMPLES/$1")
    sig=$(printf '%s%s' "$ts" "$token" | openssl dgst -sha256 -hmac "${2:-$MG_KEY}" | awk '{ print $NF }')
    jq --arg s "$sig" '.signature.signature = $s' "$SAMPLES/$1" > "$f"
    API_KEY= http POST "/v1/feedback/mailgun?account=$ACC" "@$f"
}
t_mailgun() {
    it_require openssl
    local before
    svcadm feedback set "$ACC" --mailgun-signing-key "$MG_KEY" --postmark-auth pmuser:pm-secret-1 || return 1
    before=$(outcomes)
    mailgun mailgun_failed.json wrong-key
    expect_status 401 && expect_json .error.code unauthorized && expect_eq "outcomes after a bad signature" "$before" "$(outcomes)" || return 1
    mailgun mailgun_failed.json
    expect_status 200 && expect_json .accepted 1 && expect_json .suppressed 1 || return 1
    expect_eq "suppressed by mailgun" 1 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$ACC' AND entry = 'gone@good.feedback.test'")" || return 1
    expect_eq "stored as mailgun's" "mailgun hard_bounce 550 5.1.1 DACSsAdVSeGpLid7TN03WA" \
        "$(it_sql "SELECT CONCAT_WS(' ', source, outcome, smtp_code, enhanced_code, event_id) FROM feedback_outcomes WHERE source = 'mailgun'")" || return 1
    mailgun mailgun_failed.json
    expect_status 200 && expect_json .accepted 0 && expect_json .replayed 1 || return 1
    mailgun mailgun_opened.json
    expect_status 200 && expect_json .ignored true && expect_eq "outcomes" "$((before + 1))" "$(outcomes)"
}
t_case "mailgun: a signed 'failed' event is stored and suppresses; a bad signature is 401, a replay ignored, an open ignored" t_mailgun

t_postmark() {
    local before
    before=$(outcomes)
    API_KEY= http POST "/v1/feedback/postmark?account=$ACC" "@$SAMPLES/postmark_bounce.json"
    expect_status 401 && expect_header www-authenticate 'Basic realm="svc feedback"' || return 1
    API_KEY= http POST "/v1/feedback/postmark?account=$ACC" "@$SAMPLES/postmark_bounce.json" -u pmuser:wrong
    expect_status 401 && expect_eq "outcomes after bad credentials" "$before" "$(outcomes)" || return 1
    API_KEY= http POST "/v1/feedback/postmark?account=$ACC" "@$SAMPLES/postmark_bounce.json" -u pmuser:pm-secret-1
    expect_status 200 && expect_json .accepted 1 && expect_json .suppressed 1 || return 1
    API_KEY= http POST "/v1/feedback/postmark?account=$ACC" "@$SAMPLES/postmark_bounce.json" -u pmuser:pm-secret-1
    expect_status 200 && expect_json .replayed 1 && expect_jq '.replayed_event_ids == ["Bounce:4323372036854775807"]' || return 1
    API_KEY= http POST "/v1/feedback/postmark?account=$ACC" "@$SAMPLES/postmark_complaint.json" -u pmuser:pm-secret-1
    expect_status 200 && expect_json .accepted 1 && expect_json .complainers_added 1 || return 1
    API_KEY= http POST "/v1/feedback/postmark?account=$ACC" "@$SAMPLES/postmark_delivery.json" -u pmuser:pm-secret-1
    expect_status 200 && expect_json .accepted 1 || return 1
    expect_eq "postmark outcomes" "delivered hard_bounce complaint" \
        "$(it_sql "SELECT GROUP_CONCAT(outcome ORDER BY outcome SEPARATOR ' ') FROM feedback_outcomes WHERE source = 'postmark'")" || return 1
    API_KEY= http POST "/v1/feedback/sendmail?account=$ACC" '{}'
    expect_status 404
}
t_case "postmark: basic auth checked (401 without or wrong), bounce suppresses, complaint listed, delivery stored, replay ignored" t_postmark

t_postfix_import() {
    local acc3 key3 at classic out
    acc3=$(it_account admin 1000)
    key3=$(it_key "$acc3" '*')
    API_KEY=$key3 verify_list || return 1
    # outcomes a few seconds after the verification (whole seconds in the log)
    at=$(date -u -d '+5 seconds' +%Y-%m-%dT%H:%M:%S)
    classic=$(date -u -d '+5 seconds' '+%b %e %H:%M:%S')
    cat > "$IT_DIR/maillog" <<LOG
$classic mail postfix/qmgr[77]: 3F2A41C0123: from=<news@sender.example>, size=1234, nrcpt=4 (queue active)
$classic mail postfix/smtp[1234]: 3F2A41C0123: to=<user@good.feedback.test>, relay=mx1.feedback.test[127.0.0.31]:25, delay=0.5, delays=0.1/0/0.2/0.2, dsn=2.0.0, status=sent (250 2.0.0 Ok: queued as 4XyZ)
${at}.123456+00:00 mail postfix/smtp[1235]: 3F2A41C0123: to=<unknown@good.feedback.test>, relay=mx1.feedback.test[127.0.0.31]:25, delay=0.6, delays=0.1/0/0.2/0.3, dsn=5.1.1, status=bounced (host mx1.feedback.test[127.0.0.31] said: 550 5.1.1 <unknown@good.feedback.test>: Recipient address rejected: User unknown (in reply to RCPT TO command))
${at}Z mail postfix/smtp[1236]: 3F2A41C0123: to=<jane@ca.feedback.test>, relay=none, delay=30, delays=0/0/30/0, dsn=4.4.1, status=deferred (connect to mx2.feedback.test[127.0.0.30]:25: Connection timed out)
${at}Z mail postfix/smtp[1237]: 3F2A41C0123: to=<jane@ca.feedback.test>, relay=none, delay=90, delays=0/0/90/0, dsn=4.4.1, status=deferred (connect to mx2.feedback.test[127.0.0.30]:25: Connection timed out)
${at}+00:00 mail postfix-out/smtp[1238]: 4Mx0Xr1v0Vz9sZb: to=<ok@good.feedback.test>, relay=mx1.feedback.test[127.0.0.31]:25, delay=0.4, dsn=2.0.0, status=sent (250 2.0.0 Ok)
28/11/2026 12:00:05 mail postfix/smtp[1239]: 5B5B5B5B5B: to=<full@good.feedback.test>, dsn=2.0.0, status=sent (250 Ok)
$classic mail postfix/smtpd[8]: connect from unknown[192.0.2.9]
LOG
    out=$(TZ=UTC svcadm feedback import --account "$acc3" "$IT_DIR/maillog" 2>&1) || { it_fail "import failed: $out"; return 1; }
    expect_eq "first import" "lines 8 deliveries 5 stored 4 duplicates 1 suppressed 1 suppress_skipped 0 skipped_other_lines 2 skipped_bad_time 1 skipped_unreadable 0 skipped_bad_address 0" \
        "$(echo $out)" || return 1
    out=$(TZ=UTC svcadm feedback import --account "$acc3" - < "$IT_DIR/maillog" 2>&1) || { it_fail "second import failed: $out"; return 1; }
    expect_eq "the same log again changes nothing" "lines 8 deliveries 5 stored 0 duplicates 5 suppressed 0" \
        "$(echo $out | cut -d' ' -f1-10)" || return 1
    expect_eq "outcomes stored as postfix's, by hash" "4 4" \
        "$(it_sql "SELECT COUNT(*), SUM(source = 'postfix' AND addr_hash NOT LIKE '%@%' AND event_id NOT LIKE '%@%') FROM feedback_outcomes WHERE account_id = '$acc3'" | tr '\t' ' ')" || return 1
    API_KEY=$key3 http GET "/v1/suppressions?limit=10"
    expect_status 200 && expect_json '[.data[].entry] | join(",")' unknown@good.feedback.test || return 1
    API_KEY=$key3 http GET /v1/reports/accuracy
    expect_status 200 && expect_json .total.verified 5 && expect_json .total.delivered 2 &&
        expect_json .total.hard_bounce 1 && expect_json .total.soft_bounce 1 && expect_json .total.no_outcome 1 &&
        expect_json .by_classification.valid.delivered 2 && expect_json .by_classification.invalid.hard_bounce 1 &&
        expect_json .by_classification.catch_all.soft_bounce 1 || return 1
    out=$(svcadm feedback import "$IT_DIR/maillog" 2>&1) && { it_fail "import without --account exited 0"; return 1; }
    case $out in *"--account ACCOUNT is needed"*) ;; *) it_fail "without --account: $out"; return 1 ;; esac
    out=$(svcadm feedback import --account acc_nobody "$IT_DIR/maillog" 2>&1) && { it_fail "import for no account exited 0"; return 1; }
    case $out in *"no account acc_nobody"*) ;; *) it_fail "unknown account: $out" ;; esac
}
t_case "svcadm feedback import reads a Postfix log: outcomes stored once (a second import changes nothing), the 5.1.1 bounce suppressed, the report exact" t_postfix_import

t_sendgrid() {
    it_require openssl
    local acc4 pub ts sig before body=$SAMPLES/sendgrid_events.json
    acc4=$(it_account admin 10)
    openssl ecparam -name prime256v1 -genkey -noout -out "$IT_DIR/sg.pem" 2> /dev/null || { it_fail "openssl ecparam"; return 1; }
    pub=$(openssl ec -in "$IT_DIR/sg.pem" -pubout -outform DER 2> /dev/null | base64 -w0)
    svcadm feedback set "$acc4" --sendgrid-public-key "not-a-key" 2> /dev/null && { it_fail "a bad key was taken"; return 1; }
    svcadm feedback set "$acc4" --sendgrid-public-key "$pub" || return 1
    ts=1764331260
    sendgrid() {	# sendgrid [EXTRA]: POST the sample signed (with EXTRA after the body: a bad signature)
        sig=$({ printf '%s' "$ts"; cat "$body"; printf '%s' "${1-}"; } | openssl dgst -sha256 -sign "$IT_DIR/sg.pem" | base64 -w0)
        API_KEY= http POST "/v1/feedback/sendgrid?account=$acc4" "@$body" \
            -H "X-Twilio-Email-Event-Webhook-Signature: $sig" -H "X-Twilio-Email-Event-Webhook-Timestamp: $ts"
    }
    before=$(outcomes "$acc4")
    sendgrid x
    expect_status 401 && expect_json .error.code unauthorized && expect_eq "outcomes after a bad signature" "$before" "$(outcomes "$acc4")" || return 1
    sendgrid
    # delivered, bounce (hard), blocked (soft), spamreport; processed and open ignored
    expect_status 200 && expect_json .accepted 4 && expect_json .suppressed 1 && expect_json .complainers_added 1 || return 1
    expect_eq "stored as sendgrid's" "delivered 250 - hard_bounce 550 5.1.1 soft_bounce 554 5.7.1 complaint - -" \
        "$(it_sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', outcome, IFNULL(smtp_code, '-'), IFNULL(enhanced_code, '-')) ORDER BY occurred_at SEPARATOR ' ') FROM feedback_outcomes WHERE account_id = '$acc4' AND source = 'sendgrid'")" || return 1
    expect_eq "suppressed by sendgrid" 1 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$acc4' AND entry = 'sg-gone@good.feedback.test'")" || return 1
    sendgrid
    expect_status 200 && expect_json .accepted 0 && expect_json .replayed 4 || return 1
    # another account with no key configured: 401
    API_KEY= http POST "/v1/feedback/sendgrid?account=$ACC" "@$body" \
        -H "X-Twilio-Email-Event-Webhook-Signature: $sig" -H "X-Twilio-Email-Event-Webhook-Timestamp: $ts"
    expect_status 401 || return 1
    # a signed array with an unreadable event: 400, nothing stored
    printf '[{"event":"delivered","email":"x@good.feedback.test","timestamp":1764331200,"sg_event_id":"a1"},{"event":"bounce","email":"not an address","timestamp":1,"sg_event_id":"a2"}]' > "$IT_DIR/sg-bad.json"
    sig=$({ printf '%s' "$ts"; cat "$IT_DIR/sg-bad.json"; } | openssl dgst -sha256 -sign "$IT_DIR/sg.pem" | base64 -w0)
    API_KEY= http POST "/v1/feedback/sendgrid?account=$acc4" "@$IT_DIR/sg-bad.json" \
        -H "X-Twilio-Email-Event-Webhook-Signature: $sig" -H "X-Twilio-Email-Event-Webhook-Timestamp: $ts"
    expect_status 400 && expect_json .error.code invalid_json && expect_eq "outcomes" 4 "$(outcomes "$acc4")"
}
t_case "sendgrid: a signed array stored (bounce suppresses, blocked is soft, spamreport listed, opens ignored); a bad signature or no key is 401, a replay ignored, an unreadable event refuses the array" t_sendgrid

# ---- calibration
CAL_NAMES="anna bella carla dora emma fiona gina hanna ivy"
cal_counts() {	# cal_counts: "delivered bounced" of (feedback.test, catch_all)
    it_sql "SELECT CONCAT(delivered, ' ', bounced) FROM calibration WHERE provider = 'feedback.test' AND classification = 'catch_all'"
}
# cal_expect RULES HOST: the calibrated score of a catch-all verdict at
# feedback.test's mail host HOST whose rules gave RULES, from the tables
# (README, Calibration: the provider's rate r, the host's shrunk towards it)
cal_expect() {
    local s=$1 dp bp dc bc dh bh np nc nh a b num den
    read -r dp bp < <(cal_counts)
    read -r dc bc < <(it_sql "SELECT SUM(delivered), SUM(bounced) FROM calibration WHERE classification = 'catch_all'")
    read -r dh bh < <(it_sql "SELECT CONCAT(COALESCE(SUM(delivered), 0), ' ', COALESCE(SUM(bounced), 0)) FROM calibration_hosts WHERE mx_host = '$2' AND classification = 'catch_all'")
    np=$((dp + bp)); nc=$((dc + bc)); nh=$((dh + bh))
    a=$((100 * dp * (nc + 2) + 2 * (100 * dc + 2 * s)))
    b=$(((nc + 2) * (np + 2)))
    num=$((100 * dh * b + 2 * a))
    den=$((b * (nh + 2)))
    echo $(((2 * num + den) / (2 * den)))
}
t_calibration() {
    local acc key list id events rules want n out good
    acc=$(it_account admin 1000); key=$(it_key "$acc" '*')
    list=$(for n in $CAL_NAMES; do echo "$n@ca.feedback.test"; done | jq -Rsc 'split("\n") | map(select(length > 0))')
    API_KEY=$key http POST /v1/verify/bulk "{\"emails\":$list}"
    expect_status 202 || return 1
    id=$(json .job_id)
    it_job_wait "$id" completed || return 1
    API_KEY=$key http GET "/v1/jobs/$id/results?limit=100"
    expect_status 200 && expect_jq '[.results[] | .classification == "catch_all" and .score_basis == "rules"] | all and length == 9' || return 1
    rules=$(json '.results[0].score')
    # before: only the hard bounce of jane@ca (first case: verified twice,
    # counted once), below 10
    out=$(svcadm calibration update) || { it_fail "svcadm calibration update: $out"; return 1; }
    expect_eq "counts before" "0 1" "$(cal_counts)" || return 1
    API_KEY=$key http POST /v1/verify '{"email":"lena@ca.feedback.test"}'
    expect_status 200 && expect_json .reason catch_all && expect_json .score_basis rules && expect_json .score "$rules" &&
        expect_json .catch_all_verdict send_safe || return 1
    # outcomes: 8 of the 9 delivered, 1 hard bounce
    events=$(for n in $CAL_NAMES; do echo "$n"; done | jq -Rsc --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" 'split("\n") | map(select(length > 0)) |
        map({email: "\(.)@ca.feedback.test", outcome: (if . == "hanna" then "hard_bounce" else "delivered" end), occurred_at: $t,
             enhanced_code: (if . == "hanna" then "5.1.1" else null end)} | with_entries(select(.value != null)))')
    API_KEY=$key http POST /v1/feedback "{\"events\":$events}"
    expect_status 200 && expect_json .accepted 9 || return 1
    out=$(svcadm calibration update) || { it_fail "svcadm calibration update: $out"; return 1; }
    expect_eq "counts after" "8 2" "$(cal_counts)" || return 1
    case $out in "window_days 90 results "*" rows "*) ;; *) it_fail "svcadm calibration update printed: $out"; return 1 ;; esac
    svcadm calibration show | grep -Eq '^feedback\.test +catch_all +8 +2 +90 ' ||
        it_fail "svcadm calibration show: $(svcadm calibration show)" || return 1
    # another provider's catch-all rows, below the threshold, still move
    # the classification's rate (the prior): 5 bounces elsewhere
    it_sql "INSERT INTO calibration VALUES ('elsewhere.test', 'catch_all', 0, 5, 90, UTC_TIMESTAMP(3))"
    want=$(cal_expect "$rules" mx2.feedback.test)
    CAL_RULES=$rules
    it_log "rules score $rules, calibrated $want (8 delivered, 2 bounced; 5 bounced elsewhere)"
    [ "$want" -gt "$rules" ] || it_fail "mostly delivered, yet $want is not above $rules" || return 1
    API_KEY=$key http POST /v1/verify '{"email":"mona@ca.feedback.test"}'
    expect_status 200 && expect_json .reason catch_all && expect_json .score_basis calibrated && expect_json .score "$want" || return 1
    # the send verdict follows the calibrated score: below calibration_avoid_below (80)
    [ "$want" -lt 80 ] || it_fail "the calibrated score $want is not below 80: this case expects avoid" || return 1
    expect_json .catch_all_verdict avoid || return 1
    # a job's result (stored with its basis) and its download
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["nora@ca.feedback.test","user@good.feedback.test"]}'
    expect_status 202 || return 1
    id=$(json .job_id)
    it_job_wait "$id" completed || return 1
    API_KEY=$key http GET "/v1/jobs/$id/results"
    expect_status 200 && expect_json '.results[0].score_basis' calibrated && expect_json '.results[0].score' "$want" &&
        expect_json '.results[0].catch_all_verdict' avoid && expect_json '.results[1].score_basis' rules || return 1
    expect_eq "stored bases" "calibrated rules" "$(it_sql "SELECT GROUP_CONCAT(score_basis ORDER BY seq SEPARATOR ' ') FROM job_emails WHERE job_id = '$id'")" || return 1
    good=$(json '.results[1].score')
    curl -s -H "Authorization: Bearer $key" -o "$IT_DIR/cal.csv" "$BASE_URL/v1/jobs/$id/download?format=csv"
    expect_eq "download: email, svc_score, svc_score_basis" "nora@ca.feedback.test,$want,calibrated user@good.feedback.test,$good,rules" \
        "$(tr -d '\r' < "$IT_DIR/cal.csv" | awk -F, 'NR > 1 { print $1 "," $6 "," $NF }' | tr '\n' ' ' | sed 's/ $//')" || return 1
    curl -s -H "Authorization: Bearer $key" -o "$IT_DIR/cal-safe.csv" "$BASE_URL/v1/jobs/$id/download?format=csv&filter=send_safe"
    expect_eq "send_safe download (the calibrated avoid left out)" "user@good.feedback.test" \
        "$(tr -d '\r' < "$IT_DIR/cal-safe.csv" | awk -F, 'NR > 1 { print $1 }' | tr '\n' ' ' | sed 's/ $//')" || return 1
    it_sql "DELETE FROM calibration WHERE provider = 'elsewhere.test'"
}
t_case "calibration: a catch-all host's later verdicts follow its outcomes (score_basis calibrated, score from the counts, send verdict from the score); below calibration_min_outcomes the rules stand" t_calibration

t_calibration_hosts() {
    local acc key list id events at_mx2 at_mx3
    acc=$(it_account admin 1000); key=$(it_key "$acc" '*')
    list='["olga@ca2.feedback.test","petra@ca2.feedback.test","rita@ca2.feedback.test","sara@ca2.feedback.test"]'
    API_KEY=$key http POST /v1/verify/bulk "{\"emails\":$list}"
    expect_status 202 || return 1
    id=$(json .job_id)
    it_job_wait "$id" completed || return 1
    expect_eq "mail host stored with the results" "catch_all mx3.feedback.test" \
        "$(it_sql "SELECT DISTINCT CONCAT_WS(' ', classification, mx_host) FROM job_emails WHERE job_id = '$id'")" || return 1
    # every address at the second host of feedback.test bounced
    events=$(echo "$list" | jq -c --arg t "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
        'map({email: ., outcome: "hard_bounce", occurred_at: $t, enhanced_code: "5.1.1"})')
    API_KEY=$key http POST /v1/feedback "{\"events\":$events}"
    expect_status 200 && expect_json .accepted 4 || return 1
    out=$(svcadm calibration update) || { it_fail "svcadm calibration update: $out"; return 1; }
    case $out in *" host_rows "*) ;; *) it_fail "svcadm calibration update printed: $out"; return 1 ;; esac
    expect_eq "provider counts" "8 6" "$(cal_counts)" || return 1
    expect_eq "mail host counts" "mx2.feedback.test 8 2,mx3.feedback.test 0 4" \
        "$(it_sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', mx_host, delivered, bounced) ORDER BY mx_host) FROM calibration_hosts WHERE provider = 'feedback.test' AND classification = 'catch_all'")" || return 1
    expect_eq "host rows with an address or a hash" 0 \
        "$(it_sql "SELECT COUNT(*) FROM calibration_hosts WHERE CONCAT(provider, mx_host) LIKE '%@%' OR CONCAT(provider, mx_host) REGEXP '[0-9a-f]{32}'")" || return 1
    svcadm calibration show | grep -Eq '^mx3\.feedback\.test +feedback\.test +catch_all +0 +4$' ||
        it_fail "svcadm calibration show: $(svcadm calibration show)" || return 1
    at_mx2=$(cal_expect "$CAL_RULES" mx2.feedback.test)
    at_mx3=$(cal_expect "$CAL_RULES" mx3.feedback.test)
    it_log "one provider, two mail hosts: mx2 (8 delivered, 2 bounced) $at_mx2, mx3 (4 bounced) $at_mx3"
    [ "$at_mx2" -gt "$at_mx3" ] || it_fail "$at_mx2 at mx2 is not above $at_mx3 at mx3" || return 1
    API_KEY=$key http POST /v1/verify '{"email":"tina@ca.feedback.test"}'
    expect_status 200 && expect_json .score_basis calibrated && expect_json .score "$at_mx2" || return 1
    API_KEY=$key http POST /v1/verify '{"email":"uma@ca2.feedback.test"}'
    expect_status 200 && expect_json .reason catch_all && expect_json .score_basis calibrated &&
        expect_json .score "$at_mx3" && expect_json .catch_all_verdict avoid
}
t_case "calibration per mail host: two catch-all hosts of one provider, one delivering and one bouncing, give different calibrated scores, each its host's counts shrunk towards the provider's (counts per host only)" t_calibration_hosts

t_calibration_counts_only() {
    local before
    expect_eq "columns" "provider classification delivered bounced window_days updated_at" \
        "$(it_sql "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION SEPARATOR ' ') FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'calibration'")" || return 1
    expect_eq "rows with an address, a hash or a provider no result has" 0 \
        "$(it_sql "SELECT COUNT(*) FROM calibration WHERE provider LIKE '%@%' OR provider REGEXP '[0-9a-f]{32}' OR provider NOT IN (SELECT provider FROM job_emails WHERE provider IS NOT NULL) OR window_days <> 90")" || return 1
    # svc-worker's housekeeping writes the same counts when the table is stale
    before=$(it_sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', provider, classification, delivered, bounced) ORDER BY provider, classification) FROM calibration")
    it_sql "DELETE FROM calibration"
    it_worker_once || { it_fail "svc-worker --once"; return 1; }
    expect_eq "counts written by housekeeping" "$before" \
        "$(it_sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', provider, classification, delivered, bounced) ORDER BY provider, classification) FROM calibration")"
}
t_case "the calibration table holds counts only (no address, hash or account); svc-worker's housekeeping rewrites it" t_calibration_counts_only

t_single() {
    local acc key before t
    acc=$(it_account admin 10); key=$(it_key "$acc" '*')
    API_KEY=$key http POST /v1/verify '{"email":"User@good.feedback.test"}'
    expect_status 200 && expect_json .status deliverable || return 1
    # kept as the keyed hash only, with the job retention (90 days here)
    expect_eq "kept" "1 valid feedback.test mx1.feedback.test 90" \
        "$(it_sql "SELECT CONCAT_WS(' ', COUNT(*), MAX(classification), MAX(provider), MAX(mx_host), MAX(DATEDIFF(expires_at, verified_at))) FROM single_results WHERE account_id = '$acc' AND addr_hash REGEXP '^[0-9a-f]{32}\$'")" || return 1
    expect_eq "addresses in clear" 0 "$(it_sql "SELECT COUNT(*) FROM single_results WHERE CONCAT_WS(' ', addr_hash, provider, mx_host) LIKE '%@%'")" || return 1
    before=$(it_sql "SELECT COALESCE(SUM(delivered), 0) FROM calibration WHERE provider = 'feedback.test' AND classification = 'valid'")
    t=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    API_KEY=$key http POST /v1/feedback "$(jq -cn --arg t "$t" '{events: [{email: "user@good.feedback.test", outcome: "delivered", occurred_at: $t}]}')"
    expect_status 200 && expect_json .accepted 1 || return 1
    API_KEY=$key http GET /v1/reports/accuracy
    expect_status 200 && expect_json .total.verified 1 && expect_json .total.delivered 1 &&
        expect_json .by_classification.valid.delivered 1 && expect_json '.by_provider["feedback.test"].delivered' 1 || return 1
    out=$(svcadm calibration update) || { it_fail "svcadm calibration update: $out"; return 1; }
    expect_eq "calibration counts the single verification" "$((before + 1))" \
        "$(it_sql "SELECT delivered FROM calibration WHERE provider = 'feedback.test' AND classification = 'valid'")" || return 1
    # past its retention, svc-worker's housekeeping deletes it
    it_sql "UPDATE single_results SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE account_id = '$acc'"
    it_worker_once || { it_fail "svc-worker --once"; return 1; }
    expect_eq "kept after its retention" 0 "$(it_sql "SELECT COUNT(*) FROM single_results WHERE account_id = '$acc'")" || return 1
    API_KEY=$key http GET /v1/reports/accuracy
    expect_status 200 && expect_json .total.verified 0 || return 1
    # and with its account
    API_KEY=$key http POST /v1/verify '{"email":"ok@good.feedback.test"}'
    expect_status 200 && expect_eq "kept" 1 "$(it_sql "SELECT COUNT(*) FROM single_results WHERE account_id = '$acc'")" || return 1
    # a complaint: the address goes on the account's complainer list
    API_KEY=$key http POST /v1/feedback "$(jq -cn --arg t "$t" '{events: [{email: "ok@good.feedback.test", outcome: "complaint", occurred_at: $t}]}')"
    expect_status 200 && expect_json .accepted 1 || return 1
    expect_eq "outcomes and complainers kept" "2 1" "$(it_sql "SELECT (SELECT COUNT(*) FROM feedback_outcomes WHERE account_id = '$acc'),
        (SELECT COUNT(*) FROM account_complainers WHERE account_id = '$acc')" | tr '\t' ' ')" || return 1
    out=$(svcadm account erase "$acc") || { it_fail "svcadm account erase: $out"; return 1; }
    expect_eq "single results, outcomes and complainers kept after svcadm account erase" "0 0 0" \
        "$(it_sql "SELECT (SELECT COUNT(*) FROM single_results WHERE account_id = '$acc'),
        (SELECT COUNT(*) FROM feedback_outcomes WHERE account_id = '$acc'),
        (SELECT COUNT(*) FROM account_complainers WHERE account_id = '$acc')" | tr '\t' ' ')"
}
t_case "a single verification (POST /v1/verify) is kept as a keyed hash until its retention (or its account's erasure): its outcome counts in the report and the calibration" t_single

# single_verdict WHAT KEY WANT: POST /v1/verify of ADDR with KEY answers WANT
# ("status reason sub_status score cached")
single_verdict() {
    API_KEY=$2 http POST /v1/verify "{\"email\":\"$ADDR\"}"
    expect_status 200 || return 1
    expect_eq "$1" "$3" "$(json '"\(.status) \(.reason) \(.sub_status) \(.score) \(.cached)"')"
}
# bulk_verdicts WHAT KEY WANT: a bulk job of ADDR and ok@ with KEY gives
# WANT ("email classification reason, ...")
bulk_verdicts() {
    local id
    API_KEY=$2 http POST /v1/verify/bulk "{\"emails\":[\"$ADDR\",\"ok@good.feedback.test\"]}"
    expect_status 202 || return 1
    id=$(json .job_id)
    it_job_wait "$id" completed || return 1
    API_KEY=$2 http GET "/v1/jobs/$id/results"
    expect_status 200 || return 1
    expect_eq "$1" "$3" "$(json '[.results[] | "\(.email) \(.classification) \(.reason)"] | join(", ")')"
}
t_account_complainers() {
    local a b ka kb k
    ADDR=user7@good.feedback.test
    a=$(it_account admin 100); ka=$(it_key "$a" '*'); KA=$ka
    b=$(it_account admin 100); kb=$(it_key "$b" '*'); KB=$kb
    k=$(it_cache_keys "$ADDR"); K7=$k
    API_KEY=$ka http POST /v1/feedback "$(jq -cn --arg t "$NOW" '{events: [{email: "User7@Good.Feedback.test", outcome: "complaint", occurred_at: $t}]}')"
    expect_status 200 && expect_json .complainers_added 1 || return 1
    # A's verification, afresh: the known-complainer verdict, kept out of the shared cache
    single_verdict "A's, afresh" "$ka" "risky known_complainer known_complainer 66 false" || return 1
    expect_eq "cached verdicts after A's" 0 "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash IN ($k)")" || return 1
    # B's, afresh: deliverable, and cached
    single_verdict "B's, afresh" "$kb" "deliverable accepted_email null 92 false" || return 1
    expect_eq "cached verdicts after B's" "1 1" "$(it_sql "SELECT COUNT(*), SUM(result LIKE '%\"accepted\"%') FROM verdict_cache WHERE address_hash IN ($k)" | tr '\t' ' ')" || return 1
    # the same cached verdict: turned by A's list, as it is for B
    single_verdict "A's, a cache hit" "$ka" "risky known_complainer known_complainer 66 true" || return 1
    single_verdict "B's, a cache hit" "$kb" "deliverable accepted_email null 92 true" || return 1
    # A's bulk job: the chunk's cache hit turned, then (cache emptied) svc-worker's own verdict
    bulk_verdicts "A's job, a cache hit" "$ka" "$ADDR risky known_complainer, ok@good.feedback.test valid accepted_email" || return 1
    it_sql "DELETE FROM verdict_cache WHERE address_hash IN ($k)"
    bulk_verdicts "A's job, afresh" "$ka" "$ADDR risky known_complainer, ok@good.feedback.test valid accepted_email" || return 1
    expect_eq "cached verdicts after A's job" 0 "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash IN ($k)")" || return 1
    bulk_verdicts "B's job, afresh" "$kb" "$ADDR valid accepted_email, ok@good.feedback.test valid accepted_email" || return 1
    expect_eq "complainer verdicts in the shared cache" "1 0" "$(it_sql "SELECT COUNT(*), SUM(result LIKE '%complainer%') FROM verdict_cache WHERE address_hash IN ($k)" | tr '\t' ' ')"
}
t_case "an account's own complainer list: its complaint makes its single and bulk verdicts known_complainer (afresh or from the cache), another account's stay valid, and the shared cache never holds the complainer verdict" t_account_complainers

# preview_sample KEY: an upload of ADDR alone with a preview, its SMTP
# sample (the one row) verified
preview_sample() {
    local id
    printf 'email\n%s\n' "$ADDR" > "$IT_DIR/one.csv"
    API_KEY=$1 http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/one.csv" -F preview=true
    expect_status 202 || return 1
    id=$(json .job_id)
    it_job_wait "$id" awaiting_confirmation || return 1
    API_KEY=$1 http POST "/v1/verify/bulk/$id/preview" "" --data ""
    expect_status 200 && expect_json .preview.smtp_sample.size 1
}
t_account_complainers_preview() {
    it_sql "DELETE FROM verdict_cache WHERE address_hash IN ($K7)"
    preview_sample "$KA" || return 1
    expect_eq "cached verdicts after A's preview" 0 "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash IN ($K7)")" || return 1
    preview_sample "$KB" || return 1
    expect_eq "cached verdicts after B's preview" "1 0" "$(it_sql "SELECT COUNT(*), SUM(result LIKE '%complainer%') FROM verdict_cache WHERE address_hash IN ($K7)" | tr '\t' ' ')"
}
t_case "an upload preview's SMTP sample reads the account's own complainer list too: A's sampled verdict is not cached, B's is (valid)" t_account_complainers_preview

t_done
