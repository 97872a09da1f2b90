/* Inlets and outlets (include/pbf/flow.h): the emitters' exact volume rate, sink removal, ids
 * unique and never reused, the read-back after removals, determinism over threads, checkpoint
 * and resume with an active emitter, a full capacity, the tool and probes while the count
 * changes, and bad input named by its key. Each
 * test runs a few hundred particles for about a second of simulated time. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbf/checkpoint.h"
#include "pbf/flow.h"
#include "pbf/probes.h"
#include "pbf/scene.h"
#include "test.h"

#define R 0.02f /* particle radius: spacing s = 0.04 m */

/* A channel 1.2 m long with no fluid, an emitter at x = 0.1 aimed along +x and a sink over the
 * last 0.5 m (past the x_max wall): a few hundred particles alive at any time. */
static pbf_world *channel(int threads, pbf_emitter_shape shape, float speed, int with_sink) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = R;
    d.domain_max = (pbf_vec3){1.2f, 0.4f, 0.4f};
    d.substeps = 2;
    d.threads = threads;
    pbf_world *w = NULL;
    if (pbf_world_create(&d, &w, NULL, 0) != PBF_OK) return NULL;
    pbf_emitter_def e = pbf_default_emitter_def();
    e.shape = shape;
    e.position = (pbf_vec3){0.1f, 0.15f, 0.2f};
    e.direction = (pbf_vec3){1.0f, 0.0f, 0.0f};
    e.speed = speed;
    e.radius = 0.1f; /* disc: area/s² = 19.6, 20 particles a layer */
    e.width = 0.2f; /* rectangle: 5 x 3 = 15 particles a layer */
    e.height = 0.12f;
    pbf_sink_def k = pbf_default_sink_def();
    k.min = (pbf_vec3){0.7f, -1.0f, -1.0f};
    k.max = (pbf_vec3){2.0f, 2.0f, 2.0f};
    if (pbf_world_add_emitter(w, &e) != PBF_OK ||
        (with_sink && pbf_world_add_sink(w, &k) != PBF_OK)) {
        fprintf(stderr, "  %s\n", pbf_world_error(w));
        pbf_world_destroy(w);
        return NULL;
    }
    return w;
}

static int64_t emitted_at(pbf_world *w, double t) {
    while (pbf_world_time(w) < t - 1e-6)
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) return -1;
    return pbf_world_get_flow(w).emitted;
}

/* Volume over one second = speed · area within 1 %, for a disc (area not a whole number of s²)
 * and a rectangle; and the count is exactly n (floor(speed t / pitch) + 1) at every time. */
static int rate_of(pbf_emitter_shape shape, double area) {
    const float speed = 4.0f;
    pbf_world *w = channel(0, shape, speed, 1);
    ENSURE(w != NULL);
    const double s = 2.0 * R, n = pbf_world_emitter_layer_size(w, 0);
    ENSURE(n == ceil(area / (s * s) * (1.0 - 1e-5)));
    int64_t e0 = emitted_at(w, 0.5), e1 = emitted_at(w, 1.5);
    ENSURE(e0 > 0 && e1 > e0);
    double volume = (double)(e1 - e0) * s * s * s, want = speed * area * 1.0;
    printf("  %s: %g particles a layer, %lld emitted in [0.5, 1.5] s: %.6g m^3, asked %.6g m^3 "
           "(%+.2f %%)\n",
           shape == PBF_EMITTER_DISC ? "disc" : "rectangle", n, (long long)(e1 - e0), volume, want,
           100.0 * (volume / want - 1.0));
    ENSURE(fabs(volume / want - 1.0) <= 0.01);
    double pitch = n * s * s * s / area, t = pbf_world_time(w);
    ENSURE((double)e1 == n * (floor(speed * t / pitch * (1.0 + 1e-9)) + 1.0) ||
           (double)e1 == n * (floor(speed * t / pitch * (1.0 - 1e-9)) + 1.0));
    pbf_world_destroy(w);
    return 0;
}

