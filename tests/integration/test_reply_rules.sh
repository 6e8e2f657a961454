#!/bin/bash
# test_reply_rules.sh: the reading rules of SMTP replies
# (lists_dir/smtp_reply_rules.txt, issue 24 item 2) through POST /v1/verify,
# against the fake SMTP server (tests/smtp/fake_smtp.py) answering the real
# texts of Microsoft 365, Gmail, Outlook.com and the gateways (Mimecast,
# Proofpoint, Barracuda) as the MX of replies.test (a zone of this test):
# each comes out with the status and sub_status the rules give; blocks are
# unknown / smtp_blocked, never undeliverable; the rate-limit reply is
# retried and ends greylisted (it was smtp_blocked); an operator's rule in
# lists_dir/local/ wins over the shipped ones, and an operator's rule for
# the host's provider (mx.replies.test's is its registrable domain,
# replies.test, which has no shipped rules of its own) reads its replies
# for pacing too; the catch-all probe is the last RCPT, after the address;
# svcadm lists check counts the rules. The shipped providers' own
# readings, on MX hosts with their real names, are in test_providers.sh,
# and unit-tested in tests/unit/test_smtp_reply.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require jq python3
mkdir -p "$IT_DIR/zones"
printf '%s\n' '$ORIGIN replies.test.' '$TTL 300' \
    '@ 3600 IN SOA ns.svc.test. hostmaster.svc.test. 1 3600 600 86400 120' \
    '@ 300 IN NS ns.svc.test.' '@ 300 IN MX 10 mx' 'mx 300 IN A 127.0.0.61' \
    'order 300 IN MX 10 mx.replies.test.' > "$IT_DIR/zones/replies.test.zone"
mail_env_dns "$IT_DIR/zones/replies.test.zone"
SMTP_PORT=$(stack_free_port)
fake 127.0.0.61
mail_env_lists
# the operator's own rule: this gateway's "quarantined" means disabled
printf '%s\n' '# local rules, read before the shipped ones' \
    'reply * 5xx * disabled quarantined by the gateway' \
    'reply replies.test 4xx 4.7.99 rate_limited' \
    > "$IT_DIR/lists/local/smtp_reply_rules.txt"
mail_env_conf
it_conf_add "verify_time_budget_ms = 8000
greylist_retry_ms = 100"
it_stack_start

ACC=$(it_account admin 1000)
API_KEY=$(it_key "$ACC" '*')

# row EMAIL STATUS REASON SUB [ENHANCED]: POST /v1/verify's answer
row() {
    http POST /v1/verify "$(jq -cn --arg e "$1" '{email: $e}')"
    expect_status 200 && expect_json .status "$2" && expect_json .reason "$3" &&
        expect_json .sub_status "$4" || return 1
    [ -z "${5:-}" ] || expect_json .smtp.enhanced_code "$5"
}

t_probe_after_address() {
    row user1@order.replies.test deliverable accepted_email null 2.1.5 || return 1
    local paths
    paths=$(fake_ctl 127.0.0.61 paths)
    printf '%s\n' "$paths" | grep -Eq '^MAIL FROM:<[^|]*>[^|]*\|RCPT TO:<user1@order\.replies\.test>\|RCPT TO:<[a-z0-9]+@order\.replies\.test>$' ||
        it_fail "the RCPTs of the session: want the address, then the random probe; got $paths"
}
t_case "the catch-all probe is the last RCPT: the address first, then the random one" t_probe_after_address

t_case "Microsoft 365 550 5.4.1 Access denied AS(201806281): undeliverable mailbox_not_found" \
    row officeunknown@replies.test undeliverable rejected_email mailbox_not_found 5.4.1
t_case "Mimecast 550 Invalid Recipient: undeliverable mailbox_not_found" \
    row mimecastinvalid@replies.test undeliverable rejected_email mailbox_not_found
t_case "Gmail 452 4.2.2 OverQuotaTemp: risky mailbox_full" \
    row gmailfull@replies.test risky mailbox_full mailbox_full 4.2.2
