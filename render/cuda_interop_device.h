/* The CUDA half of the renderer's interop (cuda_interop.c is the OpenGL half): registering the
 * GL buffers with CUDA, the snapshot of a world's device arrays, and filling the mapped buffers
 * on the device. A plain C ABI, so that cuda_interop.c never includes CUDA's GL header (which
 * pulls in the legacy <GL/gl.h>, at odds with the renderer's core-profile loader, gl.h).
 *
 * Every function returns a pbf_status and writes a message into err; nothing prints. */
#ifndef PBF_RENDER_CUDA_INTEROP_DEVICE_H
#define PBF_RENDER_CUDA_INTEROP_DEVICE_H

#include <stddef.h>

#include "pbf/pbf.h"
#include "pbf/surface.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The GL buffers CUDA writes, one slot each. */
enum { RC_POSITIONS, RC_SCALARS, RC_CENTERS, RC_AXES, RC_SLOTS };

/* What the colour values are (render.c: compute_scalars' rules). */
enum { RC_SCALARS_NONE, RC_SCALARS_SPEED, RC_SCALARS_DENSITY };

typedef struct rc_device rc_device;

/* With the GL context current: finds the CUDA device it runs on (PBF_ERR_NO_DEVICE with the
 * reason when none: no driver, or a context on another GPU or on Mesa). gl_renderer names the
 * context's renderer in that message. */
pbf_status rc_device_create(const char *gl_renderer, rc_device **out, char *err, size_t err_size);
void rc_device_destroy(rc_device *d);
/* The CUDA device ordinal of the context. */
int rc_device_ordinal(const rc_device *d);
/* Registers GL buffer `buffer` (0: none) in slot, releasing what the slot held. */
pbf_status rc_device_register(rc_device *d, int slot, unsigned buffer, char *err, size_t err_size);
/* A copy of the view's arrays in memory of d's own, valid after the world's next step. Any
 * thread (no GL); synchronous. */
pbf_status rc_device_snapshot(rc_device *d, const pbf_device_view *view, char *err,
                              size_t err_size);
/* The snapshot as a view. */
pbf_device_view rc_device_snapshot_view(const rc_device *d);
/* Maps the registered buffers and writes them from view: positions; the colour values of
 * scalar_mode (the largest speed into *max_speed); with surface not NULL the ellipsoids
 * (pbf_surface_gpu_anisotropy). Unmaps before it returns: GL may draw them then. */
pbf_status rc_device_fill(rc_device *d, const pbf_device_view *view, int scalar_mode,
                          const pbf_surface_def *surface, float *max_speed, char *err,
                          size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* PBF_RENDER_CUDA_INTEROP_DEVICE_H */
