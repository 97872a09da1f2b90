/* pbf's mesh bake against OpenVDB's mesh-to-volume (docs/physics.md "Mesh solids"): the same
 * welded triangles, the same grid nodes (spacing 0.75 r, pbf's node positions), on a closed
 * 100,000-triangle torus and on four broken meshes: a box without its top, a sphere with a
 * hole of 12 triangles, the sphere less a single triangle, and two overlapping closed boxes
 * given as one mesh.
 *
 *   pbf_sdf_compare [threads,threads,...] [samples] [mesh]   defaults: 1,2, 200000, all meshes
 *
 * (mesh: the start of a name in the table, e.g. torus)
 *
 * Per mesh and thread count: the bake times (best of three, pbf's and OpenVDB's in turn; pbf's
 * includes its density map, which OpenVDB does not make), the difference of the two fields at
 * random points of the box around the mesh (seeded, the same points every run), how often their
 * signs disagree, and against the intended closed shape (analytic; the points within one cell of
 * its surface left out) the share of inside points each calls outside and of outside points each
 * calls inside. The largest difference is also given for the points within 4 cells (3 r) of
 * pbf's surface. OpenVDB's band is made wide enough to cover every sample on both sides, so its
 * field is defined wherever pbf's is; a second OpenVDB time is for its default narrow band (3
 * voxels).
 * Timings only: no pass/fail. Built only where CMake finds OpenVDB (bench/CMakeLists.txt). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/mesh_files.h"
#include "pbf/geometry.h"
#include "vdb_sdf.h"

#define RADIUS 0.01f
#define REPEATS 3
#define NEAR 4.0 /* cells (3 r): "near the surface", where collisions and contacts read the field */

static char dir[256];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The intended closed shapes, centred at C, as analytic signed distances (negative inside). */
static const double C[3] = {0.25, 0.25, 0.25};
enum shape { TORUS, OPEN_BOX, HOLED_SPHERE, PIERCED_SPHERE, TWO_BOXES, SHAPES };
static const char *const shape_name[SHAPES] = {"torus, closed", "box without its top",
                                               "sphere with a hole", "sphere less one triangle",
                                               "two overlapping boxes"};
#define TORUS_R 0.15
#define TORUS_A 0.05
#define BOX_HALF 0.1
#define SPHERE_R 0.1
#define SHIFT 0.07 /* the second box's offset along each axis */

static double box_sdf(const double p[3], const double c[3], double half) {
    double q[3], out = 0.0, in = -INFINITY;
    for (int k = 0; k < 3; ++k) {
        q[k] = fabs(p[k] - c[k]) - half;
        out += q[k] > 0.0 ? q[k] * q[k] : 0.0;
        in = fmax(in, q[k]);
    }
    return out > 0.0 ? sqrt(out) : in;
}

static double intended_sdf(enum shape s, const double p[3]) {
    double d[3] = {p[0] - C[0], p[1] - C[1], p[2] - C[2]};
    switch (s) {
    case TORUS: {
        double rho = sqrt(d[0] * d[0] + d[2] * d[2]) - TORUS_R;
        return sqrt(rho * rho + d[1] * d[1]) - TORUS_A;
    }
    case OPEN_BOX: return box_sdf(p, C, BOX_HALF);
    case HOLED_SPHERE:
    case PIERCED_SPHERE: return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) - SPHERE_R;
    default: {
        const double c2[3] = {C[0] + SHIFT, C[1] + SHIFT, C[2] + SHIFT};
        return fmin(box_sdf(p, C, BOX_HALF), box_sdf(p, c2, BOX_HALF));
    }
    }
}

/* The torus of bench/mesh_bench.c, about C. */
static test_mesh torus(int nu, int nv) {
    return test_mesh_torus((float)C[0], (float)C[1], (float)C[2], (float)TORUS_R, (float)TORUS_A,
                           nu, nv);
}

/* Drops the triangles for which drop(centroid) is true. */
static void remove_triangles(test_mesh *m, int (*drop)(const float c[3])) {
    int kept = 0;
    for (int t = 0; t < m->nt; ++t) {
        float c[3];
        for (int k = 0; k < 3; ++k)
            c[k] = (m->v[3 * m->t[3 * t] + k] + m->v[3 * m->t[3 * t + 1] + k] +
                    m->v[3 * m->t[3 * t + 2] + k]) /
                   3.0f;
        if (drop(c)) continue;
        memmove(m->t + 3 * kept, m->t + 3 * t, 3 * sizeof *m->t);
        ++kept;
    }
    m->nt = kept;
}

