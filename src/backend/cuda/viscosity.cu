/* The implicit viscosity on the CUDA backend (backend_internal.h, docs/cuda.md): viscosity.c's
 * preconditioned conjugate gradients on A v' = v, with the same per-particle math (kernels.h,
 * "Viscosity for thick fluids": the diagonal blocks, the products over the neighbours in the
 * four lanes, the walls' blocks, the updates), the same start and the same stopping rule.
 *
 * The dot products are sums over the particles in double, as the CPU's, but in a fixed tree
 * (per block, then one block over the blocks' partials) instead of the CPU's serial slot order:
 * deterministic, with last bits that may differ from the CPU's. α and β are computed on the
 * device; the test of the loop (rr > tol² v·v, and d·A d > 0) is the host's after every
 * iteration, as viscosity.c's loop, from a 40-byte read-back: a step with the viscosity runs
 * kernel by kernel, not as one graph (step.cu). */
#include "backend_internal.h"

namespace {

/* (A u)_i's neighbour part and walls: viscosity.c's apply_one. With the list (and no overflow)
 * each entry's s_ij is pair_s's (k_visc_init wrote it); in cells mode it is computed from d. */
__device__ __forceinline__ pbf_v3 visc_apply(const Nb &nb, const float *__restrict__ p,
                                             const float *__restrict__ u, int i, pbf_v3 xi,
                                             const float *__restrict__ pair_s,
                                             const pbf_sym3 *__restrict__ wall,
                                             const pbf_params &P) {
    const pbf_v3 ui = v3_load(u, i);
    pbf_visc_lanes L = {};
    if (nb.list && *nb.overflow == 0u) {
        const uint32_t start = nb.start[i], end = nb.start[i + 1];
        for (uint32_t k = start; k < end; ++k) {
            const int j = (int)nb.index[k];
            pbf_v3 d = v3_sub(xi, v3_load(p, j)), du = v3_sub(ui, v3_load(u, j));
            pbf_visc_lane_s(&L, (int)((k - start) % PBF_LANES), d.x, d.y, d.z, du.x, du.y, du.z,
                            pair_s[k]);
        }
    } else {
        Nb cells = nb;
        cells.list = 0;
        for_each_neighbor<1>(cells, p, i, 0, xi, P.h2, [&](int j, int l) {
            pbf_v3 d = v3_sub(xi, v3_load(p, j)), du = v3_sub(ui, v3_load(u, j));
            pbf_visc_lane(&L, l, d.x, d.y, d.z, du.x, du.y, du.z, &P);
        });
    }
    pbf_v3 a = pbf_visc_apply_end(&L, ui, &P);
    return P.visc_wall_k != 0.0f ? pbf_visc_apply_wall(a, wall[i], ui, &P) : a;
}

/* The start (viscosity.c: solve_viscosity's first loop): each particle's inverse diagonal block
 * (inv_diag_one: the list entries' s_ij into pair_s, the walls' block into wall), r = v − A v,
 * z = M r, d = z; partials of r·z, v·v and r·r. */
__global__ void __launch_bounds__(BLOCK)
    k_visc_init(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
                const float *__restrict__ v, float *__restrict__ r, float *__restrict__ z,
                float *__restrict__ d, pbf_sym3 *__restrict__ M, pbf_sym3 *__restrict__ wall,
                float *__restrict__ pair_s, ViscAcc *parts) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    ViscAcc acc = visc_identity();
    if (i < n) {
        const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
        const pbf_v3 xi = v3_load(p, i);
        pbf_visc_diag_lanes L = {};
        if (nb.list && *nb.overflow == 0u) {
            const uint32_t start = nb.start[i], end = nb.start[i + 1];
            for (uint32_t k = start; k < end; ++k) {
                pbf_v3 dd = v3_sub(xi, v3_load(p, (int)nb.index[k]));
                float s = pbf_visc_pair(v3_dot(dd, dd), &P);
                pair_s[k] = s;
                pbf_visc_diag_lane(&L, (int)((k - start) % PBF_LANES), dd.x, dd.y, dd.z, s);
            }
        } else {
            Nb cells = nb;
            cells.list = 0;
            for_each_neighbor<1>(cells, p, i, 0, xi, P.h2, [&](int j, int l) {
                pbf_v3 dd = v3_sub(xi, v3_load(p, j));
                pbf_visc_diag_lane(&L, l, dd.x, dd.y, dd.z, pbf_visc_pair(v3_dot(dd, dd), &P));
            });
        }
        if (P.visc_wall_k != 0.0f) /* the walls' block, diagonal (pbf_visc_wall) */
            pbf_visc_diag_wall(&L, wall[i] = pbf_visc_wall(xi, &P));
        const pbf_sym3 m = pbf_visc_diag_end(&L, &P);
        M[i] = m;
        const pbf_v3 vi = v3_load(v, i);
        const pbf_v3 ri = v3_sub(vi, visc_apply(nb, p, v, i, xi, pair_s, wall, P));
        const pbf_v3 zi = pbf_sym3_apply(m, ri);
        v3_store(r, i, ri);
        v3_store(z, i, zi);
        v3_store(d, i, zi);
        acc.s[0] = pbf_dot_d(ri, zi);
        acc.s[1] = pbf_dot_d(vi, vi);
        acc.s[2] = pbf_dot_d(ri, ri);
    }
    block_store(acc, parts);
}

