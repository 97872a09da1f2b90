/* The CPU's neighbour-list passes, vectorized (solver.c; probes.c recomputes the Δp sum with the
 * same function, so it gets the same floats).
 *
 * A particle's neighbours are scattered through memory, so each pass runs in two loops per chunk
 * of up to PBF_CHUNK neighbours:
 *   1. gather: the neighbours' pair vectors (and λ_j, v_j, |ω_j|, the cached gradient factor)
 *      into small arrays on the stack;
 *   2. compute: a `#pragma omp simd` loop over those arrays that calls the pair functions of
 *      kernels.h (the one copy of the math) and reduces the sums. The compiler runs 4 pairs (SSE)
 *      or more per instruction; the selects of the pair functions become vector blends.
 *
 * Determinism: `omp simd reduction` lets the compiler split each sum into per-lane partial sums.
 * The split depends only on the build and on the neighbour count, never on the thread or on an
 * address: the compute loop touches nothing but the stack arrays (which the compiler aligns
 * itself) and scalars, so there is no peeling for alignment of a heap pointer. The result is
 * therefore the same for any thread count and run, bit for bit; it differs in the last bits from
 * a plain left-to-right sum (the cells mode and the CUDA kernels), as any summation order does. */
#ifndef PBF_CPU_PASSES_H
#define PBF_CPU_PASSES_H

#include <stdint.h>

#include "kernels.h"

/* Pairs per chunk: the stack arrays stay in L1, and the average list (about 25 at rest, up to
 * about 60 under compression) mostly takes one chunk. */
#define PBF_CHUNK 64

/* Gathers the pair vectors d = x_i − x_j of list entries [k0, k0 + m). */
static inline void pbf__gather_d(const float *p, pbf_v3 xi, const uint32_t *nb, uint32_t k0,
                                 int m, float *dx, float *dy, float *dz) {
    for (int c = 0; c < m; ++c) {
        const float *q = p + 3 * (size_t)nb[k0 + c];
        dx[c] = xi.x - q[0];
        dy[c] = xi.y - q[1];
        dz[c] = xi.z - q[2];
    }
}

static inline int pbf__chunk(uint32_t k0, uint32_t end) {
    return end - k0 < PBF_CHUNK ? (int)(end - k0) : PBF_CHUNK;
}

/* λ pass: the sums of particle i over list entries [start, end); stores each pair's gradient
 * factor in pair_g[k] for the Δp pass (same positions). */
static inline pbf_lambda_acc pbf__lambda_list(const pbf_params *P, const float *p, pbf_v3 xi,
                                              const uint32_t *nb, uint32_t start, uint32_t end,
                                              float *pair_g) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], gs[PBF_CHUNK];
    float w = 0.0f, gx = 0.0f, gy = 0.0f, gz = 0.0f, g2 = 0.0f;
    int near = 0;
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int m = pbf__chunk(k0, end);
        pbf__gather_d(p, xi, nb, k0, m, dx, dy, dz);
#pragma omp simd reduction(+ : w, gx, gy, gz, g2, near)
        for (int c = 0; c < m; ++c) {
            float r2 = dx[c] * dx[c] + dy[c] * dy[c] + dz[c] * dz[c];
            w += pbf_pair_w(r2, P);
            near += r2 < P->h2;
            float gm, g = pbf_spiky_factor(r2, P, &gm);
            gx += dx[c] * g;
            gy += dy[c] * g;
            gz += dz[c] * g;
            g2 += gm * gm;
            gs[c] = g;
        }
        for (int c = 0; c < m; ++c) pair_g[k0 + c] = gs[c];
    }
    pbf_lambda_acc a = pbf_lambda_begin(P);
    a.w_sum += w;
    a.grad_i = v3(gx, gy, gz);
    a.grad2_sum = g2;
    a.neighbors = near;
    return a;
}

/* Δp pass: the fluid sum of particle i, with the gradient factors of this iteration's λ pass.
 * scorr_n is P->scorr_n, passed apart so that pbf__delta_list_of can make it a constant. */
static inline pbf_delta_acc pbf__delta_list(const pbf_params *P, const float *p,
                                            const float *lambda, pbf_v3 xi, float li,
                                            const uint32_t *nb, uint32_t start, uint32_t end,
                                            const float *pair_g, int scorr_n) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], lj[PBF_CHUNK], gs[PBF_CHUNK];
    float sx = 0.0f, sy = 0.0f, sz = 0.0f;
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int m = pbf__chunk(k0, end);
        pbf__gather_d(p, xi, nb, k0, m, dx, dy, dz);
        for (int c = 0; c < m; ++c) {
            lj[c] = lambda[nb[k0 + c]];
            gs[c] = pair_g[k0 + c];
        }
