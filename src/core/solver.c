/* The PBF step (Macklin & Müller 2013, Algorithm 1): pbf_world_step for every world (the
 * profile, the modules' step hooks, the substeps' count and dt), and the order of a substep on
 * the CPU: its stages, the halo exchanges between them, the modules' hooks, the density solve's
 * control, the watchdog. A CUDA world's substeps run on the device (cuda/world_cuda.h:
 * pbf__cuda_substeps), with the same per-substep constants (world_state.h: pbf__substep_params).
 *
 * The stages are the CPU backend's (cpu_stages.h): parallel loops over particles that write
 * only their own particle (Jacobi), with the math from kernels.h. The reductions
 * (cpu_reduce.h) run serially in slot order. Together this makes the result bit-identical for
 * any thread count. This file holds no loop over particles. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "module.h" /* the features' hooks at fixed points of the step (modules.c) */
#include "cuda/world_cuda.h" /* the CUDA backend (docs/cuda.md): its substeps, marked "cuda" */
#include "world_state.h"
#include "kernels.h" /* the kernels' constants (pbf__init_params) */
#include "cpu_stages.h" /* the CPU backend: the stages' loops */
#include "cpu_reduce.h" /* the CPU backend: density error, watchdog, profile */
#include "energy_audit.h" /* the energy audit: marks after the stages, when it is on */
#include "solve_control.h" /* stop and Chebyshev decisions, shared with the CUDA step */

#define PI_D 3.14159265358979323846

/* ---------------------------------------------------------------------------------------------
 * Constants */

/* Akinci's adhesion kernel A(q) (kernels.h, "Materials"), in double for the tables. */
static double adhesion_kernel(double q, double h) {
    if (q <= 0.5 * h || q > h) return 0.0;
    double u = -4.0 * q * q / h + 6.0 * q - 2.0 * h;
    return 0.007 / pow(h, 3.25) * pow(u > 0.0 ? u : 0.0, 0.25);
}

/* The constants of the material terms (kernels.h, "Materials"; docs/physics.md):
 *  - γ from σ: two half-spaces of fluid held by the cohesion potential φ(r) = −γ m² ∫_r^h C
 *    at number density ρ0/m part with the energy −π (ρ0/m)² ∫ r³ φ dr per area, which is 2σ:
 *    σ = (π/8) ρ0² γ ∫_0^h C(s) s⁴ ds;
 *  - the adhesion profile T(d) of a solid's ghost layers, and the scale that makes W the energy
 *    per area of pulling a half-space of fluid off the solid: W = β ρ0² ∫_0^h s T(s) ds.
 * The integrals are sums over fine midpoint grids (the kernels have kinks and a quarter power). */
