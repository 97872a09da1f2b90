/* The per-particle math of the anisotropy (Yu & Turk 2013; the method is at the top of
 * anisotropy.c): the ONE copy, called by the OpenMP loops of src/surface/anisotropy.c and by the
 * CUDA kernels of src/backend/cuda/anisotropy.cu (pbf_surface_gpu_anisotropy). Only the loops
 * differ.
 *
 * Every function is PBF_HD static inline (after src/math/kernels.h): plain C here, __host__
 * __device__ under nvcc. Both sides build without fused multiply-add (-ffp-contract=off,
 * --fmad=false), and sqrtf, sqrt and division round correctly on both, so a neighbour's weight
 * and each term of the sums are the same bits on the CPU and the GPU; what may differ is the
 * order in which the float row sums add up (the CPU's `omp simd` reduction splits them into
 * vector lanes) and cbrt's last bit (glibc and CUDA each promise 1 ulp). */
#ifndef PBF_SURFACE_ANISOTROPY_MATH_H
#define PBF_SURFACE_ANISOTROPY_MATH_H

#include <math.h>
#include <stdint.h>

#include "pbf/base.h"
#include "pbf/surface.h"

#define SURFACE_ANISO_INLINE PBF_HD static inline

/* The neighbour search: cells of R / SUB, so a particle's neighbours within R lie in the
 * (2 SUB + 1)³ cells around its own, scanned as ROWS rows of 2 SUB + 1 cells along x (rows in
 * the order dz = −SUB..SUB, then dy = −SUB..SUB, as the sums run). */
#define SURFACE_ANISO_SUB 1
#define SURFACE_ANISO_ROWS ((2 * SURFACE_ANISO_SUB + 1) * (2 * SURFACE_ANISO_SUB + 1))

/* What the passes need, derived from the def and the particles' bounding box
 * (surface_anisotropy_setup in anisotropy.c, the one place that computes it). */
typedef struct surface_aniso_params {
    double h; /* radius of the round kernel: kernel_radius · r, m */
    double R; /* radius of the neighbourhood: anisotropy_radius · r, m */
    float inv_R2; /* 1 / R², in float like the neighbour sums, 1/m² */
    double lambda; /* the shrinking smoothing step λ (def->smoothing); 0: none */
    double mu; /* the inflating step μ (surface_aniso_mu) */
    /* The neighbour search's grid: cells of edge cell_size = R / SUB from origin = lo − 2R
     * (a margin, so the neighbour cells x − SUB .. x + SUB of every particle have coordinates
     * >= 0 and < 2^bits), bits[d] bits of each coordinate in a 64-bit cell key (cell_index.h). */
    double origin[3]; /* m */
    double cell_size; /* m */
    int bits[3];
} surface_aniso_params;

/* q² = |d|² / R² of a neighbour at offset d from the particle. */
SURFACE_ANISO_INLINE float surface_aniso_q2(float dx, float dy, float dz, float inv_R2) {
    return (dx * dx + dy * dy + dz * dz) * inv_R2;
}

/* The weight w = 1 − q³ of a neighbour within R (q² < 1), 0 beyond: a select, not a branch, so
 * the CPU's loops over a row of candidates vectorize. */
SURFACE_ANISO_INLINE float surface_aniso_weight(float q2) {
    const float q3 = q2 * sqrtf(q2);
    return q2 < 1.0f ? 1.0f - q3 : 0.0f;
}

/* Whether a neighbour at q² counts towards min_neighbors: the same test as the weight's. */
SURFACE_ANISO_INLINE int surface_aniso_counts(float q2) { return q2 < 1.0f; }

/* The inflating step μ of Taubin's λ|μ smoothing (Taubin 1995) for the shrinking step λ > 0,
 * with the pass band k_PB = 1/λ + 1/μ = 0.1; 0 when λ is 0 (no smoothing). */
