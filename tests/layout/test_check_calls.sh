#!/usr/bin/env bash
# Checks scripts/check_calls.sh itself on three tiny files: a -> b -> c passes, and closing the
# loop (c -> a) fails with the files and the symbols that make the loop.
# Usage: test_check_calls.sh CC SOURCE_DIR
set -u
CC=${1:?usage: test_check_calls.sh CC SOURCE_DIR}
SRC=${2:?source dir}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pbf_check_calls_XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

obj=$TMP/lib/CMakeFiles/demo.dir
mkdir -p "$obj"
echo 'int b_value(void); int a_value(void) { return b_value() + 1; }' >"$TMP/a.c"
echo 'int c_value(void); int b_value(void) { return c_value() + 1; }' >"$TMP/b.c"
echo 'int c_value(void) { return 1; }' >"$TMP/c.c"
echo 'int a_value(void); int c_value(void) { return a_value() > 0; }' >"$TMP/c_loop.c"
for f in a b c c_loop; do
    "$CC" -c "$TMP/$f.c" -o "$obj/$f.c.o" || fail "cannot compile $f.c"
done

bash "$SRC/scripts/check_calls.sh" --list "$TMP" "$obj/a.c.o;$obj/b.c.o" "$obj/c.c.o" \
    >"$TMP/out" 2>&1 || { cat "$TMP/out"; fail "a -> b -> c reported as a loop"; }
grep -qx 'lib/a.c -> lib/b.c' "$TMP/out" || { cat "$TMP/out"; fail "a.c -> b.c not listed"; }

bash "$SRC/scripts/check_calls.sh" "$TMP" "$obj/a.c.o" "$obj/b.c.o" "$obj/c_loop.c.o" \
    >"$TMP/out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$TMP/out"; fail "a -> b -> c -> a: exit $rc, expected 1"; }
grep -qF 'these files call each other: lib/a.c lib/b.c lib/c_loop.c' "$TMP/out" \
    || { cat "$TMP/out"; fail "the loop's files are not named"; }
grep -qF 'lib/c_loop.c -> lib/a.c: a_value' "$TMP/out" \
    || { cat "$TMP/out"; fail "the loop's symbols are not named"; }
echo "check_calls: finds a loop of three files, passes a chain"
