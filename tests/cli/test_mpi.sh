#!/usr/bin/env bash
# `mpirun -np N pbf run` (docs/mpi.md) against the same run in one process: check_mpi.py reads
# both folders back. Usage: test_mpi.sh PBF_BINARY SOURCE_DIR CASE, CASE one of
#   np1      one rank writes the same bits as one process
#   np2      two ranks: same particles and ids every frame, front and density error close
#   np4      four ranks on fewer cores (--oversubscribe), the same checks
#   empty    three ranks where the third owns no particle at first (a column 0.12 m wide: the
#            slabs, at least a halo of 0.1 m wide, leave it nothing until the water arrives)
#   balance  three ranks over 1/2 s while the water crosses the tank: the cuts move (stats.csv
#            says when and the imbalance before and after), ids unique and the count constant
#            every frame, the physics as close to one process as np2/np4
#   ply      two ranks write one PLY per frame with MPI-IO: by id the particles of their .vtu
#            pieces, and one process's PLY to rounding
#   ckpt     checkpoints under MPI: four ranks save pieces and a manifest at frame 6 of 10;
#            resumed on four ranks the frames after it are bit for bit those of the run that
#            never stopped, on two ranks and in one process (no mpirun) the same ids and counts
#            and every position within 1e-4 m
#   error1   error control (solver.target_error = 0.1 %, Chebyshev on): one rank writes the same
#            bits as one process
#   error2   error control on two ranks: every rank does the same passes (the error is the whole
#            world's), ids, counts, front and density error as np2, the mean iteration count
#            within 10 % of one process's
#   error4   the same on four ranks (--oversubscribe)
#   probes   the dam break with a height gauge at the first cut, a front probe and a force patch
#            on the floor under the whole column (both ranks' particles press on it): one rank
#            writes one process's probes.csv byte for byte; two ranks every frame's values close
#            to one process's (check_mpi.py probes), ids and physics as np2
#   tool     a free sphere (lighter than water) thrown down into a tank on the first cut: one rank
#            writes one process's forces.csv byte for byte; on two ranks its path and the mean
#            force on it close to one process's (check_mpi.py tool), ids and physics as np2
#   toolckpt  a 2-rank checkpoint of it at frame 5 resumed to frame 15: on two ranks the frames and
#            forces.csv of the run that never stopped bit for bit; in one process and on three
#            ranks (the pieces merged, the tool every piece's same state) its ids, physics and
#            the tool's path and mean force close to it (check_mpi.py physics, tool)
#   meshes1, meshes2  mesh solids (rows `meshes` of `pbf features`): a small dam break against a
#            static baffle and a kinematic pier moving and turning into the flow (every rank loads
#            the whole field of both, from the same cache); one rank writes one process's bits
#            and solids.csv byte for byte; two ranks the physics of np2, the fluid's centre of
#            mass within 2 mm, the meshes at the same poses and their mean forces close
#            (check_mpi.py solids)
#   floating1, floating2, floating4  floating bodies (row `floating_bodies`): 1 s of
#            scenes/floating.json (11,250 particles, three bodies); one rank bit for bit and
#            solids.csv byte for byte; two and four ranks: the same ids every frame, the fluid's
#            centre of mass within 2 mm and the bodies' poses and forces close (check_mpi.py
#            solids)
#   floatckpt  a checkpoint of scenes/floating.json on two ranks at frame 6 of 10 (its first cut
#            lies on a column of particles, some of which end a step just past it): resumed on
#            two ranks every frame after it and solids.csv bit for bit those of the run that never
#            stopped; in one process (the pieces merged) the same ids and the bodies close to it
#            (check_mpi.py physics, solids)
#   floatmerge  1 s of scenes/floating.json at particle_radius 0.015 (3000 particles): a 2-rank
#            checkpoint at frame 10 resumed to frame 60 in one process and on three ranks (the
#            pieces merged: the meshes and the bodies' state of the first, checked the same in
#            every piece) against the 2-rank run that never stopped: the same ids every frame, the
#            fluid's centre of mass within 2 mm and the bodies within 10 mm and 15 degrees
#            (check_mpi.py physics, solids); a piece of another save (3 solver iterations: its
#            bodies elsewhere) among the pieces is refused, naming it
#   fields1, fields2, fields4  a large static mesh (a false bottom 15.4 m long under a layer of
#            water and a collapsing column, 872 particles at particle_radius 0.05, 1/2 s,
#            --balance 1.01: the cuts move): split, each rank holds only the part of its field
#            its slab reaches (docs/mpi.md, "Mesh solids"); one rank holds it whole and writes one
#            process's bits; two and four ranks the physics of np2 and the mesh's force close
#            (check_mpi.py physics, solids), and bit for bit (frames and solids.csv) the same
#            ranks holding the whole field (the field cache unusable: nothing is cropped); the
#            most a rank holds (pbf run's `mesh fields` line) below the whole field
#   sinks1, sinks2, sinks4  sinks (row `sinks`): the dam break at particle_radius 0.015 (3380
#            particles, 1/2 s) through a sink mesh (the pier) into a sink box at the far end;
#            one rank writes one process's bits; two and four ranks the particle count within
#            0.5 %, the count plus the removed column the same (the removed count is the whole
#            world's) and the centre of mass close (check_mpi.py flow)
#   emit1, emit2, emit4  emitters (row `emitters`): a nozzle across the cut emitting 390
#            particles in 1/3 s onto a layer of 400; one rank writes one process's bits; two and
#            four ranks every frame the same set of ids as one process (each rank emits the nozzle
#            points in its slab, every rank hands out the whole layer's ids), each id once, and
#            the centre of mass close (check_mpi.py emit)
#   emitcap  flow.capacity per rank: 420 on two ranks fills at frame 21 (one process: frame 1);
#            every rank stops with the same error, said once, exit status 1, no hang
#   emitckpt  a 2-rank checkpoint of it at frame 6 resumed to frame 20: on 2 ranks bit for bit
#            the run that never stopped; in one process and on three ranks (the pieces merged, the
#            emitters' state every piece's same) the same ids every frame, each once, and the
#            centre of mass close (check_mpi.py emit); with flow.capacity 420 (each process's) a
#            2-rank checkpoint at frame 10 holds 610 particles: refused in one process, naming
#            flow.capacity and the counts, resumed on three ranks as above
#   river2, river4  scenes/river.json (an inlet, a pier, a sink: 3,555 particles at the start,
#            1,638 emitted and 186 removed by 0.5 s) for RIVER_TIME seconds (default 0.5; the
#            figures of docs/mpi.md are over 1 s: RIVER_TIME=1): the particle count within 0.5 %
#            of one process's, the count plus the removed column the same, the centre of mass of
#            the particles both hold within 2 mm (check_mpi.py flow); ctest runs river2
#   glass2, honey2, layers2, spray2 (and 4 for four ranks)  the shipped scenes by their own
#            figures (tests/cli/check_mpi_scenes.py), shortened to SCENE_TIME seconds: the glass
#            filling (1 s: the fill level within 1 %, the same ids), the honey (1 s: its front on
#            the plate, averaged over a quarter second, within 1 %, the same ids), the oil and the
#            water settling in layers (5 s: each layer's height within 1 %; 20,800 particles, minutes:
#            by hand only; at 2 cm the layers do not form in 5 s), the splash's spray, foam and
#            bubbles (0.25 s: check_mpi.py diffuse); ctest runs glass2, honey2, spray2
#   kill2, kill4  a rank killed (SIGKILL) on two and four ranks while a checkpoint is being saved
#            (tests/cli/mpi_kill.py): every rank stops within 10 s, mpirun names the rank and rank
#            0 the checkpoint to go on from, every file under its final name is whole, and
#            `pbf resume` goes on from the last complete checkpoint on 1, 2 and 4 ranks (bit for
#            bit on the rank count that saved it); ctest runs kill2 (15 s here), kill4 (20 s) by
#            hand: bash tests/cli/test_mpi.sh build/pbf . kill4
#   lib1, lib2  PBF_BINARY is tests/test_mpi_lib (library calls on a split world: the energy
#            audit) run on one and two ranks
#   migrate2, migrate4  PBF_BINARY is tests/test_mpi_migrate: 1000 substeps of a small dam break
#            on two and four ranks (--oversubscribe), every id on exactly one rank after each
#            substep and the count constant, particles migrating at many substeps
#   wendland1, wendland2, friction1, friction2  rows of the table of what runs where
#            (`pbf features`: yes under MPI) beyond the plain fluid: the Wendland kernel pair and
#            wall friction; one rank writes one process's bits, two ranks the physics of np2
#   fluids1, fluids2  several fluids (scenes/oil_water.json at a particle radius of 0.02 m, the
#            blocks moved so that water and oil meet at the cut): one rank one process's bits,
#            phases included;
#            two ranks the physics of np2, every particle keeping its fluid and each fluid's
#            centre of mass within 5 mm of one process's (check_mpi.py phases)
#   tension1, tension2, adhesion1, adhesion2, drag1, drag2  surface tension (the colour-field
#            normals exchanged between its two passes), wall adhesion and surface drag on the dam
#            break (σ = 5 N/m, wall adhesion 5 N/m, drag 20 1/s: each moves the front by 0.5 % or
#            more): one rank one process's bits; two ranks the physics of np2 and every particle
#            within 1e-5 m of one process's at frames 1 and 2 (check_mpi.py early)
#   visc1, visc2  the implicit viscosity with no-slip walls on the dam break (ν = 0.05 m²/s:
#            the front 27 % behind the inviscid one's at frame 15; the ghosts' entries of the
#            solve's vectors exchanged before each product, its dot products summed in rank
#            order): one rank one process's bits; two ranks the physics of np2, frames 1 and 2 as
#            `early` and the particles' mean distance from one process's at most 1e-6 m over
#            frames 1 to 8 (check_mpi.py viscous; without the exchange it fails from frame 2)
#   diffuse1, diffuse2, diffuse4  diffuse particles (row `diffuse`): the dam break with spray, foam
#            and bubbles on (1268 of them at frame 15); one rank writes one process's bits and
#            diffuse_NNNNN.ply/.vtu byte for byte; two and four ranks the physics of np2 and the
#            diffuse particles close (check_mpi.py diffuse: each kind's count exactly one
#            process's while the fluid agrees to about 1e-4 m, frames 0 to 8)
#   diffuseckpt  a 2-rank checkpoint of it at frame 6 of 10: resumed on two ranks every frame and
#            diffuse file after it bit for bit; resumed in one process (the pieces merged, their
#            diffuse particles too) close to the run that never stopped (check_mpi.py diffuse)
#   diffroute2, diffroute4  PBF_BINARY is tests/test_mpi_diffuse: 600 substeps of a small dam
#            break with diffuse particles on two and four ranks, every diffuse particle within h
#            of its rank's slab after each substep (routed to the rank that owns its x), the
#            whole world's count never above max_count
#   refused  too many ranks for the domain, what a split run does not do yet, a bad scene: a
#            clear error said once (rank 0), exit status 1, no hang
#   ref_GROUP  only the one-process run that the cases GROUP1, GROUP2 and GROUP4 compare with
#            (np, error, floating, ...), into $PBF_MPI_REF/GROUP (see serial() below)
# Small runs (1500 particles, 1/4 s of a dam break, one thread per rank): seconds each.
set -u
PBF=${1:?usage: test_mpi.sh PBF_BINARY SOURCE_DIR CASE}
SRC=${2:?source dir}
CASE=${3:?case}
# ref_GROUP runs GROUP1's set-up up to its one-process run (serial() stops there)
REF_ONLY=0
case "$CASE" in ref_*) REF_ONLY=1 CASE=${CASE#ref_}1 ;; esac
GROUP=${CASE%%[0-9]*} # np1, np2, np4: np
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_mpi_${CASE}_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }

command -v mpirun >/dev/null || { echo "mpirun not found: skipped"; exit 77; }
MPIRUN=(mpirun --oversubscribe)
# Open MPI refuses to start as root unless told (containers, CI)
[ "$(id -u)" -eq 0 ] && MPIRUN+=(--allow-run-as-root)
# Under the sanitizers (scripts/sanitize.sh) the ranks keep ASan's memory checks but not its leak
# check: Open MPI leaves its own allocations at exit, many in plugins unloaded by then, whose
# frames no suppression can name. The one-process runs keep the leak check.
MPIRUN+=(-x "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
SCENE="$SRC/scenes/dam_break.json"
ARGS=(--set fluid.particle_radius=0.02 --frames 15 --format vtu --quiet --threads 1)

# The one-process run a case compares with, in $TMP/serial. The cases of a group (np1, np2 and np4;
# floating1, floating2 and floating4; ...) compare with the same run: where PBF_MPI_REF is set
# (tests/CMakeLists.txt, for those groups) the case ref_GROUP makes it once, in
# $PBF_MPI_REF/GROUP, with the field cache it baked (the ranks load the fields from there, as
# they loaded them from the case's own one-process run), and the cases link to it.
serial() {
    if [ -z "${PBF_MPI_REF:-}" ]; then
        "$PBF" run "$SCENE" "${ARGS[@]}" --out "$TMP/serial" || fail "pbf run exited $?"
        return
    fi
    local ref="$PBF_MPI_REF/$GROUP"
    if [ -n "${PBF_CACHE_DIR:-}" ]; then export PBF_CACHE_DIR="$ref/cache"; fi
    if [ "$REF_ONLY" -eq 1 ]; then
        rm -rf "$ref"
        mkdir -p "$ref"
        "$PBF" run "$SCENE" "${ARGS[@]}" --out "$ref/serial" || fail "pbf run exited $?"
        exit 0
    fi
    [ -d "$ref/serial" ] || fail "no one-process run in $ref (made by the case ref_$GROUP)"
    ln -s "$ref/serial" "$TMP/serial"
}
[ "$CASE" = balance ] && ARGS=(--set fluid.particle_radius=0.02 --frames 30 --format vtu --quiet
    --threads 1)
case "$CASE" in error*) ARGS+=(--set solver.target_error=0.1) ;; esac
case "$CASE" in wendland*) ARGS+=(--set 'fluid.kernel="wendland"') ;; esac
case "$CASE" in friction*) ARGS+=(--set domain.friction=0.5) ;; esac
case "$CASE" in fluids*) SCENE="$SRC/scenes/oil_water.json" ;; esac
case "$CASE" in tension*) ARGS+=(--set fluid.surface_tension=5) ;; esac
case "$CASE" in adhesion*) ARGS+=(--set domain.adhesion=5) ;; esac
case "$CASE" in drag*) ARGS+=(--set fluid.surface_drag=20) ;; esac
case "$CASE" in visc*) ARGS+=(--set fluid.viscosity=0.05 --set domain.no_slip=true) ;; esac
# the water and the oil meet at the cut within the 15 frames
case "$CASE" in fluids*) ARGS+=(--set 'fluid.blocks[0].max=[0.4,0.4,0.3]'
    --set 'fluid.blocks[1].min=[0.6,0,0]') ;; esac