static int emitter_rate_is_speed_times_area(void) {
    if (rate_of(PBF_EMITTER_DISC, 3.14159265358979 * 0.1 * 0.1) != 0) return 1;
    return rate_of(PBF_EMITTER_RECTANGLE, 0.2 * 0.12);
}

static int sorted_unique_below(const int32_t *ids, int n, int32_t limit) {
    for (int i = 0; i < n; ++i)
        if (ids[i] < 0 || ids[i] >= limit || (i > 0 && ids[i] <= ids[i - 1])) return 0;
    return 1;
}

/* A block half inside a sink: one step removes exactly the particles inside; the rest keep
 * their ids and come back in id order. */
static int sink_removes_what_enters(void) {
    pbf_world_def d = pbf_default_world_def();
    d.particle_radius = R;
    d.domain_max = (pbf_vec3){1.0f, 0.5f, 0.4f};
    d.gravity = (pbf_vec3){0.0f, 0.0f, 0.0f};
    pbf_world *w = NULL;
    ENSURE(pbf_world_create(&d, &w, NULL, 0) == PBF_OK);
    pbf_block_def b = pbf_default_block_def();
    b.min = (pbf_vec3){0.2f, 0.0f, 0.0f};
    b.max = (pbf_vec3){0.6f, 0.2f, 0.4f};
    ENSURE(pbf_world_add_block(w, &b) == PBF_OK);
    const int n0 = pbf_world_particle_count(w);
    pbf_sink_def k = pbf_default_sink_def();
    k.min = (pbf_vec3){0.4f, -1.0f, -1.0f}; /* x >= 0.4: half of the block */
    k.max = (pbf_vec3){5.0f, 5.0f, 5.0f};
    ENSURE(pbf_world_add_sink(w, &k) == PBF_OK);
    ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    int n = pbf_world_particle_count(w);
    pbf_flow_state f = pbf_world_get_flow(w);
    printf("  %d particles, %d left, %lld removed\n", n0, n, (long long)f.removed);
    ENSURE(n == n0 / 2);
    ENSURE(f.removed == n0 - n && f.emitted == 0 && f.next_id == n0);
    float *x = malloc(3 * (size_t)n * sizeof *x);
    int32_t *ids = malloc((size_t)n * sizeof *ids);
    ENSURE(x != NULL && ids != NULL);
    pbf_world_get_positions(w, x);
    pbf_world_get_ids(w, ids);
    ENSURE(sorted_unique_below(ids, n, n0));
    /* the block's ids run x fastest: the particles left are those with x < 0.4 */
    for (int i = 0; i < n; ++i) ENSURE(x[3 * i] < 0.4f && ids[i] % 10 < 5);
    free(x);
    free(ids);
    pbf_world_destroy(w);
    return 0;
}

/* Many steps of emitting and removing: ids stay unique, increasing in the read-back, never
 * reused (every id below next_id that left never comes back), and the read-back agrees with
 * the solver's own view slot by slot. */
