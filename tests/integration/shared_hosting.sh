#!/bin/bash
# shared_hosting.sh: svc installed without root (./configure
# --prefix=$HOME/svc) used the way README's "Shared hosting" says, step by
# step, by an ordinary user: a database the host provides (the user gets
# its name, user and password), svc-api as svc-api.fcgi in a document root
# of the user's home with the .htaccess of fcgi-conf/htaccess, and
# svc-worker --once run as cron would, every "minute".
#
# Not part of make check: contrib/test-tarball runs it with the tarball it
# installed as a throw-away user (SVC_HOSTING_USER, SVC_HOSTING_PREFIX).
# The host's side runs as root: MariaDB (contrib/stack.sh) and a private
# Apache on 127.0.0.1 with mod_fcgid, mod_rewrite, mod_setenvif and mod_mime, whose
# <Directory> for the user's folder allows what the htaccess needs
# (AllowOverride FileInfo AuthConfig Options=ExecCGI,Indexes). Shared hosts run a
# user's FastCGI programs as that user (suexec); this Apache runs as the
# user instead, which gives the programs the same rights without setting
# up suexec on the test machine. Everything else runs as the user.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
it_require apache2 mariadbd runuser python3 jq

user=${SVC_HOSTING_USER:-}
prefix=${SVC_HOSTING_PREFIX:-}
[ -n "$user" ] && [ -n "$prefix" ] ||
    it_skip "needs SVC_HOSTING_USER and SVC_HOSTING_PREFIX (an installed tarball: contrib/test-tarball runs it)"
home=$(getent passwd "$user" | cut -d: -f6)
[ -n "$home" ] && [ -x "$prefix/bin/svc-worker" ] ||
    it_skip "no user $user or no svc installed in $prefix"
[ -f "$STACK_APACHE_MODULES/mod_rewrite.so" ] || it_skip "mod_rewrite not found"

# as_user COMMAND...: COMMAND as the user, in its home, clean environment
as_user() {
    runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" \
        SHELL=/bin/sh LANG=C.UTF-8 PATH="$prefix/bin:$prefix/sbin:/usr/bin:/bin" \
        sh -c 'cd "$HOME" && "$@"' sh "$@"
}

conf=$prefix/etc/svc/svc.conf
www=$home/api.example.test
log=$prefix/var/log/svc.log
run=$prefix/var/run
# the crontab line of README ("Shared hosting", step 7)
CRON_LINE="$prefix/bin/svc-worker --once -c $conf"
cron_run() { as_user sh -c "$CRON_LINE" >> "$IT_DIR/cron.out" 2>&1; }

# ---- the host: a database for the user, and Apache
stack_mariadb_init "$IT_DIR/mariadb"
stack_mariadb_start "$IT_DIR/mariadb"
stack_mariadb_create_db "$IT_DIR/mariadb"
HTTP_PORT=$(stack_free_port)
BASE_URL=http://127.0.0.1:$HTTP_PORT
# the password the host hands out, readable by the user for the steps below
install -m 0644 "$IT_DIR/mariadb/db-password" "$IT_DIR/given-password"

# ---- the user, steps 2 to 6 of README's "Shared hosting"
t_setup() {
    as_user mkdir -p "$prefix/etc/svc" "$run" "$prefix/var/log" "$www" || return 1
    as_user sh -c "umask 077 && cat '$IT_DIR/given-password' > '$prefix/etc/svc/db-password'" || return 1
    as_user sh -c "umask 077 && cat > '$conf'" <<EOF || return 1
# svc.conf of a shared host (README, "Shared hosting")
db_host = 127.0.0.1
db_port = $STACK_DB_PORT
db_name = svc
db_user = svc
db_password_file = $prefix/etc/svc/db-password
base_url = $BASE_URL
run_dir = $run
log_file = $log
api_workers = 4
EOF
    expect_eq "mode of svc.conf" 600 "$(stat -c %a "$conf")"
    expect_eq "mode of db-password" 600 "$(stat -c %a "$prefix/etc/svc/db-password")"
    as_user svcadm db migrate > "$IT_DIR/migrate.log" 2>&1 ||
        { it_fail "svcadm db migrate: $(cat "$IT_DIR/migrate.log")"; return 1; }
    [ "$(stack_mariadb_sql "$IT_DIR/mariadb" -N -B svc -e 'SELECT COUNT(*) FROM jobs')" = 0 ] ||
        { it_fail "no jobs table after the migration"; return 1; }
    as_user cp "$prefix/share/svc/fcgi-conf/svc-api.fcgi" "$www/svc-api.fcgi" &&
        as_user cp "$prefix/share/svc/fcgi-conf/htaccess" "$www/.htaccess" &&
        as_user cp "$prefix/share/svc/fcgi-conf/svc-413.html" "$www/" &&
        as_user cp -R "$prefix/share/svc/www" "$www/app" || return 1
    ACCOUNT=$(as_user svcadm account create --email me@example.com --tier pro --credits 100) ||
        { it_fail "svcadm account create"; return 1; }
    API_KEY=$(as_user svcadm key create --account "$ACCOUNT" --scopes '*' 2>/dev/null) ||
        { it_fail "svcadm key create"; return 1; }
    expect_eq "files in the user's document root" ".htaccess app svc-413.html svc-api.fcgi" \
        "$(cd "$www" && ls -A | tr '\n' ' ' | sed 's/ $//')"
}
t_case "as the user: svc.conf and the password file 0600, svcadm migrates the host's database, an account and a key" t_setup

