/* The diffuse particles' state (include/pbf/diffuse.h): the set and its growth, as diffuse.c
 * (the CPU's substep, the API) and the CUDA backend's glue (src/backend/cuda/world_cuda.c, which
 * keeps the set on the device and this as its host copy) share it. */
#ifndef PBF_DIFFUSE_STATE_H
#define PBF_DIFFUSE_STATE_H

#include <stdint.h>
#include <stdlib.h>

#include "pbf/diffuse.h"
#include "world_state.h"

typedef struct pbf_diffuse {
    pbf_diffuse_def def;
    /* The set, in its deterministic order: count of capacity entries. */
    int count, capacity;
    float *x, *v; /* xyz-interleaved, m and m/s */
    float *life; /* s left (runs down while foam) */
    uint8_t *kind; /* pbf_diffuse_kind; PBF_DIFFUSE_DEAD (kernels.h): removed at the compaction */
    /* Substeps run with diffuse on: the hash's counter (saved in checkpoints). */
    uint64_t substeps;
    int64_t generated; /* split over processes: the whole world's, the same on every process */
    /* Per fluid particle scratch: its outward unit surface normal (0 inside), its spawn count
     * and then the prefix sum of those. */
    int fluid_capacity;
    float *normal;
    int32_t *spawn;
} pbf_diffuse;

/* Room for n particles in the set (its contents kept); PBF_ERR_OUT_OF_MEMORY leaves it as it
 * was, but for the arrays that did grow. */
static inline pbf_status pbf__diffuse_grow_set(pbf_diffuse *D, int n) {
    if (n <= D->capacity) return PBF_OK;
    int cap = D->capacity > 0 ? D->capacity : 1024;
    while (cap < n) cap = cap > INT32_MAX / 2 ? n : 2 * cap;
    float *x = (float *)realloc(D->x, (size_t)cap * 3 * sizeof *x);
    if (x) D->x = x;
    float *v = (float *)realloc(D->v, (size_t)cap * 3 * sizeof *v);
    if (v) D->v = v;
    float *life = (float *)realloc(D->life, (size_t)cap * sizeof *life);
    if (life) D->life = life;
    uint8_t *kind = (uint8_t *)realloc(D->kind, (size_t)cap);
    if (kind) D->kind = kind;
    if (!x || !v || !life || !kind) return PBF_ERR_OUT_OF_MEMORY;
    D->capacity = cap;
    return PBF_OK;
}

#endif
