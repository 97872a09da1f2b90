/* The features with the Wendland C2 pair (docs/physics.md, "The Wendland C2 pair"): each feature
 * test of the paper's pair run again with fluid.kernel = wendland at h = 5r, with the same
 * physical check: one copy of each case, tests/material_cases.h, serves both pairs. The tool: its
 * ghost shells against a quadrature over the shell (both pairs), and a held sphere's buoyancy
 * (tests/test_tool.c). Surface tension: a cube of water becomes round (tests/test_materials.c).
 * Adhesion: a drop spreads the wider the more the floor or a plate adheres
 * (tests/test_materials.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "material_cases.h"
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

/* tests/material_cases.h's held sphere with the Wendland pair (tests/test_tool.c), 60 frames; 10
 * under the sanitizers, as there. */
static int held_sphere_feels_buoyancy(void) {
    const pbf_world_def d = wendland_def();
    return case_held_sphere_feels_buoyancy(&d, test_sanitized() ? 10 : 60);
}

/* ---------------------------------------------------------------------------------------------
 * Surface tension and adhesion: tests/material_cases.h's cases with the Wendland pair
 * (tests/test_materials.c), with the same frames */

static int droplet_becomes_sphere(void) {
    const pbf_world_def d = wendland_def();
    return case_droplet_becomes_sphere(&d, test_sanitized() ? 10 : 60);
}

static int drop_spreads_with_adhesion(void) {
    const pbf_world_def d = wendland_def();
    return case_drop_spreads_with_adhesion(&d, test_sanitized() ? 10 : 90);
}

TEST_MAIN_BEGIN
RUN_TEST(shell_sums_match_quadrature);
RUN_TEST(held_sphere_feels_buoyancy);
RUN_TEST(droplet_becomes_sphere);
RUN_TEST(drop_spreads_with_adhesion);
TEST_MAIN_END
