/* The module pbf._core: its types, exceptions and functions. python/pbf/__init__.py re-exports
 * them as the package pbf. */
#define PBFPY_MODULE_C /* this file imports numpy's C API; the others use it */
#include "pbfpy.h"

static PyObject *module_version(PyObject *module, PyObject *unused) {
    (void)module, (void)unused;
    return PyUnicode_FromString(pbf_version());
}

static PyObject *module_backend_info(PyObject *module, PyObject *arg) {
    (void)module;
    int backend = pbfpy_enum_value(arg, pbfpy_backend_names, "backend_info: backend");
    if (backend < 0) return NULL;
    char buf[PBF_ERROR_SIZE];
    pbf_status st = pbf_backend_info((pbf_backend)backend, buf, sizeof buf);
    if (st != PBF_OK) return pbfpy_raise(st, buf);
    return PyUnicode_FromString(buf);
}

static PyObject *module_memory_limit(PyObject *module, PyObject *unused) {
    (void)module, (void)unused;
    return PyLong_FromSize_t(pbf_memory_limit());
}

/* pbf_scene_keys as a list of dicts: the schema that validates every scene, for tools that
 * need a key's type or range (pbf.dataset's --vary). */
static PyObject *module_scene_keys(PyObject *module, PyObject *unused) {
    (void)module, (void)unused;
    int n = pbf_scene_keys(NULL, 0);
    if (n < 0) return PyErr_NoMemory();
    pbf_scene_key_info *keys = PyMem_Calloc((size_t)n + 1, sizeof *keys);
    if (keys == NULL) return PyErr_NoMemory();
    if (pbf_scene_keys(keys, n) != n) {
        PyMem_Free(keys);
        return PyErr_NoMemory();
    }
    PyObject *list = PyList_New(n);
    for (int i = 0; list != NULL && i < n; ++i) {
        const pbf_scene_key_info *k = &keys[i];
        PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "table", k->table,
                                    "path", k->path, "only", k->only, "type", k->type, "unit",
                                    k->unit, "default", k->default_value, "default_note",
                                    k->default_note, "range", k->range, "doc", k->doc);
        if (d == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, d);
    }
    PyMem_Free(keys);
    return list;
}

static PyObject *module_particle_arrays(PyObject *module, PyObject *unused) {
    (void)module;
    (void)unused;
    static const char *const dtypes[] = {"float32", "int32", "uint8"};
    const int n = pbf_particle_array_count();
    PyObject *list = PyList_New(n);
    for (int i = 0; list != NULL && i < n; ++i) {
        const pbf_particle_array_info *a = pbf_particle_array_at(i);
        PyObject *d =
            Py_BuildValue("{s:s,s:s,s:i,s:s,s:s}", "name", a->name, "dtype", dtypes[a->type],
                          "components", a->components, "unit", a->unit, "doc", a->what);
        if (d == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, d);
    }
    return list;
}

static PyMethodDef module_functions[] = {
    {"version", module_version, METH_NOARGS,
     "version()\n--\n\nThe library's version string (pbf_version)."},
    {"backend_info", module_backend_info, METH_O,
     "backend_info(backend, /)\n--\n\n"
     "What backend 'cpu' or 'cuda' runs on here (\"CPU (OpenMP, 16 threads)\", \"NVIDIA H100 "
     "...\").\nRaises pbf.NoDeviceError where it has no usable device and pbf.UnsupportedError\n"
     "where it is not built in: what World(..., backend=...) would raise."},
    {"memory_limit", module_memory_limit, METH_NOARGS,
     "memory_limit()\n--\n\nBytes this process may use (physical memory, cgroup limit, ulimit; "
     "0 when\nunknown); worlds that would need more are refused."},
    {"scene_keys", module_scene_keys, METH_NOARGS,
     "scene_keys()\n--\n\nEvery key a scene may have (pbf_scene_keys, docs/scenes.md), as dicts "
     "with\ntable, path (\"fluid.blocks[i].min\"), only, type (\"number\", \"integer\", "
     "\"[x, y, z]\", ...),\nunit, default, default_note, range (\"(0, 10]\") and doc."},
    {"particle_arrays", module_particle_arrays, METH_NOARGS,
     "particle_arrays()\n--\n\nThe per-particle arrays World.array reads back "
     "(pbf_particle_array_at), as dicts\nwith name, dtype (\"float32\", \"int32\", "
     "\"uint8\"), components (1 or 3), unit and doc."},
    {"read_particles", pbfpy_read_particles, METH_O,
     "read_particles(path, /)\n--\n\n"
     "Reads a PLY or VTK particle file (the format from the extension) into a pbf.Particles.\n"
     "Raises pbf.FileError or pbf.ParseError (a truncated or foreign file)."},
    {"write_png", (PyCFunction)(void (*)(void))pbfpy_write_png, METH_VARARGS | METH_KEYWORDS,
     "write_png(path, image)\n--\n\n"
     "Writes a uint8 (height, width, 3 or 4) image as a PNG file, atomically."},
    {"read_png", pbfpy_read_png, METH_O,
     "read_png(path, /)\n--\n\nReads a PNG file as a uint8 (height, width, 4) RGBA array."},
    {"mpi_rank", pbfpy_mpi_rank, METH_NOARGS,
     "mpi_rank()\n--\n\nThis process's rank in MPI_COMM_WORLD (0 without mpirun), starting MPI "
     "if nothing\nstarted it (finished at exit). Raises pbf.UnsupportedError in a build "
     "without\nMPI (pbf.HAVE_MPI)."},
    {"mpi_size", pbfpy_mpi_size, METH_NOARGS,
     "mpi_size()\n--\n\nThe number of processes in MPI_COMM_WORLD (mpirun -n), starting MPI "
     "as mpi_rank()\ndoes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pbf._core",
    .m_doc = "The C extension of the pbf package: a thin layer over the pbf C library. Use it "
             "through `import pbf`.",
    .m_size = -1,
    .m_methods = module_functions,
};

static int add_type(PyObject *module, PyTypeObject *type, const char *name) {
    if (PyType_Ready(type) < 0) return -1;
    return PyModule_AddObjectRef(module, name, (PyObject *)type);
}

PyMODINIT_FUNC PyInit__core(void) {
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
#ifdef PBF_WITH_RENDER
    const int have_render = 1;
#else
    const int have_render = 0;
#endif
    if (pbfpy_errors_init(m) < 0 || pbfpy_results_init(m) < 0 ||
        add_type(m, &pbfpy_scene_type, "Scene") < 0 ||
        add_type(m, &pbfpy_checkpoint_type, "Checkpoint") < 0 ||
        add_type(m, &pbfpy_world_type, "World") < 0 ||
        add_type(m, &pbfpy_batch_type, "WorldBatch") < 0 ||
        add_type(m, &pbfpy_renderer_type, "Renderer") < 0 ||
        PyModule_AddStringConstant(m, "__version__", pbf_version()) < 0 ||
        PyModule_AddObjectRef(m, "HAVE_RENDER", have_render ? Py_True : Py_False) < 0 ||
        PyModule_AddObjectRef(m, "HAVE_MPI", pbfpy_have_mpi ? Py_True : Py_False) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
