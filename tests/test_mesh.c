/* Mesh solids (include/pbf/geometry.h, docs/physics.md "Mesh solids"): import of every format
 * with scale, rotation and translation, the signed distance against the exact box, the field
 * cache, and every bad input's error. Files are written by the test (tests/mesh_files.h) into a
 * temporary folder, which is also the field cache. Short: a few seconds in all. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, chmod */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "geometry/bake.h"
#include "geometry/field_crop.h"
#include "geometry/geometry_state.h"
#include "mesh_files.h"
#include "pbf/checkpoint.h"
#include "pbf/geometry.h"
#include "pbf/scene.h"
#include "test.h"

static char dir[256];

static const char *path_of(const char *name) {
    static char buf[4][512];
    static int next;
    char *p = buf[next++ & 3];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static pbf_world *make_world(float radius, float size, int threads) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = radius;
    d.threads = threads;
    d.domain_max = (pbf_vec3){size, size, size};
    return test_world_create(&d);
}

static pbf_mesh_def mesh_def(const char *file) {
    pbf_mesh_def m = pbf_default_mesh_def();
    snprintf(m.path, sizeof m.path, "%s", path_of(file));
    return m;
}

/* Exact signed distance from an axis-aligned box (positive outside). */
static double box_sdf(const double lo[3], const double hi[3], const double x[3]) {
    double out2 = 0.0, in = -1e30;
    for (int k = 0; k < 3; ++k) {
        double c = 0.5 * (lo[k] + hi[k]), e = 0.5 * (hi[k] - lo[k]);
        double q = fabs(x[k] - c) - e;
        if (q > 0.0) out2 += q * q;
        if (q > in) in = q;
    }
    return out2 > 0.0 ? sqrt(out2) : (in < 0.0 ? in : 0.0);
}

/* The distance of a placed mesh at points on a line through it, against the exact box. */
static int distances_match_box(pbf_world *w, int index, const double lo[3], const double hi[3],
                               double tol) {
    double worst = 0.0;
    for (int i = 0; i <= 40; ++i) {
        for (int axis = 0; axis < 3; ++axis) {
            double x[3] = {0.5 * (lo[0] + hi[0]) + 0.013, 0.5 * (lo[1] + hi[1]) - 0.007,
                           0.5 * (lo[2] + hi[2]) + 0.004};
            x[axis] = lo[axis] - 0.05 + (hi[axis] - lo[axis] + 0.1) * i / 40.0;
            double want = box_sdf(lo, hi, x);
            float got = pbf_world_mesh_distance(w, index,
                                                (pbf_vec3){(float)x[0], (float)x[1], (float)x[2]});
            double e = fabs(got - want);
            if (e > worst) worst = e;
            if (!(e <= tol)) {
                fprintf(stderr, "  distance at (%g, %g, %g): %g, the box's %g\n", x[0], x[1], x[2],
                        (double)got, want);
                return 1;
            }
        }
    }
    printf("  largest distance error %.2e m\n", worst);
    return 0;
}

/* Every format reads to the same welded box, placed with scale, rotation and translation. */
static int formats_and_placement(void) {
    const float lo[3] = {-0.05f, -0.02f, -0.1f}, hi[3] = {0.05f, 0.02f, 0.1f};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_obj(path_of("box.obj"), &box) == 0);
    ENSURE(test_mesh_write_stl_ascii(path_of("box_ascii.stl"), &box) == 0);
    ENSURE(test_mesh_write_stl_binary(path_of("box_binary.STL"), &box) == 0);
    ENSURE(test_mesh_write_ply(path_of("box.ply"), &box) == 0);
    test_mesh_free(&box);
    const char *files[4] = {"box.obj", "box_ascii.stl", "box_binary.STL", "box.ply"};
    for (int f = 0; f < 4; ++f) {
        pbf_world *w = make_world(0.01f, 0.6f, 1);
        ENSURE(w != NULL);
        /* scaled ×2 along x, turned 90° about y, moved to (0.3, 0.2, 0.25): x ← z, z ← −2x */
        pbf_mesh_def m = mesh_def(files[f]);
        m.scale = (pbf_vec3){2.0f, 1.0f, 1.0f};
        m.rotation = (pbf_vec3){0.0f, 90.0f, 0.0f};
        m.position = (pbf_vec3){0.3f, 0.2f, 0.25f};
        if (pbf_world_add_mesh(w, &m) != PBF_OK) {
            fprintf(stderr, "%s: %s\n", files[f], pbf_world_error(w));
            return 1;
        }
        pbf_mesh_solid_info in = pbf_world_mesh_info(w, 0);
        printf("  %-15s %d vertices, %d triangles, field %d x %d x %d, volume %.6f m^3\n", files[f],
               in.vertices, in.triangles, in.nx, in.ny, in.nz, in.volume);
        ENSURE(in.vertices == 8 && in.triangles == 12);
        ENSURE_NEAR(in.volume, 0.2 * 0.04 * 0.2, 1e-8);
        const double blo[3] = {0.2, 0.18, 0.15}, bhi[3] = {0.4, 0.22, 0.35};
        ENSURE_NEAR(in.bounds_min.x, blo[0], 1e-5);
        ENSURE_NEAR(in.bounds_max.z, bhi[2], 1e-5);
        /* trilinear interpolation of the exact distance: off by a fraction of a cell near the
         * box's edges, where the distance bends */
        ENSURE(distances_match_box(w, 0, blo, bhi, 0.25 * in.cell) == 0);
        pbf_world_destroy(w);
    }
    return 0;
}

