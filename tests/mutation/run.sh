#!/bin/bash
# run.sh: the mutation check. Applies each one-line source change of
# tests/mutation/mutations.txt to a copy of the tree, rebuilds, and runs the
# tests the entry names: a mutation is caught when one of them fails,
# survived when they all pass (a blind spot of the tests), broken when the
# mutant does not build (an error in the list). Prints "caught N of M" and
# exits non-zero if any mutation survived, is broken or could not be judged.
#
#   tests/mutation/run.sh [--list] [--keep] [ID...]
#
#   ID...    run only these mutations (default: all of them)
#   --list   print the mutations (id, file, tests) and exit
#   --keep   keep the temporary tree (sources, build, logs)
#
# The copy holds the files git knows (tracked and new, not ignored), is
# configured once out of tree without sanitizers (CFLAGS=-O1) and rebuilt
# incrementally after each change. The named tests run first on the
# unchanged tree: a test that fails there would make every mutation look
# caught. Integration tests need root (they start their own servers).
# SVC_MUTATION_TIMEOUT (seconds, default 1200) bounds one "make check"; a
# mutation whose tests run out of time counts as caught. TMPDIR is honoured.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
list=$top/tests/mutation/mutations.txt
timeout_s=${SVC_MUTATION_TIMEOUT:-1200}
keep=no
only_list=no
want=()

die() { echo "mutation: $*" >&2; exit 2; }
note() { echo "mutation: $*"; }

while [ $# -gt 0 ]; do
    case $1 in
    --list) only_list=yes ;;
    --keep) keep=yes ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (try --help)" ;;
    *) want+=("$1") ;;
    esac
    shift
done

# ---------------------------------------------------------------- the list
# Entries are blocks of "key: value" lines separated by blank lines; lines
# starting with # are comments. Keys: id, file, find, replace, tests, why.
# The blanks after the colon are not part of the value.
ids=() files=() finds=() repls=() tests=() whys=()
parse_list() {
    local line key value n=-1 lineno=0
    while IFS= read -r line || [ -n "$line" ]; do
        lineno=$((lineno + 1))
        case $line in
        '#'*) continue ;;
        '') n=-1; continue ;;
        esac
        [[ $line =~ ^([a-z]+):[[:space:]]*(.*)$ ]] ||
            die "$list:$lineno: not a \"key: value\" line"
        key=${BASH_REMATCH[1]} value=${BASH_REMATCH[2]}
        if [ "$n" = -1 ]; then
            [ "$key" = id ] || die "$list:$lineno: an entry starts with its id"
            n=${#ids[@]}
            ids[n]= files[n]= finds[n]= repls[n]= tests[n]= whys[n]=
        fi
        case $key in
        id) ids[n]=$value ;;
        file) files[n]=$value ;;
        find) finds[n]=$value ;;
        replace) repls[n]=$value ;;
        tests) tests[n]=$value ;;
        why) whys[n]=$value ;;
        *) die "$list:$lineno: unknown key $key" ;;
        esac
    done < "$list"
}

# count TEXT FILE: how many times TEXT occurs in FILE (literally)
count() {
    FIND=$1 perl -0777 -ne '$n = 0; $p = 0;
        while (($p = index($_, $ENV{FIND}, $p)) >= 0) { $n++; $p++ } print $n' "$2"
}

# apply FIND REPLACE FILE: replaces the one occurrence of FIND
apply() {
    FIND=$1 REPL=$2 perl -0777 -pi -e '$i = index($_, $ENV{FIND});
        substr($_, $i, length($ENV{FIND})) = $ENV{REPL} if $i >= 0' "$3"
}

# check_entry I: a complete entry whose text occurs exactly once in the
# source tree's file (the list is kept current as code moves)
check_entry() {
    local i=$1 n
    [ -n "${ids[i]}" ] && [ -n "${files[i]}" ] && [ -n "${finds[i]}" ] &&
        [ -n "${repls[i]}" ] && [ -n "${tests[i]}" ] ||
        { echo "${ids[i]:-entry $((i + 1))}: needs id, file, find, replace and tests"; return 1; }
    [ "${finds[i]}" != "${repls[i]}" ] || { echo "${ids[i]}: replace is find"; return 1; }
    [ -f "$top/${files[i]}" ] || { echo "${ids[i]}: no file ${files[i]}"; return 1; }
    n=$(count "${finds[i]}" "$top/${files[i]}")
    [ "$n" = 1 ] || { echo "${ids[i]}: the text occurs $n times in ${files[i]} (must be once): ${finds[i]}"; return 1; }
}

