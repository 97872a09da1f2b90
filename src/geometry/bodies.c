/* Moving meshes' forces and floating bodies (meshes.h). */
#include "meshes.h"

#include <string.h>

#include "rigid.h"

void pbf__bodies_advance(pbf_world *w, pbf_mesh_body *b, float dt) {
    (void)w, (void)b, (void)dt;
}

void pbf__bodies_after_delta(pbf_world *w, int threads) { (void)w, (void)threads; }

void pbf__bodies_substep_end(pbf_world *w, float dt) {
    pbf_geometry *g = w->geometry;
    (void)dt;
    for (int i = 0; i < g->count; ++i) g->body[i]->substeps_done++;
}
