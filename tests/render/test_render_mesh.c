/* Mesh solids in the renderer (pbf_render_scene.meshes), headless through EGL: a rotated cube
 * covers the pixels an independent CPU ray cast of its triangles says it should, at its pose of
 * each frame (the same arrays moved by a new transform); it hides the fluid behind it and is seen
 * through the fluid in front of it (the refraction reads it); a container shows the fluid inside
 * it; bad meshes are errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/render.h"
#include "test.h"

#define W 200
#define H 150
#define R 0.0125f

static pbf_gl_context *ctx;
static char err[PBF_ERROR_SIZE];

/* A cube of half side 0.1 m, outward faces (counter-clockwise seen from outside). */
static float cube_v[8 * 3];
static const int32_t cube_t[12 * 3] = {0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5, 0, 1, 5, 0, 5, 4,
                                       2, 6, 7, 2, 7, 3, 0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6};

static void make_cube(void) {
    for (int c = 0; c < 8; ++c) {
        cube_v[3 * c + 0] = (c & 1) ? 0.1f : -0.1f;
        cube_v[3 * c + 1] = (c & 2) ? 0.1f : -0.1f;
        cube_v[3 * c + 2] = (c & 4) ? 0.1f : -0.1f;
    }
}

/* [R | t], R = Ry(ay) Rx(ax) (radians). */
static void pose(float out[12], float ax, float ay, float tx, float ty, float tz) {
    float cx = cosf(ax), sx = sinf(ax), cy = cosf(ay), sy = sinf(ay);
    const float m[12] = {cy, sy * sx, sy * cx, tx, 0.0f, cx, -sx, ty, -sy, cy * sx, cy * cx, tz};
    memcpy(out, m, sizeof m);
}

static pbf_render_mesh cube_mesh(float ax, float ay, float tx, float ty, float tz) {
    pbf_render_mesh m;
    memset(&m, 0, sizeof m);
    m.vertices = cube_v;
    m.vertex_count = 8;
    m.triangles = cube_t;
    m.triangle_count = 12;
    pose(m.transform, ax, ay, tx, ty, tz);
    m.color[0] = 0.8f, m.color[1] = 0.1f, m.color[2] = 0.1f;
    return m;
}

static pbf_render_scene base_scene(void) {
    pbf_render_scene s = pbf_default_render_scene();
    s.particle_radius = R;
    s.domain_min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    s.domain_max = (pbf_vec3){1.0f, 0.6f, 0.5f};
    s.camera.position = (pbf_vec3){0.5f, 0.45f, 1.6f};
    s.camera.target = (pbf_vec3){0.5f, 0.25f, 0.25f};
    s.camera.fov = 40.0f;
    return s;
}

static pbf_renderer *make_renderer(void) {
    pbf_render_def def = pbf_default_render_def();
    def.width = W;
    def.height = H;
    def.fluid_splats = PBF_SPLAT_SPHERE;
    def.domain_edges = 0;
    pbf_renderer *r = NULL;
    if (pbf_renderer_create(&def, &r, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "pbf_renderer_create: %s\n", err);
        return NULL;
    }
    return r;
}

static int draw(pbf_renderer *r, const pbf_render_scene *s, uint8_t *rgba) {
    if (pbf_renderer_draw(r, s, err, sizeof err) != PBF_OK ||
        (rgba != NULL && pbf_renderer_read_rgba(r, rgba, err, sizeof err) != PBF_OK)) {
        fprintf(stderr, "draw: %s\n", err);
        return 1;
    }
    return 0;
}

/* mask[y*W + x] (y from the top, as images run): 1 where the pixel's ray meets a triangle of
 * mesh m (Moller-Trumbore on the posed triangles). */
