#!/bin/bash
# test_stack.sh: the local stack of contrib/stack.sh comes up and goes down
# with nothing left running: a private MariaDB with the svc schema, lighttpd
# and Apache (mod_fcgid) serving the fcgi-conf snippets as a sysadmin would
# include them, first with a FastCGI echo program, then with svc-api.
# Its answers come from fcgi_echo (the snippets tested apart from svc-api)
# as well as svc-api: not held to src/api/openapi.yaml (the other scripts
# hold every svc-api answer to it).
SVC_TEST_OPENAPI=0
# the datadir made from nothing here, not copied from the suite's template
# (lib.sh): this is the test of stack_mariadb_init and the first migrate
IT_DB_FRESH=1
. "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"

it_require lighttpd apache2 mariadbd python3 jq
ECHO=$top_builddir/tests/integration/fcgi_echo
API=$top_builddir/src/api/svc-api
WORKER=$top_builddir/src/worker/svc-worker
for p in "$ECHO" "$API" "$WORKER"; do
    [ -x "$p" ] || it_skip "$p is not built (make check builds it)"
done

it_stack_start --db-only
# programs run by Apache's www-data must not live under a private home
install -m 0755 "$ECHO" "$IT_DIR/fcgi_echo"

t_mariadb_answers() {
    local pw got
    pw=$(cat "$IT_DIR/mariadb/db-password")
    got=$(mariadb --no-defaults --socket="$DB_SOCKET" -usvc -p"$pw" -N -B svc -e 'SELECT CURRENT_USER()') || return 1
    expect_eq "user over the socket" "svc@localhost" "$got"
    got=$(mariadb --no-defaults -h 127.0.0.1 -P "$STACK_DB_PORT" -usvc -p"$pw" -N -B svc -e 'SELECT CURRENT_USER()') || return 1
    expect_eq "user over TCP" "svc@127.0.0.1" "$got"
    got=$(it_sql "SELECT @@bind_address, @@skip_name_resolve")
    expect_eq "bind address and name resolution" "127.0.0.1	1" "$got"
}
t_case "MariaDB answers as user svc on its socket and on 127.0.0.1 only" t_mariadb_answers

t_migrated() {
    local n
    n=$(it_sql "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'svc'")
    [ "$n" -gt 0 ] || it_fail "no tables in database svc after migrate"
    svcadm db migrate --sql-dir "$top_srcdir/sql" > "$IT_DIR/migrate2.log" 2>&1 ||
        it_fail "second migrate failed: $(cat "$IT_DIR/migrate2.log")"
    expect_eq "tables after a second migrate" "$n" \
        "$(it_sql "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'svc'")"
}
t_case "svcadm db migrate creates the schema and a second run changes nothing" t_migrated

