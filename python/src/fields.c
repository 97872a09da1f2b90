/* Def structs <-> Python: keyword arguments and dicts by field tables, vectors, numpy arrays.
 * The tables name each field as the C struct does (docs/python.md); the ranges stay the
 * library's to check, so its messages (naming the field and the range) reach the user. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "def_fields.h"
#include "pbfpy.h"

/* ---- names of enum values, indexed by the value ------------------------------------------- */

const char *const pbfpy_backend_names[] = {"cpu", "cuda", NULL};
const char *const pbfpy_neighbor_names[] = {"list", "cells", NULL};
const char *const pbfpy_direction_names[] = {"+x", "-x", "+y", "-y", "+z", "-z", NULL};
static const char *const collider_names[] = {"sphere", "box", "capsule", NULL};
static const char *const motion_names[] = {"kinematic", "free", NULL};
static const char *const interpolation_names[] = {"linear", "smooth", NULL};
static const char *const probe_names[] = {"height", "front", "force", "level", NULL};
static const char *const kernel_names[] = {"paper", "wendland", NULL};
static const char *const step_weight_names[] = {"plain", "chebyshev", NULL};

/* ---- tables ------------------------------------------------------------------------------- */

#define F(s, name, type)                                                                           \
    { #name, type, offsetof(s, name), NULL, 0 }
#define E(s, name, names)                                                                          \
    { #name, PBFPY_ENUM, offsetof(s, name), names, 0 }

const pbfpy_field pbfpy_solver_fields[] = {
    F(pbf_solver_def, iterations, PBFPY_INT),
    F(pbf_solver_def, relaxation, PBFPY_FLOAT),
    F(pbf_solver_def, unilateral, PBFPY_BOOL),
    F(pbf_solver_def, scorr_k, PBFPY_FLOAT),
    F(pbf_solver_def, scorr_ratio, PBFPY_FLOAT),
    F(pbf_solver_def, scorr_n, PBFPY_INT),
    F(pbf_solver_def, scorr_dq, PBFPY_FLOAT),
    F(pbf_solver_def, scorr_reach, PBFPY_FLOAT),
    F(pbf_solver_def, scorr_deficit, PBFPY_FLOAT),
    F(pbf_solver_def, scorr_iterations, PBFPY_INT),
    F(pbf_solver_def, vorticity, PBFPY_FLOAT),
    F(pbf_solver_def, xsph, PBFPY_FLOAT),
    F(pbf_solver_def, cfl, PBFPY_FLOAT),
    F(pbf_solver_def, target_error, PBFPY_FLOAT),
    F(pbf_solver_def, min_iterations, PBFPY_INT),
    F(pbf_solver_def, max_iterations, PBFPY_INT),
    F(pbf_solver_def, chebyshev, PBFPY_BOOL),
    F(pbf_solver_def, chebyshev_rho, PBFPY_FLOAT),
    F(pbf_solver_def, chebyshev_gamma, PBFPY_FLOAT),
    F(pbf_solver_def, chebyshev_delay, PBFPY_INT),
    F(pbf_solver_def, impulse_blend, PBFPY_FLOAT),
    E(pbf_solver_def, step_weights, step_weight_names),
    PBFPY_END,
};

/* pbf_material_def: the fluid's surface tension, viscosity and surface drag. */
static const pbfpy_field material_fields[] = {
    F(pbf_material_def, surface_tension, PBFPY_FLOAT),
    F(pbf_material_def, viscosity, PBFPY_FLOAT),
    F(pbf_material_def, viscosity_iterations, PBFPY_INT),
    F(pbf_material_def, viscosity_tolerance, PBFPY_FLOAT),
    F(pbf_material_def, surface_drag, PBFPY_FLOAT),
    PBFPY_END,
};

/* pbf_phase_def: one fluid of several. */
static const pbfpy_field phase_fields[] = {
    F(pbf_phase_def, density, PBFPY_FLOAT),
    F(pbf_phase_def, xsph, PBFPY_FLOAT),
    F(pbf_phase_def, gravity_scale, PBFPY_FLOAT),
    PBFPY_END,
};

/* The flat fields of pbf_world_def; `solver`, `wall_motion`, `material` and `phases` are added
 * by World.settings(). */
const pbfpy_field pbfpy_world_fields[] = {
    F(pbf_world_def, particle_radius, PBFPY_FLOAT),
    F(pbf_world_def, kernel_scale, PBFPY_FLOAT),
    E(pbf_world_def, kernel, kernel_names),
    F(pbf_world_def, kernel_core, PBFPY_FLOAT),
    F(pbf_world_def, rest_density, PBFPY_FLOAT),
    F(pbf_world_def, gravity, PBFPY_VEC3),
    F(pbf_world_def, domain_min, PBFPY_VEC3),
    F(pbf_world_def, domain_max, PBFPY_VEC3),
    F(pbf_world_def, substeps, PBFPY_INT),
    E(pbf_world_def, neighbor_mode, pbfpy_neighbor_names),
    E(pbf_world_def, backend, pbfpy_backend_names),
    F(pbf_world_def, threads, PBFPY_INT),
    F(pbf_world_def, wall_adhesion, PBFPY_FLOAT),
    F(pbf_world_def, wall_friction, PBFPY_FLOAT),
    F(pbf_world_def, wall_no_slip, PBFPY_BOOL),
    F(pbf_world_def, wall_clearance, PBFPY_FLOAT),
    PBFPY_END,
};

/* Every member of pbf_world_def is a row of src/core/def_fields.h; each reaches Python in one
 * of the tables above, or by hand in pbfpy_world_def_dict (wall_motion, phase_count as the length
 * of phases, phases). The tables are written out rather than made from the rows: their order is
 * the Python API's (the dicts of settings(), the keys listed in messages), not the checkpoint's
 * that the rows follow (scorr_ratio and kernel came late), and a row's kind does not say the
 * Python type (an I32 with EITHER(0, 1) is a bool for unilateral, an enum with its names for
 * step_weights). So the rows are counted: a new one fails the build here until it has its
 * field (or is named as one added by hand). */
#define DEF_IN(sub, member)                                                                        \
    (offsetof(pbf_world_def, member) >= offsetof(pbf_world_def, sub) &&                            \
     offsetof(pbf_world_def, member) <                                                             \
         offsetof(pbf_world_def, sub) + sizeof(((pbf_world_def *)0)->sub))
#define DEF_BY_HAND(member)                                                                        \
    (offsetof(pbf_world_def, member) == offsetof(pbf_world_def, wall_motion) ||                    \
     offsetof(pbf_world_def, member) == offsetof(pbf_world_def, phase_count) ||                    \
     offsetof(pbf_world_def, member) == offsetof(pbf_world_def, phases))
#define DEF_SOLVER_ROW(kind, member, since, old, dflt, range, expected) +DEF_IN(solver, member)
#define DEF_MATERIAL_ROW(kind, member, since, old, dflt, range, expected) +DEF_IN(material, member)
#define DEF_FLAT_ROW(kind, member, since, old, dflt, range, expected)                              \
    +(!DEF_IN(solver, member) && !DEF_IN(material, member) && !DEF_BY_HAND(member))
#define FIELD_COUNT(table) (sizeof(table) / sizeof((table)[0]) - 1) /* less PBFPY_END */
_Static_assert(FIELD_COUNT(pbfpy_solver_fields) == 0 PBF_DEF_FIELDS(DEF_SOLVER_ROW),
               "pbfpy_solver_fields: one field per solver.* row of src/core/def_fields.h");
_Static_assert(FIELD_COUNT(material_fields) == 0 PBF_DEF_FIELDS(DEF_MATERIAL_ROW),
               "material_fields: one field per material.* row of src/core/def_fields.h");
_Static_assert(FIELD_COUNT(pbfpy_world_fields) == 0 PBF_DEF_FIELDS(DEF_FLAT_ROW),
               "pbfpy_world_fields: one field per row of src/core/def_fields.h outside solver and "
               "material, but for those pbfpy_world_def_dict adds by hand");

const pbfpy_field pbfpy_block_fields[] = {
    F(pbf_block_def, min, PBFPY_VEC3),      F(pbf_block_def, max, PBFPY_VEC3),
    F(pbf_block_def, velocity, PBFPY_VEC3), F(pbf_block_def, jitter, PBFPY_FLOAT),
    F(pbf_block_def, seed, PBFPY_UINT32),   PBFPY_END,
};

const pbfpy_field pbfpy_collider_fields[] = {
    E(pbf_collider_def, type, collider_names),
    F(pbf_collider_def, center, PBFPY_VEC3),
    F(pbf_collider_def, half_extents, PBFPY_VEC3),
    F(pbf_collider_def, radius, PBFPY_FLOAT),
    F(pbf_collider_def, a, PBFPY_VEC3),
    F(pbf_collider_def, b, PBFPY_VEC3),
    F(pbf_collider_def, adhesion, PBFPY_FLOAT),
    F(pbf_collider_def, friction, PBFPY_FLOAT),
    PBFPY_END,
};

/* The path's keys (key_count, keys[]) are converted by world_parts.c. */
const pbfpy_field pbfpy_tool_fields[] = {
    F(pbf_tool_def, radius, PBFPY_FLOAT),
    F(pbf_tool_def, position, PBFPY_VEC3),
    F(pbf_tool_def, velocity, PBFPY_VEC3),
    E(pbf_tool_def, motion, motion_names),
    F(pbf_tool_def, mass, PBFPY_FLOAT),
    F(pbf_tool_def, added_mass, PBFPY_FLOAT),
    F(pbf_tool_def, adhesion_k_tool, PBFPY_FLOAT),
    F(pbf_tool_def, adhesion_k_fluid, PBFPY_FLOAT),
    F(pbf_tool_def, adhesion_a, PBFPY_FLOAT),
    F(pbf_tool_def, adhesion_b, PBFPY_FLOAT),
    F(pbf_tool_def, damping, PBFPY_FLOAT),
    E(pbf_tool_def, interpolation, interpolation_names),
    PBFPY_END,
};

const pbfpy_field pbfpy_probe_fields[] = {
    E(pbf_probe_def, type, probe_names),
    {"name", PBFPY_NAME, offsetof(pbf_probe_def, name), NULL, PBF_PROBE_NAME_SIZE},
    F(pbf_probe_def, position, PBFPY_VEC3),
    F(pbf_probe_def, radius, PBFPY_FLOAT),
    F(pbf_probe_def, max_gap, PBFPY_FLOAT),
    E(pbf_probe_def, direction, pbfpy_direction_names),
    F(pbf_probe_def, min_particles, PBFPY_INT),
    F(pbf_probe_def, size, PBFPY_VEC3),
    F(pbf_probe_def, fraction, PBFPY_FLOAT),
    PBFPY_END,
};

/* ---- scalars, vectors, enums ---------------------------------------------------------------- */

int pbfpy_enum_value(PyObject *name, const char *const *names, const char *what) {
    if (PyUnicode_Check(name)) {
        const char *s = PyUnicode_AsUTF8(name);
        if (s == NULL) return -1;
        for (int i = 0; names[i] != NULL; ++i)
            if (strcmp(s, names[i]) == 0) return i;
    }
    PyObject *choices = PyUnicode_FromString("");
    for (int i = 0; choices != NULL && names[i] != NULL; ++i) {
        PyObject *next = PyUnicode_FromFormat("%U%s'%s'", choices, i ? ", " : "", names[i]);
        Py_SETREF(choices, next);
    }
    if (choices != NULL) {
        PyErr_Format(PyExc_ValueError, "%s expects one of %U, got %R", what, choices, name);
        Py_DECREF(choices);
    }
    return -1;
}

static int float_from(PyObject *obj, double *out, const char *what) {
    if (PyUnicode_Check(obj) || PyBytes_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s expects a number, got %R", what, obj);
        return -1;
    }
    double v = PyFloat_AsDouble(obj);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s expects a number, got %s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = v;
    return 0;
}

static int floats_from(PyObject *obj, float *out, int n, const char *what) {
    PyObject *seq =
        PySequence_Check(obj) && !PyUnicode_Check(obj) ? PySequence_Fast(obj, "") : NULL;
    if (seq == NULL || PySequence_Fast_GET_SIZE(seq) != n) {
        Py_XDECREF(seq);
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s expects %d numbers (x, y, z), got %R", what, n, obj);
        return -1;
    }
    for (int k = 0; k < n; ++k) {
        double v;
        if (float_from(PySequence_Fast_GET_ITEM(seq, k), &v, what) < 0) {
            Py_DECREF(seq);
            return -1;
        }
        out[k] = (float)v;
    }
    Py_DECREF(seq);
    return 0;
}

int pbfpy_vec3_from(PyObject *obj, pbf_vec3 *out, const char *what) {
    float v[3];
    if (floats_from(obj, v, 3, what) < 0) return -1;
    out->x = v[0];
    out->y = v[1];
    out->z = v[2];
    return 0;
}

PyObject *pbfpy_vec3_tuple(pbf_vec3 v) {
    return Py_BuildValue("(ddd)", (double)v.x, (double)v.y, (double)v.z);
}

static int int_from(PyObject *obj, long long lo, long long hi, long long *out, const char *what) {
    PyObject *index = PyNumber_Index(obj);
    if (index == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s expects an integer, got %R", what, obj);
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(index, &overflow);
    Py_DECREF(index);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow != 0 || v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "%s expects an integer in [%lld, %lld], got %R", what, lo,
                     hi, obj);
        return -1;
    }
    *out = v;
    return 0;
}

/* ---- one field ------------------------------------------------------------------------------ */

static int set_field(void *base, const pbfpy_field *f, PyObject *value, const char *what) {
    char label[160];
    snprintf(label, sizeof label, "%s: '%s'", what, f->name);
    char *p = (char *)base + f->offset;
    double d;
    long long i;
    switch (f->type) {
    case PBFPY_FLOAT:
        if (float_from(value, &d, label) < 0) return -1;
        *(float *)p = (float)d;
        return 0;
    case PBFPY_INT:
        if (int_from(value, INT32_MIN, INT32_MAX, &i, label) < 0) return -1;
        *(int *)p = (int)i;
        return 0;
    case PBFPY_UINT32:
        if (int_from(value, 0, UINT32_MAX, &i, label) < 0) return -1;
        *(uint32_t *)p = (uint32_t)i;
        return 0;
    case PBFPY_BOOL: {
        int truth = PyObject_IsTrue(value);
        if (truth < 0) return -1;
        *(int *)p = truth;
        return 0;
    }
    case PBFPY_VEC3: return pbfpy_vec3_from(value, (pbf_vec3 *)(void *)p, label);
    case PBFPY_RGB: return floats_from(value, (float *)(void *)p, 3, label);
    case PBFPY_ENUM: {
        int e = pbfpy_enum_value(value, f->names, label);
        if (e < 0) return -1;
        *(int *)p = e;
        return 0;
    }
    case PBFPY_NAME: {
        Py_ssize_t n = 0;
        const char *s = PyUnicode_Check(value) ? PyUnicode_AsUTF8AndSize(value, &n) : NULL;
        if (s == NULL) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s expects a string, got %R", label, value);
            return -1;
        }
        if ((size_t)n >= f->size) {
            PyErr_Format(PyExc_ValueError, "%s expects at most %zu characters, got %R", label,
                         f->size - 1, value);
            return -1;
        }
        memcpy(p, s, (size_t)n + 1);
        return 0;
    }
    }
    return 0;
}

