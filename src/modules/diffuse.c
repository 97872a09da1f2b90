/* Diffuse particles: spray, foam and bubbles (Ihmsen et al. 2012). The model is described in
 * include/pbf/diffuse.h and docs/physics.md; the per-particle math is in kernels.h.
 *
 * Every parallel loop writes only its own entry, and the only serial step (the prefix sum of the
 * spawn counts, the compaction) runs in order, so the set is the same for any thread count. */
#include "module.h" /* this feature as a module of the step */
#include "diffuse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_passes.h"
#include "caps.h" /* what runs where */
#include "cuda/world_cuda.h" /* a CUDA world's set lives on the device: pulled before a read */

#define DIFFUSE_DEAD PBF_DIFFUSE_DEAD /* kernels.h: removed at the next compaction */

pbf_diffuse_def pbf_default_diffuse_def(void) {
    pbf_diffuse_def d;
    d.trapped_air_rate = 100.0f;
    d.wave_crest_rate = 100.0f;
    d.trapped_air_min = 1.0f;
    d.trapped_air_max = 6.0f;
    d.wave_crest_min = 0.3f;
    d.wave_crest_max = 2.0f;
    d.energy_min = 0.2f;
    d.energy_max = 2.0f;
    d.lifetime = 2.0f;
    d.buoyancy = 2.0f;
    d.drag = 20.0f;
    d.spray_neighbors = 6;
    d.bubble_neighbors = 20;
    d.max_count = 200000;
    return d;
}

static pbf_status bad(char *err, size_t size, const char *fmt, double a, double b) {
    pbf__format(err, size, fmt, a, b);
    return PBF_ERR_INVALID_ARG;
}

/* A threshold pair: finite, 0 <= lo < hi. */
static pbf_status check_pair(float lo, float hi, const char *name, char *err, size_t size) {
    char fmt[160];
    pbf__format(fmt, sizeof fmt,
                "diffuse: %s_min and %s_max must be finite with 0 <= min < max, got %%g and %%g",
                name, name);
    if (!(lo >= 0.0f) || !(hi > lo) || !isfinite(hi)) return bad(err, size, fmt, lo, hi);
    return PBF_OK;
}

static pbf_status check_range(float x, float lo, float hi, const char *name, char *err,
                              size_t size) {
    char fmt[160];
    pbf__format(fmt, sizeof fmt, "diffuse: %s must be in [%g, %g], got %%g", name, (double)lo,
                (double)hi);
    if (!(x >= lo && x <= hi)) return bad(err, size, fmt, x, 0.0);
    return PBF_OK;
}