# the host's part: the user's folder as a site of its own, overrides allowed
cat > "$IT_DIR/host-site.conf" <<EOF
LoadModule mime_module "$STACK_APACHE_MODULES/mod_mime.so"
LoadModule rewrite_module "$STACK_APACHE_MODULES/mod_rewrite.so"
LoadModule setenvif_module "$STACK_APACHE_MODULES/mod_setenvif.so"
TypesConfig /etc/mime.types
DocumentRoot "$www"
<Directory "$www">
    Options SymLinksIfOwnerMatch
    AllowOverride FileInfo AuthConfig Options=ExecCGI,Indexes
    Require all granted
</Directory>
EOF
STACK_APACHE_USER=$user stack_apache_start "$IT_DIR/apache" "$HTTP_PORT" "$www/svc-api.fcgi" \
    "$conf" "$IT_DIR/host-site.conf" ||
    { echo "Bail out! Apache did not start"; exit 1; }

t_auth() {
    API_KEY='' http GET /rate-limit || return 1
    expect_status 200 && expect_header X-Request-Id && expect_json .success true || return 1
    API_KEY='' http GET /v1/credits || return 1
    expect_status 401 && expect_json .error.code unauthorized || return 1
    API_KEY=svc_live_nosuchkey http GET /v1/credits || return 1
    expect_status 401 && expect_json .error.code unauthorized || return 1
    http GET /v1/credits || return 1
    expect_status 200 && expect_json .balance 100 || return 1
    # a sandbox key, made through the API
    http POST /v1/keys '{"scopes":"*","sandbox":true}' || return 1
    expect_status 201 && expect_json .sandbox true || return 1
    SANDBOX_KEY=$(json .key)
}
t_case "through .htaccess and svc-api.fcgi: /rate-limit, 401 without or with a bad key, credits with a key, a key made" t_auth

t_verify() {
    API_KEY=$SANDBOX_KEY http POST /v1/verify '{"email":"rejected_email@sandbox.svc.example"}' || return 1
    expect_status 200 && expect_json .status undeliverable && expect_json .reason rejected_email &&
        expect_json .credits_charged 0 || return 1
    API_KEY=$SANDBOX_KEY http POST /v1/verify '{"email":"someone@sandbox.svc.example"}' || return 1
    expect_status 200 && expect_json .status deliverable && expect_json .reason accepted_email || return 1
}
t_case "a verification in the sandbox through Apache" t_verify

t_not_api() {
    local p
    for p in / /svc-api.fcgi /.htaccess /v10 /v1x/credits; do
        API_KEY='' http GET "$p" || return 1
        expect_status 404 || return 1
        printf '%s' "$HTTP_BODY" | grep -q 'exec ' && { it_fail "$p shows the wrapper"; return 1; }
    done
    # the wrapper's name is not a way around the rewrite either
    API_KEY='' http GET /svc-api.fcgi/v1/credits || return 1
    expect_status 404
}
t_case "nothing but the API's paths is served: the folder, the wrapper and .htaccess are 404" t_not_api