SURFACE_ANISO_INLINE double surface_aniso_mu(double lambda) {
    return lambda > 0.0 ? 1.0 / (0.1 - 1.0 / lambda) : 0.0;
}

/* The weighted mean offset m = s1 / sw of the neighbours from the particle (sw = Σ w). */
SURFACE_ANISO_INLINE void surface_aniso_mean(double sw, const double s1[3], double m[3]) {
    m[0] = s1[0] / sw;
    m[1] = s1[1] / sw;
    m[2] = s1[2] / sw;
}

/* The weighted covariance C = s2 / sw − m mᵀ (row-major 3x3) from the sums of the offsets'
 * products s2 = Σ w (xx, xy, xz, yy, yz, zz) and the mean offset m. Offsets from the particle
 * rather than from the mean: the covariance is the same, and the sums need one pass. */
SURFACE_ANISO_INLINE void surface_aniso_covariance(double sw, const double s2[6], const double m[3],
                                                   double cov[9]) {
    cov[0] = s2[0] / sw - m[0] * m[0];
    cov[1] = cov[3] = s2[1] / sw - m[0] * m[1];
    cov[2] = cov[6] = s2[2] / sw - m[0] * m[2];
    cov[4] = s2[3] / sw - m[1] * m[1];
    cov[5] = cov[7] = s2[4] / sw - m[1] * m[2];
    cov[8] = s2[5] / sw - m[2] * m[2];
}

/* One smoothing step of a coordinate: x + k m (k = λ towards the neighbours' mean, or μ back). */
SURFACE_ANISO_INLINE float surface_aniso_step(float x, double k, double m) {
    return (float)(x + k * m);
}

/* Largest eigenvalues first: symmetric 3x3 m (row-major, double) -> values[3] and unit
 * eigenvectors as the columns of vectors (row-major). Cyclic Jacobi: deterministic, accurate
 * for the small, well-conditioned covariance matrices of particle neighbourhoods.
 * (surface_eigen_sym3 in surface_util.h is this function for the C callers.) */
SURFACE_ANISO_INLINE void surface_aniso_eigen_sym3(const double m[9], double values[3],
                                                   double vectors[9]) {
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

/* The ellipsoid of one particle (axes: 9 floats, column k = axis k, row-major) from the
 * covariance c of its neighbourhood and its neighbour count (itself not included):
 *  - fewer than def->min_neighbors neighbours (Yu & Turk's N_ε): the small round kernel
 *    isolated_scale · h (k_n h), so a lone drop still shows;
 *  - a degenerate covariance (no spread at all): the round kernel h;
 *  - otherwise the principal axes with lengths σ̃_k = max(σ_k, σ1 / max_stretch), scaled to
 *    a_k = h σ̃_k / (σ̃1 σ̃2 σ̃3)^(1/3): the volume of the round kernel of radius h. */
SURFACE_ANISO_INLINE void surface_aniso_axes(const pbf_surface_def *def, double h, int neighbors,
                                             const double c[9], float *axes) {
    for (int k = 0; k < 9; ++k) axes[k] = 0.0f;
    if (neighbors < def->min_neighbors) {
        double s = def->isolated_scale * h;
        axes[0] = axes[4] = axes[8] = (float)s;
        return;
    }
    double sigma[3], r[9];
    surface_aniso_eigen_sym3(c, sigma, r);
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

/* The round kernel of radius h (the isotropic kernel, PBF_SURFACE_ISOTROPIC). */
SURFACE_ANISO_INLINE void surface_aniso_round(double h, float *axes) {
    for (int k = 0; k < 9; ++k) axes[k] = 0.0f;
    axes[0] = axes[4] = axes[8] = (float)h;
}

/* The cell coordinate of a position coordinate x along one axis (cell_index.h's keys). */
SURFACE_ANISO_INLINE int64_t surface_aniso_cell(float x, double origin, double cell_size) {
    return (int64_t)floor((x - origin) / cell_size);
}

#endif
