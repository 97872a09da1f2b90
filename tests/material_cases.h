/* Physical cases of the tool and the materials, for either kernel pair: each takes the world def
 * it starts from, so that one copy of the set-up and of the bounds serves the paper's pair
 * (tests/test_tool.c, tests/test_materials.c) and the Wendland C2 pair at h = 5r
 * (tests/test_wendland_features.c, docs/physics.md "The Wendland C2 pair").
 *  - case_held_sphere_feels_buoyancy: a sphere held under water feels ρ0 g V (Archimedes);
 *  - case_droplet_becomes_sphere: a cube of water in zero gravity becomes round with surface
 *    tension, and stays a cube without;
 *  - case_drop_spreads_with_adhesion: a drop spreads the wider the more the floor or a plate
 *    adheres. */
#ifndef PBF_TEST_MATERIAL_CASES_H
#define PBF_TEST_MATERIAL_CASES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pbf/pbf.h"
#include "test.h"

#define CASE_PI 3.14159265358979323846

/* Fills [0, lx] x [0, depth] x [0, lz] with water on the rest lattice, leaving out the lattice
 * points within R + r of c (so a tool placed at c starts without overlap). Returns the particle
 * count, or −1. */
static inline int case_fill_water(pbf_world *w, float lx, float depth, float lz, pbf_vec3 c,
                                  float R) {
    const float r = pbf_world_get_def(w)->particle_radius, s = 2.0f * r;
    int nx = (int)(lx / s + 1e-4f), ny = (int)(depth / s + 1e-4f), nz = (int)(lz / s + 1e-4f);
    float *pos = malloc((size_t)nx * ny * nz * 3 * sizeof *pos);
    if (pos == NULL) return -1;
    int n = 0;
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                float x = r + s * i, y = r + s * j, z = r + s * k;
                float dx = x - c.x, dy = y - c.y, dz = z - c.z;
                if (dx * dx + dy * dy + dz * dz < (R + r) * (R + r)) continue;
                pos[3 * n] = x, pos[3 * n + 1] = y, pos[3 * n + 2] = z;
                ++n;
            }
    pbf_status st = pbf_world_add_particles(w, n, pos, NULL);
    free(pos);
    return st == PBF_OK ? n : -1;
}

/* ---------------------------------------------------------------------------------------------
 * The tool */

/* A sphere of R = 5 cm held fully submerged and still in a tank 26 cm wide, 20 cm deep (one
 * thread, s_corr off): over the second half of `frames` frames the fluid pushes it up with
 * ρ0 g V within 10 %, and not sideways (under 5 % of that). With adhesion and damping off the
 * force is all reaction. */
