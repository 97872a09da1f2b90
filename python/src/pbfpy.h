/* The `pbf._core` extension: a thin CPython layer over the public C API (include/pbf/,
 * render/include/pbf/render.h). It holds no simulation logic: every call converts Python values
 * to the API's structs, calls the library, and converts the answer (or the library's status and
 * message, as an exception) back. docs/python.md documents the Python API.
 *
 * Files, dependencies pointing down:
 *   module.c                    the module: types, exceptions, functions
 *   world.c world_parts.c       pbf.World (world_parts.c: blocks, colliders, tool, probes;
 *     world_meshes.c            world_meshes.c: the mesh solids)
 *   batch.c                     pbf.WorldBatch: many small worlds (include/pbf/batch.h)
 *   scene.c checkpoint.c        pbf.Scene, pbf.Checkpoint
 *   render.c                    pbf.Renderer, PNG files
 *   methods.c                   what the objects' methods share: __enter__, the step loop
 *   results.c                   named-tuple results (Profile, Stats, ToolState, ...), files
 *   fields.c                    def structs <-> keyword arguments and dicts, vectors, arrays
 *   errors.c                    pbf.Error and its subclasses, one per pbf_status */
#ifndef PBFPY_H
#define PBFPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* numpy's C API: one table for the whole module, imported by module.c */
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL pbfpy_ARRAY_API
#ifndef PBFPY_MODULE_C
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "pbf/checkpoint.h"
#include "pbf/export.h"
#include "pbf/pbf.h"
#include "pbf/probes.h"
#include "pbf/scene.h"

/* ---- the objects ---------------------------------------------------------------------------- */

typedef struct pbfpy_scene {
    PyObject_HEAD pbf_scene *scene; /* malloc'd; never NULL in a live object */
} pbfpy_scene;

typedef struct pbfpy_checkpoint {
    PyObject_HEAD pbf_checkpoint *ck; /* NULL when closed */
} pbfpy_checkpoint;

typedef struct pbfpy_world {
    PyObject_HEAD pbf_world *world; /* NULL when closed */
    /* Set while a call runs with the GIL released (step, export, a render): then no other call
     * may touch the world. Read and written only with the GIL held. */
    int busy;
} pbfpy_world;

extern PyTypeObject pbfpy_scene_type; /* scene.c */
extern PyTypeObject pbfpy_checkpoint_type; /* checkpoint.c */
extern PyTypeObject pbfpy_world_type; /* world.c */
extern PyTypeObject pbfpy_batch_type; /* batch.c */
extern PyTypeObject pbfpy_renderer_type; /* render.c */

/* The world when it may be used now; NULL with ValueError (closed) or RuntimeError (busy in
 * another thread). */
static inline pbf_world *pbfpy_world_ready(pbfpy_world *self) {
    if (self->world == NULL) {
        PyErr_SetString(PyExc_ValueError, "the world is closed");
        return NULL;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "the world is busy in another thread (a step, an export or a render)");
        return NULL;
    }
    return self->world;
}

/* checkpoint.c: the open checkpoint, or NULL with ValueError when closed. */
const pbf_checkpoint *pbfpy_checkpoint_get(pbfpy_checkpoint *self);

