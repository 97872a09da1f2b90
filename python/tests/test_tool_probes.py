"""The tool (driven pose, force read-back) and probes through Python."""

import numpy as np
import pytest

import pbf

# scenes/tool_sphere.json coarsened to 1,050 particles, stepped at the haptic rate (1 ms).
TOOL_SETS = {"fluid.particle_radius": 0.02, "time.fps": 1000, "time.substeps": 1,
             "solver.threads": 1}


@pytest.fixture
def tool_scene(source_dir):
    return pbf.Scene.load(source_dir / "scenes" / "tool_sphere.json", TOOL_SETS)


def test_drive_the_tool_and_read_the_force(tool_scene):
    world = pbf.World(tool_scene)
    assert world.has_tool and tool_scene.has_tool
    settings = world.tool_settings()
    assert settings is not None and settings["motion"] == "kinematic"
    assert len(settings["keys"]) == 9 and settings["damping"] == pytest.approx(50)
    start = np.array(world.tool_state().position)
    # push the sphere down into the water (surface at 0.3 m) at 0.5 m/s, as a device would
    totals = []
    for k in range(1, 301):
        pose = start + [0.0, -0.5 * k * tool_scene.dt, 0.0]
        world.set_tool_pose(pose)
        world.step(tool_scene.dt)
        state = world.tool_state()
        assert np.allclose(state.position, pose, atol=1e-6)  # a kinematic tool follows the pose
        totals.append(state.total)
    state = world.tool_state()
    assert state.contacts > 0
    total = np.array(state.reaction) + state.adhesion + state.damping
    assert np.allclose(total, state.total, rtol=1e-5, atol=1e-6)
    forces = np.array(totals)
    assert np.all(forces[:50] == 0.0)  # in the air: no force
    # submerged about one radius deep: the water pushes it up (buoyancy, drag)
    assert forces[-50:, 1].mean() > 0.5


def test_tool_errors(coarse_scene):
    world = pbf.World(coarse_scene)
    assert not world.has_tool and world.tool_settings() is None
    with pytest.raises(pbf.InvalidArgumentError, match="no tool"):
        world.tool_state()
    with pytest.raises(pbf.InvalidArgumentError):
        world.set_tool_pose((0.5, 0.5, 0.2))
    with pytest.raises(pbf.InvalidArgumentError, match="radius"):
        world.set_tool(radius=-0.1)
    with pytest.raises(ValueError, match="kinematic"):
        world.set_tool(motion="flying")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        world.set_tool(keys=[(0.0, (1, 2))])
    world.set_tool(radius=0.05, position=(1.0, 0.6, 0.2), keys=[(0.0, (1.0, 0.6, 0.2)),
                                                               {"time": 1.0,
                                                                "position": (1.2, 0.6, 0.2)}])
    settings = world.tool_settings()
    assert settings is not None
    keys = settings["keys"]
    assert [k["time"] for k in keys] == [0.0, 1.0]
    assert keys[1]["position"] == pytest.approx((1.2, 0.6, 0.2))
    world.step(coarse_scene.dt)
    assert world.tool_state().position[0] > 1.0
    world.remove_tool()
    assert not world.has_tool


def test_probes(coarse_scene):
    world = pbf.World(coarse_scene)
    world.set_probes([
        {"type": "height", "name": "H1", "position": (0.2, 0.0, 0.2), "radius": 0.04,
         "max_gap": 0.08},
        {"type": "front", "name": "front", "direction": "+x", "max_gap": 0.08},
        {"type": "force", "name": "floor", "position": (0.8, 0.0, 0.2), "direction": "+y",
         "size": (1.6, 0.0, 0.4)},
        {"type": "level", "name": "L1", "position": (0.2, 0.0, 0.2), "fraction": 0.5},
    ])
    assert [p["name"] for p in world.probes()] == ["H1", "front", "floor", "L1"]
    assert world.probes()[3]["fraction"] == pytest.approx(0.5)
    before = world.sample_probes()
    assert before["H1"].value == pytest.approx(0.6, abs=1e-6)   # the column is 0.6 m high
    assert before["L1"].value == pytest.approx(0.6, abs=1e-3)   # its level, interpolated
    assert before["front"].value == pytest.approx(0.4, abs=1e-6)
    assert before["floor"].value == 0.0  # forces are a step's
    world.step(coarse_scene.dt, steps=3)
    after = world.sample_probes()
    assert after["front"].value > 0.4   # the front runs right
    assert after["floor"].value > 0 and after["floor"].pressure > 0
    with pytest.raises(pbf.InvalidArgumentError, match="position"):
        world.set_probes([{"type": "height", "name": "out", "position": (5.0, 0.0, 0.2)}])
    with pytest.raises(pbf.InvalidArgumentError):
        world.set_probes([{"name": "same"}, {"name": "same", "position": (0.3, 0.0, 0.2)}])
    assert len(world.probes()) == 4  # unchanged after a failure
    with pytest.raises(ValueError, match="at most 31"):
        world.set_probes([{"name": "x" * 40}])
    world.set_probes([])
    assert world.sample_probes() == {}
