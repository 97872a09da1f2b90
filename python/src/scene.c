/* pbf.Scene: a scene loaded by the library's strict loader (include/pbf/scene.h) from a file, a
 * JSON string, a dict (as JSON) or the built-in dam break, with --set style overrides. */
#include <stdlib.h>
#include <string.h>

#include "pbfpy.h"

#define WARNINGS_SIZE 8192

static pbfpy_scene *scene_alloc(PyTypeObject *type) {
    pbfpy_scene *self = (pbfpy_scene *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->scene = malloc(sizeof *self->scene);
    if (self->scene == NULL) {
        Py_DECREF(self);
        PyErr_NoMemory();
        return NULL;
    }
    memset(self->scene, 0, sizeof *self->scene);
    return self;
}

static void scene_dealloc(pbfpy_scene *self) {
    free(self->scene);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* ---- overrides ------------------------------------------------------------------------------ */

/* "path=value" strings from a mapping {path: value} (each value written as JSON) or a sequence
 * of "path=value" strings. Keeps the bytes in *keep (a list) for as long as the strings are
 * used. Returns the array (malloc'd; free it) or NULL with an error; *count gets its length. */
static const char **overrides_from(PyObject *obj, PyObject **keep, int *count) {
    *count = 0;
    *keep = PyList_New(0);
    if (*keep == NULL) return NULL;
    if (obj == NULL || obj == Py_None) return malloc(1);
    PyObject *items = NULL;
    if (PyMapping_Check(obj) && !PySequence_Check(obj)) {
        PyObject *json = PyImport_ImportModule("json");
        PyObject *pairs = json != NULL ? PyMapping_Items(obj) : NULL;
        items = pairs != NULL ? PyList_New(0) : NULL;
        for (Py_ssize_t i = 0; items != NULL && i < PyList_GET_SIZE(pairs); ++i) {
            PyObject *pair = PyList_GET_ITEM(pairs, i);
            if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
                PyErr_SetString(PyExc_TypeError, "overrides: items() must give (key, value)");
                Py_CLEAR(items);
                break;
            }
            PyObject *key = PyTuple_GET_ITEM(pair, 0);
            PyObject *text = PyObject_CallMethod(json, "dumps", "O", PyTuple_GET_ITEM(pair, 1));
            PyObject *line = NULL;
            if (text != NULL && !PyUnicode_Check(key))
                PyErr_Format(PyExc_TypeError, "overrides: keys must be strings, got %R", key);
            else if (text != NULL)
                line = PyUnicode_FromFormat("%U=%U", key, text);
            Py_XDECREF(text);
            if (line == NULL || PyList_Append(items, line) < 0) Py_CLEAR(items);
            Py_XDECREF(line);
        }
        Py_XDECREF(pairs);
        Py_XDECREF(json);
    } else if (PySequence_Check(obj) && !PyUnicode_Check(obj)) {
        items = PySequence_List(obj);
    } else {
        PyErr_Format(PyExc_TypeError,
                     "overrides must be a dict {path: value} or a list of 'path=value' strings, "
                     "got %s",
                     Py_TYPE(obj)->tp_name);
    }
    if (items == NULL) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(items);
    const char **out = malloc((size_t)(n > 0 ? n : 1) * sizeof *out);
    if (out == NULL) {
        Py_DECREF(items);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *item = PyList_GET_ITEM(items, i), *bytes = NULL;
        if (!PyUnicode_Check(item)) {
            PyErr_Format(PyExc_TypeError, "overrides: expected 'path=value' strings, got %R", item);
        } else {
            bytes = PyUnicode_AsUTF8String(item);
        }
        if (bytes == NULL || PyList_Append(*keep, bytes) < 0) {
            Py_XDECREF(bytes);
            Py_DECREF(items);
            free(out);
            return NULL;
        }
        out[i] = PyBytes_AS_STRING(bytes);
        Py_DECREF(bytes);
    }
    Py_DECREF(items);
    *count = (int)n;
    return out;
}

/* ---- checks --------------------------------------------------------------------------------- */

/* pbf_scene_check: an error raises, each warning goes to Python's warnings (pbf.SceneWarning). */
static int check_scene(const pbf_scene *scene, PyObject **list) {
    char *warnings = malloc(WARNINGS_SIZE);
    if (warnings == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    warnings[0] = '\0';
    char err[PBF_ERROR_SIZE];
    int count = 0;
    pbf_status st = pbf_scene_check(scene, warnings, WARNINGS_SIZE, &count, err, sizeof err);
    int rc = st == PBF_OK ? 0 : pbfpy_raise_int(st, err);
    for (char *line = warnings; rc == 0 && *line != '\0';) {
        char *end = strchr(line, '\n');
        if (end != NULL) *end = '\0';
        if (list != NULL) {
            PyObject *s = PyUnicode_FromString(line);
            if (s == NULL || PyList_Append(*list, s) < 0) rc = -1;
            Py_XDECREF(s);
        } else if (PyErr_WarnEx(pbfpy_scene_warning, line, 1) < 0) {
            rc = -1;
        }
        line = end != NULL ? end + 1 : line + strlen(line);
    }
    free(warnings);
    return rc;
}

/* ---- constructors --------------------------------------------------------------------------- */

typedef enum source_kind { FROM_FILE, FROM_JSON, FROM_DEFAULT } source_kind;

static PyObject *make_scene(PyTypeObject *type, source_kind kind, const char *text,
                            const char *source, PyObject *overrides, int check) {
    PyObject *keep = NULL;
    int count = 0;
    const char **sets = overrides_from(overrides, &keep, &count);
    if (sets == NULL) {
        Py_XDECREF(keep);
        return NULL;
    }
    pbfpy_scene *self = scene_alloc(type);
    if (self != NULL) {
        char err[PBF_ERROR_SIZE];
        pbf_status st;
        Py_BEGIN_ALLOW_THREADS if (kind == FROM_FILE) st =
            pbf_scene_load(text, sets, count, self->scene, err, sizeof err);
        else if (kind == FROM_JSON) st =
            pbf_scene_parse(text, source, sets, count, self->scene, err, sizeof err);
        else st = pbf_scene_default(sets, count, self->scene, err, sizeof err);
        Py_END_ALLOW_THREADS if (st != PBF_OK) {
            Py_CLEAR(self);
            pbfpy_raise(st, err);
        }
        else if (check && check_scene(self->scene, NULL) < 0) {
            Py_CLEAR(self);
        }
    }
    free((void *)sets);
    Py_DECREF(keep);
    return (PyObject *)self;
}

static PyObject *scene_load(PyObject *cls, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"path", "overrides", "check", NULL};
    PyObject *path = NULL, *overrides = NULL;
    int check = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|O$p:load", kwlist, PyUnicode_FSConverter,
                                     &path, &overrides, &check))
        return NULL;
    PyObject *r =
        make_scene((PyTypeObject *)cls, FROM_FILE, PyBytes_AS_STRING(path), NULL, overrides, check);
    Py_DECREF(path);
    return r;
}

