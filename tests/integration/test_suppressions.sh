#!/bin/bash
# test_suppressions.sh: an account's suppression list through the API
# (lighttpd, svc-api, MariaDB) and svcadm: entries added in their normal
# form (every spelling of an address or domain is one entry), all or none
# when one is bad, listed newest first with paging, searched (?q=), deleted by their
# percent-encoded path, kept apart between accounts, scope verify:bulk;
# svcadm import and list; job result rows say "suppressed" for an address
# or a domain on the list when the job was made; a list is capped at
# account_suppressions_max (409 suppression_limit_reached, nothing added);
# a job against a 400,000-entry list is marked by lookups on the table's
# key, without the list in the responder's memory.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_conf_add "account_suppressions_max = 20"
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

# (the list: bob@example.com, carol@example.com, @spam.example)
t_search() {
    http POST /v1/suppressions '{"entries":["under_score@example.com","under-score@example.com"]}'
    expect_status 201 && expect_json .added 2 || return 1
    # any case, a page of what it finds, total counting only those
    http GET '/v1/suppressions?q=EXAMPLE.Com&limit=3'
    expect_status 200 && expect_json .total 4 && expect_json .q EXAMPLE.Com && expect_json '.data | length' 3 || return 1
    http GET '/v1/suppressions?q=example.com&limit=3&page=2'
    expect_status 200 && expect_json .total 4 && expect_json '.data | length' 1 || return 1
    # '_' and '%' are text, not LIKE's wildcards
    http GET '/v1/suppressions?q=r_s'
    expect_status 200 && expect_json .total 1 && expect_json '.data[0].entry' under_score@example.com || return 1
    http GET '/v1/suppressions?q=%25'
    expect_status 200 && expect_json .total 0 || return 1
    http GET '/v1/suppressions?q=%40spam'
    expect_status 200 && expect_json .total 1 && expect_json '.data[0].entry' @spam.example || return 1
    http GET '/v1/suppressions?q=nobody.example'
    expect_status 200 && expect_json .total 0 && expect_json '.data | length' 0 || return 1
    # an empty q is no search
    http GET '/v1/suppressions?q='
    expect_status 200 && expect_json .total 5 || return 1
    http GET "/v1/suppressions?q=$(printf 'a%.0s' $(seq 1 333))"
    expect_status 400 && expect_json .error.details.field q || return 1
    http DELETE /v1/suppressions/under_score%40example.com && expect_status 200 || return 1
    http DELETE /v1/suppressions/under-score%40example.com && expect_status 200
}
t_case "GET ?q= finds the entries that hold a text (any case; _ and % are text), total and paging of what it finds" t_search

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

t_suppressions_capped() {
    local acc key list i
    acc=$(it_account pro 10)
    key=$(it_key "$acc" 'verify:bulk')
    list=$(for i in $(seq 1 18); do printf '"cap%d@example.net",' "$i"; done)
    API_KEY=$key http POST /v1/suppressions "{\"entries\":[${list%,}]}"
    expect_status 201 && expect_json .added 18 || return 1
    # 18 + 3 new > 20: refused whole, one entry already there or not
    API_KEY=$key http POST /v1/suppressions '{"entries":["cap1@example.net","new1@example.net","new2@example.net","@new3.example"]}'
    expect_status 409 && expect_json .error.code suppression_limit_reached &&
        expect_json .error.details.limit 20 && expect_json .error.details.entries 18 || return 1
    expect_eq "entries after the refusal" 18 \
        "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$acc'")" || return 1
    # up to the cap is fine, entries already there cost nothing
    API_KEY=$key http POST /v1/suppressions '{"entries":["cap2@example.net","new1@example.net","@new3.example"]}'
    expect_status 201 && expect_json .added 2 && expect_json .existing 1 || return 1
    API_KEY=$key http POST /v1/suppressions '{"entries":["CAP3@example.net"]}'
    expect_status 201 && expect_json .added 0 || return 1
    API_KEY=$key http POST /v1/suppressions '{"entries":["one-more@example.net"]}'
    expect_status 409 && expect_json .error.code suppression_limit_reached || return 1
    expect_eq "entries at the cap" 20 \
        "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$acc'")" || return 1
    # another account has its own 20
    API_KEY=$API_KEY http POST /v1/suppressions '{"entries":["one-more@example.net"]}'
    expect_status 201 && expect_json .added 1
}
t_case "a list holds at most account_suppressions_max entries: 409 suppression_limit_reached, nothing added" t_suppressions_capped

