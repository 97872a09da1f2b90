/* pbf.World split over MPI processes (include/pbf/mpi.h, docs/mpi.md, docs/python.md "Split
 * over processes (MPI)") and the module's mpi_rank() and mpi_size(). Compiled only where the
 * library has MPI (PBF_MPI, CMakeLists.txt); mpi_none.c stands in for it elsewhere.
 *
 * MPI is started by the first call that needs it (split, mpi_rank, mpi_size) unless something
 * else started it already (mpi4py, a program embedding Python): then with MPI_THREAD_MULTIPLE,
 * as mpi4py asks, since the collective calls release the GIL and split worlds may step in
 * different Python threads. What this module started it finishes when the interpreter exits
 * (Py_AtExit: after the worlds that were still alive were freed); what another started, that
 * one finishes. A communicator comes as None (MPI_COMM_WORLD), an object with py2f() (an mpi4py
 * communicator) or its Fortran handle: no mpi4py header is needed, nor mpi4py at all.
 *
 * Every call here that is collective (split, balance, gather, gather_diffuse, totals; step is
 * too, world.c) runs with the GIL released and the world marked busy, as World.step does. */
#include <mpi.h>
#include <string.h>

#include "pbf/mpi.h"
#include "pbfpy.h"

const int pbfpy_have_mpi = 1;

static int started; /* this module called MPI_Init_thread */

static void finish_mpi(void) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (started && !finalized) MPI_Finalize();
    started = 0;
}

/* MPI running, started here when it was not; 0, or -1 with an exception naming `what`. */
static int ensure_mpi(const char *what) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized) {
        PyErr_Format(PyExc_RuntimeError, "%s: MPI was already finalized in this process", what);
        return -1;
    }
    if (initialized) return 0;
    /* with the GIL held: no second thread starts it meanwhile */
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        PyErr_Format(PyExc_RuntimeError, "%s: MPI failed to start (MPI_Init_thread)", what);
        return -1;
    }
    started = 1;
    if (Py_AtExit(finish_mpi) < 0)
        return PyErr_WarnEx(PyExc_RuntimeWarning,
                            "pbf: no room to finish MPI at exit (Py_AtExit is full): call "
                            "MPI_Finalize yourself",
                            1);
    return 0;
}

/* comm: None (MPI_COMM_WORLD), an object with py2f() or an int (a Fortran handle). */
static int comm_from(PyObject *obj, MPI_Comm *out, const char *what) {
    if (obj == NULL || obj == Py_None) {
        *out = MPI_COMM_WORLD;
        return 0;
    }
    PyObject *handle = NULL;
    if (PyLong_Check(obj) && !PyBool_Check(obj)) {
        handle = Py_NewRef(obj);
    } else if (PyObject_HasAttrString(obj, "py2f")) {
        handle = PyObject_CallMethod(obj, "py2f", NULL);
        if (handle == NULL) return -1;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "%s: comm must be None (MPI_COMM_WORLD), an mpi4py communicator (anything "
                     "with py2f()) or its Fortran handle (int), got %s",
                     what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    long f = PyLong_AsLong(handle);
    Py_DECREF(handle);
    if (f == -1 && PyErr_Occurred()) return -1;
    /* Open MPI answers a handle it never gave out with a null pointer, not MPI_COMM_NULL */
    MPI_Comm c = MPI_Comm_f2c((MPI_Fint)f);
    if (c == MPI_COMM_NULL || c == (MPI_Comm)0) {
        PyErr_Format(PyExc_ValueError, "%s: comm %ld is not a communicator's handle", what, f);
        return -1;
    }
    *out = c;
    return 0;
}

PyObject *pbfpy_mpi_rank(PyObject *module, PyObject *unused) {
    (void)module, (void)unused;
    if (ensure_mpi("mpi_rank") < 0) return NULL;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return PyLong_FromLong(rank);
}

PyObject *pbfpy_mpi_size(PyObject *module, PyObject *unused) {
    (void)module, (void)unused;
    if (ensure_mpi("mpi_size") < 0) return NULL;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return PyLong_FromLong(size);
}

/* ---- splitting ------------------------------------------------------------------------------ */

PyObject *pbfpy_world_split(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"comm", "cuts", NULL};
    PyObject *comm_obj = Py_None, *cuts_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$O:split", kwlist, &comm_obj, &cuts_obj))
        return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    MPI_Comm comm = MPI_COMM_NULL;
    if (w == NULL || ensure_mpi("split") < 0 || comm_from(comm_obj, &comm, "split") < 0)
        return NULL;
    PyArrayObject *cuts = NULL;
    if (cuts_obj != Py_None) {
        cuts = (PyArrayObject *)PyArray_FROMANY(cuts_obj, NPY_FLOAT64, 1, 1, NPY_ARRAY_CARRAY_RO);
        if (cuts == NULL) return NULL;
        int ranks = 0;
        MPI_Comm_size(comm, &ranks);
        if (PyArray_SIZE(cuts) != (npy_intp)ranks + 1) {
            PyErr_Format(PyExc_ValueError,
                         "split: cuts must hold ranks + 1 = %d values (cuts[r] and cuts[r + 1] "
                         "bound rank r's slab), got %zd",
                         ranks + 1, (Py_ssize_t)PyArray_SIZE(cuts));
            Py_DECREF(cuts);
            return NULL;
        }
    }
    char err[PBF_ERROR_SIZE];
    pbf_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    if (cuts != NULL)
        st = pbf_mpi_world_split_at(w, comm, PyArray_DATA(cuts), err, sizeof err);
    else
        st = pbf_mpi_world_split(w, comm, err, sizeof err);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    Py_XDECREF(cuts);
    if (st != PBF_OK) return pbfpy_raise(st, err);
    Py_RETURN_NONE;
}

