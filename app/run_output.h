/* The output folder of `pbf run`:
 *
 *   frame_00000.ply ...   one file per frame and format (frame 0 is the initial state)
 *   frame_00000_0001.vtu  under MPI: rank 1's piece of frame 0 (frame_00000.pvtu names them);
 *                         under MPI frame_00000.ply is written by every rank (MPI-IO) and
 *                         frame_00000.vtk by rank 0 from the particles gathered to it
 *   solids_00000.vtu ...  the mesh solids at their pose, in each particle format
 *   diffuse_00000.ply     spray, foam and bubbles (and diffuse_00000.vtu with vtu)
 *   frames.pvd            with vtu: the time series of every part (ParaView), and
 *   frames.ply.series ... one per legacy series: rewritten every frame (app/series_output.h)
 *   stats.csv             one row per frame, appended and flushed after the frame's files
 *   scene.json            every parameter of the run (pbf_scene_to_json)
 *
 * Order of writes per frame: the particle files (each atomic: temporary name + rename), then the
 * stats row (one write() call, flushed and fsynced). If any of these fails (disk full), the
 * frame's files are removed again. So after Ctrl-C (which finishes the frame) or an error the
 * rows of stats.csv match the frame files exactly; only a hard kill (SIGKILL, power loss)
 * between the last rename and the row can leave one frame file without its row. Frame files of
 * an earlier run in the same folder are removed first, so the folder never mixes two runs. */
#ifndef PBF_APP_RUN_OUTPUT_H
#define PBF_APP_RUN_OUTPUT_H

#include <stdio.h>

#include "csv_file.h"
#include "pbf/export.h"
#include "pbf/scene.h"
#include "run_comm.h"
#include "series_output.h"

typedef struct run_output {
    const char *dir;
    unsigned formats; /* pbf_format bits */
    csv_file stats; /* stats.csv */
    pbf_particles particles; /* readback buffer, reused every frame */
    int files_written; /* particle files written by this run */
    char error[PBF_ERROR_SIZE]; /* why run_output_frame failed */
    struct tool_output *tool; /* forces.csv and its plot when the scene has a tool (docs/tool.md,
                                 * app/tool_output.h); NULL otherwise */
    struct probe_output *probes; /* probes.csv when the scene has probes (docs/cli.md,
                                  * app/probe_output.h); NULL otherwise */
    struct solid_output *solids; /* solids.csv when the scene has meshes (app/solid_output.h);
                                  * NULL otherwise */
    series_output series; /* frames.pvd and the .series files (rank 0) */
    int total_particles; /* split over MPI ranks: the whole world's count at the last frame */
    const struct run_comm *comm; /* split over MPI ranks (app/run_comm.h): each rank writes its
                                  * piece frame_NNNNN_RRRR.vtu, rank 0 frame_NNNNN.pvtu, the
                                  * series and the CSV files; NULL: one process */
    run_balance balance; /* split over MPI ranks: this frame's balance, for stats.csv */
    int gather; /* split over MPI ranks: gather the whole world's particles to rank 0 every
                 * frame (for the run's hooks: --mesh, --png, --video); legacy VTK output
                 * gathers them too */
    pbf_particles gathered; /* ... the last frame's, in id order, on rank 0 (none elsewhere) */
    int split_stats; /* stats.csv has the balance columns (a run split over MPI ranks wrote
                          * it; a resumed run keeps its columns) */
    int flow; /* the scene has emitters or sinks: stats.csv has emitted and removed columns */
} run_output;

/* Creates the folder, removes an earlier run's frame files, writes scene.json and the stats
 * header. Prints the error and returns non-zero on failure. */
int run_output_open(run_output *o, const char *dir, unsigned formats, const pbf_scene *scene);
/* Writes frame `frame`: its particle files, then its stats row. Returns non-zero on failure,
 * with the message in o->error (not printed: the caller's progress line is on the terminal). */
int run_output_frame(run_output *o, const pbf_world *world, int frame);
/* After frame `frame` has all its files (the particles', and the hooks' such as --mesh's
 * surfaces): rewrites frames.pvd and the .series files (rank 0; collective under MPI). Returns
 * non-zero on failure, with the message in o->error. */
int run_output_series(run_output *o, const pbf_world *world, int frame);
void run_output_close(run_output *o);
/* Resumes a run in its folder at `frame` (pbf resume): keeps frames 0..frame and their stats rows,
 * removes later frame files and temporary files, rewrites scene.json. Prints the error and
 * returns non-zero on failure. */
int run_output_resume(run_output *o, const char *dir, unsigned formats, const pbf_scene *scene,
                      int frame);
/* Bytes a run of `frames` frames will write (particle files, stats rows, a checkpoint and its
 * temporary copy). */
double run_output_estimate(int particles, unsigned formats, int frames, int checkpoints);
/* The file name of a frame ("frame_00042.ply") into buf. */
const char *run_output_frame_name(int frame, pbf_format format, char *buf, size_t size);

#endif
