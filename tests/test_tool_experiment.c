/* The experiment of seed 004 (docs/tool.md), scaled down to about 3,000 particles so it
 * runs in seconds: a sphere goes down into a tank at 0.1 m/s, waits, moves along −x to 2 cm
 * from the wall, comes back to the middle, waits, and rises out. The force on it must have the
 * paper's shape: growing while it submerges, a plateau near ρ0 g V, a steady drag opposite to the
 * motion, a peak near the wall, a downward pull while it leaves the surface, almost nothing
 * across the motion, and no particle inside the sphere after any step. Then: the same forces,
 * bit for bit, with 1 and 2 threads. The shipped 20k scene, scenes/tool_sphere.json, runs the
 * same path at full size (the CLI test runs a few frames of it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"
#include "test.h"

#define R 0.05f
#define SPEED 0.1f
#define WATER 0.2f
#define FPS 60.0f

/* The path, as times of its keys (s) */
enum { K_START, K_DOWN, K_HOLD1, K_WALL, K_HOLD2, K_BACK, K_HOLD3, K_UP, K_END, K_COUNT };
static float key_time[K_COUNT];

static pbf_world *make_experiment(int threads) {
    pbf_world_def d = pbf_default_world_def();
    d.domain_max = (pbf_vec3){0.4f, 0.35f, 0.3f};
    d.substeps = 3;
    d.threads = threads;
    d.solver.scorr_k = 0.0f; /* as scenes/tool_sphere.json (docs/tool.md: drag) */
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(&d, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.4f, WATER, 0.3f};
    if (pbf_world_add_block(w, &b) != PBF_OK) return NULL;
    pbf_tool_def t = pbf_default_tool_def();
    t.radius = R;
    t.adhesion_k_tool = t.adhesion_k_fluid = 10000.0f;
    t.adhesion_b = 0.02f;
    t.damping = 50.0f;
    const pbf_vec3 p[K_COUNT] = {{0.2f, 0.3f, 0.15f},  {0.2f, 0.1f, 0.15f},  {0.2f, 0.1f, 0.15f},
                                 {0.07f, 0.1f, 0.15f}, {0.07f, 0.1f, 0.15f}, {0.2f, 0.1f, 0.15f},
                                 {0.2f, 0.1f, 0.15f},  {0.2f, 0.33f, 0.15f}, {0.2f, 0.33f, 0.15f}};
    float time = 0.0f;
    for (int k = 0; k < K_COUNT; ++k) {
        if (k > 0) {
            float dx = p[k].x - p[k - 1].x, dy = p[k].y - p[k - 1].y;
            float dist = sqrtf(dx * dx + dy * dy);
            time += dist > 0.0f ? dist / SPEED : (k == K_HOLD1 ? 0.5f : 0.3f);
        }
        key_time[k] = time;
        t.keys[k].time = time;
        t.keys[k].position = p[k];
    }
    t.key_count = K_COUNT;
    if (pbf_world_set_tool(w, &t) != PBF_OK) {
        fprintf(stderr, "%s\n", pbf_world_error(w));
        return NULL;
    }
    return w;
}

static pbf_tool_state *states;
static int frames;

/* Mean of one force component (0 x, 1 y, 2 z; total) over frames with time in [t0, t1]. */
static double mean_f(int axis, double t0, double t1) {
    double sum = 0.0;
    int n = 0;
    for (int f = 0; f < frames; ++f) {
        if (states[f].time < t0 || states[f].time > t1) continue;
        pbf_vec3 v = states[f].total;
        sum += axis == 0 ? v.x : axis == 1 ? v.y : v.z;
        ++n;
    }
    return n ? sum / n : NAN;
}

static double extreme_f(int axis, double t0, double t1, int want_max) {
    double e = want_max ? -1e30 : 1e30;
    for (int f = 0; f < frames; ++f) {
        if (states[f].time < t0 || states[f].time > t1) continue;
        pbf_vec3 v = states[f].total;
        double x = axis == 0 ? v.x : axis == 1 ? v.y : v.z;
        e = want_max ? fmax(e, x) : fmin(e, x);
    }
    return e;
}

