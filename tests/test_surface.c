/* Surface reconstruction (include/pbf/surface.h, docs/surface.md): the case table's
 * consistency, watertight and manifold meshes from random and adversarial clouds, the volume
 * and area of a ball, flat faces on a block, bad input, determinism, files, and the GPU
 * anisotropy's clean failure where no GPU can run it. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbf/surface.h"
#include "surface/mc_table.h"
#include "test.h"

#define PI 3.14159265358979323846

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rnd(void) { /* xorshift64*: deterministic, no libc rand */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* Particles on the lattice of spacing 2r inside a ball of radius R (centre c). */
static float *lattice_ball(float r, float R, const float c[3], int *count) {
    int n = (int)ceilf(R / (2 * r)) + 1, cap = (2 * n + 1) * (2 * n + 1) * (2 * n + 1), k = 0;
    float *p = malloc(3 * (size_t)cap * sizeof *p);
    for (int z = -n; z <= n; ++z)
        for (int y = -n; y <= n; ++y)
            for (int x = -n; x <= n; ++x) {
                float q[3] = {2 * r * x, 2 * r * y, 2 * r * z};
                if (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] > R * R) continue;
                for (int d = 0; d < 3; ++d) p[3 * k + d] = c[d] + q[d];
                ++k;
            }
    *count = k;
    return p;
}

/* nx*ny*nz particles on the lattice from (0,0,0), each moved by up to ±jitter·r. */
static float *lattice_block(float r, int nx, int ny, int nz, float jitter) {
    float *p = malloc(3 * (size_t)nx * ny * nz * sizeof *p);
    int k = 0;
    for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y)
            for (int x = 0; x < nx; ++x, ++k) {
                int l[3] = {x, y, z};
                for (int d = 0; d < 3; ++d)
                    p[3 * k + d] = r + 2 * r * l[d] + jitter * r * (float)(2 * rnd() - 1);
            }
    return p;
}

static int ensure_closed(const pbf_mesh *m, const char *what) {
    pbf_mesh_info info;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_mesh_measure(m, &info, err, sizeof err) == PBF_OK);
    if (info.boundary_edges || info.nonmanifold_edges || info.degenerate_triangles ||
        (m->triangle_count > 0 && !(info.volume > 0.0))) {
        fprintf(stderr,
                "%s: %d vertices %d triangles: %lld boundary, %lld non-manifold edges, "
                "%lld degenerate triangles, volume %g\n",
                what, m->vertex_count, m->triangle_count, info.boundary_edges,
                info.nonmanifold_edges, info.degenerate_triangles, info.volume);
        return 1;
    }
    /* every vertex used, every closed piece has an even Euler characteristic */
    ENSURE(info.euler % 2 == 0);
    return 0;
}

/* ---- the table -------------------------------------------------------------------------------
 * Independently of how the table was built: in every entry, the triangles' boundary is exactly
 * the segments that each face's own values call for (so two cells sharing a face agree), every
 * other edge is used once in each direction, and no such inner edge joins two points of one
 * face (the only edge two cells could both make). Together: a closed manifold everywhere. */
