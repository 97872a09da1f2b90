/* What the library reports, as named tuples (like os.stat_result): pbf.Profile, pbf.Stats,
 * pbf.ToolState, pbf.ProbeSample, pbf.Particles, and for a world split over MPI processes
 * pbf.Slab, pbf.Halo and pbf.Balance (include/pbf/mpi.h; defined in every build, so that the
 * module has one set of names). Vectors are (x, y, z) tuples; particle
 * arrays are numpy arrays in stable id order. */
#include <string.h>

#include "pbfpy.h"

static PyTypeObject *profile_type, *stats_type, *tool_state_type, *probe_sample_type,
    *particles_type, *slab_type, *halo_type, *balance_type;

static PyStructSequence_Field profile_fields[] = {
    {"stage_ms", "dict: milliseconds per stage (predict, grid, neighbors, lambda, delta, "
                 "velocity, vorticity) over the last step"},
    {"step_ms", "wall-clock milliseconds of the whole last step"},
    {"avg_density_error", "mean over particles of max(rho/rho0 - 1, 0), fraction"},
    {"max_density_error", "max over particles of max(rho/rho0 - 1, 0), fraction"},
    {"avg_neighbors", "mean neighbours per particle (itself excluded)"},
    {"iterations", "solver iterations per substep (mean over the step, rounded up)"},
    {"max_iterations_used", "the most iterations any substep of the step needed"},
    {"chebyshev_restarts", "divergence fall-backs of the Chebyshev acceleration in the step"},
    {"substeps", "substeps of the step"},
    {"steps", "steps so far"},
    {NULL, NULL},
};
static PyStructSequence_Desc profile_desc = {
    "pbf.Profile", "The world's profile over its last step (pbf_profile).", profile_fields, 10};

static PyStructSequence_Field stats_fields[] = {
    {"particles", "particle count"},
    {"kinetic_energy", "J"},
    {"max_speed", "m/s"},
    {"bounds_min", "(x, y, z): the particles' bounding box, m"},
    {"bounds_max", "(x, y, z), m"},
    {NULL, NULL},
};
static PyStructSequence_Desc stats_desc = {
    "pbf.Stats", "Whole-state statistics, reduced in a fixed order (pbf_stats).", stats_fields, 5};

static PyStructSequence_Field tool_state_fields[] = {
    {"time", "s: the world's time"},
    {"position", "(x, y, z): the centre, m"},
    {"velocity", "(x, y, z), m/s, over the last substep"},
    {"radius", "m"},
    {"reaction", "(x, y, z), N: the fluid's push (buoyancy, drag, squeeze), step average"},
    {"adhesion", "(x, y, z), N"},
    {"damping", "(x, y, z), N"},
    {"total", "(x, y, z), N: reaction + adhesion + damping, the force ON the tool"},
    {"contacts", "particles within 2r of the surface at the end of the step"},
    {"min_distance", "smallest distance of a particle centre from the surface, m"},
    {NULL, NULL},
};
static PyStructSequence_Desc tool_state_desc = {
    "pbf.ToolState", "What the tool did over the last step (pbf_tool_state).", tool_state_fields,
    10};

static PyStructSequence_Field probe_sample_fields[] = {
    {"value", "height: m above the probe's y; front: the edge's coordinate, m; force: N"},
    {"pressure", "force: value / patch area, Pa; 0 for the other kinds"},
    {"particles", "particles that made the reading"},
    {NULL, NULL},
};
static PyStructSequence_Desc probe_sample_desc = {
    "pbf.ProbeSample", "One probe reading (pbf_probe_sample).", probe_sample_fields, 3};

static PyStructSequence_Field particles_fields[] = {
    {"positions", "float32 array (N, 3), m"},
    {"velocities", "float32 array (N, 3), m/s"},
    {"densities", "float32 array (N,), kg/m^3"},
    {"ids", "int32 array (N,): stable ids"},
    {NULL, NULL},
};
static PyStructSequence_Desc particles_desc = {
    "pbf.Particles", "Particle arrays in stable id order: row k is particle k.", particles_fields,
    4};

