/* Contacts of floating mesh bodies (include/pbf/geometry.h "restitution", docs/physics.md
 * "Mesh solids"), in an empty tank (no fluid: only the bodies move):
 *  - a box dropped onto a static mesh box comes to rest on it, never passing into it;
 *  - a box dropped onto an analytic box collider comes to rest on it;
 *  - two boxes dropped one above the other onto the floor stack without interpenetrating;
 *  - with restitution 0.5 a box bounces off a static mesh and comes back up;
 *  - a body sliding onto a mesh ramp at rest with friction stays (μ 1 on a 20° slope), and
 *    slides without (μ 0);
 *  - 1 and 2 threads give the same poses, bit for bit, with fluid around the bodies;
 *  - a mesh flagged as a sink removes the water that falls into it;
 *  - checkpoint and resume with contacts and a sink mesh is bit-identical.
 * Mesh files are written by the test; the field cache is a temporary folder. A few seconds. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_files.h"
#include "pbf/checkpoint.h"
#include "pbf/flow.h"
#include "pbf/geometry.h"
#include "test.h"

static char dir[256];

static const char *path_of(const char *name) {
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

static int write_box(const char *name, float hx, float hy, float hz) {
    const float lo[3] = {-hx, -hy, -hz}, hi[3] = {hx, hy, hz};
    test_mesh box = test_mesh_box(lo, hi);
    int rc = test_mesh_write_obj(path_of(name), &box);
    test_mesh_free(&box);
    return rc;
}

static pbf_world *make_world(int threads) {
    pbf_world_def d = pbf_default_world_def();
    d.threads = threads;
    d.domain_max = (pbf_vec3){0.4f, 0.5f, 0.4f};
    return test_world_create(&d);
}

static int add(pbf_world *w, const char *file, pbf_mesh_motion motion, pbf_vec3 at,
               pbf_vec3 rotation, float restitution, float friction) {
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", path_of(file));
    m.motion = motion;
    m.position = at;
    m.rotation = rotation;
    m.restitution = restitution;
    m.friction = friction;
    if (pbf_world_add_mesh(w, &m) != PBF_OK) {
        fprintf(stderr, "%s: %s\n", file, pbf_world_error(w));
        return 1;
    }
    return 0;
}

/* The lowest point of a body's mesh in the world (its y). */
static double lowest(const pbf_world *w, int index) {
    const float *v;
    int nv;
    pbf_world_mesh_triangles(w, index, &v, &nv, NULL);
    float T[12];
    pbf_world_mesh_transform(w, index, T);
    double lo = INFINITY;
    for (int i = 0; i < nv; ++i) {
        double y = T[4] * v[3 * i] + T[5] * v[3 * i + 1] + T[6] * v[3 * i + 2] + T[7];
        lo = y < lo ? y : lo;
    }
    return lo;
}

/* The deepest a body's vertices reach into mesh `other` (m, >= 0). */
static double depth_in(const pbf_world *w, int body, int other) {
    const float *v;
    int nv;
    pbf_world_mesh_triangles(w, body, &v, &nv, NULL);
    float T[12];
    pbf_world_mesh_transform(w, body, T);
    double deepest = 0.0;
    for (int i = 0; i < nv; ++i) {
        pbf_vec3 x;
        x.x = T[0] * v[3 * i] + T[1] * v[3 * i + 1] + T[2] * v[3 * i + 2] + T[3];
        x.y = T[4] * v[3 * i] + T[5] * v[3 * i + 1] + T[6] * v[3 * i + 2] + T[7];
        x.z = T[8] * v[3 * i] + T[9] * v[3 * i + 1] + T[10] * v[3 * i + 2] + T[11];
        double d = -pbf_world_mesh_distance(w, other, x);
        deepest = d > deepest ? d : deepest;
    }
    return deepest;
}

/* A 6 cm box (500 kg/m³) dropped from 15 cm above a static mesh box whose top is at 0.1 m:
 * after 1.5 s it rests with its bottom on that top (within 2 mm), still, and no frame saw it
 * more than 2 mm into the static box. */
