#!/bin/bash
# test_pacing.sh: reputation-aware pacing and the learned mail host
# profiles (issue 24 items 3 and 4), through the real API and svc-worker,
# against fake SMTP personas (tests/smtp/fake_smtp.py) behind a zone of
# their own (pace.test):
#  - mx-rl (127.0.0.40) takes 20 RCPTs from one source address in any 2 s
#    and answers the next "421 4.7.28 ... rate limited"; a client that comes
#    back within 1 s of that gets a strike (3 strikes: blocked);
#  - mx-bl (127.0.0.41) takes 5 RCPTs, then blocks a client that comes back
#    within its 60 s penalty (554 5.7.1 ... blocked using zen.spamhaus.org);
#  - mx-o1 (127.0.0.42) takes one RCPT a session (452 4.5.3 after it), as
#    Outlook.com does;
#  - mx-sv (127.0.0.43) and mx-pv (127.0.0.44) take one RCPT in 10 minutes,
#    then say 421 4.7.28: for POST /v1/verify and an upload's preview, whose
#    sessions learn and obey the same pairs;
#  - mx-pp (127.0.0.45), paced from the start by a local pacing default,
#    counts the RCPTs it gets: the catch-all probe is taken from the
#    pair's budget like the addresses;
#  - mx-hl (127.0.0.48), paced, its pair in a penalty, and mx-fr
#    (127.0.0.49), friendly: chunks of addresses waiting for a paced pair
#    do not keep the next chunks waiting behind them; past the 64 chunks
#    a worker holds at most, they are handed back until their turn;
#  - mx-tw (127.0.0.58) takes 9 RCPTs in any 10 s: its pair's budget is
#    shared by two svc-worker processes, one after the other;
#  - mx-ob (127.0.0.59), known to take one RCPT a session (as Outlook.com),
#    blocks every RCPT naming a DNSBL: one such RCPT pauses its pair;
#  - mx-rc (127.0.0.50) blocks every RCPT of its first sessions
#    (block_sessions), then answers; mx-pb (127.0.0.51) blocks them all:
#    with a pause shorter than the patience, addresses wait out the pause
#    and get their real verdicts, and end smtp_blocked only once blocks in
#    a row keep them waiting past the patience.
# The worker's penalty (1.5 s) is longer than mx-rl's and shorter than
# mx-bl's. Sessions to one host run one at a time
# (worker_domain_concurrency = 1, and pacing_pair_sessions = 1 for a paced
# pair, case 7): a flight already on its way when the 421 comes cannot be
# called back, so with several at once a strike could be the flight's and
# not the pacing's. Assertions are counts from the fake
# servers and rows, never times.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require timeout jq
# a pipe's last command runs in this shell, so mkjob can set JOB
shopt -s lastpipe

WORKER=$top_builddir/src/worker/svc-worker
[ -x "$WORKER" ] || it_skip "$WORKER is not built"

mkdir -p "$IT_DIR/dns"
printf '%s\n' '$ORIGIN pace.test.' '$TTL 300' '@ IN SOA ns.pace.test. hostmaster.pace.test. 1 3600 600 86400 300' \
    '@ IN NS ns.pace.test.' 'ns IN A 127.0.0.1' 'mx-rl IN A 127.0.0.40' 'mx-bl IN A 127.0.0.41' 'mx-o1 IN A 127.0.0.42' \
    'rl IN A 192.0.2.1' 'rl IN MX 10 mx-rl' 'bl IN A 192.0.2.1' 'bl IN MX 10 mx-bl' 'o1 IN A 192.0.2.1' 'o1 IN MX 10 mx-o1' \
    'mx-sv IN A 127.0.0.43' 'sv IN A 192.0.2.1' 'sv IN MX 10 mx-sv' \
    'mx-pv IN A 127.0.0.44' 'pv IN A 192.0.2.1' 'pv IN MX 10 mx-pv' \
    'mx-pp IN A 127.0.0.45' 'pp IN A 192.0.2.1' 'pp IN MX 10 mx-pp' \
    'mx-id IN A 127.0.0.46' 'id IN A 192.0.2.1' 'id IN MX 10 mx-id' \
    'mx-pr IN A 127.0.0.47' 'pr IN A 192.0.2.1' 'pr IN MX 10 mx-pr' \
    'mx-hl IN A 127.0.0.48' 'mx-fr IN A 127.0.0.49' 'zf IN A 192.0.2.1' 'zf IN MX 10 mx-fr' \
    'mx-rc IN A 127.0.0.50' 'rc IN A 192.0.2.1' 'rc IN MX 10 mx-rc' \
    'mx-pb IN A 127.0.0.51' 'pb IN A 192.0.2.1' 'pb IN MX 10 mx-pb' \
    'hl1 IN MX 10 mx-hl' 'hl2 IN MX 10 mx-hl' 'hl3 IN MX 10 mx-hl' 'hl4 IN MX 10 mx-hl' \
    'mx-tw IN A 127.0.0.58' 'tw1 IN A 192.0.2.1' 'tw1 IN MX 10 mx-tw' 'tw2 IN A 192.0.2.1' 'tw2 IN MX 10 mx-tw' \
    'mx-ob IN A 127.0.0.59' 'ob IN A 192.0.2.1' 'ob IN MX 10 mx-ob' \
    > "$IT_DIR/dns/pace.test.zone"
