# lib.sh: helpers for the integration test scripts (bash). Sourced first thing:
#
#   . "${top_srcdir:-$(dirname "$0")/../..}/tests/integration/lib.sh"
#   it_stack_start                # MariaDB + migrate + lighttpd spawning svc-api
#   ACCOUNT=$(svcadm account create --email a@example.com --tier pro --credits 10)
#   API_KEY=$(svcadm key create --account "$ACCOUNT" --scopes '*')
#   t_credits() { http GET /v1/credits; expect_status 200; expect_json .balance 10; }
#   t_case "credits show the granted balance" t_credits
#   t_done                        # "N passed, M failed", exit status
#
# Everything runs in a fresh mktemp -d directory (IT_DIR) on 127.0.0.1 with
# free ports; an EXIT trap stops every server, even when the script fails.
# make check exports top_srcdir and top_builddir (absolute); run by hand from
# the source tree, both default to it. SVC_TEST_KEEP=1 keeps IT_DIR (and
# SVC_TEST_KEEP=failed keeps it when the script fails), for reading the logs.
# Scripts exit 77 (skipped, "SKIP: reason" in their log) when not root, a
# server package is missing or a program is not built: see it_skip; with
# SVC_TEST_NO_SKIP=1 (contrib/run-tests, CI) that is a failure instead.

set -eu
umask 022
# sleep as a builtin (Debian's bash-builtins, installed by install-deps):
# the scripts wait in loops of short sleeps, thousands a run, and each
# external sleep is a fork and an exec; without the package, /bin/sleep
enable -f sleep sleep 2> /dev/null || :

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
export top_srcdir top_builddir

# shellcheck source=../../contrib/stack.sh
. "$top_srcdir/contrib/stack.sh"

IT_NAME=$(basename "$0" .sh)
IT_T0=$EPOCHREALTIME
IT_PASSED=0
IT_FAILED=0
IT_N=0
IT_CASE_FAILED=0
IT_STACK=no
API_KEY=${API_KEY:-}

# it_skip REASON: the script cannot run here: exit 77, which make check
# counts as skipped and its banner (tests/list-skips) lists with REASON.
# With SVC_TEST_NO_SKIP=1 (what contrib/run-tests sets) a skip is a failure.
# Every "cannot run" goes through here: no case is left out quietly.
it_skip() {
    if [ "${SVC_TEST_NO_SKIP:-0}" = 1 ]; then
        echo "FAIL: $IT_NAME: cannot run here: $* (SVC_TEST_NO_SKIP=1 makes a skip a failure)"
        exit 1
    fi
    echo "SKIP: $IT_NAME: $*"
    exit 77
}

# it_require CMD...: skip the script unless each program is installed.
it_require() {
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null 2>&1 || [ -x "/usr/sbin/$c" ] ||
            it_skip "$c is not installed (run contrib/install-deps)"
    done
}

[ "$(id -u)" = 0 ] || it_skip "integration tests start MariaDB and web servers as root"
it_require curl jq

IT_DIR=$(mktemp -d "${TMPDIR:-/tmp}/svc-$IT_NAME.XXXXXX")
# www-data (Apache's FastCGI processes) must be able to reach files in here
chmod 0755 "$IT_DIR"

# it_cleanup [STATUS]: the EXIT trap (STATUS: the script's, when another
# trap calls it after doing its own part).
it_cleanup() {
    local rc=${1:-$?}
    stack_stop_all
    if [ "${SVC_TEST_KEEP:-0}" = 1 ] ||
            { [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ "${SVC_TEST_KEEP:-}" = failed ]; }; then
        echo "# kept $IT_DIR"
    else
        rm -rf "$IT_DIR"
    fi
    return "$rc"
}
trap it_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

it_log() { echo "# $*"; }

# ---------------------------------------------------------------- the stack

