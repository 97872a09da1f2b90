/* pbf.World: a simulation world (include/pbf/pbf.h). Creation, stepping with the GIL released,
 * read-back into numpy arrays in stable id order, profile, statistics, files. Blocks, colliders,
 * the tool and probes are in world_parts.c.
 *
 * Threads: a method that releases the GIL (step, export, save_checkpoint, Renderer.render)
 * marks the world busy; any other call on it from another thread meanwhile raises RuntimeError
 * instead of racing the library. */
#include <stdlib.h>
#include <string.h>

#include "pbfpy.h"

/* ---- life ----------------------------------------------------------------------------------- */

static void world_free(pbfpy_world *self) {
    pbf_world *w = self->world;
    self->world = NULL;
    pbf_world_destroy(w);
}

/* threads/backend given to World(): copied into def; 0 when both are None. */
static int apply_overrides(pbf_world_def *def, PyObject *threads, PyObject *backend) {
    if (threads != NULL && threads != Py_None) {
        PyObject *kw = Py_BuildValue("{s:O}", "threads", threads);
        int rc = kw != NULL ? pbfpy_fields_set(def, pbfpy_world_fields, "World", kw, NULL) : -1;
        Py_XDECREF(kw);
        if (rc < 0) return -1;
    }
    if (backend != NULL && backend != Py_None) {
        int b = pbfpy_enum_value(backend, pbfpy_backend_names, "World: 'backend'");
        if (b < 0) return -1;
        def->backend = (pbf_backend)b;
    }
    return 0;
}

static int world_init(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"source", "fill", "threads", "backend", NULL};
    PyObject *source = Py_None, *threads = Py_None, *backend = Py_None;
    int fill = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$pOO:World", kwlist, &source, &fill, &threads,
                                     &backend))
        return -1;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "World.__init__: the world is busy in another thread");
        return -1;
    }
    world_free(self);
    char err[PBF_ERROR_SIZE];
    pbf_status st = PBF_OK;
    pbf_world *w = NULL;
    if (PyObject_TypeCheck(source, &pbfpy_scene_type)) {
        /* a copy, so that the scene object stays as loaded */
        pbf_scene *scene = malloc(sizeof *scene);
        if (scene == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *scene = *((pbfpy_scene *)source)->scene;
        if (apply_overrides(&scene->world, threads, backend) < 0) {
            free(scene);
            return -1;
        }
        Py_BEGIN_ALLOW_THREADS
        if (fill) {
            st = pbf_scene_create_world(scene, &w, err, sizeof err);
        } else {
            st = pbf_world_create(&scene->world, &w, err, sizeof err);
        }
        Py_END_ALLOW_THREADS
        free(scene);
    } else if (PyObject_TypeCheck(source, &pbfpy_checkpoint_type)) {
        const pbf_checkpoint *ck = pbfpy_checkpoint_get((pbfpy_checkpoint *)source);
        if (ck == NULL) return -1;
        pbf_world_def def = *pbf_checkpoint_def(ck);
        if (apply_overrides(&def, threads, backend) < 0) return -1;
        Py_BEGIN_ALLOW_THREADS
        st = pbf_checkpoint_create_world(ck, &def, &w, err, sizeof err);
        Py_END_ALLOW_THREADS
    } else if (source == Py_None) {
        pbf_world_def def = pbf_default_world_def();
        if (apply_overrides(&def, threads, backend) < 0) return -1;
        st = pbf_world_create(&def, &w, err, sizeof err);
    } else {
        PyErr_Format(PyExc_TypeError, "World expects a pbf.Scene, a pbf.Checkpoint or None, got %s",
                     Py_TYPE(source)->tp_name);
        return -1;
    }
    if (st != PBF_OK) return pbfpy_raise_int(st, err);
    self->world = w;
    return 0;
}

static void world_dealloc(pbfpy_world *self) {
    world_free(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *world_close(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "World.close: the world is busy in another thread");
        return NULL;
    }
    world_free(self);
    Py_RETURN_NONE;
}

static PyObject *world_exit(pbfpy_world *self, PyObject *args) {
    (void)args;
    return world_close(self, NULL);
}

/* ---- stepping ------------------------------------------------------------------------------- */

