"""Checks the time series of a run folder (test_vtu.sh; app/series_output.h): frames.pvd lists,
for every frame at stats.csv's time, each part the folder has (particles, solids, surfaces,
diffuse) under its block name; each legacy series (.ply, .vtk, .obj) has its ParaView .series
file naming every frame at the same times; the solids' .vtu holds the PLY's triangles exactly.
Usage: check_series.py DIR FRAMES"""
import csv
import glob
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtu_read import read_pvd_parts, read_vtu_cells  # noqa: E402

KINDS = (("particles", "frame", "frames"), ("solids", "solids", "solids"),
         ("surfaces", "surface", "surfaces"), ("diffuse", "diffuse", "diffuse"))


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def read_solids_ply(path):
    """(vertices, faces, solid per face) of pbf's solids PLY (include/pbf/export.h)."""
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].split(b"\n")
    nv = int([x for x in header if x.startswith(b"element vertex")][0].split()[2])
    nf = int([x for x in header if x.startswith(b"element face")][0].split()[2])
    verts = [struct.unpack_from("<3f", data, end + 12 * i) for i in range(nv)]
    faces, solid, at = [], [], end + 12 * nv
    for _ in range(nf):
        count, a, b, c, s = struct.unpack_from("<B4i", data, at)
        if count != 3:
            fail(f"{path}: a face of {count} vertices")
        faces.append((a, b, c))
        solid.append(s)
        at += 17
    return verts, faces, solid


def read_diffuse_ply(path):
    """(positions, velocities, kinds, lifetimes) of pbf's diffuse PLY (include/pbf/export.h)."""
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].split(b"\n")
    n = int([x for x in header if x.startswith(b"element vertex")][0].split()[2])
    rows = [struct.unpack_from("<6fBf", data, end + 29 * i) for i in range(n)]
    return ([r[0:3] for r in rows], [r[3:6] for r in rows], [r[6] for r in rows],
            [r[7] for r in rows])


def main():
    folder, frames = sys.argv[1], int(sys.argv[2])
    with open(os.path.join(folder, "stats.csv")) as f:
        times = [float(row["time"]) for row in csv.DictReader(f)]
    if len(times) != frames + 1:
        fail(f"stats.csv has {len(times)} rows, expected {frames + 1}")

    def frames_with(prefix, ext):  # the frames whose file exists (a resumed run without --mesh
        return [k for k in range(frames + 1)  # has the first run's surfaces only)
                if os.path.exists(os.path.join(folder, f"{prefix}_{k:05d}.{ext}"))]

    # frames.pvd: every part the folder has, per frame, at stats.csv's time
    present = [k for k in KINDS if frames_with(k[1], "vtu")]
    entries = read_pvd_parts(os.path.join(folder, "frames.pvd"))
    listed = [(name, os.path.basename(path)) for _, _, name, path in entries]
    want = [(kind[0], f"{kind[1]}_{k:05d}.vtu") for k in range(frames + 1) for kind in present
            if k in frames_with(kind[1], "vtu")]
    if listed != want:
        fail(f"frames.pvd lists {listed}, expected {want}")
    parts = {}
    for time, part, name, path in entries:
        base = os.path.basename(path)
        kind = [k for k in present if base.startswith(k[1] + "_")]
        if not kind or name != kind[0][0]:
            fail(f"frames.pvd: {base} in a part named {name}")
        if parts.setdefault(name, part) != part:
            fail(f"frames.pvd: {name} in parts {parts[name]} and {part}")
        k = int(base[len(kind[0][1]) + 1:-4])
        if not math.isclose(time, times[k], rel_tol=1e-8, abs_tol=1e-12):
            fail(f"frames.pvd: {base} at {time} s, stats.csv says {times[k]} s")
        read_vtu_cells(path)  # complete and well formed
    if sorted(parts.values()) != list(range(len(present))):
        fail(f"frames.pvd: parts {parts}")

    # the solids' .vtu: the PLY's vertices, triangles and solid indices, bit for bit
    for k in range(frames + 1):
        ply = os.path.join(folder, f"solids_{k:05d}.ply")
        vtu = os.path.join(folder, f"solids_{k:05d}.vtu")
        if not (os.path.exists(ply) and os.path.exists(vtu)):
            continue
        verts, faces, solid = read_solids_ply(ply)
        v = read_vtu_cells(vtu)
        tris = [tuple(v["connectivity"][3 * i:3 * i + 3]) for i in range(v["cells"])]
        if v["Points"] != verts or tris != faces or v["cell_data"].get("solid") != solid:
            fail(f"{vtu}: not the triangles of {ply}")
        if set(v["types"]) != {5} or v["offsets"] != [3 * (i + 1) for i in range(v["cells"])]:
            fail(f"{vtu}: cells are not triangles")

    # the diffuse particles' .vtu: the PLY's values, bit for bit
    diffuse = 0
    for k in range(frames + 1):
        ply = os.path.join(folder, f"diffuse_{k:05d}.ply")
        vtu = os.path.join(folder, f"diffuse_{k:05d}.vtu")
        if not (os.path.exists(ply) and os.path.exists(vtu)):
            continue
        x, v, kind, life = read_diffuse_ply(ply)
        d = read_vtu_cells(vtu)
        got = (d["Points"], d["point_data"].get("velocity"), d["point_data"].get("kind"),
               d["point_data"].get("lifetime"))
        if got != (x, v, kind, life) or set(d["types"]) - {1}:
            fail(f"{vtu}: not the diffuse particles of {ply}")
        diffuse += len(x)

    # the legacy series: "<series>.<ext>.series" beside each
    checked = []
    for _, prefix, series in KINDS:
        for ext in ("ply", "vtk", "obj"):
            have = frames_with(prefix, ext)
            if not have:
                continue
            path = os.path.join(folder, f"{series}.{ext}.series")
            try:
                with open(path) as f:
                    doc = json.load(f)
            except (OSError, ValueError) as e:
                fail(f"{path}: {e}")
            if doc.get("file-series-version") != "1.0":
                fail(f"{path}: file-series-version {doc.get('file-series-version')!r}")
            names = [e["name"] for e in doc["files"]]
            want = [f"{prefix}_{k:05d}.{ext}" for k in have]
            if names != want:
                fail(f"{path}: lists {names}, expected {want}")
            for k, e in zip(have, doc["files"]):
                if not math.isclose(e["time"], times[k], rel_tol=1e-8, abs_tol=1e-12):
                    fail(f"{path}: {e['name']} at {e['time']} s, stats.csv says {times[k]} s")
            checked.append(os.path.basename(path))
    if glob.glob(os.path.join(folder, "*.tmp.*")):
        fail("temporary files left behind")
    print(f"check_series: frames.pvd with {len(present)} parts "
          f"({', '.join(k[0] for k in present)}) and {', '.join(checked)} list their files "
          f"of frames 0..{frames} at stats.csv's times"
          + (f"; {diffuse} diffuse particles as in the PLY files" if diffuse else ""))


main()
