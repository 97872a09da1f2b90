"""A world split over MPI processes from Python (docs/python.md, "Split over processes (MPI)"):
python/tests/mpi_split.py runs under `mpirun -n 1` and `-n 2` on the coarse dam break (1,500
particles, 20 steps) and is compared with the same world stepped here in one process. One rank
gives the same bits; two ranks the same particles and ids, and positions, centre of mass and
energy to rounding. Skipped where the module has no MPI (then its calls must say so) or mpirun
is missing."""

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import pbf

from conftest import COARSE, SCENES

SCRIPT = Path(__file__).with_name("mpi_split.py")
SCENE = SCENES / "dam_break.json"
EARLY, STEPS = 5, 20

needs_mpi = pytest.mark.skipif(not pbf.HAVE_MPI,
                               reason="the module was built without MPI (pbf.HAVE_MPI is False)")


def mpirun(ranks):
    """The mpirun command line for `ranks` ranks, as tests/cli/test_mpi.sh makes it."""
    exe = shutil.which("mpirun")
    if exe is None:
        pytest.skip("mpirun not found (Debian: openmpi-bin)")
    cmd = [exe, "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")  # Open MPI refuses root unless told (containers, CI)
    return cmd + ["-n", str(ranks)]


def run_split(ranks, out, *extra):
    """mpi_split.py on `ranks` ranks into out: the gathered worlds and every rank's view."""
    out.mkdir()
    cmd = mpirun(ranks) + [sys.executable, str(SCRIPT), str(SCENE), str(out), str(EARLY),
                           str(STEPS), *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{' '.join(cmd)} exited {done.returncode}:\n" + \
        done.stdout + done.stderr
    views = [dict(np.load(out / f"rank_{r}.npz")) for r in range(ranks)]
    assert [int(v["ranks"]) for v in views] == [ranks] * ranks, \
        "mpirun's ranks did not see each other (an mpirun of another MPI than the module's?)"
    return np.load(out / "early.npz"), np.load(out / "gather.npz"), views


@pytest.fixture(scope="module")
def reference():
    """The same world in one process, never split: the particles after EARLY and STEPS."""
    scene = pbf.Scene.load(SCENE, COARSE)
    world = pbf.World(scene)
    world.step(scene.dt, EARLY)
    early = world.particles()
    world.step(scene.dt, STEPS - EARLY)
    return early, world.particles(), world.stats(), world.profile(), world.hash()


def check_views(views, gathered):
    """What every rank sees of the split: its slab between the cuts, its particles in it, the
    ids on exactly one rank, the same totals everywhere."""
    ranks = len(views)
    cuts = views[0]["cuts"]
    assert cuts.shape == (ranks + 1,)
    for r, v in enumerate(views):
        lo, hi, rank, n = v["slab"]
        assert (int(rank), int(n)) == (r, ranks)
        assert np.array_equal(v["cuts"], cuts) and np.array_equal(v["cuts_after"], cuts)
        # split(cuts=...) at the same cuts: the same cuts and the same bits 5 steps on
        assert np.array_equal(v["again_cuts"], cuts) and v["again_hash"] == v["early_hash"]
        assert lo == (cuts[r] if r > 0 else -np.inf) and hi == (cuts[r + 1] if r < ranks - 1
                                                                else np.inf)
        x = v["positions"][:, 0]
        # owned by the predicted position at the start of the last substep: within a particle
        # radius of the slab at its end (measured: 6.4e-5 m past the cut on two ranks)
        assert len(x) > 0 and x.min() >= lo - 0.02 and x.max() <= hi + 0.02, (r, x.min(), x.max())
        assert int(v["gathered"]) == (len(gathered["ids"]) if r == 0 else 0)
        assert int(v["steps"]) == STEPS and not bool(v["balance_moved"])
        for key in ("particles", "kinetic_energy", "max_speed", "bounds", "avg_density_error"):
            assert np.array_equal(v[key], views[0][key]), f"rank {r}: totals().{key} differs"
        assert "comm must be None" in str(v["errors"][0])
        assert f"cuts must hold ranks + 1 = {ranks + 1} values" in str(v["errors"][1])
    ids = np.concatenate([v["ids"] for v in views])
    assert len(ids) == len(np.unique(ids)) == len(gathered["ids"]), "an id on two ranks"
    # the gather is the ranks' own particles, in id order
    mine = np.concatenate([v["positions"] for v in views])[np.argsort(ids)]
    assert np.array_equal(mine, gathered["positions"])
    if ranks > 1:  # what each rank received is what its neighbour sent
        assert views[0]["halo"][0] == views[1]["halo"][1] > 0
        assert views[1]["halo"][0] == views[0]["halo"][1] > 0


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    """mpi_split.py on two ranks (MPI_COMM_WORLD), shared by the tests that compare with it."""
    return run_split(2, tmp_path_factory.mktemp("mpi") / "np2")


@needs_mpi
def test_one_rank_gives_the_same_bits(reference, tmp_path):
    early_ref, ref, stats, profile, world_hash = reference
    early, gathered, views = run_split(1, tmp_path / "np1")
    check_views(views, gathered)
    for name in ("positions", "velocities", "densities", "ids"):
        assert np.array_equal(gathered[name], getattr(ref, name)), name
    assert np.array_equal(early["positions"], early_ref.positions)
    v = views[0]
    assert int(v["hash"]) == world_hash
    assert tuple(v["slab"]) == (-np.inf, np.inf, 0.0, 1.0)
    assert int(v["particles"]) == stats.particles and float(v["kinetic_energy"]) == \
        stats.kinetic_energy and float(v["avg_density_error"]) == profile.avg_density_error
    assert float(v["balance_before"]) == 1.0


@needs_mpi
def test_two_ranks_agree_to_rounding(reference, two_ranks):
    early_ref, ref, stats, profile, _ = reference
    early, gathered, views = two_ranks
    check_views(views, gathered)
    assert np.array_equal(gathered["ids"], ref.ids) and np.array_equal(early["ids"], ref.ids)
    assert [len(v["ids"]) for v in views] != [0, 0] and min(len(v["ids"]) for v in views) > 100
    # after 5 steps every particle by id within 1e-4 m (measured: 1.3e-5 m at most); later the
    # splashing front amplifies the rounding (20 steps: 6 mm median), so then the whole
    # world's figures: the centre of mass within 1 mm (measured: 0.15 mm), kinetic energy
    # within 0.5 % (0.04 %), the mean density error within 10 % (3 %)
    assert np.abs(early["positions"] - early_ref.positions).max() < 1e-4
    com = gathered["positions"].astype(np.float64).mean(0)
    assert np.abs(com - ref.positions.astype(np.float64).mean(0)).max() < 1e-3
    v = views[0]
    assert int(v["particles"]) == stats.particles == len(gathered["ids"])
    assert float(v["kinetic_energy"]) == pytest.approx(stats.kinetic_energy, rel=5e-3)
    assert float(v["avg_density_error"]) == pytest.approx(profile.avg_density_error, rel=0.1)
    # the slabs split the count: the cut at the particles' median x at the split
    assert float(v["balance_before"]) > 1.0


@needs_mpi
def test_mpi4py_communicator_gives_the_same_run(two_ranks, tmp_path):
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (Debian: python3-mpi4py)")
    _, plain, plain_views = two_ranks
    _, via, via_views = run_split(2, tmp_path / "mpi4py", "mpi4py")
    assert np.array_equal(via["positions"], plain["positions"])
    assert [int(v["hash"]) for v in via_views] == [int(v["hash"]) for v in plain_views]


@needs_mpi
def test_without_mpirun_one_process(tmp_path):
    """`python script.py` without mpirun: MPI starts as one rank and is finished at exit."""
    code = "import pbf; print(pbf.mpi_rank(), pbf.mpi_size())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1"]


