"""A reader of the XML VTK files pbf writes (.vtu, .pvtu, .pvd), with the standard library only:
xml.etree for the XML, struct for the raw appended block. Used by the command-line tests of the
vtu output (test_vtu.sh) and of MPI runs (test_mpi.sh); it checks the layout as it reads.
"""
import os
import struct
import xml.etree.ElementTree as ET

TYPES = {"Float32": "f", "Float64": "d", "Int32": "i", "Int64": "q", "UInt8": "B", "UInt64": "Q"}


class FormatError(Exception):
    pass


def read_vtu(path):
    """Returns {"Points", "velocity", "density", "id", "connectivity", "offsets", "types"}: lists
    of tuples (vectors) or numbers."""
    data = open(path, "rb").read()
    mark = data.find(b"<AppendedData")
    if mark < 0:
        raise FormatError(f"{path}: no AppendedData")
    start = data.index(b"_", data.index(b">", mark)) + 1
    end = data.rfind(b"</AppendedData>")
    head = data[:mark] + b"</VTKFile>"
    root = ET.fromstring(head)
    if root.get("type") != "UnstructuredGrid" or root.get("byte_order") != "LittleEndian":
        raise FormatError(f"{path}: not a little-endian UnstructuredGrid")
    if root.get("header_type") != "UInt64":
        raise FormatError(f"{path}: header_type is not UInt64")
    pieces = root.findall("./UnstructuredGrid/Piece")
    if len(pieces) != 1:
        raise FormatError(f"{path}: {len(pieces)} pieces")
    piece = pieces[0]
    n = int(piece.get("NumberOfPoints"))
    if int(piece.get("NumberOfCells")) != n:
        raise FormatError(f"{path}: cells != points")
    out = {}
    for arr in piece.iter("DataArray"):
        name, kind = arr.get("Name"), TYPES[arr.get("type")]
        comps = int(arr.get("NumberOfComponents", "1"))
        if arr.get("format") != "appended":
            raise FormatError(f"{path}: {name} is not appended")
        at = start + int(arr.get("offset"))
        (size,) = struct.unpack_from("<Q", data, at)
        count = n * comps
        if size != count * struct.calcsize(kind) or at + 8 + size > end:
            raise FormatError(f"{path}: {name}: {size} bytes for {count} values")
        values = struct.unpack_from(f"<{count}{kind}", data, at + 8)
        out[name] = ([tuple(values[i:i + comps]) for i in range(0, count, comps)]
                     if comps > 1 else list(values))
    for need in ("Points", "velocity", "density", "id", "connectivity", "offsets", "types"):
        if need not in out:
            raise FormatError(f"{path}: no {need} array")
    if out["connectivity"] != list(range(n)) or out["offsets"] != list(range(1, n + 1)):
        raise FormatError(f"{path}: cells are not one vertex per point")
    if any(t != 1 for t in out["types"]):
        raise FormatError(f"{path}: a cell is not a VTK_VERTEX")
    return out


def read_pvtu(path):
    """The piece files a .pvtu names, as paths."""
    root = ET.parse(path).getroot()
    if root.get("type") != "PUnstructuredGrid":
        raise FormatError(f"{path}: not a PUnstructuredGrid")
    names = [a.get("Name") for a in root.iter("PDataArray")]
    for need in ("velocity", "density", "id", "Points"):
        if need not in names:
            raise FormatError(f"{path}: no {need} PDataArray")
    folder = os.path.dirname(path)
    return [os.path.join(folder, p.get("Source")) for p in root.iter("Piece")]


