"""The examples run and write what they say (tiny sizes: seconds)."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest


def run_example(source_dir, name, *args):
    script = source_dir / "examples" / "python" / name
    subprocess.run([sys.executable, str(script), *args], check=True)


def test_dataset(tmp_path, source_dir):
    """The example's dataset: its varied keys within their ranges, the obstacle's particles on
    the box it records, the LagrangeBench files read back (test_dataset.py checks the rest)."""
    h5py = pytest.importorskip("h5py", reason="h5py is not installed (Debian: python3-h5py)")
    out = tmp_path / "data"
    run_example(source_dir, "dataset.py", "--out", str(out), "--trajectories", "3",
                "--frames", "4", "--radius", "0.04", "--jobs", "1")
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["sequence_length"] == 3 and len(meta["pbf"]["trajectories"]) == 3
    assert meta["dt"] == pytest.approx(1 / 60)
    record = meta["pbf"]["trajectories"][0]
    for key, (lo, hi) in [("colliders[0].center[0]", (0.8, 1.3)),
                          ("fluid.viscosity", (0.0, 0.005))]:
        assert lo <= record["values"][key] <= hi
    with h5py.File(out / "train.h5", "r") as f:
        x, t = f["00000/position"][()], f["00000/particle_type"][()]
    assert x.shape == (4, len(t), 3) and np.count_nonzero(t == 0) == record["fluid_particles"]
    # the obstacle's surface: boundary particles inside the domain, off its walls
    lo, hi = np.array(meta["bounds"]).T
    p = x[0, t == 1].astype(np.float64)
    inner = p[np.all((p > lo + 1e-6) & (p < hi - 1e-6), axis=1)]
    half_x = record["values"]["colliders[0].half_extents[0]"]
    assert len(inner) > 0
    assert np.allclose(inner[:, 0].min(), record["values"]["colliders[0].center[0]"] - half_x)
    assert not list(out.glob(".*"))  # no temporary file left


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
