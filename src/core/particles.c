/* The particle arrays of a world: growing them (once, to a fixed capacity, when the world has
 * one), the memory check before that, appending a particle with the next id, dropping particles
 * (sinks, MPI migration and halo) and packing one for another rank, all from the list of arrays
 * in fields.h; the capacity itself (pbf_world_set_capacity) and the flow state it lives in.
 * Below world.c, emitter.c, geometry/meshes.c, checkpoint.c and mpi/halo.c, which all add or
 * remove particles or need the flow state; it calls nothing above it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "caps.h" /* what runs where: a capacity is the emitters' */
#include "resources.h" /* memory checks before allocating */
#include "flow_state.h" /* the fixed capacity */
#include "cuda/world_cuda.h" /* cuda: the host arrays are rewritten */
#include "world_state.h"

/* Bytes per particle of the per-particle arrays of pbf_world (the neighbour list is counted
 * separately). */
size_t pbf__bytes_per_particle(void) {
#define PBF_FIELD_BYTES(name, type, components, flags, scratch) +(components) * sizeof(type)
    return 0 PBF_PARTICLE_FIELDS(PBF_FIELD_BYTES) /* fields.h */
           + 3 * sizeof(uint32_t); /* the grid's cell and order, the neighbour list's start */
#undef PBF_FIELD_BYTES
}

/* Grows every per-particle array to hold at least n particles. */
pbf_status pbf__world_grow(pbf_world *w, int n) {
    /* emitter.h: a fixed capacity. Split over processes it bounds each process's own particles
     * and is checked by all of them together before a step (emitter.c): the halo's ghosts and
     * the particles migrating in mid-step grow the arrays past it, since one process failing
     * alone inside the halo exchange would leave the others waiting for it */
    const int fixed = w->flow != NULL && w->halo == NULL ? w->flow->capacity : 0;
    if (fixed > 0 && n > fixed)
        return pbf__fail(w, PBF_ERR_CAPACITY,
                         "%d particles do not fit the particle capacity of %d (scene key "
                         "flow.capacity, pbf_world_set_capacity)",
                         n, fixed);
    if (n <= w->capacity) return PBF_OK;
    int cap = w->capacity ? w->capacity : 1024;
    while (cap < n) cap = cap > INT32_MAX / 2 ? n : cap * 2;
    if (fixed > 0 && cap > fixed) cap = fixed; /* a fixed capacity is allocated exactly */
    size_t c = (size_t)cap;
#define GROW(ptr, elems)                                                                           \
    do {                                                                                           \
        void *q_ = realloc((ptr), (elems) * sizeof *(ptr));                                        \
        if (!q_) goto oom;                                                                         \
        (ptr) = q_;                                                                                \
    } while (0)
#define PBF_FIELD_GROW(name, type, components, flags, scratch) GROW(w->name, (components)*c);
    PBF_PARTICLE_FIELDS(PBF_FIELD_GROW) /* fields.h */
#undef PBF_FIELD_GROW
    GROW(w->grid.cell_of, c);
    GROW(w->grid.order, c);
    GROW(w->neighbors.start, c + 1);
#undef GROW
    w->capacity = cap;
    return PBF_OK;
oom:
    return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory growing to %d particles (%.1f MB)",
                     cap, (double)c * (double)pbf__bytes_per_particle() / 1e6);
}

/* Resources: a world of `total` particles must fit in memory, refused before anything
 * is allocated (Linux would grant the allocation and kill the process later). */
pbf_status pbf__check_particle_memory(pbf_world *w, int64_t total) {
    char why[PBF_ERROR_SIZE];
    if (pbf__check_memory((double)pbf_world_memory_estimate(&w->def, total),
                          "pbf_world_memory_estimate", why, sizeof why) == 0)
        return PBF_OK;
    return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY,
                     "a world of %lld particles %s; use fewer particles (a larger "
                     "particle_radius or smaller blocks)",
                     (long long)total, why);
}

/* Checkpoint restore (src/io/checkpoint.c): room for count particles, count set; the
 * caller fills slots [0, count) of every per-particle array. */
pbf_status pbf__world_resize(pbf_world *w, int count) {
    pbf__cuda_touch(w); /* cuda: the caller rewrites the host arrays */
    pbf_status st = pbf__check_particle_memory(w, count);
    if (st == PBF_OK) st = pbf__world_grow(w, count);
    if (st == PBF_OK) w->count = count;
    return st;
}

/* The same with the memory check when the arrays must grow (emitters, the capacity). */
pbf_status pbf__world_reserve(pbf_world *w, int n) {
    if (n > w->capacity) {
        pbf_status st = pbf__check_particle_memory(w, n);
        if (st != PBF_OK) return st;
    }
    return pbf__world_grow(w, n);
}

/* Every per-particle array's entry of slot i is 0, except those of the arrays with `keep` among
 * their flags. */
static void zero_slot(pbf_world *w, int i, int keep) {
#define PBF_FIELD_ZERO(name, type, components, flags, scratch)                                     \
    if (!((flags)&keep))                                                                           \
        memset(w->name + (size_t)(components) * (size_t)i, 0, (components) * sizeof(type));
    PBF_PARTICLE_FIELDS(PBF_FIELD_ZERO) /* fields.h */
#undef PBF_FIELD_ZERO
}

