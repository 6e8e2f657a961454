# galera.sh: a three-node MariaDB Galera cluster on loopback (galera-4,
# own ports, datadirs IT_DIR/g1..g3 and gcomm addresses, SST by rsync),
# sourced after lib.sh by tests/integration/test_galera.sh and by
# tests/bench/bench_worker.sh (BENCH_GALERA=1):
#
#   galera_require              skip unless galera-4, rsync and mariadbd are here
#   galera_cluster_start        node 1 bootstraps from the template datadir,
#                               2 and 3 join by SST; waits for a cluster of 3;
#                               node 1's address set to the full list after
#                               (so that it rejoins when restarted)
#   galera_node N ADDRESS       IT_DIR/gN's my.cnf with the wsrep settings
#   gsql N ARGS...              mariadb as root on node N (-N -B)
#   gstatus N VARIABLE          a SHOW STATUS value of node N
#   cluster_size_is N SIZE      node N sees a cluster of SIZE
#   galera_svc_conf FILE        an svc.conf with db_hosts over the three
#                               nodes (1 2 3), the stack's usual settings and
#                               IT_CONF_EXTRA
# GPORT[N] (gcomm), DBPORT[N] (SQL) and GCOMM are set by galera_cluster_start.
GALERA=/usr/lib/galera/libgalera_smm.so
declare -a GPORT DBPORT
GCOMM=

galera_require() {
    [ -r "$GALERA" ] || it_skip "$GALERA is missing (apt-get install galera-4)"
    it_require rsync mariadbd
}

# galera_node N ADDRESS: IT_DIR/gN from the template datadir (node 1) or
# empty (a joiner), with the wsrep settings and the cluster address ADDRESS
galera_node() {
    local n=$1 dir=$IT_DIR/g$1
    if [ "$n" = 1 ]; then
        [ -d "$dir/data" ] || it_db_from_template "$dir"
    elif [ ! -d "$dir/data" ]; then
        # a joiner starts empty and gets everything by SST; the rsync
        # daemon that receives it runs as nobody
        mkdir -p "$dir/tmp" && mkdir -m 0700 "$dir/data" &&
            chown nobody "$dir/data"
        stack_free_port > "$dir/port"
        stack_mariadb_write_cnf "$dir" "$(cat "$dir/port")"
    fi
    DBPORT[$n]=$(cat "$dir/port")
    sed -i '/^\[galera\]/,$d' "$dir/my.cnf"
    # short EVS timeouts: the quorum case sees a node lost in ~3 s; a
    # joiner waits the default 30 s for a primary view (5 s was not enough
    # on a loaded machine: "failed to reach primary view", an abort)
    cat >> "$dir/my.cnf" <<CNF
[galera]
wsrep_on = ON
wsrep_provider = $GALERA
wsrep_cluster_name = svc_test
wsrep_cluster_address = $2
wsrep_node_name = g$n
wsrep_node_address = 127.0.0.1:${GPORT[$n]}
wsrep_node_incoming_address = 127.0.0.1:${DBPORT[$n]}
wsrep_sst_method = rsync
wsrep_sst_receive_address = 127.0.0.1:$(stack_free_port)
wsrep_provider_options = "gmcast.listen_addr=tcp://127.0.0.1:${GPORT[$n]};ist.recv_addr=127.0.0.1:$(stack_free_port);gcache.size=64M;evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT3S;evs.inactive_check_period=PT0.5S;pc.wait_prim_timeout=PT30S"
binlog_format = ROW
innodb_autoinc_lock_mode = 2
wsrep_slave_threads = 2
CNF
}
gsql() { local n=$1; shift; stack_mariadb_sql "$IT_DIR/g$n" -N -B "$@"; }
gstatus() { gsql "$1" -e "SHOW STATUS LIKE '$2'" 2>/dev/null | cut -f2; }
cluster_size_is() { [ "$(gstatus "$1" wsrep_cluster_size)" = "$2" ]; }

# galera_join_again N: node N's first start as a joiner failed (on a
# loaded machine the gcomm handshake can time out before the view is
# installed: "failed to commit for install message", "failed to reach
# primary view", and mariadbd aborts): it starts once more from an empty
# datadir, as an operator would restart it
galera_join_again() {
    local dir=$IT_DIR/g$1
    it_log "Galera node $1 did not join at the first start ($(grep -c ERROR "$dir/mariadbd.err") errors logged): started again"
    stack_mariadb_stop "$dir" 2> /dev/null
    mv "$dir/mariadbd.err" "$dir/mariadbd.err.first" 2> /dev/null
    rm -rf "$dir/data" && mkdir -m 0700 "$dir/data" && chown nobody "$dir/data" &&
        stack_mariadb_start "$dir"
}

galera_cluster_start() {
    local n t0=$SECONDS
    for n in 1 2 3; do GPORT[$n]=$(stack_free_port); done
    GCOMM="gcomm://127.0.0.1:${GPORT[1]},127.0.0.1:${GPORT[2]},127.0.0.1:${GPORT[3]}"
    galera_node 1 gcomm://
    stack_mariadb_start "$IT_DIR/g1" ||
        { echo "Bail out! Galera node 1 did not bootstrap"; cat "$IT_DIR/g1/mariadbd.err"; exit 1; }
    stack_mariadb_create_db "$IT_DIR/g1" > /dev/null || { echo "Bail out! database on node 1"; exit 1; }
    for n in 2 3; do
        galera_node $n "$GCOMM"
        stack_mariadb_start "$IT_DIR/g$n" || galera_join_again $n ||
            { echo "Bail out! Galera node $n did not join"; tail -n 30 "$IT_DIR/g$n/mariadbd.err"; exit 1; }
    done
    it_wait_until 30 "for a cluster of 3" cluster_size_is 1 3 || exit 1
    # node 1 rejoins the others when restarted, not a new cluster
    galera_node 1 "$GCOMM"
    it_log "cluster of 3 up in $((SECONDS - t0)) s"
}

galera_svc_conf() {
    (umask 077; cat > "$1" <<EOF
db_hosts = 127.0.0.1:${DBPORT[1]} 127.0.0.1:${DBPORT[2]} 127.0.0.1:${DBPORT[3]}
db_name = svc
db_user = svc
db_password_file = $IT_DIR/g1/db-password
cache_hash_key_file = $IT_DIR/cache_hash_key
base_url = ${BASE_URL:-http://127.0.0.1:1}
log_level = ${IT_LOG_LEVEL:-info}
log_file = $IT_DIR/log/svc.log
api_workers = ${IT_API_WORKERS:-2}
$IT_CONF_EXTRA
EOF
)
}
