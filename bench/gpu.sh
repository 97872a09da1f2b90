#!/usr/bin/env bash
# The CUDA backend on a GPU machine, in one call (docs/cuda.md, docs/performance.md). Every
# stage runs under a time limit and the script goes on past a failing one, so that one call
# on a lent machine brings back everything it can; the exit status says whether all passed.
#   build      the project with the backend (build-gpu/, Release, -DPBF_CUDA=ON), unless
#              PBF_PREBUILT=1 (build-gpu/ was built elsewhere and carried here)
#   test       test_cuda (CPU/CUDA parity, determinism, error control, watchdog: a skip is a
#              failure here) and test_cuda_api; a short `pbf run --backend cuda`
#   bench      `pbf bench --backend cuda` from 10k to 10M particles (4 iterations, 1 substep,
#              the dam break resized), stages timed with CUDA events; the other grid sort and
#              neighbour scheme at 10k and 1M; the device memory the 10M run held; the CPU of
#              the same machine for scale
#   profile    Nsight Compute on one 1M-particle step: time, DRAM bytes and throughput of each
#              kernel (where ncu is installed)
#   sanitize   compute-sanitizer memcheck on test_cuda; memcheck, racecheck, initcheck and
#              synccheck on a 100-step dam break (where compute-sanitizer is installed)
#   table      one markdown table (ready for docs/performance.md) with the device name, and
#              the bars of an H100: 10k particles <= 0.25 ms per step, 1M <= 5 ms
#
# Usage: bash bench/gpu.sh [OUT_DIR]        (default out/gpu; logs, CSV files, table.md)
# Environment: STAGES (default "build test bench profile sanitize"), PARTICLES
#              (default 10000,100000,1000000,4000000), LARGE (run apart, default 10000000),
#              STEPS (20), WARMUP (3),
#              JOBS (build jobs, default nproc), BUILD_DIR (build-gpu), BENCH_ARGS,
#              SAN_TOOLS (default "memcheck racecheck initcheck synccheck"), SAN_TEST (1).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/gpu}
build=${BUILD_DIR:-build-gpu}
stages=${STAGES:-build test bench profile sanitize}
particles=${PARTICLES:-10000,100000,1000000,4000000}
large=${LARGE:-10000000}
steps=${STEPS:-20}
warmup=${WARMUP:-3}
jobs=${JOBS:-$(nproc)}
mkdir -p "$out"
export PBF_SOURCE_DIR=$PWD

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "bench/gpu.sh: no NVIDIA GPU here (nvidia-smi lists none); nothing to measure" >&2
    exit 1
fi
device=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)
echo "== device: $device"
has_stage() { [[ " $stages " == *" $1 "* ]]; }

# run NAME LIMIT_S COMMAND...: the command's output goes to $out/NAME.log; its tail is shown.
summary=()
failed=0
run() {
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout -k 5 "$limit" "$@" >"$out/$name.log" 2>&1
    local rc=$?
    tail -n "${TAIL:-12}" "$out/$name.log"
    local verdict="exit $rc"
    [ "$rc" -eq 124 ] && verdict="TIMED OUT after ${limit} s"
    echo "-- $name: $verdict ($((SECONDS - t0)) s)"
    summary+=("$name: $verdict ($((SECONDS - t0)) s)")
    [ "$rc" -ne 0 ] && failed=1
    return "$rc"
}

if has_stage build && [ "${PBF_PREBUILT:-0}" != 1 ]; then
    echo "== build ($build/)"
    run configure 300 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPBF_CUDA=ON
    run build 600 cmake --build "$build" -j"$jobs"
fi
pbf=$build/pbf

if has_stage test; then
    echo "== GPU tests"
    # test_cuda exits 77 (a skip) without a usable device: on this machine that is a failure.
    TAIL=40 run test_cuda 300 "$build/tests/test_cuda"
    run test_cuda_api 60 "$build/tests/test_cuda_api"
    run run_dam_break 120 "$pbf" run scenes/dam_break.json --backend cuda --frames 30 \
        --out "$out/run_dam_break" --format none
