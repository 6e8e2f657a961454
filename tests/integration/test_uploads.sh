#!/bin/bash
# test_uploads.sh: POST /v1/verify/bulk/upload through lighttpd and svc-api
# (the request: every refusal with its status and code, nothing stored or
# charged by a refused request, the Idempotency-Key over a streamed body),
# then svc-worker's ingestion of what was accepted: CSV, TSV, TXT and XLSX
# files, the column rules, every ingestion failure code with its message,
# the state table (pending charged once, insufficient_credits uncharged),
# progress while ingesting, and include_original downloads. Addresses are
# at the sandbox domain, so results come without the network (a live key
# is charged for them). The preview and confirm are test_preview.sh's.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
it_require python3 curl jq
it_conf_add "worker_poll_interval = 1"
# python3-openpyxl is Debian's: the first python3 that has it writes XLSX
PY=python3
for p in python3 /usr/bin/python3; do "$p" -c 'import openpyxl' 2>/dev/null && { PY=$p; break; }; done
it_stack_start

SB=sandbox.svc.example
# admin tier (1000 requests a minute): the script makes over 100 requests a
# minute with this key when the build is fast (unsanitized, as make
# mutation builds it), and the pro tier's 100 then answered 429
ACC=$(it_account admin 10000000)
API_KEY=$(it_key "$ACC" '*')
F=$IT_DIR/files
mkdir -p "$F"

