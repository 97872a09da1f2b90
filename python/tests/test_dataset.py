"""pbf dataset (pbf.make_dataset, docs/datasets.md): the files read back with h5py and numpy as
LagrangeBench and GNS read them, the statistics recomputed from the train split, the same seed
giving the same bytes, and the errors on bad input. Tiny runs: 3 or 4 trajectories of a coarse
dam break (about 900 particles with the walls), 10 frames; a few seconds in all."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pbf
from pbf.dataset import DatasetError

h5py = pytest.importorskip("h5py", reason="h5py is not installed (Debian: python3-h5py)")

SOURCE_DIR = Path(os.environ.get("PBF_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SETS = ["fluid.particle_radius=0.04"]
VARY = {"fluid.blocks[0].max[0]": (0.3, 0.6), "fluid.viscosity": (0.0, 0.001)}
FRAMES = 10
SPLIT = "0.5,0.25,0.25"  # two train trajectories: their statistics are averaged as LagrangeBench's


@pytest.fixture(scope="module")
def lagrangebench(tmp_path_factory):
    """One dataset made in a pool of two processes, shared by the tests that only read it."""
    out = tmp_path_factory.mktemp("lb")
    scene = str(SOURCE_DIR / "scenes" / "dam_break.json")
    meta = pbf.make_dataset([scene], out, trajectories=4, frames=FRAMES, set=SETS, vary=VARY,
                            seed=2, split=SPLIT, jobs=2)
    return out, meta, scene


def scene_of(path, record):
    """The scene a trajectory ran: the overrides and its recorded --vary values."""
    block_max = pbf.Scene.load(path, SETS).to_dict()["fluid"]["blocks"][0]["max"]
    block_max[0] = record["values"]["fluid.blocks[0].max[0]"]
    return pbf.Scene.load(path, SETS + [
        f"fluid.blocks[0].max={json.dumps(block_max)}",
        f"fluid.viscosity={record['values']['fluid.viscosity']!r}"])


def read_split(path):
    with h5py.File(path, "r") as f:
        return [(k, f[k]["position"][()], f[k]["particle_type"][()]) for k in f.keys()]


def lagrangebench_statistics(trajectories):
    """LagrangeBench's compute_statistics_h5, written again here: per trajectory the mean over
    frames and fluid particles of x[t+1] - x[t] and of its change, averaged over trajectories;
    the deviation from the mean squares about that mean, averaged likewise."""
    vels, accs = [], []
    for _, x, t in trajectories:
        r = x[:, t == 0].astype(np.float64)
        vel = r[1:] - r[:-1]
        vels.append(vel)
        accs.append(vel[1:] - vel[:-1])
    vel_mean = np.stack([v.mean((0, 1)) for v in vels]).mean(0)
    acc_mean = np.stack([a.mean((0, 1)) for a in accs]).mean(0)
    vel_std = np.stack([((v - vel_mean) ** 2).mean((0, 1)) for v in vels]).mean(0) ** 0.5
    acc_std = np.stack([((a - acc_mean) ** 2).mean((0, 1)) for a in accs]).mean(0) ** 0.5
    return vel_mean, vel_std, acc_mean, acc_std


def test_lagrangebench_layout(lagrangebench):
    out, meta, scene_path = lagrangebench
    assert sorted(os.listdir(out)) == ["metadata.json", "test.h5", "train.h5", "valid.h5"]
    assert json.loads((out / "metadata.json").read_text()) == json.loads(json.dumps(meta))
    scene = pbf.Scene.load(scene_path, SETS)
    assert meta["dim"] == 3 and meta["sequence_length"] == FRAMES - 1
    assert meta["dt"] == scene.dt and meta["write_every"] == 1
    assert meta["dx"] == pytest.approx(0.08)
    assert meta["periodic_boundary_conditions"] == [False, False, False]
    assert meta["num_trajs_train"] == 2
    assert meta["num_trajs_valid"] == meta["num_trajs_test"] == 1
    counts = []
    for split in ("train", "valid", "test"):
        trajectories = read_split(out / f"{split}.h5")
        assert [k for k, _, _ in trajectories] == ["00000", "00001"][:meta[f"num_trajs_{split}"]]
        for _, x, t in trajectories:
            assert x.dtype == np.float32 and x.ndim == 3 and x.shape[0] == FRAMES
            assert x.shape[2] == 3 and t.shape == (x.shape[1],) and t.dtype == np.int32
            assert set(np.unique(t)) == {0, 1}  # fluid and static walls
            bounds = np.array(meta["bounds"])
            assert np.all(x >= bounds[:, 0]) and np.all(x <= bounds[:, 1])
            counts.append(x.shape[1])
    assert meta["num_particles_max"] == max(counts)
    # each trajectory holds its varied block's particles, then the walls'
    records = meta["pbf"]["trajectories"]
    walls = counts[0] - records[0]["fluid_particles"]
    for record, count in zip(records, counts):
        assert record["fluid_particles"] == scene_of(scene_path, record).particle_count
        assert record["particles"] == count == record["fluid_particles"] + walls


def test_statistics_come_from_the_train_split(lagrangebench):
    out, meta, _ = lagrangebench
    train = read_split(out / "train.h5")
    vel_mean, vel_std, acc_mean, acc_std = lagrangebench_statistics(train)
    assert np.allclose(meta["vel_mean"], vel_mean, rtol=1e-9, atol=0)
    assert np.allclose(meta["vel_std"], vel_std, rtol=1e-9, atol=0)
    assert np.allclose(meta["acc_mean"], acc_mean, rtol=1e-9, atol=0)
    assert np.allclose(meta["acc_std"], acc_std, rtol=1e-9, atol=0)
    # not the statistics of all samples pooled: the trajectories differ in particle count
    pooled = np.concatenate([(x[1:, t == 0] - x[:-1, t == 0]).reshape(-1, 3).astype(np.float64)
                             for _, x, t in train])
    assert len({x.shape[1] for _, x, _ in train}) == 2
    assert not np.allclose(meta["vel_mean"], pooled.mean(axis=0), rtol=1e-6, atol=0)
    everything = train + read_split(out / "valid.h5") + read_split(out / "test.h5")
    assert not np.allclose(meta["vel_std"], lagrangebench_statistics(everything)[1], rtol=1e-6)


def test_trajectories_are_the_runs_they_record(lagrangebench):
    """The recorded values re-run as a scene give the stored fluid positions bit for bit, and
    the boundary particles lie on the domain's faces about a spacing apart."""
    out, meta, scene_path = lagrangebench
    record = meta["pbf"]["trajectories"][0]
    assert record["split"] == "train" and record["key"] == "00000"
    lo, hi = VARY["fluid.blocks[0].max[0]"]
    values = [r["values"]["fluid.blocks[0].max[0]"] for r in meta["pbf"]["trajectories"]]
    assert all(lo <= v <= hi for v in values) and len(set(values)) == len(values) == 4
    scene = scene_of(scene_path, record)
    world = pbf.World(scene, threads=1)
    world.step(scene.dt, steps=FRAMES - 1)
    _, x, t = read_split(out / "train.h5")[0]
    assert np.array_equal(x[-1, t == 0], world.positions())
    walls = x[0, t == 1].astype(np.float64)
    d_lo, d_hi = (np.array(v) for v in world.domain)
    on_face = np.minimum(np.abs(walls - d_lo), np.abs(walls - d_hi)).min(axis=1)
    assert np.all(on_face < 1e-6)
    gaps = np.sort(np.linalg.norm(walls[:, None] - walls[None], axis=2), axis=1)[:, 1]
    assert np.all((gaps > 0.06) & (gaps < 0.085))  # spacing 2r = 0.08 m, fitted to each side


