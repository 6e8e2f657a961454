#!/bin/bash
# test_webhooks.sh: events leave the outbox. The webhook management API
# through lighttpd and svc-api (every route, another account's webhook 404,
# the scope, URLs refused), then deliveries sent by the real svc-worker to
# a real HTTPS receiver on loopback (tests/integration/webhook_receiver.py,
# with a test CA made by certtool): the envelope and X-Webhook-ID of bulk
# and batch jobs (callback_data, the batch's own secret), of a job's
# callback_url (set in SQL, and given to a real upload: job.completed and
# job.failed), job.failed, the test endpoint (one test of a webhook in
# flight, else 409 webhook_test_in_flight; webhook_test_limit an hour,
# else 429), every signature
# checked with libsvc-sdk (tests/sdk/svc-webhook-check), rotation (both
# secrets sign for 24 h, the old one no more after), the retry schedule
# (webhook_retry_schedule in seconds), 410 disabling a webhook, redirects
# not followed, a response body read no further than 64 KB, a worker
# SIGKILLed mid-delivery (another sends it again, same event_id), a claim
# whose COMMIT lost its answer (commit_drop_proxy.py: sent at once), the
# per-host cap with a slow receiver not holding up another, the
# per-account share of slots (webhook_account_concurrency), and private
# targets refused when allow_private_urls = no (a name that resolves to
# loopback refused when the worker connects).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
. "$top_srcdir/tests/integration/outbound.sh"
CHECK=$top_builddir/tests/sdk/svc-webhook-check
[ -x "$CHECK" ] || it_skip "$CHECK is not built"

outbound_certs
mail_env_lists

# receiver: webhook_receiver.py on 127.0.0.1, its log in IT_DIR/received
RECEIVED=$IT_DIR/received
outbound_server receiver webhook_receiver.py --log "$RECEIVED"
RPORT=$OUTBOUND_PORT
R=https://127.0.0.1:$RPORT

it_conf_add "lists_dir = $IT_DIR/lists
dns_resolver = 127.0.0.1:9
allow_private_urls = yes
allow_url_ports = $RPORT
ca_file = $IT_DIR/tls/ca.pem
worker_poll_interval = 1
webhook_retry_schedule = 2s 2s 3
webhook_timeout_ms = 60000
webhook_host_concurrency = 2
webhook_test_limit = 3"
it_stack_start

SB=sandbox.svc.example

# account: a new account and a key with every scope (ACC, API_KEY)
account() {
    ACC=$(it_account pro 1000)
    API_KEY=$(it_key "$ACC" '*')
}


# hook PATH [EVENTS-JSON]: POST /v1/webhooks to R/PATH; HOOK, SECRET
hook() {
    local url=$1 body
    case $url in https://*) ;; *) url=$R$1 ;; esac
    body=$(jq -nc --arg u "$url" --argjson e "${2:-null}" '{url: $u, description: "test"} + (if $e then {events: $e} else {} end)')
    http POST /v1/webhooks "$body"
    expect_status 201 || return 1
    HOOK=$(json .id)
    SECRET=$(json .secret)
}

# bulk [ADDRESSES-JSON]: a bulk job of sandbox addresses; JOB
bulk() {
    http POST /v1/verify/bulk "{\"emails\":${1:-[\"accepted_email@$SB\",\"rejected_email@$SB\"]}}"
    expect_status 202 || return 1
    JOB=$(json .job_id)
}

# received PATH: the recorded requests to PATH, one JSON object a line
# received PATH: the receiver's lines of the requests to PATH. A grep, not
# jq (wait_for asks 10 times a second, and a jq start costs 22 ms of CPU):
# json.dumps writes "path" before any text of the request, and a quote in a
# value would be escaped, so the first ', "path": "P", "query": ' of a
# line is its path.
received() { grep -F -- ", \"path\": \"$1\", \"query\": " "$RECEIVED"; }
count() { received "$1" | wc -l; }
# nth PATH N FILTER: jq -r FILTER on the N-th request (from 1) to PATH
nth() { received "$1" | sed -n "$2p" | jq -r "$3"; }
# body_of PATH N: the raw body of that request into IT_DIR/body, its text
body_of() { nth "$1" "$2" .body_b64 | base64 -d > "$IT_DIR/body"; cat "$IT_DIR/body"; }

# wait_for PATH N [SECONDS]: until PATH got N requests
wait_for() {
    local i
    for i in $(seq 1 $((${3:-30} * 10))); do
        [ "$(count "$1")" -ge "$2" ] && return 0
        sleep 0.1
    done
    it_fail "$1 got $(count "$1") requests, not $2, in ${3:-30} s"
}

# signed PATH N SECRET...: the N-th request's signature checks with these
# secrets (libsvc-sdk), at the receiver's time of arrival
signed() {
    local path=$1 n=$2 got
    shift 2
    body_of "$path" "$n" > /dev/null
    got=$("$CHECK" "$(nth "$path" "$n" '.headers["x-service-signature"]')" "$IT_DIR/body" \
        "$(nth "$path" "$n" '.time | floor')" "$@")
    [ "$got" = ok ] || it_fail "request $n to $path: signature $got"
}

# wait_state HOOK STATE [SECONDS]: until HOOK's deliveries are all in STATE
wait_state() {
    local i got
    for i in $(seq 1 $((${3:-30} * 10))); do
        got=$(it_sql "SELECT GROUP_CONCAT(DISTINCT state) FROM event_deliveries WHERE webhook_id = '$1'")
        [ "$got" = "$2" ] && return 0
        sleep 0.1
    done
    it_fail "deliveries of $1: $got, not $2, in ${3:-30} s"
}

# release GROUP [N|all]: the receiver answers N (default all) of the held
# requests of GROUP (hold=1), the oldest first; all: later ones too
release() {
    curl -sf --cacert "$IT_DIR/tls/ca.pem" -X POST "$R/_release?group=$1&n=${2:-all}" > /dev/null ||
        it_fail "the receiver did not release $1"
}