static int rests_on_static_mesh(void) {
    ENSURE(write_box("pedestal.obj", 0.1f, 0.05f, 0.1f) == 0);
    ENSURE(write_box("cube.obj", 0.03f, 0.03f, 0.03f) == 0);
    pbf_world *w = make_world(1);
    ENSURE(w != NULL);
    const pbf_vec3 none = {0, 0, 0};
    ENSURE(add(w, "pedestal.obj", PBF_MESH_STATIC, (pbf_vec3){0.2f, 0.05f, 0.2f}, none, 0, 0.4f) ==
           0);
    ENSURE(add(w, "cube.obj", PBF_MESH_FLOATING, (pbf_vec3){0.2f, 0.28f, 0.2f},
               (pbf_vec3){0.0f, 0.0f, 10.0f}, 0, 0.4f) == 0);
    double worst = 0.0;
    for (int f = 0; f < 90; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        double d = depth_in(w, 1, 0);
        worst = d > worst ? d : worst;
    }
    pbf_mesh_solid_state s = pbf_world_mesh_state(w, 1);
    double bottom = lowest(w, 1),
           speed = sqrt(s.velocity.x * s.velocity.x + s.velocity.y * s.velocity.y +
                        s.velocity.z * s.velocity.z);
    printf("  bottom at %.5f m (the top at 0.1), speed %.2e m/s, deepest %.2e m\n", bottom, speed,
           worst);
    ENSURE(fabs(bottom - 0.1) < 2e-3);
    ENSURE(worst < 2e-3);
    ENSURE(speed < 0.02);
    pbf_world_destroy(w);
    return 0;
}

/* The same cube onto an analytic box collider (top at 0.12 m). */
static int rests_on_collider(void) {
    ENSURE(write_box("cube.obj", 0.03f, 0.03f, 0.03f) == 0);
    pbf_world *w = make_world(1);
    ENSURE(w != NULL);
    pbf_collider_def c = pbf_default_collider_def();
    c.type = PBF_COLLIDER_BOX;
    c.center = (pbf_vec3){0.2f, 0.06f, 0.2f};
    c.half_extents = (pbf_vec3){0.08f, 0.06f, 0.08f};
    ENSURE(pbf_world_add_collider(w, &c) == PBF_OK);
    ENSURE(add(w, "cube.obj", PBF_MESH_FLOATING, (pbf_vec3){0.2f, 0.3f, 0.2f}, (pbf_vec3){0, 0, 0},
               0, 0.4f) == 0);
    for (int f = 0; f < 90; ++f) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    double bottom = lowest(w, 0);
    printf("  bottom at %.5f m (the collider's top at 0.12)\n", bottom);
    ENSURE(fabs(bottom - 0.12) < 2e-3);
    pbf_world_destroy(w);
    return 0;
}

/* Two cubes, the upper one turned 30° about y and shifted 1 cm, dropped onto the floor: they
 * stack (upper bottom on lower top within 2 mm) and no frame has a vertex of one more than
 * 2 mm inside the other. */
static int two_bodies_stack(void) {
    ENSURE(write_box("cube.obj", 0.03f, 0.03f, 0.03f) == 0);
    pbf_world *w = make_world(1);
    ENSURE(w != NULL);
    ENSURE(add(w, "cube.obj", PBF_MESH_FLOATING, (pbf_vec3){0.2f, 0.1f, 0.2f}, (pbf_vec3){0, 0, 0},
               0, 0.4f) == 0);
    ENSURE(add(w, "cube.obj", PBF_MESH_FLOATING, (pbf_vec3){0.21f, 0.25f, 0.2f},
               (pbf_vec3){0.0f, 30.0f, 0.0f}, 0, 0.4f) == 0);
    double worst = 0.0;
    for (int f = 0; f < 90; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        double d = fmax(depth_in(w, 0, 1), depth_in(w, 1, 0));
        worst = d > worst ? d : worst;
    }
    double low0 = lowest(w, 0), low1 = lowest(w, 1);
    printf("  lower cube's bottom %.5f m, upper's %.5f m (its top at 0.06), deepest %.2e m\n", low0,
           low1, worst);
    ENSURE(fabs(low0) < 2e-3);
    ENSURE(fabs(low1 - (low0 + 0.06)) < 2e-3);
    ENSURE(worst < 2e-3);
    pbf_world_destroy(w);
    return 0;
}

/* Restitution 0.5: a cube dropped 10 cm onto the pedestal bounces back up at least 1.5 cm
 * (e² of the drop is 2.5 cm; the contact stops it up to one substep's travel short of the
 * surface), and with restitution 0 it does not rise more than 2 mm. */
static double bounce_height(float e) {
    pbf_world *w = make_world(1);
    if (w == NULL) return -1.0;
    const pbf_vec3 none = {0, 0, 0};
    if (add(w, "pedestal.obj", PBF_MESH_STATIC, (pbf_vec3){0.2f, 0.05f, 0.2f}, none, 0, 0) ||
        add(w, "cube.obj", PBF_MESH_FLOATING, (pbf_vec3){0.2f, 0.23f, 0.2f}, none, e, 0)) {
        pbf_world_destroy(w);
        return -1.0;
    }
    int hit = 0;
    double top = 0.0;
    for (int f = 0; f < 60; ++f) {
        if (pbf_world_step(w, 1.0f / 120.0f) != PBF_OK) break;
        double b = lowest(w, 1) - 0.1;
        if (!hit && pbf_world_mesh_state(w, 1).velocity.y > 0.0f) hit = 1; /* on its way up */
        if (hit && b > top) top = b;
    }
    pbf_world_destroy(w);
    return top;
}

