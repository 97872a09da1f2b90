/* Implicit viscosity and free-surface drag on the CPU (kernels.h, "Viscosity for thick fluids").
 *
 * The viscosity step solves A v' = v (kernels.h) with preconditioned conjugate gradients: the
 * preconditioner is the inverse of each particle's 3×3 diagonal block, the start is v itself
 * (so a fluid in rigid motion costs one product and no iteration), and the solve stops when the
 * residual's norm is at most material.viscosity_tolerance times |v|, or after
 * material.viscosity_iterations iterations. Products are Jacobi passes that write only their
 * own particle; the dot products are summed serially in slot order in double, so the result is
 * bit-identical for any thread count.
 *
 * Split over processes (docs/mpi.md): the ghosts' entries of the vector a product reads (v,
 * then each direction d) come from their owners just before it (w->halo_exchange), the dot
 * products skip the ghosts and are the whole world's, added in rank order (w->halo_sum), so
 * every process takes the same α, β and stopping decision, and one process the bits of a world
 * never split. The ghosts' own rows are computed with cut-off neighbourhoods and never read. */
#include <math.h>
#include <stdlib.h>

#include "module.h" /* this feature as a module of the step */
#include "cpu_passes.h"
#include "viscosity.h"

/* The solve's scratch, grown with the particle count (never shrunk). */
struct pbf_viscosity {
    int capacity;
    float *r, *z, *d, *q; /* residual, preconditioned residual, direction, A·direction */
    pbf_sym3 *inv_diag; /* each particle's inverse diagonal block */
    pbf_sym3 *wall; /* no-slip walls: each particle's wall block (pbf_visc_wall), kept
                             for the products: the positions do not move in the solve */
    float *pair_s; /* list mode: s_ij of each list entry (the positions do not move) */
    size_t pair_capacity;
    double *dots; /* two per-particle products, summed in slot order */
};

void pbf__viscosity_init_params(pbf_world *w) {
    const pbf_material_def *m = &w->def.material;
    pbf_params *p = &w->params;
    p->viscosity_on = m->viscosity > 0.0f;
    p->visc_eps = 0.01f * p->h2;
    p->surface_drag = m->surface_drag;
    /* Over the rest lattice (spacing 2r), with h = 2 spacings, the sum of Weiler's term for the
     * shear u = (y², 0, 0) gives 0.65 × its ν∇²u = 2ν (the continuum integral is exact; the
     * lattice sums a kernel this peaked too coarsely). Scaled here so that the rest lattice
     * gives ν∇²u exactly, as the mass is scaled so that it gives ρ0: Σ_j s_ij d_x² d_y² = 2ν.
     * The same sums give ρ_top / ρ0, the density of a particle in the lattice's top layer (the
     * layers at and below its own) over that of one inside it. */
    const double s = 2.0 * w->def.particle_radius, h2 = (double)p->h2;
    const int k = (int)ceil(sqrt(h2) / s);
    double full = 0.0, top = 0.0, shear = 0.0;
    p->visc_k = 1.0f;
    for (int a = -k; a <= k; ++a)
        for (int b = -k; b <= k; ++b)
            for (int c = -k; c <= k; ++c) {
                double r2 = s * s * (a * a + b * b + c * c);
                if (!(r2 < h2)) continue;
                double wk = (double)pbf_poly6((float)r2, p);
                full += wk;
                top += c <= 0 ? wk : 0.0;
                double dx = a * s, dy = b * s; /* the particle itself adds zero */
                shear += (double)pbf_visc_pair((float)r2, p) * dx * dx * dy * dy;
            }
    p->visc_k = shear > 0.0 ? (float)(2.0 * (double)m->viscosity / shear) : 0.0f;
    p->drag_inv_span = (float)(1.0 / ((double)p->rest_density * (1.0 - top / full)));
    /* no-slip walls: T(z)'s factor −π visc_k K_s / s² (kernels.h, pbf_visc_wall) */
    const double pi = 3.14159265358979323846;
    p->visc_wall_k = p->viscosity_on && w->def.wall_no_slip
                         ? (float)(-pi * (double)p->visc_k * (double)p->spiky_k / (s * s))
                         : 0.0f;
}

void pbf__viscosity_free(pbf_world *w) {
    struct pbf_viscosity *s = w->viscosity;
    if (!s) return;
    free(s->r);
    free(s->z);
    free(s->d);
    free(s->q);
    free(s->inv_diag);
    free(s->wall);
    free(s->dots);
    free(s->pair_s);
    free(s);
    w->viscosity = NULL;
}

