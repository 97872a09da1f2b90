/* The CUDA backend's last stages of a substep (backend_internal.h): the velocity update,
 * vorticity confinement and XSPH, the implicit viscosity (viscosity.cu) and surface drag, the
 * tool's pass (tool_probes.cu), the watchdog, diffuse particles (diffuse.cu) and x ↔ p, with the
 * energy audit's marks (energy.cu) where solver.c makes them; and the end-of-step statistics
 * (solver.c: finish_profile). */
#include "backend_internal.h"

namespace {

__constant__ pbf_solid c_solids[PBF_MAX_SOLIDS];

/* stage_velocity */
__global__ void __launch_bounds__(BLOCK)
    k_velocity(int n, const pbf_cuda_substep *S, const float *__restrict__ x,
               const float *__restrict__ p, float *__restrict__ v, float *__restrict__ d_prev) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    const int blend = P.impulse_blend != 0.0f; /* off: d_prev is neither read nor kept */
    pbf_v3 d = blend ? v3_load(d_prev, i) : v3(0.0f, 0.0f, 0.0f); /* v: the predicted v */
    v3_store(v, i, pbf_velocity_blend(v3_load(x, i), v3_load(p, i), v3_load(v, i), &d, &P));
    if (blend) v3_store(d_prev, i, d);
}

/* stage_vorticity, pass A (ω, XSPH, final density), with the density error's first level */
template <int TPP>
__global__ void __launch_bounds__(BLOCK)
    k_vort(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
           const float *__restrict__ v, float *__restrict__ omega, float *__restrict__ dv,
           float *__restrict__ omega_len, float *__restrict__ density,
           const uint8_t *__restrict__ phase, Acc *parts) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / TPP, sub = t % TPP;
    Acc acc = acc_identity();
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    pbf_vort_lanes L = {};
    pbf_v3 xi = v3(0.0f, 0.0f, 0.0f);
    if (i < n) {
        xi = v3_load(p, i);
        const pbf_v3 vi = v3_load(v, i);
        for_each_neighbor<TPP>(nb, p, i, sub, xi, P.h2, [&](int j, int l) {
            pbf_v3 d = v3_sub(xi, v3_load(p, j)), u = v3_sub(v3_load(v, j), vi);
            (void)pbf_vort_lane_k(&L, l, d.x, d.y, d.z, u.x, u.y, u.z, &P, P.kernel); /* as λ */
        });
    }
    gather_lanes<TPP>(L);
    if (i < n && sub == 0) {
        pbf_vort_acc a = pbf_vort_lanes_end(&L, &P);
        pbf_v3 om;
        float rho;
        v3_store(dv, i,
                 phase ? pbf_vort_end_phase(&a, xi, P.phase_xsph[phase[i]], &P, c_solids, &om,
                                            &rho) /* several fluids: their XSPH c */
                       : pbf_vort_end(&a, xi, &P, c_solids, &om, &rho));
        density[i] = rho;
        v3_store(omega, i, om);
        omega_len[i] = v3_len(om);
        float e = rho * P.inv_rest_density - 1.0f;
        acc.sum = e > 0.0f ? (double)e : 0.0;
    }
    block_store(acc, parts);
}

/* stage_vorticity, pass B (confinement, XSPH applied, speed limit) */
template <int TPP>
__global__ void __launch_bounds__(BLOCK)
    k_conf(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ p,
           float *__restrict__ v, const float *__restrict__ dv, const float *__restrict__ omega,
           const float *__restrict__ omega_len, ErrFinish fin) {
    if (finish_error(fin)) return; /* the vorticity pass's average density error */
    const int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / TPP, sub = t % TPP;
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    pbf_conf_lanes L = {};
    if (i < n && P.vorticity > 0.0f) {
        const pbf_v3 xi = v3_load(p, i);
        const float wi = omega_len[i];
        for_each_neighbor<TPP>(nb, p, i, sub, xi, P.h2, [&](int j, int l) {
            pbf_v3 d = v3_sub(xi, v3_load(p, j));
            float gm, g = pbf_spiky_factor(v3_dot(d, d), &P, &gm);
            pbf_conf_lane(&L, l, d.x, d.y, d.z, omega_len[j] - wi, g);
        });
    }
    gather_lanes<TPP>(L);
    if (i >= n || sub != 0) return;
    pbf_conf_acc a = pbf_conf_lanes_end(&L);
    v3_store(v, i, pbf_conf_end(&a, v3_load(v, i), v3_load(dv, i), v3_load(omega, i), &P));
}

/* viscosity.c's surface drag (after XSPH and confinement, as the CPU's modules): each
 * particle's velocity pulled towards rest by its surface weight, from the vorticity pass's
 * density at these positions */
__global__ void __launch_bounds__(BLOCK)
    k_drag(int n, const pbf_cuda_substep *S, const float *__restrict__ density,
           float *__restrict__ v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
    v3_store(v, i, pbf_surface_drag(v3_load(v, i), density[i], &P));
}