static PyStructSequence_Field slab_fields[] = {
    {"lo", "where this rank's slab of x starts, m (-inf for the first rank)"},
    {"hi", "where it ends (excluded), m (+inf for the last rank)"},
    {"rank", "this process's rank in the world's communicator"},
    {"ranks", "the number of ranks the world is split over"},
    {NULL, NULL},
};
static PyStructSequence_Desc slab_desc = {
    "pbf.Slab", "This rank's slab of a split world (pbf_mpi_world_slab).", slab_fields, 4};

static PyStructSequence_Field halo_fields[] = {
    {"received", "ghosts received from the neighbours in the last substep"},
    {"sent", "copies sent to them"},
    {"bytes_received", "bytes this rank received in that substep, migration included"},
    {NULL, NULL},
};
static PyStructSequence_Desc halo_desc = {
    "pbf.Halo", "This rank's halo in the last substep (pbf_mpi_world_halo).", halo_fields, 3};

static PyStructSequence_Field balance_fields[] = {
    {"count_before", "max over mean of the ranks' particle counts before balancing"},
    {"count_after", "the same after"},
    {"time", "max over mean of the ranks' work in the last step (a timing)"},
    {"moved", "whether the cuts moved"},
    {"migrated", "particles that changed rank"},
    {"wait", "the ranks' time in the halo's messages since the last balance() over their "
             "last step's time: a share when balance() runs after every step (a timing)"},
    {"wait_least", "that share for the rank that waited least (a timing)"},
    {NULL, NULL},
};
static PyStructSequence_Desc balance_desc = {
    "pbf.Balance", "What World.balance measured and did (pbf_mpi_balance).", balance_fields, 7};

static int add_type(PyObject *module, PyStructSequence_Desc *desc, PyTypeObject **out) {
    *out = PyStructSequence_NewType(desc);
    if (*out == NULL) return -1;
    return PyModule_AddObjectRef(module, strchr(desc->name, '.') + 1, (PyObject *)*out);
}

int pbfpy_results_init(PyObject *module) {
    if (add_type(module, &profile_desc, &profile_type) < 0 ||
        add_type(module, &stats_desc, &stats_type) < 0 ||
        add_type(module, &tool_state_desc, &tool_state_type) < 0 ||
        add_type(module, &probe_sample_desc, &probe_sample_type) < 0 ||
        add_type(module, &particles_desc, &particles_type) < 0 ||
        add_type(module, &slab_desc, &slab_type) < 0 ||
        add_type(module, &halo_desc, &halo_type) < 0 ||
        add_type(module, &balance_desc, &balance_type) < 0)
        return -1;
    return 0;
}

/* Fills a struct sequence from n new references (stolen, NULL on failure); NULL on error. */
static PyObject *fill(PyTypeObject *type, PyObject **items, int n) {
    PyObject *r = PyStructSequence_New(type);
    for (int i = 0; i < n; ++i) {
        if (items[i] == NULL) Py_CLEAR(r);
        if (r != NULL)
            PyStructSequence_SET_ITEM(r, i, items[i]);
        else
            Py_XDECREF(items[i]);
    }
    return r;
}

PyObject *pbfpy_profile(const pbf_profile *p) {
    PyObject *stages = PyDict_New();
    for (int k = 0; stages != NULL && k < PBF_STAGE_COUNT; ++k) {
        PyObject *ms = PyFloat_FromDouble(p->stage_ms[k]);
        if (ms == NULL || pbfpy_dict_set(stages, pbf_stage_name((pbf_stage)k), ms) < 0)
            Py_CLEAR(stages);
        Py_XDECREF(ms);
    }
    PyObject *items[] = {
        stages,
        PyFloat_FromDouble(p->step_ms),
        PyFloat_FromDouble((double)p->avg_density_error),
        PyFloat_FromDouble((double)p->max_density_error),
        PyFloat_FromDouble((double)p->avg_neighbors),
        PyLong_FromLong(p->iterations),
        PyLong_FromLong(p->max_iterations_used),
        PyLong_FromLong(p->chebyshev_restarts),
        PyLong_FromLong(p->substeps),
        PyLong_FromLongLong(p->steps),
    };
    return fill(profile_type, items, 10);
}

