/* Density error against iteration for plain Jacobi and the Chebyshev-accelerated solve, on the
 * same state (docs/performance.md "Converging faster"). Runs the built-in dam break
 * (or a scene file) for FRAMES frames with the scene's solver, then solves one substep of that
 * state with each solver for exactly ITERATIONS iterations and prints CSV:
 *   iteration,jacobi,chebyshev        (average density error in percent after k Δp passes)
 *
 * usage: pbf_convergence [--scene FILE] [--frames N] [--iterations K] [--set KEY=VALUE ...]
 * bench/convergence.sh draws the plot with gnuplot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"
#include "pbf/scene.h"

#define MAX_SETS 64

static int fail(const char *what, const char *msg) {
    fprintf(stderr, "pbf_convergence: %s: %s\n", what, msg);
    return 1;
}

/* One substep of the state (x, v) with `solver` for exactly k passes; history into e. */
static int solve(const pbf_scene *base, pbf_solver_def solver, const float *x, const float *v,
                 int n, float *e, int k) {
    pbf_scene *s = malloc(sizeof *s);
    if (s == NULL) return fail("solve", "out of memory");
    *s = *base;
    s->block_count = 0; /* the particles come from the state */
    s->world.substeps = 1; /* one substep: the history starts from exactly this state */
    solver.target_error = 1e-9f; /* unreachable: run all k iterations */
    solver.min_iterations = k;
    solver.max_iterations = k;
    s->world.solver = solver;
    char err[PBF_ERROR_SIZE];
    pbf_world *w = NULL;
    int rc = 0;
    if (pbf_scene_create_world(s, &w, err, sizeof err) != PBF_OK) rc = fail("create", err);
    if (rc == 0 && pbf_world_add_particles(w, n, x, v) != PBF_OK)
        rc = fail("add particles", pbf_world_error(w));
    if (rc == 0 && pbf_world_step(w, 1.0f / (base->fps * (float)base->world.substeps)) != PBF_OK)
        rc = fail("step", pbf_world_error(w));
    if (rc == 0 && pbf_world_get_iteration_errors(w, e, k + 1) != k + 1)
        rc = fail("history", "unexpected length");
    pbf_world_destroy(w);
    free(s);
    return rc;
}

int main(int argc, char **argv) {
    const char *scene_path = NULL, *sets[MAX_SETS];
    int frames = 30, iterations = 60, set_count = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--scene") && i + 1 < argc)
            scene_path = argv[++i];
        else if (!strcmp(argv[i], "--frames") && i + 1 < argc)
            frames = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
            iterations = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--set") && i + 1 < argc && set_count < MAX_SETS)
            sets[set_count++] = argv[++i];
        else {
            fprintf(stderr, "usage: pbf_convergence [--scene FILE] [--frames N] [--iterations K] "
                            "[--set KEY=VALUE ...]\n");
            return 2;
        }
    }
    if (frames < 0 || iterations < 1 || iterations > 10000)
        return fail("arguments", "--frames must be >= 0 and --iterations in [1, 10000]");
    pbf_scene *scene = malloc(sizeof *scene);
    char err[PBF_ERROR_SIZE];
    if (scene == NULL) return fail("scene", "out of memory");
    pbf_status st = scene_path ? pbf_scene_load(scene_path, sets, set_count, scene, err, sizeof err)
                               : pbf_scene_default(sets, set_count, scene, err, sizeof err);
    if (st != PBF_OK) return fail("scene", err);
    pbf_world *w = NULL;
    if (pbf_scene_create_world(scene, &w, err, sizeof err) != PBF_OK) return fail("create", err);
    for (int f = 0; f < frames; ++f)
        if (pbf_world_step(w, 1.0f / scene->fps) != PBF_OK) return fail("step", pbf_world_error(w));
    const int n = pbf_world_particle_count(w);
    float *x = malloc(3 * sizeof(float) * (size_t)n), *v = malloc(3 * sizeof(float) * (size_t)n);
    float *ej = malloc(sizeof(float) * (size_t)(iterations + 1));
    float *ec = malloc(sizeof(float) * (size_t)(iterations + 1));
    if (!x || !v || !ej || !ec) return fail("state", "out of memory");
    pbf_world_get_positions(w, x);
    pbf_world_get_velocities(w, v);
    pbf_solver_def jacobi = scene->world.solver, chebyshev = scene->world.solver;
    jacobi.chebyshev = 0;
    chebyshev.chebyshev = 1;
    if (solve(scene, jacobi, x, v, n, ej, iterations) ||
        solve(scene, chebyshev, x, v, n, ec, iterations))
        return 1;
    printf("# %s, %d particles, state after %d frames; one substep of %g s; rho %g gamma %g "
           "delay %d\n",
           scene->name, n, frames, 1.0 / (scene->fps * scene->world.substeps),
           (double)chebyshev.chebyshev_rho, (double)chebyshev.chebyshev_gamma,
           chebyshev.chebyshev_delay);
    printf("iteration,jacobi,chebyshev\n");
    for (int k = 0; k <= iterations; ++k) printf("%d,%.6f,%.6f\n", k, 100.0 * ej[k], 100.0 * ec[k]);
    pbf_world_destroy(w);
    free(x);
    free(v);
    free(ej);
    free(ec);
    free(scene);
    return 0;
}
