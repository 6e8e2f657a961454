#!/bin/bash
# test_ledger.sh: runs tests/integration/db_ledger (the credit ledger and the
# Idempotency-Key store, with concurrent processes) against a real MariaDB,
# and checks that "svcadm credits check" finds a pool whose running totals
# no longer add up to its ledger rows, and that a grant whose COMMIT was
# applied but whose answer was lost (tests/integration/commit_drop_proxy.py
# between svcadm and MariaDB) is made once, not again by the retry; the
# same for delivery outcomes stored by svcadm feedback import, and for
# svc-api's webhooks (create, test, rotate, delete), a job's cancellation,
# an upload's confirmation and suppressions added (a lighttpd and svc-api
# of their own on the proxy): the client gets the answer of what was done,
# not an error. With an Idempotency-Key, a key, an upload, a bulk job, a
# confirmation and suppressions store their answer in the same
# transaction (the retry replays what the first one made): when the
# database node dies with that COMMIT (the proxy then refuses connections
# until the test brings it back), the retry replays the answer rather
# than finding the key still running (409); when it dies before the
# answer (in the request's work, or with the key's own INSERT), svc-api
# deletes the request's running row once the node is back, and the retry
# runs. A flush of the rows kept to delete, tried while the node is still
# down, keeps them (db_ledger through the proxy); a request whose node
# comes back within IDEMPOTENCY_ABANDON_TRY_MS deletes its row itself; a
# retry that finds its key running on another host waits for that entry
# to be answered or abandoned (IDEMPOTENCY_IN_USE_WAIT_MS) rather than
# answering 409.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_conf_add "feedback_hash_key_file = $IT_DIR/feedback-hash-key
allow_private_urls = yes"
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
    local rc=0
    it_commit_drop_proxy proxy || return 1
    touch "$IT_DIR/proxy.arm"
    LOST_OUT=$("$top_builddir/src/admin/svcadm" -c "$IT_DIR/proxy.conf" "$@" 2> "$IT_DIR/lost.err") || rc=$?
    kill "$IT_PROXY_PID"; wait "$IT_PROXY_PID" 2>/dev/null
    [ "$rc" = 0 ] || { it_fail "svcadm $1 $2 failed: $LOST_OUT $(cat "$IT_DIR/lost.err")"; return 1; }
    expect_eq "answers dropped by the proxy" 1 "$(it_proxy_dropped proxy)"
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

# ------------------------------------------- svc-api on the proxy
# A proxy for the rest of the script, armed by writing a statement's text
# to proxy-api.arm: the next COMMIT of a transaction that ran it loses its
# answer. svc-api (its own lighttpd) reaches MariaDB only through it.
it_commit_drop_proxy proxy-api || { echo "Bail out! commit_drop_proxy.py did not start"; exit 1; }
API_PROXY=$IT_PROXY_PID
trap 'rc=$?; kill "$API_PROXY" 2>/dev/null; it_cleanup "$rc"' EXIT
HTTP_PORT=$(stack_free_port)
BASE_URL=http://127.0.0.1:$HTTP_PORT
stack_lighttpd_start "$IT_DIR/lighttpd" "$HTTP_PORT" "$(it_api)" "$IT_DIR/proxy-api.conf" ||
    { echo "Bail out! lighttpd with svc-api on the proxy did not start"; exit 1; }
ACC=$(svcadm account create --email "api$RANDOM@example.com" --tier admin --credits 100)
API_KEY=$(svcadm key create --account "$ACC" --scopes '*')

t_flush_while_down() {
    SVC_PROXY_CONF=$IT_DIR/proxy-api.conf SVC_PROXY_ARM=$IT_DIR/proxy-api.arm "$prog"
    local rc=$?
    rm -f "$IT_DIR/proxy-api.arm" "$IT_DIR/proxy-api.arm.down"
    return $rc
}
t_case "db_ledger: a flush of the Idempotency-Key entries left to abandon, tried while the database node is down (the proxy), keeps them; once it is back the next deletes the rows and forgets them" t_flush_while_down

