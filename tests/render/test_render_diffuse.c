/* Diffuse particles in the renderer (pbf_render_scene.diffuse_*), headless: spray in the air
 * brightens the pixels around it and nothing else, foam on the fluid's front surface shows,
 * bubbles deep inside the fluid are hidden by it, and foam is brighter than bubbles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/render.h"
#include "test.h"

#define W 320
#define H 240
#define R 0.0125f
#define CLUSTER 16

static pbf_gl_context *ctx;
static pbf_renderer *ren;
static char err[PBF_ERROR_SIZE];
static float slab[3 * 4096];
static int slab_count;
static uint8_t base[W * H * 4], img[W * H * 4];

/* A slab of fluid x 0.3–0.7, y 0–0.25, z 0.15–0.35 m, seen from the front (+z). */
static pbf_render_scene scene(void) {
    pbf_render_scene s = pbf_default_render_scene();
    s.particle_count = slab_count;
    s.positions = slab;
    s.particle_radius = R;
    s.domain_max = (pbf_vec3){1.0f, 0.6f, 0.5f};
    s.camera.position = (pbf_vec3){0.5f, 0.3f, 1.6f};
    s.camera.target = (pbf_vec3){0.5f, 0.2f, 0.25f};
    s.camera.fov = 40.0f;
    return s;
}

static int draw(const pbf_render_scene *s, uint8_t *out) {
    if (pbf_renderer_draw(ren, s, err, sizeof err) != PBF_OK ||
        pbf_renderer_read_rgba(ren, out, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "  %s\n", err);
        return 1;
    }
    return 0;
}

/* A cluster of CLUSTER diffuse particles of one kind around c (within 1.5 cm): how many pixels
 * change against the image without them, and the total brightness gain (R + G + B). */
static int with_cluster(float cx, float cy, float cz, uint8_t kind, int *changed, int *gain) {
    float x[3 * CLUSTER];
    uint8_t k[CLUSTER];
    for (int i = 0; i < CLUSTER; ++i) {
        x[3 * i] = cx + 0.004f * (float)(i % 4) - 0.006f;
        x[3 * i + 1] = cy + 0.004f * (float)(i / 4) - 0.006f;
        x[3 * i + 2] = cz;
        k[i] = kind;
    }
    pbf_render_scene s = scene();
    s.diffuse_count = CLUSTER;
    s.diffuse_positions = x;
    s.diffuse_kinds = k;
    if (draw(&s, img) != 0) return 1;
    *changed = 0;
    *gain = 0;
    for (int p = 0; p < W * H; ++p) {
        int d = 0;
        for (int c = 0; c < 3; ++c) d += img[4 * p + c] - base[4 * p + c];
        if (memcmp(img + 4 * p, base + 4 * p, 3) != 0) ++*changed;
        *gain += d;
    }
    return 0;
}

/* Spray in the air above the slab: a few dozen pixels change, all brighter. */
static int spray_in_the_air_shows(void) {
    int changed, gain;
    ENSURE(with_cluster(0.5f, 0.45f, 0.25f, 1 /* foam */, &changed, &gain) == 0);
    printf("  foam in the air: %d pixels changed, total gain %d\n", changed, gain);
    ENSURE(changed >= 10 && changed <= 400);
    ENSURE(gain >= 30 * changed);
    ENSURE(with_cluster(0.5f, 0.45f, 0.25f, 0 /* spray */, &changed, &gain) == 0);
    ENSURE(changed >= 10 && gain >= 20 * changed);
    return 0;
}

/* Foam on the slab's front face shows; bubbles 10 cm inside the slab do not. */
static int bubbles_hidden_foam_shows(void) {
    int changed, gain;
    ENSURE(with_cluster(0.5f, 0.12f, 0.35f + R, 1, &changed, &gain) == 0);
    printf("  foam on the surface: %d pixels changed, gain %d\n", changed, gain);
    ENSURE(changed >= 10 && gain >= 30 * changed);
    ENSURE(with_cluster(0.5f, 0.12f, 0.25f, 2, &changed, &gain) == 0);
    printf("  bubbles inside: %d pixels changed\n", changed);
    ENSURE(changed == 0);
    return 0;
}

/* The same cluster in the air: foam brighter than bubbles. */
static int foam_brighter_than_bubbles(void) {
    int changed, foam, bubble;
    ENSURE(with_cluster(0.5f, 0.45f, 0.25f, 1, &changed, &foam) == 0);
    ENSURE(with_cluster(0.5f, 0.45f, 0.25f, 2, &changed, &bubble) == 0);
    printf("  gain: foam %d, bubbles %d\n", foam, bubble);
    ENSURE(foam > 1.3 * bubble);
    return 0;
}

int main(void) {
    int test_failures_ = 0;
    if (pbf_gl_context_create_headless(&ctx, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "no headless OpenGL: %s\n", err);
        return 1;
    }
    for (float z = 0.15f + R; z < 0.35f; z += 2 * R)
        for (float y = R; y < 0.25f; y += 2 * R)
            for (float x = 0.3f + R; x < 0.7f; x += 2 * R) {
                if (slab_count == 4096) break;
                float *p = slab + 3 * slab_count++;
                p[0] = x, p[1] = y, p[2] = z;
            }
    pbf_render_def def = pbf_default_render_def();
    def.width = W;
    def.height = H;
    def.domain_edges = 0;
    if (pbf_renderer_create(&def, &ren, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "pbf_renderer_create: %s\n", err);
        return 1;
    }
    pbf_render_scene s = scene();
    if (draw(&s, base) != 0) return 1;
    RUN_TEST(spray_in_the_air_shows);
    RUN_TEST(bubbles_hidden_foam_shows);
    RUN_TEST(foam_brighter_than_bubbles);
    pbf_renderer_destroy(ren);
    pbf_gl_context_destroy(ctx);
    return test_failures_ == 0 ? 0 : 1;
}
