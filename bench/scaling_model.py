#!/usr/bin/env python3
"""The time per step of a run split over MPI ranks, modelled (docs/scaling.md).

Every input is a number measured on this project's machines or a stated assumption about the
cluster; the defaults are the figures docs/scaling.md names. Prints one table per decomposition
(today's slabs along x, and bricks, which pbf does not have yet) for each particle count.

usage: bench/scaling_model.py [--particles 1e8,1e9] [--nodes 1,8,64,512] [--cores 64]
                              [--bandwidth 12.5] [--latency 2] [--cost 1.6] ...
"""
import argparse
import math

# Bytes per ghost and exchanges per substep with each neighbour (src/comm/mpi/halo.c, docs/mpi.md):
# building the halo and migrating send x, p, v and id (40 bytes); each λ pass λ and density (8),
# each Δp pass p (12), the vorticity pass |ω| (4).
GHOST_BUILD_BYTES = 40
GHOST_LAMBDA_BYTES = 8
GHOST_DELTA_BYTES = 12
GHOST_OMEGA_BYTES = 4


def exchanges_per_substep(iterations):
    """Halo build + sort, then λ and Δp per iteration, then |ω|: the rounds of messages."""
    return 2 + 2 * iterations + 1


def bytes_per_ghost(iterations):
    return (GHOST_BUILD_BYTES + iterations * (GHOST_LAMBDA_BYTES + GHOST_DELTA_BYTES) +
            GHOST_OMEGA_BYTES)


def ghosts_slab(total, halo):
    """Slabs along x of a cubic block of `total` particles: an inner rank holds two layers of
    `halo` particle spacings over the whole cross-section, whatever the rank count."""
    side = total ** (1.0 / 3.0)
    return 2.0 * halo * side * side


def ghosts_brick(per_rank, halo):
    """Cubic bricks of `per_rank` particles: six faces, twelve edges and eight corners of
    `halo` spacings around it."""
    a = per_rank ** (1.0 / 3.0)
    return 6.0 * halo * a * a + 12.0 * halo * halo * a + 8.0 * halo ** 3


def step(total, nodes, args, kind):
    ranks = nodes  # one rank per node, its cores through OpenMP (hybrid)
    per_rank = total / ranks
    if ranks == 1:
        ghosts, neighbours, rounds_per_exchange = 0.0, 0, 0
    elif kind == "slabs":
        ghosts, neighbours, rounds_per_exchange = ghosts_slab(total, args.halo), 2, 1
    else:
        # staged exchange: x, then y, then z (corners and edges forwarded), 2 messages each
        ghosts, neighbours, rounds_per_exchange = ghosts_brick(per_rank, args.halo), 6, 3
    compute = per_rank * args.cost * 1e-6 / (args.cores * args.efficiency)
    ex = exchanges_per_substep(args.iterations)
    data = ghosts * bytes_per_ghost(args.iterations)
    comm = ex * rounds_per_exchange * args.latency * 1e-6 + data / (args.bandwidth * 1e9)
    memory = (per_rank + ghosts) * args.memory / 2.0 ** 30
    substep = compute + comm
    return {
        "per_rank": per_rank, "ghosts": ghosts, "data": data, "compute": compute, "comm": comm,
        "step": args.substeps * substep, "share": comm / substep if substep > 0 else 0.0,
        "memory": memory, "neighbours": neighbours,
    }


def human(n):
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return "%.3g%s" % (n / size, unit)
    return "%.0f" % n


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--particles", default="1e8,1e9", help="total particle counts")
    p.add_argument("--nodes", default="1,8,64,512", help="node counts (one rank per node)")
    p.add_argument("--cores", type=int, default=64, help="cores per node")
    p.add_argument("--efficiency", type=float, default=0.8,
                   help="OpenMP parallel efficiency inside a node (0.8 assumed)")
    p.add_argument("--cost", type=float, default=1.6,
                   help="µs per particle per substep on one core (measured: 0.63 M/s, "
                        "docs/performance.md)")
    p.add_argument("--memory", type=float, default=530,
                   help="bytes per particle (measured, docs/performance.md)")
    p.add_argument("--bandwidth", type=float, default=12.5, help="GB/s per node (100 Gb/s)")
    p.add_argument("--latency", type=float, default=2.0, help="µs per message round")
    p.add_argument("--iterations", type=int, default=4)
    p.add_argument("--substeps", type=int, default=4)
    p.add_argument("--halo", type=float, default=2.5,
                   help="halo width in particle spacings (1.25 h, h = 4 r = 2 spacings)")
    args = p.parse_args()
    totals = [float(x) for x in args.particles.split(",")]
    nodes = [int(x) for x in args.nodes.split(",")]
    print("cluster: %d cores per node at %.0f %% efficiency, %.3g GB/s, %.3g µs per round; "
          "%.2f µs per particle-substep per core; %d substeps of %d iterations; halo %.2f "
          "spacings; %d bytes per ghost per substep" %
          (args.cores, 100 * args.efficiency, args.bandwidth, args.latency, args.cost,
           args.substeps, args.iterations, args.halo, bytes_per_ghost(args.iterations)))
    for kind in ("slabs", "bricks"):
        for total in totals:
            print()
            print("%s, %s particles" % (kind, human(total)))
            print()
            print("| nodes | particles per rank | ghosts per rank | MB per substep | "
                  "compute ms | comm ms | comm share | s per step (1/60 s) | GiB per node |")
            print("|---|---|---|---|---|---|---|---|---|")
            for n in nodes:
                r = step(total, n, args, kind)
                print("| %d | %s | %s | %.1f | %.2f | %.2f | %.0f %% | %.3f | %.1f |" %
                      (n, human(r["per_rank"]), human(r["ghosts"]), r["data"] / 1e6,
                       1e3 * r["compute"], 1e3 * r["comm"], 100 * r["share"], r["step"],
                       r["memory"]))


if __name__ == "__main__":
    main()
