/* Splitting a world into slabs along x over MPI ranks, and the whole world's totals
 * (include/pbf/mpi.h). The halo itself is halo.c's. */
#include "pbf/mpi.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h" /* what runs where: the MPI column */
#include "halo.h"
#include "diffuse.h" /* a whole world's diffuse particles: each rank keeps its own */
#include "geometry/field_crop.h" /* the static meshes' fields: each rank keeps the part its slab reaches */

static pbf_status refuse(char *err, size_t err_size, const char *fmt, ...) {
    if (err != NULL && err_size > 0) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(err, err_size, fmt, args);
        va_end(args);
    }
    return PBF_ERR_INVALID_ARG;
}

/* What a split world cannot do: a second split and the CUDA backend; the features it uses,
 * from the table (caps.c). The same answer on every rank: the worlds are equal. */
static pbf_status check_supported(const pbf_world *w, char *err, size_t err_size) {
    const char *what = w->halo   ? "a world already split"
                       : w->cuda ? "the CUDA backend (world.backend)"
                                 : NULL;
    if (what != NULL)
        return refuse(err, err_size, "a run split over MPI ranks does not support %s yet", what);
    pbf_status st = pbf__caps_check(0, pbf_world_features(w), PBF_COLUMN_MPI, err, err_size);
    return st == PBF_OK ? PBF_OK : PBF_ERR_INVALID_ARG;
}

static int compare_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* cuts[1..ranks-1]: equal particle counts per slab, then moved apart until every slab spans at
 * least `width` of [lo, hi] (a ghost then only ever comes from the next slab). Returns 0 when
 * that cannot be done. */
static int place_cuts(const pbf_world *w, int ranks, double lo, double hi, double width,
                      double *cuts) {
    const int n = w->count;
    float *xs = malloc((size_t)(n > 0 ? n : 1) * sizeof *xs);
    if (xs == NULL) return -1;
    for (int i = 0; i < n; ++i) xs[i] = w->x[3 * i];
    qsort(xs, (size_t)n, sizeof *xs, compare_float);
    cuts[0] = lo;
    cuts[ranks] = hi;
    for (int k = 1; k < ranks; ++k) {
        long m = (long)((double)k * n / ranks);
        cuts[k] = n == 0   ? lo + (hi - lo) * k / ranks
                  : m <= 0 ? xs[0]
                           : 0.5 * ((double)xs[m - 1] + (double)xs[m < n ? m : n - 1]);
    }
    free(xs);
    return pbf__mpi_space_cuts(cuts, ranks, width);
}

int pbf__mpi_space_cuts(double *cuts, int ranks, double width) {
    for (int k = 1; k < ranks; ++k)
        if (cuts[k] < cuts[k - 1] + width) cuts[k] = cuts[k - 1] + width;
    for (int k = ranks - 1; k >= 1; --k)
        if (cuts[k] > cuts[k + 1] - width) cuts[k] = cuts[k + 1] - width;
    for (int k = 0; k < ranks; ++k)
        if (cuts[k + 1] - cuts[k] < width * (1.0 - 1e-9)) return 0;
    return 1;
}

static pbf_status attach(pbf_world *w, MPI_Comm comm, double *cuts, double lo, double hi,
                         int keep_all, char *err, size_t err_size);

