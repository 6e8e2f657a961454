#!/bin/bash
# test_rate_window.sh: the sliding window itself, with a short window
# (rate_window_seconds = 10, the spec's 60 made testable): a request refused
# with Retry-After N is refused again before N seconds have passed and
# accepted after; X-RateLimit-Reset is the second a slot frees up; the
# window slides by the second (requests of an earlier second leave first).
# The seconds the window holds are rows the test writes (as ratelimit_lease
# writes them), at the database's clock: how fast curl runs on a busy
# machine decides nothing here.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

WINDOW=10
it_conf_add "rate_window_seconds = $WINDOW"
it_stack_start

# sleep_until T [OFFSET]: sleep until the Unix time T + OFFSET (seconds,
# fractions allowed)
sleep_until() {
    sleep "$(awk -v t="$1" -v o="${2:-0}" -v n="$(date +%s.%N)" \
        'BEGIN { d = t + o - n; printf "%.3f", (d > 0 ? d : 0) }')"
}

# counted ACCOUNT SECONDS_AGO:N ...: the account's window holds N requests
# counted that many seconds ago (by the database's clock); prints that clock
counted() {
    local acc=$1 now rows= a
    shift
    now=$(it_sql "SELECT UNIX_TIMESTAMP()")
    for a in "$@"; do rows="$rows${rows:+, }('acct:$acc', $now - ${a%%:*}, ${a#*:})"; done
    it_sql "INSERT INTO rate_buckets (bucket) VALUES ('acct:$acc');
        INSERT INTO rate_counts (bucket, sec, n) VALUES $rows"
    echo "$now"
}

# before T CMD...: run CMD and succeed when it ended before the Unix time T
before() {
    "${@:2}"
    awk -v t="$1" -v n="$(date +%s.%N)" 'BEGIN { exit !(n < t) }'
}

t_refused_until_reset() {
    local acc key i now reset wait
    acc=$(it_account free 0)		# 10 requests a window
    key=$(it_key "$acc" 'credits:read')
    now=$(counted "$acc" 4:10)		# full: the ten leave at now + 6
    API_KEY=$key http GET /v1/credits
    expect_status 429 || return 1
    wait=$(header_value Retry-After); reset=$(header_value X-RateLimit-Reset)
    expect_eq "X-RateLimit-Reset: when the ten requests leave the window" $((now - 4 + WINDOW)) "$reset" || return 1
    expect_json .error.details.reset_at "$reset" || return 1
    # Retry-After: the seconds from the answer to the reset, rounded up
    [ "$wait" -ge 1 ] && [ "$wait" -le $((reset - now)) ] &&
        [ "$wait" -ge $((reset - $(date +%s) - 1)) ] || it_fail "Retry-After $wait for a reset at $reset (now $(date +%s))" || return 1
    # a second before the reset: still full (an answer that came back after
    # the reset proves nothing either way; it is said, not counted)
    sleep_until "$reset" -1
    if API_KEY=$key before "$reset" http GET /v1/credits; then
        expect_status 429 || return 1
    else
        it_log "the request sent a second before the reset was answered after it"
    fi
    # just after it: the ten requests of that second have left the window,
    # and the window has ten slots again (the next ten requests have $WINDOW s)
    sleep_until "$reset" 0.1
    for i in $(seq 1 10); do API_KEY=$key http GET /v1/credits; expect_status 200 || return 1; done
    API_KEY=$key http GET /v1/credits; expect_status 429
}
t_case "a request refused with Retry-After N is refused before N s and accepted after; X-RateLimit-Reset is when slots free" t_refused_until_reset

t_slides_by_the_second() {
    local acc key i now
    acc=$(it_account free 0)
    key=$(it_key "$acc" 'credits:read')
    # 4 requests 8 s ago, 6 requests 3 s ago: the window is full
    now=$(counted "$acc" 8:4 3:6)
    API_KEY=$key http GET /v1/credits; expect_status 429 || return 1
    expect_eq "X-RateLimit-Reset: when the first second's requests leave" $((now - 8 + WINDOW)) \
        "$(header_value X-RateLimit-Reset)" || return 1
    # once the first second has left, exactly its 4 slots are free (until
    # the 6 leave at now + 7)
    sleep_until $((now - 8 + WINDOW)) 0.1
    for i in 1 2 3 4; do API_KEY=$key http GET /v1/credits; expect_status 200 || return 1; done
    API_KEY=$key http GET /v1/credits
    if [ "$(date +%s)" -lt $((now - 3 + WINDOW)) ]; then
        expect_status 429 || return 1
        expect_eq "then the next reset" $((now - 3 + WINDOW)) "$(header_value X-RateLimit-Reset)"
    else
        it_log "the fifth request came after the 6 left the window"
    fi
}
t_case "the window slides by the second: the oldest second's requests free their slots first" t_slides_by_the_second

t_done
