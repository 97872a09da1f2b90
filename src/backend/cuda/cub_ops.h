/* CUB primitives used by the CUDA backend, compiled apart in cub_ops.cu (C++ only, internal).
 * All take CUB's usual two-phase form: with temp == NULL they only store the scratch bytes
 * they need in *temp_bytes. None allocates or synchronises, so all can be captured into a
 * CUDA graph. */
#ifndef PBF_CUDA_CUB_OPS_H
#define PBF_CUDA_CUB_OPS_H

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

/* out[i] = in[0] + ... + in[i-1] for i < n (out[0] = 0). */
cudaError_t pbf_cub_exclusive_sum(void *temp, size_t *temp_bytes, const uint32_t *in, uint32_t *out,
                                  int n, cudaStream_t stream);

/* The same over 64-bit counts (the diffuse particles' spawn counts, src/backend/cuda/diffuse.cu:
 * their sum over millions of particles may pass 2^32). */
cudaError_t pbf_cub_exclusive_sum64(void *temp, size_t *temp_bytes, const unsigned long long *in,
                                    unsigned long long *out, int n, cudaStream_t stream);

/* Stable LSD radix sort of (key, value) pairs on the low `bits` bits of the keys. */
cudaError_t pbf_cub_sort_pairs(void *temp, size_t *temp_bytes, const uint32_t *keys_in,
                               uint32_t *keys_out, const uint32_t *values_in, uint32_t *values_out,
                               int n, int bits, cudaStream_t stream);

/* The same for 64-bit keys and int32 values (the surface anisotropy's cell keys,
 * src/backend/cuda/anisotropy.cu): stable, on the low `bits` bits. */
cudaError_t pbf_cub_sort_pairs64(void *temp, size_t *temp_bytes, const uint64_t *keys_in,
                                 uint64_t *keys_out, const int32_t *values_in, int32_t *values_out,
                                 int n, int bits, cudaStream_t stream);

#endif