/* pbf_world_step and pbf_world_error for pbfpy_run_steps */
static pbf_status step_world(void *w, float dt) { return pbf_world_step(w, dt); }
static const char *world_error(const void *w) { return pbf_world_error(w); }

static PyObject *world_step(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"dt", "steps", NULL};
    float dt = 0.0f;
    int steps = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "f|i:step", kwlist, &dt, &steps)) return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    return pbfpy_run_steps(w, &self->busy, dt, steps, step_world, world_error);
}

/* ---- read-back ------------------------------------------------------------------------------ */

typedef void (*readback_fn)(const pbf_world *, float *);

static PyObject *read_floats(pbfpy_world *self, PyObject *args, PyObject *kwargs, int cols,
                             readback_fn fn, const char *what) {
    static char *kwlist[] = {"out", NULL};
    PyObject *out = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O", kwlist, &out)) return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    PyObject *a = pbfpy_out_array(out, NPY_FLOAT32, pbf_world_particle_count(w), cols, what);
    if (a != NULL) fn(w, (float *)PyArray_DATA((PyArrayObject *)a));
    return a;
}

static PyObject *world_positions(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    return read_floats(self, args, kwargs, 3, pbf_world_get_positions, "positions");
}

static PyObject *world_velocities(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    return read_floats(self, args, kwargs, 3, pbf_world_get_velocities, "velocities");
}

static PyObject *world_densities(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    return read_floats(self, args, kwargs, 0, pbf_world_get_densities, "densities");
}

static PyObject *world_ids(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"out", NULL};
    PyObject *out = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:ids", kwlist, &out)) return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    PyObject *a = pbfpy_out_array(out, NPY_INT32, pbf_world_particle_count(w), 0, "ids");
    if (a == NULL) return NULL;
    /* row k of every read-back is the particle of the k-th smallest id (gaps after a sink) */
    pbf_world_get_ids(w, PyArray_DATA((PyArrayObject *)a));
    return a;
}

/* ---- every exported array, by name (fields.h: PBF_EXPORTED_FIELDS) ---------------------- */

static int array_dtype(pbf_value_type type) {
    return type == PBF_VALUE_FLOAT32 ? NPY_FLOAT32
           : type == PBF_VALUE_INT32 ? NPY_INT32
                                     : NPY_UINT8;
}

/* Array `info` of w's particles into out (None: a new array). */
static PyObject *read_array(pbf_world *w, const pbf_particle_array_info *info, PyObject *out) {
    const int cols = info->components > 1 ? info->components : 0;
    PyObject *a = pbfpy_out_array(out, array_dtype(info->type), pbf_world_particle_count(w), cols,
                                  info->name);
    if (a == NULL) return NULL;
    char err[PBF_ERROR_SIZE];
    pbf_status st =
        pbf_world_get_array(w, info->name, PyArray_DATA((PyArrayObject *)a), err, sizeof err);
    if (st != PBF_OK) {
        Py_DECREF(a);
        return pbfpy_raise(st, err);
    }
    return a;
}

static PyObject *world_array(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"name", "out", NULL};
    const char *name = NULL;
    PyObject *out = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|O:array", kwlist, &name, &out)) return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    for (int i = 0; i < pbf_particle_array_count(); ++i) {
        const pbf_particle_array_info *info = pbf_particle_array_at(i);
        if (strcmp(info->name, name) == 0) return read_array(w, info, out);
    }
    char err[PBF_ERROR_SIZE]; /* the library's message, which lists the names */
    pbf_status st = pbf_world_get_array(w, name, NULL, err, sizeof err);
    return pbfpy_raise(st, err);
}

static PyObject *world_arrays(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    PyObject *d = PyDict_New();
    for (int i = 0; d != NULL && i < pbf_particle_array_count(); ++i) {
        const pbf_particle_array_info *info = pbf_particle_array_at(i);
        PyObject *a = read_array(w, info, NULL);
        if (a == NULL || PyDict_SetItemString(d, info->name, a) < 0) Py_CLEAR(d);
        Py_XDECREF(a);
    }
    return d;
}

static PyObject *world_particles(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_particles p;
    memset(&p, 0, sizeof p);
    char err[PBF_ERROR_SIZE];
    pbf_status st = pbf_particles_from_world(w, &p, err, sizeof err);
    if (st != PBF_OK) return pbfpy_raise(st, err);
    PyObject *r = pbfpy_particles(&p);
    pbf_particles_free(&p);
    return r;
}

