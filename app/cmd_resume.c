/* `pbf resume DIR` (docs/cli.md): goes on with a run from the checkpoint that
 * `pbf run --checkpoint-every N` saved (app/run_checkpoint.h). It restores the world, keeps
 * frames 0..frame of the folder, removes later ones, and runs the same loop as `pbf run`
 * (run_world, app/run.c) from frame + 1: the files it writes are bit-identical to those of a
 * run that never stopped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "run.h"
#include "run_checkpoint.h"

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

static int resume(const resume_args *a) {
    char *path = run_checkpoint_path(a->dir);
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
    if (rc == 0)
        rc = run_checkpoint_read(ck, path, a->sets.items, a->sets.count, scene, &frame, &every);
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