for d in $(seq -w 1 65); do echo "hb$d IN MX 10 mx-hl"; done >> "$IT_DIR/dns/pace.test.zone"
mail_env_start "$IT_DIR/dns/pace.test.zone"
fake 127.0.0.40 rate_limit=20 rate_window_ms=2000 rate_penalty_ms=1000 block_after=3
fake 127.0.0.41 rate_limit=5 rate_window_ms=60000 rate_penalty_ms=60000 block_after=1
fake 127.0.0.42 rcpt_max=1
fake 127.0.0.43 rate_limit=1 rate_window_ms=600000 rate_penalty_ms=1000 block_after=100
fake 127.0.0.44 rate_limit=1 rate_window_ms=600000 rate_penalty_ms=1000 block_after=100
fake 127.0.0.45 rate_limit=1000 rate_window_ms=600000
fake 127.0.0.46 rate_limit=10 rate_window_ms=3000 rate_penalty_ms=1000 block_after=100
fake 127.0.0.47 rate_limit=10 rate_window_ms=3000 rate_penalty_ms=1000 block_after=100
fake 127.0.0.48
fake 127.0.0.49
fake 127.0.0.58 rate_limit=9 rate_window_ms=10000 rate_penalty_ms=1000 block_after=100
fake 127.0.0.59 block_sessions=1000000
fake 127.0.0.50 block_sessions=2
fake 127.0.0.51 block_sessions=1000000
mail_env_lists
# mx-pp is paced from the start (an operator's default, 600 a minute)
echo 'mx-pp.pace.test 600 1' > "$IT_DIR/lists/local/pacing_defaults.txt"
# mx-id too, from 200 a minute: 10 RCPTs in a window of 3 s, what it takes;
# and mx-pr from 400 a minute (20 RCPTs a window, over the 10 it takes)
echo 'mx-id.pace.test 200 1' >> "$IT_DIR/lists/local/pacing_defaults.txt"
echo 'mx-pr.pace.test 400 1' >> "$IT_DIR/lists/local/pacing_defaults.txt"
echo 'mx-hl.pace.test 600 1' >> "$IT_DIR/lists/local/pacing_defaults.txt"
# mx-rc and mx-pb fast (a block leaves a pair that has no default at 1 RCPT
# a minute, growing from there: one RCPT a session for a while)
echo 'mx-rc.pace.test 60000 1' >> "$IT_DIR/lists/local/pacing_defaults.txt"
echo 'mx-pb.pace.test 60000 1' >> "$IT_DIR/lists/local/pacing_defaults.txt"
mail_env_conf
it_conf_add "verify_time_budget_ms = 20000
worker_poll_interval = 1
worker_lease_seconds = 5
worker_concurrency = 10
worker_domain_concurrency = 1
worker_rcpts_per_session = 20
pacing_window_ms = 3000
pacing_penalty_ms = 1500"
it_stack_start

ACC=$(it_account admin 100000)
API_KEY=$(it_key "$ACC" '*')

once() {
    timeout 300 "$WORKER" --once -c "$SVC_CONF" 2>> "$IT_DIR/log/worker-stderr.log"
}

# mkjob NAME < ADDRESSES: a bulk job through the API; its id in JOB
mkjob() {
    local code
    jq -R . | jq -sc '{emails: .}' > "$IT_DIR/$1.json"
    code=$(curl -s -o "$IT_DIR/$1.created" -w '%{http_code}' -H "Authorization: Bearer $API_KEY" \
        -H 'Content-Type: application/json' --data-binary "@$IT_DIR/$1.json" "$BASE_URL/v1/verify/bulk")
    case $code in 201|202) ;; *) it_fail "creating $1: $code $(cat "$IT_DIR/$1.created")"; return 1 ;; esac
    JOB=$(jq -r '.job_id // .id' "$IT_DIR/$1.created")
}

