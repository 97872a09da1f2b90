/* Probes (include/pbf/probes.h): the scene section (defaults, round trip, errors that
 * name the file, the key and what was expected), the height and front readings on states built
 * by hand (splash is ignored), force patches (they tile a wall, they work on a box collider's
 * face) and determinism over thread counts. The resting column's floor force is in
 * test_hydrostatic.c. */
#include <stdlib.h>
#include <string.h>

#include "pbf/probes.h"
#include "pbf/scene.h"
#include "test.h"

/* ---- the scene section ------------------------------------------------------------------- */

static const char *const BASE =
    "{\"domain\": {\"min\": [0, 0, 0], \"max\": [1, 0.5, 0.2]},"
    " \"fluid\": {\"particle_radius\": 0.01, \"blocks\": [{\"max\": [0.2, 0.2, 0.2]}]},"
    " \"colliders\": [{\"type\": \"box\", \"center\": [0.6, 0.05, 0.1],"
    "                  \"half_extents\": [0.05, 0.05, 0.1]}],"
    " \"probes\": [%s]}";

static pbf_status parse(const char *probes, pbf_scene *s, char *err, size_t size) {
    char json[2048];
    snprintf(json, sizeof json, BASE, probes);
    return pbf_scene_parse(json, "probes.json", NULL, 0, s, err, size);
}

/* err must be the status and contain every fragment. */
static int expect_error(const char *probes, pbf_status want, const char *a, const char *b) {
    pbf_scene *s = malloc(sizeof *s);
    char err[PBF_ERROR_SIZE];
    pbf_status st = parse(probes, s, err, sizeof err);
    free(s);
    if (st != want || !strstr(err, a) || (b && !strstr(err, b)) || !strstr(err, "probes.json")) {
        fprintf(stderr, "  for %s\n  got [%d] %s\n", probes, (int)st, err);
        return 1;
    }
    printf("  %s\n", err);
    return 0;
}

static int scene_section_defaults_and_round_trip(void) {
    pbf_scene *s = malloc(sizeof *s), *back = malloc(sizeof *back);
    char err[PBF_ERROR_SIZE];
    ENSURE(parse("{\"type\": \"height\", \"position\": [0.5, 0, 0.1]},"
                 "{\"type\": \"front\", \"name\": \"front\", \"direction\": \"-x\"},"
                 "{\"type\": \"force\", \"name\": \"box\", \"position\": [0.55, 0.05, 0.1],"
                 " \"normal\": \"-x\", \"size\": [0, 0.1, 0.2]},"
                 "{\"type\": \"force\", \"name\": \"far\", \"position\": [1, 0.1, 0.1],"
                 " \"normal\": \"-x\", \"size\": [0, 0.2, 0.1]},"
                 "{\"type\": \"level\", \"position\": [0.7, 0, 0.1], \"fraction\": 0.4}",
                 s, err, sizeof err) == PBF_OK);
    ENSURE(s->probe_count == 5);
    ENSURE(strcmp(s->probes[0].name, "height0") == 0); /* the default name: type + index */
    ENSURE_NEAR(s->probes[0].radius, 0.02, 1e-7); /* 2r of the scene */
    ENSURE_NEAR(s->probes[0].max_gap, 0.04, 1e-7); /* h of the scene */
    ENSURE(s->probes[1].type == PBF_PROBE_FRONT && s->probes[1].direction == PBF_DIR_X_NEG);
    ENSURE(s->probes[2].type == PBF_PROBE_FORCE && s->probes[2].direction == PBF_DIR_X_NEG);
    ENSURE(s->probes[4].type == PBF_PROBE_LEVEL && strcmp(s->probes[4].name, "level4") == 0);
    ENSURE_NEAR(s->probes[4].fraction, 0.4, 1e-7);
    char *json = pbf_scene_to_json(s);
    ENSURE(json != NULL);
    ENSURE(pbf_scene_parse(json, "scene.json", NULL, 0, back, err, sizeof err) == PBF_OK);
    ENSURE(back->probe_count == 5);
    ENSURE(memcmp(back->probes, s->probes, sizeof s->probes) == 0);
    free(json);
    /* the world gets them */
    pbf_world *w = NULL;
    ENSURE(pbf_scene_create_world(s, &w, err, sizeof err) == PBF_OK);
    ENSURE(pbf_world_probe_count(w) == 5);
    ENSURE(strcmp(pbf_world_get_probes(w)[3].name, "far") == 0);
    pbf_world_destroy(w);
    free(s);
    free(back);
    return 0;
}