static int reserve(pbf_world *w, int n) {
    struct pbf_viscosity *s = w->viscosity;
    if (!s) {
        s = w->viscosity = calloc(1, sizeof *s);
        if (!s) return 0;
    }
    if (s->capacity >= n) return 1;
    size_t v3n = 3 * (size_t)n;
    float *r = realloc(s->r, v3n * sizeof *r);
    if (r) s->r = r;
    float *z = realloc(s->z, v3n * sizeof *z);
    if (z) s->z = z;
    float *d = realloc(s->d, v3n * sizeof *d);
    if (d) s->d = d;
    float *q = realloc(s->q, v3n * sizeof *q);
    if (q) s->q = q;
    pbf_sym3 *m = realloc(s->inv_diag, (size_t)n * sizeof *m);
    if (m) s->inv_diag = m;
    pbf_sym3 *wall = realloc(s->wall, (size_t)n * sizeof *wall);
    if (wall) s->wall = wall;
    double *dots = realloc(s->dots, 2 * (size_t)n * sizeof *dots);
    if (dots) s->dots = dots;
    if (!r || !z || !d || !q || !m || !wall || !dots) return 0;
    s->capacity = n;
    return 1;
}

/* Room for `pairs` list entries' s_ij. */
static int reserve_pairs(struct pbf_viscosity *s, size_t pairs) {
    if (s->pair_capacity >= pairs) return 1;
    size_t cap = pairs + pairs / 4;
    float *a = realloc(s->pair_s, cap * sizeof *a);
    if (!a) return 0;
    s->pair_s = a;
    s->pair_capacity = cap;
    return 1;
}

/* (A u)_i: over the neighbour list (with the entries' s_ij in pair_s), or the 27 cells, at
 * the positions p; with no-slip walls, wall[i] from inv_diag_one. */
static pbf_v3 apply_one(const pbf_world *w, const float *p, const float *u, int i,
                        const float *pair_s, const pbf_sym3 *wall) {
    const pbf_params *P = &w->params;
    pbf_v3 xi = v3_load(p, i), ui = v3_load(u, i);
    pbf_visc_lanes L = {{0.0f}, {0.0f}, {0.0f}};
    if (w->def.neighbor_mode == PBF_NEIGHBOR_LIST) {
        const uint32_t *start = w->neighbors.start, *nb = w->neighbors.index;
        for (uint32_t k = start[i]; k < start[i + 1]; ++k) {
            int j = (int)nb[k];
            pbf_v3 d = v3_sub(xi, v3_load(p, j)), du = v3_sub(ui, v3_load(u, j));
            pbf_visc_lane_s(&L, (int)((k - start[i]) % PBF_LANES), d.x, d.y, d.z, du.x, du.y, du.z,
                            pair_s[k]);
        }
    } else {
        PBF_FOR_EACH_CELL_NEIGHBOR(&w->grid, p, P->h2, i, xi, j, l, {
            pbf_v3 d = v3_sub(xi, v3_load(p, j)), du = v3_sub(ui, v3_load(u, j));
            pbf_visc_lane(&L, l, d.x, d.y, d.z, du.x, du.y, du.z, P);
        });
    }
    pbf_v3 a = pbf_visc_apply_end(&L, ui, P);
    return P->visc_wall_k != 0.0f ? pbf_visc_apply_wall(a, wall[i], ui, P) : a;
}

/* The inverse diagonal block of particle i; in list mode it also keeps each entry's s_ij in
 * pair_s, and with no-slip walls its wall block in wall[i]. */
static pbf_sym3 inv_diag_one(const pbf_world *w, const float *p, int i, float *pair_s,
                             pbf_sym3 *wall) {
    const pbf_params *P = &w->params;
    pbf_v3 xi = v3_load(p, i);
    pbf_visc_diag_lanes L;
    memset(&L, 0, sizeof L);
    if (w->def.neighbor_mode == PBF_NEIGHBOR_LIST) {
        const uint32_t *start = w->neighbors.start, *nb = w->neighbors.index;
        for (uint32_t k = start[i]; k < start[i + 1]; ++k) {
            pbf_v3 d = v3_sub(xi, v3_load(p, (int)nb[k]));
            float s = pbf_visc_pair(v3_dot(d, d), P);
            pair_s[k] = s;
            pbf_visc_diag_lane(&L, (int)((k - start[i]) % PBF_LANES), d.x, d.y, d.z, s);
        }
    } else {
        PBF_FOR_EACH_CELL_NEIGHBOR(&w->grid, p, P->h2, i, xi, j, l, {
            pbf_v3 d = v3_sub(xi, v3_load(p, j));
            pbf_visc_diag_lane(&L, l, d.x, d.y, d.z, pbf_visc_pair(v3_dot(d, d), P));
        });
    }
    if (P->visc_wall_k != 0.0f) /* the walls' block, diagonal (pbf_visc_wall) */
        pbf_visc_diag_wall(&L, wall[i] = pbf_visc_wall(xi, P));
    return pbf_visc_diag_end(&L, P);
}

/* The two sums of the per-particle products in s->dots, serially in slot order, over the
 * owned particles (ghosts skipped); split over processes the whole world's (collective). */
static void sum_dots(pbf_world *w, int n, double *a, double *b) {
    const struct pbf_viscosity *s = w->viscosity;
    const uint8_t *ghost = w->halo_ghost; /* NULL unless split */
    double sum[2] = {0.0, 0.0};
    for (int i = 0; i < n; ++i) {
        if (ghost && ghost[i]) continue;
        sum[0] += s->dots[2 * i];
        sum[1] += s->dots[2 * i + 1];
    }
    if (w->halo) w->halo_sum(w, sum, 2);
    *a = sum[0];
    *b = sum[1];
}

