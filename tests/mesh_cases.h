/* Physical cases of mesh solids and floating mesh bodies, for either kernel pair: each takes the
 * world def it starts from, so that one copy of the set-up serves the paper's pair
 * (tests/test_mesh_physics.c) and the Wendland C2 pair at h = 5r (tests/test_wendland_meshes.c,
 * docs/physics.md "The Wendland C2 pair"); each test keeps its own bounds.
 *  - case_corner_of_a_box_feels_rest_density: the density map in a mesh box's corner, on an edge
 *    and on a face, within 1 % of the rest density after one pass from the rest lattice;
 *  - case_corner_of_a_box_settles_at_rest_density: the same places once the fluid has rested
 *    (frames of 1/240 s), within 1 %;
 *  - case_column_floor_force: a resting column's load on the floor of a closed mesh box (or, for
 *    comparison, on the domain's floor);
 *  - case_floating_cube: a cube of 500 kg/m³ dropped onto water, its draft and its tilt.
 * Mesh files are written into case_mesh_dir, the test's field cache folder (mesh_files.h,
 * test_mesh_cache_dir). Needs _POSIX_C_SOURCE 200809L before any include, as mesh_files.h. */
#ifndef PBF_TEST_MESH_CASES_H
#define PBF_TEST_MESH_CASES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mesh_files.h"
#include "pbf/geometry.h"
#include "pbf/pbf.h"
#include "pbf/probes.h"
#include "test.h"

static char case_mesh_dir[256];

/* A file in case_mesh_dir (the buffer is reused by the next call). */
static inline const char *case_mesh_path(const char *name) {
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", case_mesh_dir, name);
    return buf;
}

