#!/bin/bash
# test_jobqueue.sh: runs tests/integration/db_jobqueue (svc-worker's result
# writes, jobqueue_write, against a real MariaDB): every column of a result
# on its row, rows done already left as they were, a seq given twice
# written and counted once, the job's counters exact, greylisted rows to
# retry and done later, a seq the job does not have failing the whole
# write with nothing written and no row added; and db.c's statement cache
# at the server's max_prepared_stmt_count.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_stack_start --db-only
prog=$top_builddir/tests/integration/db_jobqueue
[ -x "$prog" ] || it_skip "$prog is not built"

t_jobqueue() { "$prog"; }
t_case "jobqueue_write: results written once, done rows kept, counters exact, retry rows, an unknown seq writes nothing" t_jobqueue

# the server lets 20 prepared statements exist at once (over every
# connection); one connection runs 60 distinct ones (db.c keeps up to 96)
t_statement_limit() {
    local rc=0
    it_sql "SET GLOBAL max_prepared_stmt_count = 20"
    SVC_STMT_LIMIT=20 "$prog" || rc=1
    it_sql "SET GLOBAL max_prepared_stmt_count = DEFAULT"
    return $rc
}
t_case "a connection that meets the server's max_prepared_stmt_count gives its cached statements back and goes on" t_statement_limit

t_done
