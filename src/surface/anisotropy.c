/* Per-particle anisotropy (Yu & Turk 2013, §4-5): a weighted principal component analysis of
 * each particle's neighbourhood gives the ellipsoid of its kernel, and the neighbourhood's
 * weighted mean gives its smoothed centre. Used by the mesher (field.c) and by the renderer's
 * ellipsoid splats through pbf_surface_anisotropy. The per-particle math is in
 * anisotropy_math.h, shared with the CUDA kernels of pbf_surface_gpu_anisotropy
 * (src/backend/cuda/anisotropy.cu); this file holds the CPU's loops around it.
 *
 * For particle i with neighbours j within R (the anisotropy radius), weights
 * w_ij = 1 − (|x_j − x_i| / R)³ (i itself included with weight 1):
 *     mean      x̄_i = Σ w_ij x_j / Σ w_ij
 *     covariance C_i = Σ w_ij (x_j − x̄_i)(x_j − x̄_i)ᵀ / Σ w_ij = R_i diag(σ1, σ2, σ3) R_iᵀ
 *     centre    c_i = (1 − λ) x_i + λ x̄_i
 *     axes      σ̃_k = max(σ_k, σ1 / k_r),  a_k = h σ̃_k / (σ̃1 σ̃2 σ̃3)^(1/3),  A_i = R_i diag(a)
 * so the ellipsoid's volume is that of the round kernel of radius h (Yu & Turk scale by a
 * constant k_s instead; keeping the volume keeps φ = 1 in the bulk and needs no tuning), and a
 * particle with fewer than N_ε neighbours gets the small round kernel k_n h. Sums run over the
 * neighbours in cell order (a fixed order) in double precision. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "anisotropy_math.h"
#include "cell_index.h"
#include "surface_util.h"

void surface_eigen_sym3(const double m[9], double values[3], double vectors[9]) {
    surface_aniso_eigen_sym3(m, values, vectors);
}

/* Cells of R / SUB: a neighbourhood of (2 SUB + 1)³ cells in ROWS rows. */
#define SUB SURFACE_ANISO_SUB
#define ROWS SURFACE_ANISO_ROWS

/* The runs of particles (rows of 2 SUB + 1 cells) around a cell: [begin[k], end[k]) in cell
 * order. */
static void neighbor_rows(const cell_index *ci, const int32_t c[3], int32_t begin[ROWS],
                          int32_t end[ROWS]) {
    int k = 0;
    for (int dz = -SUB; dz <= SUB; ++dz)
        for (int dy = -SUB; dy <= SUB; ++dy, ++k)
            cell_index_row(ci, c[0] - SUB, c[0] + SUB, c[1] + dy, c[2] + dz, &begin[k], &end[k]);
}

pbf_status surface_anisotropy_setup(const pbf_surface_def *def, const double lo[3],
                                    const double hi[3], surface_aniso_params *p, char *err,
                                    size_t err_size) {
    const double r = def->particle_radius;
    memset(p, 0, sizeof *p);
    p->h = def->kernel_radius * r;
    if (def->kernel == PBF_SURFACE_ISOTROPIC) return PBF_OK;
    const double R = def->anisotropy_radius * r;
    p->R = R;
    p->inv_R2 = (float)(1.0 / (R * R));
    p->lambda = def->smoothing;
    p->mu = surface_aniso_mu(p->lambda);
    p->cell_size = R / SUB;
    for (int d = 0; d < 3; ++d) {
        p->origin[d] = lo[d] - 2.0 * R;
        double cells = (hi[d] - p->origin[d]) / p->cell_size + 4.0;
        if (!(cells < (double)(1 << 20))) {
            surface_format(err, err_size,
                           "particles spread over %.6g m along %c: more than 2^20 cells of the "
                           "anisotropy radius %.6g m (a particle far away from the others?)",
                           hi[d] - lo[d], "xyz"[d], R);
            return PBF_ERR_INVALID_ARG;
        }
        p->bits[d] = cell_index_bits((int64_t)cells + 1);
    }
    return PBF_OK;
}

