#!/usr/bin/env bash
# The whole test suite from a fresh checkout: install dependencies, build, run every test.
# Usage: bash scripts/test.sh            (build folder: build/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure --timeout 900