t_galera_safe_schema() {
    local nopk
    # Galera replicates rows by primary key: every table needs one
    nopk=$(it_sql "SELECT t.table_name FROM information_schema.tables t
        LEFT JOIN information_schema.table_constraints c
          ON c.table_schema = t.table_schema AND c.table_name = t.table_name
         AND c.constraint_type = 'PRIMARY KEY'
        WHERE t.table_schema = 'svc' AND t.table_type = 'BASE TABLE'
          AND c.constraint_name IS NULL" | paste -sd' ' -)
    expect_eq "tables without a primary key" "" "$nopk"
    # the migration lock is a row (GET_LOCK is one node's): held for the
    # whole of --wait, it refuses
    it_sql "INSERT INTO schema_version (version, applied_at) VALUES (-1, UTC_TIMESTAMP(3))"
    if svcadm db migrate --sql-dir "$top_srcdir/sql" --wait 0 > "$IT_DIR/migrate3.log" 2>&1; then
        it_fail "migrate ran while another held the lock"
    fi
    grep -q "another migration holds the lock" "$IT_DIR/migrate3.log" ||
        it_fail "migrate under a held lock: $(cat "$IT_DIR/migrate3.log")"
    # a lock row left by a migration that died long ago is taken over
    it_sql "UPDATE schema_version SET applied_at = UTC_TIMESTAMP(3) - INTERVAL 31 MINUTE WHERE version = -1"
    svcadm db migrate --sql-dir "$top_srcdir/sql" > "$IT_DIR/migrate3.log" 2>&1 ||
        it_fail "migrate after a stale lock failed: $(cat "$IT_DIR/migrate3.log")"
    expect_eq "lock rows left after migrate" 0 "$(it_sql "SELECT COUNT(*) FROM schema_version WHERE version < 1")"
}
t_case "every table has a primary key (Galera); the migration lock is a schema_version row, refused while held, a stale one taken over" t_galera_safe_schema

# race_sql SQL: SQL as root on the database svc_race
race_sql() { stack_mariadb_sql "$IT_DIR/mariadb" -N -B svc_race -e "$1"; }
race_waiting() {
    [ "$(it_sql "SELECT COUNT(*) FROM information_schema.processlist
        WHERE db = 'svc_race' AND user = 'svc' AND state LIKE 'Waiting for%lock%'")" = 2 ]
}
ftwrl_held() {
    [ -n "$(it_sql "SELECT id FROM information_schema.processlist WHERE info = 'SELECT SLEEP(600)'")" ]
}

t_migrate_race() {
    local conf=$IT_DIR/race.conf holder p1 p2 rc1=0 rc2=0 files want tables
    it_sql "CREATE DATABASE svc_race CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
        GRANT ALL PRIVILEGES ON svc_race.* TO 'svc'@'localhost'"
    sed 's/^db_name = .*/db_name = svc_race/' "$SVC_CONF" > "$conf"
    # both meet at their first DDL at the same moment: a global read lock
    # holds every DDL back until both wait for it, then lets them go at once
    stack_mariadb_sql "$IT_DIR/mariadb" -e 'FLUSH TABLES WITH READ LOCK; SELECT SLEEP(600)' \
        > /dev/null 2>&1 &
    holder=$!
    it_wait_until 30 "for the global read lock" ftwrl_held || return 1
    "$top_builddir/src/admin/svcadm" -c "$conf" db migrate --sql-dir "$top_srcdir/sql" \
        > "$IT_DIR/race1.log" 2>&1 &
    p1=$!
    "$top_builddir/src/admin/svcadm" -c "$conf" db migrate --sql-dir "$top_srcdir/sql" \
        > "$IT_DIR/race2.log" 2>&1 &
    p2=$!
    it_wait_until 30 "for both migrations to wait at their first DDL" race_waiting ||
        { kill "$holder" "$p1" "$p2"; return 1; }
    it_sql "KILL $(it_sql "SELECT id FROM information_schema.processlist WHERE info = 'SELECT SLEEP(600)'")"
    wait "$holder" || :
    wait "$p1" || rc1=$?
    wait "$p2" || rc2=$?
    expect_eq "exit statuses of the two migrations" "0 0" "$rc1 $rc2" ||
        { sed 's/^/# /' "$IT_DIR/race1.log" "$IT_DIR/race2.log"; return 1; }
    files=$(find "$top_srcdir/sql" -name '[0-9][0-9][0-9]_*.sql' | wc -l)
    # one applied every file, the other waited for it and found nothing
    expect_eq "migrations applied by each (sorted)" "0 $files" \
        "$(sed -n 's/^schema at version [0-9]* (\([0-9]*\) applied)$/\1/p' "$IT_DIR/race1.log" "$IT_DIR/race2.log" | sort -n | paste -sd' ' -)"
    expect_eq "migrations that waited for the other" 1 \
        "$(cat "$IT_DIR/race1.log" "$IT_DIR/race2.log" | grep -c '^waiting up to 60 s for another migration')"
    want=$(build_schema)
    expect_eq "versions recorded, the highest, lock rows left" "$files $want 0" \
        "$(race_sql "SELECT SUM(version > 0), MAX(version), SUM(version < 1) FROM schema_version" | tr '\t' ' ')"
    tables=$(it_sql "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'svc'")
    expect_eq "tables in svc_race as in svc" "$tables" \
        "$(it_sql "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'svc_race'")"
    it_sql "DROP DATABASE svc_race"
}
t_case "two svcadm db migrate started at once on an empty database both succeed: one applies every migration (each recorded once), the other waits for it and finds nothing to do" t_migrate_race

t_db_idempotent() {
    local pw
    pw=$(cat "$IT_DIR/mariadb/db-password")
    stack_mariadb_init "$IT_DIR/mariadb" || return 1
    stack_mariadb_start "$IT_DIR/mariadb" || return 1
    stack_mariadb_create_db "$IT_DIR/mariadb" || return 1
    expect_eq "password kept" "$pw" "$STACK_DB_PASSWORD"
    expect_eq "mariadbd processes for this datadir" 1 "$(pgrep -fc -- "--defaults-file=$IT_DIR/mariadb/my.cnf")"
}
t_case "initialising, starting and creating the database again changes nothing" t_db_idempotent

t_port_taken_at_bind() {
    local old new holder rc
    stack_mariadb_stop "$IT_DIR/mariadb" || return 1
    # a port handed out, then bound by another program without listening:
    # a connect finds it free (as when the bind comes after the check), and
    # mariadbd's bind fails with "Address already in use"
    old=$(stack_free_port) || return 1
    python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); print("bound", flush=True); time.sleep(600)' "$old" > "$IT_DIR/holder.out" 2>&1 &
    holder=$!
    for _ in $(seq 1 100); do grep -q bound "$IT_DIR/holder.out" && break; sleep 0.1; done
    echo "$old" > "$IT_DIR/mariadb/port"
    stack_mariadb_write_cnf "$IT_DIR/mariadb" "$old"
    stack_mariadb_start "$IT_DIR/mariadb"; rc=$?
    kill "$holder"; wait "$holder" 2>/dev/null
    grep -q bound "$IT_DIR/holder.out" || { it_fail "the port holder did not start: $(cat "$IT_DIR/holder.out")"; return 1; }
    [ "$rc" = 0 ] || { it_fail "mariadbd did not start on another port"; return 1; }
    new=$(cat "$IT_DIR/mariadb/port")
    [ "$new" != "$old" ] || { it_fail "the port did not change ($old)"; return 1; }
    expect_eq "answers on 127.0.0.1:$new" 1 "$(mariadb --no-defaults -h 127.0.0.1 -P "$new" -u "$STACK_DB_USER" -p"$STACK_DB_PASSWORD" -N -B -e 'SELECT 1' 2>&1)"
}
t_case "a port taken between the pick and mariadbd's bind: it starts again on another port" t_port_taken_at_bind