static PyObject *scene_from_json(PyObject *cls, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"text", "overrides", "source", "check", NULL};
    const char *text = NULL, *source = NULL;
    PyObject *overrides = NULL;
    int check = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|Ozp:from_json", kwlist, &text, &overrides,
                                     &source, &check))
        return NULL;
    return make_scene((PyTypeObject *)cls, FROM_JSON, text, source, overrides, check);
}

static PyObject *scene_from_dict(PyObject *cls, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"data", "overrides", "source", "check", NULL};
    PyObject *data = NULL, *overrides = NULL;
    const char *source = NULL;
    int check = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|Ozp:from_dict", kwlist, &PyDict_Type, &data,
                                     &overrides, &source, &check))
        return NULL;
    PyObject *json = PyImport_ImportModule("json");
    PyObject *text = json != NULL ? PyObject_CallMethod(json, "dumps", "O", data) : NULL;
    Py_XDECREF(json);
    const char *s = text != NULL ? PyUnicode_AsUTF8(text) : NULL;
    PyObject *r = s != NULL ? make_scene((PyTypeObject *)cls, FROM_JSON, s,
                                         source != NULL ? source : "<dict>", overrides, check)
                            : NULL;
    Py_XDECREF(text);
    return r;
}

static PyObject *scene_default(PyObject *cls, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"overrides", "check", NULL};
    PyObject *overrides = NULL;
    int check = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$p:default", kwlist, &overrides, &check))
        return NULL;
    return make_scene((PyTypeObject *)cls, FROM_DEFAULT, NULL, NULL, overrides, check);
}

