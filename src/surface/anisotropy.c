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

/* Cells of R / SUB: a neighbourhood of (2 SUB + 1)³ cells in ROWS rows. */
#define SUB 1
#define ROWS ((2 * SUB + 1) * (2 * SUB + 1))

/* The runs of particles (rows of 2 SUB + 1 cells) around a cell: [begin[k], end[k]) in cell
 * order. */
static void neighbor_rows(const cell_index *ci, const int32_t c[3], int32_t begin[ROWS],
                          int32_t end[ROWS]) {
    int k = 0;
    for (int dz = -SUB; dz <= SUB; ++dz)
        for (int dy = -SUB; dy <= SUB; ++dy, ++k)
            cell_index_row(ci, c[0] - SUB, c[0] + SUB, c[1] + dy, c[2] + dz, &begin[k], &end[k]);
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
    const double R = def->anisotropy_radius * r;
    const float inv_R2 = (float)(1.0 / (R * R));
    double lo[3] = {pos[0], pos[1], pos[2]}, hi[3] = {pos[0], pos[1], pos[2]};
    for (int i = 1; i < count; ++i)
        for (int d = 0; d < 3; ++d) {
            double x = pos[3 * (size_t)i + d];
            if (x < lo[d]) lo[d] = x;
            if (x > hi[d]) hi[d] = x;
        }
    /* cells of R / 2 and a neighbourhood of 5³ cells: about half the candidates of 3³ cells of R */
    const double cell_size = R / SUB;
    cell_index ci;
    memset(&ci, 0, sizeof ci);
    double origin[3];
    for (int d = 0; d < 3; ++d) {
        origin[d] = lo[d] - 2.0 * R;
        double cells = (hi[d] - origin[d]) / cell_size + 4.0;
        if (!(cells < (double)(1 << 20))) {
            surface_format(err, err_size,
                           "particles spread over %.6g m along %c: more than 2^20 cells of half "
                           "the anisotropy radius %.6g m (a particle far away from the others?)",
                           hi[d] - lo[d], "xyz"[d], R);
            return PBF_ERR_INVALID_ARG;
        }
        ci.bits[d] = cell_index_bits((int64_t)cells + 1);
    }
    const double lambda = def->smoothing;
    const double mu = lambda > 0.0 ? 1.0 / (0.1 - 1.0 / lambda) : 0.0;
    uint64_t *keys = malloc((size_t)count * sizeof *keys);
    float *sorted = malloc(3 * (size_t)count * sizeof *sorted);
    float *moved = malloc(3 * (size_t)count * sizeof *moved);
    int built = -1;
    if (keys != NULL) {
        for (int i = 0; i < count; ++i) {
            int64_t c[3];
            for (int d = 0; d < 3; ++d)
                c[d] = (int64_t)floor((pos[3 * (size_t)i + d] - origin[d]) / cell_size);
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
    const uint64_t mask[3] = {((uint64_t)1 << ci.bits[0]) - 1, ((uint64_t)1 << ci.bits[1]) - 1,
                              ((uint64_t)1 << ci.bits[2]) - 1};
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
            const uint64_t key = ci.cell_keys[c];
            const int32_t cc[3] = {(int32_t)(key & mask[0]), (int32_t)(key >> ci.bits[0] & mask[1]),
                                   (int32_t)(key >> (ci.bits[0] + ci.bits[1]) & mask[2])};
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
                            const float q2 = (fx * fx + fy * fy + fz * fz) * inv_R2;
                            const float q3 = q2 * sqrtf(q2);
                            const float w = q2 < 1.0f ? 1.0f - q3 : 0.0f;
                            rw += w;
                            r1x += w * fx, r1y += w * fy, r1z += w * fz;
                            rxx += w * fx * fx, rxy += w * fx * fy, rxz += w * fx * fz;
                            ryy += w * fy * fy, ryz += w * fy * fz, rzz += w * fz * fz;
                            rn += q2 < 1.0f;
                        }
                    } else {
                        const float ui = mx[s], vi = my[s], ti = mz[s];
#pragma omp simd reduction(+ : rw, r1x, r1y, r1z)
                        for (int k = begin[row]; k < end[row]; ++k) {
                            const float fx = sx[k] - xi, fy = sy[k] - yi, fz = sz[k] - zi;
                            const float q2 = (fx * fx + fy * fy + fz * fz) * inv_R2;
                            const float q3 = q2 * sqrtf(q2);
                            const float w = q2 < 1.0f ? 1.0f - q3 : 0.0f;
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
                const double m[3] = {s1[0] / sw, s1[1] / sw, s1[2] / sw};
                if (pass == 1) {
                    centers[3 * (size_t)i + 0] = (float)(mx[s] + mu * m[0]);
                    centers[3 * (size_t)i + 1] = (float)(my[s] + mu * m[1]);
                    centers[3 * (size_t)i + 2] = (float)(mz[s] + mu * m[2]);
                    continue;
                }
                double cov[9];
                cov[0] = s2[0] / sw - m[0] * m[0];
                cov[1] = cov[3] = s2[1] / sw - m[0] * m[1];
                cov[2] = cov[6] = s2[2] / sw - m[0] * m[2];
                cov[4] = s2[3] / sw - m[1] * m[1];
                cov[5] = cov[7] = s2[4] / sw - m[1] * m[2];
                cov[8] = s2[5] / sw - m[2] * m[2];
                particle_axes(def, h, neighbors, cov, axes + 9 * (size_t)i);
                const float x[3] = {xi, yi, zi};
                for (int e = 0; e < 3; ++e) {
                    if (lambda > 0.0)
                        moved[(size_t)e * n + (size_t)s] = (float)(x[e] + lambda * m[e]);
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
