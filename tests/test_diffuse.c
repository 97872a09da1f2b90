/* Spray, foam and bubbles (include/pbf/diffuse.h): nothing from a fluid at rest, spray and foam
 * from a small dam break, foam that dies after its lifetime, the same set for 1 and 2 threads,
 * checkpoint and resume bit-identical, the fluid untouched by them, and bad scene values named
 * by their key; diffuse particles stay out of colliders, meshes and the walls, and their files
 * read back. Each case runs
 * about 2000 particles for under a second of simulated time. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv (mesh_files.h) */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels.h"
#include "mesh_files.h"
#include "pbf/checkpoint.h"
#include "pbf/diffuse.h"
#include "pbf/export.h"
#include "pbf/geometry.h"
#include "pbf/scene.h"
#include "test.h"

#define DT (1.0f / 60.0f)

/* A small dam break: a 0.2 × 0.3 × 0.1 m column (r = 0.01 m, 1500 particles) in a 0.8 m tank. */
static pbf_world *dam(int threads, const pbf_diffuse_def *diffuse) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = 0.01f;
    d.domain_max = (pbf_vec3){0.8f, 0.5f, 0.1f};
    d.substeps = 2;
    d.threads = threads;
    pbf_world *w = NULL;
    if (pbf_world_create(&d, &w, NULL, 0) != PBF_OK) return NULL;
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.2f, 0.3f, 0.1f};
    if (pbf_world_add_block(w, &b) != PBF_OK ||
        (diffuse && pbf_world_enable_diffuse(w, diffuse) != PBF_OK)) {
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

static int steps(pbf_world *w, int n) {
    for (int k = 0; k < n; ++k)
        if (pbf_world_step(w, DT) != PBF_OK) {
            fprintf(stderr, "  step: %s\n", pbf_world_error(w));
            return 1;
        }
    return 0;
}

static void count_kinds(const pbf_world *w, int out[3]) {
    int n = pbf_world_diffuse_count(w);
    uint8_t *kind = malloc((size_t)n + 1);
    out[0] = out[1] = out[2] = 0;
    pbf_world_get_diffuse(w, NULL, NULL, kind, NULL);
    for (int i = 0; i < n; ++i) out[kind[i]]++;
    free(kind);
}

/* The whole diffuse set as bytes, for bit-for-bit comparisons (malloc'd; *size its length). */
static unsigned char *snapshot(const pbf_world *w, size_t *size) {
    size_t n = (size_t)pbf_world_diffuse_count(w);
    *size = n * 29;
    unsigned char *s = malloc(*size + 1);
    pbf_world_get_diffuse(w, (float *)s, (float *)(s + 12 * n), s + 28 * n, (float *)(s + 24 * n));
    return s;
}

static int same_set(const pbf_world *a, const pbf_world *b) {
    size_t na, nb;
    unsigned char *sa = snapshot(a, &na), *sb = snapshot(b, &nb);
    int same = na == nb && memcmp(sa, sb, na) == 0;
    free(sa);
    free(sb);
    return same;
}

/* The per-pair terms of kernels.h: the clamp, the weight, trapped air only for particles
 * approaching each other (twice |v| head-on, 0 moving apart), the crest only for a neighbour
 * behind the normal, and the hash's draws uniform in [0, 1). */
static int kernel_terms(void) {
    ENSURE(pbf_diffuse_clamp(0.5f, 1.0f, 3.0f) == 0.0f);
    ENSURE(pbf_diffuse_clamp(2.0f, 1.0f, 3.0f) == 0.5f);
    ENSURE(pbf_diffuse_clamp(9.0f, 1.0f, 3.0f) == 1.0f);
    ENSURE(pbf_diffuse_weight(0.0f, 0.1f) == 1.0f && pbf_diffuse_weight(0.1f, 0.1f) == 0.0f);
    const float h = 0.1f, r = 0.05f; /* W̃ = 0.5 */
    pbf_v3 xij = v3(r, 0.0f, 0.0f); /* i to the right of j */
    ENSURE_NEAR(pbf_trapped_air_term(xij, r, v3(-1.0f, 0.0f, 0.0f), h), 1.0, 1e-6); /* closing */
    ENSURE_NEAR(pbf_trapped_air_term(xij, r, v3(1.0f, 0.0f, 0.0f), h), 0.0, 1e-6); /* opening */
    ENSURE_NEAR(pbf_trapped_air_term(xij, r, v3(0.0f, 1.0f, 0.0f), h), 0.5, 1e-6); /* shear */
    pbf_v3 up = v3(0.0f, 1.0f, 0.0f), side = v3(1.0f, 0.0f, 0.0f);
    ENSURE_NEAR(pbf_wave_crest_term(up, side, v3(0.0f, -r, 0.0f), r, h), 0.5, 1e-6);
    ENSURE(pbf_wave_crest_term(up, side, v3(0.0f, r, 0.0f), r, h) == 0.0f);
    double sum = 0.0;
    int below = 0;
    for (uint32_t k = 0; k < 100000; ++k) {
        float u = pbf_diffuse_random(k, 7u, 0u);
        ENSURE(u >= 0.0f && u < 1.0f);
        sum += u;
        below += u < 0.25f;
    }
    ENSURE_NEAR(sum / 100000.0, 0.5, 0.005);
    ENSURE_NEAR(below / 100000.0, 0.25, 0.005);
    ENSURE(pbf_diffuse_random(3u, 7u, 0u) != pbf_diffuse_random(3u, 8u, 0u));
    ENSURE(pbf_diffuse_random(3u, 7u, 0u) != pbf_diffuse_random(3u, 7u, 1u));
    return 0;
}

/* A fluid at rest spawns nothing: its kinetic energy is below energy_min. */
static int rest_generates_nothing(void) {
    pbf_diffuse_def d = pbf_default_diffuse_def();
    pbf_world_def def = pbf_default_world_def();
    def.particle_radius = 0.02f;
    def.domain_max = (pbf_vec3){0.4f, 0.4f, 0.4f};
    def.substeps = 2;
    pbf_world *w = NULL;
    ENSURE(pbf_world_create(&def, &w, NULL, 0) == PBF_OK);
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.4f, 0.2f, 0.4f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    ENSURE(pbf_world_enable_diffuse(w, &d) == PBF_OK);
    ENSURE(steps(w, 60) == 0);
    ENSURE(pbf_world_diffuse_generated(w) == 0);
    ENSURE(pbf_world_diffuse_count(w) == 0);
    pbf_world_destroy(w);
    return 0;
}

/* The dam break throws spray off the front as it hits the far wall, and leaves foam on the
 * surface: both kinds seen within 1.2 s, all inside the tank, foam within its lifetime. */
static int dam_break_makes_spray_and_foam(void) {
    pbf_diffuse_def d = pbf_default_diffuse_def();
    pbf_world *w = dam(0, &d);
    ENSURE(w != NULL);
    int seen_spray = 0, seen_foam = 0, seen_bubble = 0, most = 0;
    for (int f = 0; f < 72; ++f) {
        ENSURE(steps(w, 1) == 0);
        int k[3];
        count_kinds(w, k);
        if (k[0] > seen_spray) seen_spray = k[0];
        if (k[1] > seen_foam) seen_foam = k[1];
        if (k[2] > seen_bubble) seen_bubble = k[2];
        if (pbf_world_diffuse_count(w) > most) most = pbf_world_diffuse_count(w);
    }
    int n = pbf_world_diffuse_count(w);
    float *x = malloc(sizeof(float) * 3 * (size_t)n + 4),
          *life = malloc(sizeof(float) * (size_t)n + 4);
    pbf_world_get_diffuse(w, x, NULL, NULL, life);
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        bad += !(x[3 * i] >= 0.0f && x[3 * i] <= 0.8f && x[3 * i + 1] >= 0.0f &&
                 x[3 * i + 1] <= 0.5f && x[3 * i + 2] >= 0.0f && x[3 * i + 2] <= 0.1f);
        bad += !(life[i] > 0.0f && life[i] <= d.lifetime);
    }
    free(x);
    free(life);
    printf("  generated %lld, at most %d at once; most spray %d, foam %d, bubbles %d\n",
           (long long)pbf_world_diffuse_generated(w), most, seen_spray, seen_foam, seen_bubble);
    ENSURE(bad == 0);
    ENSURE(seen_spray >= 10);
    ENSURE(seen_foam >= 10);
    pbf_world_destroy(w);
    return 0;
}

