/* CUDA–OpenGL interop (pbf/render_cuda.h) against the arrays' path, on a machine whose EGL
 * context runs on a CUDA GPU: the same CUDA world drawn from device memory and from host memory
 * must give the same image. Spheres (uniform, by speed, by density) and the fluid look with
 * sphere splats take the same numbers both ways, so the images must be identical; the fluid
 * look's ellipsoids come from the GPU's anisotropy (pbf_surface_gpu_anisotropy), which agrees
 * with the CPU's to rounding, so there a few pixels may differ by a level or two. A snapshot
 * must not change when the world steps on.
 *
 * Elsewhere (no CUDA device, a context on Mesa, a build without the backend) the interop must
 * refuse cleanly with the reason, and the test reports a skip (77). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/render.h"
#include "pbf/render_cuda.h"
#include "pbf/scene.h"
#include "test.h"

#define W 320
#define H 240

static char err[PBF_ERROR_SIZE];

/* Draws s with a renderer of def and reads the image into rgba. */
static int draw(const pbf_render_def *def, pbf_render_cuda *interop, const pbf_device_view *dv,
                pbf_render_scene s, uint8_t *rgba) {
    pbf_renderer *r = NULL;
    ENSURE(pbf_renderer_create(def, &r, err, sizeof err) == PBF_OK);
    if (interop != NULL && pbf_render_cuda_fill(interop, r, dv, &s, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "fill: %s\n", err);
        pbf_renderer_destroy(r);
        return 1;
    }
    if (pbf_renderer_draw(r, &s, err, sizeof err) != PBF_OK ||
        pbf_renderer_read_rgba(r, rgba, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "draw: %s\n", err);
        pbf_renderer_destroy(r);
        return 1;
    }
    pbf_renderer_destroy(r);
    return 0;
}

/* Bytes that differ, and pixels whose largest channel difference exceeds 8 levels. */
static void compare(const uint8_t *a, const uint8_t *b, int *bytes, int *pixels) {
    *bytes = *pixels = 0;
    for (int i = 0; i < W * H; ++i) {
        int m = 0;
        for (int k = 0; k < 4; ++k) {
            int d = abs(a[4 * i + k] - b[4 * i + k]);
            *bytes += d != 0;
            if (d > m) m = d;
        }
        *pixels += m > 8;
    }
}

