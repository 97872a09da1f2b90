"""The outputs of a `pbf run` split over MPI ranks that rank 0 makes from the particles gathered
to it (docs/mpi.md, "Output"), against one process's (test_mpi.sh vtk, mesh, png).
Usage: check_mpi_outputs.py MODE SERIAL_DIR SPLIT_DIR [ARGS], MODE one of
  vtk DX     every frame_NNNNN.vtk of the split run holds by id exactly the particles of its own
             .pvtu pieces (the gather loses, duplicates and changes nothing), in id order, and
             the same ids as one process's; positions at most DX m from one process's
  mesh TRI BOX  every surface_NNNNN.ply of the split run (--mesh) has a triangle count within
             the share TRI of one process's and a bounding box within BOX m of it
  png W H DIFF  every PNG of the split run (--png) decodes to W x H pixels, as one process's do,
             and the mean absolute difference over the channels to one process's picture of the
             frame is at most DIFF (of 255)
"""
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtu_read import read_frame  # noqa: E402


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def read_vtk(path):
    """pbf's legacy VTK particle file (include/pbf/export.h): {"Points", "velocity", "density",
    "id"} in file order; binary blocks are big-endian."""
    data = open(path, "rb").read()
    at = 0

    def line():
        nonlocal at
        end = data.index(b"\n", at)
        text = data[at:end].decode()
        at = end + 1
        return text

    def block(n, kind):
        nonlocal at
        values = struct.unpack_from(f">{n}{kind}", data, at)
        at += 4 * n + 1  # the newline after the block
        return values

    if not line().startswith("# vtk DataFile"):
        fail(f"{path}: not a legacy VTK file")
    line()  # title
    if line() != "BINARY" or line() != "DATASET POLYDATA":
        fail(f"{path}: not a binary POLYDATA file")
    out = {}
    n = None
    while at < len(data):
        words = line().split()
        if not words:
            continue
        if words[0] == "POINTS":
            n = int(words[1])
            v = block(3 * n, "f")
            out["Points"] = [tuple(v[i:i + 3]) for i in range(0, 3 * n, 3)]
        elif words[0] == "VERTICES":
            block(int(words[2]), "i")
        elif words[0] == "POINT_DATA":
            pass
        elif words[0] == "SCALARS":
            line()  # LOOKUP_TABLE default
            out[words[1]] = list(block(n, "i" if words[2] == "int" else "f"))
        elif words[0] == "VECTORS":
            v = block(3 * n, "f")
            out[words[1]] = [tuple(v[i:i + 3]) for i in range(0, 3 * n, 3)]
        else:
            fail(f"{path}: unexpected section {words[0]}")
    for need in ("Points", "velocity", "density", "id"):
        if need not in out:
            fail(f"{path}: no {need}")
    return out


def frames(folder, prefix, ext):
    names = sorted(f for f in os.listdir(folder) if f.startswith(prefix) and f.endswith(ext)
                   and f[len(prefix):-len(ext)].isdigit())
    if not names:
        fail(f"{folder}: no {prefix}NNNNN{ext}")
    return names


def same_frames(serial_dir, split_dir, prefix, ext):
    names = frames(split_dir, prefix, ext)
    if names != frames(serial_dir, prefix, ext):
        fail(f"{split_dir}: other {prefix}*{ext} files than one process's")
    return names


def check_vtk(serial_dir, split_dir, dx):
    worst, last = 0.0, 0.0
    names = same_frames(serial_dir, split_dir, "frame_", ".vtk")
    for name in names:
        vtk = read_vtk(os.path.join(split_dir, name))
        if vtk["id"] != sorted(set(vtk["id"])):
            fail(f"{name}: ids not in increasing order, or one twice")
        pieces = read_frame(os.path.join(split_dir, name[:-4] + ".pvtu"))
        for key in ("id", "Points", "velocity", "density"):
            if vtk[key] != pieces[key]:
                fail(f"{name}: {key} is not its .pvtu pieces' (by id)")
        one = read_vtk(os.path.join(serial_dir, name))
        if one["id"] != vtk["id"]:
            fail(f"{name}: {len(vtk['id'])} particles, {len(one['id'])} in one process, or "
                 "other ids")
        d = max(abs(a - b) for p, q in zip(one["Points"], vtk["Points"]) for a, b in zip(p, q))
        worst, last = max(worst, d), d
        if d > dx:
            fail(f"{name}: a particle {d:.3g} m from one process's (> {dx} m)")
    print(f"check_mpi_outputs: {len(names)} VTK frames hold their .pvtu pieces' particles by id, "
          f"{len(vtk['id'])} ids as in one process; positions at most {worst:.3g} m from one "
          f"process's (last frame {last:.3g} m)")


