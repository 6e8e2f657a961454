# mail_env.sh: the mail world of the verification tests and benchmarks,
# sourced after lib.sh: unbound serving the test zones (tests/dns/server.sh),
# the private Postfix with postgrey (tests/smtp/mta.sh), fake SMTP servers
# (tests/smtp/fake_smtp.py) on chosen loopback addresses, a lists folder
# with the test's local additions, and the svc.conf lines pointing at them.
#
#   mail_env_start [ZONEFILE...]      DNS (with those zones too, as
#                                     mail_env_dns) + MTA; sets DNS, SMTP_PORT
#   mail_env_dns [ZONEFILE...]        DNS alone, with the test's own zones
#                                     too (absolute NAME.zone paths); sets DNS
#   mail_env_mta                      the MTA alone; sets SMTP_PORT
#   mail_env_slow_dns REGEX DELAY_MS  tests/dns/slow_dns.py in front of DNS,
#                                     answering DELAY_MS late for names
#                                     matching REGEX; sets DNS to it (its
#                                     pid is added to FAKE_PIDS)
#   mail_env_certs CN [NAME...]       IT_DIR/tls: a test CA (ca.pem) and a
#                                     server certificate (server.pem,
#                                     server.key) for CN and NAMEs
#   fake ADDRESS [--cert C --key K] [k=v ...]
#                                     a fake SMTP server on ADDRESS:SMTP_PORT
#                                     (the MTA's port or one the script
#                                     chose); its pid is added to FAKE_PIDS
#   fake_set ADDRESS k=v ...          change a running fake server's settings
#   fake_ctl ADDRESS COMMAND...       a control command; prints the answer
#   mail_env_lists                    IT_DIR/lists with the test's local entries
#   mail_env_conf [NAME=VALUE ...]    it_conf_add of the engine settings, a
#                                     NAME given replacing its value here
# Everything started is stopped by the EXIT trap this file installs (it
# chains to lib.sh's it_cleanup with the script's exit status).

FAKE_PIDS=()
MAIL_ENV_UP=	# what was started: dns, mta
mail_env_stop() {
    local p
    # (under set -e a failed kill or a non-zero wait would end the trap here)
    for p in "${FAKE_PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    case $MAIL_ENV_UP in *mta*) bash "$top_srcdir/tests/smtp/mta.sh" stop "$IT_DIR/mta" || true ;; esac
    case $MAIL_ENV_UP in *dns*) "$top_srcdir/tests/dns/server.sh" stop "$IT_DIR/dns" || true ;; esac
    return 0
}
# (it_cleanup gets the status as an argument: "(exit $rc)" would stop the
# trap under set -e whenever the script failed, leaving servers running)
trap 'rc=$?; mail_env_stop; it_cleanup "$rc"' EXIT

mail_env_dns() {
    it_require unbound drill
    MAIL_ENV_UP="$MAIL_ENV_UP dns"
    DNS=$("$top_srcdir/tests/dns/server.sh" start "$IT_DIR/dns" "$@") || { echo "Bail out! DNS server"; exit 1; }
}

mail_env_mta() {
    it_require postfix
    MAIL_ENV_UP="$MAIL_ENV_UP mta"
    SMTP_PORT=$(bash "$top_srcdir/tests/smtp/mta.sh" start "$IT_DIR/mta" | tail -n 1)
    [ -n "$SMTP_PORT" ] || { echo "Bail out! the test MTA did not start"; exit 1; }
}

mail_env_slow_dns() {
    it_require python3
    python3 "$top_srcdir/tests/dns/slow_dns.py" --ready "$IT_DIR/slow-dns" --upstream "$DNS" \
        --pattern "$1" --delay-ms "$2" > "$IT_DIR/slow-dns.log" 2>&1 &
    FAKE_PIDS+=($!)
    for _ in $(seq 1 100); do
        [ -s "$IT_DIR/slow-dns" ] && { DNS=$(cat "$IT_DIR/slow-dns"); return 0; }
        sleep 0.1
    done
    echo "Bail out! slow DNS"; cat "$IT_DIR/slow-dns.log"; exit 1
}

mail_env_start() {
    mail_env_dns "$@"
    mail_env_mta
}

mail_env_certs() {
    it_require certtool
    mkdir -p "$IT_DIR/tls"
    sh "$top_srcdir/tests/smtp/certs.sh" "$IT_DIR/tls" "$@" > "$IT_DIR/tls/certtool.log" 2>&1 ||
        { cat "$IT_DIR/tls/certtool.log"; echo "Bail out! certtool"; exit 1; }
}

fake() {
    local host=$1; shift
    it_require python3
    python3 "$top_srcdir/tests/smtp/fake_smtp.py" --ready "$IT_DIR/fake-$host" \
        --host "$host" --port "$SMTP_PORT" "$@" > "$IT_DIR/fake-$host.log" 2>&1 &
    FAKE_PIDS+=($!)
    for _ in $(seq 1 100); do [ -s "$IT_DIR/fake-$host" ] && return 0; sleep 0.1; done
    echo "Bail out! fake SMTP on $host"; cat "$IT_DIR/fake-$host.log"; exit 1
}

fake_ctl() {
    local host=$1 ctl; shift
    ctl=$(cut -d' ' -f2 "$IT_DIR/fake-$host")
    python3 - "$host" "$ctl" "$*" <<'PY'
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.sendall((sys.argv[3] + "\n").encode())
d = b""
while not d.endswith(b"\n"):
    c = s.recv(65536)
    if not c:
        break
    d += c
s.close()
print(d.decode().strip())
PY
}

fake_set() {
    local host=$1; shift
    fake_ctl "$host" set "$@" > /dev/null
}

mail_env_lists() {
    mkdir -p "$IT_DIR/lists/local"
    cp "$top_srcdir"/contrib/lists/*.txt "$IT_DIR/lists/"
    cp "$top_builddir"/contrib/lists/fetched/*.txt "$IT_DIR/lists/" 2>/dev/null || true
    echo throwaway.svc.test > "$IT_DIR/lists/local/disposable_domains.txt"
    echo typotrap.svc.test > "$IT_DIR/lists/local/typo_trap_domains.txt"
    echo mailbox.svc.test > "$IT_DIR/lists/local/provider_domains.txt"
}

mail_env_conf() {
    local line kv conf=
    while IFS= read -r line; do
        for kv in "$@"; do
            [ "${line%% = *}" != "${kv%%=*}" ] || line="${kv%%=*} = ${kv#*=}"
        done
        conf="$conf$line
"
    done <<EOF
dns_resolver = $DNS
dns_timeout_ms = 500
smtp_port = $SMTP_PORT
allow_private_mx = yes
lists_dir = $IT_DIR/lists
service_domain = svc.example
smtp_connect_timeout_ms = 1000
smtp_reply_timeout_ms = 3000
EOF
    for kv in "$@"; do
        case $conf in *"${kv%%=*} = ${kv#*=}"*) ;; *) echo "Bail out! mail_env_conf: no setting ${kv%%=*}"; exit 1 ;; esac
    done
    it_conf_add "${conf%$'\n'}"
}
