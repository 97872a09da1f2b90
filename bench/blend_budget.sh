#!/usr/bin/env bash
# The table of docs/notes/physics_log.md "The Wendland pair with the impulse blend, at the
# default's cost" (its conclusions: docs/physics.md, "What dissipates energy"): the standing wave
# (5 periods) and the tank at rest (flat surface, 12 periods, 9 s) for the Wendland pair with
# weighted passes, the walls' stop at 0.1 r, vorticity confinement off and s_corr k 0.03, over
# kernel radius h, substeps x passes and the impulse blend β. Prints one line per row: kept per
# half swing (the fit over half swings 1-9 with its standard error, as docs/physics.md states it,
# and the geometric mean over all ten, which the first half swing's rise lifts), period against
# theory, the resting tank's mean v²/2 after 9 s and the centre of mass's fall there (the rows
# at r = 5 mm). Then the pairing of particles in the default dam break
# (scenes/dam_break.json) at 0.5 s and 1 s for the defaults and the Wendland settings (pbf_shape:
# the nearest neighbours' mean and minimum distance and the share closer than 0.7 of the rest
# spacing). Full outputs go to OUT/<name>_{wave,rest,pairs}.txt.
# Usage: bash bench/blend_budget.sh [BUILD_DIR] [OUT]   (about 25 min of one core)
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-out/blend_budget}
FLOWS="$BUILD/bench/pbf_flows"
[ -x "$FLOWS" ] || { echo "bench/blend_budget.sh: build $FLOWS first" >&2; exit 1; }
mkdir -p "$OUT"
BASE="--kernel wendland --vorticity 0 --scorr-k 0.03 --step-weights chebyshev --clearance 0.1"
# name | radius | settings after BASE
rows=(
    "h5_4x4|0.005|--kernel-scale 5"
    "h5_3x4_b0.5|0.005|--kernel-scale 5 --substeps 3 --impulse-blend 0.5"
    "h5_3x4_b0.5_clearance1|0.005|--kernel-scale 5 --substeps 3 --impulse-blend 0.5 --clearance 1"
    "h5_3x4_b0.5_xsph0|0.005|--kernel-scale 5 --substeps 3 --impulse-blend 0.5 --xsph 0"
    "h5_3x4_b0.6|0.005|--kernel-scale 5 --substeps 3 --impulse-blend 0.6"
    "h5_3x4_b0.6_r2.5mm|0.0025|--kernel-scale 5 --substeps 3 --impulse-blend 0.6"
    "h4.7_3x4_b0.6|0.005|--kernel-scale 4.7 --substeps 3 --impulse-blend 0.6"
    "h4.5_3x4_b0.6|0.005|--kernel-scale 4.5 --substeps 3 --impulse-blend 0.6"
    "h4.5_3x4_b0.6_r2.5mm|0.0025|--kernel-scale 4.5 --substeps 3 --impulse-blend 0.6"
    "h5_4x3_b0.6|0.005|--kernel-scale 5 --iterations 3 --impulse-blend 0.6"
    "h4.7_4x3_b0.6|0.005|--kernel-scale 4.7 --iterations 3 --impulse-blend 0.6"
    "h4.7_4x3_b0.6_r2.5mm|0.0025|--kernel-scale 4.7 --iterations 3 --impulse-blend 0.6"
    "h4.7_4x3_b0.6_r10mm|0.01|--kernel-scale 4.7 --iterations 3 --impulse-blend 0.6"
    "h4.5_4x3_b0.6|0.005|--kernel-scale 4.5 --iterations 3 --impulse-blend 0.6"
    "h4.5_4x3_b0.6_clearance1|0.005|--kernel-scale 4.5 --iterations 3 --impulse-blend 0.6 --clearance 1"
    "h4.5_4x3_b0.6_clearance0.3|0.005|--kernel-scale 4.5 --iterations 3 --impulse-blend 0.6 --clearance 0.3"
    "h4.5_4x4_b0.6|0.005|--kernel-scale 4.5 --impulse-blend 0.6"
    "h4_4x4_b0.6|0.005|--kernel-scale 4 --impulse-blend 0.6"
    "h4.7_4x3_b0.6_pairs_k0.2_reach0.7|0.005|--kernel-scale 4.7 --iterations 3 --impulse-blend 0.6 --scorr-deficit 0 --scorr-k 0.2 --scorr-reach 0.7"
    "h4.7_4x3_b0.6_pairs_k0.2_reach0.7_r2.5mm|0.0025|--kernel-scale 4.7 --iterations 3 --impulse-blend 0.6 --scorr-deficit 0 --scorr-k 0.2 --scorr-reach 0.7"
    "h5_4x3_b0.6_pairs_k0.1_reach0.8|0.005|--kernel-scale 5 --iterations 3 --impulse-blend 0.6 --scorr-deficit 0 --scorr-k 0.1 --scorr-reach 0.8"
)
for row in "${rows[@]}"; do
    IFS='|' read -r name radius args <<<"$row"
    # shellcheck disable=SC2086
    "$FLOWS" wave --radius "$radius" --periods 5 --threads 1 $BASE $args >"$OUT/${name}_wave.txt"
    rest="-"
    sinks="-"
    if [ "$radius" = 0.005 ]; then
        # shellcheck disable=SC2086
        "$FLOWS" wave --radius "$radius" --periods 12 --amplitude 0.000001 --threads 1 $BASE $args \
            >"$OUT/${name}_rest.txt"
        rest=$(grep -o 'kinetic energy [0-9.e+-]*' "$OUT/${name}_rest.txt" | head -n 1 | cut -d' ' -f3)
        sinks=$(grep -o 'centre of mass [0-9.+-]* mm' "$OUT/${name}_rest.txt" | head -n 1 | cut -d' ' -f4)
    fi
    kept=$(grep -o 'fit over[^;]*' "$OUT/${name}_wave.txt" | sed "s/.*) //")
    geo=$(grep -o 'geometric mean) [0-9.]*' "$OUT/${name}_wave.txt" | cut -d' ' -f3)
    period=$(grep -o '([-+][0-9.]* %)' "$OUT/${name}_wave.txt" | head -n 1)
    printf '%-34s kept %s (geometric mean %s)  period %-10s at rest %s J/kg, centre of mass %s mm\n' \
        "$name" "$kept" "$geo" "$period" "$rest" "$sinks"
