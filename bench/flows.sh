#!/usr/bin/env bash
# The table of docs/physics.md "What dissipates energy": the standing wave at two particle
# sizes, 4 iterations and converged (0.1 %), artificial terms on and off; then the joined
# vessels at both sizes. Each run's full output goes to OUT/<name>.txt.
# Usage: bash bench/flows.sh [BUILD_DIR] [OUT]   (about an hour on 2 cores)
set -euo pipefail
BUILD=${1:-build}
OUT=${2:-out/flows}
FLOWS="$BUILD/bench/pbf_flows"
[ -x "$FLOWS" ] || { echo "bench/flows.sh: build $FLOWS first (cmake --build $BUILD)" >&2; exit 1; }
mkdir -p "$OUT"
for r in 0.005 0.0025; do
    for solve in "--iterations 4" "--target-error 0.1"; do
        for art in on off; do
            name="wave_r${r}_$(echo "$solve" | tr -d ' -')_${art}"
            "$FLOWS" wave --radius "$r" --periods 5 $solve --artificial "$art" >"$OUT/$name.txt"
            printf '%-44s %s | %s\n' "$name" "$(sed -n 2p "$OUT/$name.txt")" \
                "$(sed -n 4p "$OUT/$name.txt")"
        done
    done
    for solve in "--iterations 4" "--target-error 0.1"; do
        name="vessels_r${r}_$(echo "$solve" | tr -d ' -')"
        "$FLOWS" vessels --radius "$r" --seconds 3 $solve >"$OUT/$name.txt"
        printf '%-44s %s\n' "$name" "$(tail -1 "$OUT/$name.txt")"
    done
done
