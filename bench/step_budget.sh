#!/usr/bin/env bash
# The table of docs/notes/physics_log.md "Within the default step's cost" (its conclusions:
# docs/physics.md, the same section): the standing wave (5 periods) and the tank at rest (flat
# surface, 2 periods) at r = 5 mm for each way of spending about the default's work (substeps x
# passes, relaxation, kernel pair, clearance). Prints one line per row:
# kept per half swing (fit), period against theory, the resting tank's mean v²/2 and how many of
# its particles move faster than 5 cm/s, and the wave run's CPU seconds (user). Full outputs go to
# OUT/<name>_{wave,rest}.txt.
# Usage: bash bench/step_budget.sh [BUILD_DIR] [OUT]   (about 40 min of one core)
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-out/step_budget}
FLOWS="$BUILD/bench/pbf_flows"
[ -x "$FLOWS" ] || { echo "bench/step_budget.sh: build $FLOWS first" >&2; exit 1; }
mkdir -p "$OUT"
WEND="--kernel wendland --kernel-scale 5 --chebyshev off --clearance 0.1 --artificial off"
rows=(
    "paper_4x4|"
    "paper_4x4_e1|--relaxation 1"
    "paper_4x4_c01_e1|--clearance 0.1 --relaxation 1"
    "paper_8x2|--substeps 8 --iterations 2"
    "paper_8x2_c01|--substeps 8 --iterations 2 --clearance 0.1"
    "paper_8x1|--substeps 8 --iterations 1"
    "wendland_4x4|$WEND"
    "wendland_4x4_e05|$WEND --relaxation 0.5"
    "wendland_4x4_e1|$WEND --relaxation 1"
    "wendland_6x2_e1|$WEND --substeps 6 --iterations 2 --relaxation 1"
    "wendland_8x2|$WEND --substeps 8 --iterations 2"
    "wendland_8x2_e1|$WEND --substeps 8 --iterations 2 --relaxation 1"
)
for row in "${rows[@]}"; do
    name=${row%%|*}
    args=${row#*|}
    TIMEFORMAT=%U # the wave run's CPU seconds (user), less at the mercy of a shared machine
    # shellcheck disable=SC2086
    cpu=$({ time "$FLOWS" wave --radius 0.005 --periods 5 --threads 1 $args \
        >"$OUT/${name}_wave.txt"; } 2>&1)
    # shellcheck disable=SC2086
    "$FLOWS" wave --radius 0.005 --periods 2 --amplitude 0.000001 --threads 1 $args \
        >"$OUT/${name}_rest.txt"
    kept=$(grep -o 'fit over[^;]*' "$OUT/${name}_wave.txt" | sed "s/.*) //" || true)
    period=$(grep -o '([-+][0-9.]* %)' "$OUT/${name}_wave.txt" || true)
    rest=$(grep -o 'kinetic energy [0-9.e+-]*' "$OUT/${name}_rest.txt" | cut -d' ' -f3)
    fast=$(grep -o '^end: [0-9]*' "$OUT/${name}_rest.txt" | cut -d' ' -f2)
    printf '%-18s kept %s  period %s  at rest %s J/kg, %s fast  wave %s s CPU\n' "$name" \
        "$kept" "$period" "$rest" "$fast" "$cpu"
done
