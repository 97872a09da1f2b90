#!/usr/bin/env bash
# The key tables of docs/scenes.md come from the scene schema (src/io/scene_keys.c): each table
# sits between `<!-- scene-keys NAME -->` and `<!-- /scene-keys -->`, and `pbf info
# --scene-keys` prints them all. This script puts them into docs/scenes.md (the prose around the
# markers stays), or with --check only compares and fails when they differ (the scene_docs test).
# Usage: bash scripts/scene_docs.sh [--check] [PBF]      (PBF: default ./build/pbf)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = "--check" ]; then
    check=1
    shift
fi
pbf=${1:-./build/pbf}
doc=docs/scenes.md

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$pbf" info --scene-keys >"$tmp/keys.md"

# Replaces every marked table of the document with the generated one of the same name; fails on
# a marker with no table, or a table with no marker (a new section must be placed by hand).
awk -v keys="$tmp/keys.md" '
    function marker_name(line) { sub(/^<!-- scene-keys /, "", line); sub(/ -->$/, "", line); return line }
    BEGIN {
        while ((getline line < keys) > 0) {
            if (line ~ /^<!-- scene-keys [^ ]+ -->$/) { name = marker_name(line); order[++n] = name; body[name] = ""; inside = 1 }
            else if (line == "<!-- /scene-keys -->") inside = 0
            else if (inside) body[name] = body[name] line "\n"
        }
    }
    /^<!-- scene-keys [^ ]+ -->$/ {
        name = marker_name($0)
        if (!(name in body)) { printf "%s: the table \"%s\" is not in the schema (pbf info --scene-keys)\n", FILENAME, name > "/dev/stderr"; bad = 1 }
        print; printf "%s", body[name]; seen[name]++; skipping = 1; next
    }
    /^<!-- \/scene-keys -->$/ { skipping = 0; print; next }
    !skipping { print }
    END {
        for (i = 1; i <= n; ++i)
            if (seen[order[i]] != 1) { printf "%s: the table \"%s\" needs one pair of markers <!-- scene-keys %s --> <!-- /scene-keys --> (it has %d)\n", FILENAME, order[i], order[i], seen[order[i]] > "/dev/stderr"; bad = 1 }
        exit bad
    }
' "$doc" >"$tmp/scenes.md"

if [ "$check" = 1 ]; then
    if ! diff -u "$doc" "$tmp/scenes.md"; then
        echo "$doc: its key tables differ from the scene schema (above: - the document, + the schema)." >&2
        echo "Run 'bash scripts/scene_docs.sh' to regenerate them." >&2
        exit 1
    fi
    echo "$doc: the key tables match the scene schema"
else
    # Never half-written: the new text goes next to the document, then replaces it.
    cp "$tmp/scenes.md" "$doc.tmp"
    mv "$doc.tmp" "$doc"
    echo "$doc: key tables regenerated"
fi
