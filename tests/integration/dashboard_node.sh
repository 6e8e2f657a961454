# dashboard_node.sh: puppeteer-core and axe-core for a browser test of the
# dashboard, as tests/integration/dashboard/package-lock.json pins them,
# installed once per build tree into tests/integration/dashboard-node (npm
# ci; never a browser download), under a lock that the browser tests
# (test_dashboard.sh, test_dashboard_manage.sh) share. Sourced after
# lib.sh; sets NODE_SRC and NODE_DIR, and dash_node_modules installs (1
# when npm failed, its output in IT_DIR/npm.log).
NODE_SRC=$top_srcdir/tests/integration/dashboard
NODE_DIR=$top_builddir/tests/integration/dashboard-node
dash_node_modules() {
    local lock rc=0
    mkdir -p "$NODE_DIR"
    exec {lock}> "$NODE_DIR/.lock"
    flock "$lock"
    if ! cmp -s "$NODE_SRC/package-lock.json" "$NODE_DIR/package-lock.json" ||
            [ ! -f "$NODE_DIR/node_modules/puppeteer-core/package.json" ] ||
            [ ! -f "$NODE_DIR/node_modules/axe-core/axe.min.js" ]; then
        rm -rf "$NODE_DIR/node_modules" "$NODE_DIR/package-lock.json"
        cp "$NODE_SRC/package.json" "$NODE_SRC/package-lock.json" "$NODE_DIR/"
        (cd "$NODE_DIR" && PUPPETEER_SKIP_DOWNLOAD=1 nice npm ci --ignore-scripts --no-audit --no-fund \
            --loglevel=error) > "$IT_DIR/npm.log" 2>&1 || rc=1
        [ $rc = 0 ] || rm -f "$NODE_DIR/package-lock.json"
    fi
    exec {lock}>&-
    return $rc
}
