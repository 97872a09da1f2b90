"""Checks what Debian's ParaView read from a run folder (test_paraview.sh): the line
`pbf_paraview: {json}` that `pbf paraview` prints (app/pbf_paraview.py) against the folder's
own files: the time steps are stats.csv's times in seconds; the particles have stats.csv's count
and the velocity, density and id arrays; the solids the PLY's vertices and triangles and the
`solid` cell array (a run without solids: the particles alone); the surfaces the PLY's vertices.
With a picture, its size and that it shows the particles (and the crates where there are). Usage: check_paraview.py RUN_DIR OUTPUT_FILE SOURCE FRAME [PNG W H]
"""
import csv
import json
import math
import os
import struct
import sys
import zlib


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def ply_counts(path):
    """(vertices, faces) from a PLY header."""
    with open(path, "rb") as f:
        head = f.read(4096)
    head = head[:head.index(b"end_header")].split(b"\n")
    count = {l.split()[1]: int(l.split()[2]) for l in head if l.startswith(b"element")}
    return count.get(b"vertex", 0), count.get(b"face", 0)


def read_png(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit non-interlaced PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG")
    at, idat, w = 8, b"", 0
    while at < len(data):
        (n,) = struct.unpack_from(">I", data, at)
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                fail(f"{path}: a PNG of depth {depth}, colour type {colour}")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    raw, rows, prev = zlib.decompress(idat), [], bytearray(w * bpp)
    stride = w * bpp
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def main():
    run, output, source, frame = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    lines = [l for l in open(output) if l.startswith("pbf_paraview: ")]
    if len(lines) != 1:
        fail(f"{output}: {len(lines)} lines 'pbf_paraview: ...'")
    got = json.loads(lines[0][len("pbf_paraview: "):])
    with open(os.path.join(run, "stats.csv")) as f:
        stats = list(csv.DictReader(f))
    times = [float(r["time"]) for r in stats]
    if got["source"] != source:
        fail(f"ParaView read {got['source']}, expected {source}")
    if len(got["times"]) != len(times) or not all(
            math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) for a, b in zip(got["times"], times)):
        fail(f"time steps {got['times']}, stats.csv has {times}")
    if got["frame"] != frame or not math.isclose(got["time"], times[frame], rel_tol=1e-6):
        fail(f"showed frame {got['frame']} at {got['time']} s, expected {frame}")
    parts = got["parts"]
    p = parts.get("particles") or fail("no particles")
    if p["points"] != int(stats[frame]["particles"]):
        fail(f"{p['points']} particles, stats.csv has {stats[frame]['particles']}")
    want = {"velocity", "density", "id"} if source in ("pvd", "vtk") else set()
    if not want <= set(p["point_arrays"]):
        fail(f"particle arrays {p['point_arrays']}, expected {sorted(want)}")
    solids_ply = os.path.join(run, f"solids_{frame:05d}.ply")
    s = parts.get("solids")
    if os.path.exists(solids_ply):
        if s is None:
            fail("no solids")
        nv, nf = ply_counts(solids_ply)
        if (s["points"], s["cells"]) != (nv, nf) or nf == 0:
            fail(f"solids: {s['points']} points, {s['cells']} cells; the PLY has {nv} and {nf}")
        if source in ("pvd", "vtk") and "solid" not in s["cell_arrays"]:
            fail(f"solids' cell arrays {s['cell_arrays']}: no 'solid'")
    elif s is not None or set(parts) != {"particles"}:
        fail(f"parts {sorted(parts)} in a run of particles only")
    surface = os.path.join(run, f"surface_{frame:05d}.ply")
    if os.path.exists(surface) and source == "pvd":
        nv, nf = ply_counts(surface)
        m = parts.get("surfaces") or fail("no surfaces")
        if (m["points"], m["cells"]) != (nv, nf):
            fail(f"surfaces: {m['points']} points, {m['cells']} cells; the PLY has {nv}, {nf}")
    print(f"check_paraview: {source}: {len(times)} time steps in s, frame {frame}: "
          f"{p['points']} particles ({', '.join(p['point_arrays'])})"
          + (f", solids {s['points']} points / {s['cells']} triangles "
             f"({', '.join(s['cell_arrays'])})" if s else "")
          + (f", surfaces {parts['surfaces']['cells']} triangles" if "surfaces" in parts else ""))
    if len(sys.argv) > 5:
        png, width, height = sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
        w, h, bpp, rows = read_png(png)
        if (w, h) != (width, height):
            fail(f"{png} is {w}x{h}, expected {width}x{height}")
        background = rows[0][:3]  # the top-left corner: nothing drawn there
        total = w * h
        other = brown = blue = 0
        for row in rows:
            for i in range(0, w * bpp, bpp):
                r, g, b = row[i], row[i + 1], row[i + 2]
                if max(abs(r - background[0]), abs(g - background[1]), abs(b - background[2])) > 24:
                    other += 1
                if r > b + 40 and r > g > b:  # the crates' wood, lit
                    brown += 1
                if b > r + 30:  # slow particles: the cool end of the speed colours
                    blue += 1
        crates = 0.001 * total if s else 0  # the floating crates, where the run has them
        if other < 0.02 * total or brown < crates or blue < 0.005 * total:
            fail(f"{png}: {other} pixels off the background, {brown} brown, {blue} blue "
                 f"of {total}: particles and crates not seen")
        print(f"check_paraview: {png} {w}x{h}: {100 * other / total:.1f} % drawn, "
              f"{100 * brown / total:.1f} % brown (the crates, where there are), "
              f"{100 * blue / total:.1f} % slow particles")


main()
