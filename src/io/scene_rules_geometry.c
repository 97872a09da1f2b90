/* pbf — the hooks of the "meshes" section (scene_keys.c; include/pbf/geometry.h): defaults, the
 * mesh file's path (relative to the scene's folder), keys in time order, and the keys that
 * exclude each other. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scene_rules.h"

void scene_mesh_defaults(void *mesh) { *(pbf_mesh_def *)mesh = pbf_default_mesh_def(); }

int scene_has_meshes(const void *scene) { return ((const pbf_scene *)scene)->mesh_count > 0; }
int scene_mesh_has_keys(const void *mesh) { return ((const pbf_mesh_def *)mesh)->key_count > 0; }
int scene_mesh_has_no_keys(const void *mesh) { return !scene_mesh_has_keys(mesh); }
int scene_mesh_has_mass(const void *mesh) { return ((const pbf_mesh_def *)mesh)->mass > 0.0f; }
int scene_mesh_has_no_mass(const void *mesh) { return !scene_mesh_has_mass(mesh); }

/* "scale": one number for all three axes, or [x, y, z]. */
pbf_status scene_mesh_scale(const scene_ctx *c, const scene_key *key, const cJSON *item,
                            const cJSON *parent, const char *path, void *base) {
    (void)parent;
    pbf_mesh_def *m = base;
    if (cJSON_IsNumber(item)) {
        float s = 0.0f;
        TRY(scene_read_float(c, key, item, path, &s));
        m->scale = (pbf_vec3){s, s, s};
        return PBF_OK;
    }
    return scene_read_value(c, key, item, path, base);
}

/* "mass" instead of "density". */
pbf_status scene_mesh_mass(const scene_ctx *c, const scene_key *key, const cJSON *item,
                           const cJSON *parent, const char *path, void *base) {
    if (scene_member(parent, "density") != NULL)
        return scene_fail(c, PBF_ERR_INVALID_ARG, path,
                          "give the mesh's 'mass' or its 'density', not both");
    return scene_read_value(c, key, item, path, base);
}

/* The scene file's folder joined to a relative name, made absolute where the file exists (so
 * that scene.json, written elsewhere, still finds it). */
static pbf_status resolve(const scene_ctx *c, const char *json_path, pbf_mesh_def *m) {
    char joined[PBF_MESH_PATH_SIZE * 2];
    const char *slash = strrchr(c->source, '/');
    if (m->path[0] != '/' && slash != NULL && c->source[0] != '<')
        snprintf(joined, sizeof joined, "%.*s/%s", (int)(slash - c->source), c->source, m->path);
    else
        snprintf(joined, sizeof joined, "%s", m->path);
    char *real = realpath(joined, NULL);
    const char *use = real != NULL ? real : joined;
    if (strlen(use) >= sizeof m->path) {
        free(real);
        return scene_fail(c, PBF_ERR_INVALID_ARG, json_path,
                          "'%s' names a path longer than %zu characters", json_path,
                          sizeof m->path - 1);
    }
    snprintf(m->path, sizeof m->path, "%s", use);
    free(real);
    if (access(m->path, R_OK) != 0)
        return scene_fail(c, PBF_ERR_IO, json_path, "'%s': cannot read the mesh file '%s': %s",
                          json_path, m->path, strerror(errno));
    return PBF_OK;
}

pbf_status scene_mesh_check(const scene_ctx *c, const cJSON *object, const char *path, void *base,
                            int index) {
    (void)index;
    pbf_mesh_def *m = base;
    char p[JSON_PATH_SIZE];
    scene_join_key(p, sizeof p, path, "file");
    TRY(resolve(c, p, m));
    if (m->motion == PBF_MESH_KINEMATIC && m->key_count > 0) {
        if (scene_member(object, "position") != NULL || scene_member(object, "rotation") != NULL) {
            scene_join_key(p, sizeof p, path, "keys");
            return scene_fail(c, PBF_ERR_INVALID_ARG, p,
                              "give '%s' or the mesh's position and rotation, not both (the "
                              "first key is where it starts)",
                              p);
        }
        m->position = m->keys[0].position;
        m->rotation = m->keys[0].rotation;
    }
    return PBF_OK;
}

pbf_status scene_mesh_key_check(const scene_ctx *c, const cJSON *object, const char *path,
                                void *base, int index) {
    (void)object;
    const pbf_mesh_key *k = base;
    if (index == 0 || k->time > k[-1].time) return PBF_OK;
    char q[JSON_PATH_SIZE];
    scene_format_path(q, sizeof q, "%s.time", path);
    return scene_fail(c, PBF_ERR_INVALID_ARG, q,
                      "'%s' must be after the previous key's time (%.9g s), got %.9g s", q,
                      scene_short_float(k[-1].time), scene_short_float(k->time));
}
