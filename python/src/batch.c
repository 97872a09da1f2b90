/* pbf.WorldBatch: many small worlds of one scene stepped together (include/pbf/batch.h), with
 * numpy arrays of shape (worlds, particles, 3) and one value per world for each parameter. */
#include <string.h>

#include "pbf/batch.h"
#include "pbfpy.h"

typedef struct pbfpy_batch {
    PyObject_HEAD pbf_world_batch *batch; /* NULL when closed */
    int busy; /* a step runs with the GIL released (as pbfpy_world.busy) */
} pbfpy_batch;

static pbf_world_batch *batch_ready(pbfpy_batch *self) {
    if (self->batch == NULL) {
        PyErr_SetString(PyExc_ValueError, "the batch is closed");
        return NULL;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the batch is busy in another thread (a step)");
        return NULL;
    }
    return self->batch;
}

/* ---- parameters ------------------------------------------------------------------------------ */

/* The per-world parameters by name: a float, a uint32 (the seed) or a vector. */
typedef struct param_field {
    const char *name;
    size_t offset;
    int kind; /* 0 float, 1 uint32, 3 vector */
} param_field;

static const param_field param_fields[] = {
    {"gravity", offsetof(pbf_batch_params, gravity), 3},
    {"seed", offsetof(pbf_batch_params, seed), 1},
    {"jitter", offsetof(pbf_batch_params, jitter), 0},
    {"xsph", offsetof(pbf_batch_params, xsph), 0},
    {"vorticity", offsetof(pbf_batch_params, vorticity), 0},
    {"viscosity", offsetof(pbf_batch_params, viscosity), 0},
    {"tool_position", offsetof(pbf_batch_params, tool_position), 3},
    {NULL, 0, 0},
};

/* Sets field f of the n params from obj: one value for all (a number, or (x, y, z)), or one per
 * world (shape (n,) or (n, 3)). Returns 0, or -1 with an exception naming the parameter. */
static int set_param(const param_field *f, PyObject *obj, pbf_batch_params *p, int n,
                     const char *what) {
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_FLOAT64, 0, 2,
                                                        NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (a == NULL) {
        PyErr_Format(PyExc_TypeError, "%s: '%s' must be numbers", what, f->name);
        return -1;
    }
    const int vec = f->kind == 3, nd = PyArray_NDIM(a);
    const npy_intp *dims = PyArray_DIMS(a);
    int each; /* 1: one value per world */
    if (nd == (vec ? 1 : 0) && (!vec || dims[0] == 3))
        each = 0;
    else if (nd == (vec ? 2 : 1) && dims[0] == n && (!vec || dims[1] == 3))
        each = 1;
    else {
        Py_DECREF(a);
        PyErr_Format(PyExc_ValueError, "%s: '%s' must be %s or an array of shape (%d%s)", what,
                     f->name, vec ? "(x, y, z)" : "a number", n, vec ? ", 3" : ",");
        return -1;
    }
    const double *v = PyArray_DATA(a);
    const int m = vec ? 3 : 1;
    for (int i = 0; i < n; ++i) {
        const double *x = v + (each ? (size_t)m * i : 0);
        char *dst = (char *)&p[i] + f->offset;
        if (f->kind == 1) {
            if (!(x[0] >= 0.0 && x[0] <= 4294967295.0 && x[0] == (double)(uint32_t)x[0])) {
                Py_DECREF(a);
                PyErr_Format(PyExc_ValueError, "%s: 'seed' must be integers in [0, 2**32)", what);
                return -1;
            }
            *(uint32_t *)dst = (uint32_t)x[0];
        } else {
            for (int k = 0; k < m; ++k) ((float *)dst)[k] = (float)x[k];
        }
    }
    Py_DECREF(a);
    return 0;
}

/* Applies the keyword arguments that name parameters (None: unchanged); any other key is a
 * TypeError. */
static int set_params(PyObject *kwargs, pbf_batch_params *p, int n, const char *what,
                      const char *const *skip) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (kwargs != NULL && PyDict_Next(kwargs, &pos, &key, &value)) {
        const char *name = PyUnicode_AsUTF8(key);
        if (name == NULL) return -1;
        int skipped = 0;
        for (int k = 0; skip != NULL && skip[k] != NULL; ++k) skipped |= strcmp(skip[k], name) == 0;
        if (skipped || value == Py_None) continue;
        const param_field *f = param_fields;
        while (f->name != NULL && strcmp(f->name, name) != 0) ++f;
        if (f->name == NULL) {
            PyErr_Format(PyExc_TypeError,
                         "%s: unknown parameter '%s' (gravity, seed, jitter, xsph, vorticity, "
                         "viscosity, tool_position)",
                         what, name);
            return -1;
        }
        if (set_param(f, value, p, n, what) < 0) return -1;
    }
    return 0;
}

