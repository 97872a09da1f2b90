#!/usr/bin/env bash
# Which source file calls which: reads the symbol tables of compiled objects (nm), links every
# undefined symbol of a file to the file that defines it, and fails when files call each other,
# directly (a.c -> b.c -> a.c) or around a longer loop. Dependencies must point one way
# (app -> render/io -> library -> kernels.h; /work/shared/DESIGN.md "Layout").
#
# Usage: bash scripts/check_calls.sh [--list] BUILD_DIR OBJECT...
#   BUILD_DIR  the build folder; a file's name is its object's path below it, without
#              "CMakeFiles/<target>.dir/" and ".o" (build/app/CMakeFiles/pbf_cli.dir/cmd_run.c.o
#              is app/cmd_run.c)
#   OBJECT     object files, or ';'-separated lists of them (CMake's $<TARGET_OBJECTS:...>)
#   --list     also print, per file, the files whose functions or data it uses
# The ctest case `call_graph` (tests/CMakeLists.txt) runs it on the library, the renderer and
# the command. Exit status: 0 no loop, 1 a loop (printed with the symbols that make it), 2 usage.
set -euo pipefail

list=0
if [ "${1:-}" = "--list" ]; then
    list=1
    shift
fi
if [ $# -lt 2 ]; then
    echo "usage: bash scripts/check_calls.sh [--list] BUILD_DIR OBJECT..." >&2
    exit 2
fi
build=$(realpath -- "$1")
shift
NM=${NM:-nm}

objects=()
for arg in "$@"; do
    IFS=';' read -r -a parts <<<"$arg"
    for part in "${parts[@]}"; do
        if [ -n "$part" ]; then objects+=("$part"); fi
    done
done

for obj in "${objects[@]}"; do
    if [ ! -f "$obj" ]; then
        echo "check_calls: no object file '$obj' (build first)" >&2
        exit 2
    fi
done
# One line per symbol: "FILE TYPE SYMBOL" (nm -P -A prints "OBJECT: SYMBOL TYPE [VALUE SIZE]"),
# with one nm for all objects.
mapfile -t paths < <(realpath -- "${objects[@]}")
symbols() {
    "$NM" -P -A "${paths[@]}" | awk -v build="$build/" '
        NF >= 3 {
            file = $1
            sub(/:$/, "", file)
            if (index(file, build) == 1) file = substr(file, length(build) + 1)
            sub(/CMakeFiles\/[^\/]*\.dir\//, "", file)
            sub(/\.o$/, "", file)
            print file, $3, $2
        }' || exit 2
}

symbols | awk -v list="$list" '
    # Global definitions (weak ones and C++ template copies left out: every object has them).
    $2 ~ /^[TDBRCGS]$/ { if (!($3 in def)) def[$3] = $1; files[$1] = 1; next }
    $2 == "U" { n_use++; use_file[n_use] = $1; use_sym[n_use] = $3; files[$1] = 1; next }
    { files[$1] = 1 }
    END {
        n = 0
        for (f in files) name[++n] = f
        # sort the names (insertion sort: a few hundred files at most) for a stable report
        for (i = 2; i <= n; i++) {
            v = name[i]
            for (j = i - 1; j >= 1 && name[j] > v; j--) name[j + 1] = name[j]
            name[j + 1] = v
        }
        for (i = 1; i <= n; i++) index_of[name[i]] = i
        for (k = 1; k <= n_use; k++) {
            s = use_sym[k]
            if (!(s in def)) continue          # system libraries, other targets
            a = index_of[use_file[k]]; b = index_of[def[s]]
            if (a == b) continue
            if (!((a, b) in edge)) edge[a, b] = s
            else if (index(" " edge[a, b] " ", " " s " ") == 0) edge[a, b] = edge[a, b] " " s
            reach[a, b] = 1
        }
        if (list) {
            for (a = 1; a <= n; a++) {
                line = ""
                for (b = 1; b <= n; b++) if ((a, b) in edge) line = line " " name[b]
                print name[a] " ->" (line == "" ? " (nothing)" : line)
            }
        }
        # transitive closure (Floyd-Warshall on booleans)
        for (k = 1; k <= n; k++)
            for (a = 1; a <= n; a++) if ((a, k) in reach)
                for (b = 1; b <= n; b++) if ((k, b) in reach) reach[a, b] = 1
        loops = 0
        for (a = 1; a <= n; a++) {
            if (a in done || !((a, a) in reach)) continue
            members = ""
            for (b = 1; b <= n; b++)
                if (b == a || (((a, b) in reach) && ((b, a) in reach))) { comp[b] = a; done[b] = 1; members = members " " name[b] }
            loops++
            print "check_calls: these files call each other:" members
            for (x = 1; x <= n; x++) for (y = 1; y <= n; y++)
                if (comp[x] == a && comp[y] == a && ((x, y) in edge))
                    print "  " name[x] " -> " name[y] ": " edge[x, y]
        }
        if (loops > 0) exit 1
        print "check_calls: " n " files, no file calls back into a file that calls it"
    }'
