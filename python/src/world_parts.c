/* pbf.World, continued: what a world holds besides its solver settings. Fluid blocks and loose
 * particles, colliders, the tool (include/pbf/pbf.h, docs/tool.md) and probes
 * (include/pbf/probes.h). Each def starts from the library's default constructor; the
 * keyword arguments set its fields; the library validates and names the field at fault. */
#include <string.h>

#include "pbfpy.h"

/* Positional arguments are not taken: every field is named. */
static int no_positional(PyObject *args, const char *what) {
    if (args == NULL || PyTuple_GET_SIZE(args) == 0) return 0;
    PyErr_Format(PyExc_TypeError, "%s takes keyword arguments only", what);
    return -1;
}

/* ---- fluid ---------------------------------------------------------------------------------- */

PyObject *pbfpy_world_add_block(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    if (no_positional(args, "add_block") < 0) return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_block_def block = pbf_default_block_def();
    if (pbfpy_fields_set(&block, pbfpy_block_fields, "add_block", kwargs, NULL) < 0) return NULL;
    int before = pbf_world_particle_count(w);
    pbf_status st = pbf_world_add_block(w, &block);
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_error(w));
    return PyLong_FromLong(pbf_world_particle_count(w) - before);
}

PyObject *pbfpy_world_add_particles(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"positions", "velocities", NULL};
    PyObject *pos_obj = NULL, *vel_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:add_particles", kwlist, &pos_obj, &vel_obj))
        return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    PyArrayObject *pos = pbfpy_in_array(pos_obj, NPY_FLOAT32, 3, "add_particles: positions");
    if (pos == NULL) return NULL;
    PyArrayObject *vel = NULL;
    if (vel_obj != Py_None) {
        vel = pbfpy_in_array(vel_obj, NPY_FLOAT32, 3, "add_particles: velocities");
        if (vel == NULL) {
            Py_DECREF(pos);
            return NULL;
        }
        if (PyArray_DIM(vel, 0) != PyArray_DIM(pos, 0)) {
            PyErr_Format(PyExc_ValueError, "add_particles: %zd velocities for %zd positions",
                         (Py_ssize_t)PyArray_DIM(vel, 0), (Py_ssize_t)PyArray_DIM(pos, 0));
            Py_DECREF(pos);
            Py_DECREF(vel);
            return NULL;
        }
    }
    int first = pbf_world_particle_count(w);
    pbf_status st = pbf_world_add_particles(w, (int)PyArray_DIM(pos, 0), PyArray_DATA(pos),
                                            vel != NULL ? PyArray_DATA(vel) : NULL);
    Py_DECREF(pos);
    Py_XDECREF(vel);
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_error(w));
    return PyLong_FromLong(first);
}

/* ---- colliders ------------------------------------------------------------------------------ */

PyObject *pbfpy_world_add_collider(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    PyObject *type = NULL; /* the type may come by position: add_collider("sphere", ...) */
    if (!PyArg_ParseTuple(args, "|O:add_collider", &type)) return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_collider_def c = pbf_default_collider_def();
    if (type != NULL) {
        if (kwargs != NULL && PyDict_GetItemString(kwargs, "type") != NULL) {
            PyErr_SetString(PyExc_TypeError, "add_collider: type given twice");
            return NULL;
        }
        PyObject *kw = Py_BuildValue("{s:O}", "type", type);
        int rc =
            kw != NULL ? pbfpy_fields_set(&c, pbfpy_collider_fields, "add_collider", kw, NULL) : -1;
        Py_XDECREF(kw);
        if (rc < 0) return NULL;
    }
    if (pbfpy_fields_set(&c, pbfpy_collider_fields, "add_collider", kwargs, NULL) < 0) return NULL;
    pbf_status st = pbf_world_add_collider(w, &c);
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_error(w));
    Py_RETURN_NONE;
}

PyObject *pbfpy_world_colliders(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    int n = pbf_world_collider_count(w);
    PyObject *list = PyList_New(n);
    for (int i = 0; list != NULL && i < n; ++i) {
        pbf_collider_def c = pbf_world_get_collider(w, i);
        PyObject *d = pbfpy_fields_dict(&c, pbfpy_collider_fields);
        if (d == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, d);
    }
    return list;
}

/* ---- the tool ------------------------------------------------------------------------------- */

/* keys: a sequence of (time, (x, y, z)) pairs or {"time": t, "position": (x, y, z)} dicts. */
static int keys_from(PyObject *obj, pbf_tool_def *tool) {
    PyObject *seq = PySequence_Fast(obj, "set_tool: 'keys' expects a list of (time, (x, y, z))");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > PBF_TOOL_MAX_KEYS) {
        PyErr_Format(PyExc_ValueError, "set_tool: 'keys' holds at most %d keys, got %zd",
                     PBF_TOOL_MAX_KEYS, n);
        Py_DECREF(seq);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i), *t = NULL, *p = NULL;
        if (PyDict_Check(item)) {
            t = PyDict_GetItemString(item, "time");
            p = PyDict_GetItemString(item, "position");
        } else if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 2) {
            t = PyTuple_GET_ITEM(item, 0);
            p = PyTuple_GET_ITEM(item, 1);
        }
        double time = t != NULL ? PyFloat_AsDouble(t) : -1.0;
        if (t == NULL || p == NULL || (time == -1.0 && PyErr_Occurred())) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "set_tool: keys[%zd] expects (time, (x, y, z)) or {'time': t, "
                         "'position': (x, y, z)}, got %R",
                         i, item);
            Py_DECREF(seq);
            return -1;
        }
        char what[64];
        snprintf(what, sizeof what, "set_tool: keys[%zd] position", i);
        tool->keys[i].time = (float)time;
        if (pbfpy_vec3_from(p, &tool->keys[i].position, what) < 0) {
            Py_DECREF(seq);
            return -1;
        }
    }
    tool->key_count = (int)n;
    Py_DECREF(seq);
    return 0;
}

