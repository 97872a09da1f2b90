/* The surface field on a sparse grid (see surface_grid.h and pbf/surface.h):
 *
 *     φ(x) = Σ_j V · 315/(64π) · det G_j · (1 − |G_j (x − c_j)|²)³   where |G_j (x − c_j)| < 1
 *
 * (poly6 of unit support stretched by the particle's ellipsoid; V = (2r)³, so φ = 1 in fluid
 * at rest). A block gathers the particles of the blocks around it in key order and adds each
 * one's kernel to the points inside its bounding box; every point's value is computed from the
 * point's integer coordinates alone, so a point shared by two blocks gets the same value in
 * both, bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "surface_grid.h"
#include "surface_util.h"

#define POLY6_UNIT 1.5666814710608448 /* 315 / (64 π) */

static double row_norm(const float *a, int row) {
    const float *r = a + 3 * row;
    return sqrt((double)r[0] * r[0] + (double)r[1] * r[1] + (double)r[2] * r[2]);
}

void surface_grid_origin(const pbf_surface_def *def, const float *centers, const float *axes,
                         int count, double origin[3]) {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, ext = 0.0;
    for (int i = 0; i < count; ++i)
        for (int d = 0; d < 3; ++d) {
            double e = row_norm(axes + 9 * (size_t)i, d);
            if (e > ext) ext = e;
            if (centers[3 * (size_t)i + d] < lo[d]) lo[d] = centers[3 * (size_t)i + d];
        }
    double cell = (double)def->cell_size * def->particle_radius;
    /* Room below for two reaches of blocks: a sampled block lies up to a reach from a
     * particle's block, and it reads the particles of the blocks up to a reach from it. */
    for (int d = 0; d < 3; ++d) origin[d] = lo[d] - 2.0 * ext - 4.0 * SURFACE_BLOCK * cell;
}

int surface_kernels_build(surface_kernels *k, const pbf_surface_def *def, const float *centers,
                          const float *axes, int count, const double origin[3]) {
    memset(k, 0, sizeof *k);
    size_t n = count > 0 ? (size_t)count : 1;
    k->count = count;
    k->center = malloc(3 * n * sizeof *k->center);
    k->g = malloc(9 * n * sizeof *k->g);
    k->weight = malloc(n * sizeof *k->weight);
    k->extent = malloc(3 * n * sizeof *k->extent);
    if (!k->center || !k->g || !k->weight || !k->extent) {
        surface_kernels_free(k);
        return -1;
    }
    const double spacing = 2.0 * def->particle_radius, volume = spacing * spacing * spacing;
    for (int i = 0; i < count; ++i) {
        const float *a = axes + 9 * (size_t)i;
        float *g = k->g + 9 * (size_t)i;
        /* A = R diag(len): G = A⁻¹ = diag(1/len²) Aᵀ, det G = 1 / (len0 len1 len2) */
        double len[3];
        for (int c = 0; c < 3; ++c) {
            len[c] = sqrt((double)a[c] * a[c] + (double)a[3 + c] * a[3 + c] +
                          (double)a[6 + c] * a[6 + c]);
            for (int col = 0; col < 3; ++col)
                g[3 * c + col] = (float)(a[3 * col + c] / (len[c] * len[c]));
        }
        k->weight[i] = (float)(volume * POLY6_UNIT / (len[0] * len[1] * len[2]));
        for (int d = 0; d < 3; ++d) {
            k->center[3 * (size_t)i + d] = (float)(centers[3 * (size_t)i + d] - origin[d]);
            k->extent[3 * (size_t)i + d] = (float)row_norm(a, d);
        }
    }
    return 0;
}

void surface_kernels_free(surface_kernels *k) {
    free(k->center);
    free(k->g);
    free(k->weight);
    free(k->extent);
    memset(k, 0, sizeof *k);
}

/* Reorders the kernels: kernel i becomes old kernel order[i]. */
static int surface_kernels_permute(surface_kernels *k, const int32_t *order) {
    const size_t n = (size_t)(k->count > 0 ? k->count : 1);
    float *buf = malloc(9 * n * sizeof *buf);
    if (buf == NULL) return -1;
    float *arrays[4] = {k->center, k->g, k->weight, k->extent};
    const int width[4] = {3, 9, 1, 3};
    for (int a = 0; a < 4; ++a) {
        for (int i = 0; i < k->count; ++i)
            memcpy(buf + (size_t)width[a] * i, arrays[a] + (size_t)width[a] * order[i],
                   (size_t)width[a] * sizeof *buf);
        memcpy(arrays[a], buf, (size_t)width[a] * (size_t)k->count * sizeof *buf);
    }
    free(buf);
    return 0;
}

