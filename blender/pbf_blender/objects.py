"""The Blender objects of an imported run, and the frame-change handler that animates them.

Each animated object (particles, surface, diffuse particles) keeps its run folder and kind in
custom properties (`pbf_run`, `pbf_kind`); on every frame change the handler reads that frame's
file and replaces the object's mesh data in place, so modifiers (Geometry Nodes), materials and
the object's name stay. The particles are a mesh with vertices only, carrying the named point
attributes `velocity` (m/s), `speed`, `density`, `id`
(Blender's own stable id, what Geometry Nodes' ID node reads) and `phase` for scenes with
several fluids. The solids are one object each, their triangles in the body's own frame and
their poses keyframed, so they animate without the handler too.
"""

import os

import bpy
import numpy as np
from bpy.app.handlers import persistent

from . import materials, run_folder, stage

PROP_RUN = "pbf_run"
PROP_KIND = "pbf_kind"

_runs = {}     # run folder -> RunFolder (scanned once per session; `refresh` forgets them)
_loaded = {}   # object name -> the file now in its mesh


def run(path):
    """The RunFolder at `path`, scanned once."""
    path = os.path.abspath(path)
    if path not in _runs:
        _runs[path] = run_folder.RunFolder(path)
    return _runs[path]


def refresh():
    """Forgets the scanned folders and loaded files (after a run wrote more frames)."""
    _runs.clear()
    _loaded.clear()


def _set_attribute(mesh, name, values, domain="POINT"):
    values = np.ascontiguousarray(values)
    if values.ndim == 2:
        kind, field = "FLOAT_VECTOR", "vector"
        values = values.astype(np.float32)
    elif values.dtype.kind in "iu":
        kind, field = "INT", "value"
        values = values.astype(np.int32)
    else:
        kind, field = "FLOAT", "value"
        values = values.astype(np.float32)
    attr = mesh.attributes.get(name)
    if attr is not None:
        mesh.attributes.remove(attr)
    attr = mesh.attributes.new(name, kind, domain)
    if len(values):
        attr.data.foreach_set(field, values.ravel())
    return attr


def _fill_points(mesh, data, attributes):
    mesh.clear_geometry()
    n = len(data["position"])
    mesh.vertices.add(n)
    if n:
        mesh.vertices.foreach_set("co", data["position"].ravel())
    for name in attributes:
        _set_attribute(mesh, name, data[name])
    mesh.update()


def _fill_triangles(mesh, positions, triangles, smooth=True):
    mesh.clear_geometry()
    nv, nt = len(positions), len(triangles)
    mesh.vertices.add(nv)
    mesh.loops.add(3 * nt)
    mesh.polygons.add(nt)
    if nv:
        mesh.vertices.foreach_set("co", np.ascontiguousarray(positions, np.float32).ravel())
    if nt:
        mesh.loops.foreach_set("vertex_index", np.ascontiguousarray(triangles, np.int32).ravel())
        mesh.polygons.foreach_set("loop_start", np.arange(0, 3 * nt, 3, dtype=np.int32))
        try:  # read-only from Blender 4.0 on, where the sizes follow from loop_start
            mesh.polygons.foreach_set("loop_total", np.full(nt, 3, np.int32))
        except (AttributeError, TypeError, RuntimeError):
            pass
        mesh.polygons.foreach_set("use_smooth", np.full(nt, smooth, bool))
    mesh.update()


def particle_attributes(data):
    """The point attributes of a particle frame, in the order they are made."""
    names = ["velocity", "speed", "density", "id"]
    return names + (["phase"] if "phase" in data else [])


def load_frame(obj, frame):
    """Puts `frame`'s file of the object's kind into its mesh; returns the file (None when the
    run has none at or before `frame`: the mesh is then empty)."""
    folder = run(obj[PROP_RUN])
    kind = obj[PROP_KIND]
    path = folder.file_at(kind, frame)
    if path is None and kind == "frame" and folder.frames:
        path = folder.files["frame"][0][1]  # before the first frame: show the first
    if _loaded.get(obj.name) == path and path is not None:
        return path
    mesh = obj.data
    if path is None:
        mesh.clear_geometry()
        mesh.update()
    elif kind == "frame":
        data = run_folder.read_particles(path)
        data["speed"] = np.linalg.norm(data["velocity"], axis=1)
        _fill_points(mesh, data, particle_attributes(data))
    elif kind == "diffuse":
        data = run_folder.read_diffuse(path)
        _fill_points(mesh, data, ("velocity", "kind", "lifetime"))
    elif kind == "surface":
        data = run_folder.read_surface(path)
        _fill_triangles(mesh, data["position"], data["triangles"])
    _loaded[obj.name] = path
    return path


