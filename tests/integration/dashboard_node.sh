# dashboard_node.sh: puppeteer-core and axe-core for a browser test of the
# dashboard, as tests/integration/dashboard/package-lock.json pins them,
# installed once per build tree into tests/integration/dashboard-node (npm
# ci; never a browser download), under a lock that the browser tests
# (test_dashboard.sh, test_dashboard_manage.sh) share. Sourced after
# lib.sh; sets NODE_SRC and NODE_DIR, and dash_node_modules installs (1
# when npm failed, its output in IT_DIR/npm.log); browser_cases and
# browser_ran turn a browser script's output into the test's cases.
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

# t_browser_line STATUS DETAIL: a case the browser script decided (its
# "#" lines shown)
t_browser_line() {
    printf '%s\n' "$2" | sed -n 's/^#   /#   /p'
    [ "$1" = ok ]
}

# browser_cases FILE: a browser script's "ok - NAME" / "not ok - NAME"
# lines in FILE (with the "#" lines under each) as this script's cases
browser_cases() {
    local name= detail= status= line
    while IFS= read -r line || [ -n "$line" ]; do
        case $line in
        "ok - "*|"not ok - "*)
            [ -n "$name" ] && t_case "browser: $name" t_browser_line "$status" "$detail"
            status=${line%% - *}; [ "$status" = ok ] || status=fail
            name=${line#* - }; detail= ;;
        "#"*) detail+=$line$'\n' ;;
        esac
    done < "$1"
    [ -n "$name" ] && t_case "browser: $name" t_browser_line "$status" "$detail"
    return 0
}

# browser_ran SCRIPT OUT ERR LAST: a case that passes when the browser
# script SCRIPT reached its last step (OUT has "ok - LAST...") and wrote
# nothing to ERR
browser_ran() {
    t_browser_ran() {
        grep -q "^ok - $4" "$2" && [ ! -s "$3" ] && return 0
        it_fail "$1 did not run to its end"
        sed 's/^/#   /' "$3" | head -n 30
        return 1
    }
    t_case "browser: $1 ran every step to the end" t_browser_ran "$@"
}
