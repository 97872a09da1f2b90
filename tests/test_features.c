/* The table of what runs where (include/pbf/features.h, src/core/caps.c), cell by cell.
 *
 * Every feature has a small world that uses it. For each row:
 *   - CPU (every cell yes): the world runs three steps, stays finite, and pbf_world_features
 *     names the feature: the table's detection is what the refusals read.
 *   - CUDA: a `no` cell, and an `unverified` one unless the user opts in
 *     (PBF_ALLOW_UNVERIFIED=1), is refused with the table's exact message, at world creation for
 *     a feature of the def, or when the feature is added; the same world is built with its def's
 *     backend set to CUDA (a CPU world whose def says CUDA: the checks read only the def, so
 *     this runs without a GPU). A `yes` cell needs a GPU: tests/test_cuda.c compares it with
 *     the CPU there.
 *   - MPI: a `no` cell is refused with the table's exact message for the world's features, as
 *     the split (src/comm/mpi/split.c) asks; the `yes` cells run split in tests/cli/test_mpi.sh.
 * And `pbf features`' cells are the table's (tests/cli/test_features.sh). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include "caps.h"
#include "mesh_files.h"
#include "pbf/diffuse.h"
#include "pbf/flow.h"
#include "pbf/geometry.h"
#include "pbf/probes.h"
#include "test.h"

static char mesh_path[512];

static pbf_world_def small_def(void) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = 0.02f;
    d.domain_max = (pbf_vec3){0.4f, 0.4f, 0.4f};
    d.threads = 1;
    return d;
}

/* The def of a world that uses feature f (the part of it that lives in the def). */
static pbf_world_def def_for(pbf_feature f) {
    pbf_world_def d = small_def();
    switch (f) {
    case PBF_FEATURE_ERROR_CONTROL: d.solver.target_error = 0.1f; break;
    case PBF_FEATURE_WENDLAND: d.kernel = PBF_KERNEL_WENDLAND; break;
    case PBF_FEATURE_SURFACE_TENSION: d.material.surface_tension = 0.07f; break;
    case PBF_FEATURE_ADHESION: d.wall_adhesion = 0.01f; break;
    case PBF_FEATURE_FRICTION: d.wall_friction = 0.5f; break;
    case PBF_FEATURE_VISCOSITY: d.material.viscosity = 1e-3f; break;
    case PBF_FEATURE_SURFACE_DRAG: d.material.surface_drag = 1.0f; break;
    case PBF_FEATURE_PHASES:
        d.phase_count = 2;
        d.phases[0] = pbf_default_phase_def();
        d.phases[1] = pbf_default_phase_def();
        d.phases[1].density = 800.0f;
        break;
    default: break;
    }
    return d;
}

/* Adds the part of feature f that is added to a world; PBF_OK for a feature of the def. */
static pbf_status add_feature(pbf_world *w, pbf_feature f) {
    switch (f) {
    case PBF_FEATURE_TOOL: {
        pbf_tool_def t = pbf_default_tool_def();
        t.radius = 0.05f;
        t.position = (pbf_vec3){0.2f, 0.3f, 0.2f};
        return pbf_world_set_tool(w, &t);
    }
    case PBF_FEATURE_PROBES: {
        pbf_probe_def p = pbf_default_probe_def();
        p.position = (pbf_vec3){0.1f, 0.0f, 0.1f};
        return pbf_world_set_probes(w, &p, 1);
    }
    case PBF_FEATURE_FORCE_PROBES: {
        pbf_probe_def p = pbf_default_probe_def();
        p.type = PBF_PROBE_FORCE;
        p.position = (pbf_vec3){0.2f, 0.0f, 0.2f};
        p.direction = PBF_DIR_Y_POS;
        p.size = (pbf_vec3){0.2f, 0.0f, 0.2f};
        return pbf_world_set_probes(w, &p, 1);
    }
    case PBF_FEATURE_MESHES:
    case PBF_FEATURE_BODIES: {
        pbf_mesh_def m = pbf_default_mesh_def();
        snprintf(m.path, sizeof m.path, "%s", mesh_path);
        m.position = (pbf_vec3){0.3f, 0.3f, 0.3f};
        if (f == PBF_FEATURE_BODIES) {
            m.motion = PBF_MESH_FLOATING;
            m.density = 500.0f;
        }
        return pbf_world_add_mesh(w, &m);
    }
    case PBF_FEATURE_EMITTERS: {
        pbf_status st = pbf_world_set_capacity(w, 4000);
        if (st != PBF_OK) return st;
        pbf_emitter_def e = pbf_default_emitter_def();
        e.position = (pbf_vec3){0.3f, 0.3f, 0.3f};
        e.radius = 0.04f;
        e.speed = 0.5f;
        e.direction = (pbf_vec3){0.0f, -1.0f, 0.0f};
        return pbf_world_add_emitter(w, &e);
    }
    case PBF_FEATURE_SINKS: {
        pbf_sink_def k = pbf_default_sink_def();
        k.min = (pbf_vec3){0.3f, 0.0f, 0.3f};
        k.max = (pbf_vec3){0.4f, 0.1f, 0.4f};
        return pbf_world_add_sink(w, &k);
    }
    case PBF_FEATURE_DIFFUSE: {
        pbf_diffuse_def dd = pbf_default_diffuse_def();
        return pbf_world_enable_diffuse(w, &dd);
    }
    case PBF_FEATURE_ENERGY_AUDIT: return pbf_world_set_energy_audit(w, 1);
    default: return PBF_OK;
    }
}

