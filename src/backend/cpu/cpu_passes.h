/* The CPU's neighbour passes (cpu_stages.c; probes.c recomputes the Δp sum with the same
 * functions, so it gets the same floats): over the neighbour list, vectorized, and over the 27
 * cells.
 *
 * A particle's neighbours are scattered through memory, so each pass runs in two loops per chunk
 * of up to PBF_CHUNK neighbours:
 *   1. gather: the neighbours' pair vectors (and λ_j, v_j, |ω_j|, the cached gradient factor)
 *      into small arrays on the stack, padded to a multiple of PBF_LANES with pairs beyond h
 *      (which add exactly zero);
 *   2. compute: for each group of PBF_LANES entries, a `#pragma omp simd` loop over the lanes
 *      that calls the lane functions of kernels.h (the one copy of the math). Each lane adds
 *      to its own partial sum, so the compiler needs no reassociation: with SSE the group is one
 *      vector, and the result is the order kernels.h defines (entry k to lane k mod 4), the same
 *      bits as the CUDA kernels, scalar code or any vector width, for any thread count. */
#ifndef PBF_CPU_PASSES_H
#define PBF_CPU_PASSES_H

#include <stdint.h>
#include <string.h>

#include "grid.h"
#include "kernels.h"

/* Pairs per chunk, a multiple of PBF_LANES: the stack arrays stay in L1, and the average list
 * (about 25 at rest, up to about 60 under compression) mostly takes one chunk. */
#define PBF_CHUNK 64

/* Entries [k0, k0 + m) of a list: m, and m rounded up to whole lane groups. */
static inline int pbf__chunk(uint32_t k0, uint32_t end, int *padded) {
    int m = end - k0 < PBF_CHUNK ? (int)(end - k0) : PBF_CHUNK;
    *padded = (m + PBF_LANES - 1) / PBF_LANES * PBF_LANES;
    return m;
}

/* Gathers the pair vectors d = x_i − x_j of list entries [k0, k0 + m), then pads up to `padded`
 * with d = (h, h, h): r² = 3h², beyond h, so the pair adds only zeros. */
static inline void pbf__gather_d(const float *p, pbf_v3 xi, const uint32_t *nb, uint32_t k0, int m,
                                 int padded, float h, float *dx, float *dy, float *dz) {
    for (int c = 0; c < m; ++c) {
        const float *q = p + 3 * (size_t)nb[k0 + c];
        dx[c] = xi.x - q[0];
        dy[c] = xi.y - q[1];
        dz[c] = xi.z - q[2];
    }
    for (int c = m; c < padded; ++c) dx[c] = dy[c] = dz[c] = h;
}

/* Zero for the padded entries [m, padded) of a per-pair array. */
static inline void pbf__pad_zero(float *a, int m, int padded) {
    for (int c = m; c < padded; ++c) a[c] = 0.0f;
}

/* The compute loops of the passes, one function each: with the lanes behind a pointer GCC 12
 * if-converts and vectorizes them; inlined into the chunk loop with a local struct it did not
 * (it kept the selects as branches). The loops that evaluate the kernel pair are written once
 * with the pair as an argument (the _k functions) and called with it as a constant, so that each
 * copy holds one pair's math: a loop that read it from P computed both pairs and selected, and
 * the default step ran 20 % slower. */

static inline void pbf__lambda_groups_k(pbf_lambda_lanes *PBF_RESTRICT L,
                                        const float *PBF_RESTRICT dx, const float *PBF_RESTRICT dy,
                                        const float *PBF_RESTRICT dz, float *PBF_RESTRICT gs,
                                        int padded, const pbf_params *PBF_RESTRICT P, int kernel) {
    for (int c = 0; c < padded; c += PBF_LANES) {
#pragma omp simd
        for (int l = 0; l < PBF_LANES; ++l)
            gs[c + l] = pbf_lambda_lane_k(L, l, dx[c + l], dy[c + l], dz[c + l], P, kernel);
    }
}

static inline void pbf__lambda_groups(pbf_lambda_lanes *PBF_RESTRICT L,
                                      const float *PBF_RESTRICT dx, const float *PBF_RESTRICT dy,
                                      const float *PBF_RESTRICT dz, float *PBF_RESTRICT gs,
                                      int padded, const pbf_params *PBF_RESTRICT P) {
    if (P->kernel)
        pbf__lambda_groups_k(L, dx, dy, dz, gs, padded, P, 1);
    else
        pbf__lambda_groups_k(L, dx, dy, dz, gs, padded, P, 0);
}