# it_conf_add "name = value": extra svc.conf lines for it_stack_start (call before).
# IT_API_WORKERS: responder processes (default 2); IT_LOG_LEVEL: svc.conf's
# log_level (default debug); IT_SVC_API: the svc-api that lighttpd spawns
# (default the built one; the benchmarks bench another with BENCH_SVC_API).
IT_CONF_EXTRA=
it_conf_add() { IT_CONF_EXTRA="$IT_CONF_EXTRA$*
"; }

# The datadir every script's MariaDB starts from: made once per build tree
# by it_db_template (mariadb-install-db, the database and user, svcadm db
# migrate, a clean shutdown) and copied by it_db_from_template, instead of
# a mariadb-install-db and every migration in each script (about 5 s of a
# busy machine each). It is keyed by what could change it (the migrations,
# svcadm, contrib/stack.sh, the server's version), so an edit makes a new
# one; made under a lock, as make -jN check starts several scripts at once.
# IT_DB_FRESH=1 (test_stack.sh) makes the datadir from nothing instead.
IT_DB_TEMPLATES=$top_builddir/tests/integration/db-template

# it_db_template: print the template's folder (made first if need be)
it_db_template() {
    local key dir tmp rc=0 lock
    key=$({ cat "$top_srcdir"/sql/*.sql "$top_srcdir/contrib/stack.sh"
            stat -c '%s %Y' "$top_builddir/src/admin/svcadm"
            "$(stack_mariadb_bin)" --version; } | cksum | tr ' ' -)
    dir=$IT_DB_TEMPLATES/$key
    mkdir -p "$IT_DB_TEMPLATES"
    exec {lock}> "$IT_DB_TEMPLATES/lock"
    flock "$lock"
    if [ ! -d "$dir" ]; then
        # this runs in $(...): stop the server made here if killed midway
        trap stack_stop_all EXIT
        tmp=$IT_DB_TEMPLATES/making.$$
        rm -rf "$IT_DB_TEMPLATES"/making.* && mkdir -p "$tmp" &&
            (umask 077; cat > "$tmp/svc.conf" <<EOF
db_host = localhost
db_socket = $tmp/mariadb/mariadb.sock
db_name = svc
db_user = svc
db_password_file = $tmp/mariadb/db-password
cache_hash_key_file = $tmp/cache_hash_key
log_file = $tmp/svc.log
EOF
) && stack_mariadb_init "$tmp/mariadb" >&2 && stack_mariadb_start "$tmp/mariadb" >&2 &&
            stack_mariadb_create_db "$tmp/mariadb" >&2 &&
            "$top_builddir/src/admin/svcadm" -c "$tmp/svc.conf" db migrate \
                --sql-dir "$top_srcdir/sql" > "$tmp/migrate.log" 2>&1 || rc=1
        stack_mariadb_stop "$tmp/mariadb" >&2
        if [ $rc = 0 ]; then
            find "$IT_DB_TEMPLATES" -mindepth 1 -maxdepth 1 -type d ! -name "making.*" -exec rm -rf {} +
            mkdir -p "$dir" && mv "$tmp/mariadb/data" "$tmp/mariadb/db-password" "$dir/" || rc=1
        else
            cat "$tmp/migrate.log" >&2
        fi
        rm -rf "$tmp"
        trap - EXIT
    fi
    exec {lock}>&-
    [ $rc = 0 ] && echo "$dir"
}

# it_db_from_template DIR: DIR/my.cnf on a free port, with the template's
# datadir (a sparse copy: 8 MB of its 100) and password
it_db_from_template() {
    local tpl dir=$1 port
    tpl=$(it_db_template) || { echo "Bail out! making the MariaDB template datadir failed"; exit 1; }
    mkdir -p "$dir/tmp"
    port=$(stack_free_port)
    echo "$port" > "$dir/port"
    stack_mariadb_write_cnf "$dir" "$port"
    cp -a --sparse=always "$tpl/data" "$dir/data"
    cp -p "$tpl/db-password" "$dir/db-password"
}

# it_stack_start: MariaDB in IT_DIR/mariadb with database and user svc,
# IT_DIR/svc.conf, "svcadm db migrate" with the source tree's sql/, lighttpd on
# a free port spawning the built src/api/svc-api (it_api_start). Exports
# SVC_CONF, BASE_URL, HTTP_PORT, DB_SOCKET. With --db-only it stops after the
# migration (it_api_start starts lighttpd later, once SVC_CONF is as wanted).
it_stack_start() {
    it_require mariadbd mariadb-install-db mariadb lighttpd
    if [ "${1:-}" != --db-only ]; then
        [ -x "$(it_api)" ] || it_skip "$(it_api) is not built"
    fi
    [ -x "$top_builddir/src/admin/svcadm" ] || it_skip "src/admin/svcadm is not built"
    if [ "${IT_DB_FRESH:-0}" = 1 ]; then
        stack_mariadb_init "$IT_DIR/mariadb"
    else
        it_db_from_template "$IT_DIR/mariadb"
    fi
    stack_mariadb_start "$IT_DIR/mariadb"
    stack_mariadb_create_db "$IT_DIR/mariadb"
    IT_STACK=yes
    HTTP_PORT=$(stack_free_port)
    BASE_URL=http://127.0.0.1:$HTTP_PORT
    DB_SOCKET=$STACK_DB_SOCKET
    SVC_CONF=$IT_DIR/svc.conf
    mkdir -p "$IT_DIR/log"
    (umask 077; cat > "$SVC_CONF" <<EOF
# svc.conf for $IT_NAME, written by tests/integration/lib.sh
db_host = localhost
db_socket = $STACK_DB_SOCKET
db_name = svc
db_user = svc
db_password_file = $IT_DIR/mariadb/db-password
cache_hash_key_file = $IT_DIR/cache_hash_key
base_url = $BASE_URL
log_level = ${IT_LOG_LEVEL:-debug}
log_file = $IT_DIR/log/svc.log
api_workers = ${IT_API_WORKERS:-2}
$IT_CONF_EXTRA
EOF
)
    export SVC_CONF BASE_URL HTTP_PORT DB_SOCKET
    if ! svcadm db migrate --sql-dir "$top_srcdir/sql" > "$IT_DIR/migrate.log" 2>&1; then
        cat "$IT_DIR/migrate.log" >&2
        echo "Bail out! svcadm db migrate failed"
        exit 1
    fi
    [ "${1:-}" = --db-only ] && return 0
    it_api_start
}

# it_api: the svc-api lighttpd spawns (IT_SVC_API, else the built one).
it_api() { echo "${IT_SVC_API:-$top_builddir/src/api/svc-api}"; }

# it_api_start: lighttpd in IT_DIR/lighttpd on HTTP_PORT spawning svc-api on
# SVC_CONF (after it_stack_start --db-only, or again after stopping it with
# stack_lighttpd_stop "$IT_DIR/lighttpd" to read a changed SVC_CONF).
it_api_start() {
    [ -x "$(it_api)" ] || it_skip "$(it_api) is not built"
    stack_lighttpd_start "$IT_DIR/lighttpd" "$HTTP_PORT" "$(it_api)" "$SVC_CONF" ||
        { echo "Bail out! lighttpd with svc-api did not start"; it_show_logs; exit 1; }
}

# svcadm ARGS...: the built svcadm on this test's svc.conf.
svcadm() {
    "$top_builddir/src/admin/svcadm" -c "$SVC_CONF" "$@"
}

# it_worker_once: one pass of the built svc-worker on this test's svc.conf.
it_worker_once() {
    timeout 120 "$top_builddir/src/worker/svc-worker" -c "$SVC_CONF" --once \
        >> "$IT_DIR/log/worker-stderr.log" 2>&1
}

# it_job_wait JOB STATUS...: run svc-worker --once until the job is in one of
# the statuses (passes 0.2 s apart, for 120 s at most).
it_job_wait() {
    local job=$1 st= end=$((SECONDS + 120))
    shift
    while :; do
        it_worker_once || { it_fail "svc-worker --once failed"; return 1; }
        st=$(it_sql "SELECT status FROM jobs WHERE id = '$job'")
        case " $* " in *" $st "*) return 0 ;; esac
        [ "$SECONDS" -lt "$end" ] || break
        sleep 0.2
    done
    it_fail "job $job is still $st, not $* (after 120 s of svc-worker --once runs)"
}

# it_sql SQL: run SQL as root on the test database, tab-separated, no headers.
it_sql() {
    stack_mariadb_sql "$IT_DIR/mariadb" -N -B svc -e "$1"
}

# it_cache_keys ADDRESS...: the verdict cache's keys (keyed hashes) of the
# addresses as an SQL list ('h1','h2'), for "WHERE address_hash IN (...)";
# "-" reads addresses from stdin.
it_cache_keys() {
    svcadm cache hash "$@" | sed "s/.*/'&'/" | paste -sd, -
}

# it_wait_until SECONDS WHAT COMMAND...: polls COMMAND until it succeeds,
# SECONDS at most (then fails saying it "waited WHAT").
it_wait_until() {
    local end=$((SECONDS + $1)) what=$2
    shift 2
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || { it_fail "waited $what"; return 1; }
        sleep 0.1
    done
}

# it_commit_drop_proxy NAME: tests/integration/commit_drop_proxy.py in
# front of this test's MariaDB (its pid in IT_PROXY_PID, its log in
# IT_DIR/NAME.out) and IT_DIR/NAME.conf, svc.conf reaching the database
# only through it. Writing a statement's text to IT_DIR/NAME.arm ("" for
# any) makes the next COMMIT of a transaction that ran it lose its answer
# ("down:TEXT": and the database then closes every other connection and
# refuses new ones until IT_DIR/NAME.arm.down is removed, as a dead node
# would; "seen:TEXT" loses nothing, it writes IT_DIR/NAME.arm.seen once
# the answer to the next prepared statement with TEXT has reached the
# client);
# it_proxy_dropped NAME counts the answers lost so far.
it_commit_drop_proxy() {
    local name=$1
    rm -f "$IT_DIR/$name.addr" "$IT_DIR/$name.arm"
    python3 "$top_srcdir/tests/integration/commit_drop_proxy.py" --ready "$IT_DIR/$name.addr" \
        --upstream "127.0.0.1:$(cat "$IT_DIR/mariadb/port")" --arm "$IT_DIR/$name.arm" \
        > "$IT_DIR/$name.out" 2>&1 &
    IT_PROXY_PID=$!
    it_wait_until 10 "for commit_drop_proxy.py to listen" test -s "$IT_DIR/$name.addr" ||
        { kill "$IT_PROXY_PID"; return 1; }
    sed -e '/^db_host = /d' -e '/^db_socket = /d' "$SVC_CONF" > "$IT_DIR/$name.conf"
    echo "db_hosts = $(cat "$IT_DIR/$name.addr")" >> "$IT_DIR/$name.conf"
}
it_proxy_dropped() { grep -c 'dropped the answer' "$IT_DIR/$1.out"; }

# it_account TIER CREDITS: create an account, print its id.
# build_schema: the schema version this build needs (src/core/db.h)
build_schema() { sed -n 's/^#define DB_SCHEMA_VERSION \([0-9]*\).*/\1/p' "$top_srcdir/src/core/db.h"; }

it_account() {
    svcadm account create --email "t$RANDOM$RANDOM@example.com" --tier "${1:-pro}" --credits "${2:-100}"
}

# it_key ACCOUNT SCOPES [svcadm key create options...]: create a key, print it.
it_key() {
    local account=$1 scopes=$2
    shift 2
    svcadm key create --account "$account" --scopes "$scopes" "$@"
}

it_show_logs() {
    local f
    for f in "$IT_DIR/log/svc.log" "$IT_DIR/lighttpd/error.log" \
            "$IT_DIR/lighttpd/backend-stderr.log" "$IT_DIR/mariadb/mariadbd.err"; do
        [ -s "$f" ] || continue
        echo "# --- last lines of $f"
        tail -n 25 "$f" | sed 's/^/# /'
    done
}

# ---------------------------------------------------------------- HTTP

HTTP_STATUS=
HTTP_BODY=
HTTP_HEADERS=
HTTP_REQUEST=
HTTP_BODY_FILE=
IT_OPENAPI_N=0

# http METHOD PATH [BODY] [CURL ARGS...]: send a request to BASE_URL, with
# "Authorization: Bearer $API_KEY" when API_KEY is set. A BODY is sent as JSON;
# "@FILE" sends a file's bytes; "" sends none. Sets HTTP_STATUS, HTTP_BODY (the
# text), HTTP_BODY_FILE (its bytes), HTTP_HEADERS (the header block,
# lower-cased names); every answer is recorded for it_openapi_check (on
# unless SVC_TEST_OPENAPI=0). Returns 1 only
# when curl itself fails (no HTTP answer).
# http() starts no process but curl: the scripts send thousands of requests
# and a fork costs milliseconds of CPU on a loaded CI machine, so the answer
# is read with read/mapfile and the header block parsed in bash, into files
# named for the call that the OpenAPI check then reads where they are.
http() {
    local method=$1 path=$2 body=${3-} out=$IT_DIR/http n record=${SVC_TEST_OPENAPI:-1}
    # a call in a background subshell keeps its answer apart, so that one
    # running at the same time does not overwrite it (nor its record)
    [ "$BASHPID" = "$$" ] || out=$IT_DIR/http.$BASHPID
    shift 2
    [ $# -gt 0 ] && shift
    [ -d "$out" ] || mkdir -p "$out"
    if [ "$record" = 1 ]; then
        # (a background subshell counts from its parent's number: its own
        # pid keeps the names apart)
        IT_OPENAPI_N=$((IT_OPENAPI_N + 1))
        n=$out/$BASHPID.$IT_OPENAPI_N
    else
        n=$out/last
    fi
    HTTP_BODY_FILE=$n.body
    local args=(-sS -X "$method" -o "$n.body" -D "$n.headers" -w '%{http_code}'
        --max-time "${HTTP_TIMEOUT:-60}")
    [ -n "$API_KEY" ] && args+=(-H "Authorization: Bearer $API_KEY")
    if [ -n "$body" ]; then
        # JSON unless the caller names its own Content-Type
        case " ${*,,} " in
        *" content-type:"*) ;;
        *) args+=(-H 'Content-Type: application/json') ;;
        esac
        args+=(--data-binary "$body")
    fi
    HTTP_REQUEST="$method $path"
    : > "$n.body"
    : > "$n.headers"
    if ! HTTP_STATUS=$(curl "${args[@]}" "$@" "$BASE_URL$path" 2> "$out/curl.err"); then
        HTTP_STATUS=000
        HTTP_BODY=
        HTTP_HEADERS=
        it_fail "$HTTP_REQUEST: curl failed: $(cat "$out/curl.err")"
        return 1
    fi
    it_read_file HTTP_BODY "$n.body"
    [ "$record" = 1 ] &&
        printf '%s\t%s\t%s\t%s\t%s\n' "$method" "$path" "$HTTP_STATUS" "$n.body" \
            "$n.headers" >> "$IT_DIR/openapi.record"
    # the last header block (after any 100 Continue), CRs removed, names
    # lower-cased
    local line name
    HTTP_HEADERS=
    while IFS= read -r line || [ -n "$line" ]; do
        line=${line%$'\r'}
        case $line in
        HTTP/*) HTTP_HEADERS=$line$'\n' ;;
        *:*) name=${line%%:*}; HTTP_HEADERS+=${name,,}:${line#*:}$'\n' ;;
        *) HTTP_HEADERS+=$line$'\n' ;;
        esac
    done < "$n.headers"
    it_chomp HTTP_HEADERS
    return 0
}

# it_read_file VAR FILE: VAR = FILE's text as $(cat FILE) gives it (NUL
# bytes left out, trailing newlines removed), without a process
it_read_file() {
    local -n it_rf_var=$1
    local it_rf_parts=()
    mapfile -d '' -t it_rf_parts < "$2"
    printf -v it_rf_var '%s' "${it_rf_parts[@]}"
    it_chomp "$1"
}

# it_chomp VAR: trailing newlines removed from VAR, as $(...) removes them
it_chomp() {
    local -n it_ch_var=$1
    while [ "${it_ch_var: -1}" = $'\n' ]; do it_ch_var=${it_ch_var:0:-1}; done
}

# it_openapi_check: one case: every answer the script received is declared
# by src/api/openapi.yaml (status, required headers, JSON body schema).
it_openapi_check() {
    local rec=$IT_DIR/openapi.record doc=$top_srcdir/src/api/openapi.json out
    [ -s "$rec" ] || return 0
    IT_N=$((IT_N + 1))
    if ! python3 -c 'import jsonschema' 2>/dev/null; then
        if [ "${SVC_TEST_NO_SKIP:-0}" = 1 ]; then
            IT_FAILED=$((IT_FAILED + 1))
            echo "not ok $IT_N - every API answer matches src/api/openapi.yaml"
            echo "#   python3-jsonschema is not installed (run contrib/install-deps)"
        else
            IT_PASSED=$((IT_PASSED + 1))
            echo "ok $IT_N - every API answer matches src/api/openapi.yaml # SKIP python3-jsonschema is not installed"
            echo "SKIP: $IT_NAME: the OpenAPI check needs python3-jsonschema"
        fi
        return 0
    fi
    if out=$(python3 "$top_srcdir/tests/integration/openapi_check.py" "$doc" "$rec" 2>&1); then
        IT_PASSED=$((IT_PASSED + 1))
        echo "ok $IT_N - every API answer matches src/api/openapi.yaml"
        printf '%s\n' "$out" | grep '^# ' || :
    else
        IT_FAILED=$((IT_FAILED + 1))
        echo "not ok $IT_N - every API answer matches src/api/openapi.yaml"
        printf '%s\n' "$out" | head -n 40 | sed 's/^/#   /'
    fi
}

# ---------------------------------------------------------------- assertions
# Each prints a clear message and marks the running case failed; it returns 1,
# so a case may stop early with "|| return 1".

it_fail() {
    IT_CASE_FAILED=1
    echo "#   FAIL: $*"
    return 1
}

it_body_excerpt() { printf '%s' "$HTTP_BODY" | head -c 600 | tr '\n' ' '; }

# expect_status CODE
expect_status() {
    [ "$HTTP_STATUS" = "$1" ] && return 0
    it_fail "$HTTP_REQUEST: expected status $1, got $HTTP_STATUS; body: $(it_body_excerpt)"
}

# jq_body FILTER: jq -r FILTER on the last body. The simplest filters (a
# path, "| length") are answered by json_path (tests/integration/json_path.c:
# jq 1.6 spends 22 ms of CPU starting, thousands of times a run); it exits 3
# on anything else, which jq then answers.
IT_JSON_PATH=$top_builddir/tests/integration/json_path
jq_body() {
    local rc=0
    it_jq_body "$1" || rc=$?
    if [ "$rc" = 0 ]; then printf '%s\n' "$IT_JQ_OUT"; else printf '%s\n' "$IT_JQ_OUT" >&2; fi
    return "$rc"
}

# it_jq_body FILTER: jq_body's answer into IT_JQ_OUT (its error message on
# failure), its status returned: expect_json asks without a subshell, and
# the body goes in as a here-string (no printf process in a pipe).
IT_JQ_OUT=
it_jq_body() {
    local rc=3
    if [ -x "$IT_JSON_PATH" ]; then
        IT_JQ_OUT=$("$IT_JSON_PATH" "$1" 2>&1 <<< "$HTTP_BODY") && return 0
        rc=$?
    fi
    [ "$rc" = 3 ] || return "$rc"
    IT_JQ_OUT=$(jq -r "$1" 2>&1 <<< "$HTTP_BODY")
}

# expect_json FILTER EXPECTED: jq -r FILTER on the body prints EXPECTED.
expect_json() {
    if ! it_jq_body "$1"; then
        it_fail "$HTTP_REQUEST: body is not JSON or filter $1 failed ($IT_JQ_OUT); body: $(it_body_excerpt)"
        return 1
    fi
    [ "$IT_JQ_OUT" = "$2" ] && return 0
    it_fail "$HTTP_REQUEST: expected $1 = $2, got $IT_JQ_OUT; body: $(it_body_excerpt)"
}

# expect_jq FILTER: jq -e FILTER on the body is true (e.g. '.score >= 0').
expect_jq() {
    jq -e "$1" >/dev/null 2>&1 <<< "$HTTP_BODY" && return 0
    it_fail "$HTTP_REQUEST: expected $1 to hold; body: $(it_body_excerpt)"
}

# expect_header NAME [VALUE]: the response carries header NAME (with VALUE).
expect_header() {
    local name=${1,,}
    if [[ $'\n'$HTTP_HEADERS != *$'\n'$name:* ]]; then
        it_fail "$HTTP_REQUEST: expected header $1; headers: ${HTTP_HEADERS//$'\n'/|}"
        return 1
    fi
    [ $# -lt 2 ] && return 0
    it_header_value "$1"
    [ "$IT_HEADER" = "$2" ] && return 0
    it_fail "$HTTP_REQUEST: expected header $1: $2, got $IT_HEADER"
}

# header_value NAME: print the value of response header NAME (first one).
header_value() { it_header_value "$1"; printf '%s\n' "$IT_HEADER"; }

# it_header_value NAME: that value into IT_HEADER (leading blanks left
# out), in bash: no process for each header looked at
it_header_value() {
    local name=${1,,} line
    IT_HEADER=
    while IFS= read -r line; do
        [[ $line == "$name:"* ]] || continue
        line=${line#*:}
        IT_HEADER=${line#"${line%%[! ]*}"}
        return 0
    done <<< "$HTTP_HEADERS"
}

# json FILTER: print jq -r FILTER of the last body (for keeping ids).
json() { jq_body "$1"; }

# expect_eq WHAT EXPECTED GOT: a plain comparison with a message.
expect_eq() {
    [ "$2" = "$3" ] && return 0
    it_fail "$1: expected $2, got $3"
}

# ---------------------------------------------------------------- cases

# t_case NAME COMMAND [ARGS...]: run one test case in this shell (state it sets
# is kept), print "ok N - NAME" or "not ok N - NAME".
t_case() {
    local name=$1
    shift
    IT_N=$((IT_N + 1))
    IT_CASE_FAILED=0
    local t0=$EPOCHREALTIME
    set +e
    "$@"
    local rc=$?
    set -e
    if [ "$rc" = 0 ] && [ "$IT_CASE_FAILED" = 0 ]; then
        IT_PASSED=$((IT_PASSED + 1))
        echo "ok $IT_N - $name"
    else
        IT_FAILED=$((IT_FAILED + 1))
        echo "not ok $IT_N - $name"
    fi
    echo "# case $IT_N took $(it_seconds_since "$t0") s"
}

# it_seconds_since T0: seconds (one decimal) from EPOCHREALTIME T0 to now;
# t_case and t_done print them, to find where a script spends its time.
it_seconds_since() {
    local now=$EPOCHREALTIME
    local us=$(( ${now/[.,]/} - ${1/[.,]/} ))
    printf '%d.%d' $((us / 1000000)) $((us % 1000000 / 100000))
}

# it_sanitizer_reports: print AddressSanitizer/UBSan reports that the
# programs under test wrote to the logs.
it_sanitizer_reports() {
    local f
    find "$IT_DIR" \( -name '*.log' -o -name '*.out' \) -type f -print 2>/dev/null |
    while IFS= read -r f; do
        grep -E -A 6 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$f" |
            head -n 12 | sed "s|^|${f#"$IT_DIR"/}: |" || true
    done
}

# it_address_lines: the lines of svc's own logs (svc.log and every log
# under a log/ folder, the web servers' error logs where svc-api's stderr
# goes) that hold a whole e-mail address of the kind the tests use
# (local@domain.tld), as "file:line: text". The MTAs', fake servers' and
# webhook receivers' logs and the svc CLI's output are not svc's logs and
# hold addresses by their nature. A log names an address's domain, never
# the address (README, "Privacy and retention").
it_address_lines() {
    local f
    find "$IT_DIR" -type f \( -path '*/log/*' -o -name 'svc.log*' -o -name 'worker*.log' \
            -o -path '*/lighttpd/*.log' -o -path '*/nginx/error.log' -o -path '*/apache*/error*.log' \) \
            ! -name 'svc-cli-*' -print 2>/dev/null |
    while IFS= read -r f; do
        # a URL's user name (socks5://user@proxy: an egress route's name)
        # is no address
        sed -E 's#([a-z0-9+]+://)[^@/ "]*@#\1#g' "$f" |
            grep -n -E -o '.{0,60}[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+([.][A-Za-z0-9-]+)+.{0,20}' |
            head -n 5 | sed "s|^|${f#"$IT_DIR"/}:|" || true
    done
}

# t_done: stop the servers (reports written at exit count too), check the
# logs for sanitizer reports and whole addresses, print "N passed, M failed", show the servers'
# logs when something failed, and return non-zero on any failure.
t_done() {
    local san
    stack_stop_all
    if [ "$IT_STACK" = yes ]; then
        san=$(it_sanitizer_reports)
        IT_N=$((IT_N + 1))
        if [ -z "$san" ]; then
            IT_PASSED=$((IT_PASSED + 1))
            echo "ok $IT_N - no sanitizer reports in the logs"
        else
            IT_FAILED=$((IT_FAILED + 1))
            echo "not ok $IT_N - no sanitizer reports in the logs"
            printf '%s\n' "$san" | sed 's/^/#   /'
        fi
        san=$(it_address_lines)
        IT_N=$((IT_N + 1))
        if [ -z "$san" ]; then
            IT_PASSED=$((IT_PASSED + 1))
            echo "ok $IT_N - no whole address in any log line"
        else
            IT_FAILED=$((IT_FAILED + 1))
            echo "not ok $IT_N - no whole address in any log line"
            printf '%s\n' "$san" | head -n 40 | sed 's/^/#   /'
        fi
    fi
    it_openapi_check
    [ "$IT_FAILED" = 0 ] || it_show_logs
    echo "$IT_PASSED passed, $IT_FAILED failed"
    echo "# $IT_NAME took $(it_seconds_since "$IT_T0") s"
    [ "$IT_FAILED" = 0 ] && [ "$IT_PASSED" -gt 0 ]
}
