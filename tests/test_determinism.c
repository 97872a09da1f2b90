/* Same scene, same answer: bit-identical states for 1 and 2 threads, across runs, and for both
 * neighbour-access schemes (DESIGN.md §7). */
#include <stdlib.h>

#include "pbf/pbf.h"
#include "test.h"

/* A small dam break with a collider and a moving wall, stepped 30 frames; returns the hash.
 * target_error > 0: the error-controlled, Chebyshev-accelerated solve (docs/physics.md). Under
 * the sanitizers (test.h) 10 frames: the threads split the same loops from the first substep
 * on, and the release build runs the 30 frames in which the water reaches the collider. */
static uint64_t run_phases(int threads, pbf_neighbor_mode mode, float target_error, int phases) {
    pbf_world_def d = pbf_default_world_def();
    if (phases) { /* two fluids (docs/physics.md, "Several fluids"): the right half oil */
        d.phase_count = 2;
        d.phases[1].density = 800.0f;
        d.phases[1].xsph = 0.05f;
        d.phases[1].gravity_scale = 0.9f;
    }
    d.solver.target_error = target_error;
    d.domain_max = (pbf_vec3){0.6f, 0.4f, 0.2f};
    d.wall_motion[PBF_WALL_X_MAX] = (pbf_wall_motion){0.03f, 0.7f, 0.0f};
    d.threads = threads;
    d.neighbor_mode = mode;
    d.substeps = 2;
    pbf_world *w = NULL;
    if (pbf_world_create(&d, &w, NULL, 0) != PBF_OK) return 0;
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.2f, 0.3f, 0.2f};
    b.jitter = 0.2f;
    pbf_collider_def c = pbf_default_collider_def();
    c.center = (pbf_vec3){0.4f, 0.0f, 0.1f};
    c.radius = 0.08f;
    if (pbf_world_add_block(w, &b) != PBF_OK || pbf_world_add_collider(w, &c) != PBF_OK) return 0;
    if (phases) {
        b.min = (pbf_vec3){0.3f, 0.1f, 0.0f};
        b.max = (pbf_vec3){0.5f, 0.3f, 0.2f};
        b.phase = 1;
        if (pbf_world_add_block(w, &b) != PBF_OK) return 0;
    }
    const int frames = test_sanitized() ? 10 : 30;
    for (int f = 0; f < frames; ++f)
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) return 0;
    uint64_t h = pbf_world_hash(w);
    pbf_world_destroy(w);
    return h;
}

static uint64_t run_solver(int threads, pbf_neighbor_mode mode, float target_error) {
    return run_phases(threads, mode, target_error, 0);
}

static uint64_t run(int threads, pbf_neighbor_mode mode) { return run_solver(threads, mode, 0.0f); }

/* The default solve's hashes on 1 and 2 threads with the list, from same_for_any_thread_count;
 * the later tests compare with them instead of stepping the same world again. */
static uint64_t list_1_thread, list_2_threads;

/* Several fluids, both neighbour schemes: the phase path is as deterministic. */
static int several_fluids_same_for_any_thread_count(void) {
    for (int m = 0; m < 2; ++m) {
        pbf_neighbor_mode mode = m ? PBF_NEIGHBOR_CELLS : PBF_NEIGHBOR_LIST;
        uint64_t h1 = run_phases(1, mode, 0.0f, 1), h2 = run_phases(2, mode, 0.0f, 1);
        printf("  several fluids (%s): hash 1 thread %016llx, 2 threads %016llx\n",
               m ? "cells" : "list", (unsigned long long)h1, (unsigned long long)h2);
        ENSURE(h1 != 0 && h1 == h2);
    }
    return 0;
}

/* The error control stops on a reduction of the whole state and Chebyshev's restarts depend on
 * it: both must see the same numbers for any thread count. */
static int error_control_same_for_any_thread_count(void) {
    uint64_t h1 = run_solver(1, PBF_NEIGHBOR_LIST, 0.05f),
             h2 = run_solver(2, PBF_NEIGHBOR_LIST, 0.05f),
             h3 = run_solver(3, PBF_NEIGHBOR_LIST, 0.05f);
    printf("  error-controlled: hash 1 thread %016llx, 2 threads %016llx, 3 threads %016llx\n",
           (unsigned long long)h1, (unsigned long long)h2, (unsigned long long)h3);
    ENSURE(h1 != 0 && list_1_thread != 0);
    ENSURE(h1 != list_1_thread); /* the setting took effect */
    ENSURE(h1 == h2);
    ENSURE(h1 == h3);
    return 0;
}

