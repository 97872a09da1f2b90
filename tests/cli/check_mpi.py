"""Compares a `pbf run` split over MPI ranks with the same run in one process (test_mpi.sh).
Usage: check_mpi.py SERIAL_DIR SPLIT_DIR MODE, MODE one of
  identical  every frame's particles bit for bit the same (one rank)
  physics    every frame: the same particle count and ids, each id once (nothing lost or
             duplicated by migration) and the front (largest x) within 1 %; the mean over the
             frames of the average density error within 10 % (relative)
  ply        the PLY files of the split run (one per frame, MPI-IO) hold, by id, exactly the
             particles of its .pvtu pieces (bit for bit), each id once; against one process's
             PLY the same ids every frame, and positions within 1e-5 m at frames 0 and 1 (later
             frames drift apart by chaos, like the .vtu files)
  iterations stats.csv (error control, solver.target_error > 0): the split run's mean over
             the frames of the iteration count within 10 % of one process's, and the count
             varies over the frames (the error decides it, not a fixed count)
  probes     probes.csv: every frame's heights and levels within 2 mm, fronts within 1 % and forces within
             2 % of the largest force of one process (a rank's share lost or a ghost counted
             twice is tens of percent)
  tool       forces.csv (a free tool): its centre within 3 mm of one process's every frame, and
             the mean over the frames of its vertical force within 3 % (a force summed on one
             rank only, or with the ghosts, moves a free body centimetres off)
  phases     several fluids: every frame, each id's phase (fluid) that of one process (a phase
             lost in migration or in the halo changes a particle's fluid), and each fluid's
             centre of mass within 5 mm of one process's; then the checks of physics
  early      every particle within 1e-5 m of one process's position at frames 1 and 2 (later
             frames drift apart by chaos; two ranks of the plain dam break stay within 3.1e-6 m):
             a value the particles at the cut miss from across it (surface tension's normals
             without their exchange: 2.5e-5 m at frame 2) shows here; then the checks of physics
  solids     the mesh solids (solids.csv) and the fluid they move: every frame the fluid's
             centre of mass within 2 mm of one process's; a static or kinematic mesh at the
             same pose bit for bit, and each mesh's force, averaged over the frames, within 5 %
             of the largest such mean force of one process; a floating body within 10 mm and
             15 degrees of one process's every frame, and its mean vertical force within 2 %
             (a body's force summed on one rank only, or with the ghosts, moves it 2 to 28 cm
             off in 1 s of scenes/floating.json; one process against itself with a body placed
             1e-6 m apart drifts 2.1 mm and 3.5 degrees: the bodies amplify rounding)
  flow       sinks remove particles: every frame the particle count within 0.5 % of one
             process's, each id once, the count plus the removed column of stats.csv the same
             as one process's (the removed count is the whole world's, not a rank's) and the
             centre of mass of the particles both runs still hold within 2 mm (a sink near the
             front removes a few other particles split: 3 of 1500 there move the centre of
             all of them 2.3 mm)
  emit       emitters: every frame the same set of ids as one process's (each id once), and the
             checks of flow
  viscous    the checks of early, and every frame from 1 to 8 the particles' mean distance
             from their positions in one process at most 1e-6 m (the viscosity solve on two
             ranks: 3.8e-7 m at most; without the exchange of its vectors before each product
             2.3e-6 m at frame 2 and 4.1e-5 m at frame 8, while frame 1's largest distance,
             2.9e-6 m, is the same either way)
  diffuse    diffuse particles (spray, foam, bubbles; diffuse_NNNNN.ply, which rank 0 writes from
             every rank's): at frames 0 to 8 (while the fluid of the runs is within about 1e-4 m)
             the same count of each kind as one process's and every particle within 5e-4 m of
             one of the other run's (a rank that spawns from its ghosts doubles particles at the
             cut; ghosts without their owners' velocities or normals move or spawn others);
             every frame the count within 1 % and the centre of mass within 2 mm (later frames
             drift apart by chaos: a spawn count or a kind decided on the other side of its
             threshold); then the checks of physics
  balance    stats.csv of the split run (load balancing, --balance 1.2): the cuts moved at
             least twice; where they moved, the imbalance (max over mean particle count) was
             above 1.2 before and at most 1.1 after; it never stays above 1.2 after a frame
"""
import csv
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtu_read import read_frame, read_ply, read_pvd_parts  # noqa: E402


