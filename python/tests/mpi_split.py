"""Run by test_mpi.py under `mpirun -n N`: the coarse dam break split over the ranks, stepped
EARLY steps and gathered, then to STEPS in all, gathered and reduced. Every rank writes what it
sees to OUT/rank_R.npz, rank 0 also the gathered world to OUT/gather.npz (after STEPS) and
OUT/early.npz (after EARLY).

Usage: mpirun -n N python mpi_split.py SCENE OUT EARLY STEPS [mpi4py]
(mpi4py: split over mpi4py's COMM_WORLD, which mpi4py started, instead of MPI_COMM_WORLD started
by pbf.)"""

import sys
from pathlib import Path

import numpy as np

import pbf

scene_path, out = sys.argv[1], Path(sys.argv[2])
early, steps = int(sys.argv[3]), int(sys.argv[4])
comm = None
if sys.argv[5:] == ["mpi4py"]:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
scene = pbf.Scene.load(scene_path, {"fluid.particle_radius": 0.02, "solver.threads": 1})
world = pbf.World(scene)
rank, ranks = pbf.mpi_rank(), pbf.mpi_size()

# refusals before the split, the same on every rank (no rank waits in a collective call)
errors = []
try:
    world.split(comm="MPI_COMM_WORLD")
except TypeError as e:
    errors.append(str(e))
try:
    world.split(cuts=[0.0])
except ValueError as e:
    errors.append(str(e))
assert world.slab() is None and world.cuts() is None and world.halo() is None, "split too early"

world.split(comm)
slab, cuts = world.slab(), world.cuts()
assert slab is not None and cuts is not None, "the world is split: it has a slab and cuts"
world.step(scene.dt, early)
early_hash = world.hash()
# the same world split at these cuts (as a resumed run is) steps the same bits
again = pbf.World(scene)
again.split(comm, cuts=cuts)
again_cuts = again.cuts()
again.step(scene.dt, early)
again_hash = again.hash()
again.close()
first = world.gather()  # collective: every rank calls it, rank 0 gets the particles
if rank == 0:
    np.savez(out / "early.npz", positions=first.positions, ids=first.ids)
world.step(scene.dt, steps - early)
stats, profile = world.totals()
balance = world.balance(0.0)  # only measures: threshold 0 never moves the cuts
halo = world.halo()
gathered = world.gather()
if rank == 0:
    np.savez(out / "gather.npz", positions=gathered.positions, velocities=gathered.velocities,
             densities=gathered.densities, ids=gathered.ids)
np.savez(out / f"rank_{rank}.npz", rank=rank, ranks=ranks, slab=np.array(slab, np.float64),
         cuts=cuts, cuts_after=np.asarray(world.cuts()), ids=world.ids(), positions=world.positions(),
         gathered=len(gathered.ids), hash=np.uint64(world.hash()),
         early_hash=np.uint64(early_hash), again_hash=np.uint64(again_hash),
         again_cuts=np.asarray(again_cuts),
         particles=stats.particles, kinetic_energy=stats.kinetic_energy,
         max_speed=stats.max_speed, bounds=np.array([stats.bounds_min, stats.bounds_max]),
         avg_density_error=profile.avg_density_error, steps=profile.steps,
         halo=np.array(halo, np.int64), balance_before=balance.count_before,
         balance_moved=balance.moved, errors=np.array(errors))
