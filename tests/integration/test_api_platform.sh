#!/bin/bash
# test_api_platform.sh: the foundation's rules, checked by HTTP through
# lighttpd and svc-api against a real MariaDB: authentication, scopes, IP
# allowlists with trusted proxies, subscriptions, rate limits (tiers, key and
# organization overrides, anonymous buckets by address, concurrency across
# responder processes), credits, the key management API, Idempotency-Key,
# routing errors, body limits, request ids and the request log.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_conf_add "trusted_proxies = 127.0.0.1/32"
it_stack_start

PRO=$(it_account pro 250)
PRO_KEY=$(it_key "$PRO" '*')

# Unauthenticated requests share the anonymous bucket of their address, so
# each case that makes some comes from its own loopback address.
from() { echo "--interface 127.0.0.$1"; }

t_missing_key() {
    API_KEY= http GET /v1/credits "" $(from 11)
    expect_status 401 && expect_json .error.code unauthorized &&
        expect_json .error.details null && expect_header X-Request-Id &&
        expect_header X-RateLimit-Limit 5 && expect_header X-RateLimit-Remaining 4
}
t_case "a request without a key gets 401 unauthorized with the error object and rate-limit headers" t_missing_key

t_bad_keys() {
    local k
    for k in "svc_live_short" "Basic Zm9vOmJhcg==" "svc_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" \
            "svc_nope_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"; do
        API_KEY= http GET /v1/credits "" -H "Authorization: Bearer $k" $(from 12)
        expect_status 401 || return 1
        expect_json .error.code unauthorized || return 1
    done
}
t_case "malformed, unknown and foreign keys get 401" t_bad_keys

t_revoked_key() {
    local key id
    key=$(it_key "$PRO" 'credits:read')
    API_KEY=$key http GET /v1/credits; expect_status 200 || return 1
    id=$(it_sql "SELECT id FROM api_keys WHERE key_hint LIKE '$(printf %.13s "$key")%'")
    svcadm key revoke "$id"
    API_KEY=$key http GET /v1/credits ""; expect_status 401 && expect_json .error.message "API key has been revoked"
}
t_case "a key revoked with svcadm is refused at once" t_revoked_key

t_expired_key() {
    local key
    key=$(it_key "$PRO" 'credits:read' --expires 2099-01-01T00:00:00Z)
    API_KEY=$key http GET /v1/credits; expect_status 200 || return 1
    it_sql "UPDATE api_keys SET expires_at = UTC_TIMESTAMP() - INTERVAL 1 SECOND WHERE key_hint LIKE '$(printf %.13s "$key")%'"
    # changed in SQL behind svc's back: in force once the responders' cached
    # rows are older than auth_cache_ms (1 s by default); test_auth_cache.sh
    # covers keys that reach their expiry while cached
    sleep 1.1
    API_KEY=$key http GET /v1/credits; expect_status 401 && expect_json .error.message "API key has expired"
}
t_case "an expired key gets 401" t_expired_key

t_scope() {
    local key
    key=$(it_key "$PRO" 'jobs:read')
    API_KEY=$key http GET /v1/credits
    expect_status 403 && expect_json .error.code insufficient_scope &&
        expect_json .error.details.required_scope credits:read &&
        expect_jq '.error.message | contains("credits:read")' || return 1
    API_KEY=$key http GET /v1/keys; expect_status 403 && expect_json .error.details.required_scope '*' || return 1
    API_KEY=$key http POST /v1/verify '{"email":"a@b.example"}'
    expect_status 403 && expect_json .error.details.required_scope verify:single
}
t_case "a key without the endpoint's scope gets 403 insufficient_scope naming the scope" t_scope

t_star_scope() {
    API_KEY=$PRO_KEY http GET /v1/credits; expect_status 200 && expect_json .balance 250
}
t_case "the * scope reaches every scoped endpoint" t_star_scope

# every scope but *: no way to make, see or revoke keys
t_keys_need_star() {
    local acc key id
    acc=$(it_account pro 0)
    key=$(it_key "$acc" 'verify:single,verify:bulk,jobs:read,jobs:write,webhooks:manage,credits:read')
    id=$(it_sql "SELECT id FROM api_keys WHERE account_id = '$acc'")
    API_KEY=$key http POST /v1/keys '{"scopes":["*"]}'
    expect_status 403 && expect_json .error.code insufficient_scope && expect_json .error.details.required_scope '*' || return 1
    API_KEY=$key http GET /v1/keys; expect_status 403 || return 1
    API_KEY=$key http DELETE "/v1/keys/$id"; expect_status 403 || return 1
    expect_eq "keys of the account" "1 0" "$(it_sql "SELECT COUNT(*), COUNT(revoked_at) FROM api_keys WHERE account_id = '$acc'" | tr '\t' ' ')" || return 1
    API_KEY=$key http GET /v1/credits; expect_status 200
}
t_case "a key with every scope but * can neither create, list nor revoke keys (403 insufficient_scope)" t_keys_need_star