def read_pvd(path):
    """[(time, path)] of the particles' data sets of a frames.pvd (a scene with meshes also
    names its solids_NNNNN.vtu there)."""
    return [(t, f) for t, part, _, f in read_pvd_parts(path) if part == 0]


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def mean_error(folder):
    with open(os.path.join(folder, "stats.csv")) as f:
        rows = list(csv.DictReader(f))[1:]  # frame 0 has no step
    return sum(float(r["avg_density_error"]) for r in rows) / len(rows), rows


def check_balance(split_dir, threshold=1.2):
    with open(os.path.join(split_dir, "stats.csv")) as f:
        rows = list(csv.DictReader(f))
    moves = [r for r in rows if r["rebalanced"] == "1"]
    for r in rows:
        before, after = float(r["rank_imbalance"]), float(r["rank_imbalance_after"])
        if after > threshold:
            fail(f"frame {r['frame']}: the imbalance stayed at {after} (> {threshold})")
        if r["rebalanced"] == "1" and not (before > threshold and after <= 1.1):
            fail(f"frame {r['frame']}: cuts moved with the imbalance {before} -> {after}")
        if r["rebalanced"] == "0" and before != after:
            fail(f"frame {r['frame']}: the imbalance changed ({before} -> {after}) without a move")
    if len(moves) < 2:
        fail(f"the cuts moved {len(moves)} times over {len(rows) - 1} frames")
    worst = max(float(r["rank_imbalance"]) for r in rows)
    print(f"check_mpi: the cuts moved at {len(moves)} of {len(rows) - 1} frames (frames "
          f"{', '.join(r['frame'] for r in moves)}), "
          f"{sum(int(r['rebalance_migrated']) for r in moves)} particles migrated; imbalance "
          f"before the moves {', '.join(r['rank_imbalance'] for r in moves)}, after "
          f"{', '.join(r['rank_imbalance_after'] for r in moves)}; the largest at any frame "
          f"{worst}")


def check_iterations(serial_dir, split_dir):
    its = []
    for folder in (serial_dir, split_dir):
        with open(os.path.join(folder, "stats.csv")) as f:
            rows = list(csv.DictReader(f))[1:]  # frame 0 has no step
        its.append([int(r["iterations"]) for r in rows])
    mean = [sum(i) / len(i) for i in its]
    print(f"check_mpi: mean iterations per substep {mean[1]:.3f} split, {mean[0]:.3f} in one "
          f"process (split: {min(its[1])} to {max(its[1])} over the frames)")
    if len(set(its[1])) < 2:
        fail(f"the split run's iteration count is {its[1][0]} at every frame: no error control")
    if abs(mean[1] - mean[0]) > 0.1 * mean[0]:
        fail("the mean iteration count is more than 10 % away from one process's")


def read_both(serial_dir, split_dir, name):
    """The CSV file `name` of the one-process run and of the split run, as lists of rows."""
    tables = []
    for folder in (serial_dir, split_dir):
        with open(os.path.join(folder, name)) as f:
            tables.append(list(csv.DictReader(f)))
    return tables


def check_probes(serial_dir, split_dir):
    one, split = read_both(serial_dir, split_dir, "probes.csv")
    if len(one) != len(split) or list(one[0]) != list(split[0]):
        fail("probes.csv: other rows or columns than one process's")
    forces = [c for c in one[0] if c.endswith("_N")]
    largest = max(abs(float(r[c])) for r in one for c in forces)
    worst = {}
    for a, b in zip(one, split):
        for c in a:
            if c in ("frame", "time") or c.endswith("_Pa"):
                continue
            x, y = float(a[c]), float(b[c])
            d = abs(x - y) / largest if c in forces else abs(x - y)
            tol = 0.02 if c in forces else 0.002
            if c.startswith("front"):
                d, tol = abs(x - y) / abs(x), 0.01
            worst[c] = max(worst.get(c, 0.0), d)
            if not d <= tol:
                fail(f"frame {a['frame']}: {c} = {y} split, {x} in one process")
    print("check_mpi: probes at most " + ", ".join(f"{c} {v:.3g}" for c, v in worst.items()) +
          " from one process's (heights in m, fronts and forces relative)")


