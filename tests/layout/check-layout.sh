#!/bin/bash
# check-layout.sh: the source tree keeps its shape (../shared/DESIGN.md,
# "Shape"): who may include whom, libraries that know nothing of HTTP, and
# files that stay small.
#
#   util    includes util only
#   core    core and util
#   engine  engine, core and util
#   jobs    jobs, engine, core and util
#   api, worker, admin   anything below them, never each other
#   cli, sdk             nothing of core, engine or jobs (they speak HTTP)
#   www                  the dashboard's static files (no C)
#
# Nothing in core, engine or jobs knows HTTP: their headers mention no
# HTTP status or response, and none of their files includes api/. A file of
# src/ over 900 lines says why in its head comment ("long because"). A
# function's prefix is its file's name: every function a file NAME.c
# defines (its name at the start of a line) is NAME or NAME_*, or main.
# Prints one line per breach and exits 1 if there is any. Run by make check
# (twice in CI: in the build and in the tarball's), so every file is read
# by one awk, not by a few processes per file.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top/src" || exit 1
bad=0
for dir in */; do
    case ${dir%/} in
    util | core | engine | jobs | api | worker | admin | cli | sdk) ;;
    www) ;;     # the dashboard's static files: no C, nothing to include
    *) echo "check-layout: src/${dir%/} is not a folder of DESIGN.md's layout"; bad=1 ;;
    esac
done
shopt -s nullglob
files=(util/*.[ch] core/*.[ch] engine/*.[ch] jobs/*.[ch] api/*.[ch] worker/*.[ch] admin/*.[ch] cli/*.[ch] sdk/*.[ch])
[ "${#files[@]}" -gt 0 ] || { echo "check-layout: no source file found under $top/src"; exit 1; }
awk '
BEGIN {
    allowed["util"] = "util"
    allowed["core"] = "core util"
    allowed["engine"] = "engine core util"
    allowed["jobs"] = "jobs engine core util"
    allowed["api"] = "api jobs engine core util"
    allowed["worker"] = "worker jobs engine core util"
    allowed["admin"] = "admin jobs engine core util"
    allowed["cli"] = "cli util"
    allowed["sdk"] = "sdk util"
    bad = 0
}
function breach(msg) { print "check-layout: " msg; bad = 1 }
# the checks that need a whole file, once it has been read
function end_file() {
    if (file == "")
        return
    if (lines > 900 && !said_why)
        breach("src/" file " has " lines " lines and its head comment does not say why (\"long because\")")
}
FNR == 1 {
    end_file()
    file = FILENAME; lines = 0; said_why = 0
    dir = file; sub(/\/.*/, "", dir)
    name = file; sub(/.*\//, "", name); is_c = sub(/\.c$/, "", name)
    is_h = (file ~ /\.h$/) && (dir == "core" || dir == "engine" || dir == "jobs")
}
{ lines++ }
FNR <= 40 && /long because/ { said_why = 1 }
/^#include "[a-z_]*\// {
    inc = $0; sub(/^#include "/, "", inc); sub(/\/.*/, "", inc)
    if (index(" " allowed[dir] " ", " " inc " ") == 0)
        breach("src/" file " includes " inc "/ (src/" dir " may include: " allowed[dir] ")")
}
is_c && /^[a-z_][a-z0-9_]*\(/ {
    fn = $0; sub(/\(.*/, "", fn)
    if (fn != name && index(fn, name "_") != 1 && fn != "main")
        breach("src/" file " defines " fn "(), whose prefix is not the file'"'"'s name (" name ")")
}
is_h && /HTTP|http_|struct api_/ && !knows_http[file]++ {
    breach("src/" file " knows HTTP: " FNR ":" $0)
}
END {
    end_file()
    if (!bad)
        print "check-layout: " NR_FILES " files keep the layout"
    exit bad
}' NR_FILES="${#files[@]}" "${files[@]}" || bad=1
exit "$bad"
