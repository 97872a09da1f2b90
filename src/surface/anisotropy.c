/* Per-particle anisotropy (Yu & Turk 2013, §4-5): a weighted principal component analysis of
 * each particle's neighbourhood gives the ellipsoid of its kernel, and the neighbourhood's
 * weighted mean gives its smoothed centre. Used by the mesher (field.c) and by the renderer's
 * ellipsoid splats through pbf_surface_anisotropy: the one copy of this math.
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
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cell_index.h"
#include "surface_internal.h"

void surface_eigen_sym3(const double m[9], double values[3], double vectors[9]) {
    double a[3][3], v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) a[i][j] = 0.5 * (m[3 * i + j] + m[3 * j + i]);
    for (int sweep = 0; sweep < 16; ++sweep) {
        double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
        double scale = fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2]);
        if (off <= 1e-15 * scale || off == 0.0) break;
        for (int p = 0; p < 2; ++p)
            for (int q = p + 1; q < 3; ++q) {
                if (a[p][q] == 0.0) continue;
                /* rotation that zeroes a[p][q] (Golub & Van Loan, symmetric Schur) */
                double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < 3; ++k) { /* a <- a J */
                    double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; ++k) { /* a <- Jᵀ a */
                    double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; ++k) { /* v <- v J */
                    double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - s * vkq;
                    v[k][q] = s * vkp + c * vkq;
                }
            }
    }
    int idx[3] = {0, 1, 2};
    for (int i = 0; i < 3; ++i) /* sort descending */
        for (int j = i + 1; j < 3; ++j)
            if (a[idx[j]][idx[j]] > a[idx[i]][idx[i]]) {
                int t = idx[i];
                idx[i] = idx[j];
                idx[j] = t;
            }
    for (int k = 0; k < 3; ++k) {
        values[k] = a[idx[k]][idx[k]];
        for (int r = 0; r < 3; ++r) vectors[3 * r + k] = v[r][idx[k]];
    }
}

/* The ellipsoid of one particle from its neighbourhood sums (see the top of the file). */
static void particle_axes(const pbf_surface_def *def, double h, int neighbors, const double c[9],
                          float *axes) {
    memset(axes, 0, 9 * sizeof *axes);
    if (neighbors < def->min_neighbors) {
        double s = def->isolated_scale * h;
        axes[0] = axes[4] = axes[8] = (float)s;
        return;
    }
    double sigma[3], r[9];
    surface_eigen_sym3(c, sigma, r);
    if (!(sigma[0] > 0.0)) {
        axes[0] = axes[4] = axes[8] = (float)h;
        return;
    }
    double floor_value = sigma[0] / def->max_stretch, s[3];
    for (int k = 0; k < 3; ++k) s[k] = sigma[k] > floor_value ? sigma[k] : floor_value;
    double g = cbrt(s[0] * s[1] * s[2]);
    for (int k = 0; k < 3; ++k) {
        double a = h * s[k] / g;
        for (int row = 0; row < 3; ++row) axes[3 * row + k] = (float)(r[3 * row + k] * a);
    }
}

