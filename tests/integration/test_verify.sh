#!/bin/bash
# test_verify.sh: the verification engine through the HTTP API, against
# real servers on loopback: unbound serving the test zones (tests/dns), a
# real Postfix with mailboxes, a catch-all domain, a disabled and a full
# mailbox, a policy block, STARTTLS required and greylisting (tests/smtp/
# mta.sh), and the scriptable fake SMTP server for a catch-all without web
# presence, endless greylisting and a silent MX (tests/smtp/fake_smtp.py).
# Every row of API.md's classification table has a case here, plus an IDN
# domain and a top-level domain (tests/dns/svctld.zone) taking mail,
# POST /v1/domain/check, the sandbox, caching and charging.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
# gmail.com, a free provider of the shipped lists (contrib/lists), served
# on loopback with its MX at the Postfix listener of mx.svc.test
mkdir -p "$IT_DIR/zones"
printf '%s\n' '$ORIGIN gmail.com.' '$TTL 300' \
    '@ 3600 IN SOA ns.svc.test. hostmaster.svc.test. 1 3600 600 86400 120' \
    '@ 300 IN NS ns.svc.test.' '@ 300 IN MX 10 mta20.svc.test.' > "$IT_DIR/zones/gmail.com.zone"
mail_env_start "$top_srcdir/tests/dns/svctld.zone" "$IT_DIR/zones/gmail.com.zone"
fake 127.0.0.30 catchall=1
fake 127.0.0.31
fake 127.0.0.32 banner=silent
mail_env_lists
mail_env_conf
it_conf_add "verify_time_budget_ms = 12000
greylist_retry_ms = 2500
feedback_hash_key_file = $IT_DIR/feedback-hash-key"
it_stack_start

ACC=$(it_account admin 1000)
API_KEY=$(it_key "$ACC" '*')

# verify EMAIL: POST /v1/verify
verify() { http POST /v1/verify "$(jq -cn --arg e "$1" '{email: $e}')"; }

# row EMAIL STATUS REASON SUB: one row of the classification table
row() {
    verify "$1"
    expect_status 200 && expect_json .status "$2" && expect_json .reason "$3" &&
        expect_json .sub_status "$4" && expect_jq '.score >= 0 and .score <= 100' &&
        expect_json .email "$1"
}

t_accepted() {
    row alice@mx.svc.test deliverable accepted_email null || return 1
    expect_json .smtp.code 250 && expect_json .smtp.tls true && expect_json .mx[0].host mta20.svc.test &&
        expect_json .mx[0].priority 10 && expect_json .domain.acceptAll no && expect_json .role no &&
        expect_json .spam_trap no && expect_json .cached false && expect_json .credits_charged 1 &&
        expect_json .catch_all_verdict null && expect_jq '.score >= 90'
}
t_case "RCPT accepted on a domain that is not catch-all: deliverable" t_accepted
t_case "accepted role address: risky role_based" eval 'row info@mx.svc.test risky role_based role_based && expect_json .role yes'
t_case "not shaped like an email: undeliverable invalid_syntax" eval 'row "not an email" undeliverable invalid_syntax null && expect_json .mx "[]"'
t_case "NXDOMAIN: undeliverable invalid_domain" row x@nosuch.svc.test undeliverable invalid_domain null
t_typo() {
    row x@mailbx.svc.test undeliverable invalid_domain possible_typo && expect_json .did_you_mean x@mailbox.svc.test
}
t_case "NXDOMAIN near a provider domain: possible_typo with did_you_mean" t_typo
t_case "no MX and no address: no_mx_record" row x@mx-txt.svc.test undeliverable no_mx_record null
t_case "null MX (RFC 7505): no_mx_record" row x@nullmx.svc.test undeliverable no_mx_record null
t_rejected() {
    row nobody@mx.svc.test undeliverable rejected_email mailbox_not_found &&
        expect_json .smtp.code 550 && expect_json .smtp.enhanced_code 5.1.1
}
t_case "mailbox rejected 550 5.1.1: rejected_email mailbox_not_found" t_rejected
t_case "mailbox disabled 550 5.2.1: account_disabled" row disabled@mx.svc.test undeliverable account_disabled account_disabled
t_case "mailbox full 452 4.2.2: risky mailbox_full" row full@mx.svc.test risky mailbox_full mailbox_full
t_catch_all() {
    row jane@catchall.svc.test unknown catch_all catch_all && expect_json .domain.acceptAll yes &&
        expect_json .catch_all_verdict send_safe || return 1
    row user84920@catchall.svc.test unknown catch_all catch_all && expect_json .catch_all_verdict avoid
}
t_case "domain accepts a random address: unknown catch_all with a send verdict" t_catch_all
t_case "disposable domain: undeliverable disposable_email" eval 'row x@throwaway.svc.test undeliverable disposable_email disposable && expect_json .domain.disposable yes'