/* ---- methods -------------------------------------------------------------------------------- */

static PyObject *scene_to_json(pbfpy_scene *self, PyObject *unused) {
    (void)unused;
    char *text = pbf_scene_to_json(self->scene);
    if (text == NULL) return PyErr_NoMemory();
    PyObject *r = PyUnicode_FromString(text);
    free(text);
    return r;
}

static PyObject *scene_to_dict(pbfpy_scene *self, PyObject *unused) {
    PyObject *text = scene_to_json(self, unused);
    if (text == NULL) return NULL;
    PyObject *json = PyImport_ImportModule("json");
    PyObject *r = json != NULL ? PyObject_CallMethod(json, "loads", "O", text) : NULL;
    Py_XDECREF(json);
    Py_DECREF(text);
    return r;
}

static PyObject *scene_check(pbfpy_scene *self, PyObject *unused) {
    (void)unused;
    PyObject *list = PyList_New(0);
    if (list != NULL && check_scene(self->scene, &list) < 0) Py_CLEAR(list);
    return list;
}

static PyObject *scene_reduce(pbfpy_scene *self, PyObject *unused) {
    PyObject *text = scene_to_json(self, unused);
    PyObject *ctor =
        text != NULL ? PyObject_GetAttrString((PyObject *)Py_TYPE(self), "from_json") : NULL;
    PyObject *r = ctor != NULL ? Py_BuildValue("(O(OOsO))", ctor, text, Py_None,
                                               self->scene->source, Py_False)
                               : NULL;
    Py_XDECREF(ctor);
    Py_XDECREF(text);
    return r;
}

