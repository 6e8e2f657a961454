#!/bin/bash
# test_rate_window.sh: the sliding window itself, with a short window
# (rate_window_seconds = 6, the spec's 60 made testable): a request refused
# with Retry-After N is refused again just before N seconds have passed and
# accepted just after; X-RateLimit-Reset is the second a slot frees up; the
# window slides by the second (requests of an earlier second leave first).
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_conf_add "rate_window_seconds = 6"
it_stack_start

# sleep_until T [OFFSET]: sleep until the Unix time T + OFFSET (seconds,
# fractions allowed)
sleep_until() {
    sleep "$(awk -v t="$1" -v o="${2:-0}" -v n="$(date +%s.%N)" \
        'BEGIN { d = t + o - n; printf "%.3f", (d > 0 ? d : 0) }')"
}

t_refused_until_reset() {
    local acc key i reset wait
    acc=$(it_account free 0)		# 10 requests a window
    key=$(it_key "$acc" 'credits:read')
    # start at the beginning of a second, so the ten share it
    sleep_until $(( $(date +%s) + 1 )) 0.05
    for i in $(seq 1 10); do API_KEY=$key http GET /v1/credits; expect_status 200 || return 1; done
    API_KEY=$key http GET /v1/credits
    expect_status 429 || return 1
    wait=$(header_value Retry-After); reset=$(header_value X-RateLimit-Reset)
    expect_json .error.details.reset_at "$reset" || return 1
    [ "$wait" -ge 5 ] && [ "$wait" -le 6 ] || it_fail "Retry-After $wait in a 6 s window" || return 1
    # half a second before the reset: still full
    sleep_until "$reset" -0.5
    API_KEY=$key http GET /v1/credits
    expect_status 429 || return 1
    # just after it: the ten requests of that second have left the window
    sleep_until "$reset" 0.1
    for i in $(seq 1 10); do API_KEY=$key http GET /v1/credits; expect_status 200 || return 1; done
    API_KEY=$key http GET /v1/credits; expect_status 429
}
t_case "a request refused with Retry-After N is refused just before N s and accepted after; X-RateLimit-Reset is when slots free" t_refused_until_reset

t_slides_by_the_second() {
    local acc key i start reset
    acc=$(it_account free 0)
    key=$(it_key "$acc" 'credits:read')
    start=$(( $(date +%s) + 1 ))
    # 4 requests in one second, 6 two seconds later: the window is full
    sleep_until "$start" 0.05
    for i in 1 2 3 4; do API_KEY=$key http GET /v1/credits; expect_status 200 || return 1; done
    sleep_until $((start + 2)) 0.05
    for i in 1 2 3 4 5 6; do API_KEY=$key http GET /v1/credits; expect_status 200 || return 1; done
    API_KEY=$key http GET /v1/credits; expect_status 429 || return 1
    reset=$(header_value X-RateLimit-Reset)
    expect_eq "X-RateLimit-Reset: when the first second's requests leave" $((start + 6)) "$reset" || return 1
    # once the first second has left, exactly its 4 slots are free
    sleep_until $((start + 6)) 0.1
    for i in 1 2 3 4; do API_KEY=$key http GET /v1/credits; expect_status 200 || return 1; done
    API_KEY=$key http GET /v1/credits; expect_status 429 || return 1
    expect_eq "then the next reset" $((start + 8)) "$(header_value X-RateLimit-Reset)"
}
t_case "the window slides by the second: the oldest second's requests free their slots first" t_slides_by_the_second

t_done