t_free_provider() {
    verify someone@gmail.com
    expect_status 200 && expect_json .email someone@gmail.com && expect_json .domain.name gmail.com &&
        expect_json .domain.free yes && expect_json .domain.disposable no && expect_json .mx[0].host mta20.svc.test || return 1
    # mta20 does not relay for gmail.com: "554 5.7.1 Relay access denied"
    # says the host does not take the domain's mail, nothing of the
    # address and nothing of us: unknown, and no pause of mta20's pair
    # (a block would stop every later session to mta20)
    expect_json .status unknown && expect_json .sub_status null || return 1
    expect_eq "mta20's pair paused" 0 "$(it_sql "SELECT COUNT(*) FROM pacing_pairs WHERE pair = 'mta20.svc.test' AND paused_until IS NOT NULL")" || return 1
    verify alice@mx.svc.test
    expect_status 200 && expect_json .domain.free no
}
t_case "a free-provider domain of the shipped lists (gmail.com) answers domain.free yes; a company domain no" t_free_provider
t_traps() {
    row spamtrap@catchall.svc.test risky spam_trap spam_trap && expect_json .spam_trap yes || return 1
    row x@typotrap.svc.test risky spam_trap spam_trap || return 1
    row jane@pristine.svc.test risky spam_trap spam_trap && expect_json .domain.acceptAll yes &&
        expect_json .catch_all_verdict avoid
}
t_case "spam-trap heuristics (trap local part, typo-trap domain, pristine catch-all): risky spam_trap" t_traps
t_complainer() {
    echo "Bob@MX.svc.test" | svcadm complainers import - --source test > /dev/null || return 1
    # kept as the keyed hash of the normalised address, nothing in clear
    expect_eq "clear complainer rows" 0 "$(it_sql "SELECT COUNT(*) FROM complainers WHERE address IS NOT NULL OR addr_hash NOT REGEXP '^[0-9a-f]{32}\$' OR source LIKE '%@%'")" || return 1
    expect_eq "hashed complainer rows" 1 "$(it_sql "SELECT COUNT(*) FROM complainers")" || return 1
    row bob@mx.svc.test risky known_complainer known_complainer
}
t_case "known complainer list match: risky known_complainer" t_complainer
t_complainer_migrated() {
    # a row as schema 24 kept it (in clear), hashed by svcadm db migrate
    it_sql "INSERT INTO complainers (address, source, added_at) VALUES ('sales@mx.svc.test', 'old', UTC_TIMESTAMP(3))" || return 1
    out=$(svcadm db migrate --sql-dir "$top_srcdir/sql") || return 1
    case $out in *"complainers: 1 addresses in clear replaced by their hashes"*) ;;
        *) echo "# migrate said: $out"; return 1 ;; esac
    expect_eq "clear complainer rows" 0 "$(it_sql "SELECT COUNT(*) FROM complainers WHERE address IS NOT NULL")" || return 1
    expect_eq "hashed complainer rows" 2 "$(it_sql "SELECT COUNT(*) FROM complainers WHERE addr_hash REGEXP '^[0-9a-f]{32}\$'")" || return 1
    row sales@mx.svc.test risky known_complainer known_complainer || return 1
    # a second run finds nothing left to hash
    out=$(svcadm db migrate --sql-dir "$top_srcdir/sql") || return 1
    case $out in *complainers:*) echo "# migrate said: $out"; return 1 ;; esac
    ! grep -q -i -e 'bob@mx.svc.test' -e 'sales@mx.svc.test' "$IT_DIR/log/svc.log"
}
t_case "a complainer row kept in clear before schema 25 is hashed by db migrate and still found" t_complainer_migrated
t_greylist_retry() {
    row alice@grey.svc.test deliverable accepted_email null
}
t_case "greylisted once, accepted when retried within the budget: deliverable" t_greylist_retry
t_case "greylisted beyond the retry budget: unknown greylisted" row greyforever@greyforever.svc.test unknown unknown greylisted
t_dnsbl_block() {
    it_sql "DELETE FROM pacing_pairs"
    row blocked@mx.svc.test unknown unknown smtp_blocked || return 1
    # its words name our client (listed at zen.spamhaus.org: blocked_client);
    # when it is the session's only answer (the domain's catch-all known,
    # no probe) the host's pair is paused. The fixture's MTA says it for
    # one recipient only, so the next cases, at the same MTA, start clean
    it_sql "DELETE FROM pacing_pairs"
}
t_case "policy block 554 5.7.1 (DNSBL text): unknown smtp_blocked, never undeliverable" t_dnsbl_block
t_case "all MX dead: unknown smtp_unreachable" row x@unreachable.svc.test unknown unknown smtp_unreachable
t_case "DNS timeout: unknown dns_error" row x@timeout.test unknown unknown dns_error
t_case "STARTTLS required: deliverable over TLS" eval 'row alice@tls.svc.test deliverable accepted_email null && expect_json .smtp.tls true'

