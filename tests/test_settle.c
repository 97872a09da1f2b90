/* fluid.settle (docs/scenes.md): each block settles under gravity in its own box before t = 0.
 *  - A column on a cubic lattice is not water at rest: released, it packs more densely (in the
 *    column below the mean neighbour count rises from 20 to 22 over 0.2 s) and the packing
 *    throws particles about. With the default solver its kinetic energy peaks at 3.7e-3 J/kg
 *    over the first 0.2 s; the column settled for 0.5 s, in the same tank, at 4e-4 J/kg. The
 *    bound is a quarter of the lattice's peak.
 *  - The world starts at t = 0 with every particle inside its block's box, in the ids
 *    pbf_world_add_block gives, at the block's velocity.
 *  - Settling is part of the scene: 1 and 2 threads give the same bits, the key round-trips
 *    through pbf_scene_to_json, and a bad value is an error that names the key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/scene.h"
#include "test.h"

/* A 6 × 30 × 4 cm column (r = 5 mm, 720 particles) filling the tank's floor: it can only settle.
 * The default solver (4 iterations). */
static const char SCENE[] = "{\"domain\": {\"min\": [0, 0, 0], \"max\": [0.06, 0.4, 0.04]},"
                            " \"fluid\": {\"particle_radius\": 0.005, \"settle\": %g,"
                            "  \"blocks\": [{\"min\": [0, 0, 0], \"max\": [0.06, 0.3, 0.04],"
                            "               \"velocity\": [%g, 0, 0]}]},"
                            " \"solver\": {\"threads\": %d},"
                            " \"time\": {\"fps\": 120, \"substeps\": 4}}";

static pbf_world *make(double settle, double vx, int threads, pbf_scene *s) {
    char json[1024], err[PBF_ERROR_SIZE];
    snprintf(json, sizeof json, SCENE, settle, vx, threads);
    if (pbf_scene_parse(json, "settle.json", NULL, 0, s, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "parse: %s\n", err);
        return NULL;
    }
    pbf_world *w = NULL;
    if (pbf_scene_create_world(s, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "create: %s\n", err);
        return NULL;
    }
    return w;
}

/* The largest kinetic energy per kilogram over the first 0.2 s (24 frames). */
static double peak_energy(pbf_world *w) {
    double peak = 0.0;
    for (int f = 0; f < 24; ++f) {
        if (pbf_world_step(w, 1.0f / 120.0f) != PBF_OK) return -1.0;
        pbf_stats st = pbf_world_get_stats(w);
        double e = st.kinetic_energy / (pbf_world_particle_count(w) * pbf_world_particle_mass(w));
        if (e > peak) peak = e;
    }
    return peak;
}

static int settled_column_stays_quiet(void) {
    pbf_scene *s = malloc(sizeof *s);
    pbf_world *lattice = make(0.0, 0.0, 1, s), *settled = make(0.5, 0.0, 1, s);
    ENSURE(lattice != NULL && settled != NULL);
    const double e_lattice = peak_energy(lattice), e_settled = peak_energy(settled);
    printf("  peak kinetic energy over 0.2 s: lattice %.3g J/kg, settled %.3g J/kg\n", e_lattice,
           e_settled);
    ENSURE(e_lattice > 0.0 && e_settled >= 0.0);
    ENSURE(e_settled < 0.25 * e_lattice);
    pbf_world_destroy(lattice);
    pbf_world_destroy(settled);
    free(s);
    return 0;
}

static int starts_in_the_block_at_its_velocity(void) {
    pbf_scene *s = malloc(sizeof *s);
    pbf_world *lattice = make(0.0, 0.25, 1, s), *w = make(0.1, 0.25, 1, s);
    ENSURE(lattice != NULL && w != NULL);
    const int n = pbf_world_particle_count(w);
    ENSURE(n == 720 && n == pbf_world_particle_count(lattice));
    ENSURE(pbf_world_time(w) == 0.0);
    float *x = malloc(sizeof(float) * 3 * n), *x0 = malloc(sizeof(float) * 3 * n);
    float *v = malloc(sizeof(float) * 3 * n);
    pbf_world_get_positions(w, x);
    pbf_world_get_positions(lattice, x0);
    pbf_world_get_velocities(w, v);
    double moved = 0.0, worst = 0.0;
    for (int i = 0; i < n; ++i) {
        ENSURE(x[3 * i] >= 0.0f && x[3 * i] <= 0.06f && x[3 * i + 1] >= 0.0f &&
               x[3 * i + 1] <= 0.3f && x[3 * i + 2] >= 0.0f && x[3 * i + 2] <= 0.04f);
        ENSURE(v[3 * i] == 0.25f && v[3 * i + 1] == 0.0f && v[3 * i + 2] == 0.0f);
        /* the same particle: id i settled from lattice point i, so it stays near it */
        double d = hypot(hypot(x[3 * i] - x0[3 * i], x[3 * i + 1] - x0[3 * i + 1]),
                         x[3 * i + 2] - x0[3 * i + 2]);
        moved += d / n;
        if (d > worst) worst = d;
    }
    printf("  settled from the lattice: mean %.2f mm, most %.2f mm\n", 1e3 * moved, 1e3 * worst);
    ENSURE(moved > 1e-4); /* it did settle */
    ENSURE(moved < 0.01); /* and id i is lattice point i's particle: on average within 2r of it */
    free(x);
    free(x0);
    free(v);
    pbf_world_destroy(lattice);
    pbf_world_destroy(w);
    free(s);
    return 0;
}

static int same_bits_on_any_thread_count(void) {
    pbf_scene *s = malloc(sizeof *s);
    pbf_world *a = make(0.1, 0.0, 1, s), *b = make(0.1, 0.0, 2, s);
    ENSURE(a != NULL && b != NULL);
    ENSURE(pbf_world_hash(a) == pbf_world_hash(b));
    pbf_world_destroy(a);
    pbf_world_destroy(b);
    free(s);
    return 0;
}

static int key_round_trips_and_bad_values_name_it(void) {
    pbf_scene *s = malloc(sizeof *s), *back = malloc(sizeof *back);
    char json[1024], err[PBF_ERROR_SIZE];
    snprintf(json, sizeof json, SCENE, 0.25, 0.0, 1);
    ENSURE(pbf_scene_parse(json, "settle.json", NULL, 0, s, err, sizeof err) == PBF_OK);
    ENSURE(s->settle == 0.25f);
    char *text = pbf_scene_to_json(s);
    ENSURE(text != NULL);
    ENSURE(pbf_scene_parse(text, "back.json", NULL, 0, back, err, sizeof err) == PBF_OK);
    ENSURE(back->settle == 0.25f);
    free(text);
    ENSURE(pbf_scene_parse("{}", "none.json", NULL, 0, s, err, sizeof err) == PBF_OK);
    ENSURE(s->settle == 0.0f);
    snprintf(json, sizeof json, SCENE, -1.0, 0.0, 1);
    ENSURE(pbf_scene_parse(json, "settle.json", NULL, 0, s, err, sizeof err) ==
           PBF_ERR_INVALID_ARG);
    printf("  %s\n", err);
    ENSURE(strstr(err, "settle.json") != NULL && strstr(err, "'fluid.settle'") != NULL);
    free(s);
    free(back);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(settled_column_stays_quiet);
RUN_TEST(starts_in_the_block_at_its_velocity);
RUN_TEST(same_bits_on_any_thread_count);
RUN_TEST(key_round_trips_and_bad_values_name_it);
TEST_MAIN_END
