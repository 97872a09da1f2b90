#!/usr/bin/env bash
# Shell-level tests of the `pbf` command. Usage: test_cli.sh PBF_BINARY SOURCE_DIR CASE
# CASE is one of the functions below named case_*; CTest runs each as its own test.
# Runs use a coarse particle radius so each case stays within a few seconds on 2 cores.
set -u

PBF=${1:?usage: test_cli.sh PBF_BINARY SOURCE_DIR CASE}
SRC=${2:?source dir}
CASE=${3:?case}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_cli_${CASE}_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# A small, fast dam break: 10 x 15 x 10 = 1500 particles, one substep.
SMALL=(--set fluid.particle_radius=0.02 --set time.substeps=1 --threads 2)

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
# expect_rc WANT CMD...: runs CMD, keeps stdout/stderr in $TMP/out, $TMP/err.
expect_rc() {
    local want=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $rc, expected $want"; }
}
expect_in() { # expect_in FILE TEXT
    grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "'$2' not in $(basename "$1")"; }
}

# Checks a particle file is complete: header present, size = header + particles * record size.
# Prints the particle count.
check_frame_file() {
    local f=$1 n hdr size
    case "$f" in
    *.ply)
        n=$(head -c 1024 "$f" | grep -a '^element vertex ' | head -1 | awk '{print $3}')
        [ -n "$n" ] || fail "$f: no 'element vertex' line"
        hdr=$(grep -abo 'end_header' "$f" | head -1 | cut -d: -f1)
        [ -n "$hdr" ] || fail "$f: no end_header"
        hdr=$((hdr + 11))
        size=$(stat -c %s "$f")
        [ "$size" -eq $((hdr + 32 * n)) ] || fail "$f: $size bytes, expected $((hdr + 32 * n))"
        ;;
    *.vtk)
        head -c 30 "$f" | grep -aq '^# vtk DataFile Version 3.0' || fail "$f: not a VTK 3.0 file"
        n=$(head -c 1024 "$f" | grep -a '^POINTS ' | head -1 | awk '{print $2}')
        [ -n "$n" ] || fail "$f: no POINTS line"
        # The last section is the velocity vectors: 12 bytes per particle and a newline.
        hdr=$(grep -abo 'VECTORS velocity float' "$f" | tail -1 | cut -d: -f1)
        [ -n "$hdr" ] || fail "$f: no velocity section (truncated)"
        size=$(stat -c %s "$f")
        [ "$size" -eq $((hdr + 23 + 12 * n + 1)) ] || fail "$f: $size bytes, expected $((hdr + 23 + 12 * n + 1))"
        ;;
    esac
    echo "$n"
}

# stats.csv: the expected header, one row per frame 0..last, every row with all columns.
check_stats() {
    local dir=$1 rows=$2
    local csv="$dir/stats.csv"
    [ -f "$csv" ] || fail "no stats.csv"
    head -1 "$csv" | grep -q '^frame,time,particles,avg_density_error,max_density_error,kinetic_energy,max_speed,avg_neighbors,ms_per_step,ms_' \
        || fail "stats.csv header: $(head -1 "$csv")"
    local got
    got=$(($(wc -l <"$csv") - 1))
    [ "$got" -eq "$rows" ] || fail "stats.csv has $got data rows, expected $rows"
    local cols
    cols=$(head -1 "$csv" | awk -F, '{print NF}')
    awk -F, -v c="$cols" 'NR > 1 && (NF != c || $1 != NR - 2) { exit 1 }' "$csv" \
        || fail "stats.csv: a row with the wrong column count or frame number"
    [ -z "$(tail -c 1 "$csv")" ] || fail "stats.csv does not end with a newline"
}

no_temp_files() {
    local left
    left=$(find "$1" -name '*.tmp.*' | head -1)
    [ -z "$left" ] || fail "temporary file left: $left"
}

