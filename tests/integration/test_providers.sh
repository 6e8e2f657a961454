#!/bin/bash
# test_providers.sh: the provider of every result (issue 24 item 1) and the
# providers' own reading rules (item 2) through the API and svc-worker,
# against test zones that use the providers' real MX host names on loopback
# (google.com, outlook.com, yahoodns.net, hotmail.com and example.co.uk
# served by the test unbound; their hosts point at one fake SMTP server):
# a table id (google, microsoft365, outlook, yahoo, an operator's local
# pattern), the registrable domain of any other MX host (mx.example.co.uk
# gives example.co.uk, not co.uk; mx1.hotmail.com gives hotmail.com once
# the operator's "!*.hotmail.com" drops the shipped pattern), the first MX
# by preference, null without MX and for the sandbox, the same after a
# verdict cache hit, the domain check, a bulk job's results, its CSV
# download (svc_provider) and the stored rows. Then the readings
# (contrib/lists/smtp_reply_rules.txt), each through POST /v1/verify and a
# bulk job: Gmail's 450 4.2.1 "receiving mail at a rate" is deliverable
# (no greylist retry), its 5.2.1 disabled and 4.2.2 full; Microsoft 365's
# 550 5.4.1 AS(201806281) is mailbox_not_found, though the operator's
# local rule reads 5.4.x as routing (unknown) for other hosts; a 250 on a
# Microsoft 365 or Yahoo MX is catch_all, never valid, both when the random
# probe got 250 and when it got no answer (a 4xx: only the accept_all line
# says so).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
[ -x "$top_builddir/src/worker/svc-worker" ] || it_skip "svc-worker is not built"
Z=$IT_DIR/zones
mkdir -p "$Z"
zone() {	# zone NAME RECORD...: NAME.zone in $Z
    local n=$1
    shift
    printf '%s\n' "\$ORIGIN $n." '$TTL 300' \
        "@ 3600 IN SOA ns.svc.test. hostmaster.svc.test. 1 3600 600 86400 120" \
        '@ 300 IN NS ns.svc.test.' "$@" > "$Z/$n.zone"
}
zone google.com 'aspmx.l.google.com. 300 IN A 127.0.0.51' 'alt1.aspmx.l.google.com. 300 IN A 127.0.0.52'
zone outlook.com 'x.mail.protection.outlook.com. 300 IN A 127.0.0.52' \
    'hotmail-com.olc.protection.outlook.com. 300 IN A 127.0.0.52'
zone yahoodns.net 'mta5.am0.yahoodns.net. 300 IN A 127.0.0.54'
zone hotmail.com 'mx1.hotmail.com. 300 IN A 127.0.0.53'
zone example.co.uk 'mx 300 IN A 127.0.0.53'
zone prov.test \
    'gw 300 IN MX 10 aspmx.l.google.com.' 'gw2 300 IN MX 10 alt1.aspmx.l.google.com.' \
    'z 300 IN MX 10 mx.z.prov.test.' 'mx.z 300 IN A 127.0.0.51' \
    'm365 300 IN MX 10 x.mail.protection.outlook.com.' \
    'olc 300 IN MX 10 hotmail-com.olc.protection.outlook.com.' \
    'uk 300 IN MX 10 mx.example.co.uk.' \
    'pref 300 IN MX 20 aspmx.l.google.com.' 'pref 300 IN MX 10 mx.example.co.uk.' \
    'own 300 IN MX 10 mx.in.prov.test.' 'mx.in 300 IN A 127.0.0.53' \
    'hot 300 IN MX 10 mx1.hotmail.com.' \
    'm365all 300 IN MX 10 x.mail.protection.outlook.com.' \
    'm365defer 300 IN MX 10 x.mail.protection.outlook.com.' \
    'yahoo 300 IN MX 10 mta5.am0.yahoodns.net.' \
    'yahoodefer 300 IN MX 10 mta5.am0.yahoodns.net.' \
    'www.m365all 300 IN A 127.0.0.80' 'www.m365defer 300 IN A 127.0.0.80' \
    'www.yahoo 300 IN A 127.0.0.80' 'www.yahoodefer 300 IN A 127.0.0.80' \
    'nomx 300 IN TXT "no mail here"'
mail_env_dns "$Z/google.com.zone" "$Z/outlook.com.zone" "$Z/yahoodns.net.zone" \
    "$Z/hotmail.com.zone" "$Z/example.co.uk.zone" "$Z/prov.test.zone"
SMTP_PORT=0
# *all.prov.test and yahoo.prov.test take any address (the probe too);
# *defer.prov.test answer a 4xx to an unknown one (the probe gets no answer);
# all four have a web site (www), so that a catch-all is no pristine trap
fake 127.0.0.51 --also 127.0.0.52 --also 127.0.0.53 --also 127.0.0.54 \
    'catchall_domains=(m365all|yahoo)\.prov\.test' \
    'defer_domains=(m365defer|yahoodefer)\.prov\.test'