/* The start's sums: r·z, r·r and the stop tol² v·v (tol the def's float, in double). */
__global__ void __launch_bounds__(FINAL)
    k_visc_init_final(int nparts, const ViscAcc *parts, double tol, ViscState *st) {
    ViscAcc a = reduce_parts<FINAL>(nparts, parts, visc_identity());
    if (threadIdx.x != 0) return;
    st->rz = a.s[0];
    st->rr = a.s[2];
    st->tol_rr = tol * tol * a.s[1];
    st->alpha = st->beta = 0.0f;
    st->stop = 0;
}

/* An iteration's product q = A d, with the partials of d·q. */
__global__ void __launch_bounds__(BLOCK)
    k_visc_product(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
                   const float *__restrict__ d, float *__restrict__ q,
                   const pbf_sym3 *__restrict__ wall, const float *__restrict__ pair_s,
                   const ViscState *st, ViscAcc *parts) {
    if (st->stop) return; /* every thread of the grid reads the same flag */
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    ViscAcc acc = visc_identity();
    if (i < n) {
        const pbf_params &P = S->params;
        const pbf_v3 qi = visc_apply(nb, p, d, i, v3_load(p, i), pair_s, wall, P);
        v3_store(q, i, qi);
        acc.s[0] = pbf_dot_d(v3_load(d, i), qi);
    }
    block_store(acc, parts);
}

/* α = r·z / d·q; d·q <= 0 (d = 0: converged to round-off) stops the solve, as viscosity.c's
 * break. */
__global__ void __launch_bounds__(FINAL)
    k_visc_alpha(int nparts, const ViscAcc *parts, ViscState *st) {
    if (st->stop) return;
    ViscAcc a = reduce_parts<FINAL>(nparts, parts, visc_identity());
    if (threadIdx.x != 0) return;
    const double dq = a.s[0];
    if (!(dq > 0.0)) {
        st->stop = 1;
        return;
    }
    st->alpha = (float)(st->rz / dq);
}

/* v += α d, r −= α q, z = M r; partials of r·z and r·r. */
__global__ void __launch_bounds__(BLOCK)
    k_visc_update(int n, float *__restrict__ v, float *__restrict__ r, float *__restrict__ z,
                  const float *__restrict__ d, const float *__restrict__ q,
                  const pbf_sym3 *__restrict__ M, const ViscState *st, ViscAcc *parts) {
    if (st->stop) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    ViscAcc acc = visc_identity();
    if (i < n) {
        pbf_v3 vi = v3_load(v, i), ri = v3_load(r, i);
        const pbf_v3 zi =
            pbf_visc_cg_update(&vi, &ri, v3_load(d, i), v3_load(q, i), M[i], st->alpha);
        v3_store(v, i, vi);
        v3_store(r, i, ri);
        v3_store(z, i, zi);
        acc.s[0] = pbf_dot_d(ri, zi);
        acc.s[1] = pbf_dot_d(ri, ri);
    }
    block_store(acc, parts);
}

/* β = r·z (new) / r·z (old); the new r·z and r·r. */
__global__ void __launch_bounds__(FINAL)
    k_visc_beta(int nparts, const ViscAcc *parts, ViscState *st) {
    if (st->stop) return;
    ViscAcc a = reduce_parts<FINAL>(nparts, parts, visc_identity());
    if (threadIdx.x != 0) return;
    st->beta = (float)(a.s[0] / st->rz);
    st->rz = a.s[0];
    st->rr = a.s[1];
}

