/* Checkpoints (docs/robustness.md): a resumed world is bit-identical to one that never stopped,
 * with colliders, moving walls, both neighbour schemes, another thread count and the tool; corrupt,
 * truncated, foreign and newer files are refused with a message that names the file and the
 * problem; a failed save leaves the previous checkpoint and no temporary file. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "pbf/checkpoint.h"
#include "pbf/export.h"
#include "pbf/pbf.h"
#include "test.h"

static char dir[256];

static const char *tmp_path(const char *name) {
    static char buf[4][512];
    static int next = 0;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

/* A small dam break with a collider and a moving wall (as test_determinism's). NULL when the
 * backend is not available here. */
static pbf_world *make_world_on(int threads, pbf_neighbor_mode mode, pbf_backend backend) {
    pbf_world_def d = pbf_default_world_def();
    d.backend = backend;
    d.domain_max = (pbf_vec3){0.6f, 0.4f, 0.2f};
    d.wall_motion[PBF_WALL_X_MAX] = (pbf_wall_motion){0.03f, 0.7f, 0.0f};
    d.threads = threads;
    d.neighbor_mode = mode;
    d.substeps = 2;
    pbf_world *w = NULL;
    if (pbf_world_create(&d, &w, NULL, 0) != PBF_OK) return NULL;
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.2f, 0.3f, 0.2f};
    b.jitter = 0.2f;
    pbf_collider_def c = pbf_default_collider_def();
    c.center = (pbf_vec3){0.4f, 0.0f, 0.1f};
    c.radius = 0.08f;
    if (pbf_world_add_block(w, &b) != PBF_OK || pbf_world_add_collider(w, &c) != PBF_OK) {
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

static pbf_world *make_world(int threads, pbf_neighbor_mode mode) {
    return make_world_on(threads, mode, PBF_BACKEND_CPU);
}

static int step_n(pbf_world *w, int n) {
    for (int i = 0; i < n; ++i)
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) {
            fprintf(stderr, "step: %s\n", pbf_world_error(w));
            return 1;
        }
    return 0;
}

/* Saves w to path and creates a world from it (def: NULL or a replacement). */
static pbf_world *round_trip(const pbf_world *w, const char *path, const pbf_world_def *def) {
    char err[PBF_ERROR_SIZE];
    if (pbf_checkpoint_save(w, path, NULL, 0, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "save: %s\n", err);
        return NULL;
    }
    pbf_checkpoint *ck = NULL;
    if (pbf_checkpoint_open(path, &ck, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "open: %s\n", err);
        return NULL;
    }
    pbf_world *out = NULL;
    if (pbf_checkpoint_create_world(ck, def, &out, err, sizeof err) != PBF_OK)
        fprintf(stderr, "create: %s\n", err);
    pbf_checkpoint_close(ck);
    return out;
}

/* 8 steps, checkpoint, 12 more from the file (on another thread count) == 20 straight. */
static int check_resume(pbf_neighbor_mode mode) {
    pbf_world *a = make_world(2, mode);
    ENSURE(a != NULL);
    ENSURE(step_n(a, 20) == 0);
    const uint64_t want = pbf_world_hash(a);
    const pbf_profile pa = pbf_world_get_profile(a);

    pbf_world *b = make_world(2, mode);
    ENSURE(b != NULL);
    ENSURE(step_n(b, 8) == 0);
    pbf_world_def d = *pbf_world_get_def(b);
    d.threads = 1;
    pbf_world *c = round_trip(b, tmp_path("resume.pbfck"), &d);
    ENSURE(c != NULL);
    ENSURE(pbf_world_hash(c) == pbf_world_hash(b));
    ENSURE(pbf_world_time(c) == pbf_world_time(b));
    ENSURE(pbf_world_get_profile(c).steps == 8);
    ENSURE(pbf_world_collider_count(c) == 1);
    /* densities (not in the hash) come back too */
    int n = pbf_world_particle_count(b);
    float *rb = malloc((size_t)n * sizeof *rb), *rc = malloc((size_t)n * sizeof *rc);
    ENSURE(rb != NULL && rc != NULL);
    pbf_world_get_densities(b, rb);
    pbf_world_get_densities(c, rc);
    ENSURE(memcmp(rb, rc, (size_t)n * sizeof *rb) == 0);
    free(rb);
    free(rc);
    /* the original goes on too: both must end where the straight run ended */
    ENSURE(step_n(b, 12) == 0);
    ENSURE(step_n(c, 12) == 0);
    printf("  straight %016llx, resumed %016llx\n", (unsigned long long)want,
           (unsigned long long)pbf_world_hash(c));
    ENSURE(pbf_world_hash(b) == want);
    ENSURE(pbf_world_hash(c) == want);
    ENSURE(pbf_world_time(c) == pbf_world_time(a));
    ENSURE(pbf_world_get_profile(c).steps == pa.steps);
    ENSURE(pbf_world_get_profile(c).avg_density_error == pa.avg_density_error);
    pbf_world_destroy(a);
    pbf_world_destroy(b);
    pbf_world_destroy(c);
    return 0;
}

