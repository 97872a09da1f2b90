/* The OpenGL half of the renderer's CUDA interop (pbf/render_cuda.h): the vertex buffers that
 * CUDA writes, grown as the particle count grows and registered again when they are, and the
 * scene pointed at them. The CUDA half (cuda_interop_device.cu) fills them. Without the CUDA
 * backend (PBF_RENDER_CUDA undefined) every entry point says so. */
#include <stdlib.h>
#include <string.h>

#include "pbf/render_cuda.h"
#include "util.h"

#ifdef PBF_RENDER_CUDA

#include "cuda_interop_device.h"
#include "gl.h"

struct pbf_render_cuda {
    rc_device *dev;
    GLuint buffers[RC_SLOTS];
    size_t bytes[RC_SLOTS]; /* each buffer's storage; 0 before the first fill */
};

/* Bytes per particle of each slot: positions, colour value, centre, axes. */
static const size_t slot_bytes[RC_SLOTS] = {3 * sizeof(float), sizeof(float), 3 * sizeof(float),
                                            9 * sizeof(float)};

pbf_status pbf_render_cuda_create(pbf_render_cuda **out, char *err, size_t err_size) {
    if (out == NULL) {
        pbf_render_set_error(err, err_size, "pbf_render_cuda_create: out is NULL");
        return PBF_ERR_INVALID_ARG;
    }
    *out = NULL;
    pbf_render_cuda *rc = calloc(1, sizeof *rc);
    if (rc == NULL) {
        pbf_render_set_error(err, err_size, "out of memory");
        return PBF_ERR_OUT_OF_MEMORY;
    }
    const char *name = (const char *)glGetString(GL_RENDERER);
    pbf_status st =
        rc_device_create(name != NULL ? name : "no renderer name", &rc->dev, err, err_size);
    if (st != PBF_OK) {
        free(rc);
        return st;
    }
    glGenBuffers(RC_SLOTS, rc->buffers);
    *out = rc;
    return PBF_OK;
}

void pbf_render_cuda_destroy(pbf_render_cuda *rc) {
    if (rc == NULL) return;
    rc_device_destroy(rc->dev); /* unregisters the buffers before GL deletes them */
    glDeleteBuffers(RC_SLOTS, rc->buffers);
    free(rc);
}

pbf_status pbf_render_cuda_snapshot(pbf_render_cuda *rc, const pbf_device_view *view, char *err,
                                    size_t err_size) {
    if (rc == NULL || view == NULL) {
        pbf_render_set_error(err, err_size, "pbf_render_cuda_snapshot: NULL argument");
        return PBF_ERR_INVALID_ARG;
    }
    return rc_device_snapshot(rc->dev, view, err, err_size);
}

/* Storage for count particles in slot, with a quarter to spare. CUDA holds on to a registered
 * buffer's storage, so the slot is released before GL reallocates it and registered again. */
static pbf_status reserve(pbf_render_cuda *rc, int slot, int count, char *err, size_t err_size) {
    const size_t need = slot_bytes[slot] * (size_t)count;
    if (rc->bytes[slot] > 0 && need <= rc->bytes[slot]) return PBF_OK;
    size_t cap = need + need / 4;
    if (cap < 1024) cap = 1024;
    pbf_status st = rc_device_register(rc->dev, slot, 0, err, err_size);
    if (st != PBF_OK) return st;
    rc->bytes[slot] = 0;
    while (glGetError() != GL_NO_ERROR) {
    }
    glBindBuffer(GL_ARRAY_BUFFER, rc->buffers[slot]);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)cap, NULL, GL_DYNAMIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    if (glGetError() != GL_NO_ERROR) {
        pbf_render_set_error(err, err_size,
                             "CUDA–OpenGL interop: OpenGL could not allocate %zu bytes for %d "
                             "particles",
                             cap, count);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    st = rc_device_register(rc->dev, slot, rc->buffers[slot], err, err_size);
    if (st == PBF_OK) rc->bytes[slot] = cap;
    return st;
}

