#!/bin/bash
# tests/integration/test_mta.sh: the private Postfix of tests/smtp/mta.sh
# answers the verification engine's probes as its table says, in plain SMTP
# conversations (bash /dev/tcp; gnutls-cli for STARTTLS): mailboxes that
# exist (250), unknown (550 5.1.1), disabled (550 5.2.1), full (452 4.2.2,
# 552 5.2.2), blocked by policy (554 5.7.1), catch-all, STARTTLS required
# (530 before it, 250 after), greylisting (450 then 250 after the delay),
# an IDN domain served in A-labels (its U-label form refused), a top-level
# domain (svctld), foreign domains refused as relaying; and nothing runs
# after "mta.sh stop".
# Skips (77) when not root or Postfix, postgrey or gnutls-cli is missing.

. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

it_require postfix postgrey gnutls-cli

MTA=$top_srcdir/tests/smtp/mta.sh
MTA_DIR=$IT_DIR/mta
MTA_STOPPED=no

# stop the MTA whatever happens, then lib.sh's own cleanup
t_mta_cleanup() {
    local rc=$?
    [ "$MTA_STOPPED" = yes ] || bash "$MTA" stop "$MTA_DIR" > /dev/null 2>&1 || true
    if [ "$rc" != 0 ] && [ -s "$MTA_DIR/maillog" ]; then
        echo "# --- last lines of $MTA_DIR/maillog"
        tail -n 30 "$MTA_DIR/maillog" | sed 's/^/# /'
    fi
    it_cleanup "$rc"
}
trap t_mta_cleanup EXIT

touch "$IT_DIR/stamp"
if ! bash "$MTA" start "$MTA_DIR" > "$IT_DIR/mta.port" 2> "$IT_DIR/mta.err"; then
    sed 's/^/# /' "$IT_DIR/mta.err"
    echo "Bail out! tests/smtp/mta.sh start failed"
    exit 1
fi
# shellcheck source=/dev/null
. "$MTA_DIR/mta.env"
it_log "MTA on port $MTA_PORT at $MTA_ADDR_MX $MTA_ADDR_CATCHALL $MTA_ADDR_TLS $MTA_ADDR_GREY"

# ---------------------------------------------------------------- SMTP client
# One session at a time: SMTP_RD/SMTP_WR are the descriptors to read and
# write (the same socket in plain text; gnutls-cli's pipes with TLS).

SMTP_RD='' SMTP_WR='' SMTP_TLS_PID=''
SMTP_CODE='' SMTP_ENH='' SMTP_LAST='' SMTP_REPLY='' SMTP_CMD=''

# smtp_read: one reply (all its lines); sets SMTP_CODE, SMTP_ENH (the enhanced
# status code of the last line, or empty), SMTP_LAST and SMTP_REPLY (lines
# joined with " | "). Returns 1 on timeout or end of stream.
smtp_read() {
    local line
    SMTP_CODE='' SMTP_ENH='' SMTP_LAST='' SMTP_REPLY=''
    while IFS= read -r -t 10 -u "$SMTP_RD" line; do
        line=${line%$'\r'}
        SMTP_REPLY="${SMTP_REPLY:+$SMTP_REPLY | }$line"
        case $line in
        [0-9][0-9][0-9]-*) continue ;;
        esac
        SMTP_LAST=$line
        SMTP_CODE=${line:0:3}
        if [[ $line =~ ^[0-9]{3}\ ([245]\.[0-9]{1,3}\.[0-9]{1,3})\  ]]; then
            SMTP_ENH=${BASH_REMATCH[1]}
        fi
        return 0
    done
    it_fail "${SMTP_CMD:-connect}: no complete reply (got: ${SMTP_REPLY:-nothing})"
    return 1
}

# smtp_send LINE: send a command, read its reply.
smtp_send() {
    SMTP_CMD=$1
    printf '%s\r\n' "$1" >&"$SMTP_WR" || { it_fail "$1: cannot write"; return 1; }
    smtp_read
}