static int is_top(const float c[3]) { return c[1] > (float)(C[1] + BOX_HALF) - 1e-6f; }
/* the triangles of a level-4 icosphere (edges about 6.6 mm) whose centroids lie within 1 cm of
 * its top, or only the one nearest to it */
static double pole_distance2(const float c[3]) {
    double d[3] = {c[0] - C[0], c[1] - C[1] - SPHERE_R, c[2] - C[2]};
    return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}
static double drop_below2;
static int near_pole(const float c[3]) { return pole_distance2(c) < drop_below2; }

static test_mesh make_mesh(enum shape s, int *removed) {
    float lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        lo[k] = (float)(C[k] - BOX_HALF);
        hi[k] = (float)(C[k] + BOX_HALF);
    }
    *removed = 0;
    if (s == TORUS) return torus(250, 200);
    if (s == OPEN_BOX || s == TWO_BOXES) {
        test_mesh m = test_mesh_box(lo, hi);
        if (s == OPEN_BOX) {
            int before = m.nt;
            remove_triangles(&m, is_top);
            *removed = before - m.nt;
            return m;
        }
        const float lo2[3] = {lo[0] + (float)SHIFT, lo[1] + (float)SHIFT, lo[2] + (float)SHIFT},
                    hi2[3] = {hi[0] + (float)SHIFT, hi[1] + (float)SHIFT, hi[2] + (float)SHIFT};
        test_mesh b = test_mesh_box(lo2, hi2), u;
        u.nv = m.nv + b.nv;
        u.nt = m.nt + b.nt;
        u.v = malloc((size_t)u.nv * 3 * sizeof *u.v);
        u.t = malloc((size_t)u.nt * 3 * sizeof *u.t);
        memcpy(u.v, m.v, (size_t)m.nv * 3 * sizeof *u.v);
        memcpy(u.v + 3 * m.nv, b.v, (size_t)b.nv * 3 * sizeof *u.v);
        memcpy(u.t, m.t, (size_t)m.nt * 3 * sizeof *u.t);
        for (int k = 0; k < 3 * b.nt; ++k) u.t[3 * m.nt + k] = b.t[k] + m.nv;
        test_mesh_free(&m);
        test_mesh_free(&b);
        return u;
    }
    const float c[3] = {(float)C[0], (float)C[1], (float)C[2]};
    test_mesh m = test_mesh_sphere(c, (float)SPHERE_R, 4);
    int before = m.nt;
    drop_below2 = 0.01 * 0.01;
    if (s == PIERCED_SPHERE) { /* just above the nearest centroid's */
        double nearest = INFINITY;
        for (int t = 0; t < m.nt; ++t) {
            float ct[3];
            for (int k = 0; k < 3; ++k)
                ct[k] = (m.v[3 * m.t[3 * t] + k] + m.v[3 * m.t[3 * t + 1] + k] +
                         m.v[3 * m.t[3 * t + 2] + k]) /
                        3.0f;
            nearest = fmin(nearest, pole_distance2(ct));
        }
        drop_below2 = nearest * 1.0000001 + 1e-12;
    }
    remove_triangles(&m, near_pole);
    *removed = before - m.nt;
    return m;
}

/* xorshift64*: the same points on every machine */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct result {
    double pbf_s, pbf_add_s, vdb_s, vdb_narrow_s;
    double max_diff, max_diff_near, rms_diff, sign_disagree;
    long long inside, outside; /* intended, beyond one cell of the surface */
    long long pbf_in_out, pbf_out_in, vdb_in_out, vdb_out_in;
    float band; /* OpenVDB's covering band, voxels */
} result;