static int ids_unique_and_never_reused(void) {
    pbf_world *w = channel(0, PBF_EMITTER_DISC, 3.0f, 1);
    ENSURE(w != NULL);
    int cap = 1 << 16;
    unsigned char *gone = calloc((size_t)cap, 1);
    int32_t *ids = malloc((size_t)cap * sizeof *ids), *prev = malloc((size_t)cap * sizeof *prev);
    float *x = malloc(3 * (size_t)cap * sizeof *x);
    ENSURE(gone && ids && prev && x);
    int prev_n = 0, checks = 0;
    for (int step = 0; step < 90; ++step) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        int n = pbf_world_particle_count(w);
        pbf_flow_state f = pbf_world_get_flow(w);
        ENSURE(f.next_id < cap && (int64_t)n == f.emitted - f.removed);
        pbf_world_get_ids(w, ids);
        pbf_world_get_positions(w, x);
        ENSURE(sorted_unique_below(ids, n, f.next_id));
        for (int i = 0; i < n; ++i) ENSURE(!gone[ids[i]]);
        /* the ids of the last step that are missing now have left for good */
        int j = 0;
        for (int i = 0; i < prev_n; ++i) {
            while (j < n && ids[j] < prev[i]) ++j;
            if (j >= n || ids[j] != prev[i]) gone[prev[i]] = 1;
        }
        pbf_particle_view v = pbf_world_view(w);
        for (int s = 0; s < v.count; ++s) {
            int lo = 0, hi = n - 1;
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (ids[mid] < v.ids[s])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            ENSURE(ids[lo] == v.ids[s]);
            ENSURE(memcmp(x + 3 * lo, v.positions + 3 * s, 3 * sizeof(float)) == 0);
            ++checks;
        }
        memcpy(prev, ids, (size_t)n * sizeof *ids);
        prev_n = n;
    }
    pbf_flow_state f = pbf_world_get_flow(w);
    printf("  90 steps: %lld emitted, %lld removed, %d alive, %d slot checks\n",
           (long long)f.emitted, (long long)f.removed, prev_n, checks);
    ENSURE(f.removed > 1000); /* the sink really worked */
    free(gone);
    free(ids);
    free(prev);
    free(x);
    pbf_world_destroy(w);
    return 0;
}

static uint64_t run_hash(int threads, int steps) {
    pbf_world *w = channel(threads, PBF_EMITTER_RECTANGLE, 3.0f, 1);
    if (w == NULL) return 0;
    for (int i = 0; i < steps; ++i)
        if (pbf_world_step(w, 1.0f / 60.0f) != PBF_OK) return 0;
    uint64_t h = pbf_world_hash(w);
    pbf_world_destroy(w);
    return h;
}

static int same_for_any_thread_count(void) {
    uint64_t h1 = run_hash(1, 40), h2 = run_hash(2, 40);
    printf("  hash 1 thread %016llx, 2 threads %016llx\n", (unsigned long long)h1,
           (unsigned long long)h2);
    ENSURE(h1 != 0 && h1 == h2);
    return 0;
}

/* Save mid-run with the emitter and the sink active, resume, and reach the same bits as the
 * run that never stopped. */
static int checkpoint_resume_bit_identical(void) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/pbf_test_flow_%d.pbfck", (int)getpid());
    char err[PBF_ERROR_SIZE];
    pbf_world *w = channel(0, PBF_EMITTER_DISC, 3.0f, 1);
    ENSURE(w != NULL);
    ENSURE(pbf_world_set_capacity(w, 4000) == PBF_OK);
    for (int i = 0; i < 25; ++i) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    ENSURE(pbf_checkpoint_save(w, path, NULL, 0, err, sizeof err) == PBF_OK);
    for (int i = 0; i < 25; ++i) ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
    uint64_t straight = pbf_world_hash(w);
    pbf_flow_state fa = pbf_world_get_flow(w);

    pbf_checkpoint *ck = NULL;
    ENSURE(pbf_checkpoint_open(path, &ck, err, sizeof err) == PBF_OK);
    pbf_world *r = NULL;
    if (pbf_checkpoint_create_world(ck, NULL, &r, err, sizeof err) != PBF_OK)
        fprintf(stderr, "  %s\n", err);
    ENSURE(r != NULL);
    pbf_checkpoint_close(ck);
    remove(path);
    ENSURE(pbf_world_emitter_count(r) == 1 && pbf_world_sink_count(r) == 1);
    for (int i = 0; i < 25; ++i) ENSURE(pbf_world_step(r, 1.0f / 60.0f) == PBF_OK);
    pbf_flow_state fb = pbf_world_get_flow(r);
    printf("  straight %016llx, resumed %016llx; emitted %lld / %lld, removed %lld / %lld\n",
           (unsigned long long)straight, (unsigned long long)pbf_world_hash(r),
           (long long)fa.emitted, (long long)fb.emitted, (long long)fa.removed,
           (long long)fb.removed);
    ENSURE(fa.removed > 0);
    ENSURE(pbf_world_hash(r) == straight);
    ENSURE(fa.emitted == fb.emitted && fa.removed == fb.removed && fa.next_id == fb.next_id &&
           fb.capacity == 4000);
    pbf_world_destroy(w);
    pbf_world_destroy(r);
    return 0;
}

