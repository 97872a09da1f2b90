#!/usr/bin/env bash
# The CUDA backend on a GPU machine, in one call (docs/cuda.md, docs/performance.md). Every
# stage runs under a time limit and the script goes on past a failing one, so that one call
# on a lent machine brings back everything it can; the exit status says whether all passed.
#   build      the project with the backend (build-gpu/, Release, -DPBF_CUDA=ON), unless
#              PBF_PREBUILT=1 (built elsewhere by bench/gpu_prepare.sh and carried here)
#   test       test_cuda (CPU/CUDA parity, determinism, error control, watchdog: a skip is a
#              failure here), test_cuda_api, test_surface_gpu (the ellipsoids on the GPU); a
#              short `pbf run --backend cuda`
#   bench      `pbf bench --backend cuda` from 10k to 10M particles (4 iterations, 1 substep,
#              the dam break resized), stages timed with CUDA events; variants (threads per
#              particle, no stage events, the other grid sort and neighbour scheme); the device
#              memory the 10M run held; the device's copy bandwidth; the CPU for scale
#   tool       `pbf bench --tool` on the GPU and the CPU (10k-80k particles, steps of 1 ms) and
#              `pbf haptic --backend cuda` at 82k particles for HAPTIC_S (60) seconds
#   render     test_render_cuda (CUDA-OpenGL interop against the host path), `pbf bench
#              --render` of 1M particles at 1280x720 from a CUDA and a CPU world, and `pbf view
#              --offscreen` of the double dam break on the GPU (fps drawn, simulation speed),
#              with a renderer build (RENDER_BUILD_DIR, default build-gpu-render) where present
#   validate   `pbf validate lobovsky` with the world on the GPU (coarse and fine) and on the
#              CPU (coarse), with the data of PBF_VALIDATION_DATA (default ../shared/validation)
#   profile    Nsight Compute on one step of 1M and of 10k particles: time, DRAM and L2 bytes
#              and throughput of each kernel (where ncu is installed)
#   sanitize   compute-sanitizer's memcheck (with leak check), racecheck, initcheck and
#              synccheck on test_cuda and on a 100-step dam break (where it is installed)
#   matrix     `pbf features` with each CUDA cell's parity test of test_cuda as it ran here
#              ($out/matrix.md): a passed test makes its `unverified` cell ready for `yes`
#   table      one markdown table (ready for docs/performance.md) with the device name, and
#              the bars of an H100: 10k particles <= 0.25 ms per step, 1M <= 5 ms
#
# Usage: bash bench/gpu.sh [OUT_DIR]        (default out/gpu; logs, CSV files, table.md; all of it
#                                            also in OUT_DIR.tgz)
# Environment: STAGES (default "build test matrix bench tool render validate profile sanitize"),
#              SMALL (default 10000, timed over STEPS_SMALL = 100 steps), PARTICLES
#              (100000,1000000,4000000) and LARGE (10000000, run apart) over STEPS (10),
#              WARMUP (3),
#              JOBS (build jobs, default nproc), BUILD_DIR (build-gpu), BENCH_ARGS,
#              SAN_TOOLS (default "memcheck racecheck initcheck synccheck"), SAN_TEST (1).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${1:-out/gpu}
build=${BUILD_DIR:-build-gpu}
stages=${STAGES:-build test matrix bench tool render validate profile sanitize}
small=${SMALL:-10000}
particles=${PARTICLES:-100000,1000000,4000000}
large=${LARGE:-10000000}
steps_small=${STEPS_SMALL:-100}
steps=${STEPS:-10}
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