# web_server_checks NAME: the FastCGI program behind BASE_URL gets what svc-api needs
web_server_checks() {
    local name=$1 want_conf=$2
    API_KEY=secret-123 http POST '/v1/verify?x=1' '{"email":"a@b.c"}' -H 'Idempotency-Key: k-1' || return 1
    expect_status 200
    expect_header X-Request-Id
    printf '%s\n' "$HTTP_BODY" | grep -qx 'HTTP_AUTHORIZATION=Bearer secret-123' ||
        it_fail "$name: Authorization did not reach the program: $HTTP_BODY"
    printf '%s\n' "$HTTP_BODY" | grep -qx 'HTTP_IDEMPOTENCY_KEY=k-1' ||
        it_fail "$name: Idempotency-Key did not reach the program"
    printf '%s\n' "$HTTP_BODY" | grep -qx 'REQUEST_URI=/v1/verify?x=1' ||
        it_fail "$name: REQUEST_URI is not the client's path"
    printf '%s\n' "$HTTP_BODY" | grep -qx "SVC_CONF=$want_conf" ||
        it_fail "$name: SVC_CONF is not $want_conf: $(printf '%s\n' "$HTTP_BODY" | grep SVC_CONF)"
    printf '%s\n' "$HTTP_BODY" | grep -qx 'BODY_BYTES=17' ||
        it_fail "$name: body not passed whole"
    http GET /rate-limit || return 1
    expect_status 200
    printf '%s\n' "$HTTP_BODY" | grep -qx 'REQUEST_URI=/rate-limit' ||
        it_fail "$name: /rate-limit not mapped to the program"
    # 64 MiB, the largest body the API takes (POST /v1/verify/batch)
    head -c 67108864 /dev/zero > "$IT_DIR/big"
    http POST /v1/verify/batch '' --data-binary "@$IT_DIR/big" -H 'Content-Type: application/json' || return 1
    expect_status 200
    printf '%s\n' "$HTTP_BODY" | grep -qx 'BODY_BYTES=67108864' ||
        it_fail "$name: 64 MiB body not passed whole: $(printf '%s\n' "$HTTP_BODY" | grep BODY_BYTES)"
    rm -f "$IT_DIR/big"
}

