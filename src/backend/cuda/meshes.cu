/* Mesh solids on the CUDA backend (backend_internal.h, docs/cuda.md): the sweep of every
 * particle's predicted path through them (meshes.c: pbf__meshes_substep_begin). The passes read
 * a mesh solid through the solids' constant memory of density.cu and velocity.cu like any solid;
 * its field pointer there is its field's device copy (memory.cu: pbf_cuda_field; world_cuda.c
 * translates the host's pointers). */
#include "backend_internal.h"

namespace {

/* The sweep's frames of the substeps in progress: the mesh solids at the substep's start
 * (entries 0 ..), then at its end (PBF_MAX_SOLIDS ..). */
__constant__ pbf_solid c_sweep[2 * PBF_MAX_SOLIDS];

/* meshes.c: pbf__meshes_substep_begin's loop, the particle's path from x to its prediction p */
__global__ void __launch_bounds__(BLOCK)
    k_sweep(int n, int count, const pbf_cuda_substep *S, const float *__restrict__ x,
            float *__restrict__ p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float r = S->params.radius; /* the particle radius (solver.c: pbf__init_params) */
    v3_store(p, i,
             pbf_mesh_sweep_path(v3_load(x, i), v3_load(p, i), c_sweep, c_sweep + PBF_MAX_SOLIDS,
                                 count, r));
}

} // namespace

namespace pbf_cu {

cudaError_t meshes_upload_sweep(pbf_cuda *c, int count) {
    const size_t bytes = (size_t)count * sizeof(pbf_solid);
    cudaError_t e =
        cudaMemcpyToSymbolAsync(c_sweep, c->h_sweep, bytes, 0, cudaMemcpyHostToDevice, c->stream);
    if (e != cudaSuccess) return e;
    return cudaMemcpyToSymbolAsync(c_sweep, c->h_sweep + PBF_MAX_SOLIDS, bytes,
                                   PBF_MAX_SOLIDS * sizeof(pbf_solid), cudaMemcpyHostToDevice,
                                   c->stream);
}

cudaError_t enqueue_sweep(pbf_cuda *c, const pbf_cuda_step_in *in, int sub) {
    if (in->sweep_count <= 0) return cudaSuccess;
    const int n = c->count;
    c->stage = "mesh sweep";
    k_sweep<<<blocks_for(n), BLOCK, 0, c->stream>>>(n, in->sweep_count, c->d_sub + sub, buf(c, R_X),
                                                    buf(c, R_P));
    return cudaGetLastError();
}

} // namespace pbf_cu
