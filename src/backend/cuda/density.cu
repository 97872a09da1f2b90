/* The CUDA backend's density solve (backend_internal.h): the λ and Δp passes, the Jacobi
 * rotation of the positions, and solver.c's solve_density around them (a fixed count, or error
 * control with the same decisions, solve_control.h). */
#include "backend_internal.h"
#include "solve_control.h" /* the solve's stop and Chebyshev decisions, solver.c's */

namespace {

__constant__ pbf_solid c_solids[PBF_MAX_SOLIDS];

/* stage_lambda, with the first level of average_density_error fused in; weight: the pass's
 * step weight (solver.c: pbf_step_weight, computed on the host as there) */
template <int TPP>
__global__ void __launch_bounds__(BLOCK)
    k_lambda(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
             float *__restrict__ lambda, float *__restrict__ density, int32_t *__restrict__ counts,
             const uint8_t *__restrict__ phase, Acc *parts, float weight) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / TPP, sub = t % TPP;
    Acc acc = acc_identity();
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    pbf_lambda_lanes L = {};
    pbf_v3 xi = v3(0.0f, 0.0f, 0.0f);
    if (i < n) {
        xi = v3_load(p, i);
        for_each_neighbor<TPP>(nb, p, i, sub, xi, P.h2, [&](int j, int l) {
            pbf_v3 d = v3_sub(xi, v3_load(p, j));
            /* the world's kernel pair (P.kernel, the same for every thread); several fluids:
             * |∇W|² weighted by the neighbour's inverse mass */
            if (phase)
                (void)pbf_lambda_lane_phase(&L, l, d.x, d.y, d.z, P.phase_inv_mass[phase[j]], &P,
                                            P.kernel);
            else
                (void)pbf_lambda_lane_k(&L, l, d.x, d.y, d.z, &P, P.kernel);
        });
    }
    gather_lanes<TPP>(L);
    if (i < n && sub == 0) {
        pbf_lambda_acc a = pbf_lambda_lanes_end(&L, &P);
        float rho;
        if (phase) { /* several fluids: i's own inverse mass weight */
            const float wi = P.phase_inv_mass[phase[i]];
            lambda[i] =
                weight * (S->tool.active
                              ? pbf_lambda_end_tool_phase(&a, xi, wi, &P, c_solids, &S->tool, &rho)
                              : pbf_lambda_end_phase(&a, xi, wi, &P, c_solids, &rho));
        } else {
            lambda[i] =
                weight * (S->tool.active ? pbf_lambda_end_tool(&a, xi, &P, c_solids, &S->tool, &rho)
                                         : pbf_lambda_end(&a, xi, &P, c_solids, &rho));
        }
        density[i] = rho;
        counts[i] = a.neighbors;
        float e = rho * P.inv_rest_density - 1.0f;
        acc.sum = e > 0.0f ? (double)e : 0.0;
        acc.sum2 = e < 0.0f ? (double)-e : 0.0; /* the deficit (solve_control.h) */
    }
    block_store(acc, parts);
}

/* average_density_error, second level: (float)(Σ / n) into *dst */
__global__ void __launch_bounds__(FINAL)
    k_error_final(int nparts, const Acc *parts, int n, float *dst, float *deficit) {
    Acc a = reduce_parts<FINAL>(nparts, parts, acc_identity());
    if (threadIdx.x == 0) *dst = (float)(a.sum / n);
    if (threadIdx.x == 0 && deficit) *deficit = (float)(a.sum2 / n);
}

/* stage_material with adhesion alone: each particle's displacement dt Δv towards the solids,
 * which the first Δp pass adds */
__global__ void __launch_bounds__(BLOCK)
    k_adhesion(int n, const pbf_cuda_substep *S, const float *__restrict__ p,
               float *__restrict__ shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    pbf_v3 dv = v3_add(v3(0.0f, 0.0f, 0.0f), pbf_adhesion_dv(v3_load(p, i), &P, c_solids));
    v3_store(shift, i, v3_scale(dv, P.dt));
}

/* stage_material with surface tension, first pass: each particle's normal (into normal, free
 * until the vorticity passes, as the CPU's w->omega) from the λ pass's densities */
template <int TPP>
__global__ void __launch_bounds__(BLOCK)
    k_normal(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
             const float *__restrict__ density, float *__restrict__ normal) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / TPP, sub = t % TPP;
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    pbf_normal_lanes L = {};
    if (i < n) {
        const pbf_v3 xi = v3_load(p, i);
        for_each_neighbor<TPP>(nb, p, i, sub, xi, P.h2, [&](int j, int l) {
            pbf_v3 d = v3_sub(xi, v3_load(p, j));
            float gm, g = pbf_spiky_factor(v3_dot(d, d), &P, &gm);
            pbf_normal_lane(&L, l, d.x, d.y, d.z, density[j], g);
        });
    }
    gather_lanes<TPP>(L);
    if (i >= n || sub != 0) return;
    v3_store(normal, i, pbf_normal_lanes_end(&L, &P));
}