def test_colliders_and_gns_layout(tmp_path, dam_break):
    """GNS's NPZ: simulation_trajectory_K holding (position, particle_type) as its loader
    unpacks them; a sphere collider appears as boundary particles on its surface."""
    sphere = {"type": "sphere", "center": [1.0, 0.1, 0.2], "radius": 0.15}
    meta = pbf.make_dataset(dam_break, tmp_path, format="gns", trajectories=3, frames=4,
                            set=SETS + [f"colliders={json.dumps([sphere])}"], jobs=1)
    assert sorted(os.listdir(tmp_path)) == ["metadata.json", "test.npz", "train.npz",
                                            "valid.npz"]
    for key in ("bounds", "sequence_length", "default_connectivity_radius", "dim", "dt",
                "vel_mean", "vel_std", "acc_mean", "acc_std"):
        assert key in meta
    with np.load(tmp_path / "train.npz", allow_pickle=True) as data:
        items = [item for _, item in data.items()]
    assert len(items) == 1
    x, t = items[0]
    assert x.dtype == np.float32 and x.shape[0] == 4 and t.shape == (x.shape[1],)
    assert set(np.unique(t)) == {5, 3}  # water, kinematic boundary
    boundary = x[0, t == 3].astype(np.float64)
    distance = np.linalg.norm(boundary - sphere["center"], axis=1)
    on_sphere = np.abs(distance - sphere["radius"]) < 1e-5
    # 4 pi R^2 / (2r)^2 = 44 points, less the part below the floor
    assert 25 <= np.count_nonzero(on_sphere) <= 44
    assert np.all(boundary[on_sphere][:, 1] >= 0)


