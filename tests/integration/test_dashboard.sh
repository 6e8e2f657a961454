#!/bin/bash
# test_dashboard.sh: the dashboard (src/www, issue 27) in a real browser
# against the real stack: Debian's chromium, headless, driven by
# puppeteer-core through tests/integration/dashboard/drive.js (its steps are
# this script's cases: sign-in refused, locked out, signed in with the
# keyboard, the overview's balance and its chart of the last 30 days'
# usage against the API's, a key made (its
# secret shown once, working with curl) and revoked (then refused), one
# address verified (the page against the API's answer), a state change
# without the CSRF token refused, the cookie out of JavaScript's reach,
# a CSV uploaded with preview (the page computing until svc-worker --once
# computed it), the preview's figures, bar and 95% ranges against the API's
# preview, confirm, live progress to completed, the results table (pages,
# a classification filter) against the API's, a filtered download byte for
# byte curl's, the accuracy report after feedback (its tables against the
# API's for the times chosen, a bad range refused), a dropped file's job cancelled after a confirmation, a
# second preview's Confirm refused (402) in words, a job seen mid-run (the
# fake SMTP server holding its sessions: 0 < processed < total, rate, ETA,
# no box moving between two updates) to completed, a list uploaded by its
# https:// address (a file server on loopback with the test's CA) to its
# preview, the jobs list and its status filter, another account's job not found,
# sign-out (the old cookie refused); axe-core on every page, no console
# errors, a phone-sized screen, screenshots of every page in
# tests/integration/test_dashboard.shots/). Then a short pass through
# Apache's snippet running the real svc-api (sign-in, overview, a key,
# sign-out, the same checks of every page), and a POST to preview and
# confirm without body nor Content-Length through it. Then curl: the headers of
# /app/ through lighttpd's snippet, Apache's (apache-svc.conf) and the
# shared host's .htaccess (fcgi-conf/htaccess).
# puppeteer-core and axe-core come from npm, as pinned in
# tests/integration/dashboard/package-lock.json, installed once per build
# tree into tests/integration/dashboard-node (npm ci; never a browser
# download).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/integration/outbound.sh"
it_require node npm flock apache2
CHROMIUM=${SVC_TEST_CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || it_skip "$CHROMIUM is not installed (run contrib/install-deps)"

# ---- puppeteer-core and axe-core, as the lock file says
. "$top_srcdir/tests/integration/dashboard_node.sh"
dash_node_modules || { cat "$IT_DIR/npm.log"; it_skip "npm ci of tests/integration/dashboard failed (is the npm registry reachable?)"; }

# the mail world of test_preview.sh: the list's SMTP-bound rows are
# refused by its Postfix; svc-worker runs --once, from drive.js
mail_env_start
# pristine.svc.test's fake server: drive.js holds its sessions to see a
# job mid-run, then releases them (its control port: DASH_FAKE_CTL)
fake 127.0.0.30
FAKE_CTL="127.0.0.30 $(cut -d' ' -f2 "$IT_DIR/fake-127.0.0.30")"
mail_env_lists
mail_env_conf
# a list the page uploads by its https:// address: file_server.py on
# loopback with the test CA's certificate (as test_source_url.sh), named
# by ALIAS (a literal loopback address stays refused: allow_private_urls
# is no; ALIAS resolves into allow_private_url_networks)
outbound_certs
mkdir -p "$IT_DIR/files"
{ echo email; for i in 1 2 3 4 5 6 7; do echo "url$i@nosuch.svc.test"; done; } > "$IT_DIR/files/url-list.csv"
outbound_server files file_server.py --dir "$IT_DIR/files" --log "$IT_DIR/served.log"
SOURCE_URL=https://$ALIAS:$OUTBOUND_PORT/files/url-list.csv?type=text/csv
it_conf_add "allow_url_ports = $OUTBOUND_PORT
allow_private_url_networks = 127.0.0.1/32
ca_file = $IT_DIR/tls/ca.pem"
it_conf_add "feedback_hash_key_file = $IT_DIR/feedback-hash-key
signin_attempts_max = 3
signin_address_attempts_max = 50
worker_poll_interval = 1
verify_time_budget_ms = 12000"
it_stack_start

EMAIL=dash$RANDOM@example.com
PW='a long dashboard password'
# 20 credits: 2 verifications, the list's 12, and even with all 5 of its
# SMTP-bound rows refunded fewer than the 12 a second upload of the list
# needs (its Confirm is refused: 402)
ACC=$(svcadm account create --email "$EMAIL" --tier pro --credits 20)
printf '%s\n' "$PW" | svcadm account set-password "$ACC"
LOCK_EMAIL=locked$RANDOM@example.com
LOCK_ACC=$(svcadm account create --email "$LOCK_EMAIL" --tier pro --credits 1)
printf '%s\n' 'the locked account password' | svcadm account set-password "$LOCK_ACC"
INVITE_EMAIL=invited$RANDOM@example.com
INVITE_ACC=$(svcadm account create --email "$INVITE_EMAIL" --tier free --credits 0)
INVITE=$(svcadm account invite "$INVITE_ACC")
API_KEY=$(it_key "$ACC" '*')
SANDBOX=sandbox.$(svcadm config | sed -n 's/^service_domain *= *//p')

# usage for the overview's chart, on days before today (the ledger's times
# moved): 5 charged 12 days ago and refunded 4 days ago (a job cancelled),
# 3 charged and refunded yesterday; the balance is 20 again
dash_usage() {
    local n=$1 i emails job
    emails=$(for i in $(seq 1 "$n"); do printf '"u%s-%s@nosuch.svc.test",' "$n" "$i"; done)
    job=$(curl -sS -H "Authorization: Bearer $API_KEY" -H 'Content-Type: application/json' \
        --data-binary "{\"emails\":[${emails%,}]}" "$BASE_URL/v1/verify/bulk" | jq -r .job_id)
    [ -n "$job" ] && [ "$job" != null ] || it_fail "a job for the usage chart was not made"
    [ "$(curl -sS -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $API_KEY" "$BASE_URL/v1/jobs/$job")" = 200 ] ||
        it_fail "the job for the usage chart was not cancelled"
    it_sql "UPDATE credit_ledger SET created_at = UTC_TIMESTAMP(3) - INTERVAL $2 DAY WHERE ref LIKE '%$job%' AND kind = 'charge'"
    it_sql "UPDATE credit_ledger SET created_at = UTC_TIMESTAMP(3) - INTERVAL $3 DAY WHERE ref LIKE '%$job%' AND kind = 'refund'"
}
dash_usage 5 12 4
dash_usage 3 1 1
[ "$(it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$ACC'")" = 20 ] || it_fail "the balance after the usage is not 20"

# the list uploaded through the page: 4 unknown mailboxes at mx.svc.test
# (refused by the MTA), a role address, 6 at a domain that does not exist,
# a disposable one, a line that is no address and a repeat: 13 rows, 12
# credits, two pages of results at 10 a page
CSV=$IT_DIR/dash-list.csv
{
    echo "email,source"
    for i in 1 2 3 4; do echo "nobody$i@mx.svc.test,web"; done
    echo "info@mx.svc.test,form"
    for i in 1 2 3 4 5 6; do echo "x$i@nosuch.svc.test,form"; done
    echo "z@throwaway.svc.test,form"
    echo "not an address,import"
    echo "NOBODY1@mx.svc.test,dup"
} > "$CSV"
# another account's job, whose id the page must not find
OTHER_KEY=$(it_key "$(it_account pro 10)" '*')
OTHER_JOB=$(curl -sS -H "Authorization: Bearer $OTHER_KEY" -F "file=@$CSV" -F preview=true \
    "$BASE_URL/v1/verify/bulk/upload" | jq -r .job_id)
[ -n "$OTHER_JOB" ] && [ "$OTHER_JOB" != null ] || it_fail "another account's upload failed"

SHOTS=$top_builddir/tests/integration/test_dashboard.shots
rm -rf "$SHOTS"

# ---- the browser: one run of drive.js, its lines become the cases
TZ_EMULATED=Pacific/Chatham
mkdir -p "$IT_DIR/home"
# (HOME: whatever the browser keeps for a user stays in IT_DIR)
(cd "$IT_DIR" && HOME=$IT_DIR/home DASH_NODE_DIR=$NODE_DIR CHROMIUM=$CHROMIUM BASE_URL=$BASE_URL DASH_EMAIL=$EMAIL \
    DASH_PASSWORD=$PW DASH_LOCK_EMAIL=$LOCK_EMAIL DASH_KEY=$API_KEY DASH_SANDBOX=$SANDBOX \
    DASH_SHOTS=$SHOTS DASH_TZ=$TZ_EMULATED DASH_PROFILE=$IT_DIR/chromium-profile \
    DASH_INVITE=$INVITE DASH_INVITE_EMAIL=$INVITE_EMAIL DASH_CSV=$CSV DASH_OTHER_JOB=$OTHER_JOB DASH_FAKE_CTL=$FAKE_CTL \
    DASH_SOURCE_URL=$SOURCE_URL DASH_SERVED=$IT_DIR/served.log \
    DASH_WORKER=$top_builddir/src/worker/svc-worker DASH_CONF=$SVC_CONF DASH_WORKER_LOG=$IT_DIR/log/worker-stderr.log \
    timeout 900 nice node "$NODE_SRC/drive.js") > "$IT_DIR/drive.out" 2> "$IT_DIR/drive.err" || :
browser_cases "$IT_DIR/drive.out"
browser_ran drive.js "$IT_DIR/drive.out" "$IT_DIR/drive.err" 'an invitation link'

# ---- a short pass through Apache's snippet (fcgi-conf/apache-svc.conf):
# mod_fcgid runs the real svc-api as www-data (its own readable copies of
# the program, the config and its key files, as test_stack.sh's
# t_apache_api), on the same database; drive.js with DASH_PASS=apache
# signs in, reads the overview, makes a key and signs out, with axe and
# console checks on every page, as an account of its own
APACHE_EMAIL=apache$RANDOM@example.com
APACHE_ACC=$(svcadm account create --email "$APACHE_EMAIL" --tier pro --credits 5)
printf '%s\n' "$PW" | svcadm account set-password "$APACHE_ACC"
APACHE_KEY=$(it_key "$APACHE_ACC" '*')
APACHE_PORT=$(stack_free_port)
APACHE_API=$IT_DIR/apache-api
mkdir -p "$APACHE_API/log"
install -m 0755 "$top_builddir/src/api/svc-api" "$APACHE_API/svc-api"
for f in mariadb/db-password cache_hash_key feedback-hash-key; do
    install -m 0600 -o www-data "$IT_DIR/$f" "$APACHE_API/$(basename "$f")"
done
sed -e "s|^db_password_file = .*|db_password_file = $APACHE_API/db-password|" \
    -e "s|^cache_hash_key_file = .*|cache_hash_key_file = $APACHE_API/cache_hash_key|" \
    -e "s|^feedback_hash_key_file = .*|feedback_hash_key_file = $APACHE_API/feedback-hash-key|" \
    -e "s|^log_file = .*|log_file = $APACHE_API/log/svc.log|" \
    -e "s|^base_url = .*|base_url = http://127.0.0.1:$APACHE_PORT|" "$SVC_CONF" > "$APACHE_API/svc.conf"
chown -R www-data "$APACHE_API/log" "$APACHE_API/svc.conf"
chmod 0600 "$APACHE_API/svc.conf"
# (the address's anonymous window, 5 requests a minute, which the pass
# behind lighttpd has just used up: emptied rather than waited out)
it_sql "DELETE FROM rate_counts WHERE bucket = 'ip:127.0.0.1'"
if stack_apache_start "$IT_DIR/apache-dash" "$APACHE_PORT" "$APACHE_API/svc-api" "$APACHE_API/svc.conf"; then
    (cd "$IT_DIR" && HOME=$IT_DIR/home DASH_PASS=apache DASH_NODE_DIR=$NODE_DIR CHROMIUM=$CHROMIUM \
        BASE_URL=http://127.0.0.1:$APACHE_PORT DASH_EMAIL=$APACHE_EMAIL DASH_PASSWORD=$PW DASH_KEY=$APACHE_KEY \
        DASH_SHOTS=$SHOTS DASH_TZ=$TZ_EMULATED DASH_PROFILE=$IT_DIR/chromium-profile-apache \
        timeout 300 nice node "$NODE_SRC/drive.js") > "$IT_DIR/drive-apache.out" 2> "$IT_DIR/drive-apache.err" || :
    APACHE_UP=1
else
    echo "not ok - through Apache: apache2 with svc-api did not start" > "$IT_DIR/drive-apache.out"
    APACHE_UP=
fi
browser_cases "$IT_DIR/drive-apache.out"

# POST .../preview and .../confirm take no body: with none and no
# Content-Length at all (curl -X POST) svc-api accepts them. lighttpd
# refuses any POST without Content-Length itself (411, before svc-api),
# whatever its configuration: the README says so.
# bodiless URL: status of a POST without body nor Content-Length
bodiless() {
    curl -sS -o "$IT_DIR/bodiless.json" -D "$IT_DIR/bodiless.head" -w '%{http_code}' -X POST \
        -H "Authorization: Bearer $APACHE_KEY" "$1"
}
t_bodiless_post() {
    local job a=http://127.0.0.1:$APACHE_PORT st
    [ -n "$APACHE_UP" ] || { it_fail "Apache did not start"; return 1; }
    printf 'email\nb1@nosuch.svc.test\nb2@nosuch.svc.test\n' > "$IT_DIR/bodiless.csv"
    job=$(curl -sS -H "Authorization: Bearer $APACHE_KEY" -F "file=@$IT_DIR/bodiless.csv" -F preview=true \
        "$a/v1/verify/bulk/upload" | jq -r .job_id)
    [ -n "$job" ] && [ "$job" != null ] || { it_fail "the upload failed"; return 1; }
    it_job_wait "$job" awaiting_confirmation || return 1
    ! grep -qi '^content-length' < <(curl -sS -v -o /dev/null -X POST "$a/nothing" 2>&1 | grep '^> ') ||
        { it_fail "curl -X POST sends a Content-Length"; return 1; }
    st=$(bodiless "$a/v1/verify/bulk/$job/preview")
    expect_eq "preview through Apache, no body (status)" 200 "$st" || { cat "$IT_DIR/bodiless.json"; return 1; }
    expect_eq "its preview" "awaiting_confirmation 2" "$(jq -r '.status + " " + (.preview.total_emails | tostring)' "$IT_DIR/bodiless.json")" || return 1
    st=$(bodiless "$a/v1/verify/bulk/$job/confirm")
    expect_eq "confirm through Apache, no body (status)" 200 "$st" || { cat "$IT_DIR/bodiless.json"; return 1; }
    expect_eq "confirmed" "pending 2" "$(jq -r '.status + " " + (.credits_charged | tostring)' "$IT_DIR/bodiless.json")" || return 1
    expect_eq "the job" pending "$(it_sql "SELECT status FROM jobs WHERE id = '$job'")" || return 1
    # lighttpd: its own 411, svc-api never asked
    st=$(bodiless "$BASE_URL/v1/verify/bulk/$job/preview")
    expect_eq "preview through lighttpd, no Content-Length" 411 "$st"
    grep -qi '^server: lighttpd' "$IT_DIR/bodiless.head" || it_fail "the 411 is not lighttpd's: $(cat "$IT_DIR/bodiless.head")"
}
t_case "POST /v1/verify/bulk/{id}/preview and /confirm with no body and no Content-Length (curl -X POST): accepted through Apache (200, the preview; 200, charged); lighttpd refuses such a POST itself (411)" t_bodiless_post
[ -z "$APACHE_UP" ] || stack_apache_stop "$IT_DIR/apache-dash"
t_browser_apache_ran() {
    grep -q '^ok - through Apache: sign-out' "$IT_DIR/drive-apache.out" && [ ! -s "$IT_DIR/drive-apache.err" ] && return 0
    it_fail "drive.js through Apache did not run to its end"
    sed 's/^/#   /' "$IT_DIR/drive-apache.err" | head -n 30
    return 1
}
t_case "browser: drive.js through Apache ran every step to the end" t_browser_apache_ran

t_shots() {
    local p
    for p in signin signin-refused signin-locked overview overview-usage keys-refused keys-new-secret keys-revoke-confirm keys \
            verify-result upload-refused preview-computing preview job-progress job-results accuracy-refused accuracy job-cancel-confirm \
            job-cancelled preview-402 job-mid-run preview-url jobs job-not-found signed-out invite invite-done \
            apache-signin apache-overview apache-keys apache-signed-out; do
        [ -s "$SHOTS/$p.png" ] && [ -s "$SHOTS/$p-phone.png" ] || it_fail "no screenshot of $p"
    done
}
t_case "a screenshot of every page (desktop and phone) kept in $(basename "$SHOTS")/" t_shots

# ---- the headers of the app's files, from the web server's snippet
# app_headers URL_BASE NAME: /app/ and its files with their types and headers
app_headers() {
    local base=$1 name=$2 p want
    for p in /app/ /app/js/app.js /app/app.css /app/index.html /app/invite; do
        BASE_URL=$base SVC_TEST_OPENAPI=0 API_KEY= http GET "$p" || return 1
        expect_status 200 || { it_fail "$name $p"; return 1; }
        header_value content-security-policy | grep -q "frame-ancestors 'none'" ||
            it_fail "$name $p: CSP $(header_value content-security-policy)"
        header_value content-security-policy | grep -q "script-src 'self'" ||
            it_fail "$name $p: CSP without script-src 'self'"
        ! header_value content-security-policy | grep -q "unsafe" || it_fail "$name $p: CSP allows unsafe"
        expect_eq "$name $p nosniff" nosniff "$(header_value x-content-type-options | tr -d ' ')"
        expect_eq "$name $p Referrer-Policy" no-referrer "$(header_value referrer-policy | tr -d ' ')"
        case $p in
        */|*.html|*/invite) want=text/html ;; *.js) want=text/javascript ;; *.css) want=text/css ;;
        esac
        case $(header_value content-type) in *"$want"*) ;; *) it_fail "$name $p: type $(header_value content-type)" ;; esac
    done
    BASE_URL=$base SVC_TEST_OPENAPI=0 API_KEY= http GET /app || return 1
    expect_status 301
    case $(header_value location) in */app/) ;; *) it_fail "$name /app: Location $(header_value location)" ;; esac
    BASE_URL=$base SVC_TEST_OPENAPI=0 API_KEY= http GET /app/Makefile.inc || return 1
    expect_status 404 || it_fail "$name: /app/Makefile.inc served"
    ! grep -q '<script>' "$top_srcdir/src/www/index.html" || it_fail "an inline script in index.html"
}
t_lighttpd_headers() {
    app_headers "$BASE_URL" lighttpd || return 1
    # the API is still the API (with a key: the address's anonymous
    # window of 5 requests a minute is for the browser's steps)
    http GET /v1/credits
    expect_status 200 && expect_jq '.balance | type == "number"'
}
t_case "lighttpd (fcgi-conf/lighttpd-svc.conf) serves /app/ with the CSP, nosniff, no-referrer and the right types; /v1 is still svc-api" t_lighttpd_headers

