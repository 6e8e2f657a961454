#!/bin/bash
# test_doctor.sh: "svcadm doctor" on loopback. unbound (tests/dns/server.sh)
# serves this test's zones: 127.in-addr.arpa (PTRs of 127.0.0.41-45),
# doctor.test (the EHLO names' addresses), dnsbl.test (a blocklist listing
# 127.0.0.42) and refusebl.test (a blocklist refusing every query with
# 127.255.255.254, as Spamhaus answers public resolvers); the fake SMTP
# server (tests/smtp/fake_smtp.py) greets on 127.0.0.44 and stays silent on
# 127.0.0.45. Each check passes and fails (or cannot tell) in turn, is
# skipped by the setting and by --skip, and the exit status is 0 only when
# every check that ran passed.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"

SVCADM=$top_builddir/src/admin/svcadm
[ -x "$SVCADM" ] || it_skip "$SVCADM is not built"

mkdir -p "$IT_DIR/zones"
zone() { printf '$ORIGIN %s.\n$TTL 60\n@ IN SOA ns.svc.test. hostmaster.svc.test. 1 3600 600 86400 60\n@ IN NS ns.svc.test.\n' "$1"; cat; }
zone 127.in-addr.arpa > "$IT_DIR/zones/127.in-addr.arpa.zone" <<'EOF'
41.0.0 IN PTR verifier.doctor.test.
42.0.0 IN PTR other.doctor.test.
44.0.0 IN PTR nowhere.doctor.test.
45.0.0 IN PTR elsewhere.doctor.test.
EOF
zone doctor.test > "$IT_DIR/zones/doctor.test.zone" <<'EOF'
verifier IN A 127.0.0.41
other IN A 127.0.0.42
elsewhere IN A 127.0.0.99
elsewhere IN A 127.0.0.98
smtp IN A 127.0.0.44
EOF
zone dnsbl.test > "$IT_DIR/zones/dnsbl.test.zone" <<'EOF'
42.0.0.127 IN A 127.0.0.2
2.0.0.127 IN A 127.0.0.2
EOF
zone refusebl.test > "$IT_DIR/zones/refusebl.test.zone" <<'EOF'
* IN A 127.255.255.254
EOF
mail_env_dns "$IT_DIR"/zones/*.zone
SMTP_PORT=$(stack_free_port)
fake 127.0.0.44
fake 127.0.0.45 banner=silent

# The settings every case starts from: everything passes with them.
BASE="dns_resolver = $DNS
dns_timeout_ms = 300
smtp_helo_name = verifier.doctor.test
smtp_connect_timeout_ms = 1000
smtp_reply_timeout_ms = 1000
doctor_address = 127.0.0.41
doctor_port25_target = 127.0.0.44:$SMTP_PORT
doctor_dnsbl_zones = dnsbl.test"

# doctor NAME [name=value...] -- [svcadm doctor options...]: writes
# IT_DIR/NAME.conf (BASE with the values replaced), runs svcadm doctor on
# it; its output in OUT (and NAME.out), its exit status in RC
N=0
doctor() {
    local name=$1 kv conf
    shift
    conf=$BASE
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        kv=$1; shift
        if printf '%s\n' "$conf" | grep -q "^${kv%%=*} = "; then
            conf=$(printf '%s\n' "$conf" | sed "s|^${kv%%=*} = .*|${kv%%=*} = ${kv#*=}|")
        else
            conf="$conf
${kv%%=*} = ${kv#*=}"
        fi
    done
    [ "${1:-}" = -- ] && shift
    printf '%s\n' "$conf" > "$IT_DIR/$name.conf"
    set +e
    OUT=$("$SVCADM" -c "$IT_DIR/$name.conf" doctor "$@" 2> "$IT_DIR/$name.err.log")
    RC=$?
    set -e
    printf '%s\n' "$OUT" > "$IT_DIR/$name.out"
}
# line CHECK EXPECTED: the output's line for CHECK is EXPECTED
line() {
    local got
    got=$(printf '%s\n' "$OUT" | grep "^$1: " || true)
    [ "$got" = "$1: $2" ] && return 0
    it_fail "expected \"$1: $2\", got \"$got\"; output: $(printf '%s' "$OUT" | tr '\n' '|')"
}
rc() { expect_eq "exit status" "$1" "$RC"; }

t_all_pass() {
    doctor pass
    rc 0
    line address "127.0.0.41 (setting)"
    line ehlo "verifier.doctor.test (smtp_helo_name)"
    line ptr "ok: 127.0.0.41 has PTR verifier.doctor.test"
    line fcrdns "ok: verifier.doctor.test resolves to 127.0.0.41"
    case $OUT in *"port25: ok: 127.0.0.44 port $SMTP_PORT greets 220 "*) ;; *) it_fail "port25 not ok: $OUT" ;; esac
    line dnsbl "ok: 127.0.0.41 is listed on none of 1"
    line doctor ok
    # the fake server saw a connection that said QUIT, nothing else
    expect_eq "commands the probe sent" "commands=QUIT" "$(fake_ctl 127.0.0.44 log | grep -o 'commands=[^ ]*')"
}
t_case "a host with matching PTR and EHLO name, port 25 open and no listing: every check ok, exit 0" t_all_pass

t_json() {
    doctor json -- --json
    rc 0
    expect_eq "ok" true "$(printf '%s' "$OUT" | jq -r .ok)"
    expect_eq "results" "ptr=ok fcrdns=ok port25=ok dnsbl=ok port25_seen=skipped db_cluster=skipped" \
        "$(printf '%s' "$OUT" | jq -r '[.checks[] | "\(.check)=\(.result)"] | join(" ")')"
    expect_eq "address" "127.0.0.41 setting" "$(printf '%s' "$OUT" | jq -r '"\(.address) \(.address_from)"')"
    doctor json-fail -- --json --address 127.0.0.43
    rc 1
    expect_eq "ok" false "$(printf '%s' "$OUT" | jq -r .ok)"
    expect_eq "ptr" fail "$(printf '%s' "$OUT" | jq -r '.checks[] | select(.check == "ptr") | .result')"
}
t_case "--json gives ok, the address and each check's result" t_json

t_ptr_fail() {
    doctor ptr-other -- --address 127.0.0.42
    rc 1
    line address "127.0.0.42 (option)"
    line ptr "fail: 127.0.0.42 has PTR other.doctor.test, not smtp_helo_name verifier.doctor.test"
    line fcrdns "fail: verifier.doctor.test resolves to 127.0.0.41, not 127.0.0.42"
    line doctor "problems found"
    doctor ptr-none doctor_address=127.0.0.43 doctor_skip=fcrdns
    rc 1
    line ptr "fail: 127.0.0.43 has no PTR record (ask whoever gave you the address to set it to verifier.doctor.test)"
    line fcrdns skipped
    line dnsbl "ok: 127.0.0.43 is listed on none of 1"
    # an EHLO name in capitals with a final dot is the same name
    doctor ptr-case smtp_helo_name=Verifier.Doctor.TEST.
    rc 0
    line ptr "ok: 127.0.0.41 has PTR verifier.doctor.test"
}
t_case "ptr: a PTR naming another host and no PTR at all fail (exit 1); case and a final dot do not matter" t_ptr_fail

t_fcrdns_fail() {
    doctor fcrdns-nx doctor_address=127.0.0.44 smtp_helo_name=nowhere.doctor.test
    rc 1
    line ptr "ok: 127.0.0.44 has PTR nowhere.doctor.test"
    line fcrdns "fail: nowhere.doctor.test does not exist (NXDOMAIN): give it an address record for 127.0.0.44"
    doctor fcrdns-other doctor_address=127.0.0.45 smtp_helo_name=elsewhere.doctor.test
    rc 1
    line ptr "ok: 127.0.0.45 has PTR elsewhere.doctor.test"
    line fcrdns "fail: elsewhere.doctor.test resolves to 127.0.0.98, 127.0.0.99, not 127.0.0.45"
    doctor fcrdns-bad "smtp_helo_name=not a name" -- --skip ptr
    rc 1
    line fcrdns 'fail: smtp_helo_name "not a name" is not a host name'
}
t_case "fcrdns: an EHLO name that does not exist, or resolves elsewhere, or is no host name fails" t_fcrdns_fail

t_dns_error() {
    doctor dns-down "dns_resolver=127.0.0.1:$(stack_free_port)" -- --skip port25
    rc 1
    line ptr "error: the PTR of 127.0.0.41 could not be looked up (error)"
    line fcrdns "error: the addresses of verifier.doctor.test could not be looked up (error)"
    line dnsbl "error: 127.0.0.41 is listed on none that answered; not told: dnsbl.test: error"
}
t_case "a resolver that does not answer: ptr, fcrdns and dnsbl cannot tell (error), exit 1" t_dns_error

t_port25() {
    local t0 t1
    doctor port25-name "doctor_port25_target=smtp.doctor.test:$SMTP_PORT"
    rc 0
    case $OUT in *"port25: ok: 127.0.0.44 port $SMTP_PORT greets 220 "*) ;; *) it_fail "a target by name: $OUT" ;; esac
    doctor port25-refused "doctor_port25_target=127.0.0.46:$SMTP_PORT"
    rc 1
    line port25 "fail: 127.0.0.46 port $SMTP_PORT: Connection refused"
    t0=$(date +%s%N)
    doctor port25-silent "doctor_port25_target=127.0.0.45:$SMTP_PORT"
    t1=$(date +%s%N)
    rc 1
    line port25 "fail: 127.0.0.45 port $SMTP_PORT: connected, but no greeting within smtp_reply_timeout_ms"
    [ $(( (t1 - t0) / 1000000 )) -lt 5000 ] || it_fail "a silent server held doctor $(( (t1 - t0) / 1000000 )) ms"
    doctor port25-nx "doctor_port25_target=nosuch.doctor.test"
    rc 1
    line port25 "error: nosuch.doctor.test has no address (nxdomain)"
    doctor port25-bad "doctor_port25_target=127.0.0.44:99999"
    rc 1
    grep -q "doctor_port25_target: not host\[:port\]" "$IT_DIR/port25-bad.err.log" || it_fail "no message for a bad port"
}
t_case "port25: a target by name greets; refused, silent (within smtp_reply_timeout_ms) and unknown targets fail" t_port25

t_dnsbl() {
    doctor dnsbl-listed doctor_address=127.0.0.42 "doctor_dnsbl_zones=dnsbl.test refusebl.test" -- --skip ptr,fcrdns
    rc 1
    line dnsbl "fail: 127.0.0.42 is listed on dnsbl.test (127.0.0.2); not told: refusebl.test: refused the query with 127.255.255.254"
    doctor dnsbl-refused "doctor_dnsbl_zones=refusebl.test,dnsbl.test"
    rc 1
    line dnsbl "error: 127.0.0.41 is listed on none that answered; not told: refusebl.test: refused the query with 127.255.255.254"
    doctor dnsbl-two "doctor_dnsbl_zones=dnsbl.test, other.test"
    rc 0
    line dnsbl "ok: 127.0.0.41 is listed on none of 2"
    doctor dnsbl-none "doctor_dnsbl_zones="
    rc 0
    line dnsbl "skipped: doctor_dnsbl_zones is empty"
}
t_case "dnsbl: a listed address fails, a list refusing the query cannot tell, lists without the address pass" t_dnsbl

t_dnsbl_routes() {
    # every smtp_egress route: direct (doctor_address), two bind: addresses
    # (dnsbl.test lists 127.0.0.2), a proxy whose outgoing address is named
    # (#egress=) and one whose is not (skipped, with why)
    doctor dnsbl-routes "smtp_egress=direct bind:127.0.0.2 bind:127.0.0.3 socks5://u:pw@127.0.0.1:1080#egress=127.0.0.43 socks5://127.0.0.1:1081" \
        -- --skip ptr,fcrdns,port25
    rc 1
    line dnsbl "fail: 1 of 5 routes listed: bind:127.0.0.2 (127.0.0.2) on dnsbl.test (127.0.0.2)"
    line "dnsbl route direct" "ok: 127.0.0.41 is listed on none of 1"
    line "dnsbl route bind:127.0.0.2" "fail: 127.0.0.2 is listed on dnsbl.test (127.0.0.2)"
    line "dnsbl route bind:127.0.0.3" "ok: 127.0.0.3 is listed on none of 1"
    line "dnsbl route socks5://u@127.0.0.1:1080" "ok: 127.0.0.43 is listed on none of 1"
    line "dnsbl route socks5://127.0.0.1:1081" "skipped: the address the proxy connects from is not known to svc: name it in smtp_egress (socks5://127.0.0.1:1081#egress=ADDRESS)"
    expect_eq "json" "fail 5 fail bind:127.0.0.2" "$("$SVCADM" -c "$IT_DIR/dnsbl-routes.conf" doctor --json --skip ptr,fcrdns,port25 |
        jq -r '"\(.checks[] | select(.check == "dnsbl") | .result) \(.dnsbl_routes | length) \(.dnsbl_routes[1].result) \(.dnsbl_routes[1].route)"')"
    case $OUT in *pw*) it_fail "the proxy password was printed: $OUT" ;; esac
    doctor dnsbl-routes-ok "smtp_egress=bind:127.0.0.3 socks5://127.0.0.1:1081" -- --skip ptr,fcrdns,port25
    rc 0
    line dnsbl "ok: 1 of 2 routes listed nowhere, 1 skipped"
}
t_case "dnsbl per egress route: each bind: address and direct are checked, a proxy's named #egress= address too, an unnamed one is skipped saying why; a listed route fails naming route and zone" t_dnsbl_routes

t_skip() {
    # everything would fail: no PTR, a silent port, a refusing list
    doctor skip-all doctor_address=127.0.0.43 "doctor_port25_target=127.0.0.45:$SMTP_PORT" \
        doctor_dnsbl_zones=refusebl.test "doctor_skip=ptr fcrdns" -- --skip port25,dnsbl
    rc 0
    line ptr skipped
    line fcrdns skipped
    line port25 skipped
    line dnsbl skipped
    line doctor ok
    doctor skip-bad -- --skip ptr,smtp
    rc 1
    grep -q 'no check "smtp" to skip' "$IT_DIR/skip-bad.err.log" || it_fail "no message for an unknown check: $(cat "$IT_DIR/skip-bad.err.log")"
    doctor skip-badsetting doctor_skip=everything
    rc 1
}
t_case "every check is skipped by doctor_skip or --skip (exit 0); an unknown name is refused" t_skip

t_route() {
    doctor route doctor_address=
    rc 1
    line address "127.0.0.1 (route)"
    line ptr "error: the route's local address 127.0.0.1 is not a public one (behind NAT?): set doctor_address to the address mail servers see"
    line dnsbl "error: the route's local address 127.0.0.1 is not a public one (behind NAT?): set doctor_address to the address mail servers see"
    case $OUT in *"port25: ok:"*) ;; *) it_fail "port25 not ok: $OUT" ;; esac
    doctor bad-address doctor_address=verifier.doctor.test
    rc 1
    grep -q "doctor_address: not an IP address" "$IT_DIR/bad-address.err.log" || it_fail "no message for a bad doctor_address"
}
t_case "without doctor_address the route's local address is used, and a private one is not judged" t_route

t_no_sanitizer() { local r; r=$(it_sanitizer_reports); [ -z "$r" ] || it_fail "$r"; }
t_case "no sanitizer reports from svcadm" t_no_sanitizer

t_done
