#!/bin/bash
# test_lists_rules.sh: "svcadm lists update" refreshing the rule tables
# (mx_providers.txt, smtp_reply_rules.txt, pacing_defaults.txt) from
# lists_rules_url, served by lighttpd over HTTPS on loopback with the
# test CA: a newer provider table (a pattern *.mx.newprov.test newprov
# added) is installed, renamed into place, noted in RULES_SOURCES, and
# after the restart svc-api names the provider of an MX it matches
# (POST /v1/verify); the operator's local/ table is untouched and still
# wins; a table that does not parse, one good table beside a broken one,
# a certificate the system's CAs do not know, an http:// URL and the
# server down each exit 1 and leave the installed tables as they were;
# without lists_rules_url the tables are kept and the output says how
# to set it. fetch-lists (npm) is replaced by a stand-in script.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/mail_env.sh"
it_require lighttpd cmp stat
[ -f /usr/lib/lighttpd/mod_gnutls.so ] ||
    it_skip "lighttpd's mod_gnutls is not installed (lighttpd-mod-gnutls; run contrib/install-deps)"

Z=$IT_DIR/zones
mkdir -p "$Z"
printf '%s\n' '$ORIGIN newprov.test.' '$TTL 300' \
    "@ 3600 IN SOA ns.svc.test. hostmaster.svc.test. 1 3600 600 86400 120" \
    '@ 300 IN NS ns.svc.test.' \
    'a 300 IN MX 10 mx1.mx.newprov.test.' 'mx1.mx 300 IN A 127.0.0.54' \
    'own 300 IN MX 10 mx.in.newprov.test.' 'mx.in 300 IN A 127.0.0.54' \
    > "$Z/newprov.test.zone"
mail_env_dns "$Z/newprov.test.zone"
SMTP_PORT=0
fake 127.0.0.54
SMTP_PORT=$(cut -d' ' -f1 "$IT_DIR/fake-127.0.0.54")
mail_env_lists
L=$IT_DIR/lists
# the operator's own pattern, which no refresh may touch
echo '*.in.newprov.test inhouse' > "$L/local/mx_providers.txt"
cp -p "$L/local/mx_providers.txt" "$IT_DIR/local-before"
LOCAL_INODE=$(stat -c %i "$L/local/mx_providers.txt")

# the rules server: lighttpd with mod_gnutls and the test CA's certificate
mail_env_certs 127.0.0.1 127.0.0.1
W=$IT_DIR/rules-www
mkdir -p "$W/htdocs/rules"
for f in mx_providers.txt smtp_reply_rules.txt pacing_defaults.txt; do
    cp "$top_srcdir/contrib/lists/$f" "$W/htdocs/rules/$f"
done
echo '*.mx.newprov.test newprov' >> "$W/htdocs/rules/mx_providers.txt"
cp "$W/htdocs/rules/mx_providers.txt" "$IT_DIR/newer-mx_providers.txt"
RULES_PORT=$(stack_free_port)
cat > "$W/lighttpd.conf" <<EOF
server.modules = ( "mod_gnutls" )
server.document-root = "$W/htdocs"
server.bind = "127.0.0.1"
server.port = $RULES_PORT
server.errorlog = "$W/error.log"
ssl.engine = "enable"
ssl.pemfile = "$IT_DIR/tls/server.pem"
ssl.privkey = "$IT_DIR/tls/server.key"
mimetype.assign = ( ".txt" => "text/plain" )
# the test rewrites the files between requests: no size from a stale stat
server.stat-cache-engine = "disable"
EOF
lighttpd -tt -f "$W/lighttpd.conf" > "$W/check.log" 2>&1 ||
    { cat "$W/check.log"; echo "Bail out! lighttpd rejects its TLS configuration"; exit 1; }
rules_server_start() {
    stack_proc_start "$W" lighttpd lighttpd -D -f "$W/lighttpd.conf" &&
        stack_wait_port "$RULES_PORT" "$(cat "$W/lighttpd.pid")" "$W/error.log" lighttpd ||
        { echo "Bail out! the rules server did not start"; exit 1; }
}
rules_server_start
RULES_URL=https://127.0.0.1:$RULES_PORT/rules

# fetch-lists without npm: the fetched lists are the build's (or one entry)
cat > "$IT_DIR/fetch-lists" <<'EOF'
echo "fetch-lists: (test stand-in) the npm lists are not downloaded"
[ -s "$1/disposable_domains.txt" ] || echo mailinator.com > "$1/disposable_domains.txt"
[ -s "$1/free_domains.txt" ] || echo gmail.com > "$1/free_domains.txt"
exit 0
EOF
export SVC_FETCH_LISTS=$IT_DIR/fetch-lists