/* stage_material with surface tension, second pass: cohesion and curvature from the normals,
 * plus adhesion when it is on; the displacement dt Δv that the first Δp pass adds */
template <int TPP>
__global__ void __launch_bounds__(BLOCK)
    k_tension(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
              const float *__restrict__ density, const float *__restrict__ normal,
              float *__restrict__ shift) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / TPP, sub = t % TPP;
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    pbf_tension_lanes L = {};
    pbf_v3 xi = v3(0.0f, 0.0f, 0.0f);
    if (i < n) {
        xi = v3_load(p, i);
        const pbf_v3 ni = v3_load(normal, i);
        const float ri = density[i];
        for_each_neighbor<TPP>(nb, p, i, sub, xi, P.h2, [&](int j, int l) {
            pbf_v3 d = v3_sub(xi, v3_load(p, j)), nd = v3_sub(ni, v3_load(normal, j));
            pbf_tension_lane(&L, l, d.x, d.y, d.z, ri + density[j], nd.x, nd.y, nd.z, &P);
        });
    }
    gather_lanes<TPP>(L);
    if (i >= n || sub != 0) return;
    pbf_v3 dv = pbf_tension_lanes_end(&L, &P);
    if (P.adhesion_on) dv = v3_add(dv, pbf_adhesion_dv(xi, &P, c_solids));
    v3_store(shift, i, v3_scale(dv, P.dt));
}

/* stage_delta: one Jacobi Δp pass into out; omega != 1 is the Chebyshev step. x0: the
 * substep's start, from which wall friction shortens the slide (P.friction_on); shift: the
 * materials' displacement (k_adhesion) in the first pass, else NULL; mesh_target: with mesh
 * forces, each particle's fluid target (its position moved by the fluid's correction alone),
 * else NULL. */
template <int TPP>
__global__ void __launch_bounds__(BLOCK)
    k_delta(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
            const float *__restrict__ lambda, const float *__restrict__ density,
            const float *__restrict__ p_prev, const float *__restrict__ x0,
            const float *__restrict__ shift, const uint8_t *__restrict__ phase,
            float *__restrict__ out, float omega, float gamma, int scorr,
            float *__restrict__ tool_dx, float *__restrict__ mesh_target, ErrFinish fin) {
    if (finish_error(fin)) return; /* the λ pass's average density error */
    const int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / TPP, sub = t % TPP;
    /* s_corr in the first scorr_iterations passes only */
    const pbf_params &P = scorr ? S->params : S->params_no_scorr;
    pbf_delta_lanes L = {};
    pbf_v3 xi = v3(0.0f, 0.0f, 0.0f);
    float li = 0.0f;
    if (i < n) {
        xi = v3_load(p, i);
        li = lambda[i];
        const float wi = pbf_scorr_weight(density[i], &P);
        for_each_neighbor<TPP>(nb, p, i, sub, xi, P.h2, [&](int j, int l) {
            /* g recomputed: the CPU's cached g has the same bits */
            pbf_v3 d = v3_sub(xi, v3_load(p, j));
            float gm, g = pbf_spiky_factor(v3_dot(d, d), &P, &gm);
            pbf_delta_lane(&L, l, d.x, d.y, d.z, li, lambda[j], wi, density[j], g, P.scorr_n, &P);
        });
    }
    gather_lanes<TPP>(L);
    if (i >= n || sub != 0) return;
    pbf_delta_acc a = pbf_delta_lanes_end(&L);
    if (phase) li = pbf_delta_weight_phase(&a, li, P.phase_inv_mass[phase[i]]); /* mass weight */
    if (shift) /* materials: surface tension and adhesion, in the first pass */
        a.dp = v3_madd(a.dp, v3_load(shift, i), 1.0f / P.volume);
    pbf_v3 xn = P.friction_on ? pbf_delta_end_friction(&a, xi, v3_load(x0, i), li, &P, c_solids)
                              : pbf_delta_end(&a, xi, li, &P, c_solids);
    if (mesh_target) v3_store(mesh_target, i, v3_add(xi, v3_scale(a.dp, P.volume))); /* meshes */
    if (omega != 1.0f)
        xn = pbf_collide(pbf_chebyshev(xn, xi, v3_load(p_prev, i), omega, gamma), &P, c_solids);
    if (S->tool.active) { /* the tool: its boundary term and projection; the move its reaction */
        pbf_v3 moved;
        xn = pbf_tool_delta(xn, xi, li, &S->tool, &P, &moved);
        v3_store(tool_dx, i, v3_add(v3_load(tool_dx, i), moved));
    }
    v3_store(out, i, xn);
}

} // namespace