# rate_field HOST FIELD: a counter of the fake server's rate limit
rate_field() { fake_ctl "$1" rate | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# ---------------------------------------------------------------- the job
# EMAIL CLASSIFICATION REASON SUB_STATUS, in input order
{
    for i in $(seq -w 1 40); do echo "user$i@rl.pace.test valid accepted_email null"; done
    for i in $(seq -w 1 10); do echo "unknown$i@rl.pace.test invalid rejected_email mailbox_not_found"; done
    # mx-bl: 5 addresses fit in its 5 RCPTs (the catch-all probe goes
    # after them), the rest is blocked
    for i in $(seq -w 1 5); do echo "user$i@bl.pace.test valid accepted_email null"; done
    for i in $(seq -w 6 30); do echo "user$i@bl.pace.test unknown unknown smtp_blocked"; done
    printf '%s\n' "user1@o1.pace.test valid accepted_email null" "user2@o1.pace.test valid accepted_email null" \
        "unknown1@o1.pace.test invalid rejected_email mailbox_not_found"
} > "$IT_DIR/expected.txt"

t_job() {
    local unknown
    cut -d' ' -f1 "$IT_DIR/expected.txt" | mkjob pace || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")" || return 1
    it_sql "SELECT email, classification, reason, IFNULL(sub_status, 'null') FROM job_emails
            WHERE job_id = '$JOB' ORDER BY seq" | tr '\t' ' ' > "$IT_DIR/got.txt"
    diff "$IT_DIR/expected.txt" "$IT_DIR/got.txt" > "$IT_DIR/verdicts.diff" ||
        it_fail "per-address verdicts differ: $(head -n 20 "$IT_DIR/verdicts.diff" | tr '\n' '|')"
    unknown=$(grep -c ' unknown unknown smtp_blocked$' "$IT_DIR/expected.txt")
    expect_eq "count_unknown" "$unknown" "$(it_sql "SELECT count_unknown FROM jobs WHERE id = '$JOB'")"
    expect_eq "refund of the blocked addresses" "$unknown" \
        "$(it_sql "SELECT amount FROM credit_ledger WHERE ref = 'job:$JOB:refund'")"
}
t_case "a bulk job over a rate-limited, a blocking and a one-RCPT host completes with every verdict right and the blocked addresses refunded as unknown" t_job

t_rate_respected() {
    # the limit was reached once (that is how it was learned) and never
    # again: no second 421, nobody came back during a penalty, no block
    expect_eq "mx-rl 421s for the rate" 1 "$(rate_field 127.0.0.40 refused)"
    expect_eq "mx-rl strikes" 0 "$(rate_field 127.0.0.40 strikes)"
    expect_eq "mx-rl blocks" 0 "$(rate_field 127.0.0.40 blocked)"
    expect_eq "mx-rl RCPTs (every address, the probe once)" 51 "$(rate_field 127.0.0.40 rcpts)"
    expect_eq "the rate it said slow down at is in the host's profile" 1 \
        "$(it_sql "SELECT rate_421 > 0 FROM mx_profiles WHERE host = 'mx-rl.pace.test'")"
    expect_eq "its pair runs under it" 1 \
        "$(it_sql "SELECT base_rate < learned_rate FROM pacing_pairs WHERE pair = 'mx-rl.pace.test' AND egress = 'direct'")"
}
t_case "after its first 421 the rate-limited host's limit is respected (the fake server's counters)" t_rate_respected

t_block_paused() {
    expect_eq "mx-bl blocked us" 1 "$(rate_field 127.0.0.41 blocked)"
    expect_eq "the pair is paused" 1 \
        "$(it_sql "SELECT paused_until > UTC_TIMESTAMP(3) FROM pacing_pairs WHERE pair = 'mx-bl.pace.test'")"
    svcadm status > "$IT_DIR/status.out" 2>&1
    grep -q '^paused: mx-bl.pace.test from direct, [0-9]* s left: 554 5.7.1 .*blocked using zen.spamhaus.org' "$IT_DIR/status.out" ||
        it_fail "svcadm status does not list the paused pair: $(tr '\n' '|' < "$IT_DIR/status.out")"
    svcadm status --json > "$IT_DIR/status.json" 2>&1
    expect_eq "status --json pacing" paused \
        "$(jq -r '.pacing[] | select(.pair == "mx-bl.pace.test") | .state' "$IT_DIR/status.json")"
    expect_eq "last block in the profile" 1 \
        "$(it_sql "SELECT last_block LIKE '%zen.spamhaus.org%' AND last_block_at IS NOT NULL FROM mx_profiles WHERE host = 'mx-bl.pace.test'")"
}
t_case "a host that blocks us pauses its pair; svcadm status lists it and why" t_block_paused

t_mx_show() {
    [ "$(rate_field 127.0.0.42 too_many)" -ge 1 ] || it_fail "mx-o1 never answered 452 4.5.3"
    svcadm mx show mx-o1.pace.test > "$IT_DIR/mx.out" 2>&1 || it_fail "svcadm mx show failed: $(cat "$IT_DIR/mx.out")"
    grep -q '^rcpts_per_session *1$' "$IT_DIR/mx.out" ||
        it_fail "svcadm mx show does not print the tolerance: $(tr '\n' '|' < "$IT_DIR/mx.out")"
    grep -q '^accept_all *0$' "$IT_DIR/mx.out" || it_fail "no accept_all: $(tr '\n' '|' < "$IT_DIR/mx.out")"
    svcadm mx show mx-nowhere.pace.test > "$IT_DIR/mx2.out" 2>&1 && it_fail "mx show of an unknown host exits 0"
    grep -q 'nothing learned yet' "$IT_DIR/mx2.out" || it_fail "unknown host: $(cat "$IT_DIR/mx2.out")"
}
t_case "svcadm mx show prints one RCPT a session for the host that answered 452 4.5.3 to the second" t_mx_show

t_profile_shared() {
    # a second job to mx-o1: the profile read from MariaDB gives sessions
    # of one RCPT at once (no 452 4.5.3 any more)
    fake_ctl 127.0.0.42 reset > /dev/null
    fake_set 127.0.0.42 rcpt_max=1
    printf '%s\n' user3@o1.pace.test user4@o1.pace.test | mkjob again || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")"
    expect_eq "valid" 2 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND classification = 'valid'")"
    expect_eq "452 4.5.3 answers" 0 "$(rate_field 127.0.0.42 too_many)"
}
t_case "a later worker run reads the learned tolerance and sends one RCPT a session from the start" t_profile_shared

t_probe_budgeted() {
    local bucket
    printf '%s\n' user1@pp.pace.test user2@pp.pace.test unknown1@pp.pace.test | mkjob probe || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")" || return 1
    expect_eq "RCPTs mx-pp got (three addresses and the probe)" 4 "$(rate_field 127.0.0.45 rcpts)" || return 1
    # the pair's bucket in rate_counts (pacing.c: FNV-1a of "pair|egress")
    bucket=$(python3 -c 'import sys
h = 14695981039346656037
for c in sys.argv[1].encode():
    h = ((h ^ c) * 1099511628211) % 2**64
print("pace:%016x" % h)' 'mx-pp.pace.test|direct')
    expect_eq "RCPTs taken from the pair's budget" 4 \
        "$(it_sql "SELECT COALESCE(SUM(n), 0) FROM rate_counts WHERE bucket = '$bucket'")"
}
t_case "a paced pair's budget counts the catch-all probe: as many RCPTs taken as the host got" t_probe_budgeted

t_one_session_a_pair() {
    # mx-pp is paced; with 5 sessions a host allowed (worker_domain_concurrency)
    # and 10 RCPTs a session, 60 addresses would go out in several
    # sessions at once: a paced pair has one at a time (pacing_pair_sessions)
    fake_ctl 127.0.0.45 reset > /dev/null
    sed -i 's/^worker_domain_concurrency = 1$/worker_domain_concurrency = 5/; s/^worker_rcpts_per_session = 20$/worker_rcpts_per_session = 10/' "$SVC_CONF"
    for i in $(seq 1 60); do echo "user$i@pp.pace.test"; done | mkjob onesession || return 1
    once || it_fail "svc-worker --once failed"
    sed -i 's/^worker_domain_concurrency = 5$/worker_domain_concurrency = 1/; s/^worker_rcpts_per_session = 10$/worker_rcpts_per_session = 20/' "$SVC_CONF"
    expect_eq "status" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")" || return 1
    expect_eq "valid" 60 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND classification = 'valid'")" || return 1
    expect_eq "sessions at mx-pp at once, at most" 1 \
        "$(fake_ctl 127.0.0.45 concurrency | tr ' ' '\n' | sed -n 's/^max=//p')" || return 1
    [ "$(fake_ctl 127.0.0.45 concurrency | tr ' ' '\n' | sed -n 's/^sessions=//p')" -ge 2 ] ||
        it_fail "one session carried all: $(fake_ctl 127.0.0.45 concurrency)"
}
t_case "a paced pair has one SMTP session at a time (pacing_pair_sessions), whatever worker_domain_concurrency allows" t_one_session_a_pair

t_idle_pair_starts_again() {
    # mx-id's pair was made an hour ago and never told to slow down: its
    # rate doubled every window since, on paper, while nothing was sent.
    # The next job starts it again at its start rate (10 RCPTs a window,
    # what mx-id takes): 12 addresses and the probe in two windows, no 421
    it_sql "INSERT INTO pacing_pairs (pair, egress, start_rate, base_rate, since, strikes, updated_at)
        VALUES ('mx-id.pace.test', 'direct', 200, 200, UTC_TIMESTAMP(3) - INTERVAL 1 HOUR, 0, UTC_TIMESTAMP(3))"
    for i in $(seq 1 12); do echo "user$i@id.pace.test"; done | mkjob idle || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")" || return 1
    expect_eq "valid" 12 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND classification = 'valid'")" || return 1
    expect_eq "RCPTs mx-id got, and its 421s" "13 0" "$(rate_field 127.0.0.46 rcpts) $(rate_field 127.0.0.46 refused)"
}
t_case "a paced pair idle for an hour starts again at its start rate, not at the rate it would have grown to (no 421 from a host that takes just that)" t_idle_pair_starts_again

t_profile_rate_paces_new_pair() {
    # mx-pr's default starts it at 400 a minute (20 RCPTs a window of 3 s)
    # and it has no pair row, but its profile kept the rate it said 421 at,
    # 200 a minute from one address (a pair on another route, or a row
    # purged since): its new pair runs just under it from the start, 180 a
    # minute (pacing_learned_percent 90: 9 RCPTs a window), where from its
    # default the 13 RCPTs would
    # go at once past the 10 it takes in 3 s
    it_sql "INSERT INTO mx_profiles (host, rate_421, rate_421_at, updated_at)
        VALUES ('mx-pr.pace.test', 200, UTC_TIMESTAMP(3) - INTERVAL 1 DAY, UTC_TIMESTAMP(3))"
    for i in $(seq 1 12); do echo "user$i@pr.pace.test"; done | mkjob profrate || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")" || return 1
    expect_eq "valid" 12 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND classification = 'valid'")" || return 1
    expect_eq "RCPTs mx-pr got, and its 421s" "13 0" "$(rate_field 127.0.0.47 rcpts) $(rate_field 127.0.0.47 refused)" || return 1
    expect_eq "the new pair's learned and base rates" "200 180" \
        "$(it_sql "SELECT learned_rate, base_rate FROM pacing_pairs WHERE pair = 'mx-pr.pace.test'" | tr '\t' ' ')"
}
t_case "a paced host whose profile kept the rate it said 421 at gets a new pair that runs just under that rate from the start, not from its default (no 421 again)" t_profile_rate_paces_new_pair

t_single_learns() {
    local rcpts
    http POST /v1/verify '{"email":"user1@sv.pace.test"}'
    expect_status 200 || return 1
    # the address took mx-sv's one RCPT, the catch-all probe got the 421
    expect_eq "mx-sv 421s" 1 "$(rate_field 127.0.0.43 refused)" || return 1
    expect_eq "the pair of mx-sv got the penalty (strike, reason)" "1 1" \
        "$(it_sql "SELECT strikes, reason LIKE '421 4.7.28%' FROM pacing_pairs WHERE pair = 'mx-sv.pace.test' AND egress = 'direct'" | tr '\t' ' ')" || return 1
    grep -q "svc-api\[[0-9]*\] .*event=pacing_slow_down pair=mx-sv.pace.test .*seen_by=session" "$IT_DIR/log/svc.log" ||
        { it_fail "svc-api logged no pacing_slow_down for mx-sv"; return 1; }
    # while the penalty lasts (made an hour long here, so that no clock
    # decides the case), the next verification does not contact the host
    it_sql "UPDATE pacing_pairs SET penalty_until = UTC_TIMESTAMP(3) + INTERVAL 1 HOUR WHERE pair = 'mx-sv.pace.test'"
    rcpts=$(rate_field 127.0.0.43 rcpts)
    http POST /v1/verify '{"email":"user2@sv.pace.test"}'
    expect_status 200 && expect_json .status unknown || return 1
    expect_eq "RCPTs at mx-sv during the penalty" "$rcpts" "$(rate_field 127.0.0.43 rcpts)"
}
t_case "POST /v1/verify's session that hears 421 4.7.28 penalises the pair, and the next one keeps away from the host" t_single_learns

t_preview_learns() {
    local i
    for i in $(seq 1 100); do echo "user$i@pv.pace.test"; done > "$IT_DIR/pv.csv"
    http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/pv.csv" -F preview=true
    expect_status 202 || return 1
    once || it_fail "svc-worker --once failed"
    # the sample (2 of 100 rows) went in one session: one RCPT taken, the
    # next one refused with the 421, which the preview's session learned
    expect_eq "mx-pv 421s" 1 "$(rate_field 127.0.0.44 refused)" || return 1
    expect_eq "the pair of mx-pv got the penalty (strike, reason)" "1 1" \
        "$(it_sql "SELECT strikes, reason LIKE '421 4.7.28%' FROM pacing_pairs WHERE pair = 'mx-pv.pace.test' AND egress = 'direct'" | tr '\t' ' ')" || return 1
    grep -q "svc-worker\[[0-9]*\] .*event=pacing_slow_down pair=mx-pv.pace.test .*seen_by=session" "$IT_DIR/log/svc.log" ||
        it_fail "svc-worker's previewer logged no pacing_slow_down for mx-pv"
}
t_case "an upload preview's SMTP sample that hears 421 4.7.28 penalises the pair" t_preview_learns

# hl_penalty: mx-hl's pair in a penalty for an hour (no clock decides the
# cases that use it)
hl_penalty() {
    it_sql "INSERT INTO pacing_pairs (pair, egress, start_rate, base_rate, since, strikes, penalty_until, reason, updated_at)
        VALUES ('mx-hl.pace.test', 'direct', 600, 300, UTC_TIMESTAMP(3), 1, UTC_TIMESTAMP(3) + INTERVAL 1 HOUR,
                '421 4.7.28 rate limited', UTC_TIMESTAMP(3))
        ON DUPLICATE KEY UPDATE penalty_until = UTC_TIMESTAMP(3) + INTERVAL 1 HOUR, paused_until = NULL"
}
# fr_done: the job's five friendly addresses at mx-fr are done
fr_done() { [ "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND domain = 'zf.pace.test' AND state = 'done'")" = 5 ]; }

t_paced_chunks_hold_no_slot() {
    # mx-hl's pair is in a penalty (an hour: no clock decides the case);
    # its 800 addresses make the job's first four chunks (a job's chunks
    # follow its domains' order), five friendly ones at mx-fr the fifth,
    # and svc-worker holds three chunks (worker_concurrency 10 x 20 RCPTs
    # x 2 / 200 + 1)
    hl_penalty
    { for d in 1 2 3 4; do for i in $(seq 1 200); do echo "user$i@hl$d.pace.test"; done; done
      for i in 1 2 3 4 5; do echo "user$i@zf.pace.test"; done; } | mkjob held || return 1
    expect_eq "the job's chunks" 5 "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$JOB'")" || return 1
    stack_proc_start "$IT_DIR/log" worker-hl "$WORKER" -c "$SVC_CONF" || { it_fail "svc-worker did not start"; return 1; }
    it_wait_until 120 "for the friendly addresses behind the paced chunks" fr_done
    local rc=$?
    stack_proc_stop "$IT_DIR/log" worker-hl
    http DELETE "/v1/jobs/$JOB"
    [ "$rc" = 0 ] || return 1
    expect_eq "friendly addresses valid" 5 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND domain = 'zf.pace.test' AND classification = 'valid'")" || return 1
    expect_eq "mx-hl's addresses done (its pair in its penalty)" 0 \
        "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND domain LIKE 'hl%' AND state = 'done'")" || return 1
    expect_eq "SMTP sessions mx-hl got" 0 "$(fake_ctl 127.0.0.48 stats | tr ' ' '\n' | sed -n 's/^sessions=//p')" || return 1
    grep -q "event=chunks_beyond_cap .*reason=paced_only" "$IT_DIR/log/svc.log" ||
        it_fail "svc-worker logged no chunks_beyond_cap"
}
t_case "chunks whose addresses wait for a paced pair do not keep the next chunks waiting: the worker claims beyond its cap while every waiting domain waits for pacing" t_paced_chunks_hold_no_slot

t_paced_chunks_handed_back() {
    # 65 chunks of mx-hl's addresses (its pair in an hour's penalty), more
    # than the 64 a worker holds, then the five friendly ones: the worker
    # hands the paced chunks back, claimable again about when the penalty
    # ends, and verifies the friendly addresses behind them
    hl_penalty
    { for d in $(seq -w 1 65); do for i in $(seq 1 200); do echo "user$i@hb$d.pace.test"; done; done
      for i in 1 2 3 4 5; do echo "user$i@zf.pace.test"; done; } | mkjob handed || return 1
    expect_eq "the job's chunks" 66 "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$JOB'")" || return 1
    fake_ctl 127.0.0.48 reset > /dev/null
    stack_proc_start "$IT_DIR/log" worker-hb "$WORKER" -c "$SVC_CONF" || { it_fail "svc-worker did not start"; return 1; }
    t_handed_back_checks() {
        it_wait_until 120 "for the friendly addresses behind 65 paced chunks" fr_done || return 1
        expect_eq "friendly addresses valid" 5 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND domain = 'zf.pace.test' AND classification = 'valid'")" || return 1
        expect_eq "mx-hl's addresses done (its pair in its penalty)" 0 \
            "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id = '$JOB' AND domain LIKE 'hb%' AND state <> 'pending'")" || return 1
        expect_eq "SMTP sessions mx-hl got" 0 "$(fake_ctl 127.0.0.48 stats | tr ' ' '\n' | sed -n 's/^sessions=//p')" || return 1
        # every chunk handed back (as many as the worker logged; once there
        # was room again it held the rest) is pending, claimable again by
        # itself only near the penalty's end (an hour less half a minute
        # at the soonest)
        local back logged called
        back=$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$JOB' AND state = 'pending'
                       AND not_before > UTC_TIMESTAMP(3) + INTERVAL 50 MINUTE")
        logged=$(grep -c "event=chunk_deferred job=$JOB .*host=mx-hl.pace.test .*reason=paced" "$IT_DIR/log/svc.log")
        [ "$logged" -ge 1 ] || { it_fail "svc-worker logged no chunk_deferred"; return 1; }
        expect_eq "chunks handed back until the penalty's end" "$logged" "$back" || return 1
        svcadm status --json > "$IT_DIR/status-hb.json" 2>&1
        expect_eq "svcadm status: chunks not before a later time" "$back" "$(jq .chunks.later "$IT_DIR/status-hb.json")" || return 1
        # the penalty ends and the pair may go fast: what the worker holds
        # of it lasts seconds, so it calls back the chunks it handed back
        # (the first at once, not in an hour) and verifies them
        it_sql "UPDATE pacing_pairs SET penalty_until = NULL, strikes = 0, start_rate = 60000, base_rate = 60000,
                since = UTC_TIMESTAMP(3) WHERE pair = 'mx-hl.pace.test' AND egress = 'direct'"
        called_back() { grep -q "event=chunk_called_back job=$JOB chunk=[0-9]* waiting=yes" "$IT_DIR/log/svc.log"; }
        it_wait_until 60 "for a chunk handed back to be called back" called_back || return 1
        called=$(grep -o "event=chunk_called_back job=$JOB chunk=[0-9]* waiting=yes" "$IT_DIR/log/svc.log" |
            head -n 1 | sed 's/.*chunk=\([0-9]*\).*/\1/')
        chunk_done() { [ "$(it_sql "SELECT state FROM job_chunks WHERE job_id = '$JOB' AND chunk = $called")" = done ]; }
        it_wait_until 120 "for the called back chunk $called to be verified" chunk_done || return 1
        expect_eq "the called back chunk's addresses valid" 200 "$(it_sql "SELECT COUNT(*) FROM job_emails
            WHERE job_id = '$JOB' AND chunk = $called AND classification = 'valid'")"
    }
    t_handed_back_checks
    local rc=$?
    stack_proc_stop "$IT_DIR/log" worker-hb
    http DELETE "/v1/jobs/$JOB"
    return $rc
}
t_case "chunks of a paced pair past the 64 a worker holds are handed back until their turn, and the friendly addresses behind them are verified" t_paced_chunks_handed_back

