/* Robustness limits (docs/robustness.md): the instability watchdog, absurd parameters
 * (errors and warnings that name the field), and memory checks before allocating. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"
#include "pbf/scene.h"
#include "resources.h"
#include "test.h"
#include "world_state.h"

#define SRC "scenes/x.json"

static pbf_world *small_world(int threads, float cfl) {
    pbf_world_def d = pbf_default_world_def();
    d.domain_max = (pbf_vec3){0.5f, 0.5f, 0.3f};
    d.threads = threads;
    d.solver.cfl = cfl;
    pbf_world *w = NULL;
    if (pbf_world_create(&d, &w, NULL, 0) != PBF_OK) return NULL;
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.2f, 0.2f, 0.2f};
    if (pbf_world_add_block(w, &b) != PBF_OK) {
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

static int has(const char *text, const char *part) {
    if (strstr(text, part) != NULL) return 1;
    fprintf(stderr, "  \"%s\" not in: %s\n", part, text);
    return 0;
}

/* Slot of the particle with stable id `id`. */
static int slot_of(const pbf_world *w, int id) {
    for (int i = 0; i < w->count; ++i)
        if (w->ids[i] == id) return i;
    return -1;
}

/* ---- the watchdog ------------------------------------------------------------------------- */

/* A NaN position (what a blown-up constraint leaves): the step fails with the step number, the
 * particle's id and position, and what to change. The same for 1 and 2 threads. (The domain
 * clamp moves a NaN position onto a wall, so it is the velocity computed from it that shows.) */
static int watchdog_catches_nan(void) {
    char first[PBF_ERROR_SIZE] = "";
    for (int threads = 1; threads <= 2; ++threads) {
        pbf_world *w = small_world(threads, 0.5f);
        ENSURE(w != NULL);
        for (int i = 0; i < 3; ++i) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        int s = slot_of(w, 17);
        ENSURE(s >= 0);
        w->x[3 * s + 1] = NAN;
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_ERR_UNSTABLE);
        const char *e = pbf_world_error(w);
        ENSURE(has(e, "step 4 "));
        ENSURE(has(e, "particle 17 at ("));
        ENSURE(has(e, "non-finite velocity"));
        ENSURE(has(e, "time.substeps, now 4"));
        ENSURE(has(e, "solver.iterations (now 4)"));
        ENSURE(has(e, "time.fps"));
        if (threads == 1)
            snprintf(first, sizeof first, "%s", e);
        else
            ENSURE(strcmp(first, e) == 0); /* deterministic report */
        pbf_world_destroy(w);
    }
    return 0;
}

/* A constraint with no solution: no relaxation, a bilateral constraint and a lone particle give
 * λ = −C/0 = ∞ in the middle of the box. */
static int watchdog_catches_infinite_lambda(void) {
    pbf_world_def d = pbf_default_world_def();
    d.solver.relaxation = 0.0f;
    d.solver.unilateral = 0;
    pbf_world *w = NULL;
    ENSURE(pbf_world_create(&d, &w, NULL, 0) == PBF_OK);
    const float x[3] = {0.5f, 0.5f, 0.5f};
    ENSURE(pbf_world_add_particles(w, 1, x, NULL) == PBF_OK);
    ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_ERR_UNSTABLE);
    /* λ = ∞ throws the particle into a corner (the clamp): a jump of 0.85 m in one substep,
     * though the speed limit keeps its velocity small */
    ENSURE(has(pbf_world_error(w), "step 1 "));
    ENSURE(has(pbf_world_error(w), "particle 0 at (0.01, 0.01, 0.01)"));
    ENSURE(has(pbf_world_error(w), "0.849 m in one substep"));
    pbf_world_destroy(w);
    return 0;
}

static int watchdog_catches_inf_position(void) {
    pbf_world *w = small_world(2, 0.5f);
    ENSURE(w != NULL);
    ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    int s = slot_of(w, 3);
    /* a position the clamp cannot repair: infinite on one axis, NaN on another */
    w->x[3 * s] = INFINITY;
    w->x[3 * s + 2] = NAN;
    ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_ERR_UNSTABLE);
    ENSURE(has(pbf_world_error(w), "step 2 "));
    ENSURE(has(pbf_world_error(w), "non-finite"));
    pbf_world_destroy(w);
    return 0;
}

