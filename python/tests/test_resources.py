"""Resources: no memory growth over many worlds, no array copies in step(), and the GIL
released while the library steps. Behaviour, not timings (bench/python_overhead.py times it)."""

import gc
import threading
import tracemalloc

import numpy as np
import pytest

import pbf


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def one_cycle(scene, cycle):
    scene = pbf.Scene.from_json(scene.to_json(), check=False)
    world = pbf.World(scene)
    world.step(scene.dt)
    world.positions()
    world.particles()
    world.profile()
    world.stats()
    world.settings()
    if cycle % 2:
        world.close()
    del world
    if cycle % 10 == 0:  # the error paths too
        with pytest.raises(pbf.InvalidArgumentError):
            pbf.Scene.from_dict({"fluid": {"particle_radius": -1}})
        with pytest.raises(pbf.ParseError):
            pbf.Scene.from_dict({"fluid": {"partcle_radius": 1}})


@pytest.mark.skipif(not hasattr(tracemalloc, "start"), reason="no tracemalloc")
def test_no_memory_growth_over_1000_worlds():
    # 150 particles: the cycle is about allocation, not physics
    scene = pbf.Scene.default({"fluid.particle_radius": 0.03, "solver.threads": 1})
    for cycle in range(100):  # warm up: allocator pools, caches, lazily imported modules
        one_cycle(scene, cycle)
    gc.collect()
    tracemalloc.start()
    rss0 = rss_bytes()
    before = tracemalloc.take_snapshot()
    for cycle in range(1000):
        one_cycle(scene, cycle)
    gc.collect()
    grown = rss_bytes() - rss0
    growth = tracemalloc.take_snapshot().compare_to(before, "lineno")
    tracemalloc.stop()
    traced = sum(stat.size_diff for stat in growth)
    # A leaked world is kilobytes (its arrays, grid, neighbour lists): 1000 of them would be
    # megabytes. A leaked Python object (an array, a dict, a tuple) shows in tracemalloc.
    assert traced < 64 * 1024, f"Python allocations grew by {traced} bytes: {growth[:3]}"
    assert grown < 2 * 1024 * 1024, f"resident memory grew by {grown} bytes"


def test_step_copies_no_arrays():
    # 10k particles: a copy of the positions would be 120 kB
    scene = pbf.Scene.default({"fluid.particle_radius": 0.0105, "solver.threads": 1,
                               "time.substeps": 1}, check=False)
    world = pbf.World(scene)
    n = len(world)
    assert 9000 < n < 11000
    out = np.empty((n, 3), np.float32)
    world.step(scene.dt)
    world.positions(out=out)
    tracemalloc.start()
    tracemalloc.reset_peak()
    for _ in range(3):
        world.step(scene.dt)
        assert world.positions(out=out) is out
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # numpy reports its buffers to tracemalloc: neither step() nor a read-back into `out`
    # allocated one (a few hundred bytes of call overhead at most)
    assert peak < 4096, f"{peak} bytes allocated while stepping"


def test_gil_is_released_while_stepping():
    # a step long enough that the main thread, spinning on the GIL, gets to run during it
    scene = pbf.Scene.default({"fluid.particle_radius": 0.0105, "solver.threads": 1})
    world = pbf.World(scene)
    done = threading.Event()
    failures = []

    def stepper():
        try:
            world.step(scene.dt)
        except Exception as e:  # pragma: no cover - reported below
            failures.append(e)
        finally:
            done.set()

    seen_busy = 0
    t = threading.Thread(target=stepper)
    t.start()
    while not done.is_set():
        # Python code runs while the library steps; the world refuses to be touched meanwhile
        try:
            world.positions()
        except RuntimeError as e:
            assert "busy" in str(e)
            seen_busy += 1
    t.join()
    assert not failures
    assert seen_busy > 0, "the main thread never ran during the step: the GIL was held"
    assert world.profile().steps == 1
    world.positions()  # usable again
