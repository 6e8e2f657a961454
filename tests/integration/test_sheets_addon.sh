#!/bin/bash
# test_sheets_addon.sh: the spreadsheet add-on (contrib/sheets-addon)
# against the real service. Starts MariaDB, lighttpd with svc-api and
# unbound with the test zones (for a typo's did_you_mean; every other
# address is at the sandbox domain, so no SMTP is needed), then runs each
# file of contrib/sheets-addon/test with "node --test": the .gs files run in
# node:vm with fakes of the Apps Script services whose UrlFetchApp makes
# real HTTP requests to this svc-api. The tests create their own accounts
# and keys with svcadm, run svc-worker --once for bulk jobs, and read the
# server's request log and ledger (a job's failure is set in SQL). The
# rate-limit window is 3 s here (rate_window_seconds) so that a 429's
# Retry-After is short.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require node
WORKER=$top_builddir/src/worker/svc-worker
[ -x "$WORKER" ] || it_skip "$WORKER is not built"

mail_env_dns
mail_env_lists
SMTP_PORT=$(stack_free_port)	# nothing listens there: no address here needs SMTP
mail_env_conf
it_conf_add "rate_window_seconds = 3
worker_poll_interval = 1"
IT_API_WORKERS=4
it_stack_start

export SVC_TEST_BASE_URL=$BASE_URL SVC_TEST_CONF=$SVC_CONF \
    SVC_TEST_SVCADM=$top_builddir/src/admin/svcadm SVC_TEST_WORKER=$WORKER \
    SVC_TEST_LOG=$IT_DIR/log/svc.log SVC_TEST_SERVICE_DOMAIN=svc.example \
    SVC_TEST_DB_SOCKET=$DB_SOCKET

# t_node FILE: node --test on one test file, its TAP output in the log
t_node() {
    (cd "$top_srcdir/contrib/sheets-addon/test" && node --test "$1") > "$IT_DIR/node.out" 2>&1
    local rc=$?
    sed 's/^/#   /' "$IT_DIR/node.out"
    [ "$rc" = 0 ] || it_fail "node --test $1 failed"
}

for f in "$top_srcdir"/contrib/sheets-addon/test/*.test.js; do
    t_case "node --test $(basename "$f")" t_node "$(basename "$f")"
done
t_done
