/* The features with the Wendland C2 pair (docs/physics.md, "The Wendland C2 pair"): each feature
 * test of the paper's pair run again with fluid.kernel = wendland at h = 5r, with the same
 * physical check. The tool: its ghost shells against a quadrature over the shell (both pairs),
 * and a held sphere's buoyancy (tests/test_tool.c). Surface tension: a cube of water becomes
 * round (tests/test_materials.c). Adhesion: a drop spreads the wider the more the floor or a
 * plate adheres (tests/test_materials.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "pbf/pbf.h"
#include "test.h"

#define PI_D 3.14159265358979323846

/* The def of every world here: the Wendland pair at h = 5r. */
static pbf_world_def wendland_def(void) {
    pbf_world_def d = pbf_default_world_def();
    d.kernel = PBF_KERNEL_WENDLAND;
    d.kernel_scale = 5.0f;
    return d;
}

static pbf_world *make_world(const pbf_world_def *d) {
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(d, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "create: %s\n", err);
        return NULL;
    }
    return w;
}

/* The kernel constants of either pair for h = scale r (as pbf__init_params sets them). */
static pbf_params params_for(int kernel, float r, float scale) {
    pbf_params p;
    memset(&p, 0, sizeof p);
    double h = scale * r;
    p.h = (float)h;
    p.h2 = (float)(h * h);
    p.kernel = kernel;
    p.poly6_k =
        (float)(kernel ? 21.0 / (2.0 * PI_D * pow(h, 3)) : 315.0 / (64.0 * PI_D * pow(h, 9)));
    p.spiky_k = (float)(kernel ? -210.0 / (PI_D * pow(h, 5)) : -45.0 / (PI_D * pow(h, 6)));
    p.radius = r;
    return p;
}

/* ---------------------------------------------------------------------------------------------
 * The tool */

/* One shell of ghosts (areal density 1/(2r)²) of radius s seen from distance D, summed over the
 * polar angle by the midpoint rule with 20000 rings, against pbf_ghost_shell's closed form: for
 * the paper's pair (which checks the quadrature) and for Wendland C2. */
static int shell_sums_match_quadrature(void) {
    const float r = 0.005f;
    double worst_w = 0.0, worst_g = 0.0;
    for (int kernel = 0; kernel < 2; ++kernel) {
        pbf_params p = params_for(kernel, r, kernel ? 5.0f : 4.0f);
        const float shells[3] = {3.0f * r, 9.0f * r, 40.0f * r};
        for (int a = 0; a < 3; ++a)
            for (int k = 0; k < 6; ++k) {
                float s = shells[a], D = s + (-0.8f + 0.9f * (float)k) * r; /* −0.8 r .. 3.7 r */
                const int n = 20000;
                double w = 0.0, g = 0.0;
                for (int i = 0; i < n; ++i) {
                    double t = (i + 0.5) * PI_D / n, ring = 2.0 * PI_D * s * s * sin(t) * PI_D / n;
                    double q2 = (double)D * D + (double)s * s - 2.0 * D * s * cos(t);
                    float fm, gf = pbf_pair_factor_k((float)q2, &p, kernel, &fm);
                    w += ring * pbf_pair_w_k((float)q2, &p, kernel);
                    g += ring * gf * (D - s * cos(t)); /* the radial part of g (x − y) */
                }
                w /= 4.0 * r * r, g /= 4.0 * r * r;
                float ws = 0.0f, gs = 0.0f;
                pbf_ghost_shell(s, D, &p, &ws, &gs);
                const double u = 8.0 * r * r * r; /* in units of 1/s³ and 1/(s³ h) */
                worst_w = fmax(worst_w, fabs(ws - w) * u);
                worst_g = fmax(worst_g, fabs(gs - g) * u * p.h);
                if (fabs(ws - w) * u > 1e-4 || fabs(gs - g) * u * p.h > 1e-4)
                    printf("  pair %d, s %.3f, D %.4f: W %.6g vs %.6g, g %.6g vs %.6g\n", kernel, s,
                           D, ws, w, gs, g);
            }
    }
    printf("  worst difference: density %.2e (1/s³), gradient %.2e (1/(s³ h))\n", worst_w, worst_g);
    ENSURE(worst_w < 1e-4);
    ENSURE(worst_g < 1e-4);
    return 0;
}

/* Fills [0, lx] x [0, depth] x [0, lz] with water on the rest lattice, leaving out the sphere of
 * radius R + r around c. Returns the particle count, or −1. */
