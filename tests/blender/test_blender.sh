#!/usr/bin/env bash
# The Blender add-on (blender/pbf_blender, docs/blender.md).
# Usage: test_blender.sh PBF SOURCE_DIR CASE
# Each case_* is one CTest test. `readers` needs no Blender; the others run Debian's Blender
# headless and exit 77 (a skip) where `blender` is not installed. Runs are coarse (1.3k to 2k
# particles, a few frames) and renders small (160x120, 8 Cycles samples on the CPU).
set -u

PBF=${1:?usage: test_blender.sh PBF_BINARY SOURCE_DIR CASE}
SRC=${2:?source dir}
CASE=${3:?case}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_blender_${CASE}_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PY=${PBF_PYTHON:-/usr/bin/python3}
CHECK=("$PY" "$SRC/tests/blender/check_blender.py")
ADDON=$SRC/blender/pbf_blender/__init__.py
RENDER=(--resolution 160 120 --samples 8)

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
expect_rc() {
    local want=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ "$rc" -eq "$want" ] ||
        { tail -n 40 "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $rc, expected $want"; }
}
expect_in() {
    grep -qF -- "$2" "$1" || { tail -n 40 "$1" >&2; fail "'$2' not in $(basename "$1")"; }
}
need_blender() {
    command -v blender >/dev/null || { echo "SKIP: blender is not installed"; exit 77; }
}
blender_run() { # blender_run RC ARGS...: the add-on headless on a factory-startup Blender;
    local want=$1; shift # its output stays in $TMP/blender.out
    expect_rc "$want" blender -b --factory-startup -noaudio --python "$ADDON" -- "$@"
    cp "$TMP/out" "$TMP/blender.out"
}

# floating.json: three mesh bodies on a wave tank, with surfaces (--mesh) and spray (diffuse)
# (a skip where pbf was built without mesh import, PBF_MESH=OFF or no Assimp)
floating_run() {
    "$PBF" run "$SRC/scenes/floating.json" --out "$TMP/run" --frames 8 --threads 2 \
        --set fluid.particle_radius=0.02 --set time.substeps=1 --set diffuse.enabled=true \
        --mesh -q >"$TMP/out" 2>"$TMP/err" && return
    if grep -q "mesh import is not built into this pbf" "$TMP/err"; then
        echo "SKIP: this pbf has no mesh import (floating.json's bodies)"
        exit 77
    fi
    cat "$TMP/out" "$TMP/err" >&2
    fail "the floating run failed"
}

case_readers() {
    floating_run
    expect_rc 0 "$PBF" mesh "$TMP/run" --frames 8:8 --mesh-format obj -q
    expect_rc 0 "${CHECK[@]}" readers "$TMP/run"
    cat "$TMP/out"
    # the headless mode's checks of its arguments and the folder come before Blender's
    # modules are needed, so they run here too: usage, a frame outside the run, no frames
    expect_rc 2 "$PY" "$ADDON" "$TMP/run" --frame x
    expect_in "$TMP/err" "usage: blender -b --python"
    expect_rc 1 "$PY" "$ADDON" "$TMP/run" --frame 9
    expect_in "$TMP/err" "pbf_blender error: $TMP/run: --frame 9 is outside the run's frames 0 to 8"
    mkdir -p "$TMP/empty"
    expect_rc 1 "$PY" "$ADDON" "$TMP/empty"
    expect_in "$TMP/err" "pbf_blender error: $TMP/empty: no particle frames frame_NNNNN.ply"
    expect_rc 1 "$PY" "$ADDON" "$TMP/run"
    expect_in "$TMP/err" "pbf_blender error: run this inside Blender"
}

case_import_render() {
    need_blender
    floating_run
    blender_run 0 "$TMP/run" --frame 8 --render "$TMP/f8.png" "${RENDER[@]}"
    grep -F "pbf_blender:" "$TMP/blender.out"
    expect_in "$TMP/blender.out" '"removed_default_cube": true'
    expect_rc 0 "${CHECK[@]}" summary "$TMP/blender.out" "$TMP/run"
    cat "$TMP/out"
    [ -s "$TMP/f8.png" ] || fail "no picture"
    expect_rc 0 "${CHECK[@]}" picture "$TMP/f8.png" --solids
    cat "$TMP/out"
}

