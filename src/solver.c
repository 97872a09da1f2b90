/* The PBF step (Macklin & Müller 2013, Algorithm 1) on the CPU.
 *
 * Each stage is a parallel loop over particles that writes only its own particle (Jacobi), with
 * the math from kernels.h. Reductions run serially in slot order after the loops. Together this
 * makes the result bit-identical for any thread count. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "world_internal.h"

#define PI_D 3.14159265358979323846

/* ---------------------------------------------------------------------------------------------
 * Constants */

void pbf__init_params(pbf_world *w) {
    const pbf_world_def *d = &w->def;
    pbf_params *p = &w->params;
    memset(p, 0, sizeof *p);
    double r = d->particle_radius, s = 2.0 * r, h = d->kernel_scale * r;
    p->h = (float)h;
    p->h2 = (float)(h * h);
    p->poly6_k = (float)(315.0 / (64.0 * PI_D * pow(h, 9)));
    p->spiky_k = (float)(-45.0 / (PI_D * pow(h, 6)));
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
    p->scorr_n = sd->scorr_n;
    p->vorticity = sd->vorticity;
    p->xsph = sd->xsph;
    p->gravity = v3(d->gravity.x, d->gravity.y, d->gravity.z);
    p->radius = d->particle_radius;
    p->solid_count = w->collider_count;
}

/* ---------------------------------------------------------------------------------------------
 * Neighbour iteration: the same loop body over the neighbour list or over the 27 cells. In cells
 * mode candidates beyond h are handed in too; the kernels' *_pair functions ignore them. */

#define FOR_EACH_NEIGHBOR(w, i, j, ...)                                                         \
    do {                                                                                        \
        if ((w)->def.neighbor_mode == PBF_NEIGHBOR_LIST) {                                      \
            const uint32_t *nl_ = (w)->neighbors.index;                                         \
            for (uint32_t k_ = (w)->neighbors.start[i]; k_ < (w)->neighbors.start[(i) + 1];     \
                 ++k_) {                                                                        \
                const int j = (int)nl_[k_];                                                     \
                __VA_ARGS__                                                                     \
            }                                                                                   \
        } else {                                                                                \
            uint32_t r_[18];                                                                    \
            int nr_ = pbf_grid_ranges(&(w)->grid, (w)->grid.cell_of[i], r_);                    \
            for (int q_ = 0; q_ < nr_; ++q_)                                                    \
                for (int j = (int)r_[2 * q_]; j < (int)r_[2 * q_ + 1]; ++j) {                   \
                    if (j == (i)) continue;                                                     \
                    __VA_ARGS__                                                                 \
                }                                                                               \
        }                                                                                       \
    } while (0)

static double now_ms(void) { return omp_get_wtime() * 1000.0; }

static int thread_count(const pbf_world *w) {
    return w->def.threads > 0 ? w->def.threads : omp_get_max_threads();
}

/* ---------------------------------------------------------------------------------------------
 * Stages */

static void stage_predict(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const int n = w->count;
    float *x = w->x, *p = w->p, *v = w->v;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 vi = pbf_predict_velocity(v3_load(v, i), P);
        v3_store(v, i, vi);
        v3_store(p, i, v3_madd(v3_load(x, i), vi, P->dt));
    }
}

/* Gathers a float array of `stride` floats per particle into the sorted order, using p_tmp as
 * the destination and swapping it in. */
static void gather3(pbf_world *w, float **arr, int nt) {
    const uint32_t *order = w->grid.order;
    const int n = w->count;
    float *src = *arr, *dst = w->p_tmp;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) v3_store(dst, i, v3_load(src, (int)order[i]));
    w->p_tmp = src;
    *arr = dst;
}

static void stage_grid(pbf_world *w, int nt) {
    pbf_grid_sort(&w->grid, w->p, w->count, nt);
    gather3(w, &w->x, nt);
    gather3(w, &w->p, nt);
    gather3(w, &w->v, nt);
    const uint32_t *order = w->grid.order;
    for (int i = 0; i < w->count; ++i) w->ids_tmp[i] = w->ids[order[i]];
    int32_t *t = w->ids;
    w->ids = w->ids_tmp;
    w->ids_tmp = t;
}

static void stage_lambda(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p;
    float *lambda = w->lambda, *density = w->density;
    int32_t *counts = w->neighbor_counts;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        pbf_lambda_acc a = pbf_lambda_begin(P);
        FOR_EACH_NEIGHBOR(w, i, j, pbf_lambda_pair(&a, xi, v3_load(p, j), P););
        lambda[i] = pbf_lambda_end(&a, xi, P, S, &density[i]);
        counts[i] = a.neighbors;
    }
}