pbf_status surface_grid_build(surface_grid *g, const pbf_surface_def *def, surface_kernels *k,
                              const double origin[3], char *err, size_t err_size) {
    memset(g, 0, sizeof *g);
    memcpy(g->origin, origin, sizeof g->origin);
    g->cell = def->cell_size * def->particle_radius;
    g->iso = def->iso;
    g->kernels = k;
    const double block = (double)SURFACE_BLOCK * g->cell;
    double ext = 0.0, hi[3] = {0, 0, 0};
    for (int i = 0; i < k->count; ++i)
        for (int d = 0; d < 3; ++d) {
            if (k->extent[3 * (size_t)i + d] > ext) ext = k->extent[3 * (size_t)i + d];
            if (k->center[3 * (size_t)i + d] > hi[d]) hi[d] = k->center[3 * (size_t)i + d];
        }
    g->reach = (int)ceil((ext / g->cell + 1.0) / SURFACE_BLOCK);
    for (int d = 0; d < 3; ++d) {
        double blocks = hi[d] / block + 2.0 * g->reach + 3.0;
        if (!(blocks * SURFACE_BLOCK < (double)(1 << 24))) {
            surface_format(err, err_size,
                           "particles spread over %.6g m along %c: more than 2^24 cells of %.6g m "
                           "(a particle far away from the others? a larger cell_size?)",
                           hi[d], "xyz"[d], (double)g -> cell);
            return PBF_ERR_INVALID_ARG;
        }
        g->particles.bits[d] = cell_index_bits((int64_t)blocks + 1);
    }
    const int n = k->count;
    uint64_t *keys = malloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
    if (keys == NULL) goto oom;
    for (int i = 0; i < n; ++i) {
        int64_t c[3];
        for (int d = 0; d < 3; ++d) c[d] = (int64_t)floor(k->center[3 * (size_t)i + d] / block);
        keys[i] = cell_key(&g->particles, c[0], c[1], c[2]);
    }
    int built = cell_index_build(&g->particles, keys, n);
    free(keys);
    if (built != 0 || surface_kernels_permute(k, g->particles.order) != 0) goto oom;
    /* the kernels now lie in cell order: particle s of the index is kernel s */
    for (int i = 0; i < n; ++i) g->particles.order[i] = i;

    /* Every block within reach of a particle's block, sorted and unique. */
    const int side = 2 * g->reach + 1;
    const size_t per = (size_t)side * side * side,
                 candidates = per * (size_t)g->particles.cell_count;
    uint64_t *cand = malloc((candidates > 0 ? candidates : 1) * sizeof *cand);
    uint64_t *tmp = malloc((candidates > 0 ? candidates : 1) * sizeof *tmp);
    int32_t *val = calloc(candidates > 0 ? candidates : 1, sizeof *val);
    int32_t *tmpv = malloc((candidates > 0 ? candidates : 1) * sizeof *tmpv);
    if (!cand || !tmp || !val || !tmpv) {
        free(cand), free(tmp), free(val), free(tmpv);
        goto oom;
    }
    const uint64_t mask[3] = {((uint64_t)1 << g->particles.bits[0]) - 1,
                              ((uint64_t)1 << g->particles.bits[1]) - 1,
                              ((uint64_t)1 << g->particles.bits[2]) - 1};
    size_t m = 0;
    for (int c = 0; c < g->particles.cell_count; ++c) {
        uint64_t key = g->particles.cell_keys[c];
        int64_t x = (int64_t)(key & mask[0]), y = (int64_t)(key >> g->particles.bits[0] & mask[1]);
        int64_t z = (int64_t)(key >> (g->particles.bits[0] + g->particles.bits[1]) & mask[2]);
        for (int dz = -g->reach; dz <= g->reach; ++dz)
            for (int dy = -g->reach; dy <= g->reach; ++dy)
                for (int dx = -g->reach; dx <= g->reach; ++dx)
                    cand[m++] = cell_key(&g->particles, x + dx, y + dy, z + dz);
    }
    int sorted = radix_sort_u64(cand, val, m,
                                g->particles.bits[0] + g->particles.bits[1] + g->particles.bits[2],
                                tmp, tmpv);
    free(tmp), free(val), free(tmpv);
    if (sorted != 0) {
        free(cand);
        goto oom;
    }
    size_t unique = 0;
    for (size_t i = 0; i < m; ++i)
        if (i == 0 || cand[i] != cand[i - 1]) cand[unique++] = cand[i];
    g->block_count = (int)unique;
    g->block_keys = cand;
    g->block_coord = malloc((unique > 0 ? unique : 1) * sizeof *g->block_coord);
    if (g->block_coord == NULL) goto oom;
    for (size_t i = 0; i < unique; ++i) {
        uint64_t key = cand[i];
        g->block_coord[i][0] = (int32_t)(key & mask[0]);
        g->block_coord[i][1] = (int32_t)(key >> g->particles.bits[0] & mask[1]);
        g->block_coord[i][2] =
            (int32_t)(key >> (g->particles.bits[0] + g->particles.bits[1]) & mask[2]);
    }
    return PBF_OK;
oom:
    surface_grid_free(g);
    surface_format(err, err_size, "out of memory for the surface grid of %d particles", n);
    return PBF_ERR_OUT_OF_MEMORY;
}

