"""pbf run importer for Blender: particles with their attributes, surfaces, solids and spray.

Install the zip (`bash scripts/blender_addon_zip.sh` writes build/pbf_blender.zip) with
Edit > Preferences > Add-ons > Install, then File > Import > pbf run (folder), or the pbf tab
of the 3D view's sidebar. The same file runs headless (docs/blender.md):

    blender -b --python blender/pbf_blender/__init__.py -- RUN_DIR --frame N --render OUT.png
"""

bl_info = {
    "name": "pbf run importer",
    "author": "pbf",
    "version": (1, 0, 0),
    "blender": (3, 4, 0),
    "location": "File > Import > pbf run (folder); View3D > Sidebar > pbf",
    "description": "Imports a pbf (Position Based Fluids) run folder: particles with velocity, "
                   "density, id and phase for Geometry Nodes, surfaces, solids, spray",
    "category": "Import-Export",
}


def register():
    from . import ui
    ui.register()


def unregister():
    from . import ui
    ui.unregister()


def _main():
    """`blender -b --python .../pbf_blender/__init__.py -- ARGS`: import this folder as the
    package pbf_blender and run its headless mode with the arguments after `--`."""
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.dirname(here))
    import pbf_blender.headless
    if "--" in sys.argv:  # Blender's own arguments come before "--"
        argv = sys.argv[sys.argv.index("--") + 1:]
    else:
        argv = [] if "bpy" in sys.modules else sys.argv[1:]
    try:
        status = pbf_blender.headless.main(argv)
    except SystemExit as e:  # argparse's usage errors and --help
        status = e.code if isinstance(e.code, int) else 1
    sys.stdout.flush()
    if status:
        sys.exit(status)
    bpy = sys.modules.get("bpy")
    if bpy is not None and not bpy.app.background and not hasattr(bpy.types, "PBF_PT_sidebar"):
        pbf_blender.register()  # with a window: the panel too, as if the add-on were enabled
        runs = [o["pbf_run"] for o in bpy.context.scene.objects if o.get("pbf_run")]
        if runs:
            bpy.context.scene.pbf_run_dir = runs[-1]


if __name__ == "__main__":
    _main()