t_ip_allowlist() {
    local k4 k6 kl
    k4=$(it_key "$PRO" 'credits:read' --ip-allow 10.0.0.0/8 --ip-allow 192.0.2.7)
    k6=$(it_key "$PRO" 'credits:read' --ip-allow 2001:db8::/32)
    kl=$(it_key "$PRO" 'credits:read' --ip-allow 127.0.0.0/8)
    API_KEY=$kl http GET /v1/credits; expect_status 200 || return 1
    API_KEY=$k4 http GET /v1/credits; expect_status 403 && expect_json .error.code ip_not_allowed || return 1
    API_KEY=$k4 http GET /v1/credits "" -H "X-Forwarded-For: 10.9.8.7"; expect_status 200 || return 1
    API_KEY=$k4 http GET /v1/credits "" -H "X-Forwarded-For: 192.0.2.7"; expect_status 200 || return 1
    API_KEY=$k4 http GET /v1/credits "" -H "X-Forwarded-For: 192.0.2.8"; expect_status 403 || return 1
    # the right-most untrusted hop is the client; a hop added by the
    # trusted proxy itself is skipped
    API_KEY=$k4 http GET /v1/credits "" -H "X-Forwarded-For: 10.1.1.1, 192.0.2.8"; expect_status 403 || return 1
    API_KEY=$k4 http GET /v1/credits "" -H "X-Forwarded-For: 192.0.2.8, 10.1.1.1, 127.0.0.1"; expect_status 200 || return 1
    API_KEY=$k6 http GET /v1/credits "" -H "X-Forwarded-For: 2001:db8:5::1"; expect_status 200 || return 1
    API_KEY=$k6 http GET /v1/credits "" -H "X-Forwarded-For: 2001:db9::1"; expect_status 403 || return 1
    # from an address that is not a trusted proxy, X-Forwarded-For is ignored
    API_KEY=$k4 http GET /v1/credits "" -H "X-Forwarded-For: 10.9.8.7" $(from 13)
    expect_status 403 && expect_json .error.code ip_not_allowed
}
t_case "IP allowlists (IPv4 and IPv6 CIDR) with X-Forwarded-For believed only from trusted proxies" t_ip_allowlist

t_subscription() {
    local acc key
    acc=$(it_account trial 5)
    key=$(it_key "$acc" '*')
    API_KEY=$key http GET /v1/credits; expect_status 200 || return 1
    svcadm account subscription "$acc" inactive
    API_KEY=$key http GET /v1/credits
    expect_status 403 && expect_json .error.code subscription_required || return 1
    API_KEY=$key http GET /rate-limit; expect_status 200 || return 1
    svcadm account subscription "$acc" active
    API_KEY=$key http GET /v1/credits; expect_status 200
}
t_case "an account without an active subscription gets 403 subscription_required" t_subscription

t_free_tier_limit() {
    local acc key i now reset retry
    acc=$(it_account free 0)
    key=$(it_key "$acc" '*')
    for i in $(seq 1 10); do
        API_KEY=$key http GET /v1/credits
        expect_status 200 || return 1
        expect_header X-RateLimit-Limit 10 || return 1
        expect_header X-RateLimit-Remaining $((10 - i)) || return 1
    done
    API_KEY=$key http GET /v1/credits
    expect_status 429 && expect_json .error.code rate_limited && expect_json .error.details.limit 10 &&
        expect_json .error.details.remaining 0 && expect_header X-RateLimit-Remaining 0 || return 1
    now=$(date +%s); reset=$(json .error.details.reset_at); retry=$(header_value Retry-After)
    expect_jq ".error.details.reset_at > $now and .error.details.reset_at <= $now + 61" || return 1
    [ "$retry" -ge 1 ] && [ "$retry" -le 60 ] || it_fail "Retry-After $retry is not 1..60"
    expect_eq "X-RateLimit-Reset" "$reset" "$(header_value X-RateLimit-Reset)" || return 1
    # the window is shared by every key of the account
    API_KEY=$(it_key "$acc" 'credits:read') http GET /v1/credits; expect_status 429 || return 1
    # asking how much is left does not use any of it
    API_KEY=$key http GET /rate-limit
    expect_status 200 && expect_json .tier free && expect_json .limit 10 && expect_json .used 10 &&
        expect_json .remaining 0 && expect_json .success true && expect_json .subscription_type free
}
t_case "the free tier allows 10 requests a minute, then 429 with Retry-After and details" t_free_tier_limit

t_tier_limits() {
    local t l acc
    for t in free:10 trial:30 pro:100 admin:1000; do
        acc=$(it_account "${t%%:*}" 0)
        API_KEY=$(it_key "$acc" 'credits:read') http GET /rate-limit
        expect_json .limit "${t##*:}" || return 1
        expect_json .tier "${t%%:*}" || return 1
    done
}
t_case "tiers Free 10, Trial 30, Pro 100, Admin 1000 requests per minute" t_tier_limits

t_key_override() {
    local acc key other
    acc=$(it_account pro 0)
    key=$(it_key "$acc" 'credits:read' --rate-limit 3)
    other=$(it_key "$acc" 'credits:read')
    for i in 1 2 3; do API_KEY=$key http GET /v1/credits; expect_status 200 || return 1; done
    API_KEY=$key http GET /v1/credits; expect_status 429 && expect_json .error.details.limit 3 || return 1
    # the override applies to that key only; the account's tier limit to the others
    API_KEY=$other http GET /v1/credits; expect_status 200 && expect_header X-RateLimit-Limit 100
}
t_case "a key's rate_limit replaces the tier limit for that key only" t_key_override

t_org_limit() {
    local org acc key own
    org=$(svcadm org create --name "Acme $RANDOM" --rate-limit 2 --credits 40)
    acc=$(it_account pro 7)
    svcadm org add "$org" "$acc"
    key=$(it_key "$acc" '*' --org "$org")
    own=$(it_key "$acc" '*')
    API_KEY=$key http GET /v1/credits; expect_status 200 && expect_header X-RateLimit-Limit 2 || return 1
    expect_json .balance 7 && expect_json .organization.id "$org" && expect_json .organization.balance 40 || return 1
    API_KEY=$key http GET /v1/credits; expect_status 200 || return 1
    API_KEY=$key http GET /v1/credits; expect_status 429 || return 1
    API_KEY=$own http GET /rate-limit; expect_json .limit 100
}
t_case "an organization's api_rate_limit applies to its keys; credits show the organization pool" t_org_limit