/* ---- profile, statistics, settings ---------------------------------------------------------- */

static PyObject *world_profile(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_profile p = pbf_world_get_profile(w);
    return pbfpy_profile(&p);
}

static PyObject *world_stats(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_stats s = pbf_world_get_stats(w);
    return pbfpy_stats(&s);
}

static PyObject *world_iteration_errors(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    int n = pbf_world_get_iteration_errors(w, NULL, 0);
    PyObject *a = pbfpy_new_array(NPY_FLOAT32, n, 0);
    if (a != NULL && n > 0)
        pbf_world_get_iteration_errors(w, (float *)PyArray_DATA((PyArrayObject *)a), n);
    return a;
}

static PyObject *world_hash(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    return w != NULL ? PyLong_FromUnsignedLongLong(pbf_world_hash(w)) : NULL;
}

static PyObject *world_settings(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    return w != NULL ? pbfpy_world_def_dict(pbf_world_get_def(w)) : NULL;
}

static PyObject *world_set_solver(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    if (!PyArg_ParseTuple(args, ":set_solver")) return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_solver_def solver = pbf_world_get_def(w)->solver;
    if (pbfpy_fields_set(&solver, pbfpy_solver_fields, "set_solver", kwargs, NULL) < 0) return NULL;
    pbf_status st = pbf_world_set_solver(w, &solver);
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_error(w));
    Py_RETURN_NONE;
}

/* ---- files ---------------------------------------------------------------------------------- */

static int format_of(PyObject *format, const char *path, pbf_format *out) {
    const pbf_format formats[] = {PBF_FORMAT_PLY, PBF_FORMAT_VTK, PBF_FORMAT_VTU};
    const char *const names[] = {"ply", "vtk", "vtu", NULL};
    if (format != NULL && format != Py_None) {
        int f = pbfpy_enum_value(format, names, "export: 'format'");
        if (f < 0) return -1;
        *out = formats[f];
        return 0;
    }
    const char *dot = strrchr(path, '.');
    for (int i = 0; dot != NULL && i < 3; ++i) {
        if (strcmp(dot + 1, pbf_format_extension(formats[i])) == 0) {
            *out = formats[i];
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError,
                 "export: cannot tell the format of '%s' (give format='ply', 'vtk' or "
                 "'vtu', or a .ply, .vtk or .vtu name)",
                 path);
    return -1;
}

static PyObject *world_export(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"path", "format", NULL};
    PyObject *path = NULL, *format = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|O:export", kwlist, PyUnicode_FSConverter,
                                     &path, &format))
        return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    pbf_format f = PBF_FORMAT_PLY;
    if (w == NULL || format_of(format, PyBytes_AS_STRING(path), &f) < 0) {
        Py_DECREF(path);
        return NULL;
    }
    char err[PBF_ERROR_SIZE];
    pbf_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    pbf_particles p;
    memset(&p, 0, sizeof p);
    st = pbf_particles_from_world(w, &p, err, sizeof err);
    if (st == PBF_OK) st = pbf_export_write(&p, f, PyBytes_AS_STRING(path), err, sizeof err);
    pbf_particles_free(&p);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    Py_DECREF(path);
    if (st != PBF_OK) return pbfpy_raise(st, err);
    Py_RETURN_NONE;
}

static PyObject *world_save_checkpoint(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"path", "app_data", NULL};
    PyObject *path = NULL;
    Py_buffer app = {0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|z*:save_checkpoint", kwlist,
                                     PyUnicode_FSConverter, &path, &app))
        return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    char err[PBF_ERROR_SIZE];
    pbf_status st = PBF_OK;
    if (w != NULL) {
        self->busy = 1;
        Py_BEGIN_ALLOW_THREADS
        st = pbf_checkpoint_save(w, PyBytes_AS_STRING(path), app.buf, (size_t)app.len, err,
                                 sizeof err);
        Py_END_ALLOW_THREADS
        self->busy = 0;
    }
    PyBuffer_Release(&app);
    Py_DECREF(path);
    if (w == NULL) return NULL;
    if (st != PBF_OK) return pbfpy_raise(st, err);
    Py_RETURN_NONE;
}

