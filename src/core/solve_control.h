/* The density solve's decisions between passes: when an error-controlled solve stops, and the
 * ω of each Chebyshev-accelerated pass with its restarts (pbf_solver_def, docs/physics.md).
 * One copy for the CPU (solver.c: solve_density) and the CUDA backend's host code
 * (cuda/density.cu: enqueue_solve), so that both decide alike from the same errors. Plain C,
 * no state beyond the struct. */
#ifndef PBF_SOLVE_CONTROL_H
#define PBF_SOLVE_CONTROL_H

typedef struct pbf_solve_control {
    int controlled; /* error control: stop once the error is at the target */
    int accelerate; /* Chebyshev, which only error control uses */
    int min_it, max_it;
    float target; /* average density error, a fraction */
    int delay; /* plain passes before the acceleration (re)starts */
    int start; /* the first accelerated pass */
    float rho; /* the spectral radius estimate; lowered at each restart */
    float omega; /* ω of the next Δp pass (1: plain Jacobi) */
    float err_min; /* the lowest error of this substep so far */
    float deficit_start; /* the mean deficit below ρ0 at the substep's first check, or at the
                          * last restart for an expansion */
    int restarts; /* divergence fall-backs in this substep */
} pbf_solve_control;

/* The state at the start of a substep's solve. target_fraction > 0 turns error control on;
 * max_it is the fixed count without it. */
static inline pbf_solve_control pbf_solve_control_begin(float target_fraction, int min_it,
                                                        int max_it, int chebyshev, float rho,
                                                        int delay) {
    pbf_solve_control c;
    c.controlled = target_fraction > 0.0f;
    c.accelerate = chebyshev && c.controlled;
    c.min_it = min_it;
    c.max_it = max_it;
    c.target = target_fraction;
    c.delay = delay > 1 ? delay : 1;
    c.start = c.delay;
    c.rho = rho;
    c.omega = 1.0f;
    c.err_min = 3.4e38f;
    c.deficit_start = 0.0f;
    c.restarts = 0;
    return c;
}

/* The most accelerated passes in a row: after them the sequence restarts as if it had diverged
 * (plain passes, ρ's distance from 1 doubled). The error watch sees only the average compression,
 * not a particle the momentum carries off the surface: from the default dam break's state after
 * 30 frames, a solve accelerated without a rise for more than 40 passes threw one surface
 * particle out at 32 m/s (bench/convergence.c, 45 passes; ρ 0.999, γ 0.9). Restarting after 20
 * holds it to 150 passes from three states, and the restart's lower ρ converges faster from there
 * (docs/physics.md, "Converging faster"). */
#define PBF_CHEBYSHEV_SPAN 20

/* After the λ pass k measured the average density error err (the mean of max(ρ/ρ0 − 1, 0)) and
 * the mean deficit (of max(1 − ρ/ρ0, 0)): 1 when the solve stops here (no Δp pass k).
 * Otherwise 0, with c->omega set for Δp pass k and *restarted = 1 when the acceleration had
 * diverged (its error above 1.25 times the substep's lowest), had expanded the fluid (the
 * deficit more than the target above the substep's first, or above the deficit at the last
 * restart for an expansion: from rest, holding it to the first cost the 127k double dam break
 * the 200-pass cap in its first substeps), or has run PBF_CHEBYSHEV_SPAN
 * passes, and falls back to a plain pass. An accelerated pass that expanded the fluid does not
 * stop the solve: below rest density the unilateral constraint does not act, so an
 * extrapolation that carries particles apart lowers the error without solving anything, and
 * nothing would pull them back (the default dam break met 0.01 % that way with five times the
 * plain solve's kinetic energy; docs/physics.md, "Converging faster"). Each restart doubles the
 * estimate's distance from 1 (0.999, 0.998, 0.996, ...): the slowest mode's ρ is close to 1 and
 * the closer the finer the fluid, so the estimate starts high and comes down only as far as the
 * substep shows it must. */
static inline int pbf_solve_control_after_error(pbf_solve_control *c, int k, float err,
                                                float deficit, int *restarted) {
    *restarted = 0;
    if (k == 0) c->deficit_start = deficit;
    const int expanded =
        c->accelerate && c->omega != 1.0f && deficit > c->deficit_start + c->target;
    if (c->controlled && (k == c->max_it || (k >= c->min_it && err <= c->target && !expanded)))
        return 1;
    if (err < c->err_min) c->err_min = err;
    if (c->accelerate && c->omega != 1.0f &&
        (expanded || err > 1.25f * c->err_min || k - c->start >= PBF_CHEBYSHEV_SPAN)) {
        *restarted = 1;
        ++c->restarts;
        c->rho = c->rho > 0.5f ? 1.0f - 2.0f * (1.0f - c->rho) : 0.0f;
        if (expanded) c->deficit_start = deficit; /* the next run is held to the target from here */
        c->omega = 1.0f;
        c->start = k + c->delay;
    } else if (c->accelerate && k >= c->start) {
        c->omega = k == c->start ? 2.0f / (2.0f - c->rho * c->rho)
                                 : 4.0f / (4.0f - c->rho * c->rho * c->omega);
    }
    return 0;
}

#endif /* PBF_SOLVE_CONTROL_H */