/* A capacity too small for the inflow: the step that would overflow fails before it changes the
 * world, naming the key; everything before stays. */
static int full_capacity_stops_cleanly(void) {
    pbf_world *w = channel(0, PBF_EMITTER_DISC, 3.0f, 0);
    ENSURE(w != NULL);
    ENSURE(pbf_world_set_capacity(w, 300) == PBF_OK);
    pbf_status st = PBF_OK;
    int steps = 0;
    uint64_t before = 0;
    while (st == PBF_OK && steps < 100) {
        before = pbf_world_hash(w);
        st = pbf_world_step(w, 1.0f / 60.0f);
        if (st == PBF_OK) ++steps;
    }
    printf("  stopped after %d steps with %d particles: %s\n", steps, pbf_world_particle_count(w),
           pbf_world_error(w));
    ENSURE(st == PBF_ERR_CAPACITY);
    ENSURE(strstr(pbf_world_error(w), "flow.capacity") != NULL);
    ENSURE(pbf_world_particle_count(w) <= 300);
    ENSURE(pbf_world_hash(w) == before); /* the failed step changed nothing */
    ENSURE(pbf_world_time(w) > 0.2);
    pbf_world_destroy(w);
    return 0;
}

/* ---- bad input: clear errors before the run, naming the key -------------------------------- */

/* The tool and the probes while particles come and go: a sphere in the jet feels it push
 * along +x, and the front, height and floor-force probes read finite values at every step,
 * with the count rising from 0 and the sink removing what passes the tool. */
static int tool_and_probes_follow_the_count(void) {
    pbf_world *w = channel(1, PBF_EMITTER_DISC, 2.0f, 1);
    ENSURE(w != NULL);
    pbf_tool_def tool = pbf_default_tool_def();
    tool.radius = 0.06f;
    tool.position = (pbf_vec3){0.45f, 0.15f, 0.2f};
    ENSURE(pbf_world_set_tool(w, &tool) == PBF_OK);
    pbf_probe_def p[3] = {pbf_default_probe_def(), pbf_default_probe_def(),
                          pbf_default_probe_def()};
    p[0].type = PBF_PROBE_FRONT;
    snprintf(p[0].name, sizeof p[0].name, "front");
    p[0].position = (pbf_vec3){0.0f, 0.0f, 0.2f};
    p[1].type = PBF_PROBE_HEIGHT;
    snprintf(p[1].name, sizeof p[1].name, "height");
    p[1].position = (pbf_vec3){0.3f, 0.0f, 0.2f};
    p[1].radius = 2.0f * R;
    p[2].type = PBF_PROBE_FORCE;
    snprintf(p[2].name, sizeof p[2].name, "floor");
    p[2].position = (pbf_vec3){0.4f, 0.0f, 0.2f};
    p[2].direction = PBF_DIR_Y_POS;
    p[2].size = (pbf_vec3){0.6f, 0.0f, 0.4f};
    ENSURE(pbf_world_set_probes(w, p, 3) == PBF_OK);
    double push = 0.0, front = 0.0;
    int contacts = 0;
    for (int step = 0; step < 90; ++step) {
        ENSURE(pbf_world_step(w, 1.0f / 60.0f) == PBF_OK);
        pbf_tool_state t = pbf_tool_get_state(w);
        ENSURE(isfinite(t.total.x) && isfinite(t.total.y) && isfinite(t.total.z));
        if (t.contacts > contacts) contacts = t.contacts;
        push += t.reaction.x;
        pbf_probe_sample s[3];
        ENSURE(pbf_world_sample_probes(w, s) == PBF_OK);
        ENSURE(isfinite(s[1].value) && s[1].value >= 0.0 && isfinite(s[2].value));
        if (pbf_world_particle_count(w) > 0) {
            ENSURE(isfinite(s[0].value));
            if (s[0].value > front) front = s[0].value;
        }
    }
    pbf_flow_state f = pbf_world_get_flow(w);
    printf("  after 1.5 s: %lld emitted, %lld removed, %d alive; the tool met up to %d "
           "particles, mean push %.3f N along x; furthest front %.3f m\n",
           (long long)f.emitted, (long long)f.removed, pbf_world_particle_count(w), contacts,
           push / 90.0, front);
    ENSURE(f.removed > 0 && contacts > 0 && push > 0.0 && front > 0.5);
    pbf_world_destroy(w);
    return 0;
}

