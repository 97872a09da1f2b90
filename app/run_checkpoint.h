/* The checkpoints of `pbf run --checkpoint-every N`, which `pbf resume DIR` goes on from.
 *
 * The checkpoint (include/pbf/checkpoint.h) holds the world's whole state; its application data
 * is a small JSON object with what the command needs to go on:
 *
 *     {"pbf_run_checkpoint": 1, "frame": 120, "checkpoint_every": 30, "scene": {...}}
 *
 * where "scene" is pbf_scene_to_json of the scene the run used (after --set and the
 * command-line options). The run loop (app/run.c) saves, `pbf resume` (app/cmd_resume.c)
 * reads. */
#ifndef PBF_APP_RUN_CHECKPOINT_H
#define PBF_APP_RUN_CHECKPOINT_H

#include <stddef.h>

#include "pbf/checkpoint.h"
#include "pbf/scene.h"

/* The file name in the output folder. */
#define RUN_CHECKPOINT_NAME "checkpoint.pbfck"

/* Split over MPI ranks (docs/mpi.md): each rank's piece checkpoint_FFFFF_RRRR.pbfck (frame F,
 * rank R: a checkpoint of its particles, with the same application data) and rank 0's manifest:
 *
 *     {"pbf_mpi_checkpoint": 1, "ranks": 4, "frame": 120, "time": 2.0, "steps": 120,
 *      "particles": 49152, "cuts": [0, 0.31, 0.62, 0.93, 1.6],
 *      "files": ["checkpoint_00120_0000.pbfck", ...]}
 *
 * A save never overwrites the pieces the manifest names: the new pieces carry the new frame in
 * their names, the manifest is replaced atomically once every rank's piece is whole, and only
 * then are the older pieces removed. A rank killed at any moment of a save leaves the manifest
 * naming the last complete save. (Folders from before name their pieces checkpoint_RRRR.pbfck;
 * the manifest names them, so they resume the same.)
 *
 * `pbf resume` takes the manifest when the folder has one, checkpoint.pbfck otherwise (saving
 * one removes the other). */
#define RUN_CHECKPOINT_MANIFEST "checkpoint_mpi.json"

/* The manifest, read: the rank count, its cuts (ranks + 1) and piece paths, malloc'd. */
typedef struct run_manifest {
    int ranks, frame;
    double time;
    long long steps, particles;
    double *cuts;
    char **files; /* DIR/name of each piece */
} run_manifest;

/* DIR/checkpoint.pbfck, malloc'd (NULL when out of memory). */
char *run_checkpoint_path(const char *dir);
/* Saves the world with the scene, the frame and the interval as application data (JSON) to
 * scene->output_dir/checkpoint.pbfck. Prints the error and returns non-zero on failure. */
int run_checkpoint_save(const pbf_world *world, const pbf_scene *scene, int frame, int every);
struct run_comm;
/* Split over MPI ranks (collective): every rank saves its piece, then rank 0 the manifest.
 * Prints the error and returns non-zero on failure (every rank the same answer). */
int run_checkpoint_save_split(const pbf_world *world, const pbf_scene *scene, int frame, int every,
                              const struct run_comm *comm);
/* Whether the first len characters of name are a piece's name: checkpoint_<digits>_<digits>.pbfck
 * or, from earlier versions, checkpoint_<digits>.pbfck. */
int run_checkpoint_is_piece(const char *name, size_t len);
/* Reads DIR/checkpoint_mpi.json. Returns 0 (read), -1 (the folder has none) or 1 (error,
 * printed). Free with run_manifest_free. */
int run_manifest_read(const char *dir, run_manifest *m);
void run_manifest_free(run_manifest *m);

/* Reads the application data of the checkpoint at `path`: its frame, its interval and the
 * run's scene with the --set overrides applied. Prints the error and returns non-zero on
 * failure. */
int run_checkpoint_read(const pbf_checkpoint *ck, const char *path, const char *const *sets,
                        int set_count, pbf_scene *scene, int *frame, int *every);

#endif
