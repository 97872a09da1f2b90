/* The energy audit: E = Σ m (|v|²/2 − g·x) at the boundaries of a substep's stages, summed in
 * slot order (the same bits for any thread count). solver.c marks the stages; nothing here
 * calls back into it. */
#include "energy_audit.h"

#include <string.h>
#include "caps.h" /* what runs where */
#include "kernels.h" /* a particle's terms of the energy */

/* Energy of positions pos and velocities: vel, or (pos − x_old)/dt when vel is NULL, plus
 * dv when it is not NULL. In a world split over processes the ghosts are skipped and the
 * processes' energies are added in rank order (collective: every process marks the same
 * stages), so every process books the whole world's audit. */
static double energy(pbf_world *w, const float *pos, const float *vel, const float *x_old,
                     const float *dv) {
    const pbf_params *P = &w->params;
    const uint8_t *ghost = w->halo_ghost; /* NULL unless split */
    double ke = 0.0, pe = 0.0;
    for (int i = 0; i < w->count; ++i) {
        if (ghost && ghost[i]) continue;
        pbf_v3 x = v3_load(pos, i), v = pbf_energy_velocity(x, vel, x_old, dv, i, P->inv_dt);
        ke += pbf_energy_kinetic(v);
        pe -= pbf_energy_height(P->gravity, x);
    }
    double e = (double)P->mass * (ke + pe);
    if (w->halo) w->halo_sum(w, &e, 1);
    return e;
}

void pbf__energy_begin_step(pbf_world *w) {
    memset(&w->audit, 0, sizeof w->audit);
    /* a CUDA world's particles are on the device, which sums the energies there: its substeps
     * book them (src/backend/cuda/world_cuda.c), the step's start with the first */
    w->audit_mark = 0.0;
    if (w->cuda == NULL) w->audit.start = w->audit_mark = energy(w, w->x, w->v, NULL, NULL);
}

void pbf__energy_book(pbf_world *w, pbf_energy_stage stage, double e) {
    w->audit.change[stage] += e - w->audit_mark;
    w->audit_mark = w->audit.end = e;
}

void pbf__energy_mark(pbf_world *w, pbf_energy_stage stage, const float *pos, const float *vel,
                      const float *x_old, const float *dv) {
    pbf__energy_book(w, stage, energy(w, pos, vel, x_old, dv));
}

pbf_status pbf_world_set_energy_audit(pbf_world *w, int on) {
    if (on && !w->energy_audit && pbf__caps_require(w, PBF_FEATURE_ENERGY_AUDIT) != PBF_OK)
        return PBF_ERR_UNSUPPORTED;
    w->energy_audit = on != 0;
    return PBF_OK;
}

pbf_energy_audit pbf_world_get_energy_audit(const pbf_world *w) { return w->audit; }
