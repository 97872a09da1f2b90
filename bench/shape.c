/* Does the fluid of a scene keep its shape and its spacing? Runs a scene for some frames and
 * prints, at the start and at the frames asked for:
 *   - the 1–99 % extent of the particles along x, y and z (m, and as a share of the start's);
 *   - the mean of the particles' densities (kg/m³);
 *   - the distance of each particle to its nearest neighbour, in units of the rest spacing 2r:
 *     mean, smallest, and the share closer than 0.7 (pairs: what s_corr exists to prevent),
 *     for all particles and for those with fewer than 20 neighbours within h (about 32 inside
 *     the rest lattice at h = 4r: the surface and the spray), and their histogram in bins of
 *     0.1 (the share of the particles in [0, 0.1), [0.1, 0.2), ..., [1.1, ∞)): pairing shows as
 *     particles near 0, a disordered packing as a broader peak below 1;
 *   - the kinetic energy per kilogram, the fastest particle's speed and the solver's passes per
 *     substep.
 * docs/physics.md ("s_corr: where it acts, and why") quotes its figures.
 *
 * usage: pbf_shape SCENE FRAME[,FRAME...] [key=value ...]   (key=value: as pbf run --set)
 * e.g.   pbf_shape scenes/cube_drop.json 10,20
 *        pbf_shape scenes/cube_drop.json 60 gravity=[0,0,0] fluid.blocks[0].max=[0.5,0.9,0.5] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"
#include "pbf/scene.h"

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of axis k of the n positions x (tmp: n floats). */
static double quantile(const float *x, int n, int k, double q, float *tmp) {
    for (int i = 0; i < n; ++i) tmp[i] = x[3 * i + k];
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_float);
    int i = (int)lround(q * (n - 1));
    return tmp[i];
}

static const float *g_sort_x;
static int cmp_by_x(const void *a, const void *b) {
    float x = g_sort_x[3 * *(const int *)a], y = g_sort_x[3 * *(const int *)b];
    return (x > y) - (x < y);
}

/* Nearest-neighbour distance of every particle (out: n doubles) and its count of neighbours
 * closer than h (count: n ints), by a sweep along x. */
static int nearest(const float *x, int n, double h, double *out, int *count) {
    int *order = malloc(sizeof(int) * (size_t)n);
    if (order == NULL) return 1;
    for (int i = 0; i < n; ++i) order[i] = i;
    g_sort_x = x;
    qsort(order, (size_t)n, sizeof *order, cmp_by_x);
    for (int a = 0; a < n; ++a) {
        const float *p = x + 3 * order[a];
        double best = 1e30;
        int c = 0;
        for (int dir = -1; dir <= 1; dir += 2)
            for (int b = a + dir; b >= 0 && b < n; b += dir) {
                const float *q = x + 3 * order[b];
                double dx = q[0] - p[0];
                if (dx * dx >= best && dx * dx >= h * h) break;
                double dy = q[1] - p[1], dz = q[2] - p[2], d2 = dx * dx + dy * dy + dz * dz;
                if (d2 < best) best = d2;
                c += d2 < h * h;
            }
        out[order[a]] = sqrt(best);
        count[order[a]] = c;
    }
    free(order);
    return 0;
}

