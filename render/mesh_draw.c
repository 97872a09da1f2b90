/* Mesh solids in the renderer (see mesh_draw.h). */
#include "mesh_draw.h"

#include <math.h>
#include <string.h>

#include "util.h"

pbf_status mesh_slots_check(const pbf_render_scene *s, char *err, size_t n) {
    if (s->mesh_count < 0 || s->mesh_count > PBF_RENDER_MAX_MESHES ||
        (s->mesh_count > 0 && s->meshes == NULL)) {
        pbf_render_set_error(err, n, "render: %d meshes (at most %d, with an array)", s->mesh_count,
                             PBF_RENDER_MAX_MESHES);
        return PBF_ERR_INVALID_ARG;
    }
    for (int i = 0; i < s->mesh_count; ++i) {
        const pbf_render_mesh *m = &s->meshes[i];
        if (m->vertex_count < 0 || m->triangle_count < 0 ||
            (m->vertex_count > 0 && m->vertices == NULL) ||
            (m->triangle_count > 0 && m->triangles == NULL)) {
            pbf_render_set_error(err, n,
                                 "render: mesh %d: %d vertices, %d triangles, missing "
                                 "arrays",
                                 i, m->vertex_count, m->triangle_count);
            return PBF_ERR_INVALID_ARG;
        }
        for (int k = 0; k < 12; ++k) {
            if (!isfinite(m->transform[k])) {
                pbf_render_set_error(err, n, "render: mesh %d: transform[%d] is not finite", i, k);
                return PBF_ERR_INVALID_ARG;
            }
        }
        for (int k = 0; k < 3 * m->triangle_count; ++k) {
            if (m->triangles[k] < 0 || m->triangles[k] >= m->vertex_count) {
                pbf_render_set_error(err, n, "render: mesh %d: triangle %d uses vertex %d of %d", i,
                                     k / 3, (int)m->triangles[k], m->vertex_count);
                return PBF_ERR_INVALID_ARG;
            }
        }
    }
    return PBF_OK;
}

void mesh_slots_sync(mesh_slots *ms, const pbf_render_scene *s) {
    for (int i = 0; i < s->mesh_count; ++i) {
        const pbf_render_mesh *m = &s->meshes[i];
        mesh_slot *sl = &ms->slot[i];
        if (sl->vao != 0 && sl->vertices == m->vertices && sl->triangles == m->triangles &&
            sl->vertex_count == m->vertex_count && sl->triangle_count == m->triangle_count &&
            sl->version == m->version)
            continue;
        if (sl->vao == 0) {
            glGenVertexArrays(1, &sl->vao);
            glGenBuffers(1, &sl->vbo);
            glGenBuffers(1, &sl->ebo);
        }
        glBindVertexArray(sl->vao);
        glBindBuffer(GL_ARRAY_BUFFER, sl->vbo);
        glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(3 * (size_t)m->vertex_count * sizeof(float)),
                     m->vertices, GL_STATIC_DRAW);
        glEnableVertexAttribArray(0);
        glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, NULL);
        glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, sl->ebo); /* recorded in the vertex array */
        glBufferData(GL_ELEMENT_ARRAY_BUFFER,
                     (GLsizeiptr)(3 * (size_t)m->triangle_count * sizeof(int32_t)), m->triangles,
                     GL_STATIC_DRAW);
        glBindVertexArray(0);
        glBindBuffer(GL_ARRAY_BUFFER, 0);
        sl->vertices = m->vertices;
        sl->triangles = m->triangles;
        sl->vertex_count = m->vertex_count;
        sl->triangle_count = m->triangle_count;
        sl->version = m->version;
    }
}

void mesh_slots_draw(const mesh_slots *ms, GLuint p, const pbf_render_scene *s,
                     const float default_color[3]) {
    GLint model_loc = glGetUniformLocation(p, "u_model");
    GLint color_loc = glGetUniformLocation(p, "u_color");
    for (int i = 0; i < s->mesh_count; ++i) {
        const pbf_render_mesh *m = &s->meshes[i];
        if (m->triangle_count == 0) continue;
        /* [R | t] row-major to a column-major 4x4 */
        const float *a = m->transform;
        float model[16] = {a[0], a[4], a[8],  0.0f, a[1], a[5], a[9],  0.0f,
                           a[2], a[6], a[10], 0.0f, a[3], a[7], a[11], 1.0f};
        glUniformMatrix4fv(model_loc, 1, GL_FALSE, model);
        const float *c = m->color;
        glUniform3fv(color_loc, 1, (c[0] > 0.0f || c[1] > 0.0f || c[2] > 0.0f) ? c : default_color);
        /* A container's near walls would hide the fluid inside: draw its far side only (the
         * faces turned away from the camera, outward triangles being counter-clockwise). */
        if (m->container) {
            glEnable(GL_CULL_FACE);
            glCullFace(GL_FRONT);
        }
        glBindVertexArray(ms->slot[i].vao);
        glDrawElements(GL_TRIANGLES, (GLsizei)(3 * m->triangle_count), GL_UNSIGNED_INT, NULL);
        if (m->container) glDisable(GL_CULL_FACE);
    }
    glBindVertexArray(0);
}

void mesh_slots_free(mesh_slots *ms) {
    for (int i = 0; i < PBF_RENDER_MAX_MESHES; ++i) {
        mesh_slot *sl = &ms->slot[i];
        if (sl->vao == 0) continue;
        glDeleteVertexArrays(1, &sl->vao);
        glDeleteBuffers(1, &sl->vbo);
        glDeleteBuffers(1, &sl->ebo);
        memset(sl, 0, sizeof *sl);
    }
}