# conf_with NAME=VALUE...: a copy of svc.conf with these settings; its path
conf_with() {
    local kv conf=$IT_DIR/svc-$RANDOM.conf
    cp "$SVC_CONF" "$conf"
    for kv in "$@"; do
        sed -i "/^${kv%%=*} = /d" "$conf"
        echo "${kv%%=*} = ${kv#*=}" >> "$conf"
    done
    echo "$conf"
}

# delivery_field HOOK FILTER: jq FILTER on GET /v1/webhooks/HOOK/deliveries
deliveries() { http GET "/v1/webhooks/$1/deliveries"; expect_status 200; }

# ---------------------------------------------------------------- management

t_manage_routes() {
    local other other_key id
    account
    hook /m/a '["job.completed"]' || return 1
    id=$HOOK
    expect_json .url "$R/m/a" && expect_json '.events | join(",")' job.completed &&
        expect_json .enabled true && expect_json .description test &&
        expect_jq '.secret | startswith("whsec_")' && expect_jq '.id | startswith("wh_")' || return 1
    http GET /v1/webhooks
    expect_status 200 && expect_json '.data | length' 1 && expect_json '.data[0].id' "$id" &&
        expect_json '.data[0].secret' null || return 1
    http GET "/v1/webhooks/$id"
    expect_status 200 && expect_json .secret null && expect_json .previous_secret_expires_at null || return 1
    http PATCH "/v1/webhooks/$id" '{"events":["job.failed","job.completed"],"description":"changed","url":"'"$R/m/b"'"}'
    expect_status 200 && expect_json '.events | join(",")' job.completed,job.failed &&
        expect_json .description changed && expect_json .url "$R/m/b" || return 1
    http PATCH "/v1/webhooks/$id" '{"enabled":false}'
    expect_status 200 && expect_json .enabled false || return 1
    http POST "/v1/webhooks/$id/rotate-secret" '{}'
    expect_status 200 && expect_jq '.secret | startswith("whsec_")' &&
        expect_jq ".secret != \"$SECRET\"" || return 1
    http POST "/v1/webhooks/$id/test" '{}'
    expect_status 202 && expect_json .event webhook.test && expect_jq '.delivery_id | startswith("dlv_")' || return 1
    deliveries "$id" || return 1
    expect_json .total 1 && expect_json '.data[0].event' webhook.test && expect_json '.data[0].status' pending || return 1
    # another account sees none of it
    other=$(it_account pro 10)
    other_key=$(it_key "$other" '*')
    API_KEY=$other_key http GET "/v1/webhooks/$id"; expect_status 404 && expect_json .error.code not_found || return 1
    API_KEY=$other_key http PATCH "/v1/webhooks/$id" '{"description":"x"}'; expect_status 404 || return 1
    API_KEY=$other_key http POST "/v1/webhooks/$id/test" '{}'; expect_status 404 || return 1
    API_KEY=$other_key http POST "/v1/webhooks/$id/rotate-secret" '{}'; expect_status 404 || return 1
    API_KEY=$other_key http GET "/v1/webhooks/$id/deliveries"; expect_status 404 || return 1
    API_KEY=$other_key http DELETE "/v1/webhooks/$id"; expect_status 404 || return 1
    API_KEY=$other_key http GET /v1/webhooks; expect_status 200 && expect_json '.data | length' 0 || return 1
    http DELETE "/v1/webhooks/$id"
    expect_status 200 && expect_json .deleted true || return 1
    http GET "/v1/webhooks/$id"; expect_status 404 || return 1
    expect_eq "its secrets and deliveries" "0 0" "$(it_sql "SELECT CONCAT_WS(' ', (SELECT COUNT(*) FROM webhook_secrets WHERE webhook_id = '$id'), (SELECT COUNT(*) FROM event_deliveries WHERE webhook_id = '$id'))")"
}
t_case "webhooks: create (secret once), list, get, patch, rotate, test, deliveries, delete; another account's is 404" t_manage_routes

t_manage_refusals() {
    local key
    account
    key=$(it_key "$ACC" 'verify:bulk,jobs:read')
    API_KEY=$key http POST /v1/webhooks "{\"url\":\"$R/x\"}"
    expect_status 403 && expect_json .error.code insufficient_scope &&
        expect_json .error.details.required_scope webhooks:manage || return 1
    API_KEY=$key http GET /v1/webhooks; expect_status 403 || return 1
    http POST /v1/webhooks '{"events":["job.completed"]}'
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field url || return 1
    http POST /v1/webhooks '{"url":"ftp://example.com/x"}'
    expect_status 400 && expect_json .error.details.field url || return 1
    http POST /v1/webhooks "{\"url\":\"$R/x\",\"events\":[\"job.done\"]}"
    expect_status 400 && expect_json .error.details.field events || return 1
    http POST /v1/webhooks "{\"url\":\"$R/x\",\"events\":[]}"
    expect_status 400 && expect_json .error.details.field events || return 1
    http POST /v1/webhooks "$(jq -nc --arg u "$R/x" --arg d "$(printf 'é%.0s' $(seq 1 501))" '{url: $u, description: $d}')"
    expect_status 400 && expect_json .error.details.field description || return 1
    http POST /v1/webhooks "$(jq -nc --arg u "$R/x" --arg d "$(printf 'é%.0s' $(seq 1 500))" '{url: $u, description: $d}')"
    expect_status 201 || return 1
    http PATCH "/v1/webhooks/$(json .id)" '{"enabled":"yes"}'
    expect_status 400 && expect_json .error.details.field enabled || return 1
    # the secret is shown once: an Idempotency-Key replay lacks it
    http POST /v1/webhooks "{\"url\":\"$R/idem\"}" -H 'Idempotency-Key: wh-1'
    expect_status 201 && expect_jq '.secret | startswith("whsec_")' || return 1
    local id=$HTTP_BODY
    http POST /v1/webhooks "{\"url\":\"$R/idem\"}" -H 'Idempotency-Key: wh-1'
    expect_status 201 && expect_header Idempotent-Replayed true && expect_json .secret null &&
        expect_json .id "$(printf '%s' "$id" | jq -r .id)" || return 1
    expect_eq "webhooks made" 2 "$(it_sql "SELECT COUNT(*) FROM webhooks WHERE account_id = '$ACC'")" || return 1
    # at most 20 a account
    for i in $(seq 3 20); do
        http POST /v1/webhooks "{\"url\":\"$R/n$i\"}" > /dev/null; expect_status 201 || return 1
    done
    http POST /v1/webhooks "{\"url\":\"$R/n21\"}"
    expect_status 409 && expect_json .error.code webhook_limit_reached && expect_json .error.details.limit 20
}
t_case "webhooks: scope webhooks:manage, 400 naming the field, secret not replayed, 20 at most" t_manage_refusals

