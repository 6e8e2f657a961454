# mail_env.sh: the mail world of the verification tests, sourced after
# lib.sh: unbound serving the test zones (tests/dns/server.sh), the private
# Postfix with postgrey (tests/smtp/mta.sh), fake SMTP servers
# (tests/smtp/fake_smtp.py) on chosen loopback addresses, a lists folder
# with the test's local additions, and the svc.conf lines pointing at them.
#
#   mail_env_start                    DNS + MTA; sets DNS, SMTP_PORT
#   fake ADDRESS [k=v ...]            a fake SMTP server on ADDRESS:SMTP_PORT
#   fake_set ADDRESS k=v ...          change a running fake server's settings
#   mail_env_lists                    IT_DIR/lists with the test's local entries
#   mail_env_conf                     it_conf_add of the engine settings
# Everything started is stopped by the EXIT trap this file installs (it
# chains to lib.sh's it_cleanup with the script's exit status).
it_require unbound drill postfix python3

FAKE_PIDS=()
mail_env_stop() {
    local p
    for p in "${FAKE_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    [ -z "${SMTP_PORT:-}" ] || bash "$top_srcdir/tests/smtp/mta.sh" stop "$IT_DIR/mta" || true
    [ -z "${DNS:-}" ] || "$top_srcdir/tests/dns/server.sh" stop "$IT_DIR/dns" || true
    return 0
}
trap 'rc=$?; mail_env_stop; (exit $rc); it_cleanup' EXIT

mail_env_start() {
    DNS=$("$top_srcdir/tests/dns/server.sh" start "$IT_DIR/dns") || { echo "Bail out! DNS server"; exit 1; }
    SMTP_PORT=$(bash "$top_srcdir/tests/smtp/mta.sh" start "$IT_DIR/mta" | tail -n 1)
    [ -n "$SMTP_PORT" ] || { echo "Bail out! the test MTA did not start"; exit 1; }
}

fake() {
    local host=$1; shift
    python3 "$top_srcdir/tests/smtp/fake_smtp.py" --ready "$IT_DIR/fake-$host" \
        --host "$host" --port "$SMTP_PORT" "$@" > "$IT_DIR/fake-$host.log" 2>&1 &
    FAKE_PIDS+=($!)
    for _ in $(seq 1 100); do [ -s "$IT_DIR/fake-$host" ] && return 0; sleep 0.1; done
    echo "Bail out! fake SMTP on $host"; cat "$IT_DIR/fake-$host.log"; exit 1
}

fake_set() {
    local host=$1 ctl; shift
    ctl=$(cut -d' ' -f2 "$IT_DIR/fake-$host")
    python3 - "$host" "$ctl" "$@" <<'PY'
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
s.sendall(("set " + " ".join(sys.argv[3:]) + "\n").encode())
s.recv(200)
s.close()
PY
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
    it_conf_add "dns_resolver = $DNS
dns_timeout_ms = 500
smtp_port = $SMTP_PORT
allow_private_mx = yes
lists_dir = $IT_DIR/lists
service_domain = svc.example
smtp_connect_timeout_ms = 1000
smtp_reply_timeout_ms = 3000"
}
