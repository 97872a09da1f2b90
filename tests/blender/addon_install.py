"""Inside Blender: install the add-on from its zip, enable it, import a run through the operator
and check the scene frame by frame against the files (tests/blender/test_blender.sh).

    blender -b --factory-startup --python addon_install.py -- ZIP RUN_DIR

Run with BLENDER_USER_SCRIPTS and BLENDER_USER_CONFIG pointing to a temporary folder, so the
user's own add-ons and preferences stay untouched. Prints `addon_install: ok ...` or exits 1.
"""

import glob
import os
import struct
import sys

import bpy
from mathutils import Vector


def fail(msg):
    print("addon_install: FAIL: " + msg, file=sys.stderr)
    sys.stdout.flush()
    sys.exit(1)


def check(ok, msg):
    if not ok:
        fail(msg)


def ply(path):
    """(header lines, body bytes), decoded here independently of the add-on."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    return data[:end].decode("ascii").splitlines(), data[end:]


def element_count(lines, name):
    return next(int(ln.split()[2]) for ln in lines if ln.startswith("element %s " % name))


def particles(path):
    """[(position, velocity, density, id)] of a particle file, turned to Blender's axes: pbf's
    (x, y, z), y up -> (x, -z, y), z up."""
    lines, body = ply(path)
    n = element_count(lines, "vertex")
    stride = 36 if "property int phase" in lines else 32
    out = []
    for i in range(n):
        x, y, z, vx, vy, vz, rho, pid = struct.unpack_from("<7fi", body, i * stride)
        out.append(((x, -z, y), (vx, -vz, vy), rho, pid))
    return out


def max_diff(a, b):
    return max((abs(p - q) for u, v in zip(a, b) for p, q in zip(u, v)), default=0.0)


def main(zip_path, run):
    check(os.environ.get("BLENDER_USER_SCRIPTS"), "set BLENDER_USER_SCRIPTS to a temporary folder")
    bpy.ops.preferences.addon_install(filepath=zip_path)
    bpy.ops.preferences.addon_enable(module="pbf_blender")
    check(hasattr(bpy.types, "PBF_PT_sidebar"), "the sidebar panel is not registered")
    check(hasattr(bpy.ops.pbf, "import_run"), "the operator is not registered")
    check(any(getattr(f, "__name__", "") == "menu_import"
              for f in bpy.types.TOPBAR_MT_file_import._dyn_ui_initialize()),
          "no entry in File > Import")
    addon_file = sys.modules["pbf_blender"].__file__
    check(addon_file.startswith(os.environ["BLENDER_USER_SCRIPTS"]),
          "the enabled add-on is %s, not the installed zip" % addon_file)

    cube = bpy.data.objects.get("Cube")
    # as the sidebar's Import button calls it: invoked with the folder field filled in
    check(bpy.ops.pbf.import_run("INVOKE_DEFAULT", directory=run) == {"FINISHED"},
          "the operator failed")
    check(bpy.data.objects.get("Cube") is cube and cube is not None,
          "the operator removed the user's cube (only the headless mode may)")
    scene = bpy.context.scene
    coll = bpy.data.collections["pbf " + os.path.basename(os.path.normpath(run))]
    objs = {o.get("pbf_kind"): o for o in coll.objects if o.get("pbf_kind")}
    check(set(objs) >= {"frame", "surface", "solid", "diffuse"}, "objects: %s" % sorted(objs))
    check(scene.camera is not None and scene.camera.name.startswith("pbf camera"),
          "the active camera is %s" % scene.camera)
    frames = sorted(glob.glob(os.path.join(run, "frame_[0-9]*.ply")))
    check((scene.frame_start, scene.frame_end) == (0, len(frames) - 1),
          "frame range %d..%d" % (scene.frame_start, scene.frame_end))

    particles_obj = objs["frame"]
    names = {a.name for a in particles_obj.data.attributes}
    check({"velocity", "density", "id", "speed"} <= names, "attributes %s" % sorted(names))
    # the frame-change handler puts each frame's file into the mesh
    for frame in (len(frames) - 1, 0):
        scene.frame_set(frame)
        want = particles(frames[frame])
        mesh = particles_obj.data
        got = [tuple(v.co) for v in mesh.vertices]
        check(len(got) == len(want), "frame %d: %d vertices, %d in the file"
              % (frame, len(got), len(want)))
        err = max_diff(got, [w[0] for w in want])
        check(err < 1e-6, "frame %d: vertices differ from the file by %g" % (frame, err))
        vel = [tuple(d.vector) for d in mesh.attributes["velocity"].data]
        check(max_diff(vel, [w[1] for w in want]) < 1e-6, "frame %d: velocities" % frame)
        rho = [(d.value,) for d in mesh.attributes["density"].data]
        check(max_diff(rho, [(w[2],) for w in want]) < 1e-3, "frame %d: densities" % frame)
        ids = [d.value for d in mesh.attributes["id"].data]
        check(ids == [w[3] for w in want], "frame %d: ids" % frame)
        surface = os.path.join(run, "surface_%05d.ply" % frame)
        nt = element_count(ply(surface)[0], "face")
        check(len(objs["surface"].data.polygons) == nt, "frame %d: %d surface triangles, %d in "
              "the file" % (frame, len(objs["surface"].data.polygons), nt))
        # each solid's keyframed pose carries its body-frame mesh onto the file's vertices
        lines, body = ply(os.path.join(run, "solids_%05d.ply" % frame))
        world = [struct.unpack_from("<3f", body, 12 * i)
                 for i in range(element_count(lines, "vertex"))]
        world = [Vector((x, -z, y)) for x, y, z in world]
        depsgraph = bpy.context.evaluated_depsgraph_get()
        worst = 0.0
        for obj in (o for o in coll.objects if o.get("pbf_kind") == "solid"):
            m = obj.evaluated_get(depsgraph).matrix_world
            for v in obj.data.vertices:
                p = m @ v.co
                worst = max(worst, min((p - w).length for w in world))
        check(worst < 1e-4, "frame %d: a solid's vertex is %g m from the file's" % (frame, worst))
    # the sidebar panel draws (into a stand-in layout: there is no window here)
    class Layout:
        def __getattr__(self, name):
            return lambda *a, **k: self
    drawn = type("Panel", (), {"layout": Layout()})()
    bpy.context.scene.pbf_run_dir = run
    bpy.types.PBF_PT_sidebar.draw(drawn, bpy.context)
    check(bpy.ops.pbf.reload() == {"FINISHED"}, "Reload frames failed")
    print("addon_install: ok: installed %s, %d particles, %d frames, objects %s"
          % (os.path.basename(zip_path), len(particles_obj.data.vertices), len(frames),
             sorted(objs)))


if __name__ == "__main__":
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    if len(args) != 2:
        fail("usage: blender -b --python addon_install.py -- ZIP RUN_DIR")
    main(*args)
