/* pbf — Position Based Fluids. Base macros shared by the public API and the kernels.
 *
 * These headers compile as C11 and as CUDA C++: no `restrict` keyword (use PBF_RESTRICT),
 * no designated initialisers out of order, no C-only constructs. */
#ifndef PBF_BASE_H
#define PBF_BASE_H

#define PBF_VERSION_MAJOR 0
#define PBF_VERSION_MINOR 1
#define PBF_VERSION_PATCH 0
#define PBF_VERSION_STRING "0.1.0"

#if defined(_WIN32) && defined(PBF_SHARED)
#define PBF_API __declspec(dllexport)
#elif defined(__GNUC__)
#define PBF_API __attribute__((visibility("default")))
#else
#define PBF_API
#endif

/* Host/device qualifier for the one copy of the per-particle math (src/math/kernels.h):
 * empty in C, __host__ __device__ under nvcc. */
#ifdef __CUDACC__
#define PBF_HD __host__ __device__
#define PBF_RESTRICT __restrict__
#elif defined(__cplusplus)
#define PBF_HD
#define PBF_RESTRICT __restrict
#else
#define PBF_HD
#define PBF_RESTRICT restrict
#endif

#endif /* PBF_BASE_H */