/* ---- properties ----------------------------------------------------------------------------- */

static PyObject *get_particle_count(pbfpy_world *self, void *c) {
    (void)c;
    pbf_world *w = pbfpy_world_ready(self);
    return w != NULL ? PyLong_FromLong(pbf_world_particle_count(w)) : NULL;
}

static Py_ssize_t world_len(pbfpy_world *self) {
    pbf_world *w = pbfpy_world_ready(self);
    return w != NULL ? pbf_world_particle_count(w) : -1;
}

static PyObject *get_time(pbfpy_world *self, void *c) {
    (void)c;
    pbf_world *w = pbfpy_world_ready(self);
    return w != NULL ? PyFloat_FromDouble(pbf_world_time(w)) : NULL;
}

static PyObject *get_particle_radius(pbfpy_world *self, void *c) {
    (void)c;
    pbf_world *w = pbfpy_world_ready(self);
    return w != NULL ? PyFloat_FromDouble((double)pbf_world_get_def(w)->particle_radius) : NULL;
}

static PyObject *get_particle_mass(pbfpy_world *self, void *c) {
    (void)c;
    pbf_world *w = pbfpy_world_ready(self);
    return w != NULL ? PyFloat_FromDouble((double)pbf_world_particle_mass(w)) : NULL;
}

static PyObject *get_kernel_radius(pbfpy_world *self, void *c) {
    (void)c;
    pbf_world *w = pbfpy_world_ready(self);
    return w != NULL ? PyFloat_FromDouble((double)pbf_world_kernel_radius(w)) : NULL;
}

static PyObject *get_domain(pbfpy_world *self, void *c) {
    (void)c;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_vec3 lo, hi;
    pbf_world_get_domain(w, &lo, &hi);
    return Py_BuildValue("(NN)", pbfpy_vec3_tuple(lo), pbfpy_vec3_tuple(hi));
}

static PyObject *get_memory_bytes(pbfpy_world *self, void *c) {
    (void)c;
    pbf_world *w = pbfpy_world_ready(self);
    return w != NULL ? PyLong_FromSize_t(pbf_world_memory_bytes(w)) : NULL;
}

static PyObject *get_closed(pbfpy_world *self, void *c) {
    (void)c;
    return PyBool_FromLong(self->world == NULL);
}

