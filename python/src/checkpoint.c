/* pbf.Checkpoint: a checkpoint file read and verified by the library (include/pbf/checkpoint.h).
 * pbf.World(checkpoint) restores its world; World.save_checkpoint writes one. */
#include "pbfpy.h"

static int checkpoint_init(pbfpy_checkpoint *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"path", NULL};
    PyObject *path = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&:Checkpoint", kwlist, PyUnicode_FSConverter,
                                     &path))
        return -1;
    pbf_checkpoint_close(self->ck);
    self->ck = NULL;
    char err[PBF_ERROR_SIZE];
    pbf_status st;
    Py_BEGIN_ALLOW_THREADS st =
        pbf_checkpoint_open(PyBytes_AS_STRING(path), &self->ck, err, sizeof err);
    Py_END_ALLOW_THREADS Py_DECREF(path);
    return st == PBF_OK ? 0 : pbfpy_raise_int(st, err);
}

static void checkpoint_dealloc(pbfpy_checkpoint *self) {
    pbf_checkpoint_close(self->ck);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

const pbf_checkpoint *pbfpy_checkpoint_get(pbfpy_checkpoint *self) {
    if (self->ck == NULL) PyErr_SetString(PyExc_ValueError, "the checkpoint is closed");
    return self->ck;
}

static PyObject *checkpoint_close(pbfpy_checkpoint *self, PyObject *unused) {
    (void)unused;
    pbf_checkpoint_close(self->ck);
    self->ck = NULL;
    Py_RETURN_NONE;
}

static PyObject *checkpoint_exit(pbfpy_checkpoint *self, PyObject *args) {
    (void)args;
    return checkpoint_close(self, NULL);
}

static PyObject *get_time(pbfpy_checkpoint *self, void *c) {
    (void)c;
    const pbf_checkpoint *ck = pbfpy_checkpoint_get(self);
    return ck != NULL ? PyFloat_FromDouble(pbf_checkpoint_time(ck)) : NULL;
}

static PyObject *get_steps(pbfpy_checkpoint *self, void *c) {
    (void)c;
    const pbf_checkpoint *ck = pbfpy_checkpoint_get(self);
    return ck != NULL ? PyLong_FromLongLong((long long)pbf_checkpoint_steps(ck)) : NULL;
}

static PyObject *get_particle_count(pbfpy_checkpoint *self, void *c) {
    (void)c;
    const pbf_checkpoint *ck = pbfpy_checkpoint_get(self);
    return ck != NULL ? PyLong_FromLong(pbf_checkpoint_particle_count(ck)) : NULL;
}

static PyObject *get_app_data(pbfpy_checkpoint *self, void *c) {
    (void)c;
    const pbf_checkpoint *ck = pbfpy_checkpoint_get(self);
    if (ck == NULL) return NULL;
    size_t size = 0;
    const void *data = pbf_checkpoint_app_data(ck, &size);
    if (data == NULL) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize(data, (Py_ssize_t)size);
}

static PyObject *get_settings(pbfpy_checkpoint *self, void *c) {
    (void)c;
    const pbf_checkpoint *ck = pbfpy_checkpoint_get(self);
    return ck != NULL ? pbfpy_world_def_dict(pbf_checkpoint_def(ck)) : NULL;
}

static PyGetSetDef checkpoint_getset[] = {
    {"time", (getter)get_time, NULL, "The world's time at the save, s.", NULL},
    {"steps", (getter)get_steps, NULL, "World.step calls before the save.", NULL},
    {"particle_count", (getter)get_particle_count, NULL, "Particles in the saved world.", NULL},
    {"app_data", (getter)get_app_data, NULL,
     "The bytes given to World.save_checkpoint (None when none).", NULL},
    {"settings", (getter)get_settings, NULL, "The saved world's settings (see World.settings).",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef checkpoint_methods[] = {
    {"close", (PyCFunction)checkpoint_close, METH_NOARGS,
     "close($self, /)\n--\n\nFrees the file's contents (also done when the object goes away)."},
    {"__enter__", (PyCFunction)pbfpy_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)checkpoint_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pbfpy_checkpoint_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pbf.Checkpoint",
    .tp_basicsize = sizeof(pbfpy_checkpoint),
    .tp_dealloc = (destructor)checkpoint_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Checkpoint(path)\n--\n\n"
              "A checkpoint file, read and verified (every checksum, the version, the\n"
              "sections). pbf.World(checkpoint) restores the saved world; stepping it gives\n"
              "bit-identical results to stepping the saved one. A foreign, corrupt, truncated\n"
              "or newer file raises pbf.ParseError; a missing one pbf.FileError.",
    .tp_methods = checkpoint_methods,
    .tp_getset = checkpoint_getset,
    .tp_init = (initproc)checkpoint_init,
    .tp_new = PyType_GenericNew,
};
