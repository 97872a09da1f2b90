/* Mesh solids against the analytic ones (docs/physics.md "Mesh solids"):
 *  - a resting column in a closed mesh box (a container) loads its floor as the same column in
 *    the domain's box loads the domain's floor: within 0.5 %;
 *  - a held mesh sphere (an icosphere of 20480 triangles) feels the buoyancy of the analytic
 *    sphere (the tool, held): within 2 %;
 *  - a plate thinner than two particle radii holds water: none passes it;
 *  - in the corner, on an edge and on a face of a mesh box the fluid at rest has its rest
 *    density (the density map), within 1 %.
 * Mesh files are written by the test; the field cache is a temporary folder. About a minute
 * in all: labelled "slow" (not run again under the sanitizers). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_files.h"
#include "pbf/geometry.h"
#include "pbf/probes.h"
#include "test.h"

static char dir[256];

static const char *path_of(const char *name) {
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
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

static int add_mesh(pbf_world *w, const char *file, pbf_mesh_role role, pbf_vec3 position) {
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", path_of(file));
    m.role = role;
    m.position = position;
    if (pbf_world_add_mesh(w, &m) != PBF_OK) {
        fprintf(stderr, "%s: %s\n", file, pbf_world_error(w));
        return 1;
    }
    return 0;
}

#define WIDTH 0.2f
#define HEIGHT 0.6f
#define FILL 0.4f
#define FRAMES 150
#define LAST 60

/* The mean floor force over the last LAST of FRAMES frames: the domain's floor (a force probe)
 * or, with a mesh, the mesh's downward force. */
static int column_floor_force(int mesh, double *floor, int *count) {
    pbf_world_def d = pbf_default_world_def();
    d.threads = 1;
    /* the mesh box in a domain 10 cm larger on every side: the domain's walls out of reach */
    const float pad = mesh ? 0.1f : 0.0f;
    d.domain_min = (pbf_vec3){-pad, -pad, -pad};
    d.domain_max = (pbf_vec3){WIDTH + pad, HEIGHT + pad, WIDTH + pad};
    pbf_world *w = make_world(&d);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){WIDTH, FILL, WIDTH};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    if (mesh) {
        ENSURE(add_mesh(w, "tank.stl", PBF_MESH_CONTAINER, (pbf_vec3){0, 0, 0}) == 0);
    } else {
        pbf_probe_def p = pbf_default_probe_def();
        p.type = PBF_PROBE_FORCE;
        p.position = (pbf_vec3){0.5f * WIDTH, 0.0f, 0.5f * WIDTH};
        p.direction = PBF_DIR_Y_POS;
        p.size = (pbf_vec3){WIDTH, 0.0f, WIDTH};
        ENSURE(pbf_world_set_probes(w, &p, 1) == PBF_OK);
    }
    *floor = 0.0;
    for (int f = 0; f < FRAMES; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        if (f < FRAMES - LAST) continue;
        if (mesh) {
            *floor += -pbf_world_mesh_state(w, 0).force.y / LAST;
        } else {
            pbf_probe_sample s;
            ENSURE(pbf_world_sample_probes(w, &s) == PBF_OK);
            *floor += s.value / LAST;
        }
    }
    *count = pbf_world_particle_count(w);
    /* no particle left the tank */
    float *x = malloc((size_t)*count * 3 * sizeof *x);
    ENSURE(x != NULL);
    pbf_world_get_positions(w, x);
    for (int i = 0; i < *count; ++i) {
        ENSURE(x[3 * i] > 0.0f && x[3 * i] < WIDTH && x[3 * i + 1] > 0.0f && x[3 * i + 2] > 0.0f &&
               x[3 * i + 2] < WIDTH);
    }
    free(x);
    pbf_world_destroy(w);
    return 0;
}

static int mesh_box_floor_as_analytic(void) {
    const float lo[3] = {0, 0, 0}, hi[3] = {WIDTH, HEIGHT, WIDTH};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_stl_binary(path_of("tank.stl"), &box) == 0);
    test_mesh_free(&box);
    double analytic, mesh;
    int n1, n2;
    ENSURE(column_floor_force(0, &analytic, &n1) == 0);
    ENSURE(column_floor_force(1, &mesh, &n2) == 0);
    ENSURE(n1 == n2);
    const double weight = 1000.0 * 9.81 * WIDTH * FILL * WIDTH;
    printf("  %d particles: floor %.4f N in the domain's box, %.4f N in the mesh box (%+.3f %%); "
           "weight at rest density %.4f N\n",
           n1, analytic, mesh, 100.0 * (mesh / analytic - 1.0), weight);
    ENSURE(fabs(mesh / analytic - 1.0) < 0.005);
    return 0;
}

