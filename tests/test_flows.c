/* Flows whose answer is known (docs/physics.md, "What dissipates energy"): two vessels joined at
 * the bottom must level, the first sloshing mode of a tank must keep its period and not lose its
 * amplitude faster than measured, and a splashing free surface must not clump. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"
#include "test.h"
#include "../bench/flows_setup.h"

/* Runs the vessels for `seconds`; returns the mean level difference over the last second and
 * the most negative difference (how far the first swing went past level). */
static int run_vessels(const pbf_world_def *base, double seconds, double *mean_end, double *lowest,
                       double *start) {
    int n = 0;
    pbf_world *w = vessels_create(base, 0.005f, &n);
    ENSURE(w != NULL);
    const double s = 2.0 * 0.005f, volume = s * s * s;
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    ENSURE(x != NULL);
    pbf_world_get_positions(w, x);
    *start = level_difference(x, n, volume);
    const int frames = (int)lround(seconds * 60.0), tail = 60;
    double sum = 0.0;
    *lowest = 0.0;
    for (int f = 1; f <= frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_world_get_positions(w, x);
        double dh = level_difference(x, n, volume);
        if (dh < *lowest) *lowest = dh;
        if (f > frames - tail) sum += dh / tail;
    }
    *mean_end = sum;
    free(x);
    pbf_world_destroy(w);
    return 0;
}

/* The default parameters, at 4 iterations and with error control (0.1 %): the first swing
 * carries the water past level (a fluid, not a packing that holds shear), and over the third
 * second the levels are within 2.5 mm (4 %) of each other. That is the bound at this coarse
 * size, five particles across a leg, where one particle layer is 0.4 mm of level: runs whose
 * starts differ in the last bits of the positions end 0 to 1.6 mm apart. At r = 2.5 mm they end
 * within 0.6 mm (1 %, docs/physics.md). With the paper's s_corr (scorr_deficit 0,
 * scorr_iterations 0) the converged solve stops 18 mm apart and fails here. */
static int joined_vessels_level(void) {
    for (int controlled = 0; controlled < 2; ++controlled) {
        pbf_world_def d = pbf_default_world_def();
        if (controlled) d.solver.target_error = 0.1f;
        double end = 0.0, lowest = 0.0, start = 0.0;
        ENSURE(run_vessels(&d, 3.0, &end, &lowest, &start) == 0);
        printf("  %s: start %.1f mm, first swing to %.1f mm, third second %.2f mm (%.2f %%)\n",
               controlled ? "target 0.1 %" : "4 iterations", 1e3 * start, 1e3 * lowest, 1e3 * end,
               100.0 * fabs(end) / start);
        ENSURE(fabs(start - 0.06) < 1e-3);
        ENSURE(lowest < -0.1 * start);
        ENSURE(fabs(end) <= 0.0025);
    }
    return 0;
}

static int run_wave(const pbf_world_def *base, double periods, wave_track *k) {
    int n = 0;
    double depth = 0.0;
    pbf_world *w = wave_create(base, 0.005f, &n, &depth);
    ENSURE(w != NULL);
    const double s = 2.0 * 0.005f, volume = s * s * s;
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    ENSURE(x != NULL);
    const int frames = (int)ceil(periods * wave_theory_period() * 60.0);
    pbf_world_get_positions(w, x);
    wave_track_start(k, mode_amplitude(x, n, volume, depth));
    for (int f = 1; f <= frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_world_get_positions(w, x);
        wave_track_add(k, f / 60.0, mode_amplitude(x, n, volume, depth));
    }
    free(x);
    pbf_world_destroy(w);
    return 0;
}

/* With the artificial terms off and the solve converged (0.1 %), over three periods: the period
 * within 4 % of linear theory (measured +2.9 % at this size, +1.7 % at r = 2.5 mm) and the
 * amplitude after three periods at least 20 % of the start. These are regression bounds on the
 * measured 26 %: the aim, 50 % after five periods, is not met (0.77–0.80 of the amplitude kept
 * per half swing; docs/physics.md says where the rest goes). */