static inline int case_held_sphere_feels_buoyancy(const pbf_world_def *base, int frames) {
    pbf_world_def d = *base;
    d.domain_max = (pbf_vec3){0.26f, 0.3f, 0.26f};
    d.solver.scorr_k = 0.0f;
    d.threads = 1; /* see test_tool_experiment.c: robust to a busy machine */
    pbf_world *w = test_world_create(&d);
    ENSURE(w);
    const float R = 0.05f;
    const pbf_vec3 c = {0.13f, 0.1f, 0.13f};
    int n = case_fill_water(w, 0.26f, 0.2f, 0.26f, c, R);
    ENSURE(n > 0);
    pbf_tool_def t = pbf_default_tool_def();
    t.radius = R;
    t.position = c;
    ENSURE(pbf_world_set_tool(w, &t) == PBF_OK);
    double fy = 0.0, fx = 0.0, fz = 0.0;
    int m = 0;
    for (int f = 0; f < frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_tool_state s = pbf_tool_get_state(w);
        ENSURE(s.min_distance > 0.0f);
        ENSURE(s.total.y == s.reaction.y && s.adhesion.y == 0.0f && s.damping.y == 0.0f);
        if (f >= frames / 2) fy += s.total.y, fx += s.total.x, fz += s.total.z, ++m;
    }
    double want = 1000.0 * 9.81 * 4.0 / 3.0 * CASE_PI * R * R * R;
    printf("  %d particles, %d frames: buoyancy %.3f N (rho0 g V = %.3f N), sideways %.3f %.3f N\n",
           n, frames, fy / m, want, fx / m, fz / m);
    ENSURE(fabs(fy / m - want) <= 0.1 * want);
    ENSURE(fabs(fx / m) < 0.05 * want && fabs(fz / m) < 0.05 * want);
    pbf_world_destroy(w);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Surface tension */

/* A cube of water of n³ particles of radius r in zero gravity, in the middle of a box wide
 * enough that no wall is in reach. */
static inline pbf_world *case_droplet_world(const pbf_world_def *base, int n, float r, float sigma,
                                            int threads) {
    pbf_world_def def = *base;
    float side = 2.0f * r * (float)n, room = 2.0f * side;
    def.particle_radius = r;
    def.gravity = (pbf_vec3){0.0f, 0.0f, 0.0f};
    def.domain_min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    def.domain_max = (pbf_vec3){room, room, room};
    def.material.surface_tension = sigma;
    def.threads = threads;
    pbf_world *w = test_world_create(&def);
    if (w == NULL) return NULL;
    pbf_block_def b = pbf_default_block_def();
    float lo = 0.5f * (room - side);
    b.min = (pbf_vec3){lo, lo, lo};
    b.max = (pbf_vec3){lo + side, lo + side, lo + side};
    if (pbf_world_add_block(w, &b) != PBF_OK) {
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

static inline int case_cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The 99th-percentile distance of the particle centres from their mean, over the radius of the
 * sphere of the fluid's volume (count · m/ρ0); *extent_x, where given, receives the x extent's
 * half-width (max − min)/2 over the same radius. */
static inline double case_sphericity(const pbf_world *w, double *extent_x) {
    int n = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n), *d = malloc(sizeof(float) * (size_t)n);
    if (!x || !d) {
        free(x);
        free(d);
        return 1e9;
    }
    pbf_world_get_positions(w, x);
    double c[3] = {0, 0, 0};
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) c[k] += x[3 * i + k];
    for (int k = 0; k < 3; ++k) c[k] /= n;
    float xmin = 1e30f, xmax = -1e30f;
    for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int k = 0; k < 3; ++k) s += (x[3 * i + k] - c[k]) * (x[3 * i + k] - c[k]);
        d[i] = (float)sqrt(s);
        if (x[3 * i] < xmin) xmin = x[3 * i];
        if (x[3 * i] > xmax) xmax = x[3 * i];
    }
    qsort(d, (size_t)n, sizeof *d, case_cmp_float);
    double volume = n * (double)pbf_world_particle_mass(w) / pbf_world_get_def(w)->rest_density;
    double radius = cbrt(volume * 3.0 / (4.0 * CASE_PI));
    double p99 = d[(int)(0.99 * (n - 1))];
    if (extent_x) *extent_x = 0.5 * (xmax - xmin) / radius;
    free(x);
    free(d);
    return p99 / radius;
}

/* A cube of 10³ particles (r = 2 mm, one thread) in zero gravity becomes a sphere with
 * σ = 0.0728 N/m in `frames` frames: the 99th-percentile distance from the centre within 0.85..1.08
 * of the radius of the equal-volume sphere (the particle centres of the outer layer sit r inside
 * the surface, so a round drop reads about 0.94); without surface tension it stays a cube
 * (>= 1.15: the cube reads 1.17 at the start, and in zero gravity nothing else acts on it). */
