/* The flows of tests/test_flows.c and bench/flows.c, whose answers are known: two vessels joined
 * at the bottom, and the first sloshing mode of a rectangular tank (docs/physics.md, "What
 * dissipates energy"). Static functions: include it in one file of a program. */
#ifndef PBF_FLOWS_SETUP_H
#define PBF_FLOWS_SETUP_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/pbf.h"

#define PI 3.14159265358979323846

/* Columns of particles on the rest lattice (spacing s = 2r, centres at (i + 1/2) s) from the
 * floor up to height top(x), over [0, lx] × [0, lz]. */
typedef double (*height_fn)(double x);

static int add_columns(pbf_world *w, double s, double lx, double lz, height_fn top) {
    int nx = (int)lround(lx / s), nz = (int)lround(lz / s), n = 0, cap = 0;
    for (int i = 0; i < nx; ++i) cap += nz * (int)lround(top((i + 0.5) * s) / s);
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

static pbf_world *flows_world(const pbf_world_def *d) {
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

/* ---- standing wave -------------------------------------------------------------------------
 * The first sloshing mode (or the n-th) of a tank L = 0.4 m long, H = 0.2 m deep (4 particles
 * thick in z), started from h(x) = H + A cos(nπx/L), A = 2 cm (tank_l, tank_h, wave_a,
 * wave_mode). Linear theory: T = 2π/√(g k tanh(k H)), k = nπ/L. */

static double tank_l = 0.4; /* the tank's length, m (bench/flows.c --length) */
static double tank_h = 0.2; /* the water's depth at rest, m (bench/flows.c --depth) */
static double wave_a = 0.02; /* the starting amplitude, m (bench/flows.c --amplitude) */
static int wave_layers = 4; /* particles across the tank in z (bench/flows.c --layers) */
static int wave_mode = 1; /* the sloshing mode n, k = nπ/L (bench/flows.c --mode) */
static double wave_top(double x) { return tank_h + wave_a * cos(PI * wave_mode * x / tank_l); }

/* The mode's amplitude: the column heights in 20 bins per half wavelength projected on
 * cos(nπx/L). */
static double mode_amplitude(const float *x, int n, double volume, double depth) {
    enum { MAX_BINS = 200 };
    const int bins = 20 * wave_mode < MAX_BINS ? 20 * wave_mode : MAX_BINS;
    double h[MAX_BINS] = {0}, bw = tank_l / bins, a = 0.0;
    for (int i = 0; i < n; ++i) {
        int b = (int)(x[3 * i] / bw);
        b = b < 0 ? 0 : b >= bins ? bins - 1 : b;
        h[b] += volume / (bw * depth);
    }
    for (int b = 0; b < bins; ++b) a += h[b] * cos(PI * wave_mode * (b + 0.5) * bw / tank_l) * bw;
    return a * 2.0 / tank_l;
}

/* The joined vessels at particle radius r: a world of def d (its domain and radius are set
 * here) with the dividing block and the water; NULL on failure, with the message printed. */
static pbf_world *vessels_create(const pbf_world_def *base, float r, int *count) {
    pbf_world_def d = *base;
    d.particle_radius = r;
    d.domain_max = (pbf_vec3){(float)(3 * LEG), 0.25f, (float)LEG};
    pbf_world *w = flows_world(&d);
    if (w == NULL) return NULL;
    pbf_collider_def c = pbf_default_collider_def();
    c.type = PBF_COLLIDER_BOX;
    c.center = (pbf_vec3){(float)(1.5 * LEG), 0.15f, (float)(LEG / 2)};
    c.half_extents = (pbf_vec3){(float)(LEG / 2), 0.10f, (float)LEG};
    *count = pbf_world_add_collider(w, &c) == PBF_OK
                 ? add_columns(w, 2.0 * r, 3 * LEG, LEG, vessel_top)
                 : -1;
    if (*count <= 0) {
        fprintf(stderr, "vessels: %s\n", pbf_world_error(w));
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

/* The tank at particle radius r, wave_layers particles thick in z (*depth). */
static pbf_world *wave_create(const pbf_world_def *base, float r, int *count, double *depth) {
    pbf_world_def d = *base;
    d.particle_radius = r;
    *depth = wave_layers * 2.0 * r;
    d.domain_max = (pbf_vec3){(float)tank_l, (float)(2 * tank_h), (float)*depth};
    pbf_world *w = flows_world(&d);
    if (w == NULL) return NULL;
    *count = add_columns(w, 2.0 * r, tank_l, *depth, wave_top);
    if (*count <= 0) {
        fprintf(stderr, "wave: %s\n", pbf_world_error(w));
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

static double wave_theory_period(void) {
    const double k = PI * wave_mode / tank_l;
    return 2.0 * PI / sqrt(9.81 * k * tanh(k * tank_h));
}

/* Period and decay from the mode amplitude a(t), fed once per frame: zero crossings
 * (interpolated; one closer than a tenth of the theory's period to the last is a flicker
 * near zero and not counted), and the peak |a| of each half swing. */
typedef struct wave_track {
    double a_prev, t_prev, t_cross, first, peak;
    int crossings;
    double amp[16]; /* |a| at the start, then the peak of half swing k (at k T/2) */
    int swings;
    double period; /* 2 × the mean half period between the first and the last crossing */
    double centre0; /* the start's mean particle height (set by the caller) */
} wave_track;

static void wave_track_start(wave_track *k, double a0) {
    *k = (wave_track){.a_prev = a0, .t_cross = -1.0, .first = -1.0};
    k->amp[0] = fabs(a0);
}

static void wave_track_add(wave_track *k, double t, double a) {
    if ((a > 0.0) != (k->a_prev > 0.0)) {
        double tc = k->t_prev + k->a_prev / (k->a_prev - a) * (t - k->t_prev);
        if (k->t_cross < 0.0 || tc - k->t_cross > 0.1 * wave_theory_period()) {
            if (k->crossings > 0 && k->crossings < 16) {
                k->amp[k->crossings] = k->peak;
                k->swings = k->crossings;
            }
            if (k->first < 0.0) k->first = tc;
            k->t_cross = tc;
            ++k->crossings;
            k->peak = 0.0;
            if (k->crossings > 1) k->period = 2.0 * (k->t_cross - k->first) / (k->crossings - 1);
        }
    }
    if (fabs(a) > k->peak) k->peak = fabs(a);
    k->a_prev = a;
    k->t_prev = t;
}

/* What wave_follow measured: the half swings, the mean kinetic energy per kilogram at the end,
 * the end state's hash and the one after mid_frame, and (with the audit on) the energy audit's
 * stages summed over the run. */
typedef struct wave_result {
    wave_track k;
    double ke;
    uint64_t hash, mid_hash;
    pbf_energy_audit audit;
} wave_result;

/* The frames (60 fps) of `periods` of the wave, rounded up. */
static inline int wave_frames(double periods) {
    return (int)ceil(periods * wave_theory_period() * 60.0);
}

/* The standing wave at particle radius r for `frames` frames, tracked frame by frame. 0, or -1
 * with a message on stderr. */
static inline int wave_follow(const pbf_world_def *d, float r, int frames, int mid_frame, int audit,
                              wave_result *out) {
    int n = 0;
    double depth = 0.0;
    memset(out, 0, sizeof *out);
    pbf_world *w = wave_create(d, r, &n, &depth);
    if (w == NULL) return -1;
    const double s = 2.0 * r, volume = s * s * s;
    float *x = malloc(sizeof(float) * 3 * (size_t)n), *v = malloc(sizeof(float) * 3 * (size_t)n);
    int rc = x != NULL && v != NULL ? 0 : -1;
    if (rc == 0 && audit && pbf_world_set_energy_audit(w, 1) != PBF_OK) rc = -1;
    if (rc == 0) {
        pbf_world_get_positions(w, x);
        wave_track_start(&out->k, mode_amplitude(x, n, volume, depth));
    }
    for (int f = 1; rc == 0 && f <= frames; ++f) {
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) {
            rc = -1;
            break;
        }
        if (audit) {
            pbf_energy_audit a = pbf_world_get_energy_audit(w);
            if (f == 1) out->audit.start = a.start;
            out->audit.end = a.end;
            for (int q = 0; q < PBF_ENERGY_COUNT; ++q) out->audit.change[q] += a.change[q];
        }
        pbf_world_get_positions(w, x);
        wave_track_add(&out->k, f / 60.0, mode_amplitude(x, n, volume, depth));
        if (f == mid_frame) out->mid_hash = pbf_world_hash(w);
    }
    if (rc == 0) {
        pbf_world_get_velocities(w, v);
        for (int i = 0; i < 3 * n; ++i) out->ke += 0.5 * v[i] * v[i] / n;
        out->hash = pbf_world_hash(w);
    } else {
        fprintf(stderr, "wave: %s\n", pbf_world_error(w));
    }
    free(x);
    free(v);
    pbf_world_destroy(w);
    return rc;
}

#endif
