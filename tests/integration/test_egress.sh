#!/bin/bash
# test_egress.sh: egress routes (setting smtp_egress) through the real API
# and worker, on loopback: the test's own DNS zone egress.test (unbound),
# two fake SMTP servers (tests/smtp/fake_smtp.py) that record each client's
# source address, one of them (127.0.0.42) serving only the SOCKS5 proxy's
# address, and Debian's dante-server (danted) as the proxy with
# username/password authentication against a system user that the test
# creates and removes. Cases: a bad route stops svc-api and svc-worker at
# start; a provider pinned to one route (smtp_provider_routes_file, a
# third fake server at 127.0.0.43 serving 127.0.0.3 only) gets every probe
# by it with its own HELO name and MAIL FROM; bind: routes spread a bulk job's sessions over two source
# addresses; the proxy-only host refuses those; through the proxy alone the
# verdicts are right (single verification and bulk job); a dead proxy gives
# unknown, never invalid, and the next route is used when there is one; a
# wrong password gives unknown with a clear log line; a host that blocks
# one source address (127.0.0.47) has that session's addresses verified
# by the other route; with allow_private_mx = no, a private MX address
# is refused by the engine before the proxy is asked to connect to it.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require danted useradd userdel chpasswd

# the zone: d1-d6 on the open host, p1-p3 on the proxy-only host
mkdir -p "$IT_DIR/zones"
{
    printf '%s\n' '$ORIGIN egress.test.' '$TTL 300' \
        '@ 3600 IN SOA ns.svc.test. hostmaster.svc.test. 1 3600 600 86400 120' \
        '@ 300 IN NS ns.svc.test.' 'mx-open 300 IN A 127.0.0.41' 'mx-proxyonly 300 IN A 127.0.0.42'
    for i in 1 2 3 4 5 6; do echo "d$i 300 IN MX 10 mx-open"; done
    for i in 1 2 3; do echo "p$i 300 IN MX 10 mx-proxyonly"; done
    # q1-q3 on the pinned provider's host (serving 127.0.0.3 only)
    echo 'mx-pinned 300 IN A 127.0.0.43'
    # the proxy by name (noproxy.egress.test does not exist); proxy-ttl1
    # is looked up again a second after each look-up
    echo 'proxy 300 IN A 127.0.0.1'
    echo 'proxy-ttl1 1 IN A 127.0.0.1'
    for i in 1 2 3; do echo "q$i 300 IN MX 10 mx-pinned"; done
    # r1-r25: MX hosts where nothing listens (a closed port 25)
    for i in $(seq 1 25); do echo "r$i 300 IN MX 10 mx-r$i"; echo "mx-r$i 300 IN A 127.0.0.46"; done
    # b1-b4 (catch-all domains) on a host that answers every RCPT from
    # 127.0.0.2 with a block
    echo 'mx-block 300 IN A 127.0.0.47'
    for i in 1 2 3 4; do echo "b$i 300 IN MX 10 mx-block"; done
} > "$IT_DIR/zones/egress.test.zone"
mail_env_dns "$IT_DIR/zones/egress.test.zone"
SMTP_PORT=$(stack_free_port)
PROXY_ADDR=127.0.0.45	# the proxy's outgoing (external) address
fake 127.0.0.41
fake 127.0.0.42 allow_from=$PROXY_ADDR
fake 127.0.0.43 allow_from=127.0.0.3
fake 127.0.0.47 block_rcpt_from=127.0.0.2 'catchall_domains=b[0-9]+\.egress\.test'

# the proxy's user: a system user of this test only, removed at exit
PROXY_USER=svcegress$$
PROXY_PASS=Px$RANDOM$RANDOM
useradd -r -M -s /usr/sbin/nologin "$PROXY_USER" || { echo "Bail out! useradd"; exit 1; }
egress_cleanup() { userdel "$PROXY_USER" 2>/dev/null || true; }
trap 'rc=$?; egress_cleanup; mail_env_stop; it_cleanup "$rc"' EXIT
echo "$PROXY_USER:$PROXY_PASS" | chpasswd || { echo "Bail out! chpasswd"; exit 1; }

PROXY_PORT=$(stack_free_port)
DEAD_PORT=$(stack_free_port)	# nothing listens there
cat > "$IT_DIR/danted.conf" <<EOF
logoutput: $IT_DIR/danted.log
internal: 127.0.0.1 port = $PROXY_PORT
external: $PROXY_ADDR
socksmethod: username
clientmethod: none
user.privileged: root
user.unprivileged: nobody
client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }
socks pass { from: 127.0.0.0/8 to: 0.0.0.0/0 command: connect
    log: connect }
EOF
danted -f "$IT_DIR/danted.conf" -N 1 > "$IT_DIR/danted.out" 2>&1 &
FAKE_PIDS+=($!)	# stopped by its pid with the fake servers
for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PROXY_PORT") 2>/dev/null && break
    sleep 0.1
done
(exec 3<>"/dev/tcp/127.0.0.1/$PROXY_PORT") 2>/dev/null ||
    { cat "$IT_DIR/danted.out" "$IT_DIR/danted.log"; echo "Bail out! danted did not start"; exit 1; }

SOCKS="socks5://$PROXY_USER:$PROXY_PASS@127.0.0.1:$PROXY_PORT"
mail_env_lists
# mx-pinned's provider: "pinned" (the operator's mx_providers.txt)
echo 'mx-pinned.egress.test pinned' >> "$IT_DIR/lists/local/mx_providers.txt"
mail_env_conf
it_conf_add "smtp_egress = bind:127.0.0.2 bind:127.0.0.3"
# provider "pinned" (mx-pinned, which serves 127.0.0.3 only) is pinned to
# bind:127.0.0.3 with its own HELO name and MAIL FROM (the first cases;
# the other hosts go on using both routes)
printf '%s\n' '# pins of the test' \
    'pinned bind:127.0.0.3 helo=pinned-out.svc.test mail_from=probe@pinned.svc.test' > "$IT_DIR/pins.txt"