static int face_of_edges(int e1, int e2) {
    int f1[2], f2[2];
    for (int k = 0; k < 2; ++k) {
        int e = k ? e2 : e1, a = e / 4, u = (a + 1) % 3, v = (a + 2) % 3;
        int *f = k ? f2 : f1;
        f[0] = 2 * u + (e % 4 & 1);
        f[1] = 2 * v + (e % 4 >> 1);
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            if (f1[i] == f2[j]) return f1[i];
    return -1;
}

static int test_table(void) {
    mc_table *t = malloc(sizeof *t);
    ENSURE(mc_table_build(t) == 0);
    int extras = 0, entries = 0;
    for (int cas = 0; cas < 256; ++cas)
        for (int d = 0; d < 64; ++d) {
            if (d & ~t->ambiguous[cas]) continue;
            const mc_entry *e = &t->entries[cas << 6 | d];
            ++entries;
            extras += e->extra_count;
            /* directed edge counts between the 12 + extra vertices */
            int cnt[16][16];
            memset(cnt, 0, sizeof cnt);
            for (int k = 0; k < e->tri_count; ++k)
                for (int j = 0; j < 3; ++j) ++cnt[e->tris[3 * k + j]][e->tris[3 * k + (j + 1) % 3]];
            /* expected face segments (undirected) */
            int seg[12][12];
            memset(seg, 0, sizeof seg);
            int crossings = 0;
            for (int f = 0; f < 6; ++f) {
                const uint8_t *q = t->face_corners[f];
                int in[4], fe[4], cr[4], n = 0;
                for (int m = 0; m < 4; ++m) in[m] = cas >> q[m] & 1;
                for (int m = 0; m < 4; ++m) {
                    int a = q[m], b = q[(m + 1) & 3];
                    for (int x = 0; x < 12; ++x)
                        if ((t->edge_corners[x][0] == a && t->edge_corners[x][1] == b) ||
                            (t->edge_corners[x][0] == b && t->edge_corners[x][1] == a))
                            fe[m] = x;
                    if (in[m] != in[(m + 1) & 3]) cr[n++] = fe[m];
                }
                if (n == 2) seg[cr[0]][cr[1]] = seg[cr[1]][cr[0]] = 1;
                if (n == 4) {
                    int joined = d >> f & 1;
                    for (int m = 0; m < 4; ++m)
                        if (in[m] != joined)
                            seg[fe[(m + 3) & 3]][fe[m]] = seg[fe[m]][fe[(m + 3) & 3]] = 1;
                }
            }
            for (int x = 0; x < 12; ++x)
                crossings +=
                    (cas >> t->edge_corners[x][0] & 1) != (cas >> t->edge_corners[x][1] & 1);
            int used[12] = {0};
            for (int k = 0; k < 3 * e->tri_count; ++k)
                if (e->tris[k] < 12) used[e->tris[k]] = 1;
            int used_count = 0;
            for (int x = 0; x < 12; ++x) used_count += used[x];
            if (used_count != crossings) {
                fprintf(stderr, "case %d/%d: %d crossings, %d used\n", cas, d, crossings,
                        used_count);
                return 1;
            }
            for (int a = 0; a < 16; ++a)
                for (int b = a + 1; b < 16; ++b) {
                    int ab = cnt[a][b], ba = cnt[b][a];
                    int is_seg = a < 12 && b < 12 && seg[a][b];
                    if (is_seg ? ab + ba != 1 : !((ab == 0 && ba == 0) || (ab == 1 && ba == 1))) {
                        fprintf(stderr, "case %d/%d: edge %d-%d used %d+%d times (segment %d)\n",
                                cas, d, a, b, ab, ba, is_seg);
                        return 1;
                    }
                    if (!is_seg && ab && a < 12 && b < 12 && face_of_edges(a, b) >= 0) {
                        fprintf(stderr, "case %d/%d: inner edge %d-%d lies on a face\n", cas, d, a,
                                b);
                        return 1;
                    }
                }
        }
    printf("  table: %d entries, %d extra vertices\n", entries, extras);
    free(t);
    return 0;
}

/* ---- meshes ---------------------------------------------------------------------------------- */

static pbf_surface_def def_for(float r) {
    pbf_surface_def d = pbf_default_surface_def();
    d.particle_radius = r;
    return d;
}

/* Random clouds: uniform in a box, clustered, sparse and dense, on and off the lattice, both
 * kernels and several cell sizes; no smoothing, so the raw marching cubes output is checked. */
static int test_random_clouds(void) {
    const float r = 0.01f;
    int meshes = 0, triangles = 0;
    for (int trial = 0; trial < 48; ++trial) {
        int count = 1 + (int)(rnd() * (trial < 24 ? 60 : 1500));
        float box = 2 * r * (1.0f + (float)rnd() * 14.0f);
        float *p = malloc(3 * (size_t)count * sizeof *p);
        int clustered = trial % 3 == 1, snapped = trial % 3 == 2;
        for (int i = 0; i < count; ++i)
            for (int d = 0; d < 3; ++d) {
                float x = (float)rnd() * box;
                if (clustered) x = (float)(0.5 * box + 0.15 * box * (rnd() + rnd() + rnd() - 1.5));
                /* on the grid's lattice: symmetric values, ties in the face decider */
                if (snapped) x = r * roundf(x / r);
                p[3 * i + d] = x;
            }
        pbf_surface_def def = def_for(r);
        def.kernel = trial % 2 ? PBF_SURFACE_ISOTROPIC : PBF_SURFACE_ANISOTROPIC;
        def.cell_size = trial % 4 == 0   ? 0.5f
                        : trial % 4 == 1 ? 1.0f
                        : trial % 4 == 2 ? 1.5f
                                         : 0.75f;
        def.smooth_iterations = 0;
        def.iso = trial % 5 == 0 ? 0.3f : 0.5f;
        pbf_mesh m;
        char err[PBF_ERROR_SIZE], what[64];
        ENSURE(pbf_surface_reconstruct(&def, p, count, &m, NULL, err, sizeof err) == PBF_OK);
        snprintf(what, sizeof what, "random cloud %d (%d particles)", trial, count);
        if (ensure_closed(&m, what) != 0) return 1;
        meshes += m.triangle_count > 0;
        triangles += m.triangle_count;
        pbf_mesh_free(&m);
        free(p);
    }
    printf("  random clouds: %d non-empty meshes, %d triangles, all closed and manifold\n", meshes,
           triangles);
    ENSURE(meshes > 30);
    return 0;
}

/* A ball of particles: the mesh's volume within 2 % of the particles' volume N (2r)³, its area
 * within 5 % of the sphere's of that volume. Both kernels. */
static int test_ball(void) {
    const float r = 0.01f, R = 0.3f, c[3] = {0.013f, -0.2f, 0.5f};
    int count;
    float *p = lattice_ball(r, R, c, &count);
    const double volume = count * pow(2.0 * r, 3.0);
    const double radius = cbrt(3.0 * volume / (4.0 * PI)), area = 4.0 * PI * radius * radius;
    for (int kernel = 0; kernel < 2; ++kernel) {
        pbf_surface_def def = def_for(r);
        def.kernel = (pbf_surface_kernel)kernel;
        pbf_mesh m;
        char err[PBF_ERROR_SIZE];
        ENSURE(pbf_surface_reconstruct(&def, p, count, &m, NULL, err, sizeof err) == PBF_OK);
        if (ensure_closed(&m, "ball") != 0) return 1;
        pbf_mesh_info info;
        ENSURE(pbf_mesh_measure(&m, &info, err, sizeof err) == PBF_OK);
        printf("  ball, %s: %d particles, volume %+.2f %%, area %+.2f %%, %d triangles, %d piece\n",
               kernel ? "isotropic" : "anisotropic", count, 100.0 * (info.volume / volume - 1.0),
               100.0 * (info.area / area - 1.0), m.triangle_count, info.components);
        ENSURE(info.components == 1 && info.euler == 2);
        ENSURE(fabs(info.volume / volume - 1.0) < 0.02);
        ENSURE(fabs(info.area / area - 1.0) < 0.05);
        pbf_mesh_free(&m);
    }
    free(p);
    return 0;
}

/* A resting block (lattice with a little jitter): away from its edges, the faces are flat. */
static double block_max_angle(pbf_surface_kernel kernel, double *mean_angle) {
    const float r = 0.01f;
    const int nx = 24, ny = 12, nz = 20;
    rng_state = 12345;
    float *p = lattice_block(r, nx, ny, nz, 0.1f);
    pbf_surface_def def = def_for(r);
    def.kernel = kernel;
    pbf_mesh m;
    char err[PBF_ERROR_SIZE];
    if (pbf_surface_reconstruct(&def, p, nx * ny * nz, &m, NULL, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return 180.0;
    }
    const double size[3] = {2 * r * nx, 2 * r * ny, 2 * r * nz}, margin = 8 * r;
    double worst = 0.0, sum = 0.0;
    int n = 0;
    for (int v = 0; v < m.vertex_count; ++v) {
        const float *q = m.positions + 3 * (size_t)v, *nrm = m.normals + 3 * (size_t)v;
        /* the face it is on: the nearest face plane of the block's box, within 2r */
        int axis = -1, inner = 1;
        double dir = 0.0, best = 2 * r;
        for (int d = 0; d < 3; ++d) {
            if (fabs(q[d]) < best) axis = d, dir = -1.0, best = fabs(q[d]);
            if (fabs(q[d] - size[d]) < best) axis = d, dir = 1.0, best = fabs(q[d] - size[d]);
        }
        if (axis < 0) continue;
        for (int d = 0; d < 3; ++d)
            if (d != axis && (q[d] < margin || q[d] > size[d] - margin)) inner = 0;
        if (!inner) continue;
        double angle = acos(fmin(1.0, nrm[axis] * dir)) * 180.0 / PI;
        if (angle > worst) worst = angle;
        sum += angle;
        ++n;
    }
    *mean_angle = n ? sum / n : 180.0;
    pbf_mesh_free(&m);
    free(p);
    return n > 100 ? worst : 180.0;
}

static int test_flat_block(void) {
    double mean_a, mean_i;
    double aniso = block_max_angle(PBF_SURFACE_ANISOTROPIC, &mean_a);
    double iso = block_max_angle(PBF_SURFACE_ISOTROPIC, &mean_i);
    printf("  block faces away from edges: anisotropic max %.2f° mean %.2f°, isotropic max %.2f° "
           "mean %.2f°\n",
           aniso, mean_a, iso, mean_i);
    ENSURE(aniso < 4.0);
    ENSURE(mean_a < 1.0);
    return 0;
}

/* Decimation keeps the mesh closed and manifold, and the ball's volume and area. */
static int test_decimate(void) {
    const float r = 0.01f, R = 0.2f, c[3] = {0, 0, 0};
    int count;
    float *p = lattice_ball(r, R, c, &count);
    const double volume = count * pow(2.0 * r, 3.0);
    const double radius = cbrt(3.0 * volume / (4.0 * PI)), area = 4.0 * PI * radius * radius;
    pbf_surface_def def = def_for(r);
    pbf_mesh full, m;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_surface_reconstruct(&def, p, count, &full, NULL, err, sizeof err) == PBF_OK);
    def.decimate = 0.2f;
    ENSURE(pbf_surface_reconstruct(&def, p, count, &m, NULL, err, sizeof err) == PBF_OK);
    if (ensure_closed(&m, "decimated ball") != 0) return 1;
    pbf_mesh_info info;
    ENSURE(pbf_mesh_measure(&m, &info, err, sizeof err) == PBF_OK);
    printf("  decimated ball: %d -> %d triangles, volume %+.2f %%, area %+.2f %%\n",
           full.triangle_count, m.triangle_count, 100.0 * (info.volume / volume - 1.0),
           100.0 * (info.area / area - 1.0));
    ENSURE(m.triangle_count <= (int)(0.2 * full.triangle_count) + 2);
    ENSURE(info.components == 1 && info.euler == 2);
    ENSURE(fabs(info.volume / volume - 1.0) < 0.02);
    ENSURE(fabs(info.area / area - 1.0) < 0.05);
    pbf_mesh_free(&m);
    pbf_mesh_free(&full);
    free(p);
    /* random clouds, decimated hard: still closed and manifold */
    rng_state = 4242;
    for (int trial = 0; trial < 12; ++trial) {
        int n = 20 + (int)(rnd() * 800);
        float *q = malloc(3 * (size_t)n * sizeof *q);
        for (int i = 0; i < 3 * n; ++i) q[i] = (float)(rnd() * 0.25);
        pbf_surface_def d = def_for(r);
        d.decimate = trial % 2 ? 0.05f : 0.3f;
        ENSURE(pbf_surface_reconstruct(&d, q, n, &m, NULL, err, sizeof err) == PBF_OK);
        if (ensure_closed(&m, "decimated cloud") != 0) return 1;
        pbf_mesh_free(&m);
        free(q);
    }
    return 0;
}

/* Empty input, one particle, two, NaN and infinity, bad definitions. */
static int test_bad_input(void) {
    char err[PBF_ERROR_SIZE] = "";
    pbf_surface_def def = def_for(0.01f);
    pbf_mesh m;
    ENSURE(pbf_surface_reconstruct(&def, NULL, 0, &m, NULL, err, sizeof err) == PBF_OK);
    ENSURE(m.vertex_count == 0 && m.triangle_count == 0);
    pbf_mesh_free(&m);

    float one[3] = {0.5f, 0.25f, -1.0f};
    ENSURE(pbf_surface_reconstruct(&def, one, 1, &m, NULL, err, sizeof err) == PBF_OK);
    if (ensure_closed(&m, "one particle") != 0) return 1;
    pbf_mesh_info info;
    ENSURE(pbf_mesh_measure(&m, &info, err, sizeof err) == PBF_OK);
    /* a lone particle shows as a small drop of about its own volume */
    printf("  one particle: %d triangles, volume %.2f (2r)³\n", m.triangle_count,
           info.volume / 8e-6);
    ENSURE(info.components == 1 && info.volume > 0.3 * 8e-6 && info.volume < 3.0 * 8e-6);
    pbf_mesh_free(&m);
    def.kernel = PBF_SURFACE_ISOTROPIC; /* a lone isotropic kernel stays below iso: no surface */
    ENSURE(pbf_surface_reconstruct(&def, one, 1, &m, NULL, err, sizeof err) == PBF_OK);
    ENSURE(m.triangle_count == 0);
    pbf_mesh_free(&m);
    def.kernel = PBF_SURFACE_ANISOTROPIC;

    float *p = lattice_block(0.01f, 4, 4, 4, 0.0f);
    p[3 * 37 + 1] = NAN;
    ENSURE(pbf_surface_reconstruct(&def, p, 64, &m, NULL, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "particle 37") != NULL && strstr(err, "non-finite") != NULL);
    ENSURE(m.triangles == NULL && m.triangle_count == 0);
    p[3 * 37 + 1] = INFINITY;
    ENSURE(pbf_surface_reconstruct(&def, p, 64, &m, NULL, err, sizeof err) == PBF_ERR_INVALID_ARG);
    float c[3], a[9];
    ENSURE(pbf_surface_anisotropy(&def, p + 3 * 37, 1, c, a, err, sizeof err) ==
           PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "particle 0") != NULL);
    p[3 * 37 + 1] = 0.0f;
    /* one particle a kilometre away: the grid would be too large: a message, not a crash */
    p[3 * 5] = 1e5f;
    ENSURE(pbf_surface_reconstruct(&def, p, 64, &m, NULL, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "spread") != NULL);
    free(p);

    pbf_surface_def bad = pbf_default_surface_def(); /* no radius */
    ENSURE(pbf_surface_reconstruct(&bad, one, 1, &m, NULL, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "particle_radius") != NULL);
    bad = def_for(0.01f);
    bad.iso = 1.5f;
    ENSURE(pbf_surface_check_def(&bad, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "iso") != NULL);
    bad = def_for(0.01f);
    bad.cell_size = NAN;
    ENSURE(pbf_surface_check_def(&bad, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "cell_size") != NULL);
    return 0;
}

