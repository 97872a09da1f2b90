/* Emitters, sinks and the particle capacity inside the library (include/pbf/flow.h has the
 * public side). world.c and solver.c call the hooks below; checkpoint.c saves and restores the
 * state. */
#ifndef PBF_EMITTER_H
#define PBF_EMITTER_H

#include "flow_state.h"

void pbf__flow_free(pbf_world *w);
size_t pbf__flow_memory_bytes(const pbf_world *w);
/* Before a step of dt in `substeps` substeps: PBF_ERR_CAPACITY (the world unchanged) when the
 * emitters would add more particles than the capacity leaves room for. */
pbf_status pbf__flow_step_check(pbf_world *w, float dt, int substeps);
/* At the end of a substep that ran from t0 to w->time: removes the particles in the
 * sinks, drives the fluid in the nozzles, emits the due layers. Serial, in slot order. */
pbf_status pbf__flow_substep_end(pbf_world *w, double t0);

/* This feature as a module of the step (module.h, modules.c). */
extern const struct pbf_module pbf__flow_module;

#endif