PBF_API pbf_status pbf_mpi_world_split(pbf_world *w, MPI_Comm comm, char *err, size_t err_size) {
    if (w == NULL) return refuse(err, err_size, "pbf_mpi_world_split: world is NULL");
    pbf_status st = check_supported(w, err, err_size);
    if (st != PBF_OK) return st;
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    pbf_v3 wall_lo, wall_hi;
    pbf__walls_envelope(&w->def, &wall_lo, &wall_hi);
    const double width = (double)PBF_MPI_HALO_FACTOR * w->params.h;
    double *cuts = malloc((size_t)(ranks + 1) * sizeof *cuts);
    if (cuts == NULL) return refuse(err, err_size, "out of memory splitting the world");
    int placed = place_cuts(w, ranks, wall_lo.x, wall_hi.x, width, cuts);
    if (placed <= 0) {
        free(cuts);
        if (placed < 0) return refuse(err, err_size, "out of memory splitting the world");
        return refuse(err, err_size,
                      "%d MPI ranks are more than the domain can be cut into: it is %.4g m long "
                      "along x and every slab must be at least the halo's %.4g m (%.3g h) wide, "
                      "so at most %d ranks; run with fewer ranks (mpirun -np N)",
                      ranks, (double)(wall_hi.x - wall_lo.x), width, (double)PBF_MPI_HALO_FACTOR,
                      (int)floor((wall_hi.x - wall_lo.x) / width * (1.0 + 1e-9)));
    }
    return attach(w, comm, cuts, wall_lo.x, wall_hi.x, 0, err, err_size);
}

/* Makes w this rank's slab of cuts (ranks + 1 values, taken over: freed on failure too) and keeps
 * the particles inside it, in their order; keep_all: every particle (w is this rank's piece). */
static pbf_status attach(pbf_world *w, MPI_Comm comm, double *cuts, double lo, double hi,
                         int keep_all, char *err, size_t err_size) {
    int rank = 0, ranks = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &ranks);
    const double width = (double)PBF_MPI_HALO_FACTOR * w->params.h;
    pbf_halo *h = calloc(1, sizeof *h);
    double *sum_buf = malloc((size_t)ranks * PBF_HALO_SUM_MAX * sizeof *sum_buf);
    if (h == NULL || sum_buf == NULL) {
        free(h);
        free(sum_buf);
        free(cuts);
        return refuse(err, err_size, "out of memory splitting the world");
    }
    h->sum_buf = sum_buf;
    MPI_Comm_dup(comm, &h->comm);
    h->rank = rank;
    h->ranks = ranks;
    h->neighbor[0] = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    h->neighbor[1] = rank < ranks - 1 ? rank + 1 : MPI_PROC_NULL;
    h->lo = rank > 0 ? cuts[rank] : -INFINITY;
    h->hi = rank < ranks - 1 ? cuts[rank + 1] : INFINITY;
    h->width = (float)width;
    h->domain_lo = lo;
    h->domain_hi = hi;
    h->cuts = cuts; /* the halo's from now on */
    /* keep this rank's particles, in their order */
    for (int i = 0; i < w->count; ++i) {
        double x = w->x[3 * i];
        w->gone[i] = !keep_all && !(x >= h->lo && x < h->hi);
    }
    pbf__particles_compact(w, w->gone); /* particles.c: every kept array (fields.h) follows */
    w->halo = h;
    w->halo_hook = pbf__halo_hook;
    w->halo_free = pbf__halo_free;
    w->halo_sum = pbf__halo_sum;
    w->halo_reduce = pbf__halo_reduce;
    w->halo_exchange = pbf__halo_exchange;
    w->halo_owns = pbf__halo_owns;
    w->halo_route = pbf__halo_route;
    w->halo_scan = pbf__halo_scan;
    /* diffuse particles (modules/diffuse.c): a rank keeps those in its slab, or its piece's */
    if (!keep_all) pbf__diffuse_keep_owned(w);
    pbf_status st = pbf__mpi_keep_fields(w);
    if (st != PBF_OK) return refuse(err, err_size, "%s", pbf_world_error(w));
    return PBF_OK;
}

pbf_status pbf__mpi_keep_fields(pbf_world *w) {
    /* When a substep begins a rank's particles lie in its slab (owned: migration) or within the
     * halo's width of it (ghosts), and within the walls across it; the geometry adds how far
     * they go in a substep */
    const pbf_halo *h = w->halo;
    pbf_v3 wall_lo, wall_hi;
    pbf__walls_envelope(&w->def, &wall_lo, &wall_hi);
    const double lo[3] = {h->lo - h->width, wall_lo.y, wall_lo.z},
                 hi[3] = {h->hi + h->width, wall_hi.y, wall_hi.z};
    return pbf__meshes_keep_region(w, lo, hi);
}