balance() { it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$1'"; }
chunks_of() { it_sql "SELECT COUNT(*) FROM upload_chunks WHERE job_id = '$1'"; }
all_chunks() { it_sql "SELECT COUNT(*) FROM upload_chunks"; }

# upload FILE [curl -F arguments...]: a multipart upload of FILE
upload() {
    local file=$1
    shift
    http POST /v1/verify/bulk/upload "" -F "file=@$file" "$@"
}

# A CSV of three columns; rows 2-5 addresses, one repeated in another case.
cat > "$F/contacts.csv" <<EOF
Name,E-mail Address,Note
Ann,accepted_email@$SB,"says ""hi"", twice"
Bob,rejected_email@$SB,=cmd()
Cy,ACCEPTED_EMAIL@$SB,dup
Di,catch_all@$SB,
EOF

t_csv_to_completion() {
    local job before
    before=$(balance "$ACC")
    upload "$F/contacts.csv" -F name=contacts
    expect_status 202 && expect_json .status ingesting && expect_json .preview false &&
        expect_json .status_url "/v1/jobs/$(json .job_id)" &&
        expect_json .progress_url "/v1/jobs/$(json .job_id)/progress" && expect_jq '.callback_secret == null' || return 1
    job=$(json .job_id)
    expect_eq "charged before ingestion" "$before" "$(balance "$ACC")" || return 1
    http GET "/v1/jobs/$job/progress"
    expect_status 200 && expect_json .status ingesting && expect_json .ingestion.bytes_total "$(stat -c %s "$F/contacts.csv")" || return 1
    it_job_wait "$job" pending processing completed || return 1
    expect_eq "charged once, per unique address" "$((before - 3))" "$(balance "$ACC")" || return 1
    it_job_wait "$job" completed || return 1
    http GET "/v1/jobs/$job"
    expect_json .type upload && expect_json .name contacts && expect_json .total_emails 3 &&
        expect_json .duplicates_removed 1 && expect_json .credits_charged 3 || return 1
    http GET "/v1/jobs/$job/results"
    expect_json '[.results[] | .email + "=" + .status] | join(",")' \
        "accepted_email@$SB=deliverable,rejected_email@$SB=undeliverable,catch_all@$SB=unknown" || return 1
    # the stored file went with the rows that were written from it: the
    # original columns come from the rows
    expect_eq "stored file of an ingested job" 0 "$(chunks_of "$job")" || return 1
    # original columns in their order, then the svc_* columns; a formula
    # cell of the file gets its leading quote too
    http GET "/v1/jobs/$job/download?include_original=true"
    expect_status 200 || return 1
    expect_eq "header" "Name,E-mail Address,Note,svc_status,svc_classification,svc_sub_status,svc_reason,svc_score,svc_free,svc_role,svc_disposable,svc_accept_all,svc_catch_all_verdict,svc_verified_at,svc_provider,svc_score_basis" \
        "$(printf '%s' "$HTTP_BODY" | head -n 1 | tr -d '\r')" || return 1
    expect_eq "row of Ann" "Ann,accepted_email@$SB,\"says \"\"hi\"\", twice\",deliverable" \
        "$(printf '%s' "$HTTP_BODY" | sed -n 2p | cut -d, -f1-5)" || return 1
    expect_eq "row of Bob" "Bob,rejected_email@$SB,'=cmd(),undeliverable" \
        "$(printf '%s' "$HTTP_BODY" | sed -n 3p | cut -d, -f1-4)" || return 1
    expect_eq "rows" 4 "$(printf '%s\n' "$HTTP_BODY" | grep -c .)" || return 1
    # without include_original: the plain layout
    http GET "/v1/jobs/$job/download"
    expect_eq "plain header" "email,svc_status" "$(printf '%s' "$HTTP_BODY" | head -n 1 | cut -d, -f1-2)"
}
t_case "a CSV upload is ingested, charged once per unique address, verified, and downloaded with its original columns" t_csv_to_completion

t_include_original_only_for_uploads() {
    local job
    http POST /v1/verify/bulk "{\"emails\":[\"accepted_email@$SB\"]}"
    job=$(json .job_id)
    it_job_wait "$job" completed || return 1
    http GET "/v1/jobs/$job/download?include_original=true"
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field include_original || return 1
    http GET "/v1/jobs/$job/download?include_original=maybe"
    expect_status 400 && expect_json .error.details.field include_original
}
t_case "include_original on a job that is not an upload is 400 naming it" t_include_original_only_for_uploads

t_request_refusals() {
    local chunks_before sbkey rokey poor
    chunks_before=$(all_chunks)
    printf 'a@x.example\n' > "$F/one.txt"
    printf '%%PDF-1.4 not a list\n' > "$F/fake.csv"
    printf 'a@x.example\n' > "$F/list.pdf"
    : > "$F/empty.csv"
    # no file at all, in a form or as JSON
    http POST /v1/verify/bulk/upload "" -F name=x
    expect_status 400 && expect_json .error.code missing_file || return 1
    http POST /v1/verify/bulk/upload '{"name":"x"}'
    expect_status 400 && expect_json .error.code missing_file || return 1
    # two files
    upload "$F/one.txt" -F "file=@$F/one.txt"
    expect_status 400 && expect_json .error.code missing_file || return 1
    # neither a form nor JSON
    http POST /v1/verify/bulk/upload '<list/>' -H 'Content-Type: application/xml'
    expect_status 415 && expect_json .error.code unsupported_media_type || return 1
    # a name or a content that is none of the four kinds
    upload "$F/list.pdf"
    expect_status 400 && expect_json .error.code unsupported_file_type || return 1
    upload "$F/fake.csv"
    expect_status 400 && expect_json .error.code unsupported_file_type || return 1
    upload "$F/one.txt;filename=list.xlsx"
    expect_status 400 && expect_json .error.code unsupported_file_type || return 1
    upload "$F/empty.csv"
    expect_status 400 && expect_json .error.code empty_file || return 1
    # fields
    upload "$F/one.txt" -F 'column_mapping={"email":'
    expect_status 400 && expect_json .error.code invalid_column_mapping || return 1
    upload "$F/one.txt" -F 'column_mapping=["email"]'
    expect_status 400 && expect_json .error.code invalid_column_mapping || return 1
    upload "$F/one.txt" -F callback_url=http://127.0.0.1/hook
    expect_status 400 && expect_json .error.code invalid_callback_url || return 1
    upload "$F/one.txt" -F preview=perhaps
    expect_status 400 && expect_json .error.details.field preview || return 1
    upload "$F/one.txt" -F "name=$(printf 'n%.0s' $(seq 1 201))"
    expect_status 400 && expect_json .error.details.field name || return 1
    http POST /v1/verify/bulk/upload '{"source_url":"https://127.0.0.1/list.csv"}'
    expect_status 400 && expect_json .error.code invalid_source_url || return 1
    http POST /v1/verify/bulk/upload '{"source_url":42}'
    expect_status 400 && expect_json .error.code invalid_source_url || return 1
    http POST /v1/verify/bulk/upload '{"source_url":'
    expect_status 400 && expect_json .error.code invalid_json || return 1
    # keys: sandbox, scope, credits (a preview needs none)
    sbkey=$(it_key "$ACC" '*' --sandbox)
    API_KEY=$sbkey upload "$F/one.txt"
    expect_status 403 && expect_json .error.code sandbox_key_restricted || return 1
    rokey=$(it_key "$ACC" 'jobs:read')
    API_KEY=$rokey upload "$F/one.txt"
    expect_status 403 && expect_json .error.code insufficient_scope || return 1
    poor=$(it_key "$(it_account pro 0)" '*')
    API_KEY=$poor upload "$F/one.txt"
    expect_status 402 && expect_json .error.code insufficient_credits &&
        expect_json .error.details.required 1 && expect_json .error.details.available 0 || return 1
    # a preview upload too: its preview is free, not free for everyone
    API_KEY=$poor upload "$F/one.txt" -F preview=true
    expect_status 402 && expect_json .error.code insufficient_credits &&
        expect_json .error.details.required 1 && expect_json .error.details.available 0 || return 1
    # every refused request left nothing behind
    expect_eq "stored pieces after the refusals" "$chunks_before" "$(all_chunks)" || return 1
    expect_eq "jobs of the refusals" 0 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE type = 'upload' AND account_id <> '$ACC'")"
}
t_case "every refusal of the request has its status and code, and stores nothing" t_request_refusals

t_exactly_one_and_known_fields() {
    local jobs_before chunks_before
    jobs_before=$(it_sql "SELECT COUNT(*) FROM jobs WHERE type = 'upload'")
    chunks_before=$(all_chunks)
    printf 'a@x.example\n' > "$F/one.txt"
    # a file and a source_url, in either order: neither is dropped silently
    upload "$F/one.txt" -F source_url=https://lists.example/a.csv
    expect_status 400 && expect_json .error.code missing_file && expect_jq '.error.message | test("exactly one of file or source_url")' || return 1
    http POST /v1/verify/bulk/upload "" -F source_url=https://lists.example/a.csv -F "file=@$F/one.txt"
    expect_status 400 && expect_json .error.code missing_file && expect_jq '.error.message | test("exactly one")' || return 1
    # a source_url alone in a form: it is JSON's field
    http POST /v1/verify/bulk/upload "" -F source_url=https://lists.example/a.csv
    expect_status 400 && expect_json .error.code missing_file && expect_jq '.error.message | test("application/json")' || return 1
    # an unknown form field, before or after the file
    upload "$F/one.txt" -F colour=blue
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field colour &&
        expect_jq '.error.message | test("^colour: unknown field")' || return 1
    http POST /v1/verify/bulk/upload "" -F 'emailcolumn=Mail' -F "file=@$F/one.txt"
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field emailcolumn || return 1
    # a name that is not printable ASCII is shown cleaned
    upload "$F/one.txt" -F "$(printf 'f\xc3\xa9x')=1"
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field 'f??x' || return 1
    # JSON: unknown keys, and a "file" key, are named
    http POST /v1/verify/bulk/upload '{"source_url":"https://lists.example/a.csv","colour":"blue"}'
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field colour || return 1
    http POST /v1/verify/bulk/upload '{"source_url":"https://lists.example/a.csv","file":"a.csv"}'
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field file &&
        expect_jq '.error.message | test("multipart/form-data")' || return 1
    expect_eq "upload jobs written by the refusals" "$jobs_before" "$(it_sql "SELECT COUNT(*) FROM jobs WHERE type = 'upload'")" || return 1
    expect_eq "stored pieces after the refusals" "$chunks_before" "$(all_chunks)" || return 1
    # every field the svc CLI sends, in a form and as JSON, is still taken
    upload "$F/one.txt" -F name=n -F email_column=0 -F callback_url=https://hooks.example/cb -F preview=true
    expect_status 202 || return 1
    upload "$F/one.txt" -F 'column_mapping={"email":"Mail"}'
    expect_status 202 || return 1
    http POST /v1/verify/bulk/upload '{"source_url":"https://lists.example/a.csv","name":"n","email_column":0,"callback_url":"https://hooks.example/cb","preview":true}'
    expect_status 202 || return 1
    http POST /v1/verify/bulk/upload '{"source_url":"https://lists.example/a.csv","column_mapping":{"email":"Mail"}}'
    expect_status 202
}
t_case "exactly one of file or source_url, else missing_file; an unknown field (form or JSON) is 400 naming it; nothing written" t_exactly_one_and_known_fields

t_length_and_size() {
    # no Content-Length: 411 (chunked)
    http POST /v1/verify/bulk/upload "" -F "file=@$F/contacts.csv" -H 'Transfer-Encoding: chunked'
    expect_status 411 || return 1
    # a Content-Length over the limit is refused before the body is read
    python3 -c "import sys; sys.stdout.write(('x@y.example\n' * (52 * 1024 * 1024 // 12)))" > "$F/huge.txt"
    upload "$F/huge.txt"
    expect_status 413 && expect_json .error.code file_too_large && expect_json .error.details.limit_bytes "$((51 * 1024 * 1024))" || return 1
    # a file over 50 MB is refused while it streams, its pieces deleted
    python3 -c "import sys; sys.stdout.write(('x@y.example\n' * (50 * 1024 * 1024 // 12 + 10)))" > "$F/big.txt"
    upload "$F/big.txt"
    expect_status 413 && expect_json .error.code file_too_large || return 1
    expect_eq "pieces of the refused file" 0 "$(it_sql "SELECT COUNT(*) FROM upload_chunks c LEFT JOIN jobs j ON j.id = c.job_id WHERE j.id IS NULL")"
}
t_case "no Content-Length is 411; over 50 MB is 413 from Content-Length or while streaming" t_length_and_size

t_idempotent_upload() {
    local job secret n
    upload "$F/contacts.csv" -F callback_url=https://hooks.example/cb -H 'Idempotency-Key: up-1'
    expect_status 202 && expect_jq '.callback_secret | startswith("whsec_")' || return 1
    job=$(json .job_id)
    secret=$(json .callback_secret)
    upload "$F/contacts.csv" -F callback_url=https://hooks.example/cb -H 'Idempotency-Key: up-1'
    expect_status 202 && expect_json .job_id "$job" && expect_json .callback_secret "$secret" &&
        expect_header Idempotent-Replayed true || return 1
    n=$(chunks_of "$job")
    expect_eq "pieces of the one job" 1 "$n" || return 1
    expect_eq "pieces of no job" 0 "$(it_sql "SELECT COUNT(*) FROM upload_chunks c LEFT JOIN jobs j ON j.id = c.job_id WHERE j.id IS NULL")" || return 1
    upload "$F/one.txt" -H 'Idempotency-Key: up-1'
    expect_status 422 && expect_json .error.code idempotency_key_reused || return 1
    expect_eq "callback secret stored" "$secret" "$(it_sql "SELECT callback_secret FROM jobs WHERE id = '$job'")"
}
t_case "an Idempotency-Key replays the first 202 (the same callback_secret) and a retried body stores nothing" t_idempotent_upload

# ingest FILE [curl -F arguments...]: uploads FILE, runs the worker until
# the job leaves ingesting; JOB is its id
ingest() {
    upload "$@"
    expect_status 202 || return 1
    JOB=$(json .job_id)
    it_job_wait "$JOB" pending processing completed failed awaiting_confirmation
}

# job_is JOB STATUS TOTAL [ERROR_CODE]: STATUS "ok" is pending, processing
# or completed (one worker pass may finish a sandbox job)
job_is() {
    http GET "/v1/jobs/$1"
    if [ "$2" = ok ]; then
        expect_jq '.status == "pending" or .status == "processing" or .status == "completed"' || return 1
    else
        expect_json .status "$2" || return 1
    fi
    expect_json .total_emails "$3" || return 1
    [ $# -lt 4 ] || expect_json .error.code "$4"
}

t_formats() {
    printf 'email\tname\naccepted_email@%s\tA\nrole_based@%s\tB\n' "$SB" "$SB" > "$F/list.tsv"
    ingest "$F/list.tsv" && job_is "$JOB" ok 2 || return 1
    # a txt list needs no header; blank lines and spaces are nothing
    printf 'accepted_email@%s\n\n  mailbox_full@%s  \r\nunknown@%s' "$SB" "$SB" "$SB" > "$F/list.txt"
    ingest "$F/list.txt" && job_is "$JOB" ok 3 || return 1
    # semicolons, UTF-16 with its byte order mark, CRLF
    printf 'Vorname;E-Mail;Ort\r\nJörg;accepted_email@%s;Köln\r\nÄnne;spam_trap@%s;Wien\r\n' "$SB" "$SB" |
        iconv -f UTF-8 -t UTF-16 > "$F/utf16.csv"
    ingest "$F/utf16.csv" && job_is "$JOB" ok 2 || return 1
    it_job_wait "$JOB" completed || return 1
    http GET "/v1/jobs/$JOB/download?include_original=true"
    expect_eq "UTF-16 header as UTF-8" "Vorname,E-Mail,Ort" "$(printf '%s' "$HTTP_BODY" | head -n 1 | cut -d, -f1-3)" || return 1
    expect_eq "UTF-16 row as UTF-8" "Jörg,accepted_email@$SB,Köln" "$(printf '%s' "$HTTP_BODY" | sed -n 2p | cut -d, -f1-3)" || return 1
    # an XLSX workbook written by openpyxl: numbers, an empty cell
    "$PY" - "$F/list.xlsx" "$SB" <<'PYEOF' || { it_fail "openpyxl could not write the workbook"; return 1; }
import sys, openpyxl
wb = openpyxl.Workbook()
ws = wb.active
ws.append(["id", "Email Address", "amount"])
ws.append([1, "accepted_email@" + sys.argv[2], 12.5])
ws.append([2, "rejected_email@" + sys.argv[2], None])
ws.append([3, "ACCEPTED_EMAIL@" + sys.argv[2], 7])
wb.save(sys.argv[1])
PYEOF
    ingest "$F/list.xlsx" && job_is "$JOB" ok 2 || return 1
    it_job_wait "$JOB" completed || return 1
    http GET "/v1/jobs/$JOB/download?include_original=true"
    expect_eq "XLSX header" "id,Email Address,amount" "$(printf '%s' "$HTTP_BODY" | head -n 1 | cut -d, -f1-3)" || return 1
    expect_eq "XLSX rows" "1,accepted_email@$SB,12.5|2,rejected_email@$SB," \
        "$(printf '%s' "$HTTP_BODY" | sed -n '2,3p' | cut -d, -f1-3 | tr -d '\r' | paste -sd'|')"
}
t_case "TSV, TXT without a header, UTF-16 CSV with semicolons and XLSX are read, their columns kept" t_formats

t_column_rules() {
    printf 'Work,Private\nw1@%s,accepted_email@%s\nw2@%s,p2@%s\n' "$SB" "$SB" "$SB" "$SB" > "$F/two.csv"
    ingest "$F/two.csv" -F email_column=private && job_is "$JOB" ok 2 || return 1
    expect_eq "column by name" "accepted_email@$SB" "$(it_sql "SELECT email FROM job_emails WHERE job_id = '$JOB' AND seq = 0")" || return 1
    ingest "$F/two.csv" -F email_column=0 && job_is "$JOB" ok 2 || return 1
    expect_eq "column by index" "w1@$SB" "$(it_sql "SELECT email FROM job_emails WHERE job_id = '$JOB' AND seq = 0")" || return 1
    ingest "$F/two.csv" -F 'column_mapping={"email":"PRIVATE"}' && job_is "$JOB" ok 2 || return 1
    expect_eq "column by mapping" "accepted_email@$SB" "$(it_sql "SELECT email FROM job_emails WHERE job_id = '$JOB' AND seq = 0")" || return 1
    ingest "$F/two.csv" -F 'column_mapping={"email":"Mail"}' && job_is "$JOB" failed 0 invalid_column_mapping || return 1
    ingest "$F/two.csv" -F email_column=Mail && job_is "$JOB" failed 0 email_column_not_found || return 1
    ingest "$F/two.csv" -F email_column=5 && job_is "$JOB" failed 0 email_column_not_found || return 1
    printf 'name,phone\nAnn,123\nBob,456\n' > "$F/nomail.csv"
    ingest "$F/nomail.csv" && job_is "$JOB" failed 0 email_column_not_found || return 1
    expect_jq '.error.message | test("email_column")'
}
t_case "email_column by name or index and column_mapping win; a missing column fails the job with its code" t_column_rules

# The column a customer names goes into the worker's log line of the
# failure: a newline in it must not start a line of its own
t_column_name_logged_clean() {
    local nl=$'\n' lines
    ingest "$F/two.csv" -F "email_column=Mail${nl}event=forged_column job=x" &&
        job_is "$JOB" failed 0 email_column_not_found || return 1
    ingest "$F/two.csv" -F "column_mapping={\"email\":\"Mail\\nevent=forged_mapping job=y\"}" &&
        job_is "$JOB" failed 0 invalid_column_mapping || return 1
    lines=$(grep -h 'forged_' "$IT_DIR"/log/*.log)
    expect_eq "log lines naming the forged text" 2 "$(printf '%s\n' "$lines" | grep -c .)" || return 1
    expect_eq "of them, lines that are not the ingest_failed event" 0 \
        "$(printf '%s\n' "$lines" | grep -vc 'event=ingest_failed .*message="[^"]*\\x0aevent=forged_')"
}
t_case "email_column and column_mapping are logged escaped: a newline in them cannot forge a log line" t_column_name_logged_clean

t_ingestion_failures() {
    local poor pkey before
    printf 'email\n' > "$F/header-only.csv"
    ingest "$F/header-only.csv" && job_is "$JOB" failed 0 no_emails || return 1
    printf 'email\nnot an address\nneither\n' > "$F/junk.csv"
    ingest "$F/junk.csv" && job_is "$JOB" failed 0 no_emails || return 1
    printf 'email\n"a@x.example\nb@x.example\n' > "$F/open-quote.csv"
    ingest "$F/open-quote.csv" && job_is "$JOB" failed 0 invalid_file || return 1
    expect_jq '.error.message | test("line 2")' || return 1
    expect_eq "stored file of a failed job" 0 "$(chunks_of "$JOB")" || return 1
    # 4.7 KB of XLSX whose 50 x 200 cells all name one 32 KiB shared
    # string: the rows held to choose the column count against the 160 MiB
    # of the originals, and the reading stops there (it held 320 MiB)
    "$PY" - "$F/bomb.xlsx" <<'PYEOF' || { it_fail "could not write the workbook"; return 1; }
import sys, zipfile
main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
pkg = "http://schemas.openxmlformats.org/package/2006/relationships"
cells = "".join('<c t="s"><v>0</v></c>' for _ in range(200))
rows = "".join('<row r="%d">%s</row>' % (i + 1, cells) for i in range(50))
parts = {
    "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
    "_rels/.rels": '<Relationships xmlns="%s"><Relationship Id="rId1" Type="%s/officeDocument" Target="xl/workbook.xml"/></Relationships>' % (pkg, rel),
    "xl/workbook.xml": '<workbook xmlns="%s" xmlns:r="%s"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>' % (main, rel),
    "xl/_rels/workbook.xml.rels": '<Relationships xmlns="%s"><Relationship Id="rId1" Type="%s/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="%s/sharedStrings" Target="sharedStrings.xml"/></Relationships>' % (pkg, rel, rel),
    "xl/sharedStrings.xml": '<sst xmlns="%s"><si><t>%s</t></si></sst>' % (main, "x" * 32767),
    "xl/worksheets/sheet1.xml": '<worksheet xmlns="%s"><sheetData>%s</sheetData></worksheet>' % (main, rows),
}
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for name, text in parts.items():
        z.writestr(name, text)
PYEOF
    ingest "$F/bomb.xlsx" && job_is "$JOB" failed 0 invalid_file || return 1
    expect_jq '.error.message | test("first rows of the file need more than 160 MiB")' || return 1
    printf 'PK\003\004not really a zip' > "$F/broken.xlsx"
    ingest "$F/broken.xlsx" && job_is "$JOB" failed 0 invalid_file || return 1
    expect_eq "job.failed events" 1 "$(it_sql "SELECT COUNT(*) FROM event_outbox WHERE job_id = '$JOB' AND event = 'job.failed'")" || return 1
    # 500,001 unique addresses
    seq 1 500001 | sed "s/.*/u&@$SB/" > "$F/many.txt"
    ingest "$F/many.txt" && job_is "$JOB" failed 0 too_many_emails || return 1
    # the balance is short of the unique count: failed, nothing charged
    poor=$(it_account pro 2)
    pkey=$(it_key "$poor" '*')
    before=$(balance "$poor")
    API_KEY=$pkey ingest "$F/list.txt" && API_KEY=$pkey job_is "$JOB" failed 0 insufficient_credits || return 1
    expect_eq "balance" "$before" "$(balance "$poor")" || return 1
    expect_eq "stored file of a job failed short of credits" 0 "$(chunks_of "$JOB")" || return 1
    expect_eq "rows of the job" 0 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB'")" || return 1
    API_KEY=$pkey http GET "/v1/jobs/$JOB"
    expect_json .credits_charged 0
}
t_case "ingestion failures: no_emails, invalid_file, too_many_emails, insufficient_credits (nothing charged, job.failed)" t_ingestion_failures

# Cells not shaped like an address are rows (invalid_syntax in results and
# downloads) but cost nothing (credit rule 2): not charged when ingestion
# ends, not in the balance check, never refunded; unknown results of the
# charged rows are refunded at completion as for a JSON bulk job.
cat > "$F/junk-cells.csv" <<EOF
Name,Email,Note
Ann,accepted_email@$SB,a
Bob,not an address,b
Cy,unknown@$SB,c
Di,"jane@gmail,com",d
Ed,rejected_email@$SB,e
Fi,NOT AN ADDRESS,dup
EOF

t_non_addresses_free() {
    local poor pkey before
    before=$(balance "$ACC")
    upload "$F/junk-cells.csv"
    expect_status 202 || return 1
    JOB=$(json .job_id)
    it_job_wait "$JOB" completed || return 1
    http GET "/v1/jobs/$JOB"
    expect_json .total_emails 5 && expect_json .duplicates_removed 1 && expect_json .credits_charged 3 &&
        expect_json .counts.unknown 1 && expect_json .credits_refunded 1 || return 1
    expect_eq "ledger" "charge 3|refund 1" \
        "$(it_sql "SELECT CONCAT(kind, ' ', amount) FROM credit_ledger WHERE ref LIKE 'job:$JOB:%' ORDER BY id" | paste -sd'|')" || return 1
    expect_eq "balance" "$((before - 2))" "$(balance "$ACC")" || return 1
    expect_eq "free rows" 2 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND charged = 0")" || return 1
    http GET "/v1/jobs/$JOB/results"
    expect_json '[.results[] | select(.reason == "invalid_syntax") | .email + "=" + .status] | join(",")' \
        "not an address=undeliverable,jane@gmail,com=undeliverable" || return 1
    http GET "/v1/jobs/$JOB/download?include_original=true"
    expect_status 200 || return 1
    # status, classification, sub_status (none), reason
    expect_eq "CSV rows of the free cells" 'Bob,not an address,b,undeliverable,invalid,,invalid_syntax|Di,"jane@gmail,com",d,undeliverable,invalid,,invalid_syntax' \
        "$(printf '%s\n' "$HTTP_BODY" | tr -d '\r' | grep -E '^(Bob|Di),' | sed -E 's/,invalid_syntax,.*/,invalid_syntax/' | paste -sd'|')" || return 1
    # the balance check counts the charged rows only: 3 credits are enough
    poor=$(it_account pro 3)
    pkey=$(it_key "$poor" '*')
    API_KEY=$pkey ingest "$F/junk-cells.csv" && API_KEY=$pkey job_is "$JOB" ok 5 || return 1
    API_KEY=$pkey it_job_wait "$JOB" completed || return 1
    API_KEY=$pkey http GET "/v1/jobs/$JOB"
    expect_json .credits_charged 3 && expect_json .credits_refunded 1 || return 1
    expect_eq "poor balance: 3 charged, the unknown result refunded" 1 "$(balance "$poor")"
}
t_case "cells that are no address are invalid_syntax rows, charged nothing at the end of ingestion nor in the balance check; unknown results are refunded" t_non_addresses_free

# file_unavailable: the job's stored file is gone when the worker comes
# to read it (its pieces deleted, as by an operator's clean-up)
t_file_unavailable() {
    local before
    before=$(balance "$ACC")
    upload "$F/contacts.csv"
    expect_status 202 || return 1
    JOB=$(json .job_id)
    expect_eq "stored pieces" 1 "$(chunks_of "$JOB")" || return 1
    it_sql "DELETE FROM upload_chunks WHERE job_id = '$JOB'"
    it_job_wait "$JOB" failed || return 1
    job_is "$JOB" failed 0 file_unavailable || return 1
    expect_jq '.error.message | test("no longer stored")' && expect_json .credits_charged 0 || return 1
    expect_eq "balance" "$before" "$(balance "$ACC")" || return 1
    expect_eq "job.failed events" 1 "$(it_sql "SELECT COUNT(*) FROM event_outbox WHERE job_id = '$JOB' AND event = 'job.failed'")"
}
t_case "an upload whose stored file is gone fails in ingestion with file_unavailable, nothing charged, job.failed" t_file_unavailable

# 503 from the upload endpoint: the file cannot be stored (its table is
# away for a moment); the answer says when to retry and nothing stays
t_upload_503_retry_after() {
    local jobs_before
    jobs_before=$(it_sql "SELECT COUNT(*) FROM jobs")
    it_sql "RENAME TABLE upload_chunks TO upload_chunks_away"
    upload "$F/contacts.csv"
    it_sql "RENAME TABLE upload_chunks_away TO upload_chunks"
    expect_status 503 && expect_json .error.code queue_unavailable && expect_header Retry-After 5 || return 1
    expect_eq "jobs" "$jobs_before" "$(it_sql "SELECT COUNT(*) FROM jobs")" || return 1
    upload "$F/contacts.csv"
    expect_status 202
}
t_case "an upload whose file cannot be stored is 503 queue_unavailable with Retry-After, nothing created" t_upload_503_retry_after

# batch jobs are kept 30 days from creation (jobs.expires_at), then
# housekeeping purges the job and its rows; a younger batch stays
t_batch_purged_after_expiry() {
    local old young
    http POST /v1/verify/batch "{\"emails\":[\"accepted_email@$SB\",\"unknown@$SB\"]}"
    expect_status 201 || return 1
    old=$(json .id)
    http POST /v1/verify/batch "{\"emails\":[\"accepted_email@$SB\"]}"
    expect_status 201 || return 1
    young=$(json .id)
    it_job_wait "$old" completed && it_job_wait "$young" completed || return 1
    expect_eq "30 days" 1 "$(it_sql "SELECT expires_at BETWEEN created_at + INTERVAL 30 DAY - INTERVAL 1 MINUTE AND created_at + INTERVAL 30 DAY + INTERVAL 1 MINUTE FROM jobs WHERE id = '$old'")" || return 1
    it_sql "UPDATE jobs SET created_at = created_at - INTERVAL 31 DAY, expires_at = expires_at - INTERVAL 31 DAY WHERE id = '$old'"
    for _ in $(seq 1 10); do
        it_worker_once || return 1
        [ "$(it_sql "SELECT COUNT(*) FROM jobs WHERE id = '$old' AND data_erased_at IS NOT NULL")" = 1 ] && break
    done
    expect_eq "rows of the expired batch" "1 0 0" "$(it_sql "SELECT (SELECT COUNT(*) FROM jobs WHERE id = '$old' AND data_erased_at IS NOT NULL),
        (SELECT COUNT(*) FROM job_emails WHERE job_id = '$old'), (SELECT COUNT(*) FROM job_chunks WHERE job_id = '$old')" | tr '\t' ' ')" || return 1
    # the job keeps its counts; its results are gone
    http GET "/v1/verify/batch/$old"
    expect_status 200 && expect_json .total_emails 2 && expect_jq '.data_erased_at | type == "string"' || return 1
    http GET "/v1/jobs/$old/results"
    expect_status 410 && expect_json .error.code job_data_erased || return 1
    http GET "/v1/verify/batch/$young"
    expect_status 200 && expect_json .status completed
}
t_case "housekeeping erases a batch job's data past its expires_at (30 days), the job keeps its counts; a younger one stays" t_batch_purged_after_expiry

t_cancel_while_ingesting() {
    local before
    before=$(balance "$ACC")
    upload "$F/contacts.csv"
    JOB=$(json .job_id)
    http DELETE "/v1/jobs/$JOB"
    expect_status 200 && expect_json .status cancelled && expect_json .credits_refunded 0 || return 1
    expect_eq "stored file after the cancellation" 0 "$(chunks_of "$JOB")" || return 1
    it_worker_once
    job_is "$JOB" cancelled 0 && expect_eq "balance" "$before" "$(balance "$ACC")"
}
t_case "a job cancelled while ingesting stays cancelled, nothing charged, its stored file deleted" t_cancel_while_ingesting

t_preview_without_stored_file() {
    local job
    upload "$F/contacts.csv" -F preview=true
    job=$(json .job_id)
    expect_eq "stored file before ingestion" 1 "$(chunks_of "$job")" || return 1
    it_job_wait "$job" awaiting_confirmation || return 1
    expect_eq "stored file of a job awaiting confirmation" 0 "$(chunks_of "$job")" || return 1
    # a refresh recomputes the preview from the rows
    http POST "/v1/verify/bulk/$job/preview?refresh=true" "" --data ""
    expect_status 202 && expect_json .refreshing true || return 1
    it_worker_once || return 1
    http POST "/v1/verify/bulk/$job/preview" "" --data ""
    expect_status 200 && expect_json .preview.total_emails 3 || return 1
    # a worker that died after the rows' transaction, before it stored the
    # preview (status ingesting, rows written, no file): the next one
    # computes the preview from the rows
    it_sql "UPDATE jobs SET status = 'ingesting', preview = NULL WHERE id = '$job'"
    it_job_wait "$job" awaiting_confirmation failed || return 1
    http POST "/v1/verify/bulk/$job/preview" "" --data ""
    expect_status 200 && expect_json .preview.total_emails 3 && expect_json .preview.duplicates_removed 1 || return 1
    # cancelled while awaiting confirmation: nothing stored is left
    http DELETE "/v1/jobs/$job"
    expect_status 200 && expect_eq "stored file" 0 "$(chunks_of "$job")"
}
t_case "a preview job's stored file goes with its rows; refreshes and a worker that died before the preview use the rows" t_preview_without_stored_file

t_progress_and_lease() {
    local pid st rows seen=0 i
    seq 1 300000 | sed "s/.*/row&,p&@$SB,some text to make the row longer/" > "$F/large.csv"
    upload "$F/large.csv"
    expect_status 202 || return 1
    JOB=$(json .job_id)
    # a worker killed while it reads the file: the next one reads it again
    "$top_builddir/src/worker/svc-worker" -c "$SVC_CONF" --once >> "$IT_DIR/log/worker-stderr.log" 2>&1 &
    pid=$!
    for i in $(seq 1 200); do
        http GET "/v1/jobs/$JOB/progress"
        st=$(json .status)
        rows=$(json '.ingestion.rows_read // 0')
        [ "$st" = ingesting ] && [ "$rows" -gt 0 ] && { seen=1; break; }
        [ "$st" = ingesting ] || break
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
    expect_eq "rows read seen on /progress while ingesting" 1 "$seen" || return 1
    # while its lease lasts, the killed worker's job is nobody else's
    it_worker_once || return 1
    expect_eq "ingesting still, under the dead worker's lease" "ingesting 0" \
        "$(it_sql "SELECT status, ingest_lease_expires < UTC_TIMESTAMP(3) FROM jobs WHERE id = '$JOB'" | tr '\t' ' ')" || return 1
    # the lease runs out (moved, not waited for): the next worker reads it
    it_sql "UPDATE jobs SET ingest_lease_expires = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE id = '$JOB'"
    it_job_wait "$JOB" pending processing completed || return 1
    job_is "$JOB" ok 300000 || job_is "$JOB" processing 300000 || job_is "$JOB" completed 300000 || return 1
    expect_eq "rows" 300000 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB'")" || return 1
    expect_eq "stored file once the rows are written" 0 "$(chunks_of "$JOB")" || return 1
    expect_eq "charged once" 1 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref = 'job:$JOB:charge'")" || return 1
    # not left for the next cases' workers to verify, 300,000 rows of it
    # (a fast build may have verified them all already: then 409)
    http DELETE "/v1/jobs/$JOB"
    case $(it_sql "SELECT status FROM jobs WHERE id = '$JOB'") in
    cancelled) expect_status 200 ;;
    completed) expect_status 409 && expect_json .error.code job_not_cancellable ;;
    *) it_fail "job $JOB is $(it_sql "SELECT status FROM jobs WHERE id = '$JOB'") after DELETE" ;;
    esac
}
t_case "progress shows rows read while ingesting; a worker killed mid-file leaves it to the next after the lease" t_progress_and_lease

