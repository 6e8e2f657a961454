#!/bin/bash
# test_jobqueue.sh: runs tests/integration/db_jobqueue (svc-worker's result
# writes, jobqueue_write, against a real MariaDB): every column of a result
# on its row, rows done already left as they were, a seq given twice
# written and counted once, the job's counters exact, greylisted rows to
# retry and done later, a seq the job does not have failing the whole
# write with nothing written and no row added.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_stack_start --db-only
prog=$top_builddir/tests/integration/db_jobqueue
[ -x "$prog" ] || it_skip "$prog is not built"

t_jobqueue() { "$prog"; }
t_case "jobqueue_write: results written once, done rows kept, counters exact, retry rows, an unknown seq writes nothing" t_jobqueue

t_done
