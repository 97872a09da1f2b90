/* The PBF step (Macklin & Müller 2013, Algorithm 1): pbf_world_step for every world (the
 * profile, the modules' step hooks, the substeps' count and dt), and the substeps on the CPU.
 * A CUDA world's substeps run on the device (cuda/world_cuda.h: pbf__cuda_substeps), with the
 * same per-substep constants (world_state.h: pbf__substep_params).
 *
 * Each stage is a parallel loop over particles that writes only its own particle (Jacobi), with
 * the math from kernels.h. Reductions run serially in slot order after the loops. Together this
 * makes the result bit-identical for any thread count. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "module.h" /* the features' hooks at fixed points of the step (modules.c) */
#include "tool.h" /* the tool is a solid of the λ and Δp passes (pbf__tool_kernel) */
#include "geometry/meshes.h" /* the Δp pass writes the meshes' force targets */
#include "cuda/world_cuda.h" /* the CUDA backend (docs/cuda.md): its substeps, marked "cuda" */
#include "world_state.h"
#include "watchdog.h" /* its limits and report, shared with the CUDA step */
#include "cpu_passes.h" /* the vectorized list passes */
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
    /* s_corr's shape is zero at the rest spacing s = 2r (pbf_delta_coef); Δq < s (world.c) */
    double xs = (h * h - s * s) * (double)p->scorr_inv_q, ws = xs * xs * xs;
    p->scorr_gain = (float)(1.0 / (1.0 - ws));
    p->scorr_shift = (float)(ws / (1.0 - ws));
    p->scorr_n = sd->scorr_n;
    p->scorr_inv_deficit = sd->scorr_deficit > 0.0f ? 1.0f / sd->scorr_deficit : 0.0f;
    p->vorticity = sd->vorticity;
    p->xsph = sd->xsph;
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

/* ---------------------------------------------------------------------------------------------
 * Stages */

static void stage_predict(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const int n = w->count;
    float *x = w->x, *p = w->p, *v = w->v;
    const uint8_t *phase = P->phases_on ? w->phase : NULL; /* several fluids: gravity scales */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 vi = phase ? pbf_predict_velocity_phase(v3_load(v, i), P->phase_gravity[phase[i]], P)
                          : pbf_predict_velocity(v3_load(v, i), P);
        v3_store(v, i, vi);
        v3_store(p, i, v3_madd(v3_load(x, i), vi, P->dt));
    }
}

/* The grid sort, then every sorted per-particle array (fields.h) gathered into the new order:
 * each through its scratch array, which is then swapped in. Copies only, so the values are the
 * bits of the slots they came from. */
static void stage_grid(pbf_world *w, int nt) {
    pbf_grid_sort(&w->grid, w->p, w->count, nt);
    const uint32_t *order = w->grid.order;
    const int n = w->count;
#define PBF_FIELD_GATHER(name, type, components, flags, scratch)                                   \
    if ((flags)&PBF_FIELD_SORTED) {                                                                \
        const type *src_ = w->name;                                                                \
        type *dst_ = w->scratch;                                                                   \
        _Pragma("omp parallel for schedule(static) num_threads(nt)") for (int i = 0; i < n;        \
                                                                          ++i) for (int k = 0;     \
                                                                                    k <            \
                                                                                    (components);  \
                                                                                    ++k)           \
            dst_[(size_t)(components)*i + k] = src_[(size_t)(components)*order[i] + k];            \
        w->scratch = w->name;                                                                      \
        w->name = dst_;                                                                            \
    }
    PBF_PARTICLE_FIELDS(PBF_FIELD_GATHER)
#undef PBF_FIELD_GATHER
}

/* stage_lambda of a world with several fluids: the neighbours' inverse mass weights in the
 * denominator (kernels.h, "Several fluids"). */
static void stage_lambda_phase(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p;
    const uint8_t *phase = w->phase;
    float *lambda = w->lambda, *density = w->density;
    int32_t *counts = w->neighbor_counts;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    float *pair_g = w->neighbors.pair_g;
    const pbf_tool_params *T = pbf__tool_kernel(w);
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        float wi = P->phase_inv_mass[phase[i]];
        pbf_lambda_acc a =
            list ? pbf__lambda_list_phase(P, p, phase, xi, nb, nb_start[i], nb_start[i + 1], pair_g)
                 : pbf__lambda_cells_phase(P, &w->grid, p, phase, i, xi);
        lambda[i] = T ? pbf_lambda_end_tool_phase(&a, xi, wi, P, S, T, &density[i])
                      : pbf_lambda_end_phase(&a, xi, wi, P, S, &density[i]);
        counts[i] = a.neighbors;
    }
}