static int add_block(pbf_world *w) {
    pbf_block_def b = pbf_default_block_def();
    b.max = (pbf_vec3){0.2f, 0.2f, 0.2f};
    return pbf_world_add_block(w, &b) == PBF_OK;
}

/* A world of def d with feature f added: it is detected (with `also`, when not 0), and three
 * steps stay finite. label names the case in a failure's message. */
static int runs_with(const pbf_world_def *d, pbf_feature f, uint32_t also, const char *label) {
    pbf_world_def def = *d;
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_create(&def, &w, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s%s: %s\n", label, pbf_feature_get(f)->name, err);
        return 1;
    }
    ENSURE(add_block(w));
    if (add_feature(w, f) != PBF_OK) {
        fprintf(stderr, "%s%s: %s\n", label, pbf_feature_get(f)->name, pbf_world_error(w));
        pbf_world_destroy(w);
        return 1;
    }
    const uint32_t m = pbf_world_features(w);
    ENSURE((m & (1u << f)) && (m & also) == also);
    for (int s = 0; s < 3; ++s) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    int n = pbf_world_particle_count(w);
    float *x = malloc(3 * (size_t)(n > 0 ? n : 1) * sizeof *x);
    ENSURE(x != NULL);
    pbf_world_get_positions(w, x);
    for (int i = 0; i < 3 * n; ++i) ENSURE(isfinite(x[i]));
    free(x);
    pbf_world_destroy(w);
    return 0;
}

/* The CPU cell: three steps, finite, and the feature detected. */
static int cpu_cell(pbf_feature f) {
    pbf_world_def d = def_for(f);
    return runs_with(&d, f, 0, "");
}

/* The table's message for a refused cell, in msg; 0, or 1 when the cell is not refused. */
static int expected(pbf_feature f, pbf_column c, char *msg, size_t size) {
    ENSURE(pbf_feature_check(f, c, msg, size) == PBF_ERR_UNSUPPORTED);
    return 0;
}

/* A CUDA `no` or `unverified` cell (no opt-in): refused with the table's message where the
 * feature enters the world. */