/* solver.c: watchdog, first level: the lowest slot with a non-finite value, and the fastest
 * particle (lowest slot among equals, as the serial loop's strict comparison picks it). */
__global__ void __launch_bounds__(BLOCK)
    k_watch(int n, const pbf_cuda_substep *S, const float *__restrict__ x,
            const float *__restrict__ p, const float *__restrict__ v,
            const float *__restrict__ lambda, Acc *parts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = acc_identity();
    if (i < n) {
        const float inv_dt = S->params.inv_dt;
        const float inv_dt2 = inv_dt * inv_dt;
        pbf_v3 xp = v3_load(p, i), vv = v3_load(v, i);
        pbf_v3 d = v3_sub(xp, v3_load(x, i));
        if (!finite3(xp) || !finite3(vv) || !isfinite(lambda[i])) acc.ibad = i;
        float v2 = v3_dot(vv, vv), d2 = v3_dot(d, d) * inv_dt2;
        if (!(d2 <= v2)) v2 = d2;
        if (v2 != v2) v2 = __int_as_float(0x7f800000); /* NaN counts as infinitely fast */
        acc.vmax = v2;
        acc.imax = i;
    }
    block_store(acc, parts);
}

/* watchdog, second level: records the first failing substep of the step (sticky) */
__global__ void __launch_bounds__(FINAL)
    k_watch_final(int nparts, const Acc *parts, const pbf_cuda_substep *S, int substep,
                  const float *p, const float *v, const float *lambda, const int32_t *ids,
                  Results *res) {
    Acc a = reduce_parts<FINAL>(nparts, parts, acc_identity());
    if (threadIdx.x != 0 || res->watch.failed) return;
    int slot = -1, kind = PBF_CUDA_OK;
    if (a.ibad != INT_MAX) {
        slot = a.ibad;
        pbf_v3 xp = v3_load(p, slot), vv = v3_load(v, slot);
        kind = !finite3(xp)   ? PBF_CUDA_BAD_POSITION
               : !finite3(vv) ? PBF_CUDA_BAD_VELOCITY
                              : PBF_CUDA_BAD_LAMBDA;
        (void)lambda;
    } else if (a.imax != INT_MAX && a.vmax > 0.0f && !(a.vmax <= S->watchdog_speed2)) {
        slot = a.imax;
        kind = PBF_CUDA_TOO_FAST;
    }
    if (kind == PBF_CUDA_OK) return;
    Watch &w = res->watch;
    w.failed = 1;
    w.substep = substep;
    w.kind = kind;
    w.slot = slot;
    w.id = ids[slot];
    for (int k = 0; k < 3; ++k) {
        w.x[k] = p[3 * slot + k];
        w.v[k] = v[3 * slot + k];
    }
    w.speed2 = a.vmax;
}

/* solver.c: finish_profile, first level */
__global__ void __launch_bounds__(BLOCK)
    k_profile(int n, float inv_rest_density, const float *__restrict__ density,
              const int32_t *__restrict__ counts, Acc *parts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc = acc_identity();
    if (i < n) {
        float rho = density[i];
        if (!isfinite(rho)) acc.ibad = i;
        float e = rho * inv_rest_density - 1.0f;
        e = e > 0.0f ? e : 0.0f;
        acc.sum = (double)e;
        acc.vmax = e;
        acc.imax = i;
        acc.sum2 = (double)counts[i];
    }
    block_store(acc, parts);
}

__global__ void __launch_bounds__(FINAL)
    k_profile_final(int nparts, const Acc *parts, const float *x, const int32_t *ids,
                    Results *res) {
    Acc a = reduce_parts<FINAL>(nparts, parts, acc_identity());
    if (threadIdx.x != 0) return;
    Prof &q = res->prof;
    q.err_sum = a.sum;
    q.nb_sum = a.sum2;
    q.err_max = a.vmax;
    q.bad_slot = a.ibad == INT_MAX ? -1 : a.ibad;
    if (q.bad_slot >= 0) {
        q.bad_id = ids[q.bad_slot];
        for (int k = 0; k < 3; ++k) q.bad_x[k] = x[3 * q.bad_slot + k];
    }
}

} // namespace