static int scene_section_errors_name_key_and_expectation(void) {
    int bad = 0;
    bad += expect_error("{\"type\": \"height\", \"position\": [0.5, 0, 0.1], \"radus\": 0.01}",
                        PBF_ERR_PARSE, "unknown key 'probes[0].radus'", "did you mean 'radius'");
    bad += expect_error("{\"type\": \"height\", \"normal\": \"+x\"}", PBF_ERR_PARSE,
                        "'probes[0].normal'", "for a height probe");
    bad += expect_error("{\"type\": \"heigth\"}", PBF_ERR_INVALID_ARG, "'probes[0].type'",
                        "'height', 'front', 'force' or 'level'");
    bad += expect_error("{\"position\": [0.5, 0.1, 0.1]}, {\"position\": [1.5, 0, 0.1]}",
                        PBF_ERR_INVALID_ARG, "'probes[1].position'", "inside the domain");
    bad += expect_error("{\"type\": \"force\", \"position\": [0.5, 0.1, 0.1], \"normal\": \"+x\","
                        " \"size\": [0, 0.1, 0.1]}",
                        PBF_ERR_INVALID_ARG, "'probes[0].position'",
                        "must lie on the domain wall x = 0");
    bad += expect_error("{\"type\": \"force\", \"position\": [1, 0.1, 0.1], \"normal\": \"+x\","
                        " \"size\": [0, 0.1, 0.1]}",
                        PBF_ERR_INVALID_ARG, "'probes[0].position'", "facing +x");
    bad += expect_error("{\"type\": \"force\", \"position\": [1, 0.1, 0.1], \"normal\": \"-x\","
                        " \"size\": [0.1, 0.1, 0.1]}",
                        PBF_ERR_INVALID_ARG, "'probes[0].size'", "0 along the normal");
    bad += expect_error("{\"type\": \"force\", \"position\": [0.55, 0.05, 0.1], \"normal\": \"-x\","
                        " \"size\": [0, 0.1, 0.3]}",
                        PBF_ERR_INVALID_ARG, "'probes[0].position'", "colliders[0] at 0.55");
    bad += expect_error("{\"type\": \"front\", \"direction\": \"x\"}", PBF_ERR_INVALID_ARG,
                        "'probes[0].direction'", "'+x'");
    bad += expect_error("{\"name\": \"a b\"}", PBF_ERR_INVALID_ARG, "'probes[0].name'", "letters");
    bad += expect_error("{\"name\": \"H\", \"position\": [0.1, 0, 0.1]}, {\"type\": \"front\","
                        " \"name\": \"H\"}",
                        PBF_ERR_INVALID_ARG, "'probes[1].name'", "unique");
    bad += expect_error("{\"type\": \"front\", \"min_particles\": 0}", PBF_ERR_INVALID_ARG,
                        "'probes[0].min_particles'", "[1, 1000000]");
    bad += expect_error("{\"type\": \"level\", \"fraction\": 1}", PBF_ERR_INVALID_ARG,
                        "'probes[0].fraction'", "(0, 1)");
    bad += expect_error("{\"type\": \"level\", \"radius\": 0.02}", PBF_ERR_PARSE,
                        "'probes[0].radius'", "for a level probe");
    ENSURE(bad == 0);
    /* an override goes through the same checks and says so */
    pbf_scene *s = malloc(sizeof *s);
    char json[2048], err[PBF_ERROR_SIZE];
    snprintf(json, sizeof json, BASE, "{\"position\": [0.5, 0, 0.1]}");
    const char *sets[] = {"probes[0].position=[0.5, 0, 0.3]"};
    ENSURE(pbf_scene_parse(json, "probes.json", sets, 1, s, err, sizeof err) ==
           PBF_ERR_INVALID_ARG);
    printf("  %s\n", err);
    ENSURE(strstr(err, "'probes[0].position'") && strstr(err, "(from --set"));
    free(s);
    return 0;
}