static int standing_wave(void) {
    const double theory = wave_theory_period();
    pbf_world_def d = pbf_default_world_def();
    d.solver.target_error = 0.1f;
    d.solver.scorr_k = 0.0f;
    d.solver.xsph = 0.0f;
    d.solver.vorticity = 0.0f;
    wave_track r;
    ENSURE(run_wave(&d, 3.5, &r) == 0); /* the crossing at 3.25 periods closes the 6th swing */
    printf("  period %.4f s (theory %.4f s, %+.1f %%), amplitude per half swing:", r.period, theory,
           100.0 * (r.period / theory - 1.0));
    for (int k = 0; k <= r.swings; ++k) printf(" %.2f", r.amp[k] / r.amp[0]);
    printf("\n");
    ENSURE(r.swings >= 6);
    ENSURE(fabs(r.period / theory - 1.0) < 0.04);
    ENSURE(r.amp[6] / r.amp[0] >= 0.20);
    return 0;
}

/* A block of water from the floor's corner to block_max in a domain reaching domain_max (def d
 * otherwise), stepped `frames` frames of 1/60 s: its positions (malloc, *n of them), or NULL on
 * failure, with the message printed. */
static float *block_after(const pbf_world_def *d, pbf_vec3 domain_max, pbf_vec3 block_max,
                          int frames, int *n) {
    pbf_world_def def = *d;
    def.domain_max = domain_max;
    pbf_world *w = flows_world(&def);
    if (w == NULL) return NULL;
    pbf_block_def b = pbf_default_block_def();
    b.max = block_max;
    pbf_status st = pbf_world_add_block(w, &b);
    for (int f = 0; f < frames && st == PBF_OK; ++f) st = pbf_world_step(w, 1.0f / 60.0f);
    float *x = NULL;
    if (st == PBF_OK) {
        *n = pbf_world_particle_count(w);
        x = malloc(sizeof(float) * 3 * (size_t)*n);
        if (x != NULL) pbf_world_get_positions(w, x);
    } else {
        fprintf(stderr, "block_after: %s\n", pbf_world_error(w));
    }
    pbf_world_destroy(w);
    return x;
}

/* ---- clumping at the free surface ----------------------------------------------------------
 * A small dam break (r = 1 cm, 1500 particles) after one second: particles with fewer than 20
 * neighbours (about 32 inside) are at the surface or in spray; their nearest-neighbour
 * distances, in units of the rest spacing. */
static int surface_spacing(const pbf_world_def *base, double *mean, double *below) {
    pbf_world_def d = *base;
    d.particle_radius = 0.01f;
    int n = 0;
    float *x = block_after(&d, (pbf_vec3){0.8f, 0.4f, 0.2f}, (pbf_vec3){0.2f, 0.3f, 0.2f}, 60, &n);
    ENSURE(x != NULL);
    const double s = 2.0 * d.particle_radius, h = d.kernel_scale * d.particle_radius;
    int surface = 0, close = 0;
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
        int count = 0;
        double nearest = 1e30;
        for (int j = 0; j < n; ++j) {
            if (j == i) continue;
            double dx = x[3 * i] - x[3 * j], dy = x[3 * i + 1] - x[3 * j + 1],
                   dz = x[3 * i + 2] - x[3 * j + 2], r2 = dx * dx + dy * dy + dz * dz;
            count += r2 < h * h;
            if (r2 < nearest) nearest = r2;
        }
        if (count >= 20) continue;
        double q = sqrt(nearest) / s;
        ++surface;
        sum += q;
        close += q < 0.7;
    }
    ENSURE(surface > 100);
    *mean = sum / surface;
    *below = (double)close / surface;
    free(x);
    return 0;
}

/* The defaults keep the surface spaced (at most 5 % of surface particles closer than 0.7 s;
 * measured 0.9 %, mean 0.96 s; 1.9 % and 1.03 s with the paper's shape of s_corr, which also
 * pushed the lattice apart); without s_corr it clumps (44 %). */
static int surface_does_not_clump(void) {
    const char *names[] = {"defaults", "no s_corr"};
    for (int c = 0; c < 2; ++c) {
        pbf_world_def d = pbf_default_world_def();
        if (c == 1) d.solver.scorr_k = 0.0f;
        double mean = 0.0, below = 0.0;
        ENSURE(surface_spacing(&d, &mean, &below) == 0);
        printf("  %-24s surface nearest neighbour: mean %.2f s, %.1f %% below 0.7 s\n", names[c],
               mean, 100.0 * below);
        if (c == 0)
            ENSURE(below <= 0.05 && mean >= 0.9);
        else
            ENSURE(below > 0.10);
    }
    return 0;
}

