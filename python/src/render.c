/* pbf.Renderer: the OpenGL renderer (render/include/pbf/render.h) on a headless EGL context,
 * drawing a world into a numpy RGB image; and PNG files. Built when the renderer library is
 * (PBF_WITH_RENDER); otherwise every entry point raises pbf.UnsupportedError.
 *
 * GL contexts belong to a thread. The module makes one headless context, on the thread that
 * creates the first Renderer, and every Renderer uses it (two contexts on one thread would take
 * turns at being current, and a renderer would then draw into the wrong one). Renderers are
 * therefore used from that thread only; a call from another raises RuntimeError. */
#include <stdlib.h>
#include <string.h>

#include "pbfpy.h"

#ifdef PBF_WITH_RENDER
#include "pbf/render.h"

static pbf_gl_context *shared_context = NULL;
static unsigned long context_thread = 0;

static const char *const look_names[] = {"fluid", "spheres", NULL};
static const char *const color_names[] = {"uniform", "speed", "density", NULL};

#define F(name, type)                                                                              \
    { #name, type, offsetof(pbf_render_def, name), NULL, 0 }
static const pbfpy_field render_fields[] = {
    F(width, PBFPY_INT),
    F(height, PBFPY_INT),
    {"look", PBFPY_ENUM, offsetof(pbf_render_def, look), look_names, 0},
    {"color", PBFPY_ENUM, offsetof(pbf_render_def, color), color_names, 0},
    F(color_min, PBFPY_FLOAT),
    F(color_max, PBFPY_FLOAT),
    F(radius_scale, PBFPY_FLOAT),
    F(fluid_radius_scale, PBFPY_FLOAT),
    F(smooth_iterations, PBFPY_INT),
    F(smooth_radius, PBFPY_INT),
    F(smooth_scale, PBFPY_FLOAT),
    F(smooth_depth, PBFPY_FLOAT),
    F(absorption, PBFPY_RGB),
    F(fluid_color, PBFPY_RGB),
    F(min_transmission, PBFPY_FLOAT),
    F(refraction, PBFPY_FLOAT),
    F(ior, PBFPY_FLOAT),
    F(sphere_color, PBFPY_RGB),
    F(floor, PBFPY_BOOL),
    F(domain_edges, PBFPY_BOOL),
    F(passes, PBFPY_INT),
    PBFPY_END,
};
#undef F
#endif

typedef struct pbfpy_renderer {
    PyObject_HEAD
#ifdef PBF_WITH_RENDER
        pbf_renderer *renderer;
#endif
    unsigned long thread;
    int busy;
} pbfpy_renderer;

#ifdef PBF_WITH_RENDER

/* The renderer, when it may be used now from this thread; else NULL with an error. */
static pbf_renderer *renderer_ready(pbfpy_renderer *self) {
    if (self->renderer == NULL) {
        PyErr_SetString(PyExc_ValueError, "the renderer is closed");
        return NULL;
    }
    if (self->thread != PyThread_get_thread_ident()) {
        PyErr_SetString(PyExc_RuntimeError,
                        "a Renderer is used from the thread that created it (its GL context is "
                        "current there)");
        return NULL;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the renderer is busy");
        return NULL;
    }
    return self->renderer;
}

static int renderer_init(pbfpy_renderer *self, PyObject *args, PyObject *kwargs) {
    if (!PyArg_ParseTuple(args, ":Renderer")) return -1;
    if (self->renderer != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Renderer.__init__ called twice");
        return -1;
    }
    pbf_render_def def = pbf_default_render_def();
    if (pbfpy_fields_set(&def, render_fields, "Renderer", kwargs, NULL) < 0) return -1;
    unsigned long thread = PyThread_get_thread_ident();
    char err[PBF_ERROR_SIZE];
    pbf_status st;
    if (shared_context == NULL) {
        Py_BEGIN_ALLOW_THREADS st =
            pbf_gl_context_create_headless(&shared_context, err, sizeof err);
        Py_END_ALLOW_THREADS if (st != PBF_OK) return pbfpy_raise_int(st, err);
        context_thread = thread;
    } else if (thread != context_thread) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Renderers are made and used on one thread: the one that made the first "
                        "(its GL context is current there)");
        return -1;
    }
    Py_BEGIN_ALLOW_THREADS st = pbf_renderer_create(&def, &self->renderer, err, sizeof err);
    Py_END_ALLOW_THREADS if (st != PBF_OK) return pbfpy_raise_int(st, err);
    self->thread = thread;
    return 0;
}