/* With every diffuse particle foam (no spray, no bubbles), generation stopped after 0.5 s and a
 * lifetime of 0.25 s, the set is still there 0.1 s later and empty 0.3 s later. */
static int foam_dies_after_its_lifetime(void) {
    pbf_diffuse_def d = pbf_default_diffuse_def();
    d.spray_neighbors = 0;
    d.bubble_neighbors = 1000;
    d.lifetime = 0.25f;
    pbf_world *w = dam(0, &d);
    ENSURE(w != NULL);
    ENSURE(steps(w, 30) == 0);
    int before = pbf_world_diffuse_count(w);
    d.trapped_air_rate = 0.0f;
    d.wave_crest_rate = 0.0f;
    ENSURE(pbf_world_enable_diffuse(w, &d) == PBF_OK);
    ENSURE(steps(w, 6) == 0);
    int mid = pbf_world_diffuse_count(w);
    ENSURE(steps(w, 12) == 0);
    int after = pbf_world_diffuse_count(w);
    printf("  foam: %d at 0.5 s, %d at 0.6 s, %d at 0.8 s\n", before, mid, after);
    ENSURE(before > 50);
    ENSURE(mid > 0);
    ENSURE(after == 0);
    pbf_world_destroy(w);
    return 0;
}

/* The same diffuse set, bit for bit and in the same order, for 1 and 2 threads. */
static int threads_bit_identical(void) {
    pbf_diffuse_def d = pbf_default_diffuse_def();
    pbf_world *a = dam(1, &d), *b = dam(2, &d);
    ENSURE(a != NULL && b != NULL);
    ENSURE(steps(a, 30) == 0 && steps(b, 30) == 0);
    ENSURE(pbf_world_diffuse_count(a) > 0);
    ENSURE(same_set(a, b));
    ENSURE(pbf_world_hash(a) == pbf_world_hash(b));
    pbf_world_destroy(a);
    pbf_world_destroy(b);
    return 0;
}

