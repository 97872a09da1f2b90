/* Solver behaviour and physics: convergence, a resting column, boundaries and colliders. */
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"
#include "test.h"

/* A block compressed to 90% of the rest spacing: one step without gravity; the density error
 * after the step falls with every doubling of the iterations. */
static int density_error_falls_with_iterations(void) {
    float prev = 1e9f, first = 0.0f;
    for (int iters = 1; iters <= 16; iters *= 2) {
        pbf_world_def d = pbf_default_world_def();
        d.gravity = (pbf_vec3){0, 0, 0};
        d.substeps = 1;
        d.solver.iterations = iters;
        d.solver.vorticity = 0.0f;
        d.solver.xsph = 0.0f;
        d.domain_max = (pbf_vec3){0.5f, 0.5f, 0.5f};
        pbf_world *w = test_world_create(&d);
        ENSURE(w);
        float s = 0.9f * 2.0f * d.particle_radius;
        int n = 0;
        float *pos = malloc(3 * 12 * 12 * 12 * sizeof *pos);
        for (int k = 0; k < 12; ++k)
            for (int j = 0; j < 12; ++j)
                for (int i = 0; i < 12; ++i, ++n) {
                    pos[3 * n] = 0.15f + s * i;
                    pos[3 * n + 1] = 0.15f + s * j;
                    pos[3 * n + 2] = 0.15f + s * k;
                }
        ENSURE(pbf_world_add_particles(w, n, pos, NULL) == PBF_OK);
        free(pos);
        ENSURE(pbf_world_step(w, 1.0f / 240.0f) == PBF_OK);
        float e = pbf_world_get_profile(w).avg_density_error;
        printf("  iterations %2d: average density error %.4f%%\n", iters, 100.0 * e);
        if (iters == 1) first = e;
        ENSURE(e < prev);
        prev = e;
        pbf_world_destroy(w);
    }
    /* a block 90% compressed starts ~37% over rest density; 16 iterations remove most of it */
    ENSURE(prev < 0.5f * first);
    return 0;
}

/* The resting column (a 0.4 m column at rest in a closed tank, default parameters: the density
 * error settles under 1 % and the kinetic energy decays) is checked in test_hydrostatic.c, which
 * steps the same world and reads its forces and surface besides. */