PyObject *pbfpy_stats(const pbf_stats *s) {
    PyObject *items[] = {
        PyLong_FromLong(s->particles),
        PyFloat_FromDouble(s->kinetic_energy),
        PyFloat_FromDouble((double)s->max_speed),
        pbfpy_vec3_tuple(s->bounds_min),
        pbfpy_vec3_tuple(s->bounds_max),
    };
    return fill(stats_type, items, 5);
}

PyObject *pbfpy_tool_state(const pbf_tool_state *s) {
    PyObject *items[] = {
        PyFloat_FromDouble(s->time),   pbfpy_vec3_tuple(s->position),
        pbfpy_vec3_tuple(s->velocity), PyFloat_FromDouble((double)s->radius),
        pbfpy_vec3_tuple(s->reaction), pbfpy_vec3_tuple(s->adhesion),
        pbfpy_vec3_tuple(s->damping),  pbfpy_vec3_tuple(s->total),
        PyLong_FromLong(s->contacts),  PyFloat_FromDouble((double)s->min_distance),
    };
    return fill(tool_state_type, items, 10);
}

PyObject *pbfpy_probe_sample(const pbf_probe_sample *s) {
    PyObject *items[] = {PyFloat_FromDouble(s->value), PyFloat_FromDouble(s->pressure),
                         PyLong_FromLong(s->particles)};
    return fill(probe_sample_type, items, 3);
}

PyObject *pbfpy_slab(double lo, double hi, int rank, int ranks) {
    PyObject *items[] = {PyFloat_FromDouble(lo), PyFloat_FromDouble(hi), PyLong_FromLong(rank),
                         PyLong_FromLong(ranks)};
    return fill(slab_type, items, 4);
}

PyObject *pbfpy_halo(int received, int sent, long long bytes_received) {
    PyObject *items[] = {PyLong_FromLong(received), PyLong_FromLong(sent),
                         PyLong_FromLongLong(bytes_received)};
    return fill(halo_type, items, 3);
}

PyObject *pbfpy_balance(const pbfpy_balance_report *b) {
    PyObject *items[] = {
        PyFloat_FromDouble(b->count_before), PyFloat_FromDouble(b->count_after),
        PyFloat_FromDouble(b->time),         PyBool_FromLong(b->moved),
        PyLong_FromLongLong(b->migrated),    PyFloat_FromDouble(b->wait),
        PyFloat_FromDouble(b->wait_least),
    };
    return fill(balance_type, items, 7);
}

static PyObject *copy_array(int type_num, int rows, int cols, const void *data, size_t bytes) {
    PyObject *a = pbfpy_new_array(type_num, rows, cols);
    if (a != NULL && bytes > 0) memcpy(PyArray_DATA((PyArrayObject *)a), data, bytes);
    return a;
}

PyObject *pbfpy_particles(const pbf_particles *p) {
    size_t n = (size_t)p->count;
    PyObject *items[] = {
        copy_array(NPY_FLOAT32, p->count, 3, p->positions, 3 * n * sizeof(float)),
        copy_array(NPY_FLOAT32, p->count, 3, p->velocities, 3 * n * sizeof(float)),
        copy_array(NPY_FLOAT32, p->count, 0, p->densities, n * sizeof(float)),
        copy_array(NPY_INT32, p->count, 0, p->ids, n * sizeof(int32_t)),
    };
    return fill(particles_type, items, 4);
}

/* ---- files ---------------------------------------------------------------------------------- */

PyObject *pbfpy_read_particles(PyObject *module, PyObject *arg) {
    (void)module;
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
    pbf_particles p;
    memset(&p, 0, sizeof p);
    char err[PBF_ERROR_SIZE];
    pbf_status st;
    Py_BEGIN_ALLOW_THREADS
    st = pbf_export_read(PyBytes_AS_STRING(bytes), &p, err, sizeof err);
    Py_END_ALLOW_THREADS
    Py_DECREF(bytes);
    if (st != PBF_OK) return pbfpy_raise(st, err);
    PyObject *r = pbfpy_particles(&p);
    pbf_particles_free(&p);
    return r;
}
