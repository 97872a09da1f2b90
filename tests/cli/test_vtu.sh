#!/usr/bin/env bash
# `pbf run --format ply,vtu`: the .vtu frames carry the PLY's values, frames.pvd every frame's
# time (check_vtu.py reads them back with Python's standard library); a run killed mid-way
# leaves a frames.pvd that lists the frames it finished. Usage: test_vtu.sh PBF_BINARY SOURCE_DIR
set -u
PBF=${1:?usage: test_vtu.sh PBF_BINARY SOURCE_DIR}
SRC=${2:?source dir}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_vtu_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A small dam break (about 1000 particles), 6 frames.
"$PBF" run "$SRC/scenes/dam_break.json" --set fluid.particle_radius=0.02 --frames 6 \
    --format ply,vtu --out "$TMP/run" --quiet || fail "pbf run exited $?"
python3 "$SRC/tests/cli/check_vtu.py" "$TMP/run" 6 || fail "check_vtu.py"

# Two fluids: each particle's phase in both files.
"$PBF" run "$SRC/scenes/oil_water.json" --set fluid.particle_radius=0.01 --frames 2 \
    --format ply,vtu --out "$TMP/phases" --quiet || fail "pbf run oil_water exited $?"
python3 "$SRC/tests/cli/check_vtu.py" "$TMP/phases" 2 || fail "check_vtu.py, two fluids"
SRC="$SRC" python3 - "$TMP/phases/frame_00002.vtu" <<'PY' || fail "phases of oil_water"
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "cli"))
from vtu_read import read_vtu
phase = read_vtu(sys.argv[1])["phase"]
assert sorted(set(phase)) == [0, 1], sorted(set(phase))
print(f"two fluids: {phase.count(0)} and {phase.count(1)} particles by phase")
PY

# Particles, mesh solids and surfaces together (the floating crates, --mesh): frames.pvd has a
# part each, every legacy series its .series file, all at stats.csv's times (check_series.py).
# A resumed run (without --mesh) writes them again, the earlier frames' files included.
"$PBF" run "$SRC/scenes/floating.json" --set fluid.particle_radius=0.02 --frames 4 \
    --format ply,vtk,vtu --mesh --checkpoint-every 2 --out "$TMP/floating" --quiet \
    || fail "pbf run floating exited $?"
python3 "$SRC/tests/cli/check_series.py" "$TMP/floating" 4 || fail "check_series.py, floating"
rm "$TMP/floating/frames.pvd" "$TMP/floating/"*.series
"$PBF" resume "$TMP/floating" --frames 6 --quiet || fail "pbf resume floating exited $?"
[ -e "$TMP/floating/surface_00004.ply" ] && [ ! -e "$TMP/floating/surface_00005.ply" ] \
    || fail "the first run's surfaces (0..4) are not what the folder holds"
python3 "$SRC/tests/cli/check_series.py" "$TMP/floating" 6 || fail "check_series.py, resumed"

# Spray, foam and bubbles (splash.json): diffuse_NNNNN.vtu, a part of frames.pvd, holds the PLY's
# values (27 particles by frame 5 at this size).
"$PBF" run "$SRC/scenes/splash.json" --set fluid.particle_radius=0.025 --frames 5 \
    --format ply,vtu --out "$TMP/splash" --quiet || fail "pbf run splash exited $?"
python3 "$SRC/tests/cli/check_series.py" "$TMP/splash" 5 >"$TMP/splash.out" \
    || fail "check_series.py, splash"
cat "$TMP/splash.out"
grep -q "diffuse particles as in the PLY" "$TMP/splash.out" || fail "no diffuse particles compared"

# Killed after a few frames: frames.pvd names only frames that exist.
"$PBF" run "$SRC/scenes/dam_break.json" --set fluid.particle_radius=0.015 --frames 10000 \
    --format vtu --out "$TMP/killed" --quiet &
pid=$!
for _ in $(seq 100); do
    [ -e "$TMP/killed/frame_00003.vtu" ] && break
    sleep 0.1
done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
SRC="$SRC" python3 - "$TMP/killed" <<'PY' || fail "frames.pvd of the killed run"
import os, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "cli"))
from vtu_read import read_pvd, read_vtu
series = read_pvd(os.path.join(sys.argv[1], "frames.pvd"))
assert len(series) >= 1, "empty series"
for t, path in series:
    read_vtu(path)
print(f"killed run: frames.pvd lists {len(series)} readable frames")
PY
echo "test_vtu: ok"
