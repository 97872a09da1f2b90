/* Implicit viscosity and free-surface drag (kernels.h, "Viscosity for thick fluids";
 * docs/physics.md, "Viscosity" and "Surface drag"). */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "pbf/checkpoint.h"
#include "pbf/pbf.h"
#include "pbf/scene.h"
#include "test.h"
#include "world_internal.h"

/* Parameters of a real world of particle radius r with kinematic viscosity nu. */
static pbf_params make_params(float r, float nu) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = r;
    d.material.viscosity = nu;
    pbf_world *w = NULL;
    pbf_world_create(&d, &w, NULL, 0);
    pbf_params p = w->params;
    pbf_world_destroy(w);
    return p;
}

/* ν∇²u at the centre of a rest lattice (spacing 2r) for the field u(x), by the kernels' product
 * pass (pbf_visc_lane, pbf_visc_laplacian_end). */
static pbf_v3 lattice_laplacian(const pbf_params *P, float r, pbf_v3 (*u)(pbf_v3)) {
    const float s = 2.0f * r;
    const int k = 3;
    pbf_visc_lanes L;
    memset(&L, 0, sizeof L);
    pbf_v3 x0 = v3(0.013f, -0.007f, 0.004f), u0 = u(x0);
    int entry = 0;
    for (int a = -k; a <= k; ++a)
        for (int b = -k; b <= k; ++b)
            for (int c = -k; c <= k; ++c) {
                if (a == 0 && b == 0 && c == 0) continue;
                pbf_v3 xj = v3_add(x0, v3((float)a * s, (float)b * s, (float)c * s));
                pbf_v3 d = v3_sub(x0, xj), du = v3_sub(u0, u(xj));
                pbf_visc_lane(&L, entry++ % PBF_LANES, d.x, d.y, d.z, du.x, du.y, du.z, P);
            }
    return pbf_visc_laplacian_end(&L);
}

static pbf_v3 shear_quadratic(pbf_v3 x) { return v3(x.y * x.y, 0.0f, 0.0f); }     /* ∇² = (2,0,0) */
static pbf_v3 shear_linear(pbf_v3 x) { return v3(3.0f * x.y, 0.0f, -2.0f * x.x); } /* ∇² = 0 */
static pbf_v3 rotation(pbf_v3 x) { return v3(-x.y, x.x, 0.0f); }                   /* ∇² = 0 */
static pbf_v3 mixed(pbf_v3 x) { return v3(x.z * x.z, x.x * x.x, x.y * x.y); }      /* (2,2,2) */

/* The discrete operator against analytic Laplacians on the rest lattice: zero for linear fields
 * (rigid rotation included: viscosity must not brake a spinning body) and 2ν for quadratic
 * divergence-free ones (the calibration makes one of them exact; the others follow by the
 * lattice's symmetry), on a lattice offset from the origin. */
static int laplacian_matches_analytic_fields(void) {
    const float r = 0.01f, nu = 0.5f;
    pbf_params P = make_params(r, nu);
    ENSURE(P.viscosity_on == 1 && P.visc_k > 0.0f);
    pbf_v3 q = lattice_laplacian(&P, r, shear_quadratic);
    pbf_v3 m = lattice_laplacian(&P, r, mixed);
    printf("  nu lap(y^2, 0, 0) = (%.4f %.4f %.4f), want (%.4f 0 0)\n", (double)q.x,
           (double)q.y, (double)q.z, 2.0 * nu);
    printf("  nu lap(z^2, x^2, y^2) = (%.4f %.4f %.4f), want %.4f each\n", (double)m.x,
           (double)m.y, (double)m.z, 2.0 * nu);
    ENSURE_NEAR(q.x, 2.0 * nu, 1e-3 * 2.0 * nu);
    ENSURE_NEAR(q.y, 0.0, 1e-3);
    ENSURE_NEAR(q.z, 0.0, 1e-3);
    for (int k = 0; k < 3; ++k) ENSURE_NEAR((&m.x)[k], 2.0 * nu, 1e-3 * 2.0 * nu);
    pbf_v3 l = lattice_laplacian(&P, r, shear_linear), o = lattice_laplacian(&P, r, rotation);
    ENSURE(v3_len(l) < 1e-3f && v3_len(o) < 1e-3f);
    return 0;
}

