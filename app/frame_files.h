/* The particle files of a run folder (frame_NNNNN.ply / .vtk), for the commands that read a
 * run after the fact: `pbf render` and `pbf mesh`. */
#ifndef PBF_APP_FRAME_FILES_H
#define PBF_APP_FRAME_FILES_H

#include "pbf/export.h"

typedef struct frame_file {
    int number;
    char *path;
} frame_file;

/* frame_NNNNN.ply (or .vtk when a frame has no .ply) in dir, sorted by number. Prints the
 * error ("pbf: ...") and returns CLI_EXIT_ERROR when the folder cannot be read or holds none. */
int frame_files_list(const char *dir, frame_file **out, int *count);
void frame_files_free(frame_file *files, int count);

/* Half the median distance from a sample of particles to their nearest neighbour: particles
 * start 2r apart and stay about that close in a liquid. 0.01 when it cannot tell. */
float particles_estimate_radius(const pbf_particles *p);

#endif