pbf_status pbf_diffuse_def_check(const pbf_diffuse_def *d, char *err, size_t size) {
    pbf_status st;
    if ((st = check_range(d->trapped_air_rate, 0.0f, 1e6f, "trapped_air_rate", err, size)) ||
        (st = check_range(d->wave_crest_rate, 0.0f, 1e6f, "wave_crest_rate", err, size)) ||
        (st = check_pair(d->trapped_air_min, d->trapped_air_max, "trapped_air", err, size)) ||
        (st = check_pair(d->wave_crest_min, d->wave_crest_max, "wave_crest", err, size)) ||
        (st = check_pair(d->energy_min, d->energy_max, "energy", err, size)) ||
        (st = check_range(d->buoyancy, 0.0f, 100.0f, "buoyancy", err, size)) ||
        (st = check_range(d->drag, 0.0f, 1e6f, "drag", err, size)))
        return st;
    if (!(d->lifetime > 0.0f && d->lifetime <= 1e6f))
        return bad(err, size, "diffuse: lifetime must be in (0, 1e6] s, got %g", d->lifetime, 0);
    if (d->spray_neighbors < 0 || d->bubble_neighbors < d->spray_neighbors ||
        d->bubble_neighbors > 1000)
        return bad(err, size,
                   "diffuse: need 0 <= spray_neighbors <= bubble_neighbors <= 1000, got %g and %g",
                   d->spray_neighbors, d->bubble_neighbors);
    if (d->max_count < 1 || d->max_count > 100000000)
        return bad(err, size, "diffuse: max_count must be in [1, 100000000], got %g", d->max_count,
                   0);
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Storage */

static pbf_status grow_fluid(pbf_diffuse *D, int n) {
    if (n + 1 <= D->fluid_capacity) return PBF_OK;
    int cap = n + 1 + n / 4;
    float *normal = realloc(D->normal, (size_t)cap * 3 * sizeof *normal);
    if (normal) D->normal = normal;
    int32_t *spawn = realloc(D->spawn, (size_t)cap * sizeof *spawn);
    if (spawn) D->spawn = spawn;
    if (!normal || !spawn) return PBF_ERR_OUT_OF_MEMORY;
    D->fluid_capacity = cap;
    return PBF_OK;
}

void pbf__diffuse_free(pbf_world *w) {
    pbf_diffuse *D = w->diffuse;
    if (!D) return;
    free(D->x);
    free(D->v);
    free(D->life);
    free(D->kind);
    free(D->normal);
    free(D->spawn);
    free(D);
    w->diffuse = NULL;
}

size_t pbf__diffuse_memory_bytes(const pbf_world *w) {
    const pbf_diffuse *D = w->diffuse;
    if (!D) return 0;
    return sizeof *D + (size_t)D->capacity * (6 * sizeof(float) + sizeof(float) + 1) +
           (size_t)D->fluid_capacity * (3 * sizeof(float) + sizeof(int32_t));
}

pbf_status pbf_world_enable_diffuse(pbf_world *w, const pbf_diffuse_def *def) {
    char why[PBF_ERROR_SIZE];
    if (def == NULL) return pbf__fail(w, PBF_ERR_INVALID_ARG, "diffuse: def must not be NULL");
    if (pbf_diffuse_def_check(def, why, sizeof why) != PBF_OK)
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "%s", why);
    if (w->diffuse == NULL) {
        if (pbf__caps_require(w, PBF_FEATURE_DIFFUSE) != PBF_OK) return PBF_ERR_UNSUPPORTED;
        w->diffuse = calloc(1, sizeof *w->diffuse);
        if (w->diffuse == NULL)
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory enabling diffuse particles");
    }
    pbf__cuda_touch_diffuse(w); /* cuda: the set and its room go to the device again */
    w->diffuse->def = *def;
    return PBF_OK;
}

pbf_status pbf__diffuse_restore(pbf_world *w, const pbf_diffuse_def *def, int count,
                                uint64_t substeps, int64_t generated) {
    pbf_status st = pbf_world_enable_diffuse(w, def);
    if (st != PBF_OK) return st;
    if (pbf__diffuse_grow_set(w->diffuse, count) != PBF_OK)
        return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory for %d diffuse particles", count);
    w->diffuse->count = count;
    w->diffuse->substeps = substeps;
    w->diffuse->generated = generated;
    return PBF_OK;
}

int pbf_world_get_diffuse_def(const pbf_world *w, pbf_diffuse_def *def) {
    if (w->diffuse == NULL) return 0;
    if (def) *def = w->diffuse->def;
    return 1;
}

int pbf_world_diffuse_count(const pbf_world *w) { return w->diffuse ? w->diffuse->count : 0; }

int64_t pbf_world_diffuse_generated(const pbf_world *w) {
    return w->diffuse ? w->diffuse->generated : 0;
}

void pbf_world_get_diffuse(const pbf_world *w, float *positions, float *velocities, uint8_t *kinds,
                           float *lifetimes) {
    pbf__cuda_pull(w); /* cuda: the set from the device */
    const pbf_diffuse *D = w->diffuse;
    if (!D || D->count == 0) return;
    size_t n = (size_t)D->count;
    if (positions) memcpy(positions, D->x, n * 3 * sizeof(float));
    if (velocities) memcpy(velocities, D->v, n * 3 * sizeof(float));
    if (kinds) memcpy(kinds, D->kind, n);
    if (lifetimes) memcpy(lifetimes, D->life, n * sizeof(float));
}

/* ---------------------------------------------------------------------------------------------
 * The substep */

/* Moves and classifies every diffuse particle by its fluid neighbours (include/pbf/diffuse.h;
 * kernels.h: pbf_diffuse_advect). */
