#!/bin/bash
# test_backup.sh: README "Backup": the database dumped as README says
# (mariadb-dump --single-transaction --routines, as the svc user, while
# svc-api serves) and restored into another database is one svcadm and
# svc-api accept as it was: schema version, ledger totals, keys, jobs and
# the rate limiter (a stored procedure). A dump without --routines is
# refused by svcadm status and leaves svc-api answering 500, which is why
# README names the option.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
it_require mariadb-dump
it_stack_start

ACC=$(it_account pro 500)
API_KEY=$(it_key "$ACC" '*' --sandbox)
http POST /v1/verify/bulk '{"emails":["accepted_email@sandbox.svc.example","x@sandbox.svc.example"]}'
expect_status 202 || { echo "Bail out! no job"; exit 1; }
JOB=$(json .job_id)

# dump NAME [OPTIONS...]: the svc database as the svc user, into NAME.sql
dump() {
    local name=$1
    shift
    mariadb-dump --no-defaults --socket="$DB_SOCKET" --user=svc \
        --password="$(cat "$IT_DIR/mariadb/db-password")" "$@" svc \
        > "$IT_DIR/$name.sql" 2> "$IT_DIR/$name.err"
}
# restore NAME DB: NAME.sql into a new database DB (as MariaDB's root, since
# the dump names svc@localhost as the definer of the procedure); writes
# IT_DIR/DB.conf, this test's svc.conf on DB
restore() {
    it_sql "CREATE DATABASE $2 CHARACTER SET utf8mb4; GRANT ALL ON $2.* TO 'svc'@'localhost'"
    stack_mariadb_sql "$IT_DIR/mariadb" "$2" < "$IT_DIR/$1.sql"
    sed "s|^db_name = .*|db_name = $2|" "$SVC_CONF" > "$IT_DIR/$2.conf"
}

t_restore() {
    local out
    dump full --single-transaction --routines --events || it_fail "mariadb-dump: $(cat "$IT_DIR/full.err")" || return 1
    restore full restored || return 1
    out=$("$top_builddir/src/admin/svcadm" -c "$IT_DIR/restored.conf" db version) || it_fail "db version: $out"
    expect_eq "restored schema" "12 (this build needs 12)" "$out"
    out=$("$top_builddir/src/admin/svcadm" -c "$IT_DIR/restored.conf" credits check "$ACC") || it_fail "credits check: $out"
    expect_eq "ledger of the restored database" ok "$out"
    "$top_builddir/src/admin/svcadm" -c "$IT_DIR/restored.conf" status --min-workers 0 > "$IT_DIR/restored.status" ||
        it_fail "svcadm status on the restored database: $(cat "$IT_DIR/restored.status")"
    # svc-api on the restored database: the same key, balance and job
    stack_lighttpd_stop "$IT_DIR/lighttpd"
    SVC_CONF=$IT_DIR/restored.conf it_api_start
    http GET /v1/credits
    expect_status 200 && expect_json .balance 500
    http GET "/v1/jobs/$JOB"
    expect_status 200 && expect_json .total_emails 2
    http POST /v1/verify/bulk '{"emails":["accepted_email@sandbox.svc.example"]}'
    expect_status 202
}
t_case "a dump (--single-transaction --routines) restored into another database: svcadm and svc-api take it as it was" t_restore

t_no_routines() {
    dump bare --single-transaction || it_fail "mariadb-dump: $(cat "$IT_DIR/bare.err")" || return 1
    restore bare bare_restored || return 1
    set +e
    "$top_builddir/src/admin/svcadm" -c "$IT_DIR/bare_restored.conf" status --min-workers 0 > "$IT_DIR/bare.status" 2>&1
    local rc=$?
    set -e
    expect_eq "exit status of svcadm status without the procedure" 1 "$rc"
    grep -q "problem: schema: .*ratelimit_lease" "$IT_DIR/bare.status" ||
        it_fail "svcadm status does not name the missing procedure: $(cat "$IT_DIR/bare.status")"
    # and svc-api on it answers no authenticated request
    stack_lighttpd_stop "$IT_DIR/lighttpd"
    SVC_CONF=$IT_DIR/bare_restored.conf it_api_start
    http GET /v1/credits
    expect_status 500
}
t_case "a dump without --routines lacks the rate limiter's procedure: svcadm status says so (exit 1), svc-api answers 500" t_no_routines

t_done