static void renderer_free(pbfpy_renderer *self) {
    /* GL objects can be deleted only where the context is current; from another thread (a
     * garbage collection there) they are left to the context, which lives as long as the
     * process. */
    if (self->renderer != NULL && self->thread == PyThread_get_thread_ident())
        pbf_renderer_destroy(self->renderer);
    self->renderer = NULL;
}

/* The camera of a frame: None (the default camera framing the domain), a pbf.Scene (its
 * camera) or a dict {'position': (x, y, z), 'target': (x, y, z), 'fov': degrees}. */
static int camera_from(PyObject *obj, pbf_camera_def *cam) {
    if (obj == NULL || obj == Py_None) return 0;
    if (PyObject_TypeCheck(obj, &pbfpy_scene_type)) {
        *cam = ((pbfpy_scene *)obj)->scene->camera;
        return 0;
    }
    if (!PyDict_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "render: camera expects None, a pbf.Scene or a dict with position, target "
                     "and fov, got %s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *p = PyDict_GetItemString(obj, "position"), *t = PyDict_GetItemString(obj, "target");
    PyObject *fov = PyDict_GetItemString(obj, "fov");
    if (p == NULL || t == NULL) {
        PyErr_SetString(PyExc_ValueError, "render: camera needs 'position' and 'target'");
        return -1;
    }
    if (pbfpy_vec3_from(p, &cam->position, "render: camera 'position'") < 0 ||
        pbfpy_vec3_from(t, &cam->target, "render: camera 'target'") < 0)
        return -1;
    if (fov != NULL) {
        double f = PyFloat_AsDouble(fov);
        if (f == -1.0 && PyErr_Occurred()) return -1;
        cam->fov = (float)f;
    }
    return 0;
}

static PyObject *renderer_render(pbfpy_renderer *self, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"world", "camera", "alpha", NULL};
    PyObject *world_obj = NULL, *camera = Py_None;
    int alpha = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|O$p:render", kwlist, &pbfpy_world_type,
                                     &world_obj, &camera, &alpha))
        return NULL;
    pbfpy_world *wo = (pbfpy_world *)world_obj;
    pbf_renderer *r = renderer_ready(self);
    pbf_world *w = r != NULL ? pbfpy_world_ready(wo) : NULL;
    if (w == NULL) return NULL;

    /* What the renderer needs from the world, from its read-only view (no copy). */
    pbf_render_scene s = pbf_default_render_scene();
    if (camera_from(camera, &s.camera) < 0) return NULL;
    pbf_particle_view v = pbf_world_view(w);
    const pbf_world_def *def = pbf_world_get_def(w);
    s.particle_count = v.count;
    s.positions = v.positions;
    s.velocities = v.velocities;
    s.densities = v.densities;
    s.particle_radius = def->particle_radius;
    s.rest_density = def->rest_density;
    pbf_world_get_domain(w, &s.domain_min, &s.domain_max);
    int nc = pbf_world_collider_count(w);
    pbf_collider_def *colliders = malloc((size_t)(nc > 0 ? nc : 1) * sizeof *colliders);
    if (colliders == NULL) return PyErr_NoMemory();
    for (int i = 0; i < nc; ++i) colliders[i] = pbf_world_get_collider(w, i);
    s.collider_count = nc;
    s.colliders = colliders;
    pbf_collider_def tool = pbf_default_collider_def();
    if (pbf_world_has_tool(w)) { /* the tool, drawn solid */
        pbf_tool_state ts = pbf_tool_get_state(w);
        tool.type = PBF_COLLIDER_SPHERE;
        tool.center = ts.position;
        tool.radius = ts.radius;
        s.tool = &tool;
    }

    const pbf_render_def *rd = pbf_renderer_get_def(r);
    int width = rd->width, height = rd->height;
    npy_intp dims[3] = {height, width, alpha ? 4 : 3};
    PyObject *image = PyArray_SimpleNew(3, dims, NPY_UINT8);
    uint8_t *rgba = image != NULL && !alpha ? malloc((size_t)width * (size_t)height * 4) : NULL;
    if (image == NULL || (!alpha && rgba == NULL)) {
        free(colliders);
        Py_XDECREF(image);
        return image == NULL ? NULL : PyErr_NoMemory();
    }
    uint8_t *pixels = PyArray_DATA((PyArrayObject *)image);
    char err[PBF_ERROR_SIZE];
    pbf_status st;
    self->busy = 1;
    wo->busy = 1;
    Py_BEGIN_ALLOW_THREADS st = pbf_renderer_draw(r, &s, err, sizeof err);
    if (st == PBF_OK) st = pbf_renderer_read_rgba(r, alpha ? pixels : rgba, err, sizeof err);
    if (st == PBF_OK && !alpha) {
        size_t n = (size_t)width * (size_t)height;
        for (size_t i = 0; i < n; ++i) memcpy(pixels + 3 * i, rgba + 4 * i, 3);
    }
    Py_END_ALLOW_THREADS wo->busy = 0;
    self->busy = 0;
    free(rgba);
    free(colliders);
    if (st != PBF_OK) {
        Py_DECREF(image);
        return pbfpy_raise(st, err);
    }
    return image;
}