@persistent
def on_frame_change(scene, depsgraph=None):
    """frame_change_pre: every animated pbf object of the scene shows the current frame."""
    for obj in scene.objects:
        if obj.get(PROP_KIND) in ("frame", "surface", "diffuse") and obj.get(PROP_RUN):
            try:
                load_frame(obj, scene.frame_current)
            except (run_folder.RunError, OSError, ValueError):
                pass  # a folder moved or a file went missing: keep the last geometry


@persistent
def on_load(_dummy=None):
    """load_post: a reopened .blend reads its run folders afresh."""
    refresh()
    on_frame_change(bpy.context.scene)


def install_handlers():
    for handlers, fn in ((bpy.app.handlers.frame_change_pre, on_frame_change),
                         (bpy.app.handlers.load_post, on_load)):
        if not any(getattr(h, "__name__", "") == fn.__name__ and
                   getattr(h, "__module__", "") == fn.__module__ for h in handlers):
            handlers.append(fn)


def remove_handlers():
    for handlers in (bpy.app.handlers.frame_change_pre, bpy.app.handlers.load_post):
        for h in list(handlers):
            if getattr(h, "__module__", "") == __name__:
                handlers.remove(h)


def _points_modifier(obj, radius, material):
    """Geometry Nodes that draw each vertex as a small sphere of the particles' radius with
    `material`: an icosphere instanced on the points, which Cycles and EEVEE both render (EEVEE
    in Blender 3.x draws no point clouds). The point attributes reach the instances, so a
    material's Attribute node (type Instancer) reads `speed`, `density`, `phase`, ..."""
    name = "pbf spheres %s" % material.name
    group = bpy.data.node_groups.get(name)
    if group is None:
        group = bpy.data.node_groups.new(name, "GeometryNodeTree")
        if hasattr(group, "interface"):  # Blender 4.0 and later
            group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
            group.interface.new_socket("Radius", in_out="INPUT", socket_type="NodeSocketFloat")
            group.interface.new_socket("Geometry", in_out="OUTPUT",
                                       socket_type="NodeSocketGeometry")
        else:
            group.inputs.new("NodeSocketGeometry", "Geometry")
            group.inputs.new("NodeSocketFloat", "Radius")
            group.outputs.new("NodeSocketGeometry", "Geometry")
        nodes, links = group.nodes, group.links
        gin, gout = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
        sphere = nodes.new("GeometryNodeMeshIcoSphere")
        sphere.inputs["Subdivisions"].default_value = 2
        set_mat = nodes.new("GeometryNodeSetMaterial")
        set_mat.inputs["Material"].default_value = material
        instance = nodes.new("GeometryNodeInstanceOnPoints")
        gin.location, sphere.location, set_mat.location = (-500, 0), (-300, -150), (-100, -150)
        instance.location, gout.location = (120, 0), (340, 0)
        links.new(gin.outputs["Radius"], sphere.inputs["Radius"])
        links.new(sphere.outputs["Mesh"], set_mat.inputs["Geometry"])
        links.new(gin.outputs["Geometry"], instance.inputs["Points"])
        links.new(set_mat.outputs["Geometry"], instance.inputs["Instance"])
        links.new(instance.outputs["Instances"], gout.inputs["Geometry"])
    mod = obj.modifiers.new("pbf spheres", "NODES")
    mod.node_group = group
    sockets = group.interface.items_tree if hasattr(group, "interface") else group.inputs
    key = next((s.identifier for s in sockets if s.name == "Radius"), None)
    if key is not None:
        mod[key] = float(radius)
    return mod


def _new_object(collection, name, folder, kind):
    obj = bpy.data.objects.new(name, bpy.data.meshes.new(name))
    obj[PROP_RUN] = folder.path
    obj[PROP_KIND] = kind
    collection.objects.link(obj)
    return obj