/* ---- readings on states built by hand ---------------------------------------------------- */

static pbf_world *world_with(float r, pbf_vec3 max) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = r;
    d.domain_max = max;
    d.threads = 1;
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(&d, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    return w;
}

static int height_ignores_a_falling_droplet(void) {
    const float r = 0.01f;
    pbf_world *w = world_with(r, (pbf_vec3){0.5f, 1.0f, 0.5f});
    ENSURE(w);
    /* a stack of 10 particles at x = z = 0.25 (2r apart from y = r), a droplet 0.3 m above
     * it, and a single particle at x = 0.1 lying on the floor */
    float pos[3 * 12];
    int n = 0;
    for (int k = 0; k < 10; ++k, ++n) {
        pos[3 * n] = 0.25f, pos[3 * n + 1] = r + 2.0f * r * (float)k, pos[3 * n + 2] = 0.25f;
    }
    pos[3 * n] = 0.25f, pos[3 * n + 1] = 0.5f, pos[3 * n + 2] = 0.25f, ++n;
    pos[3 * n] = 0.1f, pos[3 * n + 1] = r, pos[3 * n + 2] = 0.25f, ++n;
    ENSURE(pbf_world_add_particles(w, n, pos, NULL) == PBF_OK);
    pbf_probe_def p[4];
    for (int i = 0; i < 4; ++i) {
        p[i] = pbf_default_probe_def();
        p[i].radius = 2.0f * r;
        p[i].max_gap = 4.0f * r;
        snprintf(p[i].name, sizeof p[i].name, "h%d", i);
    }
    p[0].position = (pbf_vec3){0.25f, 0.0f, 0.25f}; /* the stack */
    p[1].position = (pbf_vec3){0.4f, 0.0f, 0.25f}; /* dry */
    p[2].position = (pbf_vec3){0.1f, 0.0f, 0.25f}; /* one particle: one layer of water */
    p[3] = p[0]; /* the stack, with a huge max_gap */
    p[3].max_gap = 1.0f;
    snprintf(p[3].name, sizeof p[3].name, "h3");
    ENSURE(pbf_world_set_probes(w, p, 4) == PBF_OK);
    pbf_probe_sample s[4];
    ENSURE(pbf_world_sample_probes(w, s) == PBF_OK);
    printf("  stack %.4f m (%d particles), dry %.4f m, one layer %.4f m, no gap rule %.4f m\n",
           s[0].value, s[0].particles, s[1].value, s[2].value, s[3].value);
    ENSURE_NEAR(s[0].value, 20.0f * r, 1e-6);
    ENSURE(s[0].particles == 10);
    ENSURE(s[1].value == 0.0 && s[1].particles == 0);
    ENSURE_NEAR(s[2].value, 2.0f * r, 1e-6);
    ENSURE_NEAR(s[3].value, 0.5f + r, 1e-6);
    pbf_world_destroy(w);
    return 0;
}

/* Lattice particles (2r apart, centres at r + 2r k) whose centres lie below the plane through
 * (x0, top, z0) that rises by `slope` along x and 0.618 slope along z, over the whole floor of
 * a 0.4 × 0.4 × 0.2 m domain. Each particle's cell (2r wide) then fills the space below the
 * plane on average: the two slopes cut the columns around any point at offsets spread evenly
 * over a cell, so the staircase's local mean is the plane. */
