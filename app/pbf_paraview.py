"""Opens a pbf run folder in ParaView: the particles coloured by speed, the mesh solids, the
fluid's surfaces and the diffuse particles, at the run's times in seconds, seen from the scene's
camera. `pbf paraview RUN_DIR` runs it (docs/cli.md, "pbf paraview"); it runs as well on its own:

    xvfb-run -a pvbatch pbf_paraview.py RUN_DIR --render OUT.png [--frame N] [--size WxH]
    pvbatch pbf_paraview.py RUN_DIR --state OUT.pvsm     # then: paraview --state=OUT.pvsm

It reads frames.pvd (written with --format vtu: every part in one collection) or, without it,
the ParaView .series files of the legacy series (frames.vtk.series or frames.ply.series, and
solids_/surfaces/diffuse beside them). It prints one line `pbf_paraview: {json}` saying what it
opened: the time steps, and per part its point and cell counts and arrays at the frame shown.

Needs ParaView's Python (Debian: python3-paraview; its `paraview` package alone has none).
"""
import argparse
import json
import os
import sys
import xml.etree.ElementTree as ET

PARTS = ("particles", "solids", "surfaces", "diffuse")
SERIES = {"particles": "frames", "solids": "solids", "surfaces": "surfaces", "diffuse": "diffuse"}


# The exit status of a failure this script explains (bad input): `pbf paraview` tells it from
# pvbatch's own crashes and xvfb-run's failures, which it tries again.
EXIT_EXPLAINED = 3


def fail(message):
    print(f"pbf paraview: {message}", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    # at once: pvbatch can crash tearing a half-built pipeline down after a failed save
    os._exit(EXIT_EXPLAINED)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="pbf_paraview.py", description=__doc__.split("\n")[0])
    p.add_argument("run_dir")
    p.add_argument("--render", metavar="OUT.png", help="render one frame to a PNG and exit")
    p.add_argument("--frame", type=int, default=-1, help="frame to show (default: the last)")
    p.add_argument("--size", default="1280x720", help="picture size WxH (default 1280x720)")
    p.add_argument("--state", metavar="OUT.pvsm", help="save a ParaView state file")
    p.add_argument("--source", choices=("auto", "pvd", "vtk", "ply"), default="auto",
                   help="frames.pvd, or the .vtk / .ply series (default: pvd when present)")
    args = p.parse_args(argv)
    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
        if not (16 <= w <= 8192 and 16 <= h <= 8192):
            raise ValueError
    except ValueError:
        fail(f"--size expects WxH with 16..8192 pixels each, got '{args.size}'")
    args.size = (w, h)
    return args


def find_sources(run_dir, source):
    """{part: path} of what the folder has, and which kind ("pvd", "vtk" or "ply")."""
    pvd = os.path.join(run_dir, "frames.pvd")
    if source in ("auto", "pvd") and os.path.isfile(pvd):
        return {"collection": pvd}, "pvd"
    if source == "pvd":
        fail(f"{run_dir}: no frames.pvd (run with --format vtu)")
    for ext in (("vtk", "ply") if source == "auto" else (source,)):
        found = {}
        for part in PARTS:
            for e in ((ext, "obj") if part == "surfaces" else (ext,)):
                path = os.path.join(run_dir, f"{SERIES[part]}.{e}.series")
                if os.path.isfile(path) and part not in found:
                    found[part] = path
            if part == "diffuse" and part not in found:  # the diffuse series is always PLY
                path = os.path.join(run_dir, "diffuse.ply.series")
                if os.path.isfile(path):
                    found[part] = path
        if "particles" in found:
            return found, ext
    fail(f"{run_dir}: no frames.pvd, frames.vtk.series or frames.ply.series: not a pbf run "
         "folder, or a run of pbf older than these files (--format vtu, vtk or ply)")


def read_camera(run_dir):
    """The scene's camera from scene.json, or None."""
    try:
        with open(os.path.join(run_dir, "scene.json")) as f:
            cam = json.load(f).get("camera")
        return cam if cam and "position" in cam and "target" in cam else None
    except (OSError, ValueError):
        return None


def block_of(data, name):
    """The dataset of the block named `name` of a multiblock (the .pvd's parts), or None."""
    for i in range(data.GetNumberOfBlocks()):
        meta = data.GetMetaData(i) if data.HasMetaData(i) else None
        if meta is not None and meta.Get(data.NAME()) == name:
            b = data.GetBlock(i)
            while b is not None and b.IsA("vtkMultiBlockDataSet") and b.GetNumberOfBlocks() > 0:
                b = b.GetBlock(0)  # a part's one piece
            return b
    return None


def timesteps(src):
    """The source's time steps as a list (ParaView gives one value as a bare float)."""
    values = src.TimestepValues
    if values is None:
        return []
    return [float(values)] if isinstance(values, (int, float)) else [float(v) for v in values]


def describe(data):
    if data is None:
        return None
    pd, cd = data.GetPointData(), data.GetCellData()
    return {"points": data.GetNumberOfPoints(), "cells": data.GetNumberOfCells(),
            "point_arrays": sorted(pd.GetArrayName(i) for i in range(pd.GetNumberOfArrays())),
            "cell_arrays": sorted(cd.GetArrayName(i) for i in range(cd.GetNumberOfArrays()))}


