#!/bin/bash
# test_auth_cache.sh: svc-api's cache of key rows, account windows and
# credits (src/core/authcache.h) through lighttpd with 4 responder processes
# and auth_cache_ms = 2000: GET /rate-limit and GET /v1/credits served from
# memory, counted requests, charges and refunds seen at once by every
# process, and changes that take effect everywhere by the time the call that
# made them returns: revocation through the API and svcadm, tier and
# subscription changes, credits granted by svcadm, a key's expiry.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

TTL_MS=2000
WORKERS=4
IT_API_WORKERS=$WORKERS
it_conf_add "auth_cache_ms = $TTL_MS"
it_stack_start

LOG=$IT_DIR/log/svc.log
BURST=$IT_DIR/burst

# burst KEY N PATH [CURL ARGS...]: N requests in one curl run (one
# keep-alive connection to lighttpd, each request a new FastCGI connection
# to whichever responder takes it); BURST gets one "<body> <status>" line
# per request.
burst() {
    local key=$1 n=$2 path=$3 urls=() i
    shift 3
    for i in $(seq 1 "$n"); do urls+=("$BASE_URL$path"); done
    curl -s -H "Authorization: Bearer $key" -w ' %{http_code}\n' "$@" "${urls[@]}" > "$BURST"
}

# burst_refused KEY N PATH NET: burst for a key that is refused. A request
# without a usable key counts in the anonymous bucket of its address (5 a
# minute, GET /rate-limit too), so the N come 5 at a time, each five from
# an address of its own (NET.1, NET.2, ...: one NET per case).
burst_refused() {
    local key=$1 n=$2 path=$3 net=$4 i
    : > "$BURST.all"
    for i in $(seq 1 $(( n / 5 ))); do
        burst "$key" 5 "$path" --interface "$net.$i"
        cat "$BURST" >> "$BURST.all"
    done
    mv "$BURST.all" "$BURST"
}

# expect_all WHAT REGEX: every line of the last burst matches.
expect_all() {
    local n bad
    n=$(wc -l < "$BURST")
    bad=$(grep -Evc -- "$2" "$BURST" || true)
    [ "$n" -gt 0 ] && [ "$bad" = 0 ] && return 0
    it_fail "$1: $bad of $n answers differ from /$2/, e.g. $(grep -Ev -- "$2" "$BURST" | head -n 1)"
}

log_mark() { wc -l < "$LOG"; }

# expect_every_process FROM ACCOUNT: each responder answered requests of the
# account after log line FROM (so each had the chance to cache its key).
expect_every_process() {
    local pids
    pids=$(tail -n +"$(( $1 + 1 ))" "$LOG" | grep "event=request" | grep "account=$2" |
        sed -n 's/^[^ ]* svc-api\[\([0-9]*\)\].*/\1/p' | sort -u | wc -l)
    expect_eq "responder processes that served account $2" "$WORKERS" "$pids"
}

# warm ACCOUNT KEY PATH REGEX: 80 requests of PATH, every answer matching
# REGEX, served by every responder (each has read the key and what PATH
# shows, and may answer from its cache from now on).
warm() {
    local from
    from=$(log_mark)
    burst "$2" 80 "$3"
    expect_all "before" "$4" || return 1
    expect_every_process "$from" "$1"
}

statements() {
    it_sql "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{ print $2 }'
}

key_id() { it_sql "SELECT id FROM api_keys WHERE key_hint LIKE '$(printf %.13s "$1")%'"; }

# ms_since T0: milliseconds since T0 (date +%s%3N).
ms_since() { echo $(( $(date +%s%3N) - $1 )); }

t_rate_limit_from_cache() {
    local acc key from q0 q1
    acc=$(it_account pro 0)
    key=$(it_key "$acc" 'credits:read')
    burst "$key" 40 /rate-limit
    expect_all "warm-up" '"used":0.* 200$' || return 1
    from=$(log_mark)
    q0=$(statements)
    burst "$key" 200 /rate-limit
    q1=$(statements)
    expect_all "GET /rate-limit" '"tier":"pro".*"limit":100.*"used":0.* 200$' || return 1
    expect_every_process "$from" "$acc" || return 1
    # each process reads its key and window again at most once per
    # auth_cache_ms (two statements); the SHOW STATUS counts one
    [ $(( q1 - q0 - 1 )) -le $(( 2 * WORKERS * 2 )) ] ||
        it_fail "200 GET /rate-limit ran $(( q1 - q0 - 1 )) statements"
}
t_case "GET /rate-limit with a known key is answered from memory: 200 requests, a handful of statements" t_rate_limit_from_cache

