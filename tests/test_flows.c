/* Flows whose answer is known (docs/physics.md, "What dissipates energy"): two vessels joined at
 * the bottom must level, the first sloshing mode of a tank must keep its period and not lose its
 * amplitude faster than measured, and a splashing free surface must not clump. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"
#include "test.h"

#define PI 3.14159265358979323846

/* Columns of particles on the rest lattice (spacing s = 2r, centres at (i + 1/2) s) from the
 * floor up to height top(x), over [0, lx] × [0, lz]. */
typedef double (*height_fn)(double x);

static int add_columns(pbf_world *w, double s, double lx, double lz, height_fn top) {
    int nx = (int)lround(lx / s), nz = (int)lround(lz / s), n = 0, cap = nx * nz * 64;
    float *pos = malloc(sizeof(float) * 3 * (size_t)cap);
    if (pos == NULL) return -1;
    for (int i = 0; i < nx; ++i) {
        double x = (i + 0.5) * s;
        int ny = (int)lround(top(x) / s);
        for (int j = 0; j < ny && n < cap; ++j)
            for (int k = 0; k < nz && n < cap; ++k, ++n) {
                pos[3 * n] = (float)x;
                pos[3 * n + 1] = (float)((j + 0.5) * s);
                pos[3 * n + 2] = (float)((k + 0.5) * s);
            }
    }
    pbf_status st = pbf_world_add_particles(w, n, pos, NULL);
    free(pos);
    return st == PBF_OK ? n : -1;
}

static pbf_world *make_world(const pbf_world_def *d) {
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(d, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "create: %s\n", err);
        return NULL;
    }
    return w;
}

/* ---- joined vessels ------------------------------------------------------------------------
 * Two 5 cm legs (x in [0, 0.05] and [0.10, 0.15], 5 cm deep) joined by a channel below
 * y = 0.05 under a dividing block; levels 0.18 and 0.12 m (60 mm apart) at rest lattice. */

#define LEG 0.05
static double vessel_top(double x) { return x < LEG ? 0.18 : x > 2 * LEG ? 0.12 : LEG; }

/* Level difference left − right, from the volume above the channel in each leg. */
static double level_difference(const float *x, int n, double volume) {
    double left = 0.0, right = 0.0;
    for (int i = 0; i < n; ++i) {
        if (x[3 * i + 1] < LEG) continue;
        if (x[3 * i] < 1.5 * LEG)
            left += volume;
        else
            right += volume;
    }
    return (left - right) / (LEG * LEG);
}

/* Runs the vessels for `seconds`; returns the mean level difference over the last second and
 * the most negative difference (how far the first swing went past level). */
static int run_vessels(const pbf_world_def *base, double seconds, double *mean_end,
                       double *lowest, double *start) {
    pbf_world_def d = *base;
    d.particle_radius = 0.005f;
    d.domain_max = (pbf_vec3){(float)(3 * LEG), 0.25f, (float)LEG};
    pbf_world *w = make_world(&d);
    ENSURE(w != NULL);
    pbf_collider_def c = pbf_default_collider_def();
    c.type = PBF_COLLIDER_BOX;
    c.center = (pbf_vec3){(float)(1.5 * LEG), 0.15f, (float)(LEG / 2)};
    c.half_extents = (pbf_vec3){(float)(LEG / 2), 0.10f, (float)LEG};
    ENSURE(pbf_world_add_collider(w, &c) == PBF_OK);
    const double s = 2.0 * d.particle_radius, volume = s * s * s;
    int n = add_columns(w, s, 3 * LEG, LEG, vessel_top);
    ENSURE(n > 0);
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
               controlled ? "target 0.1 %" : "4 iterations", 1e3 * start, 1e3 * lowest,
               1e3 * end, 100.0 * fabs(end) / start);
        ENSURE(fabs(start - 0.06) < 1e-3);
        ENSURE(lowest < -0.1 * start);
        ENSURE(fabs(end) <= 0.0025);
    }
    return 0;
}

/* ---- standing wave -------------------------------------------------------------------------
 * The first sloshing mode of a 0.4 m tank 0.2 m deep (4 particles thick in z), started from
 * h(x) = H + A cos(πx/L), A = 2 cm. Linear theory: T = 2π/√(g k tanh(k H)), k = π/L. */

#define TANK_L 0.4
#define TANK_H 0.2
#define WAVE_A 0.02
static double wave_top(double x) { return TANK_H + WAVE_A * cos(PI * x / TANK_L); }

/* The mode's amplitude: the column heights in 20 bins projected on cos(πx/L). */
static double mode_amplitude(const float *x, int n, double volume, double depth) {
    enum { BINS = 20 };
    double h[BINS] = {0}, bw = TANK_L / BINS, a = 0.0;
    for (int i = 0; i < n; ++i) {
        int b = (int)(x[3 * i] / bw);
        b = b < 0 ? 0 : b >= BINS ? BINS - 1 : b;
        h[b] += volume / (bw * depth);
    }
    for (int b = 0; b < BINS; ++b) a += h[b] * cos(PI * (b + 0.5) * bw / TANK_L) * bw;
    return a * 2.0 / TANK_L;
}

