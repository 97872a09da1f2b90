/* Diffuse particles (spray, foam, bubbles) inside the library; include/pbf/diffuse.h has the
 * public side and the model. solver.c calls the substep hook; checkpoint.c saves and restores
 * the state below. */
#ifndef PBF_DIFFUSE_INTERNAL_H
#define PBF_DIFFUSE_INTERNAL_H

#include "diffuse_state.h" /* struct pbf_diffuse */

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

/* A world just split over processes (src/comm/mpi/split.c) from the whole world: keeps the
 * diffuse particles in this process's slab (w->halo_owns). */
void pbf__diffuse_keep_owned(pbf_world *w);

/* Merging checkpoint pieces (src/io/checkpoint_merge.c): appends part's diffuse particles to
 * w's set (w's def, counter and generated count stay: the whole world's on every piece).
 * PBF_ERR_OUT_OF_MEMORY, or when w has no diffuse particles on but part has some. */
pbf_status pbf__diffuse_append(pbf_world *w, const pbf_world *part);

/* This feature as a module of the step (module.h, modules.c). */
extern const struct pbf_module pbf__diffuse_module;

#endif