static PyObject *renderer_settings(pbfpy_renderer *self, PyObject *unused) {
    (void)unused;
    pbf_renderer *r = renderer_ready(self);
    return r != NULL ? pbfpy_fields_dict(pbf_renderer_get_def(r), render_fields) : NULL;
}

static PyObject *renderer_set(pbfpy_renderer *self, PyObject *args, PyObject *kwargs) {
    if (!PyArg_ParseTuple(args, ":set")) return NULL;
    pbf_renderer *r = renderer_ready(self);
    if (r == NULL) return NULL;
    pbf_render_def def = *pbf_renderer_get_def(r);
    if (pbfpy_fields_set(&def, render_fields, "Renderer.set", kwargs, NULL) < 0) return NULL;
    char err[PBF_ERROR_SIZE];
    pbf_status st = pbf_renderer_set_def(r, &def, err, sizeof err);
    if (st != PBF_OK) return pbfpy_raise(st, err);
    Py_RETURN_NONE;
}

static PyObject *renderer_timings(pbfpy_renderer *self, PyObject *unused) {
    (void)unused;
    pbf_renderer *r = renderer_ready(self);
    if (r == NULL) return NULL;
    pbf_render_timings t = pbf_renderer_timings(r);
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d,s:d,s:d}", "background_ms", t.background_ms,
                         "depth_ms", t.depth_ms, "thickness_ms", t.thickness_ms, "smooth_ms",
                         t.smooth_ms, "normal_ms", t.normal_ms, "shade_ms", t.shade_ms, "total_ms",
                         t.total_ms);
}

static PyObject *get_description(pbfpy_renderer *self, void *c) {
    (void)c;
    (void)self;
    return PyUnicode_FromString(pbf_gl_context_description(shared_context));
}

/* ---- PNG files ------------------------------------------------------------------------------ */