static inline void pbf__delta_groups(pbf_delta_lanes *PBF_RESTRICT L, const float *PBF_RESTRICT dx,
                                     const float *PBF_RESTRICT dy, const float *PBF_RESTRICT dz,
                                     float li, const float *PBF_RESTRICT lj, float wi,
                                     const float *PBF_RESTRICT rj, const float *PBF_RESTRICT gs,
                                     int padded, int scorr_n, const pbf_params *PBF_RESTRICT P) {
    for (int c = 0; c < padded; c += PBF_LANES) {
#pragma omp simd
        for (int l = 0; l < PBF_LANES; ++l)
            pbf_delta_lane(L, l, dx[c + l], dy[c + l], dz[c + l], li, lj[c + l], wi, rj[c + l],
                           gs[c + l], scorr_n, P);
    }
}

static inline void pbf__vort_groups_k(pbf_vort_lanes *PBF_RESTRICT L, const float *PBF_RESTRICT dx,
                                      const float *PBF_RESTRICT dy, const float *PBF_RESTRICT dz,
                                      const float *PBF_RESTRICT ux, const float *PBF_RESTRICT uy,
                                      const float *PBF_RESTRICT uz, float *PBF_RESTRICT gs,
                                      int padded, const pbf_params *PBF_RESTRICT P, int kernel) {
    for (int c = 0; c < padded; c += PBF_LANES) {
#pragma omp simd
        for (int l = 0; l < PBF_LANES; ++l)
            gs[c + l] = pbf_vort_lane_k(L, l, dx[c + l], dy[c + l], dz[c + l], ux[c + l], uy[c + l],
                                        uz[c + l], P, kernel);
    }
}

static inline void pbf__vort_groups(pbf_vort_lanes *PBF_RESTRICT L, const float *PBF_RESTRICT dx,
                                    const float *PBF_RESTRICT dy, const float *PBF_RESTRICT dz,
                                    const float *PBF_RESTRICT ux, const float *PBF_RESTRICT uy,
                                    const float *PBF_RESTRICT uz, float *PBF_RESTRICT gs,
                                    int padded, const pbf_params *PBF_RESTRICT P) {
    if (P->kernel)
        pbf__vort_groups_k(L, dx, dy, dz, ux, uy, uz, gs, padded, P, 1);
    else
        pbf__vort_groups_k(L, dx, dy, dz, ux, uy, uz, gs, padded, P, 0);
}

static inline void pbf__conf_groups(pbf_conf_lanes *PBF_RESTRICT L, const float *PBF_RESTRICT dx,
                                    const float *PBF_RESTRICT dy, const float *PBF_RESTRICT dz,
                                    const float *PBF_RESTRICT f, const float *PBF_RESTRICT gs,
                                    int padded) {
    for (int c = 0; c < padded; c += PBF_LANES) {
#pragma omp simd
        for (int l = 0; l < PBF_LANES; ++l)
            pbf_conf_lane(L, l, dx[c + l], dy[c + l], dz[c + l], f[c + l], gs[c + l]);
    }
}

/* λ pass: the sums of particle i over list entries [start, end); stores each pair's gradient
 * factor in pair_g[k] for the Δp pass (same positions). */
static inline pbf_lambda_acc pbf__lambda_list(const pbf_params *P, const float *p, pbf_v3 xi,
                                              const uint32_t *nb, uint32_t start, uint32_t end,
                                              float *pair_g) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], gs[PBF_CHUNK];
    pbf_lambda_lanes L;
    memset(&L, 0, sizeof L);
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int padded, m = pbf__chunk(k0, end, &padded);
        pbf__gather_d(p, xi, nb, k0, m, padded, P->h, dx, dy, dz);
        pbf__lambda_groups(&L, dx, dy, dz, gs, padded, P);
        for (int c = 0; c < m; ++c) pair_g[k0 + c] = gs[c]; /* memcpy: `rep movs`, slow here */
    }
    return pbf_lambda_lanes_end(&L, P);
}

/* λ pass of a world with several fluids: pbf__lambda_list with each neighbour's inverse mass
 * weight (kernels.h, "Several fluids"), w[phase[j]]. */
