/* A world's mesh solids for the renderer (see render_meshes.h). */
#include "render_meshes.h"

#include <string.h>

int render_meshes_from_world(const pbf_world *world, pbf_render_mesh *out) {
    static const float kinematic[3] = {0.30f, 0.40f, 0.55f}, floating[3] = {0.60f, 0.40f, 0.20f};
    int count = pbf_world_mesh_count(world);
    if (count > PBF_MAX_MESHES) count = PBF_MAX_MESHES;
    for (int i = 0; i < count; ++i) {
        pbf_render_mesh *m = &out[i];
        memset(m, 0, sizeof *m);
        m->triangle_count =
            pbf_world_mesh_triangles(world, i, &m->vertices, &m->vertex_count, &m->triangles);
        pbf_world_mesh_transform(world, i, m->transform);
        const pbf_mesh_def *d = pbf_world_get_mesh_def(world, i);
        m->container = d->role == PBF_MESH_CONTAINER;
        if (d->motion == PBF_MESH_KINEMATIC) memcpy(m->color, kinematic, sizeof kinematic);
        if (d->motion == PBF_MESH_FLOATING) memcpy(m->color, floating, sizeof floating);
    }
    return count;
}
