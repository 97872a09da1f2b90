#!/usr/bin/env bash
# The Wendland C2 rows of docs/notes/physics_log.md, "The walls' collision projection": the consistent
# kernel pair (world def kernel PBF_KERNEL_WENDLAND) in the standing wave, the same tank at rest
# and the joined vessels, all with h = 5r, plain Jacobi iterations and the artificial terms off,
# with the domain walls' collision distance r (clearance 1, the default) and 0.1 r. Each run's
# full output goes to OUT/<name>.txt, and its summary lines to the console. The paper pair's
# rows are bench/flows.sh's (with --kernel-scale 4).
# Usage: bash bench/kernel_pairs.sh [BUILD] [OUT]   (about 11 min on 2 cores; the 2.5 mm waves
#        take most of it)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${2:-out/kernel_pairs}
cmake --build "$BUILD" -j"$(nproc)" --target pbf_flows >/dev/null
FLOWS="$BUILD/bench/pbf_flows"
mkdir -p "$OUT"
COMMON="--kernel wendland --artificial off --kernel-scale 5 --chebyshev off"
run() { # name, then pbf_flows's arguments
    local name=$1
    shift
    "$FLOWS" "$@" >"$OUT/$name.txt"
    printf '%s\n' "== $name: $*"
    case $name in
    rest*) grep -E '^end:' "$OUT/$name.txt" ;;
    *) grep -E '^(particles|period|kept|end:|first swing|mean over)' "$OUT/$name.txt" ;;
    esac | sed 's/^/   /'
}
FLAT="--periods 2 --amplitude 0.000001"
for c in 1 0.1; do # the domain walls' collision distance (docs/physics.md)
    run "wave_r5_s4_c$c" wave --radius 0.005 --substeps 4 --target-error 0.1 --periods 5 \
        --clearance $c $COMMON
    run "rest_r5_s4_c$c" wave --radius 0.005 --substeps 4 --target-error 0.1 $FLAT \
        --clearance $c $COMMON
    run "wave_r5_s16_c$c" wave --radius 0.005 --substeps 16 --target-error 0.02 --periods 5 \
        --clearance $c $COMMON
    run "rest_r5_s16_c$c" wave --radius 0.005 --substeps 16 --target-error 0.02 $FLAT \
        --clearance $c $COMMON
    run "vessels_r5_c$c" vessels --radius 0.005 --seconds 3 --target-error 0.1 --clearance $c \
        $COMMON
    run "wave_r2.5_s8_c$c" wave --radius 0.0025 --substeps 8 --target-error 0.1 --periods 5 \
        --clearance $c $COMMON
done