t_counted_seen_by_every_process() {
    local acc key
    acc=$(it_account pro 5)
    key=$(it_key "$acc" 'credits:read')
    burst "$key" 40 /rate-limit
    expect_all "before any counted request" '"used":0,.* 200$' || return 1
    API_KEY=$key http GET /v1/credits; expect_status 200 || return 1
    burst "$key" 40 /rate-limit
    expect_all "after one counted request" '"remaining":99,"used":1,.* 200$' || return 1
    burst "$key" 3 /v1/credits
    expect_all "counted" ' 200$' || return 1
    burst "$key" 40 /rate-limit
    expect_all "after four counted requests" '"remaining":96,"used":4,.* 200$'
}
t_case "a counted request shows in GET /rate-limit at once, whichever process answers" t_counted_seen_by_every_process

t_revoke_api() {
    local acc admin key id t0 took
    acc=$(it_account pro 0)
    admin=$(it_key "$acc" '*')
    key=$(it_key "$acc" 'credits:read')
    id=$(key_id "$key")
    warm "$acc" "$key" /rate-limit ' 200$' || return 1
    t0=$(date +%s%3N)
    API_KEY=$admin http DELETE "/v1/keys/$id"
    took=$(ms_since "$t0")
    expect_status 200 && expect_json .revoked true || return 1
    [ "$took" -ge "$TTL_MS" ] || it_fail "DELETE returned after $took ms, before auth_cache_ms"
    burst_refused "$key" 80 /rate-limit 127.0.31
    expect_all "GET /rate-limit after the DELETE" '"API key has been revoked".* 401$' || return 1
    # refused keys are counted in the anonymous bucket of the address (5 a
    # minute), so these come from an address of their own
    burst "$key" 5 /v1/credits --interface 127.0.0.21
    expect_all "GET /v1/credits after the DELETE" '"API key has been revoked".* 401$'
}
t_case "DELETE /v1/keys/{id} returns after auth_cache_ms, and from then on every process refuses the key" t_revoke_api

t_revoke_svcadm() {
    local acc key id from t0 took
    acc=$(it_account pro 0)
    key=$(it_key "$acc" 'credits:read')
    id=$(key_id "$key")
    from=$(log_mark)
    burst "$key" 80 /rate-limit
    expect_every_process "$from" "$acc" || return 1
    t0=$(date +%s%3N)
    svcadm key revoke "$id"
    took=$(ms_since "$t0")
    [ "$took" -ge "$TTL_MS" ] || it_fail "svcadm key revoke returned after $took ms"
    burst_refused "$key" 80 /rate-limit 127.0.32
    expect_all "after svcadm key revoke" '"API key has been revoked".* 401$'
}
t_case "svcadm key revoke returns once every process refuses the key" t_revoke_svcadm

t_account_changes() {
    local acc key from
    acc=$(it_account pro 0)
    key=$(it_key "$acc" '*')
    from=$(log_mark)
    burst "$key" 80 /rate-limit
    expect_all "pro" '"tier":"pro".*"limit":100,.* 200$' || return 1
    expect_every_process "$from" "$acc" || return 1
    svcadm account tier "$acc" admin
    burst "$key" 80 /rate-limit
    expect_all "after svcadm account tier" '"tier":"admin".*"limit":1000,.* 200$' || return 1
    burst "$key" 20 /v1/credits
    expect_all "credits" ' 200$' || return 1
    svcadm account subscription "$acc" inactive
    burst "$key" 40 /v1/credits
    expect_all "after svcadm account subscription inactive" '"subscription_required".* 403$'
}
t_case "tier and subscription changes by svcadm hold in every process when svcadm returns" t_account_changes

t_credits_from_cache() {
    local acc key from q0 q1
    acc=$(it_account admin 50)
    key=$(it_key "$acc" 'credits:read')
    burst "$key" 40 /v1/credits
    expect_all "warm-up" '^\{"balance":50,"used":0,"refunded":0,"organization":null\} 200$' || return 1
    from=$(log_mark)
    q0=$(statements)
    burst "$key" 200 /v1/credits
    q1=$(statements)
    expect_all "GET /v1/credits" '^\{"balance":50,"used":0,"refunded":0,"organization":null\} 200$' || return 1
    expect_every_process "$from" "$acc" || return 1
    # each process reads its key and the credits again at most once per
    # auth_cache_ms, and the host leases permits about once a second;
    # without the cache it would be 200 statements at least
    [ $(( q1 - q0 - 1 )) -le $(( 2 * WORKERS * 2 + 8 )) ] ||
        it_fail "200 GET /v1/credits ran $(( q1 - q0 - 1 )) statements"
}
t_case "GET /v1/credits is answered from memory: 200 requests, a handful of statements" t_credits_from_cache