# ---------------------------------------------------------------- deliveries

t_bulk_completed() {
    local failed_hook job_hook ev
    account
    hook /d/failed-only '["job.failed"]' || return 1
    failed_hook=$HOOK
    hook /d/bulk || return 1
    bulk || return 1
    once
    wait_for /d/bulk 1 10 || return 1
    expect_eq "requests to /d/bulk" 1 "$(count /d/bulk)" || return 1
    expect_eq "job.completed not sent to a job.failed webhook" 0 "$(count /d/failed-only)" || return 1
    expect_eq "X-Webhook-ID" "$HOOK" "$(nth /d/bulk 1 '.headers["x-webhook-id"]')" || return 1
    expect_eq "Content-Type" application/json "$(nth /d/bulk 1 '.headers["content-type"]')" || return 1
    signed /d/bulk 1 "$SECRET" || return 1
    expect_eq "signature with another secret" no_matching_signature \
        "$("$CHECK" "$(nth /d/bulk 1 '.headers["x-service-signature"]')" "$IT_DIR/body" "$(date +%s)" whsec_other)" || return 1
    HTTP_BODY=$(body_of /d/bulk 1)
    HTTP_REQUEST="delivered body"
    expect_jq 'keys == ["data","event","event_id","timestamp"]' && expect_json .event job.completed &&
        expect_jq '.event_id | startswith("evt_")' && expect_jq '.timestamp | test("^[0-9-]{10}T[0-9:]{8}Z$")' &&
        expect_json .data.job_id "$JOB" && expect_json .data.type bulk && expect_json .data.status completed &&
        expect_json .data.total_emails 2 && expect_json .data.counts.valid 1 && expect_json .data.counts.invalid 1 &&
        expect_json .data.download_url "/v1/jobs/$JOB/download" && expect_json .data.credits_charged 2 &&
        expect_json .data.credits_refunded 0 || return 1
    ev=$(json .event_id)
    expect_eq "the outbox event" "$ev" "$(it_sql "SELECT id FROM event_outbox WHERE job_id = '$JOB'")" || return 1
    deliveries "$HOOK" || return 1
    expect_json .total 1 && expect_json '.data[0].status' delivered && expect_json '.data[0].attempts' 1 &&
        expect_json '.data[0].last_status_code' 200 && expect_json '.data[0].event_id' "$ev" &&
        expect_json '.data[0].job_id' "$JOB" && expect_json '.data[0].next_retry_at' null &&
        expect_json '.data[0].attempt_log[0].status_code' 200 || return 1
    deliveries "$failed_hook" || return 1
    expect_json .total 0 || return 1
    # a second run sends nothing again
    once
    sleep 1
    expect_eq "requests to /d/bulk after a second run" 1 "$(count /d/bulk)"
}
t_case "a bulk job's job.completed: signed (libsvc-sdk), envelope and data as API.md, X-Webhook-ID, only to subscribed webhooks, once" t_bulk_completed

t_batch_completed() {
    local wsecret ev
    account
    hook /d/acct-batch || return 1
    http POST /v1/verify/batch "{\"name\":\"b1\",\"emails\":[\"accepted_email@$SB\",\"catch_all@$SB\"],\"webhook_url\":\"$R/d/batch\",\"callback_data\":{\"ref\":\"order-7\",\"n\":[1,2]}}"
    expect_status 201 && expect_jq '.webhook_secret | startswith("whsec_")' || return 1
    JOB=$(json .id)
    wsecret=$(json .webhook_secret)
    once
    wait_for /d/batch 1 10 && wait_for /d/acct-batch 1 10 || return 1
    expect_eq "X-Webhook-ID" "batch_callback:$JOB" "$(nth /d/batch 1 '.headers["x-webhook-id"]')" || return 1
    signed /d/batch 1 "$wsecret" || return 1
    expect_eq "the account's secret does not sign the batch's" no_matching_signature \
        "$("$CHECK" "$(nth /d/batch 1 '.headers["x-service-signature"]')" "$IT_DIR/body" "$(date +%s)" "$SECRET")" || return 1
    HTTP_BODY=$(body_of /d/batch 1)
    HTTP_REQUEST="batch body"
    expect_json .event job.completed && expect_json .data.job_id "$JOB" && expect_json .data.id "$JOB" &&
        expect_json .data.type batch && expect_json .data.name b1 && expect_json .data.callback_data.ref order-7 &&
        expect_json '.data.callback_data.n | length' 2 && expect_json .data.valid_count 1 &&
        expect_json .data.processed_emails 2 && expect_jq '.data.completed_at | endswith("Z")' || return 1
    ev=$(json .event_id)
    signed /d/acct-batch 1 "$SECRET" || return 1
    expect_eq "the account webhook's X-Webhook-ID" "$HOOK" "$(nth /d/acct-batch 1 '.headers["x-webhook-id"]')" || return 1
    expect_eq "the same event to both" "$ev" "$(body_of /d/acct-batch 1 | jq -r .event_id)"
}
t_case "a batch job's job.completed: to its webhook_url signed with its webhook_secret (batch_callback:<id>, callback_data) and to the account's webhooks" t_batch_completed