static void advect(pbf_world *w, pbf_diffuse *D, int nt) {
    const pbf_params *P = &w->params;
    const pbf_diffuse_def *d = &D->def;
    const pbf_grid *g = &w->grid;
    const float *p = w->p, *v = w->v;
    const int n = w->count, m = D->count;
    const float h = P->h, h2 = P->h2;
    const float damp = 1.0f - expf(-d->drag * P->dt);
    const pbf_solid *S = w->solids; /* at the substep's end: colliders and meshes */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int k = 0; k < m; ++k) {
        pbf_v3 x = v3_load(D->x, k), vel = v3_load(D->v, k);
        pbf_diffuse_fluid f = pbf_diffuse_fluid_begin();
        uint32_t r[18];
        int ranges = pbf_grid_ranges(g, pbf_grid_cell(g, x), r);
        for (int q = 0; q < ranges; ++q)
            for (int j = (int)r[2 * q]; j < (int)r[2 * q + 1] && j < n; ++j)
                pbf_diffuse_fluid_add(&f, v3_sub(x, v3_load(p, j)), v3_load(v, j), h, h2);
        x = pbf_diffuse_advect(x, &vel, &D->life[k], &D->kind[k], f, d, damp, P, S);
        v3_store(D->x, k, x);
        v3_store(D->v, k, vel);
    }
}

/* Drops the dead, keeping the order of the rest. */
static void compact(pbf_diffuse *D) {
    int out = 0;
    for (int k = 0; k < D->count; ++k) {
        if (D->kind[k] == DIFFUSE_DEAD) continue;
        if (out != k) {
            v3_store(D->x, out, v3_load(D->x, k));
            v3_store(D->v, out, v3_load(D->v, k));
            D->life[out] = D->life[k];
            D->kind[out] = D->kind[k];
        }
        ++out;
    }
    D->count = out;
}

/* Runs the statements given last for each neighbour j of fluid particle i (at xi): from the
 * substep's neighbour list when the world keeps one (pairs found at the predicted positions:
 * a pair now beyond h gets zero weight from every kernel used here), else the 27-cell walk. */
#define DIFFUSE_FOR_NEIGHBORS(w, p, i, xi, j, ...)                                                 \
    do {                                                                                           \
        if ((w)->def.neighbor_mode == PBF_NEIGHBOR_LIST) {                                         \
            const uint32_t *s_ = (w)->neighbors.start, *nb_ = (w)->neighbors.index;                \
            for (uint32_t e_ = s_[i]; e_ < s_[(i) + 1]; ++e_) {                                    \
                const int j = (int)nb_[e_];                                                        \
                __VA_ARGS__                                                                        \
            }                                                                                      \
        } else {                                                                                   \
            PBF_FOR_EACH_CELL_NEIGHBOR(&(w)->grid, p, (w)->params.h2, i, xi, j, l_, {              \
                (void)l_;                                                                          \
                __VA_ARGS__                                                                        \
            });                                                                                    \
        }                                                                                          \
    } while (0)

/* The outward unit surface normal of every fluid particle (0 inside the fluid). */
static void normals(pbf_world *w, pbf_diffuse *D, int nt) {
    const pbf_params *P = &w->params;
    const float *p = w->p;
    const int n = w->count;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i), gsum = v3(0.0f, 0.0f, 0.0f);
        DIFFUSE_FOR_NEIGHBORS(w, p, i, xi, j, {
            if (j >= n) continue;
            gsum = pbf_diffuse_normal_add(gsum, v3_sub(xi, v3_load(p, j)), P);
        });
        v3_store(D->normal, i, pbf_diffuse_normal_end(gsum, P));
    }
}

