"""What a pbf run folder holds, and its files read as arrays in Blender's axes.

`pbf run SCENE --out DIR` writes, per frame N (docs/cli.md):
  frame_NNNNN.ply    particles: position, velocity, density, id (+ phase with `materials`)
  surface_NNNNN.ply  the fluid's surface (`pbf run --mesh`, `pbf mesh`; or .obj)
  solids_NNNNN.ply   the mesh solids at their pose (scenes with `meshes`)
  diffuse_NNNNN.ply  spray, foam and bubbles (scenes with `diffuse`)
  scene.json         the scene with every default filled in (fps, domain, camera, radius)

pbf is y-up and Blender z-up: every position and vector goes through `to_z_up`, a rotation of
+90 degrees about x, (x, y, z) -> (x, -z, y), which keeps lengths and the triangles' winding.

Needs numpy only, so it also runs outside Blender.
"""

import json
import math
import os
import re

import numpy as np

from . import plyfile

KINDS = ("frame", "surface", "solids", "diffuse")
DEFAULT_ABSORPTION = (8.0, 3.0, 1.5)  # pbf's water, 1/m (docs/scenes.md, materials[i].absorption)
_NAME = re.compile(r"(frame|surface|solids|diffuse)_(\d+)\.(ply|obj)")


class RunError(ValueError):
    """A run folder the add-on cannot import; the message names the folder or file."""


def to_z_up(v):
    """pbf's y-up coordinates [n, 3] -> Blender's z-up ones: (x, y, z) -> (x, -z, y)."""
    v = np.asarray(v, np.float32).reshape(-1, 3)
    return np.stack((v[:, 0], -v[:, 2], v[:, 1]), axis=1)


class RunFolder:
    """The files of one run folder, found by name: `files[kind]` is a sorted list of
    (frame, path) for kind in KINDS; `scene` the parsed scene.json (or {})."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        if not os.path.isdir(self.path):
            raise RunError("%s: not a folder (expected a pbf run folder, as written by "
                           "`pbf run SCENE --out DIR`)" % path)
        self.files = {k: [] for k in KINDS}
        other_frames = set()
        for name in sorted(os.listdir(self.path)):
            m = _NAME.fullmatch(name)
            if m is None:
                if name.startswith("frame_") and name.endswith((".vtk", ".vtu", ".pvtu")):
                    other_frames.add(os.path.splitext(name)[1])
                continue
            kind, frame, ext = m.group(1), int(m.group(2)), m.group(3)
            if ext == "obj" and kind != "surface":
                continue
            self.files[kind].append((frame, os.path.join(self.path, name)))
        # a surface written both as PLY and OBJ: keep the PLY (binary, with normals)
        by_frame = {}
        for frame, p in self.files["surface"]:
            if frame not in by_frame or p.endswith(".ply"):
                by_frame[frame] = p
        self.files["surface"] = sorted(by_frame.items())
        for k in KINDS:
            self.files[k].sort()
        if not self.files["frame"]:
            hint = ""
            if other_frames:
                hint = (" (it has %s frames: run with --format ply, the default, to import "
                        "the particles)" % "/".join(sorted(other_frames)))
            raise RunError("%s: no particle frames frame_NNNNN.ply in this folder%s; expected "
                           "the output folder of `pbf run SCENE --out DIR`" % (path, hint))
        self.scene = {}
        scene_path = os.path.join(self.path, "scene.json")
        if os.path.exists(scene_path):
            try:
                with open(scene_path) as f:
                    self.scene = json.load(f)
            except (OSError, ValueError) as e:
                raise RunError("%s: cannot read it as JSON (%s)" % (scene_path, e)) from None
            if not isinstance(self.scene, dict):
                raise RunError("%s: expected a JSON object (the scene)" % scene_path)

    @property
    def name(self):
        return os.path.basename(self.path)

    @property
    def frames(self):
        """The particle frames' numbers, sorted."""
        return [f for f, _ in self.files["frame"]]

    def _get(self, keys, default):
        v = self.scene
        for k in keys:
            if not isinstance(v, dict) or k not in v:
                return default
            v = v[k]
        return v

    @property
    def fps(self):
        fps = self._get(("time", "fps"), 60)
        return float(fps) if isinstance(fps, (int, float)) and fps > 0 else 60.0

    @property
    def particle_radius(self):
        r = self._get(("fluid", "particle_radius"), None)
        if isinstance(r, (int, float)) and r > 0:
            return float(r)
        return None

    @property
    def domain(self):
        """(min, max) of the domain box in pbf's axes, or None."""
        lo, hi = self._get(("domain", "min"), None), self._get(("domain", "max"), None)
        if (isinstance(lo, list) and isinstance(hi, list) and len(lo) == 3 and len(hi) == 3
                and all(isinstance(x, (int, float)) for x in lo + hi)):
            return [float(x) for x in lo], [float(x) for x in hi]
        return None

    @property
    def fluid_colours(self):
        """An RGB colour per fluid (phase): the light a fluid lets through over 25 cm,
        exp(-0.25 m * absorption), from each of scene.json's `materials` (pbf's default water,
        absorption [8, 3, 1.5] per metre, when it has none)."""
        colours = []
        mats = self._get(("materials",), None)
        for m in mats if isinstance(mats, list) else []:
            a = m.get("absorption") if isinstance(m, dict) else None
            if not (isinstance(a, list) and len(a) == 3 and
                    all(isinstance(x, (int, float)) for x in a)):
                a = DEFAULT_ABSORPTION
            colours.append([math.exp(-0.25 * float(x)) for x in a])
        return colours or [[math.exp(-0.25 * x) for x in DEFAULT_ABSORPTION]]

    @property
    def camera(self):
        """{"position", "target", "fov"} of scene.json's camera in pbf's axes, or None."""
        cam = self._get(("camera",), None)
        if not isinstance(cam, dict):
            return None
        try:
            pos = [float(x) for x in cam["position"]]
            target = [float(x) for x in cam["target"]]
            fov = float(cam.get("fov", 45))
        except (KeyError, TypeError, ValueError):
            return None
        if len(pos) != 3 or len(target) != 3:
            return None
        return {"position": pos, "target": target, "fov": fov}

    def file_at(self, kind, frame):
        """The file of `kind` shown at `frame`: the last one at or before it (surfaces or
        diffuse particles may be written for some frames only), else None."""
        best = None
        for f, p in self.files[kind]:
            if f > frame:
                break
            best = p
        return best


