/* A scene's fluids as the renderer tints them: phase k of the render scene is the scene's
 * material k (its "materials" section), with that material's absorption. Shared by `pbf run
 * --png/--video`, `pbf bench --render`, `pbf render` (cmd_render.c) and `pbf view` (cmd_view.c).
 * Built with the renderer only. */
#ifndef PBF_APP_RENDER_PHASES_H
#define PBF_APP_RENDER_PHASES_H

#include "pbf/render.h"
#include "pbf/scene.h"

/* Sets s->phase_count (the scene's materials, at most PBF_MAX_PHASES; 0 for a scene of one
 * fluid) and s->phase_absorption from them; returns the count. The per-particle phases are the
 * caller's (s->phases: the world's, a file's, the viewer's copy), set only when this is > 0. */
int render_phases_from_scene(const pbf_scene *scene, pbf_render_scene *s);

#endif
