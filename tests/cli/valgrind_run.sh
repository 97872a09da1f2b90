#!/usr/bin/env bash
# A short `pbf` session under valgrind memcheck (docs/robustness.md): a run with a checkpoint,
# a resume, a refused corrupt checkpoint and `pbf info`. Any memory error or a definite/indirect
# leak fails the test (valgrind's exit status 99).
# Usage: valgrind_run.sh VALGRIND PBF_BINARY SOURCE_DIR
set -u
VALGRIND=${1:?usage: valgrind_run.sh VALGRIND PBF_BINARY SOURCE_DIR}
PBF=${2:?pbf binary}
SRC=${3:?source dir}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_valgrind_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# 1 thread: libgomp's worker threads would only add noise; the code paths are the same.
SMALL=(--set fluid.particle_radius=0.04 --set time.substeps=1 --threads 1 --quiet)
# --track-origins=yes finds no more errors, it only says where an uninitialised value came from,
# and it makes memcheck about twice as slow: a command that fails runs again with it, for the report.
VG=("$VALGRIND" --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect)

fail() { echo "FAIL [valgrind]: $*" >&2; exit 1; }
run() { # run WANT_RC CMD...
    local want=$1; shift
    "${VG[@]}" "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        [ "$rc" -eq 99 ] && "${VG[@]}" --track-origins=yes "$@" >/dev/null 2>"$TMP/err"
        cat "$TMP/err" >&2
        fail "'$*' exited $rc, expected $want (99: valgrind found errors)"
    fi
}

run 0 "$PBF" run --frames 3 --out "$TMP/o" --format ply,vtk --checkpoint-every 2 "${SMALL[@]}"
run 0 "$PBF" resume "$TMP/o" --frames 5
run 0 "$PBF" info "$SRC/scenes/moving_wall.json"
printf 'garbage' >"$TMP/o/checkpoint.pbfck"
run 1 "$PBF" resume "$TMP/o" --frames 6
grep -q "not a pbf checkpoint" "$TMP/err" || fail "corrupt checkpoint not reported"
run 1 "$PBF" run --frames 1 --out "$TMP/o2" --set solver.iteratons=3
echo "ok [valgrind]"