# arm TEXT: the next COMMIT after a statement with TEXT loses its answer
arm() { printf '%s' "$1" > "$IT_DIR/proxy-api.arm"; }
dropped() { it_proxy_dropped proxy-api; }
# down TEXT: the same, and the database node then stays dead (every
# connection closed, svc-api's other processes' too, and new ones at once,
# so svc-api gets no further: a host that died after the COMMIT leaves the
# same) until back
down() { printf 'down:%s' "$1" > "$IT_DIR/proxy-api.arm"; }
back() { rm -f "$IT_DIR/proxy-api.arm.down"; }

t_lost_commit_webhooks() {
    local n id
    n=$(dropped)
    arm "INSERT INTO webhooks ("
    http POST /v1/webhooks '{"url":"https://127.0.0.1/hook"}'
    expect_status 201 || return 1
    id=$(json .id)
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    expect_eq "webhooks of the account" 1 "$(it_sql "SELECT COUNT(*) FROM webhooks WHERE account_id = '$ACC'")" || return 1
    expect_eq "the secret answered is the one stored" 1 \
        "$(it_sql "SELECT COUNT(*) FROM webhook_secrets WHERE webhook_id = '$id' AND secret = '$(json .secret)'")" || return 1
    # a test event: the delivery answered is the one stored, still to send
    arm "INSERT INTO event_deliveries ("
    http POST "/v1/webhooks/$id/test" "" --data ""
    expect_status 202 || return 1
    expect_eq "answers dropped" $((n + 2)) "$(dropped)" || return 1
    expect_eq "the test's deliveries: the one answered, pending" "$(json .delivery_id) pending" \
        "$(it_sql "SELECT id, state FROM event_deliveries WHERE webhook_id = '$id'" | tr '\t' ' ')" || return 1
    # a rotation: one new secret, the one answered
    arm "INSERT INTO webhook_secrets ("
    http POST "/v1/webhooks/$id/rotate-secret" '{}'
    expect_status 200 || return 1
    expect_eq "answers dropped" $((n + 3)) "$(dropped)" || return 1
    expect_eq "secrets: the first and the one answered" "2 1" \
        "$(it_sql "SELECT COUNT(*), SUM(secret = '$(json .secret)') FROM webhook_secrets WHERE webhook_id = '$id'" | tr '\t' ' ')" || return 1
    arm "DELETE FROM webhooks WHERE id"
    http DELETE "/v1/webhooks/$id"
    expect_status 200 && expect_json .deleted true || return 1
    expect_eq "answers dropped" $((n + 4)) "$(dropped)" || return 1
    expect_eq "webhooks left" 0 "$(it_sql "SELECT COUNT(*) FROM webhooks WHERE id = '$id'")"
}
t_case "svc-api: a webhook created, tested, its secret rotated, then deleted, each COMMIT's answer lost: 201 with the stored secret, 202 with the stored delivery, one new secret (the one answered), 200 (not a 500, a delivery never stored, two new secrets, a 404)" t_lost_commit_webhooks

t_lost_commit_cancel() {
    local n job
    n=$(dropped)
    http POST /v1/verify/bulk '{"emails":["a@one.example","b@one.example","c@one.example"]}'
    case $HTTP_STATUS in 201|202) ;; *) it_fail "creating the job: $HTTP_STATUS $(it_body_excerpt)"; return 1 ;; esac
    job=$(json .job_id)
    arm "UPDATE jobs SET status = ?, credits_refunded"
    http DELETE "/v1/jobs/$job"
    expect_status 200 || return 1
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    expect_eq "status, one refund of the three" "cancelled 1 3" \
        "$(it_sql "SELECT status, (SELECT COUNT(*) FROM credit_ledger WHERE ref = 'job:$job:refund'), credits_refunded FROM jobs WHERE id = '$job'" | tr '\t' ' ')" || return 1
    expect_eq "svcadm credits check" ok "$(svcadm credits check "$ACC")"
}
t_case "svc-api: a job cancelled whose COMMIT's answer was lost: 200, cancelled, refunded once (not a 409)" t_lost_commit_cancel

