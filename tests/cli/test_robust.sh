#!/usr/bin/env bash
# Robustness of the `pbf` command (docs/robustness.md): checkpoints and `pbf resume`,
# the instability watchdog, absurd parameters, memory and disk limits.
# Usage: test_robust.sh PBF_BINARY SOURCE_DIR CASE   (CTest runs each case as its own test;
# exit 77 is a skip). Runs use the coarse dam break of test_cli.sh: 1500 particles.
set -u

PBF=${1:?usage: test_robust.sh PBF_BINARY SOURCE_DIR CASE}
SRC=${2:?source dir}
CASE=${3:?case}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_robust_${CASE}_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
SMALL=(--set fluid.particle_radius=0.02 --set time.substeps=1 --threads 2)

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
expect_rc() { # expect_rc WANT CMD...: stdout/stderr kept in $TMP/out, $TMP/err
    local want=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $rc, expected $want"; }
}
expect_in() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "'$2' not in $(basename "$1")"; }; }
no_temp_files() {
    local left
    left=$(find "$1" -name '*.tmp.*' | head -1)
    [ -z "$left" ] || fail "temporary file left: $left"
}
# stats.csv has rows for frames 0..N-1, in order, and nothing else.
check_rows() {
    local rows
    rows=$(($(wc -l <"$1/stats.csv") - 1))
    [ "$rows" -eq "$2" ] || fail "$1/stats.csv has $rows rows, expected $2"
    awk -F, 'NR > 1 && $1 != NR - 2 { exit 1 }' "$1/stats.csv" || fail "$1/stats.csv: rows out of order"
}
frame_count() { find "$1" -maxdepth 1 -name 'frame_*' | wc -l; }
# Every frame file of $1 is byte-identical to the one of $2.
same_frames() {
    local f n=0
    for f in "$1"/frame_*; do
        cmp -s "$f" "$2/$(basename "$f")" || fail "$(basename "$f") differs between $1 and $2"
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || fail "no frames in $1"
}

# A run stopped at frame 5 (checkpoints at 3) and resumed to 8 == a run straight to 8.
case_resume() {
    expect_rc 0 "$PBF" run --frames 8 --out "$TMP/a" --quiet "${SMALL[@]}"
    expect_rc 0 "$PBF" run --frames 5 --out "$TMP/b" --checkpoint-every 3 --quiet "${SMALL[@]}"
    [ -f "$TMP/b/checkpoint.pbfck" ] || fail "no checkpoint"
    # on another thread count, and with the frames after the checkpoint (4, 5) written again
    expect_rc 0 "$PBF" resume "$TMP/b" --frames 8 --threads 1
    expect_in "$TMP/err" "pbf resume: dam_break: 1,500 particles, frame 3"
    [ "$(frame_count "$TMP/b")" -eq 9 ] || fail "expected 9 frames: $(ls "$TMP/b")"
    same_frames "$TMP/a" "$TMP/b"
    check_rows "$TMP/b" 9
    no_temp_files "$TMP/b"
    # the resumed run went on saving (frame 6) and the folder is complete now
    expect_rc 0 "$PBF" resume "$TMP/b" --frames 8
    expect_in "$TMP/err" "frame 6"
    expect_rc 0 "$PBF" resume "$TMP/b" --frames 6 --quiet
    expect_rc 0 "$PBF" resume "$TMP/b" --frames 6
    expect_in "$TMP/err" "is complete (frame 6 of 6)"
    expect_rc 1 "$PBF" resume "$TMP/b" --frames 5
    expect_in "$TMP/err" "already at frame 6"
    # a fresh run into the folder removes the old checkpoint with the old frames
    expect_rc 0 "$PBF" run --frames 1 --out "$TMP/b" --quiet "${SMALL[@]}"
    [ ! -e "$TMP/b/checkpoint.pbfck" ] || fail "an earlier run's checkpoint was kept"
}