/* A world in a box lo..hi with a block bmin..bmax of radius-r particles. */
static pbf_world *box_world(pbf_world_def def, pbf_vec3 bmin, pbf_vec3 bmax, pbf_vec3 vel) {
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(&def, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    pbf_block_def b = pbf_default_block_def();
    b.min = bmin;
    b.max = bmax;
    b.velocity = vel;
    if (pbf_world_add_block(w, &b) != PBF_OK) {
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

/* A column 0.1 m wide and 0.2 m high collapsing along x in a channel 1 m long and 0.06 m
 * deep (r = 0.01), with viscosity nu. */
static pbf_world *column_world(float nu, int threads) {
    pbf_world_def def = pbf_default_world_def();
    def.domain_max = (pbf_vec3){1.0f, 0.3f, 0.06f};
    def.material.viscosity = nu;
    def.threads = threads;
    return box_world(def, (pbf_vec3){0.0f, 0.0f, 0.0f}, (pbf_vec3){0.1f, 0.2f, 0.06f},
                     (pbf_vec3){0.0f, 0.0f, 0.0f});
}

/* The column's front: the 99th percentile of x (a stray particle does not move it). */
static float front_x(const pbf_world *w) {
    int n = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    if (!x) return -1.0f;
    pbf_world_get_positions(w, x);
    int above = 0;
    float lo = 0.0f, hi = 1.0f;
    for (int it = 0; it < 30; ++it) { /* bisection on the count beyond f */
        float f = 0.5f * (lo + hi);
        above = 0;
        for (int i = 0; i < n; ++i) above += x[3 * i] > f;
        if (above > n / 100) lo = f;
        else hi = f;
    }
    free(x);
    return hi;
}

/* Runs frames steps of 1/60 s; 0 when every step succeeded. */
static int run(pbf_world *w, int frames) {
    for (int f = 0; f < frames; ++f)
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) {
            fprintf(stderr, "step %d: %s\n", f, pbf_world_error(w));
            return 1;
        }
    return 0;
}

/* Higher viscosity slows the collapse of a column: after 0.3 s the front of water (ν = 0) has
 * run furthest, honey (ν = 0.01 m²/s) 0.1 m less far, and ν = 1 m²/s (a paste) has spread
 * 8 cm: on the free-slip floor only the fluid's resistance to stretching holds it. */
static int viscosity_slows_spreading(void) {
    const float nus[3] = {0.0f, 0.01f, 1.0f};
    float front[3];
    for (int k = 0; k < 3; ++k) {
        pbf_world *w = column_world(nus[k], 1);
        ENSURE(w != NULL);
        ENSURE(run(w, 18) == 0);
        front[k] = front_x(w);
        printf("  nu %g m^2/s: front %.3f m after 0.3 s (cg iterations %d)\n", (double)nus[k],
               (double)front[k], pbf_world_get_profile(w).viscosity_iterations);
        pbf_world_destroy(w);
    }
    ENSURE(front[1] < front[0] - 0.05f); /* measured 0.50, 0.40 and 0.18 m */
    ENSURE(front[2] < front[1] - 0.1f);
    return 0;
}

/* PBF_VISCOSITY_EXPERIMENT=scene.json [SET=key=value] [FRAMES=n]: runs a scene on one thread
 * and prints each frame's viscosity iterations, step time and kinetic energy. */
static void scene_experiment(void) {
    const char *path = getenv("PBF_VISCOSITY_EXPERIMENT");
    if (!path) return;
    const char *set[2] = {getenv("SET"), getenv("SET2")};
    int nset = set[0] ? (set[1] ? 2 : 1) : 0;
    pbf_scene *sc = malloc(sizeof *sc);
    char err[PBF_ERROR_SIZE];
    pbf_world *w = NULL;
    int ok = sc && pbf_scene_load(path, set, nset, sc, err, sizeof err) == PBF_OK;
    if (ok) sc->world.threads = 1;
    if (!ok || pbf_scene_create_world(sc, &w, err, sizeof err) != PBF_OK) {
        printf("%s\n", err);
        free(sc);
        return;
    }
    int frames = getenv("FRAMES") ? atoi(getenv("FRAMES")) : sc->frames;
    for (int f = 1; f <= frames; ++f) {
        if (pbf_world_step(w, 1.0f / sc->fps) != PBF_OK) {
            printf("frame %d: %s\n", f, pbf_world_error(w));
            break;
        }
        pbf_profile p = pbf_world_get_profile(w);
        if (f % 10 == 0)
            printf("frame %d n %d cg %d ms %.1f ke %.3e\n", f, pbf_world_particle_count(w),
                   p.viscosity_iterations, p.step_ms, pbf_world_get_stats(w).kinetic_energy);
    }
    pbf_world_destroy(w);
    free(sc);
}

TEST_MAIN_BEGIN
    scene_experiment();
    RUN_TEST(laplacian_matches_analytic_fields);
    RUN_TEST(viscosity_slows_spreading);
TEST_MAIN_END