# bench_cuda NAME LIMIT_S SIZES STEPS MODE LABEL [VAR=VALUE...]: `pbf bench --backend cuda` with
# the variables set, into $out/NAME.csv; its rows go into the table under LABEL.
bench_csvs=()
bench_cuda() {
    local name=$1 limit=$2 sizes=$3 n=$4 mode=$5 label=$6
    shift 6
    # shellcheck disable=SC2086
    run "$name" "$limit" env "$@" "$pbf" bench --backend cuda --particles "$sizes" --steps "$n" \
        --warmup "$warmup" --neighbor-mode "$mode" --csv "$out/$name.csv" ${BENCH_ARGS:-}
    bench_csvs+=("$label|$out/$name.csv")
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
    # the particles' anisotropy (the fluid look's ellipsoids) on the GPU against the CPU's
    TAIL=20 run test_surface_gpu 120 "$build/tests/test_surface_gpu"
    run run_dam_break 120 "$pbf" run scenes/dam_break.json --backend cuda --frames 30 \
        --out "$out/run_dam_break" --format none
fi

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
    # default settings: the smallest size over 100 steps, the others over 10 (3 + 10 steps of
    # 1/60 s is where bench/scaling.sh times the CPU: with one substep the dam break breaks the
    # watchdog's CFL bound after 33 steps at 100k particles and 14 at 10M, as it gathers speed)
    TAIL=6 bench_cuda small 120 "$small" "$steps_small" list "counting, list, default"
    TAIL=6 bench_cuda large 240 "$particles" "$steps" list "counting, list, default"
    # the largest size apart: a failure there (device memory) keeps the rows above
    TAIL=4 bench_cuda huge 300 "$large" "$steps" list "counting, list, default"
    # variants: threads per particle, stage events, the other sort and neighbour scheme
    TAIL=4 bench_cuda tpp1 240 10000,100000,1000000,4000000 "$steps" list \
        "counting, list, 1 thread/particle" PBF_CUDA_THREADS_PER_PARTICLE=1
    TAIL=4 bench_cuda tpp4 240 1000000,4000000 "$steps" list \
        "counting, list, 4 threads/particle" PBF_CUDA_THREADS_PER_PARTICLE=4
    TAIL=4 bench_cuda no_events 120 10000,100000,1000000 "$steps" list \
        "counting, list, no stage events" PBF_CUDA_STAGE_EVENTS=0
    TAIL=4 bench_cuda radix_list 120 10000,1000000 "$steps" list "radix, list" PBF_CUDA_SORT=radix
    TAIL=4 bench_cuda counting_cells 120 10000,1000000 "$steps" cells "counting, cells"
    TAIL=4 bench_cuda radix_cells 120 10000,1000000 "$steps" cells "radix, cells" \
        PBF_CUDA_SORT=radix
    kill "$sampler" 2>/dev/null
    # the CPU on the same machine, for scale (all cores)
    # shellcheck disable=SC2086
    run bench_cpu 180 "$pbf" bench --backend cpu --particles "${CPU_PARTICLES:-100000,1000000}" \
        --steps 5 --warmup 1 --csv "$out/bench_cpu.csv" ${BENCH_ARGS:-}
fi

if has_stage tool; then
    echo "== the tool: pbf bench --tool (steps of 1 ms), pbf haptic at 1 kHz"
    TAIL=8 run tool_bench_cuda 180 "$pbf" bench --tool --backend cuda \
        --particles "${TOOL_PARTICLES:-10000,20000,40000,80000}" --csv "$out/tool_cuda.csv"
    TAIL=8 run tool_bench_cpu 180 "$pbf" bench --tool --backend cpu \
        --particles "${TOOL_PARTICLES:-10000,20000,40000,80000}" --csv "$out/tool_cpu.csv"
    # 82,026 particles (r = 4.76 mm in the tank of scenes/tool_sphere.json; the bar is 80k),
    # HAPTIC_S seconds; HAPTIC_RADIUS another radius (6 mm: 41,250 particles)
    TAIL=6 run haptic_cuda $((${HAPTIC_S:-60} + 60)) "$pbf" haptic scenes/tool_sphere.json \
        --backend cuda --set fluid.particle_radius="${HAPTIC_RADIUS:-0.00476}" \
        --duration "${HAPTIC_S:-60}" \
        --out "$out/haptic_cuda.csv"
    gzip -f "$out/haptic_cuda.csv" 2>/dev/null
fi

if has_stage render; then
    # the renderer (EGL) drawing a CUDA world from device memory through CUDA-OpenGL interop
    # (docs/cuda.md, "Drawing from device memory"): test_render_cuda (interop against the host
    # path, image by image), pbf bench --render from a CUDA and a CPU world, and the viewer's
    # loop off screen on the double dam break (127k particles; the bar: >= 60 fps drawn while
    # the simulation keeps real time); a build with the renderer (RENDER_BUILD_DIR, default
    # build-gpu-render) and a working EGL on the NVIDIA driver are needed
    rdir=${RENDER_BUILD_DIR:-build-gpu-render}
    rpbf=$rdir/pbf
    if [ -x "$rpbf" ]; then
        rtest=$(find "$rdir" -name test_render_cuda -type f | head -1)
        if [ -n "$rtest" ]; then
            TAIL=12 run render_interop_test 120 "$rtest"
        else
            echo "== render: no test_render_cuda in $rdir, skipped"
        fi
        echo "== render: pbf bench --render at 1280x720"
        for backend in cuda cpu; do
            TAIL=6 run "render_$backend" 180 "$rpbf" bench --backend "$backend" --render \
                --resolution 1280x720 --particles "${RENDER_PARTICLES:-1000000}" --steps 3 \
                --warmup 1 --csv "$out/render_$backend.csv"
        done
        echo "== render: pbf view --offscreen, double dam break on the GPU"
        for look in "fluid" "spheres --color speed"; do
            # shellcheck disable=SC2086
            TAIL=6 run "view_${look%% *}" 120 "$rpbf" view scenes/double_dam_break.json \
                --offscreen --frames "${VIEW_FRAMES:-600}" --resolution 1280x720 \
                --look $look --set 'solver.backend="cuda"'
        done
    else
        echo "== render: no $rpbf, skipped"
    fi
fi

if has_stage validate; then
    # `pbf validate` with the world on the GPU and on the CPU: the coarse and fine Lobovský runs
    # (its force probes on the device).
    # The measured data: PBF_VALIDATION_DATA, else ../shared/validation (carry a copy in the
    # repository to a machine that has no ../shared).
    data=${PBF_VALIDATION_DATA:-../shared/validation}
    if [ -d "$data" ]; then
        echo "== validate: lobovsky, coarse and fine, on the GPU and the CPU"
        for backend in cuda cpu; do
            for res in coarse fine; do
                flag=; [ "$res" = fine ] && flag=--fine
                [ "$backend/$res" = cpu/fine ] && continue # minutes on the CPU: see validation.md
                TAIL=12 run "validate_${backend}_$res" 600 \
                    "$pbf" validate lobovsky $flag --data "$data" --out "$out/validate-$backend" \
                    --quiet --set "solver.backend=\"$backend\""
            done
        done
    else
        echo "== validate: no data in $data, skipped"
    fi
fi

if has_stage profile; then
    if command -v ncu >/dev/null 2>&1; then
        echo "== profile (Nsight Compute, one step of 1M and of 10k particles after the warm-up)"
        # A step at 4 iterations, 1 substep, list mode launches 27 of pbf's kernels (k_*, CUB's
        # apart): skip the 3 warm-up steps' and profile one step's.
        metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
        metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed
        metrics+=,sm__throughput.avg.pct_of_peak_sustained_elapsed
        metrics+=,lts__t_bytes.sum,l1tex__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active
        metrics+=,launch__registers_per_thread,smsp__inst_executed.sum
        for n in 1000000 10000; do
            TAIL=3 run "ncu_$n" 240 ncu --clock-control none --csv --metrics "$metrics" \
                -k regex:k_ --launch-skip 81 --launch-count 27 \
                "$pbf" bench --backend cuda --particles "$n" --steps 2 --warmup 3
        done
    else
        echo "== profile: ncu not installed, skipped"
    fi
fi

if has_stage sanitize; then
    if command -v compute-sanitizer >/dev/null 2>&1; then
        echo "== compute-sanitizer"
        # each tool of SAN_TOOLS on the parity tests (PBF_TEST_FILTER=NAME: one of them;
        # SAN_TEST=0: none), then on a 100-step dam break (25k particles)
        for tool in ${SAN_TOOLS:-memcheck racecheck initcheck synccheck}; do
            [ "${SAN_TEST:-1}" = 1 ] || break
            leak=()
            [ "$tool" = memcheck ] && leak=(--leak-check full)
            TAIL=8 run "${tool}_test_cuda" 300 compute-sanitizer --error-exitcode 3 \
                --tool "$tool" "${leak[@]}" "$build/tests/test_cuda"
        done
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
        echo "1 substep, dt 1/60 s, median of $steps_small steps ($small particles, default"
        echo "settings) or $steps steps (the rest) after $warmup warm-up; stages timed with CUDA"
        echo "events."
        echo
        echo "| backend | variant | particles | ms/step | predict | grid | neighbors | lambda | delta | velocity | vorticity | particle-steps/s |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
        table_rows() { # CSV, backend, variant
            [ -s "$1" ] || return 0
            awk -F, -v b="$2" -v s="$3" '
                NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
                { printf "| %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3g |\n",
                    b, s, $col["particles"], $col["ms_median"], $col["ms_predict"], $col["ms_grid"],
                    $col["ms_neighbors"], $col["ms_lambda"], $col["ms_delta"], $col["ms_velocity"],
                    $col["ms_vorticity"], $col["particle_steps_per_s"] }' "$1"
        }
        for r in "${bench_csvs[@]}"; do
            table_rows "${r#*|}" cuda "${r%%|*}"
        done
        table_rows "$out/bench_cpu.csv" cpu "list, all cores"
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
            csv=${r#*|}
            [ -s "$csv" ] || continue
            awk -F, -v n="$count" -v label="${r%%|*}" '
                NR == 1 { for (i = 1; i <= NF; ++i) col[$i] = i; next }
                { d = $col["particles"] - n; if (d < 0) d = -d
                  if (d <= n / 20) printf "%s|%s\n", $col["ms_median"], label }' "$csv"
        done | sort -g | head -1)
        ms=${best%%|*}
        if [ -z "$best" ]; then
            echo "  ~$count particles: not measured"
        elif awk -v a="$ms" -v b="$limit" 'BEGIN { exit !(a <= b) }'; then
            echo "  ~$count particles: $ms ms per step <= $limit ms: met (${best#*|})"
        else
            echo "  ~$count particles: $ms ms per step > $limit ms: NOT met (${best#*|})"
        fi
    done
fi

# The table of what runs where (`pbf features`) with each CUDA cell's parity test as it ran on
# this device: a cell whose test passed here is ready to become `yes` in src/core/caps.c.
if has_stage matrix; then
    echo "== matrix"
    [ -s "$out/test_cuda.log" ] || TAIL=0 run test_cuda 300 "$build/tests/test_cuda"
    # feature:test of tests/test_cuda.c that compares it with the CPU
    cells="fluid:one_step_matches_cpu error_control:error_control_iterations_match_cpu
           tool:tool_matches_cpu probes:probes_match_cpu force_probes:probes_match_cpu
           wall_friction:friction_matches_cpu adhesion:adhesion_matches_cpu
           surface_drag:surface_drag_matches_cpu several_fluids:phases_match_cpu
           surface_tension:tension_matches_cpu wendland_kernel:wendland_matches_cpu
           emitters:emitters_match_cpu sinks:sinks_match_cpu meshes:meshes_match_cpu
           floating_bodies:bodies_match_cpu viscosity:viscosity_matches_cpu
           diffuse:diffuse_matches_cpu energy_audit:energy_audit_matches_cpu"
    "$pbf" features >"$out/features.csv" 2>&1
    {
        echo "| feature | cuda in the table | parity test on $device |"
        echo "|---|---|---|"
        tail -n +2 "$out/features.csv" | while IFS=, read -r feature _cpu cuda _mpi; do
            test=""
            for c in $cells; do [ "${c%%:*}" = "$feature" ] && test=${c#*:}; done
            if [ -z "$test" ]; then
                verdict="no test"
            elif grep -qE "^$test +ok$" "$out/test_cuda.log"; then
                verdict="$test: passed"
            elif grep -qE "^$test +FAILED$" "$out/test_cuda.log"; then
                verdict="$test: FAILED"
            else
                verdict="$test: not run"
            fi
            echo "| $feature | ${cuda%%:*} | $verdict |"
        done
    } | tee "$out/matrix.md"
fi

echo "== summary (device: $device)"
printf '  %s\n' "${summary[@]}"
# everything in one archive beside the folder, for a machine that sends back only a few files
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")" 2>/dev/null &&
    echo "  (all of $out in $out.tgz)"
exit $failed