static inline int case_droplet_becomes_sphere(const pbf_world_def *base, int frames) {
    double ratio[2];
    for (int k = 0; k < 2; ++k) {
        pbf_world *w = case_droplet_world(base, 10, 0.002f, k ? 0.0728f : 0.0f, 1);
        ENSURE(w != NULL);
        for (int f = 0; f < frames; ++f) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        ratio[k] = case_sphericity(w, NULL);
        pbf_world_destroy(w);
    }
    printf("  p99 distance / R after %d frames: %.4f without surface tension, %.4f with\n", frames,
           ratio[0], ratio[1]);
    ENSURE(ratio[1] <= 1.08);
    ENSURE(ratio[1] >= 0.85); /* round, not collapsed */
    ENSURE(ratio[0] >= 1.15);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Adhesion */

/* A drop of 16³ particles (r = 2 mm) resting on the floor in weak gravity, with surface tension σ
 * and a work of adhesion W with the walls (wall_adhesion) or with a plate (a box collider) under
 * it; returns the radius of its footprint after `frames` frames: the largest horizontal distance
 * from the centroid of a particle in the lowest layer; −1 on an error. */
static inline double case_footprint(const pbf_world_def *base, float adhesion, int plate,
                                    int threads, int frames) {
    const float r = 0.002f, sigma = 0.0728f;
    pbf_world_def def = *base;
    def.particle_radius = r;
    def.gravity = (pbf_vec3){0.0f, -0.5f, 0.0f}; /* capillary length sqrt(σ/ρg) = 12 mm */
    def.domain_max = (pbf_vec3){0.12f, 0.06f, 0.12f};
    def.material.surface_tension = sigma;
    def.wall_adhesion = plate ? 0.0f : adhesion;
    def.threads = threads;
    pbf_world *w = test_world_create(&def);
    if (w == NULL) return -1.0;
    float floor_y = 0.0f;
    if (plate) {
        pbf_collider_def c = pbf_default_collider_def();
        c.type = PBF_COLLIDER_BOX;
        c.center = (pbf_vec3){0.06f, 0.005f, 0.06f};
        c.half_extents = (pbf_vec3){0.05f, 0.005f, 0.05f};
        c.adhesion = adhesion;
        if (pbf_world_add_collider(w, &c) != PBF_OK) {
            fprintf(stderr, "plate: %s\n", pbf_world_error(w));
            pbf_world_destroy(w);
            return -1.0;
        }
        floor_y = 0.01f;
    }
    pbf_block_def b = pbf_default_block_def();
    b.min = (pbf_vec3){0.044f, floor_y, 0.044f};
    b.max = (pbf_vec3){0.076f, floor_y + 0.032f, 0.076f};
    if (pbf_world_add_block(w, &b) != PBF_OK) {
        pbf_world_destroy(w);
        return -1.0;
    }
    for (int f = 0; f < frames; ++f)
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) {
            pbf_world_destroy(w);
            return -1.0;
        }
    int n = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    if (!x) {
        pbf_world_destroy(w);
        return -1.0;
    }
    pbf_world_get_positions(w, x);
    double cx = 0.0, cz = 0.0, reach = 0.0;
    for (int i = 0; i < n; ++i) cx += x[3 * i] / n, cz += x[3 * i + 2] / n;
    for (int i = 0; i < n; ++i) {
        if (x[3 * i + 1] > floor_y + 3.0f * r) continue; /* the lowest layer */
        double ex = x[3 * i] - cx, ez = x[3 * i + 2] - cz, d = sqrt(ex * ex + ez * ez);
        if (d > reach) reach = d;
    }
    free(x);
    pbf_world_destroy(w);
    return reach;
}

/* The more the floor adheres (W = 0, σ, 2σ: by Young–Dupré contact angles of 180°, 90° and 0°),
 * the wider the drop spreads after `frames` frames (one thread), on the domain's floor and on a
 * plate: by more than half a particle radius each step. */
static inline int case_drop_spreads_with_adhesion(const pbf_world_def *base, int frames) {
    const float w[3] = {0.0f, 0.0728f, 0.1456f};
    for (int plate = 0; plate < 2; ++plate) {
        double reach[3];
        for (int k = 0; k < 3; ++k) {
            reach[k] = case_footprint(base, w[k], plate, 1, frames);
            ENSURE(reach[k] > 0.0);
        }
        printf("  footprint radius on the %s, W = 0, σ, 2σ: %.1f, %.1f, %.1f mm\n",
               plate ? "plate" : "floor", 1e3 * reach[0], 1e3 * reach[1], 1e3 * reach[2]);
        ENSURE(reach[1] > reach[0] + 0.001);
        ENSURE(reach[2] > reach[1] + 0.001);
    }
    return 0;
}

#endif