static void cpu_mesh_mask(const pbf_render_scene *s, const pbf_render_mesh *m,
                          unsigned char *mask) {
    float eye[3] = {s->camera.position.x, s->camera.position.y, s->camera.position.z};
    float f[3] = {s->camera.target.x - eye[0], s->camera.target.y - eye[1],
                  s->camera.target.z - eye[2]};
    float fl = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int k = 0; k < 3; ++k) f[k] /= fl;
    float right[3] = {-f[2], 0.0f, f[0]}; /* f x (0, 1, 0) */
    float rl = sqrtf(right[0] * right[0] + right[2] * right[2]);
    right[0] /= rl, right[2] /= rl;
    float up[3] = {right[1] * f[2] - right[2] * f[1], right[2] * f[0] - right[0] * f[2],
                   right[0] * f[1] - right[1] * f[0]};
    float th = tanf(0.5f * s->camera.fov * 3.14159265f / 180.0f), aspect = (float)W / H;
    float world[8][3];
    const float *a = m->transform;
    for (int v = 0; v < m->vertex_count; ++v) {
        const float *p = m->vertices + 3 * v;
        for (int k = 0; k < 3; ++k)
            world[v][k] =
                a[4 * k] * p[0] + a[4 * k + 1] * p[1] + a[4 * k + 2] * p[2] + a[4 * k + 3];
    }
    for (int y = 0; y < H; ++y) {
        for (int x = 0; x < W; ++x) {
            float nx = ((float)x + 0.5f) / W * 2.0f - 1.0f;
            float ny = ((float)(H - 1 - y) + 0.5f) / H * 2.0f - 1.0f;
            float d[3];
            for (int k = 0; k < 3; ++k) d[k] = f[k] + right[k] * nx * th * aspect + up[k] * ny * th;
            int hit = 0;
            for (int t = 0; t < m->triangle_count && !hit; ++t) {
                const float *p0 = world[m->triangles[3 * t]], *p1 = world[m->triangles[3 * t + 1]],
                            *p2 = world[m->triangles[3 * t + 2]];
                float e1[3], e2[3], q[3], o[3], pv[3];
                for (int k = 0; k < 3; ++k) e1[k] = p1[k] - p0[k], e2[k] = p2[k] - p0[k];
                pv[0] = d[1] * e2[2] - d[2] * e2[1];
                pv[1] = d[2] * e2[0] - d[0] * e2[2];
                pv[2] = d[0] * e2[1] - d[1] * e2[0];
                float det = e1[0] * pv[0] + e1[1] * pv[1] + e1[2] * pv[2];
                if (fabsf(det) < 1e-12f) continue;
                for (int k = 0; k < 3; ++k) o[k] = eye[k] - p0[k];
                float u = (o[0] * pv[0] + o[1] * pv[1] + o[2] * pv[2]) / det;
                q[0] = o[1] * e1[2] - o[2] * e1[1];
                q[1] = o[2] * e1[0] - o[0] * e1[2];
                q[2] = o[0] * e1[1] - o[1] * e1[0];
                float v = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) / det;
                float t_hit = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) / det;
                hit = u >= 0.0f && v >= 0.0f && u + v <= 1.0f && t_hit > 0.0f;
            }
            mask[y * W + x] = (unsigned char)hit;
        }
    }
}

/* 1 where two images differ by more than 12 levels in some channel. */
static void diff_mask(const uint8_t *a, const uint8_t *b, unsigned char *mask) {
    for (int i = 0; i < W * H; ++i) {
        int d = 0;
        for (int c = 0; c < 3; ++c) {
            int e = abs((int)a[4 * i + c] - (int)b[4 * i + c]);
            if (e > d) d = e;
        }
        mask[i] = d > 12;
    }
}

static double iou(const unsigned char *a, const unsigned char *b, int *area) {
    int both = 0, any = 0, na = 0;
    for (int i = 0; i < W * H; ++i) {
        both += a[i] && b[i];
        any += a[i] || b[i];
        na += a[i];
    }
    *area = na;
    return any > 0 ? (double)both / any : 0.0;
}

