/* Free surfaces hold together (docs/physics.md, "s_corr: where it acts, and why"): a block of
 * water without gravity, and a block falling freely, keep their shape and their density with
 * the default settings until they touch something. Nothing acts on either but the solver's own
 * terms, so any growth is the tensile-instability term s_corr pushing the surface apart (it did:
 * the zero-gravity block grew 2.6x in a second). The companion check that s_corr still keeps a
 * splashing surface from clumping is test_flows' surface_does_not_clump. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"
#include "test.h"

typedef struct shape {
    double lo[3], hi[3]; /* 1 % and 99 % quantiles of x, y, z */
    double density; /* mean of the particles' densities */
    double centre_y; /* mean height */
    double speed_spread; /* rms of the velocities about their mean (m/s) */
} shape;

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The mean density of the positions as they stand, summed by the world's density kernel (the
 * paper's poly6, or Wendland C2 W = 21/(2π h³) (1 − q)⁴ (1 + 4q)) with its mass and h: the start's
 * reference, before any step has computed the particles' densities. */
static double lattice_density(const pbf_world *w) {
    int n = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    if (x == NULL) return 0.0;
    pbf_world_get_positions(w, x);
    const double h = pbf_world_kernel_radius(w), pi = 3.14159265358979;
    const int wendland = pbf_world_get_def(w)->kernel == PBF_KERNEL_WENDLAND;
    const double k = wendland ? 21.0 / (2.0 * pi * h * h * h) : 315.0 / (64.0 * pi * pow(h, 9));
    double sum = 0.0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double dx = x[3 * i] - x[3 * j], dy = x[3 * i + 1] - x[3 * j + 1],
                   dz = x[3 * i + 2] - x[3 * j + 2], r2 = dx * dx + dy * dy + dz * dz,
                   q = h * h - r2;
            if (q <= 0.0) continue;
            if (wendland) {
                double u = sqrt(r2) / h, a = 1.0 - u;
                sum += k * a * a * a * a * (1.0 + 4.0 * u);
            } else {
                sum += k * q * q * q;
            }
        }
    free(x);
    return pbf_world_particle_mass(w) * sum / n;
}

static int measure(const pbf_world *w, shape *out) {
    int n = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n), *v = malloc(sizeof(float) * 3 * (size_t)n);
    float *a = malloc(sizeof(float) * (size_t)n);
    ENSURE(x != NULL && v != NULL && a != NULL);
    pbf_world_get_positions(w, x);
    pbf_world_get_velocities(w, v);
    for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < n; ++i) a[i] = x[3 * i + k];
        qsort(a, (size_t)n, sizeof *a, cmp_float);
        out->lo[k] = a[(int)lround(0.01 * (n - 1))];
        out->hi[k] = a[(int)lround(0.99 * (n - 1))];
    }
    pbf_world_get_densities(w, a);
    double rho = 0.0, cy = 0.0, mv[3] = {0.0, 0.0, 0.0}, spread = 0.0;
    for (int i = 0; i < n; ++i) {
        rho += a[i];
        cy += x[3 * i + 1];
        for (int k = 0; k < 3; ++k) mv[k] += v[3 * i + k] / n;
    }
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) spread += (v[3 * i + k] - mv[k]) * (v[3 * i + k] - mv[k]);
    out->density = rho / n;
    out->centre_y = cy / n;
    out->speed_spread = sqrt(spread / n);
    free(x), free(v), free(a);
    return 0;
}

/* A cube of side `side` (r = 1 cm) on the rest lattice, its lower corner at (0.2, y0, 0.2) in a
 * 1.2 m box, under gravity g (m/s², along −y), stepped `frames` frames of 1/60 s with the
 * default solver. At every frame: each 1–99 % extent within 5 % of the start's, the mean
 * density within 3 % of the start's (the lattice's, surface included), the centre of mass
 * where free fall puts it (within 1 mm), and no motion inside the block (rms velocity about the
 * mean below 2 cm/s). */
static int block_holds(const char *name, double g, double y0, double side, int frames) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = 0.01f;
    d.gravity = (pbf_vec3){0.0f, (float)-g, 0.0f};
    d.domain_min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    d.domain_max = (pbf_vec3){1.2f, 1.2f, 1.2f};
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
    pbf_block_def b = pbf_default_block_def();
    b.min = (pbf_vec3){0.2f, (float)y0, 0.2f};
    b.max = (pbf_vec3){(float)(0.2 + side), (float)(y0 + side), (float)(0.2 + side)};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    shape s0, s;
    ENSURE(measure(w, &s0) == 0);
    s0.density = lattice_density(w); /* no step has computed the densities yet */
    ENSURE(s0.density > 500.0);
    double worst_extent = 0.0, worst_density = 0.0, worst_centre = 0.0, worst_spread = 0.0;
    for (int f = 1; f <= frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        ENSURE(measure(w, &s) == 0);
        /* free fall as the step integrates it (symplectic Euler): after n substeps of dt,
         * y0 − g dt² n(n + 1)/2, which is g t dt/2 (7 mm at 0.33 s) below y0 − g t²/2 */
        const double dt = 1.0 / (60.0 * d.substeps), n = (double)f * d.substeps;
        for (int k = 0; k < 3; ++k) {
            double e = fabs((s.hi[k] - s.lo[k]) / (s0.hi[k] - s0.lo[k]) - 1.0);
            if (e > worst_extent) worst_extent = e;
        }
        double e = fabs(s.density / s0.density - 1.0);
        if (e > worst_density) worst_density = e;
        e = fabs(s.centre_y - (s0.centre_y - 0.5 * g * dt * dt * n * (n + 1.0)));
        if (e > worst_centre) worst_centre = e;
        if (s.speed_spread > worst_spread) worst_spread = s.speed_spread;
    }
    printf("  %s (%d particles, %.2f s): extent %.2f %%, mean density %.2f %% (start %.1f "
           "kg/m3), centre %.2f mm from free fall, velocity spread %.1f mm/s (worst frame)\n",
           name, pbf_world_particle_count(w), pbf_world_time(w), 100.0 * worst_extent,
           100.0 * worst_density, s0.density, 1e3 * worst_centre, 1e3 * worst_spread);
    ENSURE(worst_extent <= 0.05);
    ENSURE(worst_density <= 0.03);
    ENSURE(worst_centre <= 0.001);
    ENSURE(worst_spread <= 0.02);
    pbf_world_destroy(w);
    return 0;
}

/* A 0.24 m cube (1728 particles) without gravity for 0.5 s. */
static int zero_gravity_block_holds(void) {
    return block_holds("zero gravity", 0.0, 0.5, 0.24, test_sanitized() ? 5 : 30);
}

/* The same cube falling from 0.9 m under g = 9.81 m/s²: it would reach the floor at 0.43 s;
 * stopped at 0.33 s (0.53 m of fall, 0.26 m above the floor, over a kernel radius away). */
static int falling_block_holds(void) {
    return block_holds("falling", 9.81, 0.9, 0.24, test_sanitized() ? 5 : 20);
}

TEST_MAIN_BEGIN
RUN_TEST(zero_gravity_block_holds);
RUN_TEST(falling_block_holds);
TEST_MAIN_END
