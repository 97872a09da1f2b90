/* printf into an error buffer, for the CUDA library's sources (the backend's .cu files, anisotropy.cu). The
 * library links no other part of the core, so it has its own copy of the core's pbf__format.
 * Writes nothing when buf is NULL or size is 0. */
#ifndef PBF_CUDA_FORMAT_H
#define PBF_CUDA_FORMAT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void pbf_cuda_format(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif /* PBF_CUDA_FORMAT_H */