# hwm PID: the process's peak resident memory, KiB
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }

t_large_list_by_lookup() {
    local acc key emails master pids p after grew=0 job
    acc=$(it_account pro 10000)
    key=$(it_key "$acc" 'verify:bulk,jobs:read')
    it_sql "INSERT INTO suppressions (account_id, entry, created_at) SELECT '$acc',
        CONCAT('u', seq, '@big.example'), UTC_TIMESTAMP(3) FROM seq_1_to_400000;
        INSERT INTO suppressions VALUES ('$acc', '@blocked.example', UTC_TIMESTAMP(3))" || return 1
    # 2,500 addresses on the list (three batches of rows), 500 beyond it,
    # one at a suppressed domain, one in another spelling, one no address
    emails=$( (seq 1 2499 | sed 's/.*/"u&@big.example"/'; echo '"U2500@BIG.Example"';
        seq 400001 400500 | sed 's/.*/"u&@big.example"/';
        echo '"x@Blocked.example"'; echo '"not an address"') | paste -sd,)
    master=$(pgrep -x -P "$(stack_pidfile_pid "$IT_DIR/lighttpd/lighttpd.pid")" svc-api)
    pids=$(pgrep -x -P "$master" svc-api)
    declare -A before
    for p in $pids; do before[$p]=$(hwm "$p"); done
    API_KEY=$key http POST /v1/verify/bulk "{\"emails\":[$emails]}"
    expect_status 202 && expect_json .total_emails 3002 || return 1
    job=$(json .job_id)
    expect_eq "suppressed rows" 2501 \
        "$(it_sql "SELECT SUM(suppressed) FROM job_emails WHERE job_id = '$job'")" || return 1
    expect_eq "marks of the first, the respelt, the domain's, a row beyond and the non-address" "1 1 0 1 0" \
        "$(echo $(it_sql "SELECT suppressed FROM job_emails WHERE job_id = '$job' AND seq IN (0, 2499, 2500, 3000, 3001) ORDER BY seq"))" || return 1
    for p in $pids; do
        after=$(hwm "$p")
        [ $((after - ${before[$p]})) -le "$grew" ] || grew=$((after - ${before[$p]}))
    done
    it_log "responder VmHWM grew by at most $grew KiB for a job against 400,001 entries"
    # Under the sanitizers (freed memory is held back) a job of 3,002 rows
    # against the list by key lookups grew a responder by about 12 MiB,
    # the same job loading the whole list (a set of 400,001 strings and
    # the fetched rows) by about 55 MiB (32 MiB for 200,001)
    [ "$grew" -lt 24576 ] || it_fail "a responder's VmHWM grew by $grew KiB" || return 1
    # the preview of the same addresses counts them by key lookups too
    printf '%s\n' "$emails" | tr ',' '\n' | tr -d '"' > "$IT_DIR/big-list.txt"
    API_KEY=$key http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/big-list.txt" -F preview=true
    expect_status 202 || return 1
    job=$(json .job_id)
    it_job_wait "$job" awaiting_confirmation || return 1
    API_KEY=$key http POST "/v1/verify/bulk/$job/preview" "" --data ""
    expect_status 200 && expect_json .preview.free_checks.suppressed 2501
}
t_case "a job and a preview against a 400,000-entry list are marked right by key lookups, the list never in memory" t_large_list_by_lookup

t_done
