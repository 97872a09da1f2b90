/* A scene's fluids for the renderer (see render_phases.h). */
#include "render_phases.h"

int render_phases_from_scene(const pbf_scene *scene, pbf_render_scene *s) {
    int n = scene->material_count < PBF_MAX_PHASES ? scene->material_count : PBF_MAX_PHASES;
    if (n < 0) n = 0;
    s->phase_count = n;
    for (int k = 0; k < n; ++k) {
        s->phase_absorption[k][0] = scene->materials[k].absorption.x;
        s->phase_absorption[k][1] = scene->materials[k].absorption.y;
        s->phase_absorption[k][2] = scene->materials[k].absorption.z;
    }
    return n;
}