/* A world with the mesh baked (no cache); the bake's times go into r when they are the best. */
static pbf_world *pbf_bake(const char *path, int threads, result *r) {
    pbf_world_def wd = pbf_default_world_def();
    wd.particle_radius = RADIUS;
    wd.domain_max = (pbf_vec3){0.5f, 0.5f, 0.5f};
    wd.threads = threads;
    char err[PBF_ERROR_SIZE];
    pbf_world *w = NULL;
    if (pbf_world_create(&wd, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    pbf_mesh_def d = pbf_default_mesh_def();
    snprintf(d.path, sizeof d.path, "%s", path);
    d.cache = 0;
    double t0 = now();
    if (pbf_world_add_mesh(w, &d) != PBF_OK) {
        fprintf(stderr, "%s\n", pbf_world_error(w));
        pbf_world_destroy(w);
        return NULL;
    }
    double t1 = now();
    r->pbf_s = fmin(r->pbf_s, pbf_world_mesh_info(w, 0).bake_seconds);
    r->pbf_add_s = fmin(r->pbf_add_s, t1 - t0);
    return w;
}

static int run(enum shape s, int threads, int samples, result *r) {
    memset(r, 0, sizeof *r);
    char path[512];
    snprintf(path, sizeof path, "%s/mesh.stl", dir);
    int removed;
    test_mesh m = make_mesh(s, &removed);
    if (test_mesh_write_stl_binary(path, &m) != 0) return 1;
    test_mesh_free(&m);
    (void)removed;

    r->pbf_s = r->pbf_add_s = r->vdb_s = r->vdb_narrow_s = INFINITY;
    pbf_world *w = pbf_bake(path, threads, r);
    if (w == NULL) return 1;
    pbf_mesh_solid_info in = pbf_world_mesh_info(w, 0);

    /* the welded triangles in world coordinates, and pbf's node origin (bake.c's layout: the
     * grid centred on the mesh's box) */
    const float *lv;
    const int32_t *tri;
    int nv;
    int nt = pbf_world_mesh_triangles(w, 0, &lv, &nv, &tri);
    float xf[12];
    pbf_world_mesh_transform(w, 0, xf);
    float *wv = malloc((size_t)nv * 3 * sizeof *wv);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < nv; ++i)
        for (int k = 0; k < 3; ++k) {
            const float *p = lv + 3 * i;
            lo[k] = fmin(lo[k], p[k]);
            hi[k] = fmax(hi[k], p[k]);
            wv[3 * i + k] =
                xf[4 * k] * p[0] + xf[4 * k + 1] * p[1] + xf[4 * k + 2] * p[2] + xf[4 * k + 3];
        }
    const int n[3] = {in.nx, in.ny, in.nz};
    double origin_local[3], origin[3];
    for (int k = 0; k < 3; ++k)
        origin_local[k] = (float)(0.5 * (lo[k] + hi[k]) - 0.5 * (n[k] - 1.0) * in.cell);
    for (int k = 0; k < 3; ++k)
        origin[k] = xf[4 * k] * origin_local[0] + xf[4 * k + 1] * origin_local[1] +
                    xf[4 * k + 2] * origin_local[2] + xf[4 * k + 3];

    /* samples in the mesh's box grown by two cells; the band covers the farthest of them */
    double *pts = malloc((size_t)samples * 3 * sizeof *pts);
    float *phi = malloc((size_t)samples * sizeof *phi);
    const double grow = 2.0 * in.cell;
    double far = 0.0;
    rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)s;
    for (int i = 0; i < samples; ++i) {
        double *p = pts + 3 * i;
        for (int k = 0; k < 3; ++k) {
            double a = (double)in.bounds_min.x, b = (double)in.bounds_max.x;
            if (k == 1) a = in.bounds_min.y, b = in.bounds_max.y;
            if (k == 2) a = in.bounds_min.z, b = in.bounds_max.z;
            p[k] = a - grow + (b - a + 2.0 * grow) * uniform();
        }
        phi[i] = pbf_world_mesh_distance(w, 0, (pbf_vec3){(float)p[0], (float)p[1], (float)p[2]});
        far = fmax(far, fabs((double)phi[i]));
    }
    r->band = (float)ceil(far / in.cell) + 2.0f;

    vdb_sdf *v = NULL;
    char err[512] = "";
    /* the bakes in turn, so that other work on the machine slows both alike */
    for (int rep = 0; rep < REPEATS; ++rep) {
        if (rep > 0) {
            pbf_world *again = pbf_bake(path, threads, r);
            if (again == NULL) return 1;
            pbf_world_destroy(again);
        }
        double sec;
        vdb_sdf *narrow = vdb_sdf_bake(wv, nv, tri, nt, origin, in.cell, 3.0f, 3.0f, threads, &sec,
                                       err, sizeof err);
        if (narrow == NULL) break;
        vdb_sdf_free(narrow);
        r->vdb_narrow_s = fmin(r->vdb_narrow_s, sec);
        if (v != NULL) vdb_sdf_free(v);
        v = vdb_sdf_bake(wv, nv, tri, nt, origin, in.cell, r->band, r->band, threads, &sec, err,
                         sizeof err);
        if (v == NULL) break;
        r->vdb_s = fmin(r->vdb_s, sec);
    }
    if (v == NULL) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }

    double sum2 = 0.0;
    long long disagree = 0;
    for (int i = 0; i < samples; ++i) {
        const double *p = pts + 3 * i;
        float a = phi[i], b = vdb_sdf_sample(v, p);
        double diff = fabs((double)b - (double)a);
        r->max_diff = fmax(r->max_diff, diff);
        if (fabs((double)a) < NEAR * in.cell) r->max_diff_near = fmax(r->max_diff_near, diff);
        sum2 += diff * diff;
        int pbf_in = a < 0.0f, vdb_in = b < 0.0f;
        disagree += pbf_in != vdb_in;
        double truth = intended_sdf(s, p);
        if (fabs(truth) < in.cell) continue;
        if (truth < 0.0) {
            ++r->inside;
            r->pbf_in_out += !pbf_in;
            r->vdb_in_out += !vdb_in;
        } else {
            ++r->outside;
            r->pbf_out_in += pbf_in;
            r->vdb_out_in += vdb_in;
        }
    }
    r->rms_diff = sqrt(sum2 / samples);
    r->sign_disagree = (double)disagree / samples;
    vdb_sdf_free(v);
    free(pts);
    free(phi);
    free(wv);
    pbf_world_destroy(w);
    return 0;
}