def read_particles(path):
    """A frame_NNNNN.ply: {"position", "velocity" [n, 3] z-up float32, "density" float32,
    "id" int32, and "phase" int32 when the file has it}."""
    v = plyfile.read(path).element("vertex")
    for need in ("x", "y", "z", "vx", "vy", "vz", "density", "id"):
        if need not in v:
            raise RunError("%s: no vertex property '%s' (expected a particle file of `pbf run`: "
                           "x y z vx vy vz density id [phase])" % (path, need))
    out = {
        "position": to_z_up(plyfile.columns(v, ("x", "y", "z"))),
        "velocity": to_z_up(plyfile.columns(v, ("vx", "vy", "vz"))),
        "density": np.ascontiguousarray(v.data["density"], np.float32),
        "id": np.ascontiguousarray(v.data["id"], np.int32),
    }
    if "phase" in v:
        out["phase"] = np.ascontiguousarray(v.data["phase"], np.int32)
    return out


def read_diffuse(path):
    """A diffuse_NNNNN.ply: {"position", "velocity" z-up, "kind" int32 (0 spray, 1 foam,
    2 bubble), "lifetime" float32}."""
    v = plyfile.read(path).element("vertex")
    for need in ("x", "y", "z", "vx", "vy", "vz", "kind", "lifetime"):
        if need not in v:
            raise RunError("%s: no vertex property '%s' (expected a diffuse-particle file: "
                           "x y z vx vy vz kind lifetime)" % (path, need))
    return {
        "position": to_z_up(plyfile.columns(v, ("x", "y", "z"))),
        "velocity": to_z_up(plyfile.columns(v, ("vx", "vy", "vz"))),
        "kind": np.ascontiguousarray(v.data["kind"], np.int32),
        "lifetime": np.ascontiguousarray(v.data["lifetime"], np.float32),
    }


def _read_obj(path):
    positions, normals, faces = [], [], []
    try:
        with open(path) as f:
            for line in f:
                w = line.split()
                if not w:
                    continue
                if w[0] == "v":
                    positions.append([float(x) for x in w[1:4]])
                elif w[0] == "vn":
                    normals.append([float(x) for x in w[1:4]])
                elif w[0] == "f":
                    faces.append([int(x.split("/")[0]) - 1 for x in w[1:]])
    except (OSError, ValueError) as e:
        raise RunError("%s: cannot read it as OBJ (%s)" % (path, e)) from None
    if any(len(f) != 3 for f in faces):
        raise RunError("%s: a face that is not a triangle (pbf writes triangles)" % path)
    positions = np.array(positions, np.float32).reshape(-1, 3)
    normals = np.array(normals, np.float32).reshape(-1, 3)
    return positions, normals, np.array(faces, np.int64).reshape(-1, 3)


