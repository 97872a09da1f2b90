/* `pbf bench --batch` (see bench_batch.h). The built-in dam break, resized by particle radius to
 * the particle count (block and domain keep their size), with 4 solver iterations and 1 substep
 * unless --set says otherwise; world i gets jitter 0.1 with seed i, so no two worlds are alike.
 * Two ways to step the same worlds:
 *   batch:      pbf_world_batch_step, threads across worlds, 1 thread inside each;
 *   one by one: each world in turn with pbf_world_step and all the threads inside it.
 * The two ways take turns step by step, so that both see the same load of a shared machine. The
 * rate is worlds × steps per second over the timed steps (after the warm-up). At the end the two
 * ways' states are compared: every world must be bit-identical. */
#include "bench_batch.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/batch.h"

/* Whether a --set names this key (its last path component). */
static int user_sets(const cli_overrides *sets, const char *key) {
    size_t k = strlen(key);
    for (int i = 0; sets != NULL && i < sets->count; ++i) {
        const char *s = sets->items[i];
        size_t n = strcspn(s, "=");
        if (n >= k && strncmp(s + n - k, key, k) == 0 && (n == k || s[n - k - 1] == '.')) return 1;
    }
    return 0;
}

/* Scales the particle radius until the scene holds the count closest to target. */
static void resize(pbf_scene *s, int64_t target) {
    int64_t n = pbf_scene_particle_count(s), best = n;
    float r = s->world.particle_radius, best_r = r;
    for (int it = 0; it < 16 && n != target && n > 0; ++it) {
        r *= cbrtf((float)n / (float)target);
        s->world.particle_radius = r;
        n = pbf_scene_particle_count(s);
        if (llabs(n - target) < llabs(best - target)) best = n, best_r = r;
    }
    s->world.particle_radius = best_r;
}

/* Both ways, step by step in turn (a batch step, then the same step one world after another),
 * so that both see the same load of a shared machine. Adds each way's seconds over the timed
 * steps to *tb and *ts; returns 0, or an exit code (printed). */
static int time_both(const bench_batch_options *o, pbf_world_batch *b, pbf_world **w, float dt,
                     double *tb, double *ts) {
    *tb = *ts = 0.0;
    for (int k = 0; k < o->warmup + o->steps; ++k) {
        const double t0 = omp_get_wtime();
        if (pbf_world_batch_step(b, dt) != PBF_OK)
            return cli_error("batch, step %d: %s", k + 1, pbf_world_batch_error(b));
        const double t1 = omp_get_wtime();
        for (int i = 0; i < o->worlds; ++i)
            if (pbf_world_step(w[i], dt) != PBF_OK)
                return cli_error("one by one, world %d, step %d: %s", i, k + 1,
                                 pbf_world_error(w[i]));
        const double t2 = omp_get_wtime();
        if (k >= o->warmup) *tb += t1 - t0, *ts += t2 - t1;
    }
    return 0;
}

int bench_batch(const bench_batch_options *o) {
    pbf_scene *s = malloc(sizeof *s), *one = malloc(sizeof *one);
    pbf_batch_params *p = calloc((size_t)o->worlds, sizeof *p);
    pbf_world **w = calloc((size_t)o->worlds, sizeof *w);
    pbf_world_batch *b = NULL;
    int rc = s == NULL || one == NULL || p == NULL || w == NULL ? cli_error("out of memory") : 0;
    if (rc == 0) rc = cli_load_scene(NULL, o->sets->items, o->sets->count, s);
    char err[PBF_ERROR_SIZE];
    if (rc == 0) {
        if (!user_sets(o->sets, "iterations")) s->world.solver.iterations = 4;
        if (!user_sets(o->sets, "substeps")) s->world.substeps = 1;
        if (o->threads >= 0) s->world.threads = o->threads;
        resize(s, o->particles);
        for (int i = 0; i < o->worlds; ++i) {
            p[i] = pbf_batch_default_params(s);
            p[i].seed = (uint32_t)i;
            p[i].jitter = 0.1f;
        }
        if (pbf_world_batch_create(s, o->worlds, p, &b, err, sizeof err) != PBF_OK)
            rc = cli_error("%s", err);
    }
    /* the same worlds by hand, each with all the threads */
    for (int i = 0; rc == 0 && i < o->worlds; ++i) {
        *one = *s;
        for (int k = 0; k < one->block_count; ++k)
            one->blocks[k].seed += (uint32_t)i, one->blocks[k].jitter = 0.1f;
        if (pbf_scene_create_world(one, &w[i], err, sizeof err) != PBF_OK)
            rc = cli_error("world %d: %s", i, err);
    }
    if (rc == 0) {
        const int threads = s->world.threads > 0 ? s->world.threads : omp_get_max_threads();
        const float dt = 1.0f / s->fps;
        printf("pbf bench --batch %s: %d worlds of %d particles (%s resized by particle radius, "
               "jitter 0.1, seed = world), %d iterations, %d substep%s, dt 1/%g s, %d timed steps "
               "after %d warm-up, %d thread%s\n",
               pbf_version(), o->worlds, pbf_world_batch_particle_count(b), s->name,
               s->world.solver.iterations, s->world.substeps, s->world.substeps == 1 ? "" : "s",
               (double)s->fps, o->steps, o->warmup, threads, threads == 1 ? "" : "s");
        double tb = 0.0, ts = 0.0;
        rc = time_both(o, b, w, dt, &tb, &ts);
        int same = 0;
        for (int i = 0; rc == 0 && i < o->worlds; ++i)
            same += pbf_world_hash(w[i]) == pbf_world_hash(pbf_world_batch_world(b, i));
        if (rc == 0) {
            const double ws = (double)o->worlds * o->steps;
            printf("%-12s %10s %14s %12s\n", "way", "seconds", "worlds*steps/s", "ms/world-step");
            printf("%-12s %10.3f %14.1f %12.4f\n", "batch", tb, ws / tb, 1000.0 * tb / ws);
            printf("%-12s %10.3f %14.1f %12.4f\n", "one by one", ts, ws / ts, 1000.0 * ts / ws);
            printf("batch / one by one: %.2fx; worlds bit-identical both ways: %d of %d\n", ts / tb,
                   same, o->worlds);
            if (same != o->worlds) rc = cli_error("the two ways gave different states");
        }
    }
    for (int i = 0; w != NULL && i < o->worlds; ++i) pbf_world_destroy(w[i]);
    pbf_world_batch_destroy(b);
    free(w);
    free(p);
    free(one);
    free(s);
    return rc;
}
