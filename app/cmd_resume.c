/* Checkpoints of `pbf run --checkpoint-every N`, and `pbf resume DIR` (issue 7).
 *
 * The checkpoint (include/pbf/checkpoint.h) holds the world's whole state; its application data
 * is a small JSON object with what the command needs to go on:
 *
 *     {"pbf_run_checkpoint": 1, "frame": 120, "checkpoint_every": 30, "scene": {...}}
 *
 * where "scene" is pbf_scene_to_json of the scene the run used (after --set and the
 * command-line options). `pbf resume DIR` restores the world, keeps frames 0..frame of the
 * folder, removes later ones, and runs the same loop as `pbf run` (run_world) from frame + 1:
 * the files it writes are bit-identical to those of a run that never stopped. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pbf/checkpoint.h"
#include "run.h"

#define APP_KEY "pbf_run_checkpoint"
#define APP_VERSION 1

static char *join_path(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s != NULL) snprintf(s, n, "%s/%s", dir, name);
    return s;
}

int run_checkpoint_save(const pbf_world *world, const pbf_scene *scene, int frame, int every) {
    char *scene_json = pbf_scene_to_json(scene);
    char *path = join_path(scene->output_dir, RUN_CHECKPOINT_NAME);
    size_t size = scene_json != NULL ? strlen(scene_json) + 128 : 0;
    char *app = scene_json != NULL ? malloc(size) : NULL;
    int rc = 0;
    if (scene_json == NULL || path == NULL || app == NULL) {
        rc = cli_error("out of memory writing a checkpoint");
    } else {
        int n = snprintf(app, size,
                         "{\"" APP_KEY "\": %d, \"frame\": %d, \"checkpoint_every\": %d, "
                         "\"scene\": %s}\n",
                         APP_VERSION, frame, every, scene_json);
        char err[PBF_ERROR_SIZE];
        if (pbf_checkpoint_save(world, path, app, (size_t)n, err, sizeof err) != PBF_OK)
            rc = cli_error("frame %d: checkpoint not written: %s", frame, err);
    }
    free(scene_json);
    free(path);
    free(app);
    return rc;
}

/* ---- the command ----------------------------------------------------------------------------- */

static const char resume_synopsis[] =
    "usage: pbf resume DIR [--frames N | --time T] [--threads N] [--checkpoint-every N]\n"
    "                  [--set key=value ...] [--quiet]\n";

static const char resume_help[] =
    "Goes on with the run whose output folder is DIR, from its checkpoint (DIR/checkpoint.pbfck,\n"
    "written by `pbf run --checkpoint-every N`, and at Ctrl-C by such a run). Frames 0..F of the\n"
    "checkpoint's frame F stay; later frame files and stats rows are removed and written again.\n"
    "Without --set, the result is bit-identical to a run that never stopped.\n"
    "\n"
    "options:\n"
    "  --frames N          the run's last frame (default: the run's own); more extends the run\n"
    "  --time T            simulated seconds instead (frames = ceil(T * fps))\n"
    "  --threads N         CPU threads, 0 = all cores (results do not depend on it)\n"
    "  --checkpoint-every N  go on saving every N frames (default: as the run did; 0: never)\n"
    "  --set KEY=VALUE     change the solver on the way: solver.*, time.substeps, time.fps,\n"
    "                      time.frames and output.format only (the particles, the domain,\n"
    "                      gravity and the colliders come from the checkpoint); repeatable\n"
    "  --quiet, -q         no progress line and no summary\n"
    "  --help, -h          this help\n"
    "\n"
    "examples:\n"
    "  pbf run scenes/dam_break.json --checkpoint-every 30 --out out/dam   (stopped at frame 95)\n"
    "  pbf resume out/dam                          # frames 91.. again, then on to the end\n"
    "  pbf resume out/dam --set time.substeps=8    # after the watchdog stopped an unstable run\n";