static void stage_lambda(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p;
    float *lambda = w->lambda, *density = w->density;
    int32_t *counts = w->neighbor_counts;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    float *pair_g = w->neighbors.pair_g;
    const pbf_tool_params *T = pbf__tool_kernel(w); /* tool: NULL when there is none */
    if (P->phases_on) {
        stage_lambda_phase(w, nt);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        pbf_lambda_acc a = /* the list keeps each pair's gradient factor for the Δp pass */
            list ? pbf__lambda_list(P, p, xi, nb, nb_start[i], nb_start[i + 1], pair_g)
                 : pbf__lambda_cells(P, &w->grid, p, i, xi);
        lambda[i] = T ? pbf_lambda_end_tool(&a, xi, P, S, T, &density[i])
                      : pbf_lambda_end(&a, xi, P, S, &density[i]);
        counts[i] = a.neighbors;
    }
}

/* Surface tension and adhesion (kernels.h, "Materials"), as a displacement dt Δv that the first
 * Δp pass of the substep adds (w->dv; the normals go to w->omega: both are free until the
 * vorticity passes). It is computed after the first λ pass, at the predicted positions, with
 * that pass's densities and (list mode) gradient factors.
 *
 * Why a displacement inside the solve and not a velocity change: PBF turns position corrections
 * into velocities, v = (p − x)/dt, and a pairwise central correction evaluated at the predicted
 * positions changes the angular momentum by Σ_pairs f_ij x_ij × v_ij. Against a cohesion given
 * as a velocity, the solver's corrections are a net push apart (f > 0) every substep, and a
 * zero-gravity droplet spun up from round-off until it tore (its angular momentum grew 3× per
 * 0.5 s). Given as a correction at the same positions, cohesion and push cancel. */
static void stage_material(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p, *density = w->density;
    float *shift = w->dv, *normal = w->omega;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    const float *pair_g = w->neighbors.pair_g;
    const int tension = P->surface_tension_on;
    if (tension) {
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int i = 0; i < n; ++i) {
            pbf_v3 xi = v3_load(p, i);
            v3_store(
                normal, i,
                list ? pbf__normal_list(P, p, density, xi, nb, nb_start[i], nb_start[i + 1], pair_g)
                     : pbf__normal_cells(P, &w->grid, p, density, i, xi));
        }
        halo(w, PBF_HALO_NORMALS); /* split over processes: the neighbours' normals */
    }
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i), dv = v3(0.0f, 0.0f, 0.0f);
        if (tension) {
            pbf_v3 ni = v3_load(normal, i);
            float ri = density[i];
            dv = list ? pbf__tension_list(P, p, density, normal, xi, ri, ni, nb, nb_start[i],
                                          nb_start[i + 1])
                      : pbf__tension_cells(P, &w->grid, p, density, normal, i, xi, ri, ni);
        }
        if (P->adhesion_on) dv = v3_add(dv, pbf_adhesion_dv(xi, P, S));
        v3_store(shift, i, v3_scale(dv, P->dt));
    }
}

/* One Δp pass with the parameters P (w->params, or a copy without s_corr), adding `shift` (the
 * materials' displacement) when it is not NULL. omega != 1 applies the Chebyshev step
 * (kernels.h) to the Jacobi result, using the iterate one back, p_prev. */
static void stage_delta(pbf_world *w, const pbf_params *P, int nt, float omega,
                        const float *shift) {
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p, *lambda = w->lambda, *p_prev = w->p_prev, *density = w->density;
    const float *x0 = w->x; /* the substep's start: wall friction shortens the slide since */
    const float gamma = w->def.solver.chebyshev_gamma;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    const float *pair_g = w->neighbors.pair_g;
    float *out = w->p_tmp;
    const pbf_tool_params *T = pbf__tool_kernel(w); /* tool */
    float *tool_dx = T ? w->tool->dx : NULL;
    float *mesh_target = pbf__meshes_target(w); /* meshes: their forces */
    const uint8_t *phase = P->phases_on ? w->phase : NULL; /* several fluids: mass weights */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        float li = lambda[i], wi = pbf_scorr_weight(density[i], P);
        pbf_delta_acc a = /* the positions are the λ pass's: its gradient factors still hold */
            list ? pbf__delta_list_of(P, p, lambda, density, xi, li, wi, nb, nb_start[i],
                                      nb_start[i + 1], pair_g)
                 : pbf__delta_cells(P, &w->grid, p, lambda, density, i, xi, li, wi);
        if (phase) li = pbf_delta_weight_phase(&a, li, P->phase_inv_mass[phase[i]]);
        if (shift) /* materials: surface tension and adhesion, in the first pass */
            a.dp = v3_madd(a.dp, v3_load(shift, i), 1.0f / P->volume);
        pbf_v3 xn = P->friction_on ? pbf_delta_end_friction(&a, xi, v3_load(x0, i), li, P, S)
                                   : pbf_delta_end(&a, xi, li, P, S);
        if (mesh_target) v3_store(mesh_target, i, v3_add(xi, v3_scale(a.dp, P->volume)));
        if (omega != 1.0f) /* accelerated: the extrapolated position must obey the solids too */
            xn = pbf_collide(pbf_chebyshev(xn, xi, v3_load(p_prev, i), omega, gamma), P, S);
        if (T) { /* tool: its boundary term and projection; the displacement is its reaction */
            pbf_v3 moved;
            xn = pbf_tool_delta(xn, xi, li, T, P, &moved);
            v3_store(tool_dx, i, v3_add(v3_load(tool_dx, i), moved));
        }
        v3_store(out, i, xn);
    }
    /* Jacobi: every particle read the old positions; the new ones become current, the old
     * ones the iterate one back (p_prev), and the one before that the next scratch. */
    w->p_tmp = w->p_prev;
    w->p_prev = w->p;
    w->p = out;
}

