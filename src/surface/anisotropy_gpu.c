/* pbf_surface_gpu_* (include/pbf/surface.h): the anisotropy of particles in device memory.
 *
 * The host's part: check the def and the arguments as pbf_surface_anisotropy does, ask the
 * device for the bounding box (and the first non-finite position), derive the grid and the
 * parameters with the CPU's own code (surface_anisotropy_setup), and run the device passes
 * (src/backend/cuda/anisotropy.cu, through its C ABI src/backend/cuda/anisotropy.h).
 *
 * This file is in the core library in every build. Without the CUDA backend (PBF_HAVE_CUDA
 * undefined: no nvcc, the sanitizer and fuzzer builds) the functions still link and say so. */
#include <stddef.h>

#include "surface_util.h"

#ifdef PBF_HAVE_CUDA
#include "cuda/anisotropy.h"
#endif

#define NOT_BUILT "this pbf was built without the CUDA backend (no GPU anisotropy)"

pbf_status pbf_surface_gpu_create(pbf_surface_gpu **out, char *err, size_t err_size) {
    if (out == NULL) {
        surface_format(err, err_size, "pbf_surface_gpu_create: out is NULL");
        return PBF_ERR_INVALID_ARG;
    }
    *out = NULL;
#ifdef PBF_HAVE_CUDA
    return pbf_cuda_surface_create(out, err, err_size);
#else
    surface_format(err, err_size, "pbf_surface_gpu_create: " NOT_BUILT);
    return PBF_ERR_UNSUPPORTED;
#endif
}

void pbf_surface_gpu_destroy(pbf_surface_gpu *g) {
#ifdef PBF_HAVE_CUDA
    pbf_cuda_surface_destroy(g);
#else
    (void)g; /* never created */
#endif
}

pbf_status pbf_surface_gpu_anisotropy(pbf_surface_gpu *g, const pbf_surface_def *def,
                                      const float *positions, int count, float *centers,
                                      float *axes, char *err, size_t err_size) {
#ifdef PBF_HAVE_CUDA
    pbf_status st = pbf_surface_check_def(def, err, err_size);
    if (st != PBF_OK) return st;
    if (g == NULL || count < 0 || (count > 0 && positions == NULL)) {
        surface_format(err, err_size,
                       "surface anisotropy on the GPU: %d particles at %p with scratch %p", count,
                       (const void *)positions, (const void *)g);
        return PBF_ERR_INVALID_ARG;
    }
    if (count == 0) return PBF_OK;
    /* the non-finite check: the CPU entry's, on the device (for the isotropic kernel too) */
    pbf_cuda_surface_box b;
    st = pbf_cuda_surface_bounds(g, positions, count, &b, err, err_size);
    if (st != PBF_OK) return st;
    if (b.bad >= 0) {
        surface_format(err, err_size,
                       "particle %d has a non-finite position (%g, %g, %g): no anisotropy from "
                       "NaN or infinity",
                       b.bad, (double)b.bad_position[0], (double)b.bad_position[1],
                       (double)b.bad_position[2]);
        return PBF_ERR_INVALID_ARG;
    }
    const double lo[3] = {b.lo[0], b.lo[1], b.lo[2]}, hi[3] = {b.hi[0], b.hi[1], b.hi[2]};
    surface_aniso_params params;
    st = surface_anisotropy_setup(def, lo, hi, &params, err, err_size);
    if (st != PBF_OK) return st;
    return pbf_cuda_surface_anisotropy(g, def, &params, positions, count, centers, axes, err,
                                       err_size);
#else
    (void)g, (void)def, (void)positions, (void)count, (void)centers, (void)axes;
    surface_format(err, err_size, "pbf_surface_gpu_anisotropy: " NOT_BUILT);
    return PBF_ERR_UNSUPPORTED;
#endif
}
