/* The watchdog's report (see watchdog.h). */
#include "watchdog.h"

pbf_status pbf__unstable(pbf_world *w, int32_t id, pbf_v3 x, double t, const char *what) {
    return pbf__fail(w, PBF_ERR_UNSTABLE,
                     "simulation unstable at step %lld (t = %.4f s): particle %d at (%.4g, %.4g, "
                     "%.4g) %s; make the time step smaller (raise time.substeps, now %d, or "
                     "time.fps) or raise solver.%s (now %d)",
                     (long long)w->profile.steps + 1, t, (int)id, (double)x.x, (double)x.y,
                     (double)x.z, what, w->def.substeps,
                     w->def.solver.target_error > 0.0f ? "max_iterations" : "iterations",
                     w->def.solver.target_error > 0.0f ? w->def.solver.max_iterations
                                                       : w->def.solver.iterations);
}

pbf_status pbf__unstable_speed(pbf_world *w, int32_t id, pbf_v3 x, double t, float speed,
                               float cfl_speed, float dt_substep) {
    char what[192];
    pbf__format(what, sizeof what,
                "moves at %.3g m/s (%.3g m in one substep), %.0f times the CFL speed limit "
                "cfl*h/dt_substep = %.3g m/s (the watchdog stops at %g times)",
                (double)speed, (double)(speed * dt_substep), (double)(speed / cfl_speed),
                (double)cfl_speed, (double)WATCHDOG_CFL_FACTOR);
    return pbf__unstable(w, id, x, t, what);
}
