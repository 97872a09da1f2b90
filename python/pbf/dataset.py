"""Learned-simulator datasets: many varied runs of pbf scenes written in the layouts that
LagrangeBench (HDF5) and GNS (DeepMind's learning_to_simulate, and its PyTorch port: NPZ) read.

    pbf dataset scenes/dam_break.json --format lagrangebench --trajectories 20 --frames 200 \\
        --out data/dam --set fluid.particle_radius=0.02 --vary fluid.blocks[0].max[0]=0.3:0.6

or from Python::

    import pbf
    meta = pbf.make_dataset(["scenes/dam_break.json"], "data/dam", trajectories=20,
                            frames=200, vary={"fluid.blocks[0].max[0]": (0.3, 0.6)})

Each trajectory is one run of a scene (the scenes are used in turn) with the --set overrides and,
for each --vary key, a value drawn uniformly from its range by a generator seeded with (seed,
trajectory index): the same seed gives the same files, byte for byte. The domain walls, the
colliders, the meshes and the tool are sampled at the particle spacing into boundary particles
with their own type. Runs go in parallel over the cores, one process each. docs/datasets.md is
the guide.
"""

from __future__ import annotations

import argparse
import collections.abc as abc
import io
import json
import math
import multiprocessing
import os
import re
import sys
import tempfile
import time
import warnings
import zipfile
from typing import Any, Optional, Union

import numpy as np

from . import _core

FORMATS = ("lagrangebench", "gns")

# LagrangeBench's particle types (lagrangebench.utils.NodeType): fluid 0; walls 1 and 2 are
# kinematic (their positions are given to the model); 3 is a rigid body the model predicts.
LB_FLUID, LB_SOLID_WALL, LB_MOVING_WALL, LB_RIGID_BODY = 0, 1, 2, 3
# DeepMind's learning_to_simulate and the GNS port: water is type 5; type 3 is the one
# kinematic type (KINEMATIC_PARTICLE_ID), so every boundary particle gets it.
GNS_WATER, GNS_KINEMATIC = 5, 3
# indexed by the LagrangeBench type above
_GNS_TYPES = np.array([GNS_WATER, GNS_KINEMATIC, GNS_KINEMATIC, GNS_KINEMATIC], np.int64)
TYPE_NAMES = {LB_FLUID: "fluid", LB_SOLID_WALL: "static wall, collider or mesh",
              LB_MOVING_WALL: "moving wall, keyframed mesh or scripted tool",
              LB_RIGID_BODY: "floating mesh or free tool"}

SPLITS = ("train", "valid", "test")
# The domain walls in pbf_wall order; wall w is bit w of a boundary point's face bits.
WALLS = ("x_min", "x_max", "y_min", "y_max", "z_min", "z_max")
# A fixed date for the NPZ archives' members (zip's earliest): the same seed, the same bytes.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


class DatasetError(ValueError):
    """Bad input to make_dataset: the message names the option or key and what was expected."""


# ---------------------------------------------------------------------------------------------
# Options


def parse_vary(spec: str) -> tuple[str, float, float]:
    """'KEY=LOW:HIGH' -> (KEY, LOW, HIGH)."""
    key, eq, rng = spec.partition("=")
    low, colon, high = rng.partition(":")
    try:
        if not (eq and colon and key):
            raise ValueError
        lo, hi = float(low), float(high)
    except ValueError:
        raise DatasetError(f"--vary '{spec}': expected KEY=LOW:HIGH with two numbers, e.g. "
                           "material.viscosity=0:0.001") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise DatasetError(f"--vary '{spec}': expected finite numbers with LOW <= HIGH")
    return key, lo, hi


def parse_split(split: Union[str, abc.Sequence[float]]) -> tuple[float, float, float]:
    """'0.8,0.1,0.1' (or three numbers) -> the train, valid and test fractions."""
    items: abc.Sequence[Any] = split.split(",") if isinstance(split, str) else split
    try:
        parts = [float(p) for p in items]
    except (TypeError, ValueError):
        parts = []
    if len(parts) != 3 or not all(math.isfinite(p) and p > 0 for p in parts) or \
            abs(sum(parts) - 1) > 1e-6:
        raise DatasetError(f"--split {split!r}: expected three fractions above 0 for train, "
                           "valid and test that add up to 1, e.g. 0.8,0.1,0.1")
    return parts[0], parts[1], parts[2]


