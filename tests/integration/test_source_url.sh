#!/bin/bash
# test_source_url.sh: uploads by source_url, through lighttpd and svc-api,
# downloaded by the real svc-worker from an HTTPS file server on loopback
# (tests/integration/file_server.py, with a test CA made by certtool that
# the worker's ca_file trusts): a CSV fetched and ingested to completion;
# the file's format from the URL's extension, the Content-Type or its
# first bytes; redirects followed by hand (5 at most, each hop checked
# again: https only, private literals refused); 404 and a stalled server
# (source_url_timeout_seconds) give source_unreachable, a server that
# trickles (source_url_min_rate) source_too_slow; a body over 50 MB
# gives file_too_large while it streams, the worker's memory staying
# small; with allow_private_urls = no a name resolving to 127.0.0.1 is
# refused when the worker connects (DNS rebinding: svc-api accepted it);
# /progress while downloading, the lease renewed during a slow download,
# and a worker stopped mid-download giving its lease back. Nothing is
# charged for a failure, and job.failed is written.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/integration/outbound.sh"
outbound_certs

# python3-openpyxl is Debian's: the first python3 that has it writes XLSX
PY=python3
for p in python3 /usr/bin/python3; do "$p" -c 'import openpyxl' 2>/dev/null && { PY=$p; break; }; done

SB=sandbox.svc.example
F=$IT_DIR/files
mkdir -p "$F"
SERVED=$IT_DIR/served
outbound_server files file_server.py --dir "$F" --log "$SERVED"
PORT=$OUTBOUND_PORT
S=https://127.0.0.1:$PORT
SN=https://$ALIAS:$PORT

it_conf_add "allow_private_urls = yes
allow_url_ports = $PORT
ca_file = $IT_DIR/tls/ca.pem
worker_poll_interval = 1
worker_lease_seconds = 5
source_url_timeout_seconds = 60"
it_stack_start

# conf NAME LINE...: a copy of svc.conf with these settings changed or
# added, as IT_DIR/NAME.conf (for svc-worker only: svc-api keeps SVC_CONF)
conf() {
    local out=$IT_DIR/$1.conf kv
    shift
    cp "$SVC_CONF" "$out"
    for kv in "$@"; do
        sed -i "/^${kv%% = *} = /d" "$out"
        echo "$kv" >> "$out"
    done
    echo "$out"
}
NOPRIVATE=$(conf noprivate "allow_private_urls = no")
NETWORKS=$(conf networks "allow_private_urls = no" "allow_private_url_networks = 127.0.0.1/32")
SHORT=$(conf short "source_url_timeout_seconds = 5")

