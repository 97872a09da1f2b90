"""The add-on as a script: import a run, optionally render one frame, print what was imported.

    blender -b --python pbf_blender/__init__.py -- RUN_DIR [--frame N] [--render OUT.png]
        [--engine cycles|eevee] [--samples S] [--resolution W H] [--save OUT.blend]

prints exactly one line on stdout, `pbf_blender: {json}`, with the run folder, `frames` (the
particle files), `particles` (the count at the frame shown), `attributes` (the particles'
point attributes), `surfaces`, `diffuse` (files of each), `solids` (objects), and the frame
and picture. Errors go to stderr as `pbf_blender error: ...` with exit status 1 (2 for usage).
"""

import argparse
import json
import os
import sys

USAGE = ("blender -b --python pbf_blender/__init__.py -- RUN_DIR [--frame N] [--render OUT.png] "
         "[--engine cycles|eevee] [--samples S] [--resolution W H] [--save OUT.blend]")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print("pbf_blender error: %s\nusage: %s" % (message, USAGE), file=sys.stderr)
        raise SystemExit(2)


def _parse(argv):
    p = _Parser(prog="pbf_blender", usage=USAGE, add_help=True)
    p.add_argument("run_dir")
    p.add_argument("--frame", type=int, help="the frame to show and render (default: the first)")
    p.add_argument("--render", metavar="OUT.png", help="render that frame to a PNG file")
    p.add_argument("--engine", choices=("cycles", "eevee"), default="cycles")
    p.add_argument("--samples", type=int, default=32)
    p.add_argument("--resolution", type=int, nargs=2, metavar=("W", "H"), default=(640, 480))
    p.add_argument("--save", metavar="OUT.blend", help="save the scene as a .blend file")
    args = p.parse_args(argv)
    if args.samples < 1:
        p.error("--samples must be at least 1 (got %d)" % args.samples)
    if min(args.resolution) < 4 or max(args.resolution) > 16384:
        p.error("--resolution W H must be 4 to 16384 pixels each")
    return args


def is_default_cube(obj):
    """True for the untouched cube of Blender's factory startup file: a mesh object named Cube
    at the origin, unrotated and unscaled, with the 8-vertex, 6-face mesh of a 2 m cube."""
    if obj is None or obj.type != "MESH" or obj.name != "Cube" or obj.data.name != "Cube":
        return False
    mesh = obj.data
    if len(mesh.vertices) != 8 or len(mesh.polygons) != 6 or obj.parent or obj.modifiers:
        return False
    if any(abs(x) > 1e-6 for x in tuple(obj.location) + tuple(obj.rotation_euler)):
        return False
    if any(abs(x - 1) > 1e-6 for x in obj.scale):
        return False
    return all(abs(abs(c) - 1) < 1e-6 for v in mesh.vertices for c in v.co)


def _remove_default_cube(bpy):
    """Headless only, and only from a startup file (no .blend loaded): Blender's default cube
    would stand in front of the water."""
    if bpy.data.filepath:
        return False
    cube = bpy.data.objects.get("Cube")
    if not is_default_cube(cube):
        return False
    mesh = cube.data
    bpy.data.objects.remove(cube)
    if mesh.users == 0:
        bpy.data.meshes.remove(mesh)
    return True


def _render(bpy, scene, args):
    scene.render.engine = "CYCLES" if args.engine == "cycles" else "BLENDER_EEVEE"
    scene.render.resolution_x, scene.render.resolution_y = args.resolution
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGB"
    scene.render.film_transparent = False
    if args.engine == "cycles":
        scene.cycles.device = "CPU"
        scene.cycles.samples = args.samples
        if hasattr(scene.cycles, "use_adaptive_sampling"):
            scene.cycles.use_adaptive_sampling = False
        # without a denoiser: no caustics through the water and clamped indirect light, which
        # would otherwise leave bright speckles at few samples
        scene.cycles.caustics_reflective = False
        scene.cycles.caustics_refractive = False
        scene.cycles.sample_clamp_indirect = 10.0
    else:
        scene.eevee.taa_render_samples = args.samples
    out = os.path.abspath(args.render)
    scene.render.filepath = out
    bpy.ops.render.render(write_still=True)
    if not os.path.exists(out):
        raise RuntimeError("%s: the render wrote no picture" % out)
    return out


def main(argv):
    args = _parse(argv)
    from . import run_folder

    # the folder and the frame first: their errors come before anything else, in Blender or not
    try:
        folder = run_folder.RunFolder(args.run_dir)
        frames = folder.frames
        frame = frames[0] if args.frame is None else args.frame
        if not frames[0] <= frame <= frames[-1]:
            raise run_folder.RunError("%s: --frame %d is outside the run's frames %d to %d"
                                      % (args.run_dir, frame, frames[0], frames[-1]))
    except run_folder.RunError as e:
        print("pbf_blender error: %s" % e, file=sys.stderr)
        return 1
    try:
        import bpy
    except ImportError:
        print("pbf_blender error: run this inside Blender: " + USAGE, file=sys.stderr)
        return 1
    from . import objects, stage

    try:
        removed_cube = _remove_default_cube(bpy)
        summary, made = objects.import_run(args.run_dir, bpy.context)
        particles = made["particles"]
        scene = bpy.context.scene
        stage.render_settings(scene, denoise=False)
        scene.frame_set(frame)
        shown = objects.load_frame(particles, frame)
        summary.update({
            "frame": frame,
            "particle_file": os.path.basename(shown),
            "particles": len(particles.data.vertices),
            "attributes": [a.name for a in particles.data.attributes
                           if not a.name.startswith(".") and a.name != "position"],
            "removed_default_cube": removed_cube,
        })
        if "surface" in made:
            summary["surface_triangles"] = len(made["surface"].data.polygons)
        if "diffuse" in made:
            summary["diffuse_particles"] = len(made["diffuse"].data.vertices)
        if args.render:
            summary["render"] = _render(bpy, scene, args)
            summary["engine"] = scene.render.engine
        if args.save:
            bpy.ops.wm.save_as_mainfile(filepath=os.path.abspath(args.save))
            summary["saved"] = os.path.abspath(args.save)
    except (run_folder.RunError, OSError, RuntimeError, ValueError) as e:
        print("pbf_blender error: %s" % e, file=sys.stderr)
        return 1
    print("pbf_blender: " + json.dumps(summary, sort_keys=True))
    sys.stdout.flush()
    return 0