def split_counts(n: int, fractions: abc.Sequence[float]) -> list[int]:
    """Trajectories per split: the largest remainders of n × fraction, at least one each."""
    if n < len(fractions):
        raise DatasetError(f"--trajectories {n}: train, valid and test need at least one "
                           f"trajectory each, so at least {len(fractions)}")
    exact = [n * f for f in fractions]
    counts = [int(math.floor(e)) for e in exact]
    for k in sorted(range(len(exact)), key=lambda k: counts[k] - exact[k])[: n - sum(counts)]:
        counts[k] += 1
    for k in range(len(counts)):
        while counts[k] == 0:  # taken from the largest split
            counts[max(range(len(counts)), key=lambda j: counts[j])] -= 1
            counts[k] += 1
    return counts


_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


def _lookup(tree: Any, key: str) -> tuple[bool, Any]:
    """The value at a --set path ("fluid.blocks[0].max[1]") in a scene's dict, if it is there."""
    node = tree
    for part in key.split("."):
        pos = 0
        for m in _SEGMENT.finditer(part):
            if m.start() != pos:
                return False, None
            pos = m.end()
            if m.group(1) is not None:
                if not isinstance(node, dict) or m.group(1) not in node:
                    return False, None
                node = node[m.group(1)]
            else:
                i = int(m.group(2))
                if not isinstance(node, list) or i >= len(node):
                    return False, None
                node = node[i]
        if pos != len(part) or pos == 0:
            return False, None
    return True, node


def _schema(key: str) -> tuple[Optional[dict[str, str]], Optional[int]]:
    """The scene schema's entry for a --set path (pbf.scene_keys: "fluid.blocks[i].max" for
    "fluid.blocks[0].max"), and the vector component when the path ends in one ([k])."""
    general = re.sub(r"\[\d+\]", "[i]", key)
    general = re.sub(r"^domain\.walls\.[a-z_]+\.", "domain.walls.W.", general)
    table = {k["path"]: k for k in _core.scene_keys()}
    if general in table:
        return table[general], None
    m = re.fullmatch(r"(.*)\[(\d+)\]", key)
    if m and general[: -len("[i]")] in table:
        info = table[general[: -len("[i]")]]
        if info["type"] == "[x, y, z]":
            return info, int(m.group(2))
    return None, None


class _Varied:
    """One --vary key, checked against the schema and a scene: how to draw a value and write it
    as a --set override."""

    def __init__(self, key: str, low: float, high: float, base: dict[str, Any],
                 source: str):
        self.key, self.low, self.high = key, low, high
        self.vector: Optional[tuple[str, int, list[Any]]] = None  # (path, component, base)
        info, component = _schema(key)
        if info is None:  # the loader names what is wrong: an unknown key, an index past the end
            try:
                _core.Scene.load(source, [f"{key}={low!r}"], check=False)
            except _core.Error as e:
                raise DatasetError(f"--vary {key}: {e}") from None
            raise DatasetError(f"--vary {key}: not a numeric scene key (docs/scenes.md)")
        kind = info["type"]
        if component is not None:
            if component > 2:
                raise DatasetError(f"--vary {key}: a vector has components [0] to [2]")
            path = key[: key.rindex("[")]
            found, vec = _lookup(base, path)
            if found and isinstance(vec, list) and len(vec) == 3:
                self.vector = (path, component, list(vec))
            kind = "number"
        if kind == "[x, y, z]":
            raise DatasetError(f"--vary {key}: '{key}' is a vector [x, y, z]; vary one component "
                               f"at a time: {key}[0], {key}[1] or {key}[2]")
        if kind not in ("number", "integer"):
            raise DatasetError(f"--vary {key}: '{key}' is of type {kind}, not a number")
        self.integer = kind == "integer"
        if self.integer and (low != int(low) or high != int(high)):
            raise DatasetError(f"--vary {key}={low:g}:{high:g}: '{key}' is an integer; give "
                               "integer bounds")

    def draw(self, rng: np.random.Generator) -> Union[int, float]:
        if self.integer:
            return int(rng.integers(int(self.low), int(self.high), endpoint=True))
        return float(rng.uniform(self.low, self.high))

    def override(self, value: Union[int, float]) -> str:
        if self.vector is not None:
            path, k, vec = self.vector
            vec = list(vec)
            vec[k] = value
            return f"{path}={json.dumps(vec)}"
        return f"{self.key}={json.dumps(value)}"


# ---------------------------------------------------------------------------------------------
# Boundary particles: the solids sampled at the particle spacing


def _lattice(lo: float, hi: float, spacing: float) -> np.ndarray:
    """Points from lo to hi, both included, about spacing apart."""
    n = max(1, int(round((hi - lo) / spacing))) + 1
    return np.linspace(lo, hi, n)


