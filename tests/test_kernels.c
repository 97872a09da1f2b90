/* The SPH kernels and the ghost-layer wall terms against direct numerical evaluation. */
#include <stdlib.h>

#include <string.h>

#include "cpu_passes.h"
#include "kernels.h"
#include "test.h"
#include "world_state.h"

/* Parameters of a real world (kernel constants, mass calibration). */
static pbf_params make_params(float r, float scale) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = r;
    d.kernel_scale = scale;
    pbf_world *w = NULL;
    pbf_world_create(&d, &w, NULL, 0);
    pbf_params p = w->params;
    pbf_world_destroy(w);
    return p;
}

/* ∫ W dV = 1: midpoint rule over a cube enclosing the support. */
static int poly6_is_normalised(void) {
    pbf_params p = make_params(0.01f, 4.0f);
    int n = 80;
    double step = 2.0 * p.h / n, sum = 0.0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < n; ++k) {
                double x = -p.h + (i + 0.5) * step, y = -p.h + (j + 0.5) * step,
                       z = -p.h + (k + 0.5) * step;
                sum += pbf_poly6((float)(x * x + y * y + z * z), &p);
            }
    ENSURE_NEAR(sum * step * step * step, 1.0, 2e-3);
    return 0;
}

static double spiky_w(double r, double h) {
    if (r >= h) return 0.0;
    return 15.0 / (3.14159265358979323846 * pow(h, 6)) * pow(h - r, 3);
}

/* The spiky gradient equals the central difference of the spiky kernel it belongs to. */
static int spiky_gradient_matches_finite_differences(void) {
    pbf_params p = make_params(0.01f, 4.0f);
    srand(7);
    for (int t = 0; t < 200; ++t) {
        pbf_v3 d = v3((float)(rand() % 2000 - 1000) / 1000.0f * p.h,
                      (float)(rand() % 2000 - 1000) / 1000.0f * p.h,
                      (float)(rand() % 2000 - 1000) / 1000.0f * p.h);
        float r = v3_len(d);
        if (r > 0.98f * p.h || r < 0.05f * p.h) continue;
        pbf_v3 g = pbf_spiky_grad(d, r, &p);
        double e = 1e-4 * p.h;
        double fd[3];
        for (int k = 0; k < 3; ++k) {
            double a[3] = {d.x, d.y, d.z}, b[3] = {d.x, d.y, d.z};
            a[k] += e;
            b[k] -= e;
            fd[k] = (spiky_w(sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]), p.h) -
                     spiky_w(sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]), p.h)) /
                    (2 * e);
        }
        double scale = fabs(spiky_w(0.0, p.h)) / p.h;
        ENSURE_NEAR(g.x, fd[0], 1e-3 * scale);
        ENSURE_NEAR(g.y, fd[1], 1e-3 * scale);
        ENSURE_NEAR(g.z, fd[2], 1e-3 * scale);
    }
    return 0;
}

/* A particle inside the rest lattice has density ρ0 (mass calibration) and zero gradient sum. */
static int rest_lattice_has_rest_density(void) {
    pbf_params p = make_params(0.025f, 4.0f);
    float s = 2.0f * p.radius;
    pbf_lambda_lanes L;
    memset(&L, 0, sizeof L);
    int n = 0;
    for (int i = -3; i <= 3; ++i)
        for (int j = -3; j <= 3; ++j)
            for (int k = -3; k <= 3; ++k)
                if (i || j || k) /* d = 0 − x_j */
                    (void)pbf_lambda_lane(&L, n++ % PBF_LANES, -i * s, -j * s, -k * s, &p);
    pbf_lambda_acc a = pbf_lambda_lanes_end(&L, &p);
    ENSURE_NEAR(p.mass * a.w_sum, p.rest_density, 1e-3 * p.rest_density);
    ENSURE(v3_len(a.grad_i) < 1e-4f * sqrtf(a.grad2_sum));
    ENSURE(a.neighbors == 26); /* h = 2 spacings: the 3×3×3 block, the 4 spacings apart excluded */
    return 0;
}

/* The closed-form ghost plane equals the discrete lattice plane it stands for, within the
 * lattice's own discretisation error, for density and gradient. */