/* A static mesh, then the same arrays at a second pose (a moving body's next frame). */
static int test_coverage_and_pose(void) {
    pbf_renderer *r = make_renderer();
    ENSURE(r != NULL);
    uint8_t *empty = malloc(W * H * 4), *img = malloc(W * H * 4);
    unsigned char *got = malloc(W * H), *want = malloc(W * H);
    ENSURE(empty && img && got && want);
    pbf_render_scene s = base_scene();
    ENSURE(draw(r, &s, empty) == 0);
    const float poses[2][5] = {{0.35f, 0.52f, 0.5f, 0.25f, 0.25f},
                               {-0.2f, 1.1f, 0.68f, 0.3f, 0.2f}};
    for (int k = 0; k < 2; ++k) {
        pbf_render_mesh m =
            cube_mesh(poses[k][0], poses[k][1], poses[k][2], poses[k][3], poses[k][4]);
        s.mesh_count = 1;
        s.meshes = &m;
        ENSURE(draw(r, &s, img) == 0);
        diff_mask(img, empty, got);
        cpu_mesh_mask(&s, &m, want);
        int area = 0;
        double q = iou(want, got, &area);
        printf("  pose %d: %d pixels by ray cast, IoU %.4f\n", k, area, q);
        ENSURE(area > 800);
        ENSURE(q > 0.98);
    }
    /* the same arrays rewritten in place (half the size) under a new version: uploaded again */
    for (int i = 0; i < 24; ++i) cube_v[i] *= 0.5f;
    pbf_render_mesh m = cube_mesh(poses[0][0], poses[0][1], poses[0][2], poses[0][3], poses[0][4]);
    m.version = 1;
    s.meshes = &m;
    ENSURE(draw(r, &s, img) == 0);
    diff_mask(img, empty, got);
    cpu_mesh_mask(&s, &m, want);
    int area = 0;
    double q = iou(want, got, &area);
    printf("  half size, new version: %d pixels by ray cast, IoU %.4f\n", area, q);
    ENSURE(area > 200 && q > 0.97);
    make_cube();
    pbf_renderer_destroy(r);
    free(empty), free(img), free(got), free(want);
    return 0;
}

/* A sheet of particles two layers thick in the plane z = z0, x in [0.2, 0.8], y in [0.05, 0.45]. */
static float *sheet(float z0, int *count) {
    int nx = 24, ny = 16;
    float *p = malloc((size_t)nx * ny * 2 * 3 * sizeof *p);
    int n = 0;
    for (int l = 0; l < 2 && p != NULL; ++l)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i, ++n) {
                p[3 * n] = 0.2f + R + 2.0f * R * (float)i;
                p[3 * n + 1] = 0.05f + R + 2.0f * R * (float)j;
                p[3 * n + 2] = z0 + 2.0f * R * (float)l;
            }
    *count = n;
    return p;
}

/* The fluid's raw depth buffer (rows from the bottom) flipped to image rows. */
static int fluid_depth(pbf_renderer *r, float *out) {
    float *tmp = malloc(W * H * sizeof *tmp);
    if (tmp == NULL ||
        pbf_renderer_read_buffer(r, PBF_BUFFER_DEPTH, tmp, err, sizeof err) != PBF_OK) {
        free(tmp);
        return 1;
    }
    for (int y = 0; y < H; ++y) memcpy(out + y * W, tmp + (H - 1 - y) * W, W * sizeof *out);
    free(tmp);
    return 0;
}

/* Fluid behind the mesh is hidden by it; fluid in front of it shows it (refraction). */
static int test_fluid_and_mesh(void) {
    pbf_renderer *r = make_renderer();
    ENSURE(r != NULL);
    uint8_t *with = malloc(W * H * 4), *without = malloc(W * H * 4);
    unsigned char *mask = malloc(W * H);
    float *depth = malloc(W * H * sizeof *depth);
    ENSURE(with && without && mask && depth);
    pbf_render_mesh m = cube_mesh(0.35f, 0.52f, 0.5f, 0.25f, 0.25f);
    pbf_render_scene s = base_scene();
    cpu_mesh_mask(&s, &m, mask);
    int n = 0;

    /* behind: the sheet at z = 0.02, the cube reaches down to about z = 0.08 */
    float *back = sheet(0.02f, &n);
    ENSURE(back != NULL);
    s.particle_count = n;
    s.positions = back;
    int covered = 0, seen_with = 0, seen_without = 0;
    ENSURE(draw(r, &s, NULL) == 0);
    ENSURE(fluid_depth(r, depth) == 0);
    for (int i = 0; i < W * H; ++i) covered += mask[i], seen_without += mask[i] && depth[i] > 0.0f;
    s.mesh_count = 1;
    s.meshes = &m;
    ENSURE(draw(r, &s, NULL) == 0);
    ENSURE(fluid_depth(r, depth) == 0);
    for (int i = 0; i < W * H; ++i) seen_with += mask[i] && depth[i] > 0.0f;
    printf("  fluid behind the cube: on %d of its %d pixels without it, %d with it\n", seen_without,
           covered, seen_with);
    ENSURE(seen_without > 0.8 * covered);
    ENSURE(seen_with < 0.01 * covered);

    /* in front: the sheet at z = 0.5, the cube reaches up to about z = 0.42 */
    float *front = sheet(0.5f, &n);
    ENSURE(front != NULL);
    s.positions = front;
    ENSURE(draw(r, &s, with) == 0);
    ENSURE(fluid_depth(r, depth) == 0);
    s.mesh_count = 0;
    ENSURE(draw(r, &s, without) == 0);
    int fluid_px = 0;
    double red = 0.0;
    for (int i = 0; i < W * H; ++i) {
        if (!mask[i] || depth[i] <= 0.0f) continue;
        ++fluid_px;
        /* the red cube through the fluid: redder than what is there without it */
        red +=
            ((double)with[4 * i] - with[4 * i + 1]) - ((double)without[4 * i] - without[4 * i + 1]);
    }
    red /= fluid_px > 0 ? fluid_px : 1;
    printf("  fluid in front of the cube: %d of its %d pixels, red minus green "
           "+%.1f levels through the fluid\n",
           fluid_px, covered, red);
    ENSURE(fluid_px > 0.8 * covered);
    ENSURE(red > 20.0);
    pbf_renderer_destroy(r);
    free(back), free(front), free(with), free(without), free(mask), free(depth);
    return 0;
}

