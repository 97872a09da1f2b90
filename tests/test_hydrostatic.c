/* The hydrostatic check (docs/validation.md): a resting column in a closed tank.
 *  - The floor force probe (constraint reaction, src/modules/probes.c) carries the fluid's weight
 * within
 *    2 %, and a patch in the middle of the floor reads ρ0 g H.
 *  - The side wall carries the hydrostatic load ½ ρ0 g H² per unit width.
 *  - The height probes find the free surface where the mass at rest density puts it (the
 *    initial rest-lattice height H0) within the mean density error the solver leaves, which is
 *    itself under the 1 % that docs/physics.md states for the defaults, plus half a radius for
 *    the top layer, which sinks until its half neighbourhood sums to ρ0. The surface is the mean
 *    of 9 height probes over the middle of the tank: one probe reads the highest of a few
 *    particles in the unconstrained top layer, whose jitter is about a quarter radius (a single
 *    central probe read −0.98 % to +0.23 % in builds whose sums differed in the last bits).
 *  - The column settles (the solver's resting-column check): the mean density error of the
 *    last second under 1 %, and its kinetic energy under a tenth of the start-up peak and under
 *    3e-4 mgh (m the fluid's mass, h = H0/2 the height of its centre of mass). The column keeps
 *    a jitter of the 4-iteration solve (1.4e-4 mgh) since s_corr acts only below rest density
 *    and between particles closer than the rest spacing (it stiffened the bulk: 0.75e-4 mgh
 *    with the paper's s_corr everywhere, and it held shear, docs/physics.md); without s_corr
 *    at all the jitter is 8.7e-4 mgh.
 * Averages are over the last second of 3 s, after the start-up oscillation has settled. Under
 * the sanitizers (test_sanitized()) the same world and probes run 0.5 s, averaged over the last
 * 1/6 s: the loads, the surface and the density error are within their bounds by then (floor
 * +0.03 %, middle -1.4 %, wall -5.2 %, surface +0.07 %, density error 0.82 %), the kinetic energy
 * is not yet settled and is checked in the release build only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/probes.h"
#include "test.h"

#define WIDTH 0.2f
#define DEPTH 0.2f
#define FILL 0.4f

enum { FLOOR, FLOOR_MIDDLE, WALL_X0, HEIGHT, HEIGHTS = 9, PROBES = HEIGHT + HEIGHTS };

static int build(pbf_world **out, float radius) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = radius;
    d.threads = 1; /* 2000 particles: threads only add barrier waits on a busy machine */
    d.domain_max = (pbf_vec3){WIDTH, 0.6f, DEPTH};
    pbf_world *w = test_world_create(&d);
    if (w == NULL) return 1;
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){WIDTH, FILL, DEPTH};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);

    pbf_probe_def p[PROBES];
    for (int i = 0; i < PROBES; ++i) p[i] = pbf_default_probe_def();
    p[FLOOR].type = PBF_PROBE_FORCE; /* the whole floor */
    snprintf(p[FLOOR].name, sizeof p[FLOOR].name, "floor");
    p[FLOOR].position = (pbf_vec3){0.5f * WIDTH, 0.0f, 0.5f * DEPTH};
    p[FLOOR].direction = PBF_DIR_Y_POS;
    p[FLOOR].size = (pbf_vec3){WIDTH, 0.0f, DEPTH};
    p[FLOOR_MIDDLE] = p[FLOOR]; /* the middle half of each side, away from the wall edges */
    snprintf(p[FLOOR_MIDDLE].name, sizeof p[FLOOR_MIDDLE].name, "middle");
    p[FLOOR_MIDDLE].size = (pbf_vec3){0.5f * WIDTH, 0.0f, 0.5f * DEPTH};
    p[WALL_X0].type = PBF_PROBE_FORCE; /* the wall x = 0 up to above the surface */
    snprintf(p[WALL_X0].name, sizeof p[WALL_X0].name, "wall");
    p[WALL_X0].position = (pbf_vec3){0.0f, 0.25f, 0.5f * DEPTH};
    p[WALL_X0].direction = PBF_DIR_X_POS;
    p[WALL_X0].size = (pbf_vec3){0.0f, 0.5f, DEPTH};
    for (int k = 0; k < HEIGHTS; ++k) { /* a 3 × 3 grid at 30, 50 and 70 % of each side */
        pbf_probe_def *q = &p[HEIGHT + k];
        q->type = PBF_PROBE_HEIGHT;
        snprintf(q->name, sizeof q->name, "H%d", k);
        q->position = (pbf_vec3){(0.3f + 0.2f * (float)(k % 3)) * WIDTH, 0.0f,
                                 (0.3f + 0.2f * (float)(k / 3)) * DEPTH};
        q->radius = 2.0f * radius;
        q->max_gap = 4.0f * radius;
    }
    if (pbf_world_set_probes(w, p, PROBES) != PBF_OK) {
        fprintf(stderr, "probes: %s\n", pbf_world_error(w));
        pbf_world_destroy(w);
        return 1;
    }
    *out = w;
    return 0;
}

