#!/usr/bin/env bash
# The Python package (docs/python.md): installs it with pip into a venv that sees Debian's
# numpy and pytest (build/python-venv), offline, and runs its tests (python/tests) against the
# `pbf` command of build/ (scripts/test.sh builds it first; without it the comparisons with the
# command are skipped). scripts/test.sh runs this.
# Usage: bash scripts/test_python.sh [pytest arguments...]
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's interpreter: the one whose dist-packages hold python3-numpy and python3-pytest (a
# python3 earlier on PATH, e.g. pyenv's, would not see them).
python=${PBF_PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3
venv=$PWD/build/python-venv
# a venv made by another interpreter (one whose python3 was first on PATH) cannot see Debian's
# numpy: make it again from Debian's
if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -c "import numpy" 2>/dev/null; then
  echo "test_python: $venv cannot import numpy; making it again with $python" >&2
  rm -rf "$venv"
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv --system-site-packages "$venv"
fi
# Where build/ was configured with the module (PBF_PYTHON=ON, as scripts/test.sh does) for this
# interpreter, pip installs the module built there, from the same objects as the `pbf` command,
# instead of compiling the library a second time (setup.py, PBF_PYTHON_MODULE).
cache=build/CMakeCache.txt
if [ -z "${PBF_PYTHON_MODULE:-}" ] && [ -f "$cache" ] && grep -qx 'PBF_PYTHON:BOOL=ON' "$cache" &&
    grep -qE "^Python3_EXECUTABLE:[A-Z]+=$python\$" "$cache"; then
  cmake --build build --target pbf_python -j"$(nproc)"
  suffix=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  export PBF_PYTHON_MODULE=$PWD/build/python/_core$suffix
fi
# Otherwise pip builds it in its own folder. The CUDA backend is left out of that build to keep
# the suite short (nvcc takes a minute); `pip install .` builds it by default where nvcc is found.
PBF_CUDA=${PBF_CUDA:-OFF} "$venv/bin/pip" install --quiet --no-index --no-build-isolation .
export PBF_SOURCE_DIR=$PWD PBF_CLI=${PBF_CLI:-$PWD/build/pbf}
# OpenMP threads sleep at barriers instead of spinning: on 2 shared cores a spinning thread takes
# the core the working one needs (the CTest tests get the same, CMakeLists.txt)
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# From another folder, so that `import pbf` is the installed package.
cd build
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$PBF_SOURCE_DIR/python/tests" "$@"
