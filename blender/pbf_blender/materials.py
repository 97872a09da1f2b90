"""The materials of an imported run: water, particles, spray, solids and the floor.

Plain Principled BSDF node trees that Cycles and EEVEE both render without a denoiser. The
water is clear glass (IOR 1.33) with pbf's default water absorption inside (docs/scenes.md,
materials[i].absorption), so thick water is blue and thin water clear; EEVEE gets screen-space
refraction switched on for it. A material that already exists under the same name is reused,
so a user's edits survive a second import.
"""

import bpy

from . import run_folder

WATER = "pbf water"
PARTICLES = "pbf particles"
SPRAY = "pbf spray"
SOLID = "pbf solid"
FLOOR = "pbf floor"


def _principled(name, settings):
    mat = bpy.data.materials.get(name)
    if mat is not None:
        return mat, False
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes.get("Principled BSDF")
    for key, value in settings.items():
        if bsdf is not None and key in bsdf.inputs:
            bsdf.inputs[key].default_value = value
    if "Base Color" in settings:
        mat.diffuse_color = settings["Base Color"]  # the viewport's solid shading
    return mat, True


def water():
    # "Transmission" in Blender 3.x, "Transmission Weight" from 4.0 on
    mat, new = _principled(WATER, {"Base Color": (0.6, 0.8, 1.0, 1.0), "Roughness": 0.03,
                                   "IOR": 1.33, "Transmission": 1.0,
                                   "Transmission Weight": 1.0})
    if new:
        mat.diffuse_color = (0.2, 0.45, 0.9, 1.0)
        nodes, links = mat.node_tree.nodes, mat.node_tree.links
        out = nodes.get("Material Output")
        # pbf's water colour: Beer-Lambert coefficients a (1/m) as Blender's absorption,
        # whose coefficient is (1 - colour) * density
        a = run_folder.DEFAULT_ABSORPTION
        absorb = nodes.new("ShaderNodeVolumeAbsorption")
        absorb.inputs["Color"].default_value = tuple(1 - x / max(a) for x in a) + (1.0,)
        absorb.inputs["Density"].default_value = max(a)
        absorb.location = (out.location.x - 250, out.location.y - 250)
        links.new(absorb.outputs["Volume"], out.inputs["Volume"])
        # EEVEE: refraction through the surface (with the scene's screen-space refraction on)
        if hasattr(mat, "use_screen_refraction"):
            mat.use_screen_refraction = True
        if hasattr(mat, "blend_method"):
            mat.blend_method = "HASHED"
    return mat


def particles(name, colours):
    """Opaque spheres coloured by the particles' `phase` attribute: `colours[i]` (RGB) for
    phase i, through an Attribute node of type Instancer (the spheres are instances on the
    points) and a constant colour ramp. Particles without phases take colours[0]."""
    mat = bpy.data.materials.get(name)
    if mat is not None:
        return mat
    mat, _ = _principled(name, {"Base Color": tuple(colours[0]) + (1.0,), "Roughness": 0.25})
    nodes, links = mat.node_tree.nodes, mat.node_tree.links
    bsdf = nodes.get("Principled BSDF")
    if bsdf is None or len(colours) < 2:
        return mat
    attr = nodes.new("ShaderNodeAttribute")
    attr.attribute_type = "INSTANCER"
    attr.attribute_name = "phase"
    scale = nodes.new("ShaderNodeMath")  # phase i -> the middle of the ramp's i-th step
    scale.operation = "MULTIPLY_ADD"
    scale.inputs[1].default_value = 1.0 / len(colours)
    scale.inputs[2].default_value = 0.5 / len(colours)
    ramp = nodes.new("ShaderNodeValToRGB")
    ramp.color_ramp.interpolation = "CONSTANT"
    elements = ramp.color_ramp.elements
    while len(elements) < len(colours):
        elements.new(0.0)
    for i, c in enumerate(colours):
        elements[i].position = i / len(colours)
        elements[i].color = tuple(c) + (1.0,)
    attr.location, scale.location, ramp.location = (-900, 300), (-700, 300), (-500, 300)
    links.new(attr.outputs["Fac"], scale.inputs[0])
    links.new(scale.outputs["Value"], ramp.inputs["Fac"])
    links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
    return mat


def spray():
    return _principled(SPRAY, {"Base Color": (0.95, 0.97, 1.0, 1.0), "Roughness": 0.4})[0]


def solid():
    return _principled(SOLID, {"Base Color": (0.55, 0.38, 0.22, 1.0), "Roughness": 0.6})[0]


def floor():
    return _principled(FLOOR, {"Base Color": (0.6, 0.6, 0.58, 1.0), "Roughness": 0.8})[0]