/* A container: the sign turns round (the fluid is inside), and the field is reused from the
 * cache on the second load. */
static int container_and_cache(void) {
    const float lo[3] = {0.0f, 0.0f, 0.0f}, hi[3] = {0.2f, 0.3f, 0.2f};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_stl_binary(path_of("tank.stl"), &box) == 0);
    test_mesh_free(&box);
    for (int run = 0; run < 2; ++run) {
        pbf_world *w = make_world(0.01f, 0.6f, 1);
        ENSURE(w != NULL);
        pbf_mesh_def m = mesh_def("tank.stl");
        m.role = PBF_MESH_CONTAINER;
        m.position = (pbf_vec3){0.1f, 0.1f, 0.1f};
        if (pbf_world_add_mesh(w, &m) != PBF_OK) {
            fprintf(stderr, "tank: %s\n", pbf_world_error(w));
            return 1;
        }
        pbf_mesh_solid_info in = pbf_world_mesh_info(w, 0);
        printf("  run %d: %s in %.3f s (%.1f MB)\n", run, in.from_cache ? "loaded" : "baked",
               in.bake_seconds, (double)in.field_bytes / 1e6);
        ENSURE(in.from_cache == run); /* PBF_CACHE_DIR is the fresh temporary folder */
        /* inside the tank is fluid: positive, 0.05 m from the nearest wall */
        ENSURE_NEAR(pbf_world_mesh_distance(w, 0, (pbf_vec3){0.15f, 0.25f, 0.2f}), 0.05, 2e-4);
        ENSURE(pbf_world_mesh_distance(w, 0, (pbf_vec3){0.05f, 0.25f, 0.2f}) < -0.04f);
        pbf_world_destroy(w);
    }
    return 0;
}

/* The node record (PBF_FIELD_STRIDE floats) of grid node (x, y, z) in a field's held block. */
static const float *node_at(const pbf_field *f, int x, int y, int z) {
    return f->node +
           (((size_t)(z - f->block_lo[2]) * f->block_n[1] + (size_t)(y - f->block_lo[1])) *
                f->block_n[0] +
            (size_t)(x - f->block_lo[0])) *
               PBF_FIELD_STRIDE;
}

/* Every node of b's block holds the whole field's bits. */
static int block_matches_whole(const pbf_field *b, const pbf_field *whole) {
    for (int z = b->block_lo[2]; z < b->block_lo[2] + b->block_n[2]; ++z)
        for (int y = b->block_lo[1]; y < b->block_lo[1] + b->block_n[1]; ++y)
            for (int x = b->block_lo[0]; x < b->block_lo[0] + b->block_n[0]; ++x)
                ENSURE(memcmp(node_at(b, x, y, z), node_at(whole, x, y, z),
                              PBF_FIELD_STRIDE * sizeof(float)) == 0);
    return 0;
}

/* A part of a cached field (field_cache.c, pbf__field_cache_load_block; a process split over
 * MPI ranks grows its cropped field so, field_crop.c): its nodes are the whole field's bits, a
 * file damaged outside the part is still refused (the whole file is checked), and a part that
 * does not fit the grid is refused. Then the world's own path: the region kept moved to where
 * the held block does not reach, the field grows from the cache to the same bits. */