static int fill_water(pbf_world *w, float lx, float depth, float lz, pbf_vec3 c, float R) {
    const float r = pbf_world_get_def(w)->particle_radius, s = 2.0f * r;
    int nx = (int)(lx / s + 1e-4f), ny = (int)(depth / s + 1e-4f), nz = (int)(lz / s + 1e-4f);
    float *pos = malloc((size_t)nx * ny * nz * 3 * sizeof *pos);
    if (pos == NULL) return -1;
    int n = 0;
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                float x = r + s * i, y = r + s * j, z = r + s * k;
                float dx = x - c.x, dy = y - c.y, dz = z - c.z;
                if (dx * dx + dy * dy + dz * dz < (R + r) * (R + r)) continue;
                pos[3 * n] = x, pos[3 * n + 1] = y, pos[3 * n + 2] = z;
                ++n;
            }
    pbf_status st = pbf_world_add_particles(w, n, pos, NULL);
    free(pos);
    return st == PBF_OK ? n : -1;
}

/* tests/test_tool.c's held sphere with the Wendland pair: held fully submerged and still, the
 * fluid pushes it up with ρ0 g V within 10%, and not sideways. */
static int held_sphere_feels_buoyancy(void) {
    pbf_world_def d = wendland_def();
    d.domain_max = (pbf_vec3){0.26f, 0.3f, 0.26f};
    d.solver.scorr_k = 0.0f;
    d.threads = 1;
    pbf_world *w = make_world(&d);
    ENSURE(w);
    const float R = 0.05f;
    const pbf_vec3 c = {0.13f, 0.1f, 0.13f};
    int n = fill_water(w, 0.26f, 0.2f, 0.26f, c, R);
    ENSURE(n > 0);
    pbf_tool_def t = pbf_default_tool_def();
    t.radius = R;
    t.position = c;
    ENSURE(pbf_world_set_tool(w, &t) == PBF_OK);
    double fy = 0.0, fx = 0.0, fz = 0.0;
    int m = 0;
    const int frames = test_sanitized() ? 10 : 60;
    for (int f = 0; f < frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_tool_state s = pbf_tool_get_state(w);
        ENSURE(s.min_distance > 0.0f);
        if (f >= frames / 2) fy += s.total.y, fx += s.total.x, fz += s.total.z, ++m;
    }
    double want = 1000.0 * 9.81 * 4.0 / 3.0 * PI_D * R * R * R;
    printf("  %d particles, %d frames: buoyancy %.3f N (rho0 g V = %.3f N), sideways %.3f %.3f N\n",
           n, frames, fy / m, want, fx / m, fz / m);
    ENSURE(fabs(fy / m - want) <= 0.1 * want);
    ENSURE(fabs(fx / m) < 0.05 * want && fabs(fz / m) < 0.05 * want);
    pbf_world_destroy(w);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Surface tension and adhesion */

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The 99th-percentile distance of the particle centres from their mean, over the radius of the
 * sphere of the fluid's volume (tests/test_materials.c). */
static double sphericity(const pbf_world *w) {
    int n = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n), *d = malloc(sizeof(float) * (size_t)n);
    if (!x || !d) {
        free(x);
        free(d);
        return 1e9;
    }
    pbf_world_get_positions(w, x);
    double c[3] = {0, 0, 0};
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) c[k] += x[3 * i + k] / n;
    for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int k = 0; k < 3; ++k) s += (x[3 * i + k] - c[k]) * (x[3 * i + k] - c[k]);
        d[i] = (float)sqrt(s);
    }
    qsort(d, (size_t)n, sizeof *d, cmp_float);
    double volume = n * (double)pbf_world_particle_mass(w) / pbf_world_get_def(w)->rest_density;
    double radius = cbrt(volume * 3.0 / (4.0 * PI_D));
    double p99 = d[(int)(0.99 * (n - 1))];
    free(x);
    free(d);
    return p99 / radius;
}

/* tests/test_materials.c's droplet with the Wendland pair: a cube of 10³ particles (r = 2 mm) in
 * zero gravity becomes round with σ = 0.0728 N/m (p99 distance / R of the equal-volume sphere
 * within 0.85..1.08) and stays a cube without (>= 1.15). */
