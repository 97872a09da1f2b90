#!/usr/bin/env bash
# `pbf mesh` and `pbf run --mesh` from the command line. Usage: test_mesh_cli.sh PBF SOURCE_DIR CASE
# Each case_* below is one CTest test; runs use a coarse radius (1,500 particles) to stay short.
set -u

PBF=${1:?usage: test_mesh_cli.sh PBF_BINARY SOURCE_DIR CASE}
SRC=${2:?source dir}
CASE=${3:?case}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_mesh_${CASE}_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
SMALL=(--set fluid.particle_radius=0.02 --set time.substeps=1 --threads 2)

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
expect_rc() {
    local want=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $rc, expected $want"; }
}
expect_in() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "'$2' not in $(basename "$1")"; }; }

# A mesh PLY is complete: its size is the header + 24 bytes per vertex + 13 per triangle.
# Prints the triangle count.
check_mesh() {
    local f=$1 v t hdr size
    [ -f "$f" ] || fail "no $f"
    v=$(head -c 1024 "$f" | grep -a '^element vertex ' | awk '{print $3}')
    t=$(head -c 1024 "$f" | grep -a '^element face ' | awk '{print $3}')
    [ -n "$v" ] && [ -n "$t" ] || fail "$f: not a mesh PLY"
    hdr=$(grep -abo 'end_header' "$f" | head -1 | cut -d: -f1)
    size=$(stat -c %s "$f")
    [ "$size" -eq $((hdr + 11 + 24 * v + 13 * t)) ] || fail "$f: $size bytes for $v vertices, $t triangles"
    echo "$t"
}