def read_mesh_ply(path):
    """A surface mesh PLY (pbf_mesh_write): its triangle count and vertices' bounding box."""
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode().split("\n")
    nv = int([h for h in header if h.startswith("element vertex")][0].split()[2])
    nt = int([h for h in header if h.startswith("element face")][0].split()[2])
    if len(data) != end + 24 * nv + 13 * nt:
        fail(f"{path}: {len(data)} bytes for {nv} vertices and {nt} triangles")
    lo, hi = [float("inf")] * 3, [float("-inf")] * 3
    for i in range(nv):
        p = struct.unpack_from("<3f", data, end + 24 * i)
        lo = [min(a, b) for a, b in zip(lo, p)]
        hi = [max(a, b) for a, b in zip(hi, p)]
    return nt, lo + hi


def check_mesh(serial_dir, split_dir, tri, box):
    names = same_frames(serial_dir, split_dir, "surface_", ".ply")
    worst_t, worst_b = 0.0, 0.0
    for name in names:
        t1, b1 = read_mesh_ply(os.path.join(serial_dir, name))
        t2, b2 = read_mesh_ply(os.path.join(split_dir, name))
        dt = abs(t2 - t1) / t1
        db = max(abs(a - b) for a, b in zip(b1, b2))
        worst_t, worst_b = max(worst_t, dt), max(worst_b, db)
        if t2 == 0 or dt > tri:
            fail(f"{name}: {t2} triangles, {t1} in one process (> {100 * tri:g} % apart)")
        if db > box:
            fail(f"{name}: the bounding box is {db:.3g} m from one process's (> {box} m)")
    print(f"check_mpi_outputs: {len(names)} surfaces; triangle counts at most "
          f"{100 * worst_t:.2f} % and bounding boxes at most {worst_b:.3g} m from one process's "
          f"(last: {t2} against {t1} triangles)")


def read_png(path):
    """(width, height, rows of RGB(A) bytes): a non-interlaced 8-bit RGB or RGBA PNG, decoded
    with the filters undone."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG file")
    at, idat, ihdr = 8, b"", None
    while at < len(data):
        (n,) = struct.unpack_from(">I", data, at)
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + n]
        if zlib.crc32(kind + body) != struct.unpack_from(">I", data, at + 8 + n)[0]:
            fail(f"{path}: bad CRC in a {kind.decode()} chunk")
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        at += 12 + n
    if ihdr is None:
        fail(f"{path}: no IHDR")
    w, h, depth, color, _, _, interlace = ihdr
    if depth != 8 or color not in (2, 6) or interlace != 0:
        fail(f"{path}: not 8-bit RGB(A) without interlacing")
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    if len(raw) != h * (stride + 1):
        fail(f"{path}: {len(raw)} bytes of pixels for {w}x{h}")
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = row[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                row[i] = (row[i] + a) & 255
            elif f == 2:
                row[i] = (row[i] + b) & 255
            elif f == 3:
                row[i] = (row[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            elif f != 0:
                fail(f"{path}: unknown filter {f}")
        rows.append(row)
        prev = row
    return w, h, bpp, rows


def check_png(serial_dir, split_dir, w, h, diff):
    names = same_frames(serial_dir, split_dir, "frame_", ".png")
    worst = 0.0
    for name in names:
        w1, h1, bpp1, one = read_png(os.path.join(serial_dir, name))
        w2, h2, bpp2, mine = read_png(os.path.join(split_dir, name))
        if (w2, h2) != (w, h) or (w1, h1) != (w, h):
            fail(f"{name}: {w2}x{h2} split, {w1}x{h1} in one process, {w}x{h} asked for")
        total = sum(abs(a - b) for r1, r2 in zip(one, mine)
                    for x in range(w) for a, b in zip(r1[x * bpp1:x * bpp1 + 3],
                                                      r2[x * bpp2:x * bpp2 + 3]))
        mean = total / (3.0 * w * h)
        worst = max(worst, mean)
        if mean > diff:
            fail(f"{name}: {mean:.3f} of 255 from one process's picture on average (> {diff})")
    print(f"check_mpi_outputs: {len(names)} pictures of {w}x{h}; at most {worst:.3f} of 255 from "
          f"one process's on average")


def main():
    mode, serial_dir, split_dir = sys.argv[1:4]
    args = [float(a) for a in sys.argv[4:]]
    if mode == "vtk":
        check_vtk(serial_dir, split_dir, *args)
    elif mode == "mesh":
        check_mesh(serial_dir, split_dir, *args)
    elif mode == "png":
        check_png(serial_dir, split_dir, int(args[0]), int(args[1]), args[2])
    else:
        fail(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