t_job_callback() {
    local csecret=whsec_callback_test_secret_0123456789
    account
    bulk || return 1
    it_sql "UPDATE jobs SET callback_url = '$R/d/callback', callback_secret = '$csecret' WHERE id = '$JOB'"
    once
    wait_for /d/callback 1 10 || return 1
    expect_eq "X-Webhook-ID" "job_callback:$JOB" "$(nth /d/callback 1 '.headers["x-webhook-id"]')" || return 1
    signed /d/callback 1 "$csecret" || return 1
    HTTP_BODY=$(body_of /d/callback 1)
    HTTP_REQUEST="callback body"
    expect_json .event job.completed && expect_json .data.job_id "$JOB" && expect_json .data.type bulk
}
t_case "a job's callback_url gets job.completed signed with its callback_secret (job_callback:<id>)" t_job_callback

# upload_cb FILE PATH: a multipart upload of FILE with callback_url R/PATH;
# JOB, CSECRET (the callback_secret of the 202); then svc-worker --once
# until PATH got a request
upload_cb() {
    local i
    http POST /v1/verify/bulk/upload "" -F "file=@$1" -F "callback_url=$R$2"
    expect_status 202 && expect_jq '.callback_secret | startswith("whsec_")' || return 1
    JOB=$(json .job_id)
    CSECRET=$(json .callback_secret)
    for i in $(seq 1 20); do
        once
        [ "$(count "$2")" -ge 1 ] && return 0
        sleep 0.5
    done
    it_fail "$2 got no request"
}

t_upload_callback() {
    account
    printf 'name,email\nAnn,accepted_email@%s\nBob,rejected_email@%s\n' "$SB" "$SB" > "$IT_DIR/up.csv"
    upload_cb "$IT_DIR/up.csv" /d/upload-cb || return 1
    expect_eq "X-Webhook-ID" "job_callback:$JOB" "$(nth /d/upload-cb 1 '.headers["x-webhook-id"]')" || return 1
    signed /d/upload-cb 1 "$CSECRET" || return 1
    HTTP_BODY=$(body_of /d/upload-cb 1)
    HTTP_REQUEST="upload callback body"
    expect_json .event job.completed && expect_json .data.job_id "$JOB" && expect_json .data.type upload &&
        expect_json .data.status completed && expect_json .data.total_emails 2 && expect_json .data.credits_charged 2 || return 1
    # an upload that fails ingestion: job.failed, signed with its own secret
    printf 'email\n' > "$IT_DIR/header-only.csv"
    upload_cb "$IT_DIR/header-only.csv" /d/upload-failed || return 1
    signed /d/upload-failed 1 "$CSECRET" || return 1
    HTTP_BODY=$(body_of /d/upload-failed 1)
    HTTP_REQUEST="failed upload callback body"
    expect_json .event job.failed && expect_json .data.job_id "$JOB" && expect_json .data.type upload &&
        expect_json .data.error.code no_emails && expect_jq '.data.error.message | length > 0' || return 1
    expect_eq "requests to each callback" "1 1" "$(count /d/upload-cb) $(count /d/upload-failed)"
}
t_case "an upload with callback_url (the real endpoint): job.completed, and job.failed for no_emails, signed with the 202's callback_secret" t_upload_callback

t_job_failed() {
    account
    hook /d/failed '["job.failed"]' || return 1
    bulk || return 1
    # its rows gone, the job cannot go on: the worker fails it
    it_sql "DELETE FROM job_emails WHERE job_id = '$JOB'"
    once
    wait_for /d/failed 1 10 || return 1
    signed /d/failed 1 "$SECRET" || return 1
    HTTP_BODY=$(body_of /d/failed 1)
    HTTP_REQUEST="job.failed body"
    expect_json .event job.failed && expect_json .data.job_id "$JOB" && expect_json .data.type bulk &&
        expect_json .data.error.code job_rows_missing && expect_jq '.data.error.message | length > 0'
}
t_case "job.failed goes to the webhooks subscribed to it, with the error" t_job_failed

t_test_endpoint() {
    account
    hook /d/test || return 1
    http POST "/v1/webhooks/$HOOK/test" '{}'
    expect_status 202 || return 1
    local ev
    ev=$(json .event_id)
    once
    wait_for /d/test 1 10 || return 1
    signed /d/test 1 "$SECRET" || return 1
    HTTP_BODY=$(body_of /d/test 1)
    HTTP_REQUEST="test body"
    expect_json .event webhook.test && expect_json .event_id "$ev" && expect_json .data.webhook_id "$HOOK" || return 1
    expect_eq "X-Webhook-ID" "$HOOK" "$(nth /d/test 1 '.headers["x-webhook-id"]')"
}
t_case "POST /v1/webhooks/{id}/test sends a signed webhook.test" t_test_endpoint

# test_state DELIVERY: state and last_error of a delivery
test_state() { it_sql "SELECT CONCAT_WS(' ', state, COALESCE(last_error, '-')) FROM event_deliveries WHERE id = '$1'"; }

t_test_one_in_flight() {
    local conf=$IT_DIR/svc-holdtest.conf first second
    account
    # the receiver holds the first test 25 s (the worker waits up to 60 s)
    sed '/^webhook_timeout_ms = /d' "$SVC_CONF" > "$conf"
    echo 'webhook_timeout_ms = 60000' >> "$conf"
    hook "/d/held?sleep_first=25" || return 1
    http POST "/v1/webhooks/$HOOK/test" '{}'
    expect_status 202 || return 1
    first=$(json .delivery_id)
    daemon "$conf"
    # the receiver has it: it is being sent
    wait_for /d/held 1 60 || { stop_daemon; return 1; }
    http POST "/v1/webhooks/$HOOK/test" '{}'
    stop_daemon
    expect_status 409 && expect_json .error.code webhook_test_in_flight || return 1
    expect_eq "tests of the webhook queued" 1 "$(it_sql "SELECT COUNT(*) FROM event_deliveries WHERE webhook_id = '$HOOK'")" || return 1
    # stopped, the worker gave it back (pending): a new test takes its place
    expect_eq "the held test after the stop" pending "$(it_sql "SELECT state FROM event_deliveries WHERE id = '$first'")" || return 1
    http POST "/v1/webhooks/$HOOK/test" '{}'
    expect_status 202 || return 1
    second=$(json .delivery_id)
    expect_eq "the held test" "failed superseded" "$(test_state "$first")" || return 1
    expect_eq "the new test" "pending -" "$(test_state "$second")"
}
t_case "POST /v1/webhooks/{id}/test: 409 webhook_test_in_flight while a test is being sent; one waiting is superseded by the next" t_test_one_in_flight

