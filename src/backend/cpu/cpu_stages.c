/* The CPU backend's stages (cpu_stages.h): OpenMP loops over the pass bodies of kernels.h. Each
 * writes only its own particle; the step (solver.c) orders them. */
#include "cpu_stages.h"

#include "cpu_passes.h" /* the vectorized list passes and the 27-cell ones */
#include "kernels.h"

void pbf__cpu_predict(pbf_world *w, int nt) {
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

/* Each sorted array goes through its scratch array, which is then swapped in. Copies only, so
 * the values are the bits of the slots they came from. */
void pbf__cpu_grid(pbf_world *w, int nt) {
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

/* The λ pass of a world with several fluids: the neighbours' inverse mass weights in the
 * denominator (kernels.h, "Several fluids"). */
static void lambda_phase(pbf_world *w, const pbf_tool_params *T, float weight, int nt) {
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
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        float wi = P->phase_inv_mass[phase[i]];
        pbf_lambda_acc a =
            list ? pbf__lambda_list_phase(P, p, phase, xi, nb, nb_start[i], nb_start[i + 1], pair_g)
                 : pbf__lambda_cells_phase(P, &w->grid, p, phase, i, xi);
        lambda[i] = weight * (T ? pbf_lambda_end_tool_phase(&a, xi, wi, P, S, T, &density[i])
                                : pbf_lambda_end_phase(&a, xi, wi, P, S, &density[i]));
        counts[i] = a.neighbors;
    }
}

void pbf__cpu_lambda(pbf_world *w, const pbf_pass_extras *x, float weight, int nt) {
    const pbf_params *P = &w->params;
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p;
    float *lambda = w->lambda, *density = w->density;
    int32_t *counts = w->neighbor_counts;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    float *pair_g = w->neighbors.pair_g;
    const pbf_tool_params *T = x->tool; /* tool: NULL when there is none */
    if (P->phases_on) {
        lambda_phase(w, T, weight, nt);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        pbf_lambda_acc a = /* the list keeps each pair's gradient factor for the Δp pass */
            list ? pbf__lambda_list(P, p, xi, nb, nb_start[i], nb_start[i + 1], pair_g)
                 : pbf__lambda_cells(P, &w->grid, p, i, xi);
        lambda[i] = weight * (T ? pbf_lambda_end_tool(&a, xi, P, S, T, &density[i])
                                : pbf_lambda_end(&a, xi, P, S, &density[i]));
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
void pbf__cpu_normals(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const int n = w->count;
    const float *p = w->p, *density = w->density;
    float *normal = w->omega;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    const float *pair_g = w->neighbors.pair_g;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        v3_store(normal, i,
                 list
                     ? pbf__normal_list(P, p, density, xi, nb, nb_start[i], nb_start[i + 1], pair_g)
                     : pbf__normal_cells(P, &w->grid, p, density, i, xi));
    }
}

void pbf__cpu_material(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p, *density = w->density;
    float *shift = w->dv;
    const float *normal = w->omega;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    const int tension = P->surface_tension_on;
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

void pbf__cpu_delta(pbf_world *w, const pbf_params *P, float omega, const float *shift,
                    const pbf_pass_extras *x, int nt) {
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p, *lambda = w->lambda, *p_prev = w->p_prev, *density = w->density;
    const float *x0 = w->x; /* the substep's start: wall friction shortens the slide since */
    const float gamma = w->def.solver.chebyshev_gamma;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    const float *pair_g = w->neighbors.pair_g;
    float *out = w->p_tmp;
    const pbf_tool_params *T = x->tool; /* tool */
    float *tool_dx = T ? x->tool_dx : NULL;
    float *mesh_target = x->delta_target; /* meshes: their forces */
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

void pbf__cpu_velocity(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const int n = w->count;
    const float *x = w->x, *p = w->p;
    float *v = w->v, *d_prev = w->d_prev; /* v holds the predicted velocities */
    if (P->impulse_blend == 0.0f) { /* the blend off: d_prev neither read nor kept, as on CUDA */
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int i = 0; i < n; ++i)
            v3_store(v, i, pbf_velocity_update(v3_load(x, i), v3_load(p, i), P));
        return;
    }
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 d = v3_load(d_prev, i);
        v3_store(v, i, pbf_velocity_blend(v3_load(x, i), v3_load(p, i), v3_load(v, i), &d, P));
        v3_store(d_prev, i, d);
    }
}

/* Reads v of neighbours, writes its own ω and Δv. In list mode it keeps each pair's gradient
 * factor for the confinement pass (same positions). */
void pbf__cpu_vorticity(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p, *v = w->v;
    float *omega = w->omega, *dv = w->dv, *omega_len = w->omega_len, *density = w->density;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    float *pair_g = w->neighbors.pair_g;
    const uint8_t *phase = P->phases_on ? w->phase : NULL; /* several fluids: their XSPH c */
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
}

/* Reads |ω| of neighbours, writes its own v. */
void pbf__cpu_confinement(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const int n = w->count;
    const float *p = w->p, *omega = w->omega, *dv = w->dv, *omega_len = w->omega_len;
    float *v = w->v;
    const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
    const uint32_t *nb_start = w->neighbors.start, *nb = w->neighbors.index;
    float *pair_g = w->neighbors.pair_g;
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
}
