/* The Wendland C2 kernel pair (world def kernel PBF_KERNEL_WENDLAND, scene key fluid.kernel;
 * docs/physics.md, "The Wendland C2 pair"). It checks the pair's math (the walls' closed forms
 * and quadrature against sums over ghost lattices), its scene keys and the CUDA backend's
 * refusal, and the three flows the pair is for: with h = 5r, plain Jacobi, a converged
 * solve and the walls' clearance 0.1 r, a tank at rest stays at rest, the standing wave meets
 * its bar (docs/physics.md, "What dissipates energy"), and the joined vessels level. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/flows_setup.h"
#include "kernels.h"
#include "pbf/checkpoint.h"
#include "pbf/features.h"
#include "pbf/pbf.h"
#include "pbf/scene.h"
#include "resume_check.h"
#include "test.h"

static pbf_params params_for(float r, float scale) {
    pbf_params p;
    memset(&p, 0, sizeof p);
    double h = scale * r;
    p.h = (float)h;
    p.h2 = (float)(h * h);
    p.kernel = 1;
    p.poly6_k = (float)(21.0 / (2.0 * PI * h * h * h));
    p.spiky_k = (float)(-210.0 / (PI * h * h * h * h * h));
    p.radius = r;
    return p;
}

/* A sheet of ghosts (spacing s = 2r) at distance z, and a line of them at distance ρ, summed
 * point by point on a lattice 16 times finer (each point weighted 1/16² or 1/16 of a ghost),
 * against pbf_ghost_plane and pbf_ghost_line. */
static int wall_sums_match_lattice(void) {
    const float r = 0.005f;
    pbf_params p = params_for(r, 5.0f);
    const double s = 2.0 * r, f = s / 16.0;
    const int m = (int)ceil(p.h / f) + 1;
    double worst_w = 0.0, worst_g = 0.0;
    for (int k = 0; k < 6; ++k) {
        float z = (0.2f + 0.9f * (float)k) * r; /* 0.2 r .. 4.7 r, inside h = 5r */
        double w = 0.0, g = 0.0;
        for (int a = -m; a <= m; ++a)
            for (int b = -m; b <= m; ++b) {
                float r2 = (float)((a * f) * (a * f) + (b * f) * (b * f) + (double)z * z), gm;
                w += pbf_pair_w(r2, &p) / 256.0;
                g += pbf_spiky_factor(r2, &p, &gm) * z / 256.0;
            }
        float ws = 0.0f;
        pbf_v3 gs = v3(0.0f, 0.0f, 0.0f);
        pbf_ghost_plane(z, v3(0.0f, 0.0f, 1.0f), &p, &ws, &gs);
        worst_w = fmax(worst_w, fabs(ws - w) * s * s * s);
        worst_g = fmax(worst_g, fabs(gs.z - g) * s * s * s * p.h);
    }
    for (int k = 0; k < 6; ++k) {
        float rho = (0.2f + 0.9f * (float)k) * r;
        double w = 0.0, g = 0.0;
        for (int a = -m; a <= m; ++a) {
            float r2 = (float)((a * f) * (a * f) + (double)rho * rho), gm;
            w += pbf_pair_w(r2, &p) / 16.0;
            g += pbf_spiky_factor(r2, &p, &gm) * rho / 16.0;
        }
        float ws = 0.0f;
        pbf_v3 gs = v3(0.0f, 0.0f, 0.0f);
        pbf_ghost_line(v3(rho, 0.0f, 0.0f), 1.0f, &p, &ws, &gs);
        worst_w = fmax(worst_w, fabs(ws - w) * s * s * s);
        worst_g = fmax(worst_g, fabs(gs.x - g) * s * s * s * p.h);
    }
    /* in units of the rest lattice's kernel sum, about 1/s³, and of 1/(s³ h) for the gradient */
    printf("  worst difference: density %.2e (1/s³), gradient %.2e (1/(s³ h))\n", worst_w, worst_g);
    ENSURE(worst_w < 1e-4);
    ENSURE(worst_g < 1e-4);
    return 0;
}

/* The solver for the flows: h = 5r, plain Jacobi to `target` %, no artificial terms, the domain
 * walls' collision distance 0.1 r (docs/notes/physics_log.md, "The walls' collision projection"). */