/* Fills [0, lx] x [0, depth] x [0, lz] with water on the rest lattice, leaving out the lattice
 * points within R + r of c. */
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

/* The held sphere's mean upward force over the second half of 90 frames. */
static int held_sphere_force(int mesh, double *fy, double *fx) {
    pbf_world_def d = pbf_default_world_def();
    d.domain_max = (pbf_vec3){0.26f, 0.3f, 0.26f};
    d.solver.scorr_k = 0.0f;
    d.threads = 1;
    pbf_world *w = make_world(&d);
    ENSURE(w != NULL);
    const float R = 0.05f;
    const pbf_vec3 c = {0.13f, 0.1f, 0.13f};
    ENSURE(fill_water(w, 0.26f, 0.2f, 0.26f, c, R) > 0);
    if (mesh) {
        ENSURE(add_mesh(w, "sphere.ply", PBF_MESH_OBSTACLE, c) == 0);
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
    ENSURE(test_mesh_write_ply(path_of("sphere.ply"), &s) == 0);
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
    ENSURE(test_mesh_write_obj(path_of("plate.obj"), &plate) == 0);
    test_mesh_free(&plate);
    pbf_world_def d = pbf_default_world_def();
    d.threads = 1;
    d.domain_max = (pbf_vec3){0.5f, 0.3f, 0.1f};
    pbf_world *w = make_world(&d);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.16f, 0.28f, 0.1f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    const float wall = 0.3f;
    ENSURE(add_mesh(w, "plate.obj", PBF_MESH_OBSTACLE, (pbf_vec3){wall, 0.0f, 0.0f}) == 0);
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

/* The density at rest in the corner, on an edge and on a face of a box: the mesh container's
 * density map against the domain box's planes, particles on the rest lattice (no gravity, one
 * short step; the densities of its first λ pass). */
static int corner_density(int mesh, float out[4]) {
    pbf_world_def d = pbf_default_world_def();
    d.threads = 1;
    d.gravity = (pbf_vec3){0, 0, 0};
    d.substeps = 1;
    d.solver.iterations = 1;
    const float pad = mesh ? 0.1f : 0.0f, L = 0.2f, r = d.particle_radius;
    d.domain_min = (pbf_vec3){-pad, -pad, -pad};
    d.domain_max = (pbf_vec3){L + pad, L + pad, L + pad};
    pbf_world *w = make_world(&d);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){L, L, L};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    if (mesh) ENSURE(add_mesh(w, "cube.stl", PBF_MESH_CONTAINER, (pbf_vec3){0, 0, 0}) == 0);
    const int n = pbf_world_particle_count(w);
    float *x = malloc((size_t)n * 3 * sizeof *x), *rho = malloc((size_t)n * sizeof *rho);
    ENSURE(x != NULL && rho != NULL);
    pbf_world_get_positions(w, x);
    ENSURE(pbf_world_step(w, 1e-5f) == PBF_OK);
    pbf_world_get_densities(w, rho);
    /* the first particle of the lattice at the corner, on an edge, on a face and inside */
    const float at[4][3] = {{r, r, r},
                            {r, r, 0.5f * L + r},
                            {r, 0.5f * L + r, 0.5f * L + r},
                            {0.5f * L + r, 0.5f * L + r, 0.5f * L + r}};
    for (int q = 0; q < 4; ++q) {
        out[q] = -1.0f;
        for (int i = 0; i < n; ++i)
            if (fabsf(x[3 * i] - at[q][0]) < 0.1f * r &&
                fabsf(x[3 * i + 1] - at[q][1]) < 0.1f * r &&
                fabsf(x[3 * i + 2] - at[q][2]) < 0.1f * r)
                out[q] = rho[i];
        ENSURE(out[q] > 0.0f);
    }
    free(x);
    free(rho);
    pbf_world_destroy(w);
    return 0;
}

static int corner_of_a_box_feels_rest_density(void) {
    const float lo[3] = {0, 0, 0}, hi[3] = {0.2f, 0.2f, 0.2f};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_stl_ascii(path_of("cube.stl"), &box) == 0);
    test_mesh_free(&box);
    float planes[4], map[4];
    ENSURE(corner_density(0, planes) == 0);
    ENSURE(corner_density(1, map) == 0);
    const char *names[4] = {"corner", "edge", "face", "inside"};
    for (int q = 0; q < 4; ++q)
        printf("  %-6s  domain planes %7.2f kg/m^3 (%+.2f %%), mesh density map %7.2f (%+.2f %%)\n",
               names[q], (double)planes[q], 100.0 * (planes[q] / 1000.0 - 1.0), (double)map[q],
               100.0 * (map[q] / 1000.0 - 1.0));
    for (int q = 0; q < 4; ++q) ENSURE(fabs(map[q] / 1000.0 - 1.0) < 0.01);
    return 0;
}