/* ---- life ------------------------------------------------------------------------------------ */

static void batch_free(pbfpy_batch *self) {
    pbf_world_batch *b = self->batch;
    self->batch = NULL;
    pbf_world_batch_destroy(b);
}

static int batch_init(pbfpy_batch *self, PyObject *args, PyObject *kwargs) {
    PyObject *scene_obj = NULL;
    int worlds = 0;
    if (!PyArg_ParseTuple(args, "O!i:WorldBatch", &pbfpy_scene_type, &scene_obj, &worlds))
        return -1;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "WorldBatch.__init__: the batch is busy");
        return -1;
    }
    batch_free(self);
    if (worlds < 1 || worlds > 1000000) {
        /* the library's message, before allocating the parameters */
        char err[PBF_ERROR_SIZE];
        pbf_world_batch *none = NULL;
        pbf_status st = pbf_world_batch_create(((pbfpy_scene *)scene_obj)->scene, worlds, NULL,
                                               &none, err, sizeof err);
        return pbfpy_raise_int(st, err);
    }
    pbf_scene *scene = PyMem_Malloc(sizeof *scene);
    pbf_batch_params *p = PyMem_Calloc((size_t)worlds, sizeof *p);
    if (scene == NULL || p == NULL) {
        PyMem_Free(scene), PyMem_Free(p);
        PyErr_NoMemory();
        return -1;
    }
    *scene = *((pbfpy_scene *)scene_obj)->scene;
    PyObject *threads = kwargs != NULL ? PyDict_GetItemString(kwargs, "threads") : NULL;
    int rc = 0;
    if (threads != NULL && threads != Py_None) {
        long t = PyLong_AsLong(threads);
        if (t == -1 && PyErr_Occurred())
            rc = -1;
        else
            scene->world.threads = (int)t;
    }
    for (int i = 0; i < worlds; ++i) p[i] = pbf_batch_default_params(scene);
    static const char *const skip[] = {"threads", NULL};
    if (rc == 0) rc = set_params(kwargs, p, worlds, "WorldBatch", skip);
    if (rc == 0) {
        char err[PBF_ERROR_SIZE];
        pbf_world_batch *b = NULL;
        pbf_status st;
        Py_BEGIN_ALLOW_THREADS st = pbf_world_batch_create(scene, worlds, p, &b, err, sizeof err);
        Py_END_ALLOW_THREADS if (st != PBF_OK) rc = pbfpy_raise_int(st, err);
        else self->batch = b;
    }
    PyMem_Free(scene);
    PyMem_Free(p);
    return rc;
}

static void batch_dealloc(pbfpy_batch *self) {
    batch_free(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *batch_close(pbfpy_batch *self, PyObject *unused) {
    (void)unused;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "WorldBatch.close: the batch is busy");
        return NULL;
    }
    batch_free(self);
    Py_RETURN_NONE;
}

static PyObject *batch_exit(pbfpy_batch *self, PyObject *args) {
    (void)args;
    return batch_close(self, NULL);
}

/* ---- stepping -------------------------------------------------------------------------------- */

/* pbf_world_batch_step and pbf_world_batch_error for pbfpy_run_steps */
static pbf_status step_batch(void *b, float dt) { return pbf_world_batch_step(b, dt); }
static const char *batch_error(const void *b) { return pbf_world_batch_error(b); }

static PyObject *batch_step(pbfpy_batch *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"dt", "steps", NULL};
    float dt = 0.0f;
    int steps = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "f|i:step", kwlist, &dt, &steps)) return NULL;
    pbf_world_batch *b = batch_ready(self);
    if (b == NULL) return NULL;
    return pbfpy_run_steps(b, &self->busy, dt, steps, step_batch, batch_error);
}