static inline void
pbf__lambda_groups_phase_k(pbf_lambda_lanes *PBF_RESTRICT L, const float *PBF_RESTRICT dx,
                           const float *PBF_RESTRICT dy, const float *PBF_RESTRICT dz,
                           const float *PBF_RESTRICT wj, float *PBF_RESTRICT gs, int padded,
                           const pbf_params *PBF_RESTRICT P, int kernel) {
    for (int c = 0; c < padded; c += PBF_LANES) {
#pragma omp simd
        for (int l = 0; l < PBF_LANES; ++l)
            gs[c + l] =
                pbf_lambda_lane_phase(L, l, dx[c + l], dy[c + l], dz[c + l], wj[c + l], P, kernel);
    }
}

static inline void pbf__lambda_groups_phase(pbf_lambda_lanes *PBF_RESTRICT L,
                                            const float *PBF_RESTRICT dx,
                                            const float *PBF_RESTRICT dy,
                                            const float *PBF_RESTRICT dz,
                                            const float *PBF_RESTRICT wj, float *PBF_RESTRICT gs,
                                            int padded, const pbf_params *PBF_RESTRICT P) {
    if (P->kernel)
        pbf__lambda_groups_phase_k(L, dx, dy, dz, wj, gs, padded, P, 1);
    else
        pbf__lambda_groups_phase_k(L, dx, dy, dz, wj, gs, padded, P, 0);
}

static inline pbf_lambda_acc pbf__lambda_list_phase(const pbf_params *P, const float *p,
                                                    const uint8_t *phase, pbf_v3 xi,
                                                    const uint32_t *nb, uint32_t start,
                                                    uint32_t end, float *pair_g) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], gs[PBF_CHUNK], wj[PBF_CHUNK];
    pbf_lambda_lanes L;
    memset(&L, 0, sizeof L);
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int padded, m = pbf__chunk(k0, end, &padded);
        pbf__gather_d(p, xi, nb, k0, m, padded, P->h, dx, dy, dz);
        for (int c = 0; c < m; ++c) wj[c] = P->phase_inv_mass[phase[nb[k0 + c]]];
        pbf__pad_zero(wj, m, padded);
        pbf__lambda_groups_phase(&L, dx, dy, dz, wj, gs, padded, P);
        for (int c = 0; c < m; ++c) pair_g[k0 + c] = gs[c];
    }
    return pbf_lambda_lanes_end(&L, P);
}

/* Δp pass: the fluid sum of particle i, with the gradient factors of this iteration's λ pass
 * and the densities ρ_j of its λ pass (s_corr's weights). scorr_n is P->scorr_n, passed apart so
 * that pbf__delta_list_of can make it a constant. Without s_corr (k = 0) the densities are not
 * gathered: their weight multiplies zero. */
static inline pbf_delta_acc pbf__delta_list(const pbf_params *P, const float *p,
                                            const float *lambda, const float *density, pbf_v3 xi,
                                            float li, float wi, const uint32_t *nb, uint32_t start,
                                            uint32_t end, const float *pair_g, int scorr_n) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], lj[PBF_CHUNK], rj[PBF_CHUNK], gs[PBF_CHUNK];
    const int scorr = P->scorr_scale != 0.0f;
    pbf_delta_lanes L;
    memset(&L, 0, sizeof L);
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int padded, m = pbf__chunk(k0, end, &padded);
        pbf__gather_d(p, xi, nb, k0, m, padded, P->h, dx, dy, dz);
        for (int c = 0; c < m; ++c) lj[c] = lambda[nb[k0 + c]];
        if (scorr)
            for (int c = 0; c < m; ++c) rj[c] = density[nb[k0 + c]];
        else
            for (int c = 0; c < m; ++c) rj[c] = P->rest_density;
        for (int c = 0; c < m; ++c) gs[c] = pair_g[k0 + c];
        pbf__pad_zero(lj, m, padded);
        for (int c = m; c < padded; ++c) rj[c] = P->rest_density;
        pbf__pad_zero(gs, m, padded);
        pbf__delta_groups(&L, dx, dy, dz, li, lj, wi, rj, gs, padded, scorr_n, P);
    }
    return pbf_delta_lanes_end(&L);
}

/* pbf__delta_list with the default s_corr exponent n = 1 as a constant: its power then folds
 * away instead of costing four vector selects per pair (a third of the pass). Same floats. */
static inline pbf_delta_acc pbf__delta_list_of(const pbf_params *P, const float *p,
                                               const float *lambda, const float *density, pbf_v3 xi,
                                               float li, float wi, const uint32_t *nb,
                                               uint32_t start, uint32_t end, const float *pair_g) {
    if (P->scorr_n == 1)
        return pbf__delta_list(P, p, lambda, density, xi, li, wi, nb, start, end, pair_g, 1);
    return pbf__delta_list(P, p, lambda, density, xi, li, wi, nb, start, end, pair_g, P->scorr_n);
}

