#!/usr/bin/env bash
# The whole test suite from a fresh checkout: install dependencies, build, run every test and
# the Python package's; then the same suite under sanitizers and a bounded fuzz run.
# Usage: bash scripts/test.sh            (build folders: build/, build-asan/, build-fuzz/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# The Python module is built here too (PBF_PYTHON, for Debian's interpreter, the one of
# scripts/test_python.sh): its package then installs it instead of compiling the library again.
# A new build folder gets Ninja where it is installed (scripts/generator.sh): it keeps every core
# busy to the end, where make waits for each library to be linked before compiling what uses it.
cmake -S . -B build $(bash scripts/generator.sh build) -DCMAKE_BUILD_TYPE=Release -DPBF_PYTHON=ON \
    -DPython3_EXECUTABLE=/usr/bin/python3
cmake --build build -j"$(nproc)"
# One test per core at a time: most tests run one thread, or wait on a process starting (Blender,
# ParaView, valgrind); tests that need the cores to themselves (the MPI runs) say so with CTest's
# PROCESSORS (tests/CMakeLists.txt). Results do not depend on it: every test's files are its own.
ctest --test-dir build --output-on-failure --timeout 900 -j"$(nproc)"
# The Python package (docs/python.md): pip install into a venv, then its pytest suite.
bash scripts/test_python.sh
# Robustness (docs/robustness.md): the suite again under ASan + UBSan (build-asan/),
# then the scene loader under libFuzzer for 20 s with the saved corpus (build-fuzz/, clang).
bash scripts/sanitize.sh
bash scripts/fuzz.sh 20