static int experiment_has_the_papers_shape(void) {
    /* one thread: on a 2-core machine shared with other jobs, two threads wait at every barrier
     * for the one the scheduler took away (10x slower); forces_are_deterministic runs 2 */
    pbf_world *w = make_experiment(1);
    ENSURE(w);
    const float r = pbf_world_get_def(w)->particle_radius;
    frames = (int)ceilf(key_time[K_END] * FPS) + 1;
    states = calloc((size_t)frames, sizeof *states);
    ENSURE(states);
    float min_dist = INFINITY;
    for (int f = 0; f < frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / FPS) == PBF_OK);
        states[f] = pbf_tool_get_state(w);
        /* no particle inside the sphere after any step (they are kept at r from its surface) */
        min_dist = fminf(min_dist, states[f].min_distance);
        ENSURE(states[f].min_distance > 0.5f * r);
    }
    const double b = 1000.0 * 9.81 * 4.0 / 3.0 * 3.14159265 * R * R * R; /* ρ0 g V */
    /* the sphere's bottom meets the water (~0.2 m, a little higher once displaced) at t_in, its
     * top goes under at t_under */
    const double t_in = (0.3 - R - WATER) / SPEED, t_under = (0.3 + R - WATER) / SPEED;
    const double q = (t_under - t_in) / 4.0;
    double grow[3] = {mean_f(1, t_in + 0.5 * q, t_in + 1.5 * q),
                      mean_f(1, t_in + 1.5 * q, t_in + 2.5 * q),
                      mean_f(1, t_in + 2.5 * q, t_in + 3.5 * q)};
    double plateau = mean_f(1, key_time[K_DOWN] + 0.2, key_time[K_HOLD1]);
    /* steady motion: leave out the start (acceleration) and the last 0.25 s before the wall */
    double drag_out = mean_f(0, key_time[K_HOLD1] + 0.2, key_time[K_WALL] - 0.25);
    double drag_back = mean_f(0, key_time[K_HOLD2] + 0.2, key_time[K_BACK] - 0.05);
    double wall_peak = extreme_f(0, key_time[K_WALL] - 0.25, key_time[K_WALL] + 0.05, 1);
    double leave_pull = extreme_f(1, key_time[K_HOLD3] + 0.5, key_time[K_END], 0);
    double across = 0.0, across_max = 0.0;
    for (int f = 0; f < frames; ++f) {
        across += fabs(states[f].total.z) / frames;
        across_max = fmax(across_max, fabs(states[f].total.z));
    }
    double zmean_out = mean_f(2, key_time[K_HOLD1] + 0.2, key_time[K_WALL] - 0.25);
    printf("  rho0 g V %.3f N; submerging %.2f -> %.2f -> %.2f N; plateau %.3f N\n", b, grow[0],
           grow[1], grow[2], plateau);
    printf("  drag towards the wall %+.3f N, back %+.3f N; peak near the wall %+.3f N\n", drag_out,
           drag_back, wall_peak);
    printf("  lowest Fy while leaving %+.3f N; |Fz| mean %.3f N (max %.3f), Fz mean while moving "
           "%+.3f N; closest particle %.2f r from the surface\n",
           leave_pull, across, across_max, zmean_out, min_dist / r);
    /* upward force growing while it submerges, then a plateau near ρ0 g V */
    ENSURE(grow[0] < grow[1] && grow[1] < grow[2]);
    ENSURE(grow[2] > 0.5 * b);
    ENSURE(fabs(plateau - b) <= 0.15 * b);
    /* a steady drag opposite to the motion (−x out, +x back) */
    ENSURE(drag_out > 0.05 * b && drag_back < -0.05 * b);
    /* a peak near the wall: the fluid squeezed out between sphere and wall (2 cm at the end) */
    ENSURE(wall_peak > 1.4 * drag_out);
    /* a downward pull while it leaves the surface (adhesion) */
    ENSURE(leave_pull < -0.05 * b);
    /* almost nothing across the motion */
    ENSURE(across < 0.05 * b && fabs(zmean_out) < 0.2 * fabs(drag_out));
    free(states);
    pbf_world_destroy(w);
    return 0;
}

/* Bit equality of two states, field by field (a struct's padding is not compared). */
static int same_state(const pbf_tool_state *a, const pbf_tool_state *b) {
    const pbf_vec3 *va[6] = {&a->position, &a->velocity, &a->reaction,
                             &a->adhesion, &a->damping,  &a->total};
    const pbf_vec3 *vb[6] = {&b->position, &b->velocity, &b->reaction,
                             &b->adhesion, &b->damping,  &b->total};
    for (int k = 0; k < 6; ++k)
        if (memcmp(va[k], vb[k], sizeof *va[k]) != 0) return 0;
    return memcmp(&a->time, &b->time, sizeof a->time) == 0 && a->contacts == b->contacts &&
           memcmp(&a->min_distance, &b->min_distance, sizeof a->min_distance) == 0;
}

/* The force is reduced serially in slot order: 1 and 2 threads give the same bits, here with
 * the tool pushed into the water by pbf_tool_set_pose at 0.48 m/s. */
static int forces_are_deterministic(void) {
    pbf_tool_state s1[24], s2[24];
    uint64_t h[2];
    for (int run = 0; run < 2; ++run) {
        pbf_world *w = make_experiment(run + 1);
        ENSURE(w);
        pbf_tool_state *s = run == 0 ? s1 : s2;
        for (int f = 0; f < 24; ++f) { /* the sphere goes under */
            ENSURE(pbf_tool_set_pose(w, (pbf_vec3){0.2f, 0.3f - 0.008f * (f + 1), 0.15f}) ==
                   PBF_OK);
            ENSURE(pbf_world_step(w, 1.0f / FPS) == PBF_OK);
            s[f] = pbf_tool_get_state(w);
        }
        h[run] = pbf_world_hash(w);
        pbf_world_destroy(w);
    }
    ENSURE(s1[23].contacts > 50 && s1[23].total.y > 1.0f);
    ENSURE(h[0] == h[1]);
    for (int f = 0; f < 24; ++f) ENSURE(same_state(&s1[f], &s2[f]));
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(experiment_has_the_papers_shape);
RUN_TEST(forces_are_deterministic);
TEST_MAIN_END