/* Adds the mesh file `file` of case_mesh_dir as a static solid of the given role. */
static inline int case_add_mesh(pbf_world *w, const char *file, pbf_mesh_role role,
                                pbf_vec3 position) {
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", case_mesh_path(file));
    m.role = role;
    m.position = position;
    if (pbf_world_add_mesh(w, &m) != PBF_OK) {
        fprintf(stderr, "%s: %s\n", file, pbf_world_error(w));
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The density map in a corner */

/* The corner cases' world: base with zero gravity, the domain around a box of side L = 0.2 m
 * (padded by 0.1 m for the mesh, mesh = 1: cube.stl as a container; or the domain's own planes,
 * 0) and the box filled with the rest lattice. NULL on failure. */
static inline pbf_world *case_corner_world(const pbf_world_def *base, int mesh) {
    pbf_world_def d = *base;
    d.gravity = (pbf_vec3){0, 0, 0};
    const float pad = mesh ? 0.1f : 0.0f, L = 0.2f;
    d.domain_min = (pbf_vec3){-pad, -pad, -pad};
    d.domain_max = (pbf_vec3){L + pad, L + pad, L + pad};
    pbf_world *w = test_world_create(&d);
    if (w == NULL) return NULL;
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){L, L, L};
    if (pbf_world_add_block(w, &b) != PBF_OK ||
        (mesh && case_add_mesh(w, "cube.stl", PBF_MESH_CONTAINER, (pbf_vec3){0, 0, 0}) != 0)) {
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

/* The index in x (n positions) of the lattice's first particle at place q of the box of
 * case_corner_world: 0 the corner, 1 on an edge, 2 on a face, 3 inside; −1 if none. */
static inline int case_corner_particle(const float *x, int n, float r, int q) {
    const float L = 0.2f;
    const float at[4][3] = {{r, r, r},
                            {r, r, 0.5f * L + r},
                            {r, 0.5f * L + r, 0.5f * L + r},
                            {0.5f * L + r, 0.5f * L + r, 0.5f * L + r}};
    int found = -1;
    for (int i = 0; i < n; ++i)
        if (fabsf(x[3 * i] - at[q][0]) < 0.1f * r && fabsf(x[3 * i + 1] - at[q][1]) < 0.1f * r &&
            fabsf(x[3 * i + 2] - at[q][2]) < 0.1f * r)
            found = i;
    return found;
}

/* The density in the corner, on an edge, on a face and inside a box of side 0.2 m: the mesh
 * container's density map (mesh = 1, cube.stl) or the domain box's planes (0), particles on the
 * rest lattice (no gravity, one step of 1e-5 s with one density pass). pbf_world_get_densities
 * reads the densities after that pass and the collisions (the vorticity pass's), not those of
 * its λ pass on the lattice: what is left of the map's own error once one pass has corrected
 * it. With the Wendland pair at the default cell (0.75 r) the map reads +2.28 % in the corner on
 * the lattice (the planes −0.23 %); a plain pass leaves −0.40 %; a weighted one (one pass of m =
 * 1: the weight 1/μ_0 = 0.31) removes a third of it and leaves +1.43 %. A fluid left to rest is
 * case_corner_density_settled's. */
static inline int case_corner_density(const pbf_world_def *base, int mesh, float out[4]) {
    pbf_world_def d = *base;
    d.substeps = 1;
    d.solver.iterations = 1;
    pbf_world *w = case_corner_world(&d, mesh);
    ENSURE(w != NULL);
    const int n = pbf_world_particle_count(w);
    float *x = malloc((size_t)n * 3 * sizeof *x), *rho = malloc((size_t)n * sizeof *rho);
    ENSURE(x != NULL && rho != NULL);
    pbf_world_get_positions(w, x);
    ENSURE(pbf_world_step(w, 1e-5f) == PBF_OK);
    pbf_world_get_densities(w, rho);
    for (int q = 0; q < 4; ++q) {
        const int i = case_corner_particle(x, n, d.particle_radius, q);
        ENSURE(i >= 0);
        out[q] = rho[i];
        ENSURE(out[q] > 0.0f);
    }
    free(x);
    free(rho);
    pbf_world_destroy(w);
    return 0;
}

/* The same four particles (followed by id) in the same box after `frames` frames of 1/240 s in
 * zero gravity at base's substeps and passes: their densities averaged over the last `last`
 * frames, with the mesh's density map (mesh = 1, cube.stl) or the domain box's planes (0). The
 * fluid fills the box, so it cannot spread: what the map puts too much in the corners is carried
 * by the whole block (it settles a little compressed) and by the corner particles standing off
 * the walls. */
static inline int case_corner_density_settled(const pbf_world_def *base, int mesh, int frames,
                                              int last, float out[4]) {
    pbf_world *w = case_corner_world(base, mesh);
    ENSURE(w != NULL);
    const int n = pbf_world_particle_count(w);
    float *x = malloc((size_t)n * 3 * sizeof *x), *rho = malloc((size_t)n * sizeof *rho);
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    ENSURE(x != NULL && rho != NULL && ids != NULL);
    pbf_world_get_positions(w, x);
    pbf_world_get_ids(w, ids);
    int32_t id[4];
    for (int q = 0; q < 4; ++q) {
        const int i = case_corner_particle(x, n, base->particle_radius, q);
        ENSURE(i >= 0);
        id[q] = ids[i];
    }
    double sum[4] = {0.0, 0.0, 0.0, 0.0};
    for (int f = 0; f < frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 240.0f) == PBF_OK);
        if (f < frames - last) continue;
        pbf_world_get_densities(w, rho);
        pbf_world_get_ids(w, ids);
        for (int q = 0; q < 4; ++q)
            for (int i = 0; i < n; ++i)
                if (ids[i] == id[q]) sum[q] += rho[i];
    }
    for (int q = 0; q < 4; ++q) out[q] = (float)(sum[q] / last);
    free(x);
    free(rho);
    free(ids);
    pbf_world_destroy(w);
    return 0;
}

/* In the corner, on an edge and on a face of a mesh box (an ASCII STL) the fluid at rest has its
 * rest density, within 1 %; the domain box's planes are printed beside it. */
static inline int case_corner_of_a_box_feels_rest_density(const pbf_world_def *base) {
    const float lo[3] = {0, 0, 0}, hi[3] = {0.2f, 0.2f, 0.2f};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_stl_ascii(case_mesh_path("cube.stl"), &box) == 0);
    test_mesh_free(&box);
    float planes[4], map[4];
    ENSURE(case_corner_density(base, 0, planes) == 0);
    ENSURE(case_corner_density(base, 1, map) == 0);
    const char *names[4] = {"corner", "edge", "face", "inside"};
    for (int q = 0; q < 4; ++q)
        printf("  %-6s  domain planes %7.2f kg/m^3 (%+.2f %%), mesh density map %7.2f (%+.2f %%)\n",
               names[q], (double)planes[q], 100.0 * (planes[q] / 1000.0 - 1.0), (double)map[q],
               100.0 * (map[q] / 1000.0 - 1.0));
    for (int q = 0; q < 4; ++q) ENSURE(fabs(map[q] / 1000.0 - 1.0) < 0.01);
    return 0;
}