# The Postfix serves bücher.svc.test in A-labels and refuses the U-label
# form: the RCPT must carry the A-label domain; the result keeps the
# address as given.
t_idn() {
    row alice@bücher.svc.test deliverable accepted_email null && expect_json .smtp.code 250 &&
        expect_json .domain.name bücher.svc.test && expect_json .mx[0].host mta20.svc.test || return 1
    row nobody@bücher.svc.test undeliverable rejected_email mailbox_not_found && expect_json .smtp.code 550 &&
        expect_json .smtp.enhanced_code 5.1.1
}
t_case "IDN domain: RCPT in A-labels, accepted_email and rejected_email, the address as given" t_idn
# Dotless addresses (RFC 5321): DNS decides. svctld has an MX (the Postfix),
# nosuchtld is NXDOMAIN, a numeric "TLD" is an IP address without brackets.
t_dotless() {
    row alice@svctld deliverable accepted_email null && expect_json .mx[0].host mta20.svc.test &&
        expect_json .smtp.code 250 || return 1
    row nobody@svctld undeliverable rejected_email mailbox_not_found && expect_json .smtp.code 550 || return 1
    row x@nosuchtld undeliverable invalid_domain null && expect_json .mx "[]" || return 1
    row x@123 undeliverable invalid_syntax null
}
t_case "dotless: x@tld with an MX is verified, NXDOMAIN is invalid_domain, x@123 invalid_syntax" t_dotless

t_slow_mx() {
    local start end pid
    start=$(date +%s%N)
    ( API_KEY=$API_KEY http POST /v1/verify '{"email":"x@silent.svc.test"}' && echo "$HTTP_STATUS $HTTP_BODY" > "$IT_DIR/slow" ) &
    pid=$!
    sleep 0.5
    http GET /v1/credits; expect_status 200 || return 1
    end=$(date +%s%N)
    [ $(( (end - start) / 1000000 )) -lt 2500 ] || it_fail "another request waited for the slow MX"
    wait "$pid"
    HTTP_BODY=$(cut -d' ' -f2- "$IT_DIR/slow"); HTTP_REQUEST="POST /v1/verify (silent MX)"
    expect_json .status unknown && expect_json .sub_status smtp_unreachable || return 1
    end=$(date +%s%N)
    [ $(( (end - start) / 1000000 )) -lt 12500 ] || it_fail "the slow MX took longer than the budget"
}
t_case "a silent MX answers unknown within the budget and holds up no other request" t_slow_mx

