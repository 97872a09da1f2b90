"""Worlds through Python: read-back in id order, building worlds, profile, statistics, and the
library's errors as exceptions, never a crash."""

import re

import numpy as np
import pytest

import pbf


def test_arrays_in_stable_id_order(coarse_scene):
    world = pbf.World(coarse_scene)
    n = world.particle_count
    assert n == len(world) == coarse_scene.particle_count == 1500
    x0 = world.positions()
    assert x0.dtype == np.float32 and x0.shape == (n, 3) and x0.flags.c_contiguous
    # ids 0, 1, ... in the order the block was filled: x fastest, then y, then z
    assert np.array_equal(world.ids(), np.arange(n, dtype=np.int32))
    assert x0[1, 0] > x0[0, 0] and x0[1, 1] == x0[0, 1]
    world.step(coarse_scene.dt, steps=5)
    x = world.positions()
    v = world.velocities()
    rho = world.densities()
    assert v.shape == (n, 3) and v.dtype == np.float32
    assert rho.shape == (n,) and rho.dtype == np.float32
    assert 900 < float(np.median(rho)) < 1100
    # the same arrays as the library's own id-order copy (what the exporters write)
    p = world.particles()
    assert np.array_equal(p.positions, x) and np.array_equal(p.velocities, v)
    assert np.array_equal(p.densities, rho) and np.array_equal(p.ids, world.ids())
    # the particles fell and moved right, and particle k is still particle k (ids are stable:
    # the solver reorders its slots every substep)
    assert np.all(np.abs(x - x0).max(axis=1) < 0.2)
    assert world.time == pytest.approx(5 * coarse_scene.dt)


def test_out_arrays_are_filled_in_place(coarse_scene):
    world = pbf.World(coarse_scene)
    world.step(coarse_scene.dt)
    out = np.empty((len(world), 3), np.float32)
    assert world.positions(out=out) is out
    assert np.array_equal(out, world.positions())
    assert world.velocities(out=out) is out
    dens = np.empty(len(world), np.float32)
    assert world.densities(out=dens) is dens
    with pytest.raises(ValueError, match="float32"):
        world.positions(out=np.empty((len(world), 3), np.float64))
    with pytest.raises(ValueError):
        world.positions(out=np.empty((len(world) + 1, 3), np.float32))
    with pytest.raises(ValueError):
        world.positions(out=np.empty((3, len(world)), np.float32).T)  # not C-contiguous


def test_every_array_by_name(coarse_scene):
    world = pbf.World(coarse_scene)
    world.step(coarse_scene.dt, steps=2)
    infos = pbf.particle_arrays()
    names = [a["name"] for a in infos]
    assert names[:5] == ["positions", "velocities", "densities", "ids", "phases"]
    arrays = world.arrays()
    assert list(arrays) == names
    for info in infos:  # each as its named read-back, its dtype and shape as listed
        a = world.array(info["name"])
        assert a.dtype == np.dtype(info["dtype"]) and np.array_equal(a, arrays[info["name"]])
        assert a.shape == ((len(world), 3) if info["components"] == 3 else (len(world),))
    assert np.array_equal(arrays["positions"], world.positions())
    assert np.array_equal(arrays["densities"], world.densities())
    assert np.array_equal(arrays["ids"], world.ids())
    assert not arrays["phases"].any()  # one fluid
    out = np.empty((len(world), 3), np.float32)
    assert world.array("velocities", out=out) is out
    assert np.array_equal(out, world.velocities())
    with pytest.raises(pbf.InvalidArgumentError, match="'pressure'.*positions, velocities"):
        world.array("pressure")