/* A block thrown at 30 m/s against an oscillating wall: no particle ever leaves the domain. */
static int no_particle_leaves_the_domain(void) {
    pbf_world_def d = pbf_default_world_def();
    d.domain_max = (pbf_vec3){0.5f, 0.3f, 0.2f};
    d.wall_motion[PBF_WALL_X_MAX] = (pbf_wall_motion){0.05f, 0.5f, 0.0f};
    d.substeps = 1;
    pbf_world *w = test_world_create(&d);
    ENSURE(w);
    pbf_block_def b = pbf_default_block_def();
    b.min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    b.max = (pbf_vec3){0.2f, 0.2f, 0.2f};
    b.velocity = (pbf_vec3){30.0f, 10.0f, -5.0f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    int n = pbf_world_particle_count(w);
    float *x = malloc(3 * (size_t)n * sizeof *x);
    for (int f = 0; f < 60; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_world_get_positions(w, x);
        ENSURE(all_in_domain(w, x, n));
    }
    free(x);
    pbf_world_destroy(w);
    return 0;
}

/* Fluid poured over a sphere, a box and a capsule: no particle centre ever ends inside one
 * (closer than r to its surface, less a small tolerance for the Jacobi average). */
static int colliders_keep_particles_out(void) {
    pbf_world_def d = pbf_default_world_def();
    d.domain_max = (pbf_vec3){0.6f, 0.6f, 0.2f};
    pbf_world *w = test_world_create(&d);
    ENSURE(w);
    pbf_collider_def c[3] = {pbf_default_collider_def(), pbf_default_collider_def(),
                             pbf_default_collider_def()};
    c[0].type = PBF_COLLIDER_SPHERE, c[0].center = (pbf_vec3){0.15f, 0.15f, 0.1f},
    c[0].radius = 0.08f;
    c[1].type = PBF_COLLIDER_BOX, c[1].center = (pbf_vec3){0.45f, 0.1f, 0.1f};
    c[1].half_extents = (pbf_vec3){0.06f, 0.1f, 0.2f};
    c[2].type = PBF_COLLIDER_CAPSULE, c[2].a = (pbf_vec3){0.25f, 0.3f, 0.0f};
    c[2].b = (pbf_vec3){0.35f, 0.3f, 0.2f}, c[2].radius = 0.03f;
    for (int k = 0; k < 3; ++k) ENSURE(pbf_world_add_collider(w, &c[k]) == PBF_OK);
    pbf_block_def b = pbf_default_block_def();
    b.min = (pbf_vec3){0.05f, 0.4f, 0.0f};
    b.max = (pbf_vec3){0.55f, 0.55f, 0.2f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    int n = pbf_world_particle_count(w);
    float *x = malloc(3 * (size_t)n * sizeof *x);
    float r = d.particle_radius, tol = 0.1f * r;
    for (int f = 0; f < 45; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_world_get_positions(w, x);
        for (int i = 0; i < n; ++i) {
            float px = x[3 * i], py = x[3 * i + 1], pz = x[3 * i + 2];
            float ds = sqrtf((px - 0.15f) * (px - 0.15f) + (py - 0.15f) * (py - 0.15f) +
                             (pz - 0.1f) * (pz - 0.1f));
            ENSURE(ds >= 0.08f + r - tol);
            /* distance to the box (outside part; z spans the whole domain) */
            float qx = fmaxf(fabsf(px - 0.45f) - 0.06f, 0.0f),
                  qy = fmaxf(fabsf(py - 0.1f) - 0.1f, 0.0f);
            ENSURE(sqrtf(qx * qx + qy * qy) >= r - tol);
            /* distance to the capsule's segment (0.25,0.3,0)-(0.35,0.3,0.2) */
            float t = ((px - 0.25f) * 0.1f + pz * 0.2f) / (0.1f * 0.1f + 0.2f * 0.2f);
            t = t < 0 ? 0 : (t > 1 ? 1 : t);
            float ax = 0.25f + 0.1f * t, dx = px - ax, dy = py - 0.3f, dz = pz - 0.2f * t;
            float dc = sqrtf(dx * dx + dy * dy + dz * dz);
            ENSURE(dc >= 0.03f + r - tol);
        }
    }
    /* and the fluid did reach them: something rests on the box top */
    int on_box = 0;
    for (int i = 0; i < n; ++i) on_box += fabsf(x[3 * i] - 0.45f) < 0.06f && x[3 * i + 1] < 0.25f;
    ENSURE(on_box > 0);
    free(x);
    pbf_world_destroy(w);
    return 0;
}

/* wall_clearance sets the walls' collision distance: a lone particle (its density stays below
 * rest, so only the walls act on it) thrown at the +x wall slides there and comes to rest on
 * the floor with its centre wall_clearance · r from both. */
static int wall_clearance_sets_the_walls_distance(void) {
    const float clearance[2] = {1.0f, 0.3f};
    for (int k = 0; k < 2; ++k) {
        pbf_world_def d = pbf_default_world_def();
        d.domain_max = (pbf_vec3){0.3f, 0.3f, 0.3f};
        d.wall_clearance = clearance[k];
        pbf_world *w = test_world_create(&d);
        ENSURE(w);
        const float x0[3] = {0.15f, 0.2f, 0.15f}, v0[3] = {2.0f, 0.0f, 0.0f};
        ENSURE(pbf_world_add_particles(w, 1, x0, v0) == PBF_OK);
        for (int f = 0; f < 90; ++f) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        float x[3];
        pbf_world_get_positions(w, x);
        const float want = clearance[k] * d.particle_radius;
        printf("  clearance %.1f: %.6f m from the floor, %.6f m from the +x wall (want %.6f)\n",
               clearance[k], x[1], 0.3f - x[0], want);
        ENSURE(fabsf(x[1] - want) < 1e-6f);
        ENSURE(fabsf(0.3f - x[0] - want) < 1e-6f);
        pbf_world_destroy(w);
    }
    return 0;
}

/* solver.scorr_reach sets where s_corr ends: two lone particles in zero gravity (their density far
 * below rest, so only s_corr acts on them) part when they are closer than scorr_reach times the
 * rest spacing 2r, and stay exactly where they are beyond it. Δq must stay below that distance.
 * pair_after_a_frame returns how far the pair parted in a frame, in rest spacings. */
static double pair_after_a_frame(float reach, float apart) {
    pbf_world_def d = pbf_default_world_def();
    d.gravity = (pbf_vec3){0.0f, 0.0f, 0.0f};
    d.domain_max = (pbf_vec3){0.3f, 0.3f, 0.3f};
    d.solver.scorr_reach = reach;
    pbf_world *w = test_world_create(&d);
    if (!w) return -1.0;
    const float s = 2.0f * d.particle_radius;
    const float x0[6] = {0.15f, 0.15f, 0.15f, 0.15f + apart * s, 0.15f, 0.15f};
    double out = -1.0;
    if (pbf_world_add_particles(w, 2, x0, NULL) == PBF_OK &&
        pbf_world_step(w, 1.0f / 60.0f) == PBF_OK) {
        float x[6];
        pbf_world_get_positions(w, x);
        out = (double)((x[3] - x[0]) - (x0[3] - x0[0])) / s;
    }
    pbf_world_destroy(w);
    return out;
}

static int scorr_reach_sets_where_pairs_part(void) {
    const double at_0_9_reach_1 = pair_after_a_frame(1.0f, 0.9f);
    const double at_0_9_reach_0_8 = pair_after_a_frame(0.8f, 0.9f);
    const double at_0_7_reach_0_8 = pair_after_a_frame(0.8f, 0.7f);
    printf("  parted in a frame: at 0.9 s, reach 1: %.6f s, reach 0.8: %.6f s; at 0.7 s, reach "
           "0.8: %.6f s\n",
           at_0_9_reach_1, at_0_9_reach_0_8, at_0_7_reach_0_8);
    ENSURE(at_0_9_reach_1 > 1e-3);
    ENSURE(at_0_9_reach_0_8 == 0.0);
    ENSURE(at_0_7_reach_0_8 > 1e-3);
    char err[PBF_ERROR_SIZE];
    pbf_world *w = NULL;
    pbf_world_def d = pbf_default_world_def(); /* Δq = 0.2 h = 0.8 r: reach must exceed 0.4 */
    d.solver.scorr_reach = 0.4f;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_INVALID_ARG && !w);
    ENSURE(strstr(err, "solver.scorr_dq") && strstr(err, "solver.scorr_reach"));
    d.solver.scorr_reach = 0.41f;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
    pbf_world_destroy(w);
    d.solver.scorr_reach = 1.01f;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_INVALID_ARG && !w);
    ENSURE(strstr(err, "solver.scorr_reach"));
    return 0;
}

