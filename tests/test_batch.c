/* Many small worlds stepped together (include/pbf/batch.h): each world of a batch ends
 * bit-identical to the same world built from the scene with its parameters by hand and stepped
 * alone, with 1 thread and with the default threads; errors name the world. */
#include "pbf/batch.h"
#include "test.h"
#include "world_state.h" /* to break one world on purpose (a NaN position) */

/* A small tank with a kinematic tool on a path above the water: 512 particles. */
static const char scene_json[] =
    "{\"name\": \"batch_test\","
    " \"domain\": {\"min\": [0, 0, 0], \"max\": [0.3, 0.3, 0.3]},"
    " \"fluid\": {\"particle_radius\": 0.01, \"blocks\": [{\"min\": [0, 0, 0],"
    "   \"max\": [0.16, 0.16, 0.16], \"seed\": 5}]},"
    " \"tool\": {\"radius\": 0.03, \"damping\": 50,"
    "   \"path\": {\"keys\": [{\"time\": 0, \"position\": [0.2, 0.22, 0.15]},"
    "                     {\"time\": 1, \"position\": [0.2, 0.12, 0.15]}]}},"
    " \"solver\": {\"threads\": 2},"
    " \"time\": {\"fps\": 60, \"substeps\": 2},"
    " \"output\": {\"format\": []}}";

#define WORLDS 4
#define STEPS 6

static int load(pbf_scene *s, const char *json) {
    char err[PBF_ERROR_SIZE];
    if (pbf_scene_parse(json, "<batch test>", NULL, 0, s, err, sizeof err) != PBF_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    return 0;
}

/* Four worlds that differ in every parameter a batch offers. */
static void make_params(const pbf_scene *s, pbf_batch_params *p) {
    for (int i = 0; i < WORLDS; ++i) p[i] = pbf_batch_default_params(s);
    p[1].seed = 7, p[1].jitter = 0.3f;
    p[2].gravity = (pbf_vec3){1.5f, -9.81f, -0.5f};
    p[2].xsph = 0.1f;
    p[3].vorticity = 0.2f, p[3].viscosity = 1e-3f;
    p[3].tool_position = (pbf_vec3){0.1f, 0.24f, 0.2f};
}

/* World i built by hand: the scene with the values of make_params written into it. */
static pbf_world *alone(const pbf_scene *base, int i, int threads) {
    static pbf_scene s;
    s = *base;
    s.world.threads = threads;
    if (i == 1) s.blocks[0].seed = 5 + 7, s.blocks[0].jitter = 0.3f;
    if (i == 2) s.world.gravity = (pbf_vec3){1.5f, -9.81f, -0.5f}, s.world.solver.xsph = 0.1f;
    if (i == 3) {
        s.world.solver.vorticity = 0.2f, s.world.material.viscosity = 1e-3f;
        /* the tool and its path moved by the difference of the two starts */
        const pbf_vec3 to = {0.1f, 0.24f, 0.2f}, from = s.tool.keys[0].position;
        s.tool.position = to;
        for (int k = 0; k < 2; ++k) {
            s.tool.keys[k].position.x += to.x - from.x;
            s.tool.keys[k].position.y += to.y - from.y;
            s.tool.keys[k].position.z += to.z - from.z;
        }
    }
    pbf_world *w = NULL;
    char err[PBF_ERROR_SIZE];
    if (pbf_scene_create_world(&s, &w, err, sizeof err) != PBF_OK) fprintf(stderr, "%s\n", err);
    return w;
}

static int each_world_equals_it_alone(void) {
    static pbf_scene s;
    ENSURE(load(&s, scene_json) == 0);
    pbf_batch_params p[WORLDS];
    make_params(&s, p);
    pbf_world_batch *b = NULL;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_world_batch_create(&s, WORLDS, p, &b, err, sizeof err) == PBF_OK);
    ENSURE(pbf_world_batch_count(b) == WORLDS);
    const int n = pbf_world_batch_particle_count(b);
    ENSURE(n == 512);
    const size_t per = (size_t)3 * n;
    float *x = malloc(sizeof(float) * per * WORLDS), *v = malloc(sizeof(float) * per * WORLDS);
    float *xa = malloc(sizeof(float) * per), *va = malloc(sizeof(float) * per);
    ENSURE(x != NULL && v != NULL && xa != NULL && va != NULL);
    for (int k = 0; k < STEPS; ++k) ENSURE(pbf_world_batch_step(b, 1.0f / 60.0f) == PBF_OK);
    pbf_world_batch_get_positions(b, x);
    pbf_world_batch_get_velocities(b, v);
    pbf_tool_state tools[WORLDS];
    pbf_world_batch_get_tool_states(b, tools);
    for (int i = 0; i < WORLDS; ++i) {
        ENSURE(pbf_world_batch_status(b, i) == PBF_OK);
        for (int threads = 0; threads <= 3; threads += 1) { /* 0: the OpenMP default */
            if (threads == 2) continue;
            pbf_world *w = alone(&s, i, threads);
            ENSURE(w != NULL);
            for (int k = 0; k < STEPS; ++k) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
            ENSURE(pbf_world_particle_count(w) == n);
            pbf_world_get_positions(w, xa);
            pbf_world_get_velocities(w, va);
            ENSURE(memcmp(xa, x + per * i, sizeof(float) * per) == 0);
            ENSURE(memcmp(va, v + per * i, sizeof(float) * per) == 0);
            ENSURE(pbf_world_hash(w) == pbf_world_hash(pbf_world_batch_world(b, i)));
            pbf_tool_state t = pbf_tool_get_state(w);
            ENSURE(memcmp(&t.total, &tools[i].total, sizeof t.total) == 0);
            ENSURE(memcmp(&t.position, &tools[i].position, sizeof t.position) == 0);
            pbf_world_destroy(w);
        }
    }
    /* the parameters took effect: no two worlds are alike */
    for (int i = 0; i < WORLDS; ++i)
        for (int j = i + 1; j < WORLDS; ++j)
            ENSURE(memcmp(x + per * i, x + per * j, sizeof(float) * per) != 0);
    ENSURE_NEAR(tools[3].position.x, 0.1, 1e-6);
    ENSURE_NEAR(tools[0].position.x, 0.2, 1e-6);
    free(x), free(v), free(xa), free(va);
    pbf_world_batch_destroy(b);
    return 0;
}