/* A container's near walls are not drawn: the fluid inside it shows; an obstacle hides it. */
static int test_container(void) {
    pbf_renderer *r = make_renderer();
    ENSURE(r != NULL);
    float *depth = malloc(W * H * sizeof *depth);
    float blob[27 * 3];
    int n = 0;
    for (int k = -1; k <= 1; ++k)
        for (int j = -1; j <= 1; ++j)
            for (int i = -1; i <= 1; ++i, ++n) {
                blob[3 * n] = 0.5f + 2.0f * R * (float)i;
                blob[3 * n + 1] = 0.25f + 2.0f * R * (float)j;
                blob[3 * n + 2] = 0.25f + 2.0f * R * (float)k;
            }
    pbf_render_mesh m = cube_mesh(0.35f, 0.52f, 0.5f, 0.25f, 0.25f);
    pbf_render_scene s = base_scene();
    s.particle_count = n;
    s.positions = blob;
    s.mesh_count = 1;
    s.meshes = &m;
    int seen[2] = {0, 0};
    for (int c = 0; c < 2; ++c) {
        m.container = c;
        ENSURE(draw(r, &s, NULL) == 0);
        ENSURE(fluid_depth(r, depth) == 0);
        for (int i = 0; i < W * H; ++i) seen[c] += depth[i] > 0.0f;
    }
    printf("  fluid pixels inside the cube: obstacle %d, container %d\n", seen[0], seen[1]);
    ENSURE(seen[0] == 0);
    ENSURE(seen[1] > 100);
    pbf_renderer_destroy(r);
    free(depth);
    return 0;
}

static int test_errors(void) {
    pbf_renderer *r = make_renderer();
    ENSURE(r != NULL);
    pbf_render_scene s = base_scene();
    pbf_render_mesh m = cube_mesh(0.0f, 0.0f, 0.5f, 0.25f, 0.25f);
    int32_t bad[3] = {0, 1, 8};
    m.triangles = bad;
    m.triangle_count = 1;
    s.mesh_count = 1;
    s.meshes = &m;
    ENSURE(pbf_renderer_draw(r, &s, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "vertex 8 of 8") != NULL);
    m = cube_mesh(0.0f, 0.0f, NAN, 0.25f, 0.25f);
    ENSURE(pbf_renderer_draw(r, &s, err, sizeof err) == PBF_ERR_INVALID_ARG);
    s.mesh_count = PBF_RENDER_MAX_MESHES + 1;
    ENSURE(pbf_renderer_draw(r, &s, err, sizeof err) == PBF_ERR_INVALID_ARG);
    s.mesh_count = 1;
    s.meshes = NULL;
    ENSURE(pbf_renderer_draw(r, &s, err, sizeof err) == PBF_ERR_INVALID_ARG);
    pbf_renderer_destroy(r);
    return 0;
}

int main(void) {
    int test_failures_ = 0;
    if (pbf_gl_context_create_headless(&ctx, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "no headless OpenGL: %s\n", err);
        return 1;
    }
    printf("%s\n", pbf_gl_context_description(ctx));
    make_cube();
    RUN_TEST(test_coverage_and_pose);
    RUN_TEST(test_fluid_and_mesh);
    RUN_TEST(test_container);
    RUN_TEST(test_errors);
    pbf_gl_context_destroy(ctx);
    return test_failures_ == 0 ? 0 : 1;
}