t_lost_commit_confirm() {
    local n job
    n=$(dropped)
    printf '%s\n' email valid@sandbox.svc.example mailbox_full@sandbox.svc.example > "$IT_DIR/confirm.csv"
    http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/confirm.csv" -F preview=true
    expect_status 202 || return 1
    job=$(json .job_id)
    it_job_wait "$job" awaiting_confirmation || return 1
    arm "UPDATE jobs SET status = ?, credits_charged"
    http POST "/v1/verify/bulk/$job/confirm" "" --data ""
    expect_status 200 && expect_json .status pending || return 1
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    expect_eq "charges of the job" "$(it_sql "SELECT IF(credits_needed > 0, 1, 0) FROM jobs WHERE id = '$job'")" \
        "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref = 'job:$job:charge'")" || return 1
    expect_eq "svcadm credits check" ok "$(svcadm credits check "$ACC")"
}
t_case "svc-api: an upload confirmed whose COMMIT's answer was lost: 200 pending, charged once (not a 409)" t_lost_commit_confirm

t_lost_commit_suppressions() {
    local n
    n=$(dropped)
    arm "INSERT IGNORE INTO suppressions"
    http POST /v1/suppressions '{"entries":["x1@lost.example","x2@lost.example","@lost2.example"]}'
    expect_status 201 && expect_json .added 3 && expect_json .existing 0 || return 1
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    expect_eq "entries stored" 3 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$ACC'")"
}
t_case "svc-api: suppressions added whose COMMIT's answer was lost: added 3 (not 0 and 3 existing)" t_lost_commit_suppressions

t_lost_idempotency_insert() {
    local n id
    n=$(dropped)
    # the answer to the Idempotency-Key's own INSERT lost (its node died
    # after applying it): the request finds its own row, not another's
    arm "autocommit:INSERT INTO idempotency_keys ("
    http POST /v1/keys '{"name":"lost-idem","scopes":["jobs:read"]}' -H 'Idempotency-Key: lost-idem-1'
    expect_status 201 || return 1
    id=$(json .id)
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    http POST /v1/keys '{"name":"lost-idem","scopes":["jobs:read"]}' -H 'Idempotency-Key: lost-idem-1'
    expect_status 201 && expect_header Idempotent-Replayed true && expect_json .id "$id" || return 1
    expect_eq "keys named lost-idem" 1 "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$ACC' AND name = 'lost-idem'")"
    expect_eq "the Idempotency-Key's row" "done 201" \
        "$(it_sql "SELECT state, status FROM idempotency_keys WHERE account_id = '$ACC' AND idem_key = 'lost-idem-1'" | tr '\t' ' ')"
}
t_case "svc-api: a request whose Idempotency-Key INSERT lost its answer (applied) goes on (201, not 409 idempotency_key_in_use to itself and every retry for 5 minutes); the retry replays it" t_lost_idempotency_insert

t_lost_commit_key() {
    local n id
    n=$(dropped)
    arm "INSERT INTO api_keys ("
    http POST /v1/keys '{"name":"lost-key","scopes":["jobs:read"]}' -H 'Idempotency-Key: lost-key-1'
    expect_status 201 && expect_jq '.key | startswith("svc_live_")' || return 1
    id=$(json .id)
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    expect_eq "keys named lost-key" 1 "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$ACC' AND name = 'lost-key'")" || return 1
    # its Idempotency-Key answer was written in the key's transaction
    expect_eq "the Idempotency-Key's row" "done 201" \
        "$(it_sql "SELECT state, status FROM idempotency_keys WHERE account_id = '$ACC' AND idem_key = 'lost-key-1'" | tr '\t' ' ')" || return 1
    http POST /v1/keys '{"name":"lost-key","scopes":["jobs:read"]}' -H 'Idempotency-Key: lost-key-1'
    expect_status 201 && expect_header Idempotent-Replayed true && expect_json .id "$id" && expect_json .key null
}
t_case "svc-api: a key created whose COMMIT's answer was lost (the key and its Idempotency-Key answer in one transaction): 201 with the key, one key, the answer stored; the retry replays it without the key's text" t_lost_commit_key

