/* What the objects' methods share: `with` (__enter__) and the loop of World.step and
 * WorldBatch.step. */
#include "pbfpy.h"

PyObject *pbfpy_enter(PyObject *self, PyObject *unused) {
    (void)unused;
    Py_INCREF(self);
    return self;
}

PyObject *pbfpy_run_steps(void *obj, int *busy, float dt, int steps, pbfpy_step_fn step,
                          pbfpy_error_fn error) {
    if (steps < 0) {
        PyErr_Format(PyExc_ValueError, "step: steps must be >= 0, got %d", steps);
        return NULL;
    }
    for (int i = 0; i < steps; ++i) {
        *busy = 1;
        PyThreadState *save = PyEval_SaveThread(); /* Py_BEGIN_ALLOW_THREADS */
        pbf_status st = step(obj, dt);
        PyEval_RestoreThread(save); /* Py_END_ALLOW_THREADS */
        *busy = 0;
        if (st != PBF_OK) return pbfpy_raise(st, error(obj));
        if (i + 1 < steps && PyErr_CheckSignals() < 0) return NULL; /* Ctrl-C between steps */
    }
    Py_RETURN_NONE;
}