t_anonymous_limit() {
    local i
    for i in 1 2 3 4 5; do
        API_KEY= http GET /v1/nothing-here "" $(from 14); expect_status 404 || return 1
    done
    API_KEY= http GET /v1/nothing-here "" $(from 14)
    expect_status 429 && expect_json .error.details.limit 5 || return 1
    # another address has its own bucket; /rate-limit works without a key
    API_KEY= http GET /rate-limit "" $(from 15)
    expect_status 200 && expect_json .tier anonymous && expect_json .limit 5 &&
        expect_json .remaining 4 && expect_json .used 1 && expect_json .subscription_type none
}
t_case "anonymous requests are limited to 5 a minute per IP address" t_anonymous_limit

# GET /rate-limit without a key is counted like any request without a key:
# the sixth in a minute from one address is 429, and a key that is not
# usable (unknown) counts in the same bucket
t_rate_limit_status_anonymous_counted() {
    local i
    for i in 1 2 3 4; do
        API_KEY= http GET /rate-limit "" $(from 17)
        expect_status 200 && expect_json .used "$i" && expect_json .remaining $((5 - i)) &&
            expect_header X-RateLimit-Remaining $((5 - i)) || return 1
    done
    API_KEY= http GET /rate-limit "" -H "Authorization: Bearer svc_live_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB" $(from 17)
    expect_status 401 && expect_header X-RateLimit-Remaining 0 || return 1
    API_KEY= http GET /rate-limit "" $(from 17)
    expect_status 429 && expect_json .error.code rate_limited && expect_json .error.details.limit 5 &&
        expect_header Retry-After || return 1
    expect_eq "the address's count" 5 "$(it_sql "SELECT COALESCE(SUM(n), 0) FROM rate_counts WHERE bucket = 'ip:127.0.0.17'")"
}
t_case "GET /rate-limit without a usable key is counted in its address's bucket: the sixth in a minute is 429" t_rate_limit_status_anonymous_counted

# anonymous clients behind the trusted proxy (127.0.0.1): IPv6 per /64
t_anonymous_ipv6_per_64() {
    local i
    for i in 1 2 3 4 5; do
        API_KEY= http GET /v1/nothing-here "" -H "X-Forwarded-For: 2001:db8:5:7::$i"; expect_status 404 || return 1
    done
    API_KEY= http GET /v1/nothing-here "" -H "X-Forwarded-For: 2001:db8:5:7:ffff:1:2:3"
    expect_status 429 || return 1
    API_KEY= http GET /v1/nothing-here "" -H "X-Forwarded-For: 2001:db8:5:8::1"; expect_status 404 || return 1
    # IPv4 stays per address
    for i in 1 2 3 4 5; do
        API_KEY= http GET /v1/nothing-here "" -H "X-Forwarded-For: 198.51.100.7"; expect_status 404 || return 1
    done
    API_KEY= http GET /v1/nothing-here "" -H "X-Forwarded-For: 198.51.100.8"; expect_status 404 || return 1
    expect_eq "the /64's bucket" 1 "$(it_sql "SELECT COUNT(*) FROM rate_buckets WHERE bucket = 'ip:2001:db8:5:7::/64'")"
}
t_case "anonymous IPv6 clients share one bucket per /64, IPv4 clients have one per address" t_anonymous_ipv6_per_64

t_rate_limit_status_key() {
    local acc key kx kip id reset i
    acc=$(it_account trial 0)
    key=$(it_key "$acc" 'credits:read')
    for i in 1 2 3; do API_KEY=$key http GET /v1/credits; expect_status 200 || return 1; done
    reset=$(header_value X-RateLimit-Reset)
    # the status reports the account's window (3 used) and does not count itself
    for i in 1 2; do
        API_KEY=$key http GET /rate-limit
        expect_status 200 && expect_json .tier trial && expect_json .limit 30 && expect_json .used 3 &&
            expect_json .remaining 27 && expect_json .reset_at "$reset" || return 1
        expect_header X-RateLimit-Limit 30 && expect_header X-RateLimit-Remaining 27 &&
            expect_header X-RateLimit-Reset "$reset" || return 1
    done
    # another key of the same account sees the same window
    API_KEY=$(it_key "$acc" 'jobs:read') http GET /rate-limit; expect_json .used 3 || return 1
    # revoked: refused at once, answered from the anonymous bucket of the address
    id=$(it_sql "SELECT id FROM api_keys WHERE key_hint LIKE '$(printf %.13s "$key")%'")
    svcadm key revoke "$id"
    API_KEY=$key http GET /rate-limit "" $(from 16)
    expect_status 401 && expect_json .error.message "API key has been revoked" &&
        expect_header X-RateLimit-Limit 5 && expect_header X-RateLimit-Remaining 4 || return 1
    kx=$(it_key "$acc" 'credits:read' --expires 2099-01-01T00:00:00Z)
    API_KEY=$kx http GET /rate-limit; expect_status 200 && expect_json .used 3 || return 1
    it_sql "UPDATE api_keys SET expires_at = UTC_TIMESTAMP() - INTERVAL 1 SECOND WHERE key_hint LIKE '$(printf %.13s "$kx")%'"
    sleep 1.1	# past auth_cache_ms, as in t_expired_key
    API_KEY=$kx http GET /rate-limit "" $(from 16)
    expect_status 401 && expect_json .error.message "API key has expired" && expect_header X-RateLimit-Limit 5 || return 1
    API_KEY= http GET /rate-limit "" -H "Authorization: Bearer svc_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" $(from 16)
    expect_status 401 && expect_json .error.message "API key is not valid" && expect_header X-RateLimit-Limit 5 || return 1
    kip=$(it_key "$acc" 'credits:read' --ip-allow 10.0.0.0/8)
    API_KEY=$kip http GET /rate-limit "" $(from 16)
    expect_status 403 && expect_json .error.code ip_not_allowed && expect_header X-RateLimit-Limit 5 &&
        expect_header X-RateLimit-Remaining 1
}
t_case "GET /rate-limit with a key: the account's window, not counted; revoked, expired, unknown and off-allowlist keys refused at once (and counted in the address's bucket)" t_rate_limit_status_key