int main(void) {
    pbf_gl_context *ctx = NULL;
    if (pbf_gl_context_create_headless(&ctx, err, sizeof err) != PBF_OK) {
        printf("SKIP: no OpenGL context here: %s\n", err);
        return 77;
    }
    pbf_render_cuda *interop = NULL;
    pbf_status st = pbf_render_cuda_create(&interop, err, sizeof err);
    if (st != PBF_OK) {
        /* the refusal: a device status or a build without the backend, with the reason */
        ENSURE(st == PBF_ERR_NO_DEVICE || st == PBF_ERR_UNSUPPORTED);
        ENSURE(interop == NULL && strstr(err, "CUDA") != NULL);
        printf("SKIP: %s (%s)\n", err, pbf_gl_context_description(ctx));
        pbf_gl_context_destroy(ctx);
        return 77;
    }
    printf("context: %s\n", pbf_gl_context_description(ctx));

    pbf_scene *scene = malloc(sizeof *scene);
    ENSURE(scene != NULL);
    const char *set[] = {"solver.backend=\"cuda\"", "fluid.particle_radius=0.02"};
    ENSURE(pbf_scene_default(set, 2, scene, err, sizeof err) == PBF_OK);
    pbf_world *w = NULL;
    ENSURE(pbf_scene_create_world(scene, &w, err, sizeof err) == PBF_OK);
    for (int k = 0; k < 20; ++k) ENSURE(pbf_world_step(w, 1.0f / scene->fps) == PBF_OK);

    pbf_render_scene base = pbf_default_render_scene();
    base.particle_radius = scene->world.particle_radius;
    base.rest_density = scene->world.rest_density;
    pbf_world_get_domain(w, &base.domain_min, &base.domain_max);
    pbf_render_scene host = base;
    pbf_particle_view v = pbf_world_view(w);
    host.particle_count = v.count;
    host.positions = v.positions;
    host.velocities = v.velocities;
    host.densities = v.densities;
    pbf_device_view dv;
    ENSURE(pbf_world_device_view(w, &dv, err, sizeof err) == PBF_OK);
    ENSURE(dv.count == v.count && dv.count > 1000);

    uint8_t *a = malloc(W * H * 4), *b = malloc(W * H * 4);
    ENSURE(a && b);
    struct {
        const char *name;
        pbf_render_look look;
        pbf_render_color color;
        pbf_render_splat splats;
        int exact;
    } cases[] = {
        {"spheres", PBF_LOOK_SPHERES, PBF_COLOR_UNIFORM, PBF_SPLAT_SPHERE, 1},
        {"spheres by speed", PBF_LOOK_SPHERES, PBF_COLOR_SPEED, PBF_SPLAT_SPHERE, 1},
        {"spheres by density", PBF_LOOK_SPHERES, PBF_COLOR_DENSITY, PBF_SPLAT_SPHERE, 1},
        {"fluid, sphere splats", PBF_LOOK_FLUID, PBF_COLOR_UNIFORM, PBF_SPLAT_SPHERE, 1},
        {"fluid, ellipsoids", PBF_LOOK_FLUID, PBF_COLOR_UNIFORM, PBF_SPLAT_ELLIPSOID, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        pbf_render_def def = pbf_default_render_def();
        def.width = W;
        def.height = H;
        def.look = cases[c].look;
        def.color = cases[c].color;
        def.fluid_splats = cases[c].splats;
        ENSURE(draw(&def, NULL, NULL, host, a) == 0);
        ENSURE(draw(&def, interop, &dv, base, b) == 0);
        int bytes, pixels;
        compare(a, b, &bytes, &pixels);
        printf("  %-22s host against interop: %d bytes differ, %d pixels by > 8 levels\n",
               cases[c].name, bytes, pixels);
        if (cases[c].exact)
            ENSURE(bytes == 0);
        else
            ENSURE(pixels <= W * H / 1000);
    }

    /* The viewer's way: a snapshot, then the world steps on; the snapshot draws the old state. */
    pbf_render_def def = pbf_default_render_def();
    def.width = W;
    def.height = H;
    def.look = PBF_LOOK_SPHERES;
    def.color = PBF_COLOR_SPEED;
    ENSURE(draw(&def, NULL, NULL, host, a) == 0);
    ENSURE(pbf_render_cuda_snapshot(interop, &dv, err, sizeof err) == PBF_OK);
    ENSURE(pbf_world_step(w, 1.0f / scene->fps) == PBF_OK);
    ENSURE(draw(&def, interop, NULL, base, b) == 0);
    int bytes, pixels;
    compare(a, b, &bytes, &pixels);
    printf("  snapshot after a further step: %d bytes differ from the state it took\n", bytes);
    ENSURE(bytes == 0);

    /* The particle radius is required. */
    pbf_renderer *r = NULL;
    ENSURE(pbf_renderer_create(&def, &r, err, sizeof err) == PBF_OK);
    pbf_render_scene bad = base;
    bad.particle_radius = 0.0f;
    ENSURE(pbf_render_cuda_fill(interop, r, &dv, &bad, err, sizeof err) == PBF_ERR_INVALID_ARG);
    pbf_renderer_destroy(r);

    free(a);
    free(b);
    pbf_world_destroy(w);
    free(scene);
    pbf_render_cuda_destroy(interop);
    pbf_gl_context_destroy(ctx);
    printf("test_render_cuda: ok\n");
    return 0;
}
