"""The operator (File > Import > pbf run) and the sidebar panel (View3D > Sidebar > pbf)."""

import os

import bpy
from bpy.props import BoolProperty, StringProperty

from . import objects, run_folder


class PBF_OT_import_run(bpy.types.Operator):
    """Import a pbf run folder: particles with their attributes, surfaces, solids, spray"""

    bl_idname = "pbf.import_run"
    bl_label = "Import pbf run"
    bl_options = {"REGISTER", "UNDO"}

    directory: StringProperty(name="Run folder", subtype="DIR_PATH", options={"SKIP_SAVE"},
                              description="The output folder of `pbf run SCENE --out DIR`")
    filter_folder: BoolProperty(default=True, options={"HIDDEN"})
    add_stage: BoolProperty(name="Camera, light and floor", default=True,
                            description="Add a camera framing the domain (the active camera), "
                                        "a sun and a floor, and render settings the water needs")

    def invoke(self, context, event):
        # from the sidebar, with its folder field filled in: import that folder at once;
        # from File > Import: pick the folder in the file browser
        if self.directory and os.path.isdir(bpy.path.abspath(self.directory)):
            return self.execute(context)
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        path = bpy.path.abspath(self.directory)
        try:
            summary, _ = objects.import_run(path, context, add_stage=self.add_stage)
        except (run_folder.RunError, OSError, ValueError) as e:
            self.report({"ERROR"}, str(e))
            return {"CANCELLED"}
        context.scene.pbf_run_dir = path
        self.report({"INFO"}, "pbf: %d frames (%d to %d), %d surfaces, %d solids from %s" % (
            summary["frames"], summary["first_frame"], summary["last_frame"],
            summary["surfaces"], summary["solids"], path))
        return {"FINISHED"}


class PBF_OT_reload(bpy.types.Operator):
    """Read the run folders again (after a running simulation wrote more frames)"""

    bl_idname = "pbf.reload"
    bl_label = "Reload frames"

    def execute(self, context):
        objects.refresh()
        objects.on_frame_change(context.scene)
        last = None
        for obj in context.scene.objects:
            if obj.get(objects.PROP_KIND) == "frame" and obj.get(objects.PROP_RUN):
                try:
                    frames = objects.run(obj[objects.PROP_RUN]).frames
                except run_folder.RunError as e:
                    self.report({"WARNING"}, str(e))
                    continue
                last = frames[-1] if last is None else max(last, frames[-1])
        if last is not None:
            context.scene.frame_end = max(context.scene.frame_end, last)
        return {"FINISHED"}


class PBF_PT_sidebar(bpy.types.Panel):
    bl_label = "pbf run"
    bl_idname = "PBF_PT_sidebar"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "pbf"

    def draw(self, context):
        layout = self.layout
        layout.prop(context.scene, "pbf_run_dir", text="")
        row = layout.row(align=True)
        op = row.operator(PBF_OT_import_run.bl_idname, text="Import", icon="IMPORT")
        op.directory = context.scene.pbf_run_dir
        row.operator(PBF_OT_reload.bl_idname, text="", icon="FILE_REFRESH")
        shown = [o for o in context.scene.objects
                 if o.get(objects.PROP_KIND) in ("frame", "surface", "diffuse")]
        for obj in shown:
            col = layout.column(align=True)
            col.label(text="%s: %s" % (obj.name, os.path.basename(obj.get(objects.PROP_RUN, ""))),
                      icon="OUTLINER_OB_POINTCLOUD" if obj.get(objects.PROP_KIND) != "surface"
                      else "OUTLINER_OB_MESH")
            if obj.get(objects.PROP_KIND) == "frame":
                col.label(text="%d particles" % len(obj.data.vertices))
                col.label(text=", ".join(a.name for a in obj.data.attributes
                                         if not a.name.startswith(".") and a.name != "position"))


def menu_import(self, context):
    self.layout.operator(PBF_OT_import_run.bl_idname, text="pbf run (folder)")


CLASSES = (PBF_OT_import_run, PBF_OT_reload, PBF_PT_sidebar)


def register():
    bpy.types.Scene.pbf_run_dir = StringProperty(
        name="pbf run folder", subtype="DIR_PATH",
        description="The output folder of `pbf run SCENE --out DIR`")
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.TOPBAR_MT_file_import.append(menu_import)
    objects.install_handlers()


def unregister():
    objects.remove_handlers()
    bpy.types.TOPBAR_MT_file_import.remove(menu_import)
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
    del bpy.types.Scene.pbf_run_dir
