#!/bin/bash
# test_ledger.sh: runs tests/integration/db_ledger (the credit ledger and the
# Idempotency-Key store, with concurrent processes) against a real MariaDB.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_stack_start --db-only
prog=$top_builddir/tests/integration/db_ledger
[ -x "$prog" ] || it_skip "$prog is not built"

t_ledger() { "$prog"; }
t_case "ledger and idempotency rules hold against MariaDB under concurrency" t_ledger
t_done