static void init_materials(pbf_world *w) {
    const pbf_world_def *d = &w->def;
    pbf_params *p = &w->params;
    const double h = p->h, r = d->particle_radius, s = 2.0 * r, rho0 = d->rest_density;
    enum { N = 4096 };
    double ic = 0.0;
    for (int k = 0; k < N; ++k) {
        double q = (k + 0.5) * h / N, t = (h - q) * (h - q) * (h - q) * q * q * q;
        double c = 32.0 / (PI_D * pow(h, 9)) * (2.0 * q > h ? t : 2.0 * t - pow(h, 6) / 64.0);
        ic += c * q * q * q * q * (h / N);
    }
    double gamma = d->material.surface_tension / (PI_D / 8.0 * rho0 * rho0 * ic);
    p->surface_tension_on = d->material.surface_tension > 0.0f;
    p->st_cohesion = (float)(gamma * p->mass);
    /* Akinci's curvature term is γ m_i (n_i − n_j) with γ in SI numbers; scaled by ρ0/1000 it
     * is that for water and keeps its ratio to the cohesion for other rest densities. Scaled
     * by ρ0 (the ratio of units alone) it was 1000× stronger and tore the droplet apart. */
    p->st_curvature = (float)(gamma * rho0 * 1e-3);
    p->coh_k = (float)(32.0 / (PI_D * pow(h, 9)));
    p->coh_h6 = (float)(pow(h, 6) / 64.0);
    p->normal_scale = (float)(h * p->mass);

    /* J(z) = ∫_z^h A(q) dq on a grid over [h/2, h], then T(d) = Σ_layers (2π z/s²) V J(z) */
    double J[N + 1];
    J[N] = 0.0;
    for (int k = N - 1; k >= 0; --k) {
        double q = 0.5 * h + (k + 0.5) * 0.5 * h / N;
        J[k] = J[k + 1] + adhesion_kernel(q, h) * 0.5 * h / N;
    }
    double it = 0.0;
    const int M = 8 * PBF_ADH_TABLE;
    for (int k = 0; k <= M; ++k) {
        double dist = k * h / M, t = 0.0;
        for (double z = dist + r; z < h; z += s) {
            double u = (z - 0.5 * h) / (0.5 * h) * N;
            double j = u <= 0.0 ? J[0] : J[(int)u] + (J[(int)u + 1] - J[(int)u]) * (u - (int)u);
            t += 2.0 * PI_D * z / (s * s) * p->volume * j;
        }
        if (k % 8 == 0) p->adh_table[k / 8] = (float)t;
        if (k < M) it += (k == 0 ? 0.5 : 1.0) * dist * t * (h / M); /* trapezoid; T(h) = 0 */
    }
    p->adhesion_scale = it > 0.0 ? (float)(1.0 / (rho0 * it)) : 0.0f;
    p->adh_inv_step = (float)(PBF_ADH_TABLE / h);
    p->wall_adhesion = d->wall_adhesion;
    p->wall_friction = d->wall_friction;
    p->adhesion_on = d->wall_adhesion > 0.0f;
    p->friction_on = d->wall_friction > 0.0f;
    for (int i = 0; i < w->collider_count; ++i) {
        p->adhesion_on |= w->solids[i].adhesion > 0.0f;
        p->friction_on |= w->solids[i].friction > 0.0f;
    }
}

/* Several fluids (kernels.h, "Several fluids"): the per-fluid tables. The phase path runs only
 * when some fluid differs from the one-fluid world (its density from rest_density, its gravity
 * scale from 1 or its XSPH c from solver.xsph): otherwise the step is the one-fluid step, bit for
 * bit. */
static void init_phases(pbf_world *w) {
    const pbf_world_def *d = &w->def;
    pbf_params *p = &w->params;
    for (int k = 0; k < PBF_MAX_PHASES; ++k) {
        p->phase_inv_mass[k] = 1.0f;
        p->phase_mass_ratio[k] = 1.0f;
        p->phase_gravity[k] = 1.0f;
        p->phase_xsph[k] = d->solver.xsph;
    }
    p->phases_on = 0;
    for (int k = 0; k < d->phase_count; ++k) {
        const pbf_phase_def *ph = &d->phases[k];
        p->phase_inv_mass[k] = d->rest_density / ph->density;
        p->phase_mass_ratio[k] = ph->density / d->rest_density;
        p->phase_gravity[k] = ph->gravity_scale;
        p->phase_xsph[k] = ph->xsph;
        p->phases_on |= ph->density != d->rest_density || ph->gravity_scale != 1.0f ||
                        ph->xsph != d->solver.xsph;
    }
}