SMTP_PORT=$(cut -d' ' -f1 "$IT_DIR/fake-127.0.0.51")
mail_env_lists
# the operator's own pattern, and a shipped one removed
printf '%s\n' '*.in.prov.test inhouse' '!*.hotmail.com' > "$IT_DIR/lists/local/mx_providers.txt"
# an operator who reads 5.4.x as routing (RFC 3463), nothing about the
# mailbox: on a Microsoft 365 MX the provider's own rule still wins
# and a rule of its own for the provider prov.test (mx.z.prov.test's
# registrable domain): there a 5.1.1 means the account is disabled
printf '%s\n' 'reply * 5xx 5.4.* unknown' 'reply prov.test 5xx 5.1.1 disabled' \
    > "$IT_DIR/lists/local/smtp_reply_rules.txt"
mail_env_conf
it_conf_add "verify_time_budget_ms = 10000
greylist_retry_ms = 100
worker_greylist_delay = 1
worker_greylist_retries = 1
worker_poll_interval = 1"
it_stack_start

ACC=$(it_account admin 1000)
API_KEY=$(it_key "$ACC" '*')

verify() { http POST /v1/verify "$(jq -cn --arg e "$1" '{email: $e}')"; }

# address:provider (null: none), in input order
CASES="user@gw.prov.test:google
user@m365.prov.test:microsoft365
user@olc.prov.test:outlook
user@uk.prov.test:example.co.uk
user@pref.prov.test:example.co.uk
user@own.prov.test:inhouse
user@hot.prov.test:hotmail.com
user@nomx.prov.test:null
not an email:null"

t_single() {
    local c e p
    while IFS= read -r c; do
        e=${c%:*} p=${c##*:}
        verify "$e"
        expect_status 200 && expect_json .provider "$p" || return 1
        case $p in null) ;; *) expect_json .status deliverable || return 1 ;; esac
    done <<< "$CASES"
}
t_case "POST /v1/verify: provider from the table (google, microsoft365, outlook, local pattern), else the MX's registrable domain (example.co.uk; hotmail.com, its shipped pattern dropped by a local !PATTERN), null without MX" t_single

t_first_mx() {
    verify user@pref.prov.test
    expect_json .mx[0].host mx.example.co.uk && expect_json .mx[1].host aspmx.l.google.com &&
        expect_json .provider example.co.uk
}
t_case "the provider is the first MX host's by preference" t_first_mx

t_cached() {
    verify user@gw.prov.test
    expect_json .cached true && expect_json .provider google
}
t_case "a verdict cache hit keeps the provider" t_cached

t_sandbox() {
    verify accepted_email@sandbox.svc.example
    expect_status 200 && expect_json .status deliverable && expect_json .provider null
}
t_case "a sandbox address has no provider (null)" t_sandbox

t_domain_check() {
    http POST /v1/domain/check '{"domain":"m365.prov.test"}'
    expect_status 200 && expect_json .provider microsoft365 || return 1
    http POST /v1/domain/check '{"domain":"uk.prov.test"}'
    expect_status 200 && expect_json .provider example.co.uk || return 1
    http POST /v1/domain/check '{"domain":"nomx.prov.test"}'
    expect_status 200 && expect_json .provider unknown && expect_json .has_valid_mx false
}
t_case "domain check: the same table and registrable domain; unknown without MX" t_domain_check

csv_col() {	# csv_col FILE COLUMN: one column of a CSV file, a value a line
    python3 -c 'import csv,sys
for row in csv.DictReader(open(sys.argv[1], newline="")): print(row[sys.argv[2]])' "$1" "$2"
}

t_bulk() {
    local body want got
    # fresh verdicts, not the cache's
    it_sql "DELETE FROM verdict_cache"
    body=$(echo "$CASES" | cut -d: -f1 | jq -R . | jq -sc '{name: "providers", emails: .}')
    http POST /v1/verify/bulk "$body"; expect_status 202 || return 1
    JOB=$(json .job_id)
    it_job_wait "$JOB" completed || return 1
    http GET "/v1/jobs/$JOB/results?limit=100"
    want=$(echo "$CASES" | tr '\n' ' ')
    got=$(json '.results[] | "\(.email):\(.provider)"' | tr '\n' ' ')
    expect_eq "results email:provider" "$want" "$got" || return 1
    want=$(echo "$CASES" | sed 's/.*://; s/^null$/NULL/' | tr '\n' ' ')
    got=$(it_sql "SELECT IFNULL(provider, 'NULL') FROM job_emails WHERE job_id = '$JOB' ORDER BY seq" | tr '\n' ' ')
    expect_eq "stored job_emails.provider" "$want" "$got"
}
t_case "a bulk job's results carry each row's provider (stored in job_emails.provider)" t_bulk