static int resume_is_bit_identical(void) { return check_resume(PBF_NEIGHBOR_LIST); }
static int resume_is_bit_identical_cells(void) { return check_resume(PBF_NEIGHBOR_CELLS); }

/* The slot order is part of the state: a world restored in id order would diverge. This is
 * what makes the test above meaningful (it fails if the checkpoint saved particles by id). */
static int slot_order_matters(void) {
    pbf_world *a = make_world(2, PBF_NEIGHBOR_LIST);
    ENSURE(a != NULL);
    ENSURE(step_n(a, 8) == 0);
    pbf_particle_view v = pbf_world_view(a);
    int moved = 0;
    for (int i = 0; i < v.count; ++i) moved += v.ids[i] != i;
    ENSURE(moved > 0); /* the sort has reordered the slots */
    pbf_particles p;
    ENSURE(pbf_particles_from_world(a, &p, NULL, 0) == PBF_OK);
    pbf_world_def d = *pbf_world_get_def(a);
    pbf_world *b = NULL;
    ENSURE(pbf_world_create(&d, &b, NULL, 0) == PBF_OK);
    pbf_collider_def c = pbf_world_get_collider(a, 0);
    ENSURE(pbf_world_add_collider(b, &c) == PBF_OK);
    /* same positions and velocities, in id order (the walls have not moved out at t = 8/60) */
    ENSURE(pbf_world_add_particles(b, p.count, p.positions, p.velocities) == PBF_OK);
    ENSURE(step_n(a, 6) == 0);
    ENSURE(step_n(b, 6) == 0);
    ENSURE(pbf_world_hash(a) != pbf_world_hash(b));
    pbf_particles_free(&p);
    pbf_world_destroy(a);
    pbf_world_destroy(b);
    return 0;
}

/* A kinematic tool on a path and a free tool: their carried state comes back too. */
static int resume_with_tool(void) {
    for (int motion = 0; motion < 2; ++motion) {
        pbf_world *w[2];
        for (int k = 0; k < 2; ++k) {
            w[k] = make_world(2, PBF_NEIGHBOR_LIST);
            ENSURE(w[k] != NULL);
            pbf_tool_def t = pbf_default_tool_def();
            t.radius = 0.04f;
            t.position = (pbf_vec3){0.1f, 0.3f, 0.1f};
            t.adhesion_k_tool = t.adhesion_k_fluid = 50.0f;
            t.damping = 10.0f;
            if (motion == 0) {
                t.key_count = 3;
                t.keys[0] = (pbf_tool_key){0.0f, {0.1f, 0.33f, 0.1f}};
                t.keys[1] = (pbf_tool_key){0.2f, {0.15f, 0.1f, 0.1f}};
                t.keys[2] = (pbf_tool_key){0.4f, {0.3f, 0.1f, 0.1f}};
                t.interpolation = PBF_TOOL_SMOOTH;
            } else {
                t.motion = PBF_TOOL_FREE;
                t.mass = 0.1f;
            }
            ENSURE(pbf_world_set_tool(w[k], &t) == PBF_OK);
        }
        ENSURE(step_n(w[0], 16) == 0);
        ENSURE(step_n(w[1], 7) == 0);
        pbf_world *r = round_trip(w[1], tmp_path("tool.pbfck"), NULL);
        ENSURE(r != NULL);
        ENSURE(pbf_world_has_tool(r));
        pbf_tool_state s1 = pbf_tool_get_state(w[1]), sr = pbf_tool_get_state(r);
        ENSURE(memcmp(&s1, &sr, sizeof s1) == 0);
        ENSURE(step_n(r, 9) == 0);
        ENSURE(pbf_world_hash(r) == pbf_world_hash(w[0]));
        pbf_tool_state a = pbf_tool_get_state(w[0]), b = pbf_tool_get_state(r);
        ENSURE(memcmp(&a, &b, sizeof a) == 0);
        pbf_world_destroy(w[0]);
        pbf_world_destroy(w[1]);
        pbf_world_destroy(r);
    }
    return 0;
}