static int ghost_plane_matches_discrete_plane(void) {
    pbf_params p = make_params(0.01f, 4.0f);
    float s = 2.0f * p.radius;
    float g_scale =
        0.0f; /* the gradient of the nearest plane, z = 2r: the scale of a wall's push */
    for (int t = 0; t < 8; ++t) {
        float z = 2.0f * p.radius + t * 0.2f * p.radius; /* 2r .. 3.4r */
        float w_closed = 0.0f;
        pbf_v3 g_closed = v3(0, 0, 0);
        pbf_ghost_plane(z, v3(0, 0, 1), &p, &w_closed, &g_closed);
        double w_sum = 0.0, g_sum = 0.0;
        for (int i = -6; i <= 6; ++i)
            for (int j = -6; j <= 6; ++j) {
                pbf_v3 d = v3(i * s, j * s, z); /* particle minus ghost */
                float r2 = v3_dot(d, d);
                w_sum += pbf_poly6(r2, &p);
                g_sum += pbf_spiky_grad(d, sqrtf(r2), &p).z;
            }
        /* The operating range: a ghost plane is z = d + r >= 2r from a particle, since collisions
         * keep centres r from the surface. Measured as what matters: the density error it makes,
         * within 0.5% of ρ0, and the gradient within 5% of the nearest plane's. */
        if (t == 0) g_scale = (float)fabs(g_sum);
        ENSURE_NEAR(w_closed * p.mass, w_sum * p.mass, 5e-3 * p.rest_density);
        ENSURE_NEAR(g_closed.z, g_sum, 0.05 * g_scale);
    }
    return 0;
}

/* Particles of the rest lattice against a wall, an edge and a corner see ρ0 within 0.5%. */
static int walls_complete_the_rest_density(void) {
    pbf_params p = make_params(0.01f, 4.0f);
    float r = p.radius, s = 2.0f * r;
    p.wall_lo = v3(0, 0, 0);
    p.wall_hi = v3(1, 1, 1);
    /* cases: face (one wall), edge (two), corner (three), each in the first lattice layer */
    pbf_v3 cases[3] = {v3(0.5f, r, 0.5f), v3(r, r, 0.5f), v3(r, r, r)};
    for (int c = 0; c < 3; ++c) {
        pbf_v3 xi = cases[c];
        pbf_lambda_lanes L;
        memset(&L, 0, sizeof L);
        int n = 0;
        for (int i = -3; i <= 3; ++i)
            for (int j = -3; j <= 3; ++j)
                for (int k = -3; k <= 3; ++k) {
                    pbf_v3 xj = v3(xi.x + i * s, xi.y + j * s, xi.z + k * s), d = v3_sub(xi, xj);
                    if ((i || j || k) && xj.x > 0 && xj.y > 0 && xj.z > 0)
                        (void)pbf_lambda_lane(&L, n++ % PBF_LANES, d.x, d.y, d.z, &p);
                }
        pbf_lambda_acc a = pbf_lambda_lanes_end(&L, &p);
        float rho;
        pbf_lambda_end(&a, xi, &p, NULL, &rho);
        ENSURE_NEAR(rho, p.rest_density, 5e-3 * p.rest_density);
    }
    /* and no wall at all far from the walls */
    float rho_b;
    pbf_v3 g;
    pbf_boundary_terms(v3(0.5f, 0.5f, 0.5f), &p, NULL, &rho_b, &g);
    ENSURE(rho_b == 0.0f && g.x == 0.0f && g.y == 0.0f && g.z == 0.0f);
    return 0;
}

/* Signed distances of the colliders. */
static int collider_distances(void) {
    pbf_solid sph = {PBF_SOLID_SPHERE, {0, 0, 0}, {0, 0, 0}, 1.0f, 0.0f, 0.0f, {0}, NULL};
    pbf_solid box = {PBF_SOLID_BOX, {0, 0, 0}, {1, 2, 3}, 0.0f, 0.0f, 0.0f, {0}, NULL};
    pbf_solid cap = {PBF_SOLID_CAPSULE, {0, 0, 0}, {0, 2, 0}, 0.5f, 0.0f, 0.0f, {0}, NULL};
    pbf_v3 n;
    ENSURE_NEAR(pbf_solid_sdf(&sph, v3(2, 0, 0), &n), 1.0, 1e-6);
    ENSURE_NEAR(n.x, 1.0, 1e-6);
    ENSURE_NEAR(pbf_solid_sdf(&box, v3(0, 2.5f, 0), &n), 0.5, 1e-6);
    ENSURE_NEAR(n.y, 1.0, 1e-6);
    ENSURE_NEAR(pbf_solid_sdf(&box, v3(0.5f, 0, 0), &n), -0.5, 1e-6); /* inside: nearest face */
    ENSURE_NEAR(n.x, 1.0, 1e-6);
    ENSURE_NEAR(pbf_solid_sdf(&box, v3(2, 3, 3), &n), sqrt(2.0), 1e-6); /* edge region */
    ENSURE_NEAR(pbf_solid_sdf(&cap, v3(1, 1, 0), &n), 0.5, 1e-6);
    ENSURE_NEAR(pbf_solid_sdf(&cap, v3(0, 3, 0), &n), 0.5, 1e-6);
    ENSURE_NEAR(n.y, 1.0, 1e-6);
    return 0;
}