# Requests counted 60 and 58 seconds ago (rows as ratelimit_lease writes
# them): by default the window is the spec's 60 seconds, so only the second
# ones count, for the status and for a counted request alike
# (test_rate_window.sh tests the sliding itself with a short window).
# The 58 s row leaves the window 2 s later: what the answers say is judged
# only when the database's clock after them shows that they came before
# that; on a machine too slow for that the case starts again (3 tries).
t_window_is_60s() {
    local acc key now try
    for try in 1 2 3; do
        acc=$(it_account trial 0)
        key=$(it_key "$acc" 'credits:read')
        now=$(it_sql "SELECT UNIX_TIMESTAMP()")
        it_sql "INSERT INTO rate_buckets (bucket) VALUES ('acct:$acc');
            INSERT INTO rate_counts (bucket, sec, n) VALUES ('acct:$acc', $now - 60, 20), ('acct:$acc', $now - 58, 3)"
        API_KEY=$key http GET /rate-limit
        local status=$HTTP_STATUS body=$HTTP_BODY
        API_KEY=$key http GET /v1/credits
        if [ "$(it_sql "SELECT UNIX_TIMESTAMP()")" -ge $((now + 2)) ]; then
            it_log "try $try: the requests took longer than the 2 s the 58 s row stays; again"
            continue
        fi
        expect_status 200 && expect_header X-RateLimit-Remaining 26 || return 1
        HTTP_STATUS=$status HTTP_BODY=$body
        expect_status 200 && expect_json .used 3 && expect_json .remaining 27 && expect_json .reset_at $((now + 2))
        return
    done
    it_fail "three tries, each slower than 2 s"
}
t_case "the default window is the last 60 seconds: requests 60 s old no longer count, 58 s old still do" t_window_is_60s

t_concurrent_limit() {
    local acc key i ok pids=()
    acc=$(it_account free 0)
    key=$(it_key "$acc" 'credits:read')
    for i in $(seq 1 30); do
        curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $key" "$BASE_URL/v1/credits" \
            >> "$IT_DIR/concurrent" &
        pids+=($!)
    done
    # only the clients: a bare "wait" would wait for the servers too
    wait "${pids[@]}"
    ok=$(grep -c '^200$' "$IT_DIR/concurrent" || true)
    expect_eq "200 answers out of 30 concurrent requests with a limit of 10" 10 "$ok" || return 1
    expect_eq "429 answers" 20 "$(grep -c '^429$' "$IT_DIR/concurrent" || true)"
}
t_case "30 concurrent requests across responder processes let exactly the limit through" t_concurrent_limit

t_keys_api() {
    local acc admin created id key
    acc=$(it_account pro 0)
    admin=$(it_key "$acc" '*')
    API_KEY=$admin http POST /v1/keys '{"name":"ci","scopes":["credits:read","jobs:read"],"rate_limit":50,"ip_allowlist":["127.0.0.0/8","::1"]}'
    expect_status 201 && expect_json .name ci && expect_json '.scopes | join(",")' 'jobs:read,credits:read' &&
        expect_json .rate_limit 50 && expect_json '.ip_allowlist | length' 2 && expect_json .sandbox false || return 1
    key=$(json .key); id=$(json .id)
    [[ $key == svc_live_* ]] || it_fail "new key $key lacks the live prefix"
    API_KEY=$key http GET /v1/credits; expect_status 200 && expect_header X-RateLimit-Limit 50 || return 1
    API_KEY=$admin http GET /v1/keys
    expect_status 200 && expect_jq "[.data[] | select(.id == \"$id\")] | length == 1" || return 1
    expect_jq '[.data[] | has("key")] | any | not' || return 1
    expect_jq "(.data[] | select(.id == \"$id\") | .hint) | startswith(\"$(printf %.13s "$key")\")" || return 1
    API_KEY=$admin http DELETE "/v1/keys/$id"; expect_status 200 && expect_json .revoked true || return 1
    API_KEY=$key http GET /v1/credits; expect_status 401 || return 1
    API_KEY=$admin http GET /v1/keys; expect_json "(.data[] | select(.id == \"$id\") | .status)" revoked || return 1
    # another account's key is not found
    API_KEY=$PRO_KEY http DELETE "/v1/keys/$id"; expect_status 404 && expect_json .error.code not_found || return 1
    # sandbox keys carry the test prefix
    API_KEY=$admin http POST /v1/keys '{"scopes":"verify:single","sandbox":true}'
    expect_status 201 && expect_jq '.key | startswith("svc_test_")' && expect_json .sandbox true
}
t_case "keys are created (shown once), listed by hint, revoked at once through the API" t_keys_api