/* Appends one particle with the next id; the caller has reserved room. */
void pbf__push_particle(pbf_world *w, pbf_v3 x, pbf_v3 v, int phase) {
    int i = w->count++;
    zero_slot(w, i, 0);
    v3_store(w->x, i, x);
    v3_store(w->p, i, x);
    v3_store(w->v, i, v);
    w->ids[i] = w->next_id++;
    w->phase[i] = (uint8_t)phase;
}

int pbf__particles_compact(pbf_world *w, const uint8_t *gone) {
    const int n = w->count;
    int first = 0;
    while (first < n && !gone[first]) ++first;
    int kept = first;
    /* array by array: each loop streams one array (the same copies in any order) */
#define PBF_FIELD_COMPACT(name, type, components, flags, scratch)                                  \
    if ((flags)&PBF_FIELD_KEPT) {                                                                  \
        const size_t c_ = (components);                                                            \
        kept = first;                                                                              \
        for (int i = first; i < n; ++i)                                                            \
            if (!gone[i]) {                                                                        \
                memcpy(w->name + c_ * (size_t)kept, w->name + c_ * (size_t)i, c_ * sizeof(type));  \
                ++kept;                                                                            \
            }                                                                                      \
    }
    PBF_PARTICLE_FIELDS(PBF_FIELD_COMPACT) /* fields.h */
#undef PBF_FIELD_COMPACT
    w->count = kept;
    return n - kept;
}

size_t pbf__particle_bytes(int flag) {
#define PBF_FIELD_SENT(name, type, components, flags, scratch)                                     \
    +(((flags)&flag) ? (components) * sizeof(type) : 0)
    return 0 PBF_PARTICLE_FIELDS(PBF_FIELD_SENT); /* fields.h */
#undef PBF_FIELD_SENT
}

void pbf__particle_pack(const pbf_world *w, int flag, int i, unsigned char *dst) {
#define PBF_FIELD_PACK(name, type, components, flags, scratch)                                     \
    if ((flags)&flag) {                                                                            \
        memcpy(dst, w->name + (size_t)(components) * (size_t)i, (components) * sizeof(type));      \
        dst += (components) * sizeof(type);                                                        \
    }
    PBF_PARTICLE_FIELDS(PBF_FIELD_PACK) /* fields.h */
#undef PBF_FIELD_PACK
}

void pbf__particle_unpack(pbf_world *w, int flag, int i, const unsigned char *src) {
    zero_slot(w, i, flag);
#define PBF_FIELD_UNPACK(name, type, components, flags, scratch)                                   \
    if ((flags)&flag) {                                                                            \
        memcpy(w->name + (size_t)(components) * (size_t)i, src, (components) * sizeof(type));      \
        src += (components) * sizeof(type);                                                        \
    }
    PBF_PARTICLE_FIELDS(PBF_FIELD_UNPACK) /* fields.h */
#undef PBF_FIELD_UNPACK
}

size_t pbf_world_memory_estimate(const pbf_world_def *def, int64_t particles) {
    /* Neighbours per particle at rest ≈ (4/3)π (h/2r)³; compressed states and the list's
     * headroom take up to about twice that. */
    double ratio = def->kernel_scale / 2.0;
    double neighbors = 2.0 * 4.18879 * ratio * ratio * ratio;
    pbf_v3 lo, hi;
    pbf__walls_envelope(def, &lo, &hi);
    double h = def->kernel_scale * def->particle_radius;
    double cells = ceil((hi.x - lo.x) / h) * ceil((hi.y - lo.y) / h) * ceil((hi.z - lo.z) / h);
    /* a doubling growth policy may leave up to 2x capacity */
    double per = (double)pbf__bytes_per_particle() + 4.0 + neighbors * 8.0; /* index + pair_g */
    return (size_t)((double)particles * per * 1.25 + cells * 8.0 + sizeof(pbf_world));
}

/* The flow state exists for the capacity, emitters and sinks alike (flow_state.h). */
pbf_status pbf__flow_ensure(pbf_world *w) {
    if (w->flow != NULL) return PBF_OK;
    w->flow = calloc(1, sizeof *w->flow);
    if (w->flow == NULL) return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY, "out of memory");
    return PBF_OK;
}

pbf_status pbf_world_set_capacity(pbf_world *w, int capacity) {
    if (!(capacity >= w->count && capacity <= INT32_MAX / 4))
        return pbf__fail(w, PBF_ERR_INVALID_ARG,
                         "capacity must be in [%d (the particles already there), %d], got %d",
                         w->count, INT32_MAX / 4, capacity);
    pbf_status st = pbf__caps_require(w, PBF_FEATURE_EMITTERS); /* the capacity is theirs */
    if (st == PBF_OK) st = pbf__flow_ensure(w);
    if (st != PBF_OK) return st;
    int before = w->flow->capacity;
    w->flow->capacity = capacity; /* reserve allocates exactly this much, once */
    st = pbf__world_reserve(w, capacity); /* the memory check and the allocation */
    if (st != PBF_OK) w->flow->capacity = before;
    return st;
}