pbf_status surface_anisotropy_run(const pbf_surface_def *def, const float *pos, int count,
                                  float *centers, float *axes, char *err, size_t err_size) {
    const int threads = surface_threads(def);
    if (count <= 0) return PBF_OK;
    double lo[3] = {pos[0], pos[1], pos[2]}, hi[3] = {pos[0], pos[1], pos[2]};
    if (def->kernel == PBF_SURFACE_ANISOTROPIC)
        for (int i = 1; i < count; ++i)
            for (int d = 0; d < 3; ++d) {
                double x = pos[3 * (size_t)i + d];
                if (x < lo[d]) lo[d] = x;
                if (x > hi[d]) hi[d] = x;
            }
    surface_aniso_params P;
    pbf_status st = surface_anisotropy_setup(def, lo, hi, &P, err, err_size);
    if (st != PBF_OK) return st;
    if (def->kernel == PBF_SURFACE_ISOTROPIC) {
        memcpy(centers, pos, 3 * (size_t)count * sizeof *centers);
        for (int i = 0; i < count; ++i) surface_aniso_round(P.h, axes + 9 * (size_t)i);
        return PBF_OK;
    }
    const double h = P.h, lambda = P.lambda, mu = P.mu;
    const float inv_R2 = P.inv_R2;
    cell_index ci;
    memset(&ci, 0, sizeof ci);
    memcpy(ci.bits, P.bits, sizeof ci.bits);
    uint64_t *keys = malloc((size_t)count * sizeof *keys);
    float *sorted = malloc(3 * (size_t)count * sizeof *sorted);
    float *moved = malloc(3 * (size_t)count * sizeof *moved);
    int built = -1;
    if (keys != NULL) {
        for (int i = 0; i < count; ++i) {
            int64_t c[3];
            for (int d = 0; d < 3; ++d)
                c[d] = surface_aniso_cell(pos[3 * (size_t)i + d], P.origin[d], P.cell_size);
            keys[i] = cell_key(&ci, c[0], c[1], c[2]);
        }
        built = cell_index_build(&ci, keys, count);
    }
    free(keys);
    if (built != 0 || sorted == NULL || moved == NULL) {
        free(sorted);
        free(moved);
        cell_index_free(&ci);
        surface_format(err, err_size, "out of memory for the anisotropy of %d particles", count);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    /* Positions in cell order as three arrays (x, y, z; then the moved ones), so the
     * neighbour loops read memory in sequence and vectorize. */
    const size_t n = (size_t)count;
    for (int s = 0; s < count; ++s)
        for (int d = 0; d < 3; ++d) sorted[d * n + (size_t)s] = pos[3 * (size_t)ci.order[s] + d];
    const float *sx = sorted, *sy = sorted + n, *sz = sorted + 2 * n;
    float *mx = moved, *my = moved + n, *mz = moved + 2 * n;

    /* Pass 1: covariance, axes, and the first (shrinking) smoothing step into `moved`.
     * Pass 2: the inflating step μ from the smoothed neighbours (Taubin 1995), with the same
     * neighbours and weights: Yu & Turk's smoothing alone pulls every surface particle inwards
     * (its neighbours' mean lies inside), which loses volume (-4 % on a ball of radius 15
     * spacings at λ = 0.5); the second step gives it back while bumps stay damped.
     * The candidates of a row are summed branch-free (weight 0 beyond R) in float lanes; the
     * order of the sums is fixed by the code, so results do not depend on the thread count. */
    for (int pass = 0; pass < (lambda > 0.0 ? 2 : 1); ++pass) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
        for (int c = 0; c < ci.cell_count; ++c) {
            int32_t cc[3];
            cell_key_coords(ci.bits, ci.cell_keys[c], cc);
            int32_t begin[ROWS], end[ROWS];
            neighbor_rows(&ci, cc, begin, end);
            for (int s = ci.cell_start[c]; s < ci.cell_start[c + 1]; ++s) {
                const int i = ci.order[s];
                const float xi = sx[s], yi = sy[s], zi = sz[s];
                double sw = 0.0, s1[3] = {0, 0, 0}, s2[6] = {0, 0, 0, 0, 0, 0};
                int neighbors = -1; /* itself */
                for (int row = 0; row < ROWS; ++row) {
                    float rw = 0, r1x = 0, r1y = 0, r1z = 0;
                    float rxx = 0, rxy = 0, rxz = 0, ryy = 0, ryz = 0, rzz = 0;
                    int rn = 0;
                    if (pass == 0) {
#pragma omp simd reduction(+ : rw, r1x, r1y, r1z, rxx, rxy, rxz, ryy, ryz, rzz, rn)
                        for (int k = begin[row]; k < end[row]; ++k) {
                            const float fx = sx[k] - xi, fy = sy[k] - yi, fz = sz[k] - zi;
                            const float q2 = surface_aniso_q2(fx, fy, fz, inv_R2);
                            const float w = surface_aniso_weight(q2);
                            rw += w;
                            r1x += w * fx, r1y += w * fy, r1z += w * fz;
                            rxx += w * fx * fx, rxy += w * fx * fy, rxz += w * fx * fz;
                            ryy += w * fy * fy, ryz += w * fy * fz, rzz += w * fz * fz;
                            rn += surface_aniso_counts(q2);
                        }
                    } else {
                        const float ui = mx[s], vi = my[s], ti = mz[s];
#pragma omp simd reduction(+ : rw, r1x, r1y, r1z)
                        for (int k = begin[row]; k < end[row]; ++k) {
                            const float fx = sx[k] - xi, fy = sy[k] - yi, fz = sz[k] - zi;
                            const float w =
                                surface_aniso_weight(surface_aniso_q2(fx, fy, fz, inv_R2));
                            rw += w;
                            r1x += w * (mx[k] - ui);
                            r1y += w * (my[k] - vi);
                            r1z += w * (mz[k] - ti);
                        }
                    }
                    sw += rw;
                    s1[0] += r1x, s1[1] += r1y, s1[2] += r1z;
                    s2[0] += rxx, s2[1] += rxy, s2[2] += rxz;
                    s2[3] += ryy, s2[4] += ryz, s2[5] += rzz;
                    neighbors += rn;
                }
                double m[3];
                surface_aniso_mean(sw, s1, m);
                if (pass == 1) {
                    centers[3 * (size_t)i + 0] = surface_aniso_step(mx[s], mu, m[0]);
                    centers[3 * (size_t)i + 1] = surface_aniso_step(my[s], mu, m[1]);
                    centers[3 * (size_t)i + 2] = surface_aniso_step(mz[s], mu, m[2]);
                    continue;
                }
                double cov[9];
                surface_aniso_covariance(sw, s2, m, cov);
                surface_aniso_axes(def, h, neighbors, cov, axes + 9 * (size_t)i);
                const float x[3] = {xi, yi, zi};
                for (int e = 0; e < 3; ++e) {
                    if (lambda > 0.0)
                        moved[(size_t)e * n + (size_t)s] = surface_aniso_step(x[e], lambda, m[e]);
                    else
                        centers[3 * (size_t)i + e] = x[e];
                }
            }
        }
    }
    free(sorted);
    free(moved);
    cell_index_free(&ci);
    return PBF_OK;
}
