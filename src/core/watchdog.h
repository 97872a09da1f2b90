/* The instability watchdog's limits and its report, for both steps: the CPU's (cpu_reduce.c,
 * which checks every substep on the host) and the CUDA backend's (cuda/world_cuda.c, whose
 * device code checks and hands back what it found). Both report through these functions, so the
 * two backends stop with the same message, and neither calls into the other for it. What the
 * watchdog checks and why: the comment above pbf__cpu_watchdog (src/backend/cpu/cpu_reduce.c),
 * docs/robustness.md. */
#ifndef PBF_WATCHDOG_H
#define PBF_WATCHDOG_H

#include "world_state.h"

/* A particle "far beyond the CFL limit" moves faster than WATCHDOG_CFL_FACTOR times
 * cfl·h/dt_substep, with cfl taken as at least WATCHDOG_MIN_CFL (so a disabled limit, cfl = 0,
 * still has a watchdog). */
#define WATCHDOG_CFL_FACTOR 10.0f
#define WATCHDOG_MIN_CFL 0.5f

/* Fails the step with PBF_ERR_UNSTABLE: names the step, the particle (stable id) at x at time
 * t, `what` it did, and what to change. */
pbf_status pbf__unstable(pbf_world *w, int32_t id, pbf_v3 x, double t, const char *what);
/* The same for a particle moving at `speed` m/s, over the limit cfl_speed = cfl·h/dt_substep
 * of a substep of dt_substep seconds. */
pbf_status pbf__unstable_speed(pbf_world *w, int32_t id, pbf_v3 x, double t, float speed,
                               float cfl_speed, float dt_substep);

#endif /* PBF_WATCHDOG_H */