/* The same mesh, bit for bit, for 1, 2 and 3 threads. */
static int test_determinism(void) {
    const float r = 0.01f;
    rng_state = 777;
    int count = 3000;
    float *p = malloc(3 * (size_t)count * sizeof *p);
    for (int i = 0; i < count; ++i)
        for (int d = 0; d < 3; ++d) p[3 * i + d] = (float)(rnd() * (d == 1 ? 0.15 : 0.5));
    pbf_mesh ref;
    char err[PBF_ERROR_SIZE];
    for (int threads = 1; threads <= 3; ++threads) {
        pbf_surface_def def = def_for(r);
        def.threads = threads;
        pbf_mesh m;
        ENSURE(pbf_surface_reconstruct(&def, p, count, &m, NULL, err, sizeof err) == PBF_OK);
        if (threads == 1) {
            ref = m;
            if (ensure_closed(&m, "determinism") != 0) return 1;
            continue;
        }
        ENSURE(m.vertex_count == ref.vertex_count && m.triangle_count == ref.triangle_count);
        ENSURE(memcmp(m.positions, ref.positions, 3 * sizeof(float) * (size_t)m.vertex_count) == 0);
        ENSURE(memcmp(m.normals, ref.normals, 3 * sizeof(float) * (size_t)m.vertex_count) == 0);
        ENSURE(memcmp(m.triangles, ref.triangles, 3 * sizeof(int32_t) * (size_t)m.triangle_count) ==
               0);
        pbf_mesh_free(&m);
    }
    pbf_mesh_free(&ref);
    free(p);
    return 0;
}