t_test_hourly_limit() {
    local i first_hook ids=()
    account
    hook /d/limit || return 1
    first_hook=$HOOK
    # webhook_test_limit = 3: three in an hour (each supersedes the one
    # before, nothing sends them here), the fourth 429
    for i in 1 2 3; do
        http POST "/v1/webhooks/$HOOK/test" '{}'
        expect_status 202 || return 1
        ids+=("$(json .delivery_id)")
    done
    http POST "/v1/webhooks/$HOOK/test" '{}'
    expect_status 429 && expect_json .error.code rate_limited && expect_json .error.details.limit 3 &&
        expect_json .error.details.remaining 0 && expect_json .error.details.scope webhook_test &&
        expect_jq '.error.details.reset_at - now | . > 3500 and . <= 3601' || return 1
    expect_header Retry-After || return 1
    i=$(printf '%s\n' "$HTTP_HEADERS" | sed -n 's/^retry-after: *//p')
    [ "$i" -ge 3500 ] && [ "$i" -le 3601 ] || it_fail "Retry-After $i, not about an hour" || return 1
    expect_eq "tests queued for the webhook" 3 "$(it_sql "SELECT COUNT(*) FROM event_deliveries WHERE webhook_id = '$HOOK'")" || return 1
    expect_eq "states" "failed superseded|failed superseded|pending -" \
        "$(for i in "${ids[@]}"; do test_state "$i"; done | paste -sd'|')" || return 1
    # another webhook of the account has its own three
    hook /d/limit2 || return 1
    http POST "/v1/webhooks/$HOOK/test" '{}'
    expect_status 202 || return 1
    # an hour later the first test leaves the window
    it_sql "UPDATE event_deliveries SET created_at = created_at - INTERVAL 61 MINUTE WHERE id = '${ids[0]}'"
    http POST "/v1/webhooks/$first_hook/test" '{}'
    expect_status 202
}
t_case "POST /v1/webhooks/{id}/test: webhook_test_limit tests a webhook an hour, then 429 rate_limited with Retry-After" t_test_hourly_limit

t_rotation() {
    local old=$SECRET new until sig
    account
    hook /d/rot || return 1
    old=$SECRET
    http POST "/v1/webhooks/$HOOK/rotate-secret" '{}'
    expect_status 200 || return 1
    new=$(json .secret)
    until=$(json .previous_secret_expires_at)
    # the old secret signs for 24 h from the rotation
    expect_jq "(.previous_secret_expires_at | fromdateiso8601) - now | . > 86340 and . < 86460" || return 1
    http GET "/v1/webhooks/$HOOK"
    expect_json .previous_secret_expires_at "$until" || return 1
    http POST "/v1/webhooks/$HOOK/test" '{}'
    expect_status 202 || return 1
    once
    wait_for /d/rot 1 10 || return 1
    sig=$(nth /d/rot 1 '.headers["x-service-signature"]')
    expect_eq "v1 values" 2 "$(printf '%s' "$sig" | grep -o 'v1=' | wc -l)" || return 1
    signed /d/rot 1 "$old" && signed /d/rot 1 "$new" || return 1
    # once its 24 h are over, the old one signs no more
    it_sql "UPDATE webhook_secrets SET expires_at = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE webhook_id = '$HOOK' AND secret = '$old'"
    http GET "/v1/webhooks/$HOOK"
    expect_json .previous_secret_expires_at null || return 1
    http POST "/v1/webhooks/$HOOK/test" '{}'
    once
    wait_for /d/rot 2 10 || return 1
    sig=$(nth /d/rot 2 '.headers["x-service-signature"]')
    expect_eq "v1 values after the 24 h" 1 "$(printf '%s' "$sig" | grep -o 'v1=' | wc -l)" || return 1
    signed /d/rot 2 "$new" || return 1
    body_of /d/rot 2 > /dev/null
    expect_eq "the old secret after 24 h" no_matching_signature \
        "$("$CHECK" "$sig" "$IT_DIR/body" "$(date +%s)" "$old")"
}
t_case "rotate-secret: both secrets sign for 24 h (two v1), then only the new one" t_rotation