[ "$CASE" = empty ] && ARGS+=(--set 'fluid.blocks[0].max=[0.12,0.6,0.4]')
split() { # ranks, folder, more options
    local n=$1 dir=$2; shift 2
    timeout "${SPLIT_LIMIT:-90}" "${MPIRUN[@]}" -np "$n" "$PBF" run "$SCENE" "${ARGS[@]}" --out "$dir" "$@" \
        >"$TMP/out" 2>&1 || { cat "$TMP/out" >&2; fail "mpirun -np $n exited $?"; }
}
# resume_on RANKS DIR OPTIONS...: pbf resume DIR on RANKS ranks (0: in one process, no mpirun)
resume_on() {
    local n=$1 dir=$2 rc=0; shift 2
    if [ "$n" -eq 0 ]; then
        timeout "${SPLIT_LIMIT:-90}" "$PBF" resume "$dir" --quiet "$@" >"$TMP/out" 2>&1 || rc=$?
    else
        timeout "${SPLIT_LIMIT:-90}" "${MPIRUN[@]}" -np "$n" "$PBF" resume "$dir" --quiet "$@" \
            >"$TMP/out" 2>&1 || rc=$?
    fi
    [ "$rc" -eq 0 ] || { cat "$TMP/out" >&2; fail "resume on $n ranks exited $rc"; }
}
# expect_refusal TEXT MPIRUN_ARGS...: exit status 1 (not a timeout) and TEXT in the output, once
expect_refusal() {
    local text=$1; shift
    timeout 60 "${MPIRUN[@]}" "$@" >"$TMP/out" 2>&1
    local rc=$?
    [ "$rc" -ne 124 ] || fail "'$*' hung"
    [ "$rc" -ne 0 ] || fail "'$*' succeeded"
    [ "$(grep -cF -- "$text" "$TMP/out")" -eq 1 ] || { cat "$TMP/out" >&2; fail "'$text' not said once"; }
}

case "$CASE" in
np1)
    serial
    split 1 "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" identical || fail "check_mpi.py"
    ;;
np2 | np4 | wendland2 | friction2)
    serial
    split "${CASE: -1}" "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" physics || fail "check_mpi.py"
    ;;
error1 | wendland1 | friction1 | fluids1 | tension1 | adhesion1 | drag1 | visc1)
    serial
    split 1 "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" identical || fail "check_mpi.py"
    ;;
tension2 | adhesion2 | drag2)
    serial
    split 2 "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" early || fail "check_mpi.py"
    ;;
visc2)
    serial
    split 2 "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" viscous || fail "check_mpi.py"
    ;;
fluids2)
    serial
    split 2 "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" phases || fail "check_mpi.py"
    ;;
error2 | error4)
    serial
    split "${CASE#error}" "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" physics || fail "check_mpi.py"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" iterations ||
        fail "check_mpi.py iterations"
    ;;
empty)
    serial
    split 3 "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" physics || fail "check_mpi.py"
    python3 - "$TMP/split" <<'PY' || fail "rank 2 owned particles at frame 0"