def _box_surface(lo: Any, hi: Any, spacing: float) -> tuple[np.ndarray, np.ndarray]:
    """Points on the surface of a box at about spacing, each once, and which of the six faces
    (x-, x+, y-, y+, z-, z+: bits 0..5) each lies on."""
    axes = [_lattice(lo[a], hi[a], spacing) for a in range(3)]
    grid = np.stack(np.meshgrid(*[np.arange(len(x)) for x in axes], indexing="ij"), -1)
    grid = grid.reshape(-1, 3)
    last = np.array([len(x) - 1 for x in axes])
    faces = np.zeros(len(grid), np.int64)
    for a in range(3):
        faces |= (grid[:, a] == 0).astype(np.int64) << (2 * a)
        faces |= (grid[:, a] == last[a]).astype(np.int64) << (2 * a + 1)
    keep = faces != 0
    grid, faces = grid[keep], faces[keep]
    points = np.stack([axes[a][grid[:, a]] for a in range(3)], -1)
    return points, faces


def _sphere_surface(center: Any, radius: float, spacing: float,
                    upper: Any = None) -> np.ndarray:
    """A Fibonacci lattice on a sphere, one point per spacing²; with upper (a unit vector) only
    the half on that side."""
    n = max(1, int(round(4 * math.pi * radius**2 / spacing**2)))
    k = np.arange(n) + 0.5
    z = 1 - 2 * k / n
    phi = k * math.pi * (3 - math.sqrt(5))
    s = np.sqrt(1 - z * z)
    unit = np.stack([s * np.cos(phi), s * np.sin(phi), z], -1)
    if upper is not None:
        unit = unit[unit @ np.asarray(upper, float) > 0]
    return np.asarray(center, float) + radius * unit