t_cached_and_charged() {
    local before after
    http GET /v1/credits; before=$(json .balance)
    verify alice@mx.svc.test
    expect_json .cached true && expect_json .status deliverable && expect_json .credits_charged 1 || return 1
    expect_json .credits_remaining $((before - 1)) || return 1
    http GET /v1/credits; after=$(json .balance)
    expect_eq "balance after a cached result" $((before - 1)) "$after"
}
t_case "a cached result is served again and charged like a fresh one" t_cached_and_charged

# The verdict cache is shared by every account: rows are keyed by the keyed
# hash of the address, and no row holds an address (not in the key, not in
# the result JSON: the SMTP text's address is a mark, the suggestion keeps
# its domain); a hit gives them back from the request.
t_cache_holds_no_address() {
    verify nobody@mx.svc.test; expect_json .cached true || return 1
    expect_jq '.smtp.message | test("<nobody@mx.svc.test>")' || return 1
    verify x@mailbx.svc.test
    expect_json .cached true && expect_json .did_you_mean x@mailbox.svc.test || return 1
    expect_eq "rows keyed by the hash" 1 \
        "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash IN ($(it_cache_keys nobody@mx.svc.test))")" || return 1
    expect_eq "rows in the cache (more than 5)" 1 "$(it_sql "SELECT COUNT(*) > 5 FROM verdict_cache")" || return 1
    expect_eq "rows holding an address" 0 \
        "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE CONCAT(address_hash, result) REGEXP '[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+[.]' OR result LIKE '%nobody%' OR result LIKE '%alice%'")"
}
t_case "the verdict cache holds no address text (SQL over the table), and its hits still answer with the address" t_cache_holds_no_address

t_cache_rotate_key() {
    local old
    old=$(it_cache_keys alice@mx.svc.test)
    svcadm cache rotate-key > "$IT_DIR/rotate.out" || return 1
    grep -q "cached verdicts deleted" "$IT_DIR/rotate.out" || return 1
    expect_eq "rows after rotate-key" 0 "$(it_sql "SELECT COUNT(*) FROM verdict_cache")" || return 1
    [ "$old" != "$(it_cache_keys alice@mx.svc.test)" ] || it_fail "the key did not change"
    verify alice@mx.svc.test; expect_json .cached false || return 1
    expect_eq "the new entry under the new key" 1 \
        "$(it_sql "SELECT COUNT(*) FROM verdict_cache WHERE address_hash = $(it_cache_keys alice@mx.svc.test)")" || return 1
    verify alice@mx.svc.test; expect_json .cached true
}
t_case "svcadm cache rotate-key: a new key, the cache emptied, the next verify a miss stored under the new key" t_cache_rotate_key

t_sandbox() {
    local sb acc0
    sb=$(it_key "$ACC" 'verify:single' --sandbox)
    API_KEY=$sb verify rejected_email@sandbox.svc.example
    expect_json .status undeliverable && expect_json .reason rejected_email && expect_json .credits_charged 0 || return 1
    API_KEY=$sb verify catch_all@sandbox.svc.example
    expect_json .reason catch_all && expect_json .domain.acceptAll yes && expect_json .credits_charged 0 || return 1
    API_KEY=$sb verify someone@sandbox.svc.example
    expect_json .reason accepted_email && expect_json .smtp null && expect_json .credits_charged 0 || return 1
    verify mailbox_full@sandbox.svc.example
    expect_json .reason mailbox_full && expect_json .credits_charged 1 || return 1
    # a sandbox key with no credits still works on sandbox addresses
    acc0=$(it_account pro 0)
    API_KEY=$(it_key "$acc0" 'verify:single' --sandbox) verify unknown@sandbox.svc.example
    expect_status 200 && expect_json .status unknown && expect_json .credits_charged 0
}
t_case "sandbox addresses answer from their local part; free with a sandbox key only" t_sandbox

t_insufficient() {
    local acc
    acc=$(it_account pro 0)
    API_KEY=$(it_key "$acc" 'verify:single') verify alice@mx.svc.test
    expect_status 402 && expect_json .error.code insufficient_credits && expect_json .error.details.required 1 &&
        expect_json .error.details.available 0
}
t_case "no credits: 402 insufficient_credits with required and available" t_insufficient