import os, sys, xml.etree.ElementTree as ET
piece = os.path.join(sys.argv[1], "frame_00000_0002.vtu")
head = open(piece, "rb").read().split(b"<AppendedData")[0] + b"</VTKFile>"
n = int(ET.fromstring(head).find("./UnstructuredGrid/Piece").get("NumberOfPoints"))
sys.exit(1 if n != 0 else 0)
PY
    ;;
balance)
    serial
    split 3 "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" physics || fail "check_mpi.py"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" balance || fail "the balance"
    ;;
ply)
    ARGS+=(--format ply,vtu)
    serial
    split 2 "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" ply || fail "check_mpi.py"
    ;;
ckpt)
    ARGS=(--set fluid.particle_radius=0.02 --frames 10 --format vtu --quiet --threads 1)
    split 4 "$TMP/whole" --checkpoint-every 6
    [ -f "$TMP/whole/checkpoint_mpi.json" ] && [ -f "$TMP/whole/checkpoint_00006_0003.pbfck" ] ||
        fail "no manifest or pieces"
    for d in four two one; do cp -r "$TMP/whole" "$TMP/$d"; done
    resume() { # ranks (0: no mpirun), folder
        if [ "$1" -eq 0 ]; then
            timeout 90 "$PBF" resume "$2" --quiet >"$TMP/out" 2>&1
        else
            timeout 90 "${MPIRUN[@]}" -np "$1" "$PBF" resume "$2" --quiet >"$TMP/out" 2>&1
        fi || { cat "$TMP/out" >&2; fail "resume on $1 ranks exited $?"; }
    }
    resume 4 "$TMP/four"
    resume 2 "$TMP/two"
    resume 0 "$TMP/one"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/four" identical || fail "four ranks"
    for d in two one; do
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/$d" physics || fail "$d"
        python3 - "$TMP/whole" "$TMP/$d" "$SRC" <<'PY' || fail "$d: positions"
import os, sys
sys.path.insert(0, os.path.join(sys.argv[3], "tests", "cli"))
from vtu_read import read_frame, read_pvd
worst = 0.0
for (_, a), (_, b) in zip(read_pvd(sys.argv[1] + "/frames.pvd"), read_pvd(sys.argv[2] + "/frames.pvd")):
    fa, fb = read_frame(a), read_frame(b)
    worst = max([worst] + [abs(x - y) for p, q in zip(fa["Points"], fb["Points"]) for x, y in zip(p, q)])
print(f"resumed on another rank count: positions at most {worst:.3g} m from the run that never stopped")
sys.exit(1 if worst > 1e-4 else 0)
PY
    done
    ;;
probes)
    SCENE="$TMP/probes.json"
    cat >"$SCENE" <<'JSON'
{
  "name": "dam_break_probes",
  "domain": {"min": [0, 0, 0], "max": [1.6, 0.8, 0.4]},
  "fluid": {"particle_radius": 0.02, "blocks": [{"min": [0, 0, 0], "max": [0.4, 0.6, 0.4]}]},
  "solver": {"iterations": 4},
  "time": {"fps": 60, "frames": 15, "substeps": 4},
  "probes": [
    {"type": "height", "name": "H", "position": [0.2, 0, 0.2]},
    {"type": "level", "name": "L", "position": [0.6, 0, 0.2]},
    {"type": "front", "name": "front", "direction": "+x"},
    {"type": "force", "name": "floor", "position": [0.4, 0, 0.2], "normal": "+y",
     "size": [0.8, 0, 0.4]}
  ]
}
JSON
    ARGS=(--frames 15 --format vtu --quiet --threads 1)
    serial
    split 1 "$TMP/one"
    cmp "$TMP/serial/probes.csv" "$TMP/one/probes.csv" || fail "one rank: another probes.csv"
    split 2 "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" physics || fail "check_mpi.py"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" probes || fail "the probes"
    ;;
tool | toolckpt)
    SCENE="$TMP/tool.json"
    cat >"$SCENE" <<'JSON'
{
  "name": "tool_float",
  "domain": {"min": [0, 0, 0], "max": [0.6, 0.5, 0.4]},
  "fluid": {"particle_radius": 0.02, "blocks": [{"min": [0, 0, 0], "max": [0.6, 0.3, 0.4]}]},
  "tool": {"motion": "free", "radius": 0.06, "mass": 0.3, "position": [0.3, 0.37, 0.2],
           "velocity": [0, -0.5, 0], "damping": 50},
  "solver": {"iterations": 4, "scorr": {"k": 0}},
  "time": {"fps": 60, "frames": 15, "substeps": 4}
}
JSON
    ARGS=(--frames 15 --format vtu --quiet --threads 1)
    if [ "$CASE" = toolckpt ]; then
        # every rank holds the same tool (the forces on it summed over the ranks): the merged
        # pieces take the first's
        split 2 "$TMP/whole"
        split 2 "$TMP/save" --frames 5 --checkpoint-every 5
        for d in two one three; do cp -r "$TMP/save" "$TMP/$d"; done
        resume_on 2 "$TMP/two" --frames 15
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/two" identical || fail "two ranks"
        cmp "$TMP/whole/forces.csv" "$TMP/two/forces.csv" || fail "two ranks: another forces.csv"
        resume_on 0 "$TMP/one" --frames 15
        resume_on 3 "$TMP/three" --frames 15
        for d in one three; do
            python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/$d" physics || fail "$d: merged"
            python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/$d" tool || fail "$d: the tool"
        done
        exit 0
    fi
    serial
    split 1 "$TMP/one"
    cmp "$TMP/serial/forces.csv" "$TMP/one/forces.csv" || fail "one rank: another forces.csv"
    split 2 "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" physics || fail "check_mpi.py"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" tool || fail "the tool"
    ;;