static PyObject *batch_reset(pbfpy_batch *self, PyObject *args, PyObject *kwargs) {
    int world = 0;
    if (!PyArg_ParseTuple(args, "i:reset", &world)) return NULL;
    pbf_world_batch *b = batch_ready(self);
    if (b == NULL) return NULL;
    const pbf_batch_params *old = pbf_world_batch_params(b, world);
    if (old == NULL) {
        PyErr_Format(PyExc_IndexError, "reset: world must be in [0, %d), got %d",
                     pbf_world_batch_count(b), world);
        return NULL;
    }
    pbf_batch_params p = *old;
    if (set_params(kwargs, &p, 1, "reset", NULL) < 0) return NULL;
    pbf_status st = pbf_world_batch_reset(b, world, &p);
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_batch_error(b));
    Py_RETURN_NONE;
}

/* ---- read-back ------------------------------------------------------------------------------- */

typedef void (*gather_fn)(const pbf_world_batch *, float *);

static PyObject *gather(pbfpy_batch *self, PyObject *args, PyObject *kwargs, gather_fn fn,
                        const char *what) {
    static char *kwlist[] = {"out", NULL};
    PyObject *out = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O", kwlist, &out)) return NULL;
    pbf_world_batch *b = batch_ready(self);
    if (b == NULL) return NULL;
    npy_intp dims[3] = {pbf_world_batch_count(b), pbf_world_batch_particle_count(b), 3};
    PyArrayObject *a;
    if (out == NULL || out == Py_None) {
        a = (PyArrayObject *)PyArray_SimpleNew(3, dims, NPY_FLOAT32);
        if (a == NULL) return NULL;
    } else {
        a = (PyArrayObject *)out;
        if (!PyArray_Check(out) || PyArray_TYPE(a) != NPY_FLOAT32 || PyArray_NDIM(a) != 3 ||
            !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISWRITEABLE(a) ||
            PyArray_DIM(a, 0) != dims[0] || PyArray_DIM(a, 1) != dims[1] ||
            PyArray_DIM(a, 2) != 3) {
            PyErr_Format(PyExc_ValueError,
                         "%s: out must be a writeable C-contiguous float32 array of shape (%d, "
                         "%d, 3)",
                         what, (int)dims[0], (int)dims[1]);
            return NULL;
        }
        Py_INCREF(out);
    }
    fn(b, (float *)PyArray_DATA(a));
    return (PyObject *)a;
}

static PyObject *batch_positions(pbfpy_batch *self, PyObject *args, PyObject *kwargs) {
    return gather(self, args, kwargs, pbf_world_batch_get_positions, "positions");
}

static PyObject *batch_velocities(pbfpy_batch *self, PyObject *args, PyObject *kwargs) {
    return gather(self, args, kwargs, pbf_world_batch_get_velocities, "velocities");
}

static PyObject *batch_params(pbfpy_batch *self, PyObject *unused) {
    (void)unused;
    pbf_world_batch *b = batch_ready(self);
    if (b == NULL) return NULL;
    const int n = pbf_world_batch_count(b);
    PyObject *d = PyDict_New();
    for (const param_field *f = param_fields; d != NULL && f->name != NULL; ++f) {
        PyObject *a =
            pbfpy_new_array(f->kind == 1 ? NPY_UINT32 : NPY_FLOAT32, n, f->kind == 3 ? 3 : 0);
        if (a == NULL || pbfpy_dict_set(d, f->name, a) < 0) {
            Py_XDECREF(a);
            Py_CLEAR(d);
            break;
        }
        char *dst = PyArray_DATA((PyArrayObject *)a);
        const size_t size = f->kind == 3 ? 3 * sizeof(float) : 4;
        for (int i = 0; i < n; ++i)
            memcpy(dst + size * i, (const char *)pbf_world_batch_params(b, i) + f->offset, size);
        Py_DECREF(a);
    }
    return d;
}

static PyObject *batch_failed(pbfpy_batch *self, PyObject *unused) {
    (void)unused;
    pbf_world_batch *b = batch_ready(self);
    if (b == NULL) return NULL;
    const int n = pbf_world_batch_count(b);
    PyObject *a = pbfpy_new_array(NPY_BOOL, n, 0);
    if (a == NULL) return NULL;
    npy_bool *v = PyArray_DATA((PyArrayObject *)a);
    for (int i = 0; i < n; ++i) v[i] = pbf_world_batch_status(b, i) != PBF_OK;
    return a;
}

