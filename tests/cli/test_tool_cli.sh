#!/usr/bin/env bash
# Command-line tests of the tool (docs/tool.md): forces.csv and its plot from `pbf run`
# (the shipped scene, a few frames), `pbf haptic` with each pose source, `pbf bench --tool`.
# Usage: test_tool_cli.sh PBF_BINARY SOURCE_DIR CASE [UDP_SEND]. Short runs only: no timing is asserted.
set -u

PBF=${1:?usage: test_tool_cli.sh PBF_BINARY SOURCE_DIR CASE [UDP_SEND]}
SRC=${2:?source dir}
CASE=${3:?case}
UDP_SEND=${4:-} # tests/cli/udp_send.c: bash's /dev/udp cannot read datagrams
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_tool_${CASE}_XXXXXX")
BG=
cleanup() { [ -n "$BG" ] && kill "$BG" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }
expect_rc() {
    local want=$1; shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || { cat "$TMP/out" "$TMP/err" >&2; fail "'$*' exited $rc, expected $want"; }
}
expect_in() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "'$2' not in $(basename "$1")"; }; }

# A small tank with a tool (about 900 particles) for the haptic runs.
cat >"$TMP/small.json" <<'EOF'
{
  "name": "tool_small",
  "domain": {"max": [0.3, 0.3, 0.3]},
  "fluid": {"particle_radius": 0.0125, "blocks": [{"max": [0.3, 0.1, 0.3]}]},
  "tool": {"radius": 0.04, "adhesion": {"k_tool": 5000, "k_fluid": 5000},
           "path": {"keys": [{"time": 0, "position": [0.15, 0.2, 0.15]},
                             {"time": 0.05, "position": [0.15, 0.19, 0.15]}]}},
  "solver": {"scorr": {"k": 0}},
  "output": {"format": []}
}
EOF

COLUMNS_RUN='frame,time,x,y,z,vx,vy,vz,fx,fy,fz,reaction_x,reaction_y,reaction_z,adhesion_x,adhesion_y,adhesion_z,damping_x,damping_y,damping_z,contacts,min_distance'
COLUMNS_HAPTIC='step,time,x,y,z,vx,vy,vz,fx,fy,fz,reaction_x,reaction_y,reaction_z,adhesion_x,adhesion_y,adhesion_z,damping_x,damping_y,damping_z,contacts,min_distance,step_ms,late'

# Rows after the header, each with every column.
check_csv() { # FILE HEADER ROWS
    [ -f "$1" ] || fail "no $(basename "$1")"
    [ "$(head -1 "$1")" = "$2" ] || fail "$(basename "$1") header: $(head -1 "$1")"
    local got cols
    got=$(($(wc -l <"$1") - 1))
    [ "$got" -eq "$3" ] || { cat "$1" >&2; fail "$(basename "$1") has $got rows, expected $3"; }
    cols=$(head -1 "$1" | awk -F, '{print NF}')
    awk -F, -v c="$cols" 'NR > 1 && NF != c { exit 1 }' "$1" || fail "$(basename "$1"): a short row"
}

