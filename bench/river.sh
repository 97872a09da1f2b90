#!/usr/bin/env bash
# Mass balance of scenes/river.json (docs/scenes.md, "flow"): a channel with an inflow (a
# rectangular emitter), an outflow (a sink past the x_max wall) and a pier (a box collider).
# Runs the scene without particle files, then reads stats.csv: over the last second, the mass
# that came in (emitted) and went out (removed), each the difference of two rows times the
# particle mass, and their relative difference; also the same for every earlier second, to show
# when the flow became steady. Takes about 10 minutes on 2 busy cores (8 s of simulated time,
# 7,500 particles once steady).
#
# usage: bench/river.sh [BUILD_DIR] [OUT_DIR]     (defaults: build, out/bench/river)
# environment: ARGS  more options for pbf run, e.g. "--frames 600"   []
# Exits 1 when the last second's in and out differ by more than 2 %.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-out/bench/river}
# shellcheck disable=SC2086
"$build/pbf" run scenes/river.json --out "$out" --format none -q ${ARGS:-}
mass=$("$build/pbf" info scenes/river.json | awk '/^particle mass/ {print $3}')
awk -F, -v m="$mass" '
    NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
    { t[NR] = $col["time"]; e[NR] = $col["emitted"]; r[NR] = $col["removed"]; n[NR] = $col["particles"]; last = NR }
    END {
        fps = 1.0 / (t[3] - t[2])
        step = int(fps + 0.5)
        printf "second      particles  in (kg/s)  out (kg/s)  out/in - 1\n"
        for (k = last; k - step >= 2; k -= step) rows[++c] = k
        for (j = c; j >= 1; --j) {
            k = rows[j]; a = k - step
            din = (e[k] - e[a]) * m; dout = (r[k] - r[a]) * m
            printf "%4.1f-%4.1f  %9d  %9.4f  %10.4f  %+9.2f %%\n", t[a], t[k], n[k], din, dout, (din > 0 ? 100 * (dout / din - 1) : 0)
        }
        k = last; a = k - step
        din = (e[k] - e[a]) * m; dout = (r[k] - r[a]) * m
        ratio = dout / din - 1
        printf "last second: in %.4f kg, out %.4f kg, out/in - 1 = %+.2f %%\n", din, dout, 100 * ratio
        exit (ratio < -0.02 || ratio > 0.02) ? 1 : 0
    }' "$out/stats.csv"