t_lost_commit_upload() {
    local n job
    n=$(dropped)
    printf '%s\n' email u1@lostup.example u2@lostup.example > "$IT_DIR/lostup.csv"
    lost_upload_send() {
        http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/lostup.csv" -F preview=true \
            -F name=lost-upload -H 'Idempotency-Key: lost-upload-1'
    }
    arm "'upload', ?, 'ingesting'"
    lost_upload_send
    expect_status 202 || return 1
    job=$(json .job_id)
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    expect_eq "jobs named lost-upload" 1 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$ACC' AND name = 'lost-upload'")" || return 1
    expect_eq "the Idempotency-Key's row" "done 202" \
        "$(it_sql "SELECT state, status FROM idempotency_keys WHERE account_id = '$ACC' AND idem_key = 'lost-upload-1'" | tr '\t' ' ')" || return 1
    # its file's pieces were kept: it is ingested
    it_job_wait "$job" awaiting_confirmation || return 1
    lost_upload_send
    expect_status 202 && expect_header Idempotent-Replayed true && expect_json .job_id "$job" || return 1
    expect_eq "jobs named lost-upload" 1 "$(it_sql "SELECT COUNT(*) FROM jobs WHERE account_id = '$ACC' AND name = 'lost-upload'")"
}
t_case "svc-api: an upload whose COMMIT's answer was lost (the job and its Idempotency-Key answer in one transaction, run again): 202 with the job, its file kept and ingested, one job; the retry replays it (not a 503 and the file's pieces deleted)" t_lost_commit_upload

t_lost_commit_bulk() {
    local n job body='{"name":"lost-bulk","emails":["b1@lostbulk.example","b2@lostbulk.example"]}'
    n=$(dropped)
    arm "pending', ?, ?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3)"
    http POST /v1/verify/bulk "$body" -H 'Idempotency-Key: lost-bulk-1'
    expect_status 202 && expect_json .credits_charged 2 || return 1
    job=$(json .job_id)
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    expect_eq "jobs named lost-bulk, charges of the job" "1 1" \
        "$(it_sql "SELECT COUNT(*), (SELECT COUNT(*) FROM credit_ledger WHERE ref = 'job:$job:charge') FROM jobs WHERE account_id = '$ACC' AND name = 'lost-bulk'" | tr '\t' ' ')" || return 1
    http POST /v1/verify/bulk "$body" -H 'Idempotency-Key: lost-bulk-1'
    expect_status 202 && expect_header Idempotent-Replayed true && expect_json .job_id "$job" || return 1
    expect_eq "svcadm credits check" ok "$(svcadm credits check "$ACC")"
}
t_case "svc-api: a bulk job whose COMMIT's answer was lost (the job and its Idempotency-Key answer in one transaction): 202 with the job, charged once (not a 503 for a job made); the retry replays it" t_lost_commit_bulk

t_down_after_confirm() {
    local n job needed first
    n=$(dropped)
    printf '%s\n' email c1@downconfirm.example c2@downconfirm.example c3@downconfirm.example > "$IT_DIR/downconfirm.csv"
    http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/downconfirm.csv" -F preview=true
    expect_status 202 || return 1
    job=$(json .job_id)
    it_job_wait "$job" awaiting_confirmation || return 1
    needed=$(it_sql "SELECT credits_needed FROM jobs WHERE id = '$job'")
    [ "$needed" -gt 0 ] || { it_fail "job $job needs no credit"; return 1; }
    # the node dies with the COMMIT: svc-api cannot store anything after it
    down "UPDATE jobs SET status = ?, credits_charged"
    http POST "/v1/verify/bulk/$job/confirm" "" --data "" -H 'Idempotency-Key: down-confirm-1'
    back
    expect_status 503 || return 1
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    expect_eq "status, charges of the job" "pending 1" \
        "$(it_sql "SELECT status, (SELECT COUNT(*) FROM credit_ledger WHERE ref = 'job:$job:charge') FROM jobs WHERE id = '$job'" | tr '\t' ' ')" || return 1
    http POST "/v1/verify/bulk/$job/confirm" "" --data "" -H 'Idempotency-Key: down-confirm-1'
    expect_status 200 && expect_header Idempotent-Replayed true && expect_json .job_id "$job" &&
        expect_json .status pending && expect_json .credits_charged "$needed" || return 1
    first=$HTTP_BODY
    http POST "/v1/verify/bulk/$job/confirm" "" --data "" -H 'Idempotency-Key: down-confirm-1'
    expect_status 200 && expect_header Idempotent-Replayed true || return 1
    expect_eq "the replay, again" "$first" "$HTTP_BODY" || return 1
    expect_eq "charges of the job" 1 "$(it_sql "SELECT COUNT(*) FROM credit_ledger WHERE ref = 'job:$job:charge'")" || return 1
    expect_eq "svcadm credits check" ok "$(svcadm credits check "$ACC")"
}
t_case "svc-api: a confirmation whose database node died with its COMMIT (applied): 503, then the retry with the same Idempotency-Key replays 200 pending with the job, charged once (not 409 idempotency_key_in_use, then job_not_awaiting_confirmation)" t_down_after_confirm