static int restitution_bounces(void) {
    double up = bounce_height(0.5f), none = bounce_height(0.0f);
    printf("  rebound after a 10 cm drop: %.4f m with restitution 0.5, %.4f m with 0\n", up, none);
    ENSURE(up > 0.015);
    ENSURE(none >= 0.0 && none < 2e-3);
    return 0;
}

/* A cube on a static 20° ramp: with μ = 1 (> tan 20° = 0.36) it stays within 5 mm of where it
 * landed over a third of a second; with μ = 0 it slides at least 5 cm (g sin 20° t² / 2 is
 * 19 cm along the slope). */
static double slide(float mu) {
    pbf_world *w = make_world(1);
    if (w == NULL) return -1.0;
    const pbf_vec3 tilt = {0.0f, 0.0f, 20.0f};
    if (add(w, "pedestal.obj", PBF_MESH_STATIC, (pbf_vec3){0.2f, 0.1f, 0.2f}, tilt, 0, mu) ||
        add(w, "cube.obj", PBF_MESH_FLOATING, (pbf_vec3){0.2f, 0.2f, 0.2f}, tilt, 0, mu)) {
        pbf_world_destroy(w);
        return -1.0;
    }
    double x0 = 0.0;
    for (int f = 0; f < 90; ++f) {
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) break;
        if (f == 4) x0 = pbf_world_mesh_state(w, 1).position.x;
        if (f == 24) break;
    }
    double moved = fabs(pbf_world_mesh_state(w, 1).position.x - x0);
    pbf_world_destroy(w);
    return moved;
}

static int friction_holds_on_a_slope(void) {
    double held = slide(1.0f), free_ = slide(0.0f);
    printf("  along a 20 deg ramp over 1/3 s: %.4f m with mu 1, %.4f m with mu 0\n", held, free_);
    ENSURE(held >= 0.0 && held < 5e-3);
    ENSURE(free_ > 0.05);
    return 0;
}

/* Two cubes falling onto each other into a pool: the poses after 1/3 s with 1 and 2 threads. */
static int poses_with(int threads, float out[2][7]) {
    pbf_world *w = make_world(threads);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.4f, 0.06f, 0.4f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    ENSURE(add(w, "cube.obj", PBF_MESH_FLOATING, (pbf_vec3){0.2f, 0.12f, 0.2f}, (pbf_vec3){0, 0, 0},
               0.2f, 0.4f) == 0);
    ENSURE(add(w, "cube.obj", PBF_MESH_FLOATING, (pbf_vec3){0.21f, 0.22f, 0.2f},
               (pbf_vec3){0.0f, 30.0f, 0.0f}, 0.2f, 0.4f) == 0);
    for (int f = 0; f < 20; ++f) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    for (int k = 0; k < 2; ++k) {
        pbf_mesh_solid_state s = pbf_world_mesh_state(w, k);
        const float v[7] = {s.position.x,     s.position.y,     s.position.z,    s.orientation[0],
                            s.orientation[1], s.orientation[2], s.orientation[3]};
        memcpy(out[k], v, sizeof v);
    }
    pbf_world_destroy(w);
    return 0;
}

static int threads_bit_identical(void) {
    float one[2][7], two[2][7];
    ENSURE(poses_with(1, one) == 0);
    ENSURE(poses_with(2, two) == 0);
    printf("  upper cube at y = %.5f m\n", (double)one[1][1]);
    ENSURE(memcmp(one, two, sizeof one) == 0);
    return 0;
}

/* A sink mesh (a static box flagged sink) under a falling block of water: it is no solid (the
 * water falls into it), every particle that enters is removed and counted (flow.removed = the
 * particles gone), at least half the block within 0.5 s (the rest spreads past its edges as it
 * falls, 72 % when written), and after every frame no particle
 * is left inside it. */