/* Archimedes for a floating mesh: a cube of 500 kg/m³ dropped onto water settles half
 * submerged, its centre at the water level (from the volumes): the "draft" level − (centre −
 * side/2) is half its side within 5 %. A cube of half the water's density is unstable upright
 * (a homogeneous cube floats upright only below 0.21 or above 0.79 of it): it rolls onto an
 * edge, turned 45° about a horizontal axis, which is checked too (within 10°). */
static int floating_cube_draft(void) {
    const float side = 0.1f, L = 0.3f, depth = 0.14f;
    const float lo[3] = {-0.5f * side, -0.5f * side, -0.5f * side},
                hi[3] = {0.5f * side, 0.5f * side, 0.5f * side};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_obj(path_of("cube.obj"), &box) == 0);
    test_mesh_free(&box);
    pbf_world_def d = pbf_default_world_def();
    d.threads = 1;
    d.domain_max = (pbf_vec3){L, 0.35f, L};
    pbf_world *w = make_world(&d);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){L, depth, L};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", path_of("cube.obj"));
    m.motion = PBF_MESH_FLOATING;
    m.density = 500.0f;
    m.position = (pbf_vec3){0.5f * L, depth + 0.5f * side + 0.01f, 0.5f * L};
    if (pbf_world_add_mesh(w, &m) != PBF_OK) {
        fprintf(stderr, "cube: %s\n", pbf_world_error(w));
        return 1;
    }
    ENSURE_NEAR(pbf_world_mesh_info(w, 0).mass, 0.5, 1e-4);
    double y = 0.0, tilt = 0.0;
    const int frames = 150, last = 30;
    for (int f = 0; f < frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        if (f < frames - last) continue;
        pbf_mesh_solid_state s = pbf_world_mesh_state(w, 0);
        y += s.position.y / last;
        float qx = s.orientation[1], qz = s.orientation[3];
        tilt += 2.0 * asin(fmin(sqrt(qx * qx + qz * qz), 1.0)) * 180.0 / 3.14159265 / last;
    }
    const int n = pbf_world_particle_count(w);
    const double water = n * 8.0 * 0.01 * 0.01 * 0.01; /* the rest lattice's volume */
    const double draft_want = 0.5 * side;
    const double level = (water + draft_want * side * side) / (L * L);
    const double draft = level - (y - 0.5 * side);
    printf("  %d particles: cube centre %.4f m, water level %.4f m: draft %.4f m (half the side "
           "%.4f m, %+.1f %%), tilted %.1f deg\n",
           n, y, level, draft, draft_want, 100.0 * (draft / draft_want - 1.0), tilt);
    ENSURE(fabs(draft / draft_want - 1.0) < 0.05);
    ENSURE(fabs(tilt - 45.0) < 10.0);
    pbf_world_destroy(w);
    return 0;
}

/* A long box (16 x 5 x 5 cm, 500 kg/m³) put into the water on its narrow end, tipped by 5°,
 * rolls over to its stable orientation: lying, its long axis within 20° of horizontal. */
static int long_box_rolls_over(void) {
    const float lo[3] = {-0.025f, -0.08f, -0.025f}, hi[3] = {0.025f, 0.08f, 0.025f};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_obj(path_of("long.obj"), &box) == 0);
    test_mesh_free(&box);
    pbf_world_def d = pbf_default_world_def();
    d.threads = 1;
    d.domain_max = (pbf_vec3){0.4f, 0.4f, 0.3f};
    pbf_world *w = make_world(&d);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.4f, 0.16f, 0.3f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", path_of("long.obj"));
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
if (test_mesh_cache_dir(dir, sizeof dir, "test_mesh_physics") != 0) return 1;
RUN_TEST(mesh_box_floor_as_analytic);
RUN_TEST(mesh_sphere_buoyancy_as_analytic);
RUN_TEST(thin_plate_holds_water);
RUN_TEST(corner_of_a_box_feels_rest_density);
RUN_TEST(floating_cube_draft);
RUN_TEST(long_box_rolls_over);
test_mesh_remove_dir(dir);
TEST_MAIN_END