static int droplet_becomes_sphere(void) {
    double ratio[2];
    const int frames = test_sanitized() ? 10 : 60;
    for (int k = 0; k < 2; ++k) {
        pbf_world_def def = wendland_def();
        const float r = 0.002f, side = 2.0f * r * 10.0f, room = 2.0f * side;
        def.particle_radius = r;
        def.gravity = (pbf_vec3){0.0f, 0.0f, 0.0f};
        def.domain_max = (pbf_vec3){room, room, room};
        def.material.surface_tension = k ? 0.0728f : 0.0f;
        def.threads = 1;
        pbf_world *w = make_world(&def);
        ENSURE(w != NULL);
        pbf_block_def b = pbf_default_block_def();
        float lo = 0.5f * (room - side);
        b.min = (pbf_vec3){lo, lo, lo};
        b.max = (pbf_vec3){lo + side, lo + side, lo + side};
        ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
        for (int f = 0; f < frames; ++f) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        ratio[k] = sphericity(w);
        pbf_world_destroy(w);
    }
    printf("  p99 distance / R after %d frames: %.4f without surface tension, %.4f with\n", frames,
           ratio[0], ratio[1]);
    ENSURE(ratio[1] <= 1.08);
    ENSURE(ratio[1] >= 0.85);
    ENSURE(ratio[0] >= 1.15);
    return 0;
}

/* tests/test_materials.c's footprint with the Wendland pair: a drop of 16³ particles (r = 2 mm)
 * on the floor in weak gravity with σ and a work of adhesion W with the walls or with a box
 * plate under it; the radius of its footprint (the lowest layer's largest distance from the
 * centroid), or −1. */
static double footprint(float adhesion, int plate, int frames) {
    const float r = 0.002f;
    pbf_world_def def = wendland_def();
    def.particle_radius = r;
    def.gravity = (pbf_vec3){0.0f, -0.5f, 0.0f};
    def.domain_max = (pbf_vec3){0.12f, 0.06f, 0.12f};
    def.material.surface_tension = 0.0728f;
    def.wall_adhesion = plate ? 0.0f : adhesion;
    def.threads = 1;
    pbf_world *w = make_world(&def);
    if (w == NULL) return -1.0;
    float floor_y = 0.0f;
    if (plate) {
        pbf_collider_def c = pbf_default_collider_def();
        c.type = PBF_COLLIDER_BOX;
        c.center = (pbf_vec3){0.06f, 0.005f, 0.06f};
        c.half_extents = (pbf_vec3){0.05f, 0.005f, 0.05f};
        c.adhesion = adhesion;
        if (pbf_world_add_collider(w, &c) != PBF_OK) {
            fprintf(stderr, "plate: %s\n", pbf_world_error(w));
            return -1.0;
        }
        floor_y = 0.01f;
    }
    pbf_block_def b = pbf_default_block_def();
    b.min = (pbf_vec3){0.044f, floor_y, 0.044f};
    b.max = (pbf_vec3){0.076f, floor_y + 0.032f, 0.076f};
    if (pbf_world_add_block(w, &b) != PBF_OK) return -1.0;
    for (int f = 0; f < frames; ++f)
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) return -1.0;
    int n = pbf_world_particle_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n);
    if (!x) return -1.0;
    pbf_world_get_positions(w, x);
    double cx = 0.0, cz = 0.0, reach = 0.0;
    for (int i = 0; i < n; ++i) cx += x[3 * i] / n, cz += x[3 * i + 2] / n;
    for (int i = 0; i < n; ++i) {
        if (x[3 * i + 1] > floor_y + 3.0f * r) continue;
        double ex = x[3 * i] - cx, ez = x[3 * i + 2] - cz, d = sqrt(ex * ex + ez * ez);
        if (d > reach) reach = d;
    }
    free(x);
    pbf_world_destroy(w);
    return reach;
}

/* The more the floor adheres (W = 0, σ, 2σ), the wider the drop spreads, on the domain's floor
 * and on a plate: by more than half a particle radius each step. */
static int drop_spreads_with_adhesion(void) {
    const float wk[3] = {0.0f, 0.0728f, 0.1456f};
    const int frames = test_sanitized() ? 10 : 90;
    for (int plate = 0; plate < 2; ++plate) {
        double reach[3];
        for (int k = 0; k < 3; ++k) {
            reach[k] = footprint(wk[k], plate, frames);
            ENSURE(reach[k] > 0.0);
        }
        printf("  footprint radius on the %s, W = 0, σ, 2σ: %.1f, %.1f, %.1f mm\n",
               plate ? "plate" : "floor", 1e3 * reach[0], 1e3 * reach[1], 1e3 * reach[2]);
        ENSURE(reach[1] > reach[0] + 0.001);
        ENSURE(reach[2] > reach[1] + 0.001);
    }
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(shell_sums_match_quadrature);
RUN_TEST(held_sphere_feels_buoyancy);
RUN_TEST(droplet_becomes_sphere);
RUN_TEST(drop_spreads_with_adhesion);
TEST_MAIN_END
