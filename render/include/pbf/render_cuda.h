/* pbf render — a CUDA world's particles drawn straight from device memory (CUDA–OpenGL
 * interop): the positions, the colour values and the ellipsoid splats are written into the
 * renderer's vertex buffers on the GPU, with no trip through host memory.
 *
 * Use, on the thread where the renderer's GL context is current:
 *
 *     pbf_render_cuda *rc = NULL;
 *     if (pbf_render_cuda_create(&rc, err, sizeof err) != PBF_OK) ... // the host path instead
 *     each frame, after pbf_world_step:
 *         pbf_device_view v;
 *         pbf_world_device_view(world, &v, err, sizeof err);
 *         pbf_render_scene s = ...;                 // particle_radius, rest_density, camera...
 *         pbf_render_cuda_fill(rc, renderer, &v, &s, err, sizeof err);  // sets s.gl_*
 *         pbf_renderer_draw(renderer, &s, err, sizeof err);
 *     pbf_render_cuda_destroy(rc);                  // context still current
 *
 * A viewer that steps on one thread and draws on another takes a snapshot on the stepping
 * thread after each step (pbf_render_cuda_snapshot: a copy on the device, any thread, no GL)
 * and fills from it on the drawing thread (view NULL); the two calls must not overlap (hold
 * one lock around both).
 *
 * The GL context must run on the CUDA device of the world: the headless context
 * (pbf_gl_context_create_headless) picks the EGL device of CUDA device 0 first, the device the
 * CUDA backend uses. Built without the CUDA backend, pbf_render_cuda_create returns
 * PBF_ERR_UNSUPPORTED; without a CUDA device under the context (Mesa, another GPU),
 * PBF_ERR_NO_DEVICE with the reason. Nothing here prints or exits. */
#ifndef PBF_RENDER_CUDA_H
#define PBF_RENDER_CUDA_H

#include <stddef.h>

#include "pbf/pbf.h"
#include "pbf/render.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pbf_render_cuda pbf_render_cuda;

PBF_API pbf_status pbf_render_cuda_create(pbf_render_cuda **out, char *err, size_t err_size);
/* With the GL context current. NULL is ignored. */
PBF_API void pbf_render_cuda_destroy(pbf_render_cuda *rc);

/* Copies the view's arrays (device memory) into rc's own device memory, for a later
 * pbf_render_cuda_fill with view NULL. Synchronous. */
PBF_API pbf_status pbf_render_cuda_snapshot(pbf_render_cuda *rc, const pbf_device_view *view,
                                            char *err, size_t err_size);

/* Writes the particles of view (NULL: the last snapshot) into rc's GL buffers, growing them as
 * needed, and points s at them: s->particle_count and s->gl_* (pbf/render.h). What it writes
 * follows r's def as the arrays' path does: the speeds or densities for the spheres look's
 * colours (with the speed's range), and the ellipsoids (pbf_surface_gpu_anisotropy with the
 * default pbf_surface_def and s->particle_radius) for the fluid look's ellipsoid splats.
 * s->particle_radius must be set. */
PBF_API pbf_status pbf_render_cuda_fill(pbf_render_cuda *rc, const pbf_renderer *r,
                                        const pbf_device_view *view, pbf_render_scene *s, char *err,
                                        size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* PBF_RENDER_CUDA_H */