# admin tier (1,000 requests a minute): case 13 reads /progress every
# 0.2 s, which a pro key's 100 a minute does not allow on a fast machine
# (a 429 ended the loop early and a second worker downloaded the file again)
ACC=$(it_account admin 1000000)
API_KEY=$(it_key "$ACC" '*')
balance() { it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$ACC'"; }

# served PATH: requests the file server got for PATH
served() { jq -c --arg p "$1" 'select(.path == $p)' "$SERVED" | wc -l; }


# fetch URL [JSON-MEMBERS]: POST the upload of URL; JOB
fetch() {
    local m=${2:-}
    [ -n "$m" ] || m='{}'
    http POST /v1/verify/bulk/upload "$(jq -nc --arg u "$1" --argjson m "$m" '{source_url: $u} + $m')"
    expect_status 202 || return 1
    JOB=$(json .job_id)
}

# settle [CONF]: svc-worker --once until JOB leaves ingesting
settle() {
    local i st
    for i in $(seq 1 30); do
        once "${1:-}" || return 1
        st=$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")
        [ "$st" != ingesting ] && return 0
        sleep 0.5
    done
    it_fail "job $JOB is still ingesting"
}

# failed_with CODE [MESSAGE-REGEX]: JOB failed with CODE, nothing charged,
# nothing stored, one job.failed event
failed_with() {
    http GET "/v1/jobs/$JOB"
    expect_json .status failed && expect_json .error.code "$1" && expect_json .credits_charged 0 || return 1
    [ -z "${2:-}" ] || expect_jq ".error.message | test(\"$2\")" || return 1
    expect_eq "pieces stored of the failed job" 0 "$(it_sql "SELECT COUNT(*) FROM upload_chunks WHERE job_id = '$JOB'")" || return 1
    expect_eq "ledger rows of the failed job" 0 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref LIKE 'job:$JOB:%'")" || return 1
    expect_eq "job.failed events" 1 "$(it_sql "SELECT COUNT(*) FROM event_outbox WHERE job_id = '$JOB' AND event = 'job.failed'")"
}

cat > "$F/contacts.csv" <<EOF
Name,E-mail Address,Note
Ann,accepted_email@$SB,"says ""hi"", twice"
Bob,rejected_email@$SB,x
Cy,ACCEPTED_EMAIL@$SB,dup
Di,catch_all@$SB,
EOF

# ---------------------------------------------------------------- fetched

t_csv_to_completion() {
    local before
    before=$(balance)
    fetch "$S/files/contacts.csv" '{"name":"from a URL"}' || return 1
    expect_json .status ingesting && expect_json .preview false || return 1
    it_job_wait "$JOB" completed || return 1
    expect_eq "requests for the file" 1 "$(served /files/contacts.csv)" || return 1
    expect_eq "charged once per unique address" "$((before - 3))" "$(balance)" || return 1
    http GET "/v1/jobs/$JOB"
    expect_json .type upload && expect_json .name "from a URL" && expect_json .status completed &&
        expect_json .total_emails 3 && expect_json .duplicates_removed 1 && expect_json .credits_charged 3 || return 1
    http GET "/v1/jobs/$JOB/results"
    expect_json '[.results[] | .email + "=" + .status] | join(",")' \
        "accepted_email@$SB=deliverable,rejected_email@$SB=undeliverable,catch_all@$SB=unknown" || return 1
    http GET "/v1/jobs/$JOB/download?include_original=true"
    expect_eq "original header" "Name,E-mail Address,Note,svc_status" "$(printf '%s' "$HTTP_BODY" | head -n 1 | cut -d, -f1-4)" || return 1
    expect_eq "row of Ann" "Ann,accepted_email@$SB,\"says \"\"hi\"\", twice\",deliverable" \
        "$(printf '%s' "$HTTP_BODY" | sed -n 2p | cut -d, -f1-5)" || return 1
    expect_eq "format and size stored" "csv $(stat -c %s "$F/contacts.csv")" \
        "$(it_sql "SELECT CONCAT_WS(' ', file_format, file_size) FROM jobs WHERE id = '$JOB'")"
}
t_case "a CSV at a source_url is downloaded, ingested, charged once and verified, its columns kept" t_csv_to_completion

t_formats() {
    local tsv
    printf 'email\tname\naccepted_email@%s\tA\nrole_based@%s\tB\n' "$SB" "$SB" > "$F/list-tsv"
    printf 'accepted_email@%s\nunknown@%s\n' "$SB" "$SB" > "$F/list.txt"
    "$PY" - "$F/book-xlsx" "$SB" <<'PYEOF' || { it_fail "openpyxl could not write the workbook"; return 1; }
import sys, openpyxl
wb = openpyxl.Workbook()
ws = wb.active
ws.append(["id", "Email Address"])
ws.append([1, "accepted_email@" + sys.argv[2]])
ws.append([2, "rejected_email@" + sys.argv[2]])
wb.save(sys.argv[1])
PYEOF
    # no extension: the Content-Type says TSV
    fetch "$S/files/list-tsv?type=text/tab-separated-values;%20charset=utf-8" && settle || return 1
    tsv=$JOB
    # no extension, no useful Content-Type: a zip is XLSX
    fetch "$S/files/book-xlsx?chunked=1" && settle || return 1
    http GET "/v1/jobs/$JOB"
    expect_json .total_emails 2 || return 1
    # the extension of the URL that served the file (after a redirect)
    fetch "$S/redirect/1?to=/files/list.txt" && settle || return 1
    local txt=$JOB
    # the extension wins over the Content-Type
    fetch "$S/files/contacts.csv?type=text/tab-separated-values" && settle || return 1
    expect_eq "formats" "tsv xlsx txt csv" "$(for j in "$tsv" "$(it_sql "SELECT id FROM jobs WHERE account_id = '$ACC' AND source_url LIKE '%book-xlsx%'")" "$txt" "$JOB"; do
        it_sql "SELECT file_format FROM jobs WHERE id = '$j'"; done | xargs)" || return 1
    expect_eq "addresses" "2 2 2 3" "$(for j in "$tsv" "$(it_sql "SELECT id FROM jobs WHERE account_id = '$ACC' AND source_url LIKE '%book-xlsx%'")" "$txt" "$JOB"; do
        it_sql "SELECT total_emails FROM jobs WHERE id = '$j'"; done | xargs)"
}
t_case "the format: the URL's extension (of the last hop, else the given URL), else the Content-Type, else a zip is XLSX" t_formats

