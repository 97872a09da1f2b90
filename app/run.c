/* The simulation loop of `pbf run` and `pbf resume` (see run.h): load scene -> apply
 * command-line overrides -> build world -> open output folder -> frame 0 -> { step, write frame,
 * checkpoint, hooks, progress } per frame, checking the Ctrl-C flag between frames -> summary.
 * `pbf resume` enters at run_world with a world restored from a checkpoint. */
#include "run.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pbf/geometry.h" /* the open-mesh warning */
#include "interrupt.h"
#include "progress.h"
#include "run_checkpoint.h"
#include "run_comm.h"
#include "run_output.h"

void run_options_init(run_options *o) {
    memset(o, 0, sizeof *o);
    o->frames = -1;
    o->time = -1.0;
    o->formats = -1;
    o->threads = -1;
    o->backend = -1;
    o->balance = RUN_BALANCE_DEFAULT;
}

/* ---- summary ------------------------------------------------------------------------------- */

/* Words, as everywhere in `pbf run`'s output: a frame is one pbf_world_step call (frame 0 is
 * the initial state, written without one); a substep is one solver step inside it
 * (time.substeps per frame). stats.csv's ms_per_step is a frame's pbf_world_step. */
typedef struct run_summary {
    int frames_done; /* frame files written, frame 0 included */
    int steps; /* pbf_world_step calls: the frames simulated */
    double sum_avg_error; /* sum over steps of the average density error */
    float max_error;
    double sum_step_ms;
    double sum_stage_ms[PBF_STAGE_COUNT];
    double start; /* cli_now() */
} run_summary;

static void summary_add_step(run_summary *s, const pbf_world *world) {
    pbf_profile p = pbf_world_get_profile(world);
    ++s->steps;
    s->sum_avg_error += p.avg_density_error;
    if (p.max_density_error > s->max_error) s->max_error = p.max_density_error;
    s->sum_step_ms += p.step_ms;
    for (int k = 0; k < PBF_STAGE_COUNT; ++k) s->sum_stage_ms[k] += p.stage_ms[k];
}