# The zip of scripts/blender_addon_zip.sh installed and enabled in Blender (in a temporary user
# folder), a run imported through the operator, and the scene checked against the files frame by
# frame: particles, surfaces and the solids' keyframed poses.
case_addon_zip() {
    need_blender
    floating_run
    expect_rc 0 bash "$SRC/scripts/blender_addon_zip.sh" "$TMP/zip"
    [ -s "$TMP/zip/pbf_blender.zip" ] || fail "no zip"
    mkdir -p "$TMP/user/scripts" "$TMP/user/config"
    BLENDER_USER_SCRIPTS=$TMP/user/scripts BLENDER_USER_CONFIG=$TMP/user/config \
        expect_rc 0 blender -b --factory-startup -noaudio \
        --python "$SRC/tests/blender/addon_install.py" -- "$TMP/zip/pbf_blender.zip" "$TMP/run"
    expect_in "$TMP/out" "addon_install: ok"
    grep -F "addon_install:" "$TMP/out"
}

# Two fluids (phase 0 water, 1 oil) dropped side by side: frame 0 high, frame 24 on the floor.
case_falls_down() {
    need_blender
    cat >"$TMP/drop.json" <<'EOF'
{
  "name": "drop",
  "domain": {"min": [0, 0, 0], "max": [1.2, 1.5, 1.2]},
  "materials": [{"name": "water", "density": 1000},
                {"name": "oil", "density": 800, "absorption": [1.5, 2.5, 12]}],
  "fluid": {
    "particle_radius": 0.025,
    "blocks": [{"min": [0.3, 0.7, 0.3], "max": [0.6, 1.3, 0.9], "material": "water"},
               {"min": [0.6, 0.7, 0.3], "max": [0.9, 1.3, 0.9], "material": "oil"}]
  },
  "time": {"fps": 60, "substeps": 1}
}
EOF
    expect_rc 0 "$PBF" run "$TMP/drop.json" --out "$TMP/run" --frames 24 --threads 2 -q
    blender_run 0 "$TMP/run" --frame 0 --render "$TMP/f0.png" "${RENDER[@]}"
    expect_rc 0 "${CHECK[@]}" summary "$TMP/blender.out" "$TMP/run"
    expect_in "$TMP/out" "particles 1728"
    blender_run 0 "$TMP/run" --frame 24 --render "$TMP/f24.png" "${RENDER[@]}"
    expect_in "$TMP/blender.out" '"phase"'
    expect_rc 0 "${CHECK[@]}" summary "$TMP/blender.out" "$TMP/run"
    expect_rc 0 "${CHECK[@]}" picture "$TMP/f0.png"
    expect_rc 0 "${CHECK[@]}" falls "$TMP/f0.png" "$TMP/f24.png"
    cat "$TMP/out"
}

case_errors() {
    need_blender
    mkdir -p "$TMP/empty"
    blender_run 1 "$TMP/empty"
    expect_in "$TMP/err" "pbf_blender error: $TMP/empty: no particle frames frame_NNNNN.ply"
    grep -q "^pbf_blender:" "$TMP/out" && fail "a summary line after an error"
    # the startup cube stays once the user touched it (here: moved it); --save writes a .blend
    expect_rc 0 "$PBF" run --frames 2 --out "$TMP/run" --threads 2 \
        --set fluid.particle_radius=0.04 --set time.substeps=1 -q
    expect_rc 0 blender -b --factory-startup -noaudio \
        --python-expr "import bpy; bpy.data.objects['Cube'].location.x = 3" \
        --python "$ADDON" -- "$TMP/run" --frame 2 --save "$TMP/scene.blend"
    expect_in "$TMP/out" '"removed_default_cube": false'
    [ -s "$TMP/scene.blend" ] || fail "--save wrote no .blend"
}

"case_$CASE"