def test_same_seed_same_bytes(tmp_path, lagrangebench):
    out, _, scene = lagrangebench
    again = tmp_path / "again"
    pbf.make_dataset([scene], again, trajectories=4, frames=FRAMES, set=SETS, vary=VARY,
                     seed=2, split=SPLIT, jobs=1)  # one process instead of two: the same files
    for name in ("train.h5", "valid.h5", "test.h5", "metadata.json"):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name
    other = tmp_path / "other"
    pbf.make_dataset([scene], other, trajectories=3, frames=4, set=SETS, vary=VARY, seed=8,
                     jobs=1)
    records = json.loads((other / "metadata.json").read_text())["pbf"]["trajectories"]
    assert records[0]["values"] != json.loads(
        (out / "metadata.json").read_text())["pbf"]["trajectories"][0]["values"]


@pytest.mark.parametrize("kwargs, message", [
    ({"vary": ["fluid.viscosty=0:1"]}, "unknown key 'fluid.viscosty' (did you mean"),
    ({"vary": ["solver.iterations=0:5"]}, "'solver.iterations' must be in [1, 1000], got 0"),
    ({"vary": ["fluid.viscosity=0:200"]}, "'fluid.viscosity' must be in [0, 100]"),
    ({"vary": ["solver.iterations=2.5:4"]}, "is an integer"),
    ({"vary": ["fluid.blocks[0].max=0:1"]}, "vary one component at a time"),
    ({"vary": ["fluid.blocks[0].max[0]=0.5:9"]}, "must lie inside the domain"),
    ({"vary": ["solver.iterations=5"]}, "expected KEY=LOW:HIGH"),
    ({"split": "0.8,0.2"}, "three fractions"),
    ({"trajectories": 2}, "at least 3"),
    ({"frames": 2}, "--frames 2"),
    ({"format": "tfrecord"}, "expected one of lagrangebench, gns"),
])
def test_bad_input_names_the_key(tmp_path, dam_break, kwargs, message):
    args: dict[str, Any] = {"trajectories": 3, "frames": 3, "set": SETS, "jobs": 1, **kwargs}
    with pytest.raises((DatasetError, pbf.Error)) as e:
        pbf.make_dataset(dam_break, tmp_path / "out", **args)
    assert message in str(e.value)
    assert not (tmp_path / "out").exists()  # nothing written


def test_unwritable_folder_and_unsupported_scenes(tmp_path, dam_break, source_dir):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(DatasetError, match="the output folder cannot be written"):
        pbf.make_dataset(dam_break, blocker / "out", trajectories=3, frames=3, set=SETS)
    with pytest.raises(DatasetError, match="'flow' has emitters or sinks"):
        pbf.make_dataset(source_dir / "scenes" / "river.json", tmp_path / "r", trajectories=3,
                         frames=3)
    assert sorted(os.listdir(tmp_path)) == ["file"]


