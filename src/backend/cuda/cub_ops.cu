/* CUB primitives of the CUDA backend (see cub_ops.h). In their own translation unit so that
 * the CUB instantiations (the slow part of the nvcc build) compile in parallel with the backend's
 * other sources
 * and only when they change. */
#include "cub_ops.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

cudaError_t pbf_cub_exclusive_sum(void *temp, size_t *temp_bytes, const uint32_t *in, uint32_t *out,
                                  int n, cudaStream_t stream) {
    return cub::DeviceScan::ExclusiveSum(temp, *temp_bytes, in, out, n, stream);
}

cudaError_t pbf_cub_exclusive_sum64(void *temp, size_t *temp_bytes, const unsigned long long *in,
                                    unsigned long long *out, int n, cudaStream_t stream) {
    return cub::DeviceScan::ExclusiveSum(temp, *temp_bytes, in, out, n, stream);
}

cudaError_t pbf_cub_sort_pairs(void *temp, size_t *temp_bytes, const uint32_t *keys_in,
                               uint32_t *keys_out, const uint32_t *values_in, uint32_t *values_out,
                               int n, int bits, cudaStream_t stream) {
    return cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, keys_in, keys_out, values_in,
                                           values_out, n, 0, bits, stream);
}

cudaError_t pbf_cub_sort_pairs64(void *temp, size_t *temp_bytes, const uint64_t *keys_in,
                                 uint64_t *keys_out, const int32_t *values_in, int32_t *values_out,
                                 int n, int bits, cudaStream_t stream) {
    return cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, keys_in, keys_out, values_in,
                                           values_out, n, 0, bits, stream);
}