/* In the corner, on an edge, on a face and inside a mesh box the fluid left to rest has its rest
 * density within 1 % (averaged over the last `last` of `frames` frames); the domain box's planes
 * are printed beside it. */
static inline int case_corner_of_a_box_settles_at_rest_density(const pbf_world_def *base,
                                                               int frames, int last) {
    const float lo[3] = {0, 0, 0}, hi[3] = {0.2f, 0.2f, 0.2f};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_stl_ascii(case_mesh_path("cube.stl"), &box) == 0);
    test_mesh_free(&box);
    float planes[4], map[4];
    ENSURE(case_corner_density_settled(base, 0, frames, last, planes) == 0);
    ENSURE(case_corner_density_settled(base, 1, frames, last, map) == 0);
    const char *names[4] = {"corner", "edge", "face", "inside"};
    printf("  after %d frames, the mean of the last %d:\n", frames, last);
    for (int q = 0; q < 4; ++q)
        printf("  %-6s  domain planes %7.2f kg/m^3 (%+.2f %%), mesh density map %7.2f (%+.2f %%)\n",
               names[q], (double)planes[q], 100.0 * (planes[q] / 1000.0 - 1.0), (double)map[q],
               100.0 * (map[q] / 1000.0 - 1.0));
    for (int q = 0; q < 4; ++q) ENSURE(fabs(map[q] / 1000.0 - 1.0) < 0.01);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * A resting column */

#define CASE_COLUMN_WIDTH 0.2f
#define CASE_COLUMN_HEIGHT 0.6f
#define CASE_COLUMN_FILL 0.4f

/* Writes tank.stl: the closed box (a binary STL) of case_column_floor_force. */
static inline int case_write_tank(void) {
    const float lo[3] = {0, 0, 0},
                hi[3] = {CASE_COLUMN_WIDTH, CASE_COLUMN_HEIGHT, CASE_COLUMN_WIDTH};
    test_mesh box = test_mesh_box(lo, hi);
    int rc = test_mesh_write_stl_binary(case_mesh_path("tank.stl"), &box);
    test_mesh_free(&box);
    return rc;
}

/* A column 0.2 x 0.4 x 0.2 m at rest (one thread): its mean downward force over the last `last`
 * of `frames` frames on the floor of the closed mesh box tank.stl (mesh = 1; in a domain 10 cm
 * larger on every side, its walls out of reach) or on the domain's floor (0: a force probe).
 * *count and *mass get the particle count and the particle mass. No particle leaves the tank. */
