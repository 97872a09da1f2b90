#!/usr/bin/env bash
# A run opened with Debian's ParaView (pvbatch under xvfb-run, through `pbf paraview`): the
# floating crates with --format vtu,vtk,ply and --mesh for 3 frames, read from frames.pvd (with a
# picture) and from the legacy .vtk series (with a state file), and a dam break of particles
# alone (frames.pvd of one part); check_paraview.py compares what ParaView read with the folder's
# own files. And the refusals before ParaView starts; skips (77) after those where pvbatch or
# xvfb-run is missing.
# Usage: test_paraview.sh PBF_BINARY SOURCE_DIR
set -u
PBF=${1:?usage: test_paraview.sh PBF_BINARY SOURCE_DIR}
SRC=${2:?source dir}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_paraview_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Refusals come before ParaView is looked for (so they run without it too): a usage error (2),
# a folder that is not there or not a run, a picture into a missing folder (1, naming it and
# what was expected), no picture.
"$PBF" paraview 2>"$TMP/err"; [ $? -eq 2 ] || fail "no folder: exit status, expected 2"
grep -q "usage: pbf paraview RUN_DIR" "$TMP/err" || fail "no usage line"
"$PBF" paraview "$TMP" --size 4x4 2>"$TMP/err"; [ $? -eq 2 ] || fail "--size 4x4 accepted"
grep -q "size expects WxH" "$TMP/err" || fail "the --size message"
"$PBF" paraview "$TMP/none" 2>"$TMP/err"; [ $? -eq 1 ] || fail "a missing folder accepted"
grep -q "$TMP/none: No such file or directory" "$TMP/err" || fail "the missing folder's message"
mkdir "$TMP/empty"
"$PBF" paraview "$TMP/empty" --render "$TMP/none.png" 2>"$TMP/err"
[ $? -eq 1 ] || fail "an empty folder accepted"
grep -q "empty: no frames.pvd, frames.vtk.series or frames.ply.series" "$TMP/err" \
    || { cat "$TMP/err" >&2; fail "the empty folder's message"; }
[ ! -e "$TMP/none.png" ] || fail "a picture of an empty folder"
: >"$TMP/empty/frames.pvd" # a run folder as far as the command looks; the picture's folder is not
"$PBF" paraview "$TMP/empty" --render "$TMP/no/such/x.png" 2>"$TMP/err"
[ $? -eq 1 ] || fail "a --render into a missing folder accepted"
grep -q "cannot write into '$TMP/no/such'" "$TMP/err" || { cat "$TMP/err" >&2; fail "its message"; }
env -u DISPLAY "$PBF" paraview "$TMP/empty" 2>"$TMP/err"
[ $? -eq 1 ] || fail "a window without a display"
grep -q "no display to open ParaView's window on" "$TMP/err" || fail "the no-display message"

for tool in pvbatch xvfb-run; do
    if ! command -v "$tool" >/dev/null; then
        echo "SKIP: $tool not installed (apt-get install paraview python3-paraview xvfb)"
        exit 77
    fi
done
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# (the .ply files are the check's reference counts)
"$PBF" run "$SRC/scenes/floating.json" --set fluid.particle_radius=0.02 --frames 3 \
    --format vtu,vtk,ply --mesh --out "$TMP/run" --quiet || fail "pbf run exited $?"

"$PBF" paraview "$TMP/run" --render "$TMP/frame.png" --frame 2 --size 480x270 >"$TMP/pvd.out" \
    2>"$TMP/pvd.err" || { cat "$TMP/pvd.err" >&2; fail "pbf paraview --render exited $?"; }
"$PY" "$SRC/tests/cli/check_paraview.py" "$TMP/run" "$TMP/pvd.out" pvd 2 \
    "$TMP/frame.png" 480 270 || fail "check_paraview.py, frames.pvd"

"$PBF" paraview "$TMP/run" --source vtk --state "$TMP/run.pvsm" --frame 1 >"$TMP/vtk.out" \
    2>"$TMP/vtk.err" || { cat "$TMP/vtk.err" >&2; fail "pbf paraview --source vtk exited $?"; }
"$PY" "$SRC/tests/cli/check_paraview.py" "$TMP/run" "$TMP/vtk.out" vtk 1 \
    || fail "check_paraview.py, .vtk series"
grep -q "<ServerManagerState" "$TMP/run.pvsm" || fail "run.pvsm is not a ParaView state file"

# particles alone (the dam break, 2 frames): frames.pvd of one part, which ParaView reads as a
# data set without blocks
"$PBF" run "$SRC/scenes/dam_break.json" --set fluid.particle_radius=0.03 --frames 2 \
    --format vtu,ply --out "$TMP/dam" --quiet || fail "pbf run dam_break exited $?"
"$PBF" paraview "$TMP/dam" --render "$TMP/dam.png" --size 320x180 >"$TMP/dam.out" \
    2>"$TMP/dam.err" || { cat "$TMP/dam.err" >&2; fail "pbf paraview, one part, exited $?"; }
"$PY" "$SRC/tests/cli/check_paraview.py" "$TMP/dam" "$TMP/dam.out" pvd 2 "$TMP/dam.png" 320 180 \
    || fail "check_paraview.py, particles alone"

echo "test_paraview: ok"