# smtp_open ADDR: connect to ADDR:MTA_PORT in plain text, read the greeting.
smtp_open() {
    smtp_close
    SMTP_CMD="connect to $1:$MTA_PORT"
    exec {SMTP_RD}<>"/dev/tcp/$1/$MTA_PORT" || { SMTP_RD=; it_fail "cannot connect to $1:$MTA_PORT"; return 1; }
    SMTP_WR=$SMTP_RD
    smtp_read
}

# smtp_open_tls ADDR: connect, STARTTLS (gnutls-cli does EHLO and STARTTLS
# itself), then the session goes on inside TLS; no greeting to read.
smtp_open_tls() {
    smtp_close
    coproc SMTP_GNUTLS {
        exec gnutls-cli --starttls-proto=smtp --insecure --logfile="$IT_DIR/gnutls.log" \
            -p "$MTA_PORT" "$1" 2> "$IT_DIR/gnutls.err"
    }
    SMTP_TLS_PID=$SMTP_GNUTLS_PID
    # copies: bash closes the coproc's own variables when it ends
    exec {SMTP_RD}<&"${SMTP_GNUTLS[0]}" {SMTP_WR}>&"${SMTP_GNUTLS[1]}"
}

# smtp_close: QUIT (best effort) and close the session.
smtp_close() {
    local i
    if [ -n "$SMTP_WR" ]; then
        printf 'QUIT\r\n' >&"$SMTP_WR" 2>/dev/null || true
        [ "$SMTP_WR" = "$SMTP_RD" ] || exec {SMTP_WR}>&-
    fi
    if [ -n "$SMTP_TLS_PID" ]; then
        # after QUIT and the end of its input gnutls-cli ends by itself (and
        # writes its log); it is killed only if it lingers
        for i in $(seq 1 30); do
            kill -0 "$SMTP_TLS_PID" 2>/dev/null || break
            sleep 0.1
        done
    fi
    [ -z "$SMTP_RD" ] || exec {SMTP_RD}<&-
    if [ -n "$SMTP_TLS_PID" ]; then
        kill "$SMTP_TLS_PID" 2>/dev/null || true
        wait "$SMTP_TLS_PID" 2>/dev/null || true
    fi
    SMTP_RD='' SMTP_WR='' SMTP_TLS_PID=''
}

# expect_reply CODE [ENHANCED [TEXT]]: the last reply has CODE, the enhanced
# code ENHANCED and contains TEXT.
expect_reply() {
    local want="$1${2:+ $2}"
    if [ "$SMTP_CODE" != "$1" ] || { [ -n "${2:-}" ] && [ "$SMTP_ENH" != "$2" ]; }; then
        it_fail "$SMTP_CMD: expected $want, got: ${SMTP_REPLY:-no reply}"
        return 1
    fi
    [ -z "${3:-}" ] && return 0
    case $SMTP_LAST in *"$3"*) return 0 ;; esac
    it_fail "$SMTP_CMD: expected the text '$3' in: $SMTP_LAST"
}

# probe ADDR: plain session up to MAIL FROM, as the engine's probe starts.
probe() {
    smtp_open "$1" && expect_reply 220 &&
    smtp_send "EHLO verifier.svc.example" && expect_reply 250 &&
    smtp_send "MAIL FROM:<verify@svc.example>" && expect_reply 250 2.1.0
}

# rcpt_is ADDR RCPT CODE ENHANCED [TEXT]: a fresh probe of ADDR, RCPT TO RCPT.
rcpt_is() {
    probe "$1" || { smtp_close; return 1; }
    smtp_send "RCPT TO:<$2>" && expect_reply "$3" "$4" "${5:-}"
    local rc=$?
    smtp_close
    return $rc
}

# ---------------------------------------------------------------- cases

t_table() {
    local got want
    got=$(grep -v '^#' "$MTA_DIR/mta.table")
    want="mx.svc.test 127.0.0.20 mailboxes
catchall.svc.test 127.0.0.21 catchall
tls.svc.test 127.0.0.22 starttls-required
grey.svc.test 127.0.0.23 greylisting
xn--bcher-kva.svc.test 127.0.0.20 mailboxes
svctld 127.0.0.20 mailboxes"
    expect_eq "DIR/mta.table" "$want" "$got"
    expect_eq "port printed by mta.sh start" "$MTA_PORT" "$(cat "$IT_DIR/mta.port")"
}
t_case "mta.sh start prints the port and writes the DOMAIN ADDRESS BEHAVIOUR table" t_table

