"""pbf — Position Based Fluids for Python: a thin layer over the pbf C library.

Load a scene, build its world, step it and read the particles as numpy arrays::

    import pbf

    scene = pbf.Scene.load("scenes/dam_break.json", {"fluid.particle_radius": 0.0125})
    world = pbf.World(scene)
    for frame in range(60):
        world.step(scene.dt)          # the GIL is released while the library steps
    x = world.positions()             # float32 (N, 3), row k is the particle with id k
    print(world.profile().step_ms, world.stats().kinetic_energy)

Every call goes to the C API (include/pbf/*.h); library errors arrive as pbf.Error subclasses
carrying the library's message. docs/python.md is the guide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._core import (
    HAVE_MPI,
    HAVE_RENDER,
    Balance,
    CapacityError,
    Checkpoint,
    Error,
    FileError,
    Halo,
    InvalidArgumentError,
    NoDeviceError,
    OutOfMemoryError,
    ParseError,
    Particles,
    ProbeSample,
    Profile,
    Renderer,
    Scene,
    SceneWarning,
    Slab,
    Stats,
    ToolState,
    UnstableError,
    UnsupportedError,
    World,
    WorldBatch,
    __version__,
    backend_info,
    memory_limit,
    mpi_rank,
    mpi_size,
    particle_arrays,
    read_particles,
    read_png,
    scene_keys,
    version,
    write_png,
)

from .dataset import make_dataset

if TYPE_CHECKING:
    from ._core import _Overrides, _StrPath


def load_scene(path: _StrPath, overrides: _Overrides = None, *, check: bool = True) -> Scene:
    """Scene.load(path, overrides, check=check): a scene file with overrides."""
    return Scene.load(path, overrides, check=check)


__all__ = [
    "HAVE_MPI",
    "HAVE_RENDER",
    "Balance",
    "CapacityError",
    "Checkpoint",
    "Error",
    "FileError",
    "Halo",
    "InvalidArgumentError",
    "NoDeviceError",
    "OutOfMemoryError",
    "ParseError",
    "Particles",
    "ProbeSample",
    "Profile",
    "Renderer",
    "Scene",
    "SceneWarning",
    "Slab",
    "Stats",
    "ToolState",
    "UnstableError",
    "UnsupportedError",
    "World",
    "WorldBatch",
    "__version__",
    "backend_info",
    "load_scene",
    "make_dataset",
    "memory_limit",
    "mpi_rank",
    "mpi_size",
    "particle_arrays",
    "read_particles",
    "read_png",
    "scene_keys",
    "version",
    "write_png",
]
