#!/bin/bash
# test_suppressions.sh: an account's suppression list through the API
# (lighttpd, svc-api, MariaDB) and svcadm: entries added in their normal
# form (every spelling of an address or domain is one entry), all or none
# when one is bad, listed newest first with paging, deleted by their
# percent-encoded path, kept apart between accounts, scope verify:bulk;
# svcadm import and list; job result rows say "suppressed" for an address
# or a domain on the list when the job was made.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_stack_start

ACC=$(it_account pro 100)
API_KEY=$(it_key "$ACC" '*')
SB=sandbox.svc.example

t_add_and_list() {
    http POST /v1/suppressions '{"entries":["Bob@Example.COM","@Spam.Example","bob@example.com"," carol@example.com "]}'
    expect_status 201 && expect_json .added 3 && expect_json .existing 1 || return 1
    # another spelling of an entry is the same entry
    http POST /v1/suppressions '{"entries":["BOB@example.com","@SPAM.example."]}'
    expect_status 201 && expect_json .added 0 && expect_json .existing 2 || return 1
    http GET /v1/suppressions
    expect_status 200 && expect_json .total 3 && expect_json '[.data[].entry] | sort | join(",")' \
        "@spam.example,bob@example.com,carol@example.com" || return 1
    expect_jq '.data | all(.created_at | test("^[0-9-]+T[0-9:]+Z$"))' || return 1
    http GET '/v1/suppressions?limit=2&page=2'
    expect_status 200 && expect_json '.data | length' 1 && expect_json .limit 2 && expect_json .page 2 || return 1
    http GET '/v1/suppressions?limit=0'
    expect_status 400 && expect_json .error.details.field limit
}
t_case "entries are stored in their normal form, once, and listed with paging" t_add_and_list

t_bad_entry_adds_nothing() {
    http POST /v1/suppressions '{"entries":["ok1@example.org","not an address","@"]}'
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field 'entries[1]' || return 1
    expect_eq "rows of ok1" 0 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE entry = 'ok1@example.org'")" || return 1
    http POST /v1/suppressions '{"entries":[]}'
    expect_status 400 && expect_json .error.details.field entries || return 1
    http POST /v1/suppressions '{"entries":"a@b.example"}'
    expect_status 400 && expect_json .error.details.field entries || return 1
    http POST /v1/suppressions '{"entries":[42]}'
    expect_status 400 && expect_json .error.details.field 'entries[0]'
}
t_case "one bad entry refuses the whole request (400 naming it), nothing written" t_bad_entry_adds_nothing

t_delete() {
    http DELETE /v1/suppressions/%40spam.example
    expect_status 200 && expect_json .entry @spam.example && expect_json .deleted true || return 1
    http DELETE /v1/suppressions/%40spam.example
    expect_status 404 && expect_json .error.code not_found || return 1
    # another spelling finds the entry; '+' in a path is a plus
    http POST /v1/suppressions '{"entries":["x+tag@example.com"]}'
    expect_status 201 || return 1
    http DELETE '/v1/suppressions/X+tag%40EXAMPLE.com'
    expect_status 200 && expect_json .entry 'X+tag@EXAMPLE.com' || return 1
    expect_eq "x+tag rows" 0 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE entry LIKE 'x+tag%'")"
}
t_case "DELETE removes an entry by any spelling (404 when it is not there)" t_delete

t_accounts_apart_and_scope() {
    local other okey nokey
    other=$(it_account pro 10)
    okey=$(it_key "$other" 'verify:bulk')
    API_KEY=$okey http GET /v1/suppressions
    expect_status 200 && expect_json .total 0 || return 1
    API_KEY=$okey http DELETE /v1/suppressions/bob%40example.com
    expect_status 404 || return 1
    expect_eq "bob still suppressed for the first account" 1 \
        "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$ACC' AND entry = 'bob@example.com'")" || return 1
    nokey=$(it_key "$other" 'jobs:read')
    API_KEY=$nokey http POST /v1/suppressions '{"entries":["a@b.example"]}'
    expect_status 403 && expect_json .error.code insufficient_scope
}
t_case "accounts have their own lists; the scope is verify:bulk" t_accounts_apart_and_scope

t_svcadm_import() {
    local f=$IT_DIR/suppress.txt out
    printf '%s\n' '# a comment' '' 'dave@import.example' '@Import2.Example' 'DAVE@import.example' 'no address' > "$f"
    out=$(svcadm suppressions import --account "$ACC" "$f")
    expect_eq "import counts" "added 2 existing 1 invalid 1" "$(echo $out)" || return 1
    svcadm suppressions list --account "$ACC" | cut -f1 | sort > "$IT_DIR/list.txt"
    expect_eq "svcadm list" "@import2.example bob@example.com carol@example.com dave@import.example" \
        "$(echo $(cat "$IT_DIR/list.txt"))"
}
t_case "svcadm suppressions import (comments, blanks, repeats, bad lines) and list" t_svcadm_import

t_results_say_suppressed() {
    local sbkey job
    http POST /v1/suppressions "{\"entries\":[\"rejected_email@$SB\",\"@mailbox-full.example\"]}"
    expect_status 201 || return 1
    sbkey=$(it_key "$ACC" '*' --sandbox)
    API_KEY=$sbkey http POST /v1/verify/bulk "{\"emails\":[\"accepted_email@$SB\",\"REJECTED_EMAIL@$SB\",\"bob@Example.com\"]}"
    expect_status 202 || return 1
    job=$(json .job_id)
    it_job_wait "$job" completed || return 1
    API_KEY=$sbkey http GET "/v1/jobs/$job/results"
    expect_status 200 && expect_json '[.results[] | .email + "=" + .suppressed] | join(",")' \
        "accepted_email@$SB=no,REJECTED_EMAIL@$SB=yes,bob@Example.com=yes"
}
t_case "result rows say suppressed for an address or domain on the list when the job was made" t_results_say_suppressed

t_done
