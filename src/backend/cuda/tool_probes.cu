/* The CUDA backend's passes for the tool and the force probes (backend_internal.h): tool.c's
 * pbf__tool_substep_end and probes.c's pbf__probes_force_pass on the device, with their sums
 * reduced in a fixed order. */
#include "backend_internal.h"

namespace {

__constant__ pbf_cuda_patch c_patches[PBF_MAX_PROBES];

/* tool.c: pbf__tool_substep_end, the per-particle pass (the tool's ghosts in the final density,
 * adhesion and damping on the velocity) with the first level of its sums */
__global__ void __launch_bounds__(BLOCK)
    k_tool(int n, const pbf_cuda_substep *S, const float *__restrict__ p, float *__restrict__ v,
           float *__restrict__ density, const float *__restrict__ tool_dx, ToolAcc *parts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    ToolAcc acc = tool_identity();
    if (i < n) {
        const pbf_params &P = S->params; /* a reference: see pbf_cuda_substep */
        const pbf_tool_params *T = &S->tool;
        pbf_v3 xi = v3_load(p, i);
        float rho = density[i];
        pbf_v3 g = v3(0.0f, 0.0f, 0.0f);
        pbf_tool_boundary(xi, T, &P, &rho, &g);
        density[i] = rho;
        pbf_v3 fa, fd;
        v3_store(v, i, pbf_tool_couple(xi, v3_load(v, i), rho, T, &P, &fa, &fd));
        pbf_v3 d = v3_load(tool_dx, i);
        const float f[9] = {d.x, d.y, d.z, fa.x, fa.y, fa.z, fd.x, fd.y, fd.z};
        for (int k = 0; k < 9; ++k) acc.s[k] = (double)f[k];
        acc.min_dist = v3_len(v3_sub(xi, T->center)) - T->radius;
        acc.contacts = acc.min_dist < 2.0f * P.radius;
    }
    block_store(acc, parts);
}

__global__ void __launch_bounds__(TOOL_FINAL)
    k_tool_final(int nparts, const ToolAcc *parts, pbf_cuda_tool_sums *out) {
    ToolAcc a = reduce_parts<TOOL_FINAL>(nparts, parts, tool_identity());
    if (threadIdx.x != 0) return;
    for (int k = 0; k < 3; ++k) {
        out->dx[k] = a.s[k];
        out->adhesion[k] = a.s[3 + k];
        out->damping[k] = a.s[6 + k];
    }
    out->min_distance = a.min_dist;
    out->contacts = a.contacts;
}

/* probes.c: pbf__probes_force_pass, per particle, after a Δp pass (x_new its result, x_old what
 * it read, x_back the iterate one further back): for a particle in the patches' box, the
 * displacement the solids gave it beyond its fluid correction (recomputed as the pass summed
 * it), with Chebyshev's carry of the solids' earlier share when carry is set; valid[i] 0 outside
 * the box. */
__global__ void __launch_bounds__(BLOCK)
    k_probe_pass(int n, const pbf_cuda_substep *S, Nb nb, const float *__restrict__ x_old,
                 const float *__restrict__ x_new, const float *__restrict__ x_back,
                 const float *__restrict__ lambda, const float *__restrict__ density, float omega,
                 float gamma, int scorr, int carry, int pass, float *__restrict__ moved,
                 int *__restrict__ valid, float *__restrict__ carry_dx,
                 int *__restrict__ carry_pass) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    /* s_corr in the first scorr_iterations passes only */
    const pbf_params &P = scorr ? S->params : S->params_no_scorr;
    const pbf_v3 xi = v3_load(x_old, i);
    if (!(xi.x >= S->probe_lo[0] && xi.x <= S->probe_hi[0] && xi.y >= S->probe_lo[1] &&
          xi.y <= S->probe_hi[1] && xi.z >= S->probe_lo[2] && xi.z <= S->probe_hi[2])) {
        valid[i] = 0;
        return;
    }
    const float li = lambda[i], wi = pbf_scorr_weight(density[i], &P);
    pbf_delta_lanes L = {};
    for_each_neighbor<1>(nb, x_old, i, 0, xi, P.h2, [&](int j, int l) {
        pbf_v3 d = v3_sub(xi, v3_load(x_old, j));
        float gm, g = pbf_spiky_factor(v3_dot(d, d), &P, &gm);
        pbf_delta_lane(&L, l, d.x, d.y, d.z, li, lambda[j], wi, density[j], g, P.scorr_n, &P);
    });
    pbf_delta_acc a = pbf_delta_lanes_end(&L);
    pbf_v3 fluid = v3_add(xi, v3_scale(a.dp, P.volume));
    if (omega != 1.0f) fluid = pbf_chebyshev(fluid, xi, v3_load(x_back, i), omega, gamma);
    pbf_v3 m = v3_sub(v3_load(x_new, i), fluid);
    if (carry) { /* tracked in the pass before: its share carried by the (ω − 1) term */
        if (omega != 1.0f && carry_pass[i] == pass - 1)
            m = v3_madd(m, v3_load(carry_dx, i), omega - 1.0f);
        v3_store(carry_dx, i, m);
        carry_pass[i] = pass;
    }
    v3_store(moved, i, m);
    valid[i] = 1;
}