# Emitters and sinks (docs/scenes.md, "flow"): particle counts change every frame, every PLY and
# VTK file is complete, stats.csv counts what came in and went out, a resume from a checkpoint
# taken with the emitter running writes the same bytes, a full capacity stops the run with its
# frames kept, and a nozzle aimed into a wall is refused before the run.
flow_scene() { # flow_scene FILE [EXTRA JSON FOR "flow"]
    cat >"$1" <<JSON
{"name": "channel", "domain": {"min": [0, 0, 0], "max": [1.2, 0.4, 0.4]},
 "fluid": {"particle_radius": 0.02, "blocks": [{"min": [0.3, 0, 0], "max": [0.6, 0.08, 0.4]}]},
 "time": {"frames": 30, "substeps": 1},
 "flow": {"emitters": [{"shape": "disc", "position": [0.1, 0.15, 0.2], "direction": [1, 0, 0],
                        "speed": 3, "radius": 0.1}],
          "sinks": [{"min": [0.8, -1, -1], "max": [2, 2, 2]}]${2:-}}}
JSON
}

case_flow() {
    flow_scene "$TMP/flow.json"
    expect_rc 0 "$PBF" run "$TMP/flow.json" --out "$TMP/a" --format ply,vtk --checkpoint-every 10 --threads 2 -q
    local first last f
    first=$(check_frame_file "$TMP/a/frame_00000.ply")
    last=$(check_frame_file "$TMP/a/frame_00030.ply")
    [ "$first" -ne "$last" ] || fail "the particle count did not change ($first)"
    for f in "$TMP/a"/frame_*.ply "$TMP/a"/frame_*.vtk; do check_frame_file "$f" >/dev/null; done
    check_stats "$TMP/a" 31
    head -1 "$TMP/a/stats.csv" | grep -q ',emitted,removed$' || fail "no emitted, removed columns"
    awk -F, 'NR == 2 { base = $3 } NR > 1 { if ($3 != base + $(NF-1) - $NF) exit 1 }' "$TMP/a/stats.csv" \
        || fail "particles != initial + emitted - removed in stats.csv"
    awk -F, 'END { if ($NF <= 0) exit 1 }' "$TMP/a/stats.csv" || fail "the sink removed nothing"
    # resume from frame 20's checkpoint: the same files as the straight run
    expect_rc 0 "$PBF" run "$TMP/flow.json" --out "$TMP/b" --frames 20 --format ply,vtk --checkpoint-every 10 --threads 1 -q
    expect_rc 0 "$PBF" resume "$TMP/b" --frames 30 --threads 2 -q
    for f in "$TMP/a"/frame_*; do cmp -s "$f" "$TMP/b/$(basename "$f")" || fail "$(basename "$f") differs after resume"; done
    # a full capacity: a clear stop naming the key, every frame before it kept
    expect_rc 1 "$PBF" run "$TMP/flow.json" --out "$TMP/c" --set flow.capacity=450 --threads 2 -q
    expect_in "$TMP/err" "flow.capacity"
    local kept
    kept=$(ls "$TMP/c"/frame_*.ply | wc -l)
    [ "$kept" -gt 1 ] && [ "$kept" -lt 31 ] || fail "$kept frames kept"
    check_stats "$TMP/c" "$kept"
    for f in "$TMP/c"/frame_*.ply; do cmp -s "$f" "$TMP/a/$(basename "$f")" || fail "$(basename "$f") differs"; done
    # a nozzle aimed into a wall: refused before the run, naming the emitter and the key
    expect_rc 1 "$PBF" run "$TMP/flow.json" --out "$TMP/d" --set 'flow.emitters[0].direction=[-1,0,0]' --set 'flow.emitters[0].position=[0.05,0.15,0.2]' -q
    expect_in "$TMP/err" "flow.emitters[0]: emitter: direction aims the nozzle into the domain's x_min wall"
    [ ! -e "$TMP/d/frame_00000.ply" ] || fail "a frame was written for a refused scene"
}

case_run_ply() {
    expect_rc 0 "$PBF" run --frames 3 --out "$TMP/o" "${SMALL[@]}"
    [ "$(ls "$TMP/o"/frame_*.ply | wc -l)" -eq 4 ] || fail "expected 4 ply files: $(ls "$TMP/o")"
    for i in 0 1 2 3; do
        n=$(check_frame_file "$TMP/o/frame_0000$i.ply") || exit 1
        [ "$n" -eq 1500 ] || fail "frame $i has $n particles, expected 1500"
    done
    check_stats "$TMP/o" 4
    [ -s "$TMP/o/scene.json" ] || fail "no scene.json"
    head -c 1 "$TMP/o/scene.json" | grep -q '{' || fail "scene.json is not JSON"
    expect_in "$TMP/o/scene.json" '"frames":'
    no_temp_files "$TMP/o"
    expect_in "$TMP/out" "particles"
    # The scene.json of a run loads back and describes the same run.
    expect_rc 0 "$PBF" info "$TMP/o/scene.json"
    expect_in "$TMP/out" "1,500"
}