t_greeting() {
    local a
    for a in "$MTA_ADDR_MX" "$MTA_ADDR_CATCHALL" "$MTA_ADDR_TLS" "$MTA_ADDR_GREY"; do
        smtp_open "$a" && expect_reply 220 "" "mta.svc.test ESMTP" || { smtp_close; return 1; }
        smtp_close
    done
}
t_case "every address greets with 220 mta.svc.test on the same port" t_greeting

# Greylisting first, so the delay runs while the other cases do.
GREY_T0=
t_grey_first() {
    GREY_T0=$(date +%s)
    probe "$MTA_ADDR_GREY" || { smtp_close; return 1; }
    smtp_send "RCPT TO:<alice@grey.svc.test>" && expect_reply 450 4.7.1 "Greylisted"
    # an unknown recipient is greylisted as well (postgrey answers before the
    # mailbox lookup), and rejected once its triplet has waited
    smtp_send "RCPT TO:<nobody@grey.svc.test>" && expect_reply 450 4.7.1 "Greylisted"
    smtp_close
}
t_case "greylisting: the first attempt of a triplet is 450 4.7.1 Greylisted" t_grey_first

t_grey_early() {
    rcpt_is "$MTA_ADDR_GREY" alice@grey.svc.test 450 4.7.1 "Greylisted"
}
t_case "greylisting: a retry within the delay is still 450 4.7.1" t_grey_early

t_ehlo() {
    probe "$MTA_ADDR_MX" || { smtp_close; return 1; }
    smtp_close
    smtp_open "$MTA_ADDR_MX" && smtp_send "EHLO verifier.svc.example" || { smtp_close; return 1; }
    case $SMTP_REPLY in *"250-PIPELINING"*) ;; *) it_fail "EHLO lacks PIPELINING: $SMTP_REPLY" ;; esac
    case $SMTP_REPLY in *"ENHANCEDSTATUSCODES"*) ;; *) it_fail "EHLO lacks ENHANCEDSTATUSCODES: $SMTP_REPLY" ;; esac
    smtp_close
}
t_case "the probe's EHLO and MAIL FROM are accepted; EHLO offers PIPELINING" t_ehlo

t_mailboxes() {
    local m
    for m in alice bob info sales; do
        rcpt_is "$MTA_ADDR_MX" "$m@mx.svc.test" 250 2.1.5 || return 1
    done
}
t_case "mx: alice@ bob@ info@ sales@ are accepted with 250 2.1.5" t_mailboxes

t_case "mx: nobody@ is 550 5.1.1 User unknown" \
    rcpt_is "$MTA_ADDR_MX" nobody@mx.svc.test 550 5.1.1 "Recipient address rejected: User unknown"
t_case "mx: disabled@ is 550 5.2.1 mailbox disabled" \
    rcpt_is "$MTA_ADDR_MX" disabled@mx.svc.test 550 5.2.1 "mailbox disabled"
t_case "mx: full@ is 452 4.2.2 over quota" \
    rcpt_is "$MTA_ADDR_MX" full@mx.svc.test 452 4.2.2 "over quota"
t_case "mx: quota@ is 552 5.2.2 Mailbox full" \
    rcpt_is "$MTA_ADDR_MX" quota@mx.svc.test 552 5.2.2 "Mailbox full"
t_case "mx: blocked@ is 554 5.7.1 listed at zen.spamhaus.org" \
    rcpt_is "$MTA_ADDR_MX" blocked@mx.svc.test 554 5.7.1 "listed at zen.spamhaus.org"
t_case "mx: a foreign domain is 554 5.7.1 Relay access denied, from 127.0.0.1 too" \
    rcpt_is "$MTA_ADDR_MX" someone@example.com 554 5.7.1 "Relay access denied"
t_case "mx: another listener's domain is refused as relaying" \
    rcpt_is "$MTA_ADDR_MX" anything@catchall.svc.test 554 5.7.1 "Relay access denied"