/* Without a speed limit a particle shot at 1000 m/s crosses the box in one substep: it moves far
 * beyond the CFL limit (5 h per substep) and the watchdog stops the step. (It looks at the end
 * of each step: one substep per step here, so the particle has not yet stopped at the wall.) */
static int watchdog_catches_runaway_speed(void) {
    pbf_world *w = small_world(1, 0.0f);
    ENSURE(w != NULL);
    w->def.substeps = 1;
    int s = slot_of(w, 0);
    w->v[3 * s] = 1000.0f;
    ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_ERR_UNSTABLE);
    const char *e = pbf_world_error(w);
    ENSURE(has(e, "step 1 "));
    ENSURE(has(e, "particle 0 at ("));
    ENSURE(has(e, "times the CFL speed limit"));
    pbf_world_destroy(w);
    /* with the default speed limit the same particle is clamped and nothing is reported */
    w = small_world(1, 0.5f);
    ENSURE(w != NULL);
    s = slot_of(w, 0);
    w->v[3 * s] = 1000.0f;
    for (int i = 0; i < 10; ++i) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    pbf_world_destroy(w);
    return 0;
}

/* A healthy splash never trips it, even with no speed limit (cfl = 0): a dam break at two
 * substeps per frame (about as coarse as the scene checks accept without a warning at this
 * size) runs 60 frames. */
static int watchdog_quiet_on_healthy_runs(void) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = 0.02f;
    d.domain_max = (pbf_vec3){1.6f, 0.8f, 0.4f};
    d.substeps = 2;
    d.solver.cfl = 0.0f;
    pbf_world *w = NULL;
    ENSURE(pbf_world_create(&d, &w, NULL, 0) == PBF_OK);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.4f, 0.6f, 0.4f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    float worst = 0.0f;
    const float cfl_speed = 0.5f * pbf_world_kernel_radius(w) * 120.0f;
    for (int i = 0; i < 60; ++i) {
        pbf_status st = pbf_world_step(w, 1.0f / 60.0f);
        if (st != PBF_OK) fprintf(stderr, "  %s\n", pbf_world_error(w));
        ENSURE(st == PBF_OK);
        float ratio = pbf_world_get_stats(w).max_speed / cfl_speed;
        if (ratio > worst) worst = ratio;
    }
    printf("  fastest particle: %.2f times the CFL limit (the watchdog stops at 10)\n",
           (double)worst);
    pbf_world_destroy(w);
    return 0;
}

/* ---- absurd parameters -------------------------------------------------------------------- */

static int load(const char *json, pbf_scene *s, char *err) {
    return pbf_scene_parse(json, SRC, NULL, 0, s, err, PBF_ERROR_SIZE) == PBF_OK;
}