/* Whether every rank's world holds the same particles (the whole scene) rather than its own
 * piece (a checkpoint's): the same count and the same smallest id on every rank, which pieces
 * cannot have (their ids are disjoint) unless all are empty. Collective. */
static int whole_on_every_rank(const pbf_world *w, MPI_Comm comm) {
    int first = INT32_MAX;
    for (int i = 0; i < w->count; ++i)
        if (w->ids[i] < first) first = w->ids[i];
    int mine[4] = {w->count, -w->count, first, -first}, all[4];
    MPI_Allreduce(mine, all, 4, MPI_INT, MPI_MIN, comm);
    return all[0] == -all[1] && all[2] == -all[3];
}

PBF_API pbf_status pbf_mpi_world_split_at(pbf_world *w, MPI_Comm comm, const double *at, char *err,
                                          size_t err_size) {
    if (w == NULL || at == NULL)
        return refuse(err, err_size, "pbf_mpi_world_split_at: world or cuts is NULL");
    pbf_status st = check_supported(w, err, err_size);
    if (st != PBF_OK) return st;
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    const double width = (double)PBF_MPI_HALO_FACTOR * w->params.h;
    /* 1e-6: the balancer spaces its cuts by the halo's width as a float (pbf_halo.width), up
     * to 4e-8 of it narrower than this double, and a checkpoint's cuts come from it */
    for (int k = 0; k < ranks; ++k)
        if (!(at[k + 1] - at[k] >= width * (1.0 - 1e-6)))
            return refuse(err, err_size,
                          "cuts %d and %d (%.9g, %.9g m) are less than the halo's %.4g m apart", k,
                          k + 1, at[k], at[k + 1], width);
    double *cuts = malloc((size_t)(ranks + 1) * sizeof *cuts);
    if (cuts == NULL) return refuse(err, err_size, "out of memory splitting the world");
    memcpy(cuts, at, (size_t)(ranks + 1) * sizeof *cuts);
    /* a piece keeps every particle: one that the last correction of a substep moved just past a
     * cut migrates at the next substep, as in the run that never stopped */
    return attach(w, comm, cuts, at[0], at[ranks], !whole_on_every_rank(w, comm), err, err_size);
}

PBF_API int pbf_mpi_world_cuts(const pbf_world *w, double *cuts) {
    if (w == NULL || w->halo == NULL) return 0;
    if (cuts != NULL) memcpy(cuts, w->halo->cuts, (size_t)(w->halo->ranks + 1) * sizeof *cuts);
    return w->halo->ranks;
}

PBF_API int pbf_mpi_world_slab(const pbf_world *w, double *lo, double *hi, int *rank, int *ranks) {
    if (w == NULL || w->halo == NULL) return 0;
    if (lo) *lo = w->halo->lo;
    if (hi) *hi = w->halo->hi;
    if (rank) *rank = w->halo->rank;
    if (ranks) *ranks = w->halo->ranks;
    return 1;
}

PBF_API int pbf_mpi_world_halo(const pbf_world *w, int *received, int *sent,
                               int64_t *bytes_received) {
    if (w == NULL || w->halo == NULL) return 0;
    if (received) *received = w->halo->last_received;
    if (sent) *sent = w->halo->last_sent;
    if (bytes_received) *bytes_received = w->halo->last_bytes;
    return 1;
}

/* Values gathered per rank, reduced in rank order on every rank (deterministic). */
enum {
    T_COUNT,
    T_KE,
    T_SPEED,
    T_AVG_ERR,
    T_MAX_ERR,
    T_NEIGHBORS,
    T_STEP_MS,
    T_BMIN,
    T_BMAX = T_BMIN + 3,
    T_STAGE = T_BMAX + 3,
    T_SIZE = T_STAGE + PBF_STAGE_COUNT
};

