"""Camera, light and floor for an imported run, and render settings both engines need.

The camera is the scene's own (`camera` in scene.json: position, target, vertical fov, the
view of `pbf render`), else one that frames the domain from the front. It becomes the scene's
active camera; the user's cameras and lights stay as they are.
"""

import math

import bpy
from mathutils import Vector

from . import materials
from .run_folder import to_z_up


def _vec(p):
    return Vector([float(x) for x in to_z_up(p)[0]])


def _camera(collection, folder, scene):
    data = bpy.data.cameras.new("pbf camera")
    data.sensor_fit = "VERTICAL"
    cam = folder.camera
    domain = folder.domain
    if cam is not None:
        position, target, fov = _vec(cam["position"]), _vec(cam["target"]), cam["fov"]
    elif domain is not None:
        lo, hi = _vec(domain[0]), _vec(domain[1])
        target = (lo + hi) / 2
        radius = (Vector(domain[1]) - Vector(domain[0])).length / 2
        fov = 40.0
        distance = 1.15 * radius / math.sin(math.radians(fov) / 2)
        # from the front (Blender's -y) and a little above
        position = target + distance * Vector((0.0, -0.94, 0.34)).normalized()
    else:
        position, target, fov = Vector((0, -3, 1)), Vector((0, 0, 0)), 45.0
    data.angle_y = math.radians(fov)
    data.clip_start = 0.01
    data.clip_end = max(100.0, 10 * (position - target).length)
    obj = bpy.data.objects.new("pbf camera", data)
    obj.location = position
    obj.rotation_euler = (target - position).to_track_quat("-Z", "Y").to_euler()
    collection.objects.link(obj)
    scene.camera = obj
    return obj


def _light(collection):
    data = bpy.data.lights.new("pbf sun", "SUN")
    data.energy = 3.0
    data.angle = math.radians(5.0)
    obj = bpy.data.objects.new("pbf sun", data)
    obj.rotation_euler = (math.radians(40), math.radians(15), math.radians(30))
    collection.objects.link(obj)
    return obj


def _floor(collection, folder):
    """A square under the domain, four times its largest side across, so the water sits on
    something and the camera sees no edge."""
    domain = folder.domain
    if domain is None:
        return None
    lo, hi = _vec(domain[0]), _vec(domain[1])
    lo, hi = Vector(map(min, lo, hi)), Vector(map(max, lo, hi))
    size = hi - lo
    cx, cy, z = (lo.x + hi.x) / 2, (lo.y + hi.y) / 2, lo.z
    w = d = 2.0 * max(size.x, size.y, size.z, 1e-3)
    mesh = bpy.data.meshes.new("pbf floor")
    mesh.from_pydata([(cx - w, cy - d, z), (cx + w, cy - d, z), (cx + w, cy + d, z),
                      (cx - w, cy + d, z)], [], [(0, 1, 2, 3)])
    mesh.materials.append(materials.floor())
    obj = bpy.data.objects.new("pbf floor", mesh)
    collection.objects.link(obj)
    return obj


def cycles_has_denoiser():
    try:
        import _cycles
    except ImportError:
        return False
    return bool(getattr(_cycles, "with_openimagedenoise", False))


def render_settings(scene, denoise=None):
    """What the water needs in each engine: EEVEE's screen-space refraction, and Cycles without
    a denoiser where it has none built in (Debian's Blender aborts on the default one).
    `denoise` False turns it off everywhere."""
    if denoise is None:
        denoise = cycles_has_denoiser()
    if not denoise and hasattr(scene, "cycles"):
        scene.cycles.use_denoising = False
        if hasattr(scene.cycles, "use_preview_denoising"):
            scene.cycles.use_preview_denoising = False
        for layer in scene.view_layers:
            if hasattr(layer, "cycles"):
                layer.cycles.use_denoising = False
    eevee = getattr(scene, "eevee", None)
    if eevee is not None and hasattr(eevee, "use_ssr"):
        eevee.use_ssr = True
        eevee.use_ssr_refraction = True
    # the frame-change handler edits meshes: keep the interface off them while rendering
    scene.render.use_lock_interface = True


def add(collection, folder, scene):
    """Adds the camera (the scene's active one from now), a sun and a floor to `collection`."""
    _camera(collection, folder, scene)
    _light(collection)
    _floor(collection, folder)