/* ---- where this rank stands ----------------------------------------------------------------- */

PyObject *pbfpy_world_slab(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    double lo = 0.0, hi = 0.0;
    int rank = 0, ranks = 0;
    if (!pbf_mpi_world_slab(w, &lo, &hi, &rank, &ranks)) Py_RETURN_NONE;
    return pbfpy_slab(lo, hi, rank, ranks);
}

PyObject *pbfpy_world_cuts(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    int ranks = pbf_mpi_world_cuts(w, NULL);
    if (ranks == 0) Py_RETURN_NONE;
    PyObject *a = pbfpy_new_array(NPY_FLOAT64, ranks + 1, 0);
    if (a != NULL) pbf_mpi_world_cuts(w, PyArray_DATA((PyArrayObject *)a));
    return a;
}

PyObject *pbfpy_world_halo(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    int received = 0, sent = 0;
    int64_t bytes = 0;
    if (!pbf_mpi_world_halo(w, &received, &sent, &bytes)) Py_RETURN_NONE;
    return pbfpy_halo(received, sent, (long long)bytes);
}

/* ---- collective calls ----------------------------------------------------------------------- */

PyObject *pbfpy_world_balance(pbfpy_world *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"threshold", NULL};
    double threshold = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|d:balance", kwlist, &threshold)) return NULL;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_mpi_balance r;
    memset(&r, 0, sizeof r);
    pbf_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    st = pbf_mpi_world_balance(w, threshold, &r);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (st != PBF_OK) return pbfpy_raise(st, pbf_world_error(w));
    const pbfpy_balance_report b = {r.count_before, r.count_after, r.time,      r.moved,
                                    r.migrated,     r.wait,        r.wait_least};
    return pbfpy_balance(&b);
}

PyObject *pbfpy_world_gather(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_particles p;
    memset(&p, 0, sizeof p);
    char err[PBF_ERROR_SIZE];
    pbf_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    st = pbf_mpi_world_gather(w, &p, err, sizeof err);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    PyObject *r = st == PBF_OK ? pbfpy_particles(&p) : pbfpy_raise(st, err);
    pbf_particles_free(&p);
    return r;
}

/* A new array of n rows copied from data (NULL when n is 0). */
static PyObject *copied(int type_num, int n, int cols, const void *data, size_t item) {
    PyObject *a = pbfpy_new_array(type_num, n, cols);
    if (a != NULL && n > 0)
        memcpy(PyArray_DATA((PyArrayObject *)a), data, (size_t)n * (cols > 0 ? cols : 1) * item);
    return a;
}

PyObject *pbfpy_world_gather_diffuse(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_diffuse_particles p;
    memset(&p, 0, sizeof p);
    char err[PBF_ERROR_SIZE];
    pbf_status st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    st = pbf_mpi_world_gather_diffuse(w, &p, err, sizeof err);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (st != PBF_OK) {
        pbf_diffuse_particles_free(&p);
        return pbfpy_raise(st, err);
    }
    PyObject *d = PyDict_New();
    PyObject *arrays[] = {
        copied(NPY_FLOAT32, p.count, 3, p.positions, sizeof(float)),
        copied(NPY_FLOAT32, p.count, 3, p.velocities, sizeof(float)),
        copied(NPY_UINT8, p.count, 0, p.kinds, sizeof(uint8_t)),
        copied(NPY_FLOAT32, p.count, 0, p.lifetimes, sizeof(float)),
    };
    const char *const names[] = {"positions", "velocities", "kinds", "lifetimes"};
    for (int i = 0; i < 4; ++i) {
        if (arrays[i] == NULL || (d != NULL && pbfpy_dict_set(d, names[i], arrays[i]) < 0))
            Py_CLEAR(d);
        Py_XDECREF(arrays[i]);
    }
    pbf_diffuse_particles_free(&p);
    return d;
}

PyObject *pbfpy_world_totals(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    pbf_stats s;
    pbf_profile p;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    pbf_mpi_world_totals(w, &s, &p);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    return Py_BuildValue("(NN)", pbfpy_stats(&s), pbfpy_profile(&p));
}
