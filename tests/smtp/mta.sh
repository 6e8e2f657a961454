#!/bin/bash
# tests/smtp/mta.sh: a private, real Postfix (plus postgrey) on loopback for
# the verification engine's integration tests. It never touches the system's
# /etc/postfix, its queue or any system service: everything lives in DIR.
#
#   tests/smtp/mta.sh start DIR     start; prints the port; writes DIR/mta.env
#   tests/smtp/mta.sh stop DIR      stop everything started in DIR (any shell)
#   tests/smtp/mta.sh status DIR    exit 0 if the master of DIR runs
# or sourced (bash): mta_start DIR, mta_stop DIR, mta_status DIR.
#
# Environment: MTA_PORT (default: a free port, the same on every address),
# MTA_GREY_DELAY (seconds a new triplet is greylisted, default 2).
#
# One Postfix master, one smtpd listener per address, all on the SAME port P
# (the engine uses one smtp_port for every MX host). Each listener accepts
# recipients of its own domain(s) only; any other svc.test domain (and
# svctld) gets "554 5.7.1 ... Relay access denied", like any foreign domain.
#
#   DOMAIN             ADDRESS       BEHAVIOUR
#   mx.svc.test        127.0.0.20    mailboxes: alice@ bob@ info@ sales@ exist (250 2.1.5);
#                                    any other local part: 550 5.1.1 User unknown;
#                                    disabled@ 550 5.2.1 mailbox disabled;
#                                    full@ 452 4.2.2 over quota; quota@ 552 5.2.2 Mailbox full;
#                                    blocked@ 554 5.7.1 listed at zen.spamhaus.org
#   catchall.svc.test  127.0.0.21    catch-all: every local part 250 2.1.5
#   tls.svc.test       127.0.0.22    STARTTLS required: MAIL before STARTTLS 530 5.7.0;
#                                    after it alice@ 250, others 550 5.1.1
#   grey.svc.test      127.0.0.23    greylisting (postgrey): a new (client, sender,
#                                    recipient) triplet 450 4.7.1 Greylisted, the same
#                                    triplet retried MTA_GREY_DELAY s later: alice@ 250,
#                                    others 550 5.1.1 (unknown ones are greylisted first
#                                    too: postgrey answers before the mailbox lookup)
#   xn--bcher-kva.svc.test
#   (bücher.svc.test)  127.0.0.20    an IDN domain, configured in A-labels as an operator
#                                    does: alice@ 250 2.1.5, others 550 5.1.1; the U-label
#                                    form is not that domain: 501 5.1.3 Bad recipient
#                                    address syntax, after MAIL ... SMTPUTF8 554 5.7.1
#   svctld             127.0.0.20    a top-level domain (dotless addresses): alice@ 250 2.1.5,
#                                    others 550 5.1.1
#
# Every listener offers STARTTLS (self-signed certificate made at start,
# DIR/conf/cert.pem) and PIPELINING; only 127.0.0.22 requires TLS. HELO,
# client and sender are not restricted (the probe says EHLO
# verifier.svc.example, MAIL FROM:<verify@svc.example> from 127.0.0.1); a
# domain this MTA does not serve is "554 5.7.1 Relay access denied", also from
# 127.0.0.0/8. Accepted mail is delivered to Maildirs under DIR/mail
# (catch-all mail to sink@mx.svc.test); nothing is ever sent off the host.
#
# Files in DIR: mta.env (shell variables: MTA_PORT, MTA_ADDR_MX ...),
# mta.table ("DOMAIN ADDRESS BEHAVIOUR" lines), mta.mailboxes ("ADDRESS IP
# CODE ENHANCED-CODE": the RCPT reply each test address gets, greylisting
# aside), maillog (Postfix), postgrey.log, conf/ (main.cf, master.cf, maps).
# DIR is made 0755: Postfix's own user must reach it.

MTA_ADDR_MX=127.0.0.20
MTA_ADDR_CATCHALL=127.0.0.21
MTA_ADDR_TLS=127.0.0.22
MTA_ADDR_GREY=127.0.0.23
MTA_ADDRS="$MTA_ADDR_MX $MTA_ADDR_CATCHALL $MTA_ADDR_TLS $MTA_ADDR_GREY"
MTA_POSTFIX_DAEMONS=$(postconf -dh daemon_directory 2>/dev/null || echo /usr/lib/postfix/sbin)