/* Average density error, mean over particles of max(ρ/ρ0 − 1, 0), from the densities of the
 * last λ or vorticity pass. Serial in slot order: the same sum for any thread count. In a world
 * split over processes the ghosts are skipped, and `global` makes it the whole world's error
 * (collective: the processes' sums and counts added in rank order, the same bits on each, so
 * that every process stops the error-controlled solve after the same pass); without `global`
 * it is this process's particles' own. */
static float average_density_error(pbf_world *w, int global) {
    double sum = 0.0, n = 0.0;
    const float inv_rho0 = w->params.inv_rest_density;
    const uint8_t *ghost = w->halo_ghost; /* NULL unless split */
    for (int i = 0; i < w->count; ++i) {
        if (ghost && ghost[i]) continue;
        float e = w->density[i] * inv_rho0 - 1.0f;
        sum += e > 0.0f ? e : 0.0f;
        n += 1.0;
    }
    if (global && w->halo) {
        double v[2] = {sum, n};
        w->halo_sum(w, v, 2);
        sum = v[0], n = v[1];
    }
    return n > 0.0 ? (float)(sum / n) : 0.0f;
}

/* The density solve of one substep: λ and Δp passes until the iteration count or the error
 * target is met. Records the error seen before each Δp pass in w->iteration_error (the entry
 * after the last pass is added by the caller from the vorticity pass, in fixed mode).
 *
 * Chebyshev (Wang 2015): after `delay` plain iterations (at least one: the scheme needs an
 * iterate one back) ω follows 2/(2 − ρ²), then 4/(4 − ρ² ω). Wang's analysis is for a linear
 * iteration; PBF's is not (the kernels, the unilateral constraint, the collisions), so the
 * density error is watched. A semi-iterative error is not monotone, so only a rise to 25 %
 * above the lowest error of the substep counts as diverging: the sequence then restarts with
 * `delay` plain iterations, and from the third restart of a substep on ρ is lowered by 10 %
 * each time (measured on the dam break: lowering it at every small rise, or restarting at any
 * rise, cost 1.6–2.9× the iterations; docs/physics.md). Returns the number
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
    for (;; ++k) {
        if (!controlled && k == max_it) break; /* fixed count: no check after the last pass */
        stage_lambda(w, nt);
        halo(w, PBF_HALO_LAMBDA);
        float err = average_density_error(w, controlled);
        w->iteration_error[k] = err;
        double t1 = now_ms();
        ms[PBF_STAGE_LAMBDA] += t1 - *t, *t = t1;
        int restarted;
        if (pbf_solve_control_after_error(&ctl, k, err, &restarted)) break;
        w->profile.chebyshev_restarts += restarted; /* diverging: a plain pass again */
        const float omega = ctl.omega;
        int scorr = sd->scorr_iterations == 0 || k < sd->scorr_iterations;
        const pbf_params *P = scorr ? &w->params : &no_scorr;
        const int material = k == 0 && (w->params.surface_tension_on || w->params.adhesion_on);
        if (material) stage_material(w, nt); /* materials: their displacement, first pass only */
        stage_delta(w, P, nt, omega, material ? w->dv : NULL);
        halo(w, PBF_HALO_POSITIONS);
        for (int m = 0; m < pbf__module_count; ++m) /* modules: force probes, meshes' shares */
            if (pbf__modules[m]->after_delta) pbf__modules[m]->after_delta(w, P, omega, nt);
        t1 = now_ms();
        ms[PBF_STAGE_DELTA] += t1 - *t, *t = t1;
    }
    w->iteration_error_count = controlled ? k + 1 : k;
    return k;
}

static void stage_velocity(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const int n = w->count;
    const float *x = w->x, *p = w->p;
    float *v = w->v;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i)
        v3_store(v, i, pbf_velocity_update(v3_load(x, i), v3_load(p, i), P));
}

