/* OpenVDB level sets of the surface (pbf_mesh_write_vdb, include/pbf/surface.h; docs/surface.md):
 * the surface mesh of a ball of particles written as a .vdb and read back through OpenVDB. The
 * grid is "surface", a level set with the voxel size asked for; it is negative inside and
 * positive outside; at voxel centres near the surface it holds the signed distance to the mesh
 * (computed here by brute force); its zero crossing is the mesh; thread counts agree; an empty
 * mesh, bad arguments, unwritable or foreign files and a write failing midway give clear errors
 * and leave no file behind (nor clobber the one there).
 * Without OpenVDB built in: the calls' error is checked and the test is skipped (exit 77). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pbf/surface.h"
#include "surface/vdb.h"
#include "test.h"
#include "tmp_dir.h"

static const float radius = 0.01f; /* particle radius, m */
static const float ball = 0.08f; /* radius of the ball of particles, m */
static const float centre[3] = {0.31f, 0.27f, 0.23f};

/* The surface mesh of particles on the lattice of spacing 2r inside the ball, with the default
 * surface settings (cell = r: the voxel size below). */
static int ball_mesh(pbf_mesh *mesh) {
    int n = (int)ceilf(ball / (2 * radius)) + 1, count = 0;
    float *p = malloc(3 * (size_t)(2 * n + 1) * (2 * n + 1) * (2 * n + 1) * sizeof *p);
    if (p == NULL) return 1;
    for (int z = -n; z <= n; ++z)
        for (int y = -n; y <= n; ++y)
            for (int x = -n; x <= n; ++x) {
                float q[3] = {2 * radius * x, 2 * radius * y, 2 * radius * z};
                if (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] > ball * ball) continue;
                for (int d = 0; d < 3; ++d) p[3 * count + d] = centre[d] + q[d];
                ++count;
            }
    pbf_surface_def def = pbf_default_surface_def();
    def.particle_radius = radius;
    char err[PBF_ERROR_SIZE];
    pbf_status st = pbf_surface_reconstruct(&def, p, count, mesh, NULL, err, sizeof err);
    free(p);
    if (st != PBF_OK) fprintf(stderr, "%s\n", err);
    return st != PBF_OK || mesh->triangle_count < 100;
}

/* Distance from p to the triangle abc (Ericson, Real-Time Collision Detection, 5.1.5), double. */
static double triangle_distance(const double p[3], const float *a, const float *b, const float *c) {
    double ab[3], ac[3], ap[3], q[3];
    for (int d = 0; d < 3; ++d) ab[d] = b[d] - a[d], ac[d] = c[d] - a[d], ap[d] = p[d] - a[d];
#define DOT(u, v) ((u)[0] * (v)[0] + (u)[1] * (v)[1] + (u)[2] * (v)[2])
    double d1 = DOT(ab, ap), d2 = DOT(ac, ap);
    double bp[3], cp[3];
    for (int d = 0; d < 3; ++d) bp[d] = p[d] - b[d], cp[d] = p[d] - c[d];
    double d3 = DOT(ab, bp), d4 = DOT(ac, bp), d5 = DOT(ab, cp), d6 = DOT(ac, cp);
#undef DOT
    double va = d3 * d6 - d5 * d4, vb = d5 * d2 - d1 * d6, vc = d1 * d4 - d3 * d2;
    if (d1 <= 0 && d2 <= 0) {
        for (int d = 0; d < 3; ++d) q[d] = a[d];
    } else if (d3 >= 0 && d4 <= d3) {
        for (int d = 0; d < 3; ++d) q[d] = b[d];
    } else if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        double v = d1 / (d1 - d3);
        for (int d = 0; d < 3; ++d) q[d] = a[d] + v * ab[d];
    } else if (d6 >= 0 && d5 <= d6) {
        for (int d = 0; d < 3; ++d) q[d] = c[d];
    } else if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        double w = d2 / (d2 - d6);
        for (int d = 0; d < 3; ++d) q[d] = a[d] + w * ac[d];
    } else if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        for (int d = 0; d < 3; ++d) q[d] = b[d] + w * (c[d] - b[d]);
    } else {
        double denom = 1.0 / (va + vb + vc), v = vb * denom, w = vc * denom;
        for (int d = 0; d < 3; ++d) q[d] = a[d] + v * ab[d] + w * ac[d];
    }
    double s = 0;
    for (int d = 0; d < 3; ++d) s += (p[d] - q[d]) * (p[d] - q[d]);
    return sqrt(s);
}