static int mesh_sink_removes(void) {
    ENSURE(write_box("drain.obj", 0.1f, 0.05f, 0.1f) == 0);
    pbf_world *w = make_world(1);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.min = (pbf_vec3){0.12f, 0.2f, 0.12f};
    b.max = (pbf_vec3){0.28f, 0.3f, 0.28f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", path_of("drain.obj"));
    m.position = (pbf_vec3){0.2f, 0.05f, 0.2f};
    m.sink = 1;
    ENSURE(pbf_world_add_mesh(w, &m) == PBF_OK);
    const int start = pbf_world_particle_count(w);
    int inside = 0;
    for (int f = 0; f < 30; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        const int n = pbf_world_particle_count(w);
        float *x = malloc(sizeof *x * 3 * (size_t)(n > 0 ? n : 1));
        ENSURE(x != NULL);
        pbf_world_get_positions(w, x);
        for (int i = 0; i < n; ++i) {
            pbf_vec3 p = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
            if (pbf_world_mesh_distance(w, 0, p) < 0.0f) inside++;
        }
        free(x);
    }
    const int left = pbf_world_particle_count(w);
    pbf_flow_state fs = pbf_world_get_flow(w);
    printf("  %d particles, %d left after 0.5 s, %lld removed; %d seen inside the sink\n", start,
           left, (long long)fs.removed, inside);
    ENSURE(fs.removed == start - left);
    ENSURE(left < start / 2);
    ENSURE(inside == 0);
    /* a sink cannot float, nor be a container */
    m.motion = PBF_MESH_FLOATING;
    ENSURE(pbf_world_add_mesh(w, &m) == PBF_ERR_INVALID_ARG);
    m.motion = PBF_MESH_STATIC;
    m.role = PBF_MESH_CONTAINER;
    ENSURE(pbf_world_add_mesh(w, &m) == PBF_ERR_INVALID_ARG);
    pbf_world_destroy(w);
    return 0;
}

/* Checkpoint and resume with contacts and a sink mesh: two cubes (restitution 0.3, friction
 * 0.7) falling onto each other into a pool with a drain, saved after 10 frames; 10 more frames
 * of the saved world and of the resumed one give the same poses and particle count, bit for bit,
 * and the resumed world has the contact and sink settings back. */
static int checkpoint_resumes(void) {
    ENSURE(write_box("drain.obj", 0.1f, 0.05f, 0.1f) == 0);
    pbf_world *w = make_world(1);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.4f, 0.06f, 0.4f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    ENSURE(add(w, "cube.obj", PBF_MESH_FLOATING, (pbf_vec3){0.2f, 0.12f, 0.2f}, (pbf_vec3){0, 0, 0},
               0.3f, 0.7f) == 0);
    ENSURE(add(w, "cube.obj", PBF_MESH_FLOATING, (pbf_vec3){0.21f, 0.2f, 0.2f},
               (pbf_vec3){0.0f, 30.0f, 0.0f}, 0.3f, 0.7f) == 0);
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", path_of("drain.obj"));
    m.position = (pbf_vec3){0.3f, 0.0f, 0.3f};
    m.sink = 1;
    ENSURE(pbf_world_add_mesh(w, &m) == PBF_OK);
    for (int f = 0; f < 10; ++f) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_checkpoint_save(w, path_of("contacts.ckpt"), NULL, 0, err, sizeof err) == PBF_OK);
    pbf_checkpoint *ck = NULL;
    ENSURE(pbf_checkpoint_open(path_of("contacts.ckpt"), &ck, err, sizeof err) == PBF_OK);
    pbf_world *r = NULL;
    ENSURE(pbf_checkpoint_create_world(ck, NULL, &r, err, sizeof err) == PBF_OK);
    pbf_checkpoint_close(ck);
    ENSURE(pbf_world_get_mesh_def(r, 1)->restitution == 0.3f);
    ENSURE(pbf_world_get_mesh_def(r, 1)->friction == 0.7f);
    ENSURE(pbf_world_get_mesh_def(r, 2)->sink == 1);
    for (int f = 0; f < 10; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        ENSURE(pbf_world_step(r, 1.0f / 60.0f) == PBF_OK);
    }
    ENSURE(pbf_world_particle_count(w) == pbf_world_particle_count(r));
    ENSURE(pbf_world_get_flow(w).removed == pbf_world_get_flow(r).removed);
    for (int k = 0; k < 2; ++k) {
        pbf_mesh_solid_state a = pbf_world_mesh_state(w, k), c = pbf_world_mesh_state(r, k);
        ENSURE(memcmp(&a.position, &c.position, sizeof a.position) == 0);
        ENSURE(memcmp(a.orientation, c.orientation, sizeof a.orientation) == 0);
    }
    printf("  %d particles, %lld removed by the drain; poses equal after resuming\n",
           pbf_world_particle_count(r), (long long)pbf_world_get_flow(r).removed);
    pbf_world_destroy(w);
    pbf_world_destroy(r);
    return 0;
}

TEST_MAIN_BEGIN
if (!pbf_mesh_import_available()) {
    printf("mesh import not built (PBF_MESH=OFF): skipped\n");
    return 77;
}
if (test_mesh_cache_dir(dir, sizeof dir, "test_mesh_contact") != 0) return 1;
RUN_TEST(rests_on_static_mesh);
RUN_TEST(rests_on_collider);
RUN_TEST(two_bodies_stack);
RUN_TEST(restitution_bounces);
RUN_TEST(friction_holds_on_a_slope);
RUN_TEST(threads_bit_identical);
RUN_TEST(mesh_sink_removes);
RUN_TEST(checkpoint_resumes);
test_mesh_remove_dir(dir);
TEST_MAIN_END