/* How many diffuse particles each fluid particle spawns this substep (D->spawn). */
static void spawn_counts(pbf_world *w, pbf_diffuse *D, int nt) {
    const pbf_params *P = &w->params;
    const pbf_diffuse_def *d = &D->def;
    const float *p = w->p, *v = w->v, *nrm = D->normal;
    const int n = w->count;
    const uint32_t step = (uint32_t)D->substeps;
    const uint8_t *ghost = w->halo_ghost; /* split: a ghost's owner spawns its particles */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        if (ghost && ghost[i]) {
            D->spawn[i] = 0;
            continue;
        }
        pbf_v3 xi = v3_load(p, i), vi = v3_load(v, i), ni = v3_load(nrm, i);
        const float phi_k = pbf_diffuse_kinetic(vi, d);
        if (!(phi_k > 0.0f)) {
            D->spawn[i] = 0;
            continue;
        }
        const int crest = pbf_diffuse_crest(vi, ni);
        float ta = 0.0f, wc = 0.0f;
        DIFFUSE_FOR_NEIGHBORS(w, p, i, xi, j, {
            if (j >= n) continue;
            pbf_diffuse_potentials_add(&ta, &wc, v3_sub(xi, v3_load(p, j)),
                                       v3_sub(vi, v3_load(v, j)), ni, v3_load(nrm, j), crest, P->h);
        });
        /* the fraction by a draw: spawns expected particles on average */
        D->spawn[i] = pbf_diffuse_spawn_count(phi_k, ta, wc, d, P->dt, (uint32_t)w->ids[i], step);
    }
}

/* Places the spawned particles: fluid particle i's k-th in a cylinder of radius r around it,
 * reaching one substep's travel along its velocity (Ihmsen's sampling), at its velocity. */