static void stage_vorticity(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p;
    float *v = w->v, *omega = w->omega, *dv = w->dv, *omega_len = w->omega_len,
          *density = w->density;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    float *pair_g = w->neighbors.pair_g;
    const uint8_t *phase = P->phases_on ? w->phase : NULL; /* several fluids: their XSPH c */
    /* Pass A: ω, XSPH and the final density. Reads v of neighbours, writes its own ω and Δv.
     * In list mode it keeps each pair's gradient factor for pass B (same positions). */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i), vi = v3_load(v, i);
        pbf_vort_acc a =
            list ? pbf__vort_list(P, p, v, xi, vi, nb, nb_start[i], nb_start[i + 1], pair_g)
                 : pbf__vort_cells(P, &w->grid, p, v, i, xi, vi);
        pbf_v3 om;
        v3_store(dv, i,
                 phase ? pbf_vort_end_phase(&a, xi, P->phase_xsph[phase[i]], P, S, &om, &density[i])
                       : pbf_vort_end(&a, xi, P, S, &om, &density[i]));
        v3_store(omega, i, om);
        omega_len[i] = v3_len(om);
    }
    if (w->energy_audit) pbf__energy_mark(w, PBF_ENERGY_XSPH, p, v, NULL, dv);
    halo(w, PBF_HALO_OMEGA);
    /* Pass B: confinement from the gradient of |ω|. Reads |ω| of neighbours, writes its own v. */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        float wi = omega_len[i];
        pbf_conf_acc a = pbf_conf_begin();
        if (P->vorticity > 0.0f)
            a = list ? pbf__conf_list(P, p, omega_len, xi, wi, nb, nb_start[i], nb_start[i + 1],
                                      pair_g)
                     : pbf__conf_cells(P, &w->grid, p, omega_len, i, xi, wi);
        v3_store(v, i, pbf_conf_end(&a, v3_load(v, i), v3_load(dv, i), v3_load(omega, i), P));
    }
    if (w->energy_audit) pbf__energy_mark(w, PBF_ENERGY_VORTICITY, p, v, NULL, NULL);
}

/* ---------------------------------------------------------------------------------------------
 * The instability watchdog (docs/robustness.md). At the end of every substep it stops
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
static pbf_status watchdog(pbf_world *w) {
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
    stage_predict(w, nt);
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

    stage_grid(w, nt);
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

    stage_velocity(w, nt);
    t1 = now_ms(), ms[PBF_STAGE_VELOCITY] += t1 - t, t = t1;

    stage_vorticity(w, nt);
    for (int k = 0; k < pbf__module_count; ++k) { /* modules: viscosity, after XSPH, vorticity */
        pbf_status st =
            pbf__modules[k]->after_velocity ? pbf__modules[k]->after_velocity(w, nt) : PBF_OK;
        if (st != PBF_OK) return st;
    }
    if (w->def.solver.target_error <= 0.0f) /* fixed count: the error after the last pass */
        w->iteration_error[w->iteration_error_count++] = average_density_error(w, 0);
    t1 = now_ms(), ms[PBF_STAGE_VORTICITY] += t1 - t, t = t1;

    for (int k = 0; k < pbf__module_count; ++k) /* modules: the tool's and bodies' forces */
        if (pbf__modules[k]->substep_end) pbf__modules[k]->substep_end(w, dt, nt);
    if (w->energy_audit) pbf__energy_mark(w, PBF_ENERGY_TOOL, w->p, w->v, NULL, NULL);
    t1 = now_ms(), ms[PBF_STAGE_VELOCITY] += t1 - t, t = t1;

    pbf_status wd = watchdog(w); /* the instability watchdog, every substep (ghosts skipped) */
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

/* Density error and neighbour statistics, reduced serially in slot order (deterministic).
 * The watchdog above has already checked every substep; a non-finite density is its last
 * check. */
static pbf_status finish_profile(pbf_world *w) {
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

/* The substeps of a CUDA world (cuda/world_cuda.h). While a module acts on the particles at
 * the end of every substep (host_final: the flow's sinks and emitters), one substep at a time:
 * the device runs it, then the modules' substep_final run on the host as in substep(); they read
 * the particles back from the device and mark it stale when they change them (pbf__cuda_pull,
 * pbf__cuda_touch), so the next substep sends them up again. A substep with no particles is the
 * CPU's empty one. The profile's density error and neighbours are those of the last substep the
 * device ran (none: zero, as finish_profile's of no particles). Otherwise the whole step is one
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
    } else if (w->cuda != NULL) { /* cuda: the substeps and finish_profile on the GPU */
        pbf_status st = cuda_substeps(w, dt_sub, substeps, host_final, nt);
        if (st != PBF_OK) return st;
    } else {
        for (int s = 0; s < substeps; ++s) {
            pbf_status st = substep(w, dt_sub, nt);
            if (st != PBF_OK) return st;
        }
        pbf_status st = finish_profile(w);
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
