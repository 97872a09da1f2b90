/* probes.csv in the output folder of `pbf run` (docs/cli.md; include/pbf/probes.h,
 * docs/validation.md): one row per frame, written after the frame's stats row:
 *
 *   frame,time,H1_m,front_m,P1_N,P1_Pa,...
 *
 * a height probe gives NAME_m (water height above its position), a front probe NAME_m (the
 * coordinate of the leading edge), a force probe NAME_N (normal force on its patch, mean over the
 * step) and NAME_Pa (that force over the patch area). Frame 0 is the initial state (forces 0).
 * Without probes no file is written (and an earlier run's probes.csv is removed, so a folder
 * never mixes two runs). */
#ifndef PBF_APP_PROBE_OUTPUT_H
#define PBF_APP_PROBE_OUTPUT_H

#include <stddef.h>

#include "pbf/scene.h"

typedef struct probe_output probe_output;

#define PROBE_OUTPUT_NAME "probes.csv"

/* The header line of probes.csv for these probes (with its newline) into buf; returns its length
 * (>= size: cut). */
int probe_csv_header(char *buf, size_t size, const pbf_probe_def *probes, int count);

/* Opens DIR/probes.csv (header written atomically). *out is NULL (and 0 is returned) when the
 * scene has no probes. Prints the error and returns non-zero on failure. */
int probe_output_open(probe_output **out, const char *dir, const pbf_scene *scene);
/* Resuming at `frame` (pbf resume): keeps the header and the rows of frames 0..frame. */
int probe_output_resume(probe_output **out, const char *dir, const pbf_scene *scene, int frame);
/* Samples the world's probes and appends the row of `frame` (one write, flushed). Non-zero with
 * err set on failure. NULL is fine (no probes). */
int probe_output_row(probe_output *o, const pbf_world *world, int frame, char *err,
                     size_t err_size);
/* The same with the samples already taken (split over MPI ranks every rank samples, rank 0
 * writes): samples holds pbf_world_probe_count(world) entries. */
int probe_output_row_sampled(probe_output *o, const pbf_world *world, int frame,
                             const pbf_probe_sample *samples, char *err, size_t err_size);
void probe_output_close(probe_output *o);

#endif