it_conf_add "smtp_provider_routes_file = $IT_DIR/pins.txt"
it_stack_start

ACC=$(it_account admin 10000)
API_KEY=$(it_key "$ACC" '*')
shopt -s lastpipe

# egress ROUTES: smtp_egress in svc.conf, svc-api restarted to read it
# (svc-worker --once reads it at each run)
egress() {
    sed -i "s|^smtp_egress = .*|smtp_egress = $1|" "$SVC_CONF"
    stack_lighttpd_stop "$IT_DIR/lighttpd"
    it_api_start
}

verify() { http POST /v1/verify "$(jq -cn --arg e "$1" '{email: $e}')"; }
row() {
    verify "$1"
    expect_status 200 && expect_json .status "$2" && expect_json .reason "$3" && expect_json .sub_status "$4"
}
peers() { fake_ctl "$1" peers; }

# job NAME < ADDRESSES: a bulk job through the API, run by svc-worker
# --once until it completes; its results as "COUNT CLASSIFICATION" lines
job() {
    local code id
    jq -R . | jq -sc '{emails: .}' > "$IT_DIR/$1.json"
    code=$(curl -s -o "$IT_DIR/$1.created" -w '%{http_code}' -H "Authorization: Bearer $API_KEY" \
        -H 'Content-Type: application/json' --data-binary "@$IT_DIR/$1.json" "$BASE_URL/v1/verify/bulk")
    case $code in 201|202) ;; *) it_fail "creating $1: $code $(cat "$IT_DIR/$1.created")"; return 1 ;; esac
    id=$(jq -r '.job_id // .id' "$IT_DIR/$1.created")
    it_job_wait "$id" completed || return 1
    JOB_RESULTS=$(it_sql "SELECT COUNT(*), classification FROM job_emails WHERE job_id = '$id'
        GROUP BY classification ORDER BY CAST(classification AS CHAR)" | tr '\t' ' ' | tr '\n' ',' | sed 's/,$//')
}

t_bad_route_stops_the_programs() {
    local bad=$IT_DIR/bad.conf out
    sed "s|^smtp_egress = .*|smtp_egress = bind:127.0.0.2 socks5://joe:$PROXY_PASS@proxy_1.example:1080|" \
        "$SVC_CONF" > "$bad"
    out=$("$top_builddir/src/worker/svc-worker" -c "$bad" --once 2>&1) && { it_fail "svc-worker started"; return 1; }
    expect_eq "svc-worker" "svc-worker: smtp_egress: bad route \"socks5://joe:***@proxy_1.example:1080\": the proxy's HOST must be an IP address (IPv6 in brackets) or a host name" "$out" || return 1
    out=$("$(it_api)" -c "$bad" < /dev/null 2>&1) && { it_fail "svc-api started"; return 1; }
    case $out in *"smtp_egress: bad route \"socks5://joe:***@proxy_1.example:1080\""*) ;; *) it_fail "svc-api: $out"; return 1 ;; esac
    case $out in *"$PROXY_PASS"*) it_fail "the password was printed"; return 1 ;; esac
}
t_case "a bad route stops svc-worker and svc-api at start with a clear message, the password hidden" t_bad_route_stops_the_programs

# conf_set KEY VALUE / conf_unset KEY: a setting of svc.conf for the
# worker runs of one case
conf_set() { sed -i "/^$1 = /d" "$SVC_CONF"; echo "$1 = $2" >> "$SVC_CONF"; }
conf_unset() { sed -i "/^$1 = /d" "$SVC_CONF"; }

t_pinned_provider() {
    local out p s
    fake_ctl 127.0.0.41 reset > /dev/null
    # single verifications (two responders, each starting the round at a
    # route of its own) and a bulk job of one domain a session, so that
    # without the pin some sessions would leave by 127.0.0.2 and be refused
    for i in 1 2; do
        row "user9$i@q$i.egress.test" deliverable accepted_email null || return 1
    done
    conf_set worker_transactions_per_session 1
    { for i in 1 2 3; do echo "user92$i@q$i.egress.test"; done
      echo unknown@q1.egress.test; echo user931@d1.egress.test; } | job pinned
    conf_unset worker_transactions_per_session
    expect_eq "results" "1 invalid,4 valid" "$JOB_RESULTS" || return 1
    p=$(peers 127.0.0.43)
    [[ $p =~ ^127\.0\.0\.3=[0-9]+$ ]] || { it_fail "peers of the pinned host: $p"; return 1; }
    s=$(fake_ctl 127.0.0.43 senders)
    [[ $s =~ ^127\.0\.0\.3,pinned-out\.svc\.test,\<probe@pinned\.svc\.test\>=([0-9]+)$ ]] &&
        [ "${BASH_REMATCH[1]}" -ge 5 ] || { it_fail "senders of the pinned host: $s"; return 1; }
    # the other provider's sessions: both routes, the usual HELO and sender
    s=$(fake_ctl 127.0.0.41 senders)
    case $s in *pinned*|-) it_fail "senders of the open host: $s"; return 1 ;; esac
    # a pin on a route that is not in smtp_egress stops the programs
    echo 'pinned bind:127.0.0.9' > "$IT_DIR/badpins.txt"
    sed "s|^smtp_provider_routes_file = .*|smtp_provider_routes_file = $IT_DIR/badpins.txt|" "$SVC_CONF" > "$IT_DIR/badpins.conf"
    out=$("$top_builddir/src/worker/svc-worker" -c "$IT_DIR/badpins.conf" --once 2>&1) && { it_fail "svc-worker started"; return 1; }
    expect_eq "svc-worker" "svc-worker: smtp_provider_routes_file: $IT_DIR/badpins.txt: line 1: \"bind:127.0.0.9\": not one of smtp_egress's routes" "$out"
}
t_pinned() {
    local rc=0
    t_pinned_provider || rc=1
    conf_unset worker_transactions_per_session
    # the later cases change smtp_egress (svc-api, restarted then, reads
    # it again; until then its pins concern mx-pinned only)
    conf_unset smtp_provider_routes_file
    return $rc
}
t_case "a provider pinned to one route (smtp_provider_routes_file): every probe of its host leaves by that route with the pin's HELO name and MAIL FROM, from the API and the worker; a pin on an unknown route stops the programs" t_pinned

