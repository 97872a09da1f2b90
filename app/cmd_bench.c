/* `pbf bench`: solver timings at several particle counts, on the built-in dam break.
 *
 * The scene is resized by its particle radius: the fluid block and the domain keep their size
 * and the lattice gets finer, so every count simulates the same flow (same h/domain ratio per
 * particle, same neighbour count ~ (h/r)^3). The radius is searched so the block holds the
 * closest count the lattice allows. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench_batch.h" /* --batch */
#include "bench_tool.h" /* --tool */
#include "cli.h"
#include "pbf/export.h"
#include "pbf/scene.h"
#ifdef PBF_APP_HAVE_RENDER
#include "render_run.h"
#endif

#define MAX_SIZES 32

static const char bench_synopsis[] =
    "usage: pbf bench [--particles LIST] [--steps N] [--warmup N] [--threads N]\n"
    "                 [--neighbor-mode list|cells] [--csv FILE] [--set key=value ...]\n"
    "                 [--backend cpu|cuda] [--tool] [--batch [--worlds N]]\n"
#ifdef PBF_APP_HAVE_RENDER
    "                 [--render [--resolution WxH]]\n"
#endif
    ;

static const char bench_help[] =
    "Times the solver on the built-in dam break at each particle count: the particle radius is\n"
    "scaled so the fluid block holds about N particles (block and domain keep their size).\n"
    "After the warm-up steps, each timed step is one pbf_world_step of 1/fps seconds with\n"
    "4 solver iterations and 1 substep unless --set says otherwise. Prints per count: ms per\n"
    "step (median and min), each stage's mean ms, particle-steps per second (from the median),\n"
    "the average neighbour count, the mean solver iterations per substep, and the average\n"
    "density error in percent (mean and largest over the timed steps).\n"
    "\n"
    "options:\n"
    "  --particles LIST        comma-separated counts (default 10000,50000,200000)\n"
    "  --steps N               timed steps per count (default 20)\n"
    "  --warmup N              untimed steps first (default 3)\n"
    "  --threads N             CPU threads, 0 = all cores (default: the scene's, all cores)\n"
    "  --neighbor-mode MODE    list (neighbour list per substep) or cells (27 cell ranges)\n"
    "  --backend NAME          cpu, or cuda: the GPU (stages timed with CUDA events; the grid\n"
    "                          sort from PBF_CUDA_SORT=counting|radix, docs/cuda.md)\n"
    "  --csv FILE              also write the table as CSV\n"
    "  --tool                  the haptic loop instead (docs/tool.md): steps of 1 ms with a tool\n"
    "                          moving in the water of scenes/tool_sphere.json, as steps/s;\n"
    "                          default counts 10000,20000,40000,80000\n"
    "  --batch                 many small worlds instead (docs/library.md): --worlds worlds of\n"
    "                          --particles particles each (default 1024 of 2000), stepped as\n"
    "                          one batch (threads across worlds) and one after another (threads\n"
    "                          inside each world), as worlds*steps/s\n"
    "  --worlds N              worlds of --batch (default 1024)\n"
    "  --set KEY=VALUE         override a scene parameter (solver.iterations=6, ...); repeatable\n"
#ifdef PBF_APP_HAVE_RENDER
    "  --render                also time the renderer: ms per frame (fluid look, image read\n"
    "                          back) of the state after the timed steps, mean of 5 frames\n"
    "  --resolution WxH        the rendered size (default 1280x720; implies --render)\n"
#endif
    "  --help, -h              this help\n"
    "\n"
    "examples:\n"
    "  pbf bench\n"
    "  pbf bench --particles 50000 --steps 50 --threads 1 --csv bench_1t.csv\n"
    "  pbf bench --batch --worlds 256 --steps 10\n"
    "  pbf bench --neighbor-mode cells --set solver.iterations=6\n"
    "  pbf bench --particles 50000 --set time.substeps=4 --set solver.target_error=0.01\n";

