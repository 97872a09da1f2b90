"""Type stubs of pbf._core, the C extension behind the pbf package (docs/python.md)."""

import os
import sys
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Final, Literal, Optional, Union, final

import numpy as np
import numpy.typing as npt

if sys.version_info >= (3, 11):
    from typing import Self
else:
    from typing_extensions import Self

_StrPath = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_Vec3 = Union[tuple[float, float, float], Sequence[float], npt.NDArray[np.floating[Any]]]
# {"solver.iterations": 6} (values written as JSON) or ["solver.iterations=6"] (`pbf run --set`)
_Overrides = Union[Mapping[str, Any], Sequence[str], None]
_Backend = Literal["cpu", "cuda"]
_Float3 = npt.NDArray[np.float32]
_Int1 = npt.NDArray[np.int32]

__version__: Final[str]
HAVE_RENDER: Final[bool]
HAVE_MPI: Final[bool]

# ---- errors --------------------------------------------------------------------------------

class Error(Exception):
    """An error reported by the pbf library, with the library's message."""

    status: str

class InvalidArgumentError(Error, ValueError): ...
class OutOfMemoryError(Error, MemoryError): ...
class FileError(Error, OSError): ...
class ParseError(Error, ValueError): ...
class UnstableError(Error): ...
class NoDeviceError(Error): ...
class UnsupportedError(Error): ...
class CapacityError(Error): ...
class SceneWarning(UserWarning): ...

# ---- results -------------------------------------------------------------------------------

@final
class Profile(tuple[Any, ...]):
    __match_args__: Final[
        tuple[
            Literal["stage_ms"],
            Literal["step_ms"],
            Literal["avg_density_error"],
            Literal["max_density_error"],
            Literal["avg_neighbors"],
            Literal["iterations"],
            Literal["max_iterations_used"],
            Literal["chebyshev_restarts"],
            Literal["substeps"],
            Literal["steps"],
        ]
    ]
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    @property
    def stage_ms(self) -> dict[str, float]: ...
    @property
    def step_ms(self) -> float: ...
    @property
    def avg_density_error(self) -> float: ...
    @property
    def max_density_error(self) -> float: ...
    @property
    def avg_neighbors(self) -> float: ...
    @property
    def iterations(self) -> int: ...
    @property
    def max_iterations_used(self) -> int: ...
    @property
    def chebyshev_restarts(self) -> int: ...
    @property
    def substeps(self) -> int: ...
    @property
    def steps(self) -> int: ...

@final
class Stats(tuple[Any, ...]):
    __match_args__: Final[
        tuple[
            Literal["particles"],
            Literal["kinetic_energy"],
            Literal["max_speed"],
            Literal["bounds_min"],
            Literal["bounds_max"],
        ]
    ]
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    @property
    def particles(self) -> int: ...
    @property
    def kinetic_energy(self) -> float: ...
    @property
    def max_speed(self) -> float: ...
    @property
    def bounds_min(self) -> tuple[float, float, float]: ...
    @property
    def bounds_max(self) -> tuple[float, float, float]: ...

@final
class ToolState(tuple[Any, ...]):
    __match_args__: Final[
        tuple[
            Literal["time"],
            Literal["position"],
            Literal["velocity"],
            Literal["radius"],
            Literal["reaction"],
            Literal["adhesion"],
            Literal["damping"],
            Literal["total"],
            Literal["contacts"],
            Literal["min_distance"],
        ]
    ]
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    @property
    def time(self) -> float: ...
    @property
    def position(self) -> tuple[float, float, float]: ...
    @property
    def velocity(self) -> tuple[float, float, float]: ...
    @property
    def radius(self) -> float: ...
    @property
    def reaction(self) -> tuple[float, float, float]: ...
    @property
    def adhesion(self) -> tuple[float, float, float]: ...
    @property
    def damping(self) -> tuple[float, float, float]: ...
    @property
    def total(self) -> tuple[float, float, float]: ...
    @property
    def contacts(self) -> int: ...
    @property
    def min_distance(self) -> float: ...