static int cuda_no_cell(pbf_feature f) {
    char want[PBF_ERROR_SIZE];
    ENSURE(expected(f, PBF_COLUMN_CUDA, want, sizeof want) == 0);
    pbf_world_def d = def_for(f);
    d.backend = PBF_BACKEND_CUDA;
    char err[PBF_ERROR_SIZE];
    if (pbf_world_def_features(&d) & (1u << f)) { /* a feature of the def: refused at creation */
        pbf_world *w = NULL;
        ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_ERR_UNSUPPORTED);
        ENSURE(strcmp(err, want) == 0);
        return 0;
    }
    /* added to a world: a CPU world whose def names the CUDA backend takes the same checks */
    d.backend = PBF_BACKEND_CPU;
    pbf_world *w = NULL;
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
    ENSURE(add_block(w));
    w->def.backend = PBF_BACKEND_CUDA;
    ENSURE(add_feature(w, f) == PBF_ERR_UNSUPPORTED);
    const char *got = pbf_world_error(w);
    /* a mesh's refusal names its file first */
    const char *tail = strstr(got, want);
    ENSURE(tail != NULL && strcmp(tail, want) == 0);
    ENSURE(!(pbf_world_features(w) & (1u << f))); /* nothing of it was added */
    w->def.backend = PBF_BACKEND_CPU;
    pbf_world_destroy(w);
    return 0;
}

/* An MPI `no` cell: the world's features checked against the MPI column as the split does. */
static int mpi_no_cell(pbf_feature f) {
    char want[PBF_ERROR_SIZE];
    ENSURE(expected(f, PBF_COLUMN_MPI, want, sizeof want) == 0);
    pbf_world_def d = def_for(f);
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
    ENSURE(add_block(w));
    ENSURE(add_feature(w, f) == PBF_OK);
    ENSURE(pbf__caps_check(0, pbf_world_features(w), PBF_COLUMN_MPI, err, sizeof err) ==
           PBF_ERR_UNSUPPORTED);
    ENSURE(strcmp(err, want) == 0);
    pbf_world_destroy(w);
    return 0;
}

/* The table's own shape: every row named, every refused cell with a reason that says what to
 * do instead, and the CPU column all yes. */
static int test_table(void) {
    for (int f = 0; f < PBF_FEATURE_COUNT; ++f) {
        const pbf_feature_info *i = pbf_feature_get((pbf_feature)f);
        ENSURE(i != NULL && i->name != NULL && i->name[0] && i->what != NULL && i->what[0]);
        ENSURE(i->support[PBF_COLUMN_CPU] == PBF_SUPPORT_YES);
        for (int c = 0; c < PBF_COLUMN_COUNT; ++c) {
            if (i->support[c] == PBF_SUPPORT_YES)
                ENSURE(i->reason[c][0] == '\0');
            else
                ENSURE(strstr(i->reason[c], "run the scene") != NULL);
        }
    }
    ENSURE(pbf_feature_get(PBF_FEATURE_COUNT) == NULL);
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_feature_check(PBF_FEATURE_COUNT, PBF_COLUMN_CPU, err, sizeof err) ==
           PBF_ERR_INVALID_ARG);
    /* an unverified cell, where the table has one: refused by default, allowed when the user
     * opts in (none since every CUDA cell's parity test passed on a GPU) */
    int unverified = 0;
    for (int f = 0; f < PBF_FEATURE_COUNT; ++f) {
        if (pbf_feature_get((pbf_feature)f)->support[PBF_COLUMN_CUDA] != PBF_SUPPORT_UNVERIFIED)
            continue;
        unverified++;
        unsetenv("PBF_ALLOW_UNVERIFIED");
        ENSURE(pbf_feature_check((pbf_feature)f, PBF_COLUMN_CUDA, err, sizeof err) ==
               PBF_ERR_UNSUPPORTED);
        ENSURE(strstr(err, "PBF_ALLOW_UNVERIFIED=1") != NULL);
        setenv("PBF_ALLOW_UNVERIFIED", "1", 1);
        ENSURE(pbf_feature_check((pbf_feature)f, PBF_COLUMN_CUDA, err, sizeof err) == PBF_OK);
        unsetenv("PBF_ALLOW_UNVERIFIED");
    }
    printf("  %d unverified cells\n", unverified);
    return 0;
}

/* The Wendland pair with each feature once refused beside it (the tool, mesh solids, floating
 * bodies, surface tension, adhesion): accepted, both detected, three finite steps. Their
 * physics with the pair is checked in tests/test_wendland_features.c and
 * test_wendland_meshes.c. */
