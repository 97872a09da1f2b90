/* `pbf run`: simulate a scene, write one particle file per frame, stats.csv and scene.json.
 *
 * The loop (run_simulation) is: load scene -> apply command-line overrides -> build world ->
 * open output folder -> frame 0 -> { step, write frame, hooks, progress } per frame, checking
 * the Ctrl-C flag between frames -> summary. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "interrupt.h"
#include "mesh_output.h"
#include "progress.h"
#include "run.h"
#include "run_output.h"
#ifdef PBF_APP_HAVE_RENDER
#include "render_run.h"
#endif

static const char run_synopsis[] =
    "usage: pbf run [SCENE] [--frames N | --time T] [--out DIR] [--format ply,vtk,none]\n"
    "               [--threads N] [--set key=value ...] [--checkpoint-every N] [--quiet]\n"
    "               [--backend cpu|cuda] [--mesh]\n"
#ifdef PBF_APP_HAVE_RENDER
    "               [--video FILE] [--png DIR] [--resolution WxH] [--look fluid|spheres]\n"
#endif
    ;

static const char run_help[] =
    "Simulates SCENE (a JSON file; without it the built-in dam break) and writes, into the\n"
    "output folder, one particle file per frame (frame_00000.ply is the initial state),\n"
    "stats.csv (one row per frame) and scene.json (every parameter of the run).\n"
    "\n"
    "options:\n"
    "  --frames N          frames to simulate after frame 0 (default: the scene's time.frames)\n"
    "  --time T            simulated seconds instead of a frame count (frames = ceil(T * fps))\n"
    "  --out DIR           output folder (default: the scene's output folder, out/<name>)\n"
    "  --format LIST       ply, vtk, ply,vtk or none (default: the scene's, usually ply)\n"
    "  --threads N         CPU threads, 0 = all cores (default: the scene's world.threads)\n"
    "  --backend NAME      cpu or cuda (an NVIDIA GPU; fails at once where none is usable);\n"
    "                      default: the scene's solver.backend\n"
    "  --set KEY=VALUE     override a scene parameter before validation; repeatable\n"
    "                      (e.g. --set solver.iterations=6; the value is JSON)\n"
    "  --checkpoint-every N  save the whole state to DIR/checkpoint.pbfck every N frames (and\n"
    "                      at Ctrl-C); `pbf resume DIR` goes on from it bit-identically\n"
    "  --quiet, -q         no progress line and no summary\n"
    "  --help, -h          this help\n"
    "\n"
    "Ctrl-C finishes the frame in progress, writes its files and stops with exit status 130;\n"
    "the folder stays valid (stats.csv has one row per frame file). A second Ctrl-C stops at once.\n"
    "An unstable simulation (NaN, or a particle far beyond the CFL speed limit) stops with exit\n"
    "status 1, a message naming the step and the particle, and every frame written so far intact.\n"
    "Frame files of an earlier run in the same folder are removed first.\n"
    "\n"
    "examples:\n"
    "  pbf run --frames 60 --out out/dam\n"
    "  pbf run scenes/dam_break.json --time 2 --format ply,vtk --threads 8\n"
    "  pbf run scenes/dam_break.json --set solver.iterations=6 --set time.fps=30\n";

void run_options_init(run_options *o) {
    memset(o, 0, sizeof *o);
    o->frames = -1;
    o->time = -1.0;
    o->formats = -1;
    o->threads = -1;
    o->backend = -1;
}

/* ---- summary ------------------------------------------------------------------------------- */

typedef struct run_summary {
    int frames_done;       /* frame files written, frame 0 included */
    int steps;             /* pbf_world_step calls */
    double sum_avg_error;  /* sum over steps of the average density error */
    float max_error;
    double sum_step_ms;
    double sum_stage_ms[PBF_STAGE_COUNT];
    double start;          /* cli_now() */
} run_summary;

static void summary_add_step(run_summary *s, const pbf_world *world) {
    pbf_profile p = pbf_world_get_profile(world);
    ++s->steps;
    s->sum_avg_error += p.avg_density_error;
    if (p.max_density_error > s->max_error) s->max_error = p.max_density_error;
    s->sum_step_ms += p.step_ms;
    for (int k = 0; k < PBF_STAGE_COUNT; ++k) s->sum_stage_ms[k] += p.stage_ms[k];
}

