/* The shipped scene with mesh solids, scenes/obstacle.json (a dam break against a thin baffle and
 * a pier, meshes made by scripts/make_scene_meshes.py):
 *   test_mesh_scene          it loads; 1 and 2 threads give the same bits; a checkpoint resumes
 *                            bit-identically (a few seconds, at twice the particle radius); and
 *                            scenes/floating.json floats;
 *   test_mesh_scene long     1000 steps at 2.5 times the particle radius: after every 50 no
 *                            particle is inside a solid (labelled "slow": not run under the
 *                            sanitizers).
 *   test_mesh_scene glass [R] scenes/glass_fill.json (a tap fills a glass) for 2000 solver steps
 *                            (its substeps of 1/240 s: 8.3 s, the tap runs from 0.2 to 4.2 s)
 *                            at particle radius R (default 0.005, coarser than the scene's
 *                            0.0025): every 50 steps no particle is outside the glass ("slow").
 * The field cache is a temporary folder. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/checkpoint.h"
#include "pbf/geometry.h"
#include "pbf/scene.h"
#include "test.h"

static char dir[256];
static pbf_scene scene;

/* scenes/obstacle.json at particle radius r, with `threads` threads. */
static pbf_world *load_scene_set(const char *name, float r, int threads, const char *extra) {
    const char *root = getenv("PBF_SOURCE_DIR");
    char path[1024], err[PBF_ERROR_SIZE], o1[64], o2[64];
    snprintf(path, sizeof path, "%s/scenes/%s", root ? root : ".", name);
    snprintf(o1, sizeof o1, "fluid.particle_radius=%g", (double)r);
    snprintf(o2, sizeof o2, "solver.threads=%d", threads);
    const char *overrides[3] = {o1, o2, extra};
    if (pbf_scene_load(path, overrides, extra ? 3 : 2, &scene, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    pbf_world *w = NULL;
    if (pbf_scene_create_world(&scene, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    return w;
}

static pbf_world *load_scene(const char *name, float r, int threads) {
    return load_scene_set(name, r, threads, NULL);
}

static pbf_world *load(float r, int threads) { return load_scene("obstacle.json", r, threads); }

static int steps(pbf_world *w, int n) {
    for (int i = 0; i < n; ++i) ENSURE(pbf_world_step(w, 1.0f / scene.fps) == PBF_OK);
    return 0;
}

static int scene_loads(void) {
    pbf_world *w = load(0.01f, 0);
    ENSURE(w != NULL);
    ENSURE(scene.mesh_count == 2 && pbf_world_mesh_count(w) == 2);
    for (int k = 0; k < 2; ++k) {
        pbf_mesh_solid_info in = pbf_world_mesh_info(w, k);
        printf("  %s: %d triangles, field %d x %d x %d (%.1f MB), %s in %.3f s\n",
               scene.meshes[k].path, in.triangles, in.nx, in.ny, in.nz,
               (double)in.field_bytes / 1e6, in.from_cache ? "loaded" : "baked", in.bake_seconds);
    }
    ENSURE(pbf_world_mesh_info(w, 0).triangles == 12);
    ENSURE(pbf_world_mesh_info(w, 1).triangles == 96);
    /* the baffle is thinner than two particle radii: 8 mm, its middle 4 mm deep */
    ENSURE(pbf_world_mesh_distance(w, 0, (pbf_vec3){0.65f, 0.1f, 0.1f}) < 0.0f);
    ENSURE(pbf_world_mesh_distance(w, 0, (pbf_vec3){0.65f, 0.1f, 0.3f}) > 0.02f);
    pbf_world_destroy(w);
    return 0;
}

/* scenes/floating.json: two crates and a hull float in the wave tank; after 30 steps (at twice
 * the radius) each is still at the water's surface, 0.2 m. */
static int floating_scene_floats(void) {
    pbf_world *w = load_scene("floating.json", 0.02f, 0);
    ENSURE(w != NULL);
    ENSURE(pbf_world_mesh_count(w) == 3);
    ENSURE(steps(w, 30) == 0);
    for (int k = 0; k < 3; ++k) {
        pbf_mesh_solid_state s = pbf_world_mesh_state(w, k);
        printf("  body %d: centre (%.3f, %.3f, %.3f) m\n", k, (double)s.position.x,
               (double)s.position.y, (double)s.position.z);
        ENSURE(s.position.y > 0.12f && s.position.y < 0.26f);
    }
    pbf_world_destroy(w);
    return 0;
}

/* 30 steps on 1 thread and on 2 give the same bits; the 2-thread run saves a checkpoint at
 * step 15, and 15 steps from it give its bits and the pier's force again (one world serves both
 * checks: the straight run is the 2-thread one). */
static int threads_and_checkpoint_give_the_same_bits(void) {
    char path[512], err[PBF_ERROR_SIZE];
    snprintf(path, sizeof path, "%s/obstacle.pbfck", dir);
    uint64_t hash[2];
    pbf_vec3 force = {0.0f, 0.0f, 0.0f};
    for (int t = 0; t < 2; ++t) {
        pbf_world *w = load(0.02f, t + 1);
        ENSURE(w != NULL);
        ENSURE(steps(w, 15) == 0);
        if (t == 1) ENSURE(pbf_checkpoint_save(w, path, NULL, 0, err, sizeof err) == PBF_OK);
        ENSURE(steps(w, 15) == 0);
        hash[t] = pbf_world_hash(w);
        force = pbf_world_mesh_state(w, 1).force;
        pbf_world_destroy(w);
    }
    printf("  1 thread %016llx, 2 threads %016llx\n", (unsigned long long)hash[0],
           (unsigned long long)hash[1]);
    ENSURE(hash[0] == hash[1]);
    const uint64_t straight = hash[1];
    pbf_checkpoint *ck = NULL;
    if (pbf_checkpoint_open(path, &ck, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    pbf_world *r = NULL;
    pbf_status st = pbf_checkpoint_create_world(ck, NULL, &r, err, sizeof err);
    pbf_checkpoint_close(ck);
    if (st != PBF_OK) fprintf(stderr, "%s\n", err);
    ENSURE(st == PBF_OK);
    ENSURE(pbf_world_mesh_count(r) == 2);
    ENSURE(pbf_world_mesh_info(r, 1).from_cache);
    ENSURE(steps(r, 15) == 0);
    uint64_t resumed = pbf_world_hash(r);
    pbf_vec3 force2 = pbf_world_mesh_state(r, 1).force;
    pbf_world_destroy(r);
    printf("  straight %016llx, resumed %016llx; force on the pier (%.4f, %.4f, %.4f) N\n",
           (unsigned long long)straight, (unsigned long long)resumed, (double)force.x,
           (double)force.y, (double)force.z);
    ENSURE(straight == resumed);
    ENSURE(memcmp(&force, &force2, sizeof force) == 0);
    return 0;
}

/* 1000 steps; every 50 no particle is inside a solid: every mesh's distance >= 0 (the contact
 * band is r, so a particle is at least about r from each surface) and every particle is in the
 * domain. */
static int no_particle_inside_a_solid(void) {
    const float r = 0.025f;
    pbf_world *w = load(r, 0);
    ENSURE(w != NULL);
    const int n = pbf_world_particle_count(w), meshes = pbf_world_mesh_count(w);
    float *x = malloc((size_t)n * 3 * sizeof *x);
    ENSURE(x != NULL);
    float closest = 1e30f;
    for (int block = 0; block < 20; ++block) {
        ENSURE(steps(w, 50) == 0);
        pbf_world_get_positions(w, x);
        ENSURE(all_in_domain(w, x, n));
        for (int i = 0; i < n; ++i) {
            pbf_vec3 p = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
            for (int k = 0; k < meshes; ++k) {
                float d = pbf_world_mesh_distance(w, k, p);
                if (d < closest) closest = d;
                if (!(d >= 0.0f)) {
                    fprintf(stderr, "  step %d: particle %d at (%g, %g, %g) is %g m inside %s\n",
                            50 * (block + 1), i, (double)p.x, (double)p.y, (double)p.z, (double)-d,
                            scene.meshes[k].path);
                    return 1;
                }
            }
        }
    }
    printf("  %d particles, 1000 steps: the closest to a mesh surface %.4f m (r = %g m)\n", n,
           (double)closest, (double)r);
    free(x);
    pbf_world_destroy(w);
    return 0;
}

/* The glass of scenes/glass_fill.json: its axis, inner radius, inner floor and rim
 * (scripts/make_scene_meshes.py, glass.obj placed at x = z = 0.1). */
#define GLASS_X 0.1f
#define GLASS_Z 0.1f
#define GLASS_INNER 0.04f
#define GLASS_FLOOR 0.01f
#define GLASS_RIM 0.13f

/* 2000 solver steps of the tap filling the glass; every 50 every particle is in the glass's cavity or
 * the column above it (the stream from the tap): within the inner radius of the axis, above the
 * inner floor, outside the glass's walls; at the end all of them are below the rim. */
static float glass_radius = 0.005f;
static int glass_fill_stays_in_the_glass(void) {
    /* one substep per call, of the scene's own substep length */
    pbf_world *w = load_scene_set("glass_fill.json", glass_radius, 1, "time.substeps=1");
    ENSURE(w != NULL);
    const float dt = 1.0f / (scene.fps * 4.0f);
    float *x = NULL, widest = 0.0f, lowest = 1.0f, highest = 0.0f;
    int n = 0;
    for (int block = 0; block < 40; ++block) {
        for (int i = 0; i < 50; ++i) ENSURE(pbf_world_step(w, dt) == PBF_OK);
        n = pbf_world_particle_count(w);
        float *bigger = realloc(x, (size_t)n * 3 * sizeof *x);
        ENSURE(bigger != NULL);
        x = bigger;
        pbf_world_get_positions(w, x);
        highest = 0.0f;
        for (int i = 0; i < n; ++i) {
            pbf_vec3 p = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
            float dx = p.x - GLASS_X, dz = p.z - GLASS_Z, rad = sqrtf(dx * dx + dz * dz);
            float d = pbf_world_mesh_distance(w, 0, p);
            widest = fmaxf(widest, rad);
            lowest = fminf(lowest, p.y);
            highest = fmaxf(highest, p.y);
            if (!(rad <= GLASS_INNER && p.y >= GLASS_FLOOR && d >= 0.0f)) {
                fprintf(stderr,
                        "  step %d: particle %d at (%g, %g, %g) is outside the glass "
                        "(%g m from its axis, %g m from its surface)\n",
                        50 * (block + 1), i, (double)p.x, (double)p.y, (double)p.z, (double)rad,
                        (double)d);
                return 1;
            }
        }
    }
    printf("  r = %g m, 2000 steps: %d particles, all in the glass: at most %.4f m from its axis "
           "(inside %.3f), lowest %.4f m (floor %.3f), highest at the end %.4f m (rim %.3f)\n",
           (double)glass_radius, n, (double)widest, (double)GLASS_INNER, (double)lowest,
           (double)GLASS_FLOOR, (double)highest, (double)GLASS_RIM);
    ENSURE(highest < GLASS_RIM);
    ENSURE(n > 350);
    free(x);
    pbf_world_destroy(w);
    return 0;
}

int main(int argc, char **argv) {
    int test_failures_ = 0;
    if (!pbf_mesh_import_available()) {
        printf("mesh import not built (PBF_MESH=OFF): skipped\n");
        return 77;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pbf_test_mesh_scene_XXXXXX",
             tmp != NULL && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL) return 1;
    setenv("PBF_CACHE_DIR", dir, 1);
    if (argc > 1 && strcmp(argv[1], "glass") == 0) {
        if (argc > 2) glass_radius = strtof(argv[2], NULL);
        RUN_TEST(glass_fill_stays_in_the_glass);
    } else if (argc > 1 && strcmp(argv[1], "long") == 0) {
        RUN_TEST(no_particle_inside_a_solid);
    } else {
        RUN_TEST(scene_loads);
        RUN_TEST(floating_scene_floats);
        RUN_TEST(threads_and_checkpoint_give_the_same_bits);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return test_failures_ == 0 ? 0 : 1;
}
