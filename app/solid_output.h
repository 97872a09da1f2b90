/* solids.csv in the output folder of `pbf run` when the scene has meshes (docs/scenes.md,
 * "meshes"): one row per frame, written after the frame's stats row, with for every mesh i its
 * pose after the step (m<i>_x,y,z: the local frame's origin, a floating body's centre of mass;
 * m<i>_qw,qx,qy,qz: the orientation, a unit quaternion), velocity, and the fluid's force (N) and
 * torque (N m, about the origin) averaged over the step. */
#ifndef PBF_APP_SOLID_OUTPUT_H
#define PBF_APP_SOLID_OUTPUT_H

#include <stddef.h>

#include "pbf/scene.h"

typedef struct solid_output solid_output;

/* Opens DIR/solids.csv (header written atomically). *out is NULL (and 0 is returned) when the
 * scene has no meshes. Prints the error and returns non-zero on failure. */
int solid_output_open(solid_output **out, const char *dir, const pbf_scene *scene);
/* Resuming at `frame` (pbf resume): keeps the header and the rows of frames 0..frame. */
int solid_output_resume(solid_output **out, const char *dir, const pbf_scene *scene, int frame);
/* Appends the row of `frame` (one write, flushed). Non-zero with err set on failure. */
int solid_output_row(solid_output *o, const pbf_world *world, int frame, char *err,
                     size_t err_size);
/* Closes the file. NULL is fine. */
void solid_output_close(solid_output *o);

#endif
