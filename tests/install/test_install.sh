#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then a program outside the project is built against
# what was installed: with find_package(pbf) (shared, static and, where it was built, the
# renderer) and with pkg-config, and run. Also checks where the files went, that libpbf.so
# exports exactly the public API (pbf_* functions), and that the installed `pbf` runs.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR C_COMPILER
set -u
BUILD=${1:?usage: test_install.sh BUILD_DIR SOURCE_DIR C_COMPILER}
SRC=${2:?source dir}
CC=${3:?C compiler}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_install_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
run() { # run LOG CMD...: runs CMD, shows its output on failure
    local log=$1; shift
    "$@" >"$TMP/$log" 2>&1 || { cat "$TMP/$log" >&2; fail "'$*' failed"; }
}

prefix=$TMP/prefix
run install.log cmake --install "$BUILD" --prefix "$prefix"
libdir=$(sed -n 's/^libdir=\${prefix}\///p' "$prefix"/lib*/pkgconfig/pbf.pc "$prefix"/lib/*/pkgconfig/pbf.pc 2>/dev/null | head -1)
[ -n "$libdir" ] || fail "no pbf.pc under $prefix/lib*/pkgconfig"
for f in include/pbf/pbf.h include/pbf/base.h include/pbf/scene.h include/pbf/export.h \
         "$libdir/libpbf.a" "$libdir/libpbf.so" "$libdir/cmake/pbf/pbfConfig.cmake" \
         "$libdir/cmake/pbf/pbfConfigVersion.cmake" "$libdir/pkgconfig/pbf.pc" bin/pbf \
         share/pbf/pbf_paraview.py; do
    [ -e "$prefix/$f" ] || fail "$f not installed"
done
[ -e "$prefix/include/pbf/kernels.h" ] && fail "an internal header was installed"

# libpbf.so: the public API and nothing else (PBF_API, hidden visibility, cmake/pbf.map). Only
# global symbols are exports: the linker may leave a local one in the dynamic table (a libstdc++
# template that the OpenVDB code instantiates), where nothing can bind to it.
NM=${NM:-nm}
"$NM" -D --defined-only --extern-only "$prefix/$libdir/libpbf.so" | awk '{ print $NF }' >"$TMP/exports"
grep -qx pbf_world_create "$TMP/exports" || fail "libpbf.so does not export pbf_world_create"
if grep -v '^pbf_' "$TMP/exports" >"$TMP/foreign"; then
    head "$TMP/foreign" >&2
    fail "libpbf.so exports $(wc -l <"$TMP/foreign") symbols outside the API"
fi
headers=("$SRC"/include/pbf/*.h)
if ! grep -qx pbf_mpi_world_split "$TMP/exports"; then # built without MPI: no mpi.h functions
    headers=()
    for h in "$SRC"/include/pbf/*.h; do [ "$(basename "$h")" = mpi.h ] || headers+=("$h"); done
fi
api=$(grep -ho 'PBF_API [^(]*(' "${headers[@]}" | grep -o 'pbf_[a-z0-9_]*($' | sort -u | wc -l)
[ "$(wc -l <"$TMP/exports")" -eq "$api" ] \
    || fail "libpbf.so exports $(wc -l <"$TMP/exports") functions, include/pbf declares $api"

# the installed command
run pbf.log "$prefix/bin/pbf" info "$SRC/scenes/cube_drop.json" --set fluid.particle_radius=0.04

# CMake package: shared, static, renderer
run configure.log cmake -S "$SRC/tests/install/consumer" -B "$TMP/consumer" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=Release
run build.log cmake --build "$TMP/consumer"
grep -F "pbf 0.1.0: static TRUE" "$TMP/configure.log" || fail "find_package(pbf) found no static library"
run shared.log "$TMP/consumer/hello_shared"
grep -q "^pbf 0.1.0: " "$TMP/shared.log" || fail "hello_shared: $(cat "$TMP/shared.log")"
ldd "$TMP/consumer/hello_shared" | grep -F "$prefix/$libdir/libpbf.so" >/dev/null \
    || fail "hello_shared does not load the installed libpbf.so: $(ldd "$TMP/consumer/hello_shared")"
run static.log "$TMP/consumer/hello_static"
ldd "$TMP/consumer/hello_static" | grep -q libpbf && fail "hello_static loads libpbf.so"
if [ -e "$prefix/include/pbf/render.h" ]; then
    [ -x "$TMP/consumer/hello_render" ] || fail "find_package(pbf) did not find the component render"
    run render.log "$TMP/consumer/hello_render"
fi
cat "$TMP/shared.log"

# pkg-config
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs pbf) || fail "pkg-config does not know pbf"
pkg-config --exact-version=0.1.0 pbf || fail "pbf.pc: version $(pkg-config --modversion pbf)"
# shellcheck disable=SC2086 # the flags are words
run cc.log "$CC" -std=c11 -o "$TMP/hello_pc" "$SRC/tests/install/consumer/main.c" $flags
LD_LIBRARY_PATH="$prefix/$libdir" run pc.log "$TMP/hello_pc"
grep -q "^pbf 0.1.0: " "$TMP/pc.log" || fail "hello_pc: $(cat "$TMP/pc.log")"
echo "install: find_package(pbf) and pkg-config both build and run a program"