PBF_API void pbf_mpi_world_totals(const pbf_world *w, pbf_stats *stats, pbf_profile *profile) {
    pbf_stats s = pbf_world_get_stats(w);
    pbf_profile p = pbf_world_get_profile(w);
    if (w->halo != NULL) {
        pbf_halo *h = w->halo;
        double mine[T_SIZE];
        mine[T_COUNT] = s.particles;
        mine[T_KE] = s.kinetic_energy;
        mine[T_SPEED] = s.max_speed;
        mine[T_AVG_ERR] = p.avg_density_error;
        mine[T_MAX_ERR] = p.max_density_error;
        mine[T_NEIGHBORS] = p.avg_neighbors;
        mine[T_STEP_MS] = p.step_ms;
        const float bmin[3] = {s.bounds_min.x, s.bounds_min.y, s.bounds_min.z};
        const float bmax[3] = {s.bounds_max.x, s.bounds_max.y, s.bounds_max.z};
        for (int k = 0; k < 3; ++k) {
            mine[T_BMIN + k] = s.particles > 0 ? bmin[k] : INFINITY;
            mine[T_BMAX + k] = s.particles > 0 ? bmax[k] : -INFINITY;
        }
        for (int k = 0; k < PBF_STAGE_COUNT; ++k) mine[T_STAGE + k] = p.stage_ms[k];
        double *all = malloc((size_t)h->ranks * T_SIZE * sizeof *all);
        if (all != NULL) {
            MPI_Allgather(mine, T_SIZE, MPI_DOUBLE, all, T_SIZE, MPI_DOUBLE, h->comm);
            double t[T_SIZE] = {0};
            for (int k = 0; k < 3; ++k) t[T_BMIN + k] = INFINITY, t[T_BMAX + k] = -INFINITY;
            for (int r = 0; r < h->ranks; ++r) {
                const double *a = all + (size_t)r * T_SIZE;
                t[T_COUNT] += a[T_COUNT];
                t[T_KE] += a[T_KE];
                t[T_SPEED] = fmax(t[T_SPEED], a[T_SPEED]);
                t[T_AVG_ERR] += a[T_AVG_ERR] * a[T_COUNT];
                t[T_MAX_ERR] = fmax(t[T_MAX_ERR], a[T_MAX_ERR]);
                t[T_NEIGHBORS] += a[T_NEIGHBORS] * a[T_COUNT];
                t[T_STEP_MS] = fmax(t[T_STEP_MS], a[T_STEP_MS]);
                for (int k = 0; k < 3; ++k) {
                    t[T_BMIN + k] = fmin(t[T_BMIN + k], a[T_BMIN + k]);
                    t[T_BMAX + k] = fmax(t[T_BMAX + k], a[T_BMAX + k]);
                }
                for (int k = 0; k < PBF_STAGE_COUNT; ++k)
                    t[T_STAGE + k] = fmax(t[T_STAGE + k], a[T_STAGE + k]);
            }
            free(all);
            double n = t[T_COUNT] > 0 ? t[T_COUNT] : 1.0;
            s.particles = (int)t[T_COUNT];
            s.kinetic_energy = t[T_KE];
            s.max_speed = (float)t[T_SPEED];
            p.avg_density_error = (float)(t[T_AVG_ERR] / n);
            p.max_density_error = (float)t[T_MAX_ERR];
            p.avg_neighbors = (float)(t[T_NEIGHBORS] / n);
            p.step_ms = t[T_STEP_MS];
            s.bounds_min = (pbf_vec3){(float)t[T_BMIN], (float)t[T_BMIN + 1], (float)t[T_BMIN + 2]};
            s.bounds_max = (pbf_vec3){(float)t[T_BMAX], (float)t[T_BMAX + 1], (float)t[T_BMAX + 2]};
            for (int k = 0; k < PBF_STAGE_COUNT; ++k) p.stage_ms[k] = t[T_STAGE + k];
        }
    }
    if (stats) *stats = s;
    if (profile) *profile = p;
}
