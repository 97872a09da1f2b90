/* The energy audit on the CUDA backend (backend_internal.h, docs/cuda.md): the sums of
 * energy_audit.c's energy(), Σ |v|²/2 and Σ g·x over the particles, at the call's start and at
 * the end of each stage of every substep, each particle's terms from kernels.h ("The energy
 * audit"), reduced in a fixed tree. The host (world_cuda.c) turns each pair into m (Σ|v|²/2 − Σ
 * g·x) and books it with energy_audit.c's pbf__energy_book, as the CPU's marks do. */
#include "backend_internal.h"

namespace {

/* Σ |v|²/2 into sum, Σ g·x into sum2, first level: the velocity is vel's, or (pos − x_old)/dt
 * when vel is NULL, plus dv's when dv is not NULL. */
__global__ void __launch_bounds__(BLOCK)
    k_energy(int n, const pbf_cuda_substep *S, const float *__restrict__ pos,
             const float *__restrict__ vel, const float *__restrict__ x_old,
             const float *__restrict__ dv, Acc *parts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = acc_identity();
    if (i < n) {
        const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
        pbf_v3 x = v3_load(pos, i), v = pbf_energy_velocity(x, vel, x_old, dv, i, P.inv_dt);
        acc.sum = pbf_energy_kinetic(v);
        acc.sum2 = pbf_energy_height(P.gravity, x);
    }
    block_store(acc, parts);
}

__global__ void __launch_bounds__(FINAL) k_energy_final(int nparts, const Acc *parts, double *out) {
    Acc a = reduce_parts<FINAL>(nparts, parts, acc_identity());
    if (threadIdx.x != 0) return;
    out[0] = a.sum;
    out[1] = a.sum2;
}

} // namespace

namespace pbf_cu {

cudaError_t reserve_energy(pbf_cuda *c, int marks) {
    if (c->energy_part_capacity < c->capacity) {
        invalidate(c); /* the graphs hold the old pointers */
        energy_free(c);
        CK(dalloc(c, &c->energy_parts, (size_t)blocks_for(c->capacity)));
        c->energy_part_capacity = c->capacity;
    }
    if (c->energy_capacity < 2 * marks) {
        invalidate(c);
        dfree(&c->d_energy);
        if (c->h_energy) cudaFreeHost(c->h_energy);
        c->h_energy = nullptr;
        c->energy_capacity = 0;
        CK(dalloc(c, &c->d_energy, 2 * (size_t)marks));
        CK(cudaMallocHost((void **)&c->h_energy, 2 * (size_t)marks * sizeof(double)));
        c->energy_capacity = 2 * marks;
    }
    return cudaSuccess;
}

cudaError_t enqueue_energy(pbf_cuda *c, int slot, const float *pos, const float *vel,
                           const float *x_old, const float *dv, const pbf_cuda_substep *S) {
    const int n = c->count, nb = blocks_for(n);
    const char *stage = c->stage;
    c->stage = "energy audit";
    k_energy<<<nb, BLOCK, 0, c->stream>>>(n, S, pos, vel, x_old, dv, c->energy_parts);
    CK(cudaGetLastError());
    k_energy_final<<<1, FINAL, 0, c->stream>>>(nb, c->energy_parts, c->d_energy + 2 * slot);
    CK(cudaGetLastError());
    c->stage = stage;
    return cudaSuccess;
}

} // namespace pbf_cu