t_retry_schedule() {
    local ok_hook t1 t2 t3 t4
    account
    hook '/d/retry?codes=500,503,200' || return 1
    ok_hook=$HOOK
    hook '/d/giveup?codes=500' || return 1
    bulk || return 1
    daemon
    wait_for /d/retry 3 30 && wait_for /d/giveup 4 40 &&
        wait_state "$ok_hook" delivered && wait_state "$HOOK" failed || { stop_daemon; return 1; }
    stop_daemon
    # webhook_retry_schedule = 2s 2s 3: the waits between attempts
    t1=$(nth /d/retry 1 .time); t2=$(nth /d/retry 2 .time); t3=$(nth /d/retry 3 .time)
    python3 -c "import sys; a=[float(x) for x in sys.argv[1:]]; sys.exit(0 if a[1]-a[0] >= 1.9 and a[2]-a[1] >= 1.9 else 1)" "$t1" "$t2" "$t3" ||
        it_fail "attempts of /d/retry at $t1 $t2 $t3: not 2 s apart" || return 1
    expect_eq "the same event each time" 1 "$(received /d/retry | jq -r '.body_b64 | @base64d | fromjson | .event_id' | sort -u | wc -l)" || return 1
    expect_eq "the same signature body each time" 1 "$(received /d/retry | jq -r .body_b64 | sort -u | wc -l)" || return 1
    signed /d/retry 3 "$(it_sql "SELECT secret FROM webhook_secrets WHERE webhook_id = '$ok_hook'")" || return 1
    deliveries "$ok_hook" || return 1
    expect_json '.data[0].status' delivered && expect_json '.data[0].attempts' 3 &&
        expect_json '[.data[0].attempt_log[].status_code] | join(",")' 500,503,200 || return 1
    t1=$(nth /d/giveup 1 .time); t2=$(nth /d/giveup 2 .time); t3=$(nth /d/giveup 3 .time); t4=$(nth /d/giveup 4 .time)
    python3 -c "import sys; a=[float(x) for x in sys.argv[1:]]; sys.exit(0 if a[1]-a[0] >= 1.9 and a[2]-a[1] >= 1.9 and a[3]-a[2] >= 2.9 else 1)" "$t1" "$t2" "$t3" "$t4" ||
        it_fail "attempts of /d/giveup at $t1 $t2 $t3 $t4: not 2, 2, 3 s apart" || return 1
    expect_eq "attempts of a delivery that never succeeds" 4 "$(count /d/giveup)" || return 1
    deliveries "$HOOK" || return 1
    expect_json '.data[0].status' failed && expect_json '.data[0].attempts' 4 &&
        expect_json '.data[0].next_retry_at' null && expect_json '.data[0].last_status_code' 500
}
t_case "failed attempts are retried on webhook_retry_schedule (2 s, 2 s, 3 s), then given up; same event and body each time" t_retry_schedule

t_gone() {
    local gone
    account
    hook '/d/gone?codes=410' || return 1
    gone=$HOOK
    bulk || return 1
    once
    wait_for /d/gone 1 10 || return 1
    http GET "/v1/webhooks/$gone"
    expect_json .enabled false && expect_json .disabled_reason gone || return 1
    deliveries "$gone" || return 1
    expect_json '.data[0].status' failed && expect_json '.data[0].attempts' 1 &&
        expect_json '.data[0].last_status_code' 410 || return 1
    # a disabled webhook gets no new events, and no retry came
    bulk || return 1
    once
    sleep 3
    once
    expect_eq "requests to a disabled webhook" 1 "$(count /d/gone)" || return 1
    http PATCH "/v1/webhooks/$gone" '{"enabled":true}'
    expect_status 200 && expect_json .enabled true && expect_json .disabled_reason null
}
t_case "410 Gone disables the webhook: no retry, no new events until re-enabled" t_gone

t_no_redirect() {
    account
    hook "/d/redirect?codes=302&location=$R/d/elsewhere" || return 1
    bulk || return 1
    once
    wait_for /d/redirect 1 10 || return 1
    deliveries "$HOOK" || return 1
    expect_json '.data[0].status' pending && expect_json '.data[0].last_status_code' 302 || return 1
    expect_eq "requests to the redirect's target" 0 "$(count /d/elsewhere)"
}
t_case "a redirect is not followed: a failed attempt, retried later" t_no_redirect

t_body_cap() {
    account
    hook '/d/big?stall_after=131072' || return 1
    bulk || return 1
    once
    wait_for /d/big 1 10 || return 1
    # 128 KB of a body that never ends: read up to 64 KB, the status kept,
    # well before webhook_timeout_ms
    deliveries "$HOOK" || return 1
    expect_json '.data[0].status' delivered && expect_json '.data[0].last_status_code' 200 &&
        expect_jq '.data[0].attempt_log[0].duration_ms < 60000'
}
t_case "a response body is read no further than 64 KB" t_body_cap

t_sigkill_mid_delivery() {
    local lease conf marker
    account
    hook /d/marker '["job.failed"]' || return 1
    marker=$HOOK
    # the first request is held unanswered (webhook_timeout_ms = 20000: the
    # worker does not give up on it first): the worker is killed meanwhile
    conf=$(conf_with webhook_timeout_ms=20000)
    hook '/d/kill?hold=1&group=kill' '["job.completed"]' || return 1
    bulk || return 1
    daemon "$conf"
    wait_for /d/kill 1 30 || { stop_daemon; return 1; }
    kill -KILL "$DAEMON"
    wait "$DAEMON" 2>/dev/null || true
    DAEMON=
    release kill
    expect_eq "state while nobody holds it" sending "$(it_sql "SELECT state FROM event_deliveries WHERE webhook_id = '$HOOK'")" || return 1
    # its lease: 2 x webhook_timeout_ms + 10 s = 50 s (51 with the rounding
    # up of deliveries.c) from the claim, by the database's clock: the
    # claim sets lease_expires and starts attempt 1 in one transaction
    lease=$(it_sql "SELECT TIMESTAMPDIFF(MICROSECOND, a.started_at, d.lease_expires) / 1e6 FROM event_deliveries d JOIN event_attempts a ON a.delivery_id = d.id AND a.attempt = 1 WHERE d.webhook_id = '$HOOK'")
    awk -v l="$lease" 'BEGIN { exit !(l >= 49 && l <= 51) }' ||
        it_fail "lease of $lease s from the claim: not 50 s" || return 1
    # another worker: while the lease holds, not sent again (a webhook.test
    # to another webhook, made after it started, is: a claim ran, and
    # expired leases are taken first)
    daemon "$conf"
    http POST "/v1/webhooks/$marker/test" '{}'
    expect_status 202 && wait_for /d/marker 1 30 || { stop_daemon; return 1; }
    expect_eq "requests while the lease holds" 1 "$(count /d/kill)" || { stop_daemon; return 1; }
    # the lease runs out (moved, not waited for): sent again
    it_sql "UPDATE event_deliveries SET lease_expires = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE webhook_id = '$HOOK'"
    wait_for /d/kill 2 30 && wait_state "$HOOK" delivered || { stop_daemon; return 1; }
    stop_daemon
    expect_eq "the same event_id" "$(body_of /d/kill 1 | jq -r .event_id)" "$(body_of /d/kill 2 | jq -r .event_id)" || return 1
    signed /d/kill 2 "$SECRET" || return 1
    deliveries "$HOOK" || return 1
    expect_json '.data[0].status' delivered && expect_json '.data[0].attempts' 2 &&
        expect_json '.data[0].attempt_log[0].error' interrupted &&
        expect_json '.data[0].attempt_log[1].status_code' 200
}
t_case "a worker SIGKILLed mid-delivery: another sends it again after the lease, with the same event_id" t_sigkill_mid_delivery