done

SHAPE="$BUILD/bench/pbf_shape"
SET="fluid.kernel=wendland solver.vorticity=0 solver.scorr.k=0.03 solver.step_weights=chebyshev"
SET="$SET domain.clearance=0.1 solver.threads=1"
P45="fluid.kernel_scale=4.5 solver.iterations=3 solver.impulse_blend=0.6"
P47="fluid.kernel_scale=4.7 solver.iterations=3 solver.impulse_blend=0.6"
pairs=(
    "defaults|solver.threads=1"
    "h5_4x4|$SET fluid.kernel_scale=5"
    "h4.7_4x3_b0.6|$SET $P47"
    "h4.7_4x3_b0.6_everywhere|$SET $P47 solver.scorr.deficit=0"
    "h4.7_4x3_b0.6_pairs_k0.2_reach0.7|$SET $P47 solver.scorr.deficit=0 solver.scorr.k=0.2 solver.scorr.reach=0.7"
    "h4.7_4x3_b0.6_pairs_k0.03_reach0.8|$SET $P47 solver.scorr.deficit=0 solver.scorr.reach=0.8"
    "h4.5_4x3_b0.6_pairs_k0.1_reach0.8|$SET $P45 solver.scorr.deficit=0 solver.scorr.k=0.1 solver.scorr.reach=0.8"
)
for row in "${pairs[@]}"; do
    IFS='|' read -r name args <<<"$row"
    # shellcheck disable=SC2086
    "$SHAPE" scenes/dam_break.json 30,60 $args >"$OUT/${name}_pairs.txt" 2>&1
    printf '%-34s dam break at 0.5 s / 1 s: %s\n' "$name" "$(grep -o 'nearest neighbour mean [0-9.]* s, min.*below 0.7 s' \
        "$OUT/${name}_pairs.txt" | grep -v '^nearest neighbour mean 1.000 s, min 1.000 s' |
        sed 's/nearest neighbour //' | paste -sd '/' -)"
done