t_idn_u_label() {
    rcpt_is "$MTA_ADDR_MX" alice@bücher.svc.test 501 5.1.3 "Bad recipient address syntax" || return 1
    smtp_open "$MTA_ADDR_MX" && smtp_send "EHLO verifier.svc.example" &&
        smtp_send "MAIL FROM:<verify@svc.example> SMTPUTF8" && expect_reply 250 2.1.0 &&
        smtp_send "RCPT TO:<alice@bücher.svc.test>" && expect_reply 554 5.7.1 "Relay access denied"
    local rc=$?
    smtp_close
    return $rc
}
t_case "mx: the IDN domain in U-labels is refused (501 5.1.3; with SMTPUTF8 554 5.7.1)" t_idn_u_label
t_case "svctld is served by mx only: catchall refuses it as relaying" \
    rcpt_is "$MTA_ADDR_CATCHALL" alice@svctld 554 5.7.1 "Relay access denied"

t_pipelined() {
    probe "$MTA_ADDR_MX" || { smtp_close; return 1; }
    # three RCPTs in one write; the replies come back in order
    printf 'RCPT TO:<alice@mx.svc.test>\r\nRCPT TO:<nobody@mx.svc.test>\r\nRCPT TO:<full@mx.svc.test>\r\n' >&"$SMTP_WR"
    SMTP_CMD="pipelined RCPT 1 (alice@)"
    smtp_read && expect_reply 250 2.1.5 || { smtp_close; return 1; }
    SMTP_CMD="pipelined RCPT 2 (nobody@)"
    smtp_read && expect_reply 550 5.1.1 || { smtp_close; return 1; }
    SMTP_CMD="pipelined RCPT 3 (full@)"
    smtp_read && expect_reply 452 4.2.2
    smtp_close
}
t_case "mx: pipelined RCPTs get their replies in order" t_pipelined

t_catchall() {
    rcpt_is "$MTA_ADDR_CATCHALL" "random$RANDOM$RANDOM@catchall.svc.test" 250 2.1.5 &&
    rcpt_is "$MTA_ADDR_CATCHALL" "x.y-z+tag@catchall.svc.test" 250 2.1.5 &&
    rcpt_is "$MTA_ADDR_CATCHALL" alice@mx.svc.test 554 5.7.1 "Relay access denied"
}
t_case "catchall: any local part of catchall.svc.test is 250 2.1.5" t_catchall

t_tls_required() {
    smtp_open "$MTA_ADDR_TLS" && expect_reply 220 &&
    smtp_send "EHLO verifier.svc.example" && expect_reply 250 || { smtp_close; return 1; }
    case $SMTP_REPLY in *"250-STARTTLS"*) ;; *) it_fail "EHLO lacks STARTTLS: $SMTP_REPLY" ;; esac
    smtp_send "MAIL FROM:<verify@svc.example>" && expect_reply 530 5.7.0 "Must issue a STARTTLS command first"
    smtp_close
}
t_case "tls: EHLO offers STARTTLS; MAIL before it is 530 5.7.0" t_tls_required

t_tls_after() {
    smtp_open_tls "$MTA_ADDR_TLS"
    smtp_send "EHLO verifier.svc.example" && expect_reply 250 || { smtp_close; return 1; }
    case $SMTP_REPLY in *STARTTLS*) it_fail "STARTTLS offered again inside TLS: $SMTP_REPLY" ;; esac
    smtp_send "MAIL FROM:<verify@svc.example>" && expect_reply 250 2.1.0 &&
    smtp_send "RCPT TO:<alice@tls.svc.test>" && expect_reply 250 2.1.5 &&
    smtp_send "RCPT TO:<nobody@tls.svc.test>" && expect_reply 550 5.1.1 "User unknown"
    smtp_close
    grep -q "subject \`CN=mta.svc.test'" "$IT_DIR/gnutls.log" ||
        it_fail "gnutls-cli did not see the self-signed certificate: $(tr '\n' ' ' < "$IT_DIR/gnutls.log" | head -c 400)"
}
t_case "tls: after STARTTLS MAIL is 250, alice@ 250 2.1.5, nobody@ 550 5.1.1" t_tls_after