static void place(pbf_world *w, pbf_diffuse *D, int first, int nt) {
    const pbf_params *P = &w->params;
    const pbf_diffuse_def *d = &D->def;
    const float *p = w->p, *v = w->v;
    const int n = w->count;
    const uint32_t step = (uint32_t)D->substeps;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        int begin = D->spawn[i], end = D->spawn[i + 1];
        if (begin == end) continue;
        pbf_v3 xi = v3_load(p, i), vi = v3_load(v, i);
        const pbf_diffuse_frame f = pbf_diffuse_frame_of(vi);
        const uint8_t kind = pbf_diffuse_born_kind(w->neighbor_counts[i], d);
        for (int k = begin; k < end; ++k) {
            const uint32_t id = (uint32_t)w->ids[i];
            const pbf_v3 x = pbf_diffuse_place(xi, &f, id, step, k - begin, P, w->solids);
            int slot = first + k;
            v3_store(D->x, slot, x);
            v3_store(D->v, slot, vi);
            D->life[slot] = d->lifetime;
            D->kind[slot] = kind;
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * A world split over processes (docs/mpi.md): each process holds the diffuse particles in its
 * slab and, during the substep, the fluid's ghosts around it */

#define ROUTE_RECORD 29 /* x, v, life (7 floats) and the kind: x first (w->halo_route) */

/* Sends every diffuse particle to the process whose slab holds its x; the set becomes what
 * arrives, process 0's first, each in its order. Collective. */
static pbf_status route(pbf_world *w, pbf_diffuse *D) {
    const int m = D->count;
    unsigned char *rec = malloc((size_t)m * ROUTE_RECORD + 1);
    void *in = NULL;
    int got = 0;
    if (rec != NULL)
        for (int k = 0; k < m; ++k) {
            unsigned char *r = rec + (size_t)k * ROUTE_RECORD;
            memcpy(r, D->x + 3 * k, 12);
            memcpy(r + 12, D->v + 3 * k, 12);
            memcpy(r + 24, D->life + k, 4);
            r[28] = D->kind[k];
        }
    /* a rank out of memory still takes part (NULL records): the route fails on every rank */
    pbf_status st = w->halo_route(w, rec, m, ROUTE_RECORD, &in, &got);
    free(rec);
    if (st != PBF_OK) return st;
    if (pbf__diffuse_grow_set(D, got) != PBF_OK) {
        free(in);
        return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory for %d diffuse particles", got);
    }
    const unsigned char *src = in;
    for (int k = 0; k < got; ++k) {
        const unsigned char *r = src + (size_t)k * ROUTE_RECORD;
        memcpy(D->x + 3 * k, r, 12);
        memcpy(D->v + 3 * k, r + 12, 12);
        memcpy(D->life + k, r + 24, 4);
        D->kind[k] = r[28];
    }
    D->count = got;
    free(in);
    return PBF_OK;
}

void pbf__diffuse_keep_owned(pbf_world *w) {
    pbf_diffuse *D = w->diffuse;
    if (D == NULL || w->halo_owns == NULL) return;
    for (int k = 0; k < D->count; ++k)
        if (!w->halo_owns(w, D->x[3 * k])) D->kind[k] = DIFFUSE_DEAD;
    compact(D);
}

pbf_status pbf__diffuse_append(pbf_world *w, const pbf_world *part) {
    const pbf_diffuse *P = part->diffuse;
    pbf_diffuse *D = w->diffuse;
    if (P == NULL || P->count == 0) return PBF_OK;
    if (D == NULL || pbf__diffuse_grow_set(D, D->count + P->count) != PBF_OK)
        return PBF_ERR_OUT_OF_MEMORY;
    const size_t at = (size_t)D->count, n = (size_t)P->count;
    memcpy(D->x + 3 * at, P->x, 3 * n * sizeof *D->x);
    memcpy(D->v + 3 * at, P->v, 3 * n * sizeof *D->v);
    memcpy(D->life + at, P->life, n * sizeof *D->life);
    memcpy(D->kind + at, P->kind, n);
    D->count += P->count;
    return PBF_OK;
}

pbf_status pbf__diffuse_substep(pbf_world *w, int nt) {
    pbf_diffuse *D = w->diffuse;
    const int n = w->count; /* split: the owned particles and the ghosts */
    if (grow_fluid(D, n) != PBF_OK)
        return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY,
                         "out of memory for the diffuse particles' scratch of %d particles", n);
    if (w->halo) {
        /* the ghosts' final positions and velocities (XSPH, vorticity and the viscosity solve
         * changed their owners' after the last exchange), and each diffuse particle on the
         * process that holds the fluid around it */
        w->halo_exchange(w, w->p, 3);
        w->halo_exchange(w, w->v, 3);
        pbf_status st = route(w, D);
        if (st != PBF_OK) return st;
    }
    advect(w, D, nt);
    compact(D);
    normals(w, D, nt);
    if (w->halo) w->halo_exchange(w, D->normal, 3); /* the ghosts' normals: their owners' */
    spawn_counts(w, D, nt);
    /* prefix sum in slot order, cut where the set is full: the same set for any thread count.
     * Split: the whole world's set against max_count, the processes' spawns taken in rank
     * order (a process's room is what the lower ranks left) */
    int64_t room = (int64_t)D->def.max_count - D->count;
    int64_t world_room = room, world_spawn = 0;
    if (w->halo) {
        int64_t mine[2] = {D->count, 0}, before[2], all[2];
        for (int i = 0; i < n; ++i) mine[1] += D->spawn[i];
        w->halo_scan(w, mine, before, all, 2);
        world_room = (int64_t)D->def.max_count - all[0];
        world_spawn = all[1];
        room = world_room - before[1];
    }
    if (room < 0) room = 0; /* max_count lowered below the set: no new ones until it shrinks */
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
        int64_t c = D->spawn[i];
        if (total + c > room) c = room - total;
        D->spawn[i] = (int32_t)total;
        total += c;
    }
    D->spawn[n] = (int32_t)total;
    if (total > 0) {
        if (pbf__diffuse_grow_set(D, D->count + (int)total) != PBF_OK)
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory for %lld diffuse particles",
                             (long long)(D->count + total));
        place(w, D, D->count, nt);
        D->count += (int)total;
        if (!w->halo) D->generated += total;
    }
    /* split: the whole world's count, the same on every process */
    if (w->halo && world_room > 0)
        D->generated += world_spawn < world_room ? world_spawn : world_room;
    D->substeps++;
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Diffuse particles as a module of the step (module.h): moved by and spawned from each
 * substep's final fluid state */

static pbf_status diffuse_after_watchdog(pbf_world *w, int threads) {
    return w->diffuse != NULL ? pbf__diffuse_substep(w, threads) : PBF_OK;
}

const pbf_module pbf__diffuse_module = {
    .name = "diffuse",
    .after_watchdog = diffuse_after_watchdog,
    .memory_bytes = pbf__diffuse_memory_bytes,
    .free = pbf__diffuse_free,
};