@needs_mpi
def test_python_md_mpi_snippet_runs(source_dir, tmp_path):
    """docs/python.md's MPI snippet, as written, on two ranks (test_docs.py leaves it out)."""
    text = (source_dir / "docs" / "python.md").read_text()
    blocks = [b for b in re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
              if ".split(" in b]
    assert len(blocks) == 1, "docs/python.md: one python snippet splits a world"
    (tmp_path / "scenes").symlink_to(SCENES)
    (tmp_path / "split.py").write_text(blocks[0])
    cmd = mpirun(2) + [sys.executable, "split.py"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^1500 particles", done.stdout, re.M), done.stdout


def test_unsplit_world_answers_without_mpi(coarse_scene):
    """A world never split: slab, cuts and halo None; gather and totals its own (no MPI
    started). Without MPI in the module every one of these calls says so instead."""
    world = pbf.World(coarse_scene)
    world.step(coarse_scene.dt)
    if not pbf.HAVE_MPI:
        calls: list[Callable[[], object]] = [world.split, world.slab, world.cuts, world.halo,
                                              world.gather, world.totals, world.balance,
                                              world.gather_diffuse, pbf.mpi_rank, pbf.mpi_size]
        for call in calls:
            with pytest.raises(pbf.UnsupportedError, match="this build of pbf has no MPI"):
                call()
        return
    assert world.slab() is None and world.cuts() is None and world.halo() is None
    stats, profile = world.totals()
    assert stats == world.stats() and profile.avg_density_error == \
        world.profile().avg_density_error
    assert np.array_equal(world.gather().positions, world.positions())
    assert world.balance(2.0) == (1.0, 1.0, 1.0, False, 0, 0.0, 0.0)
    with pytest.raises(pbf.InvalidArgumentError):
        world.gather_diffuse()