def read_surface(path):
    """A surface_NNNNN.ply (or .obj): {"position", "normal" ([0, 3] if none) z-up,
    "triangles" int32 [m, 3]}."""
    if path.endswith(".obj"):
        pos, nrm, tri = _read_obj(path)
    else:
        ply = plyfile.read(path)
        v, f = ply.element("vertex"), ply.element("face")
        if not all(k in v for k in ("x", "y", "z")):
            raise RunError("%s: no vertex positions x y z (expected a surface of `pbf mesh`)"
                           % path)
        pos = plyfile.columns(v, ("x", "y", "z"))
        has_n = all(k in v for k in ("nx", "ny", "nz"))
        nrm = plyfile.columns(v, ("nx", "ny", "nz")) if has_n else np.zeros((0, 3), np.float32)
        tri = f.lists.get("vertex_indices", np.zeros((0, 3), np.int64))
    if tri.size and (tri.shape[1] != 3 or tri.min() < 0 or tri.max() >= len(pos)):
        raise RunError("%s: triangle corners outside the %d vertices" % (path, len(pos)))
    return {"position": to_z_up(pos), "normal": to_z_up(nrm),
            "triangles": np.ascontiguousarray(tri.reshape(-1, 3), np.int32)}


_POSE = re.compile(r"solid (\d+) (.*) position (\S+) (\S+) (\S+) orientation (\S+) (\S+) (\S+) "
                   r"(\S+)$")


def _poses(comments):
    poses = []
    for c in comments:
        m = _POSE.match(c)
        if m:
            p = [float(m.group(k)) for k in (3, 4, 5)]
            q = [float(m.group(k)) for k in (6, 7, 8, 9)]
            # the rotation's axis turns with the frame: (qx, qy, qz) -> (qx, -qz, qy)
            poses.append({"index": int(m.group(1)), "file": m.group(2),
                          "position": [p[0], -p[2], p[1]],
                          "orientation": [q[0], q[1], -q[3], q[2]]})
    return poses


def read_solids_header(header):
    """The poses in the header text of a solids file (the `comment solid ...` lines), as
    read_solids gives them."""
    return _poses(line[len("comment"):].strip() for line in header.splitlines()
                  if line.startswith("comment "))


def read_solids(path):
    """A solids_NNNNN.ply: {"position" z-up [n, 3] (world coordinates, at the pose),
    "triangles" int32 [m, 3], "solid" int32 [m] (the mesh's index in the scene's `meshes`),
    "poses" [{"index", "file", "position" (z-up), "orientation" (w, x, y, z; z-up)}]}."""
    ply = plyfile.read(path)
    v, f = ply.element("vertex"), ply.element("face")
    if not all(k in v for k in ("x", "y", "z")) or (f.count and "solid" not in f):
        raise RunError("%s: expected a solids file of `pbf run` (x y z vertices, faces with "
                       "vertex_indices and solid)" % path)
    poses = _poses(ply.comments)
    tri = f.lists.get("vertex_indices", np.zeros((0, 3), np.int64)).reshape(-1, 3)
    if tri.size and (tri.min() < 0 or tri.max() >= v.count):
        raise RunError("%s: triangle corners outside the %d vertices" % (path, v.count))
    solid = (np.ascontiguousarray(f.data["solid"], np.int32) if f.count
             else np.zeros(0, np.int32))
    pos = plyfile.columns(v, ("x", "y", "z")) if v.count else np.zeros((0, 3), np.float32)
    return {"position": to_z_up(pos), "triangles": np.ascontiguousarray(tri, np.int32),
            "solid": solid, "poses": poses}


def quat_matrix(q):
    """The rotation matrix of a quaternion (w, x, y, z)."""
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z) or 1.0
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def body_frame(world, pose):
    """World vertices [n, 3] of a solid -> its own frame, R^T (x - p), for a pose of
    read_solids (both z-up): what the object's keyframed pose turns back into `world`."""
    r = quat_matrix(pose["orientation"])
    return (np.asarray(world, np.float64) - np.array(pose["position"])) @ r