static pbf_world_def consistent_def(int threads, int substeps, float target) {
    pbf_world_def d = pbf_default_world_def();
    d.kernel = PBF_KERNEL_WENDLAND;
    d.kernel_scale = 5.0f;
    d.substeps = substeps;
    d.solver.target_error = target;
    d.solver.chebyshev = 0;
    d.solver.scorr_k = 0.0f;
    d.solver.xsph = 0.0f;
    d.solver.vorticity = 0.0f;
    d.wall_clearance = 0.1f;
    d.threads = threads;
    return d;
}

/* The table lets the pair run on the CUDA backend (its parity test, tests/test_cuda.c's
 * wendland_matches_cpu, passed on an H200); every feature runs with it on the CPU
 * (tests/test_features.c, test_wendland_features.c), so a scene with the pair and surface
 * tension loads; a misspelt pair is refused naming the key. */
static int scene_keys(void) {
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_feature_check(PBF_FEATURE_WENDLAND, PBF_COLUMN_CUDA, err, sizeof err) == PBF_OK);
    pbf_scene sc;
    const char *json = "{\"fluid\": {\"kernel\": \"wendland\", \"surface_tension\": 0.07}}";
    ENSURE(pbf_scene_parse(json, "k.json", NULL, 0, &sc, err, sizeof err) == PBF_OK);
    ENSURE(sc.world.kernel == PBF_KERNEL_WENDLAND && sc.world.material.surface_tension == 0.07f);
    json = "{\"fluid\": {\"kernel\": \"wendlnd\"}}";
    ENSURE(pbf_scene_parse(json, "k.json", NULL, 0, &sc, err, sizeof err) != PBF_OK);
    printf("  %s\n", err);
    ENSURE(strstr(err, "fluid.kernel") != NULL);
    json = "{\"fluid\": {\"kernel\": \"wendland\"}, \"domain\": {\"clearance\": 0.1}}";
    ENSURE(pbf_scene_parse(json, "k.json", NULL, 0, &sc, err, sizeof err) == PBF_OK);
    ENSURE(sc.world.kernel == PBF_KERNEL_WENDLAND && sc.world.wall_clearance == 0.1f);
    return 0;
}

/* The checks of the file for the test below: the pair and the clearance, the other pair
 * refused. */
static int pair_in_def(const pbf_checkpoint *ck) {
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_checkpoint_def(ck)->kernel == PBF_KERNEL_WENDLAND &&
           pbf_checkpoint_def(ck)->wall_clearance == 0.1f);
    pbf_world_def other = *pbf_checkpoint_def(ck); /* the other pair: other particles */
    other.kernel = PBF_KERNEL_PAPER;
    pbf_world *o = NULL;
    ENSURE(pbf_checkpoint_create_world(ck, &other, &o, err, sizeof err) != PBF_OK && o == NULL);
    printf("  %s\n", err);
    ENSURE(strstr(err, "kernel") != NULL);
    return 0;
}

/* A checkpoint keeps the pair and the walls' clearance, a run resumed from it is bit-identical
 * to one that went on, and resuming it with the other pair is refused (the particles' mass is
 * calibrated on the pair). */
static int checkpoint_resumes_bit_identical(void) {
    pbf_world_def d = consistent_def(2, 4, 0.1f);
    int n = 0;
    double depth = 0.0;
    /* the wave's tank at r = 1 cm (a quarter of the particles at the flows' 5 mm): resuming is
     * bit-identical at any size; under the sanitizers 3 frames each side */
    pbf_world *w = wave_create(&d, 0.01f, &n, &depth);
    ENSURE(w != NULL);
    const int frames = test_sanitized() ? 3 : 10;
    for (int f = 0; f < frames; ++f) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    ENSURE(resume_check(w, frames, 1.0f / 60.0f, "test_wendland.pbfck", pair_in_def) == 0);
    pbf_world_destroy(w);
    return 0;
}

/* The tank at rest (a flat surface) for two periods, at 4 substeps converged to 0.1 % and at
 * 16 converged to 0.02 % (the standing wave's bar below): measured 1.5·10⁻⁴ and 4.4·10⁻⁴ J/kg
 * (0.017 and 0.030 m/s rms). The paper pair heats the same tank to 4.8·10⁻³ and 3.6·10⁻²
 * (docs/physics.md); the bounds, 5·10⁻⁴ and 10⁻³, fail a pair that heats. Under the sanitizers
 * (PBF_SANITIZED, tests/test.h) each run is a tenth of a period long, and the bounds, which
 * need the settled tank, are left to the release build; so are the wave's and the vessels'. */