mta_err() { echo "mta.sh: $*" >&2; }

mta_abs() { (cd "$1" && pwd); }

# mta_port_free PORT: nothing listens on PORT, on any address.
mta_port_free() {
    local port=$1 a
    if command -v ss >/dev/null 2>&1; then
        ss -Htln 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }' |
            grep -qx "$port" && return 1
    fi
    for a in 127.0.0.1 $MTA_ADDRS; do
        (exec 3<>"/dev/tcp/$a/$port") 2>/dev/null && return 1
    done
    return 0
}

mta_free_port() {
    local i port
    for i in $(seq 1 200); do
        port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
        [ "$port" != "${1:-}" ] || continue
        mta_port_free "$port" && { echo "$port"; return 0; }
    done
    mta_err "no free TCP port found"
    return 1
}

mta_alive() {
    local st
    [ -n "${1:-}" ] && [ -r "/proc/$1/stat" ] || return 1
    st=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
    [ "$st" != Z ]
}

# mta_cmdline_has PID STRING: the command line of PID contains STRING.
mta_cmdline_has() {
    [ -r "/proc/$1/cmdline" ] && tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"
}

# mta_banner ADDR PORT: true when an SMTP server greets with 220 there.
mta_banner() {
    local line
    (
        exec 3<>"/dev/tcp/$1/$2" || exit 1
        IFS= read -r -t 5 line <&3 || exit 1
        printf 'QUIT\r\n' >&3
        case $line in 220*) exit 0 ;; *) exit 1 ;; esac
    ) 2>/dev/null
}

# ------------------------------------------------------------ configuration

