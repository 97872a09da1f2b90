/* Diffuse particles (spray, foam, bubbles) inside the library; include/pbf/diffuse.h has the
 * public side and the model. solver.c calls the substep hook; checkpoint.c saves and restores
 * the state below. */
#ifndef PBF_DIFFUSE_INTERNAL_H
#define PBF_DIFFUSE_INTERNAL_H

#include "pbf/diffuse.h"
#include "world_state.h"

typedef struct pbf_diffuse {
    pbf_diffuse_def def;
    /* The set, in its deterministic order: count of capacity entries. */
    int count, capacity;
    float *x, *v; /* xyz-interleaved, m and m/s */
    float *life; /* s left (runs down while foam) */
    uint8_t *kind; /* pbf_diffuse_kind; DIFFUSE_DEAD marks one removed at the compaction */
    /* Substeps run with diffuse on: the hash's counter (saved in checkpoints). */
    uint64_t substeps;
    int64_t generated;
    /* Per fluid particle scratch: its outward unit surface normal (0 inside), its spawn count
     * and then the prefix sum of those. */
    int fluid_capacity;
    float *normal;
    int32_t *spawn;
} pbf_diffuse;

/* After the velocity update of a substep, at the corrected positions w->p and velocities w->v
 * (the grid of the substep still indexes them): moves, classifies and retires the diffuse
 * particles, then generates new ones. */
pbf_status pbf__diffuse_substep(pbf_world *w, int nt);
void pbf__diffuse_free(pbf_world *w);
size_t pbf__diffuse_memory_bytes(const pbf_world *w);
/* Checkpoint restore: enables diffuse with def and makes room for count particles with the
 * count set; the caller fills x, v, life and kind. */
pbf_status pbf__diffuse_restore(pbf_world *w, const pbf_diffuse_def *def, int count,
                                uint64_t substeps, int64_t generated);

/* This feature as a module of the step (module.h, modules.c). */
extern const struct pbf_module pbf__diffuse_module;

#endif
