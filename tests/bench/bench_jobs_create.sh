#!/bin/bash
# bench_jobs_create.sh: how long job creation takes through the API: a
# 100,000-address POST /v1/verify/bulk (goal: under 2 s) and a
# 1,000,000-address POST /v1/verify/batch (goal: under 30 s), each timed by
# curl from the first byte sent to the last byte of the answer, on the
# stack of tests/integration/lib.sh (lighttpd, svc-api, MariaDB on loopback)
# built from this tree. Prints the times next to the goals; figures are in
# tests/bench/README.
# A production-sized InnoDB: a million rows do not fit the tests' 32 MB.
export STACK_DB_BUFFER_POOL=${STACK_DB_BUFFER_POOL:-1G} STACK_DB_LOG_FILE=${STACK_DB_LOG_FILE:-512M}
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
it_stack_start

ACC=$(svcadm account create --email bench@example.com --tier admin --credits 5000000)
KEY=$(svcadm key create --account "$ACC" --scopes '*')
# 1,000 domains, so the addresses spread over many chunks as real lists do
jq -cn '{emails: [range(0; 100000) | "user\(.)@domain\(. % 1000).example"]}' > "$IT_DIR/bulk.json"
jq -cn '{name: "bench", emails: [range(0; 1000000) | "user\(.)@domain\(. % 1000).example"]}' > "$IT_DIR/batch.json"

post() {	# post PATH FILE: prints "status seconds"
    curl -s -o "$IT_DIR/out.json" -w '%{http_code} %{time_total}\n' -X POST \
        -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
        --data-binary "@$2" "$BASE_URL$1"
}
read -r s1 t1 < <(post /v1/verify/bulk "$IT_DIR/bulk.json")
n1=$(jq -r .total_emails "$IT_DIR/out.json")
read -r s2 t2 < <(post /v1/verify/batch "$IT_DIR/batch.json")
n2=$(jq -r .total_emails "$IT_DIR/out.json")
rows=$(it_sql "SELECT COUNT(*) FROM job_emails")
echo "bulk:  status $s1, $n1 addresses in ${t1} s (goal < 2 s)"
echo "batch: status $s2, $n2 addresses in ${t2} s (goal < 30 s)"
echo "job_emails rows: $rows"
[ "$s1" = 202 ] && [ "$s2" = 201 ] && [ "$rows" = 1100000 ]