/* Split over processes: the ghosts' entries of u from their owners (before a product). */
static void exchange(pbf_world *w, float *u) {
    if (w->halo) w->halo_exchange(w, u, 3);
}

/* Preconditioned conjugate gradients on A v' = v; returns the iterations done. */
static int solve_viscosity(pbf_world *w, int nt) {
    struct pbf_viscosity *s = w->viscosity;
    const int n = w->count;
    const float *p = w->p;
    float *v = w->v, *r = s->r, *z = s->z, *d = s->d, *q = s->q;
    pbf_sym3 *M = s->inv_diag;
    double *dots = s->dots;
    float *pair_s = s->pair_s;
    exchange(w, v); /* the ghosts' v after XSPH and confinement */
    /* r = v − A v, z = M r, d = z; the products r·z and v·v */
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int i = 0; i < n; ++i) {
        M[i] = inv_diag_one(w, p, i, pair_s, s->wall);
        pbf_v3 vi = v3_load(v, i), ri = v3_sub(vi, apply_one(w, p, v, i, pair_s, s->wall));
        pbf_v3 zi = pbf_sym3_apply(M[i], ri);
        v3_store(r, i, ri);
        v3_store(z, i, zi);
        v3_store(d, i, zi);
        dots[2 * i] = pbf_dot_d(ri, zi);
        dots[2 * i + 1] = pbf_dot_d(vi, vi);
    }
    double rz, rr, bb;
    sum_dots(w, n, &rz, &bb);
    for (int i = 0; i < n; ++i) { /* r·r: the second slot is free again */
        dots[2 * i] = pbf_dot_d(v3_load(r, i), v3_load(r, i));
        dots[2 * i + 1] = 0.0;
    }
    double unused;
    sum_dots(w, n, &rr, &unused);
    const double tol = w->def.material.viscosity_tolerance, tol_rr = tol * tol * bb;
    int k = 0;
    while (k < w->def.material.viscosity_iterations && rr > tol_rr) {
        exchange(w, d); /* the ghosts' direction: their own z was computed cut off */
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int i = 0; i < n; ++i) {
            pbf_v3 qi = apply_one(w, p, d, i, pair_s, s->wall);
            v3_store(q, i, qi);
            dots[2 * i] = pbf_dot_d(v3_load(d, i), qi);
            dots[2 * i + 1] = 0.0;
        }
        double dq;
        sum_dots(w, n, &dq, &unused);
        if (!(dq > 0.0)) break; /* d = 0: converged to round-off */
        const float alpha = (float)(rz / dq);
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int i = 0; i < n; ++i) {
            pbf_v3 vi = v3_load(v, i), ri = v3_load(r, i);
            pbf_v3 zi = pbf_visc_cg_update(&vi, &ri, v3_load(d, i), v3_load(q, i), M[i], alpha);
            v3_store(v, i, vi);
            v3_store(r, i, ri);
            v3_store(z, i, zi);
            dots[2 * i] = pbf_dot_d(ri, zi);
            dots[2 * i + 1] = pbf_dot_d(ri, ri);
        }
        double rz_new;
        sum_dots(w, n, &rz_new, &rr);
        const float beta = (float)(rz_new / rz);
        rz = rz_new;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int i = 0; i < n; ++i) v3_store(d, i, v3_madd(v3_load(z, i), v3_load(d, i), beta));
        ++k;
    }
    return k;
}

pbf_status pbf__viscosity_substep(pbf_world *w, int nt) {
    const pbf_params *P = &w->params;
    const int n = w->count;
    if (P->viscosity_on) {
        const int list = w->def.neighbor_mode == PBF_NEIGHBOR_LIST;
        if (!reserve(w, n) || (list && !reserve_pairs(w->viscosity, w->neighbors.start[n])))
            return pbf__fail(w, PBF_ERR_OUT_OF_MEMORY,
                             "out of memory for the viscosity solve of %d particles", n);
        int k = solve_viscosity(w, nt);
        if (k > w->profile.viscosity_iterations) w->profile.viscosity_iterations = k;
    }
    if (P->surface_drag > 0.0f) {
        float *v = w->v;
        const float *density = w->density; /* the vorticity pass's: at these positions */
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int i = 0; i < n; ++i) v3_store(v, i, pbf_surface_drag(v3_load(v, i), density[i], P));
    }
    return PBF_OK;
}

/* ---------------------------------------------------------------------------------------------
 * The viscosity solve and surface drag as a module of the step (module.h) */

static pbf_status viscosity_after_velocity(pbf_world *w, int threads) {
    if (!(w->params.viscosity_on || w->params.surface_drag > 0.0f)) return PBF_OK;
    return pbf__viscosity_substep(w, threads);
}

const pbf_module pbf__viscosity_module = {
    .name = "viscosity",
    .init_params = pbf__viscosity_init_params,
    .after_velocity = viscosity_after_velocity,
    .free = pbf__viscosity_free,
};
