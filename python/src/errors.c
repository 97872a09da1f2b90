/* pbf.Error and its subclasses: one class per pbf_status, each also deriving from the built-in
 * exception a Python programmer would catch for it (ValueError for a bad value, OSError for a
 * file, MemoryError). The message is the library's own, unchanged. */
#include "pbfpy.h"

PyObject *pbfpy_scene_warning = NULL;

static PyObject *error_base = NULL;
static PyObject *status_attr = NULL; /* "status", kept for the module's life */
/* Indexed by pbf_status; [PBF_OK] is unused. */
static PyObject *error_class[PBF_ERR_CAPACITY + 1];

typedef struct error_spec {
    pbf_status status;
    const char *name; /* "pbf.Name" */
    PyObject **builtin; /* the second base class, or NULL */
    const char *doc;
} error_spec;

static int add_class(PyObject *module, const char *qualified, PyObject *bases, const char *doc,
                     PyObject **out) {
    PyObject *cls = PyErr_NewExceptionWithDoc(qualified, doc, bases, NULL);
    if (cls == NULL) return -1;
    if (PyModule_AddObjectRef(module, strchr(qualified, '.') + 1, cls) < 0) {
        Py_DECREF(cls);
        return -1;
    }
    *out = cls;
    return 0;
}

int pbfpy_errors_init(PyObject *module) {
    status_attr = PyUnicode_InternFromString("status");
    if (status_attr == NULL) return -1;
    if (add_class(module, "pbf.Error", PyExc_Exception,
                  "An error reported by the pbf library. The message is the library's (it names\n"
                  "the file, the key or field and what was expected); `status` is the\n"
                  "library's status name (\"invalid_arg\", \"io\", \"parse\", \"unstable\", ...).",
                  &error_base) < 0)
        return -1;
    const error_spec specs[] = {
        {PBF_ERR_INVALID_ARG, "pbf.InvalidArgumentError", &PyExc_ValueError,
         "A value is out of its documented range, or values do not fit together\n"
         "(PBF_ERR_INVALID_ARG). Also a ValueError."},
        {PBF_ERR_OUT_OF_MEMORY, "pbf.OutOfMemoryError", &PyExc_MemoryError,
         "The library could not allocate, or refused a size that would not fit this\n"
         "machine's memory (PBF_ERR_OUT_OF_MEMORY). Also a MemoryError."},
        {PBF_ERR_IO, "pbf.FileError", &PyExc_OSError,
         "A file could not be read or written (PBF_ERR_IO). Also an OSError."},
        {PBF_ERR_PARSE, "pbf.ParseError", &PyExc_ValueError,
         "A scene or data file is malformed: broken JSON, an unknown key, a wrong type, a\n"
         "foreign or corrupt file (PBF_ERR_PARSE). Also a ValueError."},
        {PBF_ERR_UNSTABLE, "pbf.UnstableError", NULL,
         "The simulation blew up (NaN, or a particle far beyond the speed limit); the message\n"
         "names the step and the particle and says what to change (PBF_ERR_UNSTABLE)."},
        {PBF_ERR_NO_DEVICE, "pbf.NoDeviceError", NULL,
         "The requested backend has no usable device here, e.g. backend \"cuda\" on a machine\n"
         "without an NVIDIA GPU, or no EGL display for the renderer (PBF_ERR_NO_DEVICE)."},
        {PBF_ERR_UNSUPPORTED, "pbf.UnsupportedError", NULL,
         "The feature is not built into this library (PBF_ERR_UNSUPPORTED)."},
        {PBF_ERR_CAPACITY, "pbf.CapacityError", NULL,
         "The particle capacity (flow.capacity) is full: the emitters would add more\n"
         "particles than it holds; the world is as after the last step (PBF_ERR_CAPACITY)."},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; ++i) {
        PyObject *bases = specs[i].builtin != NULL ? PyTuple_Pack(2, error_base, *specs[i].builtin)
                                                   : PyTuple_Pack(1, error_base);
        if (bases == NULL) return -1;
        int rc =
            add_class(module, specs[i].name, bases, specs[i].doc, &error_class[specs[i].status]);
        Py_DECREF(bases);
        if (rc < 0) return -1;
    }
    PyObject *warning = NULL;
    if (add_class(module, "pbf.SceneWarning", PyExc_UserWarning,
                  "A scene whose values are legal one by one but may not give a useful run\n"
                  "(pbf_scene_check): a time step too coarse for the fastest expected particle,\n"
                  "particles starting inside a collider, overlapping blocks.",
                  &warning) < 0)
        return -1;
    pbfpy_scene_warning = warning;
    return 0;
}

static const char *status_name(pbf_status status) {
    switch (status) {
    case PBF_OK: return "ok";
    case PBF_ERR_INVALID_ARG: return "invalid_arg";
    case PBF_ERR_OUT_OF_MEMORY: return "out_of_memory";
    case PBF_ERR_IO: return "io";
    case PBF_ERR_PARSE: return "parse";
    case PBF_ERR_UNSTABLE: return "unstable";
    case PBF_ERR_NO_DEVICE: return "no_device";
    case PBF_ERR_UNSUPPORTED: return "unsupported";
    case PBF_ERR_CAPACITY: return "capacity";
    }
    return "unknown";
}

PyObject *pbfpy_raise(pbf_status status, const char *message) {
    PyObject *cls = error_base;
    if (status > PBF_OK && status <= PBF_ERR_CAPACITY && error_class[status] != NULL)
        cls = error_class[status];
    if (message == NULL || message[0] == '\0') message = pbf_status_string(status);
    PyObject *exc = PyObject_CallFunction(cls, "s", message);
    if (exc == NULL) return NULL;
    PyObject *name = PyUnicode_FromString(status_name(status));
    if (name == NULL || PyObject_SetAttr(exc, status_attr, name) < 0) {
        Py_XDECREF(name);
        Py_DECREF(exc);
        return NULL;
    }
    Py_DECREF(name);
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
    return NULL;
}

int pbfpy_raise_int(pbf_status status, const char *message) {
    pbfpy_raise(status, message);
    return -1;
}