t_retention_and_orphans() {
    local done_job wait_job
    upload "$F/contacts.csv"
    done_job=$(json .job_id)
    it_job_wait "$done_job" completed || return 1
    upload "$F/contacts.csv" -F preview=true
    wait_job=$(json .job_id)
    # pieces of uploads that never became a job: one from two hours ago
    # (its responder died), one still coming in
    it_sql "INSERT INTO upload_chunks (job_id, seq, data, created_at) VALUES
        ('job_orphan_old', 0, 'x', UTC_TIMESTAMP(3) - INTERVAL 2 HOUR),
        ('job_orphan_new', 0, 'x', UTC_TIMESTAMP(3))"
    it_worker_once || return 1
    expect_eq "orphan pieces left" "job_orphan_new" "$(it_sql "SELECT job_id FROM upload_chunks WHERE job_id LIKE 'job_orphan%'")" || return 1
    expect_eq "stored file of a recent job (gone with its rows)" 0 "$(chunks_of "$done_job")" || return 1
    # job_retention_days (90) after it ended, or after it was left waiting
    # for confirmation: its rows and its stored file go, the job stays
    it_sql "UPDATE jobs SET completed_at = UTC_TIMESTAMP(3) - INTERVAL 91 DAY WHERE id = '$done_job';
        UPDATE jobs SET created_at = UTC_TIMESTAMP(3) - INTERVAL 91 DAY WHERE id = '$wait_job'"
    it_worker_once || return 1
    expect_eq "rows of the erased jobs" "2 0 0" "$(it_sql "SELECT (SELECT COUNT(*) FROM jobs WHERE id IN ('$done_job', '$wait_job') AND data_erased_at IS NOT NULL),
        (SELECT COUNT(*) FROM job_emails WHERE job_id IN ('$done_job', '$wait_job')),
        (SELECT COUNT(*) FROM upload_chunks WHERE job_id IN ('$done_job', '$wait_job'))" | tr '\t' ' ')" || return 1
    it_sql "DELETE FROM upload_chunks WHERE job_id = 'job_orphan_new'"
}
t_case "housekeeping erases upload jobs' data (rows and stored file) after job_retention_days, and pieces whose upload never finished" t_retention_and_orphans

t_done