t_lighttpd_echo() {
    local port
    port=$(stack_free_port) || return 1
    stack_lighttpd_start "$IT_DIR/lighttpd-echo" "$port" "$IT_DIR/fcgi_echo" /etc/svc-test.conf || return 1
    BASE_URL=http://127.0.0.1:$port web_server_checks lighttpd /etc/svc-test.conf
    stack_lighttpd_stop "$IT_DIR/lighttpd-echo"
    ! stack_port_open "$port" || it_fail "lighttpd still listens on $port"
}
t_case "lighttpd with fcgi-conf/lighttpd-svc.conf passes paths, headers, SVC_CONF and 64 MiB bodies" t_lighttpd_echo

t_apache_echo() {
    local port
    port=$(stack_free_port) || return 1
    stack_apache_start "$IT_DIR/apache-echo" "$port" "$IT_DIR/fcgi_echo" /etc/svc-test.conf || return 1
    BASE_URL=http://127.0.0.1:$port web_server_checks apache /etc/svc-test.conf
    BASE_URL=http://127.0.0.1:$port http GET /index.html || return 1
    expect_status 404
    stack_apache_stop "$IT_DIR/apache-echo"
    ! stack_port_open "$port" || it_fail "apache2 still listens on $port"
}
t_case "Apache with fcgi-conf/apache-svc.conf (mod_fcgid) passes paths, headers, SVC_CONF and 64 MiB bodies" t_apache_echo

# ---- svc-api itself
HTTP_PORT=$(stack_free_port)
BASE_URL=http://127.0.0.1:$HTTP_PORT
sed -i "s|^base_url = .*|base_url = $BASE_URL|" "$SVC_CONF"

t_lighttpd_api() {
    stack_lighttpd_start "$IT_DIR/lighttpd" "$HTTP_PORT" "$API" "$SVC_CONF" || return 1
    API_KEY='' http GET /rate-limit || return 1
    expect_status 200
    expect_header X-Request-Id
    expect_json .success true
    API_KEY='' http GET /v1/credits || return 1
    expect_status 401
    expect_json .error.code unauthorized
    ACCOUNT=$(svcadm account create --email stack@example.com --tier pro --credits 7) ||
        { it_fail "svcadm account create failed"; return 1; }
    API_KEY=$(svcadm key create --account "$ACCOUNT" --scopes '*' 2>/dev/null) ||
        { it_fail "svcadm key create failed"; return 1; }
    http GET /v1/credits || return 1
    expect_status 200
    expect_json .balance 7
    # a prefork master shares its responders' places without run_dir
    ! grep -q 'event=slots_unshared' "$IT_DIR/log/svc.log" ||
        it_fail "svc-api under lighttpd warns of unshared slots"
}
t_case "lighttpd spawns svc-api: /rate-limit, 401 without a key, credits with one" t_lighttpd_api