void pbf__init_params(pbf_world *w) {
    const pbf_world_def *d = &w->def;
    pbf_params *p = &w->params;
    memset(p, 0, sizeof *p);
    double r = d->particle_radius, s = 2.0 * r, h = d->kernel_scale * r;
    p->h = (float)h;
    p->h2 = (float)(h * h);
    p->kernel = d->kernel == PBF_KERNEL_WENDLAND;
    if (p->kernel) { /* Wendland C2 and its gradient (src/math/kernels.h) */
        p->poly6_k = (float)(21.0 / (2.0 * PI_D * pow(h, 3)));
        p->spiky_k = (float)(-210.0 / (PI_D * pow(h, 5)));
        /* the core (pbf_wendland_factor): inside r0 the gradient rises instead of vanishing */
        double r0 = (double)d->kernel_core * s;
        p->core_r = (float)r0;
        p->core_inv_r = r0 > 0.0 ? (float)(1.0 / r0) : 0.0f;
        p->core_grad = (float)(-210.0 / (PI_D * pow(h, 5)) * pow(1.0 - r0 / h, 3) * r0);
    } else {
        p->poly6_k = (float)(315.0 / (64.0 * PI_D * pow(h, 9)));
        p->spiky_k = (float)(-45.0 / (PI_D * pow(h, 6)));
    }
    p->w_self = pbf_poly6(0.0f, p);
    p->rest_density = d->rest_density;
    p->inv_rest_density = 1.0f / d->rest_density;

    /* Mass calibration: ρ0 (2r)³ would give a particle inside the rest lattice a density of
     * about 1.0098 ρ0 with h = 4r (the poly6 lattice sum is not exactly 1/s³), i.e. a fluid that
     * starts 1% compressed. Scale the mass so that the rest lattice has exactly ρ0. The same
     * lattice gives S0 = Σ_j |V ∇W_ij|², the scale of λ's denominator. */
    int k = (int)ceil(h / s);
    double w_sum = 0.0, g2_sum = 0.0;
    for (int a = -k; a <= k; ++a)
        for (int b = -k; b <= k; ++b)
            for (int c = -k; c <= k; ++c) {
                pbf_v3 x = v3((float)(a * s), (float)(b * s), (float)(c * s));
                float r2 = v3_dot(x, x);
                w_sum += pbf_poly6(r2, p);
                pbf_v3 g = pbf_spiky_grad(x, sqrtf(r2), p);
                g2_sum += v3_dot(g, g);
            }
    p->mass = (float)(d->rest_density / w_sum);
    p->volume = p->mass / d->rest_density;
    w->lattice_grad2 = (float)(g2_sum * p->volume * p->volume);

    const pbf_solver_def *sd = &d->solver;
    p->eps = sd->relaxation * w->lattice_grad2;
    p->unilateral = sd->unilateral;
    p->scorr_scale = sd->scorr_k / w->lattice_grad2;
    float dq = sd->scorr_dq * p->h;
    p->scorr_inv_q = 1.0f / (p->h2 - dq * dq);
    /* s_corr's shape is zero at scorr_reach times the rest spacing s = 2r (pbf_delta_coef);
     * Δq is below that (world.c) */
    double sz = s * (double)sd->scorr_reach;
    double xs = (h * h - sz * sz) * (double)p->scorr_inv_q, ws = xs * xs * xs;
    p->scorr_gain = (float)(1.0 / (1.0 - ws));
    p->scorr_shift = (float)(ws / (1.0 - ws));
    p->scorr_n = sd->scorr_n;
    p->scorr_inv_deficit = sd->scorr_deficit > 0.0f ? 1.0f / sd->scorr_deficit : 0.0f;
    p->vorticity = sd->vorticity;
    p->xsph = sd->xsph;
    p->impulse_blend = sd->impulse_blend;
    /* solver.step_weights: b = the margin × the plain step's largest eigenvalue on the rest
     * lattice (kernels.h, pbf_step_weight; the margin: world_state.h) */
    p->step_bound = sd->step_weights == PBF_STEP_WEIGHTS_CHEBYSHEV
                        ? PBF_STEP_BOUND_MARGIN * pbf__jacobi_bound(p, s, sd->relaxation)
                        : 0.0f;
    p->gravity = v3(d->gravity.x, d->gravity.y, d->gravity.z);
    p->radius = d->particle_radius;
    p->wall_clear = d->wall_clearance * d->particle_radius;
    p->solid_count = w->collider_count;
    init_materials(w);
    for (int m = 0; m < pbf__module_count; ++m) /* modules: their constants */
        if (pbf__modules[m]->init_params) pbf__modules[m]->init_params(w);
    init_phases(w);
}