static void report(pbf_world *w, int frame, const double *ext0, double *ext, double iters) {
    int n = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n), *v = malloc(sizeof(float) * 3 * (size_t)n);
    float *rho = malloc(sizeof(float) * (size_t)n), *tmp = malloc(sizeof(float) * (size_t)n);
    double *nn = malloc(sizeof(double) * (size_t)n);
    int *nc = malloc(sizeof(int) * (size_t)n);
    if (!x || !v || !rho || !tmp || !nn || !nc) {
        fprintf(stderr, "pbf_shape: out of memory\n");
        exit(1);
    }
    pbf_world_get_positions(w, x);
    pbf_world_get_velocities(w, v);
    pbf_world_get_densities(w, rho);
    const double s = 2.0 * pbf_world_get_def(w)->particle_radius;
    double rho_sum = 0.0, ke = 0.0, nn_sum = 0.0, nn_min = 1e30, surf_sum = 0.0, vmax2 = 0.0;
    int close = 0, surf = 0, surf_close = 0, fastest = 0;
    nearest(x, n, pbf_world_kernel_radius(w), nn, nc);
    for (int i = 0; i < n; ++i) {
        rho_sum += rho[i];
        double v2 = v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2];
        ke += 0.5 * v2;
        if (v2 > vmax2) vmax2 = v2, fastest = i;
        double q = nn[i] / s;
        nn_sum += q;
        if (q < nn_min) nn_min = q;
        close += q < 0.7;
        if (nc[i] < 20) surf_sum += q, ++surf, surf_close += q < 0.7;
    }
    printf("frame %3d t %.3f s:", frame, pbf_world_time(w));
    for (int k = 0; k < 3; ++k) {
        double lo = quantile(x, n, k, 0.01, tmp), hi = quantile(x, n, k, 0.99, tmp);
        ext[k] = hi - lo;
        printf(" %c %.3f–%.3f (%.3f)", "xyz"[k], lo, hi, ext0 ? ext[k] / ext0[k] : 1.0);
    }
    printf("\n          mean density %.1f kg/m3, nearest neighbour mean %.3f s, min %.3f s, "
           "%.2f %% below 0.7 s, kinetic %.3e J/kg, fastest %.4f m/s, %.1f passes/substep\n",
           rho_sum / n, nn_sum / n, nn_min, 100.0 * close / n, ke / n, sqrt(vmax2), iters);
    printf("          fastest at (%.3f, %.3f, %.3f), %d neighbours\n", x[3 * fastest],
           x[3 * fastest + 1], x[3 * fastest + 2], nc[fastest]);
    int hist[12] = {0};
    for (int i = 0; i < n; ++i) {
        int b = (int)(nn[i] / s * 10.0 + 1e-4); /* a lattice at exactly 2r: [1, 1.1) */
        ++hist[b < 11 ? b : 11];
    }
    printf("          nearest neighbour / 2r in bins of 0.1 from 0 (%% of the particles):");
    for (int b = 0; b < 12; ++b) printf(" %.2f", 100.0 * hist[b] / n);
    printf("\n");
    if (surf > 0)
        printf("          %d particles with fewer than 20 neighbours (surface, spray): nearest "
               "neighbour mean %.3f s, %.2f %% below 0.7 s\n",
               surf, surf_sum / surf, 100.0 * surf_close / surf);
    fflush(stdout);
    free(x), free(v), free(rho), free(tmp), free(nn), free(nc);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: pbf_shape SCENE FRAME[,FRAME...] [key=value ...]\n");
        return 2;
    }
    int frames[64], count = 0;
    for (char *t = strtok(argv[2], ","); t != NULL && count < 64; t = strtok(NULL, ","))
        frames[count++] = atoi(t);
    if (count == 0 || frames[count - 1] < 1) {
        fprintf(stderr, "pbf_shape: frames must be a rising list of positive numbers\n");
        return 2;
    }
    static pbf_scene scene;
    char err[1024];
    if (pbf_scene_load(argv[1], (const char *const *)argv + 3, argc - 3, &scene, err, sizeof err) !=
        PBF_OK) {
        fprintf(stderr, "pbf_shape: %s\n", err);
        return 1;
    }
    pbf_world *w = NULL;
    if (pbf_scene_create_world(&scene, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "pbf_shape: %s\n", err);
        return 1;
    }
    printf("%s: %d particles\n", argv[1], pbf_world_particle_count(w));
    double ext0[3], ext[3];
    report(w, 0, NULL, ext0, 0.0);
    const float dt = 1.0f / scene.fps;
    double iters = 0.0;
    for (int f = 1, c = 0; c < count; ++f) {
        if (pbf_world_step(w, dt) != PBF_OK) {
            fprintf(stderr, "pbf_shape: %s\n", pbf_world_error(w));
            return 1;
        }
        iters += pbf_world_get_profile(w).iterations;
        if (f == frames[c]) report(w, f, ext0, ext, iters / f), ++c;
    }
    pbf_world_destroy(w);
    return 0;
}