PyObject *pbfpy_world_set_tool(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    static const char *const special[] = {"keys", NULL};
    if (no_positional(args, "set_tool") < 0) return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_tool_def tool = pbf_default_tool_def();
    if (pbfpy_fields_set(&tool, pbfpy_tool_fields, "set_tool", kwargs, special) < 0) return NULL;
    PyObject *keys = kwargs != NULL ? PyDict_GetItemString(kwargs, "keys") : NULL;
    if (keys != NULL && keys_from(keys, &tool) < 0) return NULL;
    pbf_status st = pbf_world_set_tool(w, &tool);
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_error(w));
    Py_RETURN_NONE;
}

PyObject *pbfpy_world_remove_tool(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_status st = pbf_world_set_tool(w, NULL);
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_error(w));
    Py_RETURN_NONE;
}

PyObject *pbfpy_world_get_has_tool(pbfpy_world *self, void *closure) {
    (void)closure;
    pbf_world *w = pbfpy_world_ready(self);
    return w != NULL ? PyBool_FromLong(pbf_world_has_tool(w)) : NULL;
}

PyObject *pbfpy_world_tool_settings(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    const pbf_tool_def *tool = pbf_world_get_tool_def(w);
    if (tool == NULL) Py_RETURN_NONE;
    PyObject *d = pbfpy_fields_dict(tool, pbfpy_tool_fields);
    PyObject *keys = d != NULL ? PyList_New(tool->key_count) : NULL;
    for (int i = 0; keys != NULL && i < tool->key_count; ++i) {
        PyObject *k = Py_BuildValue("{s:d,s:N}", "time", (double)tool->keys[i].time, "position",
                                    pbfpy_vec3_tuple(tool->keys[i].position));
        if (k == NULL)
            Py_CLEAR(keys);
        else
            PyList_SET_ITEM(keys, i, k);
    }
    if (keys == NULL || pbfpy_dict_set(d, "keys", keys) < 0) Py_CLEAR(d);
    Py_XDECREF(keys);
    return d;
}

PyObject *pbfpy_world_set_tool_pose(pbfpy_world *self, PyObject *position) {
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_vec3 p;
    if (pbfpy_vec3_from(position, &p, "set_tool_pose: position") < 0) return NULL;
    pbf_status st = pbf_tool_set_pose(w, p);
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_error(w));
    Py_RETURN_NONE;
}

PyObject *pbfpy_world_tool_state(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    if (!pbf_world_has_tool(w))
        return pbfpy_raise(PBF_ERR_INVALID_ARG,
                           "tool_state: the world has no tool (set_tool, or a scene with a "
                           "\"tool\" section)");
    pbf_tool_state s = pbf_tool_get_state(w);
    return pbfpy_tool_state(&s);
}

/* ---- probes --------------------------------------------------------------------------------- */

PyObject *pbfpy_world_set_probes(pbfpy_world *self, PyObject *probes) {
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    PyObject *seq = PySequence_Fast(probes, "set_probes expects a list of dicts");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n > PBF_MAX_PROBES) {
        PyErr_Format(PyExc_ValueError, "set_probes: at most %d probes, got %zd", PBF_MAX_PROBES, n);
        Py_DECREF(seq);
        return NULL;
    }
    pbf_probe_def defs[PBF_MAX_PROBES];
    for (Py_ssize_t i = 0; i < n; ++i) {
        char what[32];
        snprintf(what, sizeof what, "set_probes[%zd]", i);
        defs[i] = pbf_default_probe_def();
        if (pbfpy_fields_set(&defs[i], pbfpy_probe_fields, what, PySequence_Fast_GET_ITEM(seq, i),
                             NULL) < 0) {
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    pbf_status st = pbf_world_set_probes(w, defs, (int)n);
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_error(w));
    Py_RETURN_NONE;
}

PyObject *pbfpy_world_probes(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    int n = pbf_world_probe_count(w);
    const pbf_probe_def *defs = pbf_world_get_probes(w);
    PyObject *list = PyList_New(n);
    for (int i = 0; list != NULL && i < n; ++i) {
        PyObject *d = pbfpy_fields_dict(&defs[i], pbfpy_probe_fields);
        if (d == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, d);
    }
    return list;
}

PyObject *pbfpy_world_sample_probes(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    int n = pbf_world_probe_count(w);
    const pbf_probe_def *defs = pbf_world_get_probes(w);
    pbf_probe_sample samples[PBF_MAX_PROBES];
    pbf_status st = n > 0 ? pbf_world_sample_probes(w, samples) : PBF_OK;
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_error(w));
    PyObject *d = PyDict_New();
    for (int i = 0; d != NULL && i < n; ++i) {
        PyObject *s = pbfpy_probe_sample(&samples[i]);
        if (s == NULL || pbfpy_dict_set(d, defs[i].name, s) < 0) Py_CLEAR(d);
        Py_XDECREF(s);
    }
    return d;
}