typedef struct bench_options {
    int64_t sizes[MAX_SIZES];
    int size_count;
    int steps, warmup;
    int threads; /* < 0: the scene's world.threads */
    int threads_used; /* what the runs get (0 resolved to the OpenMP default) */
    int neighbor_mode; /* < 0: the scene's */
    int backend; /* pbf_backend (docs/cuda.md); < 0: the scene's */
    const char *csv;
    cli_overrides sets;
    int render_w, render_h; /* --render: the image size; 0 when not rendering */
    int tool, sizes_given; /* --tool: app/bench_tool.c; --particles was given */
    int batch, worlds; /* --batch: app/bench_batch.c; --worlds */
} bench_options;

typedef struct bench_result {
    int particles;
    float radius;
    double median_ms, min_ms;
    double stage_ms[PBF_STAGE_COUNT]; /* means: they add up to the mean step time */
    double particle_steps_per_s;
    double avg_neighbors;
    double mean_iterations; /* Δp passes per substep, mean over the timed steps */
    double mean_error; /* average density error (fraction), mean over the timed steps */
    double max_error; /* the largest average density error of a timed step */
    double render_ms; /* --render: ms per rendered frame */
} bench_result;

/* Whether a --set names this key (its last path component), e.g. "substeps" matches
 * "time.substeps=2": then the bench keeps the user's value instead of its own default. */
static int user_sets(const cli_overrides *sets, const char *key) {
    size_t k = strlen(key);
    for (int i = 0; i < sets->count; ++i) {
        const char *s = sets->items[i];
        size_t n = strcspn(s, "=");
        if (n >= k && strncmp(s + n - k, key, k) == 0 && (n == k || s[n - k - 1] == '.')) return 1;
    }
    return 0;
}