static int tank_stays_at_rest(void) {
    const double a0 = wave_a;
    const int substeps[2] = {4, 16};
    const float target[2] = {0.1f, 0.02f};
    const double bound[2] = {5e-4, 1e-3};
    wave_a = 1e-6;
    for (int k = 0; k < 2; ++k) {
        pbf_world_def d = consistent_def(2, substeps[k], target[k]);
        wave_result res;
        const double periods = test_sanitized() ? 0.1 : 2.0;
        ENSURE(wave_follow(&d, 0.005f, wave_frames(periods), 0, 0, &res) == 0);
        const double ke = res.ke;
        printf("  %2d substeps, %.2f %%: %.2e J/kg (%.3f m/s rms) after %.2f s\n", substeps[k],
               target[k], ke, sqrt(2.0 * ke), periods * wave_theory_period());
        ENSURE(test_sanitized() || ke < bound[k]);
    }
    wave_a = a0;
    return 0;
}

/* The bar of docs/physics.md's standing wave, with the artificial terms off and a converged
 * solve: the period within 2 % of linear theory and at least half the amplitude left after
 * five periods. At r = 5 mm it takes 16 substeps and a 0.02 % solve: measured +0.2 % and 0.53
 * (0.935 per half swing). 1 and 2 threads give the same bits over half a period (a tenth under
 * the sanitizers, which end the test there): the 2-thread state is the long run's at that frame
 * (the same def and frames), so the half period is not stepped twice. */
static int standing_wave_meets_the_bar(void) {
    const double theory = wave_theory_period();
    pbf_world_def d1 = consistent_def(1, 16, 0.02f), d2 = consistent_def(2, 16, 0.02f);
    wave_result one, two;
    const double first = test_sanitized() ? 0.1 : 0.5;
    ENSURE(wave_follow(&d1, 0.005f, wave_frames(first), 0, 0, &one) == 0);
    /* to 5.5 periods: the crossing a quarter period after the 10th half swing closes it */
    const double periods = test_sanitized() ? first : 5.5;
    ENSURE(wave_follow(&d2, 0.005f, wave_frames(periods), wave_frames(first), 0, &two) == 0);
    printf("  1 and 2 threads after %.2f s: %016llx %016llx\n", first * theory,
           (unsigned long long)one.hash, (unsigned long long)two.mid_hash);
    ENSURE(one.hash == two.mid_hash);
    const wave_track k = two.k;
    if (test_sanitized()) return 0;
    printf("  period %.4f s (theory %.4f s, %+.1f %%), amplitude per half swing:", k.period, theory,
           100.0 * (k.period / theory - 1.0));
    for (int j = 0; j <= k.swings; ++j) printf(" %.3f", k.amp[j] / k.amp[0]);
    printf("\n");
    ENSURE(k.swings >= 10);
    ENSURE(fabs(k.period / theory - 1.0) < 0.02);
    ENSURE(k.amp[10] / k.amp[0] >= 0.5);
    return 0;
}

/* The joined vessels (bench/flows_setup.h), 4 substeps, 0.1 %: the first swing carries the
 * water past level by more than half the start (measured 0.67; 0.50 with the walls'
 * clearance 1) and over the third second the levels are within 0.6 mm (1 % of the 60 mm
 * start; measured 0.2 mm). */
static int joined_vessels_level(void) {
    int n = 0;
    pbf_world_def d = consistent_def(2, 4, 0.1f);
    pbf_world *w = vessels_create(&d, 0.005f, &n);
    ENSURE(w != NULL);
    const double s = 0.01, volume = s * s * s;
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    ENSURE(x != NULL);
    pbf_world_get_positions(w, x);
    const double start = level_difference(x, n, volume);
    double lowest = 0.0, tail = 0.0;
    const int frames = test_sanitized() ? 10 : 180;
    for (int f = 1; f <= frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_world_get_positions(w, x);
        double dh = level_difference(x, n, volume);
        lowest = dh < lowest ? dh : lowest;
        if (f > 120) tail += dh / 60.0;
    }
    printf("  start %.1f mm, first swing to %.1f mm, third second %.2f mm\n", 1e3 * start,
           1e3 * lowest, 1e3 * tail);
    ENSURE(test_sanitized() || lowest < -0.5 * start);
    ENSURE(test_sanitized() || fabs(tail) <= 0.0006);
    free(x);
    pbf_world_destroy(w);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(wall_sums_match_lattice);
RUN_TEST(scene_keys);
RUN_TEST(checkpoint_resumes_bit_identical);
RUN_TEST(tank_stays_at_rest);
RUN_TEST(standing_wave_meets_the_bar);
RUN_TEST(joined_vessels_level);
TEST_MAIN_END