meshes1 | meshes2)
    SCENE="$TMP/meshes.json"
    cat >"$SCENE" <<JSON
{
  "name": "meshes_split",
  "domain": {"min": [0, 0, 0], "max": [1.6, 0.8, 0.4]},
  "fluid": {"particle_radius": 0.02, "blocks": [{"min": [0, 0, 0], "max": [0.4, 0.5, 0.4]}]},
  "meshes": [
    {"file": "$SRC/scenes/meshes/baffle.stl", "position": [0.65, 0, 0.125],
     "rotation": [0, 90, 0]},
    {"file": "$SRC/scenes/meshes/pier.obj", "motion": "kinematic",
     "keys": [{"time": 0, "position": [1.1, 0, 0.2]},
              {"time": 0.5, "position": [0.8, 0, 0.2], "rotation": [0, 45, 0]}]}
  ],
  "solver": {"iterations": 4},
  "time": {"fps": 60, "frames": 30, "substeps": 4}
}
JSON
    export PBF_CACHE_DIR="$TMP/cache" # the serial run bakes the fields, the ranks load them
    ARGS=(--frames 30 --format vtu --quiet --threads 1)
    serial
    if [ "$CASE" = meshes1 ]; then
        split 1 "$TMP/split"
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" identical || fail "check_mpi.py"
        cmp "$TMP/serial/solids.csv" "$TMP/split/solids.csv" || fail "one rank: another solids.csv"
    else
        split 2 "$TMP/split"
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" physics || fail "check_mpi.py"
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" solids || fail "the meshes"
    fi
    ;;
floating1 | floating2 | floating4)
    SCENE="$SRC/scenes/floating.json"
    export PBF_CACHE_DIR="$TMP/cache"
    SPLIT_LIMIT=240 # 1 s of 11,250 particles: about 10 s of CPU per run, more on a busy machine
    ARGS=(--frames 60 --format vtu --quiet --threads 1)
    serial
    split "${CASE#floating}" "$TMP/split"
    if [ "$CASE" = floating1 ]; then
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" identical || fail "check_mpi.py"
        cmp "$TMP/serial/solids.csv" "$TMP/split/solids.csv" || fail "one rank: another solids.csv"
    else
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" physics || fail "check_mpi.py"
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" solids || fail "the bodies"
    fi
    ;;
fields1 | fields2 | fields4)
    cat >"$TMP/bottom.obj" <<'OBJ'
# a false bottom 15.4 m x 0.1 m, across the tank (beyond its walls in z)
v 0.3 0.0 -0.05
v 15.7 0.0 -0.05
v 15.7 0.1 -0.05
v 0.3 0.1 -0.05
v 0.3 0.0 0.45
v 15.7 0.0 0.45
v 15.7 0.1 0.45
v 0.3 0.1 0.45
f 1 3 2
f 1 4 3
f 5 6 7
f 5 7 8
f 1 2 6
f 1 6 5
f 4 7 3
f 4 8 7
f 1 5 8
f 1 8 4
f 2 3 7
f 2 7 6
OBJ
    SCENE="$TMP/fields.json"
    cat >"$SCENE" <<JSON
{
  "name": "fields_split",
  "domain": {"min": [0, 0, 0], "max": [16, 0.8, 0.4]},
  "fluid": {"particle_radius": 0.05, "blocks": [{"min": [0.3, 0.11, 0], "max": [15.7, 0.3, 0.4]},
                                              {"min": [3.2, 0.3, 0], "max": [4.8, 0.7, 0.4]}]},
  "meshes": [{"file": "$TMP/bottom.obj"}],
  "solver": {"iterations": 4},
  "time": {"fps": 60, "frames": 30, "substeps": 4}
}
JSON
    export PBF_CACHE_DIR="$TMP/cache"
    ARGS=(--frames 30 --format vtu --threads 1 --balance 1.01)
    serial
    # held KIB_MOST KIB_LEAST KIB_WHOLE from the last split run's summary
    held() {
        sed -n 's/^  mesh fields *\([0-9]*\) KiB held per rank at most, \([0-9]*\) KiB at least, of \([0-9]*\) KiB whole$/\1 \2 \3/p' "$TMP/out"
    }
    n=${CASE#fields}
    split "$n" "$TMP/split"
    read -r most least whole <<<"$(held)"
    [ -n "$whole" ] || { cat "$TMP/out" >&2; fail "no 'mesh fields' line"; }
    echo "fields$n: a rank holds $least to $most KiB of the field's $whole KiB"
    if [ "$n" = 1 ]; then
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" identical || fail "check_mpi.py"
        cmp "$TMP/serial/solids.csv" "$TMP/split/solids.csv" || fail "one rank: another solids.csv"
        [ "$most" = "$whole" ] || fail "one rank holds $most KiB, not the whole $whole KiB"
        exit 0
    fi
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" physics || fail "check_mpi.py"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" solids || fail "the mesh"
    [ "$most" -lt "$whole" ] || fail "a rank holds $most KiB of the field's $whole KiB: not cropped"
    # the same ranks with the whole field: a cache folder that cannot be made (under a file)
    touch "$TMP/not_a_folder"
    PBF_CACHE_DIR="$TMP/not_a_folder/cache" split "$n" "$TMP/whole"
    read -r most_w least_w whole_w <<<"$(held)"
    [ "$least_w" = "$whole" ] && [ "$most_w" = "$whole" ] ||
        fail "without a cache a rank holds $least_w to $most_w KiB, not the whole $whole KiB"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/split" identical || fail "cropped: other bits"
    cmp "$TMP/whole/solids.csv" "$TMP/split/solids.csv" || fail "cropped: another solids.csv"
    ;;
sinks1 | sinks2 | sinks4)
    SCENE="$TMP/sinks.json"
    cat >"$SCENE" <<JSON
{
  "name": "sinks_split",
  "domain": {"min": [0, 0, 0], "max": [1.6, 0.8, 0.4]},
  "fluid": {"particle_radius": 0.015, "blocks": [{"min": [0, 0, 0], "max": [0.4, 0.6, 0.4]}]},
  "meshes": [{"file": "$SRC/scenes/meshes/pier.obj", "position": [0.9, 0, 0.2], "sink": true}],
  "flow": {"sinks": [{"min": [1.3, 0, 0], "max": [1.6, 0.2, 0.4]}]},
  "solver": {"iterations": 4},
  "time": {"fps": 60, "frames": 30, "substeps": 4}
}
JSON
    export PBF_CACHE_DIR="$TMP/cache"
    ARGS=(--frames 30 --format vtu --quiet --threads 1)
    serial
    split "${CASE#sinks}" "$TMP/split"
    if [ "$CASE" = sinks1 ]; then
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" identical || fail "check_mpi.py"
    else
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" flow || fail "the sinks"
    fi
    ;;
