/* pbf — the scene loader's entry points (include/pbf/scene.h, docs/scenes.md).
 *
 * A scene is read in three steps:
 *   1. text -> cJSON tree; broken JSON is reported as FILE:LINE:COL with the text near the error;
 *   2. the `--set path=value` overrides are applied to the tree (scene_set.c), so that they go
 *      through exactly the same validation as the file itself;
 *   3. one walk over the tree through the schema (scene_read.c over the tables of scene_keys.c):
 *      it starts from the pbf_default_* values and rejects every key it does not know, every
 *      wrong type and every out-of-range value, naming the file, the JSON path and what was
 *      expected.
 * The same tables drive pbf_scene_to_json (scene_write.c) and the key reference (scene_doc.c).
 * The library never prints: every message goes into err. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbf/features.h"
#include "scene_schema.h"

/* FILE:LINE:COL: invalid JSON near '...'. The column counts characters (UTF-8 code points). */
static pbf_status invalid_json(const scene_ctx *c, const char *text, const char *at) {
    int line = 1, col = 1;
    for (const char *p = text; p < at && *p != '\0'; ++p) {
        if (*p == '\n') {
            ++line;
            col = 1;
        } else if (((unsigned char)*p & 0xC0) != 0x80) {
            ++col;
        }
    }
    char near[32];
    size_t k = 0;
    while (at[k] != '\0' && at[k] != '\n' && at[k] != '\r' && k < 24) {
        near[k] = at[k];
        ++k;
    }
    if (at[k] != '\0' && at[k] != '\n' && at[k] != '\r') {
        /* cut: do not end on half a UTF-8 character */
        while (k > 0 && ((unsigned char)near[k - 1] & 0xC0) == 0x80) --k;
        if (k > 0 && (unsigned char)near[k - 1] >= 0xC0) --k;
    }
    near[k] = '\0';
    if (k == 0)
        scene_set_message(c->err, c->err_size, "%s:%d:%d: invalid JSON near end of input",
                          c->source, line, col);
    else
        scene_set_message(c->err, c->err_size, "%s:%d:%d: invalid JSON near '%s'", c->source, line,
                          col, near);
    return PBF_ERR_PARSE;
}

pbf_status pbf_scene_parse(const char *json, const char *source, const char *const *overrides,
                           int override_count, pbf_scene *out, char *err, size_t err_size) {
    if (err != NULL && err_size > 0) err[0] = '\0';
    scene_ctx c = {
        source != NULL ? source : "<string>", err, err_size, overrides, override_count, NULL};
    if (json == NULL || out == NULL || override_count < 0 || (override_count > 0 && !overrides))
        return scene_fail(&c, PBF_ERR_INVALID_ARG, NULL,
                          "pbf_scene_parse: json and out must not be NULL, and overrides must hold "
                          "override_count strings");
    for (int i = 0; i < override_count; ++i)
        if (overrides[i] == NULL)
            return scene_fail(&c, PBF_ERR_INVALID_ARG, NULL, "pbf_scene_parse: override %d is NULL",
                              i);

    /* Editors on some systems start files with a UTF-8 byte order mark; JSON text must not. */
    const char *text = strncmp(json, "\xEF\xBB\xBF", 3) == 0 ? json + 3 : json;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (root == NULL) return invalid_json(&c, text, end != NULL ? end : text);

    pbf_scene *scene = malloc(sizeof *scene); /* ~10 KB: not on the caller's stack */
    c.scene = scene;
    pbf_status status = scene == NULL ? scene_out_of_memory(&c) : PBF_OK;
    if (status == PBF_OK && !cJSON_IsObject(root))
        status = scene_fail(&c, PBF_ERR_PARSE, NULL, "a scene must be a JSON object, got %s",
                            scene_type_name(root));
    if (status == PBF_OK) status = scene_apply_overrides(&c, root);
    if (status == PBF_OK) status = scene_read(&c, root, scene);
    if (status == PBF_OK) {
        scene_format_path(scene->source, sizeof scene->source, "%s", c.source);
        *out = *scene;
    }
    free(scene);
    cJSON_Delete(root);
    return status;
}

/* Reads a whole file. The text is NUL-terminated; a NUL inside it is an error because the JSON
 * parser would stop there and silently ignore the rest. */