/* world_parts.c: World methods for blocks, particles, colliders, the tool and probes. */
PyObject *pbfpy_world_add_block(pbfpy_world *self, PyObject *args, PyObject *kwargs);
PyObject *pbfpy_world_add_particles(pbfpy_world *self, PyObject *args, PyObject *kwargs);
PyObject *pbfpy_world_add_collider(pbfpy_world *self, PyObject *args, PyObject *kwargs);
PyObject *pbfpy_world_colliders(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_set_tool(pbfpy_world *self, PyObject *args, PyObject *kwargs);
PyObject *pbfpy_world_remove_tool(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_get_has_tool(pbfpy_world *self, void *closure);
PyObject *pbfpy_world_tool_settings(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_set_tool_pose(pbfpy_world *self, PyObject *position);
PyObject *pbfpy_world_tool_state(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_set_probes(pbfpy_world *self, PyObject *probes);
PyObject *pbfpy_world_probes(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_sample_probes(pbfpy_world *self, PyObject *unused);

/* world_meshes.c: the mesh solids' triangles and their placement now. */
PyObject *pbfpy_world_meshes(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_mesh_transforms(pbfpy_world *self, PyObject *unused);

/* mpi.c, in builds where the library has MPI (PBF_MPI), or mpi_none.c, where it has not (each
 * then raises pbf.UnsupportedError): World methods for a world split over MPI processes
 * (include/pbf/mpi.h) and the module's mpi_rank() and mpi_size(). pbfpy_have_mpi: which. */
extern const int pbfpy_have_mpi;
PyObject *pbfpy_world_split(pbfpy_world *self, PyObject *args, PyObject *kwargs);
PyObject *pbfpy_world_slab(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_cuts(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_halo(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_balance(pbfpy_world *self, PyObject *args, PyObject *kwargs);
PyObject *pbfpy_world_gather(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_gather_diffuse(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_world_totals(pbfpy_world *self, PyObject *unused);
PyObject *pbfpy_mpi_rank(PyObject *module, PyObject *unused);
PyObject *pbfpy_mpi_size(PyObject *module, PyObject *unused);

/* render.c: PNG files (module functions). */
PyObject *pbfpy_write_png(PyObject *module, PyObject *args, PyObject *kwargs);
PyObject *pbfpy_read_png(PyObject *module, PyObject *path);

/* ---- methods.c ------------------------------------------------------------------------------ */

/* __enter__ of every object with a close(): the object itself. */
PyObject *pbfpy_enter(PyObject *self, PyObject *unused);

/* One step of the object obj (a pbf_world, a pbf_world_batch) and the message of its last
 * failure. */
typedef pbf_status (*pbfpy_step_fn)(void *obj, float dt);
typedef const char *(*pbfpy_error_fn)(const void *obj);
/* step(dt, steps) once the object is ready: `steps` calls of step(obj, dt), each with the GIL
 * released and *busy set (no other call may touch obj meanwhile), checking for Ctrl-C between
 * steps. Returns None, or NULL with an exception set: a ValueError for steps < 0, the library's
 * status with error(obj), or the signal's. */
PyObject *pbfpy_run_steps(void *obj, int *busy, float dt, int steps, pbfpy_step_fn step,
                          pbfpy_error_fn error);

/* ---- results.c ------------------------------------------------------------------------------ */

/* Creates the named-tuple types and adds them to the module. */
int pbfpy_results_init(PyObject *module);
PyObject *pbfpy_profile(const pbf_profile *p);
PyObject *pbfpy_stats(const pbf_stats *s);
PyObject *pbfpy_tool_state(const pbf_tool_state *s);
PyObject *pbfpy_probe_sample(const pbf_probe_sample *s);
/* pbf.Slab, pbf.Halo and pbf.Balance: what include/pbf/mpi.h reports, in values that need no
 * mpi.h (pbfpy_balance_report holds pbf_mpi_balance's fields). */
typedef struct pbfpy_balance_report {
    double count_before, count_after, time;
    int moved;
    long long migrated;
    double wait, wait_least;
} pbfpy_balance_report;
PyObject *pbfpy_slab(double lo, double hi, int rank, int ranks);
PyObject *pbfpy_halo(int received, int sent, long long bytes_received);
PyObject *pbfpy_balance(const pbfpy_balance_report *b);
/* Copies the arrays into a new pbf.Particles. */
PyObject *pbfpy_particles(const pbf_particles *p);
/* read_particles(path): a module function. */
PyObject *pbfpy_read_particles(PyObject *module, PyObject *path);

/* ---- errors.c ------------------------------------------------------------------------------- */

/* Creates pbf.Error, its subclasses and pbf.SceneWarning and adds them to the module. */
int pbfpy_errors_init(PyObject *module);
/* Raises the exception class of `status` with the library's message; returns NULL. */
PyObject *pbfpy_raise(pbf_status status, const char *message);
/* The same, returning -1. */
int pbfpy_raise_int(pbf_status status, const char *message);
/* pbf.SceneWarning: what pbf_scene_check reports that does not stop a run. */
extern PyObject *pbfpy_scene_warning;

/* ---- fields.c ------------------------------------------------------------------------------- */

typedef enum pbfpy_type {
    PBFPY_FLOAT, /* float */
    PBFPY_INT, /* int */
    PBFPY_UINT32, /* uint32_t */
    PBFPY_BOOL, /* int used as a flag */
    PBFPY_VEC3, /* pbf_vec3, as (x, y, z) */
    PBFPY_RGB, /* float[3], as (r, g, b) */
    PBFPY_ENUM, /* an enum (stored as int), by name: names[value] */
    PBFPY_NAME /* char[size], NUL-terminated */
} pbfpy_type;

/* One field of a def struct, under the C field's name. */
typedef struct pbfpy_field {
    const char *name;
    pbfpy_type type;
    size_t offset;
    const char *const *names; /* PBFPY_ENUM: NULL-terminated, indexed by the enum value */
    size_t size; /* PBFPY_NAME: the buffer's size */
} pbfpy_field;

#define PBFPY_END                                                                                  \
    { NULL, PBFPY_FLOAT, 0, NULL, 0 }

/* Sets the fields named by the keys of `values` (a dict, may be NULL) on the struct at base. A
 * key that is not in the table is a TypeError listing the valid keys; a value of the wrong
 * type is a TypeError or ValueError naming `what` and the key. Ranges are the library's to
 * check. Keys in `skip` (NULL-terminated, may be NULL) are left to the caller. Returns 0, or
 * -1 with an exception set. */
int pbfpy_fields_set(void *base, const pbfpy_field *fields, const char *what, PyObject *values,
                     const char *const *skip);
/* dict[key] = value with a plain (not interned) key: PyDict_SetItemString interns the key,
 * and interned strings that die with the dict make the interpreter's table of them churn. */
int pbfpy_dict_set(PyObject *dict, const char *key, PyObject *value);
/* A new dict of every field of the struct at base. */
PyObject *pbfpy_fields_dict(const void *base, const pbfpy_field *fields);
/* The whole world def: its fields, 'solver' and 'wall_motion'. */
PyObject *pbfpy_world_def_dict(const pbf_world_def *def);

/* The enum value of a name in names, or -1 with a ValueError naming `what` and the choices. */
int pbfpy_enum_value(PyObject *name, const char *const *names, const char *what);
/* Vectors: any sequence of 3 numbers (a tuple, a list, a numpy array). */
int pbfpy_vec3_from(PyObject *obj, pbf_vec3 *out, const char *what);
PyObject *pbfpy_vec3_tuple(pbf_vec3 v);

/* A new C-contiguous numpy array (rows, cols), or (rows,) when cols is 0. */
PyObject *pbfpy_new_array(int type_num, int rows, int cols);
/* `out` when it is a writeable C-contiguous array of that type and shape (a new reference), a
 * new array when out is NULL or None, else NULL with a ValueError naming `what`. */
PyObject *pbfpy_out_array(PyObject *out, int type_num, int rows, int cols, const char *what);
/* An input array converted to that type, C-contiguous, of shape (N, cols) or (N,). */
PyArrayObject *pbfpy_in_array(PyObject *obj, int type_num, int cols, const char *what);

extern const char *const pbfpy_backend_names[];
extern const char *const pbfpy_neighbor_names[];
extern const char *const pbfpy_direction_names[];
extern const pbfpy_field pbfpy_solver_fields[];
extern const pbfpy_field pbfpy_world_fields[];
extern const pbfpy_field pbfpy_block_fields[];
extern const pbfpy_field pbfpy_collider_fields[];
extern const pbfpy_field pbfpy_tool_fields[];
extern const pbfpy_field pbfpy_probe_fields[];

#endif /* PBFPY_H */
