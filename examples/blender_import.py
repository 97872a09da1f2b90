"""Load a pbf surface mesh sequence into Blender.

`pbf mesh RUN_DIR` (or `pbf run --mesh`) writes RUN_DIR/surface_00000.ply, surface_00001.ply,
... : one closed triangle mesh of the fluid per frame, binary PLY with vertex normals. This
script imports them as one object per frame, each visible on its own frame only (keyframed
visibility, so it renders the same in the viewport, in `blender -b` and on a farm), gives
them a water material, and sets the scene's frame range and frame rate from RUN_DIR/scene.json.

    blender --python examples/blender_import.py -- RUN_DIR [--every N] [--first F] [--last L]
    blender -b scene.blend --python examples/blender_import.py -- out/dam --last 120

Outside Blender, `python3 examples/blender_import.py --check FILE.ply ...` reads mesh files with
the same reader and prints their size (the test suite runs this where Blender is missing).

Written for Blender 3.x and 4.x; it needs nothing beyond Blender's own Python.
"""

import argparse
import array
import json
import os
import re
import struct
import sys

USAGE = "blender --python examples/blender_import.py -- RUN_DIR [--every N] [--first F] [--last L]"


def read_pbf_ply(path):
    """Reads a mesh PLY written by pbf (binary little-endian: float x y z nx ny nz per vertex;
    faces as uchar count + int indices). Returns (positions, normals, triangles) as flat
    arrays: 3 floats per vertex, 3 floats per vertex (empty if the file has none), 3 ints per
    triangle."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.find(b"end_header\n")
    if not data.startswith(b"ply\n") or end < 0:
        raise ValueError("%s: not a PLY file" % path)
    header = data[:end].decode("ascii").splitlines()
    if "format binary_little_endian 1.0" not in header:
        raise ValueError("%s: expected binary_little_endian PLY" % path)
    vertices = faces = 0
    props = []
    element = None
    for line in header:
        words = line.split()
        if words[:1] == ["element"]:
            element = words[1]
            if element == "vertex":
                vertices = int(words[2])
            elif element == "face":
                faces = int(words[2])
        elif words[:2] == ["property", "float"] and element == "vertex":
            props.append(words[2])
    if props not in (["x", "y", "z"], ["x", "y", "z", "nx", "ny", "nz"]):
        raise ValueError("%s: vertex properties %s, expected x y z [nx ny nz]" % (path, props))
    stride = len(props)
    body = data[end + len(b"end_header\n"):]
    need = 4 * stride * vertices + 13 * faces
    if len(body) < need:
        raise ValueError("%s: truncated (%d of %d bytes)" % (path, len(body), need))
    values = array.array("f")
    values.frombytes(body[: 4 * stride * vertices])
    if sys.byteorder != "little":
        values.byteswap()
    positions = array.array("f", (values[i * stride + k] for i in range(vertices) for k in range(3)))
    normals = array.array("f")
    if stride == 6:
        normals = array.array("f", (values[i * 6 + 3 + k] for i in range(vertices) for k in range(3)))
    triangles = array.array("i")
    offset = 4 * stride * vertices
    for count, a, b, c in struct.iter_unpack("<B3i", body[offset: offset + 13 * faces]):
        if count != 3:
            raise ValueError("%s: a face with %d corners (pbf writes triangles)" % (path, count))
        triangles.extend((a, b, c))
    return positions, normals, triangles


def mesh_files(run_dir):
    """[(frame, path)] of RUN_DIR/surface_NNNNN.ply, sorted by frame."""
    found = []
    for name in os.listdir(run_dir):
        m = re.fullmatch(r"surface_(\d+)\.ply", name)
        if m:
            found.append((int(m.group(1)), os.path.join(run_dir, name)))
    return sorted(found)


def water_material(bpy):
    mat = bpy.data.materials.get("pbf water")
    if mat is not None:
        return mat
    mat = bpy.data.materials.new("pbf water")
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes.get("Principled BSDF")
    if bsdf is not None:
        settings = {"Base Color": (0.8, 0.9, 1.0, 1.0), "Roughness": 0.02, "IOR": 1.33,
                    "Transmission": 1.0, "Transmission Weight": 1.0}  # names of 3.x and 4.x
        for key, value in settings.items():
            if key in bsdf.inputs:
                bsdf.inputs[key].default_value = value
    return mat


def build_object(bpy, name, positions, normals, triangles, material):
    nv, nt = len(positions) // 3, len(triangles) // 3
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(nv)
    mesh.vertices.foreach_set("co", positions)
    mesh.loops.add(3 * nt)
    mesh.loops.foreach_set("vertex_index", triangles)
    mesh.polygons.add(nt)
    mesh.polygons.foreach_set("loop_start", array.array("i", range(0, 3 * nt, 3)))
    try:  # read-only from Blender 4.0 on, where the sizes follow from loop_start
        mesh.polygons.foreach_set("loop_total", array.array("i", [3]) * nt)
    except (AttributeError, TypeError, RuntimeError):
        pass
    mesh.polygons.foreach_set("use_smooth", array.array("b", [1]) * nt)
    mesh.update()
    mesh.validate()
    if len(normals) == len(positions) and nv > 0:
        try:
            if hasattr(mesh, "use_auto_smooth"):  # before Blender 4.1
                mesh.use_auto_smooth = True
            mesh.normals_split_custom_set_from_vertices(
                [tuple(normals[3 * i: 3 * i + 3]) for i in range(nv)])
        except (AttributeError, RuntimeError):
            pass  # smooth shading from the geometry is fine too
    mesh.materials.append(material)
    obj = bpy.data.objects.new(name, mesh)
    return obj


def show_only_on(obj, frame):
    """Keyframes the object's visibility: shown on `frame`, hidden before and after."""
    for f, hidden in ((frame - 1, True), (frame, False), (frame + 1, True)):
        obj.hide_render = hidden
        obj.hide_viewport = hidden
        obj.keyframe_insert("hide_render", frame=f)
        obj.keyframe_insert("hide_viewport", frame=f)
    if obj.animation_data and obj.animation_data.action:
        for curve in obj.animation_data.action.fcurves:
            for key in curve.keyframe_points:
                key.interpolation = "CONSTANT"