t_apache_headers() {
    local port
    it_require apache2
    port=$(stack_free_port) || return 1
    # Apache's children run as www-data: a FastCGI program they can run
    install -m 0755 "$top_builddir/tests/integration/fcgi_echo" "$IT_DIR/fcgi_echo" || return 1
    stack_apache_start "$IT_DIR/apache" "$port" "$IT_DIR/fcgi_echo" /etc/svc-test.conf || return 1
    app_headers "http://127.0.0.1:$port" Apache || return 1
    BASE_URL=http://127.0.0.1:$port SVC_TEST_OPENAPI=0 API_KEY= http GET /v1/credits || return 1
    expect_status 200
    printf '%s\n' "$HTTP_BODY" | grep -qx 'REQUEST_URI=/v1/credits' || it_fail "Apache: /v1 not the FastCGI program's"
    stack_apache_stop "$IT_DIR/apache"
}
t_case "Apache (fcgi-conf/apache-svc.conf) serves /app/ with the same headers and types" t_apache_headers

# the shared host's way (README, "Shared hosting"): the folder www copied
# as app/ beside the .htaccess of fcgi-conf/htaccess and svc-api.fcgi, in a
# document root that allows what the htaccess needs
t_htaccess_headers() {
    local port dir=$IT_DIR/apache-ht m
    it_require apache2
    for m in rewrite mime headers; do
        [ -f "$STACK_APACHE_MODULES/mod_$m.so" ] || it_skip "mod_$m not found"
    done
    port=$(stack_free_port) || return 1
    mkdir -p "$dir/htdocs" && chmod 0755 "$dir" || return 1
    install -m 0755 "$top_builddir/tests/integration/fcgi_echo" "$dir/htdocs/svc-api.fcgi" &&
        install -m 0644 "$top_srcdir/fcgi-conf/htaccess" "$dir/htdocs/.htaccess" &&
        install -m 0644 "$top_srcdir/fcgi-conf/svc-413.html" "$dir/htdocs/" || return 1
    # what make install puts in $(datadir)/svc/www, as the user copies it
    (cd "$top_srcdir/src/www" && find . -type f ! -name Makefile.inc -exec install -D -m 0644 {} "$dir/htdocs/app/{}" \;) || return 1
    cat > "$IT_DIR/htaccess-host.conf" <<EOF
LoadModule rewrite_module "$STACK_APACHE_MODULES/mod_rewrite.so"
LoadModule mime_module "$STACK_APACHE_MODULES/mod_mime.so"
TypesConfig /etc/mime.types
<Directory "$dir/htdocs">
    # (as shared_hosting.sh's host: the htaccess says -Indexes)
    AllowOverride FileInfo AuthConfig Options=ExecCGI,Indexes
    Options SymLinksIfOwnerMatch
</Directory>
EOF
    stack_apache_start "$dir" "$port" "$IT_DIR/fcgi_echo" /etc/svc-test.conf "$IT_DIR/htaccess-host.conf" || return 1
    app_headers "http://127.0.0.1:$port" "Apache (.htaccess)" || return 1
    BASE_URL=http://127.0.0.1:$port SVC_TEST_OPENAPI=0 API_KEY= http GET /v1/credits || return 1
    expect_status 200
    printf '%s\n' "$HTTP_BODY" | grep -qx 'REQUEST_URI=/v1/credits' || it_fail "Apache (.htaccess): /v1 not the FastCGI program's"
    BASE_URL=http://127.0.0.1:$port SVC_TEST_OPENAPI=0 API_KEY= http GET /svc-api.fcgi || return 1
    expect_status 404
    stack_apache_stop "$dir"
}
t_case "Apache with fcgi-conf/htaccess (shared hosting) serves app/ at /app/ with the same headers" t_htaccess_headers

t_done