fi

bench_csvs=()
if has_stage bench; then
    echo "== benchmark"
    # the device's copy bandwidth (bytes read plus written), the ceiling of memory-bound kernels
    if python3 -c 'import torch' 2>/dev/null; then
        TAIL=1 run copy_bandwidth 60 python3 -c '
import torch
a = torch.rand(1 << 30, device="cuda"); b = torch.empty_like(a)
for _ in range(3): b.copy_(a)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
t = []
for _ in range(20):
    s.record(); b.copy_(a); e.record(); e.synchronize(); t.append(s.elapsed_time(e))
t.sort(); ms = t[len(t) // 2]
print("device-to-device copy of 4 GiB: %.3f ms, %.0f GB/s read + written" % (ms, 2 * a.numel() * 4 / ms / 1e6))'
    fi
    # the device memory in use, sampled while the benchmarks run (the most the 10M run held)
    nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader -lms 100 \
        >"$out/memory.csv" 2>/dev/null &
    sampler=$!
    # shellcheck disable=SC2086
    TAIL=20 run bench_counting_list 300 env PBF_CUDA_SORT=counting "$pbf" bench --backend cuda \
        --particles "$particles" --steps "$steps" --warmup "$warmup" --neighbor-mode list \
        --csv "$out/bench_cuda_counting_list.csv" ${BENCH_ARGS:-}
    bench_csvs+=("counting,list,$out/bench_cuda_counting_list.csv")
    # the largest size apart: a failure there (device memory) keeps the rows above
    # shellcheck disable=SC2086
    TAIL=4 run bench_counting_list_large 300 env PBF_CUDA_SORT=counting "$pbf" bench \
        --backend cuda --particles "$large" --steps "$steps" --warmup "$warmup" \
        --neighbor-mode list --csv "$out/bench_cuda_counting_list_large.csv" ${BENCH_ARGS:-}
    bench_csvs+=("counting,list,$out/bench_cuda_counting_list_large.csv")
    for variant in radix,list counting,cells radix,cells; do
        IFS=, read -r sort mode <<<"$variant"
        # shellcheck disable=SC2086
        run "bench_${sort}_${mode}" 120 env PBF_CUDA_SORT="$sort" "$pbf" bench --backend cuda \
            --particles 10000,1000000 --steps "$steps" --warmup "$warmup" --neighbor-mode "$mode" \
            --csv "$out/bench_cuda_${sort}_${mode}.csv" ${BENCH_ARGS:-}
        bench_csvs+=("$sort,$mode,$out/bench_cuda_${sort}_${mode}.csv")
    done
    kill "$sampler" 2>/dev/null
    # the CPU on the same machine, for scale (all cores)
    # shellcheck disable=SC2086
    run bench_cpu 180 "$pbf" bench --backend cpu --particles "${CPU_PARTICLES:-100000,1000000}" \
        --steps 5 --warmup 1 --csv "$out/bench_cpu.csv" ${BENCH_ARGS:-}
fi

if has_stage profile; then
    if command -v ncu >/dev/null 2>&1; then
        echo "== profile (Nsight Compute, one 1M-particle step after the warm-up)"
        # A step at 4 iterations, 1 substep, list mode launches 27 of pbf's kernels (k_*, CUB's
        # apart): skip the 3 warm-up steps' and profile one step's.
        metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
        metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
        metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed
        metrics+=,lts__t_bytes.sum,l1tex__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active
        metrics+=,launch__registers_per_thread,smsp__inst_executed.sum
        TAIL=5 run ncu 240 ncu --clock-control none --csv --metrics "$metrics" \
            -k regex:k_ --launch-skip 81 --launch-count 27 \
            "$pbf" bench --backend cuda --particles 1000000 --steps 2 --warmup 3
    else
        echo "== profile: ncu not installed, skipped"
    fi
fi

if has_stage sanitize; then
    if command -v compute-sanitizer >/dev/null 2>&1; then
        echo "== compute-sanitizer"
        # memcheck on the parity tests (PBF_TEST_FILTER=NAME: one of them; SAN_TEST=0: none),
        # then each tool of SAN_TOOLS on a 100-step dam break (25k particles)
        if [ "${SAN_TEST:-1}" = 1 ]; then
            TAIL=8 run memcheck_test_cuda 300 compute-sanitizer --error-exitcode 3 \
                --tool memcheck --leak-check full "$build/tests/test_cuda"
        fi
        for tool in ${SAN_TOOLS:-memcheck racecheck initcheck synccheck}; do
            TAIL=6 run "${tool}_dam_break" 180 compute-sanitizer --error-exitcode 3 \
                --tool "$tool" "$pbf" bench --backend cuda --particles 25000 --steps 100 \
                --warmup 0
        done
    else
        echo "== sanitize: compute-sanitizer not installed, skipped"
    fi
fi

cpus="$(nproc) threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
if [ ${#bench_csvs[@]} -gt 0 ]; then
    echo "== table ($out/table.md)"
    {
        echo "Device: **$device**; CPU: $cpus. \`pbf bench\`: dam break resized, 4 iterations,"
        echo "1 substep, dt 1/60 s, median of $steps steps after $warmup warm-up; stages timed"
        echo "with CUDA events."
        echo
        echo "| backend | sort | neighbours | particles | ms/step | predict | grid | neighbors | lambda | delta | velocity | vorticity | particle-steps/s |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        table_rows() { # CSV, backend, sort, mode
            [ -s "$1" ] || return 0
            awk -F, -v b="$2" -v s="$3" -v m="$4" '
                NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
                { printf "| %s | %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3g |\n",
                    b, s, m, $col["particles"], $col["ms_median"], $col["ms_predict"], $col["ms_grid"],
                    $col["ms_neighbors"], $col["ms_lambda"], $col["ms_delta"], $col["ms_velocity"],
                    $col["ms_vorticity"], $col["particle_steps_per_s"] }' "$1"
        }
        for r in "${bench_csvs[@]}"; do
            IFS=, read -r sort mode csv <<<"$r"
            table_rows "$csv" cuda "$sort" "$mode"
        done
        table_rows "$out/bench_cpu.csv" cpu - list
        if [ -s "$out/memory.csv" ]; then
            awk -F', ' '{ v = $2 + 0; if (v > m) m = v } END {
                printf "\nMost device memory in use during the benchmarks (the 10M run): %d MiB\n", m }' \
                "$out/memory.csv"
        fi
    } | tee "$out/table.md"

    # The bars (H100): 10k particles <= 0.25 ms per step, 1M <= 5 ms (the fastest variant).
    echo "== bars"
    for bar in "10000 0.25" "1000000 5"; do
        read -r count limit <<<"$bar"
        best=$(for r in "${bench_csvs[@]}"; do
            IFS=, read -r sort mode csv <<<"$r"
            [ -s "$csv" ] || continue
            awk -F, -v n="$count" 'NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
                { d = $col["particles"] - n; if (d < 0) d = -d; if (d <= n / 20) print $col["ms_median"] }' "$csv"
        done | sort -g | head -1)
        if [ -z "$best" ]; then
            echo "  ~$count particles: not measured"
        elif awk -v a="$best" -v b="$limit" 'BEGIN { exit !(a <= b) }'; then
            echo "  ~$count particles: $best ms per step <= $limit ms: met"
        else
            echo "  ~$count particles: $best ms per step > $limit ms: NOT met"
        fi
    done
fi

echo "== summary (device: $device)"
printf '  %s\n' "${summary[@]}"
exit $failed