static pbf_world *cut_lattice(float r, float top, float slope, float x0, float z0) {
    pbf_world *w = world_with(r, (pbf_vec3){0.4f, 0.4f, 0.2f});
    if (w == NULL) return NULL;
    const int nx = (int)(0.4f / (2.0f * r) + 0.5f), ny = (int)(0.4f / (2.0f * r) + 0.5f),
              nz = (int)(0.2f / (2.0f * r) + 0.5f);
    float *pos = malloc((size_t)nx * (size_t)ny * (size_t)nz * 3 * sizeof *pos);
    int n = 0;
    for (int i = 0; pos && i < nx; ++i)
        for (int j = 0; j < ny; ++j)
            for (int k = 0; k < nz; ++k) {
                float x = r + 2.0f * r * (float)i, y = r + 2.0f * r * (float)j;
                float z = r + 2.0f * r * (float)k;
                if (y >= top + slope * ((x - x0) + 0.618f * (z - z0))) continue;
                pos[3 * n] = x, pos[3 * n + 1] = y, pos[3 * n + 2] = z;
                ++n;
            }
    if (pos == NULL || pbf_world_add_particles(w, n, pos, NULL) != PBF_OK) {
        pbf_world_destroy(w);
        w = NULL;
    }
    free(pos);
    return w;
}

/* The level probe reads a flat surface and a sloped one (about 1 in 2) where the plane is, at
 * two particle spacings, with a bias that is a small fraction of r at both. (The flat plane
 * lies on the lattice's cells, 0.16 m; the sloped one passes through the gauge at 0.1607 m.)
 * The height probe's reading is printed beside it: on a static lattice it reads the top of the
 * highest cell within 2r, i.e. the staircase, not the plane. */
static int level_reads_flat_and_sloped_surfaces(void) {
    const float x0 = 0.2037f, z0 = 0.1013f;
    for (int pass = 0; pass < 2; ++pass) {
        const float r = pass ? 0.005f : 0.01f;
        for (int sloped = 0; sloped < 2; ++sloped) {
            const float top = sloped ? 0.1607f : 0.16f;
            pbf_world *w = cut_lattice(r, top, sloped ? 0.4f : 0.0f, x0, z0);
            ENSURE(w);
            pbf_probe_def p[2] = {pbf_default_probe_def(), pbf_default_probe_def()};
            p[0].type = PBF_PROBE_LEVEL;
            snprintf(p[0].name, sizeof p[0].name, "level");
            p[1].radius = 2.0f * r;
            p[1].max_gap = 4.0f * r;
            snprintf(p[1].name, sizeof p[1].name, "height");
            for (int i = 0; i < 2; ++i) p[i].position = (pbf_vec3){x0, 0.0f, z0};
            ENSURE(pbf_world_set_probes(w, p, 2) == PBF_OK);
            pbf_probe_sample s[2];
            ENSURE(pbf_world_sample_probes(w, s) == PBF_OK);
            double level_bias = (s[0].value - top) / r, top_bias = (s[1].value - top) / r;
            printf("  r = %.3f m, %s: level %.5f m (%+.3f r, %d particles), highest particle "
                   "%.5f m (%+.3f r)\n",
                   (double)r, sloped ? "slope 1:2" : "flat", s[0].value, level_bias, s[0].particles,
                   s[1].value, top_bias);
            ENSURE(fabs(level_bias) < 0.1);
            ENSURE(s[0].particles > 0);
            pbf_world_destroy(w);
        }
    }
    return 0;
}

/* A droplet above the water is not the water; a dry point reads 0; the floor is not read as a
 * surface (the particles are mirrored in it), so a shallow layer reads its depth. */
