#!/usr/bin/env bash
# The CUDA backend on a GPU machine, in one call (docs/cuda.md, docs/performance.md):
#   1. builds the project with the backend (build-gpu/, Release, -DPBF_CUDA=ON);
#   2. runs the GPU tests: test_cuda (CPU/CUDA parity: grid, one step, 50 steps, determinism,
#      watchdog) must PASS here, a skip is a failure; then the backend's API and CLI tests;
#   3. times `pbf bench --backend cuda --particles 10000,100000,1000000,4000000` (4 iterations,
#      1 substep, the dam break resized) with each grid sort (PBF_CUDA_SORT=counting, radix)
#      and both neighbour schemes, stages timed with CUDA events;
#   4. prints one table (markdown, ready for docs/performance.md) with the device name, and
#      checks the targets on an H100: 10k particles <= 0.5 ms per step, 1M <= 10 ms.
#
# Usage: bash bench/gpu.sh [OUT_DIR]        (default out/gpu; CSV files and table.md go there)
# Environment: PARTICLES (default 10000,100000,1000000,4000000), STEPS (20), WARMUP (3),
#              JOBS (build jobs, default nproc), BENCH_ARGS (more pbf bench options).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/gpu}
particles=${PARTICLES:-10000,100000,1000000,4000000}
steps=${STEPS:-20}
warmup=${WARMUP:-3}
jobs=${JOBS:-$(nproc)}
mkdir -p "$out"

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench/gpu.sh: no NVIDIA GPU here (nvidia-smi lists none); nothing to measure" >&2
    exit 1
fi
device=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)
echo "== device: $device"

echo "== build (build-gpu/)"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DPBF_CUDA=ON >/dev/null
cmake --build build-gpu -j"$jobs" 2>&1 | tail -3

echo "== GPU tests"
# test_cuda exits 77 (a skip) without a usable device: on this machine that is a failure.
set +e
(cd build-gpu && ./tests/test_cuda) | tee "$out/test_cuda.log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
    echo "bench/gpu.sh: test_cuda exited $rc (77 = skipped: the GPU is not usable by this build)" >&2
    exit 1
fi
ctest --test-dir build-gpu --output-on-failure -R 'cuda' | tail -15

echo "== benchmark"
pbf=build-gpu/pbf
runs=()
for sort in counting radix; do
    for mode in list cells; do
        csv="$out/bench_cuda_${sort}_${mode}.csv"
        echo "-- PBF_CUDA_SORT=$sort --neighbor-mode $mode"
        # shellcheck disable=SC2086
        PBF_CUDA_SORT=$sort "$pbf" bench --backend cuda --particles "$particles" --steps "$steps" \
            --warmup "$warmup" --neighbor-mode "$mode" --csv "$csv" ${BENCH_ARGS:-} \
            | tee "$out/bench_cuda_${sort}_${mode}.txt"
        runs+=("$sort,$mode,$csv")
    done
done
# the CPU on the same machine, for scale (all cores)
cpu_csv="$out/bench_cpu.csv"
# shellcheck disable=SC2086
"$pbf" bench --backend cpu --particles "${CPU_PARTICLES:-10000,100000,1000000}" --steps 5 --warmup 1 \
    --csv "$cpu_csv" ${BENCH_ARGS:-} | tee "$out/bench_cpu.txt"
cpus="$(nproc) threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"

echo "== table ($out/table.md)"
{
    echo "Device: **$device**; CPU: $cpus. \`pbf bench\`: dam break resized, 4 iterations,"
    echo "1 substep, dt 1/60 s, median of $steps steps after $warmup warm-up; stages timed with"
    echo "CUDA events (they add up to the step, less the read-back of a few bytes per step)."
    echo
    echo "| backend | sort | neighbours | particles | ms/step | predict | grid | neighbors | lambda | delta | velocity | vorticity | particle-steps/s |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    table_rows() { # CSV, backend, sort, mode
        awk -F, -v b="$2" -v s="$3" -v m="$4" '
            NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
            { printf "| %s | %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3g |\n",
                b, s, m, $col["particles"], $col["ms_median"], $col["ms_predict"], $col["ms_grid"],
                $col["ms_neighbors"], $col["ms_lambda"], $col["ms_delta"], $col["ms_velocity"],
                $col["ms_vorticity"], $col["particle_steps_per_s"] }' "$1"
    }
    for r in "${runs[@]}"; do
        IFS=, read -r sort mode csv <<<"$r"
        table_rows "$csv" cuda "$sort" "$mode"
    done
    table_rows "$cpu_csv" cpu - list
} | tee "$out/table.md"

# The targets (H100): 10k particles <= 0.5 ms per step, 1M <= 10 ms (the fastest of the
# four variants).
echo "== bars"
status=0
for bar in "10000 0.5" "1000000 10"; do
    read -r count limit <<<"$bar"
    best=$(for r in "${runs[@]}"; do
        IFS=, read -r sort mode csv <<<"$r"
        awk -F, -v n="$count" 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
            { d = $col["particles"] - n; if (d < 0) d = -d; if (d <= n / 20) print $col["ms_median"] }' "$csv"
    done | sort -g | head -1)
    if [ -z "$best" ]; then
        echo "  ~$count particles: not measured"
    elif awk -v a="$best" -v b="$limit" 'BEGIN { exit !(a <= b) }'; then
        echo "  ~$count particles: $best ms per step <= $limit ms: met"
    else
        echo "  ~$count particles: $best ms per step > $limit ms: NOT met"
        status=1
    fi
done
echo "bench/gpu.sh: results in $out (device: $device)"
exit $status