static PyObject *get_field(const void *base, const pbfpy_field *f) {
    const char *p = (const char *)base + f->offset;
    switch (f->type) {
    case PBFPY_FLOAT: return PyFloat_FromDouble((double)*(const float *)(const void *)p);
    case PBFPY_INT: return PyLong_FromLong(*(const int *)(const void *)p);
    case PBFPY_UINT32: return PyLong_FromUnsignedLong(*(const uint32_t *)(const void *)p);
    case PBFPY_BOOL: return PyBool_FromLong(*(const int *)(const void *)p);
    case PBFPY_VEC3: return pbfpy_vec3_tuple(*(const pbf_vec3 *)(const void *)p);
    case PBFPY_RGB: {
        const float *c = (const float *)(const void *)p;
        return Py_BuildValue("(ddd)", (double)c[0], (double)c[1], (double)c[2]);
    }
    case PBFPY_ENUM: {
        int e = *(const int *)(const void *)p, n = 0;
        while (f->names[n] != NULL) ++n;
        if (e >= 0 && e < n) return PyUnicode_FromString(f->names[e]);
        return PyLong_FromLong(e);
    }
    case PBFPY_NAME: return PyUnicode_FromString(p);
    }
    Py_RETURN_NONE;
}

/* ---- dicts -------------------------------------------------------------------------------- */

