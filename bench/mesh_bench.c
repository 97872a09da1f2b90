/* Mesh solids' speed (docs/physics.md "Mesh solids"): the bake of a 100,000-triangle torus at the
 * default field spacing, the second load from the cache, and the cost of a step with a mesh
 * obstacle against the same obstacle as an analytic box collider.
 *
 *   pbf_mesh_bench bake [threads]               bake and cache load of the torus
 *   pbf_mesh_bench step [particles] [steps] [threads]   ms per step: analytic vs mesh box
 *
 * Writes its files into a temporary folder (also the field cache). Timings only: no pass/fail. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/mesh_files.h"
#include "pbf/geometry.h"

static char dir[256];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static pbf_world *world(float r, const pbf_vec3 lo, const pbf_vec3 hi, int threads) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = r;
    d.domain_min = lo;
    d.domain_max = hi;
    d.threads = threads;
    char err[PBF_ERROR_SIZE];
    pbf_world *w = NULL;
    if (pbf_world_create(&d, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    return w;
}

static int bake(int threads) {
    char path[512];
    snprintf(path, sizeof path, "%s/torus.stl", dir);
    test_mesh m = test_mesh_torus(0.25f, 0.25f, 0.25f, 0.15f, 0.05f, 250, 200);
    if (test_mesh_write_stl_binary(path, &m) != 0) return 1;
    printf("torus: %d triangles, 0.4 x 0.1 x 0.4 m, particle radius 0.01 m, %d threads\n", m.nt,
           threads);
    test_mesh_free(&m);
    for (int run = 0; run < 2; ++run) {
        pbf_world *w = world(0.01f, (pbf_vec3){0, 0, 0}, (pbf_vec3){0.5f, 0.5f, 0.5f}, threads);
        if (w == NULL) return 1;
        pbf_mesh_def d = pbf_default_mesh_def();
        snprintf(d.path, sizeof d.path, "%s", path);
        double t0 = now();
        if (pbf_world_add_mesh(w, &d) != PBF_OK) {
            fprintf(stderr, "%s\n", pbf_world_error(w));
            return 1;
        }
        double t1 = now();
        pbf_mesh_solid_info in = pbf_world_mesh_info(w, 0);
        printf("  %s: pbf_world_add_mesh %.3f s (import and checks included; the field alone "
               "%.3f s), field %d x %d x %d, %.1f MB\n",
               in.from_cache ? "second load (cache)" : "first load (bake)", t1 - t0,
               in.bake_seconds, in.nx, in.ny, in.nz, (double)in.field_bytes / 1e6);
        pbf_world_destroy(w);
    }
    return 0;
}

/* The dam break of `pbf bench` (a block of 0.4 x 0.6 x 0.4 m in 1.6 x 0.8 x 0.4 m), the radius
 * scaled to about n particles, with a box 0.2 x 0.3 x 0.2 m standing in the water's way: an
 * analytic box collider in one world, the same box as a mesh in the other. The two worlds step
 * in turn, so a machine shared with other work slows both alike; the ratio is of the medians. */
static pbf_world *bench_world(int mesh, float r, int threads, const char *path) {
    const pbf_vec3 centre = {0.8f, 0.15f, 0.2f};
    pbf_world *w = world(r, (pbf_vec3){0, 0, 0}, (pbf_vec3){1.6f, 0.8f, 0.4f}, threads);
    if (w == NULL) return NULL;
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.4f, 0.6f, 0.4f};
    pbf_status st = pbf_world_add_block(w, &b);
    if (st == PBF_OK && mesh) {
        pbf_mesh_def d = pbf_default_mesh_def();
        snprintf(d.path, sizeof d.path, "%s", path);
        d.position = centre;
        st = pbf_world_add_mesh(w, &d);
    } else if (st == PBF_OK) {
        pbf_collider_def c = pbf_default_collider_def();
        c.type = PBF_COLLIDER_BOX;
        c.center = centre;
        c.half_extents = (pbf_vec3){0.1f, 0.15f, 0.1f};
        st = pbf_world_add_collider(w, &c);
    }
    if (st != PBF_OK) {
        fprintf(stderr, "%s\n", pbf_world_error(w));
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int step_cost(int n, int steps, int threads) {
    char path[512];
    snprintf(path, sizeof path, "%s/block.obj", dir);
    const float lo[3] = {-0.1f, -0.15f, -0.1f}, hi[3] = {0.1f, 0.15f, 0.1f};
    test_mesh m = test_mesh_box(lo, hi);
    if (test_mesh_write_obj(path, &m) != 0) return 1;
    test_mesh_free(&m);
    const float r = cbrtf(0.4f * 0.6f * 0.4f / (float)n) * 0.5f;
    pbf_world *w[2] = {bench_world(0, r, threads, path), bench_world(1, r, threads, path)};
    double *ms = calloc(2 * (size_t)steps, sizeof *ms), stage[2][PBF_STAGE_COUNT] = {{0}};
    if (w[0] == NULL || w[1] == NULL || ms == NULL) return 1;
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 2; ++k) pbf_world_step(w[k], 1.0f / 60.0f);
    for (int i = 0; i < steps; ++i)
        for (int k = 0; k < 2; ++k) {
            double t0 = now();
            pbf_world_step(w[k], 1.0f / 60.0f);
            ms[k * steps + i] = 1e3 * (now() - t0);
            pbf_profile p = pbf_world_get_profile(w[k]);
            for (int q = 0; q < PBF_STAGE_COUNT; ++q) stage[k][q] += p.stage_ms[q] / steps;
        }
    double median[2];
    for (int k = 0; k < 2; ++k) {
        qsort(ms + k * steps, (size_t)steps, sizeof *ms, cmp_double);
        median[k] = ms[k * steps + steps / 2];
        printf("  %d particles, %s: %.1f ms per step (median of %d, in turn with the other); "
               "stage means: predict %.1f, grid %.1f, neighbours %.1f, lambda %.1f, delta %.1f, "
               "velocity %.1f, vorticity %.1f\n",
               pbf_world_particle_count(w[k]), k ? "mesh box" : "analytic box", median[k], steps,
               stage[k][0], stage[k][1], stage[k][2], stage[k][3], stage[k][4], stage[k][5],
               stage[k][6]);
        pbf_world_destroy(w[k]);
    }
    printf("  mesh / analytic: %.3f\n", median[1] / median[0]);
    free(ms);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || (strcmp(argv[1], "bake") != 0 && strcmp(argv[1], "step") != 0)) {
        fprintf(stderr,
                "usage: pbf_mesh_bench bake [threads] | step [particles] [steps] [threads]\n");
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pbf_mesh_bench_XXXXXX", tmp != NULL && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) return 1;
    setenv("PBF_CACHE_DIR", dir, 1);
    int rc = strcmp(argv[1], "bake") == 0
                 ? bake(argc > 2 ? atoi(argv[2]) : 2)
                 : step_cost(argc > 2 ? atoi(argv[2]) : 50000, argc > 3 ? atoi(argv[3]) : 20,
                             argc > 4 ? atoi(argv[4]) : 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}