static int cache_loads_a_part(void) {
    /* a bar 1.2 m long: a kept region reaches 11.25 h = 0.45 m past its box (field_crop.c) */
    const float lo[3] = {0.0f, 0.0f, 0.0f}, hi[3] = {1.2f, 0.1f, 0.2f};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_stl_binary(path_of("part.stl"), &box) == 0);
    test_mesh_free(&box);
    pbf_world *w = make_world(0.01f, 1.6f, 1);
    ENSURE(w != NULL);
    pbf_mesh_def m = mesh_def("part.stl");
    m.position = (pbf_vec3){0.1f, 0.1f, 0.1f};
    ENSURE(pbf_world_add_mesh(w, &m) == PBF_OK);
    const pbf_mesh_body *b = w->geometry->body[0];
    ENSURE(b->cache_dir[0] != '\0');
    const pbf_field *f = &b->field.field;
    pbf_field layout = *f;
    layout.node = NULL;
    pbf_baked_field whole, part;
    ENSURE(pbf__field_cache_load(b->cache_dir, b->key, &layout, &whole) == PBF_OK);
    ENSURE(whole.bytes == b->field.bytes && memcmp(whole.data, b->field.data, whole.bytes) == 0);
    const int plo[3] = {3, 2, 1}, pn[3] = {f->nx - 7, 5, f->nz - 4}; /* the last planes left out */
    ENSURE(pbf__field_cache_load_block(b->cache_dir, b->key, &layout, plo, pn, &part) == PBF_OK);
    ENSURE(part.bytes == (size_t)pn[0] * pn[1] * pn[2] * PBF_FIELD_STRIDE * sizeof(float));
    for (int k = 0; k < 3; ++k)
        ENSURE(part.field.block_lo[k] == plo[k] && part.field.block_n[k] == pn[k]);
    ENSURE(block_matches_whole(&part.field, &whole.field) == 0);
    pbf__baked_field_free(&part);
    /* one byte of the last z-plane, outside the part, turned round: refused */
    char file[1400];
    snprintf(file, sizeof file, "%s/field-%016llx.pbffield", b->cache_dir,
             (unsigned long long)b->key);
    FILE *fp = fopen(file, "r+b");
    ENSURE(fp != NULL);
    ENSURE(fseek(fp, -4 - 8, SEEK_END) == 0);
    int c = fgetc(fp);
    ENSURE(c != EOF && fseek(fp, -4 - 8, SEEK_END) == 0 && fputc(c ^ 0x40, fp) != EOF);
    ENSURE(fclose(fp) == 0);
    ENSURE(pbf__field_cache_load_block(b->cache_dir, b->key, &layout, plo, pn, &part) ==
           PBF_ERR_IO);
    ENSURE(part.data == NULL);
    fp = fopen(file, "r+b");
    ENSURE(fp != NULL && fseek(fp, -4 - 8, SEEK_END) == 0 && fputc(c, fp) != EOF);
    ENSURE(fclose(fp) == 0);
    const int past[3] = {f->nx - 4, 0, 0}, four[3] = {5, 2, 2};
    ENSURE(pbf__field_cache_load_block(b->cache_dir, b->key, &layout, past, four, &part) ==
           PBF_ERR_IO);
    /* the world keeps the region near one end, then the other: the block grows from the file */
    const double inf = INFINITY;
    const double a_lo[3] = {-inf, -inf, -inf}, a_hi[3] = {0.05, inf, inf};
    const double e_lo[3] = {1.3, -inf, -inf}, e_hi[3] = {inf, inf, inf};
    const pbf_vec3 near_e = {1.25f, 0.15f, 0.2f}; /* inside the bar, near its far end */
    const float dist_e = pbf_world_mesh_distance(w, 0, near_e);
    ENSURE(pbf__meshes_keep_region(w, a_lo, a_hi) == PBF_OK);
    const size_t held_a = pbf_world_mesh_info(w, 0).field_bytes;
    printf("  near one end: %zu of %zu bytes held\n", held_a, whole.bytes);
    ENSURE(held_a < whole.bytes && f->block_lo[0] == 0);
    ENSURE(block_matches_whole(f, &whole.field) == 0);
    ENSURE(pbf__meshes_keep_region(w, e_lo, e_hi) == PBF_OK);
    const size_t held_e = pbf_world_mesh_info(w, 0).field_bytes;
    printf("  near the other: %zu bytes held, from node %d in x\n", held_e, f->block_lo[0]);
    ENSURE(held_e < whole.bytes && f->block_lo[0] > 0 && f->block_n[0] + f->block_lo[0] == f->nx);
    ENSURE(block_matches_whole(f, &whole.field) == 0);
    ENSURE(pbf_world_mesh_distance(w, 0, near_e) == dist_e);
    pbf__baked_field_free(&whole);
    pbf_world_destroy(w);
    return 0;
}