/* Winding number of the closed mesh around p (1 inside, 0 outside): the triangles' solid
 * angles (Van Oosterom & Strackee 1983) over 4π. */
static double winding_number(const pbf_mesh *m, const double p[3]) {
    double sum = 0;
    for (int t = 0; t < m->triangle_count; ++t) {
        double r[3][3], len[3];
        for (int k = 0; k < 3; ++k) {
            const float *v = m->positions + 3 * (size_t)m->triangles[3 * t + k];
            for (int d = 0; d < 3; ++d) r[k][d] = v[d] - p[d];
            len[k] = sqrt(r[k][0] * r[k][0] + r[k][1] * r[k][1] + r[k][2] * r[k][2]);
        }
        double det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) -
                     r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
                     r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
        double d01 = r[0][0] * r[1][0] + r[0][1] * r[1][1] + r[0][2] * r[1][2];
        double d12 = r[1][0] * r[2][0] + r[1][1] * r[2][1] + r[1][2] * r[2][2];
        double d20 = r[2][0] * r[0][0] + r[2][1] * r[0][1] + r[2][2] * r[0][2];
        double den = len[0] * len[1] * len[2] + d01 * len[2] + d12 * len[0] + d20 * len[1];
        sum += 2 * atan2(det, den);
    }
    return sum / (4 * 3.14159265358979323846);
}

/* Signed distance from p to the closed mesh, by brute force: negative inside. */
static double signed_distance(const pbf_mesh *m, const double p[3]) {
    double best = INFINITY;
    for (int t = 0; t < m->triangle_count; ++t) {
        const int32_t *tri = m->triangles + 3 * (size_t)t;
        double d =
            triangle_distance(p, m->positions + 3 * (size_t)tri[0],
                              m->positions + 3 * (size_t)tri[1], m->positions + 3 * (size_t)tri[2]);
        if (d < best) best = d;
    }
    return winding_number(m, p) > 0.5 ? -best : best;
}

/* The level set of path at voxel centres within 2.5 voxels of the mesh, near every 7th vertex,
 * against the brute-force signed distance to the mesh: 95 % of them within 1e-6 m (about 30
 * float roundings of coordinates near 0.3 m), every one within tolerance voxels. Not all are
 * exact because OpenVDB's meshToLevelSet takes each voxel's closest triangle from the candidates
 * its neighbours pass on, and decides inside and outside at voxel resolution. */
static int compare_with_distance(const pbf_mesh *mesh, const char *path, double voxel,
                                 double tolerance) {
    enum { max_points = 4096 };
    double *pts = malloc(3 * max_points * sizeof *pts), *want = malloc(max_points * sizeof *want);
    float *got = malloc(max_points * sizeof *got);
    ENSURE(pts != NULL && want != NULL && got != NULL);
    int n = 0;
    for (int v = 0; v < mesh->vertex_count && n + 27 <= max_points; v += 7) {
        const float *x = mesh->positions + 3 * (size_t)v;
        for (int k = 0; k < 27; ++k) {
            int off[3] = {k % 3 - 1, k / 3 % 3 - 1, k / 9 - 1};
            double *q = pts + 3 * n;
            for (int d = 0; d < 3; ++d) q[d] = voxel * (floor(x[d] / voxel + 0.5) + off[d]);
            want[n] = signed_distance(mesh, q);
            if (fabs(want[n]) < 2.5 * voxel) ++n;
        }
    }
    ENSURE(n > 200);
    pbf_vdb_grid_info info;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf__vdb_read_grid(path, "surface", &info, pts, n, got, err, sizeof err) == PBF_OK);
    double worst = 0;
    int exact = 0;
    for (int i = 0; i < n; ++i) {
        double e = fabs(got[i] - want[i]);
        worst = fmax(worst, e);
        exact += e <= 1e-6;
        if (e > tolerance * voxel)
            fprintf(stderr, "voxel (%g, %g, %g): level set %.9g, distance to the mesh %.9g\n",
                    pts[3 * i], pts[3 * i + 1], pts[3 * i + 2], (double)got[i], want[i]);
        ENSURE_NEAR(got[i], want[i], tolerance * voxel);
    }
    printf("  voxel %g m: %d voxels near the surface, %d within 1e-6 m of the distance to the "
           "mesh, the worst %.2g m off\n",
           voxel, n, exact, worst);
    ENSURE(exact >= 0.95 * n);
    free(pts);
    free(want);
    free(got);
    return 0;
}

