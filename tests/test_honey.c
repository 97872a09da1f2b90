/* The shipped honey scene (scenes/honey.json), coarse: honey poured onto a plate stays stable
 * for 10 s at the default step (docs/physics.md, "Viscosity"). */
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"
#include "pbf/scene.h"
#include "test.h"

/* The scene at twice its particle radius (an eighth of the particles) with the nozzle widened
 * to keep three particles across, for 10 s at 60 steps per second: no step fails (the watchdog
 * stays silent), and the honey ends at rest in a pile on the floor. */
static int honey_is_stable_for_10_s(void) {
    const char *set[] = {"fluid.particle_radius=0.008", "flow.emitters[0].radius=0.024",
                         "solver.threads=1"};
    pbf_scene *sc = malloc(sizeof *sc);
    ENSURE(sc != NULL);
    char err[PBF_ERROR_SIZE], path[1024];
    const char *root = getenv("PBF_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/scenes/honey.json", root ? root : ".");
    pbf_status st = pbf_scene_load(path, set, 3, sc, err, sizeof err);
    if (st != PBF_OK) fprintf(stderr, "%s\n", err);
    ENSURE(st == PBF_OK);
    ENSURE(sc->world.material.viscosity >= 0.01f); /* the scene is honey */
    pbf_world *w = NULL;
    ENSURE(pbf_scene_create_world(sc, &w, err, sizeof err) == PBF_OK);
    const float dt = 1.0f / sc->fps;
    int most_iterations = 0;
    double fastest_mean = 0.0; /* the fastest particle's speed, averaged over the last second */
    for (int f = 0; f < 600; ++f) {
        if (pbf_world_step(w, dt) != PBF_OK) {
            fprintf(stderr, "step %d: %s\n", f, pbf_world_error(w));
            return 1;
        }
        int it = pbf_world_get_profile(w).viscosity_iterations;
        if (it > most_iterations) most_iterations = it;
        if (f >= 540) fastest_mean += pbf_world_get_stats(w).max_speed / 60.0;
    }
    pbf_stats s = pbf_world_get_stats(w);
    pbf_profile p = pbf_world_get_profile(w);
    printf("  %d particles, t %.2f s: max speed %.4f m/s (last second's mean %.4f m/s), top "
           "%.3f m, spread x %.3f..%.3f m, density error %.4f %%, viscosity iterations at most "
           "%d\n",
           s.particles, pbf_world_time(w), (double)s.max_speed, fastest_mean,
           (double)s.bounds_max.y, (double)s.bounds_min.x, (double)s.bounds_max.x,
           100.0 * p.avg_density_error, most_iterations);
    ENSURE(s.particles > 300);
    /* At rest: the pour stopped at 5 s. The film's fastest particle jitters from frame to frame
     * (over the last second: median 0.021 m/s, one frame in ten above 0.05, the most 0.095; with
     * s_corr's earlier shape 0.030, 0.082 and 0.164), so its mean over the second is bounded,
     * not one frame's (measured 0.029 m/s; 0.042 with the earlier shape). */
    ENSURE(fastest_mean < 0.05);
    ENSURE(s.bounds_max.y < 0.1f); /* all of it down on the plate */
    ENSURE(s.bounds_min.x > 0.0f && s.bounds_max.x < 0.4f);
    ENSURE(p.avg_density_error < 0.01f);
    ENSURE(most_iterations > 0 && most_iterations < sc->world.material.viscosity_iterations);
    pbf_world_destroy(w);
    free(sc);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(honey_is_stable_for_10_s);
TEST_MAIN_END