t_delivery() {
    probe "$MTA_ADDR_MX" || { smtp_close; return 1; }
    smtp_send "RCPT TO:<alice@mx.svc.test>" && expect_reply 250 2.1.5 &&
    smtp_send "DATA" && expect_reply 354 || { smtp_close; return 1; }
    printf 'Subject: test_mta\r\n\r\nhello alice\r\n.\r\n' >&"$SMTP_WR"
    SMTP_CMD="end of DATA"
    smtp_read && expect_reply 250 2.0.0 "queued as"
    smtp_close
    local i
    for i in $(seq 1 100); do
        grep -rqs "hello alice" "$MTA_DIR/mail/mx.svc.test/alice/new" && return 0
        sleep 0.1
    done
    it_fail "no message in $MTA_DIR/mail/mx.svc.test/alice/new after 10 s"
}
t_case "mx: a message to alice@ is delivered to her Maildir" t_delivery

t_grey_retry() {
    local wait=$(( GREY_T0 + MTA_GREY_DELAY + 1 - $(date +%s) ))
    [ "$wait" -le 0 ] || sleep "$wait"
    rcpt_is "$MTA_ADDR_GREY" alice@grey.svc.test 250 2.1.5 &&
    rcpt_is "$MTA_ADDR_GREY" nobody@grey.svc.test 550 5.1.1 "User unknown"
}
t_case "greylisting: the same triplet after the delay is 250 (unknown: 550 5.1.1)" t_grey_retry

t_table_rows() {
    local rcpt ip code enh n=0
    while read -r rcpt ip code enh; do
        case $rcpt in ''|'#'*) continue ;; esac
        n=$((n + 1))
        if [ "$ip" = "$MTA_ADDR_TLS" ]; then
            smtp_open_tls "$ip"
            smtp_send "EHLO verifier.svc.example" &&
            smtp_send "MAIL FROM:<verify@svc.example>" &&
            smtp_send "RCPT TO:<$rcpt>" && expect_reply "$code" "$enh"
            smtp_close
        else
            rcpt_is "$ip" "$rcpt" "$code" "$enh"
        fi
    done < "$MTA_DIR/mta.mailboxes"
    [ "$n" -ge 10 ] || it_fail "DIR/mta.mailboxes has only $n rows"
}
t_case "every row of DIR/mta.mailboxes holds against the server" t_table_rows

t_untouched() {
    local changed
    changed=$(find /etc/postfix -newer "$IT_DIR/stamp" 2>/dev/null | head -n 5)
    expect_eq "files changed under /etc/postfix" "" "$changed"
}
t_case "the system's /etc/postfix is not touched" t_untouched

t_stop() {
    local a left
    bash "$MTA" stop "$MTA_DIR" || it_fail "mta.sh stop failed"
    MTA_STOPPED=yes
    if bash "$MTA" status "$MTA_DIR"; then it_fail "mta.sh status says it still runs"; fi
    left=$(pgrep -af "master -c $MTA_DIR" || true)
    expect_eq "processes matching 'master -c $MTA_DIR'" "" "$left"
    left=$(pgrep -af -- "$MTA_DIR" || true)
    expect_eq "processes naming $MTA_DIR" "" "$left"
    left=$(find /proc/[0-9]*/cwd -maxdepth 0 -lname "$MTA_DIR*" 2>/dev/null || true)
    expect_eq "processes working in $MTA_DIR" "" "$left"
    for a in "$MTA_ADDR_MX" "$MTA_ADDR_CATCHALL" "$MTA_ADDR_TLS" "$MTA_ADDR_GREY" "127.0.0.1:$MTA_POLICY_PORT"; do
        case $a in *:*) ;; *) a=$a:$MTA_PORT ;; esac
        if (exec 3<>"/dev/tcp/${a%:*}/${a#*:}") 2>/dev/null; then
            it_fail "something still listens on $a"
        fi
    done
}
t_case "mta.sh stop leaves nothing running and no port open" t_stop

t_done