#pragma omp simd reduction(+ : sx, sy, sz)
        for (int c = 0; c < m; ++c) {
            float r2 = dx[c] * dx[c] + dy[c] * dy[c] + dz[c] * dz[c];
            float f = pbf_delta_coef(r2, li, lj[c], scorr_n, P) * gs[c];
            sx += dx[c] * f;
            sy += dy[c] * f;
            sz += dz[c] * f;
        }
    }
    pbf_delta_acc a = pbf_delta_begin();
    a.dp = v3(sx, sy, sz);
    return a;
}

/* pbf__delta_list with the default s_corr exponent n = 4 as a constant: its power is then two
 * products instead of four vector selects per pair (a third of the pass). Same floats. */
static inline pbf_delta_acc pbf__delta_list_of(const pbf_params *P, const float *p,
                                               const float *lambda, pbf_v3 xi, float li,
                                               const uint32_t *nb, uint32_t start, uint32_t end,
                                               const float *pair_g) {
    if (P->scorr_n == 4)
        return pbf__delta_list(P, p, lambda, xi, li, nb, start, end, pair_g, 4);
    return pbf__delta_list(P, p, lambda, xi, li, nb, start, end, pair_g, P->scorr_n);
}

/* Vorticity pass A: ω, XSPH and the density of particle i; stores each pair's gradient factor
 * in pair_g[k] for pass B (same positions). */
static inline pbf_vort_acc pbf__vort_list(const pbf_params *P, const float *p, const float *v,
                                          pbf_v3 xi, pbf_v3 vi, const uint32_t *nb,
                                          uint32_t start, uint32_t end, float *pair_g) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], gs[PBF_CHUNK];
    float ux[PBF_CHUNK], uy[PBF_CHUNK], uz[PBF_CHUNK];
    float ox = 0.0f, oy = 0.0f, oz = 0.0f, vx = 0.0f, vy = 0.0f, vz = 0.0f, w = 0.0f;
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int m = pbf__chunk(k0, end);
        pbf__gather_d(p, xi, nb, k0, m, dx, dy, dz);
        for (int c = 0; c < m; ++c) { /* v_ij = v_j − v_i */
            const float *q = v + 3 * (size_t)nb[k0 + c];
            ux[c] = q[0] - vi.x;
            uy[c] = q[1] - vi.y;
            uz[c] = q[2] - vi.z;
        }
#pragma omp simd reduction(+ : ox, oy, oz, vx, vy, vz, w)
        for (int c = 0; c < m; ++c) {
            float r2 = dx[c] * dx[c] + dy[c] * dy[c] + dz[c] * dz[c];
            float wk = pbf_pair_w(r2, P);
            float gm, g = pbf_spiky_factor(r2, P, &gm);
            pbf_v3 om = v3_cross(v3(dx[c] * g, dy[c] * g, dz[c] * g), v3(ux[c], uy[c], uz[c]));
            ox += om.x;
            oy += om.y;
            oz += om.z;
            vx += ux[c] * wk;
            vy += uy[c] * wk;
            vz += uz[c] * wk;
            w += wk;
            gs[c] = g;
        }
        for (int c = 0; c < m; ++c) pair_g[k0 + c] = gs[c];
    }
    pbf_vort_acc a = pbf_vort_begin(P);
    a.omega = v3(ox, oy, oz);
    a.dv = v3(vx, vy, vz);
    a.w_sum += w;
    return a;
}

/* Vorticity pass B: η = Σ (|ω_j| − |ω_i|) ∇W_ij of particle i, with pass A's gradient factors. */
static inline pbf_conf_acc pbf__conf_list(const float *p, const float *omega_len, pbf_v3 xi,
                                          float wi, const uint32_t *nb, uint32_t start,
                                          uint32_t end, const float *pair_g) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], f[PBF_CHUNK], gs[PBF_CHUNK];
    float ex = 0.0f, ey = 0.0f, ez = 0.0f;
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int m = pbf__chunk(k0, end);
        pbf__gather_d(p, xi, nb, k0, m, dx, dy, dz);
        for (int c = 0; c < m; ++c) {
            f[c] = omega_len[nb[k0 + c]] - wi;
            gs[c] = pair_g[k0 + c];
        }
#pragma omp simd reduction(+ : ex, ey, ez) /* as pbf_conf_pair_g */
        for (int c = 0; c < m; ++c) {
            ex += dx[c] * gs[c] * f[c];
            ey += dy[c] * gs[c] * f[c];
            ez += dz[c] * gs[c] * f[c];
        }
    }
    pbf_conf_acc a = pbf_conf_begin();
    a.eta = v3(ex, ey, ez);
    return a;
}

#endif