def check_tool(serial_dir, split_dir):
    one, split = read_both(serial_dir, split_dir, "forces.csv")
    if [r["frame"] for r in one] != [r["frame"] for r in split]:
        fail("forces.csv: other frames than one process's")
    worst = 0.0
    for a, b in zip(one, split):
        d = max(abs(float(a[c]) - float(b[c])) for c in "xyz")
        worst = max(worst, d)
        if d > 0.003:
            fail(f"frame {a['frame']}: the tool is {d} m from one process's (> 3 mm)")
    mean = [sum(float(r["fy"]) for r in t[1:]) / (len(t) - 1) for t in (one, split)]
    print(f"check_mpi: the tool at most {1e3 * worst:.3f} mm from one process's; mean vertical "
          f"force {mean[1]:.4f} N split, {mean[0]:.4f} N in one process")
    if abs(mean[1] - mean[0]) > 0.03 * abs(mean[0]):
        fail("the mean force on the tool is more than 3 % away from one process's")


def centre(frame):
    pts = frame["Points"]
    return [sum(p[k] for p in pts) / len(pts) for k in range(3)]


def check_centre(serial_dir, split_dir, counts=False):
    """The fluid's centre of mass within 2 mm every frame; with counts, the particle count
    within 0.5 %, each id once, and the centre that of the ids both runs hold. Returns the
    largest distance and count difference."""
    worst_c = worst_n = 0.0
    for (_, a), (_, b) in zip(read_pvd(os.path.join(serial_dir, "frames.pvd")),
                              read_pvd(os.path.join(split_dir, "frames.pvd"))):
        fa, fb = read_frame(a), read_frame(b)
        if counts:
            if len(set(fb["id"])) != len(fb["id"]):
                fail(f"{b}: an id is there twice")
            n = abs(len(fb["id"]) - len(fa["id"])) / len(fa["id"])
            worst_n = max(worst_n, n)
            if n > 0.005:
                fail(f"{b}: {len(fb['id'])} particles, {len(fa['id'])} in one process (> 0.5 %)")
        if counts:
            common = set(fa["id"]) & set(fb["id"])
            fa, fb = ({"Points": [p for i, p in zip(f["id"], f["Points"]) if i in common]}
                      for f in (fa, fb))
        d = math.dist(centre(fa), centre(fb))
        worst_c = max(worst_c, d)
        if d > 0.002:
            fail(f"{b}: the fluid's centre of mass is {d} m from one process's (> 2 mm)")
    return worst_c, worst_n


def check_flow(serial_dir, split_dir):
    worst_c, worst_n = check_centre(serial_dir, split_dir, counts=True)
    one, split = read_both(serial_dir, split_dir, "stats.csv")
    for a, b in zip(one, split):
        total = [int(r["particles"]) + int(r["removed"]) for r in (a, b)]
        if total[0] != total[1]:
            fail(f"frame {a['frame']}: particles plus removed {total[1]} split, {total[0]} in one "
                 "process")
    print(f"check_mpi: the particle count at most {100 * worst_n:.3f} % from one process's "
          f"({split[-1]['particles']} and {one[-1]['particles']} at the end, {split[-1]['removed']} "
          f"and {one[-1]['removed']} removed), the centre of mass of the particles both hold at "
          "most "
          f"{1e3 * worst_c:.3f} mm")


def check_emit(serial_dir, split_dir):
    frames = list(zip(read_pvd(os.path.join(serial_dir, "frames.pvd")),
                      read_pvd(os.path.join(split_dir, "frames.pvd"))))
    if not frames:
        fail("no frames")
    for (_, a), (_, b) in frames:
        ia, ib = read_frame(a)["id"], read_frame(b)["id"]
        if len(set(ib)) != len(ib):
            fail(f"{b}: an id is there twice")
        if set(ia) != set(ib):
            fail(f"{b}: {len(set(ib) - set(ia))} ids one process does not have, "
                 f"{len(set(ia) - set(ib))} of its missing")
    print(f"check_mpi: {len(frames)} frames with one process's ids ({len(ia)} at the end)")