/* Saved at 0.4 s and resumed, the next 0.2 s give the same diffuse set and fluid as going on. */
static int checkpoint_resume_bit_identical(void) {
    pbf_diffuse_def d = pbf_default_diffuse_def();
    pbf_world *w = dam(0, &d);
    ENSURE(w != NULL);
    ENSURE(steps(w, 24) == 0);
    ENSURE(pbf_world_diffuse_count(w) > 0);
    char path[64], err[512];
    snprintf(path, sizeof path, "test_diffuse_%d.ckpt", (int)getpid());
    ENSURE(pbf_checkpoint_save(w, path, NULL, 0, err, sizeof err) == PBF_OK);
    ENSURE(steps(w, 12) == 0);
    pbf_checkpoint *ck = NULL;
    ENSURE(pbf_checkpoint_open(path, &ck, err, sizeof err) == PBF_OK);
    pbf_world *r = NULL;
    pbf_status st = pbf_checkpoint_create_world(ck, NULL, &r, err, sizeof err);
    pbf_checkpoint_close(ck);
    unlink(path);
    if (st != PBF_OK) fprintf(stderr, "  %s\n", err);
    ENSURE(st == PBF_OK);
    pbf_diffuse_def back;
    ENSURE(pbf_world_get_diffuse_def(r, &back) && memcmp(&back, &d, sizeof d) == 0);
    ENSURE(steps(r, 12) == 0);
    ENSURE(same_set(w, r));
    ENSURE(pbf_world_hash(w) == pbf_world_hash(r));
    ENSURE(pbf_world_diffuse_generated(w) == pbf_world_diffuse_generated(r));
    pbf_world_destroy(w);
    pbf_world_destroy(r);
    return 0;
}

/* Diffuse particles do not act on the fluid: on or off, the fluid is the same bit for bit. */
static int fluid_untouched(void) {
    pbf_diffuse_def d = pbf_default_diffuse_def();
    pbf_world *on = dam(0, &d), *off = dam(0, NULL);
    ENSURE(on != NULL && off != NULL);
    ENSURE(steps(on, 24) == 0 && steps(off, 24) == 0);
    ENSURE(pbf_world_diffuse_count(on) > 0 && pbf_world_diffuse_count(off) == 0);
    ENSURE(pbf_world_hash(on) == pbf_world_hash(off));
    pbf_world_destroy(on);
    pbf_world_destroy(off);
    return 0;
}