def import_run(run_dir, every=1, first=None, last=None):
    import bpy  # only inside Blender

    files = [(f, p) for f, p in mesh_files(run_dir)
             if (first is None or f >= first) and (last is None or f <= last)][::every]
    if not files:
        raise SystemExit("blender_import: no surface_NNNNN.ply in %s (run `pbf mesh %s` first)"
                         % (run_dir, run_dir))
    scene = bpy.context.scene
    try:
        with open(os.path.join(run_dir, "scene.json")) as f:
            scene.render.fps = int(round(json.load(f)["time"]["fps"]))
    except (OSError, KeyError, ValueError):
        pass  # keep the .blend's frame rate
    collection = bpy.data.collections.new("pbf " + os.path.basename(os.path.normpath(run_dir)))
    scene.collection.children.link(collection)
    material = water_material(bpy)
    for frame, path in files:
        positions, normals, triangles = read_pbf_ply(path)
        obj = build_object(bpy, "surface_%05d" % frame, positions, normals, triangles, material)
        collection.objects.link(obj)
        show_only_on(obj, frame)
    scene.frame_start = files[0][0]
    scene.frame_end = files[-1][0]
    scene.frame_set(files[0][0])
    print("blender_import: imported %d meshes from %s (frames %d to %d)"
          % (len(files), run_dir, files[0][0], files[-1][0]))


def main(argv):
    parser = argparse.ArgumentParser(prog="blender_import.py", usage=USAGE, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", nargs="?", help="the run folder with surface_NNNNN.ply")
    parser.add_argument("--every", type=int, default=1, help="import every N-th mesh")
    parser.add_argument("--first", type=int, help="first frame")
    parser.add_argument("--last", type=int, help="last frame")
    parser.add_argument("--check", nargs="+", metavar="FILE",
                        help="outside Blender: read mesh files and print their size")
    args = parser.parse_args(argv)
    if args.check:
        for path in args.check:
            positions, normals, triangles = read_pbf_ply(path)
            print("%s: %d vertices, %d triangles, %s normals" % (
                path, len(positions) // 3, len(triangles) // 3, "with" if normals else "no"))
        return 0
    if args.run_dir is None or args.every < 1:
        parser.error("give the run folder (and --every >= 1)")
    try:
        import bpy  # noqa: F401
    except ImportError:
        print("blender_import: run this inside Blender: " + USAGE, file=sys.stderr)
        return 1
    import_run(args.run_dir, args.every, args.first, args.last)
    return 0


if __name__ == "__main__":
    # Blender passes its own arguments; ours follow "--".
    own = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    status = main(own)
    if status:
        sys.exit(status)
