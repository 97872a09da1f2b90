/* Implicit viscosity and free-surface drag (kernels.h, "Viscosity for thick fluids";
 * docs/physics.md, "Viscosity for thick fluids" and "Surface drag"): stages of the CPU step
 * after the vorticity passes. */
#ifndef PBF_VISCOSITY_H
#define PBF_VISCOSITY_H

#include "world_state.h"

/* The constants of both terms in w->params, from w->def (called by pbf__init_params). */
void pbf__viscosity_init_params(pbf_world *w);
/* Runs the viscosity solve and then the surface drag on w->v at the positions w->p, each only
 * when it is on; nt threads. Fails only when out of memory for the solve's scratch. */
pbf_status pbf__viscosity_substep(pbf_world *w, int nt);
/* Frees the solve's scratch (NULL-safe). */
void pbf__viscosity_free(pbf_world *w);

/* This feature as a module of the step (module.h, modules.c). */
extern const struct pbf_module pbf__viscosity_module;

#endif