t_download() {
    curl -s -H "Authorization: Bearer $API_KEY" -o "$IT_DIR/all.csv" "$BASE_URL/v1/jobs/$JOB/download?format=csv"
    expect_eq "CSV header" "email,svc_status,svc_classification,svc_sub_status,svc_reason,svc_score,svc_free,svc_role,svc_disposable,svc_accept_all,svc_catch_all_verdict,svc_verified_at,svc_provider,svc_score_basis" \
        "$(head -n 1 "$IT_DIR/all.csv" | tr -d '\r')" || return 1
    expect_eq "svc_provider column" "$(echo "$CASES" | sed 's/.*://; s/^null$//')" "$(csv_col "$IT_DIR/all.csv" svc_provider)"
}
t_case "the download has svc_provider after svc_verified_at (empty without MX)" t_download

# The providers' readings: "address provider status reason sub_status
# classification", the same through POST /v1/verify and a bulk job. Each
# fails without its rule: Gmail's 4.2.1 line (else unknown / greylisted,
# after a retry), Microsoft 365's 5.4.1 line (else the local 5.4.* rule's
# unknown, as on the other host), the accept_all line for the *defer
# domains (else deliverable). Gmail's 5.2.1 and 4.2.2 are read alike by
# the generic rules (their enhanced codes, then their texts).
READINGS="gmailbusy@gw.prov.test google deliverable accepted_email null valid
gmaildisabled@gw.prov.test google undeliverable account_disabled account_disabled invalid
gmailfull@gw.prov.test google risky mailbox_full mailbox_full risky
officeunknown@m365.prov.test microsoft365 undeliverable rejected_email mailbox_not_found invalid
officeunknown@uk.prov.test example.co.uk unknown unknown null unknown
user@m365all.prov.test microsoft365 unknown catch_all catch_all catch_all
user@m365defer.prov.test microsoft365 unknown catch_all catch_all catch_all
user@yahoo.prov.test yahoo unknown catch_all catch_all catch_all
user@yahoodefer.prov.test yahoo unknown catch_all catch_all catch_all"

fake_sessions() { fake_ctl 127.0.0.51 stats | sed -n 's/.*sessions=\([0-9]*\).*/\1/p'; }

# reading REGEX: POST /v1/verify of the READINGS rows whose address REGEX
# matches whole
reading() {
    local e p st r sub c
    while read -r e p st r sub c; do
        verify "$e"
        expect_status 200 && expect_json .provider "$p" && expect_json .status "$st" &&
            expect_json .reason "$r" && expect_json .sub_status "$sub" || return 1
    done < <(printf '%s\n' "$READINGS" | grep -E "^($1) ")
}

t_gmail_busy() {
    local before
    before=$(fake_sessions)
    reading 'gmailbusy@.*' || return 1
    expect_json .smtp.code 450 && expect_json .smtp.enhanced_code 4.2.1 || return 1
    # the mailbox exists: no greylist retry (a second session)
    expect_eq "sessions for gmailbusy" 1 "$(($(fake_sessions) - before))"
}
t_case "Gmail MX 450 4.2.1 receiving mail at a rate: deliverable accepted_email, provider google, one session (no greylist retry)" t_gmail_busy
t_case "Gmail MX 550 5.2.1 disabled, 452 4.2.2 over quota: account_disabled, mailbox_full" \
    reading '(gmaildisabled|gmailfull)@.*'
t_case "Microsoft 365 MX 550 5.4.1 Access denied AS(201806281): undeliverable rejected_email mailbox_not_found, over a local generic 5.4.* = unknown (which the same reply from another host gets)" \
    reading 'officeunknown@.*'
t_case "Microsoft 365 MX: 250 to the address and the probe, or the probe unanswered (4xx): catch_all, never deliverable" \
    reading 'user@m365(all|defer)\.prov\.test'
t_case "Yahoo MX: 250 to every RCPT, or the probe unanswered: catch_all, never deliverable" \
    reading 'user@yahoo(defer)?\.prov\.test'

t_readings_bulk() {
    local body want got
    # fresh verdicts and catch-all probes, not the single path's
    it_sql "DELETE FROM verdict_cache; DELETE FROM domain_facts"
    body=$(printf '%s\n' "$READINGS" | cut -d' ' -f1 | jq -R . | jq -sc '{name: "readings", emails: .}')
    http POST /v1/verify/bulk "$body"; expect_status 202 || return 1
    JOB2=$(json .job_id)
    it_job_wait "$JOB2" completed || return 1
    http GET "/v1/jobs/$JOB2/results?limit=100"
    want=$(printf '%s\n' "$READINGS" | tr '\n' ';')
    got=$(json '.results[] | "\(.email) \(.provider) \(.status) \(.reason) \(.sub_status) \(.classification)"' | tr '\n' ';')
    expect_eq "bulk results (email provider status reason sub_status classification)" "$want" "$got"
}
t_case "a bulk job through svc-worker reads the same: Gmail 4.2.1 valid, 5.2.1 and 4.2.2, M365 5.4.1 invalid (elsewhere unknown), M365 and Yahoo accept-all catch_all" t_readings_bulk