/* No parameters: every world is the scene's own, and a batch of one thread gives the same. */
static int default_params_are_the_scene(void) {
    static pbf_scene s;
    ENSURE(load(&s, scene_json) == 0);
    pbf_world_batch *b2 = NULL, *b1 = NULL;
    ENSURE(pbf_world_batch_create(&s, 3, NULL, &b2, NULL, 0) == PBF_OK);
    s.world.threads = 1;
    ENSURE(pbf_world_batch_create(&s, 3, NULL, &b1, NULL, 0) == PBF_OK);
    pbf_world *w = alone(&s, 0, 0);
    ENSURE(w != NULL);
    for (int k = 0; k < 3; ++k) {
        ENSURE(pbf_world_batch_step(b2, 1.0f / 60.0f) == PBF_OK);
        ENSURE(pbf_world_batch_step(b1, 1.0f / 60.0f) == PBF_OK);
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    }
    for (int i = 0; i < 3; ++i) {
        ENSURE(pbf_world_hash(pbf_world_batch_world(b2, i)) == pbf_world_hash(w));
        ENSURE(pbf_world_hash(pbf_world_batch_world(b1, i)) == pbf_world_hash(w));
    }
    pbf_world_destroy(w);
    pbf_world_batch_destroy(b1);
    pbf_world_batch_destroy(b2);
    return 0;
}

static int has(const char *s, const char *part) { return strstr(s, part) != NULL; }

