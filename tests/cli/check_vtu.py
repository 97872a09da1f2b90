"""Checks a `pbf run --format ply,vtu` folder (test_vtu.sh): every frame's .vtu holds exactly the
PLY's values (positions, velocities, densities, ids), frames.pvd lists every frame in order with
stats.csv's time, and no temporary file is left. Usage: check_vtu.py DIR FRAMES"""
import csv
import glob
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vtu_read import read_ply, read_pvd, read_vtu  # noqa: E402


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def main():
    folder, frames = sys.argv[1], int(sys.argv[2])
    series = read_pvd(os.path.join(folder, "frames.pvd"))
    if len(series) != frames + 1:
        fail(f"frames.pvd has {len(series)} data sets, expected {frames + 1}")
    with open(os.path.join(folder, "stats.csv")) as f:
        stats = list(csv.DictReader(f))
    for k, (time, path) in enumerate(series):
        if os.path.basename(path) != f"frame_{k:05d}.vtu":
            fail(f"data set {k} is {path}")
        want = float(stats[k]["time"])
        if not math.isclose(time, want, rel_tol=1e-8, abs_tol=1e-12):
            fail(f"frame {k}: time {time} in frames.pvd, {want} in stats.csv")
        vtu = read_vtu(path)
        ply = read_ply(path[:-4] + ".ply")
        if ("phase" in vtu) != ("phase" in ply):
            fail(f"{path}: a phase in only one of the .vtu and the PLY")
        for name in ("Points", "velocity", "density", "id", "phase"):
            if name in ply and vtu[name] != ply[name]:  # the same values, bit for bit
                fail(f"{path}: {name} differs from the PLY")
        n = int(stats[k]["particles"])
        if len(vtu["id"]) != n or sorted(set(vtu["id"])) != vtu["id"]:
            fail(f"{path}: {len(vtu['id'])} ids, not {n} unique ones in increasing order")
        if k > 0 and vtu["Points"] == read_vtu(series[0][1])["Points"]:
            fail(f"{path}: the particles did not move")
    if glob.glob(os.path.join(folder, "*.tmp.*")):
        fail("temporary files left behind")
    try:  # an extra check with VTK itself where python3-vtk9 is installed (not required)
        from vtkmodules.vtkCommonCore import vtkVersion  # type: ignore
        from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader  # type: ignore
    except ImportError:
        print("check_vtu: VTK's Python module not installed; checked with the stdlib reader")
    else:
        r = vtkXMLUnstructuredGridReader()
        r.SetFileName(series[-1][1])
        r.Update()
        g = r.GetOutput()
        ids = g.GetPointData().GetArray("id")
        if g.GetNumberOfPoints() != n or ids is None or \
                [ids.GetValue(i) for i in range(n)] != vtu["id"]:
            fail("VTK reads other points or ids")
        print("check_vtu: VTK", vtkVersion.GetVTKVersion(), "reads it with the ids")
    print(f"check_vtu: {frames + 1} frames of {n} particles match the PLY files")


main()