t_apache_api() {
    local port out dir=$IT_DIR/www
    port=$(stack_free_port) || return 1
    # svc-api runs as www-data under Apache: its own readable copies
    mkdir -p "$dir/log"
    install -m 0755 "$API" "$dir/svc-api"
    install -m 0600 -o www-data "$IT_DIR/mariadb/db-password" "$dir/db-password"
    install -m 0600 -o www-data "$IT_DIR/cache_hash_key" "$dir/cache_hash_key"
    sed -e "s|^db_password_file = .*|db_password_file = $dir/db-password|" \
        -e "s|^cache_hash_key_file = .*|cache_hash_key_file = $dir/cache_hash_key|" \
        -e "s|^log_file = .*|log_file = $dir/log/svc.log|" \
        -e "s|^base_url = .*|base_url = http://127.0.0.1:$port|" "$SVC_CONF" > "$dir/svc.conf"
    chown -R www-data "$dir/log" "$dir/svc.conf"
    chmod 0600 "$dir/svc.conf"
    stack_apache_start "$IT_DIR/apache" "$port" "$dir/svc-api" "$dir/svc.conf" || return 1
    BASE_URL=http://127.0.0.1:$port http GET /v1/credits || return 1
    expect_status 200
    expect_json .balance 7
    expect_header X-Request-Id
    BASE_URL=http://127.0.0.1:$port API_KEY='' http GET /rate-limit || return 1
    expect_status 200
    # a multipart upload without Content-Length (chunked): mod_fcgid counts
    # it, the snippet marks it, svc-api answers 411
    printf 'a@b.example\n' > "$IT_DIR/one.txt"
    BASE_URL=http://127.0.0.1:$port http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/one.txt" \
        -H 'Transfer-Encoding: chunked' || return 1
    expect_status 411 && expect_json .error.code length_required || return 1
    BASE_URL=http://127.0.0.1:$port http POST /v1/verify/bulk/upload "" -F "file=@$IT_DIR/one.txt" -F preview=true || return 1
    expect_status 202 || return 1
    # a Content-Length over the limit: 413 with the JSON error before the body
    out=$(python3 "$top_srcdir/tests/integration/slow_client.py" early 127.0.0.1 "$port" \
        /v1/verify/bulk/upload "$API_KEY" 60000000 5)
    expect_eq "status line" "HTTP/1.1 413 Request Entity Too Large" "$(printf '%s\n' "$out" | sed -n 1p)" || return 1
    expect_eq "Content-Type" "application/json" "$(printf '%s\n' "$out" | sed -n 2p)" || return 1
    expect_eq "error code and limit" "file_too_large 53477376" \
        "$(printf '%s\n' "$out" | sed -n '3,$p' | jq -r '.error.code + " " + (.error.details.limit_bytes | tostring)')" || return 1
    # no run_dir: each copy mod_fcgid starts has places of its own, and says so
    grep -q 'level=warn event=slots_unshared' "$dir/log/svc.log" ||
        it_fail "svc-api under mod_fcgid without run_dir does not warn of unshared slots"
    stack_apache_stop "$IT_DIR/apache"
}
t_case "Apache with mod_fcgid runs svc-api as www-data: credits with a key; a chunked upload is 411, one announced over the limit 413 (JSON) before its body; without run_dir it warns that its slots are its own" t_apache_api

t_worker() {
    local pid
    stack_proc_start "$IT_DIR" svc-worker "$WORKER" -c "$SVC_CONF" || return 1
    pid=$(stack_pidfile_pid "$IT_DIR/svc-worker.pid") || { it_fail "no pid file"; return 1; }
    stack_alive "$pid" || it_fail "svc-worker $pid does not run"
    # a second start reuses the running one
    stack_proc_start "$IT_DIR" svc-worker "$WORKER" -c "$SVC_CONF" || return 1
    expect_eq "svc-worker pid after a second start" "$pid" "$(stack_pidfile_pid "$IT_DIR/svc-worker.pid")"
    expect_eq "svc-worker processes" 1 "$(pgrep -fc -- "$WORKER -c $SVC_CONF")"
}
t_case "svc-worker runs in the background from a pid file, once" t_worker

t_all_gone() {
    local left
    stack_stop_all
    left=$(pgrep -af -- "$IT_DIR" || true)
    [ -z "$left" ] || it_fail "still running: $left"
    [ -z "${HTTP_PORT:-}" ] || ! stack_port_open "$HTTP_PORT" || it_fail "port $HTTP_PORT still open"
    ! stack_port_open "$STACK_DB_PORT" || it_fail "MariaDB port $STACK_DB_PORT still open"
    [ ! -e "$DB_SOCKET" ] || it_fail "MariaDB socket $DB_SOCKET still there"
}
t_case "stack_stop_all leaves no process, port or socket behind" t_all_gone

t_done