def check_solids(serial_dir, split_dir):
    worst_c, _ = check_centre(serial_dir, split_dir)
    one, split = read_both(serial_dir, split_dir, "solids.csv")
    if [r["frame"] for r in one] != [r["frame"] for r in split] or list(one[0]) != list(split[0]):
        fail("solids.csv: other frames or columns than one process's")
    with open(os.path.join(serial_dir, "scene.json")) as f:
        motions = [m.get("motion", "static") for m in json.load(f)["meshes"]]
    means = [[[sum(float(r[f"m{k}_f{c}"]) for r in t[1:]) / (len(t) - 1) for c in "xyz"]
              for k in range(len(motions))] for t in (one, split)]
    largest = max(math.hypot(*f) for f in means[0])
    report = []
    for k, motion in enumerate(motions):
        force = math.dist(means[0][k], means[1][k])
        if motion != "floating":
            pose = [f"m{k}_{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz")]
            for a, b in zip(one, split):
                if any(a[c] != b[c] for c in pose):
                    fail(f"frame {a['frame']}: mesh {k} ({motion}) is not at one process's pose")
            report.append(f"mesh {k} ({motion}): the same pose, mean force "
                          f"{100 * force / largest:.2f} % of the largest apart")
            if force > 0.05 * largest:
                fail(f"mesh {k}: its mean force {means[1][k]} N split, {means[0][k]} N in one "
                     "process (> 5 % of the largest)")
            continue
        worst_x = worst_q = 0.0
        for a, b in zip(one, split):
            d = math.dist(*([float(r[f"m{k}_{c}"]) for c in "xyz"] for r in (a, b)))
            qa, qb = ([float(r[f"m{k}_q{c}"]) for c in "wxyz"] for r in (a, b))
            q = 2.0 * math.degrees(math.acos(min(1.0, abs(sum(u * v for u, v in zip(qa, qb))))))
            worst_x, worst_q = max(worst_x, d), max(worst_q, q)
            if d > 0.010 or q > 15.0:
                fail(f"frame {a['frame']}: body {k} is {1e3 * d:.2f} mm and {q:.2f} degrees from "
                     "one process's (> 10 mm or 15 degrees)")
        fy = [means[t][k][1] for t in (0, 1)]
        report.append(f"body {k}: at most {1e3 * worst_x:.2f} mm and {worst_q:.2f} degrees apart, "
                      f"mean vertical force {fy[1]:.4f} N split, {fy[0]:.4f} N in one process")
        if abs(fy[1] - fy[0]) > 0.02 * abs(fy[0]):
            fail(f"body {k}: its mean vertical force is more than 2 % from one process's")
    print(f"check_mpi: the fluid's centre of mass at most {1e3 * worst_c:.3f} mm from one "
          "process's; " + "; ".join(report))


def by_id(frame):
    return {i: (p, v, d) for i, p, v, d in
            zip(frame["id"], frame["Points"], frame["velocity"], frame["density"])}


def check_ply(serial_dir, split_dir):
    split = read_pvd(os.path.join(split_dir, "frames.pvd"))
    worst = [0.0, 0.0]
    for k, (_, pvtu) in enumerate(split):
        name = f"frame_{k:05d}.ply"
        ply = read_ply(os.path.join(split_dir, name))
        if len(set(ply["id"])) != len(ply["id"]):
            fail(f"{name}: an id is there twice")
        if by_id(ply) != by_id(read_frame(pvtu)):
            fail(f"{name}: not the particles of {os.path.basename(pvtu)}")
        one = by_id(read_ply(os.path.join(serial_dir, name)))
        mine = by_id(ply)
        if set(one) != set(mine):
            fail(f"{name}: other ids than one process's")
        if k <= 1:
            d = max(abs(a - b) for i in one for a, b in zip(one[i][0], mine[i][0]))
            worst[k] = d
            if d > 1e-5:
                fail(f"{name}: a particle {d} m from one process's (> 1e-5 m)")
    print(f"check_mpi: {len(split)} PLY frames equal the .pvtu pieces; positions at most "
          f"{worst[0]:.3g} m (frame 0) and {worst[1]:.3g} m (frame 1) from one process's")