static PyObject *batch_hashes(pbfpy_batch *self, PyObject *unused) {
    (void)unused;
    pbf_world_batch *b = batch_ready(self);
    if (b == NULL) return NULL;
    const int n = pbf_world_batch_count(b);
    PyObject *list = PyList_New(n);
    for (int i = 0; list != NULL && i < n; ++i) {
        PyObject *h = PyLong_FromUnsignedLongLong(pbf_world_hash(pbf_world_batch_world(b, i)));
        if (h == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, h);
    }
    return list;
}

static PyObject *batch_times(pbfpy_batch *self, PyObject *unused) {
    (void)unused;
    pbf_world_batch *b = batch_ready(self);
    if (b == NULL) return NULL;
    const int n = pbf_world_batch_count(b);
    PyObject *a = pbfpy_new_array(NPY_FLOAT64, n, 0);
    if (a == NULL) return NULL;
    double *v = PyArray_DATA((PyArrayObject *)a);
    for (int i = 0; i < n; ++i) v[i] = pbf_world_time(pbf_world_batch_world(b, i));
    return a;
}

/* ---- the tool -------------------------------------------------------------------------------- */

static PyObject *batch_set_tool_poses(pbfpy_batch *self, PyObject *poses) {
    pbf_world_batch *b = batch_ready(self);
    if (b == NULL) return NULL;
    PyArrayObject *a = pbfpy_in_array(poses, NPY_FLOAT32, 3, "set_tool_poses");
    if (a == NULL) return NULL;
    if (PyArray_DIM(a, 0) != pbf_world_batch_count(b)) {
        PyErr_Format(PyExc_ValueError, "set_tool_poses: expected shape (%d, 3), got (%d, 3)",
                     pbf_world_batch_count(b), (int)PyArray_DIM(a, 0));
        Py_DECREF(a);
        return NULL;
    }
    pbf_status st = pbf_world_batch_set_tool_poses(b, PyArray_DATA(a));
    Py_DECREF(a);
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_batch_error(b));
    Py_RETURN_NONE;
}

static PyObject *batch_tool_states(pbfpy_batch *self, PyObject *unused) {
    (void)unused;
    pbf_world_batch *b = batch_ready(self);
    if (b == NULL) return NULL;
    if (!pbf_world_has_tool(pbf_world_batch_world(b, 0)))
        return pbfpy_raise(PBF_ERR_INVALID_ARG, "tool_states: the batch's scene has no tool");
    const int n = pbf_world_batch_count(b);
    pbf_tool_state *s = PyMem_Calloc((size_t)n, sizeof *s);
    if (s == NULL) return PyErr_NoMemory();
    pbf_world_batch_get_tool_states(b, s);
    PyObject *list = PyList_New(n);
    for (int i = 0; list != NULL && i < n; ++i) {
        PyObject *t = pbfpy_tool_state(&s[i]);
        if (t == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, t);
    }
    PyMem_Free(s);
    return list;
}

/* ---- the type -------------------------------------------------------------------------------- */

static Py_ssize_t batch_len(pbfpy_batch *self) {
    return self->batch != NULL ? pbf_world_batch_count(self->batch) : 0;
}

static PyObject *get_worlds(pbfpy_batch *self, void *c) {
    (void)c;
    pbf_world_batch *b = batch_ready(self);
    return b != NULL ? PyLong_FromLong(pbf_world_batch_count(b)) : NULL;
}

static PyObject *get_particle_count(pbfpy_batch *self, void *c) {
    (void)c;
    pbf_world_batch *b = batch_ready(self);
    return b != NULL ? PyLong_FromLong(pbf_world_batch_particle_count(b)) : NULL;
}

static PyObject *get_closed(pbfpy_batch *self, void *c) {
    (void)c;
    return PyBool_FromLong(self->batch == NULL);
}

static PyObject *batch_repr(pbfpy_batch *self) {
    if (self->batch == NULL) return PyUnicode_FromString("<pbf.WorldBatch (closed)>");
    return PyUnicode_FromFormat("<pbf.WorldBatch: %d worlds of %d particles>",
                                pbf_world_batch_count(self->batch),
                                pbf_world_batch_particle_count(self->batch));
}

