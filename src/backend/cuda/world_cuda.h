/* The world's hooks into the CUDA backend (docs/cuda.md), for world.c, solver.c, particles.c,
 * emitter.c, diffuse.c, stats.c and io/checkpoint.c. Implemented in src/backend/cuda/world_cuda.c when the
 * backend is built
 * (PBF_HAVE_CUDA); otherwise the stubs below, and a CUDA world is never created.
 *
 * A CUDA world keeps its particle arrays in host memory too: the host copy is a cache, filled
 * from the device on demand (pbf__cuda_pull, before any read of w->x, w->v, w->density,
 * w->ids) and sent to the device before the next step after the host changed it
 * (pbf__cuda_touch, before any write). Stepping moves no particle data, but for the flow's
 * pass between substeps while emitters or sinks act (emitter.c pulls and touches). The diffuse
 * particles' set likewise (diffuse.c pulls before a read, pbf__cuda_touch_diffuse before a
 * write): it lives on the device, its count and counters come back with every step. */
#ifndef PBF_CUDA_WORLD_CUDA_H
#define PBF_CUDA_WORLD_CUDA_H

#include <stddef.h>

#include "pbf/pbf.h"

struct pbf_cuda_world; /* the world's CUDA state (world_cuda.c) */

#ifdef PBF_HAVE_CUDA

/* At world creation with PBF_BACKEND_CUDA: fails at once with PBF_ERR_NO_DEVICE and a clear
 * message where no device can be used. */
pbf_status pbf__cuda_attach(pbf_world *w, char *err, size_t err_size);
void pbf__cuda_detach(pbf_world *w);
/* Substeps first .. first + substeps − 1 of a CUDA world's step (first counts from the step's
 * start), each of dt_sub, and finish_profile (solver.c's pbf_world_step runs the rest of the
 * step: the profile, the modules' step hooks). */
pbf_status pbf__cuda_substeps(pbf_world *w, float dt_sub, int first, int substeps);
/* Makes the host arrays current (reads the device state back if a step changed it: the
 * particles and the diffuse set); on a device error the host keeps its last state and the
 * world's message says why. */
pbf_status pbf__cuda_pull(const pbf_world *w);
/* The host arrays are about to change: pull, then send them to the device before the next step. */
void pbf__cuda_touch(pbf_world *w);
/* The same for the diffuse set (and its def: its room on the device is the def's max_count). */
void pbf__cuda_touch_diffuse(pbf_world *w);
/* Device bytes of a CUDA world (0 on the CPU). */
size_t pbf__cuda_memory_bytes(const pbf_world *w);
/* pbf_world_device_view of a CUDA world: sends host changes to the device first. */
pbf_status pbf__cuda_device_view(const pbf_world *w, pbf_device_view *out, char *err,
                                 size_t err_size);
/* pbf_backend_info for PBF_BACKEND_CUDA. */
pbf_status pbf__cuda_info(char *buf, size_t size);

#else

#include <stdio.h>

static inline pbf_status pbf__cuda_attach(pbf_world *w, char *err, size_t err_size) {
    (void)w;
    if (err && err_size) snprintf(err, err_size, "the CUDA backend is not built in");
    return PBF_ERR_UNSUPPORTED;
}
static inline void pbf__cuda_detach(pbf_world *w) { (void)w; }
static inline pbf_status pbf__cuda_substeps(pbf_world *w, float dt_sub, int first, int substeps) {
    (void)w;
    (void)dt_sub;
    (void)first;
    (void)substeps;
    return PBF_ERR_UNSUPPORTED;
}
static inline pbf_status pbf__cuda_pull(const pbf_world *w) {
    (void)w;
    return PBF_OK;
}
static inline void pbf__cuda_touch(pbf_world *w) { (void)w; }
static inline void pbf__cuda_touch_diffuse(pbf_world *w) { (void)w; }
static inline size_t pbf__cuda_memory_bytes(const pbf_world *w) {
    (void)w;
    return 0;
}
static inline pbf_status pbf__cuda_device_view(const pbf_world *w, pbf_device_view *out, char *err,
                                               size_t err_size) {
    (void)w;
    (void)out;
    if (err && err_size) snprintf(err, err_size, "the CUDA backend is not built in");
    return PBF_ERR_UNSUPPORTED;
}
static inline pbf_status pbf__cuda_info(char *buf, size_t size) {
    if (buf && size)
        snprintf(buf, size,
                 "the CUDA backend is not available in this build (nvcc was not found when it "
                 "was configured, or PBF_CUDA=OFF)");
    return PBF_ERR_UNSUPPORTED;
}

#endif

#endif /* PBF_CUDA_WORLD_CUDA_H */