/* Scales the particle radius until the scene holds the count closest to target. */
static int resize_scene(pbf_scene *scene, int64_t target) {
    int64_t n = pbf_scene_particle_count(scene);
    if (n <= 0) return cli_error("the bench scene has no particles");
    float r = scene->world.particle_radius;
    float best_r = r;
    int64_t best = n;
    for (int it = 0; it < 16 && n != target && n > 0; ++it) {
        r *= cbrtf((float)n / (float)target);
        scene->world.particle_radius = r;
        n = pbf_scene_particle_count(scene);
        if (llabs(n - target) < llabs(best - target)) {
            best = n;
            best_r = r;
        }
    }
    scene->world.particle_radius = best_r;
    return 0;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int bench_one(const bench_options *o, int64_t target, bench_result *res) {
    pbf_scene *scene = malloc(sizeof *scene);
    double *ms = malloc((size_t)o->steps * sizeof *ms);
    pbf_world *world = NULL;
    int rc = (scene == NULL || ms == NULL) ? cli_error("out of memory") : 0;
    if (rc == 0) rc = cli_load_scene(NULL, o->sets.items, o->sets.count, scene);
    if (rc == 0) {
        if (!user_sets(&o->sets, "iterations")) scene->world.solver.iterations = 4;
        if (!user_sets(&o->sets, "substeps")) scene->world.substeps = 1;
        if (o->threads >= 0) scene->world.threads = o->threads;
        if (o->neighbor_mode >= 0) scene->world.neighbor_mode = (pbf_neighbor_mode)o->neighbor_mode;
        if (o->backend >= 0) scene->world.backend = (pbf_backend)o->backend;
        rc = resize_scene(scene, target);
    }
    char err[PBF_ERROR_SIZE];
    if (rc == 0 && pbf_scene_create_world(scene, &world, err, sizeof err) != PBF_OK)
        rc = cli_error("%s", err);
    const float dt = rc == 0 ? 1.0f / scene->fps : 0.0f;
    memset(res, 0, sizeof *res);
    for (int i = 0; rc == 0 && i < o->warmup + o->steps; ++i) {
        if (pbf_world_step(world, dt) != PBF_OK) {
            rc = cli_error("%lld particles, step %d: %s", (long long)target, i + 1,
                           pbf_world_error(world));
            break;
        }
        if (i < o->warmup) continue;
        pbf_profile p = pbf_world_get_profile(world);
        ms[i - o->warmup] = p.step_ms;
        for (int k = 0; k < PBF_STAGE_COUNT; ++k) res->stage_ms[k] += p.stage_ms[k] / o->steps;
        res->avg_neighbors += (double)p.avg_neighbors / o->steps;
        res->mean_iterations += (double)p.iterations / o->steps;
        res->mean_error += (double)p.avg_density_error / o->steps;
        if (p.avg_density_error > res->max_error) res->max_error = p.avg_density_error;
    }
    if (rc == 0) {
        qsort(ms, (size_t)o->steps, sizeof *ms, compare_double);
        int m = o->steps;
        res->particles = pbf_world_particle_count(world);
        res->radius = scene->world.particle_radius;
        res->min_ms = ms[0];
        res->median_ms = m % 2 ? ms[m / 2] : 0.5 * (ms[m / 2 - 1] + ms[m / 2]);
        res->particle_steps_per_s =
            res->median_ms > 0.0 ? res->particles * 1000.0 / res->median_ms : 0.0;
    }
#ifdef PBF_APP_HAVE_RENDER
    if (rc == 0 && o->render_w > 0) {
        char gl[256];
        if (render_bench_world(world, scene, o->render_w, o->render_h, 5, &res->render_ms, gl,
                               sizeof gl, err, sizeof err) != 0)
            rc = cli_error("--render: %s", err);
        else if (target == o->sizes[0])
            fprintf(stderr, "pbf bench: rendering %dx%d with %s\n", o->render_w, o->render_h, gl);
    }
#endif
    pbf_world_destroy(world);
    free(ms);
    free(scene);
    return rc;
}

static void print_header(int render) {
    printf("%10s %9s %9s", "particles", "ms_median", "ms_min");
    for (int k = 0; k < PBF_STAGE_COUNT; ++k) printf(" %9.9s", pbf_stage_name((pbf_stage)k));
    printf(" %16s %13s %6s %7s %7s%s\n", "particle-steps/s", "avg_neighbors", "iters", "err%",
           "maxerr%", render ? " render_ms" : "");
}

static void print_row(const bench_result *r, int render) {
    printf("%10d %9.3f %9.3f", r->particles, r->median_ms, r->min_ms);
    for (int k = 0; k < PBF_STAGE_COUNT; ++k) printf(" %9.3f", r->stage_ms[k]);
    char rate[32];
    printf(" %16s %13.2f %6.2f %7.4f %7.4f",
           cli_format_count((long long)(r->particle_steps_per_s + 0.5), rate, sizeof rate),
           r->avg_neighbors, r->mean_iterations, 100.0 * r->mean_error, 100.0 * r->max_error);
    if (render) printf(" %9.2f", r->render_ms);
    printf("\n");
    fflush(stdout);
}

static int write_csv(const char *path, const bench_result *r, int n, const bench_options *o,
                     int iterations, int substeps) {
    size_t cap = 1024 + (size_t)n * 512, len = 0;
    char *buf = malloc(cap);
    if (buf == NULL) return cli_error("out of memory");
    len += (size_t)snprintf(buf + len, cap - len, "particles,particle_radius,ms_median,ms_min");
    for (int k = 0; k < PBF_STAGE_COUNT; ++k)
        len += (size_t)snprintf(buf + len, cap - len, ",ms_%s", pbf_stage_name((pbf_stage)k));
    len += (size_t)snprintf(buf + len, cap - len,
                            ",particle_steps_per_s,avg_neighbors,steps,threads,neighbor_mode,"
                            "iterations,substeps,mean_iterations,avg_density_error_mean,"
                            "avg_density_error_max%s\n",
                            o->render_w > 0 ? ",render_ms,render_width,render_height" : "");
    for (int i = 0; i < n; ++i) {
        len += (size_t)snprintf(buf + len, cap - len, "%d,%.9g,%.6f,%.6f", r[i].particles,
                                (double)r[i].radius, r[i].median_ms, r[i].min_ms);
        for (int k = 0; k < PBF_STAGE_COUNT; ++k)
            len += (size_t)snprintf(buf + len, cap - len, ",%.6f", r[i].stage_ms[k]);
        len += (size_t)snprintf(
            buf + len, cap - len, ",%.6g,%.4f,%d,%d,%s,%d,%d,%.4f,%.6g,%.6g\n",
            r[i].particle_steps_per_s, r[i].avg_neighbors, o->steps, o->threads_used,
            o->neighbor_mode == PBF_NEIGHBOR_CELLS ? "cells" : "list", iterations, substeps,
            r[i].mean_iterations, r[i].mean_error, r[i].max_error);
        if (o->render_w > 0) {
            len--; /* replace the newline */
            len += (size_t)snprintf(buf + len, cap - len, ",%.3f,%d,%d\n", r[i].render_ms,
                                    o->render_w, o->render_h);
        }
    }
    char err[PBF_ERROR_SIZE];
    int rc =
        pbf_write_file_atomic(path, buf, len, err, sizeof err) == PBF_OK ? 0 : cli_error("%s", err);
    free(buf);
    return rc;
}

static int parse_sizes(cli_parser *p, const char *text, bench_options *o) {
    o->size_count = 0;
    const char *s = text;
    for (;;) {
        size_t n = strcspn(s, ",");
        char item[32];
        int v = 0;
        if (n == 0 || n >= sizeof item || o->size_count == MAX_SIZES) {
            cli_usage_error(p, "--particles expects up to %d comma-separated counts, got '%s'",
                            MAX_SIZES, text);
            return 0;
        }
        memcpy(item, s, n);
        item[n] = '\0';
        if (!cli_parse_int(p, "--particles", item, 1, 100000000, &v)) return 0;
        o->sizes[o->size_count++] = v;
        if (s[n] == '\0') return 1;
        s += n + 1;
    }
}

static int parse_args(int argc, char **argv, bench_options *o, int *help) {
    cli_parser p;
    cli_parser_init(&p, "bench", bench_synopsis, argc, argv);
    const char *a, *v;
    while ((a = cli_next(&p)) != NULL) {
        int ok = 1;
        if (cli_flag(&p, "--help", "-h"))
            *help = 1;
        else if (cli_option(&p, "--particles", &v))
            ok = parse_sizes(&p, v, o), o->sizes_given = 1;
        else if (cli_option(&p, "--steps", &v))
            ok = cli_parse_int(&p, "--steps", v, 1, 1000000, &o->steps);
        else if (cli_option(&p, "--warmup", &v))
            ok = cli_parse_int(&p, "--warmup", v, 0, 1000000, &o->warmup);
        else if (cli_option(&p, "--threads", &v))
            ok = cli_parse_int(&p, "--threads", v, 0, 4096, &o->threads);
        else if (cli_option(&p, "--csv", &v))
            o->csv = v;
        else if (cli_flag(&p, "--tool", NULL))
            o->tool = 1;
        else if (cli_flag(&p, "--batch", NULL))
            o->batch = 1;
        else if (cli_option(&p, "--worlds", &v))
            ok = cli_parse_int(&p, "--worlds", v, 1, 1000000, &o->worlds);
#ifdef PBF_APP_HAVE_RENDER
        else if (cli_flag(&p, "--render", NULL)) {
            if (o->render_w == 0) o->render_w = 1280, o->render_h = 720;
        } else if (cli_option(&p, "--resolution", &v)) {
            int n = 0;
            if (sscanf(v, "%dx%d%n", &o->render_w, &o->render_h, &n) != 2 || v[n] != '\0' ||
                o->render_w < 16 || o->render_h < 16 || o->render_w > 8192 || o->render_h > 8192)
                ok = !cli_usage_error(
                    &p, "--resolution expects WxH between 16x16 and 8192x8192, got '%s'", v);
        }
#endif
        else if (cli_option(&p, "--backend", &v)) {
            if (strcmp(v, "cpu") == 0)
                o->backend = PBF_BACKEND_CPU;
            else if (strcmp(v, "cuda") == 0)
                o->backend = PBF_BACKEND_CUDA;
            else
                ok = !cli_usage_error(&p, "--backend expects cpu or cuda, got '%s'", v);
        } else if (cli_option(&p, "--neighbor-mode", &v)) {
            if (strcmp(v, "list") == 0)
                o->neighbor_mode = PBF_NEIGHBOR_LIST;
            else if (strcmp(v, "cells") == 0)
                o->neighbor_mode = PBF_NEIGHBOR_CELLS;
            else
                ok = !cli_usage_error(&p, "--neighbor-mode expects list or cells, got '%s'", v);
        } else if (cli_option(&p, "--set", &v)) {
            int rc = cli_take_set(&p, v, &o->sets);
            if (rc != CLI_EXIT_OK) return rc;
        } else if (!p.failed)
            ok = !cli_usage_error(&p, "unknown %s '%s'", a[0] == '-' ? "option" : "argument", a);
        if (!ok || p.failed) return CLI_EXIT_USAGE;
    }
    return p.failed ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

int cmd_bench(int argc, char **argv) {
    bench_options o;
    memset(&o, 0, sizeof o);
    o.sizes[0] = 10000;
    o.sizes[1] = 50000;
    o.sizes[2] = 200000;
    o.size_count = 3;
    o.steps = 20;
    o.warmup = 3;
    o.neighbor_mode = -1;
    o.backend = -1;
    o.threads = -1;
    o.worlds = 1024;
    int help = 0;
    int rc = parse_args(argc, argv, &o, &help);
    if (rc == CLI_EXIT_OK && help) {
        printf("%s\n%s", bench_synopsis, bench_help);
        cli_overrides_free(&o.sets);
        return CLI_EXIT_OK;
    }
    if (rc == CLI_EXIT_OK && o.batch) { /* many small worlds, app/bench_batch.c */
        bench_batch_options t = {
            o.worlds, o.sizes_given ? o.sizes[0] : 2000, o.steps, o.warmup, o.threads, &o.sets};
        rc = bench_batch(&t);
        cli_overrides_free(&o.sets);
        return rc;
    }
    if (rc == CLI_EXIT_OK && o.tool) { /* the haptic loop's rate, app/bench_tool.c */
        bench_tool_options t = {o.sizes_given ? o.sizes : NULL,
                                o.size_count,
                                o.steps,
                                o.warmup,
                                o.threads,
                                o.backend,
                                &o.sets,
                                o.csv};
        rc = bench_tool(&t);
        cli_overrides_free(&o.sets);
        return rc;
    }
    bench_result results[MAX_SIZES];
    pbf_scene *scene = rc == CLI_EXIT_OK ? malloc(sizeof *scene) : NULL;
    if (rc == CLI_EXIT_OK && scene == NULL) rc = cli_error("out of memory");
    if (rc == CLI_EXIT_OK) rc = cli_load_scene(NULL, o.sets.items, o.sets.count, scene);
    if (rc == CLI_EXIT_OK) {
        /* What every size runs with, for the banner and the CSV. */
        int iterations = user_sets(&o.sets, "iterations") ? scene->world.solver.iterations : 4;
        int substeps = user_sets(&o.sets, "substeps") ? scene->world.substeps : 1;
        if (o.neighbor_mode < 0) o.neighbor_mode = (int)scene->world.neighbor_mode;
        int threads = o.threads >= 0 ? o.threads : scene->world.threads;
        o.threads_used = threads > 0 ? threads : omp_get_max_threads();
        printf("pbf bench %s: %s resized by particle radius, %d iterations, %d substep%s, "
               "dt 1/%g s, %d timed steps after %d warm-up, %d threads, %s neighbours\n",
               pbf_version(), scene->name, iterations, substeps, substeps == 1 ? "" : "s",
               (double)scene->fps, o.steps, o.warmup, o.threads_used,
               o.neighbor_mode == PBF_NEIGHBOR_CELLS ? "cells" : "list");
        /* where it runs; a backend that cannot run here stops the bench at once */
        char device[PBF_ERROR_SIZE];
        pbf_backend backend = o.backend >= 0 ? (pbf_backend)o.backend : scene->world.backend;
        if (pbf_backend_info(backend, device, sizeof device) != PBF_OK) {
            free(scene);
            cli_overrides_free(&o.sets);
            return cli_error("backend '%s': %s", backend == PBF_BACKEND_CUDA ? "cuda" : "cpu",
                             device);
        }
        printf("device: %s\n", device);
        print_header(o.render_w > 0);
        int done = 0;
        for (int i = 0; i < o.size_count && rc == CLI_EXIT_OK; ++i) {
            rc = bench_one(&o, o.sizes[i], &results[i]);
            if (rc == CLI_EXIT_OK) print_row(&results[done++], o.render_w > 0);
        }
        if (rc == CLI_EXIT_OK && o.csv != NULL) {
            rc = write_csv(o.csv, results, done, &o, iterations, substeps);
            if (rc == CLI_EXIT_OK) fprintf(stderr, "pbf bench: wrote %s\n", o.csv);
        }
    }
    free(scene);
    cli_overrides_free(&o.sets);
    return rc;
}