static double now_ms(void) { return omp_get_wtime() * 1000.0; }

/* A world split over processes exchanges its halo here (src/comm/mpi/); a no-op otherwise. */
static pbf_status halo(pbf_world *w, pbf_halo_event event) {
    return w->halo ? w->halo_hook(w, event, PBF_OK) : PBF_OK;
}

static int thread_count(const pbf_world *w) {
    return w->def.threads > 0 ? w->def.threads : omp_get_max_threads();
}

/* The density solve of one substep: λ and Δp passes until the iteration count or the error
 * target is met. Records the error seen before each Δp pass in w->iteration_error (the entry
 * after the last pass is added by the caller from the vorticity pass, in fixed mode).
 *
 * Chebyshev (Wang 2015): when to stop, each pass's ω and the restarts (on a rise of the error,
 * an expansion of the fluid or a long run) are decided by solve_control.h from the error and
 * the deficit each λ pass reduces, the same code the CUDA backend runs. Returns the number
 * of Δp passes done; *t and ms[] carry the stage timings. In fixed mode the error after the
 * last pass is recorded by the caller from the vorticity pass's densities (no extra pass). */
static int solve_density(pbf_world *w, int nt, double *t, double *ms) {
    const pbf_solver_def *sd = &w->def.solver;
    const int controlled = sd->target_error > 0.0f;
    const int max_it = controlled ? sd->max_iterations : sd->iterations;
    /* materials act in the first Δp pass: at least one is done */
    const int min_it =
        sd->min_iterations > 0 || !(w->params.surface_tension_on || w->params.adhesion_on)
            ? sd->min_iterations
            : 1;
    /* With a fixed count the solve stays the paper's plain Jacobi: over 2–3 accelerated
     * iterations Chebyshev lowers the error but leaves a resting column jittering (its kinetic
     * energy stayed 3× above the plain solve's in tests/test_solver.c). */
    pbf_solve_control ctl =
        pbf_solve_control_begin(sd->target_error * 0.01f, min_it, max_it, sd->chebyshev,
                                sd->chebyshev_rho, sd->chebyshev_delay);
    int k = 0;
    /* s_corr in the first scorr_iterations passes only (pbf_solver_def.scorr_iterations) */
    pbf_params no_scorr = w->params;
    no_scorr.scorr_scale = 0.0f;
    pbf_pass_extras extras = {0}; /* modules: the tool; the meshes' force targets */
    for (int m = 0; m < pbf__module_count; ++m)
        if (pbf__modules[m]->pass_extras) pbf__modules[m]->pass_extras(w, &extras);
    for (;; ++k) {
        if (!controlled && k == max_it) break; /* fixed count: no check after the last pass */
        /* solver.step_weights: pass k's λ weighted (1 for plain passes and under error control) */
        pbf__cpu_lambda(w, &extras, controlled ? 1.0f : pbf_step_weight(k, max_it, &w->params), nt);
        halo(w, PBF_HALO_LAMBDA);
        float deficit; /* the expansion watch of the accelerated solve */
        float err = pbf__cpu_density_error(w, controlled, &deficit);
        w->iteration_error[k] = err;
        double t1 = now_ms();
        ms[PBF_STAGE_LAMBDA] += t1 - *t, *t = t1;
        int restarted;
        if (pbf_solve_control_after_error(&ctl, k, err, deficit, &restarted)) break;
        w->profile.chebyshev_restarts += restarted; /* diverging: a plain pass again */
        const float omega = ctl.omega;
        int scorr = sd->scorr_iterations == 0 || k < sd->scorr_iterations;
        const pbf_params *P = scorr ? &w->params : &no_scorr;
        const int material = k == 0 && (w->params.surface_tension_on || w->params.adhesion_on);
        if (material && w->params.surface_tension_on) { /* materials, first pass only */
            pbf__cpu_normals(w, nt);
            halo(w, PBF_HALO_NORMALS); /* split over processes: the neighbours' normals */
        }
        if (material) pbf__cpu_material(w, nt); /* their displacement */
        pbf__cpu_delta(w, P, omega, material ? w->dv : NULL, &extras, nt);
        halo(w, PBF_HALO_POSITIONS);
        for (int m = 0; m < pbf__module_count; ++m) /* modules: force probes, meshes' shares */
            if (pbf__modules[m]->after_delta) pbf__modules[m]->after_delta(w, P, omega, nt);
        t1 = now_ms();
        ms[PBF_STAGE_DELTA] += t1 - *t, *t = t1;
    }
    w->iteration_error_count = controlled ? k + 1 : k;
    return k;
}

