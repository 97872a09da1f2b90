#!/usr/bin/env bash
# Prints the CMake generator option for the build folder DIR: "-G Ninja" where ninja is installed
# and DIR is not configured yet, nothing otherwise (a folder keeps the generator it was made with;
# CMake refuses another). scripts/test.sh, sanitize.sh and fuzz.sh configure with it.
# Usage: cmake -S . -B DIR $(bash scripts/generator.sh DIR) ...
set -euo pipefail
dir=${1:?usage: generator.sh BUILD_DIR}
if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  echo "-G Ninja"
fi