static int test_ball_level_set(void) {
    pbf_mesh mesh;
    ENSURE(ball_mesh(&mesh) == 0);
    const double voxel = radius; /* the surface grid's cell (cell_size 1 r) */
    char path[1200], err[PBF_ERROR_SIZE];
    path_in_tmp(path, sizeof path, "surface_00007.vdb");
    pbf_status st = pbf_mesh_write_vdb(&mesh, voxel, 0, path, err, sizeof err);
    if (st != PBF_OK) fprintf(stderr, "%s\n", err);
    ENSURE(st == PBF_OK);
    ENSURE(count_temp_files(tmp_dir) == 0);

    /* Points: the centre, about 9 voxels deep; far outside; the mesh's vertices. */
    enum { far_points = 2, max_points = 4096 };
    double *pts = malloc(3 * max_points * sizeof *pts);
    float *got = malloc(max_points * sizeof *got);
    ENSURE(pts != NULL && got != NULL);
    for (int d = 0; d < 3; ++d) {
        pts[d] = centre[d];
        pts[3 + d] = centre[d] + (d == 0 ? 3 * ball : 0);
    }
    const int m =
        mesh.vertex_count < max_points - far_points ? mesh.vertex_count : max_points - far_points;
    for (int i = 0; i < m; ++i)
        for (int d = 0; d < 3; ++d)
            pts[3 * (far_points + i) + d] = mesh.positions[3 * (size_t)i + d];
    const int n = far_points + m;
    pbf_vdb_grid_info info;
    st = pbf__vdb_read_grid(path, "surface", &info, pts, n, got, err, sizeof err);
    if (st != PBF_OK) fprintf(stderr, "%s\n", err);
    ENSURE(st == PBF_OK);
    ENSURE(info.grid_count == 1);
    ENSURE(info.level_set == 1);
    for (int d = 0; d < 3; ++d) ENSURE_NEAR(info.voxel_size[d], voxel, 1e-12);
    ENSURE_NEAR(info.background, 3 * voxel, 1e-7); /* OpenVDB's half width: 3 voxels */
    ENSURE(info.active_voxels > 0);
    /* inside the fluid negative (the inner background), outside positive */
    ENSURE_NEAR(got[0], -info.background, 1e-7);
    ENSURE_NEAR(got[1], info.background, 1e-7);
    /* the active band covers the mesh and reaches at most 3 voxels beyond it */
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int v = 0; v < mesh.vertex_count; ++v)
        for (int d = 0; d < 3; ++d) {
            lo[d] = fminf(lo[d], mesh.positions[3 * v + d]);
            hi[d] = fmaxf(hi[d], mesh.positions[3 * v + d]);
        }
    for (int d = 0; d < 3; ++d) {
        ENSURE(info.active_min[d] <= lo[d] - voxel && info.active_min[d] >= lo[d] - 4 * voxel);
        ENSURE(info.active_max[d] >= hi[d] + voxel && info.active_max[d] <= hi[d] + 4 * voxel);
    }
    /* measured: 47 of 4077 voxels more than 1e-6 m off, the worst by 0.002 voxel */
    ENSURE(compare_with_distance(&mesh, path, voxel, 0.01) == 0);

    /* the zero crossing is the mesh: trilinear samples at its vertices are near 0, to a tenth
     * of a voxel (a distance interpolated between voxel centres is off where the surface bends
     * between them: about voxel² / (8 · radius of curvature) on the ball itself, 1.6e-4 m, and
     * more at the creases of its lattice bumps; measured 8.5e-4 m) */
    double worst = 0;
    for (int i = far_points; i < n; ++i) worst = fmax(worst, fabs(got[i]));
    printf("  %d mesh vertices: largest |level set| %.2g m (voxel %g m)\n", m, worst, voxel);
    ENSURE(worst < 0.1 * voxel);

    /* one thread and all threads: the same level set */
    float *again = malloc(max_points * sizeof *again);
    ENSURE(again != NULL);
    pbf_vdb_grid_info info1;
    char path1[1200];
    path_in_tmp(path1, sizeof path1, "one_thread.vdb");
    ENSURE(pbf_mesh_write_vdb(&mesh, voxel, 1, path1, err, sizeof err) == PBF_OK);
    ENSURE(pbf__vdb_read_grid(path1, "surface", &info1, pts, n, again, err, sizeof err) == PBF_OK);
    ENSURE(info1.active_voxels == info.active_voxels);
    ENSURE(memcmp(got, again, (size_t)n * sizeof *got) == 0);
    free(again);
    free(pts);
    free(got);
    pbf_mesh_free(&mesh);
    return 0;
}