void surface_grid_free(surface_grid *g) {
    cell_index_free(&g->particles);
    free(g->block_keys);
    free(g->block_coord);
    g->block_keys = NULL;
    g->block_coord = NULL;
    g->block_count = 0;
}

void surface_grid_sample(const surface_grid *g, int b, float *values) {
    enum { P = SURFACE_BLOCK + 1 };
    memset(values, 0, SURFACE_BLOCK_POINTS * sizeof *values);
    const surface_kernels *k = g->kernels;

    const int32_t *bc = g->block_coord[b];
    const int64_t p0[3] = {(int64_t)bc[0] * SURFACE_BLOCK, (int64_t)bc[1] * SURFACE_BLOCK,
                           (int64_t)bc[2] * SURFACE_BLOCK};
    const float cell = g->cell, inv_cell = 1.0f / cell;
    for (int dz = -g->reach; dz <= g->reach; ++dz)
        for (int dy = -g->reach; dy <= g->reach; ++dy)
            for (int dx = -g->reach; dx <= g->reach; ++dx) {
                int at = cell_index_find(
                    &g->particles, cell_key(&g->particles, bc[0] + dx, bc[1] + dy, bc[2] + dz));
                if (at < 0) continue;
                const int32_t first = g->particles.cell_start[at];
                const int32_t end = g->particles.cell_start[at + 1];
                for (int s = first; s < end; ++s) {
                    const int j = s; /* the kernels are stored in cell order */
                    const float *c = k->center + 3 * (size_t)j, *e = k->extent + 3 * (size_t)j;
                    int lo[3], hi[3], empty = 0;
                    for (int d = 0; d < 3; ++d) {
                        int64_t a = (int64_t)ceilf((c[d] - e[d]) * inv_cell) - p0[d];
                        int64_t z = (int64_t)floorf((c[d] + e[d]) * inv_cell) - p0[d];
                        lo[d] = (int)(a < 0 ? 0 : a);
                        hi[d] = (int)(z > SURFACE_BLOCK ? SURFACE_BLOCK : z);
                        if (lo[d] > hi[d]) empty = 1;
                    }
                    if (empty) continue;
                    const float *G = k->g + 9 * (size_t)j;
                    const float g0 = G[0], g3 = G[3], g6 = G[6], c0 = c[0];
                    const float w = k->weight[j];
                    const int32_t x0 = (int32_t)p0[0];
                    for (int z = lo[2]; z <= hi[2]; ++z) {
                        const float pz = (float)(int32_t)(p0[2] + z) * cell - c[2];
                        for (int y = lo[1]; y <= hi[1]; ++y) {
                            const float py = (float)(int32_t)(p0[1] + y) * cell - c[1];
                            const float b0 = G[1] * py + G[2] * pz, b1 = G[4] * py + G[5] * pz;
                            const float b2 = G[7] * py + G[8] * pz;
                            float *row = values + (z * P + y) * P;
                            /* Each point's value comes from its own coordinates alone (no
                             * running sums along x), so a point shared by two blocks gets the
                             * same bits in both. Branch-free and vectorized: a point outside
                             * the support adds exactly +0. */
#pragma omp simd
                            for (int x = lo[0]; x <= hi[0]; ++x) {
                                const float px = (float)(x0 + x) * cell - c0;
                                const float u0 = g0 * px + b0, u1 = g3 * px + b1, u2 = g6 * px + b2;
                                const float q = 1.0f - (u0 * u0 + u1 * u1 + u2 * u2);
                                const float t = q > 0.0f ? q : 0.0f;
                                row[x] += w * (t * t * t);
                            }
                        }
                    }
                }
            }
}
