"""Checks for the Blender add-on (tests/blender/test_blender.sh), run with Debian's python3.

    check_blender.py readers RUN_DIR          the add-on's file readers, outside Blender
    check_blender.py summary OUT RUN_DIR      the `pbf_blender: {json}` line in OUT vs the files
    check_blender.py picture PNG [--solids]   a render: not blank, water where it belongs
    check_blender.py falls PNG_EARLY PNG_LATE the water moved down the picture, not sideways

Each prints what it measured and exits 1 with the reason on the first failed check.
"""

import glob
import json
import os
import re
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "blender"))


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(ok, msg):
    if not ok:
        fail(msg)


def header(path):
    """(header lines, byte offset of the body) of a PLY file, read with plain Python."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    return data[:end].decode("ascii").splitlines(), data[end:]


def count(path, element):
    for line in header(path)[0]:
        w = line.split()
        if w[:2] == ["element", element]:
            return int(w[2])
    fail("%s: no element %s" % (path, element))


def files(run, kind):
    return sorted(glob.glob(os.path.join(run, "%s_[0-9]*.ply" % kind)))


def readers(run):
    from pbf_blender import run_folder

    folder = run_folder.RunFolder(run)
    for kind in ("frame", "surface", "solids", "diffuse"):
        check(len(folder.files[kind]) == len(files(run, kind)),
              "%s: %d files found, %d on disk" % (kind, len(folder.files[kind]),
                                                  len(files(run, kind))))
    last = files(run, "frame")[-1]
    p = run_folder.read_particles(last)
    # the same file decoded by hand: 8 x 4-byte values per particle (+ phase)
    lines, body = header(last)
    n = count(last, "vertex")
    stride = 36 if "property int phase" in lines else 32
    raw = [struct.unpack_from("<7fi", body, i * stride) for i in range(n)]
    xyz = np.array([r[:3] for r in raw], np.float32)
    vel = np.array([r[3:6] for r in raw], np.float32)
    check(p["position"].shape == (n, 3), "positions: shape %s for %d particles"
          % (p["position"].shape, n))
    # y-up to z-up: Blender's (x, y, z) is pbf's (x, -z, y)
    check(np.array_equal(p["position"][:, 0], xyz[:, 0]) and
          np.array_equal(p["position"][:, 1], -xyz[:, 2]) and
          np.array_equal(p["position"][:, 2], xyz[:, 1]), "positions not (x, -z, y)")
    check(np.array_equal(p["velocity"], np.stack((vel[:, 0], -vel[:, 2], vel[:, 1]), 1)),
          "velocities not (vx, -vz, vy)")
    check(np.array_equal(p["density"], np.array([r[6] for r in raw], np.float32)), "densities")
    check(sorted(p["id"].tolist()) == list(range(n)), "ids are not 0..%d" % (n - 1))
    # gravity is -y in pbf: the water's lowest particles sit near Blender's z = 0
    check(abs(float(p["position"][:, 2].min())) < 0.1, "lowest particle at z = %g"
          % p["position"][:, 2].min())
    print("readers: %d particles in %s, attributes %s" % (n, os.path.basename(last),
                                                           sorted(p)))
    if files(run, "surface"):
        s = run_folder.read_surface(files(run, "surface")[-1])
        check(len(s["triangles"]) == count(files(run, "surface")[-1], "face"), "triangles")
        check(len(s["normal"]) == len(s["position"]), "normals")
        check(s["triangles"].min() >= 0 and s["triangles"].max() < len(s["position"]), "corners")
        print("readers: surface %d vertices, %d triangles" % (len(s["position"]),
                                                              len(s["triangles"])))
        for obj in sorted(glob.glob(os.path.join(run, "surface_[0-9]*.obj"))):
            # the same surface written as OBJ (`pbf mesh --mesh-format obj`) reads the same
            o = run_folder.read_surface(obj)
            p_ = run_folder.read_surface(obj[:-4] + ".ply")
            check(np.array_equal(o["triangles"], p_["triangles"]), "%s: triangles" % obj)
            err = float(np.abs(o["position"] - p_["position"]).max())
            check(err < 1e-5, "%s: positions differ from the PLY's by %g" % (obj, err))
            check(float(np.abs(o["normal"] - p_["normal"]).max()) < 1e-5, "%s: normals" % obj)
            print("readers: %s reads as its PLY (positions within %.1g m)"
                  % (os.path.basename(obj), err))
    if files(run, "solids"):
        first, last_s = (run_folder.read_solids(f) for f in (files(run, "solids")[0],
                                                              files(run, "solids")[-1]))
        solids = len([ln for ln in header(files(run, "solids")[0])[0]
                      if ln.startswith("comment solid ")])
        check(len(first["poses"]) == solids, "%d poses, %d comment lines"
              % (len(first["poses"]), solids))
        # each body's vertices in its own frame, R^T (x - p) with the converted pose, are the
        # same in the first and the last file: the pose convention (w x y z, body to world)
        # and its conversion to z-up hold
        from pbf_blender.run_folder import body_frame
        moved = 0.0
        for pose0, pose1 in zip(first["poses"], last_s["poses"]):
            i = pose0["index"]
            tri = first["triangles"][first["solid"] == i]
            used = np.unique(tri)
            a = body_frame(first["position"][used], pose0)
            b = body_frame(last_s["position"][used], pose1)
            err = float(np.abs(a - b).max())
            check(err < 1e-4, "solid %d: body-frame vertices move by %g between the first and "
                  "last file" % (i, err))
            moved = max(moved, float(np.abs(first["position"][used] -
                                            last_s["position"][used]).max()))
        check(moved > 1e-3, "the solids did not move (%g m): the pose check proves nothing"
              % moved)
        print("readers: %d solids, world vertices moved up to %.4f m, body frames agree"
              % (solids, moved))
    if files(run, "diffuse"):
        d = run_folder.read_diffuse(files(run, "diffuse")[-1])
        check(len(d["kind"]) == count(files(run, "diffuse")[-1], "vertex"), "diffuse count")
        check(set(d["kind"].tolist()) <= {0, 1, 2}, "diffuse kinds %s" % set(d["kind"].tolist()))
    # a folder with no frames: an error naming it; with VTK frames only: a hint
    empty = os.path.join(run, "empty_sub")
    os.makedirs(empty, exist_ok=True)
    for extra in ("", "frame_00000.vtk"):
        if extra:
            open(os.path.join(empty, extra), "w").close()
        try:
            run_folder.RunFolder(empty)
            fail("a folder with no frames was accepted")
        except run_folder.RunError as e:
            check(empty in str(e) and "frame_NNNNN.ply" in str(e), "message: %s" % e)
            check(not extra or "--format ply" in str(e), "no hint to --format ply: %s" % e)
            print("readers: %s: %s" % ("VTK frames only" if extra else "empty folder", e))
    # a truncated particle file: an error naming it
    cut = os.path.join(empty, "frame_00001.ply")
    with open(last, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[: len(data) - 7])
    try:
        run_folder.read_particles(cut)
        fail("a truncated particle file was read")
    except ValueError as e:
        check(cut in str(e) and "truncated" in str(e), "message: %s" % e)
        print("readers: truncated file: %s" % e)


def summary(out, run):
    lines = [ln for ln in open(out, encoding="utf-8", errors="replace").read().splitlines()
             if ln.startswith("pbf_blender:")]
    check(len(lines) == 1, "%d lines start with 'pbf_blender:' (expected exactly one)"
          % len(lines))
    s = json.loads(lines[0][len("pbf_blender:"):])
    frame = s["frame"]
    particle_file = os.path.join(run, "frame_%05d.ply" % frame)
    want = {
        "frames": len(files(run, "frame")),
        "surfaces": len(files(run, "surface")),
        "diffuse": len(files(run, "diffuse")),
        "particles": count(particle_file, "vertex"),
        "solids": 0,
    }
    if files(run, "solids"):
        want["solids"] = len([ln for ln in header(files(run, "solids")[0])[0]
                              if ln.startswith("comment solid ")])
    if want["surfaces"]:
        want["surface_triangles"] = count(os.path.join(run, "surface_%05d.ply" % frame), "face")
    if want["diffuse"]:
        want["diffuse_particles"] = count(os.path.join(run, "diffuse_%05d.ply" % frame), "vertex")
    for key, value in want.items():
        check(s.get(key) == value, "%s: the add-on says %s, the files %s" % (key, s.get(key),
                                                                             value))
    attributes = {"velocity", "speed", "density", "id"}
    if "property int phase" in header(particle_file)[0]:
        attributes.add("phase")
    check(set(s["attributes"]) == attributes, "attributes %s, expected %s"
          % (s["attributes"], sorted(attributes)))
    print("summary: " + ", ".join("%s %s" % (k, s[k]) for k in sorted(want)))
    return s


def load(png):
    from PIL import Image
    img = np.asarray(Image.open(png).convert("RGB"), np.float64)
    return img


def water_mask(img):
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    return (b > r + 30) & (b > g + 5)   # blue: neither the grey floor and sky nor the brown solids


def picture(png, solids=False):
    img = load(png)
    h, w, _ = img.shape
    lum = img.mean(axis=2)
    check(lum.std() > 8, "%s: blank picture (luminance spread %.1f)" % (png, lum.std()))
    water = water_mask(img)
    frac = water.mean()
    check(frac > 0.02, "%s: %.2f%% water-coloured pixels (expected > 2%%)" % (png, 100 * frac))
    rows, cols = np.nonzero(water)
    print("picture: %dx%d, %.1f%% water pixels, centroid at (%.0f%%, %.0f%%) of width, height"
          % (w, h, 100 * frac, 100 * cols.mean() / w, 100 * rows.mean() / h))
    if solids:
        r, g, b = img[..., 0], img[..., 1], img[..., 2]
        wood = (r > b + 30) & (r > g + 5)
        check(wood.mean() > 0.002, "%s: no solid-coloured pixels" % png)
        # floating bodies ride on the water: their pixels' centre is above the water's
        wr = np.nonzero(wood)[0].mean()
        check(wr < rows.mean(), "solids' centroid row %.0f is below the water's %.0f"
              % (wr, rows.mean()))
        print("picture: %.1f%% solid pixels, centroid row %.0f above the water's %.0f"
              % (100 * wood.mean(), wr, rows.mean()))
    return img


def falls(early, late):
    a, b = load(early), load(late)
    h, w, _ = a.shape
    ya, xa = (c.mean() for c in np.nonzero(water_mask(a)))
    yb, xb = (c.mean() for c in np.nonzero(water_mask(b)))
    print("falls: water centroid moved %.1f%% of the height down and %.1f%% of the width "
          "across" % (100 * (yb - ya) / h, 100 * (xb - xa) / w))
    # image rows grow downwards: falling water moves to larger rows
    check((yb - ya) / h > 0.1, "the water moved %.1f%% of the height down (expected > 10%%)"
          % (100 * (yb - ya) / h))
    check(abs(xb - xa) < 0.5 * (yb - ya), "the water moved sideways (%.0f px) as much as down "
          "(%.0f px)" % (xb - xa, yb - ya))


def main(argv):
    if len(argv) < 2:
        fail(__doc__)
    cmd, args = argv[0], argv[1:]
    if cmd == "readers":
        readers(args[0])
    elif cmd == "summary":
        summary(args[0], args[1])
    elif cmd == "picture":
        picture(args[0], solids="--solids" in args)
    elif cmd == "falls":
        falls(args[0], args[1])
    else:
        fail("unknown check '%s'" % cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
