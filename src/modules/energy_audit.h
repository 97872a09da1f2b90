/* The energy audit's marks, called by solver.c when world->energy_audit is set
 * (include/pbf/pbf.h: pbf_world_set_energy_audit). */
#ifndef PBF_ENERGY_AUDIT_H
#define PBF_ENERGY_AUDIT_H

#include "world_state.h"

/* Clears the step's audit and records the energy of (x, v); on a CUDA world only clears it
 * (its first substep books the start, src/backend/cuda/world_cuda.c). */
void pbf__energy_begin_step(pbf_world *w);
/* Books energy e (J) at the end of `stage`: the change since the last mark goes to the stage. */
void pbf__energy_book(pbf_world *w, pbf_energy_stage stage, double e);
/* Books the change since the last mark to `stage`: the energy of positions pos with velocities
 * vel, or (pos − x_old)/dt when vel is NULL, plus dv when dv is not NULL. */
void pbf__energy_mark(pbf_world *w, pbf_energy_stage stage, const float *pos, const float *vel,
                      const float *x_old, const float *dv);

#endif
