"""The examples run and write what they say (tiny sizes: seconds)."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

import pbf


def run_example(source_dir, name, *args):
    script = source_dir / "examples" / "python" / name
    subprocess.run([sys.executable, str(script), *args], check=True)


def test_dataset(tmp_path, source_dir):
    out = tmp_path / "data.npz"
    run_example(source_dir, "dataset.py", "--out", str(out), "--trajectories", "2",
                "--frames", "3", "--radius", "0.03", "--velocities", "--threads", "1")
    data = np.load(out)
    meta = json.loads(str(data["metadata"]))
    assert meta["frames"] == 4 and len(meta["trajectories"]) == 2
    assert meta["dt"] == pytest.approx(1 / 60)
    for i, t in enumerate(meta["trajectories"]):
        x = data[f"positions_{i:03d}"]
        v = data[f"velocities_{i:03d}"]
        assert x.dtype == np.float32 and x.shape == (4, t["particles"], 3) == v.shape
        # the stored scene re-simulates the trajectory bit for bit
        scene = pbf.Scene.from_dict(t["scene"])
        world = pbf.World(scene)
        world.step(scene.dt, steps=3)
        assert np.array_equal(world.positions(), x[3])
    assert len(meta["displacement_std"]) == 3
    assert not list(tmp_path.glob(".dataset-*"))  # no temporary file left


def test_haptic(tmp_path, source_dir):
    plot = shutil.which("gnuplot") is not None
    run_example(source_dir, "haptic.py", "--out", str(tmp_path), "--seconds", "0.05",
                "--radius", "0.03", "--threads", "1", *([] if plot else ["--no-plot"]))
    rows = np.loadtxt(tmp_path / "forces.csv", delimiter=",", skiprows=1)
    assert rows.shape == (50, 9)
    assert rows[-1, 0] == pytest.approx(0.05, abs=1e-6)
    assert rows[0, 2] < 0.4  # the tool moves down from its start
    if plot:
        assert (tmp_path / "forces.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
