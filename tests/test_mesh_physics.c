/* Mesh solids against the analytic ones (docs/physics.md "Mesh solids"):
 *  - a resting column in a closed mesh box (a container) loads its floor as the same column in
 *    the domain's box loads the domain's floor: within 0.5 %;
 *  - a held mesh sphere (an icosphere of 20480 triangles) feels the buoyancy of the analytic
 *    sphere (the tool, held): within 2 %;
 *  - a plate thinner than two particle radii holds water: none passes it;
 *  - in the corner, on an edge and on a face of a mesh box the fluid at rest has its rest
 *    density (the density map), within 1 %.
 * The column, the corner and the floating cube are tests/mesh_cases.h's, which
 * tests/test_wendland_meshes.c runs with the Wendland pair. Mesh files are written by the test;
 * the field cache is a temporary folder. About a minute in all: labelled "slow" (not run again under the sanitizers). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "material_cases.h"
#include "mesh_cases.h"
#include "mesh_files.h"
#include "pbf/geometry.h"
#include "pbf/probes.h"
#include "test.h"

static pbf_world_def paper_def(void) {
    pbf_world_def d = pbf_default_world_def();
    d.threads = 1;
    return d;
}

#define FRAMES 150
#define LAST 60

/* The column in the domain's box and in the mesh box tank.stl (tests/mesh_cases.h), the mean
 * over the last LAST of FRAMES frames. */
static int mesh_box_floor_as_analytic(void) {
    ENSURE(case_write_tank() == 0);
    const pbf_world_def d = paper_def();
    double analytic, mesh, mass;
    int n1, n2;
    ENSURE(case_column_floor_force(&d, 0, FRAMES, LAST, &analytic, &n1, &mass) == 0);
    ENSURE(case_column_floor_force(&d, 1, FRAMES, LAST, &mesh, &n2, &mass) == 0);
    ENSURE(n1 == n2);
    const double weight = 1000.0 * 9.81 * CASE_COLUMN_WIDTH * CASE_COLUMN_FILL * CASE_COLUMN_WIDTH;
    printf("  %d particles: floor %.4f N in the domain's box, %.4f N in the mesh box (%+.3f %%); "
           "weight at rest density %.4f N\n",
           n1, analytic, mesh, 100.0 * (mesh / analytic - 1.0), weight);
    ENSURE(fabs(mesh / analytic - 1.0) < 0.005);
    return 0;
}

/* The held sphere's mean upward force over the second half of 90 frames. */
static int held_sphere_force(int mesh, double *fy, double *fx) {
    pbf_world_def d = pbf_default_world_def();
    d.domain_max = (pbf_vec3){0.26f, 0.3f, 0.26f};
    d.solver.scorr_k = 0.0f;
    d.threads = 1;
    pbf_world *w = test_world_create(&d);
    ENSURE(w != NULL);
    const float R = 0.05f;
    const pbf_vec3 c = {0.13f, 0.1f, 0.13f};
    ENSURE(case_fill_water(w, 0.26f, 0.2f, 0.26f, c, R) > 0);
    if (mesh) {
        ENSURE(case_add_mesh(w, "sphere.ply", PBF_MESH_OBSTACLE, c) == 0);
    } else {
        pbf_tool_def t = pbf_default_tool_def();
        t.radius = R;
        t.position = c;
        ENSURE(pbf_world_set_tool(w, &t) == PBF_OK);
    }
    *fy = *fx = 0.0;
    int m = 0;
    for (int f = 0; f < 90; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        if (f < 45) continue;
        pbf_vec3 F = mesh ? pbf_world_mesh_state(w, 0).force : pbf_tool_get_state(w).total;
        *fy += F.y, *fx += F.x, ++m;
    }
    *fy /= m, *fx /= m;
    pbf_world_destroy(w);
    return 0;
}

static int mesh_sphere_buoyancy_as_analytic(void) {
    const float origin[3] = {0, 0, 0};
    test_mesh s = test_mesh_sphere(origin, 0.05f, 5);
    ENSURE(test_mesh_write_ply(case_mesh_path("sphere.ply"), &s) == 0);
    test_mesh_free(&s);
    double analytic, mesh, ax, mx;
    ENSURE(held_sphere_force(0, &analytic, &ax) == 0);
    ENSURE(held_sphere_force(1, &mesh, &mx) == 0);
    const double want = 1000.0 * 9.81 * 4.0 / 3.0 * 3.14159265358979 * 0.05 * 0.05 * 0.05;
    printf("  buoyancy: analytic sphere %.3f N, mesh sphere %.3f N (%+.2f %%), rho0 g V %.3f N; "
           "sideways %.3f, %.3f N\n",
           analytic, mesh, 100.0 * (mesh / analytic - 1.0), want, ax, mx);
    ENSURE(fabs(mesh / analytic - 1.0) < 0.02);
    ENSURE(fabs(mx) < 0.05 * want);
    return 0;
}

/* A plate 6 mm thick (less than 2r = 2 cm) across a tank, hit by a dam break:
 * no particle gets to the other side. */
