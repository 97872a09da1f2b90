"""A run through Python equals `pbf run` bit for bit; files and checkpoints round-trip."""

import subprocess

import numpy as np
import pytest

import pbf

# A few thousand particles (3,380) for a few frames: seconds.
SETS = {"fluid.particle_radius": 0.015}
FRAMES = 6


def test_python_run_equals_pbf_run(tmp_path, pbf_cli, dam_break):
    cli_dir = tmp_path / "cli"
    subprocess.run([pbf_cli, "run", str(dam_break), "--frames", str(FRAMES), "--out",
                    str(cli_dir), "--format", "ply,vtk", "--quiet", "--threads", "2"]
                   + [f"--set={k}={v}" for k, v in SETS.items()], check=True)
    # Python on one thread: results do not depend on the thread count
    scene = pbf.Scene.load(dam_break, SETS)
    world = pbf.World(scene, threads=1)
    assert world.particle_count == 3380
    py_dir = tmp_path / "py"
    py_dir.mkdir()
    for frame in range(FRAMES + 1):
        if frame > 0:
            world.step(scene.dt)
        for ext in ("ply", "vtk"):
            name = f"frame_{frame:05d}.{ext}"
            world.export(py_dir / name)
            assert (py_dir / name).read_bytes() == (cli_dir / name).read_bytes(), name
    # and the arrays are what the command wrote
    last = pbf.read_particles(cli_dir / f"frame_{FRAMES:05d}.ply")
    assert np.array_equal(last.positions, world.positions())
    assert np.array_equal(last.velocities, world.velocities())
    assert np.array_equal(last.densities, world.densities())
    assert np.array_equal(last.ids, world.ids())


def test_checkpoint_resume_is_bit_identical(tmp_path, coarse_scene):
    world = pbf.World(coarse_scene)
    world.step(coarse_scene.dt, steps=3)
    path = tmp_path / "state.pbfck"
    world.save_checkpoint(path, app_data=b"frame=3")
    world.step(coarse_scene.dt, steps=3)
    with pbf.Checkpoint(path) as ck:
        assert ck.steps == 3 and ck.particle_count == 1500
        assert ck.time == pytest.approx(3 * coarse_scene.dt)
        assert ck.app_data == b"frame=3"
        assert ck.settings["particle_radius"] == pytest.approx(0.02)
        resumed = pbf.World(ck, threads=2)
    resumed.step(coarse_scene.dt, steps=3)
    assert resumed.hash() == world.hash()
    assert np.array_equal(resumed.positions(), world.positions())
    with pytest.raises(ValueError, match="closed"):
        pbf.World(ck)


def test_checkpoint_errors(tmp_path):
    with pytest.raises(pbf.FileError):
        pbf.Checkpoint(tmp_path / "missing.pbfck")
    foreign = tmp_path / "foreign.pbfck"
    foreign.write_bytes(b"not a checkpoint at all, just text\n" * 4)
    with pytest.raises(pbf.ParseError, match="foreign.pbfck"):
        pbf.Checkpoint(foreign)


def test_export_errors(tmp_path, coarse_scene):
    world = pbf.World(coarse_scene)
    with pytest.raises(ValueError, match="format"):
        world.export(tmp_path / "frame.xyz")
    world.export(tmp_path / "frame.dat", format="vtk")
    assert (tmp_path / "frame.dat").read_bytes().startswith(b"# vtk DataFile")
    with pytest.raises(pbf.FileError, match="no_such_dir"):
        world.export(tmp_path / "no_such_dir" / "frame.ply")
    truncated = tmp_path / "cut.ply"
    world.export(truncated)
    truncated.write_bytes(truncated.read_bytes()[:500])
    with pytest.raises(pbf.Error, match="cut.ply"):
        pbf.read_particles(truncated)