t_keys_rate_limit_cap() {
    local acc key org okey id
    acc=$(it_account pro 0)
    key=$(it_key "$acc" '*')
    API_KEY=$key http POST /v1/keys '{"scopes":["*"],"rateLimit":101}'
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field rateLimit &&
        expect_jq '.error.message | contains("100")' || return 1
    API_KEY=$key http POST /v1/keys '{"scopes":["*"],"rate_limit":5000}'
    expect_status 400 && expect_json .error.details.field rate_limit || return 1
    API_KEY=$key http POST /v1/keys '{"scopes":["*"],"rateLimit":7,"rate_limit":8}'
    expect_status 400 && expect_json .error.details.field rateLimit || return 1
    expect_eq "keys created beyond the tier" 1 "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$acc'")" || return 1
    API_KEY=$key http POST /v1/keys '{"scopes":["credits:read"],"rateLimit":100}'
    expect_status 201 && expect_json .rateLimit 100 && expect_json .rate_limit 100 || return 1
    API_KEY=$key http POST /v1/keys '{"scopes":["credits:read"],"rate_limit":4}'
    expect_status 201 && expect_json .rateLimit 4 || return 1
    id=$(json .id)
    API_KEY=$(json .key) http GET /v1/credits; expect_header X-RateLimit-Limit 4 || return 1
    API_KEY=$key http GET /v1/keys
    expect_json "(.data[] | select(.id == \"$id\") | .rateLimit)" 4 || return 1
    # an organization's key may go up to the organization's api_rate_limit
    org=$(svcadm org create --name "Cap $RANDOM" --rate-limit 20)
    svcadm org add "$org" "$acc"
    okey=$(it_key "$acc" '*' --org "$org")
    API_KEY=$okey http POST /v1/keys '{"scopes":["*"],"rateLimit":21}'
    expect_status 400 && expect_jq '.error.message | contains("20")' || return 1
    API_KEY=$okey http POST /v1/keys '{"scopes":["*"],"rateLimit":20}'; expect_status 201 || return 1
    # only the operator lifts a key above its tier
    svcadm key set "$id" --rate-limit 1000
    API_KEY=$key http GET /v1/keys
    expect_json "(.data[] | select(.id == \"$id\") | .rateLimit)" 1000 || return 1
    svcadm key set "$id" --rate-limit none
    API_KEY=$key http GET /v1/keys
    expect_json "(.data[] | select(.id == \"$id\") | .rateLimit)" null
}
t_case "a customer's key may set rateLimit (or rate_limit) only up to its tier or organization limit; svcadm key set lifts it" t_keys_rate_limit_cap

t_keys_rate_limit_default() {
    local acc key id k codes facc fkey org okey used
    # an Admin account (1,000 a minute): a key made without rateLimit gets
    # the spec's default, 100, shown and enforced
    acc=$(it_account admin 0)
    key=$(it_key "$acc" '*')
    API_KEY=$key http POST /v1/keys '{"name":"no-limit","scopes":["credits:read"]}'
    expect_status 201 && expect_json .rateLimit 100 && expect_json .rate_limit 100 || return 1
    id=$(json .id); k=$(json .key)
    API_KEY=$key http GET /v1/keys
    expect_json "(.data[] | select(.id == \"$id\") | .rateLimit)" 100 || return 1
    expect_eq "stored limit" 100 "$(it_sql "SELECT rate_limit FROM api_keys WHERE id = '$id'")" || return 1
    # the account's other key still has the tier's 1,000
    API_KEY=$key http GET /v1/credits; expect_header X-RateLimit-Limit 1000 || return 1
    # the window is the account's (every key of it counts there): with
    # the new key, requests up to the window's 100th pass and the 101st
    # is refused, while the tier would allow 1,000
    API_KEY=$k http GET /rate-limit; expect_status 200 && expect_json .limit 100 || return 1
    used=$(json .used)
    [ "$used" -ge 1 ] && [ "$used" -lt 100 ] || it_fail "used $used" || return 1
    codes=$(curl -s -H "Authorization: Bearer $k" $(for _ in $(seq 1 $((100 - used))); do printf '%s ' "-o /dev/null -w %{http_code}\n $BASE_URL/v1/credits"; done) | sort | uniq -c | awk '{ print $2 "x" $1 }' | tr '\n' ' ')
    expect_eq "the key's requests up to the window's 100th" "200x$((100 - used)) " "$codes" || return 1
    API_KEY=$k http GET /v1/credits; expect_status 429 && expect_json .error.details.limit 100 || return 1
    API_KEY=$key http GET /v1/credits; expect_status 200 || return 1
    # a Free account (10 a minute): the default is clamped to the tier's
    facc=$(it_account free 0)
    fkey=$(it_key "$facc" '*')
    API_KEY=$fkey http POST /v1/keys '{"scopes":["credits:read"]}'
    expect_status 201 && expect_json .rateLimit 10 || return 1
    # an organization's key: clamped to the organization's api_rate_limit
    # (another Admin account: the first one's window is used up)
    acc=$(it_account admin 0)
    org=$(svcadm org create --name "Default $RANDOM" --rate-limit 20)
    svcadm org add "$org" "$acc"
    okey=$(it_key "$acc" '*' --org "$org")
    API_KEY=$okey http POST /v1/keys '{"scopes":["credits:read"]}'
    expect_status 201 && expect_json .rateLimit 20 || return 1
    # the operator's key without --rate-limit has no override (the tier's)
    expect_eq "svcadm keys without a limit" 1 "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$facc' AND rate_limit IS NULL")"
}
t_case "a key made through the API without rateLimit gets 100 a minute (shown, enforced: the 101st of the window is refused where the tier allows 1,000), or its tier's or organization's lower limit" t_keys_rate_limit_default

t_sandbox_key_makes_sandbox_keys() {
    local acc sb
    acc=$(it_account pro 0)
    sb=$(it_key "$acc" '*' --sandbox)
    API_KEY=$sb http POST /v1/keys '{"scopes":["*"]}'
    expect_status 403 && expect_json .error.code sandbox_key_restricted || return 1
    API_KEY=$sb http POST /v1/keys '{"scopes":["verify:single"],"sandbox":false}'
    expect_status 403 && expect_json .error.code sandbox_key_restricted || return 1
    expect_eq "live keys of the account" 0 "$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$acc' AND sandbox = 0")" || return 1
    API_KEY=$sb http POST /v1/keys '{"scopes":["*"],"sandbox":true}'
    expect_status 201 && expect_json .sandbox true && expect_jq '.key | startswith("svc_test_")'
}
t_case "a sandbox key creates sandbox keys only: a live key asked for is 403 sandbox_key_restricted" t_sandbox_key_makes_sandbox_keys