t_idempotent_suppressions() {
    local n first
    n=$(dropped)
    arm "INSERT IGNORE INTO suppressions"
    http POST /v1/suppressions '{"entries":["i1@idem.example","i2@idem.example"]}' -H 'Idempotency-Key: lost-supp-1'
    expect_status 201 && expect_json .added 2 && expect_json .existing 0 || return 1
    first=$HTTP_BODY
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    http POST /v1/suppressions '{"entries":["i1@idem.example","i2@idem.example"]}' -H 'Idempotency-Key: lost-supp-1'
    expect_status 201 && expect_header Idempotent-Replayed true || return 1
    expect_eq "the replay" "$first" "$HTTP_BODY" || return 1
    # the node dies with the COMMIT: svc-api cannot store anything after it
    down "INSERT IGNORE INTO suppressions"
    http POST /v1/suppressions '{"entries":["d1@down.example","d2@down.example","@down2.example"]}' -H 'Idempotency-Key: down-supp-1'
    back
    expect_status 503 || return 1
    expect_eq "answers dropped" $((n + 2)) "$(dropped)" || return 1
    expect_eq "entries stored" 3 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$ACC' AND entry LIKE '%down%'")" || return 1
    http POST /v1/suppressions '{"entries":["d1@down.example","d2@down.example","@down2.example"]}' -H 'Idempotency-Key: down-supp-1'
    expect_status 201 && expect_header Idempotent-Replayed true && expect_json .added 3 && expect_json .existing 0 || return 1
    expect_eq "entries stored" 3 "$(it_sql "SELECT COUNT(*) FROM suppressions WHERE account_id = '$ACC' AND entry LIKE '%down%'")"
}
t_case "svc-api: suppressions added with an Idempotency-Key, the COMMIT's answer lost: 201 added 2, the replay the same; the database node dead with the COMMIT: 503, then the retry replays 201 added 3 (not 409 idempotency_key_in_use, then added 0 existing 3)" t_idempotent_suppressions

# abandoned_later REQ SURE: svc-api logged that request REQ could not
# delete its running Idempotency-Key row and kept it to delete later
abandoned_later() {
    grep -q "event=idempotency_abandon_pending req=$1 sure=$2" "$IT_DIR/log/svc.log" ||
        it_fail "no idempotency_abandon_pending for $1 (sure=$2) in the log"
}