/* Vorticity pass A: ω, XSPH and the density of particle i; stores each pair's gradient factor
 * in pair_g[k] for pass B (same positions). */
static inline pbf_vort_acc pbf__vort_list(const pbf_params *P, const float *p, const float *v,
                                          pbf_v3 xi, pbf_v3 vi, const uint32_t *nb, uint32_t start,
                                          uint32_t end, float *pair_g) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], gs[PBF_CHUNK];
    float ux[PBF_CHUNK], uy[PBF_CHUNK], uz[PBF_CHUNK];
    pbf_vort_lanes L;
    memset(&L, 0, sizeof L);
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int padded, m = pbf__chunk(k0, end, &padded);
        pbf__gather_d(p, xi, nb, k0, m, padded, P->h, dx, dy, dz);
        for (int c = 0; c < m; ++c) { /* v_ij = v_j − v_i */
            const float *q = v + 3 * (size_t)nb[k0 + c];
            ux[c] = q[0] - vi.x;
            uy[c] = q[1] - vi.y;
            uz[c] = q[2] - vi.z;
        }
        pbf__pad_zero(ux, m, padded);
        pbf__pad_zero(uy, m, padded);
        pbf__pad_zero(uz, m, padded);
        pbf__vort_groups(&L, dx, dy, dz, ux, uy, uz, gs, padded, P);
        for (int c = 0; c < m; ++c) pair_g[k0 + c] = gs[c]; /* memcpy: `rep movs`, slow here */
    }
    return pbf_vort_lanes_end(&L, P);
}

/* Vorticity pass B: η = Σ (|ω_j| − |ω_i|) ∇W_ij of particle i, with pass A's gradient factors. */
static inline pbf_conf_acc pbf__conf_list(const pbf_params *P, const float *p,
                                          const float *omega_len, pbf_v3 xi, float wi,
                                          const uint32_t *nb, uint32_t start, uint32_t end,
                                          const float *pair_g) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], f[PBF_CHUNK], gs[PBF_CHUNK];
    pbf_conf_lanes L;
    memset(&L, 0, sizeof L);
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int padded, m = pbf__chunk(k0, end, &padded);
        pbf__gather_d(p, xi, nb, k0, m, padded, P->h, dx, dy, dz);
        for (int c = 0; c < m; ++c) f[c] = omega_len[nb[k0 + c]] - wi;
        for (int c = 0; c < m; ++c) gs[c] = pair_g[k0 + c];
        pbf__pad_zero(f, m, padded);
        pbf__pad_zero(gs, m, padded);
        pbf__conf_groups(&L, dx, dy, dz, f, gs, padded);
    }
    return pbf_conf_lanes_end(&L);
}

/* Surface tension (kernels.h, "Materials"), after the vorticity passes at the same positions:
 * the normal pass with pass A's gradient factors, then the tension pass. */
static inline void pbf__normal_groups(pbf_normal_lanes *PBF_RESTRICT L,
                                      const float *PBF_RESTRICT dx, const float *PBF_RESTRICT dy,
                                      const float *PBF_RESTRICT dz, const float *PBF_RESTRICT rj,
                                      const float *PBF_RESTRICT gs, int padded) {
    for (int c = 0; c < padded; c += PBF_LANES) {
#pragma omp simd
        for (int l = 0; l < PBF_LANES; ++l)
            pbf_normal_lane(L, l, dx[c + l], dy[c + l], dz[c + l], rj[c + l], gs[c + l]);
    }
}

static inline void pbf__tension_groups(pbf_tension_lanes *PBF_RESTRICT L,
                                       const float *PBF_RESTRICT dx, const float *PBF_RESTRICT dy,
                                       const float *PBF_RESTRICT dz, const float *PBF_RESTRICT rs,
                                       const float *PBF_RESTRICT nx, const float *PBF_RESTRICT ny,
                                       const float *PBF_RESTRICT nz, int padded,
                                       const pbf_params *PBF_RESTRICT P) {
    for (int c = 0; c < padded; c += PBF_LANES) {
#pragma omp simd
        for (int l = 0; l < PBF_LANES; ++l)
            pbf_tension_lane(L, l, dx[c + l], dy[c + l], dz[c + l], rs[c + l], nx[c + l], ny[c + l],
                             nz[c + l], P);
    }
}

