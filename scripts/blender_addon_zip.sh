#!/usr/bin/env bash
# Zips the Blender add-on (blender/pbf_blender) into OUT_DIR/pbf_blender.zip (default build/),
# the file Blender installs from Edit > Preferences > Add-ons > Install (docs/blender.md).
# Usage: scripts/blender_addon_zip.sh [OUT_DIR]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out_dir=${1:-$root/build}
mkdir -p "$out_dir"
out=$(cd "$out_dir" && pwd)/pbf_blender.zip
python=${PBF_PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3

# the package's .py files only (no caches), written to a temporary name and renamed into place
"$python" - "$root/blender" "$out" <<'EOF'
import os, sys, zipfile
src, out = sys.argv[1], sys.argv[2]
tmp = out + ".tmp.%d" % os.getpid()
names = sorted(n for n in os.listdir(os.path.join(src, "pbf_blender")) if n.endswith(".py"))
if "__init__.py" not in names:
    sys.exit("blender_addon_zip: %s/pbf_blender/__init__.py is missing" % src)
try:
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n in names:
            z.write(os.path.join(src, "pbf_blender", n), "pbf_blender/" + n)
    os.replace(tmp, out)
finally:
    if os.path.exists(tmp):
        os.remove(tmp)
print("blender_addon_zip: %s (%d files)" % (out, len(names)))
EOF