static int thin_plate_holds_water(void) {
    const float lo[3] = {-0.003f, -0.01f, -0.01f}, hi[3] = {0.003f, 0.31f, 0.11f};
    test_mesh plate = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_obj(case_mesh_path("plate.obj"), &plate) == 0);
    test_mesh_free(&plate);
    pbf_world_def d = pbf_default_world_def();
    d.threads = 1;
    d.domain_max = (pbf_vec3){0.5f, 0.3f, 0.1f};
    pbf_world *w = test_world_create(&d);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.16f, 0.28f, 0.1f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    const float wall = 0.3f;
    ENSURE(case_add_mesh(w, "plate.obj", PBF_MESH_OBSTACLE, (pbf_vec3){wall, 0.0f, 0.0f}) == 0);
    const int n = pbf_world_particle_count(w);
    float *x = malloc((size_t)n * 3 * sizeof *x), *v = malloc((size_t)n * 3 * sizeof *v);
    ENSURE(x != NULL && v != NULL);
    float nearest = 1e30f, fastest = 0.0f;
    for (int f = 0; f < 90; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_world_get_positions(w, x);
        pbf_world_get_velocities(w, v);
        for (int i = 0; i < n; ++i) {
            if (!(x[3 * i] < wall)) {
                fprintf(stderr, "  frame %d: particle %d at x = %g, beyond the plate at %g\n", f, i,
                        (double)x[3 * i], (double)wall);
                return 1;
            }
            float gap = wall - 0.003f - x[3 * i];
            nearest = gap < nearest ? gap : nearest;
            if (v[3 * i] > fastest) fastest = v[3 * i];
        }
    }
    printf("  %d particles against a 6 mm plate (r = 1 cm), up to %.2f m/s: none passed; the "
           "closest %.4f m from its face\n",
           n, (double)fastest, (double)nearest);
    ENSURE(fastest > 1.0f); /* it was hit */
    free(x);
    free(v);
    pbf_world_destroy(w);
    return 0;
}

/* tests/mesh_cases.h's corner, edge and face with the paper's pair. */
static int corner_of_a_box_feels_rest_density(void) {
    const pbf_world_def d = paper_def();
    return case_corner_of_a_box_feels_rest_density(&d);
}

/* Archimedes for a floating mesh (tests/mesh_cases.h): a cube of 500 kg/m³ dropped onto water
 * settles half submerged, its centre at the water level (from the volumes): the "draft" level −
 * (centre − side/2) is half its side within 5 %, over the last 30 of 150 frames. A cube of half
 * the water's density is unstable upright (a homogeneous cube floats upright only below 0.21 or
 * above 0.79 of it): it rolls onto an edge, turned 45° about a horizontal axis, which is checked
 * too (within 10°). */
static int floating_cube_draft(void) {
    const pbf_world_def d = paper_def();
    double draft, tilt;
    ENSURE(case_floating_cube(&d, 150, 30, &draft, &tilt) == 0);
    ENSURE(fabs(draft - 1.0) < 0.05);
    ENSURE(fabs(tilt - 45.0) < 10.0);
    return 0;
}

/* A long box (16 x 5 x 5 cm, 500 kg/m³) put into the water on its narrow end, tipped by 5°,
 * rolls over to its stable orientation: lying, its long axis within 20° of horizontal. */
static int long_box_rolls_over(void) {
    const float lo[3] = {-0.025f, -0.08f, -0.025f}, hi[3] = {0.025f, 0.08f, 0.025f};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_obj(case_mesh_path("long.obj"), &box) == 0);
    test_mesh_free(&box);
    pbf_world_def d = pbf_default_world_def();
    d.threads = 1;
    d.domain_max = (pbf_vec3){0.4f, 0.4f, 0.3f};
    pbf_world *w = test_world_create(&d);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.4f, 0.16f, 0.3f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", case_mesh_path("long.obj"));
    m.motion = PBF_MESH_FLOATING;
    m.density = 500.0f;
    m.position = (pbf_vec3){0.2f, 0.16f + 0.085f, 0.15f};
    m.rotation = (pbf_vec3){0.0f, 0.0f, 5.0f};
    if (pbf_world_add_mesh(w, &m) != PBF_OK) {
        fprintf(stderr, "long box: %s\n", pbf_world_error(w));
        return 1;
    }
    double up = 0.0;
    for (int f = 0; f < 150; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        float T[12];
        pbf_world_mesh_transform(w, 0, T);
        up = fabs(T[5]); /* the long (local y) axis' vertical component: R[1][1] */
    }
    double angle = acos(fmin(up, 1.0)) * 180.0 / 3.14159265;
    printf("  after 2.5 s its long axis is %.1f deg from vertical\n", angle);
    ENSURE(angle > 70.0);
    pbf_world_destroy(w);
    return 0;
}

TEST_MAIN_BEGIN
if (!pbf_mesh_import_available()) {
    printf("mesh import not built (PBF_MESH=OFF): skipped\n");
    return 77;
}
if (test_mesh_cache_dir(case_mesh_dir, sizeof case_mesh_dir, "test_mesh_physics") != 0) return 1;
RUN_TEST(mesh_box_floor_as_analytic);
RUN_TEST(mesh_sphere_buoyancy_as_analytic);
RUN_TEST(thin_plate_holds_water);
RUN_TEST(corner_of_a_box_feels_rest_density);
RUN_TEST(floating_cube_draft);
RUN_TEST(long_box_rolls_over);
test_mesh_remove_dir(case_mesh_dir);
TEST_MAIN_END
