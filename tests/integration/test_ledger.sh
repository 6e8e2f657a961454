#!/bin/bash
# test_ledger.sh: runs tests/integration/db_ledger (the credit ledger and the
# Idempotency-Key store, with concurrent processes) against a real MariaDB,
# and checks that "svcadm credits check" finds a pool whose running totals
# no longer add up to its ledger rows, and that a grant whose COMMIT was
# applied but whose answer was lost (tests/integration/commit_drop_proxy.py
# between svcadm and MariaDB) is made once, not again by the retry; the
# same for delivery outcomes stored by svcadm feedback import.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_conf_add "feedback_hash_key_file = $IT_DIR/feedback-hash-key"
it_stack_start --db-only
prog=$top_builddir/tests/integration/db_ledger
[ -x "$prog" ] || it_skip "$prog is not built"

t_ledger() { "$prog"; }
t_case "ledger and idempotency rules hold against MariaDB under concurrency" t_ledger

# each running total moved behind the ledger's back, one at a time
t_check_finds_drift() {
    local acc col out
    acc=$(svcadm account create --email "drift$RANDOM@example.com" --tier pro --credits 10)
    expect_eq "svcadm credits check of a fresh pool" ok "$(svcadm credits check "$acc")" || return 1
    for col in balance used refunded granted; do
        it_sql "UPDATE credit_pools SET $col = $col + 1 WHERE owner_id = '$acc'"
        if out=$(svcadm credits check "$acc" 2>&1); then
            it_fail "svcadm credits check passed a pool whose $col is off by one: $out" || return 1
        fi
        case $out in *"totals differ from the ledger"*) ;; *) it_fail "no mismatch message: $out" || return 1 ;; esac
        it_sql "UPDATE credit_pools SET $col = $col - 1 WHERE owner_id = '$acc'"
    done
    expect_eq "svcadm credits check once the totals are back" ok "$(svcadm credits check "$acc")"
}
t_case "svcadm credits check fails when the balance, used, refunded or granted total differs from the ledger rows" t_check_finds_drift
# lost_commit ARGS...: svcadm ARGS on TCP through commit_drop_proxy.py,
# which loses the answer to its first COMMIT; its standard output in
# LOST_OUT
lost_commit() {
    local conf=$IT_DIR/proxied.conf proxy rc=0
    rm -f "$IT_DIR/proxy.addr"
    python3 "$top_srcdir/tests/integration/commit_drop_proxy.py" --ready "$IT_DIR/proxy.addr" \
        --upstream "127.0.0.1:$(cat "$IT_DIR/mariadb/port")" --arm "$IT_DIR/proxy.arm" \
        > "$IT_DIR/proxy.out" 2>&1 &
    proxy=$!
    for _ in $(seq 1 100); do [ -s "$IT_DIR/proxy.addr" ] && break; sleep 0.1; done
    [ -s "$IT_DIR/proxy.addr" ] || { kill "$proxy"; it_fail "the proxy did not start"; return 1; }
    sed -e '/^db_host = /d' -e '/^db_socket = /d' "$SVC_CONF" > "$conf"
    echo "db_hosts = $(cat "$IT_DIR/proxy.addr")" >> "$conf"
    touch "$IT_DIR/proxy.arm"
    LOST_OUT=$("$top_builddir/src/admin/svcadm" -c "$conf" "$@" 2> "$IT_DIR/lost.err") || rc=$?
    kill "$proxy"; wait "$proxy" 2>/dev/null
    [ "$rc" = 0 ] || { it_fail "svcadm $1 $2 failed: $LOST_OUT $(cat "$IT_DIR/lost.err")"; return 1; }
    expect_eq "answers dropped by the proxy" 1 "$(grep -c 'dropped the answer' "$IT_DIR/proxy.out")"
}

t_lost_commit_answer() {
    local acc n
    acc=$(svcadm account create --email "lost$RANDOM@example.com" --tier pro --credits 10) || return 1
    lost_commit credits grant "$acc" 5 || return 1
    n=$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE account_id = '$acc' AND kind = 'grant'")
    expect_eq "grant rows (the account's first and the one retried)" 2 "$n" || return 1
    expect_eq "balance" 15 "$(it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$acc'")" || return 1
    expect_eq "svcadm credits check" ok "$(svcadm credits check "$acc")"
}
t_case "a grant whose COMMIT was applied but whose answer was lost is retried without a second grant" t_lost_commit_answer

t_lost_commit_feedback() {
    local acc at
    acc=$(svcadm account create --email "fb$RANDOM@example.com" --tier pro --credits 10) || return 1
    at=$(date -u +%Y-%m-%dT%H:%M:%S)
    printf '%s\n' \
        "${at}Z mail postfix/smtp[1]: 3F2A41C0123: to=<a@one.example>, relay=mx.one.example[192.0.2.1]:25, dsn=2.0.0, status=sent (250 2.0.0 Ok)" \
        "${at}Z mail postfix/smtp[2]: 3F2A41C0123: to=<b@one.example>, relay=mx.one.example[192.0.2.1]:25, dsn=2.0.0, status=sent (250 2.0.0 Ok)" \
        "${at}Z mail postfix/smtp[3]: 3F2A41C0123: to=<c@one.example>, relay=mx.one.example[192.0.2.1]:25, dsn=5.1.1, status=bounced (host said: 550 5.1.1 user unknown (in reply to RCPT TO command))" \
        > "$IT_DIR/lost.maillog"
    TZ=UTC lost_commit feedback import --account "$acc" "$IT_DIR/lost.maillog" || return 1
    expect_eq "what the import says it stored" "lines 3 deliveries 3 stored 3 duplicates 0 suppressed 1" \
        "$(echo $LOST_OUT | cut -d' ' -f1-10)" || return 1
    expect_eq "outcomes stored" 3 "$(it_sql "SELECT COUNT(*) FROM feedback_outcomes WHERE account_id = '$acc'")" || return 1
    expect_eq "suppressions" 1 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$acc'")"
}
t_case "svcadm feedback import whose COMMIT was applied but whose answer was lost reports what it stored, not duplicates" t_lost_commit_feedback

t_done
