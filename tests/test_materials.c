/* Materials (docs/physics.md, "Materials"): surface tension, adhesion and wall friction. */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "pbf/checkpoint.h"
#include "pbf/pbf.h"
#include "test.h"

/* A cube of water of n³ particles of radius r in zero gravity, in the middle of a box wide
 * enough that no wall is in reach. */
static pbf_world *droplet_world(int n, float r, float sigma, int threads) {
    pbf_world_def def = pbf_default_world_def();
    float side = 2.0f * r * (float)n, room = 2.0f * side;
    def.particle_radius = r;
    def.gravity = (pbf_vec3){0.0f, 0.0f, 0.0f};
    def.domain_min = (pbf_vec3){0.0f, 0.0f, 0.0f};
    def.domain_max = (pbf_vec3){room, room, room};
    def.material.surface_tension = sigma;
    def.threads = threads;
    if (getenv("VORT")) def.solver.vorticity = (float)atof(getenv("VORT"));
    if (getenv("SCD")) def.solver.scorr_deficit = (float)atof(getenv("SCD"));
    if (getenv("SUB")) def.substeps = atoi(getenv("SUB"));
    if (getenv("IT")) def.solver.iterations = atoi(getenv("IT"));
    if (getenv("XSPH")) def.solver.xsph = (float)atof(getenv("XSPH"));
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(&def, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    pbf_block_def b = pbf_default_block_def();
    float lo = 0.5f * (room - side);
    b.min = (pbf_vec3){lo, lo, lo};
    b.max = (pbf_vec3){lo + side, lo + side, lo + side};
    if (pbf_world_add_block(w, &b) != PBF_OK) {
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The 99th-percentile distance of the particle centres from their mean, over the radius of the
 * sphere of the fluid's volume (count · m/ρ0); *extent_x receives the x extent's half-width
 * (max − min)/2 over the same radius. */
static double sphericity(const pbf_world *w, double *extent_x) {
    int n = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n), *d = malloc(sizeof(float) * (size_t)n);
    if (!x || !d) {
        free(x);
        free(d);
        return 1e9;
    }
    pbf_world_get_positions(w, x);
    double c[3] = {0, 0, 0};
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) c[k] += x[3 * i + k];
    for (int k = 0; k < 3; ++k) c[k] /= n;
    float xmin = 1e30f, xmax = -1e30f;
    for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int k = 0; k < 3; ++k) s += (x[3 * i + k] - c[k]) * (x[3 * i + k] - c[k]);
        d[i] = (float)sqrt(s);
        if (x[3 * i] < xmin) xmin = x[3 * i];
        if (x[3 * i] > xmax) xmax = x[3 * i];
    }
    qsort(d, (size_t)n, sizeof *d, cmp_float);
    double volume = n * (double)pbf_world_particle_mass(w) / pbf_world_get_def(w)->rest_density;
    double radius = cbrt(volume * 3.0 / (4.0 * 3.14159265358979));
    double p99 = d[(int)(0.99 * (n - 1))];
    if (extent_x) *extent_x = 0.5 * (xmax - xmin) / radius;
    free(x);
    free(d);
    return p99 / radius;
}

/* Quadrupole Q = mean((x − c_x)² − (y − c_y)²) of the particle centres: the l = 2 mode along
 * x and y. */
static double quadrupole(const pbf_world *w, float *x) {
    int n = pbf_world_particle_count(w);
    pbf_world_get_positions(w, x);
    double c[2] = {0, 0}, q = 0.0;
    for (int i = 0; i < n; ++i) c[0] += x[3 * i], c[1] += x[3 * i + 1];
    c[0] /= n, c[1] /= n;
    for (int i = 0; i < n; ++i) {
        double a = x[3 * i] - c[0], b = x[3 * i + 1] - c[1];
        q += a * a - b * b;
    }
    return q / n;
}

/* Rounds a cube of n³ particles into a droplet (1 s), then restarts it with the velocity of the
 * l = 2 mode, v = a (x − c_x, −(y − c_y), 0), and measures the oscillation of the quadrupole:
 * the mean period between its first zero crossings. *radius receives the radius of the
 * equal-volume sphere. Returns 0 when there were too few crossings. */