namespace pbf_cu {

cudaError_t velocity_upload_solids(pbf_cuda *c, int solids) {
    return cudaMemcpyToSymbolAsync(c_solids, c->h_solids, (size_t)solids * sizeof(pbf_solid), 0,
                                   cudaMemcpyHostToDevice, c->stream);
}

cudaError_t enqueue_post(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, int hist_slot,
                         int *visc_iterations) {
    const int n = c->count, nb = blocks_for(n);
    cudaStream_t s = c->stream;
    const pbf_cuda_substep *S = c->d_sub + sub;
    Nb nbv = neighbors(c, in->neighbor_mode);
    c->stage = "velocity update";
    k_velocity<<<nb, BLOCK, 0, s>>>(n, S, buf(c, R_X), buf(c, R_P), buf(c, R_V), c->f.d_prev);
    CK(cudaGetLastError());
    const int mark0 = 1 + PBF_ENERGY_COUNT * sub; /* the energy audit's slots of this substep */
    if (in->energy) /* solver.c: after the velocity update (the impulse blend) */
        CK(enqueue_energy(c, mark0 + PBF_ENERGY_BLEND, buf(c, R_P), buf(c, R_V), nullptr, nullptr,
                          S));
    CK(mark(c, PBF_STAGE_VELOCITY));

    const int nbt = blocks_for(n * c->tpp); /* the neighbour passes' launch */
    c->stage = "vorticity and XSPH";
    float *p = buf(c, R_P), *v = buf(c, R_V);
    const uint8_t *phase = phases_of(c, &in->sub[sub].params); /* several fluids, else NULL */
    if (c->tpp == 1)
        k_vort<1><<<nbt, BLOCK, 0, s>>>(n, S, nbv, p, v, c->f.omega, c->f.dv, c->f.omega_len,
                                        c->f.density, phase, c->parts);
    else
        k_vort<PBF_LANES><<<nbt, BLOCK, 0, s>>>(n, S, nbv, p, v, c->f.omega, c->f.dv,
                                                c->f.omega_len, c->f.density, phase, c->parts);
    CK(cudaGetLastError());
    if (in->energy) /* solver.c: after XSPH's pass, its change dv not yet applied */
        CK(enqueue_energy(c, mark0 + PBF_ENERGY_XSPH, p, v, nullptr, c->f.dv, S));
    /* fixed count: the error after the last pass, reduced by confinement's extra block (or by
     * a kernel of its own when there are too many partials) */
    ErrFinish fin = ErrFinish{nullptr, 0, 0, nullptr};
    if (hist_slot >= 0 && nbt <= FUSE_MAX_PARTS) {
        fin = ErrFinish{c->parts, nbt, n, c->d_hist + hist_slot};
    } else if (hist_slot >= 0) {
        CK(launch_error_final(c, nbt, c->parts, n, c->d_hist + hist_slot));
    }
    const int blocks = nbt + (fin.dst != nullptr);
    if (c->tpp == 1)
        k_conf<1>
            <<<blocks, BLOCK, 0, s>>>(n, S, nbv, p, v, c->f.dv, c->f.omega, c->f.omega_len, fin);
    else
        k_conf<PBF_LANES>
            <<<blocks, BLOCK, 0, s>>>(n, S, nbv, p, v, c->f.dv, c->f.omega, c->f.omega_len, fin);
    CK(cudaGetLastError());
    if (in->energy) CK(enqueue_energy(c, mark0 + PBF_ENERGY_VORTICITY, p, v, nullptr, nullptr, S));
    *visc_iterations = 0;
    if (in->sub[sub].params.viscosity_on) /* viscosity.c: the solve, then the drag */
        CK(enqueue_viscosity(c, in, sub, visc_iterations));
    if (in->sub[sub].params.surface_drag > 0.0f) { /* viscosity.c: after XSPH, before the tool */
        c->stage = "surface drag";
        k_drag<<<nb, BLOCK, 0, s>>>(n, S, c->f.density, v);
        CK(cudaGetLastError());
    }
    CK(mark(c, PBF_STAGE_VORTICITY));
    if (in->tool_sums) CK(enqueue_tool(c, sub)); /* tool.c: pbf__tool_substep_end */
    if (in->energy) /* solver.c: after the modules' substep_end (the tool's coupling) */
        CK(enqueue_energy(c, mark0 + PBF_ENERGY_TOOL, p, v, nullptr, nullptr, S));

    c->stage = "watchdog";
    k_watch<<<nb, BLOCK, 0, s>>>(n, S, buf(c, R_X), buf(c, R_P), buf(c, R_V), c->f.lambda,
                                 c->parts);
    CK(cudaGetLastError());
    k_watch_final<<<1, FINAL, 0, s>>>(nb, c->parts, S, sub, buf(c, R_P), buf(c, R_V), c->f.lambda,
                                      ids(c), c->d_res);
    CK(cudaGetLastError());
    if (in->diffuse) CK(enqueue_diffuse(c, in, sub)); /* diffuse.c: after the watchdog */
    swap_roles(c, R_X, R_P); /* the corrected positions become the state */
    return mark(c, -1);
}

cudaError_t enqueue_profile(pbf_cuda *c, float inv_rest_density) {
    const int n = c->count, nb = blocks_for(n);
    c->stage = "end-of-step statistics";
    k_profile<<<nb, BLOCK, 0, c->stream>>>(n, inv_rest_density, c->f.density, c->f.neighbor_counts,
                                           c->parts);
    CK(cudaGetLastError());
    k_profile_final<<<1, FINAL, 0, c->stream>>>(nb, c->parts, buf(c, R_X), ids(c), c->d_res);
    CK(cudaGetLastError());
    return mark(c, -1);
}

} // namespace pbf_cu