t_bind_spread() {
    local p
    fake_ctl 127.0.0.41 reset > /dev/null
    { for i in 1 2 3 4 5 6; do echo "user1$i@d$i.egress.test"; done; echo unknown@d1.egress.test; } | job bind || return 1
    expect_eq "results" "1 invalid,6 valid" "$JOB_RESULTS" || return 1
    # sessions from both source addresses, and from no other
    p=$(peers 127.0.0.41)
    case " $p " in *" 127.0.0.2="[0-9]*" 127.0.0.3="[0-9]*" ") ;; *) it_fail "peers: $p"; return 1 ;; esac
    [ "$(echo "$p" | wc -w)" = 2 ] || it_fail "peers: $p"
}
t_case "bind: routes: a bulk job's sessions leave from both source addresses, none from another" t_bind_spread

t_api_bind() {
    local p
    fake_ctl 127.0.0.41 reset > /dev/null
    row user21@d2.egress.test deliverable accepted_email null || return 1
    row user22@d3.egress.test deliverable accepted_email null || return 1
    p=$(peers 127.0.0.41)
    case $p in *127.0.0.1=*|-) it_fail "POST /v1/verify did not use the routes: $p"; return 1 ;; esac
}
t_case "POST /v1/verify leaves by the same bind: routes" t_api_bind

t_api_spread() {
    local p i
    fake_ctl 127.0.0.41 reset > /dev/null
    for i in 1 2 3 4 5 6 7 8; do
        row "user3$i@d$(( i % 6 + 1 )).egress.test" deliverable accepted_email null || return 1
    done
    p=$(peers 127.0.0.41)
    it_log "8 single verifications: peers $p"
    case " $p " in *" 127.0.0.2="[0-9]*" 127.0.0.3="[0-9]*" ") ;; *) it_fail "8 single verifications did not leave from both routes: $p"; return 1 ;; esac
}
t_case "POST /v1/verify spreads its sessions over the routes as the worker does" t_api_spread

t_preview_routes() {
    local p i id
    fake_ctl 127.0.0.41 reset > /dev/null
    for i in $(seq 1 300); do echo "user4$i@d$(( i % 6 + 1 )).egress.test"; done > "$IT_DIR/pv.csv"
    http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/pv.csv" -F preview=true
    expect_status 202 || return 1
    id=$(jq -r '.job_id // .id' <<< "$HTTP_BODY")
    it_job_wait "$id" awaiting_confirmation || return 1
    p=$(peers 127.0.0.41)
    it_log "the preview's SMTP sample: peers $p"
    [ "$p" != - ] && [ -n "$p" ] || { it_fail "the preview probed nothing: the case proves nothing"; return 1; }
    case $p in *127.0.0.1=*) it_fail "the preview's sample did not use the routes: $p"; return 1 ;; esac
}
t_case "an upload preview's SMTP sample leaves by the bind: routes too" t_preview_routes