static int level_ignores_a_droplet_and_reads_shallow_layers(void) {
    const float r = 0.01f;
    pbf_world *w = cut_lattice(r, 0.04f, 0.0f, 0.0f, 0.0f); /* two layers, 4 cm deep */
    ENSURE(w);
    float drop[3] = {0.2f, 0.3f, 0.1f};
    ENSURE(pbf_world_add_particles(w, 1, drop, NULL) == PBF_OK);
    pbf_probe_def p[2] = {pbf_default_probe_def(), pbf_default_probe_def()};
    for (int i = 0; i < 2; ++i) {
        p[i].type = PBF_PROBE_LEVEL;
        snprintf(p[i].name, sizeof p[i].name, "L%d", i);
    }
    p[0].position = (pbf_vec3){0.2f, 0.0f, 0.1f};
    p[1].position = (pbf_vec3){0.2f, 0.35f, 0.1f}; /* above the droplet's reach: dry */
    ENSURE(pbf_world_set_probes(w, p, 2) == PBF_OK);
    pbf_probe_sample s[2];
    ENSURE(pbf_world_sample_probes(w, s) == PBF_OK);
    printf("  two layers: %.5f m, above the droplet: %.5f m\n", s[0].value, s[1].value);
    ENSURE(fabs(s[0].value - 0.04) < 0.1 * r);
    ENSURE(s[1].value == 0.0 && s[1].particles == 0);
    pbf_world_destroy(w);
    return 0;
}

static int front_ignores_splash_ahead(void) {
    const float r = 0.01f;
    pbf_world *w = world_with(r, (pbf_vec3){1.0f, 0.5f, 0.2f});
    ENSURE(w);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.3f, 0.1f, 0.2f}; /* the body: edge at x = 0.3 */
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    /* splash: one particle 0.2 m ahead, and one just ahead (a gap of 2 cm < h) */
    float pos[6] = {0.5f, 0.05f, 0.1f, 0.3f + 0.02f + r, 0.01f, 0.1f};
    ENSURE(pbf_world_add_particles(w, 1, pos, NULL) == PBF_OK);
    pbf_probe_def p[3] = {pbf_default_probe_def(), pbf_default_probe_def(),
                          pbf_default_probe_def()};
    for (int i = 0; i < 3; ++i) {
        p[i].type = PBF_PROBE_FRONT;
        p[i].max_gap = 4.0f * r;
        snprintf(p[i].name, sizeof p[i].name, "f%d", i);
    }
    p[1].direction = PBF_DIR_X_NEG; /* the back of the fluid, seen from the other side */
    p[2].min_particles = 2; /* a slab needs two particles */
    ENSURE(pbf_world_set_probes(w, p, 3) == PBF_OK);
    pbf_probe_sample s[3];
    ENSURE(pbf_world_sample_probes(w, s) == PBF_OK);
    printf("  front %.4f m, back %.4f m\n", s[0].value, s[1].value);
    ENSURE_NEAR(s[0].value, 0.3, 1e-6);
    ENSURE_NEAR(s[1].value, 0.0, 1e-6);
    int body = pbf_world_particle_count(w) - 1;
    ENSURE(s[0].particles == body);
    /* a particle 2 cm ahead of the edge is within max_gap: it is the front now, unless a slab
     * must hold two particles */
    ENSURE(pbf_world_add_particles(w, 1, pos + 3, NULL) == PBF_OK);
    ENSURE(pbf_world_sample_probes(w, s) == PBF_OK);
    printf("  with a particle 2 cm ahead: %.4f m; with min_particles 2: %.4f m\n", s[0].value,
           s[2].value);
    ENSURE_NEAR(s[0].value, 0.3 + 0.02 + 2.0 * r, 1e-6);
    ENSURE_NEAR(s[2].value, 0.3, 1e-6);
    pbf_world_destroy(w);
    return 0;
}

/* ---- force patches --------------------------------------------------------------------- */