int pbfpy_dict_set(PyObject *dict, const char *key, PyObject *value) {
    PyObject *k = PyUnicode_FromString(key);
    int rc = k != NULL ? PyDict_SetItem(dict, k, value) : -1;
    Py_XDECREF(k);
    return rc;
}

/* ---- whole structs -------------------------------------------------------------------------- */

static int skipped(const char *key, const char *const *skip) {
    for (int i = 0; skip != NULL && skip[i] != NULL; ++i)
        if (strcmp(key, skip[i]) == 0) return 1;
    return 0;
}

static PyObject *field_names(const pbfpy_field *fields, const char *const *skip) {
    PyObject *names = PyUnicode_FromString("");
    for (int i = 0; names != NULL && fields[i].name != NULL; ++i)
        Py_SETREF(names, PyUnicode_FromFormat("%U%s%s", names, i ? ", " : "", fields[i].name));
    for (int i = 0; names != NULL && skip != NULL && skip[i] != NULL; ++i)
        Py_SETREF(names, PyUnicode_FromFormat("%U, %s", names, skip[i]));
    return names;
}

int pbfpy_fields_set(void *base, const pbfpy_field *fields, const char *what, PyObject *kwargs,
                     const char *const *skip) {
    if (kwargs == NULL) return 0;
    if (!PyDict_Check(kwargs)) {
        PyErr_Format(PyExc_TypeError, "%s expects a dict, got %s", what, Py_TYPE(kwargs)->tp_name);
        return -1;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
        const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (name == NULL) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "%s: keys must be strings, got %R", what, key);
            return -1;
        }
        if (skipped(name, skip)) continue;
        const pbfpy_field *f = fields;
        while (f->name != NULL && strcmp(f->name, name) != 0) ++f;
        if (f->name == NULL) {
            PyObject *names = field_names(fields, skip);
            if (names != NULL)
                PyErr_Format(PyExc_TypeError, "%s: unknown key '%s'; the keys are: %U", what, name,
                             names);
            Py_XDECREF(names);
            return -1;
        }
        if (set_field(base, f, value, what) < 0) return -1;
    }
    return 0;
}