# Ctrl-C with checkpoints on saves the last frame; resuming it matches a straight run.
case_resume_interrupt() {
    "$PBF" run --frames 100000 --out "$TMP/b" --checkpoint-every 100000 "${SMALL[@]}" \
        >"$TMP/out" 2>"$TMP/err" &
    local pid=$! waited=0 polls=0
    # the signal comes once a few frames are written (a frame file appears whole, by rename),
    # not after a fixed time: in 2 s a release build wrote hundreds, which the straight run
    # below then had to repeat
    while [ ! -e "$TMP/b/frame_00003.ply" ] && [ $polls -lt 300 ]; do
        sleep 0.05
        polls=$((polls + 1))
    done
    [ -e "$TMP/b/frame_00003.ply" ] || { kill -KILL "$pid"; fail "no 4 frames in 15 s"; }
    kill -INT "$pid" || fail "the run ended before the signal"
    while kill -0 "$pid" 2>/dev/null && [ $waited -lt 150 ]; do sleep 0.1; waited=$((waited + 1)); done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fail "still running 15 s after SIGINT"; fi
    wait "$pid"
    [ $? -eq 130 ] || { cat "$TMP/err" >&2; fail "exit status after SIGINT"; }
    expect_in "$TMP/err" "go on with: pbf resume $TMP/b"
    local last=$(($(frame_count "$TMP/b") - 1))
    [ "$last" -ge 1 ] || fail "no frame after frame 0"
    expect_in "$TMP/err" "the checkpoint of frame $last is in"
    local end=$((last + 3))
    expect_rc 0 "$PBF" resume "$TMP/b" --frames "$end" --quiet
    expect_rc 0 "$PBF" run --frames "$end" --out "$TMP/a" --quiet "${SMALL[@]}"
    same_frames "$TMP/a" "$TMP/b"
    check_rows "$TMP/b" $((end + 1))
    no_temp_files "$TMP/b"
}

# What resume refuses: no checkpoint, a corrupt or foreign one, a change of the fluid. Nothing
# in the folder is touched by a refused resume.
case_resume_errors() {
    expect_rc 2 "$PBF" resume
    expect_in "$TMP/err" "usage: pbf resume"
    expect_rc 0 "$PBF" resume --help
    expect_in "$TMP/out" "usage: pbf resume"
    expect_rc 1 "$PBF" resume "$TMP/none"
    expect_in "$TMP/err" "cannot resume: $TMP/none/checkpoint.pbfck: cannot open"
    expect_rc 0 "$PBF" run --frames 4 --out "$TMP/b" --checkpoint-every 2 --quiet "${SMALL[@]}"
    cp "$TMP/b/checkpoint.pbfck" "$TMP/good"
    cp "$TMP/b/stats.csv" "$TMP/stats"
    # one flipped byte in the middle of the particles
    local size
    size=$(stat -c %s "$TMP/good")
    printf '\x55' | dd of="$TMP/b/checkpoint.pbfck" bs=1 seek=$((size / 2)) conv=notrunc status=none
    expect_rc 1 "$PBF" resume "$TMP/b" --frames 6
    expect_in "$TMP/err" "checksum mismatch in section 'PARTICLE': the file is corrupt"
    # cut short
    head -c $((size - 100)) "$TMP/good" >"$TMP/b/checkpoint.pbfck"
    expect_rc 1 "$PBF" resume "$TMP/b" --frames 6
    expect_in "$TMP/err" "truncated"
    # a foreign file
    cp "$TMP/b/frame_00001.ply" "$TMP/b/checkpoint.pbfck"
    expect_rc 1 "$PBF" resume "$TMP/b" --frames 6
    expect_in "$TMP/err" "not a pbf checkpoint (it starts with \"ply"
    cmp -s "$TMP/stats" "$TMP/b/stats.csv" || fail "a refused resume changed stats.csv"
    [ "$(frame_count "$TMP/b")" -eq 5 ] || fail "a refused resume changed the frames"
    # the particles, the domain and gravity are the checkpoint's
    cp "$TMP/good" "$TMP/b/checkpoint.pbfck"
    expect_rc 2 "$PBF" resume "$TMP/b" --set fluid.particle_radius=0.01
    expect_in "$TMP/err" "--set 'fluid.particle_radius=0.01': a resumed run can change solver.*"
    expect_rc 2 "$PBF" resume "$TMP/b" --set gravity=[0,0,0]
    # a change of the solver is fine
    expect_rc 0 "$PBF" resume "$TMP/b" --frames 6 --set solver.iterations=6 --quiet
    check_rows "$TMP/b" 7
    expect_in "$TMP/b/scene.json" '"iterations":	6'
}