case_run_vtk() {
    expect_rc 0 "$PBF" run --frames 3 --out "$TMP/o" --format vtk "${SMALL[@]}"
    [ "$(ls "$TMP/o"/frame_*.vtk | wc -l)" -eq 4 ] || fail "expected 4 vtk files: $(ls "$TMP/o")"
    [ -z "$(ls "$TMP/o"/*.ply 2>/dev/null)" ] || fail "ply files written with --format vtk"
    for f in "$TMP/o"/frame_*.vtk; do check_frame_file "$f" >/dev/null || exit 1; done
    check_stats "$TMP/o" 4
    # A second run in the same folder replaces the first: no frame files are left over.
    expect_rc 0 "$PBF" run --frames 1 --out "$TMP/o" --format ply --quiet "${SMALL[@]}"
    [ "$(ls "$TMP/o"/frame_* | wc -l)" -eq 2 ] || fail "old frames left: $(ls "$TMP/o")"
    check_stats "$TMP/o" 2
}

case_set_typo() {
    expect_rc 1 "$PBF" run --frames 1 --out "$TMP/o" --set solver.iteratons=3
    expect_in "$TMP/err" "iteratons"
    expect_in "$TMP/err" "pbf: "
    [ ! -e "$TMP/o" ] || fail "output folder created for a failed scene"
    expect_rc 1 "$PBF" info --set solver.iterations=0
    expect_in "$TMP/err" "iterations"
    expect_rc 1 "$PBF" run "$TMP/no_such_scene.json" --frames 1 --out "$TMP/o"
    expect_in "$TMP/err" "no_such_scene.json"
}

case_usage() {
    expect_rc 2 "$PBF" run --bogus
    expect_in "$TMP/err" "unknown option '--bogus'"
    expect_in "$TMP/err" "usage: pbf run"
    expect_rc 2 "$PBF" run --frames
    expect_in "$TMP/err" "'--frames' needs a value"
    expect_rc 2 "$PBF" run --frames abc
    expect_in "$TMP/err" "--frames"
    expect_rc 2 "$PBF" run --frames 3 --time 1
    expect_rc 2 "$PBF" run --format obj
    expect_in "$TMP/err" "obj"
    expect_rc 2 "$PBF" run --set novalue
    expect_rc 2 "$PBF" run a.json b.json
    expect_rc 2 "$PBF" info --frames 3
    expect_rc 2 "$PBF" bench --particles 10,x
    expect_rc 2 "$PBF" bench --neighbor-mode tree
    expect_rc 2 "$PBF" frobnicate
    expect_in "$TMP/err" "unknown command 'frobnicate'"
    expect_rc 2 "$PBF"
    expect_rc 2 "$PBF" --bogus
    expect_rc 0 "$PBF" --help
    expect_in "$TMP/out" "usage: pbf COMMAND"
    expect_rc 0 "$PBF" --version
    grep -Eq '^pbf [0-9]+\.[0-9]+\.[0-9]+' "$TMP/out" || fail "--version: $(cat "$TMP/out")"
    for cmd in run info bench; do
        expect_rc 0 "$PBF" "$cmd" --help
        expect_in "$TMP/out" "usage: pbf $cmd"
        expect_rc 0 "$PBF" help "$cmd"
        expect_in "$TMP/out" "usage: pbf $cmd"
    done
}