t_redirects() {
    local before n
    # one hop, and five (the most), with 301, 307 and 308 too
    fetch "$S/redirect/1?to=/files/contacts.csv" && settle || return 1
    http GET "/v1/jobs/$JOB"
    expect_json .total_emails 3 || return 1
    for code in 301 307 308; do
        fetch "$S/redirect/5?code=$code&to=/files/contacts.csv" && settle || return 1
        http GET "/v1/jobs/$JOB"
        expect_jq '.status != "failed"' && expect_json .total_emails 3 || return 1
    done
    # six: refused before the file is asked for
    before=$(served /files/contacts.csv)
    fetch "$S/redirect/6?to=$S/files/contacts.csv" && settle || return 1
    failed_with source_unreachable "more than 5" || return 1
    expect_eq "requests for the file after 6 redirects" "$before" "$(served /files/contacts.csv)" || return 1
    n=$(jq -c 'select(.path | startswith("/redirect/")) | select(.query | contains("files/contacts.csv")) | select(.query | contains("code") | not)' "$SERVED" | wc -l)
    expect_eq "redirects followed (1 + 6)" 7 "$n"
}
t_case "redirects are followed by hand: 1 and 5 hops (301, 302, 307, 308) are fine, 6 give source_unreachable" t_redirects

t_not_found() {
    fetch "$S/files/missing.csv" && settle || return 1
    failed_with source_unreachable "404" || return 1
    # a redirect to a 404, a certificate not for the name asked for, a
    # connection refused
    fetch "$S/redirect/1?to=/nothing.csv" && settle || return 1
    failed_with source_unreachable "404" || return 1
    fetch "https://localhost:$PORT/files/contacts.csv" && settle || return 1
    failed_with source_unreachable "tls_failed" || return 1
    fetch "https://127.0.0.2:$PORT/files/contacts.csv" && settle || return 1
    failed_with source_unreachable "connect_failed" || return 1
    # an empty file
    : > "$F/empty.csv"
    fetch "$S/files/empty.csv" && settle || return 1
    failed_with no_emails "empty"
}
t_case "a 404 (also after a redirect), a certificate for another name and a refused connection give source_unreachable; an empty file no_emails" t_not_found

t_https_only() {
    # svc-api refuses http even with allow_private_urls = yes
    http POST /v1/verify/bulk/upload "{\"source_url\":\"http://127.0.0.1:$PORT/files/contacts.csv\"}"
    expect_status 400 && expect_json .error.code invalid_source_url && expect_json .error.details.field source_url &&
        expect_jq '.error.message | test("https://")' || return 1
    # and so does the worker at a redirect
    fetch "$S/redirect/1?to=http://127.0.0.1:$PORT/files/contacts-http.csv" && settle || return 1
    failed_with source_unreachable "not allowed.*https://" || return 1
    expect_eq "requests over http" 0 "$(served /files/contacts-http.csv)"
}
t_case "https only: svc-api refuses an http source_url, the worker a redirect to http (allow_private_urls = yes)" t_https_only