def test_command(tmp_path, pbf_cli, dam_break):
    """pbf dataset runs the module in the interpreter PBF_PYTHON names, and passes its exit
    status and messages on."""
    env = {**os.environ, "PBF_PYTHON": sys.executable}
    base = [pbf_cli, "dataset", str(dam_break), "--trajectories", "3", "--frames", "3",
            "--set", SETS[0], "--no-progress", "--jobs", "1", "--format", "gns"]
    done = subprocess.run(base + ["--out", str(tmp_path / "d")], env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path / "d")) == ["metadata.json", "test.npz", "train.npz",
                                                 "valid.npz"]
    bad = subprocess.run(base + ["--out", str(tmp_path / "e"), "--vary", "solver.iter=1:2"],
                         env=env, capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stderr.startswith("pbf dataset: --vary solver.iter: ")
    assert "unknown key 'solver.iter'" in bad.stderr
    env["PBF_PYTHON"] = str(tmp_path / "no-python")
    missing = subprocess.run(base + ["--out", str(tmp_path / "f")], env=env,
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "PBF_PYTHON" in missing.stderr
    # an interpreter without the package: it says so instead of a traceback
    bare = tmp_path / "bare-python"
    bare.write_text(f"#!/bin/sh\nexec {sys.executable} -I -S \"$@\"\n")
    bare.chmod(0o755)
    env["PBF_PYTHON"] = str(bare)
    without = subprocess.run(base + ["--out", str(tmp_path / "g")], env=env,
                             capture_output=True, text=True)
    assert without.returncode == 1
    assert "the Python package pbf is not importable by" in without.stderr
    assert "Traceback" not in without.stderr
    assert not (tmp_path / "f").exists() and not (tmp_path / "g").exists()


def test_moving_walls_and_floating_meshes(tmp_path, source_dir):
    """scenes/floating.json (coarse): the wave maker's wall is a moving wall whose particles
    follow it, the floating crates and hull are rigid bodies whose particles keep their
    distances, the other walls stay put."""
    meta = pbf.make_dataset(source_dir / "scenes" / "floating.json", tmp_path, trajectories=3,
                            frames=6, set=["fluid.particle_radius=0.02"], jobs=1)
    _, x, t = read_split(tmp_path / "train.h5")[0]
    x = x.astype(np.float64)
    assert set(np.unique(t)) == {0, 1, 2, 3}
    assert np.array_equal(x[0, t == 1], x[-1, t == 1])
    wall = x[:, t == 2, 0]  # on the x_max wall, wherever it is
    assert np.all(np.ptp(wall, axis=1) < 1e-6)
    scene = pbf.Scene.load(source_dir / "scenes" / "floating.json")
    expected = 1.5 + 0.05 * np.sin(2 * np.pi * np.arange(6) * scene.dt / 2.0)
    assert np.allclose(wall[:, 0], expected, atol=1e-5)
    bodies = x[:, t == 3]
    assert np.abs(bodies[-1] - bodies[0]).max() > 1e-3  # they move
    first = np.linalg.norm(bodies[0, :50, None] - bodies[0, None, :50], axis=2)
    last = np.linalg.norm(bodies[-1, :50, None] - bodies[-1, None, :50], axis=2)
    assert np.allclose(first, last, atol=1e-5)  # rigidly
    assert meta["bounds"][0][1] == pytest.approx(expected.max(), abs=1e-5)


def test_scripted_tool(tmp_path, source_dir):
    """scenes/tool_sphere.json (coarse): the scripted tool is a moving boundary on the sphere
    where the tool is in every frame."""
    path = source_dir / "scenes" / "tool_sphere.json"
    sets = ["fluid.particle_radius=0.02"]
    pbf.make_dataset(path, tmp_path, trajectories=3, frames=5, set=sets, jobs=1)
    _, x, t = read_split(tmp_path / "train.h5")[0]
    scene = pbf.Scene.load(path, sets)
    world = pbf.World(scene, threads=1)
    tool = x[:, t == 2].astype(np.float64)
    assert tool.shape[1] == 20  # 4 pi R^2 / (2r)^2 = 19.6 for R = 0.05 m, r = 0.02 m
    for frame in range(5):
        if frame:
            world.step(scene.dt)
        centre = np.array(world.tool_state().position)
        radius = np.linalg.norm(tool[frame] - centre, axis=1)
        assert np.allclose(radius, world.tool_state().radius, atol=1e-6)
    assert tool[-1, 0, 1] < tool[0, 0, 1]  # lowered into the water