emit1 | emit2 | emit4 | emitcap | emitckpt)
    # a nozzle across the cut, aimed down and across it, over a layer of water spread evenly
    # (the cut at x = 0.4 m): 390 of the 790 particles at the end are emitted
    SCENE="$TMP/emit.json"
    cat >"$SCENE" <<JSON
{
  "name": "emit_split",
  "domain": {"min": [0, 0, 0], "max": [0.8, 0.6, 0.4]},
  "fluid": {"particle_radius": 0.02, "blocks": [{"min": [0, 0, 0], "max": [0.8, 0.08, 0.4]}]},
  "flow": {"emitters": [{"shape": "rectangle", "position": [0.4, 0.45, 0.2],
                         "direction": [0.5, -1, 0], "speed": 1.5, "width": 0.24, "height": 0.2}]},
  "solver": {"iterations": 4},
  "time": {"fps": 60, "frames": 20, "substeps": 4}
}
JSON
    ARGS=(--frames 20 --format vtu --quiet --threads 1)
    if [ "$CASE" = emitcap ]; then
        # 400 particles at the start, 420 per rank: one process is full before its first step,
        # two ranks (about 200 each) at frame 21, where one rank would hold 436; every rank
        # stops there with the same error, rank 0 says it
        ARGS=(--frames 40 --format vtu --quiet --threads 1 --set flow.capacity=420)
        expect_refusal "frame 21: the particle capacity of 420 per process is full at t = 0.3333 s" \
            -np 2 "$PBF" run "$SCENE" "${ARGS[@]}" --out "$TMP/cap"
        [ -f "$TMP/cap/frame_00020_0001.vtu" ] || fail "two ranks stopped before frame 20"
        "$PBF" run "$SCENE" "${ARGS[@]}" --out "$TMP/one" >"$TMP/out" 2>&1
        [ $? -eq 1 ] && grep -q "frame 1: the particle capacity of 420 is full" "$TMP/out" ||
            { cat "$TMP/out" >&2; fail "one process: not full at frame 1"; }
        exit 0
    fi
    if [ "$CASE" = emitckpt ]; then
        # checkpoints carry the emitters' state, the same on every rank (the next id too: every
        # rank hands out the whole layer's ids): resumed on two ranks the frames are those of the
        # run that never stopped; merged in one process and on three ranks, its ids
        ARGS=(--format vtu --quiet --threads 1)
        split 2 "$TMP/whole" --frames 20
        split 2 "$TMP/save" --frames 6 --checkpoint-every 6
        for d in two one three; do cp -r "$TMP/save" "$TMP/$d"; done
        resume_on 2 "$TMP/two" --frames 20
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/two" identical || fail "two ranks"
        resume_on 0 "$TMP/one" --frames 20
        resume_on 3 "$TMP/three" --frames 20
        for d in one three; do
            python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/$d" emit || fail "$d: merged"
        done
        # flow.capacity is each process's: 610 particles at frame 10 do not fit one process of
        # 420 (said before anything runs), three ranks hold them
        ARGS+=(--set flow.capacity=420)
        split 2 "$TMP/capwhole" --frames 20
        split 2 "$TMP/cap" --frames 10 --checkpoint-every 10
        cp -r "$TMP/cap" "$TMP/capthree"
        timeout 60 "$PBF" resume "$TMP/cap" --quiet >"$TMP/out" 2>&1
        [ $? -eq 1 ] && grep -q "cannot resume in one process: the 2 ranks' pieces hold 610 \
particles, more than the particle capacity of 420 per process (flow.capacity)" "$TMP/out" ||
            { cat "$TMP/out" >&2; fail "capacity: not refused in one process"; }
        resume_on 3 "$TMP/capthree" --frames 20
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/capwhole" "$TMP/capthree" emit ||
            fail "capacity: three ranks"
        exit 0
    fi
    serial
    split "${CASE#emit}" "$TMP/split"
    if [ "$CASE" = emit1 ]; then
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" identical || fail "check_mpi.py"
    else
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" emit || fail "the emitter"
    fi
    ;;
floatckpt)
    SCENE="$SRC/scenes/floating.json"
    export PBF_CACHE_DIR="$TMP/cache"
    SPLIT_LIMIT=240
    ARGS=(--frames 10 --format vtu --quiet --threads 1)
    split 2 "$TMP/whole" --checkpoint-every 6
    cp -r "$TMP/whole" "$TMP/two"
    cp -r "$TMP/whole" "$TMP/one"
    timeout 240 "${MPIRUN[@]}" -np 2 "$PBF" resume "$TMP/two" --quiet >"$TMP/out" 2>&1 ||
        { cat "$TMP/out" >&2; fail "resume on 2 ranks exited $?"; }
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/two" identical || fail "two ranks"
    cmp "$TMP/whole/solids.csv" "$TMP/two/solids.csv" || fail "two ranks: another solids.csv"
    resume_on 0 "$TMP/one" # the pieces merged: the meshes and bodies of the first
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/one" physics || fail "one process"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/one" solids || fail "one process"
    ;;
floatmerge)
    SCENE="$SRC/scenes/floating.json"
    export PBF_CACHE_DIR="$TMP/cache"
    SPLIT_LIMIT=240
    ARGS=(--set fluid.particle_radius=0.015 --format vtu --quiet --threads 1)
    split 2 "$TMP/whole" --frames 60
    split 2 "$TMP/save" --frames 10 --checkpoint-every 10
    for d in one three mixed; do cp -r "$TMP/save" "$TMP/$d"; done
    resume_on 0 "$TMP/one" --frames 60
    resume_on 3 "$TMP/three" --frames 60
    for d in one three; do
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/$d" physics || fail "$d: merged"
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/$d" solids || fail "$d: bodies"
    done
    # piece 1 of a save at the same step whose bodies moved otherwise: refused, naming it
    split 2 "$TMP/other" --frames 10 --checkpoint-every 10 --set solver.iterations=3
    cp "$TMP/other/checkpoint_00010_0001.pbfck" "$TMP/mixed/"
    timeout 60 "$PBF" resume "$TMP/mixed" --quiet >"$TMP/out" 2>&1
    [ $? -eq 1 ] && grep -q "checkpoint piece 1: mesh 0 (.*) differs from piece 0's" "$TMP/out" ||
        { cat "$TMP/out" >&2; fail "mixed pieces not refused"; }
    ;;