t_budget_shared() {
    local conf=$IT_DIR/svc-tw.conf ja jb
    # windows of 10 s; mx-tw's pair learned 60 a minute and runs at 90 %
    # of it: 9 RCPTs a window, what mx-tw takes in 10 s
    sed 's/^pacing_window_ms = .*/pacing_window_ms = 10000/' "$SVC_CONF" > "$conf"
    it_sql "INSERT INTO pacing_pairs (pair, egress, start_rate, base_rate, learned_rate, since, strikes, updated_at)
        VALUES ('mx-tw.pace.test', 'direct', 54, 54, 60, UTC_TIMESTAMP(3), 0, UTC_TIMESTAMP(3))"
    for i in $(seq 1 8); do echo "user$i@tw1.pace.test"; done | mkjob tw1 || return 1
    ja=$JOB
    timeout 300 "$WORKER" --once -c "$conf" 2>> "$IT_DIR/log/worker-stderr.log" || it_fail "the first svc-worker --once failed"
    expect_eq "RCPTs mx-tw got from the first worker (8 and the probe)" 9 "$(rate_field 127.0.0.58 rcpts)" || return 1
    # a second worker process, seconds later: the window's budget is spent
    # (rate_counts in MariaDB, whoever took it), so it waits for the next
    # window instead of sending 9 more within mx-tw's 10 s
    for i in $(seq 1 8); do echo "user$i@tw2.pace.test"; done | mkjob tw2 || return 1
    jb=$JOB
    timeout 300 "$WORKER" --once -c "$conf" 2>> "$IT_DIR/log/worker-stderr.log" || it_fail "the second svc-worker --once failed"
    expect_eq "both jobs" "completed completed" "$(it_sql "SELECT status FROM jobs WHERE id IN ('$ja', '$jb')" | tr '\n' ' ' | sed 's/ $//')" || return 1
    expect_eq "valid" 16 "$(it_sql "SELECT COUNT(*) FROM job_emails WHERE job_id IN ('$ja', '$jb') AND classification = 'valid'")" || return 1
    expect_eq "RCPTs mx-tw got, and its 421s" "18 0" "$(rate_field 127.0.0.58 rcpts) $(rate_field 127.0.0.58 refused)"
}
t_case "a pair's budget is shared by every svc-worker process (MariaDB): a second worker within the window waits for the next, and the host that takes 9 RCPTs in 10 s says no 421" t_budget_shared
# short_pause PAUSE_MS PATIENCE_MS: the pause after a block and the
# patience of the addresses waiting, for the next worker runs
short_pause() {
    sed -i '/^pacing_pause_ms = /d; /^pacing_patience_ms = /d' "$SVC_CONF"
    printf 'pacing_pause_ms = %s\npacing_patience_ms = %s\n' "$1" "$2" >> "$SVC_CONF"
}