@final
class ProbeSample(tuple[Any, ...]):
    __match_args__: Final[
        tuple[
            Literal["value"],
            Literal["pressure"],
            Literal["particles"],
        ]
    ]
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    @property
    def value(self) -> float: ...
    @property
    def pressure(self) -> float: ...
    @property
    def particles(self) -> int: ...

@final
class Particles(tuple[Any, ...]):
    __match_args__: Final[
        tuple[
            Literal["positions"],
            Literal["velocities"],
            Literal["densities"],
            Literal["ids"],
        ]
    ]
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    @property
    def positions(self) -> _Float3: ...
    @property
    def velocities(self) -> _Float3: ...
    @property
    def densities(self) -> npt.NDArray[np.float32]: ...
    @property
    def ids(self) -> _Int1: ...

@final
class Slab(tuple[Any, ...]):
    __match_args__: Final[
        tuple[
            Literal["lo"],
            Literal["hi"],
            Literal["rank"],
            Literal["ranks"],
        ]
    ]
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    @property
    def lo(self) -> float: ...
    @property
    def hi(self) -> float: ...
    @property
    def rank(self) -> int: ...
    @property
    def ranks(self) -> int: ...

@final
class Halo(tuple[Any, ...]):
    __match_args__: Final[
        tuple[
            Literal["received"],
            Literal["sent"],
            Literal["bytes_received"],
        ]
    ]
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    @property
    def received(self) -> int: ...
    @property
    def sent(self) -> int: ...
    @property
    def bytes_received(self) -> int: ...

@final
class Balance(tuple[Any, ...]):
    __match_args__: Final[
        tuple[
            Literal["count_before"],
            Literal["count_after"],
            Literal["time"],
            Literal["moved"],
            Literal["migrated"],
            Literal["wait"],
            Literal["wait_least"],
        ]
    ]
    n_fields: Final[int]
    n_sequence_fields: Final[int]
    n_unnamed_fields: Final[int]
    @property
    def count_before(self) -> float: ...
    @property
    def count_after(self) -> float: ...
    @property
    def time(self) -> float: ...
    @property
    def moved(self) -> bool: ...
    @property
    def migrated(self) -> int: ...
    @property
    def wait(self) -> float: ...
    @property
    def wait_least(self) -> float: ...

# ---- scenes --------------------------------------------------------------------------------

@final
class Scene:
    """A scene loaded by the library's strict loader (docs/scenes.md)."""

    @classmethod
    def load(cls, path: _StrPath, overrides: _Overrides = None, *, check: bool = True) -> Self: ...
    @classmethod
    def from_json(
        cls,
        text: str,
        overrides: _Overrides = None,
        source: Optional[str] = None,
        check: bool = True,
    ) -> Self: ...
    @classmethod
    def from_dict(
        cls,
        data: dict[str, Any],
        overrides: _Overrides = None,
        source: Optional[str] = None,
        check: bool = True,
    ) -> Self: ...
    @classmethod
    def default(cls, overrides: _Overrides = None, *, check: bool = True) -> Self: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> dict[str, Any]: ...
    def check(self) -> list[str]: ...
    def __reduce__(self) -> tuple[Any, ...]: ...
    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def fps(self) -> float: ...
    @property
    def dt(self) -> float: ...
    @property
    def frames(self) -> int: ...
    @property
    def output_dir(self) -> str: ...
    @property
    def formats(self) -> list[str]: ...
    @property
    def particle_count(self) -> int: ...
    @property
    def camera(self) -> dict[str, Any]: ...
    @property
    def has_tool(self) -> bool: ...

@final
class Checkpoint:
    """A checkpoint file, read and verified; World(checkpoint) restores it."""

    def __init__(self, path: _StrPath) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
        /,
    ) -> None: ...
    @property
    def time(self) -> float: ...
    @property
    def steps(self) -> int: ...
    @property
    def particle_count(self) -> int: ...
    @property
    def app_data(self) -> Optional[bytes]: ...
    @property
    def settings(self) -> dict[str, Any]: ...

# ---- worlds --------------------------------------------------------------------------------