# the dashboard, copied as app/ (step 5): its files at /app/ with their
# headers (the host has mod_headers; without it the .htaccess serves none)
t_dashboard() {
    local p
    for p in /app/ /app/js/app.js /app/invite; do
        SVC_TEST_OPENAPI=0 API_KEY='' http GET "$p" || return 1
        expect_status 200 || return 1
        header_value content-security-policy | grep -q "script-src 'self'.*frame-ancestors 'none'" ||
            it_fail "$p: CSP $(header_value content-security-policy)"
        expect_eq "$p nosniff" nosniff "$(header_value x-content-type-options | tr -d ' ')"
        expect_eq "$p Referrer-Policy" no-referrer "$(header_value referrer-policy | tr -d ' ')"
    done
    SVC_TEST_OPENAPI=0 API_KEY='' http GET /app/js/app.js || return 1
    case $(header_value content-type) in *javascript*) ;; *) it_fail "app.js: $(header_value content-type)" ;; esac
    SVC_TEST_OPENAPI=0 API_KEY='' http GET /app || return 1
    expect_status 301
}
t_case "the dashboard copied as app/ is served at /app/ with the CSP, nosniff and no-referrer" t_dashboard

t_upload_length() {
    local out
    printf 'a@b.example\n' > "$IT_DIR/one.txt"
    chmod 0644 "$IT_DIR/one.txt"
    # no Content-Length (chunked): the .htaccess marks it, svc-api says 411
    http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/one.txt" -H 'Transfer-Encoding: chunked' || return 1
    expect_status 411 && expect_json .error.code length_required || return 1
    # over the limit: 413 with the JSON error while the body is unsent
    out=$(python3 "$top_srcdir/tests/integration/slow_client.py" early 127.0.0.1 "$HTTP_PORT" \
        /v1/verify/bulk/upload "$API_KEY" 60000000 5)
    expect_eq "status line" "HTTP/1.1 413 Request Entity Too Large" "$(printf '%s\n' "$out" | sed -n 1p)" || return 1
    expect_eq "Content-Type" "application/json" "$(printf '%s\n' "$out" | sed -n 2p)" || return 1
    expect_eq "error code" file_too_large "$(printf '%s\n' "$out" | sed -n '3,$p' | jq -r .error.code)"
}
t_case "through .htaccess: a chunked upload is 411, one announced over the limit is 413 file_too_large (JSON) before its body" t_upload_length

# svc-api processes of the user's installation, by /proc (mod_fcgid's)
api_pids() {
    local p
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/exe" 2>/dev/null)" = "$prefix/bin/svc-api" ] && echo "${p#/proc/}"
    done
    return 0
}

t_slots() {
    local pids p n=0 i
    # requests at once, so that mod_fcgid starts more than one copy
    for i in $(seq 1 3); do
        for _ in 1 2 3 4 5 6; do
            curl -s -o /dev/null -H "Authorization: Bearer $API_KEY" "$BASE_URL/v1/credits" &
        done
        wait
        [ "$(api_pids | wc -l)" -ge 2 ] && break
        sleep 1
    done
    pids=$(api_pids)
    [ -n "$pids" ] || { it_fail "no svc-api process of $prefix runs"; return 1; }
    for p in $pids; do
        n=$((n + 1))
        expect_eq "owner of svc-api $p" "$user" "$(stat -c %U "/proc/$p")" || return 1
        ls -l "/proc/$p/fd" 2>/dev/null | grep -q -- "-> $run/svc-api.slots\$" ||
            { it_fail "svc-api $p does not hold $run/svc-api.slots"; return 1; }
    done
    it_log "$n svc-api processes share $run/svc-api.slots"
    expect_eq "owner of the slot file" "$user" "$(stat -c %U "$run/svc-api.slots")" || return 1
    ! grep -q 'event=slots_unshared' "$log" || it_fail "svc-api logged slots_unshared with run_dir set"
}
t_case "every svc-api that mod_fcgid started runs as the user and shares run_dir/svc-api.slots" t_slots

t_bulk() {
    local job st i
    http POST /v1/verify/bulk '{"emails":["accepted_email@sandbox.svc.example","rejected_email@sandbox.svc.example","role_based@sandbox.svc.example","x@sandbox.svc.example","accepted_email@sandbox.svc.example"]}' || return 1
    expect_status 202 && expect_json .total_emails 4 || return 1
    job=$(json .job_id)
    # cron: one run a "minute"
    for i in $(seq 1 20); do
        cron_run || { it_fail "cron run $i failed: $(tail -n 5 "$IT_DIR/cron.out")"; return 1; }
        http GET "/v1/jobs/$job" || return 1
        st=$(json .status)
        [ "$st" = completed ] && break
        sleep 1
    done
    expect_eq "job status after $i cron runs" completed "$st" || return 1
    http GET "/v1/jobs/$job/results" || return 1
    expect_status 200 && expect_json .total 4 || return 1
    expect_jq '[.results[] | select(.email == "rejected_email@sandbox.svc.example") | .status] == ["undeliverable"]' || return 1
    [ ! -s "$IT_DIR/cron.out" ] || it_fail "cron runs printed something (cron mails it): $(head -n 3 "$IT_DIR/cron.out")"
}
t_case "a bulk job through Apache is completed by cron-style svc-worker --once runs" t_bulk