/* The ellipsoids: round with the volume of the kernel in the bulk, flat along the normal on a
 * face, the axes' product h³ always. */
static int test_anisotropy(void) {
    const float r = 0.01f;
    const int nx = 12, ny = 12, nz = 12, count = nx * ny * nz;
    float *p = lattice_block(r, nx, ny, nz, 0.0f);
    float *c = malloc(3 * (size_t)count * sizeof *c), *a = malloc(9 * (size_t)count * sizeof *a);
    pbf_surface_def def = def_for(r);
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_surface_anisotropy(&def, p, count, c, a, err, sizeof err) == PBF_OK);
    const double h = def.kernel_radius * r;
    int centre = (6 * ny + 6) * nx + 6, top = (6 * ny + ny - 1) * nx + 6;
    for (int k = 0; k < 3; ++k) {
        double len = sqrt(a[9 * centre + k] * a[9 * centre + k] +
                          a[9 * centre + 3 + k] * a[9 * centre + 3 + k] +
                          a[9 * centre + 6 + k] * a[9 * centre + 6 + k]);
        ENSURE_NEAR(len, h, 1e-3 * h);
    }
    ENSURE_NEAR(c[3 * centre + 1], p[3 * centre + 1], 1e-6);
    /* the top face: its shortest axis is along y, stretched max_stretch times less than the
     * longest; the product of the lengths stays h³ */
    const float *A = a + 9 * top;
    double len[3], prod = 1.0;
    int shortest = 0;
    for (int k = 0; k < 3; ++k) {
        len[k] = sqrt(A[k] * A[k] + A[3 + k] * A[3 + k] + A[6 + k] * A[6 + k]);
        prod *= len[k];
        if (len[k] < len[shortest]) shortest = k;
    }
    printf("  top-face ellipsoid: %.2f h, %.2f h, %.2f h\n", len[0] / h, len[1] / h, len[2] / h);
    ENSURE(fabs(A[3 + shortest]) / len[shortest] > 0.999);
    ENSURE(len[shortest] < 0.6 * h);
    ENSURE_NEAR(prod, h * h * h, 1e-3 * h * h * h);
    ENSURE(c[3 * top + 1] < p[3 * top + 1]); /* smoothed towards its neighbours, below */
    free(p), free(c), free(a);
    return 0;
}