static int same_for_any_thread_count(void) {
    uint64_t h1 = run(1, PBF_NEIGHBOR_LIST), h2 = run(2, PBF_NEIGHBOR_LIST),
             h3 = run(3, PBF_NEIGHBOR_LIST);
    printf("  hash 1 thread %016llx, 2 threads %016llx, 3 threads %016llx\n",
           (unsigned long long)h1, (unsigned long long)h2, (unsigned long long)h3);
    ENSURE(h1 != 0);
    ENSURE(h1 == h2);
    ENSURE(h1 == h3);
    list_1_thread = h1, list_2_threads = h2;
    return 0;
}

/* A second run of the same world gives the hash of the first (same_for_any_thread_count's). */
static int same_across_runs(void) {
    ENSURE(list_2_threads != 0);
    ENSURE(run(2, PBF_NEIGHBOR_LIST) == list_2_threads);
    return 0;
}

/* The list is built once per substep from the predicted positions; the cell walk also sees
 * pairs that come within h during the iterations. So the schemes are not bit-equal, but after
 * one frame they agree to a small fraction of the particle radius. */
static int both_neighbor_schemes_agree(void) {
    pbf_world *w[2];
    for (int m = 0; m < 2; ++m) {
        pbf_world_def d = pbf_default_world_def();
        d.domain_max = (pbf_vec3){0.6f, 0.4f, 0.2f};
        d.neighbor_mode = m ? PBF_NEIGHBOR_CELLS : PBF_NEIGHBOR_LIST;
        ENSURE(pbf_world_create(&d, &w[m], NULL, 0) == PBF_OK);
        pbf_block_def b = pbf_default_block_def();
        b.max = (pbf_vec3){0.2f, 0.3f, 0.2f};
        ENSURE(pbf_world_add_block(w[m], &b) == PBF_OK);
        for (int f = 0; f < 6; ++f) ENSURE(pbf_world_step(w[m], 1.0f / 60.0f) == PBF_OK);
    }
    int n = pbf_world_particle_count(w[0]);
    float *a = malloc(3 * (size_t)n * sizeof *a), *b = malloc(3 * (size_t)n * sizeof *b);
    pbf_world_get_positions(w[0], a);
    pbf_world_get_positions(w[1], b);
    float worst = 0.0f;
    for (int i = 0; i < 3 * n; ++i) worst = fmaxf(worst, fabsf(a[i] - b[i]));
    printf("  largest position difference after 0.1 s: %.3g m (r = 0.01 m)\n", worst);
    ENSURE(worst < 0.05f * 0.01f);
    free(a);
    free(b);
    pbf_world_destroy(w[0]);
    pbf_world_destroy(w[1]);
    return 0;
}

/* A changed input changes the hash (the hash is not blind). */
static int hash_sees_a_change(void) {
    pbf_world_def d = pbf_default_world_def();
    pbf_world *a = NULL, *b = NULL;
    ENSURE(pbf_world_create(&d, &a, NULL, 0) == PBF_OK &&
           pbf_world_create(&d, &b, NULL, 0) == PBF_OK);
    float x1[3] = {0.5f, 0.5f, 0.5f}, x2[3] = {0.5f, 0.5f, 0.50001f};
    pbf_world_add_particles(a, 1, x1, NULL);
    pbf_world_add_particles(b, 1, x2, NULL);
    ENSURE(pbf_world_hash(a) != pbf_world_hash(b));
    pbf_world_destroy(a);
    pbf_world_destroy(b);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(same_for_any_thread_count);
RUN_TEST(same_across_runs);
RUN_TEST(error_control_same_for_any_thread_count);
RUN_TEST(both_neighbor_schemes_agree);
RUN_TEST(hash_sees_a_change);
RUN_TEST(several_fluids_same_for_any_thread_count);
TEST_MAIN_END