mta_write_config() {
    local dir=$1 port=$2 policy_port=$3 c=$1/conf
    mkdir -p "$c"
    : > "$c/postgrey-empty"

    # the real mailboxes: address -> Maildir under virtual_mailbox_base
    local m
    : > "$c/mailboxes"
    for m in alice bob info sales disabled full quota blocked sink; do
        echo "$m@mx.svc.test mx.svc.test/$m/" >> "$c/mailboxes"
    done
    echo "alice@tls.svc.test tls.svc.test/alice/" >> "$c/mailboxes"
    echo "alice@grey.svc.test grey.svc.test/alice/" >> "$c/mailboxes"
    # the IDN domain bücher.svc.test, in A-labels as an operator writes it
    # in main.cf, and the top-level domain svctld (dotless addresses)
    echo "alice@xn--bcher-kva.svc.test xn--bcher-kva.svc.test/alice/" >> "$c/mailboxes"
    echo "alice@svctld svctld/alice/" >> "$c/mailboxes"

    # catch-all: every local part of catchall.svc.test goes to sink@mx
    echo "@catchall.svc.test sink@mx.svc.test" > "$c/aliases"

    # mailboxes that exist but refuse mail (check_recipient_access); Postfix
    # answers "CODE DSN <rcpt>: Recipient address rejected: TEXT"
    cat > "$c/mailbox-states" <<'EOF'
disabled@mx.svc.test 550 5.2.1 mailbox disabled, not accepting messages
full@mx.svc.test 452 4.2.2 Mailbox full, user is over quota
quota@mx.svc.test 552 5.2.2 Mailbox full
blocked@mx.svc.test 554 5.7.1 Service unavailable; client [127.0.0.1] listed at zen.spamhaus.org
EOF

    # which listener serves which domain: its own, nothing else of svc.test
    local d
    for d in mx catchall tls grey; do
        printf '%s.svc.test DUNNO\nsvc.test 554 5.7.1 Relay access denied\n' "$d" > "$c/domain-$d"
        [ "$d" = mx ] || echo "svctld 554 5.7.1 Relay access denied" >> "$c/domain-$d"
    done
    printf 'xn--bcher-kva.svc.test DUNNO\nsvctld DUNNO\n' >> "$c/domain-mx"

    cat > "$c/main.cf" <<EOF
# main.cf of the private test MTA written by tests/smtp/mta.sh; not a system config.
compatibility_level = 3.6
queue_directory = $dir/queue
data_directory = $dir/data
mail_owner = postfix
setgid_group = postdrop
maillog_file = $dir/maillog
maillog_file_prefixes = $dir
myhostname = mta.svc.test
mydomain = svc.test
myorigin = \$myhostname
mydestination =
local_recipient_maps =
alias_maps =
alias_database =
inet_protocols = ipv4
# the listeners' addresses are in master.cf; inet_interfaces must name
# interface addresses (127.0.0.20 is routed to lo but not one of them)
inet_interfaces = loopback-only
mynetworks = 127.0.0.0/8
smtpd_banner = \$myhostname ESMTP Postfix (svc test MTA)
biff = no
append_dot_mydomain = no
smtpd_peername_lookup = no
smtpd_helo_required = no
smtpd_client_restrictions =
smtpd_helo_restrictions =
smtpd_sender_restrictions =
smtpd_data_restrictions =
smtpd_reject_unlisted_sender = no
smtpd_reject_unlisted_recipient = yes
smtpd_delay_reject = yes
# no permit_mynetworks: a foreign domain is refused from loopback too
smtpd_relay_restrictions = reject_unauth_destination
smtpd_recipient_restrictions = check_recipient_access texthash:$c/mailbox-states
smtpd_error_sleep_time = 0s
virtual_mailbox_domains = mx.svc.test, tls.svc.test, grey.svc.test, xn--bcher-kva.svc.test, svctld
virtual_mailbox_maps = texthash:$c/mailboxes
virtual_alias_domains = catchall.svc.test
virtual_alias_maps = texthash:$c/aliases
virtual_mailbox_base = $dir/mail
virtual_uid_maps = static:$(id -u nobody)
virtual_gid_maps = static:$(id -g nobody)
default_transport = error:5.7.1 the svc test MTA sends nothing off the host
relay_transport = \$default_transport
smtpd_tls_cert_file = $c/cert.pem
smtpd_tls_key_file = $c/key.pem
smtpd_tls_security_level = may
smtpd_tls_session_cache_database =
smtp_tls_security_level = none
smtp_tls_session_cache_database =
EOF

    local r="smtpd_recipient_restrictions=check_recipient_access,"
    cat > "$c/master.cf" <<EOF
# master.cf of the private test MTA written by tests/smtp/mta.sh (no chroot).
# service type  private unpriv  chroot  wakeup  maxproc command + args
$MTA_ADDR_MX:$port inet n - n - - smtpd -o syslog_name=postfix/mx
  -o ${r}texthash:$c/domain-mx,check_recipient_access,texthash:$c/mailbox-states
$MTA_ADDR_CATCHALL:$port inet n - n - - smtpd -o syslog_name=postfix/catchall
  -o ${r}texthash:$c/domain-catchall
$MTA_ADDR_TLS:$port inet n - n - - smtpd -o syslog_name=postfix/tls
  -o smtpd_tls_security_level=encrypt
  -o ${r}texthash:$c/domain-tls
$MTA_ADDR_GREY:$port inet n - n - - smtpd -o syslog_name=postfix/grey
  -o ${r}texthash:$c/domain-grey,check_policy_service,inet:127.0.0.1:$policy_port
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
local     unix  -       n       n       -       -       local
virtual   unix  -       n       n       -       -       virtual
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
EOF

    [ -s "$c/cert.pem" ] && [ -s "$c/key.pem" ] || mta_make_cert "$c" "$dir" || return 1
    # readable by Postfix's and postgrey's users whatever the caller's umask
    chmod 0755 "$c" && chmod 0644 "$c"/* && chmod 0600 "$c/key.pem"
}

# mta_make_cert CONFDIR LOGDIR: a self-signed certificate for STARTTLS
# (ECDSA P-256: made in milliseconds) with certtool (gnutls-bin, in
# contrib/install-deps) or else openssl.
mta_make_cert() {
    local c=$1 log=$2/cert.log
    if command -v certtool >/dev/null 2>&1; then
        printf '%s\n' "cn = mta.svc.test" "dns_name = mta.svc.test" "dns_name = tls.svc.test" \
            "expiration_days = 30" tls_www_server signing_key encryption_key > "$c/cert.tmpl"
        if ! { certtool --generate-privkey --key-type=ecdsa --curve=secp256r1 \
                    --outfile "$c/key.pem" &&
               certtool --generate-self-signed --load-privkey "$c/key.pem" \
                    --template "$c/cert.tmpl" --outfile "$c/cert.pem"; } > "$log" 2>&1; then
            mta_err "certtool could not make a certificate"
            cat "$log" >&2
            return 1
        fi
    elif command -v openssl >/dev/null 2>&1; then
        if ! openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                -days 30 -subj /CN=mta.svc.test \
                -addext "subjectAltName=DNS:mta.svc.test,DNS:tls.svc.test" \
                -keyout "$c/key.pem" -out "$c/cert.pem" > "$log" 2>&1; then
            mta_err "openssl could not make a certificate"
            cat "$log" >&2
            return 1
        fi
    else
        mta_err "neither certtool nor openssl is installed"
        return 1
    fi
    chmod 0600 "$c/key.pem"
}

mta_write_env() {
    local dir=$1 port=$2 policy_port=$3
    cat > "$dir/mta.env" <<EOF
# written by tests/smtp/mta.sh start; source it (sh)
MTA_DIR=$dir
MTA_PORT=$port
MTA_HOSTNAME=mta.svc.test
MTA_ADDR_MX=$MTA_ADDR_MX
MTA_ADDR_CATCHALL=$MTA_ADDR_CATCHALL
MTA_ADDR_TLS=$MTA_ADDR_TLS
MTA_ADDR_GREY=$MTA_ADDR_GREY
MTA_GREY_DELAY=$MTA_GREY_DELAY
MTA_POLICY_PORT=$policy_port
MTA_TLS_CERT=$dir/conf/cert.pem
MTA_MAILLOG=$dir/maillog
MTA_MAILDIRS=$dir/mail
EOF
    cat > "$dir/mta.table" <<EOF
# DOMAIN ADDRESS BEHAVIOUR (every address listens on port $port)
mx.svc.test $MTA_ADDR_MX mailboxes
catchall.svc.test $MTA_ADDR_CATCHALL catchall
tls.svc.test $MTA_ADDR_TLS starttls-required
grey.svc.test $MTA_ADDR_GREY greylisting
xn--bcher-kva.svc.test $MTA_ADDR_MX mailboxes
svctld $MTA_ADDR_MX mailboxes
EOF
    cat > "$dir/mta.mailboxes" <<EOF
# ADDRESS IP CODE ENHANCED-CODE: the reply to RCPT TO (port $port); on
# $MTA_ADDR_TLS only after STARTTLS, on $MTA_ADDR_GREY only once the triplet
# has waited out greylisting (first try: 450 4.7.1)
alice@mx.svc.test $MTA_ADDR_MX 250 2.1.5
bob@mx.svc.test $MTA_ADDR_MX 250 2.1.5
info@mx.svc.test $MTA_ADDR_MX 250 2.1.5
sales@mx.svc.test $MTA_ADDR_MX 250 2.1.5
nobody@mx.svc.test $MTA_ADDR_MX 550 5.1.1
disabled@mx.svc.test $MTA_ADDR_MX 550 5.2.1
full@mx.svc.test $MTA_ADDR_MX 452 4.2.2
quota@mx.svc.test $MTA_ADDR_MX 552 5.2.2
blocked@mx.svc.test $MTA_ADDR_MX 554 5.7.1
anything@catchall.svc.test $MTA_ADDR_CATCHALL 250 2.1.5
alice@tls.svc.test $MTA_ADDR_TLS 250 2.1.5
nobody@tls.svc.test $MTA_ADDR_TLS 550 5.1.1
alice@grey.svc.test $MTA_ADDR_GREY 250 2.1.5
nobody@grey.svc.test $MTA_ADDR_GREY 550 5.1.1
alice@xn--bcher-kva.svc.test $MTA_ADDR_MX 250 2.1.5
nobody@xn--bcher-kva.svc.test $MTA_ADDR_MX 550 5.1.1
alice@svctld $MTA_ADDR_MX 250 2.1.5
nobody@svctld $MTA_ADDR_MX 550 5.1.1
EOF
}

# ------------------------------------------------------------ postgrey

mta_postgrey_start() {
    local dir=$1 policy_port=$2 pid i
    command -v postgrey >/dev/null 2>&1 || [ -x /usr/sbin/postgrey ] ||
        { mta_err "postgrey is not installed (run contrib/install-deps)"; return 1; }
    local user=postgrey group=postgrey
    id -u postgrey >/dev/null 2>&1 || { user=nobody; group=$(id -gn nobody); }
    mkdir -p "$dir/postgrey"
    chown "$user:$group" "$dir/postgrey"
    # in the foreground (daemonized, postgrey logs only to syslog), in a
    # session of its own; empty whitelists, no auto-whitelisting
    setsid postgrey --inet="127.0.0.1:$policy_port" --dbdir="$dir/postgrey" \
        --user="$user" --group="$group" --delay="$MTA_GREY_DELAY" \
        --auto-whitelist-clients=0 --lookup-by-host \
        --whitelist-clients="$dir/conf/postgrey-empty" \
        --whitelist-recipients="$dir/conf/postgrey-empty" \
        --greylist-text="4.7.1 Greylisted, try again in %s seconds" \
        < /dev/null > "$dir/postgrey.log" 2>&1 &
    pid=$!
    echo "$pid" > "$dir/postgrey.pid"
    for i in $(seq 1 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$policy_port") 2>/dev/null && return 0
        mta_alive "$pid" || break
        sleep 0.1
    done
    mta_err "postgrey did not answer on 127.0.0.1:$policy_port"
    tail -n 20 "$dir/postgrey.log" >&2
    return 1
}

# ------------------------------------------------------------ start / stop

# mta_start DIR: start Postfix (and postgrey) with everything in DIR; print the port.
mta_start() {
    local dir=${1:?usage: mta_start DIR} port policy_port tries a
    MTA_GREY_DELAY=${MTA_GREY_DELAY:-2}
    [ "$(id -u)" = 0 ] || { mta_err "must run as root (Postfix's master runs as root)"; return 1; }
    command -v postfix >/dev/null 2>&1 || [ -x /usr/sbin/postfix ] ||
        { mta_err "postfix is not installed (run contrib/install-deps)"; return 1; }
    id -u postfix >/dev/null 2>&1 && getent group postdrop >/dev/null 2>&1 ||
        { mta_err "the postfix user or postdrop group is missing (Debian's postfix package makes them)"; return 1; }
    mkdir -p "$dir" || return 1
    dir=$(mta_abs "$dir")
    if mta_status "$dir"; then
        mta_err "an MTA already runs in $dir"
        return 1
    fi
    chmod 0755 "$dir"
    # Postfix's queue and data directories, owners and modes as its
    # postfix-files has them ("postfix check" would do it, in seconds)
    local q=$dir/queue
    install -d -o root -g root -m 0755 "$q" "$q/pid" &&
    install -d -o postfix -g root -m 0700 "$dir/data" "$q/active" "$q/bounce" \
        "$q/corrupt" "$q/defer" "$q/deferred" "$q/flush" "$q/hold" "$q/incoming" \
        "$q/private" "$q/saved" "$q/trace" &&
    install -d -o postfix -g postdrop -m 0730 "$q/maildrop" &&
    install -d -o postfix -g postdrop -m 0710 "$q/public" &&
    install -d -o nobody -m 0755 "$dir/mail" || return 1
    : > "$dir/maillog"

    for tries in 1 2 3; do
        if [ -n "${MTA_PORT:-}" ]; then
            port=$MTA_PORT
            mta_port_free "$port" || {
                mta_err "MTA_PORT=$port is in use:"
                ss -Htlnp "sport = :$port" >&2 2>/dev/null
                return 1
            }
        else
            port=$(mta_free_port) || return 1
        fi
        policy_port=$(mta_free_port "$port") || return 1
        mta_write_config "$dir" "$port" "$policy_port" || return 1
        mta_write_env "$dir" "$port" "$policy_port"
        if ! mta_postgrey_start "$dir" "$policy_port"; then
            mta_stop "$dir" > /dev/null 2>&1
            [ -n "${MTA_PORT:-}" ] && return 1
            continue
        fi
        # master in the foreground (-d) of a session of its own: its pid is
        # known at once and it is up as soon as every listener greets
        MAIL_CONFIG=$dir/conf setsid "$MTA_POSTFIX_DAEMONS/master" -c "$dir/conf" -d \
            < /dev/null > "$dir/master.out" 2>&1 &
        local mpid=$! ok=no i
        for i in $(seq 1 100); do
            mta_alive "$mpid" || break
            ok=yes
            for a in $MTA_ADDRS; do
                mta_banner "$a" "$port" || { ok=no; break; }
            done
            [ "$ok" = yes ] && break
            sleep 0.1
        done
        if [ "$ok" = yes ]; then
            echo "$port"
            return 0
        fi
        mta_err "Postfix did not start on port $port (attempt $tries)"
        # master's fatal errors before its log service runs go to syslog
        # only; "postfix check" names configuration errors, ss a taken port
        cat "$dir/master.out" >&2
        tail -n 20 "$dir/maillog" >&2
        postfix -c "$dir/conf" check >&2 2>&1
        ss -Htlnp "sport = :$port" >&2 2>/dev/null
        mta_stop "$dir" > /dev/null 2>&1
        [ -n "${MTA_PORT:-}" ] && return 1
    done
    return 1
}

# mta_master_pids DIR: the pids of the master process(es) of DIR.
mta_master_pids() {
    local dir=$1 pid
    pid=$(head -n 1 "$dir/queue/pid/master.pid" 2>/dev/null | tr -dc 0-9)
    if [ -n "$pid" ] && mta_cmdline_has "$pid" "master -c $dir/conf"; then
        echo "$pid"
    fi
    pgrep -f "master -c $dir/conf( |\$)" 2>/dev/null | grep -vx "${pid:-x}"
    return 0
}

# mta_status DIR: 0 if the master of DIR runs.
mta_status() {
    local dir=$1
    [ -d "$dir" ] || return 1
    dir=$(mta_abs "$dir")
    [ -n "$(mta_master_pids "$dir")" ]
}

# mta_stop_pids PID...: TERM, wait up to 10 s, then KILL.
mta_stop_pids() {
    local p i left
    [ $# -gt 0 ] || return 0
    kill -TERM "$@" 2>/dev/null || true
    for i in $(seq 1 100); do
        left=
        for p in "$@"; do mta_alive "$p" && left="$left $p"; done
        [ -n "$left" ] || return 0
        sleep 0.1
    done
    mta_err "processes$left did not stop on TERM; killing them"
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null || true
    sleep 0.2
    return 0
}

# mta_dir_pids DIR: Postfix daemons working in DIR's queue (they chdir
# there) and the postgrey of DIR. Few forks: this machine may be busy.
mta_dir_pids() {
    local dir=$1 f p exe
    find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$dir/queue" -o -lname "$dir/queue/*" \) 2>/dev/null |
    while IFS= read -r f; do
        p=${f#/proc/}
        p=${p%/cwd}
        exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
        case $exe in "$MTA_POSTFIX_DAEMONS"/*) echo "$p" ;; esac
    done
    pgrep -f -- "--dbdir=$dir/postgrey( |\$)" 2>/dev/null
    return 0
}

# mta_stop DIR: stop the Postfix and postgrey of DIR; nothing of it is left.
mta_stop() {
    local dir=${1:?usage: mta_stop DIR} masters pid kids="" p left
    [ -d "$dir" ] || return 0
    dir=$(mta_abs "$dir")
    masters=$(mta_master_pids "$dir")
    for pid in $masters; do
        kids="$kids $(pgrep -P "$pid" 2>/dev/null | tr '\n' ' ')"
    done
    # master TERMs its children and exits
    # shellcheck disable=SC2086
    mta_stop_pids $masters
    pid=$(head -n 1 "$dir/postgrey.pid" 2>/dev/null | tr -dc 0-9)
    if [ -n "$pid" ] && mta_cmdline_has "$pid" "$dir/postgrey"; then
        kids="$kids $(pgrep -P "$pid" 2>/dev/null | tr '\n' ' ')"
        mta_stop_pids "$pid"
    fi
    rm -f "$dir/postgrey.pid"
    # children of those and anything else still working in DIR
    left=
    for p in $kids $(mta_dir_pids "$dir"); do
        mta_alive "$p" && left="$left $p"
    done
    # shellcheck disable=SC2086
    [ -z "$left" ] || mta_stop_pids $left
    return 0
}

mta_main() {
    case ${1:-} in
    start) [ $# = 2 ] || { echo "usage: $0 start DIR" >&2; return 2; }; mta_start "$2" ;;
    stop) [ $# = 2 ] || { echo "usage: $0 stop DIR" >&2; return 2; }; mta_stop "$2" ;;
    status) [ $# = 2 ] || { echo "usage: $0 status DIR" >&2; return 2; }; mta_status "$2" ;;
    *) echo "usage: $0 start|stop|status DIR" >&2; return 2 ;;
    esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    mta_main "$@"
    exit $?
fi