static const char *SCENE_HEAD =
    "{\"domain\": {\"min\": [0, 0, 0], \"max\": [1, 0.5, 0.4]},"
    " \"fluid\": {\"particle_radius\": 0.02, \"blocks\": [{\"min\": [0.5, 0, 0], \"max\": [0.9, "
    "0.1, 0.4]}]},"
    " \"colliders\": [{\"type\": \"sphere\", \"center\": [0.5, 0.3, 0.2], \"radius\": 0.05}],"
    " \"flow\": {\"emitters\": [";

/* Loads the scene with the emitter text and creates its world: the status and the message. */
static pbf_status try_emitter(const char *emitter, char *err, size_t size) {
    char json[2048];
    snprintf(json, sizeof json, "%s%s]}}", SCENE_HEAD, emitter);
    pbf_scene *scene = malloc(sizeof *scene);
    if (scene == NULL) return PBF_ERR_OUT_OF_MEMORY;
    pbf_status st = pbf_scene_parse(json, "flow.json", NULL, 0, scene, err, size);
    if (st == PBF_OK) {
        pbf_world *w = NULL;
        st = pbf_scene_create_world(scene, &w, err, size);
        pbf_world_destroy(w);
    }
    free(scene);
    return st;
}

static int expect(const char *emitter, pbf_status want, const char *a, const char *b) {
    char err[PBF_ERROR_SIZE] = "";
    pbf_status st = try_emitter(emitter, err, sizeof err);
    printf("  %s\n", st == PBF_OK ? "(ok)" : err);
    ENSURE(st == want);
    ENSURE(a == NULL || strstr(err, a) != NULL);
    ENSURE(b == NULL || strstr(err, b) != NULL);
    return 0;
}