def main(argv):
    args = parse_args(argv)
    run_dir = os.path.abspath(args.run_dir)
    if not os.path.isdir(run_dir):
        fail(f"{args.run_dir}: no such folder")
    found, kind = find_sources(run_dir, args.source)

    from paraview import servermanager  # noqa: E402  (ParaView's Python only)
    from paraview import simple as pv  # noqa: E402

    view = pv.CreateView("RenderView")
    view.ViewSize = list(args.size)
    view.Background = [0.11, 0.12, 0.14]
    try:  # ParaView 5.10 and later use a palette unless told otherwise
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    view.OrientationAxesVisibility = 1

    sources = {}  # part -> the pipeline object shown
    if kind == "pvd":
        # the parts the collection names (a part may start late: surfaces meshed afterwards),
        # read first: ParaView's reader does not stop on a broken file
        try:
            named = {d.get("name") for d in ET.parse(found["collection"]).iter("DataSet")}
        except (OSError, ET.ParseError) as e:
            fail(f"{found['collection']}: not a .pvd collection ({e})")
        if not named:
            fail(f"{found['collection']}: the collection lists no files")
        reader = pv.PVDReader(registrationName="frames.pvd", FileName=found["collection"])
        reader.UpdatePipelineInformation()
        times = timesteps(reader)
        shown = [part for part in PARTS if part in named]
        if len(shown) == 1:  # one part: the reader gives that data set itself, no blocks
            sources[shown[0]] = reader
        for part in shown if len(shown) > 1 else []:
            sources[part] = pv.ExtractBlock(registrationName=part, Input=reader,
                                            Selectors=[f"/Root/{part}"])
    else:
        times = None
        for part, path in found.items():
            src = pv.OpenDataFile(path)
            if src is None:
                fail(f"ParaView has no reader for {path}")
            pv.RenameSource(part, src)
            src.UpdatePipelineInformation()
            t = timesteps(src)
            if part == "particles":
                times = t
            sources[part] = src
    if not times:
        fail(f"{run_dir}: the series lists no files")
    frame = len(times) - 1 if args.frame < 0 else args.frame
    if frame >= len(times):
        fail(f"--frame {args.frame}: the run has frames 0..{len(times) - 1}")
    time = times[frame]
    scene = pv.GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    scene.AnimationTime = time
    view.ViewTime = time

    report = {"run": run_dir, "source": kind, "times": times, "frame": frame, "time": time,
              "parts": {}}
    for part, src in sources.items():
        src.UpdatePipeline(time)
        data = servermanager.Fetch(src)
        if data is not None and data.IsA("vtkMultiBlockDataSet"):
            data = block_of(data, part) if kind == "pvd" else data
        report["parts"][part] = describe(data)
        shown = pv.Show(src, view)
        if part == "particles":
            shown.SetRepresentationType("Points")
            shown.PointSize = 3.0
            shown.RenderPointsAsSpheres = 1
            arrays = (report["parts"][part] or {}).get("point_arrays", [])
            if "velocity" in arrays:  # speed: the velocity's magnitude
                pv.ColorBy(shown, ("POINTS", "velocity", "Magnitude"))
                lut = pv.GetColorTransferFunction("velocity")
                lut.ApplyPreset("Cool to Warm", True)
                shown.RescaleTransferFunctionToDataRange(True, False)
                shown.SetScalarBarVisibility(view, True)
                bar = pv.GetScalarBar(lut, view)
                bar.Title = "speed"
                bar.ComponentTitle = "m/s"
            else:  # a PLY series: positions only (VTK's PLY reader drops the other properties)
                shown.ColorArrayName = ["POINTS", ""]  # one colour
                shown.AmbientColor = shown.DiffuseColor = [0.25, 0.55, 0.95]
        elif part == "solids":
            shown.ColorArrayName = ["POINTS", ""]  # one colour
            shown.SetRepresentationType("Surface")
            shown.AmbientColor = shown.DiffuseColor = [0.72, 0.55, 0.35]
        elif part == "surfaces":
            shown.ColorArrayName = ["POINTS", ""]  # one colour
            shown.SetRepresentationType("Surface")
            shown.AmbientColor = shown.DiffuseColor = [0.35, 0.6, 0.9]
            shown.Opacity = 0.5
        else:  # diffuse: spray, foam and bubbles
            shown.ColorArrayName = ["POINTS", ""]  # one colour
            shown.SetRepresentationType("Points")
            shown.PointSize = 2.0
            shown.AmbientColor = shown.DiffuseColor = [0.95, 0.95, 0.95]

    camera = read_camera(run_dir)
    if camera is not None:  # pbf's scenes are y-up
        view.CameraPosition = camera["position"]
        view.CameraFocalPoint = camera["target"]
        view.CameraViewUp = [0.0, 1.0, 0.0]
        view.CameraViewAngle = float(camera.get("fov", 45.0))
    else:
        view.ResetCamera()

    if args.render:
        out = os.path.abspath(args.render)
        try:
            pv.SaveScreenshot(out, view, ImageResolution=list(args.size))
        except (OSError, RuntimeError) as e:
            fail(f"{out}: ParaView could not write the picture: {e}")
        if not os.path.isfile(out):
            fail(f"{out}: ParaView wrote no picture")
        report["render"] = out
    if args.state:
        out = os.path.abspath(args.state)
        try:
            pv.SaveState(out)
        except (OSError, RuntimeError) as e:
            fail(f"{out}: ParaView could not save the state: {e}")
        if not os.path.isfile(out):
            fail(f"{out}: ParaView wrote no state file")
        report["state"] = out
    print("pbf_paraview: " + json.dumps(report, sort_keys=True))
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
