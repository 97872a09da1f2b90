#!/usr/bin/env python3
"""A learned-simulator dataset of randomized dam breaks with pbf.make_dataset, read back as the
learning code would read it (docs/datasets.md; `pbf dataset` is the same from the shell).

Each trajectory is the dam break of scenes/dam_break.json with a box obstacle on the floor: the
water column's width and height, the obstacle's place and width and the fluid's viscosity are
drawn from seeded ranges. The dataset goes to --out in LagrangeBench's HDF5 layout (train.h5,
valid.h5, test.h5, metadata.json) or, with --format gns, the GNS NPZ layout; the domain walls
and the obstacle are boundary particles with their own particle type.

Usage: python3 examples/python/dataset.py [--out data/dam] [--format lagrangebench|gns]
           [--trajectories 10] [--frames 100] [--radius 0.02] [--seed 0] [--jobs N]
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

import pbf

SCENE = Path(__file__).resolve().parents[2] / "scenes" / "dam_break.json"
# the obstacle: a box standing on the floor of the 1.6 x 0.8 x 0.4 m tank
OBSTACLE = {"type": "box", "center": [1.0, 0.1, 0.2], "half_extents": [0.05, 0.1, 0.1]}
VARY = {
    "fluid.blocks[0].max[0]": (0.25, 0.6),  # column width, m
    "fluid.blocks[0].max[1]": (0.3, 0.7),  # column height, m
    "colliders[0].center[0]": (0.8, 1.3),  # where the obstacle stands
    "colliders[0].half_extents[0]": (0.03, 0.1),  # its half width
    "fluid.viscosity": (0.0, 0.005),  # m^2/s
}


def read_back(out, fmt):
    """The train split as the loaders see it: (positions [T, N, 3], particle_type [N]) pairs."""
    if fmt == "lagrangebench":
        import h5py  # type: ignore[import]
        with h5py.File(out / "train.h5", "r") as f:
            return [(f[k]["position"][()], f[k]["particle_type"][()]) for k in f.keys()]
    with np.load(out / "train.npz", allow_pickle=True) as data:
        return [tuple(item) for _, item in data.items()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="data/dam", help="the dataset's folder")
    parser.add_argument("--format", default="lagrangebench", choices=["lagrangebench", "gns"])
    parser.add_argument("--trajectories", type=int, default=10)
    parser.add_argument("--frames", type=int, default=100, help="saved positions each, at 60 fps")
    parser.add_argument("--radius", type=float, default=0.02, help="particle radius, m")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=None, help="processes (default: the cores)")
    args = parser.parse_args(argv)

    meta = pbf.make_dataset(
        [SCENE], args.out, format=args.format, trajectories=args.trajectories,
        frames=args.frames, set={"fluid.particle_radius": args.radius, "colliders": [OBSTACLE]},
        vary=VARY, seed=args.seed, jobs=args.jobs, progress=True)

    out = Path(args.out)
    assert json.loads((out / "metadata.json").read_text()) == json.loads(json.dumps(meta))
    train = read_back(out, args.format)
    x, types = train[0]
    kinds = {int(t): int(np.count_nonzero(types == t)) for t in np.unique(types)}
    print(f"{out}: {len(meta['pbf']['trajectories'])} trajectories, dt {meta['dt']:.5f} s, "
          f"up to {meta['num_particles_max']} particles; train[0]: position {x.shape} "
          f"{x.dtype}, particles per type {kinds} ({meta['particle_types']})")
    print(f"vel_std {np.round(meta['vel_std'], 6).tolist()} m/frame, "
          f"acc_std {np.round(meta['acc_std'], 6).tolist()} m/frame^2 (train split)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
