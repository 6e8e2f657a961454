# stack.sh: start and stop a private svc stack (MariaDB, lighttpd or Apache with
# mod_fcgid, background programs) on 127.0.0.1, each server in a directory it is
# given, from Debian's packages, never touching system services or their files.
# Sourced (bash) by contrib/quickstart and tests/integration/lib.sh:
#
#   . contrib/stack.sh
#   trap stack_stop_all EXIT
#   port=$(stack_free_port)
#   stack_mariadb_init DIR; stack_mariadb_start DIR; stack_mariadb_create_db DIR
#   stack_lighttpd_start DIR PORT SVC_API SVC_CONF
#   stack_apache_start DIR PORT SVC_API SVC_CONF
#   stack_proc_start DIR NAME COMMAND...      (any daemon that stays in the foreground)
#   stack_stop_all                            (stops what this shell started, newest first)
#
# Each start function records "kind:dir" in STACK_STARTED; the stop functions
# work from pid files alone, so another shell (quickstart stop) can stop them.
# Functions return non-zero with a message on stderr; they never exit.

STACK_LIBDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STACK_SRCDIR=${STACK_SRCDIR:-$(dirname "$STACK_LIBDIR")}
STACK_STARTED=${STACK_STARTED:-}
STACK_TIMEOUT=${STACK_TIMEOUT:-60}
# MariaDB's InnoDB buffer pool and redo log: small for tests (fast start,
# little memory), larger for the quickstart and the benchmarks.
STACK_DB_BUFFER_POOL=${STACK_DB_BUFFER_POOL:-32M}
STACK_DB_LOG_FILE=${STACK_DB_LOG_FILE:-16M}
# STACK_DETACH=yes starts each server in a session of its own (setsid), so that
# it outlives the terminal of the shell that started it (quickstart --background).
STACK_DETACH=${STACK_DETACH:-no}
# STACK_HOST: the loopback address web servers listen on (tests of several
# hosts give each its own: STACK_HOST=127.0.0.2 stack_lighttpd_start ...).
STACK_HOST=${STACK_HOST:-127.0.0.1}

# stack_spawn COMMAND...: only as "stack_spawn ... &": the background subshell
# becomes COMMAND (exec), so $! is the server's pid; setsid when detaching.
stack_spawn() {
    if [ "$STACK_DETACH" = yes ]; then exec setsid "$@"; else exec "$@"; fi
}

# stack_daemon PIDFILE LOG COMMAND...: start COMMAND in the background with its
# output appended to LOG, write its pid to PIDFILE and print it. The server is
# started from a subshell that exits at once, so it is not a child of the
# calling shell: a test's bare "wait" does not wait for the servers.
stack_daemon() {
    local pidfile=$1 log=$2
    shift 2
    (
        stack_spawn "$@" >> "$log" 2>&1 < /dev/null &
        echo $! > "$pidfile"
    )
    stack_pidfile_pid "$pidfile"
}

stack_err() { echo "stack: $*" >&2; }

# Last lines of a log file on stderr, to explain a failure.
stack_show_log() {
    [ -s "$1" ] || return 0
    echo "--- last lines of $1:" >&2
    tail -n "${2:-20}" "$1" >&2
    echo "---" >&2
}

# stack_free_port: print a TCP port that nothing listens on at 127.0.0.1 and that
# was not handed out recently. Handed-out ports are noted in STACK_PORTS_FILE,
# shared by every shell (port=$(stack_free_port) runs in a subshell, and test
# scripts run in parallel), so a port picked but not yet bound is not reused.
# Ports come from below the kernel's ephemeral range (ip_local_port_range),
# which the source ports of outgoing connections and the listeners that bind
# port 0 take from: a port picked there could be taken by any client's
# connection before the server binds it (a CI run's mariadbd once failed on
# "Address already in use").
STACK_PORTS_FILE=${STACK_PORTS_FILE:-${TMPDIR:-/tmp}/svc-stack-ports.$(id -u)}
stack_free_port() {
    local used port i low=32768 span
    read -r low _ < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
    [ "$low" -gt 12000 ] 2>/dev/null || low=32768
    span=$(( low - 10000 ))
    used=$(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }')
    if [ -f "$STACK_PORTS_FILE" ] && [ "$(wc -l < "$STACK_PORTS_FILE")" -gt 5000 ]; then
        : > "$STACK_PORTS_FILE"
    fi
    for i in $(seq 1 200); do
        port=$(( 10000 + (RANDOM * 32768 + RANDOM) % span ))
        if grep -qx "$port" "$STACK_PORTS_FILE" 2>/dev/null; then continue; fi
        if printf '%s\n' "$used" | grep -qx "$port"; then continue; fi
        # connect test as a second opinion (ss may be missing)
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi
        echo "$port" >> "$STACK_PORTS_FILE"
        echo "$port"
        return 0
    done
    stack_err "no free TCP port found"
    return 1
}