t_pause_within_patience() {
    # mx-rc blocks every RCPT of its first two sessions (554 5.7.1 ...
    # zen.spamhaus.org), then answers: with a pause (2 s) that ends well
    # within the patience (a minute), the addresses wait it out, twice,
    # and end with their real verdicts; none is smtp_blocked or refunded
    short_pause 2000 60000
    { for i in 1 2 3 4; do echo "user$i@rc.pace.test"; done; echo unknown1@rc.pace.test; } | mkjob recover || return 1
    once || it_fail "svc-worker --once failed"
    expect_eq "status" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")" || return 1
    expect_eq "sessions mx-rc blocked" 2 "$(rate_field 127.0.0.50 sessions_blocked)" || return 1
    expect_eq "verdicts" "invalid mailbox_not_found 1,valid null 4" \
        "$(it_sql "SELECT classification, IFNULL(sub_status, 'null'), COUNT(*) FROM job_emails WHERE job_id = '$JOB'
                   GROUP BY 1, 2 ORDER BY CAST(classification AS CHAR)" | tr '\t' ' ' | paste -sd,)" || return 1
    expect_eq "count_unknown" 0 "$(it_sql "SELECT count_unknown FROM jobs WHERE id = '$JOB'")" || return 1
    expect_eq "refunded" 0 "$(it_sql "SELECT COALESCE(SUM(amount), 0) FROM credit_ledger WHERE ref = 'job:$JOB:refund'")" || return 1
    grep -q "event=pacing_gave_up domain=rc.pace.test" "$IT_DIR/log/svc.log" &&
        it_fail "svc-worker gave up on rc.pace.test"
    return 0
}
t_case "a block whose pause ends within the patience: the addresses wait it out (twice) and end with their real verdicts, none smtp_blocked nor refunded" t_pause_within_patience