pbf_status surface_anisotropy_run(const pbf_surface_def *def, const float *pos, int count,
                                  float *centers, float *axes, char *err, size_t err_size) {
    const double r = def->particle_radius, h = def->kernel_radius * r;
    const int threads = surface_threads(def);
    if (count <= 0) return PBF_OK;
    if (def->kernel == PBF_SURFACE_ISOTROPIC) {
        memcpy(centers, pos, 3 * (size_t)count * sizeof *centers);
        for (int i = 0; i < count; ++i) {
            float *a = axes + 9 * (size_t)i;
            memset(a, 0, 9 * sizeof *a);
            a[0] = a[4] = a[8] = (float)h;
        }
        return PBF_OK;
    }
    const double R = def->anisotropy_radius * r, R2 = R * R;
    double lo[3] = {pos[0], pos[1], pos[2]}, hi[3] = {pos[0], pos[1], pos[2]};
    for (int i = 1; i < count; ++i)
        for (int d = 0; d < 3; ++d) {
            double x = pos[3 * (size_t)i + d];
            if (x < lo[d]) lo[d] = x;
            if (x > hi[d]) hi[d] = x;
        }
    cell_index ci;
    memset(&ci, 0, sizeof ci);
    double origin[3];
    for (int d = 0; d < 3; ++d) {
        origin[d] = lo[d] - R;
        double cells = (hi[d] - origin[d]) / R + 2.0;
        if (!(cells < (double)(1 << 20))) {
            surface_format(err, err_size,
                           "particles spread over %.6g m along %c: more than 2^20 cells of the "
                           "anisotropy radius %.6g m (a particle far away from the others?)",
                           hi[d] - lo[d], "xyz"[d], R);
            return PBF_ERR_INVALID_ARG;
        }
        ci.bits[d] = cell_index_bits((int64_t)cells + 1);
    }
    uint64_t *keys = malloc((size_t)count * sizeof *keys);
    int32_t(*cell)[3] = malloc((size_t)count * sizeof *cell);
    if (keys == NULL || cell == NULL) {
        free(keys);
        free(cell);
        surface_format(err, err_size, "out of memory for the anisotropy of %d particles", count);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < count; ++i) {
        for (int d = 0; d < 3; ++d)
            cell[i][d] = (int32_t)floor((pos[3 * (size_t)i + d] - origin[d]) / R);
        keys[i] = cell_key(&ci, cell[i][0], cell[i][1], cell[i][2]);
    }
    int built = cell_index_build(&ci, keys, count);
    free(keys);
    if (built != 0) {
        free(cell);
        surface_format(err, err_size, "out of memory for the anisotropy of %d particles", count);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    /* Pass 1: the covariance and the first (shrinking) smoothing step into centers.
     * Pass 2: the inflating step μ from the smoothed neighbours (Taubin 1995), with the same
     * neighbours and weights: Yu & Turk's smoothing alone pulls every surface particle
     * inwards (its neighbours' mean lies inside), which loses volume (-4 % on a ball of
     * radius 15 spacings at λ = 0.5); the second step gives it back while bumps stay damped. */
    const double lambda = def->smoothing;
    const double mu = lambda > 0.0 ? 1.0 / (0.1 - 1.0 / lambda) : 0.0;
    float *moved = lambda > 0.0 ? malloc(3 * (size_t)count * sizeof *moved) : NULL;
    if (lambda > 0.0 && moved == NULL) {
        free(cell);
        cell_index_free(&ci);
        surface_format(err, err_size, "out of memory for the anisotropy of %d particles", count);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    for (int pass = 0; pass < (lambda > 0.0 ? 2 : 1); ++pass) {
        const float *src = pass == 0 ? pos : moved;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int s = 0; s < count; ++s) {
            const int i = ci.order[s];
            const float *xi = pos + 3 * (size_t)i, *yi = src + 3 * (size_t)i;
            double sw = 0.0, s1[3] = {0, 0, 0}, s2[6] = {0, 0, 0, 0, 0, 0};
            int neighbors = 0;
            for (int dz = -1; dz <= 1; ++dz)
                for (int dy = -1; dy <= 1; ++dy) {
                    const int64_t y = cell[i][1] + dy, z = cell[i][2] + dz;
                    const uint64_t first = cell_key(&ci, cell[i][0] - 1, y, z);
                    const uint64_t last = cell_key(&ci, cell[i][0] + 1, y, z);
                    for (int at = cell_index_lower_bound(&ci, first);
                         at < ci.cell_count && ci.cell_keys[at] <= last; ++at)
                        for (int k = ci.cell_start[at]; k < ci.cell_start[at + 1]; ++k) {
                            const int j = ci.order[k];
                            const float *xj = pos + 3 * (size_t)j;
                            double d[3] = {(double)xj[0] - xi[0], (double)xj[1] - xi[1],
                                           (double)xj[2] - xi[2]};
                            double q2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                            if (q2 >= R2) continue;
                            double q = sqrt(q2 / R2), w = 1.0 - q * q * q;
                            sw += w;
                            if (pass == 1) {
                                const float *yj = src + 3 * (size_t)j;
                                for (int e = 0; e < 3; ++e) s1[e] += w * ((double)yj[e] - yi[e]);
                                continue;
                            }
                            for (int e = 0; e < 3; ++e) s1[e] += w * d[e];
                            s2[0] += w * d[0] * d[0], s2[1] += w * d[0] * d[1];
                            s2[2] += w * d[0] * d[2], s2[3] += w * d[1] * d[1];
                            s2[4] += w * d[1] * d[2], s2[5] += w * d[2] * d[2];
                            neighbors += j != i;
                        }
                }
            double m[3] = {s1[0] / sw, s1[1] / sw, s1[2] / sw};
            if (pass == 1) {
                for (int e = 0; e < 3; ++e) centers[3 * (size_t)i + e] = (float)(yi[e] + mu * m[e]);
                continue;
            }
            double c[9];
            c[0] = s2[0] / sw - m[0] * m[0];
            c[1] = c[3] = s2[1] / sw - m[0] * m[1];
            c[2] = c[6] = s2[2] / sw - m[0] * m[2];
            c[4] = s2[3] / sw - m[1] * m[1];
            c[5] = c[7] = s2[4] / sw - m[1] * m[2];
            c[8] = s2[5] / sw - m[2] * m[2];
            float *out = lambda > 0.0 ? moved : centers;
            for (int e = 0; e < 3; ++e) out[3 * (size_t)i + e] = (float)(xi[e] + lambda * m[e]);
            particle_axes(def, h, neighbors, c, axes + 9 * (size_t)i);
        }
    }
    free(moved);
    free(cell);
    cell_index_free(&ci);
    return PBF_OK;
}
