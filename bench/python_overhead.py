#!/usr/bin/env python3
"""The cost of stepping from Python: World.step against `pbf bench` (docs/python.md).

Runs `pbf bench --particles N` for its particle radius and ms per step, then builds the same
world through Python (the built-in dam break at that radius, 4 iterations, 1 substep: what
`pbf bench` runs) and times every World.step call with a wall clock. Two figures:

  overhead   per step, the wall time of World.step minus the library's own time of that step
             (Profile.step_ms, measured inside pbf_world_step): argument conversion, the GIL
             released and taken back. This is the binding's cost, measured on the same steps.
  vs bench   the median ms per step through Python against `pbf bench`'s median (two processes
             one after the other: machine noise shows here, not in the overhead).

Usage: build/python-venv/bin/python bench/python_overhead.py [--pbf build/pbf]
           [--particles 10000] [--steps 50] [--warmup 3] [--threads N] [--repeats 3]
Prints a table; timings are for bench/, never for pass/fail tests.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time

import pbf


def pbf_bench(cli, particles, steps, warmup, threads):
    """`pbf bench` at one size: (particle radius, median ms, min ms, particles)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.csv")
        cmd = [cli, "bench", "--particles", str(particles), "--steps", str(steps), "--warmup",
               str(warmup), "--csv", out]
        if threads is not None:
            cmd += ["--threads", str(threads)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out, newline="") as f:
            row = next(csv.DictReader(f))
    return (float(row["particle_radius"]), float(row["ms_median"]), float(row["ms_min"]),
            int(row["particles"]))


def python_steps(radius, steps, warmup, threads):
    """The same world through Python: per step (wall ms of World.step, library step_ms)."""
    sets = {"fluid.particle_radius": radius, "solver.iterations": 4, "time.substeps": 1}
    if threads is not None:
        sets["solver.threads"] = threads
    # pbf bench runs the scene unchecked at 1 substep; so does this
    scene = pbf.Scene.default(sets, check=False)
    world = pbf.World(scene)
    dt = scene.dt
    wall, lib = [], []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        world.step(dt)
        t1 = time.perf_counter()
        if i >= warmup:
            wall.append(1000.0 * (t1 - t0))
            lib.append(world.profile().step_ms)
    return world.particle_count, wall, lib


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--pbf", default=os.path.join(here, "..", "build", "pbf"),
                        help="the pbf command (default build/pbf)")
    parser.add_argument("--particles", type=int, default=10000)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None,
                        help="CPU threads (default: all, as pbf bench)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="alternate pbf bench and Python this many times")
    args = parser.parse_args(argv)

    print(f"pbf {pbf.version()}, {pbf.backend_info('cpu')}; {args.steps} timed steps after "
          f"{args.warmup} warm-up, {args.repeats} repeats")
    print(f"{'run':>4} {'particles':>9} {'bench ms':>9} {'python ms':>9} {'lib ms':>8} "
          f"{'overhead us':>11} {'overhead %':>10} {'python/bench':>12}")
    overheads, ratios = [], []
    for run in range(args.repeats):
        radius, bench_med, _, n_bench = pbf_bench(args.pbf, args.particles, args.steps,
                                                  args.warmup, args.threads)
        n, wall, lib = python_steps(radius, args.steps, args.warmup, args.threads)
        if n != n_bench:
            sys.exit(f"python_overhead.py: {n} particles through Python, {n_bench} in pbf bench")
        extra = [w - l for w, l in zip(wall, lib)]  # ms
        over_us = 1000.0 * statistics.median(extra)
        py_med, lib_med = statistics.median(wall), statistics.median(lib)
        share = 100.0 * statistics.median(e / l for e, l in zip(extra, lib))
        overheads.append(share)
        ratios.append(py_med / bench_med)
        print(f"{run + 1:>4} {n:>9} {bench_med:>9.3f} {py_med:>9.3f} {lib_med:>8.3f} "
              f"{over_us:>11.1f} {share:>10.3f} {py_med / bench_med:>12.3f}")
    print(f"median overhead {statistics.median(overheads):.3f} % of the step; Python's median "
          f"step / pbf bench's: {statistics.median(ratios):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