static void summary_print(const run_summary *s, const pbf_world *world, const run_output *out) {
    double wall = cli_now() - s->start;
    char count[32], formats[32];
    printf("pbf run: %d frame%s (t = %.3f s) in %.1f s\n", s->frames_done,
           s->frames_done == 1 ? "" : "s", pbf_world_time(world), wall);
    printf("  particles        %s\n", cli_format_count(pbf_world_particle_count(world), count, sizeof count));
    if (s->steps > 0) {
        double mean_ms = s->sum_step_ms / s->steps;
        printf("  density error    avg %.3f %%   max %.3f %%\n", 100.0 * s->sum_avg_error / s->steps,
               100.0 * s->max_error);
        printf("  time per step    %.3f ms (mean of %d), %.1f steps/s\n", mean_ms, s->steps,
               mean_ms > 0.0 ? 1000.0 / mean_ms : 0.0);
        printf("  stage            ms/step   share\n");
        for (int k = 0; k < PBF_STAGE_COUNT; ++k) {
            double ms = s->sum_stage_ms[k] / s->steps;
            printf("    %-14s %8.3f  %5.1f %%\n", pbf_stage_name((pbf_stage)k), ms,
                   s->sum_step_ms > 0.0 ? 100.0 * s->sum_stage_ms[k] / s->sum_step_ms : 0.0);
        }
    }
    printf("  output           %s: %d particle file%s (%s), stats.csv, scene.json\n", out->dir,
           out->files_written, out->files_written == 1 ? "" : "s",
           cli_format_names(out->formats, formats, sizeof formats));
    fflush(stdout);
}

/* ---- the loop ------------------------------------------------------------------------------ */

/* Command-line values win over the scene's; scene.json then documents what actually ran. */
static int apply_options(const run_options *o, pbf_scene *scene) {
    if (o->threads >= 0) scene->world.threads = o->threads;
    if (o->backend >= 0) scene->world.backend = (pbf_backend)o->backend; /* issue 4 */
    if (o->formats >= 0) scene->formats = (unsigned)o->formats;
    if (o->frames >= 0) scene->frames = o->frames;
    if (o->time >= 0.0) {
        double frames = ceil(o->time * scene->fps - 1e-9);
        if (!(frames >= 0.0 && frames <= 1e8))
            return cli_error("--time %g at %g fps gives too many frames", o->time, (double)scene->fps);
        scene->frames = (int)frames;
    }
    if (o->out_dir != NULL) {
        if (strlen(o->out_dir) >= sizeof scene->output_dir)
            return cli_error("--out: path longer than %zu characters", sizeof scene->output_dir - 1);
        snprintf(scene->output_dir, sizeof scene->output_dir, "%s", o->out_dir);
    }
    if (scene->output_dir[0] == '\0') return cli_error("no output folder (use --out DIR)");
    return 0;
}