# The shipped scene (20,800 particles), two frames: forces.csv, forces.gp, and the plot when
# gnuplot is installed; without gnuplot a clear note and still exit 0.
case_run_scene() {
    expect_rc 0 "$PBF" run "$SRC/scenes/tool_sphere.json" --frames 2 --out "$TMP/o" --threads 2
    check_csv "$TMP/o/forces.csv" "$COLUMNS_RUN" 3
    [ -s "$TMP/o/forces.gp" ] || fail "no forces.gp"
    expect_in "$TMP/o/scene.json" '"tool":'
    # frame 1: the tool has moved down its path (0.1 m/s for 1/60 s), not yet in the water
    awk -F, 'NR == 3 && ($4 > 0.3999 || $4 < 0.398 || $7 > -0.09) { exit 1 }' "$TMP/o/forces.csv" \
        || fail "frame 1 pose: $(sed -n 3p "$TMP/o/forces.csv")"
    if command -v gnuplot >/dev/null 2>&1; then
        [ -s "$TMP/o/forces.png" ] || { cat "$TMP/err" >&2; fail "gnuplot is there but no forces.png"; }
        head -c 8 "$TMP/o/forces.png" | od -An -c | grep -q 'P   N   G' || fail "forces.png is not a PNG"
    fi
    # no gnuplot on the PATH: a note, exit 0, the CSV still there
    expect_rc 0 env PATH=/nonexistent "$PBF" run "$SRC/scenes/tool_sphere.json" --frames 1 \
        --out "$TMP/p" --threads 2 --set fluid.particle_radius=0.015 --quiet
    expect_in "$TMP/err" "gnuplot not found"
    expect_in "$TMP/err" "gnuplot forces.gp"
    [ ! -e "$TMP/p/forces.png" ] || fail "forces.png without gnuplot?"
    check_csv "$TMP/p/forces.csv" "$COLUMNS_RUN" 2
    # a scene without a tool writes none of it
    expect_rc 0 "$PBF" run --frames 1 --out "$TMP/q" --quiet --set fluid.particle_radius=0.02 \
        --set time.substeps=1
    [ ! -e "$TMP/q/forces.csv" ] || fail "forces.csv for a scene without a tool"
    # a bad tool section names the file and the key
    expect_rc 1 "$PBF" info "$SRC/scenes/tool_sphere.json" --set tool.radus=0.1
    expect_in "$TMP/err" "tool_sphere.json"
    expect_in "$TMP/err" "did you mean 'radius'"
}

case_haptic_path() {
    expect_rc 0 "$PBF" haptic "$TMP/small.json" --rate 200 --out "$TMP/h.csv" --threads 2
    check_csv "$TMP/h.csv" "$COLUMNS_HAPTIC" 10 # the path ends at 0.05 s: 10 steps of 5 ms
    expect_in "$TMP/err" "achieved rate"
    expect_in "$TMP/err" "deadline misses"
    expect_in "$TMP/err" "steps/s (target 200)"
    # the last step is at the path's end
    awk -F, 'END { if ($4 < 0.18999 || $4 > 0.19001) exit 1 }' "$TMP/h.csv" || fail "end pose: $(tail -1 "$TMP/h.csv")"
    # --duration and stdout
    expect_rc 0 "$PBF" haptic "$TMP/small.json" --rate 100 --duration 0.03 --quiet --threads 2
    [ "$(wc -l <"$TMP/out")" -eq 4 ] || fail "stdout CSV: $(cat "$TMP/out")"
    [ ! -s "$TMP/err" ] || fail "--quiet printed: $(cat "$TMP/err")"
    # usage and scene errors
    expect_rc 2 "$PBF" haptic
    expect_in "$TMP/err" "a scene with a tool is needed"
    expect_rc 2 "$PBF" haptic "$TMP/small.json" --pose joystick
    expect_rc 2 "$PBF" haptic "$TMP/small.json" --rate 0
    expect_rc 1 "$PBF" haptic "$SRC/scenes/dam_break.json" --duration 0.01
    expect_in "$TMP/err" 'has no "tool" section'
    expect_rc 0 "$PBF" haptic --help
    expect_in "$TMP/out" "usage: pbf haptic"
}

