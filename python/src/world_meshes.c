/* pbf.World, continued: the triangle-mesh solids of a world (include/pbf/geometry.h) as numpy
 * arrays, for code that draws or samples them (pbf.dataset's boundary particles). */
#include <string.h>

#include "pbf/geometry.h"
#include "pbfpy.h"

static const char *const motion_names[] = {"static", "kinematic", "floating"};
static const char *const role_names[] = {"obstacle", "container"};

/* A new C-contiguous (rows, 3) array of the given type filled from data. */
static PyObject *rows_of_3(const void *data, int rows, int type, size_t item) {
    npy_intp dims[2] = {rows, 3};
    PyObject *a = PyArray_SimpleNew(2, dims, type);
    if (a != NULL && rows > 0)
        memcpy(PyArray_DATA((PyArrayObject *)a), data, (size_t)rows * 3 * item);
    return a;
}

PyObject *pbfpy_world_meshes(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    int n = pbf_world_mesh_count(w);
    PyObject *list = PyList_New(n);
    for (int i = 0; list != NULL && i < n; ++i) {
        const pbf_mesh_def *def = pbf_world_get_mesh_def(w, i);
        const float *vertices = NULL;
        const int32_t *triangles = NULL;
        int vertex_count = 0;
        int triangle_count = pbf_world_mesh_triangles(w, i, &vertices, &vertex_count, &triangles);
        PyObject *v = rows_of_3(vertices, vertex_count, NPY_FLOAT32, sizeof(float));
        PyObject *t =
            v != NULL ? rows_of_3(triangles, triangle_count, NPY_INT32, sizeof(int32_t)) : NULL;
        int motion = (int)def->motion, role = (int)def->role;
        PyObject *d = t == NULL
                          ? NULL
                          : Py_BuildValue("{s:s,s:O,s:O,s:s,s:s,s:O}", "path", def->path,
                                          "vertices", v, "triangles", t, "motion",
                                          motion >= 0 && motion < 3 ? motion_names[motion] : "?",
                                          "role", role >= 0 && role < 2 ? role_names[role] : "?",
                                          "sink", def->sink ? Py_True : Py_False);
        Py_XDECREF(v);
        Py_XDECREF(t);
        if (d == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, d);
    }
    return list;
}

PyObject *pbfpy_world_mesh_transforms(pbfpy_world *self, PyObject *unused) {
    (void)unused;
    pbf_world *w = pbfpy_world_ready(self);
    if (w == NULL) return NULL;
    int n = pbf_world_mesh_count(w);
    npy_intp dims[3] = {n, 3, 4};
    PyObject *a = PyArray_SimpleNew(3, dims, NPY_FLOAT32);
    if (a == NULL) return NULL;
    float *out = PyArray_DATA((PyArrayObject *)a);
    for (int i = 0; i < n; ++i) pbf_world_mesh_transform(w, i, out + 12 * i);
    return a;
}