static int bad_input_names_the_key(void) {
    const char *ok = "{\"position\": [0.1, 0.2, 0.2], \"direction\": [1, 0, 0], \"radius\": 0.06}";
    if (expect(ok, PBF_OK, NULL, NULL) != 0) return 1;
    /* outside the domain */
    if (expect("{\"position\": [-0.2, 0.2, 0.2], \"radius\": 0.06}", PBF_ERR_INVALID_ARG,
               "flow.emitters[0]", "position") != 0)
        return 1;
    /* a nozzle poking through the floor */
    if (expect("{\"position\": [0.1, 0.03, 0.2], \"radius\": 0.06}", PBF_ERR_INVALID_ARG,
               "flow.emitters[0]", "y_min") != 0)
        return 1;
    /* aimed into the wall it sits against */
    if (expect("{\"position\": [0.05, 0.2, 0.2], \"direction\": [-1, 0, 0], \"radius\": 0.06}",
               PBF_ERR_INVALID_ARG, "direction", "x_min wall") != 0)
        return 1;
    /* aimed into the collider just ahead */
    if (expect("{\"position\": [0.42, 0.3, 0.2], \"direction\": [1, 0, 0], \"radius\": 0.03}",
               PBF_ERR_INVALID_ARG, "direction", "collider 0") != 0)
        return 1;
    if (expect("{\"direction\": [0, 0, 0], \"position\": [0.1, 0.2, 0.2]}", PBF_ERR_INVALID_ARG,
               "flow.emitters[0].direction", "zero") != 0)
        return 1;
    if (expect("{\"position\": [0.1, 0.2, 0.2], \"start\": 2, \"stop\": 1}", PBF_ERR_INVALID_ARG,
               "flow.emitters[0].stop", "after") != 0)
        return 1;
    if (expect("{\"position\": [0.1, 0.2, 0.2], \"speed\": 0}", PBF_ERR_INVALID_ARG,
               "flow.emitters[0].speed", NULL) != 0)
        return 1;
    /* a key of the other shape */
    if (expect("{\"position\": [0.1, 0.2, 0.2], \"width\": 0.1}", PBF_ERR_PARSE, "width", "disc") !=
        0)
        return 1;
    return 0;
}

/* The loader's default capacity holds the blocks and everything the emitters add in the
 * scene's frames; a run of the scene never fills it. */
static int default_capacity_fits_the_run(void) {
    char json[2048];
    snprintf(json, sizeof json,
             "%s{\"position\": [0.1, 0.2, 0.2], \"radius\": 0.06, \"speed\": 2}]},"
             " \"time\": {\"frames\": 30}}",
             SCENE_HEAD);
    pbf_scene *scene = malloc(sizeof *scene);
    ENSURE(scene != NULL);
    char err[PBF_ERROR_SIZE];
    pbf_status st = pbf_scene_parse(json, "flow.json", NULL, 0, scene, err, sizeof err);
    if (st != PBF_OK) fprintf(stderr, "  %s\n", err);
    ENSURE(st == PBF_OK);
    pbf_world *w = NULL;
    ENSURE(pbf_scene_create_world(scene, &w, err, sizeof err) == PBF_OK);
    for (int i = 0; i < scene->frames; ++i) ENSURE(pbf_world_step(w, 1.0f / scene->fps) == PBF_OK);
    pbf_flow_state f = pbf_world_get_flow(w);
    printf("  capacity %d, %d particles after %d frames\n", scene->capacity,
           pbf_world_particle_count(w), scene->frames);
    ENSURE(f.capacity == scene->capacity && pbf_world_particle_count(w) <= f.capacity);
    ENSURE(pbf_world_particle_count(w) + 2 * pbf_world_emitter_layer_size(w, 0) > f.capacity);
    /* the scene written back loads to the same flow section */
    char *text = pbf_scene_to_json(scene);
    ENSURE(text != NULL);
    pbf_scene *again = malloc(sizeof *again);
    ENSURE(again != NULL);
    ENSURE(pbf_scene_parse(text, "again.json", NULL, 0, again, err, sizeof err) == PBF_OK);
    ENSURE(again->capacity == scene->capacity && again->emitter_count == 1 &&
           memcmp(&again->emitters[0], &scene->emitters[0], sizeof scene->emitters[0]) == 0);
    free(text);
    free(again);
    free(scene);
    pbf_world_destroy(w);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(emitter_rate_is_speed_times_area);
RUN_TEST(sink_removes_what_enters);
RUN_TEST(ids_unique_and_never_reused);
RUN_TEST(same_for_any_thread_count);
RUN_TEST(checkpoint_resume_bit_identical);
RUN_TEST(full_capacity_stops_cleanly);
RUN_TEST(tool_and_probes_follow_the_count);
RUN_TEST(bad_input_names_the_key);
RUN_TEST(default_capacity_fits_the_run);
TEST_MAIN_END