def read_vtu_cells(path):
    """Any UnstructuredGrid pbf writes (the solids, surfaces and diffuse particles too):
    {"points": N, "cells": M, "Points": [...], "connectivity", "offsets", "types",
    "point_data": {name: values}, "cell_data": {name: values}}."""
    data = open(path, "rb").read()
    mark = data.find(b"<AppendedData")
    if mark < 0:
        raise FormatError(f"{path}: no AppendedData")
    start = data.index(b"_", data.index(b">", mark)) + 1
    end = data.rfind(b"</AppendedData>")
    root = ET.fromstring(data[:mark] + b"</VTKFile>")
    if root.get("type") != "UnstructuredGrid" or root.get("header_type") != "UInt64":
        raise FormatError(f"{path}: not an UnstructuredGrid with UInt64 headers")
    piece = root.find("./UnstructuredGrid/Piece")
    n, m = int(piece.get("NumberOfPoints")), int(piece.get("NumberOfCells"))
    out = {"points": n, "cells": m, "point_data": {}, "cell_data": {}}
    for section, key in (("PointData", "point_data"), ("CellData", "cell_data"),
                         ("Points", None), ("Cells", None)):
        for arr in piece.findall(f"./{section}/DataArray"):
            name, kind = arr.get("Name"), TYPES[arr.get("type")]
            comps = int(arr.get("NumberOfComponents", "1"))
            at = start + int(arr.get("offset"))
            (size,) = struct.unpack_from("<Q", data, at)
            count = size // struct.calcsize(kind)
            if at + 8 + size > end:
                raise FormatError(f"{path}: {name} runs past the appended block")
            values = struct.unpack_from(f"<{count}{kind}", data, at + 8)
            values = ([tuple(values[i:i + comps]) for i in range(0, count, comps)]
                      if comps > 1 else list(values))
            want = {"PointData": n, "CellData": m, "Points": n}.get(section)
            if want is not None and len(values) != want:
                raise FormatError(f"{path}: {name} has {len(values)} values for {want}")
            (out[key] if key else out)[name] = values
    return out


def read_pvd_parts(path):
    """[(time, part, name, path)] of a .pvd, in file order."""
    root = ET.parse(path).getroot()
    folder = os.path.dirname(path)
    return [(float(d.get("timestep")), int(d.get("part")), d.get("name"),
             os.path.join(folder, d.get("file"))) for d in root.iter("DataSet")]


def read_pvd(path):
    """[(time, path)] of a .pvd, in file order."""
    root = ET.parse(path).getroot()
    if root.get("type") != "Collection":
        raise FormatError(f"{path}: not a Collection")
    folder = os.path.dirname(path)
    return [(float(d.get("timestep")), os.path.join(folder, d.get("file")))
            for d in root.iter("DataSet")]


def read_ply(path):
    """pbf's own PLY (include/pbf/export.h): {"Points", "velocity", "density", "id"}, and
    "phase" when the file has that property (a world of several fluids)."""
    data = open(path, "rb").read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].split(b"\n")
    n = int([l for l in header if l.startswith(b"element vertex")][0].split()[2])
    phases = b"property int phase" in header
    out = {"Points": [], "velocity": [], "density": [], "id": []}
    if phases:
        out["phase"] = []
    size = 36 if phases else 32
    for i in range(n):
        x, y, z, vx, vy, vz, rho, pid = struct.unpack_from("<7fi", data, end + size * i)
        out["Points"].append((x, y, z))
        out["velocity"].append((vx, vy, vz))
        out["density"].append(rho)
        out["id"].append(pid)
        if phases:
            out["phase"].append(struct.unpack_from("<i", data, end + size * i + 32)[0])
    return out


def read_frame(path):
    """A .vtu, or a .pvtu's pieces joined and sorted by id."""
    if not path.endswith(".pvtu"):
        return read_vtu(path)
    rows, phases = [], False
    for piece in read_pvtu(path):
        p = read_vtu(piece)
        phases = "phase" in p  # several fluids: every piece has it
        rows += zip(p["id"], p["Points"], p["velocity"], p["density"],
                    p["phase"] if phases else [0] * len(p["id"]))
    rows.sort()
    out = {"id": [r[0] for r in rows], "Points": [r[1] for r in rows],
           "velocity": [r[2] for r in rows], "density": [r[3] for r in rows]}
    if phases:
        out["phase"] = [r[4] for r in rows]
    return out