/* Writes text to a file in the folder. */
static int write_text(const char *name, const char *text) {
    FILE *f = fopen(path_of(name), "wb");
    if (f == NULL) return -1;
    fputs(text, f);
    return fclose(f);
}

/* pbf_world_add_mesh fails with status st and a message holding both parts. */
static int fails_with(pbf_mesh_def m, pbf_status st, const char *part1, const char *part2) {
    pbf_world *w = make_world(0.01f, 0.6f, 1);
    ENSURE(w != NULL);
    pbf_status got = pbf_world_add_mesh(w, &m);
    const char *msg = pbf_world_error(w);
    printf("  %s\n", msg);
    if (got != st || strstr(msg, part1) == NULL || (part2 && strstr(msg, part2) == NULL)) {
        fprintf(stderr, "  expected status %d with '%s' and '%s', got %d\n", (int)st, part1,
                part2 ? part2 : "", (int)got);
        pbf_world_destroy(w);
        return 1;
    }
    ENSURE(pbf_world_mesh_count(w) == 0);
    pbf_world_destroy(w);
    return 0;
}

static int bad_input(void) {
    /* missing, unreadable, another format, empty */
    ENSURE(fails_with(mesh_def("nothing.obj"), PBF_ERR_IO, "nothing.obj", NULL) == 0);
    ENSURE(write_text("box.dae", "<COLLADA/>") == 0);
    ENSURE(fails_with(mesh_def("box.dae"), PBF_ERR_UNSUPPORTED, "box.dae", ".obj") == 0);
    ENSURE(write_text("empty.obj", "# nothing\n") == 0);
    ENSURE(fails_with(mesh_def("empty.obj"), PBF_ERR_PARSE, "empty.obj", NULL) == 0);
    ENSURE(write_text("junk.stl", "solid x\nfacet normal what\n") == 0);
    ENSURE(fails_with(mesh_def("junk.stl"), PBF_ERR_PARSE, "junk.stl", NULL) == 0);
    /* a PLY whose face list runs into garbage: Assimp's own assertion aborts on it, which the
     * library turns into an error (the read runs in a child process) */
    ENSURE(write_text("abort.ply", "ply\nformat ascii 1.0\nelement vertex 4\n"
                                   "property float x\nproperty float y\nproperty float z\n"
                                   "element face 4\nproperty list uchar int vertex_indices\n"
                                   "end_header\n0 0 0\n0.1 0 0\n0 0.1 0\n0 0 0.1\n"
                                   "3 0 2 1\n3 0 1 3\n3 0 3 2\nBBBBBBBBBBBBBBBB3 1 2 3\n") == 0);
    ENSURE(fails_with(mesh_def("abort.ply"), PBF_ERR_PARSE, "abort.ply", "Assimp") == 0);
    if (geteuid() != 0) { /* root reads anything */
        ENSURE(write_text("locked.obj", "v 0 0 0\n") == 0);
        ENSURE(chmod(path_of("locked.obj"), 0) == 0);
        ENSURE(fails_with(mesh_def("locked.obj"), PBF_ERR_IO, "locked.obj", NULL) == 0);
    }
    /* NaN and huge coordinates; a degenerate triangle */
    ENSURE(write_text("nan.obj", "v 0 0 0\nv 1 0 0\nv 0 nan 0\nv 0 0 1\n"
                                 "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n") == 0);
    ENSURE(fails_with(mesh_def("nan.obj"), PBF_ERR_INVALID_ARG, "nan.obj", "finite") == 0);
    ENSURE(write_text("huge.obj", "v 0 0 0\nv 1e9 0 0\nv 0 1 0\nv 0 0 1\n"
                                  "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n") == 0);
    ENSURE(fails_with(mesh_def("huge.obj"), PBF_ERR_INVALID_ARG, "huge.obj", "scale") == 0);
    ENSURE(write_text("degenerate.obj", "v 0.1 0.1 0.1\nv 0.2 0.1 0.1\nv 0.1 0.2 0.1\n"
                                        "v 0.3 0.1 0.1\nf 1 2 3\nf 1 2 4\n") == 0);
    ENSURE(fails_with(mesh_def("degenerate.obj"), PBF_ERR_INVALID_ARG, "degenerate.obj",
                      "degenerate") == 0);
    /* a container with a hole: the box without its top */
    ENSURE(write_text("open.obj", "v 0.1 0.1 0.1\nv 0.3 0.1 0.1\nv 0.1 0.3 0.1\nv 0.3 0.3 0.1\n"
                                  "v 0.1 0.1 0.3\nv 0.3 0.1 0.3\nv 0.1 0.3 0.3\nv 0.3 0.3 0.3\n"
                                  "f 1 5 7\nf 1 7 3\nf 2 4 8\nf 2 8 6\nf 1 2 6\nf 1 6 5\n"
                                  "f 1 3 4\nf 1 4 2\nf 5 6 8\nf 5 8 7\n") == 0);
    pbf_mesh_def open = mesh_def("open.obj");
    open.role = PBF_MESH_CONTAINER;
    ENSURE(fails_with(open, PBF_ERR_INVALID_ARG, "open.obj", "holes") == 0);
    /* the same open box is a fine obstacle (the winding number tolerates the hole) */
    {
        pbf_world *w = make_world(0.01f, 0.6f, 1);
        ENSURE(w != NULL);
        pbf_mesh_def m = mesh_def("open.obj");
        ENSURE(pbf_world_add_mesh(w, &m) == PBF_OK);
        ENSURE(pbf_world_mesh_distance(w, 0, (pbf_vec3){0.2f, 0.15f, 0.2f}) < -0.04f);
        pbf_world_destroy(w);
    }
    /* outside the domain; a field too large for the memory */
    pbf_mesh_def far = mesh_def("box.obj");
    far.position = (pbf_vec3){5.0f, 0.2f, 0.2f};
    ENSURE(fails_with(far, PBF_ERR_INVALID_ARG, "box.obj", "outside") == 0);
    pbf_mesh_def big = mesh_def("box.obj");
    big.scale = (pbf_vec3){2000.0f, 2000.0f, 2000.0f};
    big.cell = 0.00125f;
    ENSURE(fails_with(big, PBF_ERR_OUT_OF_MEMORY, "box.obj", "too large") == 0);
    /* a bad def field */
    pbf_mesh_def neg = mesh_def("box.obj");
    neg.scale.y = -1.0f;
    ENSURE(fails_with(neg, PBF_ERR_INVALID_ARG, "scale", NULL) == 0);
    return 0;
}