case_haptic_stdin() {
    printf '# x y z\n0.15 0.2 0.15\n\n0.16, 0.2, 0.15\n0.17\t0.21\t0.15\n' >"$TMP/poses.txt"
    expect_rc 0 "$PBF" haptic "$TMP/small.json" --pose stdin --rate 200 --out "$TMP/s.csv" \
        --threads 2 <"$TMP/poses.txt"
    check_csv "$TMP/s.csv" "$COLUMNS_HAPTIC" 3 # one pose per step, then the end of input
    awk -F, 'NR == 2 && $3 == 0.150000006 && $4 == 0.200000003 { ok++ }
             NR == 3 && $3 == 0.159999996 { ok++ }
             NR == 4 && $3 == 0.170000002 && $4 == 0.209999993 { ok++ }
             END { exit ok == 3 ? 0 : 1 }' "$TMP/s.csv" || { cat "$TMP/s.csv" >&2; fail "poses not followed"; }
    # --duration holds the last pose after the end of input
    expect_rc 0 "$PBF" haptic "$TMP/small.json" --pose stdin --rate 200 --duration 0.025 \
        --out "$TMP/d.csv" --threads 2 <"$TMP/poses.txt"
    check_csv "$TMP/d.csv" "$COLUMNS_HAPTIC" 5
    awk -F, 'END { if ($3 != 0.170000002) exit 1 }' "$TMP/d.csv" || fail "last pose not held"
    # a malformed line stops the run and names it
    printf '0.15 0.2 0.15\n0.15 oops 0.15\n' >"$TMP/bad.txt"
    expect_rc 1 "$PBF" haptic "$TMP/small.json" --pose stdin --out "$TMP/b.csv" <"$TMP/bad.txt"
    expect_in "$TMP/err" "stdin line 2"
    expect_in "$TMP/err" "0.15 oops 0.15"
}

case_haptic_udp() {
    "$PBF" haptic "$TMP/small.json" --pose udp --port 0 --rate 100 --duration 20 \
        --out "$TMP/u.csv" --threads 2 2>"$TMP/err" &
    BG=$!
    local port="" i
    for i in $(seq 1 100); do
        port=$(sed -n 's/.*listening on udp 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$TMP/err")
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$TMP/err" >&2; fail "no port announced"; }
    [ -x "$UDP_SEND" ] || fail "no udp_send helper"
    # a pose, again every 0.2 s until the force comes back
    local reply
    reply=$("$UDP_SEND" "$port" '0.15 0.17 0.15' 50) || { cat "$TMP/err" >&2; fail "no reply to a pose"; }
    echo "$reply" | awk 'NF != 4 || $1 <= 0 { exit 1 }' || fail "reply is not 't fx fy fz': $reply"
    "$UDP_SEND" "$port" 'not a pose' || fail "send"
    sleep 0.1
    "$UDP_SEND" "$port" quit || fail "send"
    local waited=0
    while kill -0 "$BG" 2>/dev/null && [ $waited -lt 100 ]; do sleep 0.1; waited=$((waited + 1)); done
    kill -0 "$BG" 2>/dev/null && fail "still running after 'quit'"
    wait "$BG"
    local rc=$?
    BG=
    [ "$rc" -eq 0 ] || { cat "$TMP/err" >&2; fail "exit $rc"; }
    grep -q ',0.150000006,0.170000002,0.150000006,' "$TMP/u.csv" || { cat "$TMP/u.csv" | head >&2; fail "pose not applied"; }
    expect_in "$TMP/err" "bad datagrams    1"
    expect_in "$TMP/err" "achieved rate"
}

case_bench_tool() {
    expect_rc 0 "$PBF" bench --tool --particles 800,1500 --steps 2 --warmup 1 --threads 2 \
        --csv "$TMP/b.csv"
    expect_in "$TMP/out" "steps/s"
    expect_in "$TMP/out" "1 kHz?"
    [ "$(wc -l <"$TMP/b.csv")" -eq 3 ] || fail "bench csv: $(cat "$TMP/b.csv")"
    head -1 "$TMP/b.csv" | grep -q '^particles,particle_radius,ms_median,ms_min,steps_per_s,' \
        || fail "bench csv header: $(head -1 "$TMP/b.csv")"
    expect_rc 0 "$PBF" bench --help
    expect_in "$TMP/out" "--tool"
}

declare -F "case_$CASE" >/dev/null || fail "no such case"
"case_$CASE"
echo "ok [$CASE]"