static int bad_input_is_named(void) {
    static pbf_scene s;
    ENSURE(load(&s, scene_json) == 0);
    pbf_world_batch *b = (pbf_world_batch *)&s; /* must come back NULL */
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_world_batch_create(&s, 0, NULL, &b, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(b == NULL && has(err, "count must be in [1, 1000000], got 0"));
    ENSURE(pbf_world_batch_create(&s, -3, NULL, &b, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(pbf_world_batch_create(NULL, 2, NULL, &b, err, sizeof err) == PBF_ERR_INVALID_ARG);
    pbf_batch_params p[3];
    for (int i = 0; i < 3; ++i) p[i] = pbf_batch_default_params(&s);
    p[2].jitter = 0.7f;
    ENSURE(pbf_world_batch_create(&s, 3, p, &b, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(b == NULL && has(err, "world 2: params.jitter must be in [0, 0.5]"));
    p[2].jitter = -1.0f;
    p[1].xsph = 2.0f; /* the world's own check, prefixed with the world */
    ENSURE(pbf_world_batch_create(&s, 3, p, &b, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(b == NULL && has(err, "world 1: ") && has(err, "xsph"));
    p[1].xsph = 0.01f;
    p[0].gravity.y = NAN;
    ENSURE(pbf_world_batch_create(&s, 3, p, &b, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(has(err, "world 0: params.gravity must be finite"));
    /* flow features would give the worlds different counts */
    static pbf_scene f;
    ENSURE(load(&f, "{\"fluid\": {\"blocks\": [{\"max\": [0.1, 0.1, 0.1]}]},"
                    " \"flow\": {\"sinks\": [{\"min\": [0.9, 0, 0], \"max\": [1, 1, 1]}]},"
                    " \"output\": {\"format\": []}}") == 0);
    ENSURE(pbf_world_batch_create(&f, 2, NULL, &b, err, sizeof err) == PBF_ERR_UNSUPPORTED);
    ENSURE(b == NULL && has(err, "flow.emitters and flow.sinks"));
    s.world.backend = PBF_BACKEND_CUDA;
    ENSURE(pbf_world_batch_create(&s, 2, NULL, &b, err, sizeof err) == PBF_ERR_UNSUPPORTED);
    ENSURE(has(err, "world.backend must be cpu"));
    return 0;
}

/* One world blows up (a NaN position, as a failed constraint leaves): the step names it, the
 * others step on, and a reset builds it again. */
static int an_unstable_world_is_named(void) {
    static pbf_scene s;
    ENSURE(load(&s, scene_json) == 0);
    pbf_world_batch *b = NULL;
    ENSURE(pbf_world_batch_create(&s, 4, NULL, &b, NULL, 0) == PBF_OK);
    ENSURE(pbf_world_batch_step(b, 1.0f / 60.0f) == PBF_OK);
    pbf_world *w2 = pbf_world_batch_world(b, 2);
    w2->x[3 * 10 + 1] = NAN;
    ENSURE(pbf_world_batch_step(b, 1.0f / 60.0f) == PBF_ERR_UNSTABLE);
    const char *e = pbf_world_batch_error(b);
    ENSURE(strncmp(e, "world 2: ", 9) == 0 && has(e, "non-finite"));
    ENSURE(strcmp(e + 9, pbf_world_error(w2)) == 0);
    ENSURE(pbf_world_batch_status(b, 2) == PBF_ERR_UNSTABLE);
    ENSURE(pbf_world_batch_status(b, 1) == PBF_OK && pbf_world_batch_status(b, 3) == PBF_OK);
    const double t2 = pbf_world_time(w2);
    ENSURE(pbf_world_batch_step(b, 1.0f / 60.0f) == PBF_OK); /* the failed one is left alone */
    ENSURE(pbf_world_time(w2) == t2);
    ENSURE_NEAR(pbf_world_time(pbf_world_batch_world(b, 0)), 3.0 / 60.0, 1e-6);
    ENSURE(pbf_world_batch_reset(b, 2, NULL) == PBF_OK);
    ENSURE(pbf_world_batch_status(b, 2) == PBF_OK);
    ENSURE(pbf_world_time(pbf_world_batch_world(b, 2)) == 0.0);
    ENSURE(pbf_world_batch_reset(b, 4, NULL) == PBF_ERR_INVALID_ARG);
    ENSURE(has(pbf_world_batch_error(b), "world must be in [0, 4), got 4"));
    pbf_world_batch_destroy(b);
    return 0;
}

/* The agent's action: a pose per world, each tool goes where it is told. */
static int tool_poses_scatter(void) {
    static pbf_scene s;
    ENSURE(load(&s, scene_json) == 0);
    pbf_world_batch *b = NULL;
    ENSURE(pbf_world_batch_create(&s, 3, NULL, &b, NULL, 0) == PBF_OK);
    float poses[9] = {0.2f, 0.2f, 0.1f, 0.15f, 0.21f, 0.15f, 0.1f, 0.22f, 0.2f};
    ENSURE(pbf_world_batch_set_tool_poses(b, poses) == PBF_OK);
    ENSURE(pbf_world_batch_step(b, 1.0f / 60.0f) == PBF_OK);
    pbf_tool_state t[3];
    pbf_world_batch_get_tool_states(b, t);
    for (int i = 0; i < 3; ++i) {
        ENSURE_NEAR(t[i].position.x, poses[3 * i], 1e-6);
        ENSURE_NEAR(t[i].position.y, poses[3 * i + 1], 1e-6);
        ENSURE_NEAR(t[i].position.z, poses[3 * i + 2], 1e-6);
    }
    poses[4] = NAN;
    ENSURE(pbf_world_batch_set_tool_poses(b, poses) == PBF_ERR_INVALID_ARG);
    ENSURE(strncmp(pbf_world_batch_error(b), "world 1: ", 9) == 0);
    pbf_world_batch_destroy(b);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(each_world_equals_it_alone);
RUN_TEST(default_params_are_the_scene);
RUN_TEST(bad_input_is_named);
RUN_TEST(an_unstable_world_is_named);
RUN_TEST(tool_poses_scatter);
TEST_MAIN_END