case_info() {
    expect_rc 0 "$PBF" info "$SRC/scenes/dam_break.json"
    local n
    n=$(awk '$1 == "particles" { gsub(",", "", $2); print $2 }' "$TMP/out")
    [ -n "$n" ] && [ "$n" -gt 0 ] || fail "no particle count in: $(head -3 "$TMP/out")"
    expect_in "$TMP/out" "kernel radius"
    expect_in "$TMP/out" "particle mass"
    expect_in "$TMP/out" "memory"
    expect_in "$TMP/out" '"iterations"'
    # The count is the one a run really creates (frame 0 only: no stepping).
    expect_rc 0 "$PBF" run "$SRC/scenes/dam_break.json" --frames 0 --out "$TMP/o" --quiet
    local m
    m=$(check_frame_file "$TMP/o/frame_00000.ply") || exit 1
    [ "$m" -eq "$n" ] || fail "info says $n particles, the run wrote $m"
    check_stats "$TMP/o" 1
    # The key reference: a table per section, every key with its default (docs/scenes.md is
    # compared with it by the scene_docs test).
    expect_rc 0 "$PBF" info --scene-keys
    expect_in "$TMP/out" '<!-- scene-keys solver -->'
    expect_in "$TMP/out" '| `solver.iterations` | integer | | `4` | [1, 1000] |'
    expect_in "$TMP/out" '| `colliders[i].half_extents` |'
    expect_rc 2 "$PBF" info --scene-keys "$SRC/scenes/dam_break.json"
    expect_in "$TMP/err" "--scene-keys takes no scene"
}

# pbf features: the table as CSV, one row per feature, every cell yes, unverified or no: <why>;
# pbf info names the rows a scene uses.
case_features() {
    expect_rc 0 "$PBF" features
    [ "$(head -1 "$TMP/out")" = "feature,cpu,cuda,mpi" ] || fail "header: $(head -1 "$TMP/out")"
    [ "$(wc -l <"$TMP/out")" -eq 19 ] || fail "rows: $(wc -l <"$TMP/out")"
    /usr/bin/python3 - "$TMP/out" <<'PY' || fail "cells"
import csv, re, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
for r in rows:
    assert len(r) == 4, r
    assert r[1] == "yes", r
    for c in r[1:]:
        assert re.fullmatch(r"yes|unverified|no: .*run the scene.*", c), c
assert [r[0] for r in rows][:3] == ["fluid", "error_control", "wendland_kernel"], rows
PY
    expect_rc 2 "$PBF" features --bogus
    expect_rc 0 "$PBF" info "$SRC/scenes/floating.json"
    expect_in "$TMP/out" "floating_bodies  cpu yes, cuda unverified, mpi yes"
    expect_rc 0 "$PBF" info "$SRC/scenes/honey.json"
    expect_in "$TMP/out" "viscosity        cpu yes, cuda unverified, mpi yes"
    expect_in "$TMP/out" "emitters         cpu yes, cuda unverified, mpi yes"
}

# A mesh file cut short between faces loads as an open surface: a warning names the file and
# its open edges; the whole file loads without one.
case_open_mesh() {
    head -18 "$SRC/scenes/meshes/crate.obj" >"$TMP/cut.obj"
    local set='meshes=[{"file": "'"$TMP/cut.obj"'", "position": [1.0, 0.2, 0.3]}]'
    "$PBF" run "$SRC/scenes/dam_break.json" --frames 0 --out "$TMP/o" --quiet --set "$set" \
        >"$TMP/out" 2>"$TMP/err"
    if grep -q "mesh import is not built" "$TMP/err"; then echo "skipped: no mesh import"; return 0; fi
    expect_in "$TMP/err" "warning: mesh '$TMP/cut.obj' is an open surface (8 open edges)"
    set='meshes=[{"file": "'"$SRC/scenes/meshes/crate.obj"'", "position": [1.0, 0.2, 0.3]}]'
    expect_rc 0 "$PBF" run "$SRC/scenes/dam_break.json" --frames 0 --out "$TMP/o" --quiet --set "$set"
    if grep -q "open surface" "$TMP/err"; then fail "a closed mesh warned: $(cat "$TMP/err")"; fi
}