# A particle PLY with the given float triples (x y z per particle; "nan" allowed).
particle_ply() {
    local f=$1; shift
    local n=$(($# / 3))
    printf 'ply\nformat binary_little_endian 1.0\nelement vertex %d\nproperty float x\nproperty float y\nproperty float z\nend_header\n' "$n" >"$f"
    python3 -c 'import struct,sys; sys.stdout.buffer.write(b"".join(struct.pack("<f", float(a)) for a in sys.argv[1:]))' "$@" >>"$f"
}

case_mesh_run() {
    expect_rc 0 "$PBF" run --frames 3 --out "$TMP/run" "${SMALL[@]}" -q
    expect_rc 0 "$PBF" mesh "$TMP/run" --threads 2
    for f in 0 1 2 3; do
        t=$(check_mesh "$TMP/run/surface_0000$f.ply")
        [ "$t" -gt 1000 ] || fail "frame $f: only $t triangles"
    done
    expect_in "$TMP/out" "4 meshes in $TMP/run"
    expect_in "$TMP/err" "r = 0.02 m, anisotropic kernel" # the radius from scene.json
    expect_in "$TMP/err" "pbf mesh: 4/4 (100%)"
    [ -z "$(find "$TMP/run" -name '*.tmp.*')" ] || fail "temporary files left"
    # a frame range, OBJ too, another folder, the isotropic kernel
    expect_rc 0 "$PBF" mesh "$TMP/run" --frames 1:2 --mesh-format ply,obj --out "$TMP/m" \
        --kernel isotropic --cell 1.5 -q
    [ "$(ls "$TMP/m" | tr '\n' ' ')" = "surface_00001.obj surface_00001.ply surface_00002.obj surface_00002.ply " ] \
        || fail "--frames 1:2 wrote: $(ls "$TMP/m")"
    check_mesh "$TMP/m/surface_00002.ply" >/dev/null
    grep -q '^f [0-9]*//[0-9]* ' "$TMP/m/surface_00001.obj" || fail "OBJ without faces"
    [ ! -s "$TMP/out" ] || fail "--quiet printed: $(cat "$TMP/out")"
}

case_mesh_input() {
    mkdir -p "$TMP/d"
    # an empty particle file: an empty mesh, no error; one particle: a small drop
    particle_ply "$TMP/d/frame_00000.ply"
    particle_ply "$TMP/d/frame_00001.ply" 0.5 0.5 0.5
    expect_rc 0 "$PBF" mesh "$TMP/d" --radius 0.01 -q
    [ "$(check_mesh "$TMP/d/surface_00000.ply")" -eq 0 ] || fail "empty input gave triangles"
    [ "$(check_mesh "$TMP/d/surface_00001.ply")" -gt 8 ] || fail "one particle gave no drop"
    # NaN in a particle file: a clear error naming the file and the particle, exit 1
    particle_ply "$TMP/d/frame_00002.ply" 0.5 0.5 0.5 0.52 0.5 0.5 0.5 nan 0.5
    expect_rc 1 "$PBF" mesh "$TMP/d" --radius 0.01 -q
    expect_in "$TMP/err" "frame_00002.ply: particle 2 has a non-finite position"
    # a truncated particle file
    particle_ply "$TMP/d/frame_00002.ply" 0.5 0.5 0.5 0.52 0.5 0.5
    truncate -s -5 "$TMP/d/frame_00002.ply"
    expect_rc 1 "$PBF" mesh "$TMP/d" --radius 0.01 -q
    expect_in "$TMP/err" "frame_00002.ply"
    # no scene.json and no --radius: estimated, and said so
    rm "$TMP/d/frame_00002.ply"
    particle_ply "$TMP/d/frame_00000.ply" 0.5 0.5 0.5 0.52 0.5 0.5 0.5 0.52 0.5
    expect_rc 0 "$PBF" mesh "$TMP/d"
    expect_in "$TMP/err" "particle radius 0.01 m (estimated"
    # a folder without frames, a missing folder, a file
    mkdir -p "$TMP/empty"
    expect_rc 1 "$PBF" mesh "$TMP/empty"
    expect_in "$TMP/err" "no frame_NNNNN.ply or .vtk files"
    expect_rc 1 "$PBF" mesh "$TMP/nope"
    expect_in "$TMP/err" "$TMP/nope"
    expect_rc 2 "$PBF" mesh "$TMP/d/frame_00000.ply"
    expect_rc 1 "$PBF" mesh "$TMP/d" --frames 7:9
    expect_in "$TMP/err" "no frame in 7:9"
}

case_mesh_usage() {
    expect_rc 0 "$PBF" mesh --help
    expect_in "$TMP/out" "--kernel NAME"
    expect_rc 0 "$PBF" --help
    expect_in "$TMP/out" "mesh "
    expect_rc 2 "$PBF" mesh
    expect_in "$TMP/err" "which run folder?"
    expect_rc 2 "$PBF" mesh "$TMP" --kernel round
    expect_in "$TMP/err" "--kernel expects anisotropic or isotropic, got 'round'"
    expect_rc 2 "$PBF" mesh "$TMP" --frames 5:2
    expect_rc 2 "$PBF" mesh "$TMP" --cell 0
    expect_in "$TMP/err" "--cell"
    expect_rc 2 "$PBF" mesh "$TMP" --mesh-format stl
    expect_in "$TMP/err" "unknown format 'stl'"
    expect_rc 2 "$PBF" mesh "$TMP" --bogus
}

case_run_mesh() {
    expect_rc 0 "$PBF" run --frames 2 --out "$TMP/run" "${SMALL[@]}" --mesh
    for f in 0 1 2; do check_mesh "$TMP/run/surface_0000$f.ply" >/dev/null; done
    expect_in "$TMP/err" "3 surface meshes in $TMP/run"
    # the same meshes as `pbf mesh` afterwards, bit for bit
    mkdir -p "$TMP/again"
    expect_rc 0 "$PBF" mesh "$TMP/run" --out "$TMP/again" -q
    cmp -s "$TMP/run/surface_00002.ply" "$TMP/again/surface_00002.ply" || fail "run --mesh and mesh differ"
    expect_rc 2 "$PBF" run --frames 1 --out "$TMP/r2" "${SMALL[@]}" --mesh --kernel round
}

# OpenVDB level sets (docs/surface.md): `pbf run --mesh --mesh-format ply,vdb` and `pbf mesh
# --mesh-format vdb` write complete surface_NNNNN.vdb files (their content is checked by
# test_vdb, through OpenVDB); a file that cannot be written is an error naming it.
vdb_magic() { head -c 8 "$1" | od -An -tx1 | tr -d ' \n'; }
case_vdb() {
    expect_rc 0 "$PBF" run --frames 2 --out "$TMP/run" "${SMALL[@]}" --mesh --mesh-format ply,vdb
    expect_in "$TMP/err" "3 surface meshes in $TMP/run (surface_NNNNN.ply/.vdb)"
    for f in 0 1 2; do
        check_mesh "$TMP/run/surface_0000$f.ply" >/dev/null
        # OpenVDB's magic number, 0x56444220 little-endian, then the file format version
        [ "$(vdb_magic "$TMP/run/surface_0000$f.vdb" | head -c 8)" = 20424456 ] \
            || fail "surface_0000$f.vdb is not an OpenVDB file"
    done
    expect_rc 0 "$PBF" mesh "$TMP/run" --mesh-format vdb --frames 1:2 --out "$TMP/v"
    [ "$(ls "$TMP/v" | tr '\n' ' ')" = "surface_00001.vdb surface_00002.vdb " ] \
        || fail "--mesh-format vdb wrote: $(ls "$TMP/v")"
    expect_in "$TMP/out" "2 meshes in $TMP/v (surface_NNNNN.vdb)"
    # a folder where the file should go: the error names the file, nothing is left behind
    mkdir -p "$TMP/blocked/surface_00001.vdb"
    expect_rc 1 "$PBF" mesh "$TMP/run" --mesh-format vdb --frames 1:1 --out "$TMP/blocked" -q
    expect_in "$TMP/err" "cannot write '$TMP/blocked/surface_00001.vdb'"
    [ -z "$(find "$TMP" -name '*.tmp.*')" ] || fail "temporary files left"
}

# Built without OpenVDB: asking for vdb fails before any work, saying how to get it.
case_vdb_absent() {
    expect_rc 0 "$PBF" run --frames 1 --out "$TMP/run" "${SMALL[@]}" -q
    expect_rc 1 "$PBF" mesh "$TMP/run" --mesh-format ply,vdb -q
    expect_in "$TMP/err" "--mesh-format vdb: OpenVDB output is not built into this pbf"
    [ -z "$(find "$TMP/run" -name 'surface_*')" ] || fail "files written: $(ls "$TMP/run")"
    expect_rc 1 "$PBF" run --frames 1 --out "$TMP/r2" "${SMALL[@]}" --mesh --mesh-format vdb -q
    expect_in "$TMP/err" "-DPBF_VDB=ON"
}

# A frame's level set in Debian's Blender (tests/cli/blender_vdb.py): imported with
# bpy.ops.object.volume_import, one float grid "surface" with the voxel size of the surface grid,
# meshed back at its zero crossing (Volume to Mesh, threshold 0) into the shape of pbf's own
# mesh, and rendered with Cycles: water in the picture. Exit 77 (a skip) without `blender`.
case_vdb_blender() {
    command -v blender >/dev/null || { echo "blender is not installed: skipped"; exit 77; }
    expect_rc 0 "$PBF" run --frames 1 --out "$TMP/run" "${SMALL[@]}" -q --mesh --mesh-format ply,vdb
    expect_rc 0 blender -b --factory-startup --python "$SRC/tests/cli/blender_vdb.py" -- \
        "$TMP/run/surface_00001.vdb" "$TMP/run/surface_00001.ply" "$TMP/vdb.png"
    grep '^pbf_vdb: ' "$TMP/out" | sed 's/^pbf_vdb: //' >"$TMP/vdb.json"
    [ -s "$TMP/vdb.json" ] \
        || { cat "$TMP/out" "$TMP/err" >&2; fail "no pbf_vdb line from Blender"; }
    [ -z "${PBF_KEEP_PICTURE:-}" ] || cp "$TMP/vdb.png" "$PBF_KEEP_PICTURE"
    python3 - "$TMP/vdb.json" "$TMP/run/surface_00001.ply" <<'PY' \
        || fail "Blender's reading of the .vdb: $(cat "$TMP/vdb.json")"
import json, struct, sys
r = json.load(open(sys.argv[1]))
voxel = 0.02  # cell 1 r, r = 0.02 m
assert r["grids"] == [{"name": "surface", "type": "FLOAT"}], r["grids"]
assert all(abs(v - voxel) < 1e-6 for v in r["voxel"]) and len(r["voxel"]) == 3, r["voxel"]
ls, ply = r["level_set"], r["ply"]
assert ls["vertices"] > 100, ls
# the zero crossing is pbf's mesh: boxes within a quarter voxel, enclosed volumes within 2 %
# (measured on this frame: 0.0033 m = 0.17 voxel, where the block's rounded edges bend within a
# voxel and the distance interpolated between voxel centres errs most, and 0.5 %)
box = max(max(abs(ls["min"][k] - ply["min"][k]), abs(ls["max"][k] - ply["max"][k]))
          for k in range(3))
assert box < 0.25 * voxel, (ls, ply)
assert abs(ls["volume"] / ply["volume"] - 1) < 0.02, (ls["volume"], ply["volume"])
# turned by +90 degrees about x, pbf's y (up) is Blender's z (up): pbf's heights, from the PLY
data = open(sys.argv[2], "rb").read()
nv = int(data.split(b"element vertex ")[1].split(b"\n")[0])
body = data.index(b"end_header\n") + len(b"end_header\n")
ys = struct.unpack_from("<%df" % (6 * nv), data, body)[1::6]
assert abs(ply["min"][2] - min(ys)) < 1e-5 and abs(ply["max"][2] - max(ys)) < 1e-5, (ply, min(ys))
assert r["picture"] == [240, 180], r["picture"]
assert r["water_fraction"] > 0.05, r["water_fraction"]
print("blender: level set box %s..%s (%.2g m from pbf's mesh's), volume %.4g m3 (pbf's mesh "
      "%.4g), water in %.0f %% of the picture"
      % ([round(x, 3) for x in ls["min"]], [round(x, 3) for x in ls["max"]], box, ls["volume"],
         ply["volume"], 100 * r["water_fraction"]))
PY
}

"case_$CASE"