/* Bad definitions are refused with a message naming the field. */
static int bad_defs_name_the_field(void) {
    char err[PBF_ERROR_SIZE];
    pbf_world *w = NULL;
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = -1.0f;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_INVALID_ARG && !w);
    ENSURE(strstr(err, "particle_radius"));
    d = pbf_default_world_def();
    d.solver.iterations = 0;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "solver.iterations"));
    d = pbf_default_world_def();
    d.domain_max.y = -1.0f;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "domain y"));
    d = pbf_default_world_def();
    d.wall_clearance = 0.0f;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "wall_clearance"));
    d.wall_clearance = 1.5f;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_INVALID_ARG);
    /* s_corr's Δq must be closer than the rest spacing 2r (0.5 h at h = 4r), where it ends */
    d = pbf_default_world_def();
    d.solver.scorr_dq = 0.5f;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_INVALID_ARG && !w);
    ENSURE(strstr(err, "solver.scorr_dq") && strstr(err, "rest spacing"));
    d.kernel_scale = 5.0f; /* 2r = 0.4 h */
    d.solver.scorr_dq = 0.39f;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
    pbf_world_destroy(w);
    d = pbf_default_world_def();
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
    ENSURE(pbf_world_step(w, -1.0f) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(pbf_world_error(w), "dt"));
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){2.0f, 0.5f, 0.5f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(pbf_world_error(w), "not inside the domain"));
    pbf_world_destroy(w);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(density_error_falls_with_iterations);
RUN_TEST(no_particle_leaves_the_domain);
RUN_TEST(colliders_keep_particles_out);
RUN_TEST(wall_clearance_sets_the_walls_distance);
RUN_TEST(bad_defs_name_the_field);
RUN_TEST(scorr_reach_sets_where_pairs_part);
TEST_MAIN_END