/* A voxel coarser than the surface grid's cell is the caller's choice, and is honoured. */
static int test_voxel_size(void) {
    pbf_mesh mesh;
    ENSURE(ball_mesh(&mesh) == 0);
    char path[1200], err[PBF_ERROR_SIZE];
    path_in_tmp(path, sizeof path, "coarse.vdb");
    ENSURE(pbf_mesh_write_vdb(&mesh, 0.025, 2, path, err, sizeof err) == PBF_OK);
    pbf_vdb_grid_info info;
    ENSURE(pbf__vdb_read_grid(path, "surface", &info, NULL, 0, NULL, err, sizeof err) == PBF_OK);
    for (int d = 0; d < 3; ++d) ENSURE_NEAR(info.voxel_size[d], 0.025, 1e-12);
    ENSURE(info.level_set == 1 && info.active_voxels > 0);
    ENSURE_NEAR(info.background, 3 * 0.025, 1e-7);
    /* Voxels 2.5 times the mesh's cell are coarser than its bumps, and OpenVDB's signs and
     * closest triangles are a voxel's: measured, 29 of 4077 voxels more than 1e-6 m off, the
     * worst by 0.036 voxel (a voxel centre 0.02 voxel outside the mesh counted inside). */
    ENSURE(compare_with_distance(&mesh, path, 0.025, 0.05) == 0);
    pbf_mesh_free(&mesh);
    return 0;
}

/* No fluid: a valid file with an empty level set. */
static int test_empty(void) {
    pbf_mesh mesh;
    memset(&mesh, 0, sizeof mesh);
    char path[1200], err[PBF_ERROR_SIZE];
    path_in_tmp(path, sizeof path, "empty.vdb");
    ENSURE(pbf_mesh_write_vdb(&mesh, 0.01, 0, path, err, sizeof err) == PBF_OK);
    pbf_vdb_grid_info info;
    double p[3] = {0, 0, 0};
    float value;
    ENSURE(pbf__vdb_read_grid(path, "surface", &info, p, 1, &value, err, sizeof err) == PBF_OK);
    ENSURE(info.level_set == 1 && info.active_voxels == 0);
    ENSURE_NEAR(info.background, 0.03, 1e-7);
    ENSURE_NEAR(value, 0.03, 1e-7); /* everywhere outside */
    return 0;
}

static int test_errors(void) {
    pbf_mesh mesh;
    ENSURE(ball_mesh(&mesh) == 0);
    char path[1200], err[PBF_ERROR_SIZE];
    /* a folder that does not exist: PBF_ERR_IO naming the file, nothing left behind */
    path_in_tmp(path, sizeof path, "no/such/folder/surface_00001.vdb");
    ENSURE(pbf_mesh_write_vdb(&mesh, 0.01, 0, path, err, sizeof err) == PBF_ERR_IO);
    ENSURE(strstr(err, path) != NULL);
    ENSURE(strstr(err, "No such file or directory") != NULL);
    /* a bad voxel size */
    path_in_tmp(path, sizeof path, "bad.vdb");
    ENSURE(pbf_mesh_write_vdb(&mesh, 0.0, 0, path, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, path) != NULL && strstr(err, "voxel size") != NULL);
    ENSURE(pbf_mesh_write_vdb(&mesh, NAN, 0, path, err, sizeof err) == PBF_ERR_INVALID_ARG);
    /* a triangle naming a vertex that is not there */
    int32_t saved = mesh.triangles[5];
    mesh.triangles[5] = mesh.vertex_count;
    ENSURE(pbf_mesh_write_vdb(&mesh, 0.01, 0, path, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "triangle 1 names vertex") != NULL);
    mesh.triangles[5] = saved;
    /* a vertex beyond 2^30 voxels */
    float x = mesh.positions[0];
    mesh.positions[0] = 2e7f;
    ENSURE(pbf_mesh_write_vdb(&mesh, 0.01, 0, path, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "vertex 0") != NULL);
    mesh.positions[0] = x;
    struct stat st;
    ENSURE(stat(path, &st) != 0); /* none of these wrote anything */
    ENSURE(count_temp_files(tmp_dir) == 0);
    /* an existing file is replaced whole */
    ENSURE(pbf_mesh_write_vdb(&mesh, 0.02, 0, path, err, sizeof err) == PBF_OK);
    ENSURE(pbf_mesh_write_vdb(&mesh, 0.01, 0, path, err, sizeof err) == PBF_OK);
    pbf_vdb_grid_info info;
    ENSURE(pbf__vdb_read_grid(path, "surface", &info, NULL, 0, NULL, err, sizeof err) == PBF_OK);
    ENSURE_NEAR(info.voxel_size[0], 0.01, 1e-12);
    /* reading: a missing file, a file that is not OpenVDB, a grid that is not there */
    path_in_tmp(path, sizeof path, "missing.vdb");
    ENSURE(pbf__vdb_read_grid(path, "surface", &info, NULL, 0, NULL, err, sizeof err) ==
           PBF_ERR_IO);
    ENSURE(strstr(err, path) != NULL);
    path_in_tmp(path, sizeof path, "text.vdb");
    FILE *f = fopen(path, "w");
    ENSURE(f != NULL);
    fputs("not a volume\n", f);
    fclose(f);
    ENSURE(pbf__vdb_read_grid(path, "surface", &info, NULL, 0, NULL, err, sizeof err) ==
           PBF_ERR_PARSE);
    ENSURE(strstr(err, path) != NULL);
    path_in_tmp(path, sizeof path, "bad.vdb");
    ENSURE(pbf__vdb_read_grid(path, "density", &info, NULL, 0, NULL, err, sizeof err) ==
           PBF_ERR_PARSE);
    ENSURE(strstr(err, "no grid named 'density'") != NULL);
    pbf_mesh_free(&mesh);
    return 0;
}

