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
#
# Nothing in core, engine or jobs knows HTTP: their headers mention no
# HTTP status or response, and none of their files includes api/. A file of
# src/ over 900 lines says why in its head comment ("long because"). A
# function's prefix is its file's name: every function a file NAME.c
# defines (its name at the start of a line) is NAME or NAME_*, or main.
# Prints one line per breach and exits 1 if there is any. Run by make check.
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top/src" || exit 1
bad=0
breach() { echo "check-layout: $*"; bad=1; }

allowed() {	# allowed FOLDER: the folders its files may include
    case $1 in
    util) echo "util" ;;
    core) echo "core util" ;;
    engine) echo "engine core util" ;;
    jobs) echo "jobs engine core util" ;;
    api) echo "api jobs engine core util" ;;
    worker) echo "worker jobs engine core util" ;;
    admin) echo "admin jobs engine core util" ;;
    cli|sdk) echo "$1 util" ;;
    *) echo "" ;;
    esac
}

files=0
for dir in */; do
    dir=${dir%/}
    ok=$(allowed "$dir")
    [ -n "$ok" ] || { breach "src/$dir is not a folder of DESIGN.md's layout"; continue; }
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -e "$f" ] || continue
        files=$((files + 1))
        while IFS= read -r inc; do
            case " $ok " in *" $inc "*) ;; *) breach "src/$f includes $inc/ (src/$dir may include: $ok)" ;; esac
        done < <(sed -n 's/^#include "\([a-z_]*\)\/.*/\1/p' "$f")
        if [ "$(wc -l < "$f")" -gt 900 ] && ! head -n 40 "$f" | grep -q "long because"; then
            breach "src/$f has $(wc -l < "$f") lines and its head comment does not say why (\"long because\")"
        fi
        case $f in
        *.c)
            name=$(basename "$f" .c)
            while IFS= read -r fn; do
                case $fn in "$name" | "$name"_* | main) ;; *) breach "src/$f defines $fn(), whose prefix is not the file's name ($name)" ;; esac
            done < <(sed -n 's/^\([a-z_][a-z0-9_]*\)(.*/\1/p' "$f")
            ;;
        esac
    done
done
for f in core/*.h engine/*.h jobs/*.h; do
    [ -e "$f" ] || continue
    if grep -n -E 'HTTP|http_|struct api_' "$f" > /dev/null; then
        breach "src/$f knows HTTP: $(grep -n -E 'HTTP|http_|struct api_' "$f" | head -n 1)"
    fi
done
[ "$files" -gt 0 ] || breach "no source file found under $top/src"
[ "$bad" = 0 ] && echo "check-layout: $files files keep the layout"
exit "$bad"