PyObject *pbfpy_fields_dict(const void *base, const pbfpy_field *fields) {
    PyObject *d = PyDict_New();
    for (int i = 0; d != NULL && fields[i].name != NULL; ++i) {
        PyObject *v = get_field(base, &fields[i]);
        if (v == NULL || pbfpy_dict_set(d, fields[i].name, v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

/* ---- numpy arrays --------------------------------------------------------------------------- */

PyObject *pbfpy_new_array(int type_num, int rows, int cols) {
    npy_intp dims[2] = {rows, cols};
    return PyArray_SimpleNew(cols > 0 ? 2 : 1, dims, type_num);
}

PyObject *pbfpy_out_array(PyObject *out, int type_num, int rows, int cols, const char *what) {
    if (out == NULL || out == Py_None) return pbfpy_new_array(type_num, rows, cols);
    int ndim = cols > 0 ? 2 : 1;
    PyArrayObject *a = PyArray_Check(out) ? (PyArrayObject *)out : NULL;
    if (a == NULL || PyArray_TYPE(a) != type_num || PyArray_NDIM(a) != ndim ||
        PyArray_DIM(a, 0) != rows || (ndim == 2 && PyArray_DIM(a, 1) != cols) ||
        !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISWRITEABLE(a)) {
        PyArray_Descr *descr = PyArray_DescrFromType(type_num);
        if (ndim == 2)
            PyErr_Format(PyExc_ValueError,
                         "%s: out must be a writeable C-contiguous numpy array of dtype %S and "
                         "shape (%d, %d)",
                         what, (PyObject *)descr, rows, cols);
        else
            PyErr_Format(PyExc_ValueError,
                         "%s: out must be a writeable C-contiguous numpy array of dtype %S and "
                         "shape (%d,)",
                         what, (PyObject *)descr, rows);
        Py_XDECREF(descr);
        return NULL;
    }
    Py_INCREF(out);
    return out;
}

PyArrayObject *pbfpy_in_array(PyObject *obj, int type_num, int cols, const char *what) {
    PyArrayObject *a =
        (PyArrayObject *)PyArray_FROM_OTF(obj, type_num, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    if (a == NULL) return NULL;
    int ndim = cols > 0 ? 2 : 1;
    if (PyArray_NDIM(a) != ndim || (ndim == 2 && PyArray_DIM(a, 1) != cols) ||
        PyArray_DIM(a, 0) > INT32_MAX) {
        PyObject *shape = PyObject_GetAttrString((PyObject *)a, "shape");
        if (shape != NULL) {
            if (ndim == 2)
                PyErr_Format(PyExc_ValueError, "%s expects an array of shape (N, %d), got shape %R",
                             what, cols, shape);
            else
                PyErr_Format(PyExc_ValueError, "%s expects an array of shape (N,), got shape %R",
                             what, shape);
            Py_DECREF(shape);
        }
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* ---- the world def -------------------------------------------------------------------------- */

static const char *const wall_names[PBF_WALL_COUNT] = {"x_min", "x_max", "y_min",
                                                       "y_max", "z_min", "z_max"};

PyObject *pbfpy_world_def_dict(const pbf_world_def *def) {
    PyObject *d = pbfpy_fields_dict(def, pbfpy_world_fields);
    PyObject *solver = d != NULL ? pbfpy_fields_dict(&def->solver, pbfpy_solver_fields) : NULL;
    PyObject *walls = solver != NULL ? PyDict_New() : NULL;
    for (int k = 0; walls != NULL && k < PBF_WALL_COUNT; ++k) {
        const pbf_wall_motion *m = &def->wall_motion[k];
        PyObject *w = Py_BuildValue("{s:d,s:d,s:d}", "amplitude", (double)m->amplitude, "period",
                                    (double)m->period, "phase", (double)m->phase);
        if (w == NULL || pbfpy_dict_set(walls, wall_names[k], w) < 0) Py_CLEAR(walls);
        Py_XDECREF(w);
    }
    PyObject *material = walls != NULL ? pbfpy_fields_dict(&def->material, material_fields) : NULL;
    PyObject *phases = material != NULL ? PyList_New(0) : NULL;
    for (int k = 0; phases != NULL && k < def->phase_count && k < PBF_MAX_PHASES; ++k) {
        PyObject *ph = pbfpy_fields_dict(&def->phases[k], phase_fields);
        if (ph == NULL || PyList_Append(phases, ph) < 0) Py_CLEAR(phases);
        Py_XDECREF(ph);
    }
    if (phases == NULL || pbfpy_dict_set(d, "solver", solver) < 0 ||
        pbfpy_dict_set(d, "wall_motion", walls) < 0 ||
        pbfpy_dict_set(d, "material", material) < 0 || pbfpy_dict_set(d, "phases", phases) < 0)
        Py_CLEAR(d);
    Py_XDECREF(solver);
    Py_XDECREF(walls);
    Py_XDECREF(material);
    Py_XDECREF(phases);
    return d;
}