static inline int case_column_floor_force(const pbf_world_def *base, int mesh, int frames, int last,
                                          double *floor, int *count, double *mass) {
    pbf_world_def d = *base;
    const float pad = mesh ? 0.1f : 0.0f;
    d.domain_min = (pbf_vec3){-pad, -pad, -pad};
    d.domain_max =
        (pbf_vec3){CASE_COLUMN_WIDTH + pad, CASE_COLUMN_HEIGHT + pad, CASE_COLUMN_WIDTH + pad};
    pbf_world *w = test_world_create(&d);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){CASE_COLUMN_WIDTH, CASE_COLUMN_FILL, CASE_COLUMN_WIDTH};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    if (mesh) {
        ENSURE(case_add_mesh(w, "tank.stl", PBF_MESH_CONTAINER, (pbf_vec3){0, 0, 0}) == 0);
    } else {
        pbf_probe_def p = pbf_default_probe_def();
        p.type = PBF_PROBE_FORCE;
        p.position = (pbf_vec3){0.5f * CASE_COLUMN_WIDTH, 0.0f, 0.5f * CASE_COLUMN_WIDTH};
        p.direction = PBF_DIR_Y_POS;
        p.size = (pbf_vec3){CASE_COLUMN_WIDTH, 0.0f, CASE_COLUMN_WIDTH};
        ENSURE(pbf_world_set_probes(w, &p, 1) == PBF_OK);
    }
    *floor = 0.0;
    for (int f = 0; f < frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        if (f < frames - last) continue;
        if (mesh) {
            *floor += -pbf_world_mesh_state(w, 0).force.y / last;
        } else {
            pbf_probe_sample s;
            ENSURE(pbf_world_sample_probes(w, &s) == PBF_OK);
            *floor += s.value / last;
        }
    }
    *count = pbf_world_particle_count(w);
    *mass = pbf_world_particle_mass(w);
    float *x = malloc((size_t)*count * 3 * sizeof *x);
    ENSURE(x != NULL);
    pbf_world_get_positions(w, x);
    for (int i = 0; i < *count; ++i)
        ENSURE(x[3 * i] > 0.0f && x[3 * i] < CASE_COLUMN_WIDTH && x[3 * i + 1] > 0.0f &&
               x[3 * i + 2] > 0.0f && x[3 * i + 2] < CASE_COLUMN_WIDTH);
    free(x);
    pbf_world_destroy(w);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * A floating cube */

/* A cube of side 0.1 m and 500 kg/m³ (0.5 kg) dropped onto water 0.14 m deep in a tank 0.3 m wide:
 * over the last `last` of `frames` frames *draft gets its mean draft, level − (centre − side/2),
 * over half its side (1 for half submerged, Archimedes), and *tilt its mean turn about a horizontal
 * axis in degrees. The water level is the one its volume gives with half the cube under it. */
static inline int case_floating_cube(const pbf_world_def *base, int frames, int last, double *draft,
                                     double *tilt) {
    const float side = 0.1f, L = 0.3f, depth = 0.14f;
    const float lo[3] = {-0.5f * side, -0.5f * side, -0.5f * side},
                hi[3] = {0.5f * side, 0.5f * side, 0.5f * side};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_obj(case_mesh_path("cube.obj"), &box) == 0);
    test_mesh_free(&box);
    pbf_world_def d = *base;
    d.domain_max = (pbf_vec3){L, 0.35f, L};
    pbf_world *w = test_world_create(&d);
    ENSURE(w != NULL);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){L, depth, L};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", case_mesh_path("cube.obj"));
    m.motion = PBF_MESH_FLOATING;
    m.density = 500.0f;
    m.position = (pbf_vec3){0.5f * L, depth + 0.5f * side + 0.01f, 0.5f * L};
    if (pbf_world_add_mesh(w, &m) != PBF_OK) {
        fprintf(stderr, "cube: %s\n", pbf_world_error(w));
        return 1;
    }
    ENSURE_NEAR(pbf_world_mesh_info(w, 0).mass, 0.5, 1e-4);
    double y = 0.0;
    *tilt = 0.0;
    for (int f = 0; f < frames; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        if (f < frames - last) continue;
        pbf_mesh_solid_state s = pbf_world_mesh_state(w, 0);
        y += s.position.y / last;
        float qx = s.orientation[1], qz = s.orientation[3];
        *tilt += 2.0 * asin(fmin(sqrt(qx * qx + qz * qz), 1.0)) * 180.0 / 3.14159265 / last;
    }
    const int n = pbf_world_particle_count(w);
    const double water = n * 8.0 * 0.01 * 0.01 * 0.01; /* the rest lattice's volume */
    const double draft_want = 0.5 * side;
    const double level = (water + draft_want * side * side) / (L * L);
    const double got = level - (y - 0.5 * side);
    *draft = got / draft_want;
    printf("  %d particles: cube centre %.4f m, water level %.4f m: draft %.4f m (half the side "
           "%.4f m, %+.1f %%), tilted %.1f deg\n",
           n, y, level, got, draft_want, 100.0 * (*draft - 1.0), *tilt);
    pbf_world_destroy(w);
    return 0;
}

#endif