# stack_alive PID: true if PID runs and is not a zombie.
stack_alive() {
    local st
    [ -n "${1:-}" ] && [ -r "/proc/$1/stat" ] || return 1
    st=$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
    [ "$st" != Z ]
}

stack_pidfile_pid() {
    local pid
    [ -s "$1" ] || return 1
    pid=$(head -n 1 "$1" | tr -dc 0-9)
    [ -n "$pid" ] && echo "$pid"
}

# stack_port_open PORT: true if something accepts TCP connections on STACK_HOST:PORT.
stack_port_open() {
    (exec 3<>"/dev/tcp/$STACK_HOST/$1") 2>/dev/null
}

# stack_wait_port PORT PID LOG NAME: wait until PORT answers; fail early if PID dies.
stack_wait_port() {
    local port=$1 pid=$2 log=$3 name=$4 i
    for i in $(seq 1 $(( STACK_TIMEOUT * 10 ))); do
        stack_port_open "$port" && return 0
        if [ -n "$pid" ] && ! stack_alive "$pid"; then
            stack_err "$name exited before it answered on $STACK_HOST:$port"
            stack_show_log "$log"
            return 1
        fi
        sleep 0.1
    done
    stack_err "$name did not answer on $STACK_HOST:$port within ${STACK_TIMEOUT}s"
    stack_show_log "$log"
    return 1
}

# stack_descendants PID: print the pids of all descendants of PID.
stack_descendants() {
    local c
    for c in $(pgrep -P "$1" 2>/dev/null); do
        echo "$c"
        stack_descendants "$c"
    done
}

# stack_wait_gone PID...: wait until none of the processes runs; KILL stragglers.
stack_wait_gone() {
    local p i left
    for i in $(seq 1 $(( STACK_TIMEOUT * 10 ))); do
        left=
        for p in "$@"; do stack_alive "$p" && left="$left $p"; done
        [ -n "$left" ] || break
        sleep 0.1
    done
    if [ -n "$left" ]; then
        stack_err "processes$left still run; killing them"
        for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
    fi
    # orphans that ended linger as zombies until init reaps them: give it 3 s,
    # so that callers checking with pgrep see nothing
    for i in $(seq 1 30); do
        left=
        for p in "$@"; do [ -e "/proc/$p" ] && left="$left $p"; done
        [ -n "$left" ] || break
        sleep 0.1
    done
    return 0
}

# stack_kill_pidfile PIDFILE [NAME]: TERM the process, wait, KILL if it lingers;
# then wait for the children it had (FastCGI programs) to be gone too.
stack_kill_pidfile() {
    local pid i kids
    pid=$(stack_pidfile_pid "$1") || return 0
    kids=$(stack_descendants "$pid")
    if stack_alive "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 $(( STACK_TIMEOUT * 10 ))); do
            stack_alive "$pid" || break
            sleep 0.1
        done
        if stack_alive "$pid"; then
            stack_err "${2:-process} $pid did not stop on TERM; killing it"
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.2
        fi
    fi
    # shellcheck disable=SC2086
    stack_wait_gone "$pid" $kids
    rm -f "$1"
}

stack_register() {
    case " $STACK_STARTED " in *" $1 "*) ;; *) STACK_STARTED="$STACK_STARTED $1" ;; esac
}

stack_unregister() {
    local out="" e
    for e in $STACK_STARTED; do [ "$e" = "$1" ] || out="$out $e"; done
    STACK_STARTED=$out
}

stack_abs() { (cd "$1" && pwd); }

stack_random_password() {
    od -An -tx1 -N18 /dev/urandom | tr -d ' \n'
}

# ---------------------------------------------------------------- MariaDB