static double oscillation_period(int n, float r, float sigma, float a, int frames,
                                 double *radius) {
    pbf_world *w = droplet_world(n, r, sigma, 0);
    if (!w) return 0.0;
    for (int f = 0; f < 60; ++f) pbf_world_step(w, 1.0f / 60.0f);
    int count = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)count), *v = malloc(sizeof(float) * 3 * (size_t)count);
    if (!x || !v) return 0.0;
    pbf_world_get_positions(w, x);
    double c[3] = {0, 0, 0};
    for (int i = 0; i < count; ++i)
        for (int k = 0; k < 3; ++k) c[k] += x[3 * i + k] / count;
    for (int i = 0; i < count; ++i) {
        v[3 * i] = a * (float)(x[3 * i] - c[0]);
        v[3 * i + 1] = -a * (float)(x[3 * i + 1] - c[1]);
        v[3 * i + 2] = 0.0f;
    }
    pbf_world_def def = *pbf_world_get_def(w);
    double volume = count * (double)pbf_world_particle_mass(w) / def.rest_density;
    *radius = cbrt(volume * 3.0 / (4.0 * 3.14159265358979));
    pbf_world_destroy(w);
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(&def, &w, err, sizeof err) != PBF_OK ||
        pbf_world_add_particles(w, count, x, v) != PBF_OK) {
        free(x);
        free(v);
        return 0.0;
    }
    const float dt = 1.0f / 240.0f; /* 4 substeps of 1/960 s: the crossings to ±0.5 ms */
    double q_prev = quadrupole(w, x), t_first = -1.0, t_last = 0.0, t_prev = 0.0;
    int crossings = 0;
    const char *e = getenv("PBF_MATERIALS_EXPERIMENT");
    for (int f = 1; f <= frames; ++f) {
        if (pbf_world_step(w, dt) != PBF_OK) break;
        double q = quadrupole(w, x), t = pbf_world_time(w);
        if (e && strcmp(e, "2") == 0) printf("osc %.5f %.4e\n", t, q);
        if ((q > 0.0) != (q_prev > 0.0)) {
            double tc = t_prev + (t - t_prev) * q_prev / (q_prev - q); /* linear interpolation */
            if (t_first < 0.0) t_first = tc;
            t_last = tc;
            ++crossings;
        }
        q_prev = q;
        t_prev = t;
    }
    free(x);
    free(v);
    pbf_world_destroy(w);
    return crossings >= 3 ? 2.0 * (t_last - t_first) / (crossings - 1) : 0.0;
}

/* Rayleigh's period of the l = 2 oscillation of a droplet: ω² = 8σ / (ρ R³). */
static double rayleigh_period(double sigma, double rho, double radius) {
    return 2.0 * 3.14159265358979 / sqrt(8.0 * sigma / (rho * radius * radius * radius));
}

/* For a look at the numbers: PBF_MATERIALS_EXPERIMENT=1 prints the droplet's shape over time. */
static void droplet_experiment(void) {
    const char *e = getenv("PBF_MATERIALS_EXPERIMENT");
    if (!e || strcmp(e, "1") != 0) return;
    int n = getenv("N") ? atoi(getenv("N")) : 12;
    float r = getenv("R") ? (float)atof(getenv("R")) : 0.002f;
    float sigma = getenv("SIGMA") ? (float)atof(getenv("SIGMA")) : 0.0728f;
    int frames = getenv("FRAMES") ? atoi(getenv("FRAMES")) : 120;
    pbf_world *w = droplet_world(n, r, sigma, 0);
    if (!w) return;
    for (int f = 0; f <= frames; ++f) {
        double ex = 0.0, s = sphericity(w, &ex);
        pbf_stats st = pbf_world_get_stats(w);
        int np = pbf_world_particle_count(w);
        float *v = malloc(sizeof(float) * 3 * (size_t)np), *x = malloc(sizeof(float) * 3 * (size_t)np);
        double vm[3] = {0, 0, 0}, xm[3] = {0, 0, 0};
        pbf_world_get_velocities(w, v);
        pbf_world_get_positions(w, x);
        for (int i = 0; i < np; ++i)
            for (int k = 0; k < 3; ++k) vm[k] += v[3 * i + k] / np, xm[k] += x[3 * i + k] / np;
        double L[3] = {0, 0, 0};
        for (int i = 0; i < np; ++i) {
            double a[3], b[3];
            for (int k = 0; k < 3; ++k) a[k] = x[3 * i + k] - xm[k], b[k] = v[3 * i + k];
            L[0] += a[1] * b[2] - a[2] * b[1];
            L[1] += a[2] * b[0] - a[0] * b[2];
            L[2] += a[0] * b[1] - a[1] * b[0];
        }
        printf("L %.3e %.3e %.3e ", L[0], L[1], L[2]);
        free(v);
        free(x);
        printf("t %.4f p99/R %.4f x/R %.4f ke %.3e err %.4f vcm %.2e %.2e %.2e xcm %.4f %.4f %.4f\n", pbf_world_time(w), s, ex,
               st.kinetic_energy, (double)pbf_world_get_profile(w).avg_density_error, vm[0], vm[1], vm[2], xm[0], xm[1], xm[2]);
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) {
            printf("step failed: %s\n", pbf_world_error(w));
            break;
        }
    }
    pbf_world_destroy(w);
}

static void oscillation_experiment(void) {
    const char *e = getenv("PBF_MATERIALS_EXPERIMENT");
    if (!e || strcmp(e, "2") != 0) return;
    int n = getenv("N") ? atoi(getenv("N")) : 12;
    float r = getenv("R") ? (float)atof(getenv("R")) : 0.002f;
    float sigma = getenv("SIGMA") ? (float)atof(getenv("SIGMA")) : 0.0728f;
    float a = getenv("A") ? (float)atof(getenv("A")) : 0.5f;
    int frames = getenv("FRAMES") ? atoi(getenv("FRAMES")) : 600;
    double radius = 0.0, period = oscillation_period(n, r, sigma, a, frames, &radius);
    printf("period %.4f s, Rayleigh %.4f s (R %.4f m)\n", period,
           rayleigh_period(sigma, 1000.0, radius), radius);
}

TEST_MAIN_BEGIN
    droplet_experiment();
    oscillation_experiment();
TEST_MAIN_END