/* ---- s_corr against the time step ----------------------------------------------------------
 * A resting block (r = 1 cm, 0.3 × 0.2 × 0.1 m) with the solve converged to 0.1 %, after 0.5 s:
 * the mean height of the particles above 0.15 m. The paper's s_corr pushed the surface layers
 * apart by a fixed amount per substep, against gravity's g dt², so with a fixed k the surface
 * stood higher the more substeps (5.2 mm higher at 8 substeps than at 3; solver.scorr_ratio
 * made the push follow dt²). s_corr now acts only between particles closer than the rest
 * spacing (docs/physics.md, "s_corr"), and the surface stands at the same height at any
 * substep count, with a fixed k or the ratio. */
static int top_height(const pbf_world_def *base, int substeps, double *top) {
    pbf_world_def d = *base;
    d.particle_radius = 0.01f;
    d.substeps = substeps;
    d.solver.target_error = 0.1f;
    int n = 0;
    float *x = block_after(&d, (pbf_vec3){0.3f, 0.4f, 0.1f}, (pbf_vec3){0.3f, 0.2f, 0.1f}, 30, &n);
    ENSURE(x != NULL);
    double sum = 0.0;
    int count = 0;
    for (int i = 0; i < n; ++i)
        if (x[3 * i + 1] > 0.15f) sum += x[3 * i + 1], ++count;
    ENSURE(count > 0);
    *top = sum / count;
    free(x);
    return 0;
}

static int scorr_independent_of_the_step(void) {
    pbf_world_def d = pbf_default_world_def(); /* s_corr's k = 0.1 */
    double fixed3 = 0.0, fixed8 = 0.0, ratio8 = 0.0;
    ENSURE(top_height(&d, 3, &fixed3) == 0);
    ENSURE(top_height(&d, 8, &fixed8) == 0);
    d.solver.scorr_ratio = 3.3028f; /* k = 0.1 at 3 substeps of 1/60 s with r = 1 cm */
    ENSURE(top_height(&d, 8, &ratio8) == 0);
    printf("  top layers' mean height: k = 0.1 %.2f mm at 3 substeps, %.2f mm at 8; "
           "ratio 3.3 %.2f mm at 8\n",
           1e3 * fixed3, 1e3 * fixed8, 1e3 * ratio8);
    ENSURE(fabs(fixed8 - fixed3) < 0.0015);
    ENSURE(fabs(ratio8 - fixed3) < 0.0015);
    return 0;
}

/* The energy audit: the stages' changes add up to the step's change, the step's end is the next
 * step's start, an inviscid run books nothing to XSPH and vorticity, and the defaults' XSPH
 * takes energy out (a viscosity never adds any). */
static int energy_audit_adds_up(void) {
    for (int artificial = 0; artificial < 2; ++artificial) {
        pbf_world_def d = pbf_default_world_def();
        if (!artificial) d.solver.scorr_k = d.solver.xsph = d.solver.vorticity = 0.0f;
        int n = 0;
        double depth = 0.0;
        pbf_world *w = wave_create(&d, 0.01f, &n, &depth);
        ENSURE(w != NULL);
        ENSURE(pbf_world_set_energy_audit(w, 1) == PBF_OK);
        double last_end = 0.0, xsph = 0.0, vort = 0.0;
        for (int f = 0; f < 20; ++f) {
            ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
            pbf_energy_audit a = pbf_world_get_energy_audit(w);
            double sum = 0.0;
            for (int k = 0; k < PBF_ENERGY_COUNT; ++k) sum += a.change[k];
            ENSURE_NEAR(a.end - a.start, sum, 1e-9 * fabs(a.start));
            if (f > 0) ENSURE_NEAR(a.start, last_end, 1e-6 * fabs(a.start));
            last_end = a.end;
            xsph += a.change[PBF_ENERGY_XSPH];
            vort += a.change[PBF_ENERGY_VORTICITY];
            ENSURE(a.change[PBF_ENERGY_TOOL] == 0.0);
        }
        printf("  artificial terms %s: XSPH %+.2e J, vorticity %+.2e J over 20 frames\n",
               artificial ? "on" : "off", xsph, vort);
        if (artificial)
            ENSURE(xsph < 0.0);
        else
            ENSURE(xsph == 0.0 && vort == 0.0);
        pbf_world_destroy(w);
    }
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(energy_audit_adds_up);
RUN_TEST(joined_vessels_level);
RUN_TEST(standing_wave);
RUN_TEST(surface_does_not_clump);
RUN_TEST(scorr_independent_of_the_step);
TEST_MAIN_END