static PyObject *world_repr(pbfpy_world *self) {
    if (self->world == NULL) return PyUnicode_FromString("<pbf.World (closed)>");
    if (self->busy) return PyUnicode_FromString("<pbf.World (busy)>");
    PyObject *t = PyFloat_FromDouble(pbf_world_time(self->world));
    if (t == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("<pbf.World: %d particles, t = %R s>",
                                       pbf_world_particle_count(self->world), t);
    Py_DECREF(t);
    return r;
}

static PyGetSetDef world_getset[] = {
    {"particle_count", (getter)get_particle_count, NULL, "Number of particles (also len(world)).",
     NULL},
    {"time", (getter)get_time, NULL, "Simulated time, s.", NULL},
    {"particle_radius", (getter)get_particle_radius, NULL, "Particle radius r, m.", NULL},
    {"particle_mass", (getter)get_particle_mass, NULL, "Mass of every particle, kg.", NULL},
    {"kernel_radius", (getter)get_kernel_radius, NULL, "Kernel support h, m.", NULL},
    {"domain", (getter)get_domain, NULL,
     "((x, y, z), (x, y, z)): the domain box at the current time (walls may move), m.", NULL},
    {"memory_bytes", (getter)get_memory_bytes, NULL, "Bytes the world has allocated.", NULL},
    {"has_tool", (getter)pbfpy_world_get_has_tool, NULL, "Whether the world has a tool.", NULL},
    {"closed", (getter)get_closed, NULL, "True after close().", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define METHOD(name, fn, flags, doc)                                                               \
    { name, (PyCFunction)(void (*)(void))(fn), flags, doc }
#define METHOD_KW(name, fn, doc) METHOD(name, fn, METH_VARARGS | METH_KEYWORDS, doc)
#define METHOD_0(name, fn, doc) METHOD(name, fn, METH_NOARGS, doc)
#define METHOD_1(name, fn, doc) METHOD(name, fn, METH_O, doc)

static PyMethodDef world_methods[] = {
    METHOD_KW("step", world_step,
              "step($self, /, dt, steps=1)\n--\n\n"
              "Advances the world by dt seconds (in the world's substeps), `steps` times. The\n"
              "GIL is released while the library steps, so other Python threads run meanwhile.\n"
              "Raises pbf.UnstableError (with the library's message naming the step and the\n"
              "particle) when the run blows up, pbf.InvalidArgumentError for a bad dt."),
    METHOD_KW("positions", world_positions,
              "positions($self, /, out=None)\n--\n\n"
              "Positions in stable id order, float32 (N, 3), m: row k is particle k. With out\n"
              "(a C-contiguous float32 (N, 3) array) fills and returns it without allocating."),
    METHOD_KW("velocities", world_velocities,
              "velocities($self, /, out=None)\n--\n\n"
              "Velocities in stable id order, float32 (N, 3), m/s. out: as in positions()."),
    METHOD_KW("densities", world_densities,
              "densities($self, /, out=None)\n--\n\nDensities at the end of the last step in "
              "stable id order, float32 (N,),\nkg/m^3 (0 before the first step). out: as in "
              "positions()."),
    METHOD_KW("ids", world_ids,
              "ids($self, /, out=None)\n--\n\nThe stable ids in id order, int32 (N,): 0, 1, ... "
              "in the order particles\nwere added. out: as in positions()."),
    METHOD_KW("array", world_array,
              "array($self, /, name, out=None)\n--\n\n"
              "Any per-particle array the library reads back, by name, in stable id order:\n"
              "pbf.particle_arrays() lists them (positions, velocities, densities, ids,\n"
              "phases, ...) with dtype and unit. out: as in positions()."),
    METHOD_0("arrays", world_arrays,
             "arrays($self, /)\n--\n\nEvery array of pbf.particle_arrays() in a dict by name "
             "(new arrays, in stable\nid order)."),
    METHOD_0("particles", world_particles,
             "particles($self, /)\n--\n\nPositions, velocities, densities and ids in one "
             "pbf.Particles."),
    METHOD_0("profile", world_profile,
             "profile($self, /)\n--\n\nThe profile of the last step: ms per stage, density "
             "error, neighbours,\niterations (pbf.Profile)."),
    METHOD_0("stats", world_stats,
             "stats($self, /)\n--\n\nKinetic energy, maximum speed and bounds of the particles "
             "(pbf.Stats)."),
    METHOD_0("iteration_errors", world_iteration_errors,
             "iteration_errors($self, /)\n--\n\nThe average density error after each solver "
             "iteration of the last substep,\nfloat32 (k,)."),
    METHOD_0("hash", world_hash,
             "hash($self, /)\n--\n\nFNV-1a hash of positions and velocities in id order: equal "
             "hashes mean\nbit-identical states."),
    METHOD_0("settings", world_settings,
             "settings($self, /)\n--\n\nThe world's def as a dict: the fields of pbf_world_def, "
             "with 'solver' (the\nfields of pbf_solver_def) and 'wall_motion'."),
    METHOD_KW("set_solver", world_set_solver,
              "set_solver($self, /, **fields)\n--\n\n"
              "Changes solver fields (those of settings()['solver']) from the next step on;\n"
              "validated like a new world (pbf.InvalidArgumentError, world unchanged)."),
    METHOD_KW("add_block", pbfpy_world_add_block,
              "add_block($self, /, **fields)\n--\n\n"
              "Fills a box with particles on the rest lattice. fields: min, max, velocity\n"
              "(x, y, z), jitter, seed (pbf_block_def; defaults from pbf_default_block_def).\n"
              "Returns the number of particles added; their ids follow the existing ones."),
    METHOD_KW("add_particles", pbfpy_world_add_particles,
              "add_particles($self, /, positions, velocities=None)\n--\n\n"
              "Adds particles at positions (array-like (N, 3), m) with velocities (N, 3) or at\n"
              "rest. Returns the id of the first."),
    METHOD_KW("add_collider", pbfpy_world_add_collider,
              "add_collider($self, /, type='sphere', **fields)\n--\n\n"
              "Adds a static solid: type 'sphere' (center, radius), 'box' (center,\n"
              "half_extents) or 'capsule' (a, b, radius), m."),
    METHOD_0("colliders", pbfpy_world_colliders,
             "colliders($self, /)\n--\n\nThe colliders as dicts (the fields of add_collider)."),
    METHOD_0("meshes", pbfpy_world_meshes,
             "meshes($self, /)\n--\n\nThe triangle-mesh solids as dicts: path, vertices "
             "(float32 (V, 3), m, in the\nmesh's own frame), triangles (int32 (T, 3)), motion "
             "('static', 'kinematic',\n'floating'), role ('obstacle', 'container'), sink."),
    METHOD_0("mesh_transforms", pbfpy_world_mesh_transforms,
             "mesh_transforms($self, /)\n--\n\nWhere the meshes are now: float32 (M, 3, 4), "
             "row-major [R | position], with\nx_world = R x_mesh + position."),
    METHOD_KW("set_tool", pbfpy_world_set_tool,
              "set_tool($self, /, **fields)\n--\n\n"
              "Gives the world its tool, a rigid sphere two-way coupled to the fluid\n"
              "(docs/tool.md), replacing any. fields: those of pbf_tool_def (radius, position,\n"
              "velocity, motion 'kinematic'|'free', mass, added_mass, adhesion_k_tool,\n"
              "adhesion_k_fluid, adhesion_a, adhesion_b, damping, interpolation\n"
              "'linear'|'smooth') and keys, a list of (time, (x, y, z)) for a scripted path."),
    METHOD_0("remove_tool", pbfpy_world_remove_tool,
             "remove_tool($self, /)\n--\n\nRemoves the tool."),
    METHOD_0("tool_settings", pbfpy_world_tool_settings,
             "tool_settings($self, /)\n--\n\nThe tool's def as a dict (the fields of set_tool), "
             "or None without a tool."),
    METHOD_1("set_tool_pose", pbfpy_world_set_tool_pose,
             "set_tool_pose($self, position, /)\n--\n\n"
             "Where the tool's centre will be at the end of the next step (the haptic\n"
             "device's hook): it moves there in a straight line over the step's substeps."),
    METHOD_0("tool_state", pbfpy_world_tool_state,
             "tool_state($self, /)\n--\n\nWhat the tool did over the last step: position, "
             "velocity, forces ON it in N\n(reaction, adhesion, damping, total), contacts "
             "(pbf.ToolState)."),
    METHOD_1("set_probes", pbfpy_world_set_probes,
             "set_probes($self, probes, /)\n--\n\n"
             "Replaces the probes with a list of dicts of pbf_probe_def fields: type\n"
             "('height', 'front', 'force'), name, position, radius, max_gap, direction\n"
             "('+x', '-x', ...), min_particles, size. Unset fields take\n"
             "pbf_default_probe_def()'s values. Colliders a force probe lies on come first."),
    METHOD_0("probes", pbfpy_world_probes,
             "probes($self, /)\n--\n\nThe probes as dicts (the fields of set_probes)."),
    METHOD_0("sample_probes", pbfpy_world_sample_probes,
             "sample_probes($self, /)\n--\n\nReads every probe: {name: pbf.ProbeSample}. "
             "Heights and fronts are read\nnow, forces are the last step's."),
    METHOD_KW("export", world_export,
              "export($self, /, path, format=None)\n--\n\n"
              "Writes the particles to a PLY or VTK file (format 'ply' or 'vtk', or from the\n"
              "name's extension), atomically, exactly as `pbf run` writes its frames."),
    METHOD_KW("save_checkpoint", world_save_checkpoint,
              "save_checkpoint($self, /, path, app_data=None)\n--\n\n"
              "Saves the whole state (atomically); pbf.World(pbf.Checkpoint(path)) goes on from\n"
              "it bit-identically. app_data: bytes of your own, kept in the file."),
    METHOD_KW("split", pbfpy_world_split,
              "split($self, /, comm=None, *, cuts=None)\n--\n\n"
              "Splits a world that holds the whole scene, the same on every rank of comm, into\n"
              "this rank's slab of x (collective; docs/python.md, \"Split over processes\n"
              "(MPI)\"). comm: None (MPI_COMM_WORLD), an mpi4py communicator or its py2f()\n"
              "handle; MPI is started if nothing started it. cuts: ranks + 1 values of x to\n"
              "cut at (a resumed run's) instead of the particles' quantiles. From then on\n"
              "step() and the calls that sum over the world are collective, and the read-backs\n"
              "are this rank's particles. Raises pbf.InvalidArgumentError (a feature not\n"
              "supported split, too many ranks), pbf.UnsupportedError without MPI."),
    METHOD_0("slab", pbfpy_world_slab,
             "slab($self, /)\n--\n\nThis rank's slab of a split world (pbf.Slab: lo, hi, "
             "rank, ranks), or None for\na world that was not split."),
    METHOD_0("cuts", pbfpy_world_cuts,
             "cuts($self, /)\n--\n\nThe cuts of a split world, float64 (ranks + 1,): "
             "cuts[r] and cuts[r + 1] bound\nrank r's slab (the first and last open beyond); "
             "the same on every rank. None\nfor a world that was not split."),
    METHOD_0("halo", pbfpy_world_halo,
             "halo($self, /)\n--\n\nThis rank's halo in the last substep (pbf.Halo: ghosts "
             "received, copies sent,\nbytes received), or None for a world that was not split."),
    METHOD_KW("balance", pbfpy_world_balance,
              "balance($self, /, threshold=0.0)\n--\n\n"
              "Load balancing between steps (collective): when the largest rank's particle\n"
              "count is more than threshold times the mean (threshold > 1; 0 only measures),\n"
              "the cuts move to the particles' quantiles and the particles to their new ranks.\n"
              "Returns pbf.Balance; its timings are of the last step (call it after every step,\n"
              "as `pbf run` does). A world that was not split reports 1s and does nothing."),
    METHOD_0("gather", pbfpy_world_gather,
             "gather($self, /)\n--\n\nThe particles of every rank (collective): on rank 0 "
             "the whole world's in id\norder, as particles() gives them for a world never "
             "split; empty arrays on the\nother ranks. A world that was not split: "
             "particles()."),
    METHOD_0("gather_diffuse", pbfpy_world_gather_diffuse,
             "gather_diffuse($self, /)\n--\n\nThe diffuse particles (spray, foam, bubbles) "
             "of every rank on rank 0\n(collective), rank 0's first: a dict of positions, "
             "velocities (float32 (N, 3)),\nkinds (uint8 (N,): 0 spray, 1 foam, 2 bubble) and "
             "lifetimes (float32 (N,), s);\nempty on the other ranks. Raises "
             "pbf.InvalidArgumentError for a world not split."),
    METHOD_0("totals", pbfpy_world_totals,
             "totals($self, /)\n--\n\nThe whole world's (pbf.Stats, pbf.Profile) over every "
             "rank (collective), the\nsame on every rank: counts and energies summed, maxima "
             "taken, means weighted\nby the counts, stage times the slowest rank's. A world "
             "that was not split:\n(stats(), profile())."),
    METHOD_0("close", world_close,
             "close($self, /)\n--\n\nFrees the world now (also done when the object goes "
             "away); later calls raise\nValueError."),
    METHOD_0("__enter__", pbfpy_enter, NULL),
    METHOD_KW("__exit__", world_exit, NULL),
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods world_as_sequence = {
    .sq_length = (lenfunc)world_len,
};

PyTypeObject pbfpy_world_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pbf.World",
    .tp_basicsize = sizeof(pbfpy_world),
    .tp_dealloc = (destructor)world_dealloc,
    .tp_repr = (reprfunc)world_repr,
    .tp_as_sequence = &world_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "World(source=None, *, fill=True, threads=None, backend=None)\n--\n\n"
              "A simulation world. source: a pbf.Scene (its world, and with fill=True its\n"
              "blocks, colliders, tool and probes), a pbf.Checkpoint (the saved world), or None\n"
              "(the default world def: an empty 1 m box). threads and backend ('cpu' or\n"
              "'cuda') override the source's. Raises pbf.InvalidArgumentError,\n"
              "pbf.OutOfMemoryError, pbf.NoDeviceError or pbf.UnsupportedError with the\n"
              "library's message.",
    .tp_methods = world_methods,
    .tp_getset = world_getset,
    .tp_init = (initproc)world_init,
    .tp_new = PyType_GenericNew,
};
