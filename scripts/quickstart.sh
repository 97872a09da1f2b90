#!/usr/bin/env bash
# From a fresh checkout: install dependencies, build, and run the default dam break.
# Output: out/dam_break/ (PLY frames, stats.csv, scene.json) and out/dam_break/dam_break.mp4, the
# screen-space fluid rendering of the run. Extra arguments go to `pbf run`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
./build/pbf run --out out/dam_break --video out/dam_break/dam_break.mp4 "$@"