/* A layer of fluid resting on the floor and on the top of a box: four patches tiling the floor
 * add up to the whole-floor probe, and the box top carries the fluid above it. Under the
 * sanitizers (test_sanitized()) 20 frames, averaged over the last 10: the loads are within the
 * same bounds by then (the sum 0.3 % under the weight, the box top half the floor's). */
static int force_patches(float target_error) {
    const float r = 0.01f;
    pbf_world *w = world_with(r, (pbf_vec3){0.4f, 0.4f, 0.2f});
    ENSURE(w);
    if (target_error > 0.0f) { /* error control, with its Chebyshev acceleration */
        pbf_solver_def sd = pbf_world_get_def(w)->solver;
        sd.target_error = target_error;
        sd.chebyshev = 1;
        ENSURE(pbf_world_set_solver(w, &sd) == PBF_OK);
    }
    pbf_collider_def box = pbf_default_collider_def();
    box.type = PBF_COLLIDER_BOX;
    box.center = (pbf_vec3){0.3f, 0.0f, 0.1f}; /* top at y = 0.1, x from 0.2 to 0.4 */
    box.half_extents = (pbf_vec3){0.1f, 0.1f, 0.2f};
    ENSURE(pbf_world_add_collider(w, &box) == PBF_OK);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.2f, 0.2f, 0.2f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    b.min = (pbf_vec3){0.2f, 0.1f, 0.0f};
    b.max = (pbf_vec3){0.4f, 0.2f, 0.2f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    pbf_probe_def p[6];
    for (int i = 0; i < 6; ++i) {
        p[i] = pbf_default_probe_def();
        p[i].type = PBF_PROBE_FORCE;
        p[i].direction = PBF_DIR_Y_POS;
        snprintf(p[i].name, sizeof p[i].name, "p%d", i);
    }
    p[0].position = (pbf_vec3){0.1f, 0.0f, 0.1f}; /* the free floor, x from 0 to 0.2 */
    p[0].size = (pbf_vec3){0.2f, 0.0f, 0.2f};
    for (int q = 0; q < 4; ++q) { /* the same floor in four patches of unequal sizes */
        float x0 = q < 2 ? 0.0f : 0.07f, x1 = q < 2 ? 0.07f : 0.2f;
        float z0 = q % 2 ? 0.13f : 0.0f, z1 = q % 2 ? 0.2f : 0.13f;
        p[1 + q].position = (pbf_vec3){0.5f * (x0 + x1), 0.0f, 0.5f * (z0 + z1)};
        p[1 + q].size = (pbf_vec3){x1 - x0, 0.0f, z1 - z0};
    }
    p[5].position = (pbf_vec3){0.3f, 0.1f, 0.1f}; /* the box top */
    p[5].size = (pbf_vec3){0.2f, 0.0f, 0.2f};
    ENSURE(pbf_world_set_probes(w, p, 6) == PBF_OK);
    const int short_run = test_sanitized();
    const int frames = short_run ? 20 : 120, last = short_run ? 10 : 40;
    double f[6] = {0};
    for (int k = 0; k < frames; ++k) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_probe_sample s[6];
        ENSURE(pbf_world_sample_probes(w, s) == PBF_OK);
        /* the tiles add up to the whole in every step, up to rounding */
        double tiles = s[1].value + s[2].value + s[3].value + s[4].value;
        ENSURE(fabs(tiles - s[0].value) <= 1e-4 * fabs(s[0].value) + 1e-6);
        if (k >= frames - last)
            for (int i = 0; i < 6; ++i) f[i] += s[i].value / last;
    }
    const double g = 9.81, m = pbf_world_particle_mass(w);
    /* what rests on each part: the layer settles to one level over both parts, so compare the
     * sum with the total weight and each part with ρ0 g (depth) (area) */
    const double weight = m * pbf_world_particle_count(w) * g;
    printf("  floor %.3f N, box top %.3f N, sum %.3f N, weight %.3f N\n", f[0], f[5], f[0] + f[5],
           weight);
    ENSURE(fabs((f[0] + f[5]) / weight - 1.0) < 0.03); /* the side walls carry nothing vertical */
    ENSURE(f[5] > 0.2 * f[0] && f[5] < f[0]); /* the box top carries the shallower part */
    pbf_world_destroy(w);
    return 0;
}

