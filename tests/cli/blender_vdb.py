"""Opens one of pbf's OpenVDB level sets in Blender and renders it (tests/cli/test_mesh_cli.sh,
case vdb_blender; docs/surface.md "OpenVDB level sets").

    blender -b --factory-startup --python tests/cli/blender_vdb.py -- \
        SURFACE.vdb SURFACE.ply OUT.png

Imports SURFACE.vdb with bpy.ops.object.volume_import as a user would, turns it from pbf's y up
to Blender's z up, meshes the grid back with a Volume to Mesh modifier at threshold 0 (the level
set's zero crossing) on a mesh object, imports SURFACE.ply (pbf's mesh of the same frame, turned
the same way) for comparison, renders the level set's mesh with Cycles on the CPU (small, few
samples, no denoiser) and prints one line `pbf_vdb: {json}` with what it found: the grids and
their types, the voxel size from the grid's transform, both meshes' bounding boxes and volumes,
and the share of the picture's pixels that show water. The shell test judges the figures.
"""
import json
import math
import os
import sys

import bmesh
import bpy
from mathutils import Vector

argv = sys.argv[sys.argv.index("--") + 1:]
vdb_path, ply_path, png_path = argv[0], argv[1], argv[2]

bpy.ops.wm.read_factory_settings(use_empty=True)  # no default cube, camera or light
scene = bpy.context.scene

# The volume, as File > Import > OpenVDB does it.
bpy.ops.object.volume_import(filepath=vdb_path, directory=os.path.dirname(vdb_path),
                             files=[{"name": os.path.basename(vdb_path)}])
volume_obj = bpy.context.active_object
volume = volume_obj.data
volume.grids.load()
grids = [{"name": g.name, "type": g.data_type} for g in volume.grids]
surface = volume.grids.get("surface")
scale = [surface.matrix_object.col[k].length for k in range(3)] if surface else []
volume_obj.rotation_euler = (math.pi / 2, 0.0, 0.0)  # pbf: y up; Blender: z up
# Blender's Volume to Mesh adds half a voxel along each axis to what OpenVDB meshes (to line the
# mesh up with Blender's drawing of the voxels); in OpenVDB and Houdini voxel (i, j, k) is
# centred at (i, j, k) voxel sizes: the volume is moved back by half a voxel.
volume_obj.location = [-s / 2 for s in scale]

# The level set's zero crossing as a mesh: a Volume to Mesh modifier on an empty mesh object,
# reading the volume object (its transform, turn included, carries over).
water_obj = bpy.data.objects.new("water", bpy.data.meshes.new("water"))
scene.collection.objects.link(water_obj)
mod = water_obj.modifiers.new("surface", "VOLUME_TO_MESH")
mod.object = volume_obj
mod.grid_name = "surface"
mod.resolution_mode = "GRID"
mod.threshold = 0.0
mod.adaptivity = 0.0
mod.use_smooth_shade = True


def evaluated_mesh_figures(obj):
    """Bounding box (world, z up) and enclosed volume of an object's evaluated mesh."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    bm = bmesh.new()
    bm.from_mesh(mesh)
    bm.transform(obj.matrix_world)
    vol = abs(bm.calc_volume(signed=False))
    coords = [v.co for v in bm.verts]
    count = len(coords)
    lo = [min(c[k] for c in coords) for k in range(3)] if coords else []
    hi = [max(c[k] for c in coords) for k in range(3)] if coords else []
    bm.free()
    evaluated.to_mesh_clear()
    return {"vertices": count, "min": lo, "max": hi, "volume": vol}


bpy.context.view_layer.update()
level_set = evaluated_mesh_figures(water_obj)
volume_obj.hide_render = True  # Cycles would draw the grid as a fog of its values

# pbf's own mesh of the frame, for comparison; hidden in the picture.
bpy.ops.import_mesh.ply(filepath=ply_path)
ply_obj = bpy.context.selected_objects[0]
ply_obj.rotation_euler = (math.pi / 2, 0.0, 0.0)
bpy.context.view_layer.update()
ply = evaluated_mesh_figures(ply_obj)
ply_obj.hide_render = True

# Water, a camera on the level set's box, a sun and a plain grey world.
water = bpy.data.materials.new("water")
water.use_nodes = True
bsdf = water.node_tree.nodes["Principled BSDF"]
bsdf.inputs["Base Color"].default_value = (0.05, 0.25, 0.8, 1.0)
bsdf.inputs["Roughness"].default_value = 0.2
water_obj.data.materials.append(water)

lo, hi = Vector(level_set["min"]), Vector(level_set["max"])
centre, size = (lo + hi) / 2, max((hi - lo).length, 1e-3)
cam_data = bpy.data.cameras.new("camera")
cam = bpy.data.objects.new("camera", cam_data)
scene.collection.objects.link(cam)
cam.location = centre + Vector((0.9, -1.4, 0.8)) * size
cam.rotation_euler = (centre - cam.location).to_track_quat("-Z", "Y").to_euler()
scene.camera = cam
sun_data = bpy.data.lights.new("sun", "SUN")
sun_data.energy = 4.0
sun = bpy.data.objects.new("sun", sun_data)
sun.rotation_euler = (math.radians(40), math.radians(10), math.radians(30))
scene.collection.objects.link(sun)
world = bpy.data.worlds.new("world")
world.color = (0.5, 0.5, 0.5)
scene.world = world

scene.render.engine = "CYCLES"
scene.cycles.device = "CPU"
scene.cycles.samples = 8
scene.cycles.use_denoising = False  # Debian's Cycles aborts on the default denoiser
scene.render.resolution_x, scene.render.resolution_y = 240, 180
scene.render.resolution_percentage = 100
scene.render.filepath = png_path
scene.render.image_settings.file_format = "PNG"
bpy.ops.render.render(write_still=True)

# The share of pixels that are water: bluer than the grey world by a clear margin.
image = bpy.data.images.load(png_path)
px = list(image.pixels)
channels = image.channels
pixels = len(px) // channels
blue = sum(1 for i in range(pixels)
           if px[channels * i + 2] - px[channels * i] > 0.15)

print("pbf_vdb: " + json.dumps({
    "grids": grids,
    "voxel": scale,
    "level_set": level_set,
    "ply": ply,
    "water_fraction": blue / pixels if pixels else 0.0,
    "picture": [image.size[0], image.size[1]],
}))
sys.stdout.flush()
