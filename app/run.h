/* The simulation loop of `pbf run` (app/run.c), reusable by other commands: `pbf resume` goes
 * on from a checkpoint through run_world, `pbf validate` runs a case through run_simulation, and
 * a renderer draws every frame through the hooks. Options in, files and hooks out. */
#ifndef PBF_APP_RUN_H
#define PBF_APP_RUN_H

#include "pbf/export.h" /* pbf_particles */
#include "pbf/scene.h"

/* Per-frame callbacks. Every pointer may be NULL. A renderer adds `--png DIR` / `--video FILE`
 * by filling these in cmd_run (see make_hooks in cmd_run.c): nothing else in the loop changes.
 *
 * A run split over MPI ranks (docs/mpi.md) calls the hooks on rank 0 only, and `world` is then
 * rank 0's slab: its particles are not the whole world's. What is the same on every rank (the
 * def, the domain, the colliders, the tool) may be read from it; the particles come gathered to
 * rank 0 in `particles` (on_frame). The ranks agree on a hook's failure. */
typedef struct run_hooks {
    /* After the world is built, before frame 0. Non-zero aborts the run (exit 1); the hook
     * prints its own message. */
    int (*on_start)(const pbf_world *world, const pbf_scene *scene, void *user);
    /* After frame `frame` is simulated and its files are written (frame 0 = initial state).
     * particles: split over MPI ranks, the whole world's, gathered to rank 0 in id order (read
     * them there, not from the world); NULL in one process (read them from the world).
     * Non-zero stops the run as an error (exit 1) after this frame. */
    int (*on_frame)(const pbf_world *world, const pbf_particles *particles, int frame, void *user);
    /* Once at the end, also after an error or Ctrl-C; frames_done counts frame 0. */
    void (*on_finish)(const pbf_world *world, int frames_done, void *user);
    void *user;
} run_hooks;

typedef struct run_options {
    const char *scene_path; /* NULL: the built-in dam break */
    const char *const *sets; /* --set key=value overrides, in order */
    int set_count;
    int frames; /* frames after frame 0; < 0: the scene's */
    double time; /* simulated seconds; < 0: unset (frames rules) */
    const char *out_dir; /* NULL: the scene's output_dir */
    int formats; /* pbf_format bits; < 0: the scene's */
    int threads; /* < 0: the scene's */
    int backend; /* pbf_backend (--backend, docs/cuda.md); < 0: the scene's */
    int quiet; /* no progress line, no summary */
    int checkpoint_every; /* save DIR/checkpoint.pbfck every N frames; 0: never */
    double balance; /* split over MPI ranks: move the cuts when the ranks' particle
                                 * counts' max over mean exceeds this (0: never; docs/mpi.md) */
    const struct run_comm *comm; /* split over MPI ranks (app/run_comm.h, `pbf run` under
                                  * mpirun); NULL: one process */
} run_options;

/* The default of --balance: cuts move when a rank holds 20 % more particles than the mean. */
#define RUN_BALANCE_DEFAULT 1.2
void run_options_init(run_options *o);
/* Loads the scene, simulates it and writes the output folder. Returns the exit code:
 * 0, 1 (error, printed), or 128 + signal after Ctrl-C / SIGTERM. */
int run_simulation(const run_options *options, const run_hooks *hooks);

/* The loop itself, on a world already built (run_simulation) or restored from a checkpoint
 * (`pbf resume`, app/cmd_resume.c; checkpoints: app/run_checkpoint.h): resume_frame < 0 starts a fresh output folder at frame 0;
 * otherwise the folder keeps frames 0..resume_frame and the loop goes on from resume_frame + 1.
 * Takes ownership of world and scene (malloc'd). Returns the exit code like run_simulation. */
int run_world(pbf_world *world, pbf_scene *scene, int resume_frame, const run_options *options,
              const run_hooks *hooks);

#endif