pbf_status pbf_render_cuda_fill(pbf_render_cuda *rc, const pbf_renderer *r,
                                const pbf_device_view *view, pbf_render_scene *s, char *err,
                                size_t err_size) {
    if (rc == NULL || r == NULL || s == NULL) {
        pbf_render_set_error(err, err_size, "pbf_render_cuda_fill: NULL argument");
        return PBF_ERR_INVALID_ARG;
    }
    if (!(s->particle_radius > 0.0f)) {
        pbf_render_set_error(err, err_size,
                             "pbf_render_cuda_fill: the scene's particle radius %g is not "
                             "positive",
                             (double)s->particle_radius);
        return PBF_ERR_INVALID_ARG;
    }
    pbf_device_view snapshot;
    if (view == NULL) {
        snapshot = rc_device_snapshot_view(rc->dev);
        view = &snapshot;
    }
    /* What the arrays' path would compute from the host arrays (renderer.c: compute_scalars,
     * upload_anisotropy). */
    const pbf_render_def *d = pbf_renderer_get_def(r);
    int mode = RC_SCALARS_NONE;
    if (d->look == PBF_LOOK_SPHERES && d->color == PBF_COLOR_SPEED) mode = RC_SCALARS_SPEED;
    if (d->look == PBF_LOOK_SPHERES && d->color == PBF_COLOR_DENSITY) mode = RC_SCALARS_DENSITY;
    const int ellipsoids = d->look == PBF_LOOK_FLUID && d->fluid_splats == PBF_SPLAT_ELLIPSOID;
    const int want[RC_SLOTS] = {1, mode != RC_SCALARS_NONE, ellipsoids, ellipsoids};
    for (int k = 0; k < RC_SLOTS; ++k) {
        if (!want[k]) continue;
        pbf_status st = reserve(rc, k, view->count, err, err_size);
        if (st != PBF_OK) return st;
    }
    pbf_surface_def sd = pbf_default_surface_def();
    sd.particle_radius = s->particle_radius;
    float top = 0.0f;
    pbf_status st =
        rc_device_fill(rc->dev, view, mode, ellipsoids ? &sd : NULL, &top, err, err_size);
    if (st != PBF_OK) return st;
    s->particle_count = view->count;
    s->positions = s->velocities = s->densities = NULL;
    s->phases = NULL;
    s->gl_positions = rc->buffers[RC_POSITIONS];
    s->gl_scalars = mode != RC_SCALARS_NONE ? rc->buffers[RC_SCALARS] : 0;
    s->gl_centers = ellipsoids ? rc->buffers[RC_CENTERS] : 0;
    s->gl_axes = ellipsoids ? rc->buffers[RC_AXES] : 0;
    const float rho0 = s->rest_density > 0.0f ? s->rest_density : 1000.0f;
    s->gl_scalar_range[0] = mode == RC_SCALARS_DENSITY ? 0.9f * rho0 : 0.0f;
    s->gl_scalar_range[1] = mode == RC_SCALARS_SPEED     ? (top > 1e-6f ? top : 1e-6f)
                            : mode == RC_SCALARS_DENSITY ? 1.1f * rho0
                                                         : 1.0f;
    return PBF_OK;
}

#else /* no CUDA backend in this build */

static const char no_cuda[] =
    "CUDA–OpenGL interop: this pbf was built without the CUDA backend; draw from host memory "
    "(pbf_world_view)";

pbf_status pbf_render_cuda_create(pbf_render_cuda **out, char *err, size_t err_size) {
    if (out != NULL) *out = NULL;
    pbf_render_set_error(err, err_size, "%s", no_cuda);
    return PBF_ERR_UNSUPPORTED;
}

void pbf_render_cuda_destroy(pbf_render_cuda *rc) { (void)rc; }

pbf_status pbf_render_cuda_snapshot(pbf_render_cuda *rc, const pbf_device_view *view, char *err,
                                    size_t err_size) {
    (void)rc;
    (void)view;
    pbf_render_set_error(err, err_size, "%s", no_cuda);
    return PBF_ERR_UNSUPPORTED;
}

pbf_status pbf_render_cuda_fill(pbf_render_cuda *rc, const pbf_renderer *r,
                                const pbf_device_view *view, pbf_render_scene *s, char *err,
                                size_t err_size) {
    (void)rc;
    (void)r;
    (void)view;
    (void)s;
    pbf_render_set_error(err, err_size, "%s", no_cuda);
    return PBF_ERR_UNSUPPORTED;
}

#endif