static double pct(long long a, long long b) { return b > 0 ? 100.0 * (double)a / (double)b : 0.0; }

int main(int argc, char **argv) {
    if (!pbf_mesh_import_available()) {
        fprintf(stderr, "pbf_sdf_compare: this pbf was built without mesh import (Assimp)\n");
        return 2;
    }
    const char *list = argc > 1 ? argv[1] : "1,2";
    int samples = argc > 2 ? atoi(argv[2]) : 200000;
    if (samples < 1) {
        fprintf(stderr, "usage: pbf_sdf_compare [threads,threads,...] [samples] [mesh]\n");
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pbf_sdf_compare_XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) return 1;
    setenv("PBF_CACHE_DIR", dir, 1);
    printf("pbf bake against %s meshToSignedDistanceField: particle radius %g m, node spacing "
           "%g m (0.75 r), %d samples per mesh, best of %d bakes\n",
           vdb_sdf_version(), (double)RADIUS, (double)(PBF_MESH_DEFAULT_CELL * RADIUS), samples,
           REPEATS);
    for (int s = 0; s < SHAPES; ++s) {
        int removed;
        test_mesh m = make_mesh((enum shape)s, &removed);
        printf("  %s: %d triangles", shape_name[s], m.nt);
        if (removed > 0) printf(" (%d removed from the closed mesh)", removed);
        printf("\n");
        test_mesh_free(&m);
    }
    printf("\n| mesh | threads | pbf bake s (pbf_world_add_mesh s) | OpenVDB s, band to cover "
           "(voxels) | OpenVDB s, band 3 | max abs. diff. m (within 4 cells) | RMS diff m | signs "
           "disagree "
           "| pbf: in→out, out→in | OpenVDB: in→out, out→in |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
    const char *only = argc > 3 ? argv[3] : "";
    int rc = 0;
    for (int s = 0; s < SHAPES && rc == 0; ++s) {
        if (strncmp(shape_name[s], only, strlen(only)) != 0) continue;
        for (const char *c = list; *c != '\0' && rc == 0;) {
            int threads = atoi(c);
            result r;
            rc = run((enum shape)s, threads, samples, &r);
            if (rc == 0)
                printf("| %s | %d | %.3f (%.3f) | %.3f (%g) | %.3f | %.2e (%.2e) | %.2e | %.3f %% "
                       "| "
                       "%.3f %%, %.3f %% | %.3f %%, %.3f %% |\n",
                       shape_name[s], threads, r.pbf_s, r.pbf_add_s, r.vdb_s, (double)r.band,
                       r.vdb_narrow_s, r.max_diff, r.max_diff_near, r.rms_diff,
                       100.0 * r.sign_disagree, pct(r.pbf_in_out, r.inside),
                       pct(r.pbf_out_in, r.outside), pct(r.vdb_in_out, r.inside),
                       pct(r.vdb_out_in, r.outside));
            fflush(stdout);
            while (*c != '\0' && *c != ',') ++c;
            if (*c == ',') ++c;
        }
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}
