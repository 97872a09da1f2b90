/* The CPU backend's serial reductions in slot order (cpu_reduce.h): the same sums and the
 * same reports for any thread count. */
#include "cpu_reduce.h"

#include <math.h>

#include "watchdog.h" /* its limits and report, shared with the CUDA step */

/* Average density error, mean over particles of max(ρ/ρ0 − 1, 0), from the densities of the
 * last λ or vorticity pass. Serial in slot order: the same sum for any thread count. In a world
 * split over processes the ghosts are skipped, and `global` makes it the whole world's error
 * (collective: the processes' sums and counts added in rank order, the same bits on each, so
 * that every process stops the error-controlled solve after the same pass); without `global`
 * it is this process's particles' own. */
float pbf__cpu_density_error(pbf_world *w, int global, float *deficit) {
    double sum = 0.0, below = 0.0, n = 0.0;
    const float inv_rho0 = w->params.inv_rest_density;
    const uint8_t *ghost = w->halo_ghost; /* NULL unless split */
    for (int i = 0; i < w->count; ++i) {
        if (ghost && ghost[i]) continue;
        float e = w->density[i] * inv_rho0 - 1.0f;
        sum += e > 0.0f ? e : 0.0f;
        below += e < 0.0f ? -e : 0.0f;
        n += 1.0;
    }
    if (global && w->halo) {
        double v[3] = {sum, n, below};
        w->halo_sum(w, v, 3);
        sum = v[0], n = v[1], below = v[2];
    }
    if (deficit) *deficit = n > 0.0 ? (float)(below / n) : 0.0f;
    return n > 0.0 ? (float)(sum / n) : 0.0f;
}

/* The instability watchdog (docs/robustness.md). At the end of every substep it stops
 * the step when a particle has a non-finite position, velocity or constraint multiplier λ, or
 * moves "far beyond the CFL limit", defined as WATCHDOG_CFL_FACTOR times cfl·h/dt_substep with
 * cfl taken as at least WATCHDOG_MIN_CFL (so a disabled limit, cfl = 0, still has a watchdog):
 * by default 10 × 0.5 h per substep = 5 kernel radii per substep. The speed is the larger of the
 * final velocity and the substep's displacement |p − x| / dt: the solver clamps velocities to
 * the CFL limit, so with a limit on only the displacement can show a particle that jumped. In
 * healthy runs both stay within a few times the limit (tests/test_limits.c measures the dam
 * break without a limit at 0.8×); a particle moving 5 h per substep has left all its neighbours.
 *
 * Why every substep and not once per step: the domain clamp in pbf_collide maps a NaN position
 * onto a wall (NaN compares false), so a NaN is turned into a jump, and one substep later into
 * a particle at rest at the wall. Only the substep where it happens shows it, as a jump or a
 * non-finite velocity. The pass is serial in slot order (the report is the same for any thread
 * count) and reads 40 bytes per particle: well under 1 % of a substep. */
static pbf_status unstable(pbf_world *w, int i, pbf_v3 x, double t, const char *what) {
    return pbf__unstable(w, w->ids[i], x, t, what);
}

/* Checks the substep's result: new positions p, velocities v, the last iteration's λ. */
pbf_status pbf__cpu_watchdog(pbf_world *w) {
    const pbf_params *P = &w->params;
    const int n = w->count;
    const double t = w->time + P->dt;
    const float cfl = w->def.solver.cfl > WATCHDOG_MIN_CFL ? w->def.solver.cfl : WATCHDOG_MIN_CFL;
    const float cfl_speed = cfl * P->h * P->inv_dt;
    const float limit = WATCHDOG_CFL_FACTOR * cfl_speed;
    const float inv_dt2 = P->inv_dt * P->inv_dt;
    float v2_max = 0.0f;
    int fastest = -1;
    const uint8_t *ghost = w->halo_ghost; /* split: another process checks its own */
    for (int i = 0; i < n; ++i) {
        if (ghost && ghost[i]) continue;
        pbf_v3 x = v3_load(w->p, i), v = v3_load(w->v, i);
        pbf_v3 d = v3_sub(x, v3_load(w->x, i));
        if (!isfinite(x.x) || !isfinite(x.y) || !isfinite(x.z))
            return unstable(w, i, x, t, "has a non-finite position");
        if (!isfinite(v.x) || !isfinite(v.y) || !isfinite(v.z)) {
            char what[96];
            pbf__format(what, sizeof what, "has a non-finite velocity (%g, %g, %g)", (double)v.x,
                        (double)v.y, (double)v.z);
            return unstable(w, i, x, t, what);
        }
        if (!isfinite(w->lambda[i]))
            return unstable(w, i, x, t,
                            "has a non-finite constraint multiplier (lambda): the density "
                            "constraint has no solution; raise solver.relaxation");
        float v2 = v3_dot(v, v), d2 = v3_dot(d, d) * inv_dt2;
        if (!(d2 <= v2)) v2 = d2; /* also takes a NaN displacement (x was not finite) */
        if (!(v2 <= v2_max)) v2_max = v2, fastest = i;
    }
    if (fastest >= 0 && !(v2_max <= limit * limit)) {
        return pbf__unstable_speed(w, w->ids[fastest], v3_load(w->p, fastest), t, sqrtf(v2_max),
                                   cfl_speed, P->dt);
    }
    return PBF_OK;
}

/* Density error and neighbour statistics, reduced serially in slot order (deterministic).
 * The watchdog has already checked every substep; a non-finite density is its last check. */
pbf_status pbf__cpu_profile(pbf_world *w) {
    const int n = w->count;
    double err_sum = 0.0, nb_sum = 0.0;
    float err_max = 0.0f;
    for (int i = 0; i < n; ++i) {
        float rho = w->density[i];
        if (!isfinite(rho))
            return unstable(w, i, v3_load(w->x, i), w->time, "has a non-finite density");
        float e = rho * w->params.inv_rest_density - 1.0f;
        e = e > 0.0f ? e : 0.0f;
        err_sum += e;
        if (e > err_max) err_max = e;
        nb_sum += w->neighbor_counts[i];
    }
    w->profile.avg_density_error = n ? (float)(err_sum / n) : 0.0f;
    w->profile.max_density_error = err_max;
    w->profile.avg_neighbors = n ? (float)(nb_sum / n) : 0.0f;
    return PBF_OK;
}