/* pbf_surface_gpu where it cannot run (the sanitizer build has no CUDA backend; most test
 * machines have no GPU): create fails cleanly, with a reason, and leaks nothing; the anisotropy
 * call says why too. Where a GPU is usable, test_surface_gpu checks the results. */
static int test_gpu_unavailable(void) {
    char err[PBF_ERROR_SIZE] = "";
    pbf_surface_gpu *g = NULL;
    ENSURE(pbf_surface_gpu_create(NULL, err, sizeof err) == PBF_ERR_INVALID_ARG);
    err[0] = '\0';
    pbf_status st = pbf_surface_gpu_create(&g, err, sizeof err);
    if (st == PBF_OK) {
        ENSURE(g != NULL);
        printf("  a GPU is usable here: test_surface_gpu checks its results\n");
        pbf_surface_gpu_destroy(g);
        return 0;
    }
    printf("  pbf_surface_gpu_create: %s\n", err);
    ENSURE(st == PBF_ERR_NO_DEVICE || st == PBF_ERR_UNSUPPORTED);
    ENSURE(g == NULL && err[0] != '\0');
    if (st == PBF_ERR_UNSUPPORTED) ENSURE(strstr(err, "without the CUDA backend") != NULL);
    pbf_surface_gpu_destroy(NULL);
    /* no scratch: unsupported without the backend, an invalid argument with it */
    pbf_surface_def def = def_for(0.01f);
    float p[3] = {0, 0, 0}, c[3], a[9];
    err[0] = '\0';
    pbf_status an = pbf_surface_gpu_anisotropy(NULL, &def, p, 1, c, a, err, sizeof err);
    ENSURE(an == (st == PBF_ERR_UNSUPPORTED ? PBF_ERR_UNSUPPORTED : PBF_ERR_INVALID_ARG));
    ENSURE(err[0] != '\0');
    return 0;
}

