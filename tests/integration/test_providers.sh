#!/bin/bash
# test_providers.sh: the provider of every result (issue 24 item 1) through
# the API and svc-worker, against test zones that use the providers' real
# MX host names on loopback (google.com, outlook.com and example.co.uk
# served by the test unbound; their hosts point at one fake SMTP server):
# a table id (google, microsoft365, outlook, an operator's local pattern),
# the registrable domain of any other MX host (mx.example.co.uk gives
# example.co.uk, not co.uk), the first MX by preference, null without MX
# and for the sandbox, the same after a verdict cache hit, the domain
# check, a bulk job's results, its CSV download (svc_provider) and the
# stored rows.
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
zone google.com 'aspmx.l.google.com. 300 IN A 127.0.0.51'
zone outlook.com 'x.mail.protection.outlook.com. 300 IN A 127.0.0.52' \
    'hotmail-com.olc.protection.outlook.com. 300 IN A 127.0.0.52'
zone example.co.uk 'mx 300 IN A 127.0.0.53'
zone prov.test \
    'gw 300 IN MX 10 aspmx.l.google.com.' \
    'm365 300 IN MX 10 x.mail.protection.outlook.com.' \
    'olc 300 IN MX 10 hotmail-com.olc.protection.outlook.com.' \
    'uk 300 IN MX 10 mx.example.co.uk.' \
    'pref 300 IN MX 20 aspmx.l.google.com.' 'pref 300 IN MX 10 mx.example.co.uk.' \
    'own 300 IN MX 10 mx.in.prov.test.' 'mx.in 300 IN A 127.0.0.53' \
    'nomx 300 IN TXT "no mail here"'
mail_env_dns "$Z/google.com.zone" "$Z/outlook.com.zone" "$Z/example.co.uk.zone" "$Z/prov.test.zone"
SMTP_PORT=0
fake 127.0.0.51 --also 127.0.0.52 --also 127.0.0.53
SMTP_PORT=$(cut -d' ' -f1 "$IT_DIR/fake-127.0.0.51")
mail_env_lists
# the operator's own pattern, and a shipped one removed
printf '%s\n' '*.in.prov.test inhouse' > "$IT_DIR/lists/local/mx_providers.txt"
mail_env_conf
it_conf_add "verify_time_budget_ms = 10000
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
t_case "POST /v1/verify: provider from the table (google, microsoft365, outlook, local pattern), else the MX's registrable domain (example.co.uk), null without MX" t_single

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

t_lists_check() {
    svcadm lists check > "$IT_DIR/lists-check.out" 2>&1
    grep -q "^providers: patterns=[1-9][0-9]* skipped=0 " "$IT_DIR/lists-check.out" ||
        it_fail "svcadm lists check: $(cat "$IT_DIR/lists-check.out")"
}
t_case "svcadm lists check counts the provider table (shipped and local, nothing skipped)" t_lists_check

t_done
