#!/usr/bin/env bash
# `pbf run/bench/haptic --backend cuda` and the scene's solver.backend (docs/cuda.md).
# Usage: test_cuda_cli.sh PBF_BINARY SOURCE_DIR CASE
#
# Where a GPU is usable (nvidia-smi lists one and the backend is built) the runs must succeed.
# Everywhere else they must fail at once, exit 1, write no frame, and say why and what to use
# instead ("--backend cpu"): either "backend 'cuda' cannot run here: no usable CUDA device ..."
# (backend built, no device) or "not available in this build" (backend not built).
set -u

PBF=${1:?usage: test_cuda_cli.sh PBF_BINARY SOURCE_DIR CASE}
SRC=${2:?source dir}
CASE=${3:?case}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_cuda_cli_${CASE}_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
SMALL=(--set fluid.particle_radius=0.02 --set time.substeps=1)

fail() { echo "FAIL [$CASE]: $*" >&2; exit 1; }

gpu_listed() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; }

# expect_cuda_outcome CMD...: runs CMD; checks success on a GPU machine, the clear failure
# elsewhere.
expect_cuda_outcome() {
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    if [ "$rc" -eq 0 ]; then
        gpu_listed || { cat "$TMP/out" "$TMP/err" >&2; fail "'$*' succeeded without a GPU"; }
        echo "ran on the GPU"
        return 0
    fi
    if gpu_listed && ! grep -q "not available in this build" "$TMP/err"; then
        cat "$TMP/out" "$TMP/err" >&2
        fail "'$*' exited $rc on a machine with a GPU"
    fi
    [ "$rc" -eq 1 ] || { cat "$TMP/err" >&2; fail "'$*' exited $rc, expected 1"; }
    grep -qE "backend 'cuda' cannot run here: no usable CUDA device|no usable CUDA device|not available in this build" "$TMP/err" \
        || { cat "$TMP/err" >&2; fail "no clear reason in the message"; }
    [ "$(wc -l <"$TMP/err")" -le 3 ] || { cat "$TMP/err" >&2; fail "more than a short message"; }
    echo "failed as expected: $(head -1 "$TMP/err")"
    return 1
}

case_run_backend() {
    if expect_cuda_outcome "$PBF" run --backend cuda --frames 2 --out "$TMP/o" --quiet "${SMALL[@]}"; then
        [ "$(ls "$TMP/o"/frame_*.ply | wc -l)" -eq 3 ] || fail "expected 3 frames"
    else
        grep -q -- "--backend cpu" "$TMP/err" || grep -q "not available in this build" "$TMP/err" \
            || fail "the message does not say what to use instead"
        [ ! -e "$TMP/o/frame_00000.ply" ] || fail "a frame was written before the failure"
    fi
}

case_scene_backend() {
    # the scene key, through --set and through a scene file
    expect_cuda_outcome "$PBF" run --set 'solver.backend="cuda"' --frames 1 --out "$TMP/o" --quiet "${SMALL[@]}"
    sed 's/"solver": {/"solver": {"backend": "cuda", /' "$SRC/scenes/dam_break.json" >"$TMP/s.json"
    grep -q '"backend": "cuda"' "$TMP/s.json" || fail "could not write the scene"
    expect_cuda_outcome "$PBF" run "$TMP/s.json" --frames 1 --out "$TMP/o2" --quiet "${SMALL[@]}"
    # --backend cpu overrides the scene's cuda
    "$PBF" run "$TMP/s.json" --backend cpu --frames 1 --out "$TMP/o3" --quiet "${SMALL[@]}" \
        || fail "--backend cpu did not override the scene's backend"
}

case_bench_backend() {
    if expect_cuda_outcome "$PBF" bench --backend cuda --particles 800,1500 --steps 2 --warmup 1; then
        grep -q '^device: ' "$TMP/out" || fail "no device line"
        grep -q 'ms_median' "$TMP/out" || fail "no table"
    else
        grep -q "ms_median" "$TMP/out" && fail "a table was printed without a device"
    fi
    "$PBF" bench --backend cpu --particles 800 --steps 1 --warmup 0 >"$TMP/out" 2>"$TMP/err" \
        || fail "bench --backend cpu failed: $(cat "$TMP/err")"
    grep -q '^device: CPU' "$TMP/out" || fail "no CPU device line"
}

case_haptic_backend() {
    # the tool's real-time loop on the GPU: 20 steps of 1 ms, the force every step
    if expect_cuda_outcome "$PBF" haptic "$SRC/scenes/tool_sphere.json" --backend cuda \
        --duration 0.02 --out "$TMP/h.csv" --quiet --set fluid.particle_radius=0.02; then
        [ "$(wc -l <"$TMP/h.csv")" -eq 21 ] || fail "expected a header and 20 rows"
    else
        [ ! -s "$TMP/h.csv" ] || fail "rows were written without a device"
    fi
    "$PBF" haptic "$SRC/scenes/tool_sphere.json" --backend gpu >"$TMP/out" 2>"$TMP/err"
    [ $? -eq 2 ] || fail "haptic --backend gpu: expected a usage error (2)"
    grep -q "expects cpu or cuda" "$TMP/err" || fail "haptic usage message"
}

case_backend_usage() {
    "$PBF" run --backend gpu >"$TMP/out" 2>"$TMP/err"
    [ $? -eq 2 ] || fail "run --backend gpu: expected a usage error (2)"
    grep -q "expects cpu or cuda" "$TMP/err" || fail "usage message"
    "$PBF" bench --backend opencl >"$TMP/out" 2>"$TMP/err"
    [ $? -eq 2 ] || fail "bench --backend opencl: expected a usage error (2)"
    "$PBF" run --help | grep -q -- "--backend" || fail "run --help does not list --backend"
    "$PBF" bench --help | grep -q -- "--backend" || fail "bench --help does not list --backend"
}

declare -F "case_$CASE" >/dev/null || fail "no such case"
"case_$CASE"
echo "ok [$CASE]"
