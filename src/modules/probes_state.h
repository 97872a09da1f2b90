/* The world's probe set (include/pbf/probes.h): what probes.c keeps between steps, and what
 * the table of what runs where (caps.c) reads to know which probes a world has. */
#ifndef PBF_PROBES_STATE_H
#define PBF_PROBES_STATE_H

#include "pbf/probes.h"
#include "world_state.h"

/* A force patch in the form the hook uses. */
typedef struct pbf_patch {
    int probe; /* index into the probe set */
    int axis; /* normal axis, 0..2 */
    float sign; /* +1: normal along +axis, −1 along −axis */
    int wall; /* the domain wall it lies on (pbf_wall), or −1 for a box collider face */
    float plane; /* the face's coordinate along axis for a collider face (static) */
    float lo[3], hi[3]; /* tangential extent: [lo, hi) on the two axes other than axis */
    float area; /* m² */
    double sum; /* Σ (m/dt²) Δx·n over the step so far, N · substeps */
    int last_count; /* particles facing it in the last Δp pass */
} pbf_patch;

typedef struct pbf_probes {
    int count;
    pbf_probe_def defs[PBF_MAX_PROBES];
    int patch_count;
    pbf_patch patches[PBF_MAX_PROBES];
    double force[PBF_MAX_PROBES]; /* by probe: the last step's mean normal force, N */
    int force_count[PBF_MAX_PROBES];
    /* Chebyshev acceleration only (src/modules/probes.c): the solids' share of each tracked
     * particle's
     * last displacement, carried into the next pass by the (ω − 1) momentum term, and the pass
     * that wrote it. Grown to the particle count on first use. */
    float *carry;
    int64_t *carry_pass;
    int carry_capacity;
    int64_t pass;
    int degraded; /* the carry could not be allocated: forces of the step read NaN */
} pbf_probes;

#endif