_ColliderType = Literal["sphere", "box", "capsule"]

class World:
    """A simulation world."""

    def __init__(
        self,
        source: Union[Scene, Checkpoint, None] = None,
        *,
        fill: bool = True,
        threads: Optional[int] = None,
        backend: Optional[_Backend] = None,
    ) -> None: ...
    def step(self, dt: float, steps: int = 1) -> None: ...
    def positions(self, out: Optional[_Float3] = None) -> _Float3: ...
    def velocities(self, out: Optional[_Float3] = None) -> _Float3: ...
    def densities(
        self, out: Optional[npt.NDArray[np.float32]] = None
    ) -> npt.NDArray[np.float32]: ...
    def ids(self, out: Optional[_Int1] = None) -> _Int1: ...
    def array(
        self, name: str, out: Optional[npt.NDArray[Any]] = None
    ) -> npt.NDArray[Any]: ...
    def arrays(self) -> dict[str, npt.NDArray[Any]]: ...
    def particles(self) -> Particles: ...
    def profile(self) -> Profile: ...
    def stats(self) -> Stats: ...
    def iteration_errors(self) -> npt.NDArray[np.float32]: ...
    def hash(self) -> int: ...
    def settings(self) -> dict[str, Any]: ...
    def set_solver(self, **fields: Any) -> None: ...
    def add_block(
        self,
        *,
        min: _Vec3 = ...,
        max: _Vec3 = ...,
        velocity: _Vec3 = ...,
        jitter: float = ...,
        seed: int = ...,
    ) -> int: ...
    def add_particles(
        self, positions: npt.ArrayLike, velocities: Optional[npt.ArrayLike] = None
    ) -> int: ...
    def add_collider(
        self,
        type: _ColliderType = "sphere",
        *,
        center: _Vec3 = ...,
        half_extents: _Vec3 = ...,
        radius: float = ...,
        a: _Vec3 = ...,
        b: _Vec3 = ...,
        adhesion: float = ...,
        friction: float = ...,
    ) -> None: ...
    def colliders(self) -> list[dict[str, Any]]: ...
    def meshes(self) -> list[dict[str, Any]]: ...
    def mesh_transforms(self) -> npt.NDArray[np.float32]: ...
    def set_tool(
        self,
        *,
        radius: float = ...,
        position: _Vec3 = ...,
        velocity: _Vec3 = ...,
        motion: Literal["kinematic", "free"] = ...,
        mass: float = ...,
        added_mass: float = ...,
        adhesion_k_tool: float = ...,
        adhesion_k_fluid: float = ...,
        adhesion_a: float = ...,
        adhesion_b: float = ...,
        damping: float = ...,
        interpolation: Literal["linear", "smooth"] = ...,
        keys: Sequence[Union[tuple[float, _Vec3], Mapping[str, Any]]] = ...,
    ) -> None: ...
    def remove_tool(self) -> None: ...
    def tool_settings(self) -> Optional[dict[str, Any]]: ...
    def set_tool_pose(self, position: _Vec3, /) -> None: ...
    def tool_state(self) -> ToolState: ...
    def set_probes(self, probes: Sequence[Mapping[str, Any]], /) -> None: ...
    def probes(self) -> list[dict[str, Any]]: ...
    def sample_probes(self) -> dict[str, ProbeSample]: ...
    def export(self, path: _StrPath, format: Optional[Literal["ply", "vtk", "vtu"]] = None) -> None: ...
    def save_checkpoint(self, path: _StrPath, app_data: Optional[bytes] = None) -> None: ...
    # a world split over MPI processes (docs/python.md, "Split over processes (MPI)")
    def split(self, comm: Any = None, *, cuts: Optional[npt.ArrayLike] = None) -> None: ...
    def slab(self) -> Optional[Slab]: ...
    def cuts(self) -> Optional[npt.NDArray[np.float64]]: ...
    def halo(self) -> Optional[Halo]: ...
    def balance(self, threshold: float = 0.0) -> Balance: ...
    def gather(self) -> Particles: ...
    def gather_diffuse(self) -> dict[str, npt.NDArray[Any]]: ...
    def totals(self) -> tuple[Stats, Profile]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
        /,
    ) -> None: ...
    def __len__(self) -> int: ...
    @property
    def particle_count(self) -> int: ...
    @property
    def time(self) -> float: ...
    @property
    def particle_radius(self) -> float: ...
    @property
    def particle_mass(self) -> float: ...
    @property
    def kernel_radius(self) -> float: ...
    @property
    def domain(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]: ...
    @property
    def memory_bytes(self) -> int: ...
    @property
    def has_tool(self) -> bool: ...
    @property
    def closed(self) -> bool: ...