static void summary_print(const run_summary *s, const pbf_world *world, int particles,
                          const run_output *out) {
    double wall = cli_now() - s->start;
    char count[32], formats[32];
    printf("pbf run: %d frame%s (t = %.3f s) in %.1f s\n", s->frames_done,
           s->frames_done == 1 ? "" : "s", pbf_world_time(world), wall);
    printf("  particles        %s\n", cli_format_count(particles, count, sizeof count));
    if (s->steps > 0) {
        double mean_ms = s->sum_step_ms / s->steps;
        int substeps = pbf_world_get_def(world)->substeps;
        printf("  density error    avg %.3f %%   max %.3f %%\n",
               100.0 * s->sum_avg_error / s->steps, 100.0 * s->max_error);
        printf("  time per frame   %.3f ms (mean of %d simulated frame%s of %d substep%s: %.3f ms "
               "per substep), %.1f frames/s\n",
               mean_ms, s->steps, s->steps == 1 ? "" : "s", substeps, substeps == 1 ? "" : "s",
               substeps > 0 ? mean_ms / substeps : 0.0, mean_ms > 0.0 ? 1000.0 / mean_ms : 0.0);
        printf("  stage            ms/frame  share\n");
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
    if (o->backend >= 0) scene->world.backend = (pbf_backend)o->backend;
    if (o->formats >= 0) scene->formats = (unsigned)o->formats;
    if (o->frames >= 0) scene->frames = o->frames;
    if (o->time >= 0.0) {
        double frames = ceil(o->time * scene->fps - 1e-9);
        if (!(frames >= 0.0 && frames <= 1e8))
            return cli_error("--time %g at %g fps gives too many frames", o->time,
                             (double)scene->fps);
        scene->frames = (int)frames;
    }
    if (o->out_dir != NULL) {
        if (strlen(o->out_dir) >= sizeof scene->output_dir)
            return cli_error("--out: path longer than %zu characters",
                             sizeof scene->output_dir - 1);
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
    /* split over MPI ranks every rank loads the same scene: rank 0 alone speaks */
    int muted = cli_mute_stderr(o->comm != NULL && o->comm->rank != 0);
    int rc = cli_load_scene(o->scene_path, o->sets, o->set_count, scene);
    if (rc == 0) rc = apply_options(o, scene);
    cli_unmute_stderr(muted);
    if (rc != 0) {
        free(scene);
        return rc;
    }

    char err[PBF_ERROR_SIZE];
    pbf_world *world = NULL;
    if (pbf_scene_create_world(scene, &world, err, sizeof err) != PBF_OK) {
        free(scene);
        muted = cli_mute_stderr(o->comm != NULL && o->comm->rank != 0);
        cli_error("%s", err);
        cli_unmute_stderr(muted);
        return CLI_EXIT_ERROR;
    }
    /* An open obstacle is legal (a sheet, a baffle), but a solid whose file was cut short
     * loads as one too: say so, naming the file and its open edges. */
    for (int k = 0; k < pbf_world_mesh_count(world); ++k) {
        pbf_mesh_solid_info mi = pbf_world_mesh_info(world, k);
        if (mi.open_edges > 0 && (o->comm == NULL || o->comm->rank == 0))
            fprintf(stderr,
                    "pbf: warning: mesh '%s' is an open surface (%lld open edge%s), simulated as "
                    "a sheet; if it should be a closed solid, the file may be cut short or have "
                    "holes\n",
                    pbf_world_get_mesh_def(world, k)->path, mi.open_edges,
                    mi.open_edges == 1 ? "" : "s");
    }
    if (o->comm != NULL && o->comm->split(world) != 0) { /* every rank: the same answer */
        pbf_world_destroy(world);
        free(scene);
        return CLI_EXIT_ERROR;
    }
    return run_world(world, scene, -1, o, hooks);
}

/* Split over MPI ranks, rank 0's line for the signal handler (app/interrupt.h): when a rank
 * dies, mpirun sends SIGTERM to the others and kills them 1 s later, before a rank waiting for
 * the dead one's message reaches the end of its frame; the line says where to go on from. */
static void set_stop_note(const run_options *o, const pbf_scene *scene, int frame,
                          int last_checkpoint) {
    if (o->comm == NULL || o->comm->rank != 0) return;
    char note[INTERRUPT_NOTE_MAX], where[INTERRUPT_NOTE_MAX - 512];
    if (last_checkpoint > 0)
        snprintf(where, sizeof where,
                 "the last complete checkpoint is frame %d in '%s': go on from it with "
                 "`mpirun -np N pbf resume %s` (any N; or `pbf resume %s` in one process)",
                 last_checkpoint, scene->output_dir, scene->output_dir, scene->output_dir);
    else if (o->checkpoint_every > 0)
        snprintf(where, sizeof where, "no checkpoint yet (the first at frame %d)",
                 o->checkpoint_every);
    else
        snprintf(where, sizeof where, "this run saves no checkpoints (--checkpoint-every N)");
    snprintf(note, sizeof note,
             "%spbf: MPI rank 0 of %d told to stop (SIGTERM or SIGINT) in frame %d; mpirun sends "
             "it at Ctrl-C and, when a rank has died, to the others (its message names the rank); "
             "%s\n",
             o->quiet ? "" : "\n", o->comm->ranks, frame, where);
    interrupt_set_note(note);
}

/* One checkpoint, or under MPI a piece per rank and the manifest (collective). */
static int save_checkpoint(const run_options *o, const pbf_world *world, const pbf_scene *scene,
                           int frame) {
    if (o->comm != NULL)
        return run_checkpoint_save_split(world, scene, frame, o->checkpoint_every, o->comm);
    return run_checkpoint_save(world, scene, frame, o->checkpoint_every);
}

int run_world(pbf_world *world, pbf_scene *scene, int resume_frame, const run_options *o,
              const run_hooks *hooks) {
    static const run_hooks no_hooks = {NULL, NULL, NULL, NULL};
    if (hooks == NULL) hooks = &no_hooks;
    run_options quiet_rank; /* split over MPI ranks: rank 0 alone talks */
    if (o->comm != NULL && o->comm->rank != 0) {
        quiet_rank = *o;
        quiet_rank.quiet = 1;
        o = &quiet_rank;
    }
    signal(SIGXFSZ, SIG_IGN); /* see run_simulation */
    const int frames = scene->frames;
    const float dt = 1.0f / scene->fps;
    const int first = resume_frame < 0 ? 0 : resume_frame + 1;
    int rc = 0;
    int start_count = pbf_world_particle_count(world);
    if (o->comm != NULL) { /* split over MPI ranks: the whole world's (collective) */
        pbf_stats total;
        o->comm->totals(world, &total, NULL);
        start_count = total.particles;
    }
    if (!o->quiet) {
        char count[32], formats[32];
        if (resume_frame < 0)
            fprintf(stderr,
                    "pbf run: %s (%s): %s particles, %d frames at %g fps (%.3f s) -> %s [%s]\n",
                    scene->name, scene->source, cli_format_count(start_count, count, sizeof count),
                    frames, (double)scene->fps, frames / (double)scene->fps, scene->output_dir,
                    cli_format_names(scene->formats, formats, sizeof formats));
        else
            fprintf(stderr,
                    "pbf resume: %s: %s particles, frame %d (t = %.3f s) to %d at %g fps -> %s "
                    "[%s]\n",
                    scene->name, cli_format_count(start_count, count, sizeof count), resume_frame,
                    pbf_world_time(world), frames, (double)scene->fps, scene->output_dir,
                    cli_format_names(scene->formats, formats, sizeof formats));
    }

    /* probes: a world restored from a checkpoint comes without them */
    if (scene->probe_count > 0 && pbf_world_probe_count(world) == 0 &&
        pbf_world_set_probes(world, scene->probes, scene->probe_count) != PBF_OK) {
        cli_error("%s: %s", scene->source, pbf_world_error(world));
        pbf_world_destroy(world);
        free(scene);
        return CLI_EXIT_ERROR;
    }
    run_output out;
    memset(&out, 0, sizeof out);
    out.comm = o->comm;
    rc = resume_frame < 0
             ? run_output_open(&out, scene->output_dir, scene->formats, scene)
             : run_output_resume(&out, scene->output_dir, scene->formats, scene, resume_frame);
    const int rank0 = o->comm == NULL || o->comm->rank == 0;
    if (rc == 0 && rank0) {
        /* resources (docs/robustness.md): warn when the run's files will not fit on the disk */
        double bytes = run_output_estimate(start_count, scene->formats, frames - first + 1,
                                           o->checkpoint_every > 0);
        cli_warn_disk_space(scene->output_dir, bytes, frames - first + 1);
    }
    /* split over MPI ranks: the hooks run on rank 0, with the particles gathered to it (run.h) */
    out.gather = o->comm != NULL && hooks->on_frame != NULL;
    if (rc == 0 && rank0 && hooks->on_start != NULL &&
        hooks->on_start(world, scene, hooks->user) != 0)
        rc = CLI_EXIT_ERROR;
    if (o->comm != NULL && hooks->on_start != NULL) rc = o->comm->max(rc); /* all stop */

    run_summary summary;
    memset(&summary, 0, sizeof summary);
    summary.start = cli_now();
    summary.frames_done = first; /* frame files already in the folder */
    progress bar;
    int interrupted = 0, last_checkpoint = resume_frame, unstable = 0, rebalances = 0;
    double wait = 0.0, wait_least = 0.0; /* split: the mean shares over the frames with a step */
    int wait_frames = 0;
    if (rc == 0) {
        interrupt_install();
        if (!o->quiet) progress_begin(&bar, stderr, frames);
        for (int frame = first; frame <= frames; ++frame) {
            set_stop_note(o, scene, frame, last_checkpoint);
            if (frame > 0) {
                interrupted = interrupt_pending();
                if (o->comm != NULL) interrupted = o->comm->max(interrupted); /* all stop */
                if (interrupted != 0) break;
                pbf_status st = pbf_world_step(world, dt);
                if (st != PBF_OK) {
                    if (!o->quiet) progress_end(&bar);
                    /* split over MPI ranks a full capacity is every rank's verdict, with the
                     * same message (src/modules/emitter.c): rank 0 alone says it */
                    if (st == PBF_ERR_CAPACITY && !rank0)
                        rc = CLI_EXIT_ERROR;
                    else
                        rc = cli_error("frame %d: %s", frame, pbf_world_error(world));
                    unstable = st == PBF_ERR_UNSTABLE;
                    break;
                }
                summary_add_step(&summary, world);
            }
            /* split over MPI ranks: measure the balance, move the cuts when it is off (after a
             * step only: frame 0 keeps the split's cuts) */
            if (o->comm != NULL) {
                if (o->comm->balance(world, frame > 0 ? o->balance : 0.0, &out.balance) != 0) {
                    if (!o->quiet) progress_end(&bar);
                    rc = cli_error("frame %d: %s", frame, pbf_world_error(world));
                    break;
                }
                rebalances += out.balance.moved;
                if (frame > 0) { /* frame 0 has no step */
                    wait += out.balance.wait;
                    wait_least += out.balance.wait_least;
                    ++wait_frames;
                }
            }
            if (run_output_frame(&out, world, frame) != 0) {
                if (!o->quiet) progress_end(&bar);
                rc = cli_error("%s", out.error);
                break;
            }
            summary.frames_done = frame + 1;
            /* checkpoints (docs/robustness.md): every N frames, after the frame's files */
            if (o->checkpoint_every > 0 && frame > 0 && frame % o->checkpoint_every == 0) {
                if (save_checkpoint(o, world, scene, frame) != 0) {
                    if (!o->quiet) progress_end(&bar);
                    rc = CLI_EXIT_ERROR; /* printed */
                    break;
                }
                last_checkpoint = frame;
            }
            if (hooks->on_frame != NULL) {
                int failed = rank0 && hooks->on_frame(world, o->comm ? &out.gathered : NULL, frame,
                                                      hooks->user) != 0;
                if (o->comm != NULL) failed = o->comm->max(failed); /* all stop */
                if (failed) {
                    rc = CLI_EXIT_ERROR; /* the hook printed why (rank 0) */
                    break;
                }
            }
            /* the series name the frame's files once all are written, the hooks' too */
            if (run_output_series(&out, world, frame) != 0) {
                if (!o->quiet) progress_end(&bar);
                rc = cli_error("%s", out.error);
                break;
            }
            if (!o->quiet && frame > 0)
                progress_update(&bar, frame, pbf_world_time(world),
                                o->comm != NULL ? out.total_particles /* MPI: whole world */
                                                : pbf_world_particle_count(world));
        }
        /* A signal that arrives during the last frame is not reported: the run is complete. */
        if (!o->quiet) progress_end(&bar);
        interrupt_restore();
    }
    const int last_frame = summary.frames_done - 1;
    /* Ctrl-C with checkpoints on: one more of the last frame, so nothing is simulated twice. */
    if (interrupted && o->checkpoint_every > 0 && last_frame > 0 && last_frame > last_checkpoint &&
        save_checkpoint(o, world, scene, last_frame) == 0)
        last_checkpoint = last_frame;
    int particles = pbf_world_particle_count(world), ghosts = 0, kib = 0;
    /* the mesh fields held, KiB: this rank's (the most and the least over the ranks) and whole */
    long long held = 0, whole = 0;
    for (int k = 0; k < pbf_world_mesh_count(world); ++k) {
        pbf_mesh_solid_info mi = pbf_world_mesh_info(world, k);
        held += (long long)mi.field_bytes;
        whole += (long long)mi.whole_field_bytes;
    }
    int held_most = (int)((held + 1023) / 1024), held_least = held_most;
    if (o->comm != NULL) { /* split over MPI ranks: the whole world's count (collective) */
        pbf_stats total;
        o->comm->totals(world, &total, NULL);
        particles = total.particles;
        o->comm->halo(world, &ghosts, &kib); /* the largest halo over the ranks */
        ghosts = o->comm->max(ghosts);
        kib = o->comm->max(kib);
        held_most = o->comm->max(held_most);
        held_least = -o->comm->max(-held_least);
    }
    if (!o->quiet && summary.frames_done > first) {
        summary_print(&summary, world, particles, &out);
        if (o->comm != NULL && summary.steps > 0) {
            printf("  MPI              %d ranks; largest halo %d particles, %d KiB received per "
                   "substep (the last); cuts moved %d times (--balance %g)\n",
                   o->comm->ranks, ghosts, kib, rebalances, o->balance);
            if (wait_frames > 0)
                printf("                   %.1f %% of the ranks' step time in the halo's messages "
                       "(the least waiting rank: %.1f %%; mean over %d frames)\n",
                       100.0 * wait / wait_frames, 100.0 * wait_least / wait_frames, wait_frames);
            if (whole > 0) /* static fields keep the part a rank's slab reaches (docs/mpi.md) */
                printf("  mesh fields      %d KiB held per rank at most, %d KiB at least, of %d "
                       "KiB whole\n",
                       held_most, held_least, (int)((whole + 1023) / 1024));
        }
    }
    if (interrupted && rank0) /* split over MPI ranks: every rank stopped; rank 0 says it */
        fprintf(stderr,
                "pbf run: stopped by %s after frame %d of %d (t = %.3f s); %d frames in '%s'\n",
                signal_name(interrupted), last_frame, frames, pbf_world_time(world),
                summary.frames_done, scene->output_dir);
    if (interrupted) rc = 128 + interrupted;
    if (last_checkpoint > 0 && interrupted && rank0)
        fprintf(stderr,
                "pbf run: the checkpoint of frame %d is in '%s'; go on with: %spbf resume %s\n",
                last_checkpoint, scene->output_dir, o->comm != NULL ? "mpirun -np N " : "",
                scene->output_dir);
    if (last_checkpoint > 0 && unstable && rank0)
        fprintf(stderr,
                "pbf run: the checkpoint of frame %d is in '%s'; go on from it with smaller "
                "substeps: pbf resume %s --set time.substeps=%d\n",
                last_checkpoint, scene->output_dir, scene->output_dir,
                2 * pbf_world_get_def(world)->substeps);
    if (rank0 && hooks->on_finish != NULL)
        hooks->on_finish(world, summary.frames_done, hooks->user);
    run_output_close(&out);
    pbf_world_destroy(world);
    free(scene);
    return rc;
}