river2 | river4)
    SCENE="$SRC/scenes/river.json"
    ARGS=(--time "${RIVER_TIME:-0.5}" --format vtu --quiet --threads 1)
    serial
    split "${CASE#river}" "$TMP/split"
    python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" flow || fail "the river"
    ;;
glass2 | glass4 | honey2 | honey4 | layers2 | layers4 | spray2 | spray4)
    # the shipped scenes by their own figures (docs/mpi.md "The shipped scenes"), shortened
    # to SCENE_TIME seconds (the defaults below; the docs' figures are over longer runs)
    export PBF_CACHE_DIR="$TMP/cache" # the glass: the serial run bakes its field
    case "$CASE" in
    glass*) SCENE="$SRC/scenes/glass_fill.json" T=${SCENE_TIME:-1} ;;
    honey*) SCENE="$SRC/scenes/honey.json" T=${SCENE_TIME:-1} ;;
    layers*) SCENE="$SRC/scenes/oil_water.json" T=${SCENE_TIME:-5} ;;
    spray*) SCENE="$SRC/scenes/splash.json" T=${SCENE_TIME:-0.25} ;;
    esac
    ARGS=(--time "$T" --format vtu --quiet --threads 1)
    SPLIT_LIMIT=600
    serial
    split "${CASE: -1}" "$TMP/split"
    case "$CASE" in
    glass*) python3 "$SRC/tests/cli/check_mpi_scenes.py" "$TMP/serial" "$TMP/split" glass ;;
    honey*) python3 "$SRC/tests/cli/check_mpi_scenes.py" "$TMP/serial" "$TMP/split" honey ;;
    layers*) python3 "$SRC/tests/cli/check_mpi_scenes.py" "$TMP/serial" "$TMP/split" layers ;;
    spray*) python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" diffuse ;;
    esac || fail "the scene's figure"
    ;;
kill2 | kill4)
    python3 "$SRC/tests/cli/mpi_kill.py" "$PBF" "$SRC" "$TMP" "${CASE#kill}" "${MPIRUN[@]}" ||
        fail "mpi_kill.py"
    ;;
lib1 | lib2)
    timeout 90 "${MPIRUN[@]}" -np "${CASE#lib}" "$PBF" ||
        fail "test_mpi_lib on ${CASE#lib} ranks exited $?"
    ;;
migrate2 | migrate4)
    timeout 120 "${MPIRUN[@]}" -np "${CASE#migrate}" "$PBF" ||
        fail "test_mpi_migrate on ${CASE#migrate} ranks exited $?"
    ;;
diffuse1 | diffuse2 | diffuse4 | diffuseckpt)
    ARGS+=(--set diffuse.enabled=true)
    if [ "$CASE" = diffuseckpt ]; then
        ARGS=(--set fluid.particle_radius=0.02 --set diffuse.enabled=true --frames 10 --format vtu
            --quiet --threads 1)
        split 2 "$TMP/whole" --checkpoint-every 6
        cp -r "$TMP/whole" "$TMP/two"
        cp -r "$TMP/whole" "$TMP/one"
        for d in two one; do # the resumed runs write them again
            rm "$TMP"/$d/frame_0000[789]* "$TMP"/$d/frame_00010* "$TMP"/$d/diffuse_0000[789]*
            rm "$TMP"/$d/diffuse_00010*
        done
        timeout 90 "${MPIRUN[@]}" -np 2 "$PBF" resume "$TMP/two" --quiet >"$TMP/out" 2>&1 ||
            { cat "$TMP/out" >&2; fail "resume on 2 ranks exited $?"; }
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/two" identical || fail "two ranks"
        for f in "$TMP"/whole/diffuse_*; do
            cmp "$f" "$TMP/two/${f##*/}" || fail "resumed on two ranks: another ${f##*/}"
        done
        timeout 60 "$PBF" resume "$TMP/one" --quiet >"$TMP/out" 2>&1 ||
            { cat "$TMP/out" >&2; fail "resume in one process exited $?"; }
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/whole" "$TMP/one" diffuse ||
            fail "resumed in one process"
        exit 0
    fi
    serial
    split "${CASE#diffuse}" "$TMP/split"
    if [ "$CASE" = diffuse1 ]; then
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" identical || fail "check_mpi.py"
        for f in "$TMP"/serial/diffuse_*; do
            cmp "$f" "$TMP/split/${f##*/}" || fail "one rank: another ${f##*/}"
        done
    else
        python3 "$SRC/tests/cli/check_mpi.py" "$TMP/serial" "$TMP/split" diffuse || fail "check_mpi.py"
    fi
    ;;
diffroute2 | diffroute4)
    timeout 120 "${MPIRUN[@]}" -np "${CASE#diffroute}" "$PBF" ||
        fail "test_mpi_diffuse on ${CASE#diffroute} ranks exited $?"
    ;;
refused)
    # a tank 0.3 m long with h = 0.08 m: slabs at least 0.1 m wide, so 3 ranks at most
    expect_refusal "so at most 3 ranks" -np 4 "$PBF" run "$SCENE" "${ARGS[@]}" \
        --set 'domain.max=[0.3,0.8,0.4]' --set 'fluid.blocks[0].max=[0.2,0.6,0.4]' --out "$TMP/a"
    expect_refusal "only 'pbf run' and 'pbf resume' run split" -np 2 "$PBF" info "$SCENE"
    # a scene error: every rank finds it, rank 0 alone says it
    expect_refusal "'fluid.particle_radius' must be in (0, 10] m" -np 2 "$PBF" run "$SCENE" \
        "${ARGS[@]}" --set fluid.particle_radius=-1 --out "$TMP/e"
    ;;