static int force_patches_tile_and_work_on_boxes(void) { return force_patches(0.0f); }

/* The same with the error-controlled, Chebyshev-accelerated solve: the extrapolated passes are
 * attributed through the same formula (src/modules/probes.c), and the weight is still carried. */
static int force_patches_with_chebyshev(void) { return force_patches(0.1f); }

/* A small dam break against a far wall: the readings of every probe are bit-identical for 1
 * and 2 threads. */
static int probes_are_deterministic_over_threads(void) {
    pbf_probe_sample ref[4];
    for (int threads = 1; threads <= 2; ++threads) {
        pbf_world_def d = pbf_default_world_def();
        d.domain_max = (pbf_vec3){0.6f, 0.4f, 0.1f};
        d.threads = threads;
        pbf_world *w = NULL;
        char err[PBF_ERROR_SIZE];
        ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
        pbf_block_def b = pbf_default_block_def();
        b.max = (pbf_vec3){0.2f, 0.3f, 0.1f};
        ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
        pbf_probe_def p[4] = {pbf_default_probe_def(), pbf_default_probe_def(),
                              pbf_default_probe_def(), pbf_default_probe_def()};
        p[0].type = PBF_PROBE_FORCE;
        p[0].position = (pbf_vec3){0.6f, 0.05f, 0.05f};
        p[0].direction = PBF_DIR_X_NEG;
        p[0].size = (pbf_vec3){0.0f, 0.1f, 0.1f};
        snprintf(p[0].name, sizeof p[0].name, "wall");
        p[1].type = PBF_PROBE_FRONT;
        snprintf(p[1].name, sizeof p[1].name, "front");
        p[2].position = (pbf_vec3){0.4f, 0.0f, 0.05f};
        snprintf(p[2].name, sizeof p[2].name, "H");
        p[3] = p[2];
        p[3].type = PBF_PROBE_LEVEL;
        snprintf(p[3].name, sizeof p[3].name, "L");
        ENSURE(pbf_world_set_probes(w, p, 4) == PBF_OK);
        pbf_probe_sample s[4];
        double peak = 0.0;
        for (int f = 0; f < 30; ++f) {
            ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
            ENSURE(pbf_world_sample_probes(w, s) == PBF_OK);
            peak = s[0].value > peak ? s[0].value : peak;
        }
        printf("  %d thread%s: wall %.9g N (peak %.4g N), front %.9g m, H %.9g m, L %.9g m\n",
               threads, threads > 1 ? "s" : " ", s[0].value, peak, s[1].value, s[2].value,
               s[3].value);
        ENSURE(peak > 0.0); /* the wave did reach the wall */
        ENSURE(s[3].value > 0.0 && s[3].value < 0.3); /* and the gauge is wet */
        if (threads == 1)
            memcpy(ref, s, sizeof ref);
        else
            ENSURE(memcmp(ref, s, sizeof ref) == 0);
        pbf_world_destroy(w);
    }
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(scene_section_defaults_and_round_trip);
RUN_TEST(scene_section_errors_name_key_and_expectation);
RUN_TEST(height_ignores_a_falling_droplet);
RUN_TEST(level_reads_flat_and_sloped_surfaces);
RUN_TEST(level_ignores_a_droplet_and_reads_shallow_layers);
RUN_TEST(front_ignores_splash_ahead);
RUN_TEST(force_patches_tile_and_work_on_boxes);
RUN_TEST(force_patches_with_chebyshev);
RUN_TEST(probes_are_deterministic_over_threads);
TEST_MAIN_END