static PyObject *scene_repr(pbfpy_scene *self) {
    PyObject *fps = PyFloat_FromDouble((double)self->scene->fps);
    if (fps == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat(
        "<pbf.Scene '%s' from %s: %lld particles, %d frames at %R fps>", self->scene->name,
        self->scene->source, (long long)pbf_scene_particle_count(self->scene), self->scene->frames,
        fps);
    Py_DECREF(fps);
    return r;
}

/* ---- properties ----------------------------------------------------------------------------- */

static PyObject *get_name(pbfpy_scene *s, void *c) {
    (void)c;
    return PyUnicode_FromString(s->scene->name);
}
static PyObject *get_source(pbfpy_scene *s, void *c) {
    (void)c;
    return PyUnicode_FromString(s->scene->source);
}
static PyObject *get_fps(pbfpy_scene *s, void *c) {
    (void)c;
    return PyFloat_FromDouble((double)s->scene->fps);
}
static PyObject *get_dt(pbfpy_scene *s, void *c) {
    (void)c;
    /* 1/fps in single precision, as `pbf run` steps: the same float, so the same results */
    return PyFloat_FromDouble((double)(1.0f / s->scene->fps));
}
static PyObject *get_frames(pbfpy_scene *s, void *c) {
    (void)c;
    return PyLong_FromLong(s->scene->frames);
}
static PyObject *get_output_dir(pbfpy_scene *s, void *c) {
    (void)c;
    return PyUnicode_DecodeFSDefault(s->scene->output_dir);
}
static PyObject *get_formats(pbfpy_scene *s, void *c) {
    (void)c;
    PyObject *list = PyList_New(0);
    const pbf_format all[] = {PBF_FORMAT_PLY, PBF_FORMAT_VTK, PBF_FORMAT_VTU};
    for (int i = 0; list != NULL && i < 3; ++i) {
        if (!(s->scene->formats & (unsigned)all[i])) continue;
        PyObject *name = PyUnicode_FromString(pbf_format_extension(all[i]));
        if (name == NULL || PyList_Append(list, name) < 0) Py_CLEAR(list);
        Py_XDECREF(name);
    }
    return list;
}
static PyObject *get_particle_count(pbfpy_scene *s, void *c) {
    (void)c;
    return PyLong_FromLongLong((long long)pbf_scene_particle_count(s->scene));
}
static PyObject *get_camera(pbfpy_scene *s, void *c) {
    (void)c;
    const pbf_camera_def *cam = &s->scene->camera;
    return Py_BuildValue("{s:N,s:N,s:d}", "position", pbfpy_vec3_tuple(cam->position), "target",
                         pbfpy_vec3_tuple(cam->target), "fov", (double)cam->fov);
}
static PyObject *get_has_tool(pbfpy_scene *s, void *c) {
    (void)c;
    return PyBool_FromLong(s->scene->has_tool);
}

static PyGetSetDef scene_getset[] = {
    {"name", (getter)get_name, NULL, "The scene's name (str).", NULL},
    {"source", (getter)get_source, NULL,
     "The file it came from, or \"<dict>\", \"<string>\", "
     "\"<built-in>\".",
     NULL},
    {"fps", (getter)get_fps, NULL, "Frames per second of output (time.fps).", NULL},
    {"dt", (getter)get_dt, NULL,
     "The time of one frame, 1/fps in single precision: step(scene.dt) advances one frame\n"
     "exactly as `pbf run` does.",
     NULL},
    {"frames", (getter)get_frames, NULL, "Frames to simulate (time.frames).", NULL},
    {"output_dir", (getter)get_output_dir, NULL, "The run's output folder (output.dir).", NULL},
    {"formats", (getter)get_formats, NULL,
     "Particle file formats of a run: ['ply'], ['ply', "
     "'vtk'], [] (output.format).",
     NULL},
    {"particle_count", (getter)get_particle_count, NULL, "Particles the scene's blocks hold.",
     NULL},
    {"camera", (getter)get_camera, NULL,
     "{'position': (x, y, z), 'target': (x, y, z), 'fov': "
     "degrees}: the scene's camera.",
     NULL},
    {"has_tool", (getter)get_has_tool, NULL, "Whether the scene has a tool section.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef scene_methods[] = {
    {"load", (PyCFunction)(void (*)(void))scene_load, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "load($type, path, overrides=None, *, check=True)\n--\n\n"
     "Loads a scene file (strict JSON, docs/scenes.md). overrides: a dict\n"
     "{\"solver.iterations\": 6} (values written as JSON) or a list of 'path=value' strings,\n"
     "applied like `pbf run --set`.\n"
     "check: run the scene checks of `pbf run` (an impossible time step raises; doubtful values\n"
     "are reported as pbf.SceneWarning). Raises pbf.FileError, pbf.ParseError (broken JSON,\n"
     "unknown key, wrong type) or pbf.InvalidArgumentError (a value out of range), with the\n"
     "library's message naming the file, the key and what was expected."},
    {"from_json", (PyCFunction)(void (*)(void))scene_from_json,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "from_json($type, text, overrides=None, source=None, check=True)\n--\n\n"
     "A scene from JSON text; source names it in messages (default \"<string>\")."},
    {"from_dict", (PyCFunction)(void (*)(void))scene_from_dict,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "from_dict($type, data, overrides=None, source=None, check=True)\n--\n\n"
     "A scene from a dict with the keys of a scene file (written as JSON and loaded by the\n"
     "same strict loader); source names it in messages (default \"<dict>\")."},
    {"default", (PyCFunction)(void (*)(void))scene_default,
     METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "default($type, overrides=None, *, check=True)\n--\n\n"
     "The built-in dam break (what `pbf run` runs without a scene)."},
    {"to_json", (PyCFunction)scene_to_json, METH_NOARGS,
     "to_json($self, /)\n--\n\nEvery parameter after defaults as JSON that loads back to the same "
     "scene."},
    {"to_dict", (PyCFunction)scene_to_dict, METH_NOARGS,
     "to_dict($self, /)\n--\n\nEvery parameter after defaults as a dict (see to_json)."},
    {"check", (PyCFunction)scene_check, METH_NOARGS,
     "check($self, /)\n--\n\nThe checks of `pbf run`: raises pbf.InvalidArgumentError for a "
     "time step\nin which gravity alone moves a particle more than the kernel radius; returns "
     "the\nwarnings (a list of str)."},
    {"__reduce__", (PyCFunction)scene_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pbfpy_scene_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pbf.Scene",
    .tp_basicsize = sizeof(pbfpy_scene),
    .tp_dealloc = (destructor)scene_dealloc,
    .tp_repr = (reprfunc)scene_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A scene: a world, its fluid blocks, colliders, tool, probes, timing, camera and\n"
              "output, loaded by the library's strict loader (docs/scenes.md). Make one with\n"
              "Scene.load(path), Scene.from_dict(d), Scene.from_json(text) or Scene.default();\n"
              "pbf.World(scene) builds its world.",
    .tp_methods = scene_methods,
    .tp_getset = scene_getset,
};