static int resting_column_floor_carries_its_weight(void) {
    /* r = 1 cm, the resolution of docs/physics.md's stated error; PBF_HYDROSTATIC_RADIUS runs
     * the same check at another radius (docs/validation.md quotes r = 5 mm) */
    const char *env = getenv("PBF_HYDROSTATIC_RADIUS");
    const float r = env != NULL && atof(env) > 0.0 ? (float)atof(env) : 0.01f;
    pbf_world *w = NULL;
    ENSURE(build(&w, r) == 0);
    const double rho0 = 1000.0, g = 9.81;
    const int n = pbf_world_particle_count(w);
    const double weight = (double)pbf_world_particle_mass(w) * n * g;
    /* The rest lattice is the fluid at ρ0 (mass calibration, docs/physics.md), so the column
     * starts at the height of its block and the fluid's volume at rest is WIDTH · DEPTH · H0. */
    const double h0 = FILL;
    double floor_f = 0.0, middle_p = 0.0, wall_f = 0.0, height = 0.0, err = 0.0;
    double ke_early = 0.0, ke_late = 0.0;
    const int full = !test_sanitized(), frames = full ? 180 : 30, last = full ? 60 : 10;
    for (int f = 0; f < frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        const double ke = pbf_world_get_stats(w).kinetic_energy;
        if (f < 30) ke_early = ke > ke_early ? ke : ke_early;
        if (f < frames - last) continue;
        ke_late += ke / last;
        pbf_probe_sample s[PROBES];
        ENSURE(pbf_world_sample_probes(w, s) == PBF_OK);
        floor_f += s[FLOOR].value / last;
        middle_p += s[FLOOR_MIDDLE].pressure / last;
        wall_f += s[WALL_X0].value / last;
        for (int k = 0; k < HEIGHTS; ++k) height += s[HEIGHT + k].value / (HEIGHTS * last);
        err += pbf_world_get_profile(w).avg_density_error / (double)last;
    }
    const double wall_expected = 0.5 * rho0 * g * height * height * DEPTH;
    printf("  %d particles, weight %.4f N: floor force %.4f N (%+.3f %%)\n", n, weight, floor_f,
           100.0 * (floor_f / weight - 1.0));
    printf("  middle of the floor %.1f Pa, rho0 g H = %.1f Pa (%+.2f %%)\n", middle_p,
           rho0 * g * height, 100.0 * (middle_p / (rho0 * g * height) - 1.0));
    printf("  wall x = 0: %.4f N, 1/2 rho0 g H^2 D = %.4f N (%+.2f %%)\n", wall_f, wall_expected,
           100.0 * (wall_f / wall_expected - 1.0));
    const double mgh = weight * 0.5 * h0; /* the centre of mass at half the column's height */
    printf("  last %.2f s: KE %.3g J (early peak %.3g J, mgh %.3g J)\n", last / 60.0, ke_late,
           ke_early, mgh);
    printf("  surface %.5f m (mean of %d probes), at rest density %.5f m (%+.3f %%); mean "
           "density error %.3f %%\n",
           height, HEIGHTS, h0, 100.0 * (height / h0 - 1.0), 100.0 * err);
    ENSURE(fabs(floor_f / weight - 1.0) < 0.02); /* within 2 % */
    /* The stated density error (docs/physics.md: < 1 % with the defaults), and the surface
     * within that error, plus half a particle radius, of where the mass at rest density puts
     * it. The half radius is the top layer's: it has half a neighbourhood, so under gravity it
     * sinks until its kernel sum reaches ρ0 (measured: 1.33 % low with a density error of
     * 0.83 %, r/2 is 1.25 % of H0). s_corr's old shape held it up by pushing every surface pair
     * apart, lattice neighbours included, and the same push tore free surfaces apart
     * (docs/physics.md, "s_corr"). */
    ENSURE(err < 0.01);
    ENSURE(fabs(height / h0 - 1.0) <= err + 0.5 * r / h0);
    ENSURE(fabs(middle_p / (rho0 * g * height) - 1.0) < 0.05);
    ENSURE(fabs(wall_f / wall_expected - 1.0) < 0.10);
    if (full) {
        ENSURE(ke_late < 0.1 * ke_early);
        ENSURE(ke_late < 3e-4 * mgh);
    }
    pbf_world_destroy(w);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(resting_column_floor_carries_its_weight);
TEST_MAIN_END
