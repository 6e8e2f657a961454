#!/bin/bash
# test_dashboard_manage.sh: the dashboard's webhooks and suppressions pages
# (src/www/js/webhooks.js, suppressions.js; issue 27) in a real browser
# against the real stack: Debian's chromium, headless, driven by
# puppeteer-core through tests/integration/dashboard/manage.js (its steps
# are this script's cases). A webhook made through the page to a real
# HTTPS receiver on loopback (tests/integration/webhook_receiver.py) and
# delivered by a running svc-worker: its secret shown once and what signs
# the receiver's deliveries; a test event received and shown in the
# page's delivery log; the secret rotated after a confirmation (both sign
# for 24 h, the old one no more after); jobs' job.completed events filling
# the log past a page; the hourly test limit's 429 said
# next to the button; deleted after a confirmation (the API agrees). The
# suppression list: one entry added (and a bad one refused in words), a
# file imported (the API's counts; a file with a bad line refused, naming
# it, nothing imported), paging, search, an entry removed after a
# confirmation, with the keyboard. State changes without the CSRF token
# refused. axe-core on every page, no console errors, a phone-sized
# screen, screenshots in tests/integration/test_dashboard_manage.shots/.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/integration/outbound.sh"
. "$top_srcdir/tests/integration/dashboard_node.sh"
it_require node npm flock mariadb
CHROMIUM=${SVC_TEST_CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || it_skip "$CHROMIUM is not installed (run contrib/install-deps)"
dash_node_modules || { cat "$IT_DIR/npm.log"; it_skip "npm ci of tests/integration/dashboard failed (is the npm registry reachable?)"; }

# the receiver: webhook_receiver.py on 127.0.0.1, each request a line of
# IT_DIR/received
outbound_certs
RECEIVED=$IT_DIR/received
outbound_server receiver webhook_receiver.py --log "$RECEIVED"
RPORT=$OUTBOUND_PORT

# (webhook_test_limit: the steps send 3 tests, the 4th is refused)
it_conf_add "allow_private_urls = yes
allow_url_ports = $RPORT
ca_file = $IT_DIR/tls/ca.pem
worker_poll_interval = 1
webhook_test_limit = 3
account_suppressions_max = 1000"
it_stack_start
# svc-worker sends the deliveries as it would in production
daemon

EMAIL=manage$RANDOM@example.com
PW='a long dashboard password'
ACC=$(svcadm account create --email "$EMAIL" --tier pro --credits 100)
printf '%s\n' "$PW" | svcadm account set-password "$ACC"
API_KEY=$(it_key "$ACC" '*')
SANDBOX=sandbox.$(svcadm config | sed -n 's/^service_domain *= *//p')

SHOTS=$top_builddir/tests/integration/test_dashboard_manage.shots
rm -rf "$SHOTS"

mkdir -p "$IT_DIR/home"
(cd "$IT_DIR" && HOME=$IT_DIR/home DASH_NODE_DIR=$NODE_DIR CHROMIUM=$CHROMIUM BASE_URL=$BASE_URL DASH_EMAIL=$EMAIL \
    DASH_PASSWORD=$PW DASH_KEY=$API_KEY DASH_SHOTS=$SHOTS DASH_TZ=Pacific/Chatham DASH_PROFILE=$IT_DIR/chromium-profile \
    DASH_RECEIVER=https://127.0.0.1:$RPORT DASH_RECEIVED=$RECEIVED DASH_DB_SOCKET=$IT_DIR/mariadb/mariadb.sock \
    DASH_FILES=$IT_DIR DASH_SANDBOX=$SANDBOX timeout 600 nice node "$NODE_SRC/manage.js") > "$IT_DIR/manage.out" 2> "$IT_DIR/manage.err" || :
browser_cases "$IT_DIR/manage.out"
browser_ran manage.js "$IT_DIR/manage.out" "$IT_DIR/manage.err" 'every page fits a phone'

t_shots() {
    local p
    for p in webhooks-empty webhook-refused webhook-new-secret webhooks webhook-log webhook-rotate-confirm \
            webhook-rotated webhook-log-jobs webhook-test-refused webhook-delete-confirm webhook-not-found suppressions-empty \
            suppressions-refused suppressions-imported suppressions-import-refused suppressions-page-2 \
            suppressions-search suppression-delete-confirm suppressions; do
        [ -s "$SHOTS/$p.png" ] && [ -s "$SHOTS/$p-phone.png" ] || it_fail "no screenshot of $p"
    done
}
t_case "a screenshot of every page (desktop and phone) kept in $(basename "$SHOTS")/" t_shots

stop_daemon
t_done
