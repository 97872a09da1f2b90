#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer, no recovery
# (docs/robustness.md), in its own build folder build-asan/. scripts/test.sh runs it.
# Usage: bash scripts/sanitize.sh [ctest arguments...]   (default: all but the "slow" tests)
set -euo pipefail
cd "$(dirname "$0")/.."
# OpenVDB stays out of this build: its library is not instrumented, and ASan reports false
# container overflows where instrumented code shares its containers (the release suite tests it).
# The benchmark helpers stay out too: no test runs them (the release build compiles them).
# Ninja for a new folder where it is installed (scripts/generator.sh, as scripts/test.sh).
cmake -S . -B build-asan $(bash scripts/generator.sh build-asan) -DCMAKE_BUILD_TYPE=Release \
    -DPBF_SANITIZE=ON -DPBF_VDB=OFF -DPBF_BENCH=OFF >/dev/null
cmake --build build-asan -j"$(nproc)"
# abort on the first report, with a stack; leaks are reported at exit (LeakSanitizer)
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
# a leak inside Assimp on a broken STL file is not ours (tests/lsan.supp)
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# By default the tests labelled "slow" are left out (tests/CMakeLists.txt): test_scenes runs the
# four shipped scenes at full resolution (50k-127k particles) for physics checks,
# test_convergence runs them error-controlled (its solver path runs here through
# test_determinism), and test_tool_experiment reproduces a paper's experiment; the sanitizers
# make them 2.7x slower
# (minutes each). The code they run (solver, both neighbour modes, colliders, moving walls,
# neighbour-list growth, the tool) runs under the sanitizers through test_solver,
# test_determinism, test_tool, test_checkpoint, test_limits and the command-line tests on
# smaller worlds. `bash scripts/sanitize.sh -R .` runs everything. Every test here sees
# PBF_SANITIZED=1 (tests/CMakeLists.txt): the long physics tests then step their worlds for a
# few frames, with the checks that hold that early, and leave the bounds that need a settled
# state to the release build (tests/test.h, test_sanitized()).
if [ $# -eq 0 ]; then set -- -LE slow; fi
# one test per core at a time, as in scripts/test.sh
ctest --test-dir build-asan --output-on-failure --timeout 900 -j"$(nproc)" "$@"