/* Through a scene file: a relative file name is taken from the scene's folder, and an error
 * names the scene, the mesh entry and the file, when the scene is loaded. */
static int scene_entries(void) {
    char scene_path[512];
    snprintf(scene_path, sizeof scene_path, "%s", path_of("scene.json"));
    ENSURE(write_text("scene.json",
                      "{\"domain\": {\"max\": [0.6, 0.6, 0.6]},\n"
                      " \"fluid\": {\"blocks\": [{\"max\": [0.1, 0.1, 0.1]}]},\n"
                      " \"meshes\": [{\"file\": \"box.obj\", \"position\": [0.3, 0.3, 0.3],\n"
                      "              \"rotation\": [0, 90, 0], \"scale\": [2, 1, 1]},\n"
                      "             {\"file\": \"tank.stl\", \"role\": \"container\",\n"
                      "              \"position\": [0.1, 0.1, 0.1], \"cache\": false}]}\n") == 0);
    static pbf_scene sc;
    char err[PBF_ERROR_SIZE];
    if (pbf_scene_load(scene_path, NULL, 0, &sc, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    ENSURE(sc.mesh_count == 2);
    ENSURE(strcmp(sc.meshes[0].path, path_of("box.obj")) == 0);
    ENSURE(sc.meshes[1].role == PBF_MESH_CONTAINER && sc.meshes[1].cache == 0);
    pbf_world *w = NULL;
    if (pbf_scene_create_world(&sc, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    ENSURE(pbf_world_mesh_count(w) == 2 && !pbf_world_mesh_info(w, 1).from_cache);
    pbf_world_destroy(w);
    /* the same scene with a missing file */
    ENSURE(write_text("scene.json",
                      "{\"meshes\": [{\"file\": \"box.obj\", \"position\": [0.5, 0.3, 0.2]},\n"
                      "             {\"file\": \"missing.stl\"}]}\n") == 0);
    ENSURE(pbf_scene_load(scene_path, NULL, 0, &sc, err, sizeof err) != PBF_OK);
    printf("  %s\n", err);
    ENSURE(strstr(err, "scene.json: 'meshes[1].file'") != NULL && strstr(err, "missing.stl"));
    /* a key of another motion is refused by name */
    ENSURE(write_text("scene.json", "{\"meshes\": [{\"file\": \"box.obj\", \"mass\": 3}]}\n") == 0);
    ENSURE(pbf_scene_load(scene_path, NULL, 0, &sc, err, sizeof err) != PBF_OK);
    printf("  %s\n", err);
    ENSURE(strstr(err, "meshes[0]") != NULL && strstr(err, "mass") != NULL);
    return 0;
}

/* A keyframed paddle pushed through water along x at 0.4 m/s while turning 30° about y: it is
 * where its keys put it, it drags the water in front of it along, the water pushes back, and no
 * particle gets inside it. */
static int kinematic_paddle_drags_water(void) {
    const float lo[3] = {-0.01f, -0.08f, -0.03f}, hi[3] = {0.01f, 0.08f, 0.03f};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_obj(path_of("paddle.obj"), &box) == 0);
    test_mesh_free(&box);
    pbf_world_def d = pbf_default_world_def();
    d.threads = 1;
    d.domain_max = (pbf_vec3){0.4f, 0.2f, 0.1f};
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.4f, 0.12f, 0.1f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    pbf_mesh_def m = mesh_def("paddle.obj");
    m.motion = PBF_MESH_KINEMATIC;
    m.key_count = 2;
    m.keys[0].time = 0.0f;
    m.keys[0].position = (pbf_vec3){0.1f, 0.08f, 0.05f};
    m.keys[1].time = 0.5f;
    m.keys[1].position = (pbf_vec3){0.3f, 0.08f, 0.05f};
    m.keys[1].rotation = (pbf_vec3){0.0f, 30.0f, 0.0f};
    if (pbf_world_add_mesh(w, &m) != PBF_OK) {
        fprintf(stderr, "%s\n", pbf_world_error(w));
        return 1;
    }
    const int n = pbf_world_particle_count(w);
    float *x = malloc((size_t)n * 3 * sizeof *x), *v = malloc((size_t)n * 3 * sizeof *v);
    ENSURE(x != NULL && v != NULL);
    for (int f = 1; f <= 15; ++f) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_world_get_positions(w, x);
        for (int i = 0; i < n; ++i)
            ENSURE(pbf_world_mesh_distance(
                       w, 0, (pbf_vec3){x[3 * i], x[3 * i + 1], x[3 * i + 2]}) >= 0.0f);
    }
    /* t = 0.25 s: halfway */
    pbf_mesh_solid_state s = pbf_world_mesh_state(w, 0);
    float T[12];
    pbf_world_mesh_transform(w, 0, T);
    ENSURE_NEAR(s.position.x, 0.2, 1e-5);
    ENSURE_NEAR(s.velocity.x, 0.4, 1e-3);
    ENSURE_NEAR(s.angular_velocity.y, 15.0 * 3.14159265 / 180.0 / 0.25, 1e-3);
    ENSURE_NEAR(T[0], cos(15.0 * 3.14159265 / 180.0), 1e-5); /* R = Ry(15°) */
    ENSURE_NEAR(T[2], sin(15.0 * 3.14159265 / 180.0), 1e-5);
    /* the water just in front of it, beside its middle, moves with it */
    pbf_world_get_velocities(w, v);
    double sum = 0.0;
    int count = 0;
    for (int i = 0; i < n; ++i) {
        float ahead = x[3 * i] - 0.2f;
        if (ahead > 0.02f && ahead < 0.05f && fabsf(x[3 * i + 2] - 0.05f) < 0.02f)
            sum += v[3 * i], ++count;
    }
    printf("  at t = 0.25 s: %d particles just ahead move at %.3f m/s (the paddle 0.4 m/s); "
           "force on it (%.3f, %.3f, %.3f) N\n",
           count, count ? sum / count : 0.0, (double)s.force.x, (double)s.force.y,
           (double)s.force.z);
    ENSURE(count > 5 && sum / count > 0.2);
    ENSURE(s.force.x < 0.0f); /* the water resists */
    free(x);
    free(v);
    pbf_world_destroy(w);
    return 0;
}

/* A floating cube dropped into water: a checkpoint taken on the way resumes bit-identically,
 * the body's pose and velocity included; and 1 and 2 threads agree. */
static int floating_body_resumes_bit_identically(void) {
    const float lo[3] = {-0.04f, -0.04f, -0.04f}, hi[3] = {0.04f, 0.04f, 0.04f};
    test_mesh box = test_mesh_box(lo, hi);
    ENSURE(test_mesh_write_obj(path_of("float.obj"), &box) == 0);
    test_mesh_free(&box);
    char ck_path[512], err[PBF_ERROR_SIZE];
    snprintf(ck_path, sizeof ck_path, "%s", path_of("float.pbfck"));
    uint64_t hash[2];
    pbf_mesh_solid_state state[2];
    for (int threads = 1; threads <= 2; ++threads) {
        pbf_world *w = make_world(0.0125f, 0.3f, threads);
        ENSURE(w != NULL);
        pbf_block_def b = pbf_default_block_def();
        b.max = (pbf_vec3){0.3f, 0.1f, 0.3f};
        ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
        pbf_mesh_def m = mesh_def("float.obj");
        m.motion = PBF_MESH_FLOATING;
        m.density = 600.0f;
        m.position = (pbf_vec3){0.15f, 0.16f, 0.15f};
        m.rotation = (pbf_vec3){10.0f, 0.0f, 20.0f};
        if (pbf_world_add_mesh(w, &m) != PBF_OK) {
            fprintf(stderr, "%s\n", pbf_world_error(w));
            return 1;
        }
        for (int f = 0; f < 10; ++f) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        if (threads == 2)
            ENSURE(pbf_checkpoint_save(w, ck_path, NULL, 0, err, sizeof err) == PBF_OK);
        for (int f = 0; f < 10; ++f) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        hash[threads - 1] = pbf_world_hash(w);
        state[threads - 1] = pbf_world_mesh_state(w, 0);
        pbf_world_destroy(w);
    }
    printf("  after 20 frames: centre (%.4f, %.4f, %.4f) m, velocity y %.4f m/s\n",
           (double)state[0].position.x, (double)state[0].position.y, (double)state[0].position.z,
           (double)state[0].velocity.y);
    ENSURE(state[0].position.y < 0.16f); /* it fell */
    ENSURE(hash[0] == hash[1] && memcmp(&state[0], &state[1], sizeof state[0]) == 0);
    pbf_checkpoint *ck = NULL;
    ENSURE(pbf_checkpoint_open(ck_path, &ck, err, sizeof err) == PBF_OK);
    pbf_world *r = NULL;
    pbf_status st = pbf_checkpoint_create_world(ck, NULL, &r, err, sizeof err);
    pbf_checkpoint_close(ck);
    if (st != PBF_OK) fprintf(stderr, "%s\n", err);
    ENSURE(st == PBF_OK);
    for (int f = 0; f < 10; ++f) ENSURE(pbf_world_step(r, 1.0f / 60.0f) == PBF_OK);
    pbf_mesh_solid_state resumed = pbf_world_mesh_state(r, 0);
    ENSURE(pbf_world_hash(r) == hash[1]);
    ENSURE(memcmp(&resumed, &state[1], sizeof resumed) == 0);
    pbf_world_destroy(r);
    return 0;
}

TEST_MAIN_BEGIN
if (!pbf_mesh_import_available()) {
    printf("mesh import not built (PBF_MESH=OFF): skipped\n");
    return 77;
}
if (test_mesh_cache_dir(dir, sizeof dir, "test_mesh") != 0) return 1;
RUN_TEST(formats_and_placement);
RUN_TEST(container_and_cache);
RUN_TEST(cache_loads_a_part);
RUN_TEST(bad_input);
RUN_TEST(scene_entries);
RUN_TEST(kinematic_paddle_drags_water);
RUN_TEST(floating_body_resumes_bit_identically);
test_mesh_remove_dir(dir);
TEST_MAIN_END