parse_list
[ ${#ids[@]} -gt 0 ] || die "no mutations in $list"
sel=()
bad=0
for i in "${!ids[@]}"; do
    for j in "${!ids[@]}"; do
        [ "$j" -lt "$i" ] && [ "${ids[j]}" = "${ids[i]}" ] && { echo "${ids[i]}: id used twice"; bad=1; }
    done
    check_entry "$i" || bad=1
done
[ "$bad" = 0 ] || die "$list is not current: fix the entries above"
if [ ${#want[@]} -eq 0 ]; then
    sel=("${!ids[@]}")
else
    for w in "${want[@]}"; do
        found=
        for i in "${!ids[@]}"; do [ "${ids[i]}" = "$w" ] && found=$i; done
        [ -n "$found" ] || die "no mutation with id $w (see --list)"
        sel+=("$found")
    done
fi

if [ "$only_list" = yes ]; then
    for i in "${sel[@]}"; do
        printf '%-28s %s\n%-28s   %s\n%-28s   tests: %s\n' "${ids[i]}" "${files[i]}" "" \
            "${whys[i]:-${finds[i]} -> ${repls[i]}}" "" "${tests[i]}"
    done
    exit 0
fi

# ---------------------------------------------------------------- the copy
tmp=$(mktemp -d "${TMPDIR:-/tmp}/svc-mutation.XXXXXX")
cleanup() {
    if [ "$keep" = yes ]; then echo "mutation: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
src=$tmp/src obj=$tmp/obj logs=$tmp/logs
mkdir -p "$src" "$obj" "$logs"
# "make mutation" exports these for the integration tests of its own tree
unset top_srcdir top_builddir

git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    die "$top is not a git checkout (the copy is made from git ls-files)"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf -) | tar -xpf - -C "$src"

step() {	# step WHAT COMMAND...: runs it, or shows its log and stops
    local what=$1
    shift
    "$@" > "$logs/$what.log" 2>&1 ||
        { tail -n 40 "$logs/$what.log" >&2; die "$what failed (log: $logs/$what.log; use --keep)"; }
}
start=$(date +%s)
note "building a copy of the tree in $tmp (CFLAGS=-O1, no sanitizers)"
step autoreconf env -C "$src" autoreconf -fi
step configure env -C "$obj" ../src/configure -q CFLAGS=-O1
step make make -C "$obj" -j2

# check TESTS NAME: make check of those tests, its output and the tests'
# logs kept as logs/NAME.*; prints caught, timeout (counted as caught),
# survived, skipped or error (the tests did not run at all)
check() {
    local t r rc=0 result=survived
    timeout -k 60 "$timeout_s" make -C "$obj" -j2 check TESTS="$1" > "$logs/$2.log" 2>&1 || rc=$?
    for t in $1; do
        cp "$obj/$t.log" "$logs/$2.${t##*/}.log" 2>/dev/null || true
    done
    [ "$rc" = 124 ] && { echo timeout; return; }
    for t in $1; do
        r=$(sed -n 's/^:test-result: //p' "$obj/$t.trs" 2>/dev/null | sort -u | tr '\n' ' ')
        case $r in
        *FAIL*|*ERROR*|*XPASS*) result=caught ;;
        *SKIP*) [ "$result" = caught ] || result=skipped ;;
        PASS*) ;;
        *) [ "$result" = caught ] || result=error ;;
        esac
    done
    [ "$rc" = 0 ] || [ "$result" != survived ] || result=error
    echo "$result"
}

all_tests=$(for i in "${sel[@]}"; do printf '%s\n' ${tests[i]}; done | sort -u | tr '\n' ' ')
note "the named tests without mutations: $all_tests"
case $(check "$all_tests" baseline) in
survived) ;;
*) grep -E '^(FAIL|ERROR|SKIP):' "$logs/baseline.log" >&2 || tail -n 40 "$logs/baseline.log" >&2
   grep -h -E '^not ok|^#   FAIL|^\[  FAILED  \]' "$logs"/baseline.*.log >&2 || true
   die "the tests must pass on the unchanged tree first (log: $logs/baseline.log; use --keep)" ;;
esac

# ---------------------------------------------------------------- mutations
caught=0 survivors=() broken=() unjudged=()
for i in "${sel[@]}"; do
    id=${ids[i]} file=$src/${files[i]} t0=$(date +%s)
    cp "$file" "$tmp/original"
    apply "${finds[i]}" "${repls[i]}" "$file"
    if ! make -C "$obj" -j2 > "$logs/$id.build.log" 2>&1; then
        outcome=broken
    else
        outcome=$(check "${tests[i]}" "$id")
    fi
    # a new mtime: the next build compiles the original again
    cp "$tmp/original" "$file"
    case $outcome in
    caught|timeout) caught=$((caught + 1)) ;;
    survived) survivors+=("$id") ;;
    broken) broken+=("$id") ;;
    *) unjudged+=("$id ($outcome)") ;;
    esac
    printf 'mutation: %-28s %-8s %4ss  %s\n' "$id" "$outcome" $(( $(date +%s) - t0 )) "${tests[i]}"
    # the first failing case, to read what caught it
    [ "$outcome" != caught ] || grep -H -m 1 -E '^not ok|^\[  FAILED  \]' "$logs/$id".*.log 2>/dev/null |
        sed "s|^$logs/$id\.\(.*\)\.log:|mutation:     by \1: |" | head -n 1 || true
done
make -C "$obj" -j2 > "$logs/restore.log" 2>&1 || true

echo "caught $caught of ${#sel[@]} ($(( ($(date +%s) - start) / 60 )) min)"
for id in "${survivors[@]}"; do echo "survived: $id"; done
for id in "${broken[@]}"; do echo "broken (does not build, fix the list): $id"; done
for id in "${unjudged[@]}"; do echo "not judged (the tests did not run): $id"; done
[ ${#survivors[@]} -eq 0 ] && [ ${#broken[@]} -eq 0 ] && [ ${#unjudged[@]} -eq 0 ]
