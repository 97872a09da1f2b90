#!/usr/bin/env bash
# Compares the particle files two builds of pbf write for every shipped scene: 3 frames in PLY
# and VTU, with 1 and 2 threads. Prints IDENTICAL, or the files that differ. A change that
# should not touch the physics (a refactoring) must print IDENTICAL against the commit before it.
# Usage: bash bench/compare_outputs.sh OLD_PBF NEW_PBF [FRAMES]
#   e.g. git worktree add /tmp/old HEAD~1 && cmake -S /tmp/old -B /tmp/old/build && \
#        cmake --build /tmp/old/build -j && bash bench/compare_outputs.sh /tmp/old/build/pbf build/pbf
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: compare_outputs.sh OLD_PBF NEW_PBF [FRAMES]}
new=${2:?usage: compare_outputs.sh OLD_PBF NEW_PBF [FRAMES]}
frames=${3:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pbf_compare_XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sums() { # PBF OUT: md5 of every frame file of every scene, 1 and 2 threads
    local pbf=$1 out=$2
    : >"$out"
    for s in scenes/*.json; do
        local n
        n=$(basename "$s" .json)
        for t in 1 2; do
            local d="$tmp/run"
            rm -rf "$d"
            "$pbf" run "$s" --frames "$frames" --threads "$t" --format ply,vtu --out "$d" --quiet \
                >/dev/null 2>&1 || echo "$n-$t failed" >>"$out"
            (cd "$d" && md5sum $(ls | grep -E '^frame_.*\.(ply|vtu)$' | sort)) | sed "s|^|$n-$t |" >>"$out"
        done
    done
}
sums "$old" "$tmp/old.txt"
sums "$new" "$tmp/new.txt"
if diff "$tmp/old.txt" "$tmp/new.txt" >"$tmp/diff.txt"; then
    echo "IDENTICAL: $(wc -l <"$tmp/new.txt") frame files of $(ls scenes/*.json | wc -l) scenes"
else
    echo "DIFFERENT:"
    cat "$tmp/diff.txt"
    exit 1
fi