namespace pbf_cu {

cudaError_t density_upload_solids(pbf_cuda *c, int solids) {
    return cudaMemcpyToSymbolAsync(c_solids, c->h_solids, (size_t)solids * sizeof(pbf_solid), 0,
                                   cudaMemcpyHostToDevice, c->stream);
}

cudaError_t launch_error_final(pbf_cuda *c, int nparts, const Acc *parts, int n, float *dst) {
    k_error_final<<<1, FINAL, 0, c->stream>>>(nparts, parts, n, dst, nullptr);
    return cudaGetLastError();
}

/* stage_lambda plus average_density_error into d_hist[k] */
cudaError_t enqueue_lambda(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int k,
                           int host_checks) {
    const int n = c->count, nb = blocks_for(n * c->tpp_lambda);
    const Nb nbs = neighbors(c, in->neighbor_mode);
    float *p = buf(c, R_P);
    const uint8_t *phase = phases_of(c, &in->sub[sub].params); /* several fluids, else NULL */
    /* solver.step_weights: pass k's weight, 1 under error control (solver.c) */
    const float weight =
        in->controlled ? 1.0f : pbf_step_weight(k, in->iterations, &in->sub[sub].params);
    c->stage = "density (λ) pass";
    if (c->tpp_lambda == 1)
        k_lambda<1><<<nb, BLOCK, 0, c->stream>>>(n, c->d_sub + sub, nbs, p, c->f.lambda,
                                                 c->f.density, c->f.neighbor_counts, phase,
                                                 c->parts, weight);
    else
        k_lambda<PBF_LANES><<<nb, BLOCK, 0, c->stream>>>(n, c->d_sub + sub, nbs, p, c->f.lambda,
                                                         c->f.density, c->f.neighbor_counts, phase,
                                                         c->parts, weight);
    CK(cudaGetLastError());
    if (host_checks || nb > FUSE_MAX_PARTS) { /* error control reads it now; or too many */
        /* the deficit into the slot after the history (memory.cu: reserve_step) */
        k_error_final<<<1, FINAL, 0, c->stream>>>(nb, c->parts, n, c->d_hist + k,
                                                  c->d_hist + c->hist_capacity);
        CK(cudaGetLastError());
    } else { /* the Δp pass that follows reduces it */
        c->pending = ErrFinish{c->parts, nb, n, c->d_hist + k};
    }
    return mark(c, PBF_STAGE_LAMBDA);
}

ErrFinish take_pending(pbf_cuda *c) {
    ErrFinish f = c->pending;
    c->pending = ErrFinish{nullptr, 0, 0, nullptr};
    return f;
}

/* stage_delta (pass k of the substep) and its rotation: out = p_tmp; p_tmp ← p_prev,
 * p_prev ← p, p ← out */
cudaError_t enqueue_delta(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int k, float omega) {
    const int n = c->count;
    const int scorr = in->scorr_iterations == 0 || k < in->scorr_iterations;
    const Nb nbs = neighbors(c, in->neighbor_mode);
    const float gamma = in->chebyshev_gamma;
    float *p = buf(c, R_P), *prev = buf(c, R_P_PREV), *out_p = buf(c, R_P_TMP);
    const float *x0 = buf(c, R_X); /* the substep's start (wall friction) */
    /* materials (surface tension, adhesion): their displacement, computed at the λ pass's
     * positions, in the first pass of the substep only, as solver.c's stage_material */
    const pbf_params *hp = &in->sub[sub].params;
    const float *shift = k == 0 && (hp->surface_tension_on || hp->adhesion_on) ? c->f.dv : nullptr;
    const uint8_t *phase = phases_of(c, hp); /* several fluids: mass weights, else NULL */
    if (shift && hp->surface_tension_on) { /* normals into omega, then the tension pass */
        c->stage = "surface tension";
        const int nbt = blocks_for(n * c->tpp);
        const pbf_cuda_substep *S = c->d_sub + sub;
        if (c->tpp == 1) {
            k_normal<1><<<nbt, BLOCK, 0, c->stream>>>(n, S, nbs, p, c->f.density, c->f.omega);
            CK(cudaGetLastError());
            k_tension<1>
                <<<nbt, BLOCK, 0, c->stream>>>(n, S, nbs, p, c->f.density, c->f.omega, c->f.dv);
        } else {
            k_normal<PBF_LANES>
                <<<nbt, BLOCK, 0, c->stream>>>(n, S, nbs, p, c->f.density, c->f.omega);
            CK(cudaGetLastError());
            k_tension<PBF_LANES>
                <<<nbt, BLOCK, 0, c->stream>>>(n, S, nbs, p, c->f.density, c->f.omega, c->f.dv);
        }
        CK(cudaGetLastError());
    } else if (shift) {
        c->stage = "adhesion";
        k_adhesion<<<blocks_for(n), BLOCK, 0, c->stream>>>(n, c->d_sub + sub, p, c->f.dv);
        CK(cudaGetLastError());
    }
    const ErrFinish fin = take_pending(c);
    const int blocks = blocks_for(n * c->tpp) + (fin.dst != nullptr);
    float *target = in->mesh_count > 0 ? c->mesh_target : nullptr; /* mesh forces */
    c->stage = "position (Δp) pass";
    if (c->tpp == 1)
        k_delta<1><<<blocks, BLOCK, 0, c->stream>>>(n, c->d_sub + sub, nbs, p, c->f.lambda,
                                                    c->f.density, prev, x0, shift, phase, out_p,
                                                    omega, gamma, scorr, c->tool_dx, target, fin);
    else
        k_delta<PBF_LANES><<<blocks, BLOCK, 0, c->stream>>>(
            n, c->d_sub + sub, nbs, p, c->f.lambda, c->f.density, prev, x0, shift, phase, out_p,
            omega, gamma, scorr, c->tool_dx, target, fin);
    CK(cudaGetLastError());
    int out = c->role[R_P_TMP];
    c->role[R_P_TMP] = c->role[R_P_PREV];
    c->role[R_P_PREV] = c->role[R_P];
    c->role[R_P] = out;
    if (in->patch_count > 0) CK(enqueue_probes(c, in, sub, omega, scorr));
    if (in->mesh_count > 0) CK(enqueue_mesh_forces(c, in, sub)); /* after the probes, as solver.c */
    return mark(c, PBF_STAGE_DELTA);
}

/* Reads d_hist[k] and the deficit after the history back (error control: two small copies and
 * a wait per iteration). */
cudaError_t read_error(pbf_cuda *c, int k, float *err, float *deficit) {
    const int d = c->hist_capacity;
    CK(cudaMemcpyAsync(c->h_hist + k, c->d_hist + k, sizeof(float), cudaMemcpyDeviceToHost,
                       c->stream));
    CK(cudaMemcpyAsync(c->h_hist + d, c->d_hist + d, sizeof(float), cudaMemcpyDeviceToHost,
                       c->stream));
    CK(cudaStreamSynchronize(c->stream));
    *err = c->h_hist[k];
    *deficit = c->h_hist[d];
    return cudaSuccess;
}

/* solver.c: solve_density, with the same decisions (solve_control.h). With host_checks == 0 (a
 * fixed count) nothing is read back, so the sequence can be captured into a graph. Returns the
 * Δp passes done in *passes. */
cudaError_t enqueue_solve(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int host_checks,
                          int *passes, int *restarts, float *hist, int *hist_count) {
    const int controlled = in->controlled;
    const int max_it = controlled ? in->max_iterations : in->iterations;
    /* materials act in the first Δp pass: at least one is done (solver.c) */
    const pbf_params *hp = &in->sub[sub].params;
    const int min_it = in->min_iterations > 0 || !(hp->surface_tension_on || hp->adhesion_on)
                           ? in->min_iterations
                           : 1;
    pbf_solve_control ctl =
        pbf_solve_control_begin(controlled ? in->target : 0.0f, min_it, max_it, in->chebyshev,
                                in->chebyshev_rho, in->chebyshev_delay);
    int k = 0;
    for (;; ++k) {
        if (!controlled && k == max_it) break;
        CK(enqueue_lambda(c, in, sub, k, host_checks));
        if (!host_checks) {
            CK(enqueue_delta(c, in, sub, k, 1.0f));
            continue;
        }
        float err = 0.0f, deficit = 0.0f;
        CK(read_error(c, k, &err, &deficit));
        hist[k] = err;
        int restarted;
        if (pbf_solve_control_after_error(&ctl, k, err, deficit, &restarted)) break;
        *restarts += restarted;
        CK(enqueue_delta(c, in, sub, k, ctl.omega));
    }
    *hist_count = controlled ? k + 1 : k;
    *passes = k;
    return cudaSuccess;
}

} // namespace pbf_cu
