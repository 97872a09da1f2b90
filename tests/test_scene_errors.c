/* Scene loading: every error names the file, the JSON path and what was expected; --set
 * overrides; defaults; the to_json round trip; the built-in scene; the shipped scenes. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pbf/pbf.h"
#include "pbf/scene.h"
#include "test.h"

#define SRC "scenes/x.json"

/* ---------------------------------------------------------------------------------------------
 * Helpers */

/* Parses json (named SRC) and checks the status and that the message holds every substring of
 * the NULL-terminated list. Prints what it got on failure. */
static int check_error(int line, const char *json, const char *const *overrides, int count,
                       pbf_status want, const char *const *substrings) {
    pbf_scene scene;
    char err[PBF_ERROR_SIZE];
    pbf_status got = pbf_scene_parse(json, SRC, overrides, count, &scene, err, sizeof err);
    if (got != want) {
        fprintf(stderr, "line %d: status %s, want %s; message: %s\n", line, pbf_status_string(got),
                pbf_status_string(want), err);
        return 1;
    }
    if (strncmp(err, SRC, strlen(SRC)) != 0) {
        fprintf(stderr, "line %d: message does not start with the file name: %s\n", line, err);
        return 1;
    }
    for (const char *const *s = substrings; *s != NULL; ++s) {
        if (strstr(err, *s) == NULL) {
            fprintf(stderr, "line %d: message lacks \"%s\": %s\n", line, *s, err);
            return 1;
        }
    }
    return 0;
}

#define ENSURE_ERROR(json, want, ...)                                                              \
    ENSURE(check_error(__LINE__, json, NULL, 0, want, (const char *const[]){__VA_ARGS__, NULL}) == \
           0)
#define ENSURE_SET_ERROR(json, overrides, want, ...)                                               \
    ENSURE(check_error(__LINE__, json, overrides,                                                  \
                       (int)(sizeof(overrides) / sizeof((overrides)[0])), want,                    \
                       (const char *const[]){__VA_ARGS__, NULL}) == 0)

/* The whole message must be exactly this. */
static int check_exact(int line, const char *json, const char *const *overrides, int count,
                       const char *want) {
    pbf_scene scene;
    char err[PBF_ERROR_SIZE];
    pbf_status got = pbf_scene_parse(json, SRC, overrides, count, &scene, err, sizeof err);
    if (got == PBF_OK || strcmp(err, want) != 0) {
        fprintf(stderr, "line %d:\n  got  \"%s\"\n  want \"%s\"\n", line, err, want);
        return 1;
    }
    return 0;
}
#define ENSURE_EXACT(json, want) ENSURE(check_exact(__LINE__, json, NULL, 0, want) == 0)

static const char *source_dir(void) {
    const char *dir = getenv("PBF_SOURCE_DIR");
    return dir != NULL ? dir : ".";
}

static void scene_path(char *out, size_t size, const char *file) {
    snprintf(out, size, "%s/scenes/%s", source_dir(), file);
}

/* Equal apart from source. memcmp is exact here: every member of pbf_scene is 4-byte sized or a
 * char array whose length is a multiple of 4, so there is no padding, and the loader starts
 * from a zeroed scene so the bytes after each string's NUL are zero. */
static int scenes_equal(const pbf_scene *a, const pbf_scene *b) {
    static pbf_scene x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    memset(x.source, 0, sizeof x.source);
    memset(y.source, 0, sizeof y.source);
    return memcmp(&x, &y, sizeof x) == 0;
}