def _solids(collection, folder, material):
    """One object per mesh solid, in its own frame, with its pose keyframed on every frame
    that has a solids file. Returns the objects."""
    files = folder.files["solids"]
    if not files:
        return []
    first = run_folder.read_solids(files[0][1])
    poses = {p["index"]: p for p in first["poses"]}
    objects = []
    for index in sorted(set(first["solid"].tolist()) | set(poses)):
        tri = first["triangles"][first["solid"] == index]
        used, inverse = np.unique(tri, return_inverse=True)
        world = first["position"][used]
        pose = poses.get(index)
        local = run_folder.body_frame(world, pose) if pose is not None else world
        name = "solid %d %s" % (index, pose["file"] if pose else "")
        obj = bpy.data.objects.new(name.strip(), bpy.data.meshes.new(name.strip()))
        _fill_triangles(obj.data, local, inverse.reshape(-1, 3), smooth=False)
        obj.data.materials.append(material)
        obj[PROP_RUN] = folder.path
        obj[PROP_KIND] = "solid"
        obj["pbf_solid"] = index
        collection.objects.link(obj)
        obj.rotation_mode = "QUATERNION"
        objects.append((index, obj))
    # the poses of every frame, from the files' header comments
    for frame, path in files:
        poses = {p["index"]: p for p in _header_poses(path)}
        for index, obj in objects:
            pose = poses.get(index)
            if pose is None:
                continue
            obj.location = pose["position"]
            obj.rotation_quaternion = pose["orientation"]
            obj.keyframe_insert("location", frame=frame)
            obj.keyframe_insert("rotation_quaternion", frame=frame)
    for _, obj in objects:
        if obj.animation_data and obj.animation_data.action:
            for curve in obj.animation_data.action.fcurves:
                for key in curve.keyframe_points:
                    key.interpolation = "LINEAR"
    return [obj for _, obj in objects]


def _header_poses(path):
    """The poses of a solids file from its header alone (cheap on long runs)."""
    with open(path, "rb") as f:
        head = f.read(65536)
    end = head.find(b"end_header\n")
    if end < 0:
        raise run_folder.RunError("%s: no end_header in the first 64 KiB" % path)
    return run_folder.read_solids_header(head[:end].decode("ascii", "replace"))


def import_run(path, context, add_stage=True):
    """Imports the run folder `path` into the scene: a collection "pbf NAME" with the particles,
    surfaces, diffuse particles and solids; sets the frame range and rate and the render settings
    the materials need; with `add_stage`, adds a camera, a light and a floor. Returns a summary
    dict (what the headless mode prints) and the objects made: {"particles", "surface" and
    "diffuse" where the run has them, "solids" (a list)}."""
    folder = run_folder.RunFolder(path)
    _runs[folder.path] = folder
    scene = context.scene
    collection = bpy.data.collections.new("pbf " + folder.name)
    scene.collection.children.link(collection)

    fps = folder.fps
    scene.render.fps = max(1, int(round(fps)))
    scene.render.fps_base = scene.render.fps / fps
    frames = folder.frames
    scene.frame_start, scene.frame_end = frames[0], frames[-1]

    radius = folder.particle_radius or 0.01
    water = materials.water()
    has_surface = bool(folder.files["surface"])

    particles = _new_object(collection, "particles", folder, "frame")
    _points_modifier(particles, radius,
                     materials.particles("pbf particles " + folder.name, folder.fluid_colours))
    # with a surface to render, the points stay in the viewport only
    particles.hide_render = has_surface
    summary = {"run": folder.path, "frames": len(frames), "first_frame": frames[0],
               "last_frame": frames[-1], "fps": fps}
    made = {"particles": particles}
    if has_surface:
        made["surface"] = _new_object(collection, "surface", folder, "surface")
        made["surface"].data.materials.append(water)
    if folder.files["diffuse"]:
        made["diffuse"] = _new_object(collection, "diffuse", folder, "diffuse")
        _points_modifier(made["diffuse"], radius * 0.4, materials.spray())
    solids = _solids(collection, folder, materials.solid())
    install_handlers()
    for obj in made.values():
        load_frame(obj, frames[0])
    stage.render_settings(scene)
    if add_stage:
        stage.add(collection, folder, scene)
    summary.update({
        "surfaces": len(folder.files["surface"]),
        "solids": len(solids),
        "diffuse": len(folder.files["diffuse"]),
        "collection": collection.name,
    })
    made["solids"] = solids
    return summary, made