mail_env_conf
it_conf_add "verify_time_budget_ms = 10000
ca_file = $IT_DIR/tls/ca.pem
lists_rules_url = $RULES_URL"
it_stack_start

ACC=$(it_account admin 1000)
API_KEY=$(it_key "$ACC" '*')

verify() { http POST /v1/verify "$(jq -cn --arg e "$1" '{email: $e}')"; }

# svc.conf with one setting changed ("" removes it): the path printed
conf_with() {
    local c=$IT_DIR/svc-$RANDOM.conf
    grep -v "^$1 = " "$SVC_CONF" > "$c"
    [ -z "$2" ] || echo "$1 = $2" >> "$c"
    echo "$c"
}

# update [CONF]: svcadm lists update; UPDATE_RC, IT_DIR/update.out, .err
update() {
    set +e
    "$top_builddir/src/admin/svcadm" -c "${1:-$SVC_CONF}" lists update \
        > "$IT_DIR/update.out" 2> "$IT_DIR/update.err"
    UPDATE_RC=$?
    set -e
}

# refused WHAT TEXT: the last update exited 1 saying TEXT and that the tables
# are unchanged, and the installed tables are those of IT_DIR/installed
refused() {
    local f
    expect_eq "$1: exit status" 1 "$UPDATE_RC" || return 1
    grep -qF -- "$2" "$IT_DIR/update.err" ||
        { it_fail "$1: no \"$2\" in: $(cat "$IT_DIR/update.err")"; return 1; }
    grep -q "the rule tables in $L are unchanged" "$IT_DIR/update.err" ||
        { it_fail "$1: not said unchanged: $(cat "$IT_DIR/update.err")"; return 1; }
    for f in mx_providers.txt smtp_reply_rules.txt pacing_defaults.txt; do
        cmp -s "$L/$f" "$IT_DIR/installed/$f" || { it_fail "$1: $f changed"; return 1; }
    done
    expect_eq "$1: inode of mx_providers.txt" "$INODE" "$(stat -c %i "$L/mx_providers.txt")" &&
        expect_eq "$1: files left beside" "" "$(ls -A "$L" | grep '\.new\.' || :)"
}