t_google_one_pair() {
    local body
    # two of Google's MX hosts (aspmx.l and alt1.aspmx.l) share the
    # provider's pacing pair: one row, "google", not one per host nor the
    # default's pattern (*.google.com)
    it_sql "DELETE FROM pacing_pairs"
    body=$(printf '%s\n' user7@gw.prov.test user8@gw2.prov.test | jq -R . | jq -sc '{name: "google-pair", emails: .}')
    http POST /v1/verify/bulk "$body"; expect_status 202 || return 1
    it_job_wait "$(json .job_id)" completed || return 1
    grep -q "event=smtp_session domain=gw2.prov.test host=alt1.aspmx.l.google.com " "$IT_DIR/log/svc.log" ||
        { it_fail "no session to alt1.aspmx.l.google.com: the case proves nothing"; return 1; }
    expect_eq "pacing pairs of Google's hosts" "google direct" \
        "$(it_sql "SELECT pair, egress FROM pacing_pairs" | tr '\t' ' ' | tr '\n' ';' | sed 's/;$//')"
}
t_case "Google's MX hosts share one pacing pair, the provider's (rows of pacing_pairs after a job at two of them)" t_google_one_pair

t_reuse_reads_by_provider() {
    local body got
    # gw.prov.test (MX aspmx.l.google.com) and z.prov.test (MX
    # mx.z.prov.test, provider prov.test) are one server by address: with
    # one session at a time to it, the transactions of both domains follow
    # one another in one session, and each is read by its own domain's
    # provider (prov.test's rule: 5.1.1 is disabled; google's: not found).
    # Both MX answers are in the shared DNS cache first (a single
    # verification each), so that the worker has both domains' transactions
    # queued at once, whichever DNS answer would have come first
    verify unknown9@gw.prov.test; expect_status 200 || return 1
    verify unknown9@z.prov.test; expect_status 200 || return 1
    expect_eq "MX answers cached" 2 "$(it_sql "SELECT COUNT(*) FROM dns_cache WHERE domain IN ('gw.prov.test', 'z.prov.test')")" || return 1
    it_sql "DELETE FROM verdict_cache; DELETE FROM domain_facts"
    fake_ctl 127.0.0.51 reset > /dev/null
    fake_set 127.0.0.51 'catchall_domains=(m365all|yahoo)\.prov\.test' 'defer_domains=(m365defer|yahoodefer)\.prov\.test'
    cp "$SVC_CONF" "$IT_DIR/svc.conf.keep"
    printf '%s\n' 'worker_domain_concurrency = 1' 'worker_domain_concurrency_initial = 1' 'worker_rcpts_per_session = 2' >> "$SVC_CONF"
    body=$(for i in 1 2 3 4; do echo "unknown$i@gw.prov.test"; echo "unknown$i@z.prov.test"; done |
        jq -R . | jq -sc '{name: "reuse-providers", emails: .}')
    http POST /v1/verify/bulk "$body"; expect_status 202 || { cp "$IT_DIR/svc.conf.keep" "$SVC_CONF"; return 1; }
    it_job_wait "$(json .job_id)" completed
    local rc=$?
    cp "$IT_DIR/svc.conf.keep" "$SVC_CONF"
    [ $rc = 0 ] || return 1
    it_log "gw and z at one server: $(fake_ctl 127.0.0.51 stats)"
    expect_eq "sessions for both domains (transactions following one another)" 1 "$(fake_sessions)" || return 1
    http GET "/v1/jobs/$(json .job_id)/results?limit=100"
    got=$(json '.results[] | "\(.email | split("@")[1]) \(.provider) \(.reason)"' | sort | uniq -c | awk '{print $2, $3, $4, $1}' | paste -sd,)
    expect_eq "readings by domain (domain provider reason count)" \
        "gw.prov.test google rejected_email 4,z.prov.test prov.test account_disabled 4" "$got"
}
t_case "a session that goes on to another domain of the same server reads its replies by that domain's provider (google's and an operator's prov.test rule)" t_reuse_reads_by_provider

t_lists_check() {
    svcadm lists check > "$IT_DIR/lists-check.out" 2>&1
    grep -q "^providers: patterns=[1-9][0-9]* skipped=0 " "$IT_DIR/lists-check.out" ||
        it_fail "svcadm lists check: $(cat "$IT_DIR/lists-check.out")"
}
t_case "svcadm lists check counts the provider table (shipped and local, nothing skipped)" t_lists_check

t_done
