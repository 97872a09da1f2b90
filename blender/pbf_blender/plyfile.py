"""Binary little-endian PLY files as pbf writes them, read with numpy.

Blender's own PLY importer keeps the positions but drops every other per-vertex value
(velocity, density, id, phase) and the solids' per-face `solid`, so the add-on reads the files
itself. The layouts (docs/cli.md): particles `x y z vx vy vz density id [phase]`; diffuse
particles `x y z vx vy vz kind lifetime`; surfaces `x y z nx ny nz` + triangles; solids `x y z`
+ triangles with `solid`, each solid's pose in a `comment solid ...` header line.

Needs numpy only (Blender ships it), so it also runs outside Blender.
"""

import numpy as np

# PLY scalar type names (both spellings of the standard) -> numpy little-endian types.
_TYPES = {
    "char": "i1", "int8": "i1", "uchar": "u1", "uint8": "u1",
    "short": "<i2", "int16": "<i2", "ushort": "<u2", "uint16": "<u2",
    "int": "<i4", "int32": "<i4", "uint": "<u4", "uint32": "<u4",
    "float": "<f4", "float32": "<f4", "double": "<f8", "float64": "<f8",
}


class PlyError(ValueError):
    """A file that is not a PLY file pbf wrote; the message names the file."""


class Element:
    """One element of a PLY file: `count` records, `data` a numpy structured array of its
    scalar properties, `lists` the list properties (name -> int array [count, corners]; only
    fixed-size lists, as pbf writes triangles only)."""

    def __init__(self, name, count):
        self.name = name
        self.count = count
        self.props = []  # [(name, numpy type or ("list", count type, item type))]
        self.data = None
        self.lists = {}

    def __contains__(self, prop):
        return self.data is not None and prop in self.data.dtype.names


class PlyFile:
    """`comments` (the header's comment lines without the word) and `elements` by name."""

    def __init__(self, path):
        self.path = path
        self.comments = []
        self.elements = {}

    def element(self, name):
        """The element `name`; an empty one if the file has none."""
        return self.elements.get(name) or Element(name, 0)


def _parse_header(path, data):
    end = data.find(b"end_header\n")
    if not data.startswith(b"ply\n") or end < 0:
        raise PlyError("%s: not a PLY file (expected 'ply' and 'end_header')" % path)
    ply = PlyFile(path)
    order = []
    element = None
    fmt = None
    for line in data[:end].decode("ascii", "replace").splitlines()[1:]:
        words = line.split()
        if not words:
            continue
        if words[0] == "format":
            fmt = " ".join(words[1:])
        elif words[0] == "comment":
            ply.comments.append(line[len("comment"):].strip())
        elif words[0] == "element" and len(words) == 3:
            element = Element(words[1], int(words[2]))
            if element.count < 0:
                raise PlyError("%s: element %s has a negative count" % (path, words[1]))
            order.append(element)
        elif words[0] == "property" and element is not None:
            if words[1] == "list" and len(words) == 5 and words[2] in _TYPES and words[3] in _TYPES:
                element.props.append((words[4], ("list", _TYPES[words[2]], _TYPES[words[3]])))
            elif len(words) == 3 and words[1] in _TYPES:
                element.props.append((words[2], _TYPES[words[1]]))
            else:
                raise PlyError("%s: unsupported property line '%s'" % (path, line))
        elif words[0] != "obj_info":
            raise PlyError("%s: unexpected header line '%s'" % (path, line))
    if fmt != "binary_little_endian 1.0":
        raise PlyError("%s: format '%s', expected binary_little_endian 1.0 (as pbf writes)"
                       % (path, fmt))
    return ply, order, end + len(b"end_header\n")


def read(path):
    """Reads a binary little-endian PLY file. Raises PlyError (naming the file) on a file that
    is not one, is truncated, or has faces that are not all of the same corner count."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise PlyError("%s: %s" % (path, e.strerror or e)) from None
    ply, order, offset = _parse_header(path, data)
    for element in order:
        lists = [(name, t) for name, t in element.props if isinstance(t, tuple)]
        if len(lists) > 1:
            raise PlyError("%s: element %s has %d list properties (pbf writes at most one)"
                           % (path, element.name, len(lists)))
        corners = 0
        if lists and element.count > 0:
            # pbf's lists all have the same length (triangles): read the first count, then the
            # records as fixed-size ones, and check every count below.
            first = [i for i, (_, t) in enumerate(element.props) if isinstance(t, tuple)][0]
            skip = sum(np.dtype(t).itemsize for _, t in element.props[:first])
            if offset + skip + 1 > len(data):
                raise PlyError("%s: truncated in element %s" % (path, element.name))
            corners = int(np.frombuffer(data, lists[0][1][1], 1, offset + skip)[0])
        fields = []
        for name, t in element.props:
            if isinstance(t, tuple):
                fields.append(("_n_" + name, t[1]))
                fields.append((name, t[2], (corners,)) if corners else (name, t[2], (0,)))
            else:
                fields.append((name, t))
        dtype = np.dtype(fields)
        need = dtype.itemsize * element.count
        if offset + need > len(data):
            raise PlyError("%s: truncated: element %s needs %d bytes, %d left"
                           % (path, element.name, need, len(data) - offset))
        records = np.frombuffer(data, dtype, element.count, offset)
        offset += need
        for name, t in lists:
            if element.count and np.any(records["_n_" + name] != corners):
                raise PlyError("%s: element %s: lists of different lengths (pbf writes %d-corner "
                               "faces only)" % (path, element.name, corners))
            element.lists[name] = np.array(records[name], dtype=np.int64)
        scalars = [name for name, t in element.props if not isinstance(t, tuple)]
        element.data = np.array(records[scalars]) if scalars else None
        ply.elements[element.name] = element
    return ply


def vertex_count(path):
    """The vertex count of a PLY file, from its header only (cheap for big files)."""
    with open(path, "rb") as f:
        head = f.read(4096)
    for line in head.split(b"\n"):
        words = line.split()
        if words[:2] == [b"element", b"vertex"] and len(words) == 3:
            return int(words[2])
        if line == b"end_header":
            break
    raise PlyError("%s: no 'element vertex N' line in the header" % path)


def columns(element, names):
    """The named float properties of `element` as a float32 array [count, len(names)]."""
    missing = [n for n in names if n not in element]
    if missing:
        raise PlyError("element %s has no property %s" % (element.name, ", ".join(missing)))
    out = np.empty((element.count, len(names)), np.float32)
    for k, n in enumerate(names):
        out[:, k] = element.data[n]
    return out