/* The sum over the particles of one patch (blockIdx.y), as the CPU's loop adds it: each facing
 * particle's share of its footprint on the patch times its move along the normal. */
__global__ void __launch_bounds__(BLOCK)
    k_probe_sum(int n, const pbf_cuda_substep *S, const float *__restrict__ x_old,
                const float *__restrict__ moved, const int *__restrict__ valid, ProbeAcc *parts) {
    const int k = (int)blockIdx.y, i = blockIdx.x * blockDim.x + threadIdx.x;
    ProbeAcc acc = probe_identity();
    if (i < n && valid[i]) {
        const pbf_cuda_patch &q = c_patches[k];
        const float h = S->params.h, r = S->params.radius;
        const float xs[3] = {x_old[3 * i], x_old[3 * i + 1], x_old[3 * i + 2]};
        const float d = q.sign * (xs[q.axis] - S->probe_plane[k]); /* into the fluid */
        if (d < h && d > -h) {
            float share = 1.0f;
            for (int t = 0; t < 3; ++t) {
                if (t == q.axis) continue;
                float a = xs[t] - r, b = xs[t] + r;
                float lo = a > q.lo[t] ? a : q.lo[t], hi = b < q.hi[t] ? b : q.hi[t];
                share *= hi > lo ? (hi - lo) / (b - a) : 0.0f;
            }
            if (share > 0.0f) {
                acc.sum = (double)(share * q.sign * moved[3 * i + q.axis]);
                acc.count = 1;
            }
        }
    }
    block_store(acc, parts + (size_t)k * gridDim.x);
}

/* One block per patch: the pass's sum times m/dt² added to the step's, the pass's count kept. */
__global__ void __launch_bounds__(PROBE_FINAL)
    k_probe_final(int nparts, const ProbeAcc *parts, const pbf_cuda_substep *S, double *sums,
                  int *counts) {
    const int k = (int)blockIdx.x;
    ProbeAcc a = reduce_parts<PROBE_FINAL>(nparts, parts + (size_t)k * nparts, probe_identity());
    if (threadIdx.x != 0) return;
    const pbf_params &P = S->params;
    const double scale = (double)P.mass * (double)P.inv_dt * (double)P.inv_dt;
    sums[k] += scale * a.sum;
    counts[k] = a.count;
}

} // namespace

namespace pbf_cu {

cudaError_t probes_upload_patches(pbf_cuda *c, int count) {
    return cudaMemcpyToSymbolAsync(c_patches, c->h_patches, (size_t)count * sizeof(pbf_cuda_patch),
                                   0, cudaMemcpyHostToDevice, c->stream);
}

/* probes.c: pbf__probes_force_pass after a Δp pass (the roles already rotated: p the pass's
 * result, p_prev what it read, p_tmp the iterate one further back). */
cudaError_t enqueue_probes(pbf_cuda *c, const pbf_cuda_step_in *in, int sub, float omega,
                           int scorr) {
    const int n = c->count, nb = blocks_for(n);
    const pbf_cuda_substep *S = c->d_sub + sub;
    const float *x_old = buf(c, R_P_PREV);
    c->stage = "force probes";
    k_probe_pass<<<nb, BLOCK, 0, c->stream>>>(
        n, S, neighbors(c, in->neighbor_mode), x_old, buf(c, R_P), buf(c, R_P_TMP), c->f.lambda,
        c->f.density, omega, in->chebyshev_gamma, scorr, in->probe_carry, ++c->probe_pass,
        c->probe_moved, c->probe_valid, c->probe_carry, c->probe_carry_pass);
    CK(cudaGetLastError());
    k_probe_sum<<<dim3((unsigned)nb, (unsigned)in->patch_count), BLOCK, 0, c->stream>>>(
        n, S, x_old, c->probe_moved, c->probe_valid, c->probe_parts);
    CK(cudaGetLastError());
    k_probe_final<<<in->patch_count, PROBE_FINAL, 0, c->stream>>>(
        nb, c->probe_parts, S, c->d_patch_sums, c->d_patch_counts);
    return cudaGetLastError();
}

cudaError_t enqueue_tool(pbf_cuda *c, int sub) {
    const int n = c->count, nb = blocks_for(n);
    cudaStream_t s = c->stream;
    const pbf_cuda_substep *S = c->d_sub + sub;
    float *p = buf(c, R_P), *v = buf(c, R_V);
    c->stage = "tool";
    k_tool<<<nb, BLOCK, 0, s>>>(n, S, p, v, c->f.density, c->tool_dx, c->tool_parts);
    CK(cudaGetLastError());
    k_tool_final<<<1, TOOL_FINAL, 0, s>>>(nb, c->tool_parts, c->d_tool + sub);
    CK(cudaGetLastError());
    return mark(c, PBF_STAGE_VELOCITY);
}

} // namespace pbf_cu