/* PLY round trip, OBJ text, errors naming the file. */
static int test_files(void) {
    const float r = 0.01f, centre[3] = {0, 0, 0};
    int count;
    float *p = lattice_ball(r, 0.06f, centre, &count);
    pbf_surface_def def = def_for(r);
    pbf_mesh m, back;
    char err[PBF_ERROR_SIZE], dir[] = "/tmp/pbf_surface_XXXXXX", path[256];
    ENSURE(mkdtemp(dir) != NULL);
    ENSURE(pbf_surface_reconstruct(&def, p, count, &m, NULL, err, sizeof err) == PBF_OK);
    snprintf(path, sizeof path, "%s/ball.ply", dir);
    ENSURE(pbf_mesh_write(&m, PBF_MESH_PLY, path, err, sizeof err) == PBF_OK);
    ENSURE(pbf_mesh_read_ply(path, &back, err, sizeof err) == PBF_OK);
    ENSURE(back.vertex_count == m.vertex_count && back.triangle_count == m.triangle_count);
    ENSURE(memcmp(back.positions, m.positions, 12 * (size_t)m.vertex_count) == 0);
    ENSURE(memcmp(back.normals, m.normals, 12 * (size_t)m.vertex_count) == 0);
    ENSURE(memcmp(back.triangles, m.triangles, 12 * (size_t)m.triangle_count) == 0);
    pbf_mesh_free(&back);
    unlink(path);
    snprintf(path, sizeof path, "%s/ball.obj", dir);
    ENSURE(pbf_mesh_write(&m, PBF_MESH_OBJ, path, err, sizeof err) == PBF_OK);
    FILE *f = fopen(path, "r");
    ENSURE(f != NULL);
    char line[256];
    int v = 0, vn = 0, fc = 0;
    while (fgets(line, sizeof line, f)) {
        v += strncmp(line, "v ", 2) == 0;
        vn += strncmp(line, "vn ", 3) == 0;
        fc += strncmp(line, "f ", 2) == 0;
    }
    fclose(f);
    ENSURE(v == m.vertex_count && vn == m.vertex_count && fc == m.triangle_count);
    unlink(path);
    /* an empty mesh is a valid empty file */
    pbf_mesh empty;
    memset(&empty, 0, sizeof empty);
    snprintf(path, sizeof path, "%s/empty.ply", dir);
    ENSURE(pbf_mesh_write(&empty, PBF_MESH_PLY, path, err, sizeof err) == PBF_OK);
    ENSURE(pbf_mesh_read_ply(path, &back, err, sizeof err) == PBF_OK && back.triangle_count == 0);
    pbf_mesh_free(&back);
    /* a truncated file and a missing folder: errors naming the file */
    f = fopen(path, "ab");
    fputs("junk", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/ball.ply", dir);
    ENSURE(pbf_mesh_write(&m, PBF_MESH_PLY, path, err, sizeof err) == PBF_OK);
    ENSURE(truncate(path, 400) == 0);
    ENSURE(pbf_mesh_read_ply(path, &back, err, sizeof err) == PBF_ERR_PARSE);
    ENSURE(strstr(err, "ball.ply") != NULL && strstr(err, "early") != NULL);
    unlink(path);
    snprintf(path, sizeof path, "%s/empty.ply", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/no/such/dir/x.ply", dir);
    ENSURE(pbf_mesh_write(&m, PBF_MESH_PLY, path, err, sizeof err) != PBF_OK);
    ENSURE(strstr(err, "x.ply") != NULL);
    rmdir(dir);
    pbf_mesh_free(&m);
    free(p);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(test_table);
RUN_TEST(test_random_clouds);
RUN_TEST(test_ball);
RUN_TEST(test_flat_block);
RUN_TEST(test_decimate);
RUN_TEST(test_bad_input);
RUN_TEST(test_determinism);
RUN_TEST(test_anisotropy);
RUN_TEST(test_files);
RUN_TEST(test_gpu_unavailable);
TEST_MAIN_END