# Files under DIR: my.cnf, data/, mariadb.sock, mariadbd.pid, mariadbd.err,
# port, db-password (0600). Variables set by start: STACK_DB_SOCKET, STACK_DB_PORT.

stack_mariadb_bin() {
    local b
    for b in mariadbd mysqld; do
        command -v "$b" >/dev/null 2>&1 && { command -v "$b"; return 0; }
        [ -x "/usr/sbin/$b" ] && { echo "/usr/sbin/$b"; return 0; }
    done
    stack_err "mariadbd not found (apt-get install mariadb-server)"
    return 1
}

# stack_mariadb_write_cnf DIR PORT
stack_mariadb_write_cnf() {
    local dir=$1 port=$2
    cat > "$dir/my.cnf" <<EOF
# Generated by contrib/stack.sh: a private MariaDB for svc on 127.0.0.1 only.
[mariadbd]
user = root
datadir = $dir/data
tmpdir = $dir/tmp
socket = $dir/mariadb.sock
pid-file = $dir/mariadbd.pid
log-error = $dir/mariadbd.err
port = $port
bind-address = 127.0.0.1
skip-name-resolve
skip-external-locking
skip-log-bin
character-set-server = utf8mb4
collation-server = utf8mb4_unicode_ci
max_connections = 300
key_buffer_size = 1M
innodb_buffer_pool_size = $STACK_DB_BUFFER_POOL
innodb_log_file_size = $STACK_DB_LOG_FILE
innodb_log_buffer_size = 4M
innodb_flush_log_at_trx_commit = 2
innodb_use_native_aio = 0
innodb_buffer_pool_dump_at_shutdown = 0
innodb_buffer_pool_load_at_startup = 0
loose-performance_schema = OFF
loose-innodb_doublewrite = 0

[client]
socket = $dir/mariadb.sock
EOF
}

# stack_mariadb_init DIR [PORT]: create DIR/my.cnf and the datadir once; a
# second call on an initialised DIR does nothing (it keeps the recorded port).
stack_mariadb_init() {
    local dir port log
    mkdir -p "$1" || return 1
    dir=$(stack_abs "$1")
    mkdir -p "$dir/tmp"
    if [ -d "$dir/data/mysql" ] && [ -s "$dir/my.cnf" ]; then
        if [ -n "${2:-}" ] && [ "$2" != "$(cat "$dir/port" 2>/dev/null)" ]; then
            echo "$2" > "$dir/port"
            stack_mariadb_write_cnf "$dir" "$2"
        fi
        return 0
    fi
    port=${2:-$(stack_free_port)} || return 1
    echo "$port" > "$dir/port"
    stack_mariadb_write_cnf "$dir" "$port"
    rm -rf "$dir/data"
    log=$dir/install-db.log
    if ! mariadb-install-db --defaults-file="$dir/my.cnf" --user=root \
            --auth-root-authentication-method=socket --skip-test-db \
            --skip-name-resolve > "$log" 2>&1; then
        stack_err "mariadb-install-db failed in $dir/data"
        stack_show_log "$log" 30
        return 1
    fi
}

# stack_mariadb_sql DIR [ARGS...]: run the mariadb client as root over the socket.
stack_mariadb_sql() {
    local dir=$1
    shift
    mariadb --no-defaults --socket="$dir/mariadb.sock" --user=root "$@"
}