# ---------------------------------------------------------------- guard

t_rebinding_refused() {
    local before
    before=$(served /files/contacts.csv)
    # svc-api cannot know where the name goes: 202; the worker with
    # allow_private_urls = no refuses 127.0.0.1 when it connects
    fetch "$SN/files/contacts.csv" && settle "$NOPRIVATE" || return 1
    # the customer is told "refused address", never which one; the
    # operator's log names it
    failed_with source_unreachable "resolves to a refused address$" || return 1
    expect_jq '.error.message | test("127\\.0\\.0\\.1") | not' || return 1
    grep -q 'event=url_address_refused address=127\.0\.0\.1$' "$IT_DIR"/log/*.log ||
        it_fail "no event=url_address_refused line naming 127.0.0.1 in the log" || return 1
    expect_eq "requests that reached the server" "$before" "$(served /files/contacts.csv)" || return 1
    # the same URL with allow_private_urls = yes: fetched
    fetch "$SN/files/contacts.csv" && settle || return 1
    http GET "/v1/jobs/$JOB"
    expect_json .total_emails 3
}
t_case "allow_private_urls = no: a name resolving to 127.0.0.1 is refused when the worker connects (rebinding), the job's error not naming the address" t_rebinding_refused

# Ports: 443 (and 80 for http) and those allow_url_ports lists ($PORT here)
t_port_not_allowed() {
    local other=$((PORT == 65535 ? PORT - 1 : PORT + 1)) before
    http POST /v1/verify/bulk/upload "{\"source_url\":\"https://127.0.0.1:$other/files/contacts.csv\"}"
    expect_status 400 && expect_json .error.code invalid_source_url && expect_jq '.error.message | test("port")' || return 1
    http POST /v1/verify/bulk/upload "{\"source_url\":\"https://127.0.0.1:22/files/contacts.csv\"}"
    expect_status 400 && expect_json .error.code invalid_source_url || return 1
    # a redirect to a port not listed is refused by the worker before it connects
    before=$(served /files/contacts.csv)
    fetch "$S/redirect/1?to=https://127.0.0.1:$other/files/contacts.csv" && settle || return 1
    failed_with source_unreachable "redirected to a URL that is not allowed.*port" || return 1
    # a copy of the configuration that lists another port: $PORT is refused
    fetch "$S/files/contacts.csv" && settle "$(conf noports "allow_url_ports = 9")" || return 1
    failed_with source_unreachable "not allowed.*port" || return 1
    expect_eq "requests for the file" "$before" "$(served /files/contacts.csv)"
}
t_case "a source_url (or a redirect) naming a port other than 443 or one of allow_url_ports is refused" t_port_not_allowed

t_redirect_to_private() {
    local before
    # allow_private_urls = no, 127.0.0.1 allowed by allow_private_url_networks
    # for names resolving to it: the name is fetched
    fetch "$SN/files/contacts.csv" && settle "$NETWORKS" || return 1
    http GET "/v1/jobs/$JOB"
    expect_json .total_emails 3 || return 1
    # a redirect to a private literal is refused before any connection
    before=$(served /files/contacts.csv)
    fetch "$SN/redirect/1?to=https://127.0.0.1:$PORT/files/contacts.csv" && settle "$NETWORKS" || return 1
    failed_with source_unreachable "redirected to a URL that is not allowed.*private" || return 1
    fetch "$SN/redirect/2?to=https://169.254.169.254/latest/meta-data/" && settle "$NETWORKS" || return 1
    failed_with source_unreachable "redirected to a URL that is not allowed.*private" || return 1
    fetch "$SN/redirect/1?to=https://localhost:$PORT/files/contacts.csv" && settle "$NETWORKS" || return 1
    failed_with source_unreachable "localhost" || return 1
    expect_eq "requests for the file" "$before" "$(served /files/contacts.csv)"
}
t_case "each redirect is checked again: to a private address or localhost it is refused (allow_private_urls = no)" t_redirect_to_private

# ---------------------------------------------------------------- size, time

# hwm PID: the peak resident memory of PID, in KiB
hwm() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }

t_too_large() {
    local i st peak base chunks=0 c
    # ASan keeps freed memory in its quarantine (256 MB by default): none,
    # so that the peak shows what the worker holds (ignored without ASan)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0" daemon
    sleep 2
    base=$(hwm "$DAEMON")
    # a CSV that never ends (chunked, no length announced)
    fetch "$S/endless" || { stop_daemon; return 1; }
    for i in $(seq 1 600); do
        st=$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")
        c=$(it_sql "SELECT COUNT(*) FROM upload_chunks WHERE job_id = '$JOB'")
        [ "$c" -gt "$chunks" ] && chunks=$c
        [ "$st" = ingesting ] || break
        sleep 0.1
    done
    peak=$(hwm "$DAEMON")
    stop_daemon
    failed_with file_too_large "larger than 50 MB" || return 1
    it_log "worker VmHWM ${base} KiB idle, ${peak} KiB after; pieces seen at most $chunks"
    # streamed into the store as it came (about 50 pieces of 1 MiB), the
    # worker's memory far below the file's size: under 100 MB in all, and
    # grown by less than 35 MB (the 50 MB held would be more)
    [ "$chunks" -ge 10 ] || it_fail "pieces stored while downloading: $chunks" || return 1
    [ "$peak" -lt 102400 ] || it_fail "worker VmHWM $peak KiB, not under 100 MB" || return 1
    [ $((peak - base)) -lt 35840 ] || it_fail "worker VmHWM grew by $((peak - base)) KiB while downloading" || return 1
    # a Content-Length over 50 MB is refused at once
    fetch "$S/endless?length=60000000" && settle || return 1
    failed_with file_too_large "larger than 50 MB"
}
t_case "over 50 MB: file_too_large while streaming (the worker's VmHWM under 100 MB), or at once from Content-Length" t_too_large

t_timeout() {
    local t0 t1
    t0=$(date +%s)
    fetch "$S/stall" && settle "$SHORT" || return 1
    t1=$(date +%s)
    failed_with source_unreachable "too long" || return 1
    [ $((t1 - t0)) -lt 30 ] || it_fail "the stalled download took $((t1 - t0)) s (source_url_timeout_seconds = 5)"
}
t_case "a download that takes longer than source_url_timeout_seconds gives source_unreachable" t_timeout

t_too_slow() {
    local slow t0 t1
    slow=$(conf slow "source_url_min_rate = 1000" "source_url_min_rate_seconds = 2")
    seq 1 20000 | sed "s/.*/row&,t&@$SB/" > "$F/trickle.csv"
    # about 100 bytes a second, the whole file some hours: stopped once
    # 2 seconds pass under 1000 bytes a second, long before the 60 s limit
    t0=$(date +%s)
    fetch "$S/files/trickle.csv?rate=100" && settle "$slow" || return 1
    t1=$(date +%s)
    failed_with source_too_slow "slower than 1000 bytes a second over 2 seconds" || return 1
    expect_eq "requests for the trickling file" 1 "$(served /files/trickle.csv)" || return 1
    [ $((t1 - t0)) -lt 50 ] || it_fail "the trickling download took $((t1 - t0)) s (source_url_timeout_seconds = 60)" || return 1
    # the same minimum lets a file that comes at full speed through
    fetch "$S/files/contacts.csv" && settle "$slow" || return 1
    http GET "/v1/jobs/$JOB"
    expect_jq '.status != "failed"' && expect_json .total_emails 3
}
t_case "a source_url that trickles under source_url_min_rate for source_url_min_rate_seconds fails with source_too_slow" t_too_slow