t_bad_body() {
    http POST /v1/verify '{"mail":"a@b.c"}'; expect_status 400 && expect_json .error.code invalid_email &&
        expect_json .error.details.field email || return 1
    http POST /v1/verify '{"email":42}'; expect_status 400 || return 1
    http POST /v1/verify 'nope'; expect_status 400 && expect_json .error.code invalid_json
}
t_case "a body without a string email: 400 invalid_email naming the field" t_bad_body

# charge_rows: the account's charge rows in the ledger
charge_rows() { it_sql "SELECT COUNT(*) FROM credit_ledger WHERE pool_id = '$ACC' AND kind = 'charge'"; }

t_domain_check() {
    local balance charges
    http GET /v1/credits; expect_status 200 || return 1
    balance=$(json .balance)
    [ "$balance" -gt 0 ] || it_fail "no balance to watch: $balance" || return 1
    charges=$(charge_rows)
    http POST /v1/domain/check '{"domain":"mx.svc.test"}'
    expect_status 200 && expect_json .domain mx.svc.test && expect_json '.mx_records[0].host' mta20.svc.test &&
        expect_json '.mx_records[0].priority' 10 && expect_json .accept_all false &&
        expect_json .disposable false && expect_json .has_valid_mx true && expect_json .provider svc.test || return 1
    http POST /v1/domain/check '{"domain":"catchall.svc.test"}'; expect_json .accept_all true || return 1
    http POST /v1/domain/check '{"domain":"throwaway.svc.test"}'; expect_json .disposable true || return 1
    http POST /v1/domain/check '{"domain":"nosuch.svc.test"}'
    expect_status 200 && expect_json .has_valid_mx false && expect_json .mx_records '[]' || return 1
    http POST /v1/domain/check '{"domain":"not a domain"}'
    expect_status 400 && expect_json .error.code invalid_email && expect_json .error.details.field domain || return 1
    # four domain checks answered and one refused: none charged
    http GET /v1/credits; expect_status 200 && expect_json .balance "$balance" || return 1
    expect_eq "charge rows in the ledger after the domain checks" "$charges" "$(charge_rows)"
}
t_case "domain check: MX records, provider, accept_all, disposable, has_valid_mx; bad domain 400; no credit charged" t_domain_check

t_domain_check_idn_dotless() {
    http POST /v1/domain/check '{"domain":"Bücher.svc.test"}'
    expect_status 200 && expect_json .domain bücher.svc.test && expect_json '.mx_records[0].host' mta20.svc.test &&
        expect_json .accept_all false && expect_json .has_valid_mx true || return 1
    http POST /v1/domain/check '{"domain":"svctld"}'
    expect_status 200 && expect_json .domain svctld && expect_json '.mx_records[0].host' mta20.svc.test &&
        expect_json .accept_all false && expect_json .has_valid_mx true || return 1
    http POST /v1/domain/check '{"domain":"nosuchtld"}'
    expect_status 200 && expect_json .has_valid_mx false && expect_json .mx_records '[]' || return 1
    http POST /v1/domain/check '{"domain":"123"}'
    expect_status 400 && expect_json .error.details.field domain
}
t_case "domain check: an IDN domain and a TLD with an MX (catch-all probe answered 550), NXDOMAIN TLD, 400 for 123" t_domain_check_idn_dotless

t_domain_check_limit() {
    local acc key i
    acc=$(it_account admin 0)
    key=$(it_key "$acc" 'verify:single')
    for i in $(seq 1 30); do
        API_KEY=$key http POST /v1/domain/check '{"domain":"nosuch.svc.test"}'
        expect_status 200 || return 1
    done
    API_KEY=$key http POST /v1/domain/check '{"domain":"nosuch.svc.test"}'
    expect_status 429 && expect_json .success false && expect_json .limit 30 && expect_header Retry-After &&
        expect_jq '.reset_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")' && expect_jq '.error | type == "string"'
}
t_case "domain check has its own limit of 30 a minute with the flat 429 body" t_domain_check_limit

t_done