# stack_mariadb_start DIR: start mariadbd from DIR/my.cnf and wait until it answers.
stack_mariadb_start() {
    local dir bin pid i
    dir=$(stack_abs "$1") || return 1
    [ -s "$dir/my.cnf" ] || { stack_err "$dir is not initialised (stack_mariadb_init)"; return 1; }
    STACK_DB_SOCKET=$dir/mariadb.sock
    STACK_DB_PORT=$(cat "$dir/port")
    if pid=$(stack_pidfile_pid "$dir/mariadbd.pid") && stack_alive "$pid" &&
            stack_mariadb_sql "$dir" -e 'SELECT 1' >/dev/null 2>&1; then
        stack_register "mariadb:$dir"
        return 0
    fi
    if stack_port_open "$STACK_DB_PORT"; then
        # another program took the port since the datadir was made: move
        # (clients use the socket; the port is only for TCP tests)
        STACK_DB_PORT=$(stack_free_port) || return 1
        echo "$STACK_DB_PORT" > "$dir/port"
        stack_mariadb_write_cnf "$dir" "$STACK_DB_PORT"
    fi
    bin=$(stack_mariadb_bin) || return 1
    local attempt=1 continue_wait
    rm -f "$dir/mariadbd.pid" "$dir/mariadb.sock"
    : > "$dir/mariadbd.err"
    : > "$dir/mariadbd.out"
    pid=$(stack_daemon "$dir/mariadbd.pid" "$dir/mariadbd.out" "$bin" --defaults-file="$dir/my.cnf")
    stack_register "mariadb:$dir"
    for i in $(seq 1 $(( STACK_TIMEOUT * 10 ))); do
        if stack_mariadb_sql "$dir" -e 'SELECT 1' >/dev/null 2>&1; then
            return 0
        fi
        # alive or not, looked at once: a server dying between two looks
        # would skip the retry below and be reported as a failure
        stack_alive "$pid" && continue_wait=1 || continue_wait=0
        if [ "$continue_wait" = 0 ] && [ "$attempt" -lt 3 ] &&
                grep -q 'Address already in use' "$dir/mariadbd.err" 2>/dev/null; then
            # another program bound the port between the pick and the
            # bind: start again on another one
            attempt=$((attempt + 1))
            STACK_DB_PORT=$(stack_free_port) || return 1
            echo "$STACK_DB_PORT" > "$dir/port"
            stack_mariadb_write_cnf "$dir" "$STACK_DB_PORT"
            rm -f "$dir/mariadbd.pid" "$dir/mariadb.sock"
            : > "$dir/mariadbd.err"
            pid=$(stack_daemon "$dir/mariadbd.pid" "$dir/mariadbd.out" "$bin" --defaults-file="$dir/my.cnf")
            continue
        fi
        if [ "$continue_wait" = 0 ]; then
            stack_err "mariadbd exited during start-up ($dir)"
            stack_show_log "$dir/mariadbd.err"
            stack_show_log "$dir/mariadbd.out"
            return 1
        fi
        sleep 0.1
    done
    stack_err "mariadbd did not answer within ${STACK_TIMEOUT}s ($dir)"
    stack_show_log "$dir/mariadbd.err"
    return 1
}

