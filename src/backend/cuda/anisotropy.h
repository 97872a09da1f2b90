/* The device side of pbf_surface_gpu_anisotropy (include/pbf/surface.h), in
 * src/backend/cuda/anisotropy.cu, behind a plain C ABI. Only built with the CUDA backend
 * (PBF_HAVE_CUDA); src/surface/anisotropy_gpu.c calls it: it checks the def and the arguments,
 * asks for the bounding box, derives the parameters on the host with the CPU's own code
 * (surface_anisotropy_setup) and then runs the passes. The per-particle math is
 * src/surface/anisotropy_math.h, the CPU's.
 *
 * Every function returns a pbf_status and writes a message into err (may be NULL); nothing
 * prints, nothing exits. A CUDA error becomes PBF_ERR_OUT_OF_MEMORY (device memory) or
 * PBF_ERR_NO_DEVICE, with a message that names the stage and the particle count. */
#ifndef PBF_CUDA_ANISOTROPY_H
#define PBF_CUDA_ANISOTROPY_H

#include <stddef.h>

#include "pbf/surface.h"
#include "surface/anisotropy_math.h" /* surface_aniso_params */

#ifdef __cplusplus
extern "C" {
#endif

/* A pbf_surface_gpu on the current CUDA device: PBF_ERR_NO_DEVICE with the reason where no
 * device can run this build's kernels (pbf_cuda_probe). */
pbf_status pbf_cuda_surface_create(pbf_surface_gpu **out, char *err, size_t err_size);
void pbf_cuda_surface_destroy(pbf_surface_gpu *g);

/* The bounding box of the positions and the first non-finite one. */
typedef struct pbf_cuda_surface_box {
    float lo[3], hi[3]; /* over the finite positions, m */
    int bad; /* the lowest particle index with a non-finite coordinate, or -1 */
    float bad_position[3]; /* its position (when bad >= 0) */
} pbf_cuda_surface_box;

/* The bounds of count > 0 positions (device memory, xyz-interleaved): a device reduction and
 * one small read back. Fails with PBF_ERR_INVALID_ARG when positions is host memory the device
 * cannot read. */
pbf_status pbf_cuda_surface_bounds(pbf_surface_gpu *g, const float *positions, int count,
                                   pbf_cuda_surface_box *out, char *err, size_t err_size);

/* The anisotropy of count > 0 finite positions for a checked def and the parameters that
 * surface_anisotropy_setup derived from it and the bounds: centers (3 floats a particle) and
 * axes (9) in device memory, either NULL (then written to scratch and dropped). Returns when
 * the results are written. */
pbf_status pbf_cuda_surface_anisotropy(pbf_surface_gpu *g, const pbf_surface_def *def,
                                       const surface_aniso_params *params, const float *positions,
                                       int count, float *centers, float *axes, char *err,
                                       size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
