#!/usr/bin/env bash
# Strong scaling over MPI ranks on one machine (docs/scaling.md): the dam break resized to each
# particle count, run as one process on 1 thread, one process on 2 threads, and 2 ranks of
# 1 thread (mpirun), FRAMES frames each; the median of stats.csv's ms_per_step over the frames
# after the first (the slowest rank's time under MPI), and the largest halo from the summary.
# Timings need a quiet machine.
#
# usage: bench/mpi_scaling.sh [BUILD_DIR] [OUT_DIR]
# environment: COUNTS (default "200000 1000000"), FRAMES (default 6), RANKS (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-out/bench/mpi_scaling}
counts=${COUNTS:-200000 1000000}
frames=${FRAMES:-6}
ranks=${RANKS:-2}
pbf="$build/pbf"
[ -x "$pbf" ] || { echo "bench/mpi_scaling.sh: build $pbf first" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "bench/mpi_scaling.sh: mpirun not found" >&2; exit 1; }
mpi_flags=(--oversubscribe)
[ "$(id -u)" = 0 ] && mpi_flags+=(--allow-run-as-root)
mkdir -p "$out"

# The dam break holds 49,152 particles at r = 6.25 mm: r for n particles keeps the block's size.
radius_for() { python3 -c "print(0.00625 * (49152 / $1) ** (1 / 3))"; }
median_ms() { # the median ms_per_step of the frames after the first
    python3 - "$1" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("%.1f" % statistics.median(float(r["ms_per_step"]) for r in rows[2:]))
EOF
}

echo "| particles | 1 process, 1 thread | 1 process, 2 threads | $ranks ranks, 1 thread each | speed-up of $ranks ranks | of 2 threads | largest halo |"
echo "|---|---|---|---|---|---|---|"
for n in $counts; do
    r=$(radius_for "$n")
    common=("scenes/dam_break.json" --frames "$frames" --format none --set "fluid.particle_radius=$r")
    "$pbf" run "${common[@]}" --threads 1 --out "$out/n${n}_t1" -q
    "$pbf" run "${common[@]}" --threads 2 --out "$out/n${n}_t2" -q
    mpirun "${mpi_flags[@]}" -np "$ranks" "$pbf" run "${common[@]}" --threads 1 \
        --out "$out/n${n}_np$ranks" >"$out/n${n}_np$ranks.log" 2>&1
    t1=$(median_ms "$out/n${n}_t1/stats.csv")
    t2=$(median_ms "$out/n${n}_t2/stats.csv")
    tm=$(median_ms "$out/n${n}_np$ranks/stats.csv")
    count=$(awk -F, 'NR == 2 { print $3 }' "$out/n${n}_t1/stats.csv")
    halo=$(grep -o "largest halo.*" "$out/n${n}_np$ranks.log" | tail -1 | sed "s/largest halo //")
    printf '| %s | %s ms | %s ms | %s ms | %.2f | %.2f | %s |\n' "$count" "$t1" "$t2" "$tm" \
        "$(python3 -c "print($t1 / $tm)")" "$(python3 -c "print($t1 / $t2)")" "$halo"
done
