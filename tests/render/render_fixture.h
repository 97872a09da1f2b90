/* A small fixed scene for the renderer's tests: a dam-break-like wave of fluid (a lattice under
 * a smooth height field with a deterministic jitter), a flying blob and a sphere collider, in a
 * 1 x 0.6 x 0.5 m domain. Synthetic on purpose: the renderer's tests must not change when the
 * solver does. */
#ifndef PBF_RENDER_FIXTURE_H
#define PBF_RENDER_FIXTURE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/render.h"

#define FIXTURE_RADIUS 0.0125f

typedef struct fixture {
    int count;
    float *positions;
    float *velocities;
    float *densities;
    float radius;
    pbf_collider_def collider;
} fixture;

/* Deterministic uniform numbers in [0, 1). */
static inline float fixture_rand(uint32_t *state) {
    *state = *state * 1664525u + 1013904223u;
    return (float)(*state >> 8) / 16777216.0f;
}

static inline float fixture_height(float x, float z) {
    return 0.06f + 0.26f * expf(-(x - 0.12f) * (x - 0.12f) / 0.03f) +
           0.05f * expf(-(x - 0.75f) * (x - 0.75f) / 0.01f) * (1.0f + 0.3f * sinf(9.0f * z));
}

/* The scene with particles of radius r (FIXTURE_RADIUS gives about 4400). */
static inline int fixture_make_radius(fixture *f, float r) {
    memset(f, 0, sizeof *f);
    const float s = 2.0f * r;
    int cap = (int)(0.12f / (s * s * s)) + 1000;
    f->positions = malloc((size_t)cap * 3 * sizeof(float));
    f->velocities = malloc((size_t)cap * 3 * sizeof(float));
    f->densities = malloc((size_t)cap * sizeof(float));
    if (!f->positions || !f->velocities || !f->densities) return 1;
    uint32_t seed = 12345u;
    int n = 0;
    for (float z = r; z < 0.5f - r * 0.5f; z += s) {
        for (float x = r; x < 1.0f - r * 0.5f; x += s) {
            float top = fixture_height(x, z);
            for (float y = r; y < top; y += s) {
                if (n == cap) return 1;
                float *p = f->positions + 3 * n, *v = f->velocities + 3 * n;
                p[0] = x + 0.3f * r * (fixture_rand(&seed) - 0.5f);
                p[1] = y + 0.3f * r * (fixture_rand(&seed) - 0.5f);
                p[2] = z + 0.3f * r * (fixture_rand(&seed) - 0.5f);
                v[0] = 2.0f * expf(-(x - 0.4f) * (x - 0.4f) / 0.05f);
                v[1] = -0.3f * (top - y);
                v[2] = 0.0f;
                f->densities[n] = 1000.0f * (1.0f + 0.05f * (0.3f - y) / 0.3f);
                ++n;
            }
        }
    }
    /* A blob of spray in the air. */
    for (int i = 0; i < 60; ++i) {
        if (n == cap) return 1;
        float *p = f->positions + 3 * n, *v = f->velocities + 3 * n;
        float a = 6.2831853f * fixture_rand(&seed), b = fixture_rand(&seed);
        p[0] = 0.55f + 0.05f * cosf(a) * b;
        p[1] = 0.33f + 0.04f * sinf(a) * b;
        p[2] = 0.25f + 0.05f * (fixture_rand(&seed) - 0.5f);
        v[0] = 1.5f;
        v[1] = 0.5f;
        v[2] = 0.0f;
        f->densities[n] = 950.0f;
        ++n;
    }
    f->count = n;
    f->radius = r;
    f->collider = (pbf_collider_def){0};
    f->collider.type = PBF_COLLIDER_SPHERE;
    f->collider.center = (pbf_vec3){0.8f, 0.12f, 0.12f};
    f->collider.radius = 0.08f;
    return 0;
}

static inline int fixture_make(fixture *f) { return fixture_make_radius(f, FIXTURE_RADIUS); }

static inline void fixture_free(fixture *f) {
    free(f->positions);
    free(f->velocities);
    free(f->densities);
}

static inline pbf_render_scene fixture_scene(const fixture *f) {
    pbf_render_scene s = pbf_default_render_scene();
    s.particle_count = f->count;
    s.positions = f->positions;
    s.velocities = f->velocities;
    s.densities = f->densities;
    s.particle_radius = f->radius;
    s.domain_min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    s.domain_max = (pbf_vec3){1.0f, 0.6f, 0.5f};
    s.collider_count = 1;
    s.colliders = &f->collider;
    s.camera.position = (pbf_vec3){0.5f, 0.75f, 1.55f};
    s.camera.target = (pbf_vec3){0.5f, 0.12f, 0.25f};
    s.camera.fov = 45.0f;
    return s;
}

#endif
