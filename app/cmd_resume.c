/* `pbf resume DIR` (docs/cli.md): goes on with a run from the checkpoint that
 * `pbf run --checkpoint-every N` saved (app/run_checkpoint.h). It restores the world, keeps
 * frames 0..frame of the folder, removes later ones, and runs the same loop as `pbf run`
 * (run_world, app/run.c) from frame + 1: the files it writes are bit-identical to those of a
 * run that never stopped. */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run.h"
#include "run_checkpoint.h"
#include "run_comm.h"

static const char resume_synopsis[] =
    "usage: pbf resume DIR [--frames N | --time T] [--threads N] [--checkpoint-every N]\n"
    "                  [--set key=value ...] [--quiet]\n";

static const char resume_help[] =
    "Goes on with the run whose output folder is DIR, from its checkpoint (DIR/checkpoint.pbfck,\n"
    "written by `pbf run --checkpoint-every N`, and at Ctrl-C by such a run). Frames 0..F of the\n"
    "checkpoint's frame F stay; later frame files and stats rows are removed and written again.\n"
    "Without --set, the result is bit-identical to a run that never stopped.\n"
    "A run split over MPI ranks saves a piece per rank and DIR/checkpoint_mpi.json instead;\n"
    "`mpirun -np M pbf resume DIR` goes on from them on any M (bit-identical on the rank count\n"
    "that wrote them), `pbf resume DIR` in one process (docs/mpi.md).\n"
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
    static const char *const prefixes[] = {
        "solver.", "time.substeps=", "time.fps=", "time.frames=", "output.format"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; ++i)
        if (strncmp(set, prefixes[i], strlen(prefixes[i])) == 0) return 1;
    return 0;
}

typedef struct resume_args {
    const char *dir;
    int frames; /* < 0: the run's */
    double time; /* < 0: unset */
    int threads; /* < 0: the run's */
    int every; /* < 0: the run's */
    int quiet;
    cli_overrides sets;
} resume_args;

/* Opens the checkpoint files: the manifest's pieces (all of them, or only this rank's when the
 * rank count is the manifest's: same_ranks), or DIR/checkpoint.pbfck. */
static int open_checkpoints(const resume_args *a, const run_manifest *m, int manifest,
                            int same_ranks, const run_comm *comm, pbf_checkpoint **cks, int *n,
                            char **path) {
    char err[PBF_ERROR_SIZE];
    *n = 0;
    if (!manifest) {
        *path = run_checkpoint_path(a->dir);
        if (*path == NULL) return cli_error("out of memory");
        if (pbf_checkpoint_open(*path, &cks[0], err, sizeof err) != PBF_OK)
            return cli_error("cannot resume: %s", err);
        *n = 1;
        if (pbf_checkpoint_is_piece(cks[0]))
            return cli_error("cannot resume: %s is one rank's piece of a split checkpoint, "
                             "without its manifest %s",
                             *path, RUN_CHECKPOINT_MANIFEST);
        return 0;
    }
    const int first = same_ranks ? comm->rank : 0, count = same_ranks ? 1 : m->ranks;
    *path = malloc(strlen(m->files[first]) + 1);
    if (*path == NULL) return cli_error("out of memory");
    strcpy(*path, m->files[first]);
    for (int k = 0; k < count; ++k) {
        if (pbf_checkpoint_open(m->files[first + k], &cks[k], err, sizeof err) != PBF_OK)
            return cli_error("cannot resume: %s", err);
        *n = k + 1;
        if (pbf_checkpoint_steps(cks[k]) != m->steps)
            return cli_error("cannot resume: %s is at step %lld, its manifest %s at step %lld "
                             "(pieces of another save)",
                             m->files[first + k], (long long)pbf_checkpoint_steps(cks[k]),
                             RUN_CHECKPOINT_MANIFEST, m->steps);
    }
    return 0;
}