t_lost_commit_claim() {
    local rc=0
    # the worker's claim of a delivery is applied but its COMMIT's answer
    # lost (tests/integration/commit_drop_proxy.py between the daemon and
    # MariaDB): the claim stands and the delivery goes at once, attempt 1
    # (cleared, it would wait for its lease, 130 s here, and count 2)
    account
    hook /d/lostclaim || return 1
    it_commit_drop_proxy proxy || return 1
    printf '%s' "UPDATE event_deliveries SET state = ?, attempts" > "$IT_DIR/proxy.arm"
    daemon "$IT_DIR/proxy.conf"
    http POST "/v1/webhooks/$HOOK/test" '{}'
    expect_status 202 && wait_for /d/lostclaim 1 30 && wait_state "$HOOK" delivered || rc=1
    stop_daemon
    kill "$IT_PROXY_PID"; wait "$IT_PROXY_PID" 2>/dev/null
    [ "$rc" = 0 ] || return 1
    expect_eq "answers dropped" 1 "$(it_proxy_dropped proxy)" || return 1
    deliveries "$HOOK" || return 1
    expect_json '.data[0].attempts' 1 && expect_json '.data[0].attempt_log | length' 1 &&
        expect_json '.data[0].attempt_log[0].status_code' 200
}
t_case "a delivery claimed by a COMMIT applied whose answer was lost is sent at once, attempt 1 (not left leased to nobody)" t_lost_commit_claim

t_sigterm_gives_back() {
    account
    # held unanswered until after the SIGTERM (webhook_timeout_ms = 60000:
    # the worker does not give up on it first)
    hook '/d/term?hold=1&group=term' || return 1
    bulk || return 1
    daemon "$(conf_with webhook_timeout_ms=60000)"
    wait_for /d/term 1 30 || { stop_daemon; return 1; }
    # SIGTERM: the delivery in flight is given back, due at once
    stop_daemon
    release term
    deliveries "$HOOK" || return 1
    expect_json '.data[0].status' pending && expect_json '.data[0].attempt_log[0].error' interrupted || return 1
    expect_eq "due now" 1 "$(it_sql "SELECT next_attempt_at <= UTC_TIMESTAMP(3) FROM event_deliveries WHERE webhook_id = '$HOOK'")" || return 1
    once
    wait_for /d/term 2 10 || return 1
    deliveries "$HOOK" || return 1
    expect_json '.data[0].status' delivered && expect_json '.data[0].attempts' 2
}
t_case "SIGTERM gives a delivery in flight back, due at once (no lease to wait for)" t_sigterm_gives_back

# prefix_count PREFIX: the requests so far to the paths that start with
# PREFIX (/d/slow: /d/slow1 ... /d/slow4); a grep, as received: polled 10
# times a second
prefix_count() { grep -c -F ", \"path\": \"$1" "$RECEIVED"; }
# wait_prefix PREFIX N: until those paths got N requests
wait_prefix() {
    local i
    for i in $(seq 1 600); do [ "$(prefix_count "$1")" -ge "$2" ] && return 0; sleep 0.1; done
    it_fail "paths $1* got $(prefix_count "$1") requests, not $2, in 60 s"
}

t_concurrency() {
    local i slow=() fast ids
    account
    # 4 deliveries to one slow host (held unanswered until released; 2 at
    # once at most), one to another host (ALIAS, the same receiver): it is
    # not held up. webhook_timeout_ms = 60000: the worker does not give up
    # on a held request first.
    for i in 1 2 3 4; do hook "/d/slow$i?hold=1&group=slow" || return 1; slow+=("'$HOOK'"); done
    ids=$(IFS=,; echo "${slow[*]}")
    hook "https://$ALIAS:$RPORT/d/fast" || return 1
    fast=$HOOK
    bulk || return 1
    daemon "$(conf_with webhook_timeout_ms=60000)"
    # 2 to 127.0.0.1 held, and the other host's delivered meanwhile
    wait_prefix /d/slow 2 && wait_for /d/fast 1 60 || { stop_daemon; return 1; }
    # a claim after them (the one that takes another delivery to the other
    # host, due after the slow ones) found the slow host full
    http POST "/v1/webhooks/$fast/test" '{}'
    expect_status 202 && wait_for /d/fast 2 60 || { stop_daemon; return 1; }
    expect_eq "slow deliveries by state while 2 are held (webhook_host_concurrency = 2)" "pending 2 sending 2" \
        "$(it_sql "SELECT state, COUNT(*) FROM event_deliveries WHERE webhook_id IN ($ids) GROUP BY state ORDER BY state" | xargs)" ||
        { stop_daemon; return 1; }
    expect_eq "requests to the slow host while 2 are held" 2 "$(prefix_count /d/slow)" || { stop_daemon; return 1; }
    # one answered: the next one goes; and so on
    release slow 1
    wait_prefix /d/slow 3 || { stop_daemon; return 1; }
    release slow 1
    wait_prefix /d/slow 4 || { stop_daemon; return 1; }
    release slow all
    for i in 0 1 2 3; do wait_state "${slow[$i]//\'/}" delivered 60 || { stop_daemon; return 1; }; done
    stop_daemon
    # never more than 2 at once to 127.0.0.1
    expect_eq "slow requests in flight at once at most" 2 \
        "$(jq -s '[.[] | select(.path | startswith("/d/slow")) | .inflight] | max' "$RECEIVED")" || return 1
    expect_eq "every slow delivery done in one attempt" "1 1 1 1" "$(for i in 1 2 3 4; do count "/d/slow$i"; done | xargs)" || return 1
    signed /d/fast 1 "$SECRET"
}
t_case "deliveries run at once: webhook_host_concurrency per host, a slow receiver does not hold up another" t_concurrency