def test_build_a_world_by_hand():
    scene = pbf.Scene.from_dict({"domain": {"max": [1.0, 1.0, 0.5]},
                                 "fluid": {"particle_radius": 0.025}})
    world = pbf.World(scene, fill=False, threads=1)
    assert len(world) == 0
    assert world.settings()["threads"] == 1
    added = world.add_block(min=(0, 0, 0), max=(0.3, 0.5, 0.5), velocity=[1, 0, 0])
    assert added == len(world) == 6 * 10 * 10
    first = world.add_particles(np.array([[0.8, 0.8, 0.25], [0.7, 0.8, 0.25]]), [[0, -1, 0]] * 2)
    assert first == 600 and len(world) == 602
    assert np.allclose(world.positions()[600], [0.8, 0.8, 0.25])
    assert np.allclose(world.velocities()[601], [0, -1, 0])
    assert np.allclose(world.velocities()[0], [1, 0, 0])
    world.add_collider("sphere", center=(0.6, 0.2, 0.25), radius=0.1)
    world.add_collider(type="box", center=(0.9, 0.1, 0.25), half_extents=(0.05, 0.1, 0.05))
    kinds = [c["type"] for c in world.colliders()]
    assert kinds == ["sphere", "box"]
    assert world.colliders()[0]["radius"] == pytest.approx(0.1)
    world.step(1 / 60)
    assert world.profile().steps == 1
    assert world.domain == ((0.0, 0.0, 0.0), (1.0, 1.0, 0.5))


def test_materials_and_scorr_fields():
    scene = pbf.Scene.from_dict({"domain": {"max": [1.0, 1.0, 0.5], "friction": 0.3,
                                            "adhesion": 0.05, "no_slip": True},
                                 "fluid": {"particle_radius": 0.025, "viscosity": 0.01}})
    world = pbf.World(scene, fill=False, threads=1)
    settings = world.settings()
    assert settings["wall_no_slip"] is True
    assert settings["wall_friction"] == pytest.approx(0.3)
    assert settings["wall_adhesion"] == pytest.approx(0.05)
    assert settings["solver"]["scorr_deficit"] == pytest.approx(0.05)
    assert settings["solver"]["scorr_iterations"] == 4
    world.add_collider("sphere", center=(0.5, 0.2, 0.25), radius=0.1, friction=0.5, adhesion=0.1)
    collider = world.colliders()[0]
    assert collider["friction"] == pytest.approx(0.5)
    assert collider["adhesion"] == pytest.approx(0.1)
    with pytest.raises(pbf.InvalidArgumentError, match="friction"):
        world.add_collider("sphere", center=(0.5, 0.2, 0.25), radius=0.1, friction=-1)
    world.set_solver(scorr_deficit=0.0, scorr_iterations=0)
    assert world.settings()["solver"]["scorr_deficit"] == 0.0
    assert settings["material"]["viscosity"] == pytest.approx(0.01) and settings["phases"] == []


def test_materials_of_a_scene():
    scene = pbf.Scene.from_dict({
        "domain": {"max": [0.4, 0.4, 0.2]},
        "fluid": {"particle_radius": 0.01, "viscosity": 0.01, "surface_drag": 2.0,
                  "blocks": [{"min": [0, 0, 0], "max": [0.2, 0.1, 0.2], "material": "water"},
                             {"min": [0.2, 0, 0], "max": [0.4, 0.1, 0.2], "material": "oil"}]},
        "materials": [{"name": "water", "density": 1000},
                      {"name": "oil", "density": 800, "gravity_scale": 0.9}]})
    settings = pbf.World(scene, fill=False, threads=1).settings()
    assert settings["material"]["viscosity"] == pytest.approx(0.01)
    assert settings["material"]["surface_drag"] == pytest.approx(2.0)
    assert [p["density"] for p in settings["phases"]] == pytest.approx([1000, 800])
    assert settings["phases"][1]["gravity_scale"] == pytest.approx(0.9)


def test_profile_and_stats(coarse_scene):
    world = pbf.World(coarse_scene)
    world.step(coarse_scene.dt, steps=2)
    prof = world.profile()
    assert prof.steps == 2 and prof.substeps == 4 and prof.iterations == 4
    assert set(prof.stage_ms) == {"predict", "grid", "neighbors", "lambda", "delta", "velocity",
                                  "vorticity"}
    assert prof.step_ms > 0 and 0 <= prof.avg_density_error < 0.05
    assert 15 < prof.avg_neighbors < 40
    stats = world.stats()
    assert stats.particles == 1500 and stats.kinetic_energy > 0 and stats.max_speed > 0
    assert stats.bounds_min[1] >= 0.0
    errors = world.iteration_errors()
    assert errors.dtype == np.float32 and len(errors) >= 4
    assert isinstance(world.hash(), int)