t_blocks_past_patience() {
    # mx-pb blocks every session: each block pauses the pair for 1 s, less
    # than the patience (5 s), but the addresses have waited past the
    # patience after a few of them in a row, and end smtp_blocked,
    # refunded (not sent again for ever: the worker run ends)
    short_pause 1000 5000
    { for i in 1 2 3; do echo "user$i@pb.pace.test"; done; } | mkjob blocked || return 1
    timeout 120 "$WORKER" --once -c "$SVC_CONF" 2>> "$IT_DIR/log/worker-stderr.log" ||
        it_fail "svc-worker --once failed or never ended"
    expect_eq "status" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")" || return 1
    expect_eq "verdicts" "unknown smtp_blocked 3" \
        "$(it_sql "SELECT classification, IFNULL(sub_status, 'null'), COUNT(*) FROM job_emails WHERE job_id = '$JOB'
                   GROUP BY 1, 2 ORDER BY CAST(classification AS CHAR)" | tr '\t' ' ' | paste -sd,)" || return 1
    expect_eq "refunded" 3 "$(it_sql "SELECT COALESCE(SUM(amount), 0) FROM credit_ledger WHERE ref = 'job:$JOB:refund'")" || return 1
    [ "$(rate_field 127.0.0.51 sessions_blocked)" -ge 2 ] ||
        it_fail "mx-pb blocked $(rate_field 127.0.0.51 sessions_blocked) sessions: the addresses gave up at the first short pause"
    grep -q "event=pacing_gave_up domain=pb.pace.test host=mx-pb.pace.test addresses=3 " "$IT_DIR/log/svc.log" ||
        it_fail "svc-worker logged no pacing_gave_up for pb.pace.test"
}
t_case "blocks in a row, each pause shorter than the patience: the addresses end smtp_blocked (refunded) once they have waited past the patience" t_blocks_past_patience