/* n_i over list entries [start, end), with the gradient factors of vorticity pass A. */
static inline pbf_v3 pbf__normal_list(const pbf_params *P, const float *p, const float *density,
                                      pbf_v3 xi, const uint32_t *nb, uint32_t start, uint32_t end,
                                      const float *pair_g) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], rj[PBF_CHUNK], gs[PBF_CHUNK];
    pbf_normal_lanes L;
    memset(&L, 0, sizeof L);
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int padded, m = pbf__chunk(k0, end, &padded);
        pbf__gather_d(p, xi, nb, k0, m, padded, P->h, dx, dy, dz);
        for (int c = 0; c < m; ++c) rj[c] = density[nb[k0 + c]];
        for (int c = 0; c < m; ++c) gs[c] = pair_g[k0 + c];
        for (int c = m; c < padded; ++c) rj[c] = P->rest_density;
        pbf__pad_zero(gs, m, padded);
        pbf__normal_groups(&L, dx, dy, dz, rj, gs, padded);
    }
    return pbf_normal_lanes_end(&L, P);
}

/* The surface tension velocity change of particle i (density rho_i, normal n_i; normals of all
 * particles in `normal`) over list entries [start, end). */
static inline pbf_v3 pbf__tension_list(const pbf_params *P, const float *p, const float *density,
                                       const float *normal, pbf_v3 xi, float rho_i, pbf_v3 ni,
                                       const uint32_t *nb, uint32_t start, uint32_t end) {
    float dx[PBF_CHUNK], dy[PBF_CHUNK], dz[PBF_CHUNK], rs[PBF_CHUNK];
    float nx[PBF_CHUNK], ny[PBF_CHUNK], nz[PBF_CHUNK];
    pbf_tension_lanes L;
    memset(&L, 0, sizeof L);
    for (uint32_t k0 = start; k0 < end; k0 += PBF_CHUNK) {
        int padded, m = pbf__chunk(k0, end, &padded);
        pbf__gather_d(p, xi, nb, k0, m, padded, P->h, dx, dy, dz);
        for (int c = 0; c < m; ++c) {
            uint32_t j = nb[k0 + c];
            rs[c] = rho_i + density[j];
            nx[c] = ni.x - normal[3 * (size_t)j];
            ny[c] = ni.y - normal[3 * (size_t)j + 1];
            nz[c] = ni.z - normal[3 * (size_t)j + 2];
        }
        for (int c = m; c < padded; ++c) rs[c] = 2.0f * P->rest_density;
        pbf__pad_zero(nx, m, padded);
        pbf__pad_zero(ny, m, padded);
        pbf__pad_zero(nz, m, padded);
        pbf__tension_groups(&L, dx, dy, dz, rs, nx, ny, nz, padded, P);
    }
    return pbf_tension_lanes_end(&L, P);
}

/* ---------------------------------------------------------------------------------------------
 * The 27-cell walk (neighbor_mode "cells"): the neighbours within h at the current positions,
 * found again in every pass, the k-th of them summed into lane k mod 4 like a list entry. */

/* Runs the statement given last for each j within h of particle i (at xi, positions p), with l the
 * lane of that neighbour. */
#define PBF_FOR_EACH_CELL_NEIGHBOR(g, p, h2, i, xi, j, l, ...)                                     \
    do {                                                                                           \
        uint32_t r_[18];                                                                           \
        int nr_ = pbf_grid_ranges((g), (g)->cell_of[i], r_), k_ = 0;                               \
        for (int q_ = 0; q_ < nr_; ++q_)                                                           \
            for (int j = (int)r_[2 * q_]; j < (int)r_[2 * q_ + 1]; ++j) {                          \
                pbf_v3 d_ = v3_sub((xi), v3_load((p), j));                                         \
                if (j == (i) || v3_dot(d_, d_) >= (h2)) continue;                                  \
                const int l = k_++ % PBF_LANES;                                                    \
                __VA_ARGS__                                                                        \
            }                                                                                      \
    } while (0)

static inline pbf_lambda_acc pbf__lambda_cells(const pbf_params *P, const pbf_grid *g,
                                               const float *p, int i, pbf_v3 xi) {
    pbf_lambda_lanes L;
    memset(&L, 0, sizeof L);
    PBF_FOR_EACH_CELL_NEIGHBOR(g, p, P->h2, i, xi, j, l, {
        pbf_v3 d = v3_sub(xi, v3_load(p, j));
        (void)pbf_lambda_lane(&L, l, d.x, d.y, d.z, P);
    });
    return pbf_lambda_lanes_end(&L, P);
}