static int resume(const resume_args *a) {
    const run_comm *comm = run_comm_get(); /* under mpirun: split over the ranks (docs/mpi.md) */
    int muted = cli_mute_stderr(comm != NULL && comm->rank != 0); /* every rank reads it */
    run_manifest m;
    int manifest = run_manifest_read(a->dir, &m);
    int rc = manifest > 0 ? CLI_EXIT_ERROR : 0;
    manifest = manifest == 0;
    const int same_ranks = manifest && comm != NULL && comm->ranks == m.ranks;
    pbf_checkpoint **cks = calloc(manifest ? (size_t)m.ranks : 1, sizeof *cks);
    int nck = 0;
    char *path = NULL;
    pbf_scene *scene = malloc(sizeof *scene);
    if (rc == 0 && (scene == NULL || cks == NULL)) rc = cli_error("out of memory");
    if (rc == 0) rc = open_checkpoints(a, &m, manifest, same_ranks, comm, cks, &nck, &path);
    char err[PBF_ERROR_SIZE];
    int frame = 0, every = 0;
    pbf_checkpoint *ck = nck > 0 ? cks[0] : NULL;
    if (rc == 0)
        rc = run_checkpoint_read(ck, path, a->sets.items, a->sets.count, scene, &frame, &every);
    if (rc == 0 && (int64_t)frame != pbf_checkpoint_steps(ck))
        rc = cli_error("%s: the run data says frame %d, the world has made %lld steps", path, frame,
                       (long long)pbf_checkpoint_steps(ck));
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
    /* the pieces of a split checkpoint on another rank count (or in one process) make one world
     * first, which the ranks then split again at the quantiles of x */
    if (rc == 0 &&
        (manifest && !same_ranks
             ? pbf_checkpoint_create_world_merged((const pbf_checkpoint *const *)cks, nck,
                                                  &scene->world, &world, err, sizeof err)
             : pbf_checkpoint_create_world(ck, &scene->world, &world, err, sizeof err)) != PBF_OK)
        rc = cli_error("cannot resume: %s", err);
    if (rc == 0 && manifest && !same_ranks && pbf_world_particle_count(world) != m.particles)
        rc = cli_error("cannot resume: the pieces hold %d particles, the manifest says %lld",
                       pbf_world_particle_count(world), m.particles);
    /* flow.capacity bounds each process's particles (docs/mpi.md): split again, the ranks check
     * their shares before every step; whole in one process, the merged world must fit it */
    if (rc == 0 && manifest && !same_ranks && (comm == NULL || comm->ranks == 1)) {
        const int capacity = pbf_world_get_flow(world).capacity;
        if (capacity > 0 && pbf_world_particle_count(world) > capacity)
            rc = cli_error("cannot resume in one process: the %d ranks' pieces hold %d particles, "
                           "more than the particle capacity of %d per process (flow.capacity); "
                           "resume on more ranks (mpirun -np N pbf resume)",
                           m.ranks, pbf_world_particle_count(world), capacity);
    }
    for (int k = 0; k < nck; ++k) pbf_checkpoint_close(cks[k]);
    free(cks);
    free(path);
    if (comm != NULL) rc = comm->max(rc != 0) ? CLI_EXIT_ERROR : 0; /* all go on, or none */
    if (rc == 0 && comm != NULL &&
        (same_ranks ? comm->split_at(world, m.cuts) : comm->split(world)) != 0)
        rc = CLI_EXIT_ERROR;
    run_manifest_free(&m);
    cli_unmute_stderr(muted);
    if (rc != 0) {
        pbf_world_destroy(world);
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
    o.comm = comm;
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
            if (a.time >= 0.0)
                rc = cli_usage_error(&p, "--frames and --time exclude each other");
            else if (!cli_parse_int(&p, "--frames", v, 0, 100000000, &a.frames))
                rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--time", &v)) {
            if (a.frames >= 0)
                rc = cli_usage_error(&p, "--frames and --time exclude each other");
            else if (!cli_parse_double(&p, "--time", v, 0.0, 1e7, &a.time))
                rc = CLI_EXIT_USAGE;
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
        } else {
            rc = cli_operand(&p, arg, "folder", &a.dir);
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