t_pacing_per_route() {
    local p
    # mx-open says "421 4.7.28 ... rate limited" to the 4th RCPT from
    # 127.0.0.2 (and to anything from it in the next 600 s: a strike),
    # never to 127.0.0.3. One session at a time to the host and one
    # domain a session, so that sessions alternate routes and the first or
    # second one by 127.0.0.2 gets the 421 (3 RCPTs a domain, 4 for d1, and
    # the probe where the domain's answer is not cached): of the 7
    # sessions (6 domains, d1's again) at least 5 leave by 127.0.0.3
    fake_ctl 127.0.0.41 reset > /dev/null
    fake_set 127.0.0.41 rate_limit=3 rate_from=127.0.0.2 rate_window_ms=600000 rate_penalty_ms=600000
    conf_set worker_domain_concurrency 1
    conf_set worker_transactions_per_session 1
    conf_set pacing_penalty_ms 600000
    { for i in 1 2 3 4 5 6; do for k in 1 2 3; do echo "user7$i$k@d$i.egress.test"; done; done
      echo unknown7@d1.egress.test; } | job paced
    conf_unset worker_domain_concurrency
    conf_unset worker_transactions_per_session
    [ -n "$JOB_RESULTS" ] || return 1
    expect_eq "results" "1 invalid,18 valid" "$JOB_RESULTS" || return 1
    # one "slow down", and nobody came back by that route after it
    expect_eq "421s" 1 "$(fake_ctl 127.0.0.41 rate | tr ' ' '\n' | sed -n 's/^refused=//p')" || return 1
    expect_eq "strikes" 0 "$(fake_ctl 127.0.0.41 rate | tr ' ' '\n' | sed -n 's/^strikes=//p')" || return 1
    p=$(peers 127.0.0.41)
    [[ $p =~ 127\.0\.0\.3=([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 5 ] || { it_fail "peers: $p"; return 1; }
    # the pair of the route that was told to slow down is in its penalty;
    # the other route's is not (no row: it was never told)
    expect_eq "pairs" "mx-open.egress.test bind:127.0.0.2 1 1" \
        "$(it_sql "SELECT pair, egress, penalty_until > UTC_TIMESTAMP(3), strikes FROM pacing_pairs
                   WHERE pair = 'mx-open.egress.test' ORDER BY egress" | tr '\t\n' '  ' | sed 's/ $//')" || return 1
    svcadm mx show mx-open.egress.test > "$IT_DIR/mx.out" 2>&1
    grep -q '^pacing mx-open.egress.test from bind:127.0.0.2: .*strikes 1, penalty_until 2.*reason 421 4.7.28 ' "$IT_DIR/mx.out" ||
        { it_fail "svcadm mx show: $(tr '\n' '|' < "$IT_DIR/mx.out")"; return 1; }
    svcadm status > "$IT_DIR/status.out" 2>&1
    grep -q '^penalty: mx-open.egress.test from bind:127.0.0.2, [0-9]* s left: 421 4.7.28 ' "$IT_DIR/status.out" ||
        { it_fail "svcadm status: $(tr '\n' '|' < "$IT_DIR/status.out")"; return 1; }
    ! grep -q 'from bind:127.0.0.3' "$IT_DIR/status.out" || it_fail "the other route is listed: $(tr '\n' '|' < "$IT_DIR/status.out")"
}
t_case "pacing per route: a host that says slow down to one source address puts that route's pair in its penalty, the other route delivers every answer" t_pacing_per_route

t_api_paced() {
    local n p
    # the pair of 127.0.0.2 is still in its penalty: POST /v1/verify (two
    # responders, each going round the routes from its own start) asks by
    # 127.0.0.3 only; a connection from 127.0.0.2 would be a strike
    for i in 2 3 4 5; do
        row "user8$i@d$i.egress.test" deliverable accepted_email null || return 1
    done
    expect_eq "strikes" 0 "$(fake_ctl 127.0.0.41 rate | tr ' ' '\n' | sed -n 's/^strikes=//p')" || return 1
    # a paced pair on 127.0.0.3 (a row, as a shipped default or an earlier
    # slow-down makes): a single verification's RCPTs are counted in its
    # budget (rate_counts, the worker's permits)
    it_sql "INSERT INTO pacing_pairs (pair, egress, start_rate, base_rate, since, strikes, updated_at)
            VALUES ('mx-open.egress.test', 'bind:127.0.0.3', 600, 600, UTC_TIMESTAMP(3), 0, UTC_TIMESTAMP(3))"
    n=$(it_sql "SELECT COALESCE(SUM(n), 0) FROM rate_counts WHERE bucket LIKE 'pace:%'")
    row user87@d5.egress.test deliverable accepted_email null || return 1
    [ "$(it_sql "SELECT COALESCE(SUM(n), 0) FROM rate_counts WHERE bucket LIKE 'pace:%'")" -gt "$n" ] ||
        { it_fail "the single verification took no permit of the paced pair"; return 1; }
    # now pause 127.0.0.3's pair as a worker that was blocked there would:
    # no route may be used, the host is not contacted
    it_sql "UPDATE pacing_pairs SET paused_until = UTC_TIMESTAMP(3) + INTERVAL 1 HOUR, strikes = 1,
            reason = '554 5.7.1 Client host [127.0.0.3] blocked using zen.spamhaus.org'
            WHERE pair = 'mx-open.egress.test' AND egress = 'bind:127.0.0.3'"
    n=$(fake_ctl 127.0.0.41 stats | tr ' ' '\n' | sed -n 's/^sessions=//p')
    row user86@d6.egress.test unknown unknown smtp_blocked || return 1
    expect_eq "sessions" "$n" "$(fake_ctl 127.0.0.41 stats | tr ' ' '\n' | sed -n 's/^sessions=//p')" || return 1
    grep -Eq 'event=pacing_not_contacted pair=mx-open.egress.test host=mx-open.egress.test why="(421 4.7.28|554 5.7.1) ' "$IT_DIR/log/svc.log" ||
        { it_fail "no pacing_not_contacted line"; return 1; }
    # the paused answer is not cached: once a route is free again (the
    # pause of 127.0.0.3's pair lifted; 127.0.0.2's penalty runs on), it is
    # asked by that route
    it_sql "DELETE FROM pacing_pairs WHERE pair = 'mx-open.egress.test' AND egress = 'bind:127.0.0.3'"
    row user86@d6.egress.test deliverable accepted_email null
}
t_case "POST /v1/verify honours pacing: a route whose pair is in a penalty is not used; with every route paused the host is not contacted (unknown smtp_blocked, not cached)" t_api_paced

t_proxy_only_refuses_others() {
    local p
    row user23@p1.egress.test unknown unknown smtp_blocked || return 1
    p=$(peers 127.0.0.42)
    case $p in *127.0.0.45=*) it_fail "the proxy was used: $p"; return 1 ;; esac
}
t_case "the proxy-only host refuses any source but the proxy's (unknown smtp_blocked, not invalid)" t_proxy_only_refuses_others

t_socks_only() {
    local p
    egress "$SOCKS"
    fake_ctl 127.0.0.42 reset > /dev/null
    fake_set 127.0.0.42 allow_from=$PROXY_ADDR
    row user31@p1.egress.test deliverable accepted_email null || return 1
    row unknown@p2.egress.test undeliverable rejected_email mailbox_not_found || return 1
    { for i in 1 2 3; do echo "user3$i@p$i.egress.test"; done; echo unknown@p3.egress.test; } | job socks || return 1
    expect_eq "results" "1 invalid,3 valid" "$JOB_RESULTS" || return 1
    p=$(peers 127.0.0.42)
    [[ $p =~ ^127\.0\.0\.45=[0-9]+$ ]] || it_fail "peers of the proxy-only host: $p"
}
t_case "socks5 alone (username/password): right verdicts through the proxy from the API and the worker" t_socks_only

# proxy_connects: the connections danted made for its clients (its log,
# "log: connect")
proxy_connects() { grep -c 'pass([0-9]*): tcp/connect \[' "$IT_DIR/danted.log"; }

t_private_mx_not_asked_of_the_proxy() {
    local before rc=0
    # the proxy's log tells its connections (the case before went by it)
    before=$(proxy_connects)
    [ "$before" -ge 1 ] || { it_fail "danted logged no connection: $(tail -n 5 "$IT_DIR/danted.log" | tr '\n' '|')"; return 1; }
    # mx-proxyonly is at a loopback address: with allow_private_mx = no
    # the engine refuses it before it asks the proxy to connect there
    sed -i 's/^allow_private_mx = yes$/allow_private_mx = no/' "$SVC_CONF"
    egress "$SOCKS"
    fake_ctl 127.0.0.42 reset > /dev/null
    fake_set 127.0.0.42 allow_from=$PROXY_ADDR
    t_private_checks() {
        row user51@p1.egress.test unknown unknown smtp_unreachable || return 1
        row unknown51@p2.egress.test unknown unknown smtp_unreachable || return 1
        { echo user52@p1.egress.test; echo user53@p3.egress.test; echo unknown52@p2.egress.test; } | job private || return 1
        expect_eq "results" "3 unknown" "$JOB_RESULTS" || return 1
        expect_eq "sub_status" "smtp_unreachable 3" "$(it_sql "SELECT sub_status, COUNT(*) FROM job_emails
            WHERE job_id = '$(jq -r '.job_id // .id' "$IT_DIR/private.created")' GROUP BY sub_status" | tr '\t' ' ')" || return 1
        expect_eq "connections the proxy made" "$before" "$(proxy_connects)" || return 1
        expect_eq "peers of mx-proxyonly" "-" "$(peers 127.0.0.42)" || return 1
        grep -q "event=smtp_private_mx_refused .*host=mx-proxyonly.egress.test addr=127.0.0.42" "$IT_DIR/log/svc.log" ||
            it_fail "no smtp_private_mx_refused line for mx-proxyonly"
    }
    t_private_checks || rc=1
    sed -i 's/^allow_private_mx = no$/allow_private_mx = yes/' "$SVC_CONF"
    egress "$SOCKS"
    return $rc
}
t_case "a SOCKS5 route with allow_private_mx = no: a private MX address gives unknown smtp_unreachable (never invalid), and the proxy is never asked to connect to it" t_private_mx_not_asked_of_the_proxy

t_proxy_down() {
    egress "socks5://127.0.0.1:$DEAD_PORT"
    fake_ctl 127.0.0.41 reset > /dev/null
    row user41@d4.egress.test unknown unknown smtp_unreachable || return 1
    row unknown@d5.egress.test unknown unknown smtp_unreachable || return 1
    grep -q "event=egress_route_failed .*route=socks5://127.0.0.1:$DEAD_PORT .*why=\"cannot connect to the proxy\"" \
        "$IT_DIR/log/svc.log" || { it_fail "no egress_route_failed line"; return 1; }
    expect_eq "peers" "-" "$(peers 127.0.0.41)"
}
t_case "a dead proxy: unknown smtp_unreachable (never invalid), the failure logged" t_proxy_down

t_next_route() {
    local n p
    egress "socks5://127.0.0.1:$DEAD_PORT bind:127.0.0.4"
    fake_ctl 127.0.0.41 reset > /dev/null
    n=$(grep -c "event=egress_route_failed .*route=socks5://127.0.0.1:$DEAD_PORT " "$IT_DIR/log/svc.log")
    # two responders, each going round from its own start: of four
    # verifications one responder makes two, and one of those starts with
    # the dead proxy
    for i in 1 2 3 4; do
        row "user5$i@d$i.egress.test" deliverable accepted_email null || return 1
    done
    [ "$(grep -c "event=egress_route_failed .*route=socks5://127.0.0.1:$DEAD_PORT " "$IT_DIR/log/svc.log")" -gt "$n" ] ||
        { it_fail "no session started on the dead proxy"; return 1; }
    { for i in 1 2 3 4 5 6; do echo "user6$i@d$i.egress.test"; done; } | job next || return 1
    expect_eq "results" "6 valid" "$JOB_RESULTS" || return 1
    p=$(peers 127.0.0.41)
    [[ $p =~ ^127\.0\.0\.4=[0-9]+$ ]] || it_fail "peers: $p"
}
t_case "a dead proxy with another route: the next route is used and the verdicts are right" t_next_route


# worker_lines PATTERN: svc-worker's log lines that match
worker_lines() { grep "svc-worker\[[0-9]*\] .*$1" "$IT_DIR/log/svc.log" | wc -l; }

t_dead_proxy_memory() {
    local n
    # the routes of the case before: the dead proxy (a stopped danted),
    # then bind:127.0.0.4; one domain a session, so that sessions go
    # round the routes
    conf_set worker_transactions_per_session 1
    it_sql "DELETE FROM egress_down"
    { for i in 1 2 3 4 5 6; do echo "user9$i@d$i.egress.test"; done; } | job down1
    [ "$JOB_RESULTS" = "6 valid" ] || { conf_unset worker_transactions_per_session; it_fail "results: $JOB_RESULTS"; return 1; }
    # marked down, shared through MariaDB, with its back-off
    expect_eq "mark" "socks5://127.0.0.1:$DEAD_PORT 1 1" "$(it_sql "SELECT route, failures >= 1,
        down_until > UTC_TIMESTAMP(3) + INTERVAL 20 SECOND FROM egress_down" | tr '\t' ' ')" || return 1
    [ "$(worker_lines "event=egress_down route=socks5://127.0.0.1:$DEAD_PORT why=\"cannot connect to the proxy\"")" -ge 1 ] ||
        { it_fail "no egress_down line"; return 1; }
    # a later worker run reads the mark: no session tries the dead proxy
    n=$(worker_lines "event=egress_route_failed .*route=socks5://127.0.0.1:$DEAD_PORT ")
    { for i in 1 2 3 4 5 6; do echo "user10$i@d$i.egress.test"; done; } | job down2
    conf_unset worker_transactions_per_session
    expect_eq "results" "6 valid" "$JOB_RESULTS" || return 1
    expect_eq "sessions that tried the dead proxy" "$n" \
        "$(worker_lines "event=egress_route_failed .*route=socks5://127.0.0.1:$DEAD_PORT ")" || return 1
    # the health check: a mark whose back-off passed lets the next session
    # try the route; through a working proxy the mark is cleared
    egress "$SOCKS bind:127.0.0.4"
    it_sql "INSERT INTO egress_down (route, down_until, failures, reason, updated_at) VALUES
            ('socks5://$PROXY_USER@127.0.0.1:$PROXY_PORT', UTC_TIMESTAMP(3) - INTERVAL 1 SECOND, 2, 'test', UTC_TIMESTAMP(3))"
    conf_set worker_transactions_per_session 1
    { for i in 1 2 3 4 5 6; do echo "user11$i@d$i.egress.test"; done; } | job up
    conf_unset worker_transactions_per_session
    expect_eq "results" "6 valid" "$JOB_RESULTS" || return 1
    expect_eq "marks left" 0 "$(it_sql "SELECT COUNT(*) FROM egress_down WHERE route LIKE 'socks5://$PROXY_USER@%'")" || return 1
    [ "$(worker_lines "event=egress_up route=socks5://$PROXY_USER@127.0.0.1:$PROXY_PORT")" -ge 1 ] || it_fail "no egress_up line"
}
t_case "dead-proxy memory: a proxy that fails is marked down with a back-off, later worker runs do not try it, a health check through it clears the mark" t_dead_proxy_memory

t_wrong_password() {
    egress "socks5://$PROXY_USER:wrong$PROXY_PASS@127.0.0.1:$PROXY_PORT"
    row user71@p1.egress.test unknown unknown smtp_unreachable || return 1
    grep -q "event=egress_route_failed .*route=socks5://$PROXY_USER@127.0.0.1:$PROXY_PORT .*why=\"proxy refused the username/password\"" \
        "$IT_DIR/log/svc.log" || { it_fail "no clear log line for the refused password"; return 1; }
    ! grep -q "$PROXY_PASS" "$IT_DIR/log/svc.log" || it_fail "the password is in the log"
}
t_case "a wrong proxy password: unknown, a clear log line, the password never logged" t_wrong_password

t_proxy_by_name() {
    local p n
    # the proxy named by a host name of the test zone (127.0.0.1): looked
    # up through the engine's DNS when a session starts
    egress "socks5://$PROXY_USER:$PROXY_PASS@proxy.egress.test:$PROXY_PORT"
    fake_ctl 127.0.0.42 reset > /dev/null
    fake_set 127.0.0.42 allow_from=$PROXY_ADDR
    row user72@p2.egress.test deliverable accepted_email null || return 1
    p=$(peers 127.0.0.42)
    [[ $p =~ ^127\.0\.0\.45=[0-9]+$ ]] || { it_fail "peers of the proxy-only host: $p"; return 1; }
    grep -q "event=egress_proxy_resolved route=socks5://$PROXY_USER@proxy.egress.test:$PROXY_PORT host=proxy.egress.test addr=127.0.0.1" \
        "$IT_DIR/log/svc.log" || { it_fail "no egress_proxy_resolved line"; return 1; }
    # a name that does not resolve: that route fails (logged), the next
    # one is used (svc-worker reads svc.conf at each run)
    sed -i "s|^smtp_egress = .*|smtp_egress = socks5://$PROXY_USER:$PROXY_PASS@noproxy.egress.test:$PROXY_PORT bind:127.0.0.4|" "$SVC_CONF"
    fake_ctl 127.0.0.41 reset > /dev/null
    conf_set worker_transactions_per_session 1
    { for i in 1 2 3; do echo "user74$i@d$i.egress.test"; done; } | job noproxy
    conf_unset worker_transactions_per_session
    expect_eq "results" "3 valid" "$JOB_RESULTS" || return 1
    p=$(peers 127.0.0.41)
    [[ $p =~ ^127\.0\.0\.4=[0-9]+$ ]] || { it_fail "peers: $p"; return 1; }
    [ "$(worker_lines "event=egress_route_failed .*route=socks5://$PROXY_USER@noproxy.egress.test:$PROXY_PORT .*why=\"the proxy's host name does not resolve\"")" -ge 1 ] ||
        { it_fail "no egress_route_failed line for the name"; return 1; }
    [ "$(worker_lines "event=egress_proxy_unresolved route=socks5://$PROXY_USER@noproxy.egress.test:$PROXY_PORT host=noproxy.egress.test status=nxdomain")" -ge 1 ] ||
        { it_fail "no egress_proxy_unresolved line"; return 1; }
    # alone: unknown / smtp_unreachable, never invalid
    sed -i "s|^smtp_egress = .*|smtp_egress = socks5://$PROXY_USER:$PROXY_PASS@noproxy.egress.test:$PROXY_PORT|" "$SVC_CONF"
    it_sql "DELETE FROM egress_down"
    { echo user7591@d6.egress.test; echo unknown7591@d6.egress.test; } | job noproxy2
    expect_eq "results" "2 unknown" "$JOB_RESULTS" || return 1
    expect_eq "sub_status" "smtp_unreachable" "$(it_sql "SELECT GROUP_CONCAT(DISTINCT sub_status) FROM job_emails
        WHERE email IN ('user7591@d6.egress.test', 'unknown7591@d6.egress.test')")"
}
t_case "a proxy by host name: looked up through the engine's DNS when used; a name that does not resolve fails its route (logged), the next route is used, alone it gives unknown smtp_unreachable" t_proxy_by_name

# job_created NAME < ADDRESSES: a bulk job through the API; its id in JOB_ID
job_created() {
    local code
    jq -R . | jq -sc '{emails: .}' > "$IT_DIR/$1.json"
    code=$(curl -s -o "$IT_DIR/$1.created" -w '%{http_code}' -H "Authorization: Bearer $API_KEY" \
        -H 'Content-Type: application/json' --data-binary "@$IT_DIR/$1.json" "$BASE_URL/v1/verify/bulk")
    case $code in 201|202) ;; *) it_fail "creating $1: $code $(cat "$IT_DIR/$1.created")"; return 1 ;; esac
    JOB_ID=$(jq -r '.job_id // .id' "$IT_DIR/$1.created")
}
job_done() { [ "$(it_sql "SELECT status FROM jobs WHERE id = '$1'")" = completed ]; }

t_proxy_name_refreshed() {
    local fwd hold=$IT_DIR/proxy-dns.hold wpid a b p rc=0
    # svc-worker's DNS through a forwarder that answers the first look-up
    # of proxy-ttl1.egress.test (TTL 1 s; its A and AAAA queries) and holds
    # every later query while the hold file exists: a DNS server gone
    # silent for the proxy's name
    : > "$hold"
    python3 "$top_srcdir/tests/dns/slow_dns.py" --ready "$IT_DIR/proxy-dns" --upstream "$DNS" \
        --pattern '^proxy-ttl1\.egress\.test$' --delay-ms 0 --hold-after 2 --hold-file "$hold" \
        > "$IT_DIR/proxy-dns.log" 2>&1 &
    FAKE_PIDS+=($!)
    it_wait_until 10 "for the DNS forwarder" test -s "$IT_DIR/proxy-dns" || return 1
    fwd=$(cat "$IT_DIR/proxy-dns")
    cp "$SVC_CONF" "$IT_DIR/svc.conf.before-refresh"
    sed -i "s|^smtp_egress = .*|smtp_egress = socks5://$PROXY_USER:$PROXY_PASS@proxy-ttl1.egress.test:$PROXY_PORT|" "$SVC_CONF"
    # a held look-up would hold its caller 2 x 60 s
    conf_set dns_resolver "$fwd"
    conf_set dns_timeout_ms 60000
    conf_set worker_poll_interval 1
    it_sql "DELETE FROM egress_down"
    fake_ctl 127.0.0.42 reset > /dev/null
    fake_set 127.0.0.42 allow_from=$PROXY_ADDR
    "$top_builddir/src/worker/svc-worker" -c "$SVC_CONF" >> "$IT_DIR/log/worker-stderr.log" 2>&1 &
    wpid=$!
    { echo user7601@p1.egress.test; echo unknown7601@p1.egress.test; } | job_created refresh1 || rc=1
    a=$JOB_ID
    [ $rc = 0 ] && { it_wait_until 60 "for the first job to complete" job_done "$a" || rc=1; }
    # the name is looked up again with no session asking for it, and that
    # look-up is held
    [ $rc = 0 ] && { it_wait_until 30 "for a look-up of proxy-ttl1.egress.test after its TTL" \
        grep -q "proxy-ttl1.egress.test delay_ms=0 held" "$IT_DIR/proxy-dns.log" || rc=1; }
    # while it is held, a second job goes through the proxy (its address
    # as last found) and completes
    [ $rc = 0 ] && { { echo user7602@p2.egress.test; echo unknown7602@p2.egress.test; } | job_created refresh2 || rc=1; }
    b=$JOB_ID
    [ $rc = 0 ] && { it_wait_until 60 "for the second job to complete while the look-up is held" job_done "$b" || rc=1; }
    [ $rc = 0 ] && { grep -q "released" "$IT_DIR/proxy-dns.log" && { it_fail "the held look-up ended before the job: the case proves nothing"; rc=1; }; }
    [ $rc = 0 ] && expect_eq "verdicts of both jobs" "user7601@p1.egress.test valid|unknown7601@p1.egress.test invalid|user7602@p2.egress.test valid|unknown7602@p2.egress.test invalid" \
        "$(it_sql "SELECT email, classification FROM job_emails WHERE job_id IN ('$a', '$b') ORDER BY email LIKE '%p2%', seq" | tr '\t' ' ' | paste -sd'|')" || rc=1
    [ $rc = 0 ] && { p=$(peers 127.0.0.42); [[ $p =~ ^127\.0\.0\.45=[0-9]+$ ]] || { it_fail "peers of the proxy-only host: $p"; rc=1; }; }
    # the look-up let go, then the worker stops at once
    rm -f "$hold"
    kill -TERM "$wpid" 2>/dev/null
    wait "$wpid" 2>/dev/null
    cp "$IT_DIR/svc.conf.before-refresh" "$SVC_CONF"
    return $rc
}
t_case "a proxy's host name is looked up again by svc-worker when its TTL ends, off the SMTP loop: while that look-up hangs, jobs go on through the proxy's last address" t_proxy_name_refreshed

t_port25_blocked() {
    local out rc n
    out=$(svcadm status) || true
    case $out in *"port25: 0 direct SMTP sessions in the last hour, too few to tell"*) ;; *) it_fail "status before: $out"; return 1 ;; esac
    egress direct
    for i in $(seq 1 25); do echo "user8$i@r$i.egress.test"; done | job closed || return 1
    expect_eq "results" "25 unknown" "$JOB_RESULTS" || return 1
    expect_eq "sub_status" "smtp_unreachable" "$(it_sql "SELECT DISTINCT sub_status FROM job_emails WHERE email LIKE '%@r%.egress.test'")" || return 1
    set +e
    out=$(svcadm status); rc=$?
    set -e
    expect_eq "svcadm status exit" 1 "$rc" || return 1
    # every session (the worker tries an unreachable domain again before
    # it gives up) of the 25 domains could not connect
    [[ $out =~ "problem: port25: outbound port 25 looks blocked: "([0-9]+)" of "([0-9]+)" direct SMTP sessions in the last hour could not connect (refused); their addresses end unknown/smtp_unreachable: a route is needed (smtp_egress = bind:ADDRESS or socks5://" ]] &&
        [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[1]}" -ge 25 ] ||
        { it_fail "svcadm status: $out"; return 1; }
    n=${BASH_REMATCH[1]}
    expect_eq "status --json" "$n $n 0 0" "$(svcadm status --json | jq -r '"\(.port25.direct_sessions_last_hour) \(.port25.refused) \(.port25.connected) \(.port25.timed_out)"')" || return 1
    set +e
    out=$(svcadm doctor --skip ptr,fcrdns,port25,dnsbl); rc=$?
    set -e
    expect_eq "svcadm doctor exit" 1 "$rc" || return 1
    case $out in *"port25_seen: fail: outbound port 25 looks blocked: $n of $n direct SMTP sessions in the last hour could not connect (refused)"*) ;;
        *) it_fail "svcadm doctor: $out"; return 1 ;; esac
}
t_case "port 25 closed: direct connects refused for most domains give unknown smtp_unreachable, and svcadm status and doctor say port 25 looks blocked" t_port25_blocked

t_block_rescheduled() {
    local p
    # mx-block answers every RCPT from 127.0.0.2 with "554 5.7.1 ... Client
    # host [127.0.0.2] blocked using zen.spamhaus.org" (a block naming our
    # client, told at RCPT): that route's pair is paused, and the addresses
    # of the blocked transaction go again by 127.0.0.3 and get their real
    # verdicts; none ends smtp_blocked. The blocked transaction was its
    # domain's first, with the catch-all probe: a probe answered with a
    # block says nothing of the domain, so it is asked again and the
    # domains are all found catch-all. One domain and one transaction a
    # session, so that sessions alternate routes.
    egress "bind:127.0.0.2 bind:127.0.0.3"
    conf_set worker_domain_concurrency 1
    conf_set worker_transactions_per_session 1
    { for i in 1 2 3 4; do for k in 1 2; do echo "user9$i$k@b$i.egress.test"; done; done
      echo unknown9@b1.egress.test; } | job rescheduled
    conf_unset worker_domain_concurrency
    conf_unset worker_transactions_per_session
    [ -n "$JOB_RESULTS" ] || return 1
    expect_eq "results" "1 invalid,8 risky" "$JOB_RESULTS" || return 1
    p=$(peers 127.0.0.47)
    [[ $p =~ 127\.0\.0\.2= ]] || { it_fail "no session came from 127.0.0.2 (the block was not met): $p"; return 1; }
    expect_eq "paused pair" "bind:127.0.0.2 1" \
        "$(it_sql "SELECT egress, paused_until > UTC_TIMESTAMP(3) FROM pacing_pairs
                   WHERE pair = 'mx-block.egress.test' AND paused_until IS NOT NULL" | tr '\t' ' ')" || return 1
}
t_case "a host that blocks one source address at RCPT: that route's pair is paused, and the blocked transaction's addresses and catch-all probe are asked again by the other route (none ends smtp_blocked, every domain found catch-all: risky)" t_block_rescheduled

t_pacing_pairs_purged() {
    # three pairs: unused for 40 days (deleted), unused as long but paused
    # for another hour (kept), written an hour ago (kept)
    it_sql "INSERT INTO pacing_pairs (pair, egress, start_rate, base_rate, since, paused_until, strikes, updated_at) VALUES
        ('old.purge.test', 'direct', 600, 600, UTC_TIMESTAMP(3) - INTERVAL 41 DAY, NULL, 0, UTC_TIMESTAMP(3) - INTERVAL 40 DAY),
        ('paused.purge.test', 'direct', 600, 600, UTC_TIMESTAMP(3) - INTERVAL 41 DAY, UTC_TIMESTAMP(3) + INTERVAL 1 HOUR, 1, UTC_TIMESTAMP(3) - INTERVAL 40 DAY),
        ('recent.purge.test', 'direct', 600, 600, UTC_TIMESTAMP(3) - INTERVAL 2 HOUR, NULL, 0, UTC_TIMESTAMP(3) - INTERVAL 1 HOUR)"
    it_worker_once || { it_fail "svc-worker --once failed"; return 1; }
    expect_eq "pairs left" "paused.purge.test recent.purge.test" \
        "$(it_sql "SELECT pair FROM pacing_pairs WHERE pair LIKE '%.purge.test' ORDER BY pair" | tr '\n' ' ' | sed 's/ $//')" || return 1
    [ "$(worker_lines "event=housekeeping .* pacing_pairs_purged=[1-9]")" -ge 1 ] || it_fail "no pacing_pairs_purged count"
}
t_case "housekeeping deletes pacing pairs unused for 30 days, not a paused one nor a recent one" t_pacing_pairs_purged

t_done