/* Keys a resumed run may change: how the solver runs, not what is simulated. */
static int allowed_override(const char *set) {
    static const char *const prefixes[] = {"solver.", "time.substeps=", "time.fps=",
                                           "time.frames=", "output.format"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; ++i)
        if (strncmp(set, prefixes[i], strlen(prefixes[i])) == 0) return 1;
    return 0;
}

typedef struct resume_args {
    const char *dir;
    int frames;        /* < 0: the run's */
    double time;       /* < 0: unset */
    int threads;       /* < 0: the run's */
    int every;         /* < 0: the run's */
    int quiet;
    cli_overrides sets;
} resume_args;

/* Reads the checkpoint's application data: frame, interval and the scene (with the overrides). */
static int read_app(const pbf_checkpoint *ck, const char *path, const resume_args *a,
                    pbf_scene *scene, int *frame, int *every) {
    size_t size = 0;
    const char *text = pbf_checkpoint_app_data(ck, &size);
    if (text == NULL)
        return cli_error("%s: a checkpoint without the data of `pbf run` (written by another "
                         "program through the library?)",
                         path);
    cJSON *root = cJSON_ParseWithLength(text, size);
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(root, APP_KEY);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "frame");
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "checkpoint_every");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "scene");
    int rc = 0;
    if (!cJSON_IsNumber(key) || !cJSON_IsNumber(f) || !cJSON_IsNumber(e) || !cJSON_IsObject(s)) {
        rc = cli_error("%s: the checkpoint's run data is not what `pbf run` writes", path);
    } else if (key->valuedouble != APP_VERSION) {
        rc = cli_error("%s: run data version %g, this pbf reads %d", path, key->valuedouble,
                       APP_VERSION);
    } else {
        *frame = (int)f->valuedouble;
        *every = (int)e->valuedouble;
        char *scene_text = cJSON_PrintUnformatted(s);
        char source[1100];
        snprintf(source, sizeof source, "%s (the run's scene)", path);
        char err[PBF_ERROR_SIZE];
        if (scene_text == NULL)
            rc = cli_error("out of memory");
        else if (pbf_scene_parse(scene_text, source, a->sets.items, a->sets.count, scene, err,
                                 sizeof err) != PBF_OK)
            rc = cli_error("%s", err);
        free(scene_text);
    }
    cJSON_Delete(root);
    return rc;
}

static int resume(const resume_args *a) {
    char *path = join_path(a->dir, RUN_CHECKPOINT_NAME);
    pbf_scene *scene = malloc(sizeof *scene);
    if (path == NULL || scene == NULL) {
        free(path);
        free(scene);
        return cli_error("out of memory");
    }
    char err[PBF_ERROR_SIZE];
    pbf_checkpoint *ck = NULL;
    int rc = 0, frame = 0, every = 0;
    if (pbf_checkpoint_open(path, &ck, err, sizeof err) != PBF_OK)
        rc = cli_error("cannot resume: %s", err);
    if (rc == 0) rc = read_app(ck, path, a, scene, &frame, &every);
    if (rc == 0 && (int64_t)frame != pbf_checkpoint_steps(ck))
        rc = cli_error("%s: the run data says frame %d, the world has made %lld steps", path,
                       frame, (long long)pbf_checkpoint_steps(ck));
    if (rc == 0) {
        /* warnings and errors about the (possibly changed) scene, as `pbf run` prints them */
        char warnings[8192];
        int count = 0;
        if (pbf_scene_check(scene, warnings, sizeof warnings, &count, err, sizeof err) != PBF_OK)
            rc = cli_error("%s", err);
        else
            cli_print_warnings(warnings);
    }
    if (rc == 0) {
        if (a->threads >= 0) scene->world.threads = a->threads;
        if (a->frames >= 0) scene->frames = a->frames;
        if (a->time >= 0.0) {
            double frames = ceil(a->time * scene->fps - 1e-9);
            if (!(frames >= 0.0 && frames <= 1e8))
                rc = cli_error("--time %g at %g fps gives too many frames", a->time,
                               (double)scene->fps);
            else
                scene->frames = (int)frames;
        }
        snprintf(scene->output_dir, sizeof scene->output_dir, "%s", a->dir);
        if (rc == 0 && scene->frames < frame)
            rc = cli_error("--frames %d: the checkpoint is already at frame %d", scene->frames,
                           frame);
    }
    pbf_world *world = NULL;
    if (rc == 0 && pbf_checkpoint_create_world(ck, &scene->world, &world, err, sizeof err) !=
                       PBF_OK)
        rc = cli_error("cannot resume: %s", err);
    pbf_checkpoint_close(ck);
    free(path);
    if (rc != 0) {
        free(scene);
        return rc;
    }
    if (scene->frames == frame) {
        if (!a->quiet)
            fprintf(stderr,
                    "pbf resume: '%s' is complete (frame %d of %d); --frames N goes further\n",
                    a->dir, frame, scene->frames);
        pbf_world_destroy(world);
        free(scene);
        return CLI_EXIT_OK;
    }
    run_options o;
    run_options_init(&o);
    o.quiet = a->quiet;
    o.checkpoint_every = a->every >= 0 ? a->every : every;
    return run_world(world, scene, frame, &o, NULL);
}