static int scene_error(const char *json, const char *want) {
    pbf_scene s;
    char err[512] = "";
    pbf_status st = pbf_scene_parse(json, "bad.json", NULL, 0, &s, err, sizeof err);
    if (st == PBF_OK || strstr(err, want) == NULL) {
        fprintf(stderr, "  expected an error naming %s, got: %s\n", want, err);
        return 1;
    }
    return 0;
}

/* The section is off by default, read when given, and bad values are named by their key. */
static int scene_keys(void) {
    pbf_scene s;
    char err[512];
    ENSURE(pbf_scene_parse("{}", NULL, NULL, 0, &s, err, sizeof err) == PBF_OK);
    ENSURE(s.diffuse_enabled == 0);
    ENSURE(pbf_scene_parse("{\"diffuse\": {\"enabled\": true, \"lifetime\": 3}}", NULL, NULL, 0, &s,
                           err, sizeof err) == PBF_OK);
    ENSURE(s.diffuse_enabled == 1 && s.diffuse.lifetime == 3.0f);
    ENSURE(scene_error("{\"diffuse\": {\"lifetime\": -1}}", "diffuse.lifetime") == 0);
    ENSURE(scene_error("{\"diffuse\": {\"max_count\": 0}}", "diffuse.max_count") == 0);
    ENSURE(scene_error("{\"diffuse\": {\"trapped_air_min\": 5, \"trapped_air_max\": 4}}",
                       "diffuse.trapped_air_min") == 0);
    ENSURE(scene_error("{\"diffuse\": {\"spray_neighbors\": 30}}", "diffuse.spray_neighbors") == 0);
    ENSURE(scene_error("{\"diffuse\": {\"lifetme\": 1}}", "lifetime") == 0); /* did you mean */
    return 0;
}

/* The sweep of a fast point against a box thinner than its move: from 0.1 m in front of a plate
 * 5 mm thick to 0.1 m behind it (one substep at 48 m/s), it ends in front, at r from the face,
 * marked as a contact; so does one thrown at a small sphere; a move that stays clear is left as
 * it is, and one through the floor ends at r above it. */
static int sweep_stops_at_thin_solids(void) {
    pbf_params P;
    memset(&P, 0, sizeof P);
    P.radius = 0.01f;
    P.wall_clear = 0.01f;
    P.wall_lo = v3(0.0f, 0.0f, 0.0f);
    P.wall_hi = v3(1.0f, 1.0f, 1.0f);
    pbf_solid S[2];
    memset(S, 0, sizeof S);
    S[0].type = PBF_SOLID_BOX;
    S[0].a = v3(0.5f, 0.5f, 0.5f);
    S[0].b = v3(0.0025f, 0.3f, 0.3f);
    S[1].type = PBF_SOLID_SPHERE;
    S[1].a = v3(0.5f, 0.9f, 0.5f);
    S[1].radius = 0.004f;
    P.solid_count = 2;
    int contact = 0;
    pbf_v3 x = pbf_diffuse_collide(v3(0.4f, 0.5f, 0.5f), v3(0.6f, 0.51f, 0.5f), &P, S, &contact);
    ENSURE(contact == 1);
    ENSURE_NEAR(x.x, 0.5 - 0.0025 - 0.01, 1e-5);
    x = pbf_diffuse_collide(v3(0.5f, 0.8f, 0.5f), v3(0.5f, 0.99f, 0.5f), &P, S, &contact);
    ENSURE(contact == 1);
    ENSURE_NEAR(x.y, 0.9 - 0.004 - 0.01, 1e-5);
    pbf_v3 b = v3(0.3f, 0.2f, 0.5f);
    x = pbf_diffuse_collide(v3(0.4f, 0.3f, 0.5f), b, &P, S, &contact);
    ENSURE(contact == 0 && x.x == b.x && x.y == b.y && x.z == b.z);
    x = pbf_diffuse_collide(v3(0.4f, 0.3f, 0.5f), v3(0.4f, -0.1f, 0.5f), &P, S, &contact);
    ENSURE(contact == 1 && x.y == 0.01f);
    return 0;
}

