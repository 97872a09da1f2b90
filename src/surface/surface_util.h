/* Shared pieces of the surface reconstruction (src/surface/): not part of the public API. */
#ifndef PBF_SURFACE_UTIL_H
#define PBF_SURFACE_UTIL_H

#include <stddef.h>

#include "anisotropy_math.h" /* surface_aniso_params */
#include "pbf/surface.h"

/* Threads for the OpenMP loops: def->threads, or OpenMP's default when 0. */
int surface_threads(const pbf_surface_def *def);
/* snprintf into err (when not NULL). */
void surface_format(char *err, size_t err_size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Index of the first particle with a non-finite coordinate, or -1. */
int surface_find_nonfinite(const float *positions, int count, int threads);
/* The anisotropy of pbf_surface_anisotropy for a checked def and finite positions; both
 * outputs required. */
pbf_status surface_anisotropy_run(const pbf_surface_def *def, const float *positions, int count,
                                  float *centers, float *axes, char *err, size_t err_size);
/* The parameters of the anisotropy's passes for a checked def and the particles' bounding box
 * [lo, hi] (m): the one place that derives them, for the CPU (surface_anisotropy_run) and the
 * GPU (anisotropy_gpu.c). For the isotropic kernel only h is set. Fails with
 * PBF_ERR_INVALID_ARG and a message when the particles spread over 2^20 cells or more along an
 * axis (a particle far away from the others). */
pbf_status surface_anisotropy_setup(const pbf_surface_def *def, const double lo[3],
                                    const double hi[3], surface_aniso_params *p, char *err,
                                    size_t err_size);
/* Largest eigenvalues first: symmetric 3x3 m (row-major, double) -> values[3] and unit
 * eigenvectors as the columns of vectors (row-major): surface_aniso_eigen_sym3 of
 * anisotropy_math.h (cyclic Jacobi), as a function for the C callers. */
void surface_eigen_sym3(const double m[9], double values[3], double vectors[9]);

#endif