static const char *signal_name(int sig) {
    return sig == SIGINT ? "Ctrl-C (SIGINT)" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

int run_simulation(const run_options *o, const run_hooks *hooks) {
    /* Over a file size limit (ulimit -f) a write then fails with EFBIG and is reported like a
     * full disk, instead of the process being killed with a temporary file left behind. */
    signal(SIGXFSZ, SIG_IGN);
    pbf_scene *scene = malloc(sizeof *scene);
    if (scene == NULL) return cli_error("out of memory");
    int rc = cli_load_scene(o->scene_path, o->sets, o->set_count, scene);
    if (rc == 0) rc = apply_options(o, scene);
    if (rc != 0) {
        free(scene);
        return rc;
    }

    char err[PBF_ERROR_SIZE];
    pbf_world *world = NULL;
    if (pbf_scene_create_world(scene, &world, err, sizeof err) != PBF_OK) {
        free(scene);
        return cli_error("%s", err);
    }
    return run_world(world, scene, -1, o, hooks);
}

int run_world(pbf_world *world, pbf_scene *scene, int resume_frame, const run_options *o,
              const run_hooks *hooks) {
    static const run_hooks no_hooks = {NULL, NULL, NULL, NULL};
    if (hooks == NULL) hooks = &no_hooks;
    signal(SIGXFSZ, SIG_IGN); /* see run_simulation */
    const int frames = scene->frames;
    const float dt = 1.0f / scene->fps;
    const int first = resume_frame < 0 ? 0 : resume_frame + 1;
    int rc = 0;
    if (!o->quiet) {
        char count[32], formats[32];
        if (resume_frame < 0)
            fprintf(stderr,
                    "pbf run: %s (%s): %s particles, %d frames at %g fps (%.3f s) -> %s [%s]\n",
                    scene->name, scene->source,
                    cli_format_count(pbf_world_particle_count(world), count, sizeof count), frames,
                    (double)scene->fps, frames / (double)scene->fps, scene->output_dir,
                    cli_format_names(scene->formats, formats, sizeof formats));
        else
            fprintf(stderr,
                    "pbf resume: %s: %s particles, frame %d (t = %.3f s) to %d at %g fps -> %s "
                    "[%s]\n",
                    scene->name,
                    cli_format_count(pbf_world_particle_count(world), count, sizeof count),
                    resume_frame, pbf_world_time(world), frames, (double)scene->fps,
                    scene->output_dir, cli_format_names(scene->formats, formats, sizeof formats));
    }

    /* probes (issue 6): a world restored from a checkpoint comes without them */
    if (scene->probe_count > 0 && pbf_world_probe_count(world) == 0 &&
        pbf_world_set_probes(world, scene->probes, scene->probe_count) != PBF_OK) {
        cli_error("%s: %s", scene->source, pbf_world_error(world));
        pbf_world_destroy(world);
        free(scene);
        return CLI_EXIT_ERROR;
    }
    run_output out;
    rc = resume_frame < 0
             ? run_output_open(&out, scene->output_dir, scene->formats, scene)
             : run_output_resume(&out, scene->output_dir, scene->formats, scene, resume_frame);
    if (rc == 0) {
        /* resources (issue 7): warn when the run's files will not fit on the disk */
        double bytes = run_output_estimate(pbf_world_particle_count(world), scene->formats,
                                           frames - first + 1, o->checkpoint_every > 0);
        cli_warn_disk_space(scene->output_dir, bytes, frames - first + 1);
    }
    if (rc == 0 && hooks->on_start != NULL && hooks->on_start(world, scene, hooks->user) != 0)
        rc = CLI_EXIT_ERROR;

    run_summary summary;
    memset(&summary, 0, sizeof summary);
    summary.start = cli_now();
    summary.frames_done = first; /* frame files already in the folder */
    progress bar;
    int interrupted = 0, last_checkpoint = resume_frame, unstable = 0;
    if (rc == 0) {
        interrupt_install();
        if (!o->quiet) progress_begin(&bar, stderr, frames);
        for (int frame = first; frame <= frames; ++frame) {
            if (frame > 0) {
                if ((interrupted = interrupt_pending()) != 0) break;
                pbf_status st = pbf_world_step(world, dt);
                if (st != PBF_OK) {
                    if (!o->quiet) progress_end(&bar);
                    rc = cli_error("frame %d: %s", frame, pbf_world_error(world));
                    unstable = st == PBF_ERR_UNSTABLE;
                    break;
                }
                summary_add_step(&summary, world);
            }
            if (run_output_frame(&out, world, frame) != 0) {
                if (!o->quiet) progress_end(&bar);
                rc = cli_error("%s", out.error);
                break;
            }
            summary.frames_done = frame + 1;
            /* checkpoints (issue 7): every N frames, after the frame's files */
            if (o->checkpoint_every > 0 && frame > 0 && frame % o->checkpoint_every == 0) {
                if (run_checkpoint_save(world, scene, frame, o->checkpoint_every) != 0) {
                    if (!o->quiet) progress_end(&bar);
                    rc = CLI_EXIT_ERROR; /* printed */
                    break;
                }
                last_checkpoint = frame;
            }
            if (hooks->on_frame != NULL && hooks->on_frame(world, frame, hooks->user) != 0) {
                rc = CLI_EXIT_ERROR; /* the hook printed why */
                break;
            }
            if (!o->quiet && frame > 0)
                progress_update(&bar, frame, pbf_world_time(world), pbf_world_particle_count(world));
        }
        /* A signal that arrives during the last frame is not reported: the run is complete. */
        if (!o->quiet) progress_end(&bar);
        interrupt_restore();
    }
    const int last_frame = summary.frames_done - 1;
    /* Ctrl-C with checkpoints on: one more of the last frame, so nothing is simulated twice. */
    if (interrupted && o->checkpoint_every > 0 && last_frame > 0 && last_frame > last_checkpoint &&
        run_checkpoint_save(world, scene, last_frame, o->checkpoint_every) == 0)
        last_checkpoint = last_frame;
    if (!o->quiet && summary.frames_done > first) summary_print(&summary, world, &out);
    if (interrupted) {
        fprintf(stderr,
                "pbf run: stopped by %s after frame %d of %d (t = %.3f s); %d frames in '%s'\n",
                signal_name(interrupted), last_frame, frames, pbf_world_time(world),
                summary.frames_done, scene->output_dir);
        rc = 128 + interrupted;
    }
    if (last_checkpoint > 0 && interrupted)
        fprintf(stderr,
                "pbf run: the checkpoint of frame %d is in '%s'; go on with: pbf resume %s\n",
                last_checkpoint, scene->output_dir, scene->output_dir);
    if (last_checkpoint > 0 && unstable)
        fprintf(stderr,
                "pbf run: the checkpoint of frame %d is in '%s'; go on from it with smaller "
                "substeps: pbf resume %s --set time.substeps=%d\n",
                last_checkpoint, scene->output_dir, scene->output_dir,
                2 * pbf_world_get_def(world)->substeps);
    if (hooks->on_finish != NULL) hooks->on_finish(world, summary.frames_done, hooks->user);
    run_output_close(&out);
    pbf_world_destroy(world);
    free(scene);
    return rc;
}

/* ---- the command --------------------------------------------------------------------------- */

/* The one place where per-frame work beyond the particle files is wired in: a renderer's
 * `--png DIR` / `--video FILE` sets hooks->on_frame (and on_start / on_finish) here from
 * options parsed in cmd_run. */
static void make_hooks(const run_options *o, run_hooks *hooks) {
    (void)o;
    memset(hooks, 0, sizeof *hooks);
}

int cmd_run(int argc, char **argv) {
    cli_parser p;
    cli_parser_init(&p, "run", run_synopsis, argc, argv);
    run_options o;
    run_options_init(&o);
    cli_overrides sets = {NULL, 0, 0};
    int rc = CLI_EXIT_OK, help = 0;
    mesh_run *mesh = mesh_run_create(); /* --mesh: app/mesh_output.c */
    if (mesh == NULL) return cli_error("out of memory");
#ifdef PBF_APP_HAVE_RENDER
    render_run *render = render_run_create();
    if (render == NULL) return cli_error("out of memory");
#endif
    const char *a, *v;
    while (rc == CLI_EXIT_OK && (a = cli_next(&p)) != NULL) {
        if (cli_flag(&p, "--help", "-h")) {
            help = 1;
        } else if (cli_flag(&p, "--quiet", "-q")) {
            o.quiet = 1;
        } else if (cli_option(&p, "--frames", &v)) {
            if (o.time >= 0.0) rc = cli_usage_error(&p, "--frames and --time exclude each other");
            else if (!cli_parse_int(&p, "--frames", v, 0, 100000000, &o.frames)) rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--time", &v)) {
            if (o.frames >= 0) rc = cli_usage_error(&p, "--frames and --time exclude each other");
            else if (!cli_parse_double(&p, "--time", v, 0.0, 1e7, &o.time)) rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--out", &v)) {
            if (v[0] == '\0') rc = cli_usage_error(&p, "--out needs a folder");
            o.out_dir = v;
        } else if (cli_option(&p, "--format", &v)) {
            unsigned f = 0;
            if (!cli_parse_formats(&p, "--format", v, &f)) rc = CLI_EXIT_USAGE;
            o.formats = (int)f;
        } else if (cli_option(&p, "--threads", &v)) {
            if (!cli_parse_int(&p, "--threads", v, 0, 4096, &o.threads)) rc = CLI_EXIT_USAGE;
        } else if (cli_option(&p, "--backend", &v)) { /* issue 4 */
            if (strcmp(v, "cpu") == 0) o.backend = PBF_BACKEND_CPU;
            else if (strcmp(v, "cuda") == 0) o.backend = PBF_BACKEND_CUDA;
            else rc = cli_usage_error(&p, "--backend expects cpu or cuda, got '%s'", v);
        } else if (cli_option(&p, "--set", &v)) {
            rc = cli_take_set(&p, v, &sets);
        } else if (cli_option(&p, "--checkpoint-every", &v)) { /* issue 7 */
            if (!cli_parse_int(&p, "--checkpoint-every", v, 0, 100000000, &o.checkpoint_every))
                rc = CLI_EXIT_USAGE;
        } else if (mesh_run_option(mesh, &p)) {
            if (p.failed) rc = CLI_EXIT_USAGE;
#ifdef PBF_APP_HAVE_RENDER
        } else if (render_run_option(render, &p)) {
            if (p.failed) rc = CLI_EXIT_USAGE;
#endif
        } else if (p.failed) {
            rc = CLI_EXIT_USAGE;
        } else if (a[0] == '-' && a[1] != '\0') {
            rc = cli_usage_error(&p, "unknown option '%s'", a);
        } else if (o.scene_path != NULL) {
            rc = cli_usage_error(&p, "one scene at a time (got '%s' and '%s')", o.scene_path, a);
        } else {
            o.scene_path = a;
        }
    }
    if (p.failed) rc = CLI_EXIT_USAGE;
    if (rc == CLI_EXIT_OK && help) {
        printf("%s\n%s", run_synopsis, run_help);
#ifdef PBF_APP_HAVE_RENDER
        printf("\n%s", render_run_help);
#endif
        printf("\n%s\n%s", mesh_run_help, mesh_settings_help);
    } else if (rc == CLI_EXIT_OK) {
        o.sets = sets.items;
        o.set_count = sets.count;
        run_hooks hooks;
        make_hooks(&o, &hooks);
#ifdef PBF_APP_HAVE_RENDER
        render_run_hooks(render, o.quiet, &hooks);
#endif
        mesh_run_hooks(mesh, o.quiet, &hooks);
        rc = run_simulation(&o, &hooks);
    }
#ifdef PBF_APP_HAVE_RENDER
    render_run_destroy(render);
#endif
    mesh_run_destroy(mesh);
    cli_overrides_free(&sets);
    return rc;
}
