/* Probes inside the library (include/pbf/probes.h, docs/validation.md): the world's
 * probe set (probes_state.h) and the two hooks the step calls for force probes (solver.c, marked "probes").
 * Heights and fronts need no hook: they are read from the positions when sampled. */
#ifndef PBF_PROBES_INTERNAL_H
#define PBF_PROBES_INTERNAL_H

#include "probes_state.h"

/* After every Δp pass (solver.c: solve_density), with the pass's parameters P (s_corr may be
 * off in later passes) and Chebyshev ω (1: plain). */
void pbf__probes_force_pass(pbf_world *w, const pbf_params *P, float omega);
static inline void pbf__probes_after_delta(pbf_world *w, const pbf_params *P, float omega) {
    if (w->probes != NULL && w->probes->patch_count > 0) pbf__probes_force_pass(w, P, omega);
}
/* At the end of a successful pbf_world_step: the step's mean forces. */
void pbf__probes_step_end(pbf_world *w);
void pbf__probes_free(pbf_world *w);

/* For a world whose Δp passes run on the GPU (cuda/world_cuda.c): the patches' planes at the
 * walls of P (one per patch) and the box around their reach widened by margin, which the force
 * pass tests first; and a step's sums from the device, Σ (m/dt²) Δx·n per patch added to the
 * step's and the last pass's particle count, before pbf__probes_step_end. */
void pbf__probes_reach(const pbf_probes *set, const pbf_params *P, float margin, float *plane,
                       float box_lo[3], float box_hi[3]);
void pbf__probes_add_sums(pbf_world *w, const double *sum, const int *last_count);

/* This feature as a module of the step (module.h, modules.c). */
extern const struct pbf_module pbf__probes_module;

#endif