t_account_share() {
    local i conf=$IT_DIR/svc-accountshare.conf a=()
    # 4 slots, 2 of them at most for one account's deliveries, the host
    # cap out of the way; a receiver that holds A's requests unanswered
    # until they are released
    sed -e '/^webhook_timeout_ms = /d' -e '/^webhook_host_concurrency = /d' "$SVC_CONF" > "$conf"
    printf 'webhook_timeout_ms = 60000\nwebhook_host_concurrency = 10\nwebhook_concurrency = 4\nwebhook_account_concurrency = 2\n' >> "$conf"
    # account A: four slow webhooks, each with a test queued
    account
    for i in 1 2 3 4; do
        hook "/d/share-a$i?hold=1&group=share-a" || return 1
        a+=("'$HOOK'")
        http POST "/v1/webhooks/$HOOK/test" '{}'
        expect_status 202 || return 1
    done
    # account B: one webhook, its test queued after all of A's
    account
    hook "/d/share-b" || return 1
    http POST "/v1/webhooks/$HOOK/test" '{}'
    expect_status 202 || return 1
    daemon "$conf"
    # B's is delivered while A's first two are held, though 2 more
    # slots were free at first: A's others wait for A's slots
    wait_for /d/share-b 1 60 && wait_state "$HOOK" delivered && wait_prefix /d/share-a 2 || { stop_daemon; return 1; }
    expect_eq "A's deliveries by state while 2 are held" "pending 2 sending 2" \
        "$(it_sql "SELECT state, COUNT(*) FROM event_deliveries WHERE webhook_id IN ($(IFS=,; echo "${a[*]}")) GROUP BY state ORDER BY state" | xargs)" ||
        { stop_daemon; return 1; }
    expect_eq "A's requests while 2 are held" 2 "$(prefix_count /d/share-a)" || { stop_daemon; return 1; }
    # one of A's answered: A's next goes; and so on
    release share-a 1
    wait_prefix /d/share-a 3 || { stop_daemon; return 1; }
    release share-a all
    for i in 0 1 2 3; do wait_state "${a[$i]//\'/}" delivered 60 || { stop_daemon; return 1; }; done
    stop_daemon
    # A never had more than its 2 slots
    [ "$(jq -s '[.[] | select(.path | startswith("/d/share-a")) | .inflight] | max' "$RECEIVED")" -le 2 ] ||
        it_fail "more than 2 of A's requests answered at once" || return 1
    expect_eq "every delivery done in one attempt" "1 1 1 1 1" \
        "$(for i in 1 2 3 4; do count "/d/share-a$i"; done | xargs) $(count /d/share-b)" || return 1
    signed /d/share-b 1 "$SECRET"
}
t_case "deliveries: webhook_account_concurrency slots per account, so one account's slow webhooks do not take every slot" t_account_share

t_private_targets() {
    local noconf=$IT_DIR/svc-noprivate.conf named literal
    account
    sed 's/^allow_private_urls = yes$/allow_private_urls = no/' "$SVC_CONF" > "$noconf"
    grep -q '^allow_private_urls = no$' "$noconf" || { it_fail "no allow_private_urls line"; return 1; }
    # a name resolving to 127.0.0.1: reached with allow_private_urls = yes
    hook "https://$ALIAS:$RPORT/d/named" || return 1
    named=$HOOK
    hook "$R/d/literal" || return 1
    literal=$HOOK
    bulk || return 1
    once
    wait_for /d/named 1 10 && wait_for /d/literal 1 10 || return 1
    # with allow_private_urls = no: the name is refused when connecting,
    # the literal before any connection, and nothing arrives
    bulk || return 1
    once "$noconf"
    sleep 1
    expect_eq "requests to the named host" 1 "$(count /d/named)" || return 1
    expect_eq "requests to the literal" 1 "$(count /d/literal)" || return 1
    deliveries "$named" || return 1
    # the customer's last_error says "refused address", never which one
    expect_json '.data[0].status' pending && expect_json '.data[0].last_error' "address_refused: refused address" &&
        expect_json '.data[0].last_status_code' null || return 1
    deliveries "$literal" || return 1
    expect_json '.data[0].status' failed && expect_json '.data[0].attempts' 1 &&
        expect_jq '.data[0].last_error | startswith("url_refused")' || return 1
    # svc-api with allow_private_urls = no refuses private URLs at once
    stack_lighttpd_stop "$IT_DIR/lighttpd"
    SVC_CONF=$noconf it_api_start
    http POST /v1/webhooks "{\"url\":\"$R/x\"}"
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field url &&
        expect_jq '.error.message | test("private")' || return 1
    http POST /v1/webhooks '{"url":"https://localhost/x"}'
    expect_status 400 && expect_json .error.details.field url || return 1
    http POST /v1/webhooks '{"url":"http://example.com/x"}'
    expect_status 400 && expect_jq '.error.message | test("https://")' || return 1
    http PATCH "/v1/webhooks/$named" '{"url":"https://[::1]/x"}'
    expect_status 400 && expect_json .error.details.field url || return 1
    http POST /v1/webhooks '{"url":"https://hooks.example.com/x"}'
    expect_status 201 || return 1
    # ports: 443 and allow_url_ports only ($RPORT here)
    http POST /v1/webhooks '{"url":"https://hooks.example.com:8443/x"}'
    expect_status 400 && expect_json .error.details.field url && expect_jq '.error.message | test("port")' || return 1
    http POST /v1/webhooks '{"url":"https://hooks.example.com:443/x"}'
    expect_status 201 || return 1
    http POST /v1/webhooks "{\"url\":\"https://hooks.example.com:$RPORT/x\"}"
    expect_status 201
}
t_case "allow_private_urls = no: private literals refused by svc-api and svc-worker, a name resolving to loopback refused at connect time (last_error not naming it); ports other than 443 and allow_url_ports refused" t_private_targets

t_done