static inline pbf_lambda_acc pbf__lambda_cells_phase(const pbf_params *P, const pbf_grid *g,
                                                     const float *p, const uint8_t *phase, int i,
                                                     pbf_v3 xi) {
    pbf_lambda_lanes L;
    memset(&L, 0, sizeof L);
    PBF_FOR_EACH_CELL_NEIGHBOR(g, p, P->h2, i, xi, j, l, {
        pbf_v3 d = v3_sub(xi, v3_load(p, j));
        (void)pbf_lambda_lane_phase(&L, l, d.x, d.y, d.z, P->phase_inv_mass[phase[j]], P,
                                    P->kernel);
    });
    return pbf_lambda_lanes_end(&L, P);
}

static inline pbf_delta_acc pbf__delta_cells(const pbf_params *P, const pbf_grid *g, const float *p,
                                             const float *lambda, const float *density, int i,
                                             pbf_v3 xi, float li, float wi) {
    pbf_delta_lanes L;
    memset(&L, 0, sizeof L);
    PBF_FOR_EACH_CELL_NEIGHBOR(g, p, P->h2, i, xi, j, l, {
        pbf_v3 d = v3_sub(xi, v3_load(p, j));
        float gm, gf = pbf_spiky_factor(v3_dot(d, d), P, &gm);
        pbf_delta_lane(&L, l, d.x, d.y, d.z, li, lambda[j], wi, density[j], gf, P->scorr_n, P);
    });
    return pbf_delta_lanes_end(&L);
}

static inline pbf_vort_acc pbf__vort_cells(const pbf_params *P, const pbf_grid *g, const float *p,
                                           const float *v, int i, pbf_v3 xi, pbf_v3 vi) {
    pbf_vort_lanes L;
    memset(&L, 0, sizeof L);
    PBF_FOR_EACH_CELL_NEIGHBOR(g, p, P->h2, i, xi, j, l, {
        pbf_v3 d = v3_sub(xi, v3_load(p, j)), u = v3_sub(v3_load(v, j), vi);
        (void)pbf_vort_lane(&L, l, d.x, d.y, d.z, u.x, u.y, u.z, P);
    });
    return pbf_vort_lanes_end(&L, P);
}

static inline pbf_conf_acc pbf__conf_cells(const pbf_params *P, const pbf_grid *g, const float *p,
                                           const float *omega_len, int i, pbf_v3 xi, float wi) {
    pbf_conf_lanes L;
    memset(&L, 0, sizeof L);
    PBF_FOR_EACH_CELL_NEIGHBOR(g, p, P->h2, i, xi, j, l, {
        pbf_v3 d = v3_sub(xi, v3_load(p, j));
        float gm, gf = pbf_spiky_factor(v3_dot(d, d), P, &gm);
        pbf_conf_lane(&L, l, d.x, d.y, d.z, omega_len[j] - wi, gf);
    });
    return pbf_conf_lanes_end(&L);
}

static inline pbf_v3 pbf__normal_cells(const pbf_params *P, const pbf_grid *g, const float *p,
                                       const float *density, int i, pbf_v3 xi) {
    pbf_normal_lanes L;
    memset(&L, 0, sizeof L);
    PBF_FOR_EACH_CELL_NEIGHBOR(g, p, P->h2, i, xi, j, l, {
        pbf_v3 d = v3_sub(xi, v3_load(p, j));
        float gm, gf = pbf_spiky_factor(v3_dot(d, d), P, &gm);
        pbf_normal_lane(&L, l, d.x, d.y, d.z, density[j], gf);
    });
    return pbf_normal_lanes_end(&L, P);
}

static inline pbf_v3 pbf__tension_cells(const pbf_params *P, const pbf_grid *g, const float *p,
                                        const float *density, const float *normal, int i, pbf_v3 xi,
                                        float rho_i, pbf_v3 ni) {
    pbf_tension_lanes L;
    memset(&L, 0, sizeof L);
    PBF_FOR_EACH_CELL_NEIGHBOR(g, p, P->h2, i, xi, j, l, {
        pbf_v3 d = v3_sub(xi, v3_load(p, j)), n = v3_sub(ni, v3_load(normal, j));
        pbf_tension_lane(&L, l, d.x, d.y, d.z, rho_i + density[j], n.x, n.y, n.z, P);
    });
    return pbf_tension_lanes_end(&L, P);
}

#endif