/* Writes text to a fresh temporary file; path receives its name. */
static int write_temp(char *path, size_t size, const char *text, size_t len) {
    snprintf(path, size, "/tmp/pbf_test_scene_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    ssize_t n = write(fd, text, len);
    close(fd);
    return n == (ssize_t)len ? 0 : 1;
}

/* ---------------------------------------------------------------------------------------------
 * Broken JSON, missing files */

static int test_invalid_json(void) {
    /* cJSON stops at the 't' of "tru": line 3, column 28 */
    ENSURE_EXACT("{\n  \"name\": \"x\",\n  \"solver\": {\"iterations\": tru}\n}\n",
                 SRC ":3:28: invalid JSON near 'tru}'");
    /* the column counts characters, not bytes: 'é' is one */
    ENSURE_EXACT("{\"name\": \"h\xC3\xA9llo\" x}", SRC ":1:18: invalid JSON near 'x}'");
    ENSURE_ERROR("{\"name\": \"x\"", PBF_ERR_PARSE, SRC ":1:", "invalid JSON near end of input");
    ENSURE_ERROR("", PBF_ERR_PARSE, SRC ":1:1: invalid JSON");
    ENSURE_ERROR("{} trailing", PBF_ERR_PARSE, SRC ":1:4: invalid JSON near 'trailing'");
    ENSURE_EXACT("[1, 2]", SRC ": a scene must be a JSON object, got array");

    /* the same through a file: the message starts with the file's path */
    char path[64];
    const char *text = "{\n  \"time\": {\"fps\": 60,, }\n}\n";
    ENSURE(write_temp(path, sizeof path, text, strlen(text)) == 0);
    pbf_scene scene;
    char err[PBF_ERROR_SIZE], want[128];
    pbf_status status = pbf_scene_load(path, NULL, 0, &scene, err, sizeof err);
    remove(path);
    snprintf(want, sizeof want, "%s:2:", path);
    ENSURE(status == PBF_ERR_PARSE);
    ENSURE(strncmp(err, want, strlen(want)) == 0);
    ENSURE(strstr(err, "invalid JSON near '") != NULL);
    return 0;
}

static int test_io_errors(void) {
    pbf_scene scene;
    char err[PBF_ERROR_SIZE], want[PBF_ERROR_SIZE];
    const char *missing = "/nonexistent/dir/x.json";
    ENSURE(pbf_scene_load(missing, NULL, 0, &scene, err, sizeof err) == PBF_ERR_IO);
    snprintf(want, sizeof want, "%s: cannot open: %s", missing, strerror(ENOENT));
    ENSURE(strcmp(err, want) == 0);

    char dir[PBF_SCENE_PATH_SIZE];
    snprintf(dir, sizeof dir, "%s/scenes", source_dir());
    ENSURE(pbf_scene_load(dir, NULL, 0, &scene, err, sizeof err) == PBF_ERR_IO);
    ENSURE(strstr(err, dir) != NULL && strstr(err, strerror(EISDIR)) != NULL);

    /* a NUL byte would make the parser stop early and ignore the rest */
    char path[64];
    ENSURE(write_temp(path, sizeof path, "{}\0{\"x\": 1}", 11) == 0);
    pbf_status status = pbf_scene_load(path, NULL, 0, &scene, err, sizeof err);
    remove(path);
    ENSURE(status == PBF_ERR_PARSE);
    ENSURE(strstr(err, path) != NULL && strstr(err, "NUL byte at offset 2") != NULL);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Unknown keys, wrong types, out-of-range values */

static int test_unknown_keys(void) {
    ENSURE_EXACT("{\"solver\": {\"iteratons\": 6}}",
                 SRC ": unknown key 'solver.iteratons' (did you mean 'iterations'?)");
    ENSURE_ERROR("{\"gravit\": [0, -9.81, 0]}", PBF_ERR_PARSE, "unknown key 'gravit'",
                 "(did you mean 'gravity'?)");
    ENSURE_ERROR("{\"Solver\": {}}", PBF_ERR_PARSE, "unknown key 'Solver'",
                 "(did you mean 'solver'?)");
    ENSURE_ERROR("{\"fluid\": {\"blocks\": [{\"mn\": [0, 0, 0]}]}}", PBF_ERR_PARSE,
                 "unknown key 'fluid.blocks[0].mn'", "(did you mean 'min'?)");
    ENSURE_ERROR("{\"fluid\": {\"partcile_radius\": 0.01}}", PBF_ERR_PARSE,
                 "unknown key 'fluid.partcile_radius'", "(did you mean 'particle_radius'?)");
    ENSURE_ERROR("{\"domain\": {\"walls\": {\"x_mx\": {}}}}", PBF_ERR_PARSE,
                 "unknown key 'domain.walls.x_mx'", "(did you mean 'x_max'?)");
    ENSURE_ERROR("{\"domain\": {\"walls\": {\"x_max\": {\"amplitud\": 0.1}}}}", PBF_ERR_PARSE,
                 "unknown key 'domain.walls.x_max.amplitud'", "(did you mean 'amplitude'?)");
    ENSURE_ERROR("{\"solver\": {\"scorr\": {\"dp\": 0.1}}}", PBF_ERR_PARSE,
                 "unknown key 'solver.scorr.dp'", "(did you mean 'dq'?)");
    /* nothing near: list what is allowed */
    ENSURE_EXACT("{\"colour\": 1}",
                 SRC ": unknown key 'colour' (expected one of: name, domain, materials, fluid, "
                     "gravity, colliders, meshes, solver, time, camera, output, tool, probes, "
                     "flow, diffuse)");
    ENSURE_ERROR("{\"output\": {\"path\": \"x\"}}", PBF_ERR_PARSE, "unknown key 'output.path'",
                 "expected one of: dir, format");
    /* a key of another collider type is not silently ignored */
    ENSURE_ERROR("{\"colliders\": [{\"type\": \"sphere\", \"half_extents\": [1, 1, 1]}]}",
                 PBF_ERR_PARSE, "unknown key 'colliders[0].half_extents' for a sphere collider",
                 "center, radius");
    /* cJSON keeps both copies of a duplicate key and reads the first */
    ENSURE_EXACT("{\"time\": {\"fps\": 30, \"fps\": 60}}", SRC ": duplicate key 'time.fps'");
    return 0;
}

static int test_wrong_types(void) {
    ENSURE_EXACT("{\"solver\": {\"iterations\": \"6\"}}",
                 SRC ": 'solver.iterations' must be an integer, got string");
    ENSURE_EXACT("{\"solver\": {\"iterations\": 2.5}}",
                 SRC ": 'solver.iterations' must be an integer, got 2.5");
    ENSURE_EXACT("{\"fluid\": {\"blocks\": [{\"min\": [0, 0]}]}}",
                 SRC ": 'fluid.blocks[0].min' must be an array of 3 numbers, got an array of 2");
    ENSURE_ERROR("{\"gravity\": \"down\"}", PBF_ERR_PARSE,
                 "'gravity' must be an array of 3 numbers, got string");
    ENSURE_ERROR("{\"camera\": {\"target\": [0, \"a\", 0]}}", PBF_ERR_PARSE,
                 "'camera.target' must be an array of 3 numbers, got a string at [1]");
    ENSURE_ERROR("{\"solver\": {\"unilateral\": 1}}", PBF_ERR_PARSE,
                 "'solver.unilateral' must be true or false, got number");
    ENSURE_ERROR("{\"fluid\": {\"particle_radius\": null}}", PBF_ERR_PARSE,
                 "'fluid.particle_radius' must be a number, got null");
    ENSURE_ERROR("{\"solver\": []}", PBF_ERR_PARSE, "'solver' must be an object, got array");
    ENSURE_ERROR("{\"domain\": {\"walls\": {\"x_max\": 0.1}}}", PBF_ERR_PARSE,
                 "'domain.walls.x_max' must be an object, got number");
    ENSURE_ERROR("{\"fluid\": {\"blocks\": {}}}", PBF_ERR_PARSE,
                 "'fluid.blocks' must be an array of objects, got object");
    ENSURE_ERROR("{\"fluid\": {\"blocks\": [7]}}", PBF_ERR_PARSE,
                 "'fluid.blocks[0]' must be an object, got number");
    ENSURE_ERROR("{\"colliders\": {\"type\": \"sphere\"}}", PBF_ERR_PARSE,
                 "'colliders' must be an array of objects, got object");
    ENSURE_ERROR("{\"name\": 5}", PBF_ERR_PARSE, "'name' must be a string, got number");
    ENSURE_ERROR("{\"output\": {\"dir\": [\"a\"]}}", PBF_ERR_PARSE,
                 "'output.dir' must be a string, got array");
    ENSURE_ERROR(
        "{\"output\": {\"format\": 3}}", PBF_ERR_PARSE,
        "'output.format' must be an array of format names ('ply', 'vtk', 'vtu'), got number");
    ENSURE_ERROR("{\"solver\": {\"backend\": 1}}", PBF_ERR_PARSE,
                 "'solver.backend' must be one of 'cpu' or 'cuda', got number");
    return 0;
}

static int test_out_of_range(void) {
    ENSURE_EXACT("{\"fluid\": {\"particle_radius\": -0.01}}",
                 SRC ": 'fluid.particle_radius' must be in (0, 10] m, got -0.01");
    ENSURE_EXACT("{\"solver\": {\"iterations\": 0}}",
                 SRC ": 'solver.iterations' must be in [1, 1000], got 0");
    ENSURE_ERROR("{\"time\": {\"substeps\": 0}}", PBF_ERR_INVALID_ARG,
                 "'time.substeps' must be in [1, 1000], got 0");
    ENSURE_ERROR("{\"time\": {\"fps\": 0}}", PBF_ERR_INVALID_ARG, "'time.fps' must be > 0, got 0");
    ENSURE_ERROR("{\"time\": {\"frames\": 0}}", PBF_ERR_INVALID_ARG,
                 "'time.frames' must be in [1, 2147483647], got 0");
    ENSURE_ERROR("{\"fluid\": {\"kernel_scale\": 2}}", PBF_ERR_INVALID_ARG,
                 "'fluid.kernel_scale' must be in [2.5, 8], got 2");
    ENSURE_ERROR("{\"fluid\": {\"rest_density\": 0}}", PBF_ERR_INVALID_ARG,
                 "'fluid.rest_density' must be > 0 kg/m^3, got 0");
    ENSURE_ERROR("{\"fluid\": {\"particle_radius\": 1e39}}", PBF_ERR_INVALID_ARG,
                 "'fluid.particle_radius' must be a finite number that fits a float");
    /* 1e-50 is > 0 as written but 0 as a float */
    ENSURE_ERROR("{\"fluid\": {\"particle_radius\": 1e-50}}", PBF_ERR_INVALID_ARG,
                 "'fluid.particle_radius' must be in (0, 10] m");
    ENSURE_ERROR("{\"solver\": {\"scorr\": {\"dq\": 1}}}", PBF_ERR_INVALID_ARG,
                 "'solver.scorr.dq' must be in [0, 1) h, got 1");
    ENSURE_ERROR("{\"solver\": {\"scorr\": {\"n\": 9}}}", PBF_ERR_INVALID_ARG,
                 "'solver.scorr.n' must be in [1, 8], got 9");
    ENSURE_ERROR("{\"solver\": {\"scorr\": {\"ratio\": -1}}}", PBF_ERR_INVALID_ARG,
                 "'solver.scorr.ratio' must be in [0, 1000], got -1");
    ENSURE_ERROR("{\"solver\": {\"threads\": -1}}", PBF_ERR_INVALID_ARG,
                 "'solver.threads' must be in [0, 1024], got -1");
    ENSURE_ERROR("{\"solver\": {\"neighbor_mode\": \"grid\"}}", PBF_ERR_INVALID_ARG,
                 "'solver.neighbor_mode' must be one of 'list' or 'cells', got 'grid'");
    ENSURE_ERROR("{\"solver\": {\"backend\": \"gpu\"}}", PBF_ERR_INVALID_ARG,
                 "'solver.backend' must be one of 'cpu' or 'cuda', got 'gpu'");

    /* the domain and its walls */
    ENSURE_EXACT("{\"domain\": {\"min\": [0, 0, 0], \"max\": [1, 0, 1]}}",
                 SRC ": 'domain.min' must be below 'domain.max' on every axis, got y: 0 >= 0");
    ENSURE_ERROR("{\"domain\": {\"walls\": {\"x_max\": {\"amplitude\": -0.1}}}}",
                 PBF_ERR_INVALID_ARG, "'domain.walls.x_max.amplitude' must be >= 0 m, got -0.1");
    ENSURE_ERROR("{\"domain\": {\"walls\": {\"z_min\": {\"period\": 0}}}}", PBF_ERR_INVALID_ARG,
                 "'domain.walls.z_min.period' must be > 0 s, got 0");
    ENSURE_EXACT("{\"domain\": {\"walls\": {\"y_max\": {\"amplitude\": 0.5},"
                 " \"y_min\": {\"amplitude\": 0.47}}}}",
                 SRC ": 'domain.walls.y_max.amplitude' is too large: the walls along y (1 m apart "
                     "at rest, amplitudes 0.47 and 0.5 m) must stay 4 * particle_radius = "
                     "0.04 m apart");
    ENSURE_ERROR("{\"domain\": {\"max\": [1, 0.03, 1]}, \"fluid\": {\"blocks\": [{\"max\": [0.1, "
                 "0.02, 0.1]}]}}",
                 PBF_ERR_INVALID_ARG,
                 "'domain' must be at least 4 * particle_radius = 0.04 m wide on every "
                 "axis, got y: 0.03 m");

    /* blocks */
    ENSURE_EXACT("{\"domain\": {\"max\": [1, 1, 1]}, \"fluid\": {\"blocks\": [{\"min\": [0.5, 0, "
                 "0], \"max\": [1.5, 0.5, 0.5]}]}}",
                 SRC ": 'fluid.blocks[0]' must lie inside the domain, got x from 0.5 to 1.5, "
                     "outside [0, 1]");
    ENSURE_ERROR("{\"fluid\": {\"blocks\": [{\"min\": [0, 0.3, 0], \"max\": [0.2, 0.2, 0.2]}]}}",
                 PBF_ERR_INVALID_ARG,
                 "'fluid.blocks[0].min' must be below 'fluid.blocks[0].max' on every axis, got "
                 "y: 0.3 >= 0.2");
    ENSURE_ERROR("{\"fluid\": {\"particle_radius\": 0.1, \"blocks\": [{\"max\": [0.1, 0.1, "
                 "0.1]}]}}",
                 PBF_ERR_INVALID_ARG, "'fluid.blocks[0]' holds no particles",
                 "at least 2 * particle_radius = 0.2");
    ENSURE_ERROR("{\"fluid\": {\"blocks\": [{}, {\"jitter\": 0.6}]}}", PBF_ERR_INVALID_ARG,
                 "'fluid.blocks[1].jitter' must be in [0, 0.5], got 0.6");
    ENSURE_ERROR("{\"fluid\": {\"blocks\": [{\"seed\": -1}]}}", PBF_ERR_INVALID_ARG,
                 "'fluid.blocks[0].seed' must be in [0, 4294967295], got -1");
    ENSURE_ERROR("{\"fluid\": {\"blocks\": []}}", PBF_ERR_INVALID_ARG,
                 "'fluid.blocks' is empty: a scene needs at least one block of fluid");
    /* the default block is checked against the domain too */
    ENSURE_ERROR("{\"domain\": {\"max\": [0.1, 1, 1]}}", PBF_ERR_INVALID_ARG,
                 "'fluid.blocks (the default block)' must lie inside the domain");
    {
        static char json[8192];
        int n = snprintf(json, sizeof json, "{\"fluid\": {\"blocks\": [");
        for (int i = 0; i <= PBF_SCENE_MAX_BLOCKS; ++i)
            n += snprintf(json + n, sizeof json - (size_t)n, "%s{}", i ? ", " : "");
        snprintf(json + n, sizeof json - (size_t)n, "]}}");
        ENSURE_ERROR(json, PBF_ERR_INVALID_ARG, "'fluid.blocks' has 65 blocks, at most 64");
    }

    /* colliders */
    ENSURE_EXACT("{\"colliders\": [{\"type\": \"cylinder\"}]}",
                 SRC ": 'colliders[0].type' must be one of 'sphere', 'box' or 'capsule', got "
                     "'cylinder'");
    ENSURE_ERROR("{\"colliders\": [{\"type\": \"capsule\", \"radius\": -1}]}", PBF_ERR_INVALID_ARG,
                 "'colliders[0].radius' must be > 0 m, got -1");
    ENSURE_ERROR("{\"colliders\": [{\"type\": \"box\", \"half_extents\": [1, 0, 1]}]}",
                 PBF_ERR_INVALID_ARG, "'colliders[0].half_extents[1]' must be > 0 m, got 0");

    /* camera and output */
    ENSURE_ERROR("{\"camera\": {\"fov\": 180}}", PBF_ERR_INVALID_ARG,
                 "'camera.fov' must be in (0, 180) deg, got 180");
    ENSURE_ERROR("{\"camera\": {\"position\": [1, 2, 3], \"target\": [1, 2, 3]}}",
                 PBF_ERR_INVALID_ARG, "'camera.position' must differ from 'camera.target'");
    /* found by fuzz_scene: the default position of a far target overflowed to infinity, and the
     * scene written back did not load */
    ENSURE_ERROR("{\"camera\": {\"target\": [161, 0.251e38, 0.5], \"fov\": 5}}",
                 PBF_ERR_INVALID_ARG, "the default 'camera.position'");
    ENSURE_ERROR("{\"output\": {\"format\": [\"ply\", \"obj\"]}}", PBF_ERR_INVALID_ARG,
                 "'output.format[1]' must be one of 'ply', 'vtk' or 'vtu', got 'obj'");
    ENSURE_ERROR("{\"output\": {\"format\": [\"vtk\", \"vtk\"]}}", PBF_ERR_INVALID_ARG,
                 "'output.format[1]': format 'vtk' is listed twice");
    ENSURE_ERROR("{\"name\": \"\"}", PBF_ERR_INVALID_ARG, "'name' must not be empty");
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * --set */

static int test_set_success(void) {
    const char *const sets[] = {
        "solver.iterations=6",     "time.frames=10",     "fluid.blocks[0].max=[0.2, 0.3, 0.2]",
        "output.dir=out/run2", /* not JSON: taken as a string */
        "output.format=vtk", /* one name is allowed too */
        "camera.fov=30",           "solver.scorr.k=0.2", "gravity=[0, -1, 0]",
        "name=\"quoted\"",         "time.fps=30",        "time.fps=24", /* the last one wins */
        "solver.unilateral=false",
    };
    pbf_scene s;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_scene_default(sets, (int)(sizeof sets / sizeof sets[0]), &s, err, sizeof err) ==
           PBF_OK);
    ENSURE(s.world.solver.iterations == 6);
    ENSURE(s.frames == 10);
    ENSURE(s.blocks[0].max.y == 0.3f);
    ENSURE(strcmp(s.output_dir, "out/run2") == 0);
    ENSURE(s.formats == PBF_FORMAT_VTK);
    ENSURE(s.camera.fov == 30.0f);
    ENSURE(s.world.solver.scorr_k == 0.2f);
    ENSURE(s.world.gravity.y == -1.0f);
    ENSURE(strcmp(s.name, "quoted") == 0);
    ENSURE(s.fps == 24.0f);
    ENSURE(s.world.solver.unilateral == 0);
    ENSURE(strcmp(s.source, "<built-in>") == 0);

    /* missing objects along the path are created; '=' inside the value is kept */
    const char *const create[] = {"solver.scorr.n=2", "domain.walls.y_max.amplitude=0.1",
                                  "output.dir=a=b"};
    ENSURE(pbf_scene_parse("{}", SRC, create, 3, &s, err, sizeof err) == PBF_OK);
    ENSURE(s.world.solver.scorr_n == 2);
    ENSURE(s.world.wall_motion[PBF_WALL_Y_MAX].amplitude == 0.1f);
    ENSURE(strcmp(s.output_dir, "a=b") == 0);
    return 0;
}

static int test_set_errors(void) {
    const char *scene = "{\"fluid\": {\"blocks\": [{}]}}";
    const char *const misspelt[] = {"solver.iteratons=6"};
    ENSURE(check_exact(__LINE__, scene, misspelt, 1,
                       SRC ": unknown key 'solver.iteratons' (did you mean 'iterations'?) (from "
                           "--set 'solver.iteratons=6')") == 0);
    const char *const top[] = {"gravityy=[0,0,0]"};
    ENSURE_SET_ERROR(scene, top, PBF_ERR_PARSE, "unknown key 'gravityy'", "did you mean 'gravity'?",
                     "(from --set 'gravityy=[0,0,0]')");
    const char *const type[] = {"solver.iterations=abc"};
    ENSURE_SET_ERROR(scene, type, PBF_ERR_PARSE,
                     "'solver.iterations' must be an integer, got string",
                     "(from --set 'solver.iterations=abc')");
    const char *const range[] = {"fluid.particle_radius=-1"};
    ENSURE_SET_ERROR(scene, range, PBF_ERR_INVALID_ARG,
                     "'fluid.particle_radius' must be in (0, 10] m, got -1",
                     "(from --set 'fluid.particle_radius=-1')");
    /* an error inside an object set whole */
    const char *const inside[] = {"solver={\"iteratons\": 6}"};
    ENSURE_SET_ERROR(scene, inside, PBF_ERR_PARSE, "unknown key 'solver.iteratons'",
                     "(from --set 'solver={\"iteratons\": 6}')");
    /* a cross-field check on a value that came from --set */
    const char *const cross[] = {"fluid.blocks[0].min=[0.5,0,0]"};
    ENSURE_SET_ERROR(scene, cross, PBF_ERR_INVALID_ARG,
                     "'fluid.blocks[0].min' must be below 'fluid.blocks[0].max'",
                     "(from --set 'fluid.blocks[0].min=[0.5,0,0]')");

    const char *const past[] = {"fluid.blocks[3].min=[0,0,0]"};
    ENSURE_SET_ERROR(scene, past, PBF_ERR_INVALID_ARG,
                     "--set 'fluid.blocks[3].min=[0,0,0]': index [3] is past the end of "
                     "'fluid.blocks', which has 1 element");
    const char *const absent[] = {"colliders[0].radius=1"};
    ENSURE_SET_ERROR(scene, absent, PBF_ERR_INVALID_ARG,
                     "--set 'colliders[0].radius=1': 'colliders' does not exist, so it has no "
                     "element [0]");
    const char *const no_eq[] = {"solver.iterations"};
    ENSURE_SET_ERROR(scene, no_eq, PBF_ERR_INVALID_ARG,
                     "--set 'solver.iterations': expected path=value");
    const char *const empty_key[] = {"solver..iterations=1"};
    ENSURE_SET_ERROR(scene, empty_key, PBF_ERR_INVALID_ARG,
                     "--set 'solver..iterations=1': the path has an empty key");
    const char *const bad_index[] = {"fluid.blocks[x].min=1"};
    ENSURE_SET_ERROR(scene, bad_index, PBF_ERR_INVALID_ARG,
                     "an index must be written [N] with N a non-negative integer");
    const char *const not_object[] = {"gravity.x=1"};
    ENSURE_SET_ERROR("{\"gravity\": [0, -9.81, 0]}", not_object, PBF_ERR_INVALID_ARG,
                     "--set 'gravity.x=1': 'gravity' is an array, not an object, so it has no "
                     "key 'x'");
    /* where the scene has no gravity, the path creates an object, which is then the wrong type */
    ENSURE_SET_ERROR(scene, not_object, PBF_ERR_PARSE,
                     "'gravity' must be an array of 3 numbers, got object (from --set "
                     "'gravity.x=1')");
    const char *const not_array[] = {"fluid[0]=1"};
    ENSURE_SET_ERROR(scene, not_array, PBF_ERR_INVALID_ARG,
                     "'fluid' is an object, not an array, so it has no element [0]");
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * Defaults, round trip, built-in and shipped scenes */

static int test_defaults(void) {
    pbf_scene s;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_scene_parse("{}", "some/dir/my_scene.json", NULL, 0, &s, err, sizeof err) == PBF_OK);
    ENSURE(strcmp(s.name, "my_scene") == 0);
    ENSURE(strcmp(s.source, "some/dir/my_scene.json") == 0);
    ENSURE(strcmp(s.output_dir, "out/my_scene") == 0);
    pbf_world_def w = pbf_default_world_def();
    ENSURE(memcmp(&s.world, &w, sizeof w) == 0);
    pbf_block_def b = pbf_default_block_def();
    ENSURE(s.block_count == 1 && memcmp(&s.blocks[0], &b, sizeof b) == 0);
    ENSURE(s.collider_count == 0);
    ENSURE(s.fps == 60.0f && s.frames == 120);
    ENSURE(s.formats == PBF_FORMAT_PLY);

    /* camera: looks at the domain centre from +z, above it, with every corner in view */
    pbf_vec3 lo = w.domain_min, hi = w.domain_max, t = s.camera.target, p = s.camera.position;
    ENSURE(s.camera.fov == 45.0f);
    ENSURE_NEAR(t.x, 0.5 * (lo.x + hi.x), 1e-6);
    ENSURE_NEAR(t.y, 0.5 * (lo.y + hi.y), 1e-6);
    ENSURE_NEAR(t.z, 0.5 * (lo.z + hi.z), 1e-6);
    ENSURE(p.x == t.x && p.y > t.y && p.z > hi.z);
    double fx = t.x - p.x, fy = t.y - p.y, fz = t.z - p.z;
    double fl = sqrt(fx * fx + fy * fy + fz * fz);
    for (int corner = 0; corner < 8; ++corner) {
        double cx = ((corner & 1) ? hi.x : lo.x) - p.x;
        double cy = ((corner & 2) ? hi.y : lo.y) - p.y;
        double cz = ((corner & 4) ? hi.z : lo.z) - p.z;
        double cl = sqrt(cx * cx + cy * cy + cz * cz);
        double angle = acos((fx * cx + fy * cy + fz * cz) / (fl * cl)) * 180.0 / 3.14159265358979;
        ENSURE(angle <= 0.5 * s.camera.fov + 1e-3);
    }

    /* no source: a generic name */
    ENSURE(pbf_scene_parse("{}", NULL, NULL, 0, &s, err, sizeof err) == PBF_OK);
    ENSURE(strcmp(s.name, "scene") == 0 && strcmp(s.output_dir, "out/scene") == 0);

    /* a collider's missing fields come from pbf_default_collider_def */
    ENSURE(pbf_scene_parse("{\"colliders\": [{\"type\": \"box\"}]}", SRC, NULL, 0, &s, err,
                           sizeof err) == PBF_OK);
    pbf_collider_def c = pbf_default_collider_def();
    c.type = PBF_COLLIDER_BOX;
    ENSURE(s.collider_count == 1 && memcmp(&s.colliders[0], &c, sizeof c) == 0);

    /* formats: none, both */
    ENSURE(pbf_scene_parse("{\"output\": {\"format\": []}}", SRC, NULL, 0, &s, err, sizeof err) ==
           PBF_OK);
    ENSURE(s.formats == PBF_FORMAT_NONE);
    ENSURE(pbf_scene_parse("{\"output\": {\"format\": [\"vtk\", \"ply\"]}}", SRC, NULL, 0, &s, err,
                           sizeof err) == PBF_OK);
    ENSURE(s.formats == (PBF_FORMAT_PLY | PBF_FORMAT_VTK));
    return 0;
}

/* to_json, then parse: the same scene; and to_json of that: the same text. */
static int round_trip(const pbf_scene *s) {
    char *text = pbf_scene_to_json(s);
    ENSURE(text != NULL);
    static pbf_scene back;
    char err[PBF_ERROR_SIZE];
    pbf_status status = pbf_scene_parse(text, s->source, NULL, 0, &back, err, sizeof err);
    if (status != PBF_OK) fprintf(stderr, "%s\n%s\n", err, text);
    char *again = status == PBF_OK ? pbf_scene_to_json(&back) : NULL;
    int same_text = again != NULL && strcmp(text, again) == 0;
    free(again);
    free(text);
    ENSURE(status == PBF_OK);
    ENSURE(scenes_equal(s, &back));
    ENSURE(same_text);
    return 0;
}

static int test_round_trip(void) {
    const char *rich =
        "{\"name\": \"rich\","
        " \"domain\": {\"min\": [-1, 0, -0.5], \"max\": [1, 2, 0.5],"
        "   \"walls\": {\"x_min\": {\"amplitude\": 0.05, \"period\": 1.5, \"phase\": 0.3},"
        "               \"z_max\": {\"amplitude\": 0.01, \"period\": 0.7, \"phase\": -1}}},"
        " \"fluid\": {\"particle_radius\": 0.0123, \"kernel_scale\": 3.3, \"rest_density\": 997.1,"
        "   \"blocks\": [{\"min\": [-1, 0, -0.5], \"max\": [-0.5, 0.333333, 0.5],"
        "                 \"velocity\": [1, -0.1, 1e-7], \"jitter\": 0.1, \"seed\": 4294967295},"
        "                {\"min\": [0.1, 0.1, 0.1], \"max\": [0.3, 0.3, 0.3]}]},"
        " \"gravity\": [0.1, -9.81, 0],"
        " \"colliders\": [{\"type\": \"sphere\", \"center\": [0.5, 0.1, 0.2], \"radius\": 0.1},"
        "   {\"type\": \"box\", \"center\": [0, 1, 0], \"half_extents\": [0.1, 0.2, 0.3]},"
        "   {\"type\": \"capsule\", \"a\": [0, 0, 0], \"b\": [0.1, 0.2, 0.3], \"radius\": 0.05}],"
        " \"solver\": {\"iterations\": 7, \"relaxation\": 0.02, \"unilateral\": false,"
        "   \"scorr\": {\"k\": 0.05, \"n\": 3, \"dq\": 0.25}, \"vorticity\": 0.1, \"xsph\": 0.03,"
        "   \"cfl\": 0, \"neighbor_mode\": \"cells\", \"backend\": \"cuda\", \"threads\": 3},"
        " \"time\": {\"fps\": 29.97, \"frames\": 7, \"substeps\": 5},"
        " \"camera\": {\"position\": [1, 2, 3], \"target\": [0.1, 0.2, 0.3], \"fov\": 33.3},"
        " \"output\": {\"dir\": \"/tmp/x y\", \"format\": [\"vtk\", \"ply\"]}}";
    pbf_scene s;
    char err[PBF_ERROR_SIZE];
    ENSURE(pbf_scene_parse(rich, SRC, NULL, 0, &s, err, sizeof err) == PBF_OK);
    ENSURE(round_trip(&s) == 0);
    ENSURE(pbf_scene_parse("{\"output\": {\"format\": []}}", SRC, NULL, 0, &s, err, sizeof err) ==
           PBF_OK);
    ENSURE(round_trip(&s) == 0);
    ENSURE(pbf_scene_default(NULL, 0, &s, err, sizeof err) == PBF_OK);
    ENSURE(round_trip(&s) == 0);

    /* the written text holds every field: nothing is left to defaults */
    char *text = pbf_scene_to_json(&s);
    ENSURE(text != NULL);
    const char *keys[] = {
        "\"name\"",         "\"walls\"",         "\"z_max\"",   "\"phase\"",     "\"kernel_scale\"",
        "\"rest_density\"", "\"jitter\"",        "\"seed\"",    "\"colliders\"", "\"relaxation\"",
        "\"unilateral\"",   "\"scorr\"",         "\"dq\"",      "\"vorticity\"", "\"xsph\"",
        "\"cfl\"",          "\"neighbor_mode\"", "\"backend\"", "\"threads\"",   "\"substeps\"",
        "\"fov\"",          "\"dir\"",           "\"format\""};
    int all = 1;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        if (strstr(text, keys[i]) == NULL) all = 0;
    /* floats are written short: 0.00625, not 0.006250000093 */
    int short_floats = strstr(text, "0.00625,") != NULL || strstr(text, "0.00625\n") != NULL;
    free(text);
    ENSURE(all);
    ENSURE(short_floats);
    return 0;
}

static int test_default_matches_file(void) {
    static pbf_scene builtin, file;
    char err[PBF_ERROR_SIZE], path[PBF_SCENE_PATH_SIZE];
    ENSURE(pbf_scene_default(NULL, 0, &builtin, err, sizeof err) == PBF_OK);
    scene_path(path, sizeof path, "dam_break.json");
    pbf_status status = pbf_scene_load(path, NULL, 0, &file, err, sizeof err);
    if (status != PBF_OK) fprintf(stderr, "%s\n", err);
    ENSURE(status == PBF_OK);
    ENSURE(strcmp(builtin.source, "<built-in>") == 0 && strcmp(file.source, path) == 0);
    ENSURE(scenes_equal(&builtin, &file));
    return 0;
}

typedef struct shipped {
    const char *file;
    const char *name;
    int64_t target; /* particles */
} shipped;

static int test_shipped_scenes(void) {
    const shipped scenes[] = {
        {"dam_break.json", "dam_break", 50000},
        {"double_dam_break.json", "double_dam_break", 128000},
        {"moving_wall.json", "moving_wall", 11250},
        {"cube_drop.json", "cube_drop", 27000},
        {"river.json", "river", 3555}, /* plus the inflow: flow.capacity 28,593 */
        {"splash.json", "splash", 6144}, /* with spray, foam and bubbles */
    };
    static pbf_scene s;
    char err[PBF_ERROR_SIZE], path[PBF_SCENE_PATH_SIZE];
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; ++i) {
        scene_path(path, sizeof path, scenes[i].file);
        pbf_status status = pbf_scene_load(path, NULL, 0, &s, err, sizeof err);
        if (status != PBF_OK) fprintf(stderr, "%s\n", err);
        ENSURE(status == PBF_OK);
        ENSURE(strcmp(s.name, scenes[i].name) == 0);
        int64_t n = pbf_scene_particle_count(&s);
        if (llabs(n - scenes[i].target) > scenes[i].target / 10)
            fprintf(stderr, "%s: %lld particles, target %lld\n", scenes[i].file, (long long)n,
                    (long long)scenes[i].target);
        ENSURE(llabs(n - scenes[i].target) <= scenes[i].target / 10);
        ENSURE(s.fps == 60.0f);
        ENSURE(s.world.substeps >= 2 && s.world.substeps <= 4);
        ENSURE(s.frames / s.fps >= 2.0f && s.frames / s.fps <= 10.0f);
        ENSURE(s.world.gravity.x == 0.0f && s.world.gravity.y < 0.0f && s.world.gravity.z == 0.0f);
        ENSURE(round_trip(&s) == 0);
        /* the world accepts it and fills exactly the counted particles */
        pbf_world *world = NULL;
        status = pbf_scene_create_world(&s, &world, err, sizeof err);
        if (status != PBF_OK) fprintf(stderr, "%s\n", err);
        ENSURE(status == PBF_OK);
        int particles = pbf_world_particle_count(world);
        pbf_world_destroy(world);
        ENSURE(particles == n);
    }

    /* double dam break: two equal columns, mirror images about the tank's mid x-plane */
    scene_path(path, sizeof path, "double_dam_break.json");
    ENSURE(pbf_scene_load(path, NULL, 0, &s, err, sizeof err) == PBF_OK);
    ENSURE(s.block_count == 2);
    const pbf_block_def *l = &s.blocks[0], *r = &s.blocks[1];
    pbf_vec3 lo = s.world.domain_min, hi = s.world.domain_max;
    ENSURE(l->min.x - lo.x == hi.x - r->max.x);
    ENSURE(l->max.x - lo.x == hi.x - r->min.x);
    ENSURE(l->min.y == r->min.y && l->max.y == r->max.y);
    ENSURE(l->min.z == r->min.z && l->max.z == r->max.z);
    ENSURE(pbf_block_particle_count(l, s.world.particle_radius) ==
           pbf_block_particle_count(r, s.world.particle_radius));

    /* moving wall: only x_max moves */
    scene_path(path, sizeof path, "moving_wall.json");
    ENSURE(pbf_scene_load(path, NULL, 0, &s, err, sizeof err) == PBF_OK);
    for (int w = 0; w < PBF_WALL_COUNT; ++w)
        ENSURE((s.world.wall_motion[w].amplitude > 0.0f) == (w == PBF_WALL_X_MAX));
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * World creation, message buffers */

static int test_create_world(void) {
    pbf_scene s;
    char err[PBF_ERROR_SIZE];
    const char *json =
        "{\"domain\": {\"max\": [0.4, 0.4, 0.4]}, \"fluid\": {\"particle_radius\": 0.02,"
        " \"blocks\": [{\"max\": [0.2, 0.2, 0.2]}, {\"min\": [0.2, 0, 0], \"max\": [0.4, 0.1, "
        "0.4]}]},"
        " \"colliders\": [{\"type\": \"sphere\", \"center\": [0.3, 0.3, 0.3], \"radius\": 0.05}]}";
    ENSURE(pbf_scene_parse(json, SRC, NULL, 0, &s, err, sizeof err) == PBF_OK);
    ENSURE(pbf_scene_particle_count(&s) == 5 * 5 * 5 + 5 * 2 * 10);
    pbf_world *world = NULL;
    pbf_status status = pbf_scene_create_world(&s, &world, err, sizeof err);
    if (status != PBF_OK) fprintf(stderr, "%s\n", err);
    ENSURE(status == PBF_OK && world != NULL);
    int particles = pbf_world_particle_count(world), colliders = pbf_world_collider_count(world);
    pbf_world_destroy(world);
    ENSURE(particles == 5 * 5 * 5 + 5 * 2 * 10);
    ENSURE(colliders == 1);

    /* the world's own check, passed through with the scene's name in front */
    s.world.particle_radius = -1.0f;
    world = (pbf_world *)&s; /* must be reset to NULL on failure */
    ENSURE(pbf_scene_create_world(&s, &world, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(world == NULL);
    ENSURE(strncmp(err, SRC ": ", strlen(SRC ": ")) == 0 && strlen(err) > strlen(SRC ": "));
    return 0;
}

static int test_message_buffers(void) {
    pbf_scene s;
    /* a tiny buffer: truncated, terminated, nothing written past it */
    char buf[16];
    memset(buf, 'Z', sizeof buf);
    ENSURE(pbf_scene_parse("{\"solver\": {\"iteratons\": 6}}", SRC, NULL, 0, &s, buf, 8) ==
           PBF_ERR_PARSE);
    ENSURE(strcmp(buf, "scenes/") == 0);
    for (size_t i = 8; i < sizeof buf; ++i) ENSURE(buf[i] == 'Z');
    /* no buffer at all */
    ENSURE(pbf_scene_parse("{\"solver\": 1}", SRC, NULL, 0, &s, NULL, 0) == PBF_ERR_PARSE);
    ENSURE(pbf_scene_load("/nonexistent.json", NULL, 0, &s, NULL, 0) == PBF_ERR_IO);
    const char *const sets[] = {"solver.iteratons=6"};
    ENSURE(pbf_scene_parse("{}", SRC, sets, 1, &s, NULL, 0) == PBF_ERR_PARSE);
    /* success clears the message */
    char err[PBF_ERROR_SIZE] = "stale";
    ENSURE(pbf_scene_parse("{}", SRC, NULL, 0, &s, err, sizeof err) == PBF_OK && err[0] == '\0');
    /* bad arguments */
    ENSURE(pbf_scene_parse(NULL, SRC, NULL, 0, &s, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(pbf_scene_parse("{}", SRC, NULL, 1, &s, err, sizeof err) == PBF_ERR_INVALID_ARG);
    ENSURE(pbf_scene_to_json(NULL) == NULL);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * The schema (pbf_scene_keys): what docs/scenes.md and `pbf info --scene-keys` show */

static const pbf_scene_key_info *find_key(const pbf_scene_key_info *keys, int n, const char *path,
                                          const char *only) {
    for (int i = 0; i < n; ++i)
        if (strcmp(keys[i].path, path) == 0 && strcmp(keys[i].only, only) == 0) return &keys[i];
    return NULL;
}

/* A scene holding one element of the list the key belongs to, of the type the key is for, and
 * the key's --set path into it ("[i]" -> "[0]", "W" -> "x_min"). Returns 0 for keys this test
 * leaves out: a free tool and a force probe need values with no default, a path needs keys. */
static int key_scene(const pbf_scene_key_info *k, char *json, size_t size, char *path,
                     size_t path_size) {
    char type[32] = "";
    sscanf(k->only, "%31[^,]", type);
    /* a mesh needs a file on disk: tests/test_mesh.c checks the meshes' keys */
    if (strcmp(type, "free") == 0 || strcmp(type, "force") == 0 ||
        strncmp(k->path, "tool.path", 9) == 0 || strcmp(k->table, "meshes") == 0)
        return 0;
    if (strcmp(k->table, "fluid.blocks") == 0)
        snprintf(json, size, "{\"materials\": [{\"name\": \"m\"}], \"fluid\": {\"blocks\": [{}]}}");
    else if (strcmp(k->table, "materials") == 0)
        snprintf(json, size, "{\"materials\": [{\"name\": \"m\"}]}");
    else if (strcmp(k->table, "colliders") == 0)
        snprintf(json, size, "{\"colliders\": [{\"type\": \"%s\"}]}", type[0] ? type : "sphere");
    else if (strcmp(k->table, "probes") == 0)
        snprintf(json, size, "{\"probes\": [{\"type\": \"%s\"}]}", type[0] ? type : "height");
    else if (strcmp(k->table, "tool") == 0)
        snprintf(json, size, "{\"tool\": {}}");
    else if (strcmp(k->table, "flow.emitters") == 0)
        snprintf(json, size,
                 "{\"materials\": [{\"name\": \"m\"}], \"flow\": {\"emitters\": [{\"shape\": "
                 "\"%s\"}]}}",
                 type[0] ? type : "disc");
    else if (strcmp(k->table, "flow.sinks") == 0)
        snprintf(json, size, "{\"flow\": {\"sinks\": [{}]}}");
    else
        snprintf(json, size, "{}");
    size_t o = 0;
    for (const char *c = k->path; *c != '\0' && o + 8 < path_size; ++c) {
        if (strncmp(c, "[i]", 3) == 0) {
            o += (size_t)snprintf(path + o, path_size - o, "[0]");
            c += 2;
        } else if (strncmp(c, ".W.", 3) == 0) {
            o += (size_t)snprintf(path + o, path_size - o, ".x_min.");
            c += 2;
        } else {
            path[o++] = *c;
        }
    }
    path[o] = '\0';
    return 1;
}

static int test_schema(void) {
    int n = pbf_scene_keys(NULL, 0);
    ENSURE(n > 60);
    pbf_scene_key_info *keys = calloc((size_t)n, sizeof *keys);
    ENSURE(keys != NULL);
    pbf_scene_key_info few[3];
    ENSURE(pbf_scene_keys(few, 3) == n); /* the count, with only 3 written */
    ENSURE(pbf_scene_keys(keys, n) == n);
    ENSURE(memcmp(few, keys, sizeof few) == 0);

    /* every key once per table and type; the tables one after the other */
    for (int i = 0; i < n; ++i) {
        for (int j = i + 1; j < n; ++j) {
            ENSURE(!(strcmp(keys[i].path, keys[j].path) == 0 &&
                     strcmp(keys[i].only, keys[j].only) == 0));
            if (j > i + 1 && strcmp(keys[i].table, keys[j].table) == 0)
                ENSURE(strcmp(keys[j - 1].table, keys[i].table) == 0);
        }
    }
    /* what the rows say: types, units, ranges, and defaults from pbf_default_*_def */
    const pbf_scene_key_info *k = find_key(keys, n, "solver.iterations", "");
    char want[32];
    snprintf(want, sizeof want, "%d", pbf_default_solver_def().iterations);
    ENSURE(k != NULL && strcmp(k->table, "solver") == 0 && strcmp(k->type, "integer") == 0);
    ENSURE(strcmp(k->default_value, want) == 0 && strcmp(k->range, "[1, 1000]") == 0);
    k = find_key(keys, n, "gravity", "");
    ENSURE(k != NULL && strcmp(k->table, "top") == 0 && strcmp(k->unit, "m/s^2") == 0);
    ENSURE(strcmp(k->default_value, "[0, -9.81, 0]") == 0 && strcmp(k->range, "finite") == 0);
    k = find_key(keys, n, "fluid.particle_radius", "");
    ENSURE(k != NULL && strcmp(k->default_value, "0.01") == 0 && strcmp(k->range, "(0, 10]") == 0);
    ENSURE(find_key(keys, n, "colliders[i].type", "") != NULL);
    ENSURE(find_key(keys, n, "colliders[i].half_extents", "box") != NULL);
    ENSURE(find_key(keys, n, "colliders[i].radius", "sphere, capsule") != NULL);
    ENSURE(find_key(keys, n, "domain.walls.W.period", "") != NULL);
    k = find_key(keys, n, "tool.path.keys[i].time", "kinematic");
    ENSURE(k != NULL && strcmp(k->default_note, "required") == 0);
    k = find_key(keys, n, "camera.target", "");
    ENSURE(k != NULL && k->default_value[0] == '\0' && k->default_note[0] != '\0');

    /* Every key is one the loader knows at that path: a value of the wrong type is an error that
     * names it, and its documented default, set explicitly, changes nothing. */
    int checked = 0;
    for (int i = 0; i < n; ++i) {
        char json[256], path[128], set[256], err[PBF_ERROR_SIZE];
        if (!key_scene(&keys[i], json, sizeof json, path, sizeof path)) continue;
        static pbf_scene plain, with;
        ENSURE(pbf_scene_parse(json, SRC, NULL, 0, &plain, err, sizeof err) == PBF_OK);
        const int is_text = strcmp(keys[i].type, "string") == 0;
        snprintf(set, sizeof set, "%s=%s", path, is_text ? "7" : "\"text\"");
        const char *sets[] = {set};
        pbf_status st = pbf_scene_parse(json, SRC, sets, 1, &with, err, sizeof err);
        char quoted[140];
        snprintf(quoted, sizeof quoted, "'%s", path);
        if (st == PBF_OK || strstr(err, quoted) == NULL) {
            fprintf(stderr, "%s on %s: %s\n", set, json, st == PBF_OK ? "loads" : err);
            return 1;
        }
        if (keys[i].default_value[0] == '\0') continue;
        snprintf(set, sizeof set, "%s=%s", path, keys[i].default_value);
        st = pbf_scene_parse(json, SRC, sets, 1, &with, err, sizeof err);
        if (st != PBF_OK || !scenes_equal(&plain, &with)) {
            fprintf(stderr, "%s on %s: %s\n", set, json, st == PBF_OK ? "another scene" : err);
            return 1;
        }
        ++checked;
    }
    free(keys);
    ENSURE(checked > 50);
    return 0;
}

TEST_MAIN_BEGIN
RUN_TEST(test_invalid_json);
RUN_TEST(test_io_errors);
RUN_TEST(test_unknown_keys);
RUN_TEST(test_wrong_types);
RUN_TEST(test_out_of_range);
RUN_TEST(test_set_success);
RUN_TEST(test_set_errors);
RUN_TEST(test_defaults);
RUN_TEST(test_round_trip);
RUN_TEST(test_default_matches_file);
RUN_TEST(test_shipped_scenes);
RUN_TEST(test_create_world);
RUN_TEST(test_message_buffers);
RUN_TEST(test_schema);
TEST_MAIN_END