# ---- outputs made on rank 0 from the particles gathered to it (pbf_mpi_world_gather) ----------
#   gather1, gather2  PBF_BINARY is tests/test_mpi_gather: the gather itself on one and two ranks
#            (rank 0 the whole world in id order, each rank's own particles bit for bit in it)
#   vtk      --format vtk: one rank writes one process's frame_NNNNN.vtk byte for byte; two ranks'
#            .vtk hold by id exactly their own .pvtu pieces' particles, the same ids as one
#            process's and positions within 2e-3 m of them (measured: 5.6e-4 m at frame 10)
#   mesh     --mesh: two ranks' surfaces have one process's triangle count within 1 % and its
#            bounding box within 1 mm (measured: 0.05 %, 2.3e-5 m), and are the surfaces that
#            `pbf mesh` makes afterwards from the run's gathered .vtk frames, byte for byte
#            A hook that fails on rank 0 at frame 1 stops every rank (exit 1, said once)
#   png      --png, --video: two ranks' video has every frame (where ffmpeg is installed), their
#            pictures decode to the size asked for and differ from one
#            process's by at most 0.05 of 255 on average (measured: 0.002 over 6 frames, 0.003
#            over 10; drawing rank 0's slab alone instead of the gathered world: up to 2.5). A
#            hook that fails on rank 0 before frame 0 stops every rank
gather1 | gather2)
    timeout 90 "${MPIRUN[@]}" -np "${CASE#gather}" "$PBF" ||
        fail "test_mpi_gather on ${CASE#gather} ranks exited $?"
    ;;
vtk)
    ARGS=(--set fluid.particle_radius=0.02 --frames 10 --quiet --threads 1)
    "$PBF" run "$SCENE" "${ARGS[@]}" --format vtk --out "$TMP/serial" || fail "pbf run exited $?"
    split 1 "$TMP/one" --format vtk
    for f in "$TMP"/serial/frame_*.vtk; do
        cmp "$f" "$TMP/one/${f##*/}" || fail "one rank: ${f##*/} is not one process's"
    done
    split 2 "$TMP/split" --format vtk,vtu
    python3 "$SRC/tests/cli/check_mpi_outputs.py" vtk "$TMP/serial" "$TMP/split" 2e-3 ||
        fail "check_mpi_outputs.py vtk"
    ;;
mesh)
    ARGS=(--set fluid.particle_radius=0.02 --frames 10 --quiet --threads 1 --mesh)
    "$PBF" run "$SCENE" "${ARGS[@]}" --format none --out "$TMP/serial" || fail "pbf run exited $?"
    split 2 "$TMP/split" --format vtk
    python3 "$SRC/tests/cli/check_mpi_outputs.py" mesh "$TMP/serial" "$TMP/split" 0.01 1e-3 ||
        fail "check_mpi_outputs.py mesh"
    mkdir -p "$TMP/again"
    "$PBF" mesh "$TMP/split" --out "$TMP/again" --quiet --threads 1 || fail "pbf mesh exited $?"
    for f in "$TMP"/split/surface_*.ply; do
        cmp "$f" "$TMP/again/${f##*/}" || fail "${f##*/}: not the surface of the gathered frame"
    done
    # a hook failing on rank 0 at frame 1 (its file blocked by a folder) stops every rank
    if "$PBF" run "$SCENE" "${ARGS[@]}" --frames 0 --format none --mesh-format vdb \
        --out "$TMP/vdb" 2>/dev/null; then
        mkdir -p "$TMP/blocked/surface_00001.vdb"
        expect_refusal "frame 1: --mesh: cannot write" -np 2 "$PBF" run "$SCENE" "${ARGS[@]}" \
            --format none --mesh-format vdb --out "$TMP/blocked"
    fi
    ;;
png)
    "$PBF" run --help | grep -q -- "--png" || { echo "no renderer in this pbf: skipped"; exit 77; }
    ARGS=(--set fluid.particle_radius=0.02 --frames 6 --quiet --threads 1 --format none
        --resolution 160x120)
    "$PBF" run "$SCENE" "${ARGS[@]}" --png "$TMP/serial" --out "$TMP/serial_run" ||
        fail "pbf run exited $?"
    video=()
    command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null && video=(--video "$TMP/split.mp4")
    split 2 "$TMP/split_run" --png "$TMP/split" "${video[@]}"
    python3 "$SRC/tests/cli/check_mpi_outputs.py" png "$TMP/serial" "$TMP/split" 160 120 0.05 ||
        fail "check_mpi_outputs.py png"
    if [ ${#video[@]} -gt 0 ]; then # frames 0..6 in the video too
        n=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries \
            stream=nb_read_frames -of csv=p=0 "$TMP/split.mp4")
        [ "$n" = 7 ] || fail "the video of two ranks has $n frames, not 7"
    fi
    # two fluids: the gathered particles keep their fluids' tints
    FLUIDS=(--set fluid.particle_radius=0.02 --frames 2 --quiet --threads 1 --format none
        --resolution 160x120)
    "$PBF" run "$SRC/scenes/oil_water.json" "${FLUIDS[@]}" --png "$TMP/serial2" \
        --out "$TMP/serial2_run" || fail "pbf run oil_water exited $?"
    timeout 90 "${MPIRUN[@]}" -np 2 "$PBF" run "$SRC/scenes/oil_water.json" "${FLUIDS[@]}" \
        --png "$TMP/split2" --out "$TMP/split2_run" >"$TMP/out" 2>&1 ||
        { cat "$TMP/out" >&2; fail "mpirun -np 2 oil_water exited $?"; }
    python3 "$SRC/tests/cli/check_mpi_outputs.py" png "$TMP/serial2" "$TMP/split2" 160 120 0.05 ||
        fail "check_mpi_outputs.py png, two fluids"
    # a hook failing on rank 0 before frame 0 stops every rank, said once
    touch "$TMP/file"
    expect_refusal "--png $TMP/file/png: Not a directory" -np 2 "$PBF" run "$SCENE" "${ARGS[@]}" \
        --png "$TMP/file/png" --out "$TMP/refused"
    ;;
*) fail "unknown case" ;;
esac
echo "test_mpi [$CASE]: ok"