t_down_before_answer() {
    local n
    n=$(dropped)
    # the node dies as the key's INSERT runs (in its transaction, rolled
    # back): 503, and the request cannot delete its running
    # Idempotency-Key row either (no connection while the node is down)
    down "autocommit:INSERT INTO api_keys ("
    http POST /v1/keys '{"name":"down-abandon","scopes":["jobs:read"]}' \
        -H 'Idempotency-Key: down-abandon-1' -H 'X-Request-Id: down-abandon-req'
    back
    expect_status 503 || return 1
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    abandoned_later down-abandon-req 1 || return 1
    expect_eq "keys named down-abandon" 0 \
        "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$ACC' AND name = 'down-abandon'")" || return 1
    # the node back, the retry runs (its row deleted by svc-api once the
    # database answers), not 409 idempotency_key_in_use for 5 minutes
    http POST /v1/keys '{"name":"down-abandon","scopes":["jobs:read"]}' -H 'Idempotency-Key: down-abandon-1'
    expect_status 201 && expect_jq '.key | startswith("svc_live_")' || return 1
    expect_eq "keys named down-abandon" 1 \
        "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$ACC' AND name = 'down-abandon'")" || return 1
    expect_eq "the Idempotency-Key's row" "done 201" \
        "$(it_sql "SELECT state, status FROM idempotency_keys WHERE account_id = '$ACC' AND idem_key = 'down-abandon-1'" | tr '\t' ' ')" || return 1
    n=$(dropped)
    # the node dies with the Idempotency-Key's own INSERT (applied, its
    # answer lost): 503; the row, this request's, is deleted later too
    down "autocommit:INSERT INTO idempotency_keys ("
    http POST /v1/keys '{"name":"down-begin","scopes":["jobs:read"]}' \
        -H 'Idempotency-Key: down-begin-1' -H 'X-Request-Id: down-begin-req'
    back
    expect_status 503 || return 1
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    abandoned_later down-begin-req 0 || return 1
    http POST /v1/keys '{"name":"down-begin","scopes":["jobs:read"]}' -H 'Idempotency-Key: down-begin-1'
    expect_status 201 || return 1
    expect_eq "keys named down-begin" 1 \
        "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$ACC' AND name = 'down-begin'")"
}
t_case "svc-api: the database node dead before a request with an Idempotency-Key could answer (in its work, or with the key's own INSERT): 503, its running row kept to delete once the node is back; the retry then runs (201, not 409 idempotency_key_in_use for 5 minutes)" t_down_before_answer

# abandon_tried_again REQ: the request REQ (its internal_error line) has
# tried to delete its running Idempotency-Key row twice (two
# event=db_reconnect lines of its process after that line: the first try
# failed), or has answered (event=request)
abandon_tried_again() {
    awk -v req="$1" '
        !pid && index($0, "event=internal_error req=" req " ") {
            pid = $2; sub(/ .*/, "", pid); next
        }
        pid && index($0, "event=request req=" req " ") { found = 1; exit }
        pid && $2 == pid && index($0, "event=db_reconnect") && ++tries >= 2 { found = 1; exit }
        END { exit !found }' "$IT_DIR/log/svc.log"
}

t_abandon_retried_in_request() {
    local n bg
    n=$(dropped)
    rm -f "$IT_DIR/retried.status"
    down "autocommit:INSERT INTO api_keys ("
    ( http POST /v1/keys '{"name":"down-retried","scopes":["jobs:read"]}' \
        -H 'Idempotency-Key: down-retried-1' -H 'X-Request-Id: down-retried-req' &&
        echo "$HTTP_STATUS" > "$IT_DIR/retried.status" ) &
    bg=$!
    # the node comes back while the request, its first DELETE of its own
    # row failed, is still trying (IDEMPOTENCY_ABANDON_TRY_MS, 3 s)
    it_wait_until 30 "for down-retried-req to try its DELETE again" abandon_tried_again down-retried-req ||
        { back; wait "$bg"; return 1; }
    back
    wait "$bg" || :
    expect_eq "the request's answer" 503 "$(cat "$IT_DIR/retried.status" 2>/dev/null)" || return 1
    expect_eq "answers dropped" $((n + 1)) "$(dropped)" || return 1
    # it deleted its row itself, before it answered: nothing kept for later
    if grep -q 'event=idempotency_abandon_pending req=down-retried-req ' "$IT_DIR/log/svc.log"; then
        it_fail "down-retried-req left its row to be deleted later (it did not try again while the node came back)"
        return 1
    fi
    expect_eq "the Idempotency-Key's rows" 0 \
        "$(it_sql "SELECT COUNT(*) FROM idempotency_keys WHERE account_id = '$ACC' AND idem_key = 'down-retried-1'")"
}
t_case "svc-api: a request that answers 503 tries to delete its running Idempotency-Key row again while the database is out of reach: the node back within that time, the row is deleted by the request itself, nothing kept for later" t_abandon_retried_in_request