/* ---------------------------------------------------------------------------------------------
 * The step */

/* The modules' last hook of a substep (sinks and emitters); with no particles only those that
 * run in empty substeps. */
static pbf_status substep_final(pbf_world *w, double t_start, int empty) {
    for (int k = 0; k < pbf__module_count; ++k) {
        const pbf_module *m = pbf__modules[k];
        if (m->substep_final == NULL || (empty && !m->empty_substeps)) continue;
        pbf_status st = m->substep_final(w, t_start);
        if (st != PBF_OK) return st;
    }
    return PBF_OK;
}

/* A substep of a world with no particles (and no split), on any backend: nothing to solve
 * until an emitter adds particles; the modules that run in empty substeps still do. */
static pbf_status empty_substep(pbf_world *w, float dt, int nt) {
    pbf__substep_params(w, dt, w->time + dt); /* as substep() */
    const double t_start = w->time;
    for (int k = 0; k < pbf__module_count; ++k) { /* the bodies still move */
        const pbf_module *m = pbf__modules[k];
        pbf_status st =
            m->empty_substeps && m->substep_begin ? m->substep_begin(w, dt, nt) : PBF_OK;
        if (st != PBF_OK) return st;
    }
    for (int k = 0; k < pbf__module_count; ++k)
        if (pbf__modules[k]->empty_substeps && pbf__modules[k]->substep_end)
            pbf__modules[k]->substep_end(w, dt, nt);
    w->time += dt;
    return substep_final(w, t_start, 1);
}