t_charge_and_refund_seen_at_once() {
    local acc key job
    acc=$(it_account admin 50)
    key=$(it_key "$acc" 'credits:read,verify:bulk,jobs:write')
    warm "$acc" "$key" /v1/credits '"balance":50,"used":0,.* 200$' || return 1
    API_KEY=$key http POST /v1/verify/bulk '{"emails":["a@seen.example","b@seen.example"]}'
    expect_status 202 && expect_json .credits_remaining 48 || return 1
    job=$(json .job_id)
    burst "$key" 40 /v1/credits
    expect_all "right after the charge" '"balance":48,"used":2,"refunded":0,.* 200$' || return 1
    API_KEY=$key http DELETE "/v1/jobs/$job"
    expect_status 200 && expect_json .credits_refunded 2 || return 1
    burst "$key" 40 /v1/credits
    expect_all "right after the refund" '"balance":50,"used":2,"refunded":2,.* 200$'
}
t_case "a charge and a refund made through the API show in the next GET /v1/credits, whichever process answers" t_charge_and_refund_seen_at_once

t_org_pool_seen_by_members() {
    local org reader payer rkey pkey
    org=$(svcadm org create --name "Cache $RANDOM" --credits 30)
    reader=$(it_account admin 0)
    payer=$(it_account admin 0)
    svcadm org add "$org" "$reader"
    svcadm org add "$org" "$payer"
    rkey=$(it_key "$reader" 'credits:read')
    # the reader's key is its own (its account's organization is found by
    # the read), the payer's is the organization's (charged to its pool)
    pkey=$(it_key "$payer" 'verify:bulk' --org "$org")
    warm "$reader" "$rkey" /v1/credits "\"organization\":{\"id\":\"$org\",\"balance\":30}} 200\$" || return 1
    API_KEY=$pkey http POST /v1/verify/bulk '{"emails":["a@org.example","b@org.example","c@org.example"]}'
    expect_status 202 && expect_json .credits_remaining 27 || return 1
    burst "$rkey" 40 /v1/credits
    expect_all "after another member's charge" "\"organization\":{\"id\":\"$org\",\"balance\":27}} 200\$"
}
t_case "a charge of the organization's pool by one member shows at once in another member's GET /v1/credits" t_org_pool_seen_by_members

t_credits_changed_elsewhere() {
    local acc key t0 took
    acc=$(it_account admin 10)
    key=$(it_key "$acc" 'credits:read')
    warm "$acc" "$key" /v1/credits '"balance":10,.* 200$' || return 1
    t0=$(date +%s%3N)
    svcadm credits grant "$acc" 5 > /dev/null
    took=$(ms_since "$t0")
    [ "$took" -ge "$TTL_MS" ] || it_fail "svcadm credits grant returned after $took ms"
    burst "$key" 80 /v1/credits
    expect_all "after svcadm credits grant" '"balance":15,.* 200$' || return 1
    # as svc-worker's refunds and other hosts' charges are: not through
    # this host's API, so shown once the cached reads are auth_cache_ms old
    it_sql "UPDATE credit_pools SET balance = balance + 1, refunded = refunded + 1 WHERE owner_id = '$acc'"
    sleep "$(( TTL_MS / 1000 )).1"
    burst "$key" 80 /v1/credits
    expect_all "auth_cache_ms after a change elsewhere" '"balance":16,"used":0,"refunded":1,.* 200$'
}
t_case "credits granted by svcadm show in every process when it returns, other changes within auth_cache_ms" t_credits_changed_elsewhere

t_expiry() {
    local acc key expires now from
    acc=$(it_account pro 0)
    now=$(date +%s)
    expires=$(( now + 5 ))
    key=$(it_key "$acc" 'credits:read' --expires "$(date -u -d "@$expires" +%Y-%m-%dT%H:%M:%SZ)")
    from=$(log_mark)
    # keep every process's row fresh up to just before the expiry; a burst
    # is judged only when it ended before the expiry (on a loaded machine
    # one that straddles it may rightly get some 401s)
    while [ "$(date +%s%3N)" -lt $(( expires * 1000 - 400 )) ]; do
        burst "$key" 20 /rate-limit
        [ "$(date +%s%3N)" -lt $(( expires * 1000 )) ] || break
        expect_all "before the expiry" ' 200$' || return 1
    done
    expect_every_process "$from" "$acc" || return 1
    while [ "$(date +%s%3N)" -lt $(( expires * 1000 + 100 )) ]; do sleep 0.05; done
    burst_refused "$key" 80 /rate-limit 127.0.33
    expect_all "after the expiry" '"API key has expired".* 401$'
}
t_case "a cached key is refused from its expiry on, by every process" t_expiry

t_done