# The API accepts a source_url before its size is known: the worker holds
# the download to what account_upload_storage_mb leaves the account.
t_storage_cap() {
    local small
    small=$(conf storage "account_upload_storage_mb = 1")
    seq 1 150000 | sed "s/.*/s&@$SB/" > "$F/over-cap.csv"
    fetch "$S/files/over-cap.csv" && settle "$small" || return 1
    failed_with upload_storage_exceeded "would pass 1 MiB .account_upload_storage_mb" || return 1
    # a file that fits the same cap goes through
    fetch "$S/files/contacts.csv" && settle "$small" || return 1
    http GET "/v1/jobs/$JOB"
    expect_jq '.status != "failed"' && expect_json .total_emails 3
}
t_case "a source_url file that would pass account_upload_storage_mb fails with upload_storage_exceeded, nothing kept or charged" t_storage_cap

t_progress_and_lease() {
    local i st phase bytes seen=0 grew=0 first_exp renewed=0 last=0
    seq 1 40000 | sed "s/.*/row&,p&@$SB/" > "$F/slow.csv"
    # about 1 MB at 100 KB/s: some 10 s, twice worker_lease_seconds
    fetch "$S/files/slow.csv?rate=100000" || return 1
    daemon
    for i in $(seq 1 300); do
        http GET "/v1/jobs/$JOB/progress"
        expect_status 200 || { stop_daemon; return 1; }
        st=$(json .status)
        [ "$st" = ingesting ] || break
        phase=$(json '.ingestion.phase')
        bytes=$(json '.ingestion.bytes_read')
        if [ "$phase" = downloading ] && [ "$bytes" -gt 0 ]; then
            [ "$seen" = 1 ] || first_exp=$(it_sql "SELECT ingest_lease_expires FROM jobs WHERE id = '$JOB'")
            seen=1
            expect_json .ingestion.bytes_total "$(stat -c %s "$F/slow.csv")" || { stop_daemon; return 1; }
            [ "$bytes" -gt "$last" ] && [ "$last" -gt 0 ] && grew=1
            last=$bytes
            # past the first lease's end the lease is still this worker's
            [ "$(it_sql "SELECT UTC_TIMESTAMP(3) > '$first_exp' + INTERVAL 1 SECOND AND ingest_lease_expires > UTC_TIMESTAMP(3) AND ingest_owner IS NOT NULL FROM jobs WHERE id = '$JOB'")" = 1 ] && renewed=1
        fi
        sleep 0.2
    done
    stop_daemon
    expect_eq "phase downloading with bytes on /progress" 1 "$seen" || return 1
    expect_eq "bytes downloaded growing" 1 "$grew" || return 1
    expect_eq "the lease renewed past its first end" 1 "$renewed" || return 1
    it_job_wait "$JOB" pending processing completed || return 1
    http GET "/v1/jobs/$JOB"
    expect_json .total_emails 40000 || return 1
    expect_eq "downloads of the file" 1 "$(served /files/slow.csv)"
}
t_case "/progress shows the download (phase, bytes, length); the lease is renewed while a slow download runs" t_progress_and_lease

t_stop_gives_back() {
    local t0 t1
    fetch "$S/stall" || return 1
    daemon
    for _ in $(seq 1 100); do
        [ "$(it_sql "SELECT ingest_owner IS NOT NULL FROM jobs WHERE id = '$JOB'")" = 1 ] && break
        sleep 0.1
    done
    sleep 1
    t0=$(date +%s%N)
    stop_daemon
    t1=$(date +%s%N)
    [ $(((t1 - t0) / 1000000)) -lt 5000 ] || it_fail "the worker took $(((t1 - t0) / 1000000)) ms to stop mid-download" || return 1
    expect_eq "status, owner, pieces" "ingesting 1 0" "$(it_sql "SELECT CONCAT_WS(' ', status, ingest_owner IS NULL, (SELECT COUNT(*) FROM upload_chunks WHERE job_id = '$JOB')) FROM jobs WHERE id = '$JOB'")" || return 1
    # cancelled, so that no later worker stalls on it
    http DELETE "/v1/jobs/$JOB"
    expect_status 200
}
t_case "a worker stopped mid-download stops at once and gives its lease back, nothing stored" t_stop_gives_back

t_done