/* A write that fails midway (the file size limit, as a full disk would): an error naming the
 * file and the system's reason, no temporary file, and the file that was there is untouched. */
static int test_write_fails_midway(void) {
    pbf_mesh mesh;
    ENSURE(ball_mesh(&mesh) == 0);
    char path[1200], err[PBF_ERROR_SIZE];
    path_in_tmp(path, sizeof path, "keep.vdb");
    ENSURE(pbf_mesh_write_vdb(&mesh, 0.025, 0, path, err, sizeof err) == PBF_OK);
    struct stat before;
    ENSURE(stat(path, &before) == 0);

    struct rlimit old, lim;
    ENSURE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    lim = old;
    lim.rlim_cur = 4096; /* the fine level set below takes more */
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    ENSURE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    pbf_status st = pbf_mesh_write_vdb(&mesh, 0.005, 0, path, err, sizeof err);
    ENSURE(setrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, old_handler);

    if (st != PBF_ERR_IO) fprintf(stderr, "status %d: %s\n", (int)st, err);
    ENSURE(st == PBF_ERR_IO);
    ENSURE(strstr(err, path) != NULL);
    ENSURE(strstr(err, strerror(EFBIG)) != NULL);
    ENSURE(count_temp_files(tmp_dir) == 0);
    struct stat after;
    ENSURE(stat(path, &after) == 0 && after.st_size == before.st_size);
    pbf_vdb_grid_info info;
    ENSURE(pbf__vdb_read_grid(path, "surface", &info, NULL, 0, NULL, err, sizeof err) == PBF_OK);
    ENSURE_NEAR(info.voxel_size[0], 0.025, 1e-12); /* still the first file */
    pbf_mesh_free(&mesh);
    return 0;
}

/* Built without OpenVDB: both calls say so, naming the file. */
static int test_not_built(void) {
    pbf_mesh mesh;
    memset(&mesh, 0, sizeof mesh);
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_mesh_write_vdb(&mesh, 0.01, 0, "out/surface_00001.vdb", err, sizeof err) ==
           PBF_ERR_UNSUPPORTED);
    ENSURE(strstr(err, "out/surface_00001.vdb: OpenVDB output is not built into this pbf") != NULL);
    pbf_vdb_grid_info info;
    ENSURE(pbf__vdb_read_grid("x.vdb", "surface", &info, NULL, 0, NULL, err, sizeof err) ==
           PBF_ERR_UNSUPPORTED);
    return 0;
}

int main(void) {
    int test_failures_ = 0;
    if (!pbf_vdb_available()) {
        RUN_TEST(test_not_built);
        if (test_failures_ == 0) printf("OpenVDB is not built in: the level set tests skipped\n");
        return test_failures_ == 0 ? 77 : 1;
    }
    if (make_tmp_dir("vdb") != 0) return 1;
    RUN_TEST(test_ball_level_set);
    RUN_TEST(test_voxel_size);
    RUN_TEST(test_empty);
    RUN_TEST(test_errors);
    RUN_TEST(test_write_fails_midway);
    remove_tmp_dir();
    return test_failures_ == 0 ? 0 : 1;
}