# other_host_running KEY BODY: a running Idempotency-Key row of POST
# /v1/keys with BODY, as a request on another host leaves it (its own
# token)
other_host_running() {
    local hash
    hash=$(printf 'POST\n/v1/keys\n%s' "$2" | sha256sum | cut -c1-64)
    it_sql "INSERT INTO idempotency_keys (account_id, idem_key, request_hash, state, body, created_at)
        VALUES ('$ACC', '$1', UNHEX('$hash'), 'running', UNHEX(MD5(RAND())), UTC_TIMESTAMP(3))"
}

# retry_while_running KEY BODY SQL: POST /v1/keys with BODY and
# Idempotency-Key KEY, sent while another host's request runs it; once
# the retry has read that row (running), SQL ends it. The retry's answer
# in RETRY_STATUS, RETRY_BODY, RETRY_REPLAYED.
retry_while_running() {
    local bg
    rm -f "$IT_DIR/proxy-api.arm.seen" "$IT_DIR/retry.out"
    other_host_running "$1" "$2" || return 1
    printf 'seen:SELECT request_hash, state' > "$IT_DIR/proxy-api.arm"
    ( http POST /v1/keys "$2" -H "Idempotency-Key: $1" &&
        { echo "$HTTP_STATUS"; it_header_value idempotent-replayed; echo "${IT_HEADER:--}"; echo "$HTTP_BODY"; } \
            > "$IT_DIR/retry.out" ) &
    bg=$!
    it_wait_until 30 "for the retry to read the running row" test -e "$IT_DIR/proxy-api.arm.seen" ||
        { rm -f "$IT_DIR/proxy-api.arm"; wait "$bg"; return 1; }
    it_sql "$3"
    wait "$bg" || :
    [ -s "$IT_DIR/retry.out" ] || { it_fail "the retry got no answer"; return 1; }
    { read -r RETRY_STATUS; read -r RETRY_REPLAYED; read -r RETRY_BODY; } < "$IT_DIR/retry.out"
}

t_in_use_waits() {
    local body='{"name":"wait-abandoned","scopes":["jobs:read"]}' answer
    # the other host deletes its entry (it answered 503, the database
    # back): the retry, waiting, runs
    retry_while_running wait-abandoned-1 "$body" \
        "DELETE FROM idempotency_keys WHERE account_id = '$ACC' AND idem_key = 'wait-abandoned-1'" || return 1
    expect_eq "the retry's answer" 201 "$RETRY_STATUS" || return 1
    expect_eq "keys named wait-abandoned" 1 \
        "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$ACC' AND name = 'wait-abandoned'")" || return 1
    # the other host stores its answer (a key's, as svc-api stored the
    # one above): the retry, waiting, replays it
    body='{"name":"wait-answered","scopes":["jobs:read"]}'
    answer=$(it_sql "SELECT body FROM idempotency_keys WHERE account_id = '$ACC' AND idem_key = 'wait-abandoned-1'")
    retry_while_running wait-answered-1 "$body" \
        "UPDATE idempotency_keys SET state = 'done', status = 201, body = '$answer' WHERE account_id = '$ACC' AND idem_key = 'wait-answered-1'" || return 1
    expect_eq "the retry's answer" "201 true" "$RETRY_STATUS $RETRY_REPLAYED" || return 1
    expect_eq "the answer replayed" "$answer" "$RETRY_BODY" || return 1
    expect_eq "keys named wait-answered" 0 \
        "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$ACC' AND name = 'wait-answered'")"
}
t_case "svc-api: a retry that finds its Idempotency-Key running (a request on another host) waits for it (IDEMPOTENCY_IN_USE_WAIT_MS): deleted meanwhile, the retry runs (201); answered meanwhile, it replays that answer (not 409 idempotency_key_in_use at once)" t_in_use_waits

t_done
