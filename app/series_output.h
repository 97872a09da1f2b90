/* The time series of a run folder, in seconds, for ParaView (docs/cli.md, "ParaView"):
 *
 *   frames.pvd             per frame the particles (frame_NNNNN.vtu, or .pvtu split over MPI
 *                          ranks), the mesh solids (solids_NNNNN.vtu), the surfaces
 *                          (surface_NNNNN.vtu, --mesh) and the diffuse particles
 *                          (diffuse_NNNNN.vtu), each a part of its own (a block in ParaView)
 *   frames.ply.series ...  ParaView's JSON file series, one per legacy series: frames, solids,
 *                          surfaces and diffuse, .ply / .vtk / .obj (their headers carry no time)
 *
 * After each frame the series files are rewritten atomically with every file of frames 0..frame
 * that exists, so a killed run leaves valid series of the frames it finished; a resumed run
 * finds the earlier frames' files (and their times in stats.csv) again. */
#ifndef PBF_APP_SERIES_OUTPUT_H
#define PBF_APP_SERIES_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct series_output {
    const char *dir;
    double *times; /* per frame, s */
    uint32_t *files; /* per frame: a bit per (kind, extension) whose file exists */
    int capacity;
    int frames; /* frames 0..frames-1 are known */
} series_output;

void series_output_init(series_output *s, const char *dir);
/* After frame `frame` (at `time` s) has all its files: records which exist and rewrites the
 * series. Returns non-zero with the message in err on failure. */
int series_output_frame(series_output *s, int frame, double time, char *err, size_t err_size);
/* A resumed run: frames 0..frame are on disk, with their times in stats.csv (frame / fps where a
 * row cannot be read). Rewrites the series of those frames. */
int series_output_resume(series_output *s, int frame, double fps, char *err, size_t err_size);
void series_output_free(series_output *s);
/* Whether `name` (without a ".tmp.<pid>" tail) is one of the series files this writes. */
int series_output_is_name(const char *name, size_t len);

#endif