PyObject *pbfpy_write_png(PyObject *module, PyObject *args, PyObject *kwargs) {
    (void)module;
    static char *kwlist[] = {"path", "image", NULL};
    PyObject *path = NULL, *obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&O:write_png", kwlist, PyUnicode_FSConverter,
                                     &path, &obj))
        return NULL;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(obj, NPY_UINT8, NPY_ARRAY_IN_ARRAY);
    if (a == NULL || PyArray_NDIM(a) != 3 || (PyArray_DIM(a, 2) != 3 && PyArray_DIM(a, 2) != 4) ||
        PyArray_DIM(a, 0) < 1 || PyArray_DIM(a, 1) < 1 || PyArray_DIM(a, 0) > 65535 ||
        PyArray_DIM(a, 1) > 65535) {
        if (a != NULL)
            PyErr_SetString(PyExc_ValueError,
                            "write_png expects a uint8 array of shape (height, width, 3 or 4)");
        Py_XDECREF(a);
        Py_DECREF(path);
        return NULL;
    }
    int h = (int)PyArray_DIM(a, 0), w = (int)PyArray_DIM(a, 1), c = (int)PyArray_DIM(a, 2);
    const uint8_t *src = PyArray_DATA(a);
    uint8_t *rgba = c == 4 ? NULL : malloc((size_t)w * (size_t)h * 4);
    if (c == 3 && rgba == NULL) {
        Py_DECREF(a);
        Py_DECREF(path);
        return PyErr_NoMemory();
    }
    char err[PBF_ERROR_SIZE];
    pbf_status st;
    Py_BEGIN_ALLOW_THREADS if (c == 3) {
        for (size_t i = 0; i < (size_t)w * (size_t)h; ++i) {
            memcpy(rgba + 4 * i, src + 3 * i, 3);
            rgba[4 * i + 3] = 255;
        }
    }
    st = pbf_png_write(PyBytes_AS_STRING(path), c == 4 ? src : rgba, w, h, err, sizeof err);
    Py_END_ALLOW_THREADS free(rgba);
    Py_DECREF(a);
    Py_DECREF(path);
    if (st != PBF_OK) return pbfpy_raise(st, err);
    Py_RETURN_NONE;
}

PyObject *pbfpy_read_png(PyObject *module, PyObject *arg) {
    (void)module;
    PyObject *path = NULL;
    if (!PyUnicode_FSConverter(arg, &path)) return NULL;
    uint8_t *rgba = NULL;
    int w = 0, h = 0;
    char err[PBF_ERROR_SIZE];
    pbf_status st;
    Py_BEGIN_ALLOW_THREADS st =
        pbf_png_read(PyBytes_AS_STRING(path), &rgba, &w, &h, err, sizeof err);
    Py_END_ALLOW_THREADS Py_DECREF(path);
    if (st != PBF_OK) return pbfpy_raise(st, err);
    npy_intp dims[3] = {h, w, 4};
    PyObject *image = PyArray_SimpleNew(3, dims, NPY_UINT8);
    if (image != NULL)
        memcpy(PyArray_DATA((PyArrayObject *)image), rgba, (size_t)w * (size_t)h * 4);
    free(rgba);
    return image;
}

#else /* no renderer */

static PyObject *unsupported(void) {
    return pbfpy_raise(PBF_ERR_UNSUPPORTED,
                       "this pbf module was built without the renderer (it needs EGL, libgl-dev "
                       "and libpng-dev when pip builds it: scripts/install-deps.sh)");
}

static int renderer_init(pbfpy_renderer *self, PyObject *args, PyObject *kwargs) {
    (void)self, (void)args, (void)kwargs;
    unsupported();
    return -1;
}
static void renderer_free(pbfpy_renderer *self) { (void)self; }
static PyObject *renderer_render(pbfpy_renderer *self, PyObject *args, PyObject *kwargs) {
    (void)self, (void)args, (void)kwargs;
    return unsupported();
}
static PyObject *renderer_settings(pbfpy_renderer *self, PyObject *unused) {
    (void)self, (void)unused;
    return unsupported();
}
static PyObject *renderer_set(pbfpy_renderer *self, PyObject *args, PyObject *kwargs) {
    (void)self, (void)args, (void)kwargs;
    return unsupported();
}
static PyObject *renderer_timings(pbfpy_renderer *self, PyObject *unused) {
    (void)self, (void)unused;
    return unsupported();
}
static PyObject *get_description(pbfpy_renderer *self, void *c) {
    (void)self, (void)c;
    return unsupported();
}
PyObject *pbfpy_write_png(PyObject *module, PyObject *args, PyObject *kwargs) {
    (void)module, (void)args, (void)kwargs;
    return unsupported();
}
PyObject *pbfpy_read_png(PyObject *module, PyObject *arg) {
    (void)module, (void)arg;
    return unsupported();
}

