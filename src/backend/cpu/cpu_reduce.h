/* The CPU backend's serial reductions over the particles, in slot order, so that their sums and
 * reports are the same for any thread count: the density error the solve's control reads, the
 * instability watchdog of every substep and the step's profile. The step (solver.c) calls them;
 * a CUDA world reduces on the device (cuda/). */
#ifndef PBF_CPU_REDUCE_H
#define PBF_CPU_REDUCE_H

#include "world_state.h"

/* The mean over the particles of max(ρ/ρ0 − 1, 0), from the last λ or vorticity pass's
 * densities; with `deficit` not NULL also the mean of max(1 − ρ/ρ0, 0) into *deficit (the
 * expansion watch of the accelerated solve, solve_control.h). Split over processes: the ghosts
 * skipped, and with `global` the whole world's (collective); without it this process's own. */
float pbf__cpu_density_error(pbf_world *w, int global, float *deficit);
/* The watchdog's check of a substep's result (new positions p, velocities v, the last λ):
 * PBF_ERR_UNSTABLE with the report (watchdog.h) for the first particle that went wrong. */
pbf_status pbf__cpu_watchdog(pbf_world *w);
/* The step's density error (average, maximum) and neighbours per particle into w->profile;
 * PBF_ERR_UNSTABLE for a non-finite density. */
pbf_status pbf__cpu_profile(pbf_world *w);

#endif
