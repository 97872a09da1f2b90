#!/usr/bin/env python3
"""A learning-style dataset of particle trajectories: many randomized dam breaks, written to
one .npz file with metadata (docs/python.md, "Examples").

Each trajectory is one dam break in the same tank: a water column of random size at a random
side, sometimes with a box obstacle on the floor and an initial push. The file holds, for
trajectory i:

    positions_{i:03d}    float32 (frames + 1, N_i, 3)   m, particle k in row k of every frame
    velocities_{i:03d}   float32 (frames + 1, N_i, 3)   m/s (with --velocities)

and `metadata`, a JSON string: the tank, dt, the particle radius and kernel radius, gravity,
each trajectory's particle count and full scene (load it back with pbf.Scene.from_dict to
re-simulate it exactly), and the mean and standard deviation of the per-frame displacement
(velocity × dt) and its change (acceleration × dt²), the normalisation statistics learned
simulators use. Load it with:

    data = np.load("dataset.npz")
    meta = json.loads(str(data["metadata"]))
    x = data["positions_000"]          # (T, N, 3)

Usage: python3 examples/python/dataset.py [--out dataset.npz] [--trajectories 8]
           [--frames 100] [--radius 0.015] [--seed 0] [--velocities] [--threads N]
"""

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

import numpy as np

import pbf

TANK = ((0.0, 0.0, 0.0), (1.2, 0.8, 0.3))


def random_scene(rng, index, radius, frames, threads):
    """A dam break as a scene dict: the same keys as a scene file (docs/scenes.md)."""
    lo, hi = TANK
    width = rng.uniform(0.2, 0.35)
    height = rng.uniform(0.3, 0.7)
    on_right = rng.random() < 0.5
    x0, x1 = (hi[0] - width, hi[0]) if on_right else (lo[0], lo[0] + width)
    push = rng.uniform(0.0, 1.0) * (-1.0 if on_right else 1.0)
    scene: dict[str, Any] = {
        "name": f"dam_{index:03d}",
        "domain": {"min": list(lo), "max": list(hi)},
        "fluid": {
            "particle_radius": radius,
            "blocks": [{"min": [x0, 0.0, lo[2]], "max": [x1, height, hi[2]],
                        "velocity": [push, 0.0, 0.0]}],
        },
        "solver": {"threads": threads},
        "time": {"fps": 60, "frames": frames, "substeps": 4},
        "output": {"format": []},
    }
    if rng.random() < 0.5:  # an obstacle on the floor, in the middle, clear of the water
        half = [rng.uniform(0.04, 0.1), rng.uniform(0.04, 0.15), rng.uniform(0.05, 0.12)]
        cx = rng.uniform(0.5, 0.7)
        scene["colliders"] = [{"type": "box", "center": [cx, half[1], 0.15],
                               "half_extents": half}]
    return scene


def simulate(scene, velocities):
    """Steps the scene's world for its frames; returns (world, positions, velocities or
    None)."""
    world = pbf.World(scene)
    n = world.particle_count
    x = np.empty((scene.frames + 1, n, 3), np.float32)
    v = np.empty_like(x) if velocities else None
    for frame in range(scene.frames + 1):
        if frame > 0:
            world.step(scene.dt)
        world.positions(out=x[frame])  # straight into the trajectory: no extra copy
        if v is not None:
            world.velocities(out=v[frame])
    return world, x, v


class RunningMoments:
    """Mean and standard deviation per axis over all samples seen (Chan et al.'s merge)."""

    def __init__(self):
        self.count, self.mean, self.m2 = 0, np.zeros(3), np.zeros(3)

    def add(self, samples):
        samples = samples.reshape(-1, 3).astype(np.float64)
        n = len(samples)
        if n == 0:
            return
        mean = samples.mean(axis=0)
        m2 = ((samples - mean) ** 2).sum(axis=0)
        delta = mean - self.mean
        total = self.count + n
        self.mean += delta * n / total
        self.m2 += m2 + delta**2 * self.count * n / total
        self.count = total

    def result(self):
        std = np.sqrt(self.m2 / max(self.count, 1))
        return self.mean.tolist(), std.tolist()


def save_npz(path, arrays):
    """np.savez_compressed to a temporary file beside path, renamed into place: the file is
    complete or absent."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".dataset-", suffix=".npz", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, **arrays)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="dataset.npz", help="the .npz file (default %(default)s)")
    parser.add_argument("--trajectories", type=int, default=8, help="dam breaks (default 8)")
    parser.add_argument("--frames", type=int, default=100, help="frames each, at 60 fps")
    parser.add_argument("--radius", type=float, default=0.015,
                        help="particle radius, m (default 0.015: 600 to 2,500 particles)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--velocities", action="store_true", help="store velocities too")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads, 0 = all")
    args = parser.parse_args(argv)
    if args.trajectories < 1 or args.frames < 1:
        parser.error("--trajectories and --frames must be at least 1")

    rng = np.random.default_rng(args.seed)
    arrays, trajectories = {}, []
    displacement, change = RunningMoments(), RunningMoments()
    world = None
    started = time.perf_counter()
    for i in range(args.trajectories):
        data = random_scene(rng, i, args.radius, args.frames, args.threads)
        scene = pbf.Scene.from_dict(data, source=data["name"])
        t0 = time.perf_counter()
        world, x, v = simulate(scene, args.velocities)
        arrays[f"positions_{i:03d}"] = x
        if v is not None:
            arrays[f"velocities_{i:03d}"] = v
        step = np.diff(x, axis=0)  # per-frame displacement: velocity * dt
        displacement.add(step)
        change.add(np.diff(step, axis=0))  # its change: acceleration * dt^2
        trajectories.append({"key": f"positions_{i:03d}", "particles": int(x.shape[1]),
                             "scene": scene.to_dict()})
        print(f"{scene.name}: {x.shape[1]} particles, {args.frames} frames in "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)

    assert world is not None
    settings = world.settings()  # the same for every trajectory but the blocks and obstacle
    disp_mean, disp_std = displacement.result()
    change_mean, change_std = change.result()
    metadata = {
        "format": "pbf dataset 1",
        "pbf_version": pbf.version(),
        "tank": {"min": list(TANK[0]), "max": list(TANK[1])},
        "dt": scene.dt,
        "frames": args.frames + 1,
        "particle_radius": world.particle_radius,
        "kernel_radius": world.kernel_radius,
        "gravity": list(settings["gravity"]),
        "seed": args.seed,
        "units": "m, s; displacement = x[t+1] - x[t], change = its difference",
        "displacement_mean": disp_mean,
        "displacement_std": disp_std,
        "change_mean": change_mean,
        "change_std": change_std,
        "trajectories": trajectories,
    }
    arrays["metadata"] = np.array(json.dumps(metadata))
    save_npz(args.out, arrays)
    print(f"dataset.py: {args.trajectories} trajectories in {time.perf_counter() - started:.1f} s "
          f"-> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