/* The CPU's vector list passes (src/backend/cpu/cpu_passes.h) against a plain scalar loop over the
 * lane
 * functions, entry k to lane k mod 4: bit for bit, for lists of every length from 0 to past two
 * chunks. The CUDA kernels sum in that scalar form, so this is what makes the two backends
 * agree (docs/cuda.md). Pairs beyond h are in the lists, as in a real solve. */
static int vector_passes_equal_scalar_lanes(void) {
    pbf_params P = make_params(0.01f, 4.0f);
    enum { N = 200 };
    float x[3 * N], lambda[N], rho[N], v[3 * N], wlen[N], g_vec[N], g_ref[N];
    uint32_t nb[N];
    srand(7);
    for (int i = 0; i < 3 * N; ++i) {
        x[i] = 0.05f * (float)rand() / (float)RAND_MAX; /* 5 cm box: about half within h */
        v[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    }
    for (int i = 0; i < N; ++i) {
        lambda[i] = -1e-4f * (float)rand() / (float)RAND_MAX;
        rho[i] = 900.0f + 150.0f * (float)rand() / (float)RAND_MAX; /* s_corr weights 0 to 1 */
        wlen[i] = (float)rand() / (float)RAND_MAX;
        nb[i] = (uint32_t)(1 + i % (N - 1)); /* particle 0's "list": every other particle */
    }
    pbf_v3 xi = v3_load(x, 0), vi = v3_load(v, 0);
    const float w0 = pbf_scorr_weight(rho[0], &P);
    for (uint32_t len = 0; len <= 2 * PBF_CHUNK + 7; ++len) {
        pbf_lambda_lanes lr;
        pbf_delta_lanes dr;
        pbf_vort_lanes vr;
        pbf_conf_lanes cr;
        memset(&lr, 0, sizeof lr), memset(&dr, 0, sizeof dr);
        memset(&vr, 0, sizeof vr), memset(&cr, 0, sizeof cr);
        for (uint32_t k = 0; k < len; ++k) {
            int l = (int)(k % PBF_LANES);
            pbf_v3 d = v3_sub(xi, v3_load(x, (int)nb[k]));
            pbf_v3 u = v3_sub(v3_load(v, (int)nb[k]), vi);
            g_ref[k] = pbf_lambda_lane(&lr, l, d.x, d.y, d.z, &P);
            pbf_delta_lane(&dr, l, d.x, d.y, d.z, lambda[0], lambda[nb[k]], w0, rho[nb[k]],
                           g_ref[k], P.scorr_n, &P);
            (void)pbf_vort_lane(&vr, l, d.x, d.y, d.z, u.x, u.y, u.z, &P);
            pbf_conf_lane(&cr, l, d.x, d.y, d.z, wlen[nb[k]] - wlen[0], g_ref[k]);
        }
        pbf_lambda_acc la = pbf__lambda_list(&P, x, xi, nb, 0, len, g_vec);
        pbf_lambda_acc lb = pbf_lambda_lanes_end(&lr, &P);
        ENSURE(memcmp(g_vec, g_ref, len * sizeof *g_vec) == 0);
        ENSURE(memcmp(&la, &lb, sizeof la) == 0);
        pbf_delta_acc da =
            pbf__delta_list_of(&P, x, lambda, rho, xi, lambda[0], w0, nb, 0, len, g_ref);
        pbf_delta_acc db = pbf_delta_lanes_end(&dr);
        ENSURE(memcmp(&da, &db, sizeof da) == 0);
        pbf_vort_acc va = pbf__vort_list(&P, x, v, xi, vi, nb, 0, len, g_vec);
        pbf_vort_acc vb = pbf_vort_lanes_end(&vr, &P);
        ENSURE(memcmp(&va, &vb, sizeof va) == 0);
        pbf_conf_acc ca = pbf__conf_list(&P, x, wlen, xi, wlen[0], nb, 0, len, g_ref);
        pbf_conf_acc cb = pbf_conf_lanes_end(&cr);
        ENSURE(memcmp(&ca, &cb, sizeof ca) == 0);
        if (len == 25) ENSURE(lb.neighbors > 0 && lb.neighbors < 25); /* pairs on both sides of h */
    }
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(poly6_is_normalised);
RUN_TEST(spiky_gradient_matches_finite_differences);
RUN_TEST(rest_lattice_has_rest_density);
RUN_TEST(ghost_plane_matches_discrete_plane);
RUN_TEST(walls_complete_the_rest_density);
RUN_TEST(collider_distances);
RUN_TEST(vector_passes_equal_scalar_lanes);
TEST_MAIN_END