static void stage_delta(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const pbf_solid *S = w->solids;
    const int n = w->count;
    const float *p = w->p, *lambda = w->lambda;
    float *out = w->p_tmp;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        float li = lambda[i];
        pbf_delta_acc a = pbf_delta_begin();
        FOR_EACH_NEIGHBOR(w, i, j, pbf_delta_pair(&a, xi, v3_load(p, j), li, lambda[j], P););
        v3_store(out, i, pbf_delta_end(&a, xi, li, P, S));
    }
    /* Jacobi: every particle read the old positions; the new ones become current. */
    w->p_tmp = w->p;
    w->p = out;
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
    /* Pass A: ω, XSPH and the final density. Reads v of neighbours, writes its own ω and Δv. */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i), vi = v3_load(v, i);
        pbf_vort_acc a = pbf_vort_begin(P);
        FOR_EACH_NEIGHBOR(w, i, j, pbf_vort_pair(&a, xi, v3_load(p, j), vi, v3_load(v, j), P););
        pbf_v3 om;
        v3_store(dv, i, pbf_vort_end(&a, xi, P, S, &om, &density[i]));
        v3_store(omega, i, om);
        omega_len[i] = v3_len(om);
    }
    /* Pass B: confinement from the gradient of |ω|. Reads |ω| of neighbours, writes its own v. */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        pbf_v3 xi = v3_load(p, i);
        float wi = omega_len[i];
        pbf_conf_acc a = pbf_conf_begin();
        if (P->vorticity > 0.0f)
            FOR_EACH_NEIGHBOR(w, i, j, pbf_conf_pair(&a, xi, v3_load(p, j), wi, omega_len[j], P););
        v3_store(v, i, pbf_conf_end(&a, v3_load(v, i), v3_load(dv, i), v3_load(omega, i), P));
    }
}

/* ---------------------------------------------------------------------------------------------
 * The step */

static pbf_status substep(pbf_world *w, float dt, int nt) {
    pbf_params *P = &w->params;
    double *ms = w->profile.stage_ms;
    P->dt = dt;
    P->inv_dt = 1.0f / dt;
    P->max_speed = w->def.solver.cfl > 0.0f ? w->def.solver.cfl * P->h / dt : 0.0f;
    pbf__walls_at(&w->def, w->time + dt, &P->wall_lo, &P->wall_hi);

    double t = now_ms(), t1;
    stage_predict(w, nt);
    t1 = now_ms(), ms[PBF_STAGE_PREDICT] += t1 - t, t = t1;

    stage_grid(w, nt);
    t1 = now_ms(), ms[PBF_STAGE_GRID] += t1 - t, t = t1;

    if (w->def.neighbor_mode == PBF_NEIGHBOR_LIST) {
        if (pbf_neighbor_list_build(&w->neighbors, &w->grid, w->p, w->count, P->h, nt) != 0)
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY,
                             "out of memory growing the neighbour list of %d particles", w->count);
        t1 = now_ms(), ms[PBF_STAGE_NEIGHBORS] += t1 - t, t = t1;
    }

    for (int it = 0; it < w->def.solver.iterations; ++it) {
        stage_lambda(w, nt);
        t1 = now_ms(), ms[PBF_STAGE_LAMBDA] += t1 - t, t = t1;
        stage_delta(w, nt);
        t1 = now_ms(), ms[PBF_STAGE_DELTA] += t1 - t, t = t1;
    }

    stage_velocity(w, nt);
    t1 = now_ms(), ms[PBF_STAGE_VELOCITY] += t1 - t, t = t1;

    stage_vorticity(w, nt);
    t1 = now_ms(), ms[PBF_STAGE_VORTICITY] += t1 - t, t = t1;

    /* the corrected positions become the state */
    float *x = w->x;
    w->x = w->p;
    w->p = x;
    w->time += dt;
    return PBF_OK;
}

/* Density error and neighbour statistics, reduced serially in slot order (deterministic).
 * Also the cheapest place to notice a blown-up state. */
static pbf_status finish_profile(pbf_world *w) {
    const int n = w->count;
    double err_sum = 0.0, nb_sum = 0.0;
    float err_max = 0.0f;
    for (int i = 0; i < n; ++i) {
        float rho = w->density[i];
        if (!isfinite(rho))
            return pbf__fail(w, PBF_ERR_UNSTABLE,
                             "simulation unstable at t = %.4f s: particle %d has a non-finite "
                             "density; reduce the time step or raise substeps or iterations",
                             w->time, w->ids[i]);
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

pbf_status pbf_world_step(pbf_world *w, float dt) {
    if (!(dt > 0.0f) || !isfinite(dt))
        return pbf__fail(w, PBF_ERR_INVALID_ARG, "step: dt must be positive and finite, got %g",
                         (double)dt);
    double t0 = now_ms();
    memset(w->profile.stage_ms, 0, sizeof w->profile.stage_ms);
    const int nt = thread_count(w);
    const int substeps = w->def.substeps;
    const float dt_sub = dt / (float)substeps;
    if (w->count == 0) {
        w->time += dt;
    } else {
        for (int s = 0; s < substeps; ++s) {
            pbf_status st = substep(w, dt_sub, nt);
            if (st != PBF_OK) return st;
        }
        pbf_status st = finish_profile(w);
        if (st != PBF_OK) return st;
    }
    w->profile.iterations = w->def.solver.iterations;
    w->profile.substeps = substeps;
    w->profile.steps++;
    w->profile.step_ms = now_ms() - t0;
    return PBF_OK;
}

pbf_profile pbf_world_get_profile(const pbf_world *w) { return w->profile; }