static pbf_status read_file(const char *path, char **out, char *err, size_t err_size) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        scene_set_message(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        return PBF_ERR_IO;
    }
    size_t len = 0, cap = 4096;
    char *text = malloc(cap);
    while (text != NULL) {
        len += fread(text + len, 1, cap - 1 - len, f);
        if (len + 1 < cap) break; /* short read: end of file or an error */
        char *bigger = realloc(text, cap * 2);
        if (bigger == NULL) {
            free(text);
            text = NULL;
            break;
        }
        text = bigger;
        cap *= 2;
    }
    int read_error = ferror(f) ? errno : 0;
    fclose(f);
    if (text == NULL) {
        scene_set_message(err, err_size, "%s: out of memory reading the file", path);
        return PBF_ERR_OUT_OF_MEMORY;
    }
    if (read_error != 0) {
        free(text);
        scene_set_message(err, err_size, "%s: cannot read: %s", path, strerror(read_error));
        return PBF_ERR_IO;
    }
    text[len] = '\0';
    if (strlen(text) != len) {
        scene_set_message(err, err_size, "%s: not a text file (a NUL byte at offset %zu)", path,
                          strlen(text));
        free(text);
        return PBF_ERR_PARSE;
    }
    *out = text;
    return PBF_OK;
}

pbf_status pbf_scene_load(const char *path, const char *const *overrides, int override_count,
                          pbf_scene *out, char *err, size_t err_size) {
    if (err != NULL && err_size > 0) err[0] = '\0';
    if (path == NULL) {
        scene_set_message(err, err_size, "pbf_scene_load: path must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    char *text = NULL;
    pbf_status status = read_file(path, &text, err, err_size);
    if (status != PBF_OK) return status;
    status = pbf_scene_parse(text, path, overrides, override_count, out, err, err_size);
    free(text);
    return status;
}

/* The built-in scene: the same text as scenes/dam_break.json (a test keeps them equal). */
static const char DEFAULT_SCENE_JSON[] =
    "{\n"
    "  \"name\": \"dam_break\",\n"
    "  \"domain\": {\"min\": [0, 0, 0], \"max\": [1.6, 0.8, 0.4]},\n"
    "  \"fluid\": {\n"
    "    \"particle_radius\": 0.00625,\n"
    "    \"blocks\": [{\"min\": [0, 0, 0], \"max\": [0.4, 0.6, 0.4]}]\n"
    "  },\n"
    "  \"gravity\": [0, -9.81, 0],\n"
    "  \"solver\": {\"iterations\": 4},\n"
    "  \"time\": {\"fps\": 60, \"frames\": 180, \"substeps\": 4},\n"
    "  \"camera\": {\"position\": [0.8, 1.0, 2.1], \"target\": [0.8, 0.3, 0.2], \"fov\": 45},\n"
    "  \"output\": {\"dir\": \"out/dam_break\", \"format\": [\"ply\"]}\n"
    "}\n";

const char *pbf_scene_default_json(void) { return DEFAULT_SCENE_JSON; }

pbf_status pbf_scene_default(const char *const *overrides, int override_count, pbf_scene *out,
                             char *err, size_t err_size) {
    return pbf_scene_parse(DEFAULT_SCENE_JSON, "<built-in>", overrides, override_count, out, err,
                           err_size);
}

/* =============================================================================================
 * World, count */

/* The flow section: the capacity (after the blocks it must hold), the sinks, the emitters. */
static pbf_status add_flow(const pbf_scene *scene, pbf_world *world, char *err, size_t err_size) {
    pbf_status status = PBF_OK;
    if (scene->capacity > 0) {
        status = pbf_world_set_capacity(world, scene->capacity);
        if (status != PBF_OK) {
            scene_set_message(err, err_size, "%s: flow.capacity: %s", scene->source,
                              pbf_world_error(world));
            return status;
        }
    }
    for (int i = 0; i < scene->sink_count; ++i) {
        status = pbf_world_add_sink(world, &scene->sinks[i]);
        if (status != PBF_OK) {
            scene_set_message(err, err_size, "%s: flow.sinks[%d]: %s", scene->source, i,
                              pbf_world_error(world));
            return status;
        }
    }
    for (int i = 0; i < scene->emitter_count; ++i) {
        status = pbf_world_add_emitter(world, &scene->emitters[i]);
        if (status != PBF_OK) {
            scene_set_message(err, err_size, "%s: flow.emitters[%d]: %s", scene->source, i,
                              pbf_world_error(world));
            return status;
        }
    }
    return PBF_OK;
}

/* fluid.settle: block i alone in a world whose domain is the block's own box, with static walls
 * and nothing else in it, stepped for scene->settle seconds at the scene's frame rate; its
 * particles then go into `world` at their settled positions (in id order, so the ids are those
 * pbf_world_add_block would give) with the block's velocity. */
static pbf_status add_settled_block(const pbf_scene *scene, int i, pbf_world *world, char *err,
                                    size_t err_size) {
    const pbf_block_def *b = &scene->blocks[i];
    pbf_world_def def = scene->world;
    def.domain_min = b->min;
    def.domain_max = b->max;
    for (int w = 0; w < PBF_WALL_COUNT; ++w) def.wall_motion[w].amplitude = 0.0f; /* static */
    char why[PBF_ERROR_SIZE] = "";
    pbf_world *box = NULL;
    pbf_status status = pbf_world_create(&def, &box, why, sizeof why);
    pbf_block_def still = *b; /* it settles at rest; the velocity is given at t = 0 */
    still.velocity = (pbf_vec3){0.0f, 0.0f, 0.0f};
    if (status == PBF_OK) status = pbf_world_add_block(box, &still);
    const int frames = (int)ceil((double)scene->settle * scene->fps);
    for (int f = 0; status == PBF_OK && f < frames; ++f)
        status = pbf_world_step(box, 1.0f / scene->fps);
    if (status != PBF_OK) {
        scene_set_message(err, err_size, "%s: fluid.settle: fluid.blocks[%d] in its own box: %s",
                          scene->source, i, box != NULL ? pbf_world_error(box) : why);
        pbf_world_destroy(box);
        return status;
    }
    const int n = pbf_world_particle_count(box);
    float *x = malloc((size_t)n * 3 * sizeof *x + 1), *v = malloc((size_t)n * 3 * sizeof *v + 1);
    if (x == NULL || v == NULL) {
        status = PBF_ERR_OUT_OF_MEMORY;
        scene_set_message(err, err_size, "%s: fluid.settle: out of memory for %d particles",
                          scene->source, n);
    } else {
        pbf_world_get_positions(box, x);
        for (int k = 0; k < n; ++k) {
            v[3 * k] = b->velocity.x;
            v[3 * k + 1] = b->velocity.y;
            v[3 * k + 2] = b->velocity.z;
        }
        status = pbf_world_add_particles_phase(world, n, x, v, b->phase);
        if (status != PBF_OK)
            scene_set_message(err, err_size, "%s: fluid.blocks[%d]: %s", scene->source, i,
                              pbf_world_error(world));
    }
    free(x);
    free(v);
    pbf_world_destroy(box);
    return status;
}

/* Block i of the scene into `world`: on its lattice, or settled first (fluid.settle). */
static pbf_status add_block(const pbf_scene *scene, int i, pbf_world *world, char *err,
                            size_t err_size) {
    if (scene->settle > 0.0f) return add_settled_block(scene, i, world, err, err_size);
    pbf_status status = pbf_world_add_block(world, &scene->blocks[i]);
    if (status != PBF_OK)
        scene_set_message(err, err_size, "%s: fluid.blocks[%d]: %s", scene->source, i,
                          pbf_world_error(world));
    return status;
}

pbf_status pbf_scene_create_world(const pbf_scene *scene, pbf_world **out, char *err,
                                  size_t err_size) {
    if (err != NULL && err_size > 0) err[0] = '\0';
    if (out != NULL) *out = NULL;
    if (scene == NULL || out == NULL) {
        scene_set_message(err, err_size, "pbf_scene_create_world: scene and out must not be NULL");
        return PBF_ERR_INVALID_ARG;
    }
    /* The world's own messages name the def field; prefix the scene so the user knows where. */
    char why[PBF_ERROR_SIZE] = "";
    pbf_world *world = NULL;
    pbf_status status = pbf_world_create(&scene->world, &world, why, sizeof why);
    if (status != PBF_OK) {
        scene_set_message(err, err_size, "%s: %s", scene->source, why);
        return status;
    }
    for (int i = 0; i < scene->block_count; ++i) {
        status = add_block(scene, i, world, err, err_size);
        if (status != PBF_OK) {
            pbf_world_destroy(world);
            return status;
        }
    }
    for (int i = 0; i < scene->collider_count; ++i) {
        status = pbf_world_add_collider(world, &scene->colliders[i]);
        if (status != PBF_OK) {
            scene_set_message(err, err_size, "%s: colliders[%d]: %s", scene->source, i,
                              pbf_world_error(world));
            pbf_world_destroy(world);
            return status;
        }
    }
    for (int i = 0; i < scene->mesh_count; ++i) { /* meshes: baked or loaded from the cache */
        status = pbf_world_add_mesh(world, &scene->meshes[i]);
        if (status != PBF_OK) {
            scene_set_message(err, err_size, "%s: meshes[%d]: %s", scene->source, i,
                              pbf_world_error(world));
            pbf_world_destroy(world);
            return status;
        }
    }
    status = add_flow(scene, world, err, err_size); /* after the colliders its nozzles avoid */
    if (status != PBF_OK) {
        pbf_world_destroy(world);
        return status;
    }
    if (scene->has_tool) { /* the tool, after the particles it may start among */
        status = pbf_world_set_tool(world, &scene->tool);
        if (status != PBF_OK) {
            scene_set_message(err, err_size, "%s: tool: %s", scene->source, pbf_world_error(world));
            pbf_world_destroy(world);
            return status;
        }
    }
    if (scene->probe_count > 0) { /* probes, after the colliders they may lie on */
        status = pbf_world_set_probes(world, scene->probes, scene->probe_count);
        if (status != PBF_OK) {
            scene_set_message(err, err_size, "%s: %s", scene->source, pbf_world_error(world));
            pbf_world_destroy(world);
            return status;
        }
    }
    if (scene->diffuse_enabled) { /* spray, foam and bubbles */
        status = pbf_world_enable_diffuse(world, &scene->diffuse);
        if (status != PBF_OK) {
            scene_set_message(err, err_size, "%s: %s", scene->source, pbf_world_error(world));
            pbf_world_destroy(world);
            return status;
        }
    }
    *out = world;
    return PBF_OK;
}

int64_t pbf_scene_particle_count(const pbf_scene *scene) {
    if (scene == NULL) return 0;
    int64_t total = 0;
    for (int i = 0; i < scene->block_count; ++i)
        total += pbf_block_particle_count(&scene->blocks[i], scene->world.particle_radius);
    return total;
}

uint32_t pbf_scene_features(const pbf_scene *s) {
    uint32_t m = pbf_world_def_features(&s->world);
    for (int k = 0; k < s->collider_count; ++k)
        if (s->colliders[k].adhesion > 0.0f) m |= 1u << PBF_FEATURE_ADHESION;
    if (s->has_tool) m |= 1u << PBF_FEATURE_TOOL;
    for (int k = 0; k < s->probe_count; ++k)
        m |= 1u << (s->probes[k].type == PBF_PROBE_FORCE ? PBF_FEATURE_FORCE_PROBES
                                                         : PBF_FEATURE_PROBES);
    for (int k = 0; k < s->mesh_count; ++k) {
        m |= 1u << (s->meshes[k].sink                          ? PBF_FEATURE_SINKS
                    : s->meshes[k].motion == PBF_MESH_FLOATING ? PBF_FEATURE_BODIES
                                                               : PBF_FEATURE_MESHES);
        if (s->meshes[k].sink) m |= 1u << PBF_FEATURE_MESHES; /* a sink mesh is a mesh too */
    }
    if (s->emitter_count > 0 || s->capacity > 0) m |= 1u << PBF_FEATURE_EMITTERS;
    if (s->sink_count > 0) m |= 1u << PBF_FEATURE_SINKS;
    if (s->diffuse_enabled) m |= 1u << PBF_FEATURE_DIFFUSE;
    return m;
}
