"""pbf.WorldBatch: many small worlds of one scene stepped together. Each world ends bit-identical
to pbf.World of the same scene and values stepped alone; bad input and a failed world are named."""

import numpy as np
import pytest

import pbf

# The coarse dam break (1,500 particles) with a jitter the seeds can change.
SETS = {"fluid.particle_radius": 0.02, "solver.threads": 2, "fluid.blocks[0].seed": 3}


@pytest.fixture
def scene(source_dir):
    return pbf.Scene.load(source_dir / "scenes" / "dam_break.json", SETS)


def alone(source_dir, sets, threads):
    world = pbf.World(pbf.Scene.load(source_dir / "scenes" / "dam_break.json", {**SETS, **sets}),
                      threads=threads)
    return world


def test_each_world_equals_it_alone(scene, source_dir):
    gravity = np.array([[0.0, -9.81, 0.0], [2.0, -9.81, 0.0], [0.0, -9.81, 0.0]])
    batch = pbf.WorldBatch(scene, 3, gravity=gravity, seed=[0, 0, 9], jitter=[-1, -1, 0.25],
                           xsph=[0.01, 0.01, 0.05])
    assert len(batch) == batch.worlds == 3 and batch.particle_count == scene.particle_count
    params = batch.params()
    assert params["gravity"].shape == (3, 3)
    assert (params["gravity"] == gravity.astype(np.float32)).all()
    assert list(params["seed"]) == [0, 0, 9] and params["jitter"][0] == -1.0
    batch.step(scene.dt, steps=4)
    x, v = batch.positions(), batch.velocities()
    assert x.shape == v.shape == (3, scene.particle_count, 3) and x.dtype == np.float32
    assert (batch.times() == batch.times()[0]).all() and not batch.failed().any()
    sets = [{}, {"gravity": [2.0, -9.81, 0.0]},
            {"fluid.blocks[0].seed": 12, "fluid.blocks[0].jitter": 0.25, "solver.xsph": 0.05}]
    for i, s in enumerate(sets):
        for threads in (1, 0):  # 0: the OpenMP default
            world = alone(source_dir, s, threads)
            world.step(scene.dt, steps=4)
            assert (world.positions() == x[i]).all() and (world.velocities() == v[i]).all()
            assert world.hash() == batch.hashes()[i]
    assert not (x[0] == x[1]).all() and not (x[0] == x[2]).all()
    # out= fills the caller's array
    out = np.empty_like(x)
    assert batch.positions(out=out) is out and (out == x).all()


def test_bad_input(scene):
    with pytest.raises(pbf.InvalidArgumentError, match=r"count must be in \[1, 1000000\], got 0"):
        pbf.WorldBatch(scene, 0)
    with pytest.raises(ValueError, match=r"'gravity' must be \(x, y, z\) or an array of shape"):
        pbf.WorldBatch(scene, 2, gravity=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="'seed' must be integers"):
        pbf.WorldBatch(scene, 2, seed=-1)
    with pytest.raises(TypeError, match="unknown parameter 'gravty'"):
        pbf.WorldBatch(scene, 2, gravty=(0, 0, 0))
    with pytest.raises(pbf.InvalidArgumentError, match=r"world 1: params.jitter must be in"):
        pbf.WorldBatch(scene, 2, jitter=[0.1, 0.9])
    with pytest.raises(pbf.InvalidArgumentError, match="world 0: .*xsph"):
        pbf.WorldBatch(scene, 2, xsph=5.0)
    batch = pbf.WorldBatch(scene, 2)
    with pytest.raises(ValueError, match=r"out must be .* shape \(2, "):
        batch.positions(out=np.empty((1, 3), np.float32))
    with pytest.raises(pbf.InvalidArgumentError, match="no tool"):
        batch.tool_states()
    with pytest.raises(IndexError, match=r"world must be in \[0, 2\), got 5"):
        batch.reset(5)
    batch.close()
    with pytest.raises(ValueError, match="closed"):
        batch.step(scene.dt)


def test_tool_poses_and_reset(source_dir):
    scene = pbf.Scene.load(source_dir / "scenes" / "tool_sphere.json",
                           {"fluid.particle_radius": 0.02, "time.fps": 1000, "time.substeps": 1})
    with pbf.WorldBatch(scene, 2, tool_position=[[0.3, 0.4, 0.2], [0.2, 0.42, 0.2]]) as batch:
        start = batch.params()["tool_position"]
        poses = start + np.array([0.0, -0.01, 0.0], np.float32)
        batch.set_tool_poses(poses)
        batch.step(scene.dt)
        states = batch.tool_states()
        assert np.allclose([s.position for s in states], poses, atol=1e-6)
        with pytest.raises(ValueError, match=r"expected shape \(2, 3\)"):
            batch.set_tool_poses(np.zeros((3, 3)))
        batch.reset(1, gravity=(0.0, -1.0, 0.0))
        assert list(batch.times()) == [pytest.approx(scene.dt), 0.0]
        assert tuple(batch.params()["gravity"][1]) == (0.0, -1.0, 0.0)