case_interrupt() {
    # Long enough that it is surely still running when the signal comes.
    "$PBF" run --frames 100000 --out "$TMP/o" "${SMALL[@]}" >"$TMP/out" 2>"$TMP/err" &
    local pid=$!
    # The signal comes once a few frames are written (a frame file appears whole, by rename),
    # not after a fixed time: in 2 s a release build wrote hundreds, each checked below.
    local polls=0
    while [ ! -e "$TMP/o/frame_00003.ply" ] && [ $polls -lt 300 ]; do
        sleep 0.05
        polls=$((polls + 1))
    done
    [ -e "$TMP/o/frame_00003.ply" ] || { kill -KILL "$pid"; fail "no 4 frames in 15 s"; }
    kill -INT "$pid" || fail "the run ended before the signal"
    local rc waited=0
    while kill -0 "$pid" 2>/dev/null && [ $waited -lt 150 ]; do sleep 0.1; waited=$((waited + 1)); done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fail "still running 15 s after SIGINT"; fi
    wait "$pid"
    rc=$?
    [ "$rc" -eq 130 ] || { cat "$TMP/err" >&2; fail "exit status $rc after SIGINT, expected 130"; }
    expect_in "$TMP/err" "stopped by Ctrl-C"
    local files
    files=$(ls "$TMP/o"/frame_*.ply | wc -l)
    [ "$files" -ge 1 ] || fail "no frame files"
    # Frames 0..files-1, every one complete, and one stats row per frame file.
    for ((i = 0; i < files; ++i)); do
        f=$(printf '%s/o/frame_%05d.ply' "$TMP" "$i")
        [ -f "$f" ] || fail "missing $f"
        check_frame_file "$f" >/dev/null || exit 1
    done
    check_stats "$TMP/o" "$files"
    no_temp_files "$TMP/o"
    expect_in "$TMP/err" "$files frames in"
}

case_disk_full() {
    # A file size limit makes writes fail like a full disk (EFBIG instead of ENOSPC): a frame of
    # 1500 particles is 48 KB, over the 40 KB allowed. Clear error, exit 1, valid folder.
    (ulimit -f 40; exec "$PBF" run --frames 10 --out "$TMP/o" --format ply "${SMALL[@]}") \
        >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ "$rc" -eq 1 ] || { cat "$TMP/err" >&2; fail "exit status $rc with a full disk, expected 1"; }
    expect_in "$TMP/err" "pbf: cannot write '$TMP/o/frame_00000.ply'"
    expect_in "$TMP/err" "File too large"
    no_temp_files "$TMP/o"
    [ -z "$(ls "$TMP/o"/frame_* 2>/dev/null)" ] || fail "frame files left: $(ls "$TMP/o")"
    check_stats "$TMP/o" 0
    # PLY (48 KB) fits under 55 KB, VTK (60 KB) does not: the frame's PLY file is taken back.
    (ulimit -f 55; exec "$PBF" run --frames 10 --out "$TMP/o" --format ply,vtk "${SMALL[@]}") \
        >"$TMP/out" 2>"$TMP/err"
    rc=$?
    [ "$rc" -eq 1 ] || { cat "$TMP/err" >&2; fail "exit status $rc with a full disk, expected 1"; }
    expect_in "$TMP/err" "frame_00000.vtk"
    [ -z "$(ls "$TMP/o"/frame_* 2>/dev/null)" ] || fail "frame files left: $(ls "$TMP/o")"
    no_temp_files "$TMP/o"
    check_stats "$TMP/o" 0
}

case_bench() {
    expect_rc 0 "$PBF" bench --particles 800,1500 --steps 2 --warmup 1 --threads 2 --csv "$TMP/b.csv"
    expect_in "$TMP/out" "ms_median"
    [ "$(wc -l <"$TMP/b.csv")" -eq 3 ] || fail "bench csv: $(cat "$TMP/b.csv")"
    head -1 "$TMP/b.csv" | grep -q '^particles,particle_radius,ms_median,ms_min,ms_' || fail "bench csv header"
    # many small worlds: both ways must end bit-identical (the rates are not checked)
    expect_rc 0 "$PBF" bench --batch --worlds 3 --particles 300 --steps 2 --warmup 1 --threads 2
    expect_in "$TMP/out" "worlds bit-identical both ways: 3 of 3"
    expect_in "$TMP/out" "worlds*steps/s"
    expect_rc 2 "$PBF" bench --batch --worlds 0
    expect_in "$TMP/err" "--worlds expects an integer in [1, 1000000]"
}

declare -F "case_$CASE" >/dev/null || fail "no such case"
"case_$CASE"
echo "ok [$CASE]"
