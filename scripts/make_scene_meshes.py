#!/usr/bin/env python3
"""Writes the meshes of the shipped scenes (scenes/meshes/), made by the project:

  pier.obj     a round pier with a conical top: a 24-sided prism of radius 7 cm from y = -2 cm
               to 30 cm, a cone to 42 cm, closed at the bottom (96 triangles, outward faces)
  baffle.stl   a plate 8 mm thick (thinner than two particle radii of scenes/obstacle.json),
               25 cm wide and 20 cm high, as an ASCII STL (12 triangles)
  crate.obj    a box 12 x 8 x 12 cm (12 triangles)
  hull.obj     a barge's hull: a flat bottom 24 x 6 cm widening to a deck 30 x 12 cm, 6 cm
               high (12 triangles)
  glass.obj    a drinking glass with walls: outside radius 4.6 cm, inside 4 cm (walls 6 mm),
               13 cm high, a bottom 1 cm thick, open at the top; a closed solid of revolution
               with 48 sides (384 triangles)
  gate.obj     the unit box [0, 1]^3 (12 triangles): scaled to a thin plate, the lifting gate of
               the validation scenes (scenes/validation/*_gate.json)

Usage: python3 scripts/make_scene_meshes.py [out_dir]     (default scenes/meshes)
The files are in the repository; run this again only to change them.
"""
import math
import os
import sys


def pier():
    n, radius, bottom, top, apex = 24, 0.07, -0.02, 0.30, 0.42
    v = []
    for k in range(n):
        a = 2.0 * math.pi * k / n
        x, z = radius * math.cos(a), radius * math.sin(a)
        v.append((x, bottom, z))
        v.append((x, top, z))
    v.append((0.0, bottom, 0.0))  # bottom centre
    v.append((0.0, apex, 0.0))    # apex
    c_bottom, c_apex = 2 * n, 2 * n + 1
    t = []
    for k in range(n):
        b0, t0 = 2 * k, 2 * k + 1
        b1, t1 = 2 * ((k + 1) % n), 2 * ((k + 1) % n) + 1
        # one orientation for all (each shared edge runs both ways); outward() below turns
        # them all round if they point in
        t.append((b0, t0, t1))
        t.append((b0, t1, b1))
        t.append((t0, c_apex, t1))
        t.append((b0, b1, c_bottom))
    return v, t


def box(lo, hi):
    v = [((hi[0] if c & 1 else lo[0]), (hi[1] if c & 2 else lo[1]), (hi[2] if c & 4 else lo[2]))
         for c in range(8)]
    quads = [(0, 4, 6, 2), (1, 3, 7, 5), (0, 1, 5, 4), (2, 6, 7, 3), (0, 2, 3, 1), (4, 5, 7, 6)]
    t = []
    for q in quads:
        t.append((q[0], q[1], q[2]))
        t.append((q[0], q[2], q[3]))
    return v, t


def hexahedron(bottom, top):
    """Corners in the order of box(): bottom (y = 0) and top faces, each (x0, x1, z0, z1, y)."""
    v = []
    for c in range(8):
        x0, x1, z0, z1, y = top if c & 2 else bottom
        v.append((x1 if c & 1 else x0, y, z1 if c & 4 else z0))
    return v, box((0, 0, 0), (1, 1, 1))[1]


def revolve(profile, n):
    """The closed surface swept by a profile of (radius, y) points turned about the y axis in n
    steps; a point of radius 0 (an end on the axis) becomes one vertex."""
    v, ring = [], []
    for r, y in profile:
        if r == 0.0:
            ring.append([len(v)] * n)
            v.append((0.0, y, 0.0))
        else:
            ring.append(list(range(len(v), len(v) + n)))
            for k in range(n):
                a = 2.0 * math.pi * k / n
                v.append((r * math.cos(a), y, r * math.sin(a)))
    t = []
    for j in range(len(profile) - 1):
        p, q = ring[j], ring[j + 1]
        for k in range(n):
            k1 = (k + 1) % n
            a, b, c, d = p[k], q[k], q[k1], p[k1]
            if a == d:            # p is on the axis: a fan round it
                t.append((a, b, c))
            elif b == c:          # q is on the axis
                t.append((a, b, d))
            else:
                t.append((a, b, c))
                t.append((a, c, d))
    return v, t


def signed_volume(v, t):
    s = 0.0
    for a, b, c in t:
        (ax, ay, az), (bx, by, bz), (cx, cy, cz) = v[a], v[b], v[c]
        s += ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx)
    return s / 6.0


def outward(v, t):
    return t if signed_volume(v, t) > 0 else [(a, c, b) for a, b, c in t]


def write_obj(path, v, t, comment):
    with open(path + ".tmp", "w") as f:
        f.write("# %s\n# written by scripts/make_scene_meshes.py\n" % comment)
        for p in v:
            f.write("v %.6f %.6f %.6f\n" % p)
        for a, b, c in t:
            f.write("f %d %d %d\n" % (a + 1, b + 1, c + 1))
    os.replace(path + ".tmp", path)


def write_stl(path, v, t, name):
    with open(path + ".tmp", "w") as f:
        f.write("solid %s\n" % name)
        for tri in t:
            a, b, c = (v[i] for i in tri)
            u = [b[k] - a[k] for k in range(3)]
            w = [c[k] - a[k] for k in range(3)]
            n = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]]
            ln = math.sqrt(sum(x * x for x in n)) or 1.0
            f.write("facet normal %.6f %.6f %.6f\n outer loop\n" % tuple(x / ln for x in n))
            for p in (a, b, c):
                f.write("  vertex %.6f %.6f %.6f\n" % p)
            f.write(" endloop\nendfacet\n")
        f.write("endsolid %s\n" % name)
    os.replace(path + ".tmp", path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "scenes", "meshes")
    os.makedirs(out, exist_ok=True)
    v, t = pier()
    write_obj(os.path.join(out, "pier.obj"), v, outward(v, t), "a round pier with a conical top")
    v, t = box((-0.125, 0.0, -0.004), (0.125, 0.2, 0.004))
    write_stl(os.path.join(out, "baffle.stl"), v, outward(v, t), "baffle")
    v, t = box((-0.06, -0.04, -0.06), (0.06, 0.04, 0.06))
    write_obj(os.path.join(out, "crate.obj"), v, outward(v, t), "a crate")
    v, t = hexahedron((-0.12, 0.12, -0.03, 0.03, -0.03), (-0.15, 0.15, -0.06, 0.06, 0.03))
    write_obj(os.path.join(out, "hull.obj"), v, outward(v, t), "a barge's hull")
    # the profile runs round the glass's wall: bottom, outside, rim, inside, inner floor
    v, t = revolve([(0.0, 0.0), (0.046, 0.0), (0.046, 0.13), (0.04, 0.13), (0.04, 0.01),
                    (0.0, 0.01)], 48)
    write_obj(os.path.join(out, "glass.obj"), v, outward(v, t), "a drinking glass")
    v, t = box((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    write_obj(os.path.join(out, "gate.obj"), v, outward(v, t), "a unit box: the lifting gate")


if __name__ == "__main__":
    main()