static PyGetSetDef batch_getset[] = {
    {"worlds", (getter)get_worlds, NULL, "Number of worlds (also len(batch)).", NULL},
    {"particle_count", (getter)get_particle_count, NULL, "Particles of each world.", NULL},
    {"closed", (getter)get_closed, NULL, "True after close().", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

#define METHOD(name, fn, flags, doc)                                                               \
    { name, (PyCFunction)(void (*)(void))(fn), flags, doc }

static PyMethodDef batch_methods[] = {
    METHOD("step", batch_step, METH_VARARGS | METH_KEYWORDS,
           "step($self, /, dt, steps=1)\n--\n\n"
           "Steps every world that has not failed by dt seconds, `steps` times, threads across\n"
           "worlds (the GIL released). A world that blows up raises pbf.UnstableError naming\n"
           "it (\"world 3: ...\") after the others have stepped; it stays as it failed and is\n"
           "left out of later steps until reset() (failed() tells which)."),
    METHOD("reset", batch_reset, METH_VARARGS | METH_KEYWORDS,
           "reset($self, world, /, **params)\n--\n\n"
           "Builds world `world` again from the scene at time 0, with its parameters changed\n"
           "by params (one value each: gravity=(x, y, z), seed=, jitter=, ...)."),
    METHOD("positions", batch_positions, METH_VARARGS | METH_KEYWORDS,
           "positions($self, /, out=None)\n--\n\n"
           "Every world's positions, float32 (worlds, particles, 3), m: [w, k] is particle k\n"
           "of world w. With out (C-contiguous float32 of that shape) fills and returns it."),
    METHOD("velocities", batch_velocities, METH_VARARGS | METH_KEYWORDS,
           "velocities($self, /, out=None)\n--\n\n"
           "Every world's velocities, float32 (worlds, particles, 3), m/s. out: as in "
           "positions()."),
    METHOD("params", batch_params, METH_NOARGS,
           "params($self, /)\n--\n\n"
           "What each world was built with, {name: array}: gravity and tool_position float32\n"
           "(worlds, 3), seed uint32 (worlds,), jitter, xsph, vorticity, viscosity float32\n"
           "(worlds,) (jitter < 0: the scene's blocks' own)."),
    METHOD("failed", batch_failed, METH_NOARGS,
           "failed($self, /)\n--\n\nbool (worlds,): the worlds whose step failed, not "
           "stepped until reset()."),
    METHOD("hashes", batch_hashes, METH_NOARGS,
           "hashes($self, /)\n--\n\nEach world's World.hash(): equal hashes mean "
           "bit-identical states."),
    METHOD("times", batch_times, METH_NOARGS,
           "times($self, /)\n--\n\nEach world's simulated time, float64 (worlds,), s."),
    METHOD("set_tool_poses", batch_set_tool_poses, METH_O,
           "set_tool_poses($self, poses, /)\n--\n\n"
           "Where each world's tool will be at the end of the next step, (worlds, 3), m\n"
           "(World.set_tool_pose for every world: the agent's action)."),
    METHOD("tool_states", batch_tool_states, METH_NOARGS,
           "tool_states($self, /)\n--\n\nEach world's pbf.ToolState after the last step."),
    METHOD("close", batch_close, METH_NOARGS,
           "close($self, /)\n--\n\nFrees the worlds now; later calls raise ValueError."),
    METHOD("__enter__", pbfpy_enter, METH_NOARGS, NULL),
    METHOD("__exit__", batch_exit, METH_VARARGS | METH_KEYWORDS, NULL),
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods batch_as_sequence = {
    .sq_length = (lenfunc)batch_len,
};

PyTypeObject pbfpy_batch_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pbf.WorldBatch",
    .tp_basicsize = sizeof(pbfpy_batch),
    .tp_dealloc = (destructor)batch_dealloc,
    .tp_repr = (reprfunc)batch_repr,
    .tp_as_sequence = &batch_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "WorldBatch(scene, worlds, /, *, threads=None, gravity=None, seed=None, "
              "jitter=None, xsph=None, vorticity=None, viscosity=None, tool_position=None)\n--\n\n"
              "Many small worlds of one scene stepped together (docs/python.md, \"Many small\n"
              "worlds\"). Each parameter is None (the scene's value), one value for all, or an\n"
              "array with one per world ((worlds,) or (worlds, 3)): gravity, seed (added to the\n"
              "blocks' jitter seeds), jitter (every block's; < 0 keeps theirs), xsph, vorticity,\n"
              "viscosity, tool_position (where the tool is at time 0; its path moves with it).\n"
              "threads: across worlds (None: the scene's; each world runs with one). Every world\n"
              "ends bit-identical to pbf.World of the same scene and values stepped alone.",
    .tp_methods = batch_methods,
    .tp_getset = batch_getset,
    .tp_init = (initproc)batch_init,
    .tp_new = PyType_GenericNew,
};