_Param = Union[float, Sequence[float], npt.ArrayLike, None]

class WorldBatch:
    """Many small worlds of one scene stepped together."""

    def __init__(
        self,
        scene: Scene,
        worlds: int,
        /,
        *,
        threads: Optional[int] = None,
        gravity: _Param = None,
        seed: _Param = None,
        jitter: _Param = None,
        xsph: _Param = None,
        vorticity: _Param = None,
        viscosity: _Param = None,
        tool_position: _Param = None,
    ) -> None: ...
    def step(self, dt: float, steps: int = 1) -> None: ...
    def reset(self, world: int, /, **params: _Param) -> None: ...
    def positions(self, out: Optional[_Float3] = None) -> _Float3: ...
    def velocities(self, out: Optional[_Float3] = None) -> _Float3: ...
    def params(self) -> dict[str, npt.NDArray[Any]]: ...
    def failed(self) -> npt.NDArray[np.bool_]: ...
    def hashes(self) -> list[int]: ...
    def times(self) -> npt.NDArray[np.float64]: ...
    def set_tool_poses(self, poses: npt.ArrayLike, /) -> None: ...
    def tool_states(self) -> list[ToolState]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
        /,
    ) -> None: ...
    def __len__(self) -> int: ...
    @property
    def worlds(self) -> int: ...
    @property
    def particle_count(self) -> int: ...
    @property
    def closed(self) -> bool: ...

# ---- rendering -----------------------------------------------------------------------------

_Camera = Union[Scene, Mapping[str, Any], None]

@final
class Renderer:
    """The OpenGL renderer on a headless EGL context."""

    def __init__(
        self,
        *,
        width: int = ...,
        height: int = ...,
        look: Literal["fluid", "spheres"] = ...,
        color: Literal["uniform", "speed", "density"] = ...,
        color_min: float = ...,
        color_max: float = ...,
        radius_scale: float = ...,
        fluid_radius_scale: float = ...,
        smooth_iterations: int = ...,
        smooth_radius: int = ...,
        smooth_scale: float = ...,
        smooth_depth: float = ...,
        absorption: _Vec3 = ...,
        fluid_color: _Vec3 = ...,
        min_transmission: float = ...,
        refraction: float = ...,
        ior: float = ...,
        sphere_color: _Vec3 = ...,
        floor: bool = ...,
        domain_edges: bool = ...,
        passes: int = ...,
    ) -> None: ...
    def render(
        self, world: World, camera: _Camera = None, *, alpha: bool = False
    ) -> npt.NDArray[np.uint8]: ...
    def settings(self) -> dict[str, Any]: ...
    def set(self, **fields: Any) -> None: ...
    def timings(self) -> dict[str, float]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Self: ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
        /,
    ) -> None: ...
    @property
    def description(self) -> str: ...

# ---- functions -----------------------------------------------------------------------------

def version() -> str: ...
def backend_info(backend: _Backend, /) -> str: ...
def memory_limit() -> int: ...
def scene_keys() -> list[dict[str, str]]: ...
def particle_arrays() -> list[dict[str, Union[str, int]]]: ...
def read_particles(path: _StrPath, /) -> Particles: ...
def write_png(path: _StrPath, image: npt.ArrayLike) -> None: ...
def read_png(path: _StrPath, /) -> npt.NDArray[np.uint8]: ...
def mpi_rank() -> int: ...
def mpi_size() -> int: ...