/* The dam of dam() breaking against a box collider (x 0.35..0.41, y < 0.08) and a mesh box
 * (x 0.55..0.61, y < 0.08, read from an OBJ file) in its way: spray, foam and bubbles are
 * thrown at both and along them, and after every frame none lies inside either box or outside
 * the tank; 1 and 2 threads give the same set. */
static char mesh_dir[256];

static pbf_world *dam_with_solids(int threads, int mesh) {
    pbf_diffuse_def d = pbf_default_diffuse_def();
    pbf_world *w = dam(threads, &d);
    if (w == NULL) return NULL;
    pbf_collider_def c = pbf_default_collider_def();
    c.type = PBF_COLLIDER_BOX;
    c.center = (pbf_vec3){0.38f, 0.04f, 0.05f};
    c.half_extents = (pbf_vec3){0.03f, 0.04f, 0.05f};
    pbf_status st = pbf_world_add_collider(w, &c);
    if (st == PBF_OK && mesh) {
        pbf_mesh_def m = pbf_default_mesh_def();
        snprintf(m.path, sizeof m.path, "%s/box.obj", mesh_dir);
        m.position = (pbf_vec3){0.58f, 0.04f, 0.05f};
        st = pbf_world_add_mesh(w, &m);
    }
    if (st != PBF_OK) {
        fprintf(stderr, "  %s\n", pbf_world_error(w));
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

/* The signed distance of x from an axis-aligned box (centre c, half extents e), < 0 inside. */
static float box_distance(const float *x, pbf_v3 c, pbf_v3 e) {
    pbf_solid s;
    memset(&s, 0, sizeof s);
    s.type = PBF_SOLID_BOX;
    s.a = c;
    s.b = e;
    pbf_v3 n;
    return pbf_solid_sdf(&s, v3(x[0], x[1], x[2]), &n);
}

static int stay_out_of_solids(void) {
    const int mesh = pbf_mesh_import_available();
    if (mesh) {
        ENSURE(test_mesh_cache_dir(mesh_dir, sizeof mesh_dir, "test_diffuse") == 0);
        const float lo[3] = {-0.03f, -0.04f, -0.05f}, hi[3] = {0.03f, 0.04f, 0.05f};
        test_mesh box = test_mesh_box(lo, hi);
        char path[300];
        snprintf(path, sizeof path, "%s/box.obj", mesh_dir);
        int wrote = test_mesh_write_obj(path, &box);
        test_mesh_free(&box);
        ENSURE(wrote == 0);
    } else {
        printf("  mesh import not built: the collider only\n");
    }
    pbf_world *a = dam_with_solids(1, mesh), *b = dam_with_solids(2, mesh);
    ENSURE(a != NULL && b != NULL);
    const pbf_v3 half = v3(0.03f, 0.04f, 0.05f);
    const pbf_v3 centre[2] = {v3(0.38f, 0.04f, 0.05f), v3(0.58f, 0.04f, 0.05f)};
    int inside[2] = {0, 0}, near[2] = {0, 0}, outside_tank = 0, most = 0;
    float nearest[2] = {1.0f, 1.0f};
    for (int f = 0; f < 48; ++f) {
        ENSURE(steps(a, 1) == 0 && steps(b, 1) == 0);
        int n = pbf_world_diffuse_count(a);
        if (n > most) most = n;
        float *x = malloc(sizeof(float) * 3 * (size_t)n + 4);
        ENSURE(x != NULL);
        pbf_world_get_diffuse(a, x, NULL, NULL, NULL);
        for (int i = 0; i < n; ++i) {
            const float *xi = x + 3 * i;
            for (int s = 0; s < 1 + mesh; ++s) {
                float dist = box_distance(xi, centre[s], half);
                inside[s] += dist < 0.0f;
                near[s] += dist < 0.02f;
                if (dist < nearest[s]) nearest[s] = dist;
            }
            outside_tank += !(xi[0] >= 0.0f && xi[0] <= 0.8f && xi[1] >= 0.0f && xi[1] <= 0.5f &&
                              xi[2] >= 0.0f && xi[2] <= 0.1f);
        }
        free(x);
    }
    printf("  at most %d diffuse; within 2r of the collider %d (nearest %.4f m), of the mesh %d "
           "(nearest %.4f m); inside %d and %d, outside the tank %d\n",
           most, near[0], (double)nearest[0], near[1], (double)nearest[1], inside[0], inside[1],
           outside_tank);
    int same = same_set(a, b);
    pbf_world_destroy(a);
    pbf_world_destroy(b);
    if (mesh) test_mesh_remove_dir(mesh_dir);
    ENSURE(near[0] > 50 && (!mesh || near[1] > 50)); /* the solids were reached */
    ENSURE(inside[0] == 0 && inside[1] == 0 && outside_tank == 0);
    ENSURE(same);
    return 0;
}

/* A frame's diffuse file reads back as written (pbf_export_diffuse_read, `pbf render`), bit for
 * bit; a truncated file, a foreign header and a bad kind are errors naming the file. */
static int file_reads_back(void) {
    pbf_diffuse_def d = pbf_default_diffuse_def();
    pbf_world *w = dam(0, &d);
    ENSURE(w != NULL);
    ENSURE(steps(w, 20) == 0);
    const int n = pbf_world_diffuse_count(w);
    ENSURE(n > 0);
    char path[64], err[512];
    snprintf(path, sizeof path, "test_diffuse_%d.ply", (int)getpid());
    ENSURE(pbf_export_diffuse_write(w, path, err, sizeof err) == PBF_OK);
    pbf_diffuse_particles p;
    ENSURE(pbf_export_diffuse_read(path, &p, err, sizeof err) == PBF_OK);
    size_t size;
    unsigned char *want = snapshot(w, &size);
    int same = p.count == n && memcmp(p.positions, want, 12 * (size_t)n) == 0 &&
               memcmp(p.velocities, want + 12 * (size_t)n, 12 * (size_t)n) == 0 &&
               memcmp(p.lifetimes, want + 24 * (size_t)n, 4 * (size_t)n) == 0 &&
               memcmp(p.kinds, want + 28 * (size_t)n, (size_t)n) == 0;
    free(want);
    pbf_diffuse_particles_free(&p);
    pbf_world_destroy(w);
    ENSURE(same);
    /* truncated: the last particle cut in half */
    FILE *f = fopen(path, "rb");
    ENSURE(f != NULL);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fclose(f);
    ENSURE(truncate(path, len - 10) == 0);
    ENSURE(pbf_export_diffuse_read(path, &p, err, sizeof err) == PBF_ERR_PARSE);
    ENSURE(strstr(err, path) != NULL && strstr(err, "truncated") != NULL);
    ENSURE(p.count == 0 && p.positions == NULL);
    /* a particle file is not a diffuse file */
    f = fopen(path, "wb");
    ENSURE(f != NULL);
    fputs("ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\n"
          "property float y\nproperty float z\nproperty float density\n",
          f);
    fclose(f);
    ENSURE(pbf_export_diffuse_read(path, &p, err, sizeof err) == PBF_ERR_PARSE);
    ENSURE(strstr(err, path) != NULL && strstr(err, "property float vx") != NULL);
    /* a kind that is none of spray, foam and bubble */
    f = fopen(path, "wb");
    ENSURE(f != NULL);
    fputs("ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\n"
          "property float y\nproperty float z\nproperty float vx\nproperty float vy\n"
          "property float vz\nproperty uchar kind\nproperty float lifetime\nend_header\n",
          f);
    unsigned char record[29] = {0};
    record[24] = 7;
    fwrite(record, 1, sizeof record, f);
    fclose(f);
    ENSURE(pbf_export_diffuse_read(path, &p, err, sizeof err) == PBF_ERR_PARSE);
    ENSURE(strstr(err, "kind 7") != NULL);
    unlink(path);
    ENSURE(pbf_export_diffuse_read(path, &p, err, sizeof err) == PBF_ERR_IO);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(kernel_terms);
RUN_TEST(rest_generates_nothing);
RUN_TEST(dam_break_makes_spray_and_foam);
RUN_TEST(foam_dies_after_its_lifetime);
RUN_TEST(threads_bit_identical);
RUN_TEST(checkpoint_resume_bit_identical);
RUN_TEST(fluid_untouched);
RUN_TEST(scene_keys);
RUN_TEST(sweep_stops_at_thin_solids);
RUN_TEST(stay_out_of_solids);
RUN_TEST(file_reads_back);
TEST_MAIN_END
