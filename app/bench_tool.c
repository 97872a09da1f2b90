/* `pbf bench --tool` (see bench_tool.h). The tank of scenes/tool_sphere.json is resized by
 * particle radius to each count (tank and sphere keep their size); the sphere starts submerged
 * (the water is filled around it) and is moved every step through pbf_tool_set_pose, as a haptic
 * driver would, along x at up to 0.16 m/s. A step is one pbf_world_step of 1/fps = 1 ms with one
 * substep: the haptic loop of seed 004. The rate is 1000 / (median ms per step). */
#include "bench_tool.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/export.h"
#include "pbf/scene.h"

/* The tank, water and tool of scenes/tool_sphere.json, the tool held in the water, at haptic
 * rate. --set changes any of it (e.g. solver.iterations=2, time.fps=500). */
static const char bench_scene[] =
    "{\"name\": \"tool_bench\","
    " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.6, 0.5, 0.4]},"
    " \"fluid\": {\"particle_radius\": 0.0075, \"blocks\": [{\"min\": [0, 0, 0],"
    "   \"max\": [0.6, 0.3, 0.4]}]},"
    " \"tool\": {\"radius\": 0.05, \"position\": [0.3, 0.17, 0.2],"
    "   \"adhesion\": {\"k_tool\": 10000, \"k_fluid\": 10000, \"b\": 0.02}, \"damping\": 50},"
    " \"solver\": {\"iterations\": 4, \"scorr\": {\"k\": 0}},"
    " \"time\": {\"fps\": 1000, \"substeps\": 1},"
    " \"output\": {\"format\": []}}";

static const int64_t default_sizes[] = {10000, 20000, 40000, 80000};

typedef struct tool_result {
    int particles;
    float radius;
    double median_ms, min_ms, steps_per_s, mean_force;
    int contacts;
} tool_result;

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Lattice points along one axis of a block (as pbf_world_add_block counts them). */
static int64_t lattice(float lo, float hi, float s) {
    double n = floor((double)(hi - lo) / (double)s + 1e-4);
    return n > 0.0 ? (int64_t)n : 0;
}

/* The scene's blocks on the rest lattice, without the points within R + r of the tool. */
static int fill_around_tool(pbf_world *w, const pbf_scene *s) {
    const float r = s->world.particle_radius, sp = 2.0f * r, reach = s->tool.radius + r;
    const pbf_vec3 c = s->tool.position;
    for (int b = 0; b < s->block_count; ++b) {
        const pbf_block_def *k = &s->blocks[b];
        int64_t nx = lattice(k->min.x, k->max.x, sp), ny = lattice(k->min.y, k->max.y, sp),
                nz = lattice(k->min.z, k->max.z, sp);
        float *pos = malloc((size_t)(nx * ny * nz) * 3 * sizeof *pos + 1);
        if (pos == NULL) return cli_error("out of memory");
        int n = 0;
        for (int64_t z = 0; z < nz; ++z)
            for (int64_t y = 0; y < ny; ++y)
                for (int64_t x = 0; x < nx; ++x) {
                    float px = k->min.x + r + sp * (float)x, py = k->min.y + r + sp * (float)y,
                          pz = k->min.z + r + sp * (float)z;
                    float dx = px - c.x, dy = py - c.y, dz = pz - c.z;
                    if (dx * dx + dy * dy + dz * dz < reach * reach) continue;
                    pos[3 * n] = px, pos[3 * n + 1] = py, pos[3 * n + 2] = pz;
                    ++n;
                }
        pbf_status st = pbf_world_add_particles(w, n, pos, NULL);
        free(pos);
        if (st != PBF_OK) return cli_error("%s", pbf_world_error(w));
    }
    return 0;
}

/* Scales the particle radius until the blocks hold the count closest to target. */
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

static int bench_size(const bench_tool_options *o, const pbf_scene *base, int64_t target,
                      tool_result *res) {
    pbf_scene *s = malloc(sizeof *s);
    double *ms = malloc((size_t)o->steps * sizeof *ms);
    int rc = s == NULL || ms == NULL ? cli_error("out of memory") : 0;
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (rc == 0) {
        *s = *base;
        resize(s, target);
        if (pbf_world_create(&s->world, &w, err, sizeof err) != PBF_OK) rc = cli_error("%s", err);
    }
    if (rc == 0) rc = fill_around_tool(w, s);
    if (rc == 0 && pbf_world_set_tool(w, &s->tool) != PBF_OK)
        rc = cli_error("%s", pbf_world_error(w));
    memset(res, 0, sizeof *res);
    const double dt = rc == 0 ? 1.0 / s->fps : 0.0;
    double force = 0.0;
    for (int i = 0; rc == 0 && i < o->warmup + o->steps; ++i) {
        /* the driver's pose: along x through the water, 0.05 m either side, period 2 s */
        double t = (i + 1) * dt;
        pbf_vec3 pose = s->tool.position;
        pose.x += (float)(0.05 * sin(3.14159265358979 * t));
        if (pbf_tool_set_pose(w, pose) != PBF_OK || pbf_world_step(w, (float)dt) != PBF_OK) {
            rc = cli_error("%lld particles, step %d: %s", (long long)target, i + 1,
                           pbf_world_error(w));
            break;
        }
        if (i < o->warmup) continue;
        ms[i - o->warmup] = pbf_world_get_profile(w).step_ms;
        pbf_tool_state st = pbf_tool_get_state(w);
        force += sqrt((double)st.total.x * st.total.x + (double)st.total.y * st.total.y +
                      (double)st.total.z * st.total.z) /
                 o->steps;
        res->contacts = st.contacts;
    }
    if (rc == 0) {
        qsort(ms, (size_t)o->steps, sizeof *ms, compare_double);
        int m = o->steps;
        res->particles = pbf_world_particle_count(w);
        res->radius = s->world.particle_radius;
        res->min_ms = ms[0];
        res->median_ms = m % 2 ? ms[m / 2] : 0.5 * (ms[m / 2 - 1] + ms[m / 2]);
        res->steps_per_s = res->median_ms > 0.0 ? 1000.0 / res->median_ms : 0.0;
        res->mean_force = force;
    }
    pbf_world_destroy(w);
    free(ms);
    free(s);
    return rc;
}

