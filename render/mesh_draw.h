/* Triangle-mesh solids in the renderer (pbf_render_scene.meshes): their triangles kept on the GPU
 * per slot, uploaded once, and drawn into the opaque scene with their pose of the frame. Internal
 * to the renderer. */
#ifndef PBF_RENDER_MESH_DRAW_H
#define PBF_RENDER_MESH_DRAW_H

#include "gl.h"

typedef struct mesh_slot {
    GLuint vao, vbo, ebo;
    const float *vertices; /* what was uploaded: the slot is uploaded again when these change */
    const int32_t *triangles;
    int vertex_count, triangle_count;
    unsigned version;
} mesh_slot;

typedef struct mesh_slots {
    mesh_slot slot[PBF_RENDER_MAX_MESHES];
} mesh_slots;

/* Checks the scene's meshes (counts, arrays, indices in range, a finite transform). */
pbf_status mesh_slots_check(const pbf_render_scene *s, char *err, size_t err_size);
/* Uploads the meshes the slots do not hold yet. */
void mesh_slots_sync(mesh_slots *m, const pbf_render_scene *s);
/* Draws every mesh with `program` (mesh.vert + mesh.frag, common uniforms already set) into the
 * bound framebuffer, depth test on. default_color for meshes whose colour is (0, 0, 0). */
void mesh_slots_draw(const mesh_slots *m, GLuint program, const pbf_render_scene *s,
                     const float default_color[3]);
void mesh_slots_free(mesh_slots *m);

#endif