t_key_limit_clamped_after_downgrade() {
    local acc admin key id
    acc=$(it_account pro 0)
    admin=$(it_key "$acc" '*')
    API_KEY=$admin http POST /v1/keys '{"scopes":["credits:read"],"rateLimit":80}'
    expect_status 201 || return 1
    key=$(json .key); id=$(json .id)
    API_KEY=$key http GET /v1/credits; expect_header X-RateLimit-Limit 80 || return 1
    svcadm account tier "$acc" free    # returns once no process trusts the old tier
    API_KEY=$key http GET /v1/credits; expect_status 200 && expect_header X-RateLimit-Limit 10 || return 1
    API_KEY=$key http GET /rate-limit; expect_json .limit 10 || return 1
    # a limit below the tier's is kept; the operator's lift is kept above it
    svcadm key set "$id" --rate-limit 4
    API_KEY=$key http GET /v1/credits; expect_header X-RateLimit-Limit 4 || return 1
    svcadm key set "$id" --rate-limit 500
    API_KEY=$key http GET /v1/credits; expect_header X-RateLimit-Limit 500
}
t_case "a customer's key rateLimit is clamped at use to the tier after a downgrade; an operator's limit is kept" t_key_limit_clamped_after_downgrade

t_org_key_after_the_account_moves() {
    local acc o1 o2 k1 k2 before
    acc=$(it_account pro 0)
    o1=$(svcadm org create --name "Old $RANDOM" --credits 50)
    o2=$(svcadm org create --name "New $RANDOM" --credits 50)
    svcadm org add "$o1" "$acc"
    k1=$(it_key "$acc" '*' --org "$o1")
    API_KEY=$k1 http GET /v1/credits; expect_status 200 && expect_json .organization.id "$o1" || return 1
    svcadm org add "$o2" "$acc"    # returns once no process trusts the old membership
    before=$(it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$o1'")
    # refused, the request is counted in its address's bucket (a key that
    # is not usable): from an address of its own
    API_KEY=$k1 http POST /v1/verify '{"email":"someone@example.com"}' $(from 18)
    expect_status 403 && expect_json .error.code key_organization_changed || return 1
    API_KEY=$k1 http GET /v1/credits "" $(from 18)
    expect_status 403 && expect_json .error.code key_organization_changed || return 1
    expect_eq "the old organization's balance" "$before" "$(it_sql "SELECT balance FROM credit_pools WHERE owner_id = '$o1'")" || return 1
    # a key made for the new organization works
    k2=$(it_key "$acc" '*' --org "$o2")
    API_KEY=$k2 http GET /v1/credits; expect_status 200 && expect_json .organization.id "$o2"
}
t_case "an organization's key is refused (403 key_organization_changed) once its account moved to another organization" t_org_key_after_the_account_moves

t_revoke_not_found() {
    local acc key id
    acc=$(it_account pro 0)
    key=$(it_key "$acc" '*')
    API_KEY=$key http DELETE /v1/keys/key_doesnotexist; expect_status 404 && expect_json .error.code not_found || return 1
    API_KEY=$key http POST /v1/keys '{"scopes":["jobs:read"]}'; id=$(json .id)
    API_KEY=$key http DELETE "/v1/keys/$id"; expect_status 200 || return 1
    API_KEY=$key http DELETE "/v1/keys/$id"; expect_status 404 && expect_json .error.code not_found || return 1
    expect_eq "svcadm key revoke of a revoked key" 1 "$(svcadm key revoke "$id" >/dev/null 2>&1; echo $?)"
}
t_case "revoking an unknown or already revoked key answers 404 not_found" t_revoke_not_found

t_keys_bad_input() {
    local body field
    for body in '{"scopes":["root"]}|scopes' '{}|scopes' '{"scopes":["*"],"rate_limit":0}|rate_limit' \
            '{"scopes":["*"],"rate_limit":"9"}|rate_limit' '{"scopes":["*"],"ip_allowlist":["10.0.0.1/8"]}|ip_allowlist' \
            '{"scopes":["*"],"ip_allowlist":["nonsense"]}|ip_allowlist' '{"scopes":["*"],"expires_at":"2001-01-01T00:00:00Z"}|expires_at' \
            '{"scopes":["*"],"sandbox":"yes"}|sandbox' '{"scopes":["*"],"name":7}|name'; do
        field=${body##*|}
        API_KEY=$PRO_KEY http POST /v1/keys "${body%|*}"
        expect_status 400 || return 1
        expect_json .error.code invalid_email || return 1
        expect_json .error.details.field "$field" || return 1
        expect_jq ".error.message | startswith(\"$field\")" || return 1
    done
    API_KEY=$PRO_KEY http POST /v1/keys '{"scopes": ['; expect_status 400 && expect_json .error.code invalid_json || return 1
    API_KEY=$PRO_KEY http POST /v1/keys '[1,2]'; expect_status 400 && expect_json .error.code invalid_json || return 1
    API_KEY=$PRO_KEY http POST /v1/keys '{"scopes":["*"],"scopes":["*"]}'; expect_status 400 || return 1
    API_KEY=$PRO_KEY http POST /v1/keys "" -H 'Content-Type: application/xml' --data-binary '<a/>'
    expect_status 415 && expect_json .error.code unsupported_media_type
}
t_case "bad key requests get 400 naming the field, malformed JSON 400 invalid_json, XML 415" t_keys_bad_input

t_body_limits() {
    head -c $((1024 * 1024 + 10)) /dev/zero | tr '\0' ' ' > "$IT_DIR/big.json"
    API_KEY=$PRO_KEY http POST /v1/keys "" -H 'Content-Type: application/json' --data-binary "@$IT_DIR/big.json"
    expect_status 413 && expect_json .error.code file_too_large && expect_json .error.details.limit_bytes 1048576 || return 1
    API_KEY=$PRO_KEY http POST /v1/verify "" -H 'Content-Type: application/json' --data-binary "@$IT_DIR/big.json"
    expect_status 413 || return 1
    # a 100 KB request header is refused by the web server; the next request is served
    API_KEY=$PRO_KEY http GET /v1/credits "" -H "X-Huge: $(head -c 100000 /dev/zero | tr '\0' a)"
    [ "$HTTP_STATUS" -ge 400 ] && [ "$HTTP_STATUS" -lt 500 ] || it_fail "huge header answered $HTTP_STATUS"
    API_KEY=$PRO_KEY http GET /v1/credits; expect_status 200
}
t_case "bodies over the limit get 413 before they are read; huge headers are refused" t_body_limits

t_idempotency() {
    local acc key first id n hash
    acc=$(it_account pro 0)
    key=$(it_key "$acc" '*')
    API_KEY=$key http POST /v1/keys '{"name":"once","scopes":["jobs:read"]}' -H 'Idempotency-Key: abc-123'
    expect_status 201 || return 1
    first=$HTTP_BODY; id=$(json .id)
    API_KEY=$key http POST /v1/keys '{"name":"once","scopes":["jobs:read"]}' -H 'Idempotency-Key: abc-123'
    expect_status 201 && expect_header Idempotent-Replayed true && expect_json .id "$id" || return 1
    # the replay is the key's record without its text, which is stored nowhere
    expect_json .key null && expect_json .key_shown false && expect_json .name once &&
        expect_eq "replayed record" "$(printf '%s' "$first" | jq -c 'del(.key)')" \
            "$(printf '%s' "$HTTP_BODY" | jq -c 'del(.key, .key_shown)')" || return 1
    expect_eq "idempotency rows holding the key text" 0 \
        "$(it_sql "SELECT COUNT(*) FROM idempotency_keys WHERE LOCATE('$(printf '%s' "$first" | jq -r .key)', body) > 0")" || return 1
    API_KEY=$key http POST /v1/keys '{"name":"twice","scopes":["jobs:read"]}' -H 'Idempotency-Key: abc-123'
    expect_status 422 && expect_json .error.code idempotency_key_reused || return 1
    n=$(it_sql "SELECT COUNT(*) FROM api_keys WHERE account_id = '$acc' AND name = 'once'")
    expect_eq "keys created under one Idempotency-Key" 1 "$n" || return 1
    # keys are per account: another account may use the same key string
    API_KEY=$PRO_KEY http POST /v1/keys '{"name":"once","scopes":["jobs:read"]}' -H 'Idempotency-Key: abc-123'
    expect_status 201 && [ "$(json .id)" != "$id" ] || it_fail "another account's request was replayed" || return 1
    # a request still running answers 409
    # (the hash is SHA-256 over method, path and body, as idempotency.c has it)
    hash=$(printf 'POST\n/v1/keys\n{"scopes":["jobs:read"]}' | sha256sum | cut -c1-64)
    it_sql "INSERT INTO idempotency_keys (account_id, idem_key, request_hash, state, created_at) VALUES ('$acc', 'busy', UNHEX('$hash'), 'running', UTC_TIMESTAMP(3))"
    API_KEY=$key http POST /v1/keys '{"scopes":["jobs:read"]}' -H 'Idempotency-Key: busy'
    expect_status 409 && expect_json .error.code idempotency_key_in_use || return 1
    API_KEY=$key http POST /v1/keys '{"scopes":["jobs:read"]}' -H "Idempotency-Key: $(head -c 256 /dev/zero | tr '\0' k)"
    expect_status 400 && expect_jq '.error.message | startswith("Idempotency-Key")'
}
t_case "Idempotency-Key replays the same request, refuses another body (422) and a running one (409)" t_idempotency

t_routing() {
    API_KEY=$PRO_KEY http GET /v1/nope; expect_status 404 && expect_json .error.code not_found || return 1
    API_KEY=$PRO_KEY http PUT /v1/credits; expect_status 405 && expect_json .error.code method_not_allowed &&
        expect_header Allow GET || return 1
    API_KEY=$PRO_KEY http POST /v1/jobs/job_x/progress '{}'; expect_status 405 && expect_header Allow GET || return 1
    API_KEY=$PRO_KEY http POST /v1/verify/bulk/job_x/confirm '{}'; expect_status 404 && expect_json .error.code not_found || return 1
    API_KEY=$PRO_KEY http GET "/v1/credits?x=1&y=%zz"; expect_status 200
}
t_case "unknown paths and jobs 404, wrong methods 405 with Allow" t_routing

t_openapi_json() {
    local before after
    API_KEY= http GET /v1/openapi.json "" $(from 19); expect_status 200 || return 1
    expect_header Content-Type 'application/json; charset=utf-8' || return 1
    expect_json .openapi 3.1.0 || return 1
    # the very document built from src/api/openapi.yaml
    jq -e --slurpfile d "$top_srcdir/src/api/openapi.json" '. == $d[0]' "$HTTP_BODY_FILE" >/dev/null ||
        it_fail "GET /v1/openapi.json is not src/api/openapi.json" || return 1
    # no key needed; like every request without a usable key it is counted
    # in its address's bucket (5 a minute)
    before=$(header_value X-RateLimit-Remaining)
    API_KEY= http GET /v1/openapi.json "" $(from 19); expect_status 200 || return 1
    expect_eq "X-RateLimit-Remaining after a second GET /v1/openapi.json" "$((before - 1))" \
        "$(header_value X-RateLimit-Remaining)" || return 1
    # with a key: the account's window, not counted
    API_KEY=$PRO_KEY http GET /v1/openapi.json; expect_status 200 && expect_header X-RateLimit-Limit || return 1
    # a key that is not valid is refused as everywhere
    API_KEY=svc_live_notakey http GET /v1/openapi.json; expect_status 401
}
t_case "GET /v1/openapi.json serves the built document without a key (counted in the address's bucket), with a key not counted" t_openapi_json

t_openapi_check_catches_drift() {
    local d=$IT_DIR/drift out
    mkdir -p "$d"
    printf '{"balance":"ten","used":0,"refunded":0,"organization":null}' > "$d/1.body"
    printf 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-RateLimit-Limit: 1\r\nX-RateLimit-Remaining: 1\r\nX-RateLimit-Reset: 1\r\nX-Request-Id: r\r\n\r\n' > "$d/1.headers"
    printf '{"error":{"code":"x","message":"m","details":null}}' > "$d/2.body"
    cp "$d/1.headers" "$d/2.headers"
    printf 'GET\t/v1/credits\t200\t%s\t%s\nGET\t/v1/credits\t418\t%s\t%s\n' \
        "$d/1.body" "$d/1.headers" "$d/2.body" "$d/2.headers" > "$d/record"
    if out=$(python3 "$top_srcdir/tests/integration/openapi_check.py" "$top_srcdir/src/api/openapi.json" "$d/record"); then
        it_fail "the checker accepted a wrong body and an undeclared status"; return 1
    fi
    printf '%s\n' "$out" | grep -q "GET /v1/credits -> 200: body at balance: 'ten' is not of type 'integer'" ||
        it_fail "no message naming the request and the field: $out" || return 1
    printf '%s\n' "$out" | grep -q "GET /v1/credits -> 418: status 418 is not declared" ||
        it_fail "no message for the undeclared status: $out"
}
t_case "the OpenAPI check names a request whose body or status the document does not allow" t_openapi_check_catches_drift

t_request_ids() {
    local id
    API_KEY=$PRO_KEY http GET /v1/credits "" -H 'X-Request-Id: trace-42.a_b'
    expect_header X-Request-Id trace-42.a_b || return 1
    API_KEY=$PRO_KEY http GET /v1/credits "" -H 'X-Request-Id: bad id!'
    id=$(header_value X-Request-Id)
    [[ $id == req_* ]] || it_fail "a malformed client id was not replaced: $id" || return 1
    grep -q "event=request req=trace-42.a_b method=GET path=\"/v1/credits\" status=200 .*account=$PRO" "$IT_DIR/log/svc.log" ||
        it_fail "no request log line for trace-42.a_b"
    [ "$(grep -c 'req=trace-42.a_b ' "$IT_DIR/log/svc.log")" = 1 ] || it_fail "not exactly one log line for the request"
}
t_case "every response has X-Request-Id, a client's plain id is kept, one log line per request" t_request_ids

t_ledger_totals() {
    expect_eq "svcadm credits check" ok "$(svcadm credits check "$PRO")" || return 1
    expect_eq "svcadm credits grant prints the balance" 260 "$(svcadm credits grant "$PRO" 10)" || return 1
    API_KEY=$PRO_KEY http GET /v1/credits; expect_json .balance 260 && expect_json .used 0 && expect_json .refunded 0
}
t_case "granted credits are ledger rows and the balance follows them" t_ledger_totals

# MariaDB stops under running responders: every request (a cached key, an
# uncached one, no key) gets 503 queue_unavailable with Retry-After and the
# X-RateLimit-* headers; once it is back, the same requests are served.
t_db_down() {
    local fresh i
    fresh=$(it_key "$PRO" 'credits:read')
    API_KEY=$PRO_KEY http GET /v1/credits; expect_status 200 || return 1
    stack_mariadb_stop "$IT_DIR/mariadb"
    for i in 1 2 3; do
        API_KEY=$PRO_KEY http GET /v1/credits
        expect_status 503 && expect_json .error.code queue_unavailable && expect_header Retry-After 5 &&
            expect_header X-RateLimit-Limit && expect_header X-RateLimit-Remaining &&
            expect_header X-RateLimit-Reset && expect_header X-Request-Id || break
        [ "$(header_value X-RateLimit-Reset)" -gt "$(date +%s)" ] || it_fail "X-RateLimit-Reset is not in the future" || break
    done
    API_KEY=$fresh http POST /v1/verify/bulk '{"emails":["a@b.example"]}'
    expect_status 503 && expect_json .error.code queue_unavailable && expect_header X-RateLimit-Limit || true
    API_KEY= http GET /rate-limit "" $(from 16)
    expect_status 503 && expect_json .error.code queue_unavailable && expect_header X-RateLimit-Limit 5 || true
    stack_mariadb_start "$IT_DIR/mariadb" || it_fail "MariaDB did not start again" || return 1
    [ "$IT_CASE_FAILED" = 0 ] || return 1
    API_KEY=$PRO_KEY http GET /v1/credits; expect_status 200 && expect_json .balance 260 || return 1
    API_KEY=$fresh http GET /v1/credits; expect_status 200
}
t_case "MariaDB stopped under the responders: 503 queue_unavailable with Retry-After and X-RateLimit-*, served again once it is back" t_db_down

t_done
