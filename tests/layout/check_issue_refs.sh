#!/usr/bin/env bash
# Comments say what and why, and point at the docs page that explains a feature: they never name
# the tracker's issue that asked for it. Fails, listing FILE:LINE, when a code file
# mentions an issue by number: the word "issue" or "issues", then a number, a "#" or a "-" and
# a number, in any case. Code files: src/, app/, render/, include/, tests/ (not the fuzz corpus,
# which is data), bench/, scripts/, cmake/ and the top-level CMakeLists.txt.
# With --self-test, first checks itself on a tiny tree: each way of writing a mention is caught,
# and words that merely contain "issue" pass.
# Usage: check_issue_refs.sh [--self-test] SOURCE_DIR
set -u
self_test=0
if [ "${1:-}" = "--self-test" ]; then
    self_test=1
    shift
fi
SRC=${1:?usage: check_issue_refs.sh [--self-test] SOURCE_DIR}

# The word, optional blanks, an optional "#", "-", "no." or "number", then a digit.
pattern='(^|[^[:alnum:]_])issues?[[:space:]]*(#|-|no\.|number)?[[:space:]]*[0-9]'

# Prints every mention under $1 as FILE:LINE:TEXT; exit 0 when there is one, 1 when none.
scan() {
    local root=$1 dirs=() d
    for d in src app render include tests bench scripts cmake; do
        [ -d "$root/$d" ] && dirs+=("$root/$d")
    done
    [ -f "$root/CMakeLists.txt" ] && dirs+=("$root/CMakeLists.txt")
    [ ${#dirs[@]} -gt 0 ] || return 1
    grep -r -n -i -E "$pattern" --exclude-dir=corpus \
        --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' --include='*.cpp' \
        --include='*.sh' --include='*.py' --include='*.cmake' --include='*.in' \
        --include='CMakeLists.txt' --include='*.glsl' --include='*.vert' --include='*.frag' \
        --include='*.dict' "${dirs[@]}"
}

if [ "$self_test" = 1 ]; then
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/pbf_issue_refs_XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/src" "$tmp/tests/fuzz/corpus"
    i=is; i=${i}sue # the word, spelt so that this file does not mention one itself
    # Words that contain the letters but are no mention, and the corpus (data, not code).
    printf '/* reissue 2 buffers; tissues 3; the issue'"'"'s bar; issue a warning */\n' >"$tmp/src/ok.c"
    printf '{"a": "%s 7"}\n' "$i" >"$tmp/tests/fuzz/corpus/input.c"
    if out=$(scan "$tmp"); then
        echo "FAIL: the self-test's clean tree was reported:" >&2
        echo "$out" >&2
        exit 1
    fi
    n=0
    for mention in "(${i^} 7)" "${i}s 4-7" "$i #12" "$i-3" "${i^^}  5" "$i no. 8" \
                   "$i number 2"; do
        n=$((n + 1))
        printf '/* the feature (%s) */\n' "$mention" >"$tmp/src/m$n.c"
        if ! scan "$tmp" >/dev/null; then
            echo "FAIL: the self-test's mention '$mention' was not found" >&2
            exit 1
        fi
        rm "$tmp/src/m$n.c"
    done
    printf 'add_library(x a.c) # (%s 6)\n' "$i" >"$tmp/CMakeLists.txt"
    scan "$tmp" >/dev/null || { echo "FAIL: a mention in CMakeLists.txt was not found" >&2; exit 1; }
    echo "check_issue_refs: the self-test finds $((n + 1)) ways of writing a mention, passes 5 others"
fi

out=$(scan "$SRC")
rc=$?
if [ "$rc" -eq 0 ]; then
    echo "$out" | sed "s|^$SRC/||" >&2
    echo "These lines name a tracker issue: say what the code does and why, and point at the docs" >&2
    echo "page that explains the feature (docs/NAME.md, \"Section\") instead." >&2
    exit 1
elif [ "$rc" -ne 1 ]; then
    echo "FAIL: cannot search $SRC (grep exit status $rc)" >&2
    exit 1
fi
echo "check_issue_refs: no code file names a tracker issue"
