/* The level probe (include/pbf/probes.h, docs/validation.md): the water level at a point, read
 * from the fluid the kernels see rather than from the highest particle.
 *
 * Along the vertical line through the gauge the fluid fraction is the SPH interpolation of 1,
 *     φ(y) = V Σ_j W(|x(y) − x_j|),          V = m / ρ0, so φ = 1 inside the rest lattice,
 * with the world's density kernel (either pair). Each particle at or above the base is also
 * mirrored in the base plane, so the floor (or an obstacle's top) does not read as a free
 * surface: without the mirror φ would be about 1/2 at the floor itself. The level is where φ,
 * walked upwards from the base, first falls below `fraction` (default 1/2: a flat free surface
 * of a half-space of fluid is where the interpolation of its indicator is 1/2). Samples are r/4
 * apart, the crossing found by linear interpolation between two samples.
 *
 * Why not the highest particle: a column's highest particle reads the maximum over the column's
 * width of a surface that is rough and sloped on the scale of r, so it reads high by an amount
 * that shrinks with r. A comparison across particle spacings then measures the gauge as well
 * as the flow. The interpolated level is a point reading: it finds a flat or sloped lattice
 * surface within 0.1 r at any spacing (tests/test_probes.c).
 *
 * Sums run in a fixed order (particles sorted by height, ties by slot): bit-identical for any
 * thread count. Split over processes, each sums its own particles and the partial sums are added
 * in rank order (the same bits on every process; not those of an unsplit world). */
#include "probe_level.h"

#include "kernels.h" /* the density kernel of the level's fluid fraction */

#include <math.h>
#include <stdlib.h>

typedef struct level_point {
    float y; /* height of the particle */
    float d2; /* its squared horizontal distance from the gauge's line */
    int slot;
} level_point;

static int by_height(const void *a, const void *b) {
    const level_point *p = a, *q = b;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return (p->slot > q->slot) - (p->slot < q->slot);
}

/* Adds a process's partial sums over every process (no-op unsplit), PBF_HALO_SUM_MAX at a time.
 * The hook writes only the split's own buffers, not the world's state, hence the cast. */
static void sum_over_processes(const pbf_world *w, double *v, int n) {
    if (w->halo == NULL) return;
    for (int k = 0; k < n; k += PBF_HALO_SUM_MAX)
        w->halo_sum((pbf_world *)w, v + k, n - k < PBF_HALO_SUM_MAX ? n - k : PBF_HALO_SUM_MAX);
}

/* Whether particle i is read: at or above the base, within h of the gauge's line; *d2 gets its
 * squared horizontal distance from the line. */
static int near_line(const pbf_world *w, const pbf_probe_def *p, int i, float *d2) {
    float dx = w->x[3 * i] - p->position.x, dz = w->x[3 * i + 2] - p->position.z;
    *d2 = dx * dx + dz * dz;
    return *d2 < w->params.h2 && w->x[3 * i + 1] >= p->position.y;
}

pbf_status pbf__probe_level(const pbf_world *w, const pbf_probe_def *p, pbf_probe_sample *s) {
    const pbf_params *P = &w->params;
    const float h = P->h, base = p->position.y, step = 0.25f * w->def.particle_radius;
    pbf_v3 env_lo, env_hi;
    pbf__walls_envelope(&w->def, &env_lo, &env_hi);
    const int samples = 2 + (int)ceilf((env_hi.y - base) / step);

    int n = 0;
    float d2;
    for (int i = 0; i < w->count; ++i) n += near_line(w, p, i, &d2);
    level_point *pt = malloc((size_t)(n > 0 ? n : 1) * sizeof *pt);
    double *phi = calloc((size_t)samples, sizeof *phi);
    if (!pbf__all_ok(w, pt != NULL && phi != NULL)) {
        free(pt);
        free(phi);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    n = 0;
    for (int i = 0; i < w->count; ++i)
        if (near_line(w, p, i, &d2)) pt[n++] = (level_point){w->x[3 * i + 1], d2, i};
    qsort(pt, (size_t)n, sizeof *pt, by_height);

    /* φ at y_k = base + k·step: the particles within h below and above (a window that moves up
     * the sorted list), and the mirrors of those within h of the base plane's far side. */
    int lo = 0;
    for (int k = 0; k < samples; ++k) {
        float y = base + (float)k * step;
        while (lo < n && pt[lo].y <= y - h) ++lo;
        double sum = 0.0;
        for (int j = lo; j < n && pt[j].y < y + h; ++j) {
            float dy = y - pt[j].y;
            sum += pbf_pair_w(pt[j].d2 + dy * dy, P);
        }
        for (int j = 0; j < n && pt[j].y - base < h - (y - base); ++j) {
            float dy = (y - base) + (pt[j].y - base); /* to the mirror at 2 base − y_j */
            sum += pbf_pair_w(pt[j].d2 + dy * dy, P);
        }
        phi[k] = sum * (double)P->volume;
    }
    sum_over_processes(w, phi, samples);

    /* Walk up from the base to the first sample below the fraction. */
    const double f = p->fraction;
    double level = 0.0;
    if (phi[0] >= f) {
        int k = 1;
        while (k < samples && phi[k] >= f) ++k;
        level = k == samples ? (double)(samples - 1) * step
                             : ((double)(k - 1) + (phi[k - 1] - f) / (phi[k - 1] - phi[k])) * step;
    }
    double below = 0.0; /* the particles read below the level, over every process */
    for (int j = 0; j < n && (double)(pt[j].y - base) <= level; ++j) below += 1.0;
    sum_over_processes(w, &below, 1);
    s->value = level;
    s->pressure = 0.0;
    s->particles = (int)below;
    free(pt);
    free(phi);
    return PBF_OK;
}