#endif

static void renderer_dealloc(pbfpy_renderer *self) {
    renderer_free(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *renderer_close(pbfpy_renderer *self, PyObject *unused) {
    (void)unused;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Renderer.close: the renderer is busy");
        return NULL;
    }
    renderer_free(self);
    Py_RETURN_NONE;
}

static PyObject *renderer_exit(pbfpy_renderer *self, PyObject *args) {
    (void)args;
    return renderer_close(self, NULL);
}

static PyGetSetDef renderer_getset[] = {
    {"description", (getter)get_description, NULL,
     "The GL context: 'EGL device: llvmpipe (...), OpenGL 4.5 (Core Profile) Mesa ...'.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef renderer_methods[] = {
    {"render", (PyCFunction)(void (*)(void))renderer_render, METH_VARARGS | METH_KEYWORDS,
     "render($self, /, world, camera=None, *, alpha=False)\n--\n\n"
     "Draws the world (particles, domain, colliders, the tool) and returns the image, uint8\n"
     "(height, width, 3) RGB, top row first ((height, width, 4) RGBA with alpha=True).\n"
     "camera: None (a default camera framing the domain), a pbf.Scene (its camera) or a\n"
     "dict {'position': (x, y, z), 'target': (x, y, z), 'fov': degrees}."},
    {"settings", (PyCFunction)renderer_settings, METH_NOARGS,
     "settings($self, /)\n--\n\nThe render def as a dict (the keyword arguments of Renderer)."},
    {"set", (PyCFunction)(void (*)(void))renderer_set, METH_VARARGS | METH_KEYWORDS,
     "set($self, /, **fields)\n--\n\nChanges render settings (a new size reallocates the "
     "targets)."},
    {"timings", (PyCFunction)renderer_timings, METH_NOARGS,
     "timings($self, /)\n--\n\nGPU milliseconds of each pass of the last frame (a dict)."},
    {"close", (PyCFunction)renderer_close, METH_NOARGS,
     "close($self, /)\n--\n\nFrees the renderer's GL resources now."},
    {"__enter__", (PyCFunction)pbfpy_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)renderer_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject pbfpy_renderer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pbf.Renderer",
    .tp_basicsize = sizeof(pbfpy_renderer),
    .tp_dealloc = (destructor)renderer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Renderer(**settings)\n--\n\n"
              "The OpenGL renderer on a headless EGL context (docs/rendering.md): Mesa's\n"
              "llvmpipe on a machine without a GPU, the GPU where there is one. settings: the\n"
              "fields of pbf_render_def: width, height (default 1280x720), look ('fluid' or\n"
              "'spheres'), color ('uniform', 'speed', 'density'), color_min, color_max,\n"
              "radius_scale, fluid_radius_scale, smooth_iterations, smooth_radius,\n"
              "smooth_scale, smooth_depth, absorption, fluid_color, min_transmission,\n"
              "refraction, ior, sphere_color, floor, domain_edges, passes. Renderers are used\n"
              "from the thread that made the first one. Raises pbf.NoDeviceError (or another\n"
              "pbf.Error) when no EGL context can be made, pbf.UnsupportedError when the module\n"
              "was built without the renderer.",
    .tp_methods = renderer_methods,
    .tp_getset = renderer_getset,
    .tp_init = (initproc)renderer_init,
    .tp_new = PyType_GenericNew,
};
