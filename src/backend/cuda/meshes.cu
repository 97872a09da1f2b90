/* Mesh solids on the CUDA backend (backend_internal.h, docs/cuda.md): the sweep of every
 * particle's predicted path through them (meshes.c: pbf__meshes_substep_begin), and the force
 * measurement after every Δp pass (meshes.c: pbf__meshes_after_delta), whose sums move the
 * floating bodies on the host (world_cuda.c). The passes read a mesh solid through the solids'
 * constant memory of density.cu and velocity.cu like any solid (and this file's own copy for the
 * force pass); its field pointer there is its field's device copy (memory.cu: pbf_cuda_field;
 * world_cuda.c translates the host's pointers). */
#include "backend_internal.h"

namespace {

/* The sweep's frames of the substeps in progress: the mesh solids at the substep's start
 * (entries 0 ..), then at its end (PBF_MAX_SOLIDS ..). */
__constant__ pbf_solid c_sweep[2 * PBF_MAX_SOLIDS];
/* The force measurement: the step's solids, each mesh's entry in them (-1: a sink) and its
 * position (the torques' origin). */
__constant__ pbf_solid c_solids[PBF_MAX_SOLIDS];
__constant__ int c_mesh_solid[PBF_MAX_MESHES];
__constant__ double c_mesh_position[3 * PBF_MAX_MESHES];

constexpr int MESH_FINAL = 256; /* threads of a mesh's final block (48-byte partials) */

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

/* meshes.c: pbf__meshes_after_delta, per particle: the mesh that takes its share of the solids'
 * push in the pass (x_old what the pass read, x_new its result, target its fluid target: the
 * Δp pass wrote it), and the share. */
__global__ void __launch_bounds__(BLOCK)
    k_mesh_share(int n, int m, int colliders, const pbf_cuda_substep *S,
                 const float *__restrict__ x_old, const float *__restrict__ x_new,
                 const float *__restrict__ target, float *__restrict__ share,
                 int32_t *__restrict__ owner) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    const int best =
        pbf_mesh_force_owner(v3_load(x_old, i), &P, c_solids, c_mesh_solid, m, colliders);
    owner[i] = best;
    if (best >= 0) v3_store(share, i, v3_sub(v3_load(x_new, i), v3_load(target, i)));
}

/* The sums of mesh blockIdx.y over the particles it takes, first level. */
__global__ void __launch_bounds__(BLOCK)
    k_mesh_sum(int n, const float *__restrict__ x_old, const float *__restrict__ share,
               const int32_t *__restrict__ owner, MeshAcc *parts) {
    const int k = (int)blockIdx.y, i = blockIdx.x * blockDim.x + threadIdx.x;
    MeshAcc acc = mesh_identity();
    if (i < n && owner[i] == k) {
        double d[3], t[3];
        pbf_mesh_force_terms(v3_load(share, i), v3_load(x_old, i), c_mesh_position + 3 * k, d, t);
        for (int q = 0; q < 3; ++q) acc.s[q] = d[q], acc.s[3 + q] = t[q];
    }
    block_store(acc, parts + (size_t)k * gridDim.x);
}

/* One block per mesh: the pass's sums times −m/dt² added to the substep's (meshes.c adds them
 * to the body's sub_force and sub_torque). */
__global__ void __launch_bounds__(MESH_FINAL)
    k_mesh_final(int nparts, const MeshAcc *parts, const pbf_cuda_substep *S, double *sums) {
    const int k = (int)blockIdx.x;
    MeshAcc a = reduce_parts<MESH_FINAL>(nparts, parts + (size_t)k * nparts, mesh_identity());
    if (threadIdx.x != 0) return;
    const pbf_params &P = S->params;
    const double scale = -(double)P.mass * (double)P.inv_dt * (double)P.inv_dt;
    for (int q = 0; q < 6; ++q) sums[6 * k + q] += scale * a.s[q];
}

} // namespace

namespace pbf_cu {

cudaError_t reserve_mesh_forces(pbf_cuda *c, const pbf_cuda_step_in *in, int solids) {
    const int m = in->mesh_count < PBF_MAX_MESHES ? in->mesh_count : PBF_MAX_MESHES;
    if (c->mesh_capacity < c->capacity || c->mesh_part_meshes < m) {
        invalidate(c); /* the graphs hold the old pointers */
        mesh_forces_free(c);
        const size_t cap = (size_t)c->capacity;
        CK(dalloc(c, &c->mesh_target, 3 * cap));
        CK(dalloc(c, &c->mesh_share, 3 * cap));
        CK(dalloc(c, &c->mesh_owner, cap));
        CK(dalloc(c, &c->mesh_parts, (size_t)m * (size_t)blocks_for(c->capacity)));
        c->mesh_capacity = c->capacity;
        c->mesh_part_meshes = m;
    }
    const int need = in->substeps * m * 6;
    if (c->mesh_sums_capacity < need) {
        invalidate(c);
        dfree(&c->d_mesh_sums);
        if (c->h_mesh_sums) cudaFreeHost(c->h_mesh_sums);
        c->h_mesh_sums = nullptr;
        c->mesh_sums_capacity = 0;
        CK(dalloc(c, &c->d_mesh_sums, (size_t)need));
        CK(cudaMallocHost((void **)&c->h_mesh_sums, (size_t)need * sizeof(double)));
        c->mesh_sums_capacity = need;
    }
    int solid[PBF_MAX_MESHES];
    double position[3 * PBF_MAX_MESHES];
    for (int k = 0; k < m; ++k) {
        solid[k] = in->mesh_solid[k] < solids ? in->mesh_solid[k] : -1;
        for (int q = 0; q < 3; ++q) position[3 * k + q] = in->mesh_position[3 * k + q];
    }
    /* pageable sources: the copies are staged before the calls return */
    CK(cudaMemcpyToSymbolAsync(c_mesh_solid, solid, (size_t)m * sizeof(int), 0,
                               cudaMemcpyHostToDevice, c->stream));
    CK(cudaMemcpyToSymbolAsync(c_mesh_position, position, (size_t)m * 3 * sizeof(double), 0,
                               cudaMemcpyHostToDevice, c->stream));
    if (solids > 0)
        CK(cudaMemcpyToSymbolAsync(c_solids, c->h_solids, (size_t)solids * sizeof(pbf_solid), 0,
                                   cudaMemcpyHostToDevice, c->stream));
    return cudaSuccess;
}

cudaError_t enqueue_mesh_forces(pbf_cuda *c, const pbf_cuda_step_in *in, int sub) {
    const int n = c->count, nb = blocks_for(n);
    const int m = in->mesh_count < PBF_MAX_MESHES ? in->mesh_count : PBF_MAX_MESHES;
    const pbf_cuda_substep *S = c->d_sub + sub;
    const float *x_old = buf(c, R_P_PREV);
    c->stage = "mesh forces";
    k_mesh_share<<<nb, BLOCK, 0, c->stream>>>(n, m, in->mesh_colliders, S, x_old, buf(c, R_P),
                                              c->mesh_target, c->mesh_share, c->mesh_owner);
    CK(cudaGetLastError());
    k_mesh_sum<<<dim3((unsigned)nb, (unsigned)m), BLOCK, 0, c->stream>>>(
        n, x_old, c->mesh_share, c->mesh_owner, c->mesh_parts);
    CK(cudaGetLastError());
    k_mesh_final<<<m, MESH_FINAL, 0, c->stream>>>(nb, c->mesh_parts, S,
                                                  c->d_mesh_sums + (size_t)sub * m * 6);
    return cudaGetLastError();
}

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