keep_installed() {
    rm -rf "$IT_DIR/installed"
    mkdir "$IT_DIR/installed"
    cp "$L"/*.txt "$IT_DIR/installed/"
    INODE=$(stat -c %i "$L/mx_providers.txt")
}

t_before() {
    verify user@a.newprov.test
    expect_status 200 && expect_json .provider newprov.test || return 1
    verify user@own.newprov.test
    expect_status 200 && expect_json .provider inhouse
}
t_case "before: an MX no shipped pattern matches is named by its registrable domain (newprov.test); the local pattern gives inhouse" t_before

t_no_url() {
    keep_installed
    update "$(conf_with lists_rules_url '')"
    expect_eq "exit status" 0 "$UPDATE_RC" || return 1
    grep -q "^rule tables: lists_rules_url is not set; the installed mx_providers.txt, smtp_reply_rules.txt and pacing_defaults.txt are kept" \
        "$IT_DIR/update.out" || { it_fail "output: $(cat "$IT_DIR/update.out")"; return 1; }
    cmp -s "$L/mx_providers.txt" "$IT_DIR/installed/mx_providers.txt" || it_fail "mx_providers.txt changed"
}
t_case "without lists_rules_url the installed tables are kept, and the output says how to set it" t_no_url

t_update() {
    local inode
    inode=$(stat -c %i "$L/mx_providers.txt")
    update
    expect_eq "exit status (stderr: $(cat "$IT_DIR/update.err"))" 0 "$UPDATE_RC" || return 1
    grep -q "^rule tables: mx_providers.txt: [0-9]* patterns, [0-9]* bytes from $RULES_URL/mx_providers.txt\$" \
        "$IT_DIR/update.out" || { it_fail "output: $(cat "$IT_DIR/update.out")"; return 1; }
    grep -q "^rule tables: pacing_defaults.txt: [0-9]* entries, " "$IT_DIR/update.out" &&
        grep -q "^note: running svc-api and svc-worker processes keep the lists and tables they loaded: send the svc-worker daemon" \
            "$IT_DIR/update.out" || { it_fail "output: $(cat "$IT_DIR/update.out")"; return 1; }
    cmp -s "$L/mx_providers.txt" "$IT_DIR/newer-mx_providers.txt" ||
        { it_fail "mx_providers.txt is not the served one"; return 1; }
    # renamed into place: a new file, not the old one rewritten
    [ "$(stat -c %i "$L/mx_providers.txt")" != "$inode" ] ||
        { it_fail "mx_providers.txt was rewritten in place, not renamed"; return 1; }
    grep -q "^smtp_reply_rules.txt $RULES_URL/smtp_reply_rules.txt [0-9]* rules [0-9]* bytes\$" \
        "$L/RULES_SOURCES" || { it_fail "RULES_SOURCES: $(cat "$L/RULES_SOURCES")"; return 1; }
    expect_eq "files left beside" "" "$(ls -A "$L" | grep '\.new\.' || :)" &&
        cmp -s "$L/local/mx_providers.txt" "$IT_DIR/local-before" &&
        expect_eq "local/mx_providers.txt inode" "$LOCAL_INODE" "$(stat -c %i "$L/local/mx_providers.txt")"
}
t_case "svcadm lists update installs the served tables (renamed into place, RULES_SOURCES), says what running services do, leaves local/ alone" t_update

t_after_restart() {
    stack_lighttpd_stop "$IT_DIR/lighttpd"
    it_api_start
    verify other@a.newprov.test
    expect_status 200 && expect_json .provider newprov || return 1
    verify other@own.newprov.test
    expect_status 200 && expect_json .provider inhouse
}
t_case "after svc-api's restart POST /v1/verify names the new table's provider (newprov); the local pattern still wins" t_after_restart

t_broken() {
    keep_installed
    { cat "$top_srcdir/contrib/lists/mx_providers.txt"; echo '*.com everyone'; } \
        > "$W/htdocs/rules/mx_providers.txt"
    update
    refused "a bad line" "mx_providers.txt does not parse: mx_providers.txt:" || return 1
    printf '<html><body>Moved</body></html>\n' > "$W/htdocs/rules/mx_providers.txt"
    update
    refused "an HTML page" "mx_providers.txt does not parse" || return 1
    : > "$W/htdocs/rules/mx_providers.txt"
    update
    refused "an empty file" "mx_providers.txt is empty"
}
t_case "a served provider table that does not parse (a bad line, an HTML page) or is empty: exit 1, the installed tables unchanged" t_broken

t_one_broken() {
    keep_installed
    { cat "$IT_DIR/newer-mx_providers.txt"; echo '*.mx.other.test other'; } \
        > "$W/htdocs/rules/mx_providers.txt"
    echo 'reply * 650 * x' > "$W/htdocs/rules/smtp_reply_rules.txt"
    update
    refused "good providers, broken reply rules" "smtp_reply_rules.txt does not parse" || return 1
    grep -q 'other.test' "$L/mx_providers.txt" && it_fail "the good table was installed alone"
    cp "$top_srcdir/contrib/lists/smtp_reply_rules.txt" "$W/htdocs/rules/smtp_reply_rules.txt"
    rm "$W/htdocs/rules/pacing_defaults.txt"
    update
    refused "pacing defaults missing (404)" "pacing_defaults.txt: HTTP status 404"
    cp "$top_srcdir/contrib/lists/pacing_defaults.txt" "$W/htdocs/rules/pacing_defaults.txt"
}
t_case "one table broken or missing beside good ones: none is installed" t_one_broken

t_tls_checked() {
    keep_installed
    update "$(conf_with ca_file '')"
    refused "a certificate of the test CA without ca_file" "$RULES_URL/mx_providers.txt: " || return 1
    grep -qi 'certificate\|issuer' "$IT_DIR/update.err" ||
        it_fail "not a certificate error: $(cat "$IT_DIR/update.err")"
}
t_case "the server's certificate is checked: the system's CAs do not know the test CA, exit 1, tables unchanged" t_tls_checked

t_not_https() {
    keep_installed
    update "$(conf_with lists_rules_url "http://127.0.0.1:$RULES_PORT/rules")"
    expect_eq "exit status" 1 "$UPDATE_RC" &&
        grep -q "lists_rules_url http://127.0.0.1:$RULES_PORT/rules is not an https:// URL; the rule tables are unchanged" \
            "$IT_DIR/update.err" || it_fail "stderr: $(cat "$IT_DIR/update.err")"
}
t_case "an http:// lists_rules_url is refused (exit 1)" t_not_https

t_server_down() {
    keep_installed
    stack_proc_stop "$W" lighttpd
    update
    refused "the server down" "$RULES_URL/mx_providers.txt: " || return 1
    cmp -s "$L/local/mx_providers.txt" "$IT_DIR/local-before" || it_fail "local/ changed"
}
t_case "the rules server down: exit 1, the installed tables and local/ unchanged" t_server_down

t_done
