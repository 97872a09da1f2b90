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

#include "pbf/checkpoint.h"
#include "pbf/scene.h"

/* The file name in the output folder. */
#define RUN_CHECKPOINT_NAME "checkpoint.pbfck"

/* DIR/checkpoint.pbfck, malloc'd (NULL when out of memory). */
char *run_checkpoint_path(const char *dir);
/* Saves the world with the scene, the frame and the interval as application data (JSON) to
 * scene->output_dir/checkpoint.pbfck. Prints the error and returns non-zero on failure. */
int run_checkpoint_save(const pbf_world *world, const pbf_scene *scene, int frame, int every);
/* Reads the application data of the checkpoint at `path`: its frame, its interval and the
 * run's scene with the --set overrides applied. Prints the error and returns non-zero on
 * failure. */
int run_checkpoint_read(const pbf_checkpoint *ck, const char *path, const char *const *sets,
                        int set_count, pbf_scene *scene, int *frame, int *every);

#endif
