/* A world's mesh solids as the renderer draws them (pbf_render_mesh), shared by `pbf run
 * --png/--video`, `pbf bench --render` (cmd_render.c) and `pbf view` (cmd_view.c). Built with the
 * renderer only. */
#ifndef PBF_APP_RENDER_MESHES_H
#define PBF_APP_RENDER_MESHES_H

#include "pbf/geometry.h"
#include "pbf/render.h"

/* Fills out[0..n) (n = the world's meshes, at most PBF_MAX_MESHES; returned) with the triangles
 * in place (no copy: valid while the world lives) and the pose after the last step; coloured by
 * motion: static grey, kinematic steel blue, floating wood; containers drawn as such. */
int render_meshes_from_world(const pbf_world *world, pbf_render_mesh *out);

#endif