/* d = z + β d */
__global__ void __launch_bounds__(BLOCK)
    k_visc_direction(int n, const float *__restrict__ z, float *__restrict__ d,
                     const ViscState *st) {
    if (st->stop) return;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    v3_store(d, i, v3_madd(v3_load(z, i), v3_load(d, i), st->beta));
}

/* The solve's arrays for the current capacity and list (none is kept between substeps). */
cudaError_t reserve_viscosity(pbf_cuda *c) {
    if (c->visc_capacity < c->capacity) {
        viscosity_free(c);
        const size_t cap = (size_t)c->capacity;
        CK(dalloc(c, &c->visc_r, 3 * cap));
        CK(dalloc(c, &c->visc_z, 3 * cap));
        CK(dalloc(c, &c->visc_d, 3 * cap));
        CK(dalloc(c, &c->visc_q, 3 * cap));
        CK(dalloc(c, &c->visc_m, cap));
        CK(dalloc(c, &c->visc_wall, cap));
        CK(dalloc(c, &c->visc_parts, (size_t)blocks_for(c->capacity)));
        c->visc_capacity = c->capacity;
    }
    if (c->visc_pair_capacity < c->nb_capacity) {
        dfree(&c->visc_pair);
        c->visc_pair_capacity = 0;
        CK(dalloc(c, &c->visc_pair, c->nb_capacity));
        c->visc_pair_capacity = c->nb_capacity;
    }
    if (!c->d_visc) {
        CK(dalloc(c, &c->d_visc, 1));
        CK(cudaMallocHost((void **)&c->h_visc, sizeof(ViscState)));
    }
    return cudaSuccess;
}

/* The solve's scalars on the host (one wait). */
cudaError_t read_state(pbf_cuda *c) {
    CK(cudaMemcpyAsync(c->h_visc, c->d_visc, sizeof(ViscState), cudaMemcpyDeviceToHost, c->stream));
    return cudaStreamSynchronize(c->stream);
}

} // namespace

namespace pbf_cu {

cudaError_t enqueue_viscosity(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int *iterations) {
    *iterations = 0;
    const int n = c->count, nb = blocks_for(n);
    cudaStream_t s = c->stream;
    CK(reserve_viscosity(c));
    const pbf_cuda_substep *S = c->d_sub + sub;
    const Nb nbv = neighbors(c, in->neighbor_mode);
    const float *p = buf(c, R_P);
    float *v = buf(c, R_V);
    c->stage = "viscosity";
    k_visc_init<<<nb, BLOCK, 0, s>>>(n, S, nbv, p, v, c->visc_r, c->visc_z, c->visc_d, c->visc_m,
                                     c->visc_wall, c->visc_pair, c->visc_parts);
    CK(cudaGetLastError());
    k_visc_init_final<<<1, FINAL, 0, s>>>(nb, c->visc_parts, (double)in->visc_tolerance, c->d_visc);
    CK(cudaGetLastError());
    CK(read_state(c));
    int k = 0;
    while (k < in->visc_iterations && c->h_visc->rr > c->h_visc->tol_rr) {
        k_visc_product<<<nb, BLOCK, 0, s>>>(n, S, nbv, p, c->visc_d, c->visc_q, c->visc_wall,
                                            c->visc_pair, c->d_visc, c->visc_parts);
        CK(cudaGetLastError());
        k_visc_alpha<<<1, FINAL, 0, s>>>(nb, c->visc_parts, c->d_visc);
        CK(cudaGetLastError());
        k_visc_update<<<nb, BLOCK, 0, s>>>(n, v, c->visc_r, c->visc_z, c->visc_d, c->visc_q,
                                           c->visc_m, c->d_visc, c->visc_parts);
        CK(cudaGetLastError());
        k_visc_beta<<<1, FINAL, 0, s>>>(nb, c->visc_parts, c->d_visc);
        CK(cudaGetLastError());
        k_visc_direction<<<nb, BLOCK, 0, s>>>(n, c->visc_z, c->visc_d, c->d_visc);
        CK(cudaGetLastError());
        CK(read_state(c));
        if (c->h_visc->stop) break; /* d·A d <= 0: not an iteration (viscosity.c's break) */
        ++k;
    }
    *iterations = k;
    return cudaSuccess;
}

} // namespace pbf_cu