# stack_mariadb_create_db DIR [DBNAME [USER]]: create the database and a user
# with all privileges on it, reachable over the socket and 127.0.0.1. The
# password is generated once and kept in DIR/db-password (0600). Idempotent.
# Sets STACK_DB_NAME, STACK_DB_USER, STACK_DB_PASSWORD.
stack_mariadb_create_db() {
    local dir db=${2:-svc} user=${3:-svc} pw
    dir=$(stack_abs "$1") || return 1
    if [ ! -s "$dir/db-password" ]; then
        (umask 077; stack_random_password > "$dir/db-password")
    fi
    pw=$(cat "$dir/db-password")
    if ! stack_mariadb_sql "$dir" > "$dir/create-db.log" 2>&1 <<EOF
CREATE DATABASE IF NOT EXISTS \`$db\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS '$user'@'localhost' IDENTIFIED BY '$pw';
CREATE USER IF NOT EXISTS '$user'@'127.0.0.1' IDENTIFIED BY '$pw';
ALTER USER '$user'@'localhost' IDENTIFIED BY '$pw';
ALTER USER '$user'@'127.0.0.1' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON \`$db\`.* TO '$user'@'localhost';
GRANT ALL PRIVILEGES ON \`$db\`.* TO '$user'@'127.0.0.1';
FLUSH PRIVILEGES;
EOF
    then
        stack_err "creating database $db and user $user failed"
        stack_show_log "$dir/create-db.log"
        return 1
    fi
    STACK_DB_NAME=$db
    STACK_DB_USER=$user
    STACK_DB_PASSWORD=$pw
}

# stack_mariadb_stop DIR: shut down cleanly (mariadb-admin), then by pid file.
stack_mariadb_stop() {
    local dir=$1 pid i
    pid=$(stack_pidfile_pid "$dir/mariadbd.pid") || { stack_unregister "mariadb:$dir"; return 0; }
    if stack_alive "$pid"; then
        mariadb-admin --no-defaults --socket="$dir/mariadb.sock" --user=root \
            shutdown >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 $(( STACK_TIMEOUT * 10 ))); do
            stack_alive "$pid" || break
            sleep 0.1
        done
    fi
    stack_kill_pidfile "$dir/mariadbd.pid" mariadbd
    stack_wait_gone "$pid"
    stack_unregister "mariadb:$dir"
}

# ---------------------------------------------------------------- web servers

# stack_share_files DIR SNIPPET: DIR/fcgi-conf (svc-413.html of the snippet's
# folder) and beside it DIR/www, the dashboard's files, laid out as make
# install lays out $(datadir)/svc: the snippets serve /app/ from the folder
# www beside their fcgi-conf. The dashboard comes from the snippet's
# installation (its ../www) when there is one, else from the source tree's
# src/www (STACK_WWW names another). Copies of its web files (not its
# Makefile.inc), readable by any user (Apache runs as www-data).
stack_share_files() {
    local dir=$1 from=${STACK_WWW:-}
    from=${from:-$(dirname "$2")/../www}
    [ -r "$from/index.html" ] || from=$STACK_SRCDIR/src/www
    rm -rf "$dir/www"
    mkdir -p "$dir/fcgi-conf" "$dir/www" &&
        install -m 0644 "$(dirname "$2")/svc-413.html" "$dir/fcgi-conf/" 2>/dev/null
    if [ -r "$from/index.html" ]; then
        (cd "$from" && find . -type f \( -name '*.html' -o -name '*.css' -o -name '*.js' \
            -o -name '*.svg' \) -exec cp --parents {} "$dir/www/" \;) && chmod -R a+rX "$dir/www" ||
            { stack_err "cannot copy the dashboard from $from"; return 1; }
    fi
    return 0
}

# ---------------------------------------------------------------- lighttpd

# stack_lighttpd_start DIR PORT SVC_API SVC_CONF [SNIPPET]: write DIR/lighttpd.conf
# (STACK_HOST:PORT, including fcgi-conf/lighttpd-svc.conf with var.svc_api and
# var.svc_conf set), start lighttpd -D in the background and wait until it answers.
# lighttpd runs as root (no server.username), so DIR needs no extra permissions.
stack_lighttpd_start() {
    local dir port=$2 api=$3 conf=$4 snippet=${5:-$STACK_SRCDIR/fcgi-conf/lighttpd-svc.conf} pid out
    mkdir -p "$1" || return 1
    dir=$(stack_abs "$1")
    [ -x "$api" ] || { stack_err "FastCGI program $api is not executable"; return 1; }
    [ -r "$snippet" ] || { stack_err "lighttpd snippet $snippet not found"; return 1; }
    if pid=$(stack_pidfile_pid "$dir/lighttpd.pid") && stack_alive "$pid"; then
        stack_err "lighttpd already runs from $dir (pid $pid)"
        return 1
    fi
    if stack_port_open "$port"; then
        stack_err "port $port is already in use"
        return 1
    fi
    mkdir -p "$dir/htdocs" "$dir/tmp" "$dir/run/lighttpd"
    rm -f "$dir/run/lighttpd/"svc-api.sock*
    stack_share_files "$dir" "$snippet" || return 1
    cat > "$dir/lighttpd.conf" <<EOF
# Generated by contrib/stack.sh: a private lighttpd on $STACK_HOST:$port.
server.document-root = "$dir/htdocs"
server.bind = "$STACK_HOST"
server.port = $port
server.pid-file = "$dir/lighttpd.pid"
server.errorlog = "$dir/error.log"
server.breakagelog = "$dir/backend-stderr.log"
server.upload-dirs = ( "$dir/tmp" )
server.modules = ( "mod_accesslog" )
accesslog.filename = "$dir/access.log"

var.svc_api = "$api"
var.svc_conf = "$conf"
var.svc_root = "$dir"
var.svc_fcgi_conf = "$dir/fcgi-conf"
include "$snippet"
EOF
    if ! out=$(lighttpd -tt -f "$dir/lighttpd.conf" 2>&1); then
        stack_err "lighttpd rejects $dir/lighttpd.conf: $out"
        return 1
    fi
    : > "$dir/error.log"
    : > "$dir/lighttpd.out"
    pid=$(stack_daemon "$dir/lighttpd.pid" "$dir/lighttpd.out" lighttpd -D -f "$dir/lighttpd.conf")
    stack_register "lighttpd:$dir"
    if ! stack_wait_port "$port" "$pid" "$dir/error.log" lighttpd; then
        stack_show_log "$dir/lighttpd.out"
        stack_show_log "$dir/backend-stderr.log"
        return 1
    fi
    echo "$port" > "$dir/port"
}

# stack_lighttpd_stop DIR
stack_lighttpd_stop() {
    stack_kill_pidfile "$1/lighttpd.pid" lighttpd
    rm -f "$1/run/lighttpd/"svc-api.sock*
    stack_unregister "lighttpd:$1"
    stack_unregister "lighttpd:$(stack_abs "$1" 2>/dev/null)"
}

# ---------------------------------------------------------------- Apache + mod_fcgid

STACK_APACHE_MODULES=${STACK_APACHE_MODULES:-/usr/lib/apache2/modules}
STACK_APACHE_USER=${STACK_APACHE_USER:-www-data}

# stack_apache_start DIR PORT SVC_API SVC_CONF [SNIPPET]: write DIR/apache2.conf
# (127.0.0.1:PORT, mpm_event, mod_fcgid, including fcgi-conf/apache-svc.conf
# with SVC_API and SVC_CONF defined) and start a private apache2. Its children
# and the FastCGI processes run as www-data, so DIR and its parents, SVC_API
# and SVC_CONF must be reachable by that user: DIR is made 0755 here.
stack_apache_start() {
    local dir port=$2 api=$3 conf=$4 snippet=${5:-$STACK_SRCDIR/fcgi-conf/apache-svc.conf} pid out m
    mkdir -p "$1" || return 1
    dir=$(stack_abs "$1")
    command -v apache2 >/dev/null 2>&1 || [ -x /usr/sbin/apache2 ] ||
        { stack_err "apache2 not found (apt-get install apache2)"; return 1; }
    [ -f "$STACK_APACHE_MODULES/mod_fcgid.so" ] ||
        { stack_err "mod_fcgid not found (apt-get install libapache2-mod-fcgid)"; return 1; }
    [ -x "$api" ] || { stack_err "FastCGI program $api is not executable"; return 1; }
    [ -r "$snippet" ] || { stack_err "Apache snippet $snippet not found"; return 1; }
    if pid=$(stack_pidfile_pid "$dir/apache2.pid") && stack_alive "$pid"; then
        stack_err "apache2 already runs from $dir (pid $pid)"
        return 1
    fi
    if stack_port_open "$port"; then
        stack_err "port $port is already in use"
        return 1
    fi
    mkdir -p "$dir/htdocs" "$dir/run" "$dir/fcgid" "$dir/logs"
    chmod 0755 "$dir"
    chown "$STACK_APACHE_USER" "$dir/fcgid" "$dir/run"
    # the snippet's static files, where the Apache user can read them
    stack_share_files "$dir" "$snippet" || return 1
    {
        echo "# Generated by contrib/stack.sh: a private Apache on 127.0.0.1:$port."
        echo "ServerRoot \"$dir\""
        echo "ServerName 127.0.0.1"
        echo "Listen 127.0.0.1:$port"
        echo "PidFile \"$dir/apache2.pid\""
        echo "DefaultRuntimeDir \"$dir/run\""
        echo "Mutex file:$dir/run default"
        echo "ErrorLog \"$dir/logs/error.log\""
        echo "LogLevel warn"
        echo "User $STACK_APACHE_USER"
        echo "Group $(id -gn "$STACK_APACHE_USER")"
        for m in mpm_event authz_core alias setenvif fcgid headers; do
            echo "LoadModule ${m}_module \"$STACK_APACHE_MODULES/mod_$m.so\""
        done
        echo "LogFormat \"%h %t \\\"%r\\\" %>s %b\" common"
        echo "CustomLog \"$dir/logs/access.log\" common"
        echo "StartServers 1"
        echo "ServerLimit 2"
        echo "ThreadsPerChild 16"
        echo "MaxRequestWorkers 32"
        echo "DocumentRoot \"$dir/htdocs\""
        echo "<Directory />"
        echo "    AllowOverride None"
        echo "    Require all denied"
        echo "</Directory>"
        echo "<Directory \"$dir/htdocs\">"
        echo "    Require all granted"
        echo "</Directory>"
        echo "FcgidIPCDir \"$dir/fcgid\""
        echo "FcgidProcessTableFile \"$dir/fcgid/shm\""
        echo "Define SVC_API \"$api\""
        echo "Define SVC_CONF \"$conf\""
        echo "Define SVC_FCGI_CONF \"$dir/fcgi-conf\""
        echo "Include \"$snippet\""
    } > "$dir/apache2.conf"
    if ! out=$(apache2 -f "$dir/apache2.conf" -t 2>&1); then
        stack_err "apache2 rejects $dir/apache2.conf: $out"
        return 1
    fi
    : > "$dir/logs/error.log"
    if ! apache2 -f "$dir/apache2.conf" -k start > "$dir/apache2.out" 2>&1 < /dev/null; then
        stack_err "apache2 -k start failed"
        stack_show_log "$dir/apache2.out"
        stack_show_log "$dir/logs/error.log"
        return 1
    fi
    stack_register "apache:$dir"
    # -k start returns once the parent has forked; wait for the pid file, then the port
    for m in $(seq 1 $(( STACK_TIMEOUT * 10 ))); do
        pid=$(stack_pidfile_pid "$dir/apache2.pid") && break
        sleep 0.1
    done
    [ -n "$pid" ] || { stack_err "apache2 wrote no pid file"; stack_show_log "$dir/logs/error.log"; return 1; }
    stack_wait_port "$port" "$pid" "$dir/logs/error.log" apache2 || return 1
    echo "$port" > "$dir/port"
}

# stack_apache_stop DIR: stop the private apache2 and wait for it and its
# FastCGI children (which mod_fcgid ends on shutdown) to be gone.
stack_apache_stop() {
    local dir=$1 pid i kids=
    if pid=$(stack_pidfile_pid "$dir/apache2.pid") && stack_alive "$pid"; then
        kids=$(stack_descendants "$pid")
        apache2 -f "$dir/apache2.conf" -k stop >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 $(( STACK_TIMEOUT * 10 ))); do
            stack_alive "$pid" || break
            sleep 0.1
        done
    fi
    stack_kill_pidfile "$dir/apache2.pid" apache2
    # apache2 removes its pid file itself, so wait here for it and its children
    # shellcheck disable=SC2086
    [ -z "$pid" ] || stack_wait_gone "$pid" $kids
    stack_unregister "apache:$dir"
    stack_unregister "apache:$(stack_abs "$dir" 2>/dev/null)"
}

# ---------------------------------------------------------------- other programs

# stack_proc_start DIR NAME COMMAND [ARGS...]: run a program that stays in the
# foreground in the background, pid in DIR/NAME.pid, output in DIR/NAME.log.
# Fails if it exits within the first half second.
stack_proc_start() {
    local dir name=$2 pid
    mkdir -p "$1" || return 1
    dir=$(stack_abs "$1")
    shift 2
    if pid=$(stack_pidfile_pid "$dir/$name.pid") && stack_alive "$pid"; then
        stack_register "proc:$dir/$name"
        return 0
    fi
    pid=$(stack_daemon "$dir/$name.pid" "$dir/$name.log" "$@")
    stack_register "proc:$dir/$name"
    sleep 0.5
    if ! stack_alive "$pid"; then
        stack_err "$name exited at once: $*"
        stack_show_log "$dir/$name.log"
        rm -f "$dir/$name.pid"
        stack_unregister "proc:$dir/$name"
        return 1
    fi
}

# stack_proc_stop DIR NAME
stack_proc_stop() {
    stack_kill_pidfile "$1/$2.pid" "$2"
    stack_unregister "proc:$1/$2"
    stack_unregister "proc:$(stack_abs "$1" 2>/dev/null)/$2"
}

# ---------------------------------------------------------------- all

# stack_stop_all: stop everything this shell started, newest first. Safe to
# call more than once and from traps; always returns 0.
stack_stop_all() {
    local list="" e
    for e in $STACK_STARTED; do list="$e $list"; done
    for e in $list; do
        case $e in
        mariadb:*) stack_mariadb_stop "${e#mariadb:}" ;;
        lighttpd:*) stack_lighttpd_stop "${e#lighttpd:}" ;;
        apache:*) stack_apache_stop "${e#apache:}" ;;
        proc:*) e=${e#proc:}; stack_proc_stop "$(dirname "$e")" "$(basename "$e")" ;;
        esac
    done
    STACK_STARTED=
    return 0
}