# The watchdog: gravity of 280 m/s^2 along x, no speed limit and no constraint relaxation
# throw the block at the far wall faster than 10 x the CFL limit within the first ten frames (at
# 60 fps with one substep, a frame is a step). The frames before the failing step stay valid,
# the message names the step, the particle and what to change, and the last checkpoint lets the
# run go on. (The relaxation: with s_corr only between particles closer than the rest spacing,
# the default ε lets the block survive the impact.)
case_watchdog() {
    local unstable=(--set solver.cfl=0 --set 'gravity=[280,0,0]' --set solver.relaxation=0)
    expect_rc 1 "$PBF" run --frames 10 --out "$TMP/w" --checkpoint-every 2 --quiet \
        "${SMALL[@]}" "${unstable[@]}"
    local n
    n=$(sed -n 's/^pbf: frame \([0-9]*\): simulation unstable at step \1 (t = .*): particle .*/\1/p' \
        "$TMP/err")
    [ -n "$n" ] && [ "$n" -ge 2 ] && [ "$n" -le 10 ] ||
        { cat "$TMP/err" >&2; fail "no 'frame N: simulation unstable at step N' with N in 2..10"; }
    expect_in "$TMP/err" "times the CFL speed limit"
    expect_in "$TMP/err" "raise time.substeps, now 1, or time.fps"
    expect_in "$TMP/err" "solver.iterations (now 4)"
    expect_in "$TMP/err" "the checkpoint of frame $(((n - 1) / 2 * 2)) is in '$TMP/w'"
    expect_in "$TMP/err" "pbf resume $TMP/w --set time.substeps=2"
    [ "$(frame_count "$TMP/w")" -eq "$n" ] || fail "expected frames 0..$((n - 1)): $(ls "$TMP/w")"
    check_rows "$TMP/w" "$n"
    no_temp_files "$TMP/w"
    # with more substeps the same run gets through
    expect_rc 0 "$PBF" resume "$TMP/w" --set time.substeps=4 --quiet
    [ "$(frame_count "$TMP/w")" -eq 11 ] || fail "the resumed run did not finish"
    check_rows "$TMP/w" 11
}

# Absurd parameters: an error or a warning that names the field; nothing is written on error.
case_limits() {
    expect_rc 1 "$PBF" run --frames 1 --out "$TMP/o" --set fluid.particle_radius=-0.01
    expect_in "$TMP/err" "'fluid.particle_radius' must be in (0, 10] m, got -0.01"
    expect_rc 1 "$PBF" run --frames 1 --out "$TMP/o" --set solver.iterations=0
    expect_in "$TMP/err" "'solver.iterations' must be in [1, 1000]"
    expect_rc 1 "$PBF" run --frames 1 --out "$TMP/o" --set time.fps=5 --set time.substeps=1
    expect_in "$TMP/err" "'time.substeps' = 1 at 'time.fps' = 5"
    expect_in "$TMP/err" "Use time.substeps >= "
    [ ! -e "$TMP/o" ] || fail "output folder created for a refused scene"
    expect_rc 0 "$PBF" info --set time.fps=30 --set time.substeps=1
    expect_in "$TMP/err" "pbf: warning: <built-in>: 'time.substeps' = 1 at 'time.fps' = 30 is too coarse"
    expect_rc 0 "$PBF" info --set 'colliders=[{"type":"sphere","center":[0.2,0.2,0.2],"radius":0.1}]'
    expect_in "$TMP/err" "pbf: warning: <built-in>: "
    expect_in "$TMP/err" "particles of 'fluid.blocks[0]' start inside 'colliders[0]' (a sphere)"
    expect_rc 0 "$PBF" info "$SRC/scenes/dam_break.json"
    [ ! -s "$TMP/err" ] || { cat "$TMP/err" >&2; fail "warnings for a shipped scene"; }
}