typedef struct wave_result {
    double period;     /* mean of the measured half periods, × 2 */
    double amp[12];    /* |a| at the start, then the peak of half swing k (at k T/2) */
    int swings;
} wave_result;

static int run_wave(const pbf_world_def *base, double periods, wave_result *out) {
    pbf_world_def d = *base;
    d.particle_radius = 0.005f;
    const double s = 2.0 * d.particle_radius, depth = 4 * s, volume = s * s * s;
    d.domain_max = (pbf_vec3){(float)TANK_L, (float)(2 * TANK_H), (float)depth};
    pbf_world *w = make_world(&d);
    ENSURE(w != NULL);
    int n = add_columns(w, s, TANK_L, depth, wave_top);
    ENSURE(n > 0);
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    ENSURE(x != NULL);
    const double theory = 2.0 * PI / sqrt(9.81 * PI / TANK_L * tanh(PI / TANK_L * TANK_H));
    const int frames = (int)ceil(periods * theory * 60.0);
    pbf_world_get_positions(w, x);
    double a_prev = mode_amplitude(x, n, volume, depth), t_cross = -1.0, first = -1.0;
    double peak = 0.0;
    int crossings = 0;
    memset(out, 0, sizeof *out);
    out->amp[0] = fabs(a_prev);
    for (int f = 1; f <= frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_world_get_positions(w, x);
        double a = mode_amplitude(x, n, volume, depth), t = f / 60.0;
        if ((a > 0.0) != (a_prev > 0.0)) {
            double tc = (t - 1.0 / 60.0) + a_prev / (a_prev - a) / 60.0;
            if (t_cross < 0.0 || tc - t_cross > 0.1 * theory) { /* not a flicker near zero */
                if (crossings > 0 && crossings <= 11) out->amp[crossings] = peak;
                if (first < 0.0) first = tc;
                t_cross = tc;
                ++crossings;
                peak = 0.0;
            }
        }
        if (fabs(a) > peak) peak = fabs(a);
        a_prev = a;
    }
    out->swings = crossings - 1 < 11 ? crossings - 1 : 11;
    out->period = crossings > 1 ? 2.0 * (t_cross - first) / (crossings - 1) : 0.0;
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
    const double theory = 2.0 * PI / sqrt(9.81 * PI / TANK_L * tanh(PI / TANK_L * TANK_H));
    pbf_world_def d = pbf_default_world_def();
    d.solver.target_error = 0.1f;
    d.solver.scorr_k = 0.0f;
    d.solver.xsph = 0.0f;
    d.solver.vorticity = 0.0f;
    wave_result r;
    ENSURE(run_wave(&d, 3.5, &r) == 0); /* the crossing at 3.25 periods closes the 6th swing */
    printf("  period %.4f s (theory %.4f s, %+.1f %%), amplitude per half swing:", r.period,
           theory, 100.0 * (r.period / theory - 1.0));
    for (int k = 0; k <= r.swings; ++k) printf(" %.2f", r.amp[k] / r.amp[0]);
    printf("\n");
    ENSURE(r.swings >= 6);
    ENSURE(fabs(r.period / theory - 1.0) < 0.04);
    ENSURE(r.amp[6] / r.amp[0] >= 0.20);
    return 0;
}

/* ---- clumping at the free surface ----------------------------------------------------------
 * A small dam break (r = 1 cm, 1500 particles) after one second: particles with fewer than 20
 * neighbours (about 32 inside) are at the surface or in spray; their nearest-neighbour
 * distances, in units of the rest spacing. */
static int surface_spacing(const pbf_world_def *base, double *mean, double *below) {
    pbf_world_def d = *base;
    d.particle_radius = 0.01f;
    d.domain_max = (pbf_vec3){0.8f, 0.4f, 0.2f};
    pbf_world *w = make_world(&d);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.2f, 0.3f, 0.2f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    for (int f = 0; f < 60; ++f) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    const int n = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    ENSURE(x != NULL);
    pbf_world_get_positions(w, x);
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
    pbf_world_destroy(w);
    return 0;
}

/* The defaults keep the surface spaced (at most 5 % of surface particles closer than 0.7 s;
 * measured 1.9 %, and 1.5 % with the solve converged to 0.1 %); without s_corr it clumps
 * (44 %). */
static int surface_does_not_clump(void) {
    const char *names[] = {"defaults", "no s_corr"};
    for (int c = 0; c < 2; ++c) {
        pbf_world_def d = pbf_default_world_def();
        if (c == 1) d.solver.scorr_k = 0.0f;
        double mean = 0.0, below = 0.0;
        ENSURE(surface_spacing(&d, &mean, &below) == 0);
        printf("  %-24s surface nearest neighbour: mean %.2f s, %.1f %% below 0.7 s\n", names[c],
               mean, 100.0 * below);
        if (c == 0) ENSURE(below <= 0.05 && mean >= 0.9);
        else ENSURE(below > 0.10);
    }
    return 0;
}

TEST_MAIN_BEGIN
    RUN_TEST(joined_vessels_level);
    RUN_TEST(standing_wave);
    RUN_TEST(surface_does_not_clump);
TEST_MAIN_END