def test_set_solver(coarse_scene):
    world = pbf.World(coarse_scene)
    world.set_solver(iterations=7, target_error=0.0)
    assert world.settings()["solver"]["iterations"] == 7
    with pytest.raises(pbf.InvalidArgumentError, match="iterations"):
        world.set_solver(iterations=0)
    assert world.settings()["solver"]["iterations"] == 7  # unchanged
    with pytest.raises(TypeError, match="iteratons"):
        world.set_solver(iteratons=3)


def test_bad_input_raises(coarse_scene):
    world = pbf.World(coarse_scene)
    with pytest.raises(pbf.InvalidArgumentError):
        world.step(-1.0)
    with pytest.raises(pbf.InvalidArgumentError):
        world.step(float("nan"))
    with pytest.raises(TypeError):
        world.step("fast")  # type: ignore[arg-type]
    with pytest.raises(pbf.InvalidArgumentError, match="max"):
        world.add_block(min=(0.5, 0.5, 0.5), max=(0.1, 0.1, 0.1))
    with pytest.raises(pbf.InvalidArgumentError, match="radius"):
        world.add_collider("sphere", radius=-1)
    with pytest.raises(ValueError, match="capsule"):
        world.add_collider("cylinder")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="centre"):
        world.add_collider("sphere", centre=(0, 0, 0))  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="3 numbers"):
        world.add_block(min=(0, 0))
    with pytest.raises(ValueError, match=r"\(N, 3\)"):
        world.add_particles(np.zeros((4, 2)))
    with pytest.raises(pbf.InvalidArgumentError):
        world.add_particles([[50.0, 0.1, 0.1]])  # outside the domain
    with pytest.raises(TypeError):
        pbf.World("scenes/dam_break.json")  # type: ignore[arg-type]
    assert len(world) == 1500  # nothing was added by the failed calls


def test_unstable_run_raises_with_the_library_message():
    # the watchdog case of the command-line tests: gravity of 280 m/s^2 along x, no speed limit
    scene = pbf.Scene.default({"fluid.particle_radius": 0.02, "time.substeps": 1,
                               "solver.cfl": 0, "gravity": [280, 0, 0]}, check=False)
    world = pbf.World(scene)
    with pytest.raises(pbf.UnstableError) as e:
        for _ in range(20):
            world.step(scene.dt)
    assert e.value.status == "unstable"
    assert re.search(r"simulation unstable at step \d+ ", str(e.value))
    assert "time.substeps" in str(e.value)


def test_missing_device_raises(coarse_scene):
    try:
        info = pbf.backend_info("cuda")
    except pbf.Error as e:
        # World creation raises what backend_info says: NoDeviceError without a GPU,
        # UnsupportedError where the module was built without CUDA
        assert isinstance(e, (pbf.NoDeviceError, pbf.UnsupportedError))
        with pytest.raises(type(e)) as created:
            pbf.World(coarse_scene, backend="cuda")
        assert str(created.value)
    else:
        assert info  # a GPU is here: the world runs on it
        world = pbf.World(coarse_scene, backend="cuda")
        world.step(coarse_scene.dt)
        assert world.settings()["backend"] == "cuda"
    with pytest.raises(ValueError, match="cpu"):
        pbf.World(coarse_scene, backend="gpu")  # type: ignore[arg-type]


def test_closed_world(coarse_scene):
    with pbf.World(coarse_scene) as world:
        world.step(coarse_scene.dt)
    assert world.closed
    with pytest.raises(ValueError, match="closed"):
        world.positions()
    with pytest.raises(ValueError, match="closed"):
        world.step(coarse_scene.dt)
    world.close()  # twice is fine
    assert "closed" in repr(world)


def test_threads_give_the_same_bits(coarse_scene):
    hashes = set()
    for threads in (1, 2):
        world = pbf.World(coarse_scene, threads=threads)
        world.step(coarse_scene.dt, steps=3)
        hashes.add(world.hash())
    assert len(hashes) == 1