# A scene that needs more memory than the process may have is refused before allocating, with
# the estimate. (ulimit -v cannot be combined with AddressSanitizer: skipped there.)
case_memory() {
    [ -z "${PBF_SANITIZED:-}" ] || exit 77
    (ulimit -v 1000000; exec "$PBF" run --frames 1 --out "$TMP/o" --set fluid.particle_radius=0.0015) \
        >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ "$rc" -eq 1 ] || { cat "$TMP/err" >&2; fail "exit status $rc, expected 1"; }
    expect_in "$TMP/err" "pbf: <built-in>: fluid.blocks[0]: a world of 3537800 particles needs about "
    expect_in "$TMP/err" "GiB"
    expect_in "$TMP/err" "ulimit -v (RLIMIT_AS)"
    [ ! -e "$TMP/o" ] || fail "output folder created for a refused scene"
    # `pbf info` says so in advance
    (ulimit -v 1000000; exec "$PBF" info --set fluid.particle_radius=0.0015) >"$TMP/out" 2>"$TMP/err"
    [ $? -eq 0 ] || { cat "$TMP/err" >&2; fail "pbf info failed"; }
    expect_in "$TMP/out" "memory limit     976.6 MiB, ulimit -v (RLIMIT_AS): \`pbf run\` refuses"
    expect_in "$TMP/err" "pbf: warning: <built-in> needs about "
    expect_in "$TMP/err" "GiB, more than the 976.6 MiB this process may use"
}

# Output that cannot be written: a folder under a file, a checkpoint on a full disk.
case_disk() {
    : >"$TMP/file"
    expect_rc 1 "$PBF" run --frames 1 --out "$TMP/file/o" "${SMALL[@]}"
    expect_in "$TMP/err" "cannot create output folder '$TMP/file/o': Not a directory"
    # a checkpoint of 1500 particles is 55 KB, over the 40 KB file size limit: the frame is
    # kept (its row too), the run stops with the reason, and no temporary file is left
    (ulimit -f 40; exec "$PBF" run --frames 4 --out "$TMP/o" --format none --checkpoint-every 1 \
        --quiet "${SMALL[@]}") >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ "$rc" -eq 1 ] || { cat "$TMP/err" >&2; fail "exit status $rc, expected 1"; }
    expect_in "$TMP/err" "pbf: frame 1: checkpoint not written: cannot write '$TMP/o/checkpoint.pbfck'"
    expect_in "$TMP/err" "File too large"
    check_rows "$TMP/o" 2
    no_temp_files "$TMP/o"
    [ ! -e "$TMP/o/checkpoint.pbfck" ] || fail "a partial checkpoint"
    # a run that cannot fit on the disk (about 10 TiB) is announced (then stopped with Ctrl-C)
    "$PBF" run --frames 100000000 --format ply,vtk --out "$TMP/big" "${SMALL[@]}" \
        >"$TMP/out" 2>"$TMP/err" &
    local pid=$! waited=0
    while ! grep -q "warning: 100000001 frames will write about" "$TMP/err" && [ $waited -lt 100 ]; do
        sleep 0.1; waited=$((waited + 1))
    done
    kill -INT "$pid" 2>/dev/null
    wait "$pid"
    expect_in "$TMP/err" "pbf: warning: 100000001 frames will write about"
    expect_in "$TMP/err" "the run will stop with an error when the disk is full"
}

declare -F "case_$CASE" >/dev/null || fail "no such case"
"case_$CASE"
echo "ok [$CASE]"