def check_phases(name, fa, fb):
    """Each id's phase as one process's; returns the largest distance between a fluid's centres
    of mass (m), failing past 5 mm."""
    if "phase" not in fa or "phase" not in fb:
        fail(f"{name}: no phase array (a scene with several fluids writes one)")
    if fa["phase"] != fb["phase"]:
        moved = sum(1 for x, y in zip(fa["phase"], fb["phase"]) if x != y)
        fail(f"{name}: {moved} particles changed their fluid")
    worst = 0.0
    for phase in sorted(set(fa["phase"])):
        centres = []
        for f in (fa, fb):
            pts = [p for p, k in zip(f["Points"], f["phase"]) if k == phase]
            centres.append([sum(c) / len(pts) for c in zip(*pts)])
        d = max(abs(a - b) for a, b in zip(*centres))
        if d > 5e-3:
            fail(f"{name}: fluid {phase}'s centre of mass {d * 1e3:.3f} mm from one process's")
        worst = max(worst, d)
    return worst


def read_diffuse(path):
    """A diffuse_NNNNN.ply (include/pbf/export.h): [(x, y, z, kind)]."""
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].split(b"\n")
    n = int([l for l in header if l.startswith(b"element vertex")][0].split()[2])
    out = []
    for i in range(n):
        x, y, z, _, _, _, kind, _ = struct.unpack_from("<6fBf", data, end + 29 * i)
        out.append((x, y, z, kind))
    return out