static int write_csv(const char *path, const tool_result *r, int n, const bench_tool_options *o,
                     const pbf_scene *s, int threads) {
    size_t cap = 512 + (size_t)n * 256, len = 0;
    char *buf = malloc(cap);
    if (buf == NULL) return cli_error("out of memory");
    len += (size_t)snprintf(buf + len, cap - len,
                            "particles,particle_radius,ms_median,ms_min,steps_per_s,contacts,"
                            "mean_force,dt,substeps,iterations,steps,threads\n");
    for (int i = 0; i < n; ++i)
        len += (size_t)snprintf(buf + len, cap - len,
                                "%d,%.9g,%.6f,%.6f,%.3f,%d,%.6g,%.9g,%d,%d,%d,%d\n", r[i].particles,
                                (double)r[i].radius, r[i].median_ms, r[i].min_ms, r[i].steps_per_s,
                                r[i].contacts, r[i].mean_force, 1.0 / s->fps, s->world.substeps,
                                s->world.solver.iterations, o->steps, threads);
    char err[PBF_ERROR_SIZE];
    int rc =
        pbf_write_file_atomic(path, buf, len, err, sizeof err) == PBF_OK ? 0 : cli_error("%s", err);
    free(buf);
    return rc;
}

int bench_tool(const bench_tool_options *o) {
    pbf_scene *s = malloc(sizeof *s);
    if (s == NULL) return cli_error("out of memory");
    char err[PBF_ERROR_SIZE];
    if (pbf_scene_parse(bench_scene, "<tool bench>", o->sets ? o->sets->items : NULL,
                        o->sets ? o->sets->count : 0, s, err, sizeof err) != PBF_OK) {
        free(s);
        return cli_error("%s", err);
    }
    if (!s->has_tool || s->tool.motion != PBF_TOOL_KINEMATIC) {
        free(s);
        return cli_error("bench --tool: the tool must stay kinematic (it is moved by poses)");
    }
    if (o->threads >= 0) s->world.threads = o->threads;
    if (o->backend >= 0) s->world.backend = (pbf_backend)o->backend;
    const int threads = s->world.threads > 0 ? s->world.threads : omp_get_max_threads();
    const int64_t *sizes = o->sizes != NULL ? o->sizes : default_sizes;
    const int count =
        o->sizes != NULL ? o->size_count : (int)(sizeof default_sizes / sizeof default_sizes[0]);
    char device[PBF_ERROR_SIZE];
    if (pbf_backend_info(s->world.backend, device, sizeof device) != PBF_OK) {
        const char *name = s->world.backend == PBF_BACKEND_CUDA ? "cuda" : "cpu";
        free(s);
        return cli_error("backend '%s': %s", name, device);
    }
    printf("pbf bench --tool %s: the tank of scenes/tool_sphere.json resized by particle radius, "
           "tool R %g m moved through the water by pbf_tool_set_pose every step, dt %g ms, %d "
           "substep%s, %d iterations, %d timed steps after %d warm-up, %d thread%s\n",
           pbf_version(), (double)s->tool.radius, 1000.0 / s->fps, s->world.substeps,
           s->world.substeps == 1 ? "" : "s", s->world.solver.iterations, o->steps, o->warmup,
           threads, threads == 1 ? "" : "s");
    printf("device: %s\n", device);
    printf("%10s %10s %10s %10s %9s %9s %10s\n", "particles", "ms_median", "ms_min", "steps/s",
           "1 kHz?", "contacts", "mean |F| N");
    tool_result res[64];
    int done = 0, rc = 0;
    for (int i = 0; i < count && i < 64 && rc == 0; ++i) {
        rc = bench_size(o, s, sizes[i], &res[done]);
        if (rc != 0) break;
        const tool_result *r = &res[done++];
        printf("%10d %10.3f %10.3f %10.1f %9s %9d %10.3f\n", r->particles, r->median_ms, r->min_ms,
               r->steps_per_s, r->steps_per_s >= 1000.0 ? "yes" : "no", r->contacts, r->mean_force);
        fflush(stdout);
    }
    if (rc == 0 && o->csv != NULL) {
        rc = write_csv(o->csv, res, done, o, s, threads);
        if (rc == 0) fprintf(stderr, "pbf bench: wrote %s\n", o->csv);
    }
    free(s);
    return rc;
}
