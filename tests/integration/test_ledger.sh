#!/bin/bash
# test_ledger.sh: runs tests/integration/db_ledger (the credit ledger and the
# Idempotency-Key store, with concurrent processes) against a real MariaDB,
# and checks that "svcadm credits check" finds a pool whose running totals
# no longer add up to its ledger rows.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

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
t_done