# ---- runs that do not end by themselves: every MX lookup goes to a
# resolver that never answers
t_overlap() {
    local bh a a_job b t0 t1 job emails i rc
    # a UDP socket that is never read: no answer, no ICMP error
    stack_proc_start "$IT_DIR" blackhole python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
time.sleep(3600)' || return 1
    for _ in $(seq 1 50); do [ -s "$IT_DIR/blackhole.log" ] && break; sleep 0.1; done
    bh=$(head -n 1 "$IT_DIR/blackhole.log")
    as_user sh -c "cat >> '$conf'" <<EOF
dns_resolver = 127.0.0.1:$bh
dns_timeout_ms = 6000
worker_once_seconds = 3
EOF
    emails=$(for i in $(seq 1 40); do printf '"u%d@d%d.svc-hosting.net",' "$i" "$i"; done)
    http POST /v1/verify/bulk "{\"emails\":[${emails%,}]}" || return 1
    expect_status 202 || return 1
    job=$(json .job_id)
    t0=$(date +%s)
    # shellcheck disable=SC2016
    as_user timeout 60 sh -c 'echo $$; exec '"$CRON_LINE" > "$IT_DIR/a.out" 2>&1 & a_job=$!
    for _ in $(seq 1 50); do [ -s "$IT_DIR/a.out" ] && break; sleep 0.1; done
    a=$(head -n 1 "$IT_DIR/a.out")
    # B once A has taken the lock
    for _ in $(seq 1 100); do
        grep -q "svc-worker\[$a\] level=info event=started mode=once lock=$run/svc-worker.lock" "$log" && break
        sleep 0.1
    done
    rc=0
    # shellcheck disable=SC2016
    as_user timeout 10 sh -c 'echo $$; exec '"$CRON_LINE" > "$IT_DIR/b.out" 2>&1 || rc=$?
    b=$(head -n 1 "$IT_DIR/b.out")
    t1=$(date +%s)
    expect_eq "exit status of the run that found the lock" 0 "$rc"
    stack_alive "$a" || it_fail "the first run had ended before the second one did (after $((t1 - t0)) s)"
    grep -q "svc-worker\[$b\] level=info event=once_skipped reason=locked lock=$run/svc-worker.lock" "$log" ||
        it_fail "the second run did not log once_skipped"
    grep "svc-worker\[$b\]" "$log" | grep -qv 'event=once_skipped' &&
        it_fail "the second run did more than skip: $(grep "svc-worker\[$b\]" "$log" | head -n 3)"
    expect_eq "output of the second run" "$b" "$(cat "$IT_DIR/b.out")"
    wait "$a_job" || it_fail "the first run failed: $(tail -n 5 "$IT_DIR/a.out")"
    t1=$(date +%s)
    it_log "the first run took $((t1 - t0)) s with worker_once_seconds = 3"
    # the budget, then at most ONCE_DNS_GRACE_MS (2 s) for the lookups under
    # way, which would take 2 tries of dns_timeout_ms (12 s) otherwise
    [ $((t1 - t0)) -le 8 ] || it_fail "the first run took $((t1 - t0)) s, not about worker_once_seconds (3)"
    grep -q "svc-worker\[$a\] level=info event=once_budget_spent seconds=3" "$log" ||
        it_fail "no once_budget_spent in the log"
    expect_eq "job status after the first run" processing "$(it_sql "SELECT status FROM jobs WHERE id = '$job'")"
    expect_eq "chunks still leased after the run" 0 \
        "$(it_sql "SELECT COUNT(*) FROM job_chunks WHERE job_id = '$job' AND state = 'leased'")"
    stack_proc_stop "$IT_DIR" blackhole
}
t_case "cron runs never overlap (the second exits at once) and a run ends at worker_once_seconds, giving its chunks back" t_overlap

t_stopped() {
    local left
    stack_apache_stop "$IT_DIR/apache"
    left=$(api_pids)
    [ -z "$left" ] || it_fail "svc-api processes left: $left"
    ! stack_port_open "$HTTP_PORT" || it_fail "port $HTTP_PORT still open"
}
t_case "Apache stops with every svc-api it started" t_stopped

t_done