t_case "Gmail 550 5.2.1 disabled: undeliverable account_disabled" \
    row gmaildisabled@replies.test undeliverable account_disabled account_disabled 5.2.1
t_case "Proofpoint 554 5.7.0 Blocked (ipcheck): unknown smtp_blocked" \
    row proofpointblocked@replies.test unknown unknown smtp_blocked 5.7.0
t_case "Mimecast Anti-Spoofing policy: unknown smtp_blocked" \
    row mimecastspoof@replies.test unknown unknown smtp_blocked
t_case "Mimecast 554 security policies: unknown smtp_blocked" \
    row mimecastpolicy@replies.test unknown unknown smtp_blocked
t_barracuda() {
    it_sql "DELETE FROM pacing_pairs"
    row barracudablocked@replies.test unknown unknown smtp_blocked || return 1
    # its words name our client (blocked_client): the pair is paused, and
    # the cases below ask the same host about other replies
    expect_eq "the pair paused by the Barracuda block" 1 \
        "$(it_sql "SELECT COUNT(*) FROM pacing_pairs WHERE pair = 'mx.replies.test' AND paused_until > UTC_TIMESTAMP(3) AND reason LIKE '%Barracuda Reputation%'")" || return 1
    it_sql "DELETE FROM pacing_pairs"
}
t_case "Barracuda Reputation: unknown smtp_blocked, and the pair paused (the reply names our client)" t_barracuda

t_rate_limited() {
    row outlookrate@replies.test unknown unknown greylisted 4.7.650 || return 1
    # a "slow down": the host's pair gets its penalty and no second session
    # is opened within it (the first session's answer stands)
    local n
    n=$(fake_ctl 127.0.0.61 stats | sed -n 's/.*sessions=\([0-9]*\).*/\1/p')
    expect_eq "sessions for the rate-limited address" 1 "${n:-0}" || return 1
    expect_eq "the pair's penalty" 1 \
        "$(it_sql "SELECT COUNT(*) FROM pacing_pairs WHERE pair = 'mx.replies.test' AND reason LIKE '451 4.7.650%'")" || return 1
    # the cases below ask the same host about other replies: no penalty
    it_sql "DELETE FROM pacing_pairs"
}
t_rate() { fake_ctl 127.0.0.61 reset > /dev/null && t_rate_limited; }
t_case "Outlook 451 4.7.650 rate limited: slow down, no second session within the penalty, unknown greylisted (not smtp_blocked)" t_rate

t_case "an operator's rule in lists_dir/local/ wins: quarantined = account_disabled" \
    row quarantined@replies.test undeliverable account_disabled account_disabled

t_provider_rule_paces() {
    # 451 4.7.99 is a temporary block by the generic rules (no penalty);
    # the operator's rule for the host's provider calls it "slow down", and
    # the session reads it so: the pair gets its penalty
    it_sql "DELETE FROM pacing_pairs"
    fake_ctl 127.0.0.61 reset > /dev/null
    row tenantthrottle@replies.test unknown unknown greylisted 4.7.99 || return 1
    expect_eq "the pair's penalty from the provider's own rule" 1 \
        "$(it_sql "SELECT COUNT(*) FROM pacing_pairs WHERE pair = 'mx.replies.test' AND reason LIKE '451 4.7.99%' AND penalty_until > UTC_TIMESTAMP(3)")" || return 1
    it_sql "DELETE FROM pacing_pairs"
}
t_case "an operator's rule for the host's provider reads its replies for pacing: its own 'slow down' gives the pair a penalty" t_provider_rule_paces

t_lists_check() {
    local out
    out=$(svcadm lists check 2>&1)
    printf '%s\n' "$out" | grep -Eq '^smtp_reply_rules: rules=[0-9]+ local=2 accept_all=2 skipped=0$' ||
        it_fail "svcadm lists check: $out"
}
t_case "svcadm lists check counts the shipped and local rules" t_lists_check

t_done