int cmd_resume(int argc, char **argv) {
    cli_parser p;
    cli_parser_init(&p, "resume", resume_synopsis, argc, argv);
    resume_args a;
    memset(&a, 0, sizeof a);
    a.frames = a.threads = a.every = -1;
    a.time = -1.0;
    int rc = CLI_EXIT_OK, help = 0;
    const char *arg, *v;
    while (rc == CLI_EXIT_OK && (arg = cli_next(&p)) != NULL) {
        if (cli_flag(&p, "--help", "-h")) {
            help = 1;
        } else if (cli_flag(&p, "--quiet", "-q")) {
            a.quiet = 1;
        } else if (cli_option(&p, "--frames", &v)) {
            if (a.time >= 0.0) rc = cli_usage_error(&p, "--frames and --time exclude each other");
            else if (!cli_parse_int(&p, "--frames", v, 0, 100000000, &a.frames))
                rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--time", &v)) {
            if (a.frames >= 0) rc = cli_usage_error(&p, "--frames and --time exclude each other");
            else if (!cli_parse_double(&p, "--time", v, 0.0, 1e7, &a.time)) rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--threads", &v)) {
            if (!cli_parse_int(&p, "--threads", v, 0, 4096, &a.threads)) rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--checkpoint-every", &v)) {
            if (!cli_parse_int(&p, "--checkpoint-every", v, 0, 100000000, &a.every))
                rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--set", &v)) {
            if (!allowed_override(v))
                rc = cli_usage_error(&p,
                                     "--set '%s': a resumed run can change solver.*, "
                                     "time.substeps, time.fps, time.frames and output.format "
                                     "only (the particles, domain, gravity and colliders come "
                                     "from the checkpoint)",
                                     v);
            else
                rc = cli_take_set(&p, v, &a.sets);
        } else if (p.failed) {
            rc = CLI_EXIT_USAGE;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            rc = cli_usage_error(&p, "unknown option '%s'", arg);
        } else if (a.dir != NULL) {
            rc = cli_usage_error(&p, "one folder at a time (got '%s' and '%s')", a.dir, arg);
        } else {
            a.dir = arg;
        }
    }
    if (p.failed) rc = CLI_EXIT_USAGE;
    if (rc == CLI_EXIT_OK && help) {
        printf("%s\n%s", resume_synopsis, resume_help);
    } else if (rc == CLI_EXIT_OK && a.dir == NULL) {
        rc = cli_usage_error(&p, "which run? give its output folder");
    } else if (rc == CLI_EXIT_OK) {
        rc = resume(&a);
    }
    cli_overrides_free(&a.sets);
    return rc;
}
