/* Probes inside the library (include/pbf/probes.h, docs/validation.md): the world's
 * probe set and the two hooks the step calls for force probes (solver.c, marked "probes").
 * Heights and fronts need no hook: they are read from the positions when sampled. */
#ifndef PBF_PROBES_INTERNAL_H
#define PBF_PROBES_INTERNAL_H

#include "pbf/probes.h"
#include "world_state.h"

/* A force patch in the form the hook uses. */
typedef struct pbf_patch {
    int probe;          /* index into the probe set */
    int axis;           /* normal axis, 0..2 */
    float sign;         /* +1: normal along +axis, −1 along −axis */
    int wall;           /* the domain wall it lies on (pbf_wall), or −1 for a box collider face */
    float plane;        /* the face's coordinate along axis for a collider face (static) */
    float lo[3], hi[3]; /* tangential extent: [lo, hi) on the two axes other than axis */
    float area;         /* m² */
    double sum;         /* Σ (m/dt²) Δx·n over the step so far, N · substeps */
    int last_count;     /* particles facing it in the last Δp pass */
} pbf_patch;

typedef struct pbf_probes {
    int count;
    pbf_probe_def defs[PBF_MAX_PROBES];
    int patch_count;
    pbf_patch patches[PBF_MAX_PROBES];
    double force[PBF_MAX_PROBES];  /* by probe: the last step's mean normal force, N */
    int force_count[PBF_MAX_PROBES];
    /* Chebyshev acceleration only (src/probes.c): the solids' share of each tracked particle's
     * last displacement, carried into the next pass by the (ω − 1) momentum term, and the pass
     * that wrote it. Grown to the particle count on first use. */
    float *carry;
    int64_t *carry_pass;
    int carry_capacity;
    int64_t pass;
    int degraded; /* the carry could not be allocated: forces of the step read NaN */
} pbf_probes;

/* After every Δp pass (solver.c: solve_density), with the pass's parameters P (s_corr may be
 * off in later passes) and Chebyshev ω (1: plain). */
void pbf__probes_force_pass(pbf_world *w, const pbf_params *P, float omega);
static inline void pbf__probes_after_delta(pbf_world *w, const pbf_params *P, float omega) {
    if (w->probes != NULL && w->probes->patch_count > 0) pbf__probes_force_pass(w, P, omega);
}
/* At the end of a successful pbf_world_step: the step's mean forces. */
void pbf__probes_step_end(pbf_world *w);
void pbf__probes_free(pbf_world *w);
/* pbf_world_sample_probes, with the positions current on the host (world.c). */
pbf_status pbf__probes_sample(const pbf_world *w, pbf_probe_sample *out);

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
