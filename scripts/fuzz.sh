#!/usr/bin/env bash
# Fuzzes the scene loader and the mesh loaders with libFuzzer (docs/robustness.md): builds build-fuzz/ with
# clang, ASan and UBSan, replays the saved corpus and the shipped scenes, then fuzzes for a
# bounded time. A crash fails with the input saved in build-fuzz/tests/fuzz/artifacts/.
# Usage: bash scripts/fuzz.sh [SECONDS]     (default 20; scripts/test.sh runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
# Ninja for a new folder where it is installed (scripts/generator.sh, as scripts/test.sh).
cmake -S . -B build-fuzz $(bash scripts/generator.sh build-fuzz) -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPBF_FUZZ=ON -DPBF_SANITIZE=ON -DPBF_BUILD_TESTS=OFF -DPBF_RENDER=OFF -DPBF_CUDA=OFF -DPBF_VDB=OFF \
    -DPBF_FUZZ_SECONDS="$seconds" >/dev/null
targets=(fuzz_scene)
targets_known=$(cmake --build build-fuzz --target help) # not piped into grep -q: pipefail
# make lists "... fuzz_mesh", Ninja "fuzz_mesh: phony"
if grep -qxE '(\.\.\. fuzz_mesh|fuzz_mesh: phony)' <<<"$targets_known"; then
  targets+=(fuzz_mesh) # the mesh loaders, where Assimp is there
fi
cmake --build build-fuzz --target "${targets[@]}" -j"$(nproc)"
# a leak inside Assimp on a broken STL file is not ours (tests/lsan.supp)
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}"
# one test per core: the scene and mesh fuzzers (one process each, their own work folders) run
# their SECONDS side by side
ctest --test-dir build-fuzz -L fuzz --output-on-failure -j"$(nproc)"