static int app_data_round_trip(void) {
    pbf_world *w = make_world(1, PBF_NEIGHBOR_LIST);
    ENSURE(w != NULL);
    const char app[] = "{\"frame\": 7}";
    char err[PBF_ERROR_SIZE];
    const char *path = tmp_path("app.pbfck");
    ENSURE(pbf_checkpoint_save(w, path, app, strlen(app), err, sizeof err) == PBF_OK);
    pbf_checkpoint *ck = NULL;
    ENSURE(pbf_checkpoint_open(path, &ck, err, sizeof err) == PBF_OK);
    size_t size = 0;
    const char *got = pbf_checkpoint_app_data(ck, &size);
    ENSURE(got != NULL && size == strlen(app) && strcmp(got, app) == 0);
    ENSURE(pbf_checkpoint_particle_count(ck) == pbf_world_particle_count(w));
    ENSURE(pbf_checkpoint_steps(ck) == 0);
    pbf_checkpoint_close(ck);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    ENSURE(access(tmp, F_OK) != 0); /* renamed into place */
    pbf_world_destroy(w);
    return 0;
}

/* The solver may change on resume, the fluid may not. */
static int changed_def(void) {
    pbf_world *w = make_world(1, PBF_NEIGHBOR_LIST);
    ENSURE(w != NULL);
    ENSURE(step_n(w, 2) == 0);
    char err[PBF_ERROR_SIZE];
    const char *path = tmp_path("def.pbfck");
    ENSURE(pbf_checkpoint_save(w, path, NULL, 0, err, sizeof err) == PBF_OK);
    pbf_checkpoint *ck = NULL;
    ENSURE(pbf_checkpoint_open(path, &ck, err, sizeof err) == PBF_OK);
    pbf_world_def d = *pbf_checkpoint_def(ck);
    d.substeps = 6;
    d.solver.iterations = 7;
    pbf_world *r = NULL;
    ENSURE(pbf_checkpoint_create_world(ck, &d, &r, err, sizeof err) == PBF_OK);
    ENSURE(pbf_world_get_def(r)->substeps == 6);
    ENSURE(step_n(r, 1) == 0);
    pbf_world_destroy(r);
    d = *pbf_checkpoint_def(ck);
    d.particle_radius *= 1.5f;
    ENSURE(pbf_checkpoint_create_world(ck, &d, &r, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(r == NULL);
    ENSURE(strstr(err, "particle_radius") != NULL && strstr(err, path) != NULL);
    d = *pbf_checkpoint_def(ck);
    d.wall_motion[PBF_WALL_X_MAX].period = 2.0f;
    ENSURE(pbf_checkpoint_create_world(ck, &d, &r, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "wall_motion[x_max]") != NULL);
    d = *pbf_checkpoint_def(ck);
    d.solver.iterations = 0; /* and the world's own validation still runs */
    ENSURE(pbf_checkpoint_create_world(ck, &d, &r, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(strstr(err, "solver.iterations") != NULL);
    pbf_checkpoint_close(ck);
    pbf_world_destroy(w);
    return 0;
}

/* ---- damaged files ----------------------------------------------------------------------- */

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc((size_t)n + 1);
    if (d != NULL && fread(d, 1, (size_t)n, f) != (size_t)n) {
        free(d);
        d = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return d;
}

static int write_file(const char *path, const void *d, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) return -1;
    size_t w = fwrite(d, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* Opens path (and creates the world) and expects status want with every substring in err. */
static int expect_refused(const char *path, pbf_status want, const char *s1, const char *s2) {
    pbf_checkpoint *ck = NULL;
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    pbf_status st = pbf_checkpoint_open(path, &ck, err, sizeof err);
    if (st == PBF_OK) {
        st = pbf_checkpoint_create_world(ck, NULL, &w, err, sizeof err);
        pbf_checkpoint_close(ck);
        pbf_world_destroy(w);
    } else if (ck != NULL) {
        fprintf(stderr, "  open failed but returned a checkpoint\n");
        return 1;
    }
    if (st != want || strstr(err, path) == NULL || (s1 && !strstr(err, s1)) ||
        (s2 && !strstr(err, s2))) {
        fprintf(stderr, "  %s: status %s (want %s): %s\n", path, pbf_status_string(st),
                pbf_status_string(want), err);
        return 1;
    }
    return 0;
}

static uint32_t rd32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr32(unsigned char *p, uint32_t u) {
    for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(u >> (8 * i));
}

/* Offset of a section's header in the file, or 0. */
static size_t find_section(const unsigned char *d, size_t size, const char *tag) {
    size_t at = rd32(d + 12);
    uint32_t count = rd32(d + 16);
    for (uint32_t s = 0; s < count && at + 24 <= size; ++s) {
        uint64_t payload = (uint64_t)rd32(d + at + 16) | (uint64_t)rd32(d + at + 20) << 32;
        if (strncmp((const char *)d + at, tag, 8) == 0) return at;
        at += 24 + (size_t)payload + 4;
    }
    return 0;
}

/* Recomputes a section's CRC (after an edit of its payload): a crafted but consistent file. */
static void fix_crc(unsigned char *d, size_t at) {
    uint64_t payload = (uint64_t)rd32(d + at + 16) | (uint64_t)rd32(d + at + 20) << 32;
    size_t span = 24 + (size_t)payload;
    wr32(d + at + span, (uint32_t)crc32(0L, d + at, (uInt)span));
}

static void fix_header_crc(unsigned char *d) { wr32(d + 28, (uint32_t)crc32(0L, d, 28)); }

/* An older version's file made from a version-8 file: version 7 has no wall_clearance and kernel
 * (WORLDDEF's last 8 bytes); version 6 no scorr_ratio either (the 4 before it); version 5 no
 * wall_no_slip either (the 4 before it); version 4 no phases either (the 100 bytes before them,
 * PARTICLE's last byte per particle); version 3 no viscosity and drag either (the 16 bytes before
 * the phases); version 2 has no material fields in WORLDDEF (12 bytes more) nor adhesion and
 * friction in each COLLIDER (the last 8 of its 64 bytes); version 1 has no scorr_deficit and
 * scorr_iterations either (WORLDDEF's 4 bytes equal to mark, found by their distinctive value
 * rather than by a hard-coded offset, and the 4 after them). Sections are copied in order with
 * their CRCs recomputed. Returns the new file (malloc) and its size, or NULL. */
static unsigned char *downgrade(const unsigned char *d, size_t size, uint32_t version,
                                const unsigned char *mark, size_t *out_size) {
    unsigned char *e = malloc(size);
    if (!e) return NULL;
    memcpy(e, d, 32);
    wr32(e + 8, version);
    size_t at = 32, to = 32;
    uint32_t count = rd32(d + 16);
    for (uint32_t k = 0; k < count && at + 24 <= size; ++k) {
        size_t n = (size_t)rd32(d + at + 16), from = at + 24, len = 0;
        memcpy(e + to, d + at, 24);
        unsigned char *out = e + to + 24;
        if (strncmp((const char *)d + at, "WORLDDEF", 8) == 0) {
            size_t keep = n - (version <= 11 ? 4 : 0) - (version <= 10 ? 4 : 0) - (version <= 9 ? 4 : 0) -
                          (version <= 8 ? 4 : 0) - (version <= 7 ? 8 : 0) - (version <= 6 ? 4 : 0) -
                          (version <= 5 ? 4 : 0) - (version <= 4 ? 100 : 0) -
                          (version <= 3 ? 16 : 0) - (version <= 2 ? 12 : 0);
            for (size_t q = 0; q + 4 <= keep; q += 4) {
                if (version == 1 && memcmp(d + from + q, mark, 4) == 0) {
                    q += 4; /* and scorr_iterations after it */
                    continue;
                }
                memcpy(out + len, d + from + q, 4);
                len += 4;
            }
        } else if (version <= 8 && strncmp((const char *)d + at, "PARTICLE", 8) == 0) {
            /* the last columns: the phases (version 5) and d_prev (version 9) */
            len = n - 12 * rd32(d + from) - (version <= 4 ? rd32(d + from) : 0);
            memcpy(out, d + from, len);
        } else if (version <= 2 && strncmp((const char *)d + at, "COLLIDER", 8) == 0) {
            uint32_t colliders = rd32(d + from);
            memcpy(out, d + from, 4);
            len = 4;
            for (uint32_t c = 0; c < colliders; ++c, len += 56)
                memcpy(out + len, d + from + 4 + 64 * c, 56);
        } else {
            memcpy(out, d + from, n);
            len = n;
        }
        wr32(e + to + 16, (uint32_t)len);
        wr32(e + to + 20, 0);
        fix_crc(e, to);
        at += 24 + n + 4;
        to += 24 + len + 4;
    }
    fix_header_crc(e);
    *out_size = to;
    return e;
}

/* A version-1 file (no scorr_deficit or scorr_iterations, no materials) is read with both 0, the
 * s_corr it ran with, and the materials off; a version-2 file with its s_corr fields and the
 * materials off; a version-3 file with its materials and the viscosity and drag off; a
 * version-4 file with its viscosity and drag, as one fluid; a version-5 file with its phases
 * and the walls slipping; a version-6 file with its no-slip walls and s_corr's fixed k; a
 * version-7 file with its s_corr ratio, the walls' clearance 1 and the paper's kernel pair; a
 * version-8 file with its clearance and kernel pair, without the impulse blend (β 0); a
 * version-9 file with its impulse blend and plain passes; a version-10 file with its step
 * weights and s_corr reaching the rest spacing; a version-11 file with its s_corr reach and
 * without the Wendland pair's core (tests/test_kernel_core.c saves and reads one). */
static int reads_older_versions(void) {
    pbf_world *w = make_world(1, PBF_NEIGHBOR_LIST);
    ENSURE(w != NULL);
    ENSURE(step_n(w, 2) == 0);
    pbf_world_def def = *pbf_world_get_def(w);
    def.solver.scorr_deficit = 0.0371f;
    def.solver.scorr_iterations = 7;
    def.material.surface_tension = 0.02f;
    def.material.viscosity = 0.5f;
    def.material.surface_drag = 3.0f;
    def.wall_no_slip = 1;
    def.solver.scorr_ratio = 6.6f;
    def.wall_clearance = 0.25f;
    def.solver.impulse_blend = 0.35f;
    def.solver.step_weights = PBF_STEP_WEIGHTS_CHEBYSHEV;
    def.solver.scorr_reach = 0.8f;

    char err[PBF_ERROR_SIZE];
    const char *path = tmp_path("current.pbfck"), *old = tmp_path("old.pbfck");
    pbf_world *r = round_trip(w, path, &def); /* a world with the marked def, saved again */
    ENSURE(r != NULL);
    ENSURE(pbf_checkpoint_save(r, path, NULL, 0, err, sizeof err) == PBF_OK);
    pbf_world_destroy(r);
    size_t size = 0;
    unsigned char *d = read_file(path, &size);
    ENSURE(d != NULL);
    size_t at = find_section(d, size, "WORLDDEF");
    ENSURE(at > 0 && rd32(d + at + 16) == 368);
    pbf_checkpoint *cur = NULL; /* the current version keeps the newest fields */
    ENSURE(pbf_checkpoint_open(path, &cur, err, sizeof err) == PBF_OK);
    ENSURE(pbf_checkpoint_def(cur)->solver.scorr_ratio == 6.6f &&
           pbf_checkpoint_def(cur)->wall_no_slip == 1 &&
           pbf_checkpoint_def(cur)->wall_clearance == 0.25f &&
           pbf_checkpoint_def(cur)->solver.impulse_blend == 0.35f &&
           pbf_checkpoint_def(cur)->solver.step_weights == PBF_STEP_WEIGHTS_CHEBYSHEV &&
           pbf_checkpoint_def(cur)->solver.scorr_reach == 0.8f);
    pbf_checkpoint_close(cur);
    unsigned char mark[4];
    memcpy(mark, &def.solver.scorr_deficit, 4);
    for (uint32_t version = 1; version <= 11; ++version) {
        size_t old_size = 0;
        unsigned char *e = downgrade(d, size, version, mark, &old_size);
        ENSURE(e != NULL);
        at = find_section(e, old_size, "WORLDDEF");
        ENSURE(at > 0 && rd32(e + at + 16) == (version == 1   ? 200u
                                               : version == 2 ? 208u
                                               : version == 3 ? 220u
                                               : version == 4 ? 236u
                                               : version == 5 ? 336u
                                               : version == 6 ? 340u
                                               : version == 7 ? 344u
                                               : version == 8 ? 352u
                                               : version == 9 ? 356u
                                               : version == 10 ? 360u
                                                               : 364u));
        ENSURE(write_file(old, e, old_size) == 0);
        free(e);
        pbf_checkpoint *ck = NULL;
        ENSURE(pbf_checkpoint_open(old, &ck, err, sizeof err) == PBF_OK);
        const pbf_world_def *got = pbf_checkpoint_def(ck);
        ENSURE(got->solver.scorr_deficit == (version == 1 ? 0.0f : def.solver.scorr_deficit));
        ENSURE(got->solver.scorr_iterations == (version == 1 ? 0 : def.solver.scorr_iterations));
        ENSURE(got->solver.scorr_k == def.solver.scorr_k &&
               got->solver.vorticity == def.solver.vorticity);
        ENSURE(got->solver.xsph == def.solver.xsph && got->solver.cfl == def.solver.cfl);
        ENSURE(got->threads == def.threads);
        ENSURE(got->material.surface_tension == (version >= 3 ? 0.02f : 0.0f) &&
               got->wall_adhesion == 0.0f && got->wall_friction == 0.0f);
        ENSURE(got->material.viscosity == (version >= 4 ? 0.5f : 0.0f) &&
               got->material.surface_drag == (version >= 4 ? 3.0f : 0.0f) &&
               got->material.viscosity_iterations == 100 && got->phase_count == 0 &&
               got->wall_no_slip == (version >= 6 ? 1 : 0) &&
               got->solver.scorr_ratio == (version >= 7 ? 6.6f : 0.0f) &&
               got->wall_clearance == (version >= 8 ? 0.25f : 1.0f) &&
               got->kernel == (version >= 8 ? def.kernel : PBF_KERNEL_PAPER) &&
               got->solver.impulse_blend == (version >= 9 ? 0.35f : 0.0f) &&
               got->solver.step_weights ==
                   (version >= 10 ? PBF_STEP_WEIGHTS_CHEBYSHEV : PBF_STEP_WEIGHTS_PLAIN) &&
               got->solver.scorr_reach == (version >= 11 ? 0.8f : 1.0f) &&
               got->kernel_core == 0.0f);
        pbf_world *c = NULL;
        ENSURE(pbf_checkpoint_create_world(ck, NULL, &c, err, sizeof err) == PBF_OK);
        ENSURE(pbf_world_collider_count(c) == 1);
        pbf_collider_def cd = pbf_world_get_collider(c, 0);
        ENSURE(cd.radius == 0.08f && cd.adhesion == 0.0f && cd.friction == 0.0f);
        pbf_world_destroy(c);
        pbf_checkpoint_close(ck);
    }
    free(d);
    pbf_world_destroy(w);
    return 0;
}

static int damaged_files_are_refused(void) {
    pbf_world *w = make_world(1, PBF_NEIGHBOR_LIST);
    ENSURE(w != NULL);
    ENSURE(step_n(w, 3) == 0);
    const char *good = tmp_path("good.pbfck");
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_checkpoint_save(w, good, "app", 3, err, sizeof err) == PBF_OK);
    size_t size = 0;
    unsigned char *d = read_file(good, &size);
    ENSURE(d != NULL && size > 1000);
    unsigned char *e = malloc(size + 64);
    ENSURE(e != NULL);
    const char *bad = tmp_path("bad.pbfck");

    /* missing */
    ENSURE(expect_refused(tmp_path("none.pbfck"), PBF_ERR_IO, "cannot open", NULL) == 0);
    /* foreign: a PLY file, a JSON file, an empty file */
    pbf_particles p;
    ENSURE(pbf_particles_from_world(w, &p, NULL, 0) == PBF_OK);
    ENSURE(pbf_export_write(&p, PBF_FORMAT_PLY, bad, err, sizeof err) == PBF_OK);
    pbf_particles_free(&p);
    ENSURE(expect_refused(bad, PBF_ERR_PARSE, "not a pbf checkpoint", "ply") == 0);
    ENSURE(write_file(bad, "{\"name\": \"x\"}\n", 14) == 0);
    ENSURE(expect_refused(bad, PBF_ERR_PARSE, "not a pbf checkpoint", NULL) == 0);
    ENSURE(write_file(bad, "", 0) == 0);
    ENSURE(expect_refused(bad, PBF_ERR_PARSE, "empty", NULL) == 0);

    /* one flipped bit in each section's payload, and in the header */
    const char *tags[] = {"WORLDDEF", "STATE", "COLLIDER", "PARTICLE", "APPDATA"};
    for (size_t t = 0; t < sizeof tags / sizeof tags[0]; ++t) {
        size_t at = find_section(d, size, tags[t]);
        ENSURE(at != 0);
        memcpy(e, d, size);
        e[at + 24 + 2] ^= 0x10;
        ENSURE(write_file(bad, e, size) == 0);
        char want[64];
        snprintf(want, sizeof want, "checksum mismatch in section '%s'", tags[t]);
        ENSURE(expect_refused(bad, PBF_ERR_PARSE, want, "corrupt") == 0);
    }
    memcpy(e, d, size);
    e[17] ^= 1; /* the section count */
    ENSURE(write_file(bad, e, size) == 0);
    ENSURE(expect_refused(bad, PBF_ERR_PARSE, "checksum mismatch in the header", NULL) == 0);

    /* cut short anywhere: every length up to 600 bytes, then every 97th */
    for (size_t n = 0; n < size; n += n < 600 ? 1 : 97) {
        ENSURE(write_file(bad, d, n) == 0);
        pbf_checkpoint *ck = NULL;
        pbf_status st = pbf_checkpoint_open(bad, &ck, err, sizeof err);
        if (st == PBF_OK || ck != NULL || strstr(err, bad) == NULL) {
            fprintf(stderr, "  cut at %zu: %s\n", n, err);
            ENSURE(0);
        }
        if (n >= 32) ENSURE(strstr(err, "truncated") != NULL);
    }
    /* bytes after the end */
    memcpy(e, d, size);
    memcpy(e + size, "junk", 4);
    ENSURE(write_file(bad, e, size + 4) == 0);
    ENSURE(expect_refused(bad, PBF_ERR_PARSE, "4 bytes after the last section", NULL) == 0);

    /* a newer format version */
    memcpy(e, d, size);
    wr32(e + 8, PBF_CHECKPOINT_VERSION + 1);
    fix_header_crc(e);
    ENSURE(write_file(bad, e, size) == 0);
    char newer[64], reads[64];
    snprintf(newer, sizeof newer, "version %d", PBF_CHECKPOINT_VERSION + 1);
    snprintf(reads, sizeof reads, "reads version %d", PBF_CHECKPOINT_VERSION);
    ENSURE(expect_refused(bad, PBF_ERR_UNSUPPORTED, newer, reads) == 0);

    /* a later version's sections: an optional one is skipped, a required one refused */
    for (int required = 0; required < 2; ++required) {
        memcpy(e, d, size);
        unsigned char *s = e + size;
        memset(s, 0, 24);
        memcpy(s, "FUTURE", 6);
        wr32(s + 8, (uint32_t)required);
        wr32(s + 16, 4);
        memcpy(s + 24, "abcd", 4);
        fix_crc(e, size);
        wr32(e + 16, rd32(e + 16) + 1);
        fix_header_crc(e);
        ENSURE(write_file(bad, e, size + 24 + 4 + 4) == 0);
        if (required) {
            ENSURE(expect_refused(bad, PBF_ERR_UNSUPPORTED, "'FUTURE' is required", NULL) == 0);
        } else {
            pbf_checkpoint *ck = NULL;
            pbf_world *r = NULL;
            ENSURE(pbf_checkpoint_open(bad, &ck, err, sizeof err) == PBF_OK);
            ENSURE(pbf_checkpoint_create_world(ck, NULL, &r, err, sizeof err) == PBF_OK);
            ENSURE(pbf_world_hash(r) == pbf_world_hash(w));
            pbf_checkpoint_close(ck);
            pbf_world_destroy(r);
        }
    }

    /* consistent checksums, inconsistent state */
    size_t part = find_section(d, size, "PARTICLE");
    const int n = pbf_world_particle_count(w);
    ENSURE(part != 0 && n > 2);
    const size_t x0 = part + 24 + 4, v0 = x0 + 12 * (size_t)n, ids0 = v0 + 16 * (size_t)n;
    memcpy(e, d, size); /* a repeated id */
    memcpy(e + ids0, e + ids0 + 4, 4);
    fix_crc(e, part);
    ENSURE(write_file(bad, e, size) == 0);
    ENSURE(expect_refused(bad, PBF_ERR_PARSE, "not a permutation", NULL) == 0);
    memcpy(e, d, size); /* a NaN position */
    wr32(e + x0 + 4, 0x7fc00000u);
    fix_crc(e, part);
    ENSURE(write_file(bad, e, size) == 0);
    ENSURE(expect_refused(bad, PBF_ERR_PARSE, "non-finite position", NULL) == 0);
    memcpy(e, d, size); /* one velocity changed by one bit: the state hash catches it */
    e[v0] ^= 1;
    fix_crc(e, part);
    ENSURE(write_file(bad, e, size) == 0);
    ENSURE(expect_refused(bad, PBF_ERR_PARSE, "hash", NULL) == 0);
    memcpy(e, d, size); /* an absurd particle count */
    wr32(e + part + 24, 0x7fffffffu);
    fix_crc(e, part);
    ENSURE(write_file(bad, e, size) == 0);
    ENSURE(expect_refused(bad, PBF_ERR_PARSE, "PARTICLE", NULL) == 0);

    /* the good file is still good */
    pbf_checkpoint *ck = NULL;
    ENSURE(pbf_checkpoint_open(good, &ck, err, sizeof err) == PBF_OK);
    pbf_checkpoint_close(ck);
    free(d);
    free(e);
    pbf_world_destroy(w);
    return 0;
}

/* Saving into a folder that does not exist, and onto a full disk (a file size limit makes
 * writes fail like ENOSPC): a clear error, the previous checkpoint intact, no temporary file. */
static int failed_save_keeps_previous(void) {
    pbf_world *w = make_world(1, PBF_NEIGHBOR_LIST);
    ENSURE(w != NULL);
    char err[PBF_ERROR_SIZE];
    const char *nowhere = tmp_path("no/such/folder/x.pbfck");
    ENSURE(pbf_checkpoint_save(w, nowhere, NULL, 0, err, sizeof err) == PBF_ERR_IO);
    ENSURE(strstr(err, nowhere) != NULL && strstr(err, "No such file") != NULL);

    const char *path = tmp_path("keep.pbfck");
    ENSURE(pbf_checkpoint_save(w, path, NULL, 0, err, sizeof err) == PBF_OK);
    const uint64_t before = pbf_world_hash(w);
    ENSURE(step_n(w, 2) == 0);
    struct rlimit old;
    ENSURE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = old;
    small.rlim_cur = 4096;
    ENSURE(setrlimit(RLIMIT_FSIZE, &small) == 0);
    pbf_status st = pbf_checkpoint_save(w, path, NULL, 0, err, sizeof err);
    ENSURE(setrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, prev);
    ENSURE(st == PBF_ERR_IO);
    ENSURE(strstr(err, path) != NULL && strstr(err, "File too large") != NULL);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    ENSURE(access(tmp, F_OK) != 0);
    pbf_checkpoint *ck = NULL;
    pbf_world *r = NULL;
    ENSURE(pbf_checkpoint_open(path, &ck, err, sizeof err) == PBF_OK);
    ENSURE(pbf_checkpoint_create_world(ck, NULL, &r, err, sizeof err) == PBF_OK);
    ENSURE(pbf_world_hash(r) == before);
    pbf_checkpoint_close(ck);
    pbf_world_destroy(r);
    pbf_world_destroy(w);
    return 0;
}

/* The same on the CUDA backend where one is built and a device is present (skipped otherwise):
 * the host arrays of a CUDA world are a cache that the save must pull and the restore push. */
static int resume_on_cuda(void) {
    pbf_world *a = make_world_on(2, PBF_NEIGHBOR_LIST, PBF_BACKEND_CUDA);
    if (a == NULL) {
        printf("  skipped: no CUDA backend or device here\n");
        return 0;
    }
    ENSURE(step_n(a, 20) == 0);
    const uint64_t want = pbf_world_hash(a);
    pbf_world *b = make_world_on(2, PBF_NEIGHBOR_LIST, PBF_BACKEND_CUDA);
    ENSURE(b != NULL);
    ENSURE(step_n(b, 8) == 0);
    pbf_world *c = round_trip(b, tmp_path("cuda.pbfck"), NULL);
    ENSURE(c != NULL);
    ENSURE(pbf_world_get_def(c)->backend == PBF_BACKEND_CUDA);
    ENSURE(pbf_world_hash(c) == pbf_world_hash(b));
    ENSURE(step_n(c, 12) == 0);
    ENSURE(pbf_world_hash(c) == want);
    pbf_world_destroy(a);
    pbf_world_destroy(b);
    pbf_world_destroy(c);
    return 0;
}

/* An empty world and one with no colliders are states too. */
static int empty_world(void) {
    pbf_world_def d = pbf_default_world_def();
    pbf_world *w = NULL;
    ENSURE(pbf_world_create(&d, &w, NULL, 0) == PBF_OK);
    ENSURE(step_n(w, 2) == 0);
    pbf_world *r = round_trip(w, tmp_path("empty.pbfck"), NULL);
    ENSURE(r != NULL);
    ENSURE(pbf_world_particle_count(r) == 0 && pbf_world_time(r) == pbf_world_time(w));
    pbf_world_destroy(r);
    pbf_world_destroy(w);
    return 0;
}

static void remove_dir(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

TEST_MAIN_BEGIN
const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
snprintf(dir, sizeof dir, "%s/pbf_checkpoint_XXXXXX", tmpdir);
if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 1;
}
RUN_TEST(resume_is_bit_identical);
RUN_TEST(resume_is_bit_identical_cells);
RUN_TEST(slot_order_matters);
RUN_TEST(resume_with_tool);
RUN_TEST(app_data_round_trip);
RUN_TEST(changed_def);
RUN_TEST(reads_older_versions);
RUN_TEST(damaged_files_are_refused);
RUN_TEST(failed_save_keeps_previous);
RUN_TEST(empty_world);
RUN_TEST(resume_on_cuda);
remove_dir();
TEST_MAIN_END