def _capsule_surface(end_a: abc.Sequence[float], end_b: abc.Sequence[float], radius: float,
                     spacing: float) -> np.ndarray:
    a, b = np.asarray(end_a, float), np.asarray(end_b, float)
    axis = b - a
    length = float(np.linalg.norm(axis))
    if length == 0:
        return _sphere_surface(a, radius, spacing)
    u = axis / length
    helper = np.array([1.0, 0, 0]) if abs(u[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = np.cross(u, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(u, e1)
    ring = max(3, int(round(2 * math.pi * radius / spacing)))
    angles = 2 * math.pi * np.arange(ring) / ring
    circle = radius * (np.cos(angles)[:, None] * e1 + np.sin(angles)[:, None] * e2)
    t = _lattice(0.0, length, spacing)
    tube = (a + t[:, None, None] * u + circle[None]).reshape(-1, 3)
    return np.concatenate([tube, _sphere_surface(a, radius, spacing, -u),
                           _sphere_surface(b, radius, spacing, u)])


def _mesh_surface(vertices: np.ndarray, triangles: np.ndarray, spacing: float) -> np.ndarray:
    """Points on a triangle mesh about spacing apart: a lattice on each triangle (its corners and
    edges included), thinned to one point per cell of spacing/2 where triangles share edges."""
    v = vertices.astype(np.float64)
    parts = []
    for tri in triangles:
        a, b, c = v[tri[0]], v[tri[1]], v[tri[2]]
        longest = max(np.linalg.norm(b - a), np.linalg.norm(c - b), np.linalg.norm(a - c))
        n = max(1, int(math.ceil(longest / spacing)))
        i, j = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
        keep = i + j <= n
        u, w = i[keep, None] / n, j[keep, None] / n
        parts.append(a + u * (b - a) + w * (c - a))
    if not parts:
        return np.zeros((0, 3))
    points = np.concatenate(parts)
    cells = np.floor(points / (0.5 * spacing)).astype(np.int64)
    _, first = np.unique(cells, axis=0, return_index=True)
    return points[np.sort(first)]


class _Boundary:
    """The boundary particles of one world: fixed points plus the parts that move each frame."""

    def __init__(self, world: Any, spacing: float):
        lo, hi = (np.array(v, float) for v in world.domain)  # at rest: t = 0
        settings = world.settings()
        motion = settings["wall_motion"]
        moving = [abs(motion[w]["amplitude"]) > 0 for w in WALLS]
        points, faces = _box_surface(lo, hi, spacing)
        self.wall_points, self.wall_faces = points, faces
        wall_moves = np.zeros(len(points), bool)
        for w in range(6):
            if moving[w]:
                wall_moves |= (faces >> w & 1).astype(bool)
        self.any_wall_moves = bool(wall_moves.any())
        parts = [np.where(wall_moves, LB_MOVING_WALL, LB_SOLID_WALL)]
        fixed = []
        for c in world.colliders():
            if c["type"] == "sphere":
                p = _sphere_surface(c["center"], c["radius"], spacing)
            elif c["type"] == "box":
                center, half = np.asarray(c["center"], float), np.asarray(c["half_extents"], float)
                p = _box_surface(center - half, center + half, spacing)[0]
            else:
                p = _capsule_surface(c["a"], c["b"], c["radius"], spacing)
            # parts outside the domain never meet the fluid
            p = p[np.all((p >= lo - 1e-9) & (p <= hi + 1e-9), axis=1)]
            fixed.append(p)
        # meshes: a static one is placed once; a kinematic or floating one moves each frame
        self.moving_meshes: list[tuple[int, np.ndarray]] = []
        moving_types = []
        transforms = world.mesh_transforms().astype(np.float64)
        for k, m in enumerate(world.meshes()):
            if m["sink"]:  # removes particles; no solid
                continue
            local = _mesh_surface(m["vertices"], m["triangles"], spacing)
            if m["motion"] == "static":
                p = local @ transforms[k, :, :3].T + transforms[k, :, 3]
                fixed.append(p[np.all((p >= lo - 1e-9) & (p <= hi + 1e-9), axis=1)])
            else:
                self.moving_meshes.append((k, local))
                moving_types.append(np.full(len(local), LB_MOVING_WALL if m["motion"] ==
                                            "kinematic" else LB_RIGID_BODY))
        self.collider_points = np.concatenate(fixed) if fixed else np.zeros((0, 3))
        parts.append(np.full(len(self.collider_points), LB_SOLID_WALL))
        parts += moving_types
        self.tool_unit: Optional[np.ndarray] = None
        if world.has_tool:
            state = world.tool_state()
            self.tool_unit = _sphere_surface((0, 0, 0), state.radius, spacing)
            free = (world.tool_settings() or {}).get("motion") == "free"
            parts.append(np.full(len(self.tool_unit), LB_RIGID_BODY if free else LB_MOVING_WALL))
        self.types = np.concatenate(parts).astype(np.int32)

    def __len__(self) -> int:
        return len(self.types)

    def positions(self, world: Any, out: np.ndarray) -> None:
        """The boundary particles now, into out (len(self), 3)."""
        p = self.wall_points
        if self.any_wall_moves:  # each wall's points sit on the wall where it is now
            lo, hi = world.domain
            p = p.copy()
            for a in range(3):
                p[:, a] = np.where(self.wall_faces >> (2 * a) & 1, lo[a], p[:, a])
                p[:, a] = np.where(self.wall_faces >> (2 * a + 1) & 1, hi[a], p[:, a])
        n = len(p)
        out[:n] = p
        m = n + len(self.collider_points)
        out[n:m] = self.collider_points
        if self.moving_meshes:
            transforms = world.mesh_transforms().astype(np.float64)
            for k, local in self.moving_meshes:
                out[m:m + len(local)] = local @ transforms[k, :, :3].T + transforms[k, :, 3]
                m += len(local)
        if self.tool_unit is not None:
            out[m:] = self.tool_unit + np.asarray(world.tool_state().position, float)


# ---------------------------------------------------------------------------------------------
# One trajectory (run in a worker process)


def _simulate(job: tuple[int, Any, int, int]) -> tuple[int, np.ndarray, np.ndarray, list[list[
        float]], float]:
    """Runs one trajectory: (index, position [T, N, 3] float32 with the fluid first and then the
    boundary particles, particle_type [N] int32, the domain's extremes, seconds)."""
    index, scene, frames, threads = job
    started = time.perf_counter()
    with _core.World(scene, threads=threads) as world:
        spacing = 2.0 * world.particle_radius
        boundary = _Boundary(world, spacing)
        n_fluid = world.particle_count
        position = np.empty((frames, n_fluid + len(boundary), 3), np.float32)
        lo, hi = (np.array(v, float) for v in world.domain)
        for f in range(frames):
            if f > 0:
                world.step(scene.dt)
            if world.particle_count != n_fluid:  # refused before the run; a guard
                raise DatasetError(f"{scene.source}: the particle count changed during the run")
            world.positions(out=position[f, :n_fluid])
            boundary.positions(world, position[f, n_fluid:])
            d_lo, d_hi = world.domain
            lo, hi = np.minimum(lo, d_lo), np.maximum(hi, d_hi)
    types = np.concatenate([np.full(n_fluid, LB_FLUID, np.int32), boundary.types])
    return index, position, types, [lo.tolist(), hi.tolist()], time.perf_counter() - started


# ---------------------------------------------------------------------------------------------
# Statistics: LagrangeBench's (data_gen/lagrangebench_data/gen_dataset.py): velocity is the
# displacement between saved frames, acceleration its change, over fluid particles only; each
# trajectory's mean over frames and particles, averaged over the trajectories; the standard
# deviation from each trajectory's mean square about that mean, averaged likewise; a deviation
# below 1e-7 is written as 1.


class _Moments:
    def __init__(self) -> None:
        self.means: list[np.ndarray] = []
        self.m2s: list[np.ndarray] = []  # per trajectory: mean square about its own mean

    def add(self, samples: np.ndarray) -> None:
        s = samples.reshape(-1, samples.shape[-1])
        mean = s.mean(axis=0)
        self.means.append(mean)
        self.m2s.append(((s - mean) ** 2).mean(axis=0))

    def result(self) -> tuple[list[float], list[float]]:
        means = np.stack(self.means)
        mean = means.mean(axis=0)
        # mean square about the overall mean = own spread + (own mean - overall mean)^2
        var = (np.stack(self.m2s) + (means - mean) ** 2).mean(axis=0)
        std = np.sqrt(var)
        std = np.where(std < 1e-7, 1.0, std)
        return mean.tolist(), std.tolist()


def trajectory_statistics(position: np.ndarray, particle_type: np.ndarray,
                          fluid_type: int) -> tuple[np.ndarray, np.ndarray]:
    """A trajectory's velocity and acceleration samples as the learned simulators compute them:
    differences of the float32 positions between saved frames (m per frame, m per frame²)."""
    x = position[:, particle_type == fluid_type].astype(np.float64)
    vel = x[1:] - x[:-1]
    return vel, vel[1:] - vel[:-1]


# ---------------------------------------------------------------------------------------------
# Writers: to temporary names in the output folder, renamed at the end


class _H5Writer:
    """One LagrangeBench split: groups "00000", ... holding position and particle_type."""

    def __init__(self, path: str):
        try:
            import h5py  # type: ignore[import]
        except ImportError:
            raise DatasetError("--format lagrangebench writes HDF5 through h5py, which this "
                               f"Python ({sys.executable}) lacks: apt-get install python3-h5py"
                               ) from None
        self.h5py = h5py
        self.file = h5py.File(path, "w", libver="earliest", track_order=False)
        self.count = 0
        # no modification times in the object headers: the same data, the same bytes
        self.gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
        self.gcpl.set_obj_track_times(False)

    def add(self, position: np.ndarray, particle_type: np.ndarray) -> None:
        name = f"{self.count:05d}".encode()
        gid = self.h5py.h5g.create(self.file.id, name, gcpl=self.gcpl)
        group = self.h5py.Group(gid)
        group.create_dataset("position", data=position, dtype=np.float32, compression="gzip",
                             compression_opts=4, shuffle=True, track_times=False,
                             chunks=position.shape)
        group.create_dataset("particle_type", data=particle_type, dtype=np.int32,
                             track_times=False)
        self.count += 1

    def close(self) -> None:
        self.file.close()


class _NpzWriter:
    """One GNS split: a zip of simulation_trajectory_K.npy, each an object array (position,
    particle_type), which the GNS loader unpacks with np.load(allow_pickle=True)."""

    def __init__(self, path: str):
        self.zip = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
        self.count = 0

    def add(self, position: np.ndarray, particle_type: np.ndarray) -> None:
        pair = np.empty(2, dtype=object)
        pair[0] = np.ascontiguousarray(position, np.float32)
        pair[1] = particle_type.astype(np.int64)
        info = zipfile.ZipInfo(f"simulation_trajectory_{self.count}.npy", _ZIP_DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, pair, allow_pickle=True)
        with self.zip.open(info, "w", force_zip64=True) as f:
            f.write(buffer.getvalue())
        self.count += 1

    def close(self) -> None:
        self.zip.close()


# ---------------------------------------------------------------------------------------------
# The dataset


def _load(path: str, overrides: list[str], what: str) -> Any:
    try:
        return _core.Scene.load(path, overrides, check=True)
    except _core.Error as e:
        if not what:
            raise
        raise DatasetError(f"{what}{e}") from None


def _check_scene(scene: Any, source: str) -> dict[str, Any]:
    """What a trajectory with a fixed particle count and one fluid type cannot hold."""
    d = scene.to_dict()
    flow = d.get("flow") or {}
    if flow.get("emitters") or flow.get("sinks"):
        raise DatasetError(f"{source}: 'flow' has emitters or sinks, which change the particle "
                           "count; a trajectory needs a fixed count (remove the flow section)")
    if len(d.get("materials") or []) > 1:
        raise DatasetError(f"{source}: 'materials' has several fluids; the learned-simulator "
                           "layouts have one fluid type")
    return d


def _scene_sets(scene_path: str, sets: list[str], varied: list[tuple[str, float, float]],
                frames: int) -> list[_Varied]:
    """The --vary keys checked against one scene: each key's type from the schema, each end of
    its range through the scene loader (which knows every key's limits)."""
    base_overrides = sets + [f"time.frames={frames - 1}"]
    base = _load(scene_path, base_overrides, "")
    base_dict = base.to_dict()
    checks = []
    for key, low, high in varied:
        v = _Varied(key, low, high, base_dict, scene_path)
        for end in (low, high):
            value: Union[int, float] = int(end) if v.integer else end
            try:
                _core.Scene.load(scene_path, base_overrides + [v.override(value)], check=False)
            except _core.Error as e:
                raise DatasetError(f"--vary {key}={low:g}:{high:g}: {e}") from None
        checks.append(v)
    return checks


def make_dataset(scenes: Union[str, os.PathLike[str], abc.Sequence[Union[str, os.PathLike[str]]]],
                 out: Union[str, os.PathLike[str]], *, format: str = "lagrangebench",
                 trajectories: int = 10, frames: int = 100,
                 set: Union[None, abc.Mapping[str, Any], abc.Iterable[str]] = None,
                 vary: Union[None, abc.Mapping[str, tuple[float, float]], abc.Iterable[str]] = None,
                 seed: int = 0, split: Union[str, abc.Sequence[float]] = (0.8, 0.1, 0.1),
                 connectivity_radius: Optional[float] = None, jobs: Optional[int] = None,
                 progress: bool = False) -> dict[str, Any]:
    """Writes a learned-simulator dataset into the folder out and returns its metadata.

    scenes: scene files, used in turn (trajectory i runs scenes[i % len(scenes)]); set: the
    overrides of `pbf run --set` for every trajectory ({"key": value} or ["key=value"]); vary:
    keys drawn uniformly per trajectory ({"key": (low, high)} or ["key=low:high"]; an integer
    key draws integers; "key[k]" varies component k of a vector); frames: saved positions per
    trajectory, the initial state included; split: the train, valid and test fractions;
    connectivity_radius: default the kernel radius; jobs: processes (default: the cores);
    progress: a progress bar on stderr. Raises DatasetError (a ValueError) or a pbf.Error
    naming the option, scene file and key on bad input; writes nothing then.
    """
    if format not in FORMATS:
        raise DatasetError(f"--format {format!r}: expected one of {', '.join(FORMATS)}")
    scene_paths = [os.fspath(scenes)] if isinstance(scenes, (str, os.PathLike)) else \
        [os.fspath(s) for s in scenes]
    if not scene_paths:
        raise DatasetError("no scene given: name at least one scene file")
    if isinstance(trajectories, bool) or not isinstance(trajectories, int) or trajectories < 1:
        raise DatasetError(f"--trajectories {trajectories!r}: expected an integer >= 1")
    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 3:
        raise DatasetError(f"--frames {frames!r}: expected an integer >= 3 (saved positions per "
                           "trajectory; accelerations need three)")
    fractions = parse_split(split)
    counts = split_counts(trajectories, fractions)
    if connectivity_radius is not None and not (connectivity_radius > 0 and
                                                math.isfinite(connectivity_radius)):
        raise DatasetError(f"--connectivity-radius {connectivity_radius!r}: expected a "
                           "length > 0 in m")
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
            (os.cpu_count() or 1)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise DatasetError(f"--jobs {jobs!r}: expected an integer >= 1")
    sets = [f"{k}={json.dumps(v)}" for k, v in set.items()] if isinstance(set, abc.Mapping) else \
        list(set or [])
    if isinstance(vary, abc.Mapping):
        varied = []
        for k, r in vary.items():
            try:
                low, high = (float(x) for x in r)
            except (TypeError, ValueError):
                raise DatasetError(f"vary[{k!r}]: expected (low, high)") from None
            varied.append(parse_vary(f"{k}={low!r}:{high!r}"))
    else:
        varied = [parse_vary(s) for s in (vary or [])]
    out = os.fspath(out)

    # Every scene of every trajectory is loaded and checked before anything runs.
    per_scene = [_scene_sets(p, sets, varied, frames) for p in scene_paths]
    jobs_list, records = [], []
    radius = fps = None
    dt = 0.0
    first_scene: Any = None
    for i in range(trajectories):
        k = i % len(scene_paths)
        path = scene_paths[k]
        checks = per_scene[k]
        rng = np.random.default_rng([seed, i])
        values = {v.key: v.draw(rng) for v in checks}
        overrides = sets + [f"time.frames={frames - 1}"] + \
            [v.override(values[v.key]) for v in checks]
        what = f"trajectory {i} ({', '.join(f'{a}={b:g}' for a, b in values.items())}): " \
            if values else ""
        scene = _load(path, overrides, what)
        _check_scene(scene, f"{what}{path}")
        r = scene.to_dict()["fluid"]["particle_radius"]
        if radius is None:
            radius, fps, dt, first_scene = r, scene.fps, float(scene.dt), scene
        elif r != radius or scene.fps != fps:
            raise DatasetError(f"{what}{path}: 'fluid.particle_radius' {r:g} m and 'time.fps' "
                               f"{scene.fps:g} must be the same in every trajectory (a dataset "
                               f"has one spacing and one dt; the first has {radius:g} m and "
                               f"{fps:g})")
        jobs_list.append((i, scene, frames, 0))
        records.append({"index": i, "scene": path, "name": scene.name, "values": values})
    assert radius is not None and fps is not None

    splits_of = []
    for s, c in enumerate(counts):
        splits_of += [s] * c

    # The output folder, and a temporary name there for every file.
    try:
        os.makedirs(out, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=out, prefix=".pbf-dataset-")
        probe.close()
    except OSError as e:
        raise DatasetError(f"{out}: the output folder cannot be written "
                           f"({e.strerror or e})") from None
    ext = ".h5" if format == "lagrangebench" else ".npz"
    names = [s + ext for s in SPLITS] + ["metadata.json"]
    temps = {n: os.path.join(out, f".{n}.tmp-{os.getpid()}") for n in names}
    writers: list[Any] = []
    try:
        writer_class = _H5Writer if format == "lagrangebench" else _NpzWriter
        writers = [writer_class(temps[s + ext]) for s in SPLITS]
        vel, acc = _Moments(), _Moments()
        lo = np.full(3, np.inf)
        hi = np.full(3, -np.inf)
        n_max = 0
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        jobs = min(jobs, trajectories)
        threads = max(1, cores // jobs)
        jobs_list = [(i, sc, fr, threads) for i, sc, fr, _ in jobs_list]
        bar = _Progress(trajectories) if progress else None
        for index, position, types, box, seconds in _run_all(jobs_list, jobs):
            s = splits_of[index]
            key = f"{writers[s].count:05d}"
            out_types = types if format == "lagrangebench" else _GNS_TYPES[types]
            writers[s].add(position, out_types)
            if s == 0:
                v, a = trajectory_statistics(position, types, LB_FLUID)
                vel.add(v)
                acc.add(a)
            lo = np.minimum(lo, np.minimum(box[0], position.min(axis=(0, 1))))
            hi = np.maximum(hi, np.maximum(box[1], position.max(axis=(0, 1))))
            n_max = max(n_max, len(types))
            records[index].update(split=SPLITS[s], key=key, particles=int(len(types)),
                                  fluid_particles=int(np.count_nonzero(types == LB_FLUID)))
            if bar is not None:
                bar.update(len(types), seconds)
        if bar is not None:
            bar.finish()
        for w in writers:
            w.close()
        writers = []

        vel_mean, vel_std = vel.result()
        acc_mean, acc_std = acc.result()
        kernel = _kernel_radius(first_scene)
        meta = _metadata(format, dt=dt, radius=radius, frames=frames, counts=counts,
                         n_max=n_max, lo=lo, hi=hi,
                         connectivity=connectivity_radius if connectivity_radius else kernel,
                         kernel=kernel, vel=(vel_mean, vel_std), acc=(acc_mean, acc_std),
                         source={"pbf_version": _core.version(), "seed": seed,
                                 "scenes": scene_paths, "set": sets,
                                 "vary": [{"key": k, "low": a, "high": b} for k, a, b in varied],
                                 "split": list(fractions), "trajectories": records})
        with open(temps["metadata.json"], "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        for n in names:  # the splits first, metadata.json last
            os.replace(temps[n], os.path.join(out, n))
        return meta
    finally:
        for w in writers:
            try:
                w.close()
            except Exception:
                pass
        for t in temps.values():
            if os.path.exists(t):
                os.unlink(t)


def _kernel_radius(scene: Any) -> float:
    with _core.World(scene, fill=False) as w:
        return float(w.kernel_radius)


def _metadata(format: str, *, dt: float, radius: float, frames: int, counts: list[int],
              n_max: int, lo: np.ndarray, hi: np.ndarray, connectivity: float, kernel: float,
              vel: tuple[list[float], list[float]], acc: tuple[list[float], list[float]],
              source: dict[str, Any]) -> dict[str, Any]:
    bounds = [[float(lo[a]), float(hi[a])] for a in range(3)]
    meta: dict[str, Any] = {
        "case": "PBF",
        "dim": 3,
        "dt": dt,
        "write_every": 1,  # dt is already the time between saved frames
        "dx": 2.0 * radius,
        "bounds": bounds,
        "sequence_length": frames - 1,
        "default_connectivity_radius": connectivity,
        "kernel_radius": kernel,
        "num_particles_max": n_max,
        "periodic_boundary_conditions": [False, False, False],
        "vel_mean": vel[0], "vel_std": vel[1], "acc_mean": acc[0], "acc_std": acc[1],
    }
    if format == "lagrangebench":
        meta.update({
            "sequence_length_train": frames - 1, "num_trajs_train": counts[0],
            "sequence_length_valid": frames - 1, "num_trajs_valid": counts[1],
            "sequence_length_test": frames - 1, "num_trajs_test": counts[2],
            "particle_types": {str(t): n for t, n in TYPE_NAMES.items()},
        })
    else:
        meta["particle_types"] = {str(GNS_WATER): "fluid", str(GNS_KINEMATIC):
                                  "boundary (walls, colliders, meshes, tool)"}
    meta["units"] = ("m, s; vel_* and acc_* are per saved frame: x[t+1] - x[t] and its change, "
                     "fluid particles, train split")
    meta["pbf"] = source
    return meta


def _run_all(jobs_list: list[Any], jobs: int) -> abc.Iterable[Any]:
    """The trajectories' results in order: in this process for one job, else in a pool of
    fresh processes (spawned: a forked OpenMP runtime can hang)."""
    if jobs == 1:
        for job in jobs_list:
            yield _simulate(job)
        return
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        yield from pool.imap(_simulate, jobs_list, chunksize=1)


class _Progress:
    """A progress bar on stderr (a line per trajectory when stderr is not a terminal)."""

    def __init__(self, total: int):
        self.total, self.done, self.started = total, 0, time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.draw()

    def draw(self, particles: int = 0, seconds: float = 0.0) -> None:
        elapsed = time.perf_counter() - self.started
        if self.tty:
            width = 30
            filled = width * self.done // self.total
            sys.stderr.write(f"\rpbf dataset: [{'#' * filled}{'.' * (width - filled)}] "
                             f"{self.done}/{self.total} trajectories, {elapsed:.0f} s")
        elif self.done:
            sys.stderr.write(f"pbf dataset: trajectory {self.done}/{self.total} "
                             f"({particles} particles, {seconds:.1f} s)\n")
        sys.stderr.flush()

    def update(self, particles: int, seconds: float) -> None:
        self.done += 1
        self.draw(particles, seconds)

    def finish(self) -> None:
        if self.tty:
            sys.stderr.write("\n")
        sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# The command line: `pbf dataset ...` runs main() in Debian's interpreter


def main(argv: Optional[abc.Sequence[str]] = None, prog: str = "pbf dataset") -> int:
    parser = argparse.ArgumentParser(
        prog=prog, description="Write a learned-simulator dataset (LagrangeBench HDF5 or GNS "
        "NPZ) from varied runs of pbf scenes (docs/datasets.md).")
    parser.add_argument("scenes", nargs="+", metavar="SCENE", help="scene files, used in turn")
    parser.add_argument("--format", default="lagrangebench", choices=FORMATS)
    parser.add_argument("--trajectories", type=int, default=10, metavar="N",
                        help="runs in all (default 10)")
    parser.add_argument("--frames", type=int, default=100, metavar="T",
                        help="saved positions per run, the initial one included (default 100)")
    parser.add_argument("--out", required=True, metavar="DIR", help="the dataset's folder")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a scene override for every run, as pbf run --set")
    parser.add_argument("--vary", action="append", default=[], metavar="KEY=LOW:HIGH",
                        help="a numeric scene key drawn uniformly per run; KEY[k] for one "
                        "component of a vector")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--split", default="0.8,0.1,0.1", metavar="TRAIN,VALID,TEST",
                        help="fractions of the runs (default 0.8,0.1,0.1)")
    parser.add_argument("--connectivity-radius", type=float, default=None, metavar="M",
                        help="default_connectivity_radius (default: the kernel radius)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="processes (default: the cores)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    def show(message: Any, category: Any, filename: Any, lineno: Any, file: Any = None,
             line: Any = None) -> None:
        sys.stderr.write(f"{prog}: warning: {message}\n")

    warnings.showwarning = show
    started = time.perf_counter()
    try:
        meta = make_dataset(args.scenes, args.out, format=args.format,
                            trajectories=args.trajectories, frames=args.frames, set=args.set,
                            vary=args.vary, seed=args.seed, split=args.split,
                            connectivity_radius=args.connectivity_radius, jobs=args.jobs,
                            progress=not args.no_progress)
    except (DatasetError, _core.Error, OSError) as e:
        sys.stderr.write(f"{prog}: {e}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{prog}: interrupted; nothing written\n")
        return 130
    n = meta["pbf"]["trajectories"]
    sys.stderr.write(f"{prog}: {len(n)} trajectories of {args.frames} frames "
                     f"(up to {meta['num_particles_max']} particles) in "
                     f"{time.perf_counter() - started:.1f} s -> {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
