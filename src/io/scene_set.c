/* pbf — the `--set path=value` overrides of a scene, applied to its JSON tree before it is read,
 * so that they go through exactly the same checks as the file itself (docs/scenes.md,
 * "Overrides"). */
#include <string.h>

#include "scene_schema.h"

/* The value as JSON, else as a string ("out/run2" needs no quotes on a command line). */
static cJSON *parse_override_value(const char *text) {
    cJSON *value = cJSON_ParseWithOpts(text, NULL, 1);
    return value != NULL ? value : cJSON_CreateString(text);
}

static const char *a_type_name(const cJSON *item) {
    if (cJSON_IsArray(item)) return "an array";
    if (cJSON_IsObject(item)) return "an object";
    if (cJSON_IsNull(item)) return "null";
    if (cJSON_IsString(item)) return "a string";
    if (cJSON_IsNumber(item)) return "a number";
    if (cJSON_IsBool(item)) return "a boolean";
    return "an invalid value";
}

/* Puts value at segs[0..n) under root, creating missing objects on the way (so that
 * "camera.fov=30" works on a scene without a camera). An index must name an existing element:
 * a new block or collider would be a default one, which is never what the user meant. Takes
 * ownership of value. */
static pbf_status set_path(const scene_ctx *c, const char *ov, cJSON *root,
                           const scene_segment *segs, int n, cJSON *value) {
    char walked[JSON_PATH_SIZE] = "";
    cJSON *node = root;
    for (int i = 0; i < n; ++i) {
        const scene_segment *s = &segs[i];
        int last = i + 1 == n;
        cJSON *child = NULL;
        char here[JSON_PATH_SIZE];
        if (s->index < 0) {
            scene_join_key(here, sizeof here, walked, s->key);
            if (!cJSON_IsObject(node)) {
                cJSON_Delete(value);
                return scene_fail_set(c, PBF_ERR_INVALID_ARG, ov,
                                      "'%s' is %s, not an object, so it has no key '%s'", walked,
                                      a_type_name(node), s->key);
            }
            child = cJSON_GetObjectItemCaseSensitive(node, s->key);
            if (last) {
                int ok = child != NULL ? cJSON_ReplaceItemInObjectCaseSensitive(node, s->key, value)
                                       : cJSON_AddItemToObject(node, s->key, value);
                if (ok) return PBF_OK;
                cJSON_Delete(value);
                return scene_out_of_memory(c);
            }
            if (child == NULL && segs[i + 1].index >= 0) {
                cJSON_Delete(value);
                return scene_fail_set(c, PBF_ERR_INVALID_ARG, ov,
                                      "'%s' does not exist, so it has no element [%d]", here,
                                      segs[i + 1].index);
            }
            if (child == NULL && (child = cJSON_AddObjectToObject(node, s->key)) == NULL) {
                cJSON_Delete(value);
                return scene_out_of_memory(c);
            }
        } else {
            scene_join_index(here, sizeof here, walked, s->index);
            int size = cJSON_IsArray(node) ? cJSON_GetArraySize(node) : 0;
            if (!cJSON_IsArray(node) || s->index >= size) {
                cJSON_Delete(value);
                if (!cJSON_IsArray(node))
                    return scene_fail_set(c, PBF_ERR_INVALID_ARG, ov,
                                          "'%s' is %s, not an array, so it has no element [%d]",
                                          walked, a_type_name(node), s->index);
                return scene_fail_set(c, PBF_ERR_INVALID_ARG, ov,
                                      "index [%d] is past the end of '%s', which has %d element%s",
                                      s->index, walked, size, size == 1 ? "" : "s");
            }
            if (last) {
                /* cannot fail: the index was checked and the array holds no key to copy */
                cJSON_ReplaceItemInArray(node, s->index, value);
                return PBF_OK;
            }
            child = cJSON_GetArrayItem(node, s->index);
        }
        memcpy(walked, here, sizeof walked);
        node = child;
    }
    cJSON_Delete(value); /* not reached: scene_split_path never returns an empty path */
    return PBF_OK;
}

static pbf_status apply_override(const scene_ctx *c, cJSON *root, const char *ov) {
    const char *eq = strchr(ov, '=');
    if (eq == NULL)
        return scene_fail_set(c, PBF_ERR_INVALID_ARG, ov,
                              "expected path=value, e.g. solver.iterations=6");
    scene_segment segs[SCENE_MAX_PATH_SEGMENTS];
    const char *why = NULL;
    int n = scene_split_path(ov, (size_t)(eq - ov), segs, SCENE_MAX_PATH_SEGMENTS, &why);
    if (n < 0) return scene_fail_set(c, PBF_ERR_INVALID_ARG, ov, "%s", why);
    cJSON *value = parse_override_value(eq + 1);
    if (value == NULL) return scene_out_of_memory(c);
    return set_path(c, ov, root, segs, n, value);
}

pbf_status scene_apply_overrides(const scene_ctx *c, cJSON *root) {
    for (int i = 0; i < c->override_count; ++i) TRY(apply_override(c, root, c->overrides[i]));
    return PBF_OK;
}