static pbf_status substep(pbf_world *w, float dt, int nt) {
    if (w->count == 0 && !w->halo) return empty_substep(w, dt, nt);
    pbf_params *P = &w->params;
    double *ms = w->profile.stage_ms;
    pbf__substep_params(w, dt, w->time + dt); /* dt, s_corr, the CFL limit, the walls */
    const double t_start = w->time;

    double t = now_ms(), t1;
    pbf__cpu_predict(w, nt);
    pbf_status halo_st = halo(w, PBF_HALO_BEGIN); /* split over processes: migrate, halo */
    if (halo_st != PBF_OK) return halo_st;
    /* modules: the tool moves to the substep's end (its scratch covers the slots the halo
     * added), then the bodies move and sweep the particles' paths */
    for (int k = 0; k < pbf__module_count; ++k) {
        pbf_status st =
            pbf__modules[k]->substep_begin ? pbf__modules[k]->substep_begin(w, dt, nt) : PBF_OK;
        if (st != PBF_OK) return st;
    }
    if (w->energy_audit) pbf__energy_mark(w, PBF_ENERGY_PREDICT, w->p, w->v, NULL, NULL);
    t1 = now_ms(), ms[PBF_STAGE_PREDICT] += t1 - t, t = t1;

    pbf__cpu_grid(w, nt);
    halo(w, PBF_HALO_SORTED);
    t1 = now_ms(), ms[PBF_STAGE_GRID] += t1 - t, t = t1;

    if (w->def.neighbor_mode == PBF_NEIGHBOR_LIST) {
        /* p_tmp is free until the first Δp pass: the build's scratch */
        if (pbf_neighbor_list_build(&w->neighbors, &w->grid, w->p, w->p_tmp, w->count, P->h, nt) !=
            0)
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY,
                             "out of memory growing the neighbour list of %d particles", w->count);
        t1 = now_ms(), ms[PBF_STAGE_NEIGHBORS] += t1 - t, t = t1;
    }

    int passes = solve_density(w, nt, &t, ms);
    w->substep_iterations += passes;
    if (passes > w->profile.max_iterations_used) w->profile.max_iterations_used = passes;
    if (w->energy_audit) pbf__energy_mark(w, PBF_ENERGY_PROJECT, w->p, NULL, w->x, NULL);

    pbf__cpu_velocity(w, nt);
    if (w->energy_audit) pbf__energy_mark(w, PBF_ENERGY_BLEND, w->p, w->v, NULL, NULL);
    t1 = now_ms(), ms[PBF_STAGE_VELOCITY] += t1 - t, t = t1;

    pbf__cpu_vorticity(w, nt); /* ω, XSPH, the final density */
    if (w->energy_audit) pbf__energy_mark(w, PBF_ENERGY_XSPH, w->p, w->v, NULL, w->dv);
    halo(w, PBF_HALO_OMEGA); /* split over processes: the neighbours' |ω| */
    pbf__cpu_confinement(w, nt);
    if (w->energy_audit) pbf__energy_mark(w, PBF_ENERGY_VORTICITY, w->p, w->v, NULL, NULL);
    for (int k = 0; k < pbf__module_count; ++k) { /* modules: viscosity, after XSPH, vorticity */
        pbf_status st =
            pbf__modules[k]->after_velocity ? pbf__modules[k]->after_velocity(w, nt) : PBF_OK;
        if (st != PBF_OK) return st;
    }
    if (w->def.solver.target_error <= 0.0f) /* fixed count: the error after the last pass */
        w->iteration_error[w->iteration_error_count++] = pbf__cpu_density_error(w, 0, NULL);
    t1 = now_ms(), ms[PBF_STAGE_VORTICITY] += t1 - t, t = t1;

    for (int k = 0; k < pbf__module_count; ++k) /* modules: the tool's and bodies' forces */
        if (pbf__modules[k]->substep_end) pbf__modules[k]->substep_end(w, dt, nt);
    if (w->energy_audit) pbf__energy_mark(w, PBF_ENERGY_TOOL, w->p, w->v, NULL, NULL);
    t1 = now_ms(), ms[PBF_STAGE_VELOCITY] += t1 - t, t = t1;

    /* the instability watchdog, every substep (ghosts skipped; why: cpu_reduce.c) */
    pbf_status wd = pbf__cpu_watchdog(w);
    if (w->halo) wd = w->halo_hook(w, PBF_HALO_AGREE, wd); /* all processes stop, or none */
    /* modules: diffuse particles, which read the fluid around them: the ghosts too */
    for (int k = 0; wd == PBF_OK && k < pbf__module_count; ++k)
        wd = pbf__modules[k]->after_watchdog ? pbf__modules[k]->after_watchdog(w, nt) : PBF_OK;
    halo(w, PBF_HALO_END);
    if (wd != PBF_OK) return wd;

    /* the corrected positions become the state */
    float *x = w->x;
    w->x = w->p;
    w->p = x;
    w->time += dt;
    return substep_final(w, t_start, 0);
}

/* The substeps of a CUDA world (cuda/world_cuda.h). While a module acts on the particles at
 * the end of every substep (host_final: the flow's sinks and emitters), one substep at a time:
 * the device runs it, then the modules' substep_final run on the host as in substep(); they read
 * the particles back from the device and mark it stale when they change them (pbf__cuda_pull,
 * pbf__cuda_touch), so the next substep sends them up again. A substep with no particles is the
 * CPU's empty one. The profile's density error and neighbours are those of the last substep the
 * device ran (none: zero, as pbf__cpu_profile's of no particles). Otherwise the whole step is one
 * device call. */