t_lone_rcpt_block() {
    # mx-ob takes one RCPT a session (its profile says so) and answers it
    # 554 5.7.1 ... blocked using zen.spamhaus.org: a session has no second
    # RCPT to show that every one is blocked, but this one names our
    # client, so the pair is paused all the same (and the addresses, sent
    # again after each pause, end smtp_blocked past the patience)
    it_sql "INSERT INTO mx_profiles (host, rcpts_per_session, updated_at) VALUES ('mx-ob.pace.test', 1, UTC_TIMESTAMP(3))"
    short_pause 1000 5000
    { for i in 1 2; do echo "user$i@ob.pace.test"; done; } | mkjob lone || return 1
    timeout 120 "$WORKER" --once -c "$SVC_CONF" 2>> "$IT_DIR/log/worker-stderr.log" ||
        it_fail "svc-worker --once failed or never ended"
    expect_eq "status" completed "$(it_sql "SELECT status FROM jobs WHERE id = '$JOB'")" || return 1
    expect_eq "RCPTs in a session at mx-ob" 1 "$(fake_ctl 127.0.0.59 stats | tr ' ' '\n' | sed -n 's/^max_rcpt=//p')" || return 1
    grep -q "event=pacing_pause pair=mx-ob.pace.test .*blocked using zen.spamhaus.org" "$IT_DIR/log/svc.log" ||
        { it_fail "mx-ob's pair was never paused"; return 1; }
    expect_eq "verdicts" "unknown smtp_blocked 2" \
        "$(it_sql "SELECT classification, IFNULL(sub_status, 'null'), COUNT(*) FROM job_emails WHERE job_id = '$JOB'
                   GROUP BY 1, 2" | tr '\t' ' ')"
}
t_case "a host that takes one RCPT a session and blocks it naming a DNSBL (blocked_client): that one RCPT pauses the pair" t_lone_rcpt_block

t_done