/* The loader already refuses these; the message names the JSON path. */
static int absurd_values_name_the_field(void) {
    static const struct {
        const char *json, *field;
    } cases[] = {
        {"{\"fluid\": {\"particle_radius\": -0.01}}", "'fluid.particle_radius' must be in (0, 10]"},
        {"{\"solver\": {\"iterations\": 0}}", "'solver.iterations' must be in [1, 1000]"},
        {"{\"time\": {\"substeps\": 0}}", "'time.substeps' must be in [1, 1000]"},
        {"{\"time\": {\"fps\": 0}}", "'time.fps' must be > 0"},
        {"{\"fluid\": {\"rest_density\": -1}}", "'fluid.rest_density' must be > 0"},
        {"{\"colliders\": [{\"type\": \"sphere\", \"radius\": -1}]}", "'colliders[0].radius'"},
        {"{\"domain\": {\"min\": [0,0,0], \"max\": [1e39, 1, 1]}}", "'domain.max[0]'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pbf_scene s;
        char err[PBF_ERROR_SIZE];
        ENSURE(!load(cases[i].json, &s, err));
        ENSURE(has(err, cases[i].field));
        ENSURE(has(err, SRC));
    }
    return 0;
}

/* A radius of 1e-45 m (a denormal float, so > 0 and legal for the loader's range) made the
 * lattice count overflow int64 (found by the fuzzer, tests/fuzz/corpus/crash-radius-*): now
 * the count saturates and the scene is refused for holding too many particles. */
static int absurd_radius_is_refused(void) {
    pbf_scene s;
    char err[PBF_ERROR_SIZE];
    /* the default block too (it used to load, and then its to_json text did not: found by the
     * fuzzer, tests/fuzz/corpus/crash-default-block-*) */
    ENSURE(!load("{\"fluid\": {\"particle_radius\": 1e-45}}", &s, err));
    ENSURE(has(err, "'fluid.blocks' (the default block) holds 72057594037927936 particles"));
    /* a tiny radius with a tiny block passes the loader; the time-step check and the world
     * refuse it */
    ENSURE(load("{\"fluid\": {\"particle_radius\": 1e-5, \"blocks\": [{\"max\": [2e-4, "
                "2e-4, 2e-4]}]}}",
                &s, err));
    ENSURE(pbf_scene_check(&s, NULL, 0, NULL, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(has(err, "more than the kernel radius h = 4e-05 m"));
    pbf_world *w = NULL;
    ENSURE(pbf_scene_create_world(&s, &w, err, sizeof err) == PBF_ERR_INVALID_ARG && w == NULL);
    ENSURE(has(err, "too large for a grid"));
    pbf_block_def b = pbf_default_block_def();
    ENSURE(pbf_block_particle_count(&b, 1e-45f) > (int64_t)INT32_MAX);
    ENSURE(!load("{\"fluid\": {\"particle_radius\": 1e-45, \"blocks\": [{\"max\": [1,1,1]}]}}", &s,
                 err));
    ENSURE(has(err, "'fluid.blocks' hold 72057594037927936 particles, more than a world can hold"));
    return 0;
}

/* A substep in which gravity alone moves a particle more than h: refused. */
static int time_step_beyond_stability_is_an_error(void) {
    pbf_scene s;
    char err[PBF_ERROR_SIZE], warn[2048];
    ENSURE(load("{\"time\": {\"fps\": 10, \"substeps\": 1}}", &s, err));
    int count = -1;
    ENSURE(pbf_scene_check(&s, warn, sizeof warn, &count, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(has(err, SRC));
    ENSURE(has(err, "'time.substeps' = 1 at 'time.fps' = 10"));
    ENSURE(has(err, "time.substeps >= 2"));
    /* the fix it proposes is accepted */
    ENSURE(load("{\"time\": {\"fps\": 10, \"substeps\": 2}}", &s, err));
    ENSURE(pbf_scene_check(&s, warn, sizeof warn, &count, err, sizeof err) == PBF_OK);
    return 0;
}

/* Coarse, but not absurd: a warning that says where the speed comes from and what to use. */
static int coarse_time_step_warns(void) {
    pbf_scene s;
    char err[PBF_ERROR_SIZE], warn[2048];
    int count = 0;
    ENSURE(load("{\"time\": {\"fps\": 30, \"substeps\": 1}}", &s, err));
    ENSURE(pbf_scene_check(&s, warn, sizeof warn, &count, err, sizeof err) == PBF_OK);
    ENSURE(count == 1);
    ENSURE(has(warn, SRC ": 'time.substeps' = 1 at 'time.fps' = 30 is too coarse"));
    ENSURE(has(warn, "under 'gravity'"));
    ENSURE(has(warn, "time.substeps >= "));
    /* a fast block is named as the cause */
    ENSURE(load("{\"fluid\": {\"blocks\": [{\"max\": [0.2,0.2,0.2], \"velocity\": [40,0,0]}]}}", &s,
                err));
    ENSURE(pbf_scene_check(&s, warn, sizeof warn, &count, err, sizeof err) == PBF_OK);
    ENSURE(count == 1 && has(warn, "'fluid.blocks[0].velocity'"));
    /* and a fast wall */
    ENSURE(load("{\"domain\": {\"walls\": {\"x_max\": {\"amplitude\": 0.2, \"period\": 0.05}}}}",
                &s, err));
    ENSURE(pbf_scene_check(&s, warn, sizeof warn, &count, err, sizeof err) == PBF_OK);
    ENSURE(count == 1 && has(warn, "'domain.walls.x_max'"));
    return 0;
}

static int particles_inside_a_collider_warn(void) {
    pbf_scene s;
    char err[PBF_ERROR_SIZE], warn[2048];
    int count = 0;
    ENSURE(load("{\"fluid\": {\"blocks\": [{\"min\": [0,0,0], \"max\": [0.4,0.4,0.4]}]},"
                " \"colliders\": [{\"type\": \"sphere\", \"center\": [0.8,0.8,0.8],"
                "                  \"radius\": 0.1},"
                "                 {\"type\": \"box\", \"center\": [0.2,0.1,0.2],"
                "                  \"half_extents\": [0.05,0.05,0.05]}]}",
                &s, err));
    ENSURE(pbf_scene_check(&s, warn, sizeof warn, &count, err, sizeof err) == PBF_OK);
    ENSURE(count == 1); /* the sphere is clear of the fluid, the box is in it */
    /* the box covers 0.15..0.25 (+ r each side): lattice points at 0.01 + 0.02 i */
    ENSURE(has(warn, "of 'fluid.blocks[0]' start inside 'colliders[1]' (a box)"));
    ENSURE(has(warn, ": 216 particles of 'fluid.blocks[0]'"));
    return 0;
}

static int overlapping_blocks_warn(void) {
    pbf_scene s;
    char err[PBF_ERROR_SIZE], warn[2048];
    int count = 0;
    ENSURE(load("{\"fluid\": {\"blocks\": [{\"min\": [0,0,0], \"max\": [0.4,0.4,0.4]},"
                "                       {\"min\": [0.3,0,0], \"max\": [0.6,0.2,0.2]}]}}",
                &s, err));
    ENSURE(pbf_scene_check(&s, warn, sizeof warn, &count, err, sizeof err) == PBF_OK);
    ENSURE(count == 1);
    ENSURE(has(warn, "'fluid.blocks[1]' overlaps 'fluid.blocks[0]': 500 of its particles"));
    /* side by side is fine */
    ENSURE(load("{\"fluid\": {\"blocks\": [{\"min\": [0,0,0], \"max\": [0.4,0.4,0.4]},"
                "                       {\"min\": [0.4,0,0], \"max\": [0.6,0.2,0.2]}]}}",
                &s, err));
    ENSURE(pbf_scene_check(&s, warn, sizeof warn, &count, err, sizeof err) == PBF_OK);
    ENSURE(count == 0);
    return 0;
}

/* Huge overlaps are sampled, not walked: this block holds 500 million lattice points. */
static int huge_overlap_is_fast(void) {
    pbf_scene s;
    char err[PBF_ERROR_SIZE], warn[2048];
    int count = 0;
    ENSURE(load("{\"domain\": {\"max\": [8, 8, 8]},"
                " \"fluid\": {\"particle_radius\": 0.005, \"blocks\": [{\"max\": [7.9,7.9,7.9]}]},"
                " \"colliders\": [{\"type\": \"sphere\", \"center\": [4,4,4], \"radius\": 3}]}",
                &s, err));
    ENSURE(pbf_scene_check(&s, warn, sizeof warn, &count, err, sizeof err) == PBF_OK);
    ENSURE(count == 2); /* and the 8 m fall warns about the time step */
    ENSURE(has(warn, ": about 1097") && has(warn, "particles of 'fluid.blocks[0]' start inside"));
    return 0;
}

/* The shipped scenes are clean: no error, no warning. */
static int shipped_scenes_are_clean(void) {
    const char *dir = getenv("PBF_SOURCE_DIR") ? getenv("PBF_SOURCE_DIR") : ".";
    const char *names[] = {"dam_break", "double_dam_break", "moving_wall", "cube_drop"};
    for (int i = 0; i < 4; ++i) {
        char path[1024], err[PBF_ERROR_SIZE], warn[2048];
        snprintf(path, sizeof path, "%s/scenes/%s.json", dir, names[i]);
        pbf_scene s;
        ENSURE(pbf_scene_load(path, NULL, 0, &s, err, sizeof err) == PBF_OK);
        int count = -1;
        ENSURE(pbf_scene_check(&s, warn, sizeof warn, &count, err, sizeof err) == PBF_OK);
        if (count != 0) fprintf(stderr, "  %s\n", warn);
        ENSURE(count == 0);
    }
    return 0;
}

/* ---- memory ------------------------------------------------------------------------------- */

static int limit_is_plausible(void) {
    size_t limit = pbf_memory_limit();
    printf("  memory limit %.1f GiB\n", (double)limit / (1024.0 * 1024.0 * 1024.0));
    ENSURE(limit > (size_t)64 << 20);
    return 0;
}

/* A grid that does not fit is refused before it is allocated, with the estimate. */
static int huge_grid_is_refused(void) {
    pbf__test_memory_limit = (size_t)100 << 20;
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = 0.001f; /* h = 4 mm: 500^3 cells, 1 GB of grid */
    d.domain_max = (pbf_vec3){2.0f, 2.0f, 2.0f};
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    pbf_status st = pbf_world_create(&d, &w, err, sizeof err);
    pbf__test_memory_limit = 0;
    ENSURE(st == PBF_ERR_OUT_OF_MEMORY && w == NULL);
    ENSURE(has(err, "grid of 500 x 500 x 500 = 125000000 cells"));
    ENSURE(has(err, "needs about 953.7 MiB"));
    ENSURE(has(err, "more than the 100.0 MiB of the test's limit"));
    ENSURE(has(err, "particle_radius"));
    /* with the machine's own limit the same world is fine (1 GB) */
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
    pbf_world_destroy(w);
    return 0;
}

/* Particles beyond the limit: refused before growing, the world unchanged. */
static int too_many_particles_are_refused(void) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = 0.002f;
    pbf_world *w = NULL;
    ENSURE(pbf_world_create(&d, &w, NULL, 0) == PBF_OK);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){1.0f, 1.0f, 1.0f}; /* 250^3 = 15.6 M particles */
    const size_t before = pbf_world_memory_bytes(w);
    pbf__test_memory_limit = (size_t)256 << 20;
    pbf_status st = pbf_world_add_block(w, &b);
    pbf__test_memory_limit = 0;
    ENSURE(st == PBF_ERR_OUT_OF_MEMORY);
    ENSURE(has(pbf_world_error(w), "a world of 15625000 particles needs about"));
    ENSURE(has(pbf_world_error(w), "GiB"));
    ENSURE(pbf_world_particle_count(w) == 0);
    ENSURE(pbf_world_memory_bytes(w) == before);
    pbf_world_destroy(w);
    /* through a scene, the message says which block */
    pbf_scene s;
    char err[PBF_ERROR_SIZE];
    ENSURE(load("{\"fluid\": {\"particle_radius\": 0.002,"
                " \"blocks\": [{\"max\": [0.1,0.1,0.1]}, {\"max\": [1,1,1]}]}}",
                &s, err));
    pbf__test_memory_limit = (size_t)256 << 20;
    st = pbf_scene_create_world(&s, &w, err, sizeof err);
    pbf__test_memory_limit = 0;
    ENSURE(st == PBF_ERR_OUT_OF_MEMORY && w == NULL);
    ENSURE(has(err, SRC ": fluid.blocks[1]: a world of "));
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(watchdog_catches_nan);
RUN_TEST(watchdog_catches_infinite_lambda);
RUN_TEST(watchdog_catches_inf_position);
RUN_TEST(watchdog_catches_runaway_speed);
RUN_TEST(watchdog_quiet_on_healthy_runs);
RUN_TEST(absurd_values_name_the_field);
RUN_TEST(absurd_radius_is_refused);
RUN_TEST(time_step_beyond_stability_is_an_error);
RUN_TEST(coarse_time_step_warns);
RUN_TEST(particles_inside_a_collider_warn);
RUN_TEST(overlapping_blocks_warn);
RUN_TEST(huge_overlap_is_fast);
RUN_TEST(shipped_scenes_are_clean);
RUN_TEST(limit_is_plausible);
RUN_TEST(huge_grid_is_refused);
RUN_TEST(too_many_particles_are_refused);
TEST_MAIN_END