def farthest(a, b, cell=1e-3):
    """The largest distance from a particle of a to the nearest particle of b of its kind (m),
    through a grid of `cell`; infinity when one has none within two cells."""
    grid = {}
    for x, y, z, k in b:
        grid.setdefault((k, int(x // cell), int(y // cell), int(z // cell)), []).append((x, y, z))
    worst = 0.0
    for x, y, z, k in a:
        ix, iy, iz = int(x // cell), int(y // cell), int(z // cell)
        best = math.inf
        for dx in (-2, -1, 0, 1, 2):
            for dy in (-2, -1, 0, 1, 2):
                for dz in (-2, -1, 0, 1, 2):
                    for q in grid.get((k, ix + dx, iy + dy, iz + dz), ()):
                        best = min(best, math.dist((x, y, z), q))
        worst = max(worst, best)
    return worst


def check_diffuse(serial_dir, split_dir, exact_frames=9):
    frames = len(read_pvd(os.path.join(serial_dir, "frames.pvd")))
    worst = worst_centre = worst_count = 0.0
    for k in range(frames):
        name = f"diffuse_{k:05d}.ply"
        a = read_diffuse(os.path.join(serial_dir, name))
        b = read_diffuse(os.path.join(split_dir, name))
        if k < exact_frames:
            kinds_a = [sum(1 for p in a if p[3] == kind) for kind in (0, 1, 2)]
            kinds_b = [sum(1 for p in b if p[3] == kind) for kind in (0, 1, 2)]
            if kinds_a != kinds_b:
                fail(f"{name}: {kinds_b} spray, foam and bubbles split, {kinds_a} in one process")
            d = max(farthest(a, b), farthest(b, a)) if a else 0.0
            worst = max(worst, d)
            if d > 5e-4:
                fail(f"{name}: a particle {d:.3g} m from any of the other run's (> 5e-4 m)")
        if abs(len(a) - len(b)) > 0.01 * len(a):
            fail(f"{name}: {len(b)} diffuse particles split, {len(a)} in one process (> 1 %)")
        if a:
            worst_count = max(worst_count, abs(len(a) - len(b)) / len(a))
            ca = [sum(c) / len(a) for c in list(zip(*a))[:3]]
            cb = [sum(c) / len(b) for c in list(zip(*b))[:3]]
            d = max(abs(x - y) for x, y in zip(ca, cb))
            worst_centre = max(worst_centre, d)
            if d > 2e-3:
                fail(f"{name}: the diffuse particles' centre {d * 1e3:.3f} mm from one process's")
    print(f"check_mpi: frames 0 to {exact_frames - 1} the same diffuse counts of each kind as one "
          f"process, every particle within {worst:.3g} m of one of the other run's; over the "
          f"{frames} frames the count at most {100 * worst_count:.2f} % and the centre "
          f"{1e3 * worst_centre:.3f} mm from one process's ({len(b)} against {len(a)} at the end)")


def main():
    serial_dir, split_dir, mode = sys.argv[1:4]
    if mode == "ply":
        check_ply(serial_dir, split_dir)
        return
    if mode == "balance":
        check_balance(split_dir)
        return
    if mode == "tool":
        check_tool(serial_dir, split_dir)
        return
    if mode == "solids":
        check_solids(serial_dir, split_dir)
        return
    if mode == "flow":
        check_flow(serial_dir, split_dir)
        return
    if mode == "emit":
        check_emit(serial_dir, split_dir)
        check_flow(serial_dir, split_dir)
        return
    if mode == "probes":
        check_probes(serial_dir, split_dir)
        return
    if mode == "iterations":
        check_iterations(serial_dir, split_dir)
        return
    if mode == "diffuse":
        check_diffuse(serial_dir, split_dir)
        mode = "physics"
    serial = read_pvd(os.path.join(serial_dir, "frames.pvd"))
    split = read_pvd(os.path.join(split_dir, "frames.pvd"))
    if len(serial) != len(split):
        fail(f"{len(split)} frames split, {len(serial)} in one process")
    worst_front = worst_centre = worst_early = worst_mean = 0.0
    for frame, ((t1, a), (t2, b)) in enumerate(zip(serial, split)):
        if abs(t1 - t2) > 1e-6:  # a resumed run's series has the nominal times k / fps
            fail(f"{b}: time {t2}, {t1} in one process")
        fa, fb = read_frame(a), read_frame(b)
        if len(set(fb["id"])) != len(fb["id"]):
            fail(f"{b}: an id is there twice")
        if fb["id"] != fa["id"]:
            fail(f"{b}: {len(fb['id'])} particles, {len(fa['id'])} in one process, or other ids")
        if mode == "phases":
            worst_centre = max(worst_centre, check_phases(b, fa, fb))
        if mode == "viscous" and 1 <= frame <= 8:
            d = sum(max(abs(x - y) for x, y in zip(p, q))
                    for p, q in zip(fa["Points"], fb["Points"])) / len(fa["Points"])
            worst_mean = max(worst_mean, d)
            if d > 1e-6:
                fail(f"{b}: the particles {d:.3g} m from one process's on average (> 1e-6 m)")
        if mode in ("early", "viscous") and 1 <= frame <= 2:
            d = max(abs(x - y) for p, q in zip(fa["Points"], fb["Points"]) for x, y in zip(p, q))
            worst_early = max(worst_early, d)
            if d > 1e-5:
                fail(f"{b}: a particle {d:.3g} m from one process's (> 1e-5 m)")
        if mode in ("physics", "phases", "early", "viscous"):
            front_a = max(p[0] for p in fa["Points"])
            front_b = max(p[0] for p in fb["Points"])
            worst_front = max(worst_front, abs(front_b - front_a) / front_a)
            if abs(front_b - front_a) > 0.01 * front_a:
                fail(f"{b}: the front is at {front_b} m, {front_a} m in one process (> 1 %)")
        if mode == "identical":
            for name in ("Points", "velocity", "density", "phase"):
                if fa.get(name) != fb.get(name):
                    fail(f"{b}: {name} differs from one process")
    if mode == "phases":
        print(f"check_mpi: every id kept its fluid; the fluids' centres of mass at most "
              f"{1e3 * worst_centre:.3f} mm from one process's")
    if mode in ("early", "viscous"):
        print(f"check_mpi: frames 1 and 2 at most {worst_early:.3g} m from one process's")
    if mode == "viscous":
        print(f"check_mpi: frames 1 to 8 at most {worst_mean:.3g} m from one process's on "
              f"average")
    if mode in ("physics", "phases", "early", "viscous"):
        err_a, _ = mean_error(serial_dir)
        err_b, _ = mean_error(split_dir)
        print(f"check_mpi: last front {front_b:.4f} m split, {front_a:.4f} m in one process "
              f"(at most {100 * worst_front:.3f} % apart over the frames); mean density error "
              f"{100 * err_b:.4f} %, {100 * err_a:.4f} %")
        if abs(err_b - err_a) > 0.1 * err_a:
            fail("the mean density error is more than 10 % away from one process's")
    print(f"check_mpi: {len(split)} frames of {len(fb['id'])} particles agree ({mode})")


if __name__ == "__main__":
    main()