static int test_wendland_with_every_feature(int meshes) {
    const pbf_feature with[] = {PBF_FEATURE_TOOL, PBF_FEATURE_MESHES, PBF_FEATURE_BODIES,
                                PBF_FEATURE_SURFACE_TENSION, PBF_FEATURE_ADHESION};
    for (size_t k = 0; k < sizeof with / sizeof with[0]; ++k) {
        const pbf_feature f = with[k];
        if (!meshes && (f == PBF_FEATURE_MESHES || f == PBF_FEATURE_BODIES)) continue;
        pbf_world_def d = def_for(f);
        d.kernel = PBF_KERNEL_WENDLAND;
        ENSURE(runs_with(&d, f, 1u << PBF_FEATURE_WENDLAND, "wendland with ") == 0);
    }
    return 0;
}

/* A collider's friction is the wall-friction feature too: a world names it once such a collider
 * is added, and a CUDA world takes it as the table says. */
static int test_collider_friction(void) {
    pbf_world_def d = small_def();
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_world_create(&d, &w, err, sizeof err) == PBF_OK);
    pbf_collider_def c = pbf_default_collider_def();
    c.type = PBF_COLLIDER_SPHERE;
    c.center = (pbf_vec3){0.2f, 0.2f, 0.2f};
    c.radius = 0.05f;
    ENSURE(pbf_world_add_collider(w, &c) == PBF_OK);
    ENSURE(!(pbf_world_features(w) & (1u << PBF_FEATURE_FRICTION)));
    c.friction = 0.5f;
    ENSURE(pbf_world_add_collider(w, &c) == PBF_OK);
    ENSURE(pbf_world_features(w) & (1u << PBF_FEATURE_FRICTION));
    ENSURE(pbf_world_collider_count(w) == 2);
    ENSURE(pbf__caps_check(0, pbf_world_features(w), PBF_COLUMN_CUDA, err, sizeof err) ==
           (pbf_feature_get(PBF_FEATURE_FRICTION)->support[PBF_COLUMN_CUDA] == PBF_SUPPORT_YES
                ? PBF_OK
                : PBF_ERR_UNSUPPORTED));
    pbf_world_destroy(w);
    return 0;
}

int main(void) {
    char dir[256];
    const int meshes = pbf_mesh_import_available();
    if (meshes) {
        if (test_mesh_cache_dir(dir, sizeof dir, "test_features") != 0) return 1;
        const float lo[3] = {-0.04f, -0.04f, -0.04f}, hi[3] = {0.04f, 0.04f, 0.04f};
        test_mesh box = test_mesh_box(lo, hi);
        snprintf(mesh_path, sizeof mesh_path, "%s/box.obj", dir);
        if (test_mesh_write_obj(mesh_path, &box) != 0) return 1;
        test_mesh_free(&box);
    }
    int failed = test_table() + test_wendland_with_every_feature(meshes) + test_collider_friction();
    unsetenv("PBF_ALLOW_UNVERIFIED"); /* the unverified cells are refused below */
    int cells = 0;
    for (int f = 0; f < PBF_FEATURE_COUNT; ++f) {
        const pbf_feature feature = (pbf_feature)f;
        const pbf_feature_info *i = pbf_feature_get(feature);
        if (!meshes && (f == PBF_FEATURE_MESHES || f == PBF_FEATURE_BODIES)) {
            printf("  %-16s skipped: mesh import not built (PBF_MESH=OFF)\n", i->name);
            continue;
        }
        int r = cpu_cell(feature);
        cells++;
        if (i->support[PBF_COLUMN_CUDA] != PBF_SUPPORT_YES) r += cuda_no_cell(feature), cells++;
        if (i->support[PBF_COLUMN_MPI] == PBF_SUPPORT_NO) r += mpi_no_cell(feature), cells++;
        printf("  %-16s cpu %s, cuda %s, mpi %s%s\n", i->name,
               pbf_support_name(i->support[PBF_COLUMN_CPU]),
               pbf_support_name(i->support[PBF_COLUMN_CUDA]),
               pbf_support_name(i->support[PBF_COLUMN_MPI]), r ? "  FAILED" : "");
        failed += r;
    }
    if (meshes) test_mesh_remove_dir(dir);
    printf("test_features: %d cells checked here, %s\n", cells, failed ? "FAILED" : "ok");
    return failed ? 1 : 0;
}