static pbf_status cuda_substeps(pbf_world *w, float dt_sub, int substeps, int host_final, int nt) {
    if (!host_final) return pbf__cuda_substeps(w, dt_sub, 0, substeps);
    w->profile.avg_density_error = w->profile.max_density_error = w->profile.avg_neighbors = 0.0f;
    for (int s = 0; s < substeps; ++s) {
        const double t_start = w->time;
        pbf_status st = PBF_OK;
        if (w->count == 0) {
            st = empty_substep(w, dt_sub, nt);
        } else {
            st = pbf__cuda_substeps(w, dt_sub, s, 1);
            if (st == PBF_OK) st = substep_final(w, t_start, 0);
        }
        if (st != PBF_OK) return st;
    }
    return PBF_OK;
}

pbf_status pbf_world_step(pbf_world *w, float dt) {
    if (!(dt > 0.0f) || !isfinite(dt))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "step: dt must be positive and finite, got %g",
                         (double)dt);
    double t0 = now_ms();
    memset(w->profile.stage_ms, 0, sizeof w->profile.stage_ms);
    if (w->energy_audit) pbf__energy_begin_step(w);
    w->substep_iterations = 0;
    w->profile.max_iterations_used = 0;
    w->profile.chebyshev_restarts = 0;
    w->profile.viscosity_iterations = 0;
    const int nt = thread_count(w);
    const int substeps = w->def.substeps;
    const float dt_sub = dt / (float)substeps;
    for (int k = 0; k < pbf__module_count; ++k) { /* modules: a full capacity stops the step */
        pbf_status st =
            pbf__modules[k]->step_check ? pbf__modules[k]->step_check(w, dt, substeps) : PBF_OK;
        if (st != PBF_OK) return st;
    }
    /* keep_stepping: a module acts in substeps without particles; host_final: one that also
     * acts at every substep's end (the flow), which a CUDA world runs on the host */
    int keep_stepping = 0, host_final = 0;
    for (int k = 0; k < pbf__module_count; ++k) {
        const pbf_module *m = pbf__modules[k];
        if (m->step_begin) m->step_begin(w, dt);
        const int keeps = m->keeps_stepping ? m->keeps_stepping(w) : 0;
        keep_stepping |= keeps;
        host_final |= keeps && m->substep_final != NULL;
    }
    /* no fluid: nothing to step but the clock, unless a module moves or may emit */
    if (w->count == 0 && !keep_stepping && !w->halo) {
        w->time += dt;
    } else if (w->cuda != NULL) { /* cuda: the substeps and the profile on the GPU */
        pbf_status st = cuda_substeps(w, dt_sub, substeps, host_final, nt);
        if (st != PBF_OK) return st;
    } else {
        for (int s = 0; s < substeps; ++s) {
            pbf_status st = substep(w, dt_sub, nt);
            if (st != PBF_OK) return st;
        }
        pbf_status st = pbf__cpu_profile(w);
        if (st != PBF_OK) return st;
    }
    for (int k = 0; k < pbf__module_count; ++k) /* modules: the step's mean forces, poses */
        if (pbf__modules[k]->step_end) pbf__modules[k]->step_end(w);
    w->profile.iterations = (w->substep_iterations + substeps - 1) / substeps;
    w->profile.substeps = substeps;
    w->profile.steps++;
    w->profile.step_ms = now_ms() - t0;
    return PBF_OK;
}

pbf_profile pbf_world_get_profile(const pbf_world *w) { return w->profile; }

int pbf_world_get_iteration_errors(const pbf_world *w, float *out, int max) {
    int n = w->iteration_error_count;
    for (int k = 0; k < n && k < max; ++k) out[k] = w->iteration_error[k];
    return n;
}
